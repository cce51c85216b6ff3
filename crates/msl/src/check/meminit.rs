//! Default member initializers (`struct S { int a = 3; float b{2.0f}; };`)
//! and the members a construction leaves to them.
//!
//! C++ applies a member's default initializer whenever the member is not
//! given a value: default construction (`S s;`), value construction (`S{}`,
//! `S()`), aggregate initialization with fewer values, constructors whose
//! initializer list omits the member, and every element of an array of S.
//! Members of struct type recurse (their own defaults, or their default
//! constructor). A member with neither stays unset on default construction
//! (the sanitizer reports reading it) and zero on value construction.

use super::expr::mk;
use super::Checker;
use crate::ast;
use crate::hir::{self, ExprKind as H};
use crate::source::Span;
use crate::types::{StructId, Type};
use std::rc::Rc;

/// One default member initializer of a struct.
#[derive(Clone, Debug)]
pub(crate) struct MemberDefault<'a> {
    /// Index of the member in the struct's layout (base members first).
    pub field: u32,
    pub init: &'a ast::Init,
    /// Whether its errors were already reported (it is checked at every
    /// construction, and should complain once).
    pub reported: bool,
}

/// How members without a value are left.
#[derive(Clone, Copy, PartialEq)]
enum Rest {
    /// `S s;`: unset.
    Unset,
    /// `S{}`, `S()`, missing aggregate values: zero.
    Zero,
}

impl<'a> Checker<'a, '_> {
    /// Whether building a `ty` without values has to run code: some member
    /// (at any depth) has a default initializer or a user default constructor.
    pub(crate) fn needs_member_init(&self, ty: &Type) -> bool {
        match ty {
            Type::Struct(sid) => {
                let info = &self.structs[sid.0 as usize];
                info.needs_init || (self.has_constructors(*sid) && !info.defaulted_ctor)
            }
            Type::Array { elem, .. } => self.needs_member_init(elem),
            _ => false,
        }
    }

    /// Whether a struct without user constructors has members to initialize.
    pub(crate) fn struct_needs_init(&self, fields: &[(String, Type)], has_defaults: bool) -> bool {
        has_defaults || fields.iter().any(|(_, t)| self.needs_member_init(t))
    }

    /// `T x;` (default construction), or `None` when it leaves every member
    /// unset.
    pub(crate) fn default_init(&mut self, ty: &Type, span: Span) -> Option<hir::Expr> {
        self.init_without_values(ty, span, Rest::Unset)
    }

    /// `T{}` / `T()` (value construction): zero except where a member has a
    /// default initializer.
    pub(crate) fn value_init(&mut self, ty: &Type, span: Span) -> hir::Expr {
        self.init_without_values(ty, span, Rest::Zero).unwrap_or_else(|| mk(H::Zero, ty.clone(), span))
    }

    fn init_without_values(&mut self, ty: &Type, span: Span, rest: Rest) -> Option<hir::Expr> {
        if !self.needs_member_init(ty) {
            return None;
        }
        match ty {
            Type::Array { elem, .. } => {
                let each = self.init_without_values(elem, span, rest)?;
                Some(mk(H::ArrayInit { items: Vec::new(), rest: Box::new(each) }, ty.clone(), span))
            }
            Type::Struct(sid) if self.has_constructors(*sid) && !self.structs[sid.0 as usize].defaulted_ctor => {
                self.construct(ty, &[], span, false)
            }
            Type::Struct(sid) => {
                let n = self.tables.struct_def(*sid).fields.len();
                let items = self.member_values(*sid, 0, n, span, rest);
                Some(mk(H::Aggregate(items), ty.clone(), span))
            }
            _ => None,
        }
    }

    /// Values for members `from..to` of `sid` that were given none: their
    /// default initializers, else what their own type needs.
    pub(crate) fn member_values_after(&mut self, sid: StructId, from: usize, span: Span) -> Vec<hir::Expr> {
        let def = self.tables.struct_def(sid);
        let n = def.fields.len();
        // A union given a value holds that value.
        if !self.structs[sid.0 as usize].needs_init || (def.is_union && from > 0) {
            return Vec::new();
        }
        self.member_values(sid, from, n, span, Rest::Zero)
    }

    fn member_values(&mut self, sid: StructId, from: usize, to: usize, span: Span, rest: Rest) -> Vec<hir::Expr> {
        // A union holds one member: only one with a default initializer
        // gets a value (the others share its bytes).
        let rest = if self.tables.struct_def(sid).is_union { Rest::Unset } else { rest };
        let mut out = Vec::with_capacity(to.saturating_sub(from));
        for i in from..to {
            let fty = self.tables.struct_def(sid).fields[i].ty.clone();
            let value = match self.member_default(sid, i as u32, &fty, span) {
                Some(v) => Some(v),
                None => {
                    // A member whose class has no default constructor leaves
                    // it unset (C++ would reject `S s;`; aggregate values may
                    // still come later).
                    let trial = self.trial();
                    let v = self.init_without_values(&fty, span, rest);
                    if v.is_some() {
                        trial.commit();
                    }
                    v
                }
            };
            out.push(value.unwrap_or_else(|| match rest {
                Rest::Unset => mk(H::Uninit, fty, span),
                Rest::Zero => mk(H::Zero, fty, span),
            }));
        }
        out
    }

    /// The value of member `field`'s default initializer, checked where the
    /// struct was declared (its template arguments and scope).
    fn member_default(&mut self, sid: StructId, field: u32, fty: &Type, span: Span) -> Option<hir::Expr> {
        let info = &self.structs[sid.0 as usize];
        let k = info.member_defaults.iter().position(|d| d.field == field)?;
        let (init, reported) = (info.member_defaults[k].init, info.member_defaults[k].reported);
        let env = info.init_env.clone()?;
        if self.defaults_stack.contains(&(sid, field)) {
            // (`struct S { int a = S{}.a + 1; };`: each `S{}` needs `a`'s
            // default again. C++ rejects it too.)
            let name = self.tables.struct_def(sid).fields[field as usize].name.clone();
            let s = self.tables.struct_def(sid).name.clone();
            self.error(span, format!("the default initializer of member `{name}` builds a `{s}` with its defaults, which needs this initializer again, without end"))
                .help("give the member a value that does not construct the struct itself");
            return None;
        }
        let trial = self.trial();
        let mut e = self.with_env(env);
        e.defaults_stack.push((sid, field));
        let h = e.initializer(init, fty, span);
        drop(e);
        if h.is_some() || !reported {
            trial.commit();
        }
        if h.is_none() {
            self.structs[sid.0 as usize].member_defaults[k].reported = true;
        }
        // Keep the construction's place in the source for run-time findings.
        h.map(|h| hir::Expr { span: if h.span == Span::default() { span } else { h.span }, ..h })
    }

    /// A constructor's member initializers completed with the defaults of
    /// the members it leaves out, in declaration order (base classes first,
    /// as C++ initializes them).
    pub(crate) fn with_member_defaults(
        &mut self,
        sid: StructId,
        inits: Vec<(ast::Ident, Vec<ast::Expr>)>,
        ctor_span: Span,
    ) -> Vec<(ast::Ident, Vec<ast::Expr>)> {
        if !self.structs[sid.0 as usize].needs_init {
            return inits;
        }
        let fields: Vec<(String, Type)> = self.tables.struct_def(sid).fields.iter().map(|f| (f.name.clone(), f.ty.clone())).collect();
        let mut given: Vec<Option<(ast::Ident, Vec<ast::Expr>)>> = inits.into_iter().map(Some).collect();
        let mut out = Vec::new();
        for (i, (name, fty)) in fields.iter().enumerate() {
            if let Some(g) = given.iter_mut().find(|g| g.as_ref().is_some_and(|(n, _)| *n.name == **name)) {
                out.extend(g.take());
                continue;
            }
            let ident = ast::Ident { name: Rc::from(name.as_str()), span: ctor_span };
            let default = self.structs[sid.0 as usize].member_defaults.iter().find(|d| d.field == i as u32).map(|d| d.init);
            let value = match default {
                Some(ast::Init::Assign(e)) => e.clone(),
                Some(ast::Init::Brace(items, bspan)) => ast::Expr { kind: ast::ExprKind::InitList(items.clone()), span: *bspan },
                Some(ast::Init::Paren(args, pspan)) => ast::Expr { kind: ast::ExprKind::InitList(args.clone()), span: *pspan },
                // `this->m = {}` builds the member with its own defaults.
                None if self.needs_member_init(fty) => ast::Expr { kind: ast::ExprKind::InitList(Vec::new()), span: ctor_span },
                None => continue,
            };
            out.push((ident, vec![value]));
        }
        // Initializers naming no member keep their place so they are reported.
        out.extend(given.into_iter().flatten());
        out
    }
}
