//! Variadic templates: template parameter packs (`typename... Ts`,
//! `int... Ns`), function parameter packs (`Ts... args`), pack expansions
//! (`f(args...)`, `g(h(args)...)`, `S<Ts...>`), `sizeof...` and fold
//! expressions.
//!
//! A pack is bound like any template argument, as `TArg::Pack` holding its
//! elements, and element `i` is also bound under the hidden name `Ts#i`
//! (`#` cannot appear in an identifier, so these never clash with user
//! names). A function parameter pack becomes one parameter per element,
//! named `args#i`. Expanding a pattern is then a rewrite of the syntax
//! tree: the pattern is copied once per element with every pack name it
//! mentions replaced by the element's hidden name, and the copies are
//! checked like hand-written code. Every pack a pattern names must have the
//! same length, as C++ requires. Pack lengths are bounded by the number of
//! arguments of a call or a template argument list, so expansion is too.

use super::{Checker, TArg};
use crate::ast::{self, ExprKind as A, TemplateArg, TypeExprKind};
use crate::source::Span;
use rustc_hash::FxHashMap as HashMap;
use std::borrow::Cow;
use std::rc::Rc;

/// A visitor of the names a pattern mentions (`walk_expr` and friends).
type NameVisitor<'v> = &'v mut dyn FnMut(&mut Rc<str>);

/// The hidden name of element `i` of pack `name`.
pub(crate) fn element_name(name: &str, i: usize) -> Rc<str> {
    Rc::from(format!("{name}#{i}"))
}

/// Bind template parameter `name` to `arg` in a template environment's map
/// (a pack's elements also under their hidden names).
pub(crate) fn bind_targ(map: &mut HashMap<Rc<str>, TArg>, name: &Rc<str>, arg: TArg) {
    if let TArg::Pack(elems) = &arg {
        for (i, e) in elems.iter().enumerate() {
            map.insert(element_name(name, i), e.clone());
        }
    }
    map.insert(name.clone(), arg);
}

/// Gather the arguments a template parameter pack receives: with a pack at
/// position `k`, the arguments from `k` on (unless they already are one
/// pack) become one `TArg::Pack`.
pub(crate) fn gather_pack(params: &[ast::TemplateParam], mut targs: Vec<TArg>) -> Vec<TArg> {
    let Some(k) = params.iter().position(|p| p.is_pack) else { return targs };
    if targs.len() == k + 1 && matches!(targs[k], TArg::Pack(_)) {
        return targs;
    }
    if targs.len() > k {
        let rest = targs.split_off(k);
        targs.push(TArg::Pack(rest));
    }
    targs
}

impl<'a> Checker<'a, '_> {
    /// The length of pack `name` in scope: a template parameter pack or a
    /// function parameter pack.
    pub(crate) fn pack_len(&self, name: &str) -> Option<usize> {
        if let Some(TArg::Pack(elems)) = self.env.targs.get(name) {
            return Some(elems.len());
        }
        self.fs.as_ref().and_then(|fs| fs.packs.get(name).copied())
    }

    /// Replace every pack expansion in `list` by its elements. Borrowed
    /// (no copy) when the list has no expansion.
    pub(crate) fn expand_exprs<'e>(&mut self, list: &'e [ast::Expr]) -> Option<Cow<'e, [ast::Expr]>> {
        if !list.iter().any(|e| matches!(e.kind, A::PackExpansion(_))) {
            return Some(Cow::Borrowed(list));
        }
        let mut out = Vec::with_capacity(list.len());
        for e in list {
            match &e.kind {
                A::PackExpansion(pattern) => out.extend(self.expand_pattern(pattern, e.span)?),
                _ => out.push(e.clone()),
            }
            if out.len() > super::MAX_TEMPLATE_ARGS {
                self.error(e.span, format!("this pack expansion makes more than {} elements", super::MAX_TEMPLATE_ARGS))
                    .note("the limit on parameter packs is fixed");
                return None;
            }
        }
        Some(Cow::Owned(out))
    }

    /// The same for template argument lists (`S<Ts...>`, `f<Ns...>`).
    pub(crate) fn expand_template_args<'e>(&mut self, list: &'e [TemplateArg]) -> Option<Cow<'e, [TemplateArg]>> {
        if !list.iter().any(|a| matches!(a, TemplateArg::Pack(_))) {
            return Some(Cow::Borrowed(list));
        }
        let mut out = Vec::with_capacity(list.len());
        for a in list {
            match a {
                TemplateArg::Pack(pattern) => {
                    let span = targ_span(pattern);
                    let (names, n) = self.pattern_packs(&mut |w| walk_targ(&mut pattern.as_ref().clone(), w), span)?;
                    for i in 0..n {
                        let mut copy = (**pattern).clone();
                        walk_targ(&mut copy, &mut |name| rename(name, &names, i));
                        out.push(copy);
                    }
                }
                other => out.push(other.clone()),
            }
            if out.len() > super::MAX_TEMPLATE_ARGS {
                self.error(targ_span(a), format!("this pack expansion makes more than {} template arguments", super::MAX_TEMPLATE_ARGS))
                    .note("the limit on parameter packs is fixed");
                return None;
            }
        }
        Some(Cow::Owned(out))
    }

    /// A function's parameters with a parameter pack replaced by one
    /// parameter per element (`Ts... args` → `Ts#0 args#0, Ts#1 args#1`).
    /// Needs the template's arguments in the environment.
    pub(crate) fn expanded_params<'f>(&mut self, f: &'f ast::Function) -> Option<Cow<'f, [ast::Param]>> {
        if !f.params.iter().any(|p| p.is_pack) {
            return Some(Cow::Borrowed(&f.params));
        }
        let mut out = Vec::with_capacity(f.params.len());
        for p in &f.params {
            if !p.is_pack {
                out.push(p.clone());
                continue;
            }
            let (names, n) = self.pattern_packs(&mut |w| walk_type(&mut p.ty.clone(), w), p.ty.span)?;
            for i in 0..n {
                let mut copy = p.clone();
                copy.is_pack = false;
                walk_type(&mut copy.ty, &mut |name| rename(name, &names, i));
                if let Some(id) = copy.name.as_mut() {
                    id.name = element_name(&id.name, i);
                }
                out.push(copy);
            }
        }
        Some(Cow::Owned(out))
    }

    /// The packs a function's parameter list declares, with their lengths
    /// (after `expanded_params`): `args` → n.
    pub(crate) fn param_pack_lens(&self, f: &ast::Function, expanded: &[ast::Param]) -> Vec<(Rc<str>, usize)> {
        let mut out = Vec::new();
        for p in f.params.iter().filter(|p| p.is_pack) {
            let Some(name) = &p.name else { continue };
            let prefix = format!("{}#", name.name);
            let n = expanded.iter().filter(|q| q.name.as_ref().is_some_and(|q| q.name.starts_with(&prefix))).count();
            out.push((name.name.clone(), n));
        }
        out
    }

    /// `pattern...`: the pattern once per element of the packs it names.
    fn expand_pattern(&mut self, pattern: &ast::Expr, span: Span) -> Option<Vec<ast::Expr>> {
        let (names, n) = self.pattern_packs(&mut |w| walk_expr(&mut pattern.clone(), w), span)?;
        Some(
            (0..n)
                .map(|i| {
                    let mut copy = pattern.clone();
                    walk_expr(&mut copy, &mut |name| rename(name, &names, i));
                    copy
                })
                .collect(),
        )
    }

    /// The pack names a pattern mentions (visited by `walk`) and their
    /// common length; an error when there is none or the lengths differ.
    fn pattern_packs(&mut self, walk: &mut dyn FnMut(NameVisitor), span: Span) -> Option<(Vec<Rc<str>>, usize)> {
        let mut names: Vec<Rc<str>> = Vec::new();
        walk(&mut |name| {
            if !names.contains(name) {
                names.push(name.clone());
            }
        });
        let packs: Vec<(Rc<str>, usize)> = names.into_iter().filter_map(|n| self.pack_len(&n).map(|len| (n, len))).collect();
        let Some((first, n)) = packs.first().cloned() else {
            self.error(span, "`...` here expands no parameter pack")
                .help("the expression before `...` must name a parameter pack, e.g. `args...` or `Ts...`");
            return None;
        };
        if let Some((other, m)) = packs.iter().find(|(_, m)| *m != n) {
            self.error(span, format!("parameter packs `{first}` and `{other}` have different lengths ({n} and {m})"))
                .note("a pack expansion takes the i-th element of every pack it names, so the packs must be equally long");
            return None;
        }
        Some((packs.into_iter().map(|(name, _)| name).collect(), n))
    }

    /// `sizeof...(Ts)`.
    pub(crate) fn sizeof_pack(&mut self, name: &ast::Ident, span: Span) -> Option<crate::hir::Expr> {
        let Some(n) = self.pack_len(&name.name) else {
            self.error(name.span, format!("`{}` is not a parameter pack", name.name))
                .help("`sizeof...` counts the elements of a template or function parameter pack");
            return None;
        };
        Some(super::expr::mk(crate::hir::ExprKind::Const(crate::hir::ConstValue::UInt(n as u64)), crate::types::Type::ULONG, span))
    }

    /// A fold expression, checked as the chain of operators it stands for.
    pub(crate) fn fold(
        &mut self,
        op: Option<ast::BinaryOp>,
        pack: &ast::Expr,
        init: Option<&ast::Expr>,
        left: bool,
        span: Span,
    ) -> Option<crate::hir::Expr> {
        let mentions_pack = |c: &Self, e: &ast::Expr| {
            let mut found = false;
            walk_expr(&mut e.clone(), &mut |n| found |= c.pack_len(n).is_some());
            found
        };
        // `(init op ... op pack)` parses with the operands the other way round.
        let (pack, init, left) = match init {
            Some(i) if !mentions_pack(self, pack) && mentions_pack(self, i) => (i, Some(pack), true),
            _ => (pack, init, left),
        };
        let mut items = self.expand_pattern(pack, span)?;
        if let Some(i) = init {
            if left {
                items.insert(0, i.clone());
            } else {
                items.push(i.clone());
            }
        }
        let join = |l: ast::Expr, r: ast::Expr| {
            let span = l.span.to(r.span);
            let kind = match op {
                Some(op) => A::Binary { op, lhs: Box::new(l), rhs: Box::new(r) },
                None => A::Comma { lhs: Box::new(l), rhs: Box::new(r) },
            };
            ast::Expr { kind, span }
        };
        let chain = if left {
            let mut it = items.into_iter();
            it.next().map(|first| it.fold(first, join))
        } else {
            let mut it = items.into_iter().rev();
            it.next().map(|last| it.fold(last, |acc, e| join(e, acc)))
        };
        let chain = match chain {
            Some(c) => c,
            // An empty expansion: only `&&`, `||` and `,` have a value.
            None => match op {
                Some(ast::BinaryOp::LogAnd) => ast::Expr { kind: A::BoolLit(true), span },
                Some(ast::BinaryOp::LogOr) => ast::Expr { kind: A::BoolLit(false), span },
                None => {
                    let zero = ast::Expr { kind: A::IntLit { value: 0, unsigned: false, long: false, decimal: true }, span };
                    let void = ast::TypeExpr {
                        kind: TypeExprKind::Named {
                            path: ast::Path {
                                global: false,
                                segments: vec![ast::PathSegment {
                                    ident: ast::Ident { name: Rc::from("void"), span },
                                    template_args: None,
                                }],
                                span,
                            },
                            is_const: false,
                            is_volatile: false,
                            addr_space: None,
                        },
                        span,
                    };
                    ast::Expr { kind: A::Cast { kind: ast::CastKind::CStyle, ty: void, args: vec![zero], braces: false }, span }
                }
                Some(op) => {
                    self.error(span, format!("this fold over `{}` expands an empty pack, which has no value", op.as_str()))
                        .help("give an initial value: `(pack op ... op init)`");
                    return None;
                }
            },
        };
        self.expr(&chain)
    }
}

/// Rename `name` to its element name when it is one of the packs expanded.
fn rename(name: &mut Rc<str>, packs: &[Rc<str>], i: usize) {
    if packs.contains(name) {
        *name = element_name(name, i);
    }
}

fn targ_span(a: &TemplateArg) -> Span {
    match a {
        TemplateArg::Type(t) => t.span,
        TemplateArg::Expr(e) => e.span,
        TemplateArg::Pack(a) => targ_span(a),
    }
}

/// Visit every name that could denote a pack: the first segment of each
/// path (a variable, a type, `Ts::value`) and `sizeof...`'s operand. Member
/// names after `.`/`->` are not visited. Nested expansions are left alone:
/// their packs are expanded when they are checked.
pub(crate) fn walk_expr(e: &mut ast::Expr, f: &mut dyn FnMut(&mut Rc<str>)) {
    match &mut e.kind {
        A::Name(p) => walk_path(p, f),
        A::Unary { operand, .. } => walk_expr(operand, f),
        A::Binary { lhs, rhs, .. } | A::Assign { lhs, rhs, .. } | A::Comma { lhs, rhs } => {
            walk_expr(lhs, f);
            walk_expr(rhs, f);
        }
        A::Conditional { cond, then, els } => {
            walk_expr(cond, f);
            walk_expr(then, f);
            walk_expr(els, f);
        }
        A::Call { callee, args } => {
            walk_expr(callee, f);
            args.iter_mut().for_each(|a| walk_expr(a, f));
        }
        A::Index { base, index } => {
            walk_expr(base, f);
            walk_expr(index, f);
        }
        A::Member { base, targs, .. } => {
            walk_expr(base, f);
            targs.iter_mut().flatten().for_each(|a| walk_targ(a, f));
        }
        A::Cast { ty, args, .. } => {
            walk_type(ty, f);
            args.iter_mut().for_each(|a| walk_expr(a, f));
        }
        A::SizeofType(t) | A::AlignofType(t) | A::TypeMember { ty: t, .. } => walk_type(t, f),
        A::SizeofExpr(x) => walk_expr(x, f),
        A::InitList(items) => items.iter_mut().for_each(|a| walk_expr(a, f)),
        A::Designated { designator, value } => {
            match designator {
                ast::Designator::Index(i) => walk_expr(i, f),
                ast::Designator::Range(a, b) => {
                    walk_expr(a, f);
                    walk_expr(b, f);
                }
                ast::Designator::Field(_) => {}
            }
            walk_expr(value, f);
        }
        A::SizeofPack(n) => f(&mut n.name),
        A::PackExpansion(_) | A::Fold { .. } => {}
        A::IntLit { .. } | A::FloatLit { .. } | A::BoolLit(_) | A::CharLit(_) | A::StrLit(_) | A::Null | A::This => {}
    }
}

pub(crate) fn walk_type(t: &mut ast::TypeExpr, f: &mut dyn FnMut(&mut Rc<str>)) {
    match &mut t.kind {
        TypeExprKind::Named { path, .. } => walk_path(path, f),
        TypeExprKind::Decltype { expr, .. } => walk_expr(expr, f),
        TypeExprKind::Pointer { pointee: x, .. } | TypeExprKind::Reference { referee: x } => walk_type(x, f),
        TypeExprKind::Array { elem, size } => {
            walk_type(elem, f);
            if let Some(s) = size {
                walk_expr(s, f);
            }
        }
        TypeExprKind::Function { ret, params } => {
            walk_type(ret, f);
            params.iter_mut().for_each(|p| walk_type(p, f));
        }
    }
}

fn walk_targ(a: &mut TemplateArg, f: &mut dyn FnMut(&mut Rc<str>)) {
    match a {
        TemplateArg::Type(t) => walk_type(t, f),
        TemplateArg::Expr(e) => walk_expr(e, f),
        TemplateArg::Pack(_) => {}
    }
}

fn walk_path(p: &mut ast::Path, f: &mut dyn FnMut(&mut Rc<str>)) {
    if let Some(first) = p.segments.first_mut() {
        if !p.global {
            f(&mut first.ident.name);
        }
    }
    for seg in &mut p.segments {
        if let Some(args) = &mut seg.template_args {
            args.iter_mut().for_each(|a| walk_targ(a, f));
        }
    }
}
