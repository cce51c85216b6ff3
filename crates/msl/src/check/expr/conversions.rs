//! Implicit conversions (with their errors) and explicit casts.

use super::{bx, mk, ty_pointee};
use crate::ast::{self, AddressSpace, CastKind, ExprKind as A};
use crate::check::Checker;
use crate::hir::{self, ConstValue, ExprKind as H};
use crate::source::Span;
use crate::types::{implicit_conversion, Scalar, Type};

impl<'a> Checker<'a, '_> {
    /// Insert a conversion node (no checks).
    pub(crate) fn convert(&self, h: hir::Expr, to: Type) -> hir::Expr {
        if h.ty == to {
            return h;
        }
        let span = h.span;
        match (&h.ty, &to) {
            // Constant-fold literal conversions right away.
            (Type::Scalar(_) | Type::Enum(_), Type::Scalar(s)) if matches!(h.kind, H::Const(_)) => {
                let H::Const(v) = h.kind else { unreachable!() };
                self.warn_undefined_conversion(v, *s, span);
                mk(H::Const(v.cast(*s)), to, span)
            }
            (Type::Array { .. }, Type::Pointer { .. }) => self.decay(h),
            (Type::Pointer { .. } | Type::NullPtr, Type::Pointer { .. }) => {
                if matches!(h.kind, H::Zero) {
                    mk(H::Zero, to, span)
                } else {
                    mk(H::PtrCast(bx(h)), to, span)
                }
            }
            (Type::Enum(_), Type::Enum(_)) | (Type::Scalar(_), Type::Enum(_)) => mk(H::PtrCast(bx(h)), to, span),
            (Type::Vector { elem: a, len: la, .. }, Type::Vector { elem: b, len: lb, .. }) if a == b && la == lb => {
                // packed <-> unpacked: same values.
                mk(H::Convert(bx(h)), to, span)
            }
            _ => mk(H::Convert(bx(h)), to, span),
        }
    }

    /// Array to pointer to its first element.
    pub(crate) fn decay(&self, h: hir::Expr) -> hir::Expr {
        let Type::Array { elem, .. } = h.ty.clone() else { return h };
        let (space, is_const) = if h.is_place() { self.place_info(&h) } else { (AddressSpace::Thread, true) };
        let span = h.span;
        let zero = mk(H::Const(ConstValue::Int(0)), Type::INT, span);
        let first = mk(H::Index { base: bx(h), index: bx(zero) }, (*elem).clone(), span);
        mk(H::AddrOf(bx(first)), Type::Pointer { pointee: elem, space, is_const }, span)
    }

    /// Implicitly convert `h` to `to`, or report why not.
    pub(crate) fn coerce(&mut self, h: hir::Expr, to: &Type, what: &str) -> Option<hir::Expr> {
        if h.ty == *to {
            return Some(h);
        }
        if let (Type::Enum(a), Type::Scalar(_)) = (&h.ty, to) {
            if self.tables.enum_def(*a).scoped {
                let n = self.ty_name(&h.ty);
                self.error(
                    h.span,
                    format!("{what} has scoped enum type `{n}`, which does not convert implicitly to `{}`", self.ty_name(to)),
                )
                .help(format!("convert it explicitly: `static_cast<{}>(...)`", self.ty_name(to)));
                return None;
            }
        }
        if let (Type::Scalar(_), Type::Enum(_)) = (&h.ty, to) {
            let n = self.ty_name(to);
            self.error(h.span, format!("an integer does not convert implicitly to the enum `{n}`"))
                .help(format!("use `static_cast<{n}>(...)`"));
            return None;
        }
        let from = match &h.ty {
            Type::Array { elem, .. } if to.is_pointer() => {
                let (space, is_const) = if h.is_place() { self.place_info(&h) } else { (AddressSpace::Thread, false) };
                Type::Pointer { pointee: elem.clone(), space, is_const }
            }
            t => t.clone(),
        };
        if implicit_conversion(&from, to).is_some() {
            return Some(self.convert(h, to.clone()));
        }
        if let Some(b) = self.convert_to_base(&h, to) {
            return Some(b);
        }
        if matches!(h.ty, Type::Struct(_)) || matches!(to, Type::Struct(_)) {
            if let Some(c) = self.user_conversion(h.clone(), to) {
                return Some(c);
            }
            // A conversion operator to another scalar, then a standard
            // conversion (`half s = mask;` through `operator bool()`).
            if to.is_scalar() {
                let trial = self.trial();
                if let Some(c) = self.conversion_to_scalar(h.clone()) {
                    if implicit_conversion(&c.ty, to).is_some() {
                        trial.commit();
                        return Some(self.convert(c, to.clone()));
                    }
                }
                drop(trial);
            }
        }
        let (fname, tname) = (self.ty_name(&h.ty), self.ty_name(to));
        let mut d = self.error(h.span, format!("cannot convert {what} from `{fname}` to `{tname}`")).label(format!("this is `{fname}`"));
        match (&from, to) {
            (Type::Vector { len: a, .. }, Type::Vector { len: b, .. }) if a != b => {
                d = d.help(format!("the vectors have different lengths ({a} and {b}); pick components with a swizzle like `.xyz` or build one with `{tname}(...)`"));
            }
            (Type::Vector { .. }, Type::Vector { .. }) => {
                d = d.help(format!("vectors of different element types need an explicit conversion: `{tname}(...)`"));
            }
            (Type::Vector { .. }, Type::Scalar(_)) => {
                d = d.help("a vector does not convert to a scalar; pick one component (e.g. `.x`) or reduce it (e.g. `dot`, `length`)");
            }
            (Type::Pointer { space: a, .. }, Type::Pointer { space: b, .. }) if a != b => {
                d = d.note(format!(
                    "pointers cannot change address space: this points to `{}` memory, not `{}` memory",
                    a.keyword(),
                    b.keyword()
                ));
            }
            (Type::Pointer { is_const: true, .. }, Type::Pointer { is_const: false, .. }) => {
                d = d.help("this would drop `const`; declare the target `const` too");
            }
            _ => {}
        }
        drop(d);
        None
    }

    /// Check `e` against an expected type (braced lists allowed).
    pub(crate) fn coerce_ast(&mut self, e: &ast::Expr, to: &Type, what: &str) -> Option<hir::Expr> {
        if let A::InitList(items) = &e.kind {
            return self.list_init(items, to, e.span);
        }
        if let Some(h) = self.coerce_function_name(e, to) {
            return h;
        }
        let h = self.expr(e)?;
        self.coerce(h, to, what)
    }

    /// `(space, is_const)` of a place.
    pub(crate) fn place_info(&self, h: &hir::Expr) -> (AddressSpace, bool) {
        match &h.kind {
            H::Local(id) => {
                let l = &self.fs.as_ref().expect("in function").locals[id.0 as usize];
                (l.space, l.is_const)
            }
            H::Global(_) => (AddressSpace::Constant, true),
            H::Deref(p) => match &p.ty {
                Type::Pointer { space, is_const, .. } => (*space, *is_const || *space == AddressSpace::Constant),
                _ => (AddressSpace::Thread, false),
            },
            H::Index { base, .. } | H::Field { base, .. } | H::Swizzle { base, .. } => self.place_info(base),
            H::Assign { place, .. } | H::CompoundAssign { place, .. } | H::IncDec { place, .. } => self.place_info(place),
            _ => (AddressSpace::Thread, true),
        }
    }

    pub(super) fn cast(&mut self, kind: CastKind, ty: &Type, args: &[ast::Expr], braces: bool, span: Span) -> Option<hir::Expr> {
        if kind == CastKind::Functional {
            if braces {
                return self.list_init(args, ty, span);
            }
            return self.construct(ty, args, span, true);
        }
        let [arg] = args else {
            self.error(span, "a cast takes exactly one value");
            return None;
        };
        let h = self.expr(arg)?;
        self.explicit_convert(kind, h, ty, span)
    }

    /// `reinterpret_cast<thread T&>(x)` (or `static_cast`, C-style): the
    /// object `x` names, seen as a `T` — the same place, another type.
    pub(super) fn cast_to_reference(
        &mut self,
        kind: CastKind,
        h: hir::Expr,
        referee: &Type,
        space: AddressSpace,
        is_const: bool,
        span: Span,
    ) -> Option<hir::Expr> {
        let t = self.ty_name(&Type::Reference { referee: Box::new(referee.clone()), space, is_const });
        if !h.is_place() {
            self.error(
                h.span,
                format!("a cast to the reference `{t}` needs an object (a variable, element or member), not a temporary value"),
            );
            return None;
        }
        let (from_space, from_const) = self.place_info(&h);
        if from_space != space {
            self.error(span, format!("cannot cast an object in `{}` memory to the reference `{t}`", from_space.keyword()))
                .note("Metal references never change address space");
            return None;
        }
        // `constant` memory is read-only, so no cast into it drops `const`.
        if from_const && !is_const && space != AddressSpace::Constant && kind != CastKind::Const && kind != CastKind::CStyle {
            self.error(span, format!("this cast to `{t}` drops `const`")).help("cast to a `const` reference, or use `const_cast`");
            return None;
        }
        if h.ty == *referee {
            return Some(hir::Expr { span, ..h });
        }
        if matches!(kind, CastKind::Static | CastKind::Const | CastKind::Functional) {
            let from = self.ty_name(&h.ty);
            self.error(span, format!("`static_cast` cannot view a `{from}` as `{t}`"))
                .help("use `reinterpret_cast` to reinterpret the object's memory");
            return None;
        }
        let from = Type::Pointer { pointee: Box::new(h.ty.clone()), space, is_const: from_const };
        let to = Type::Pointer { pointee: Box::new(referee.clone()), space, is_const: is_const || from_const };
        let addr = mk(H::AddrOf(bx(h)), from, span);
        Some(mk(H::Deref(bx(mk(H::PtrCast(bx(addr)), to, span))), referee.clone(), span))
    }

    /// `half4x4(m)` for a `float4x4` `m` (or a cast): column by column. The
    /// matrix must be an object (a variable, element or `*p`), read once
    /// per column, so nothing is evaluated twice.
    pub(super) fn matrix_convert(&mut self, h: hir::Expr, ty: &Type, span: Span) -> Option<hir::Expr> {
        let Type::Matrix { elem, cols, rows } = *ty else { return None };
        if !h.is_place() {
            self.error(
                h.span,
                format!("converting this `{}` value to `{}` needs it in a variable first", self.ty_name(&h.ty), self.ty_name(ty)),
            )
            .help("store the matrix in a local, then convert the local");
            return None;
        }
        let Type::Matrix { elem: from, .. } = h.ty else { return None };
        let col_from = Type::vector(from, rows);
        let col_ty = Type::vector(elem, rows);
        let parts = (0..cols)
            .map(|k| {
                let index = mk(H::Const(ConstValue::Int(k as i64)), Type::Scalar(Scalar::Int), span);
                let col = mk(H::Index { base: bx(h.clone()), index: bx(index) }, col_from.clone(), span);
                self.convert(col, col_ty.clone())
            })
            .collect();
        Some(mk(H::Construct(parts), ty.clone(), span))
    }

    /// An explicit conversion (`static_cast`, C-style, `T(x)`).
    pub(super) fn explicit_convert(&mut self, kind: CastKind, h: hir::Expr, ty: &Type, span: Span) -> Option<hir::Expr> {
        let h = if matches!(h.ty, Type::Array { .. }) && ty.is_pointer() { self.decay(h) } else { h };
        if h.ty == *ty {
            return Some(hir::Expr { span, ..h });
        }
        // To or from a class: its constructors and conversion operators.
        if (Self::is_class(&h.ty) || Self::is_class(ty)) && h.ty != *ty {
            if let Some(c) = self.user_conversion(h.clone(), ty) {
                return Some(hir::Expr { span, ..c });
            }
            // `float(mask)` with only `operator bool()`: the user-defined
            // conversion, then the standard one.
            if ty.is_scalar() {
                if let Some(c) = self.conversion_to_scalar(h.clone()) {
                    return self.explicit_convert(kind, c, ty, span);
                }
            }
        }
        if let (Type::Matrix { cols: a, rows: b, .. }, Type::Matrix { cols: c, rows: d, .. }) = (&h.ty, ty) {
            if (a, b) == (c, d) {
                return self.matrix_convert(h, ty, span);
            }
        }
        let ok = match (&h.ty, ty) {
            (Type::Scalar(_) | Type::Enum(_), Type::Scalar(_) | Type::Enum(_)) => true,
            (Type::Scalar(_), Type::Vector { .. }) => true,
            (Type::Vector { len: a, .. }, Type::Vector { len: b, .. }) => a == b,
            (Type::Pointer { space: a, .. }, Type::Pointer { space: b, .. }) => {
                if a != b {
                    self.error(
                        span,
                        format!("cannot cast a pointer to `{}` memory into a pointer to `{}` memory", a.keyword(), b.keyword()),
                    )
                    .note("Metal pointers never change address space");
                    return None;
                }
                if kind == CastKind::Static
                    && ty_pointee(&h.ty) != ty_pointee(ty)
                    && *ty_pointee(ty) != Type::Void
                    && *ty_pointee(&h.ty) != Type::Void
                {
                    self.error(span, "`static_cast` cannot change what a pointer points to")
                        .help("use `reinterpret_cast` or a C-style cast to reinterpret the memory");
                    return None;
                }
                true
            }
            (Type::NullPtr, Type::Pointer { .. }) => true,
            // A pointer's simulated address is its bits: every allocation
            // starts on a 2^40-byte boundary, so alignment tests on the
            // address see the offset's alignment, and the integer converts
            // back to the same pointer.
            (Type::Pointer { .. }, Type::Scalar(s)) | (Type::Scalar(s), Type::Pointer { .. })
                if s.is_integer() && s.size() == 8 && matches!(kind, CastKind::Reinterpret | CastKind::CStyle | CastKind::Functional) =>
            {
                true
            }
            (Type::Pointer { .. }, Type::Scalar(s)) | (Type::Scalar(s), Type::Pointer { .. }) if s.is_integer() => {
                let t = self.ty_name(ty);
                let mut d = self.error(span, format!("cannot convert `{}` to `{t}`", self.ty_name(&h.ty)));
                d = if s.size() == 8 {
                    d.help("pointers and 64-bit integers convert only with `reinterpret_cast` or a C-style cast")
                } else {
                    d.help("a pointer is 64 bits wide: convert it to `ulong` (or `long`)")
                };
                drop(d);
                return None;
            }
            (Type::Struct(a), Type::Struct(b)) => a == b,
            (Type::BuiltinEnum(a), Type::BuiltinEnum(b)) => a == b,
            (Type::Scalar(_), Type::BuiltinEnum(_)) => true,
            _ => false,
        };
        if !ok {
            let (f, t) = (self.ty_name(&h.ty), self.ty_name(ty));
            let mut d = self.error(span, format!("cannot convert `{f}` to `{t}`"));
            if let (Type::Vector { len: a, .. }, Type::Vector { len: b, .. }) = (&h.ty, ty) {
                d = d.help(format!("the lengths differ ({a} vs {b}); select components with a swizzle first"));
            } else if h.ty.is_vector() && ty.is_scalar() {
                d = d.help("select one component, e.g. `.x`");
            } else if h.ty.elem_scalar().is_some() && ty.elem_scalar().is_some() {
                d = d.help(format!("to reinterpret the bits use `as_type<{t}>(...)` (the sizes must match)"));
            }
            drop(d);
            return None;
        }
        let mut out = match (&h.ty, ty) {
            (Type::Pointer { .. } | Type::NullPtr, Type::Pointer { .. }) => self.convert(h, ty.clone()),
            (Type::Enum(_), Type::Enum(_))
            | (Type::Scalar(_), Type::Enum(_))
            | (Type::Scalar(_), Type::BuiltinEnum(_))
            | (Type::Pointer { .. }, Type::Scalar(_))
            | (Type::Scalar(_), Type::Pointer { .. }) => mk(H::PtrCast(bx(h)), ty.clone(), span),
            _ => self.convert(h, ty.clone()),
        };
        out.span = span;
        Some(out)
    }
}
