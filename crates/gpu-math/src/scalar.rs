//! The C++ operators and conversions on scalar values of every MSL type: the
//! one arithmetic that constant folding, the lowering's constants and the
//! executor share.
//!
//! A value travels as `u64` bits in the lane form: `bool` is 0 or 1, integers
//! are normalized ([`normalize`]), floating values are the f32 bits of a value
//! of their kind (half and bfloat widened exactly).
//!
//! Each operation returns what an Apple GPU computes. Where C++ (and so MSL)
//! leaves the result undefined, the `*_checked` variants also say so with an
//! [`Undefined`]: the value is then what the hardware instruction gives, but
//! Apple's compiler may fold such an expression to anything, and a constant
//! expression containing it is not a constant.

use crate::float::{round_to, FloatKind};
use crate::int::{int_cmp, int_op, normalize, IntKind, IntOp};
use std::cmp::Ordering;

/// A scalar type as the arithmetic sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScalarType {
    Bool,
    Int(IntKind),
    Float(FloatKind),
}

/// Behaviour the MSL specification (through C++14) leaves undefined.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Undefined {
    /// Integer `/` or `%` by zero.
    DivisionByZero,
    /// A signed `+`, `-`, `*`, `/` (MIN / -1), `%` (MIN % -1) or negation
    /// whose mathematical result does not fit the type.
    SignedOverflow,
    /// A shift count that is negative or not below the width of the (promoted)
    /// left operand.
    ShiftCount { count: i128, width: u32 },
    /// A floating value converted to an integer type that cannot hold its
    /// integral part (NaN and infinities included). MSL's conversions do not
    /// saturate; Apple GPUs happen to.
    ConversionOutOfRange,
}

impl Undefined {
    /// A sentence for diagnostics.
    pub fn describe(self, ty: &str) -> String {
        match self {
            Undefined::DivisionByZero => "integer division by zero is undefined behaviour".to_string(),
            Undefined::SignedOverflow => format!("the result does not fit in `{ty}`: signed integer overflow is undefined behaviour"),
            Undefined::ShiftCount { count, width } if count < 0 => {
                format!("shift count {count} is negative: undefined behaviour (the width of `{ty}` is {width} bits)")
            }
            Undefined::ShiftCount { count, width } => {
                format!("shift count {count} is not below the width of `{ty}` ({width} bits): undefined behaviour")
            }
            Undefined::ConversionOutOfRange => {
                format!("the value is outside the range of `{ty}` (or NaN): converting it is undefined behaviour")
            }
        }
    }
}

/// The binary operators (comparisons are [`compare`]).
pub type BinaryOp = IntOp;

/// The comparison operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CmpOp {
    Eq,
    Ne,
    Lt,
    Gt,
    Le,
    Ge,
}

#[inline]
fn f(bits: u64) -> f32 {
    f32::from_bits(bits as u32)
}

#[inline]
fn fbits(x: f32) -> u64 {
    x.to_bits() as u64
}

/// The mathematical value of an integer lane.
#[inline]
fn int_value(k: IntKind, v: u64) -> i128 {
    let v = normalize(k, v);
    if k.signed {
        v as i64 as i128
    } else {
        v as i128
    }
}

fn fits(k: IntKind, x: i128) -> bool {
    let w = k.width();
    if k.signed {
        (-(1i128 << (w - 1))..(1i128 << (w - 1))).contains(&x)
    } else {
        (0..(1i128 << w)).contains(&x)
    }
}

/// Whether a value is true (`!= 0`; NaN is true).
pub fn is_true(ty: ScalarType, v: u64) -> bool {
    match ty {
        ScalarType::Bool => v & 1 != 0,
        ScalarType::Int(k) => normalize(k, v) != 0,
        ScalarType::Float(_) => f(v) != 0.0,
    }
}

/// Convert a value of type `from` to type `to` as an Apple GPU does (see
/// [`convert_checked`]).
pub fn convert(from: ScalarType, to: ScalarType, v: u64) -> u64 {
    convert_checked(from, to, v).0
}

/// Convert `v` from `from` to `to`: integers wrap (two's complement),
/// integers and wider floats round once to nearest even, floats truncate
/// toward zero into integers, saturating with NaN -> 0 (what the hardware
/// does; the case is [`Undefined::ConversionOutOfRange`]), anything to
/// `bool` is `!= 0`.
pub fn convert_checked(from: ScalarType, to: ScalarType, v: u64) -> (u64, Option<Undefined>) {
    use ScalarType::*;
    match (from, to) {
        (_, Bool) => (is_true(from, v) as u64, None),
        (Bool, Int(k)) => (normalize(k, v & 1), None),
        (Bool, Float(_)) => (fbits((v & 1) as f32), None),
        (Int(a), Int(b)) => (normalize(b, normalize(a, v)), None),
        (Int(a), Float(kind)) => {
            let x = int_value(a, v);
            (fbits(crate::round::int_to_kind(kind, x < 0, x.unsigned_abs() as u64)), None)
        }
        (Float(_), Float(kind)) => (fbits(round_to(kind, f(v))), None),
        (Float(_), Int(k)) => {
            let x = f(v);
            let t = x.trunc();
            // `as i128` saturates, far outside every 64-bit range.
            let undefined = (!x.is_finite() || !fits(k, t as i128)).then_some(Undefined::ConversionOutOfRange);
            (crate::convert::float_to_int(k, x), undefined)
        }
    }
}

/// `a op b` for two values of type `ty` (see [`binary_checked`]); `None` if
/// C++ does not define the operator for the type (`%`, shifts and bitwise
/// operators on floating types).
pub fn binary(op: BinaryOp, ty: ScalarType, a: u64, b: u64) -> Option<u64> {
    binary_checked(op, ty, a, b).map(|(v, _)| v)
}

/// `a op b` with the operands already converted to `ty` (the usual
/// arithmetic conversions done): integers wrap, `/` and `%` by zero give 0,
/// shifts use the count modulo the width ([`int_op`]); floating operations
/// are computed in f32 and rounded once to the kind, which for `+ - * /` is
/// the correctly rounded result of the kind (f32 has more than twice the
/// digits of half and bfloat, so the double rounding is innocuous).
pub fn binary_checked(op: BinaryOp, ty: ScalarType, a: u64, b: u64) -> Option<(u64, Option<Undefined>)> {
    match ty {
        ScalarType::Float(kind) => {
            let (x, y) = (f(a), f(b));
            let r = match op {
                IntOp::Add => x + y,
                IntOp::Sub => x - y,
                IntOp::Mul => x * y,
                IntOp::Div => x / y,
                _ => return None,
            };
            Some((fbits(round_to(kind, r)), None))
        }
        ScalarType::Bool => {
            // Only the bitwise operators reach bool unpromoted.
            let (x, y) = (a & 1, b & 1);
            match op {
                IntOp::And => Some((x & y, None)),
                IntOp::Or => Some((x | y, None)),
                IntOp::Xor => Some((x ^ y, None)),
                _ => {
                    let k = IntKind::I32;
                    let (v, u) = binary_checked(op, ScalarType::Int(k), x, y)?;
                    Some(((v != 0) as u64, u))
                }
            }
        }
        ScalarType::Int(k) => {
            let v = int_op(k, op, a, b);
            let (x, y) = (int_value(k, a), int_value(k, b));
            let w = k.width();
            let undefined = match op {
                IntOp::Div | IntOp::Rem if y == 0 => Some(Undefined::DivisionByZero),
                IntOp::Div | IntOp::Rem if k.signed && !fits(k, x / y) => Some(Undefined::SignedOverflow),
                IntOp::Add if k.signed && !fits(k, x + y) => Some(Undefined::SignedOverflow),
                IntOp::Sub if k.signed && !fits(k, x - y) => Some(Undefined::SignedOverflow),
                IntOp::Mul if k.signed && !fits(k, x * y) => Some(Undefined::SignedOverflow),
                IntOp::Shl | IntOp::Shr if y < 0 || y >= w as i128 => Some(Undefined::ShiftCount { count: y, width: w }),
                _ => None,
            };
            Some((v, undefined))
        }
    }
}

/// `-a` (see [`negate_checked`]).
pub fn negate(ty: ScalarType, a: u64) -> u64 {
    negate_checked(ty, a).0
}

/// `-a`: floats flip the sign (NaN included), integers wrap; negating the
/// smallest signed value is [`Undefined::SignedOverflow`].
pub fn negate_checked(ty: ScalarType, a: u64) -> (u64, Option<Undefined>) {
    match ty {
        ScalarType::Float(_) => (fbits(-f(a)), None),
        ScalarType::Bool => ((a & 1).wrapping_neg() & 1, None),
        ScalarType::Int(k) => {
            let v = int_op(k, IntOp::Sub, 0, a);
            let undefined = (k.signed && !fits(k, -int_value(k, a))).then_some(Undefined::SignedOverflow);
            (v, undefined)
        }
    }
}

/// `~a` on an integer (`None` for other types).
pub fn bit_not(ty: ScalarType, a: u64) -> Option<u64> {
    match ty {
        ScalarType::Int(k) => Some(normalize(k, !a)),
        _ => None,
    }
}

/// `a op b` for two values of type `ty`: IEEE comparisons on floats (any
/// comparison with NaN is false except `!=`), signed or unsigned order on
/// integers.
pub fn compare(op: CmpOp, ty: ScalarType, a: u64, b: u64) -> bool {
    let ord = match ty {
        ScalarType::Float(_) => f(a).partial_cmp(&f(b)),
        ScalarType::Bool => Some((a & 1).cmp(&(b & 1))),
        ScalarType::Int(k) => Some(int_cmp(k, a, b)),
    };
    match (op, ord) {
        (CmpOp::Ne, None) => true,
        (_, None) => false,
        (CmpOp::Eq, Some(o)) => o == Ordering::Equal,
        (CmpOp::Ne, Some(o)) => o != Ordering::Equal,
        (CmpOp::Lt, Some(o)) => o == Ordering::Less,
        (CmpOp::Gt, Some(o)) => o == Ordering::Greater,
        (CmpOp::Le, Some(o)) => o != Ordering::Greater,
        (CmpOp::Ge, Some(o)) => o != Ordering::Less,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ScalarType::*;

    const I32: ScalarType = Int(IntKind::I32);
    const U32: ScalarType = Int(IntKind::U32);
    const HALF: ScalarType = Float(FloatKind::F16);

    #[test]
    fn half_sums_round_to_half() {
        let h = |x: f64| fbits(crate::round::round_f64_to(FloatKind::F16, x));
        let (v, u) = binary_checked(IntOp::Add, HALF, h(0.1), h(0.2)).unwrap();
        // 0.0999755859375 + 0.199951171875 = 0.2999267578125 is a half
        // midpoint; the tie goes to the even neighbour 0.2998046875.
        assert_eq!(f(v), 307.0 / 1024.0);
        assert_eq!(u, None);
    }

    #[test]
    fn undefined_cases_are_named() {
        let m = |x: i64| x as u64;
        assert_eq!(binary_checked(IntOp::Shl, I32, 1, 32).unwrap(), (1, Some(Undefined::ShiftCount { count: 32, width: 32 })));
        assert_eq!(binary_checked(IntOp::Shl, I32, 1, m(-1)).unwrap().1, Some(Undefined::ShiftCount { count: -1, width: 32 }));
        assert_eq!(binary_checked(IntOp::Shl, U32, 1, 31).unwrap(), (1 << 31, None));
        assert_eq!(binary_checked(IntOp::Add, I32, m(i32::MAX as i64), 1).unwrap(), (m(i32::MIN as i64), Some(Undefined::SignedOverflow)));
        assert_eq!(binary_checked(IntOp::Add, U32, u32::MAX as u64, 1).unwrap(), (0, None));
        assert_eq!(binary_checked(IntOp::Div, I32, 7, 0).unwrap(), (0, Some(Undefined::DivisionByZero)));
        assert_eq!(binary_checked(IntOp::Div, I32, m(i32::MIN as i64), m(-1)).unwrap().1, Some(Undefined::SignedOverflow));
        assert_eq!(binary_checked(IntOp::Rem, I32, m(-7), 2).unwrap(), (m(-1), None));
        assert_eq!(negate_checked(I32, m(i32::MIN as i64)).1, Some(Undefined::SignedOverflow));
        assert_eq!(binary(IntOp::Rem, HALF, 0, 0), None);
    }

    #[test]
    fn float_to_int_saturates_and_reports() {
        let fl = Float(FloatKind::F32);
        assert_eq!(convert_checked(fl, I32, fbits(3e9)), (i32::MAX as u64, Some(Undefined::ConversionOutOfRange)));
        assert_eq!(convert_checked(fl, I32, fbits(f32::NAN)), (0, Some(Undefined::ConversionOutOfRange)));
        assert_eq!(convert_checked(fl, U32, fbits(-0.5)), (0, None));
        assert_eq!(convert_checked(fl, U32, fbits(-1.0)), (0, Some(Undefined::ConversionOutOfRange)));
        assert_eq!(convert_checked(fl, I32, fbits(-2147483648.0)), ((i32::MIN as i64) as u64, None));
        assert_eq!(convert_checked(fl, Int(IntKind::I64), fbits(9.223372e18)), (i64::MAX as u64, Some(Undefined::ConversionOutOfRange)));
        assert_eq!(convert(fl, Bool, fbits(f32::NAN)), 1);
        assert_eq!(convert(I32, HALF, 65519), fbits(65504.0));
    }

    #[test]
    fn comparisons() {
        let fl = Float(FloatKind::F32);
        let nan = fbits(f32::NAN);
        assert!(!compare(CmpOp::Eq, fl, nan, nan));
        assert!(compare(CmpOp::Ne, fl, nan, nan));
        assert!(!compare(CmpOp::Le, fl, nan, 0));
        assert!(compare(CmpOp::Eq, fl, fbits(0.0), fbits(-0.0)));
        assert!(compare(CmpOp::Lt, I32, (-1i64) as u64, 0));
        assert!(!compare(CmpOp::Lt, U32, u32::MAX as u64, 0));
    }
}
