//! Constant folding: the value of a scalar expression known at compile time.
//!
//! Every operator and conversion goes through `gpu_math::scalar`, the
//! arithmetic the executor runs, so a folded constant is bit for bit what the
//! kernel would compute at run time (half and bfloat rounding included).
//!
//! An operation C++ leaves undefined (signed overflow, a shift count not
//! below the width, division by zero, an out-of-range float-to-integer
//! conversion) makes the expression not a constant, as C++ has it: a context
//! that needs a constant reports the error with [`undefined_in`]'s reason; an
//! ordinary expression simply runs, with the hardware's result, and
//! [`Checker::warn_undefined`] warns where Apple's compiler does.

use super::Checker;
use crate::ast::BinaryOp;
use crate::hir::{self, ConstValue, ExprKind as H};
use crate::source::Span;
use crate::types::{Scalar, Type};
use gpu_math::scalar::{self as arith, CmpOp, Undefined};
use gpu_math::IntOp;
use std::cell::Cell;

/// Deepest expression nesting folded (deeper is "not a constant").
const MAX_FOLD_DEPTH: u32 = 200;

/// The note of warnings about undefined operations.
const COMPILER_MAY_FOLD: &str =
    "the simulator computes what Apple GPUs compute at run time, but Apple's compiler may fold this expression to any value";

/// An undefined operation met while folding: where, what, and the type it
/// happened in.
#[derive(Clone, Copy)]
struct Met {
    span: Span,
    what: Undefined,
    ty: Scalar,
}

struct Folder<'c, 'a, 'd, 'l> {
    c: &'c Checker<'a, 'd>,
    locals: &'l dyn Fn(hir::LocalId) -> Option<ConstValue>,
    /// The first undefined operation met, if any.
    undefined: Cell<Option<Met>>,
    /// Function constants given no value are not constants (rather than
    /// the zero that stands in for them until the pipeline is made).
    known_only: bool,
}

/// Fold a scalar constant expression; `None` if it is not constant.
pub(crate) fn fold(c: &Checker, e: &hir::Expr) -> Option<ConstValue> {
    let const_locals = |id: hir::LocalId| c.fs.as_ref()?.const_locals.get(&id).copied();
    Folder { c, locals: &const_locals, undefined: Cell::new(None), known_only: false }.fold(e, 0)
}

/// [`fold`] of what is known now: `None` when the value depends on a
/// function constant given no value, whose value is unknown until the
/// pipeline is made (warnings must not judge the stand-in zero).
pub(crate) fn fold_known(c: &Checker, e: &hir::Expr) -> Option<ConstValue> {
    let const_locals = |id: hir::LocalId| {
        let fs = c.fs.as_ref()?;
        if fs.stand_in_locals.contains(&id) {
            return None;
        }
        fs.const_locals.get(&id).copied()
    };
    Folder { c, locals: &const_locals, undefined: Cell::new(None), known_only: true }.fold(e, 0)
}

/// [`fold`] with the values of locals given by `locals` (the compile-time
/// evaluator's frame).
pub(crate) fn fold_with(c: &Checker, e: &hir::Expr, locals: &dyn Fn(hir::LocalId) -> Option<ConstValue>) -> Option<ConstValue> {
    Folder { c, locals, undefined: Cell::new(None), known_only: false }.fold(e, 0)
}

/// When `e` is not a constant because an operation in it is undefined: the
/// operation's span and a sentence saying why.
pub(crate) fn undefined_in(c: &Checker, e: &hir::Expr) -> Option<(Span, String)> {
    let const_locals = |id: hir::LocalId| c.fs.as_ref()?.const_locals.get(&id).copied();
    let f = Folder { c, locals: &const_locals, undefined: Cell::new(None), known_only: false };
    if f.fold(e, 0).is_some() {
        return None;
    }
    f.undefined.get().map(|m| (m.span, m.what.describe(m.ty.name())))
}

impl<'c> Folder<'c, '_, '_, '_> {
    fn met(&self, span: Span, what: Undefined, ty: Scalar) -> Option<ConstValue> {
        if self.undefined.get().is_none() {
            self.undefined.set(Some(Met { span, what, ty }));
        }
        None
    }

    fn fold(&self, e: &hir::Expr, depth: u32) -> Option<ConstValue> {
        if depth > MAX_FOLD_DEPTH {
            return None;
        }
        let f = |x: &hir::Expr| self.fold(x, depth + 1);
        let c = self.c;
        let scalar = match &e.ty {
            Type::Scalar(s) => Some(*s),
            Type::Enum(id) => Some(c.tables.enum_def(*id).underlying),
            Type::BuiltinEnum(_) => Some(Scalar::Int),
            _ => None,
        };
        match &e.kind {
            H::Const(v) => Some(*v),
            H::Local(id) => (self.locals)(*id),
            H::Call { func, args } => {
                let vals: Option<Vec<ConstValue>> = args.iter().map(f).collect();
                super::consteval::call(c, *func, &vals?)
            }
            H::Convert(x) | H::PtrCast(x) => {
                let s = scalar?;
                let (v, undefined) = f(x)?.cast_checked(s);
                match undefined {
                    Some(u) => self.met(e.span, u, s),
                    None => Some(v),
                }
            }
            H::Global(g) => {
                let glob = c.globals.get(g.0 as usize)?;
                scalar?;
                if self.known_only && c.function_constants.iter().any(|fc| fc.global == *g && !fc.defined) {
                    return None;
                }
                f(&glob.init)
            }
            H::Index { base, index } => {
                let i = f(index)?.as_i64();
                let agg = self.aggregate(base, depth)?;
                let H::Aggregate(items) = &agg.kind else { return None };
                if i < 0 {
                    return None;
                }
                match items.get(i as usize) {
                    Some(item) => f(item),
                    None => Some(ConstValue::Int(0).cast(scalar?)),
                }
            }
            H::Field { base, field } => {
                let agg = self.aggregate(base, depth)?;
                let H::Aggregate(items) = &agg.kind else { return None };
                match items.get(*field as usize) {
                    Some(item) => f(item),
                    None => Some(ConstValue::Int(0).cast(scalar?)),
                }
            }
            H::Zero => Some(ConstValue::Int(0).cast(scalar?)),
            H::Unary { op, operand } => {
                let s = scalar?;
                match fold_unary(*op, f(operand)?, s) {
                    Ok(v) => Some(v),
                    Err(Some(u)) => self.met(e.span, u, s),
                    Err(None) => None,
                }
            }
            H::Logical { and, lhs, rhs } => {
                let l = f(lhs)?.is_true();
                if *and && !l {
                    return Some(ConstValue::Bool(false));
                }
                if !*and && l {
                    return Some(ConstValue::Bool(true));
                }
                Some(ConstValue::Bool(f(rhs)?.is_true()))
            }
            H::Conditional { cond, then, els } => {
                if f(cond)?.is_true() {
                    f(then)
                } else {
                    f(els)
                }
            }
            H::Comma { rhs, .. } => f(rhs),
            H::Binary { op, lhs, rhs } => {
                let (l, r) = (f(lhs)?, f(rhs)?);
                let os = operand_scalar(&lhs.ty)?;
                match fold_binary_checked(*op, l, r, os) {
                    Ok(v) => Some(v),
                    Err(Some(u)) => self.met(e.span, u, os),
                    Err(None) => None,
                }
            }
            _ => None,
        }
    }

    fn aggregate<'e>(&self, e: &'e hir::Expr, depth: u32) -> Option<&'e hir::Expr>
    where
        'c: 'e,
    {
        if depth > MAX_FOLD_DEPTH {
            return None;
        }
        let c = self.c;
        match &e.kind {
            H::Global(g) => {
                let init = &c.globals.get(g.0 as usize)?.init;
                matches!(init.kind, H::Aggregate(_)).then_some(init)
            }
            H::Aggregate(_) => Some(e),
            H::Index { base, index } => {
                let i = self.fold(index, depth + 1)?.as_i64();
                let H::Aggregate(items) = &self.aggregate(base, depth + 1)?.kind else { return None };
                let item = items.get(usize::try_from(i).ok()?)?;
                self.aggregate(item, depth + 1)
            }
            H::Field { base, field } => {
                let H::Aggregate(items) = &self.aggregate(base, depth + 1)?.kind else { return None };
                self.aggregate(items.get(*field as usize)?, depth + 1)
            }
            _ => None,
        }
    }
}

/// The scalar type a binary operator works in, from its (converted) left
/// operand.
fn operand_scalar(t: &Type) -> Option<Scalar> {
    t.elem_scalar().or(match t {
        Type::BuiltinEnum(_) => Some(Scalar::Int),
        _ => None,
    })
}

fn int_op(op: BinaryOp) -> Option<IntOp> {
    use BinaryOp::*;
    Some(match op {
        Add => IntOp::Add,
        Sub => IntOp::Sub,
        Mul => IntOp::Mul,
        Div => IntOp::Div,
        Rem => IntOp::Rem,
        Shl => IntOp::Shl,
        Shr => IntOp::Shr,
        BitAnd => IntOp::And,
        BitOr => IntOp::Or,
        BitXor => IntOp::Xor,
        _ => return None,
    })
}

fn cmp_op(op: BinaryOp) -> Option<CmpOp> {
    use BinaryOp::*;
    Some(match op {
        Eq => CmpOp::Eq,
        Ne => CmpOp::Ne,
        Lt => CmpOp::Lt,
        Gt => CmpOp::Gt,
        Le => CmpOp::Le,
        Ge => CmpOp::Ge,
        _ => return None,
    })
}

/// `l op r` in scalar type `s`; `None` if it is not a constant (undefined,
/// or not an operator on scalars).
pub(crate) fn fold_binary(op: BinaryOp, l: ConstValue, r: ConstValue, s: Scalar) -> Option<ConstValue> {
    fold_binary_checked(op, l, r, s).ok()
}

/// `l op r` in scalar type `s`, or why not: `Err(Some(_))` for an undefined
/// operation, `Err(None)` for an operator that does not fold.
fn fold_binary_checked(op: BinaryOp, l: ConstValue, r: ConstValue, s: Scalar) -> Result<ConstValue, Option<Undefined>> {
    let ty = s.arith();
    let (a, b) = (l.to_bits(s), r.to_bits(s));
    if let Some(c) = cmp_op(op) {
        return Ok(ConstValue::Bool(arith::compare(c, ty, a, b)));
    }
    let io = int_op(op).ok_or(None)?;
    match arith::binary_checked(io, ty, a, b) {
        Some((v, None)) => Ok(ConstValue::from_bits(s, v)),
        Some((_, Some(u))) => Err(Some(u)),
        None => Err(None),
    }
}

/// A unary operator on a constant of type `s`.
fn fold_unary(op: hir::UnaryOp, v: ConstValue, s: Scalar) -> Result<ConstValue, Option<Undefined>> {
    match op {
        hir::UnaryOp::Neg => match arith::negate_checked(s.arith(), v.to_bits(s)) {
            (bits, None) => Ok(ConstValue::from_bits(s, bits)),
            (_, Some(u)) => Err(Some(u)),
        },
        hir::UnaryOp::Not => Ok(ConstValue::Bool(!v.is_true())),
        hir::UnaryOp::BitNot => arith::bit_not(s.arith(), v.to_bits(s)).map(|b| ConstValue::from_bits(s, b)).ok_or(None),
    }
}

impl Checker<'_, '_> {
    /// An error at `at` saying `h` is not a compile-time constant, pointing
    /// at the undefined operation when that is the reason.
    pub(crate) fn not_constant(&self, at: Span, msg: impl Into<String>, h: &hir::Expr) -> super::DiagBuilder<'_> {
        let d = self.error(at, msg);
        match undefined_in(self, h) {
            Some((span, why)) => d.secondary(span, why).note("an expression whose result C++ leaves undefined is not a constant"),
            None => d,
        }
    }

    /// Warn about `l op r` (operands converted, `span` the whole operation)
    /// when its constant operands make it undefined, as Apple's compiler
    /// warns: both operands constant and the result undefined, or a constant
    /// divisor of zero or shift count out of range. The operation still runs
    /// with the hardware's result.
    pub(crate) fn warn_undefined(&self, op: BinaryOp, l: &hir::Expr, r: &hir::Expr, span: Span) {
        let (Some(s), true) = (operand_scalar(&l.ty), l.ty.is_scalar() && r.ty.is_scalar()) else { return };
        let Some(rv) = fold_known(self, r) else { return };
        let what = match fold_known(self, l) {
            Some(lv) => fold_binary_checked(op, lv, rv, s).err().flatten(),
            None => {
                // Only the right operand is known: a zero divisor or a shift
                // count out of range is undefined whatever the left one is.
                let any = ConstValue::Int(1);
                match op {
                    BinaryOp::Div | BinaryOp::Rem | BinaryOp::Shl | BinaryOp::Shr => {
                        fold_binary_checked(op, any, rv, s).err().flatten().filter(|u| !matches!(u, Undefined::SignedOverflow))
                    }
                    _ => None,
                }
            }
        };
        match what {
            // The long-standing wording, kept at the divisor.
            Some(Undefined::DivisionByZero) => {
                self.warn(r.span, "integer division by zero").note(Undefined::DivisionByZero.describe(s.name()));
            }
            Some(u) => {
                self.warn(span, u.describe(s.name())).note(COMPILER_MAY_FOLD);
            }
            None => {}
        }
    }

    /// `-v` for a constant `v` of type `s` negated at `span`; `None` (after a
    /// warning) when the negation is undefined (the smallest signed value).
    pub(crate) fn fold_negation(&self, v: ConstValue, s: Scalar, span: Span) -> Option<ConstValue> {
        match fold_unary(hir::UnaryOp::Neg, v, s) {
            Ok(nv) => Some(nv),
            Err(u) => {
                if let Some(u) = u {
                    self.warn(span, u.describe(s.name())).note(COMPILER_MAY_FOLD);
                }
                None
            }
        }
    }

    /// Warn when a constant converted to another type is out of its range
    /// (a float to an integer type that cannot hold it).
    pub(crate) fn warn_undefined_conversion(&self, v: ConstValue, to: Scalar, span: Span) {
        if let (_, Some(u)) = v.cast_checked(to) {
            self.warn(span, u.describe(to.name()))
                .note("Apple GPUs saturate (NaN gives 0) and so does the simulator, but the Metal specification does not promise it");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_constants_round_like_the_executor() {
        let h = |x: f64| ConstValue::Float(x).cast(Scalar::Half);
        let sum = fold_binary(BinaryOp::Add, h(0.1), h(0.2), Scalar::Half).unwrap();
        assert_eq!(sum, ConstValue::Float(0.2998046875));
    }

    #[test]
    fn undefined_operations_do_not_fold() {
        let i = ConstValue::Int;
        assert_eq!(fold_binary(BinaryOp::Shl, i(1), i(32), Scalar::Int), None);
        assert_eq!(fold_binary(BinaryOp::Shl, i(1), i(31), Scalar::UInt), Some(ConstValue::UInt(1 << 31)));
        assert_eq!(fold_binary(BinaryOp::Add, i(i32::MAX as i64), i(1), Scalar::Int), None);
        assert_eq!(fold_binary(BinaryOp::Add, ConstValue::UInt(u32::MAX as u64), i(1), Scalar::UInt), Some(ConstValue::UInt(0)));
        assert_eq!(fold_binary(BinaryOp::Div, i(1), i(0), Scalar::Int), None);
        assert_eq!(fold_unary(hir::UnaryOp::Neg, i(i32::MIN as i64), Scalar::Int), Err(Some(Undefined::SignedOverflow)));
        assert_eq!(fold_unary(hir::UnaryOp::Neg, i(5), Scalar::Int), Ok(i(-5)));
        assert_eq!(
            fold_binary(BinaryOp::Lt, ConstValue::Float(f64::NAN), ConstValue::Float(1.0), Scalar::Float),
            Some(ConstValue::Bool(false))
        );
    }
}
