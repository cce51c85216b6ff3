//! Matrix arithmetic on `halfCxR` / `floatCxR` (C columns of R rows): the
//! operators Metal defines on matrices, the diagonal constructor and the
//! `transpose` / `determinant` library functions. Sums, differences and
//! scaling are component-wise on the column-major elements, so they stay
//! ordinary binary expressions; products become the `__matrix_multiply`
//! builtin, which the simulator lowers to multiply-adds. The product of two
//! SIMD-group matrices is `simdgroup_multiply` into a temporary.

use super::expr::mk;
use super::Checker;
use crate::ast::{AddressSpace, BinaryOp};
use crate::hir::{self, BuiltinId, ExprKind as H};
use crate::source::Span;
use crate::types::{Scalar, Type};

/// The library functions on matrices.
pub(crate) const MATRIX_FUNCTIONS: [&str; 2] = ["determinant", "transpose"];

impl Checker<'_, '_> {
    /// `l op r` where at least one operand is a matrix.
    pub(crate) fn matrix_binary(&mut self, op: BinaryOp, l: hir::Expr, r: hir::Expr, span: Span) -> Option<hir::Expr> {
        use BinaryOp::{Add, Mul, Sub};
        match (op, l.ty.clone(), r.ty.clone()) {
            (Add | Sub, Type::Matrix { .. }, Type::Matrix { .. }) if l.ty == r.ty => {
                let ty = l.ty.clone();
                Some(mk(H::Binary { op, lhs: Box::new(l), rhs: Box::new(r) }, ty, span))
            }
            (Mul, Type::Matrix { elem, .. }, Type::Scalar(s)) if s != Scalar::Bool => {
                let ty = l.ty.clone();
                let r = self.convert(r, Type::Scalar(elem));
                Some(mk(H::Binary { op, lhs: Box::new(l), rhs: Box::new(r) }, ty, span))
            }
            (Mul, Type::Scalar(s), Type::Matrix { elem, .. }) if s != Scalar::Bool => {
                let ty = r.ty.clone();
                let l = self.convert(l, Type::Scalar(elem));
                Some(mk(H::Binary { op, lhs: Box::new(l), rhs: Box::new(r) }, ty, span))
            }
            (Mul, Type::Matrix { elem, cols, rows }, Type::Vector { elem: e, len, .. }) if e == elem && len == cols => {
                self.matrix_product(l, r, Type::vector(elem, rows), span)
            }
            (Mul, Type::Vector { elem: e, len, .. }, Type::Matrix { elem, cols, rows }) if e == elem && len == rows => {
                self.matrix_product(l, r, Type::vector(elem, cols), span)
            }
            (Mul, Type::Matrix { elem, cols: k, rows }, Type::Matrix { elem: e, cols, rows: k2 }) if e == elem && k == k2 => {
                self.matrix_product(l, r, Type::Matrix { elem, cols, rows }, span)
            }
            _ => {
                let (ln, rn) = (self.ty_name(&l.ty), self.ty_name(&r.ty));
                self.error(span, format!("invalid operands to `{}`: `{ln}` and `{rn}`", op.as_str())).help(
                    "matrices (C columns of R rows, same element type) add and subtract with matrices of the same shape, \
                     multiply by scalars, by vectors of C components on the right or R components on the left, \
                     and by matrices of C rows",
                );
                None
            }
        }
    }

    fn matrix_product(&mut self, l: hir::Expr, r: hir::Expr, ty: Type, span: Span) -> Option<hir::Expr> {
        let param_types = vec![l.ty.clone(), r.ty.clone()];
        Some(mk(H::Builtin { id: BuiltinId::MatrixMultiply, fast: false, args: vec![l, r], param_types }, ty, span))
    }

    /// `a * b` on SIMD-group matrices: Metal's operator is
    /// `simdgroup_multiply` into a new matrix, which is what it becomes.
    pub(crate) fn simdgroup_product(&mut self, l: hir::Expr, r: hir::Expr, span: Span) -> Option<hir::Expr> {
        if l.ty != r.ty {
            let (ln, rn) = (self.ty_name(&l.ty), self.ty_name(&r.ty));
            self.error(span, format!("invalid operands to `*`: `{ln}` and `{rn}`"))
                .help("SIMD-group matrices multiply with matrices of the same element type");
            return None;
        }
        let ty = l.ty.clone();
        let tmp = self.temp_local(ty.clone(), span)?;
        let d = mk(H::Local(tmp), ty.clone(), span);
        let dref = Type::Reference { referee: Box::new(ty.clone()), space: AddressSpace::Thread, is_const: false };
        let param_types = vec![dref, ty.clone(), ty.clone()];
        let call =
            mk(H::Builtin { id: BuiltinId::SimdgroupMultiply, fast: false, args: vec![d.clone(), l, r], param_types }, Type::Void, span);
        Some(mk(H::Comma { lhs: Box::new(call), rhs: Box::new(d) }, ty, span))
    }

    /// `place *= m` for a product (`v *= m`, `m *= m2`): `place = place * m`,
    /// so the place is evaluated twice and must be free of side effects.
    pub(crate) fn matrix_compound_product(&mut self, place: hir::Expr, r: hir::Expr, span: Span) -> Option<hir::Expr> {
        if !is_plain_value(&place) {
            self.error(place.span, "`*=` by a matrix on this computed place is not supported by this simulator yet")
                .help("write `x = x * m` with the place in a variable or reference first");
            return None;
        }
        let ty = place.ty.clone();
        let product = self.matrix_product(place.clone(), r, ty.clone(), span)?;
        Some(mk(H::Assign { place: Box::new(place), value: Box::new(product) }, ty, span))
    }

    /// `transpose(m)` or `determinant(m)`.
    pub(crate) fn matrix_function(&mut self, name: &str, mut args: Vec<hir::Expr>, span: Span, name_span: Span) -> Option<hir::Expr> {
        let shape = match (args.len(), args.first().map(|a| &a.ty)) {
            (1, Some(&Type::Matrix { elem, cols, rows })) => (elem, cols, rows),
            _ => {
                let given: Vec<String> = args.iter().map(|a| format!("`{}`", self.ty_name(&a.ty))).collect();
                self.error(name_span, format!("`{name}` takes one matrix (e.g. `float3x3`), not ({})", given.join(", ")));
                return None;
            }
        };
        let (elem, cols, rows) = shape;
        let (id, ret) = match name {
            "transpose" => (BuiltinId::Transpose, Type::Matrix { elem, cols: rows, rows: cols }),
            _ if cols != rows => {
                let n = self.ty_name(&args[0].ty);
                self.error(args[0].span, format!("`determinant` needs a square matrix; `{n}` has {cols} columns of {rows} rows"));
                return None;
            }
            _ => (BuiltinId::Determinant, Type::Scalar(elem)),
        };
        let arg = args.remove(0);
        let param_types = vec![arg.ty.clone()];
        Some(mk(H::Builtin { id, fast: false, args: vec![arg], param_types }, ret, span))
    }

    /// `floatCxR(x)`: `x` on the diagonal, zero elsewhere. `x` is used once
    /// per column, so only a value without side effects may be spread.
    pub(crate) fn matrix_diagonal(&mut self, x: hir::Expr, ty: &Type, span: Span) -> Option<hir::Expr> {
        let Type::Matrix { elem, cols, rows } = *ty else { return None };
        if !is_plain_value(&x) {
            self.error(x.span, "a matrix built from one computed value is not supported by this simulator yet")
                .help("store the value in a variable first, then build the matrix from the variable");
            return None;
        }
        let x = self.convert(x, Type::Scalar(elem));
        let zero = mk(H::Zero, Type::Scalar(elem), span);
        let parts =
            (0..cols).flat_map(|c| (0..rows).map(move |r| (c, r))).map(|(c, r)| if c == r { x.clone() } else { zero.clone() }).collect();
        Some(mk(H::Construct(parts), ty.clone(), span))
    }
}

/// An expression that reads values only (evaluating it twice changes nothing).
fn is_plain_value(e: &hir::Expr) -> bool {
    match &e.kind {
        H::Const(_) | H::Local(_) | H::Global(_) | H::Zero => true,
        H::Convert(x) | H::Deref(x) => is_plain_value(x),
        H::Field { base, .. } => is_plain_value(base),
        H::Index { base, index } => is_plain_value(base) && is_plain_value(index),
        H::Unary { operand, .. } => is_plain_value(operand),
        H::Binary { lhs, rhs, .. } => is_plain_value(lhs) && is_plain_value(rhs),
        _ => false,
    }
}
