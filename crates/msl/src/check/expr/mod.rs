//! Expressions: typing, implicit conversions, operators, member access,
//! casts and constructors, and constant folding.
//!
//! This file holds the entry point and the dispatch on the kind of
//! expression; `names` resolves names, `conversions` implicit conversions
//! and casts, `ops` the built-in operators (overloaded ones are in
//! `check::operators`), `access` indexing and member access, `construct`
//! constructors and initializer lists.

use super::Checker;
use crate::ast::{self, ExprKind as A};
use crate::hir::{self, ConstValue, ExprKind as H};
use crate::source::Span;
use crate::token::FloatSuffix;
use crate::types::{Scalar, Type};

mod access;
mod construct;
mod conversions;
mod names;
mod ops;

pub(crate) fn mk(kind: H, ty: Type, span: Span) -> hir::Expr {
    hir::Expr { kind, ty, span }
}

fn bx(e: hir::Expr) -> Box<hir::Expr> {
    Box::new(e)
}

/// Depth limit for the expressions of one body (an instance's body counts
/// afresh, see `Checker::instantiating`): the parser bounds a tree's depth
/// by its nesting plus its chains; rewrites (implicit conversions, folds)
/// add a little.
const MAX_EXPR_DEPTH: u32 = 2 * (crate::parse::MAX_DEPTH + crate::parse::MAX_CHAIN);
/// Depth limit for expressions nested in all the instances being checked,
/// which bounds the memory the (heap-grown) stack may take: two bodies of
/// the deepest kind, or many of ordinary depth.
pub(crate) const MAX_EXPR_FRAMES: u32 = 2 * MAX_EXPR_DEPTH;

impl<'a> Checker<'a, '_> {
    pub(crate) fn expr(&mut self, e: &ast::Expr) -> Option<hir::Expr> {
        self.expr_depth += 1;
        self.expr_frames += 1;
        let r = if self.expr_depth > MAX_EXPR_DEPTH {
            self.error(e.span, "expression is nested too deeply").note(format!("at most {MAX_EXPR_DEPTH} levels"));
            None
        } else if self.expr_frames > MAX_EXPR_FRAMES {
            self.error(e.span, "expression is nested too deeply").note(format!(
                "at most {MAX_EXPR_FRAMES} levels in all, counting the expressions of the template instances being checked around it"
            ));
            None
        } else {
            // Deep trees (long chains) recurse deeply: grow the stack on
            // the heap rather than overflow it.
            stacker::maybe_grow(128 * 1024, 4 * 1024 * 1024, || self.expr_inner(e))
        };
        self.expr_depth -= 1;
        self.expr_frames -= 1;
        // A failure must leave a reason: otherwise the statement would vanish
        // from a program that still compiles.
        if r.is_none() && !self.diags.has_errors() && !self.sink.has_errors() {
            self.error(e.span, "the simulator could not check this expression (no reason was recorded)")
                .note("this is a bug in the simulator's front end; please report it with this source");
        }
        r
    }

    fn expr_inner(&mut self, e: &ast::Expr) -> Option<hir::Expr> {
        let span = e.span;
        match &e.kind {
            A::IntLit { value, unsigned, long, decimal } => Some(int_literal(*value, *unsigned, *long, *decimal, span)),
            A::FloatLit { value, suffix } => {
                let s = match suffix {
                    FloatSuffix::None | FloatSuffix::F => Scalar::Float,
                    FloatSuffix::H => Scalar::Half,
                    FloatSuffix::Bf => Scalar::BFloat,
                };
                Some(mk(H::Const(ConstValue::Float(*value).cast(s)), Type::Scalar(s), span))
            }
            A::BoolLit(b) => Some(mk(H::Const(ConstValue::Bool(*b)), Type::BOOL, span)),
            A::CharLit(c) => Some(mk(H::Const(ConstValue::Int(*c as i64)), Type::Scalar(Scalar::Char), span)),
            A::StrLit(text) => Some(self.string_literal(text, span)),
            A::Null => Some(mk(H::Zero, Type::NullPtr, span)),
            A::This => {
                let Some(l) = self.fs.as_ref().and_then(|f| f.this_local) else {
                    self.error(span, "`this` can only be used inside a member function");
                    return None;
                };
                let ty = self.fs.as_ref()?.locals[l.0 as usize].ty.clone();
                Some(mk(H::Local(l), ty, span))
            }
            A::Name(path) => self.name_expr(path, span),
            A::Unary { op, operand } => self.unary(*op, operand, span),
            A::Binary { op, lhs, rhs } => {
                let l = self.expr(lhs);
                let r = self.expr(rhs);
                let (l, r) = (l?, r?);
                if Self::is_class(&l.ty) || Self::is_class(&r.ty) {
                    return self.binary_on_class(*op, l, r, span);
                }
                self.binary(*op, l, r, span)
            }
            A::Assign { op, lhs, rhs } => self.assign(*op, lhs, rhs, span),
            A::Conditional { cond, then, els } => {
                let c = self.condition(cond);
                let t = self.expr(then);
                let f = self.expr(els);
                self.conditional(c?, t?, f?, span)
            }
            A::Comma { lhs, rhs } => {
                let l = self.expr(lhs);
                let r = self.expr(rhs);
                let r = r?;
                let ty = r.ty.clone();
                Some(mk(H::Comma { lhs: bx(l?), rhs: bx(r) }, ty, span))
            }
            A::Call { callee, args } => self.call(callee, args, span),
            A::Index { base, index } => {
                let b = self.expr(base);
                let i = self.expr(index);
                let (b, i) = (b?, i?);
                if Self::is_class(&b.ty) {
                    return self.overloaded("[]", vec![b, i], span);
                }
                self.index(b, i, span)
            }
            A::Member { base, name, arrow, targs } => {
                let b = self.expr(base)?;
                if targs.is_some() {
                    self.error(span, format!("`{}` with template arguments names a member function template: call it", name.name))
                        .help(format!("write `{}<…>(…)`", name.name));
                    return None;
                }
                self.member(b, name, *arrow, span)
            }
            A::Cast { kind, ty, args, braces } => {
                let q = self.resolve_type(ty)?;
                let args = self.expand_exprs(args)?;
                let args = &*args;
                // `(void)x;` evaluates `x` and discards it (silences "unused").
                if q.ty == Type::Void && args.len() == 1 {
                    return self.expr(&args[0]);
                }
                if let (Type::Reference { referee, space, is_const }, [arg]) = (&q.ty, args) {
                    let h = self.expr(arg)?;
                    return self.cast_to_reference(*kind, h, referee, *space, *is_const, span);
                }
                self.cast(*kind, &q.ty, args, *braces, span)
            }
            A::SizeofType(t) => {
                let q = self.resolve_type(t)?;
                Some(mk(H::Const(ConstValue::UInt(self.tables.size_of(&q.ty))), Type::ULONG, span))
            }
            A::SizeofExpr(x) => {
                let h = self.expr(x)?;
                Some(mk(H::Const(ConstValue::UInt(self.tables.size_of(&h.ty))), Type::ULONG, span))
            }
            A::AlignofType(t) => {
                let q = self.resolve_type(t)?;
                Some(mk(H::Const(ConstValue::UInt(self.tables.align_of(&q.ty))), Type::ULONG, span))
            }
            A::Designated { .. } => {
                self.error(
                    span,
                    "a designated initializer (`[i] = v`, `.field = v`) is only allowed inside braces that initialize an array or struct",
                );
                None
            }
            A::InitList(_) => {
                self.error(span, "a braced list `{...}` needs a known type here")
                    .help("write the type in front of it, e.g. `float2{1, 2}`");
                None
            }
            A::PackExpansion(_) => {
                self.error(
                    span,
                    "a pack expansion `...` can only be used in an argument list, an initializer list or a template argument list",
                );
                None
            }
            A::SizeofPack(name) => self.sizeof_pack(name, span),
            A::TypeMember { ty, name } => {
                let q = self.resolve_type(ty)?;
                self.static_member(&q.ty, name, span)
            }
            A::Fold { op, pack, init, left } => self.fold(*op, pack, init.as_deref(), *left, span),
        }
    }

    /// `__func__`: the enclosing function's name as a string literal, as in
    /// C++ (PyTorch's error-reporting macros pass it on).
    fn func_name_expr(&mut self, span: Span) -> Option<hir::Expr> {
        let Some(name) = self.fs.as_ref().and_then(|f| f.func_name.clone()) else {
            self.error(span, "`__func__` is only valid inside a function body");
            return None;
        };
        Some(self.string_literal(&name, span))
    }

    /// A string literal: in Metal an array of `constant char` ending in a
    /// zero byte, which decays to `constant char*` (`os_log` objects and
    /// helpers taking `constant char*` receive these). Each distinct text is
    /// one program-scope constant.
    pub(crate) fn string_literal(&mut self, text: &std::rc::Rc<str>, span: Span) -> hir::Expr {
        let len = text.len() as u32 + 1;
        let ty = Type::Array { elem: Box::new(Type::Scalar(Scalar::Char)), len };
        let gid = match self.string_globals.get(text) {
            Some(&g) => g,
            None => {
                let elems = text
                    .bytes()
                    .chain(std::iter::once(0))
                    .map(|b| mk(H::Const(ConstValue::Int(b as i8 as i64)), Type::Scalar(Scalar::Char), span))
                    .collect();
                let gid = hir::GlobalId(self.globals.len() as u32);
                self.globals.push(hir::Global {
                    name: format!("string literal {:?}", &**text),
                    ty: ty.clone(),
                    init: mk(H::Aggregate(elems), ty.clone(), span),
                    span,
                });
                self.string_globals.insert(text.clone(), gid);
                gid
            }
        };
        mk(H::Global(gid), ty, span)
    }

    /// A call of `callee` is being made: a static member function of a
    /// template instance gets its body now (see `lazy_bodies`).
    pub(crate) fn use_function(&mut self, callee: hir::FuncId) {
        if let Some(((f, id, sig), env)) = self.lazy_bodies.remove(&callee) {
            self.elsewhere(env).function_body(f, id, &sig, f.name.last().ident.name.to_string(), None, None);
        }
    }
}

fn ty_pointee(t: &Type) -> &Type {
    match t {
        Type::Pointer { pointee, .. } => pointee,
        _ => panic!("not a pointer"),
    }
}

fn base_local_name(c: &Checker, e: &hir::Expr) -> Option<String> {
    match &e.kind {
        H::Local(id) => c.fs.as_ref().map(|f| f.locals[id.0 as usize].name.clone()),
        H::Deref(p) => base_local_name(c, p),
        H::PtrOffset { ptr, .. } => base_local_name(c, ptr),
        H::Index { base, .. } | H::Field { base, .. } | H::Swizzle { base, .. } => base_local_name(c, base),
        _ => None,
    }
}

fn int_literal(value: u64, unsigned: bool, long: bool, decimal: bool, span: Span) -> hir::Expr {
    // C++ [lex.icon]: the first type that can represent the value.
    let s = match (unsigned, long) {
        (false, false) => {
            if value <= i32::MAX as u64 {
                Scalar::Int
            } else if !decimal && value <= u32::MAX as u64 {
                Scalar::UInt
            } else if value <= i64::MAX as u64 {
                Scalar::Long
            } else {
                Scalar::ULong
            }
        }
        (true, false) => {
            if value <= u32::MAX as u64 {
                Scalar::UInt
            } else {
                Scalar::ULong
            }
        }
        (false, true) => {
            if value <= i64::MAX as u64 {
                Scalar::Long
            } else {
                Scalar::ULong
            }
        }
        (true, true) => Scalar::ULong,
    };
    let v = if s.is_signed() { ConstValue::Int(value as i64) } else { ConstValue::UInt(value) };
    mk(H::Const(v), Type::Scalar(s), span)
}
