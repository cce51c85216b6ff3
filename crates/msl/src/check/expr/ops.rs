//! The built-in operators: unary, binary (with pointer arithmetic),
//! assignment and `?:`.

use super::{base_local_name, bx, mk, ty_pointee};
use crate::ast::{self, AddressSpace, BinaryOp, ExprKind as A, UnaryOp as AU};
use crate::check::Checker;
use crate::hir::{self, BuiltinId, ExprKind as H};
use crate::source::Span;
use crate::types::{BuiltinEnum, Scalar, Type};

impl<'a> Checker<'a, '_> {
    pub(super) fn unary(&mut self, op: AU, operand: &ast::Expr, span: Span) -> Option<hir::Expr> {
        let mut x = self.expr(operand)?;
        // `&f` is `f`'s address, as is `f`; `*op` names the function again.
        if matches!(x.ty, Type::FnPtr { .. }) && (op == AU::Deref || op == AU::AddrOf && matches!(x.kind, H::FuncRef(_))) {
            x.span = span;
            return Some(x);
        }
        // Without a fitting overload, `-x`, `+x`, `~x` apply to `x`'s
        // conversion to a scalar, as C++'s built-in candidates do.
        let builtin_sym = match op {
            AU::Neg => Some("-"),
            AU::Plus => Some("+"),
            AU::BitNot => Some("~"),
            _ => None,
        };
        if let Some(sym) = builtin_sym.filter(|_| Self::is_class(&x.ty)) {
            let args = [x];
            let converted = if self.user_operator_fits(sym, &args) { None } else { self.operands_as_scalars(&args) };
            let [orig] = args;
            x = converted.and_then(|v| v.into_iter().next()).unwrap_or(orig);
        }
        if Self::is_class(&x.ty) {
            match op {
                AU::Neg => return self.overloaded("-", vec![x], span),
                AU::Plus => return self.overloaded("+", vec![x], span),
                // Without an `operator!`, `!x` converts `x` to `bool`
                // (through `operator bool`), as C++ does.
                AU::Not if !self.declares_operator(&x.ty, "operator!") => {}
                AU::Not => return self.overloaded("!", vec![x], span),
                AU::BitNot => return self.overloaded("~", vec![x], span),
                AU::PreInc | AU::PreDec => return self.overloaded_incdec(x, op == AU::PreInc, false, span),
                AU::PostInc | AU::PostDec => return self.overloaded_incdec(x, op == AU::PostInc, true, span),
                AU::Deref => return self.overloaded("*", vec![x], span),
                AU::AddrOf => {}
            }
        }
        match op {
            AU::Plus | AU::Neg => {
                let x = self.arith_operand(x, if op == AU::Neg { "-" } else { "+" })?;
                if op == AU::Plus {
                    return Some(x);
                }
                let ty = x.ty.clone();
                if let Some(v) = self.const_value(&x) {
                    if let Some(s) = ty.elem_scalar().filter(|_| ty.is_scalar()) {
                        if let Some(nv) = self.fold_negation(v, s, span) {
                            return Some(mk(H::Const(nv), ty, span));
                        }
                    }
                }
                Some(mk(H::Unary { op: hir::UnaryOp::Neg, operand: bx(x) }, ty, span))
            }
            AU::Not => {
                if let Type::Vector { len, .. } = x.ty {
                    let bty = Type::vector(Scalar::Bool, len);
                    let x = self.convert(x, bty.clone());
                    return Some(mk(H::Unary { op: hir::UnaryOp::Not, operand: bx(x) }, bty, span));
                }
                let x = self.bool_condition(x, "the operand of `!`")?;
                Some(mk(H::Unary { op: hir::UnaryOp::Not, operand: bx(x) }, Type::BOOL, span))
            }
            AU::BitNot => {
                let x = self.arith_operand(x, "~")?;
                if !x.ty.elem_scalar().is_some_and(|s| s.is_integer()) {
                    let n = self.ty_name(&x.ty);
                    self.error(span, format!("`~` needs an integer operand, not `{n}`"));
                    return None;
                }
                let ty = x.ty.clone();
                Some(mk(H::Unary { op: hir::UnaryOp::BitNot, operand: bx(x) }, ty, span))
            }
            AU::Deref => {
                let x = if matches!(x.ty, Type::Array { .. }) { self.decay(x) } else { x };
                match x.ty.clone() {
                    Type::Pointer { pointee, .. } => {
                        if *pointee == Type::Void {
                            self.error(span, "cannot dereference a `void*`; cast it to a typed pointer first");
                            return None;
                        }
                        Some(mk(H::Deref(bx(x)), *pointee, span))
                    }
                    t => {
                        let n = self.ty_name(&t);
                        self.error(span, format!("cannot dereference a value of type `{n}`: it is not a pointer"));
                        None
                    }
                }
            }
            AU::AddrOf => {
                if !x.is_place() {
                    self.error(span, "cannot take the address of a temporary value").help("store it in a variable first");
                    return None;
                }
                if let H::Swizzle { .. } = x.kind {
                    self.error(span, "cannot take the address of a vector swizzle");
                    return None;
                }
                let (space, is_const) = self.place_info(&x);
                let ty = Type::Pointer { pointee: Box::new(x.ty.clone()), space, is_const };
                // `&*p` is `p`.
                if let H::Deref(p) = x.kind {
                    if p.ty == ty {
                        return Some(*p);
                    }
                    let inner = mk(H::Deref(p), ty_pointee(&ty).clone(), span);
                    return Some(mk(H::AddrOf(bx(inner)), ty, span));
                }
                Some(mk(H::AddrOf(bx(x)), ty, span))
            }
            AU::PreInc | AU::PreDec | AU::PostInc | AU::PostDec => {
                let what = if matches!(op, AU::PreInc | AU::PostInc) { "++" } else { "--" };
                self.check_assignable(&x, span, what)?;
                match &x.ty {
                    Type::Scalar(s) if *s != Scalar::Bool => {}
                    Type::Vector { .. } | Type::Pointer { .. } => {}
                    t => {
                        let n = self.ty_name(t);
                        self.error(span, format!("`{what}` cannot be applied to a value of type `{n}`"));
                        return None;
                    }
                }
                let ty = x.ty.clone();
                Some(mk(
                    H::IncDec {
                        place: bx(x),
                        increment: matches!(op, AU::PreInc | AU::PostInc),
                        prefix: matches!(op, AU::PreInc | AU::PreDec),
                    },
                    ty,
                    span,
                ))
            }
        }
    }

    /// Require a scalar or vector operand (enums promote to their integer).
    fn arith_operand(&mut self, x: hir::Expr, op: &str) -> Option<hir::Expr> {
        match &x.ty {
            Type::Scalar(s) => {
                let p = s.promoted();
                Some(self.convert(x, Type::Scalar(p)))
            }
            Type::Vector { .. } => Some(x),
            Type::Enum(id) if !self.tables.enum_def(*id).scoped => {
                let s = self.tables.enum_def(*id).underlying.promoted();
                Some(self.convert(x, Type::Scalar(s)))
            }
            t => {
                let n = self.ty_name(t);
                self.error(x.span, format!("`{op}` cannot be applied to a value of type `{n}`"));
                None
            }
        }
    }

    /// The common operand type of a binary arithmetic operator.
    fn operand_type(&mut self, op: &str, l: &Type, r: &Type, span: Span) -> Option<Type> {
        match (l, r) {
            (Type::Scalar(a), Type::Scalar(b)) => Some(Type::Scalar(Scalar::common(*a, *b))),
            (Type::Vector { elem, len, .. }, Type::Scalar(_)) | (Type::Scalar(_), Type::Vector { elem, len, .. }) => {
                Some(Type::vector(*elem, *len))
            }
            (Type::Vector { elem: a, len: la, .. }, Type::Vector { elem: b, len: lb, .. }) if a == b && la == lb => {
                Some(Type::vector(*a, *la))
            }
            (Type::Matrix { .. }, _) | (_, Type::Matrix { .. }) => {
                self.error(span, "matrix arithmetic is not supported by the simulator yet");
                None
            }
            _ => {
                let (ln, rn) = (self.ty_name(l), self.ty_name(r));
                let mut d = self.error(span, format!("invalid operands to `{op}`: `{ln}` and `{rn}`"));
                if l.is_vector() && r.is_vector() {
                    d = d.help("both vectors must have the same element type and length; convert one explicitly");
                }
                drop(d);
                None
            }
        }
    }

    pub(crate) fn binary(&mut self, op: BinaryOp, l: hir::Expr, r: hir::Expr, span: Span) -> Option<hir::Expr> {
        use BinaryOp::*;
        if matches!(op, LogAnd | LogOr) {
            let l = self.bool_condition(l, &format!("the left operand of `{}`", op.as_str()))?;
            let r = self.bool_condition(r, &format!("the right operand of `{}`", op.as_str()))?;
            return Some(mk(H::Logical { and: op == LogAnd, lhs: bx(l), rhs: bx(r) }, Type::BOOL, span));
        }
        let l = if matches!(l.ty, Type::Array { .. }) { self.decay(l) } else { l };
        let r = if matches!(r.ty, Type::Array { .. }) { self.decay(r) } else { r };
        if matches!(l.ty, Type::FnPtr { .. }) || matches!(r.ty, Type::FnPtr { .. }) {
            return self.fn_ptr_compare(op, l, r, span);
        }
        // Pointers.
        if l.ty.is_pointer() || r.ty.is_pointer() || l.ty == Type::NullPtr || r.ty == Type::NullPtr {
            return self.pointer_binary(op, l, r, span);
        }
        // mem_flags combine with | and &.
        if let (Type::BuiltinEnum(a), Type::BuiltinEnum(b)) = (&l.ty, &r.ty) {
            if a == b && matches!(op, BitOr | BitAnd) && *a == BuiltinEnum::MemFlags {
                let ty = l.ty.clone();
                return Some(mk(H::Binary { op, lhs: bx(l), rhs: bx(r) }, ty, span));
            }
        }
        // Scoped enums: only compare with the same enum.
        if let (Type::Enum(a), Type::Enum(b)) = (&l.ty, &r.ty) {
            if a == b && op.is_comparison() {
                let s = self.tables.enum_def(*a).underlying;
                let (l, r) = (self.convert(l, Type::Scalar(s)), self.convert(r, Type::Scalar(s)));
                return Some(mk(H::Binary { op, lhs: bx(l), rhs: bx(r) }, Type::BOOL, span));
            }
        }
        for x in [&l, &r] {
            if let Type::Enum(id) = &x.ty {
                if self.tables.enum_def(*id).scoped {
                    let n = self.ty_name(&x.ty);
                    self.error(x.span, format!("`{}` cannot be applied to scoped enum `{n}`", op.as_str()))
                        .help("convert it with `static_cast<int>(...)` first");
                    return None;
                }
            }
        }
        if matches!(l.ty, Type::Matrix { .. }) || matches!(r.ty, Type::Matrix { .. }) {
            return self.matrix_binary(op, l, r, span);
        }
        if op == Mul && matches!(l.ty, Type::SimdMatrix { .. }) && matches!(r.ty, Type::SimdMatrix { .. }) {
            return self.simdgroup_product(l, r, span);
        }
        let l = self.arith_operand_keep(l, op.as_str())?;
        let r = self.arith_operand_keep(r, op.as_str())?;
        let mut oty = self.operand_type(op.as_str(), &l.ty, &r.ty, span)?;
        let elem = oty.elem_scalar().unwrap_or(Scalar::Int);
        match op {
            Rem if elem.is_float() => {
                self.error(span, "`%` needs integer operands; these are floating-point")
                    .label(format!("`{}` and `{}`", self.ty_name(&l.ty), self.ty_name(&r.ty)))
                    .help("use `fmod(a, b)` for the floating-point remainder");
                return None;
            }
            BitAnd | BitOr | BitXor | Shl | Shr if elem.is_float() => {
                self.error(
                    span,
                    format!("`{}` needs integer operands, not `{}` and `{}`", op.as_str(), self.ty_name(&l.ty), self.ty_name(&r.ty)),
                )
                .help("to work on the bits of a float, reinterpret it first: `as_type<uint>(x)`");
                return None;
            }
            Shl | Shr => {
                // The result has the (promoted) type of the left operand.
                oty = match (&l.ty, &r.ty) {
                    (Type::Scalar(a), _) if r.ty.is_scalar() => Type::Scalar(a.promoted()),
                    _ => oty,
                };
            }
            _ => {}
        }
        let (l, r) = (self.convert(l, oty.clone()), self.convert(r, oty.clone()));
        let ty = if op.is_comparison() {
            match &oty {
                Type::Vector { len, .. } => Type::vector(Scalar::Bool, *len),
                _ => Type::BOOL,
            }
        } else {
            oty
        };
        if !elem.is_float() {
            self.warn_undefined(op, &l, &r, span);
        }
        Some(mk(H::Binary { op, lhs: bx(l), rhs: bx(r) }, ty, span))
    }

    /// Like `arith_operand` but without promoting (the operator decides).
    fn arith_operand_keep(&mut self, x: hir::Expr, op: &str) -> Option<hir::Expr> {
        match &x.ty {
            Type::Scalar(_) | Type::Vector { .. } | Type::Matrix { .. } => Some(x),
            Type::Enum(id) => {
                let s = self.tables.enum_def(*id).underlying;
                Some(self.convert(x, Type::Scalar(s)))
            }
            t => {
                let n = self.ty_name(t);
                self.error(x.span, format!("`{op}` cannot be applied to a value of type `{n}`"));
                None
            }
        }
    }

    fn pointer_binary(&mut self, op: BinaryOp, l: hir::Expr, r: hir::Expr, span: Span) -> Option<hir::Expr> {
        use BinaryOp::*;
        let is_int = |t: &Type| matches!(t, Type::Scalar(s) if s.is_integer() || *s == Scalar::Bool) || matches!(t, Type::Enum(_));
        match op {
            Add | Sub if l.ty.is_pointer() && is_int(&r.ty) => {
                let ty = l.ty.clone();
                Some(mk(H::PtrOffset { ptr: bx(l), offset: bx(r), negate: op == Sub }, ty, span))
            }
            Add if r.ty.is_pointer() && is_int(&l.ty) => {
                let ty = r.ty.clone();
                Some(mk(H::PtrOffset { ptr: bx(r), offset: bx(l), negate: false }, ty, span))
            }
            Sub if l.ty.is_pointer() && r.ty.is_pointer() => {
                if ty_pointee(&l.ty) != ty_pointee(&r.ty) {
                    self.error(span, "cannot subtract pointers to different types");
                    return None;
                }
                Some(mk(H::PtrDiff { lhs: bx(l), rhs: bx(r) }, Type::Scalar(Scalar::Long), span))
            }
            Eq | Ne | Lt | Gt | Le | Ge => {
                let (l, r) = match (&l.ty, &r.ty) {
                    (Type::NullPtr, t @ Type::Pointer { .. }) => {
                        let t = t.clone();
                        (mk(H::Zero, t, l.span), r)
                    }
                    (t @ Type::Pointer { .. }, Type::NullPtr) => {
                        let t = t.clone();
                        (l, mk(H::Zero, t, r.span))
                    }
                    _ => (l, r),
                };
                if !(l.ty.is_pointer() && r.ty.is_pointer()) {
                    self.error(span, format!("cannot compare `{}` with `{}`", self.ty_name(&l.ty), self.ty_name(&r.ty)));
                    return None;
                }
                Some(mk(H::PtrCompare { op, lhs: bx(l), rhs: bx(r) }, Type::BOOL, span))
            }
            _ => {
                self.error(span, format!("invalid operands to `{}`: `{}` and `{}`", op.as_str(), self.ty_name(&l.ty), self.ty_name(&r.ty)))
                    .note("pointers support `+`/`-` with an integer, `-` with another pointer, and comparisons");
                None
            }
        }
    }

    /// Report if `x` cannot be written; `Some(())` if it can.
    pub(crate) fn check_assignable(&mut self, x: &hir::Expr, span: Span, what: &str) -> Option<()> {
        if !x.is_place() {
            self.error(span, format!("the left side of `{what}` is not something that can be assigned to"))
                .help("assign to a variable, an array element, a field or a dereferenced pointer");
            return None;
        }
        if let H::Swizzle { comps, .. } = &x.kind {
            let mut seen = [false; 4];
            for &c in comps {
                if seen[c as usize & 3] {
                    self.error(x.span, "cannot assign to a swizzle that repeats a component")
                        .help("each component may appear only once on the left of `=` (e.g. `.xy`, not `.xx`)");
                    return None;
                }
                seen[c as usize & 3] = true;
            }
        }
        if matches!(x.ty, Type::Array { .. }) {
            self.error(span, "arrays cannot be assigned as a whole").help("copy them element by element in a loop");
            return None;
        }
        let (space, is_const) = self.place_info(x);
        if space == AddressSpace::Constant {
            self.error(x.span, "cannot write to `constant` memory: it is read-only")
                .label("this is in the `constant` address space")
                .help("declare the buffer `device` (not `constant`) if the kernel must write it");
            return None;
        }
        if is_const {
            let mut d = self.error(x.span, "cannot assign to a `const` value");
            if let Some(name) = base_local_name(self, x) {
                if matches!(x.kind, H::Local(_)) {
                    d = d
                        .label(format!("`{name}` is declared `const`"))
                        .help(format!("remove `const` from the declaration of `{name}` if it must change"));
                } else {
                    d = d
                        .label("this is reached through a pointer to `const`")
                        .help(format!("declare `{name}` without `const` (e.g. `device float*`) if the kernel must write through it"));
                }
            }
            drop(d);
            return None;
        }
        Some(())
    }

    pub(super) fn assign(&mut self, op: Option<BinaryOp>, lhs: &ast::Expr, rhs: &ast::Expr, span: Span) -> Option<hir::Expr> {
        let l = self.expr(lhs);
        let sym = op.map(|o| format!("{}=", o.as_str())).unwrap_or_else(|| "=".into());
        let mut l = l?;
        if let (Some(op), true) = (op, Self::is_class(&l.ty)) {
            let r = self.expr(rhs)?;
            return self.overloaded(&format!("{}=", op.as_str()), vec![l, r], span);
        }
        if op.is_none() && self.has_member_operator(&l.ty, "operator=") {
            let r = self.expr(rhs)?;
            return self.overloaded("=", vec![l, r], span);
        }
        // A constructor's member initializer of an array member (`T v[N] =
        // {…};` or `: v{…}`), which with_member_inits spells `this->v = {…}`:
        // initialization, not the array assignment C++ forbids.
        let member_init = matches!(&lhs.kind, A::Member { base, arrow: true, .. } if matches!(base.kind, A::This));
        // A reference member named in a constructor's member initializer
        // list is bound there (with_member_inits gives `this` the member
        // name's span; `this->r = x` written in a body assigns through).
        if let (None, A::Member { base, name, .. }, H::Deref(slot)) = (op, &lhs.kind, &l.kind) {
            if let (true, H::Field { base: obj, field }) = (member_init && base.span == name.span, &slot.kind) {
                if let Type::Struct(sid) = obj.ty {
                    if self.is_ref_field(sid, *field as usize) {
                        let slot = (**slot).clone();
                        let v = self.bind_ref_field(sid, *field as usize, rhs)?;
                        return Some(mk(H::Assign { place: bx(slot.clone()), value: bx(v) }, slot.ty, span));
                    }
                }
            }
        }
        if op.is_none() && member_init && matches!(l.ty, Type::Array { .. }) && matches!(rhs.kind, A::InitList(_)) {
            let ty = l.ty.clone();
            let v = self.coerce_ast(rhs, &ty, "the initializer")?;
            return Some(mk(H::Assign { place: bx(l), value: bx(v) }, ty, span));
        }
        self.check_assignable(&l, lhs.span, &sym)?;
        let ty = l.ty.clone();
        match op {
            None => {
                let v = self.coerce_ast(rhs, &ty, "the assigned value")?;
                Some(mk(H::Assign { place: bx(l), value: bx(v) }, ty, span))
            }
            Some(op) => {
                let mut r = self.expr(rhs)?;
                // `p += Int<1>{}`: a free `operator+=` if one fits, else the
                // struct's conversion to a scalar.
                if Self::is_class(&r.ty) {
                    let args = vec![l, r];
                    if self.user_operator_fits(&sym, &args) {
                        return self.overloaded(&sym, args, span);
                    }
                    let converted = self.operands_as_scalars(&args);
                    let [l0, r0] = <[hir::Expr; 2]>::try_from(converted.unwrap_or(args)).ok()?;
                    l = l0;
                    r = r0;
                }
                if ty.is_pointer() && matches!(op, BinaryOp::Add | BinaryOp::Sub) {
                    let probe = mk(H::Zero, ty.clone(), l.span);
                    self.pointer_binary(op, probe, r.clone(), span)?;
                    return Some(mk(H::CompoundAssign { op, place: bx(l), value: bx(r), op_ty: ty.clone() }, ty, span));
                }
                // Type-check `l op r` as an ordinary binary expression.
                let probe = mk(H::Zero, ty.clone(), l.span);
                let b = self.binary(op, probe, r, span)?;
                if let H::Builtin { id: BuiltinId::MatrixMultiply, mut args, .. } = b.kind {
                    // `v *= m`, `m *= m2`: the product's type must be the place's.
                    if b.ty != ty {
                        self.error(span, format!("cannot assign a `{}` result to `{}`", self.ty_name(&b.ty), self.ty_name(&ty)));
                        return None;
                    }
                    let r = args.pop()?;
                    return self.matrix_compound_product(l, r, span);
                }
                let H::Binary { rhs: value, lhs: lconv, .. } = b.kind else { return None };
                let op_ty = lconv.ty.clone();
                if b.ty.vector_len() != ty.vector_len() && !ty.is_vector() {
                    self.error(span, format!("cannot assign a `{}` result to `{}`", self.ty_name(&b.ty), self.ty_name(&ty)));
                    return None;
                }
                Some(mk(H::CompoundAssign { op, place: bx(l), value, op_ty }, ty, span))
            }
        }
    }

    pub(super) fn conditional(&mut self, c: hir::Expr, t: hir::Expr, f: hir::Expr, span: Span) -> Option<hir::Expr> {
        if matches!(t.ty, Type::FnPtr { .. }) || matches!(f.ty, Type::FnPtr { .. }) {
            // A condition known now chooses the function now (so the
            // call stays direct); otherwise the pointer is a run-time value.
            if let (Some(v), true) = (crate::check::fold::fold(self, &c), t.ty == f.ty) {
                return Some(if v.is_true() { t } else { f });
            }
            let (t, f) = crate::check::fnptr::meet_null(t, f);
            if t.ty != f.ty {
                let (a, b) = (self.ty_name(&t.ty), self.ty_name(&f.ty));
                self.error(span, format!("the two branches of `?:` are different function pointer types `{a}` and `{b}`"));
                return None;
            }
            let ty = t.ty.clone();
            return Some(mk(H::Conditional { cond: bx(c), then: bx(t), els: bx(f) }, ty, span));
        }
        // Arrays of different types (or an array against `nullptr`) meet
        // as pointers to their first elements.
        let (t, f) = if t.ty != f.ty && (matches!(t.ty, Type::Array { .. }) || matches!(f.ty, Type::Array { .. })) {
            (self.decay(t), self.decay(f))
        } else {
            (t, f)
        };
        let ty = if t.ty == f.ty {
            t.ty.clone()
        } else {
            match (&t.ty, &f.ty) {
                (Type::Scalar(_) | Type::Vector { .. }, Type::Scalar(_) | Type::Vector { .. }) => {
                    self.operand_type("?:", &t.ty, &f.ty, span)?
                }
                (Type::Pointer { .. }, Type::NullPtr) => t.ty.clone(),
                (Type::NullPtr, Type::Pointer { .. }) => f.ty.clone(),
                (Type::Enum(_), Type::Scalar(_)) | (Type::Scalar(_), Type::Enum(_)) => Type::INT,
                _ => {
                    self.error(
                        span,
                        format!("the two branches of `?:` have incompatible types `{}` and `{}`", self.ty_name(&t.ty), self.ty_name(&f.ty)),
                    );
                    return None;
                }
            }
        };
        let (t, f) = (self.convert(t, ty.clone()), self.convert(f, ty.clone()));
        Some(mk(H::Conditional { cond: bx(c), then: bx(t), els: bx(f) }, ty, span))
    }
}
