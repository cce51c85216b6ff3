//! Integer functions and operators.

use std::cmp::Ordering;

/// An integer element kind: `bits` is 8, 16, 32 or 64, `signed` selects the
/// two's-complement interpretation.
///
/// Other widths are not MSL types; they are accepted without panicking
/// (`bits` is clamped to `1..=64`), but nothing else is promised for them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IntKind {
    pub bits: u32,
    pub signed: bool,
}

impl IntKind {
    pub const I8: IntKind = IntKind { bits: 8, signed: true };
    pub const U8: IntKind = IntKind { bits: 8, signed: false };
    pub const I16: IntKind = IntKind { bits: 16, signed: true };
    pub const U16: IntKind = IntKind { bits: 16, signed: false };
    pub const I32: IntKind = IntKind { bits: 32, signed: true };
    pub const U32: IntKind = IntKind { bits: 32, signed: false };
    pub const I64: IntKind = IntKind { bits: 64, signed: true };
    pub const U64: IntKind = IntKind { bits: 64, signed: false };

    /// The width used internally: `bits` clamped to `1..=64`.
    #[inline]
    pub fn width(self) -> u32 {
        self.bits.clamp(1, 64)
    }

    /// The unsigned kind of the same width (the result kind of `absdiff`).
    #[inline]
    pub fn unsigned(self) -> IntKind {
        IntKind { bits: self.bits, signed: false }
    }

    /// Smallest value of the kind, as i128.
    #[inline]
    fn min_i128(self) -> i128 {
        if self.signed {
            -(1i128 << (self.width() - 1))
        } else {
            0
        }
    }

    /// Largest value of the kind, as i128.
    #[inline]
    fn max_i128(self) -> i128 {
        if self.signed {
            (1i128 << (self.width() - 1)) - 1
        } else {
            (1i128 << self.width()) - 1
        }
    }

    /// The (normalized) value as an i128.
    #[inline]
    fn to_i128(self, v: u64) -> i128 {
        let v = normalize(self, v);
        if self.signed {
            v as i64 as i128
        } else {
            v as i128
        }
    }

    /// Saturate an i128 to the range of the kind and return it normalized.
    #[inline]
    fn saturate(self, x: i128) -> u64 {
        let x = x.clamp(self.min_i128(), self.max_i128());
        normalize(self, x as u64)
    }

    /// Wrap an i128 to the kind (truncate, then extend).
    #[inline]
    fn wrap(self, x: i128) -> u64 {
        normalize(self, x as u64)
    }
}

/// Mask of the low `w` bits (`w` in `0..=64`).
#[inline]
fn low_mask(w: u32) -> u64 {
    if w >= 64 {
        u64::MAX
    } else {
        (1u64 << w) - 1
    }
}

/// Truncate `v` to `k.bits` bits, then sign-extend (signed kinds) or
/// zero-extend (unsigned kinds) back to 64 bits.
#[inline]
pub fn normalize(k: IntKind, v: u64) -> u64 {
    let w = k.width();
    if w == 64 {
        return v;
    }
    if k.signed {
        let s = 64 - w;
        (((v << s) as i64) >> s) as u64
    } else {
        v & low_mask(w)
    }
}

/// Shift amount as GPUs use it: the amount modulo the bit width.
#[inline]
fn shift_amount(k: IntKind, b: u64) -> u32 {
    let w = k.width();
    if w.is_power_of_two() {
        (b & (w as u64 - 1)) as u32
    } else {
        (b % w as u64) as u32
    }
}

/// The C++ binary operators on integers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IntOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Shl,
    Shr,
    And,
    Or,
    Xor,
}

/// A C++ integer operator with Metal semantics:
/// * `+ - *` wrap (two's complement);
/// * `/` and `%` by zero return 0 (the sanitizer reports it separately);
///   `MIN / -1` wraps to `MIN` and `MIN % -1` is 0; both truncate toward zero
///   like C++;
/// * shifts use the amount modulo the bit width (what the hardware does; C++
///   calls amounts `>= width` undefined), `>>` is arithmetic for signed kinds.
#[inline]
pub fn int_op(k: IntKind, op: IntOp, a: u64, b: u64) -> u64 {
    let a = normalize(k, a);
    let b = normalize(k, b);
    let r = match op {
        IntOp::Add => a.wrapping_add(b),
        IntOp::Sub => a.wrapping_sub(b),
        IntOp::Mul => a.wrapping_mul(b),
        IntOp::Div => {
            if b == 0 {
                0
            } else if k.signed {
                // Normalized values are sign-extended, so i64 division gives
                // the right quotient except MIN/-1 of the kind, which wrapping
                // plus normalization handles (e.g. i32: 2^31 wraps to MIN).
                (a as i64).wrapping_div(b as i64) as u64
            } else {
                a / b
            }
        }
        IntOp::Rem => {
            if b == 0 {
                0
            } else if k.signed {
                (a as i64).wrapping_rem(b as i64) as u64
            } else {
                a % b
            }
        }
        IntOp::Shl => a << shift_amount(k, b),
        IntOp::Shr => {
            let s = shift_amount(k, b);
            if k.signed {
                ((a as i64) >> s) as u64
            } else {
                a >> s
            }
        }
        IntOp::And => a & b,
        IntOp::Or => a | b,
        IntOp::Xor => a ^ b,
    };
    normalize(k, r)
}

/// Compare two values of kind `k` (signed or unsigned order).
#[inline]
pub fn int_cmp(k: IntKind, a: u64, b: u64) -> Ordering {
    let a = normalize(k, a);
    let b = normalize(k, b);
    if k.signed {
        (a as i64).cmp(&(b as i64))
    } else {
        a.cmp(&b)
    }
}

// ---------------------------------------------------------------- unary

/// `abs`: |x|, wrapping (`abs(INT_MIN) == INT_MIN`, as in C++ / the GPU).
fn abs(k: IntKind, x: u64) -> u64 {
    let x = normalize(k, x);
    if k.signed {
        normalize(k, (x as i64).wrapping_abs() as u64)
    } else {
        x
    }
}

/// `clz`: leading zero bits within the kind's width; `clz(0) == bits`.
fn clz(k: IntKind, x: u64) -> u64 {
    let w = k.width();
    let v = x & low_mask(w);
    (v.leading_zeros() - (64 - w)) as u64
}

/// `ctz`: trailing zero bits; `ctz(0) == bits`.
fn ctz(k: IntKind, x: u64) -> u64 {
    let w = k.width();
    let v = x & low_mask(w);
    if v == 0 {
        w as u64
    } else {
        v.trailing_zeros() as u64
    }
}

/// `popcount`: number of set bits within the kind's width.
fn popcount(k: IntKind, x: u64) -> u64 {
    (x & low_mask(k.width())).count_ones() as u64
}

/// `reverse_bits`: bit n of the result is bit (bits - 1 - n) of x.
fn reverse_bits(k: IntKind, x: u64) -> u64 {
    let w = k.width();
    normalize(k, (x & low_mask(w)).reverse_bits() >> (64 - w))
}

/// Look up an integer function of one argument by MSL name.
pub fn int_unary(name: &str) -> Option<fn(IntKind, u64) -> u64> {
    match IntFn::from_name(name)?.func() {
        IntImpl::I1(f) => Some(f),
        _ => None,
    }
}

// ---------------------------------------------------------------- binary

fn min(k: IntKind, a: u64, b: u64) -> u64 {
    if int_cmp(k, b, a) == Ordering::Less {
        normalize(k, b)
    } else {
        normalize(k, a)
    }
}

fn max(k: IntKind, a: u64, b: u64) -> u64 {
    if int_cmp(k, b, a) == Ordering::Greater {
        normalize(k, b)
    } else {
        normalize(k, a)
    }
}

/// `absdiff`: |x - y| without overflow. MSL's result type is the *unsigned*
/// integer type of the same width, so the result is returned normalized for
/// `k.unsigned()` (zero-extended) even when `k` is signed.
fn absdiff(k: IntKind, a: u64, b: u64) -> u64 {
    let d = (k.to_i128(a) - k.to_i128(b)).abs();
    normalize(k.unsigned(), d as u64)
}

/// `addsat`: x + y saturated to the kind's range.
fn addsat(k: IntKind, a: u64, b: u64) -> u64 {
    k.saturate(k.to_i128(a) + k.to_i128(b))
}

/// `subsat`: x - y saturated to the kind's range.
fn subsat(k: IntKind, a: u64, b: u64) -> u64 {
    k.saturate(k.to_i128(a) - k.to_i128(b))
}

/// `hadd`: (x + y) >> 1 without intermediate overflow (floor for signed).
fn hadd(k: IntKind, a: u64, b: u64) -> u64 {
    k.wrap((k.to_i128(a) + k.to_i128(b)) >> 1)
}

/// `rhadd`: (x + y + 1) >> 1 without intermediate overflow.
fn rhadd(k: IntKind, a: u64, b: u64) -> u64 {
    k.wrap((k.to_i128(a) + k.to_i128(b) + 1) >> 1)
}

/// Low 24 bits of x, sign-extended for signed kinds (mul24/mad24 operand).
#[inline]
fn low24(k: IntKind, x: u64) -> i128 {
    let x = normalize(k, x);
    if k.width() <= 24 {
        k.to_i128(x)
    } else if k.signed {
        (((x << 40) as i64) >> 40) as i128
    } else {
        (x & 0xff_ffff) as i128
    }
}

/// `mul24`: multiply the low 24 bits of x and y. MSL only defines it for
/// operands in 24-bit range; outside it we use the low 24 bits of each operand
/// (sign-extended for signed kinds, as GPU 24-bit multipliers do) and wrap the
/// product to the kind.
fn mul24(k: IntKind, a: u64, b: u64) -> u64 {
    k.wrap(low24(k, a) * low24(k, b))
}

/// `mulhi`: the high `bits` bits of the full 2*bits-wide product.
fn mulhi(k: IntKind, a: u64, b: u64) -> u64 {
    let w = k.width();
    let p = if k.signed {
        let p = k.to_i128(a) * k.to_i128(b); // |p| <= 2^126: no overflow
        (p >> w) as u64
    } else {
        let p = (normalize(k, a) as u128) * (normalize(k, b) as u128);
        (p >> w) as u64
    };
    normalize(k, p)
}

/// `rotate`: rotate x left by y modulo the bit width.
fn rotate(k: IntKind, a: u64, b: u64) -> u64 {
    let w = k.width();
    let s = shift_amount(k, b);
    let v = a & low_mask(w);
    if s == 0 {
        return normalize(k, v);
    }
    normalize(k, (v << s) | (v >> (w - s)))
}

fn op_add(k: IntKind, a: u64, b: u64) -> u64 {
    int_op(k, IntOp::Add, a, b)
}
fn op_sub(k: IntKind, a: u64, b: u64) -> u64 {
    int_op(k, IntOp::Sub, a, b)
}
fn op_mul(k: IntKind, a: u64, b: u64) -> u64 {
    int_op(k, IntOp::Mul, a, b)
}
fn op_div(k: IntKind, a: u64, b: u64) -> u64 {
    int_op(k, IntOp::Div, a, b)
}
fn op_rem(k: IntKind, a: u64, b: u64) -> u64 {
    int_op(k, IntOp::Rem, a, b)
}
fn op_shl(k: IntKind, a: u64, b: u64) -> u64 {
    int_op(k, IntOp::Shl, a, b)
}
fn op_shr(k: IntKind, a: u64, b: u64) -> u64 {
    int_op(k, IntOp::Shr, a, b)
}
fn op_and(k: IntKind, a: u64, b: u64) -> u64 {
    int_op(k, IntOp::And, a, b)
}
fn op_or(k: IntKind, a: u64, b: u64) -> u64 {
    int_op(k, IntOp::Or, a, b)
}
fn op_xor(k: IntKind, a: u64, b: u64) -> u64 {
    int_op(k, IntOp::Xor, a, b)
}

/// Look up an integer function of two arguments by MSL name. The C++
/// operators are also available by their token (`"+"`, `"<<"`, ...), as is
/// [`int_op`] directly.
pub fn int_binary(name: &str) -> Option<fn(IntKind, u64, u64) -> u64> {
    Some(match name {
        "+" => op_add,
        "-" => op_sub,
        "*" => op_mul,
        "/" => op_div,
        "%" => op_rem,
        "<<" => op_shl,
        ">>" => op_shr,
        "&" => op_and,
        "|" => op_or,
        "^" => op_xor,
        _ => match IntFn::from_name(name)?.func() {
            IntImpl::I2(f) => f,
            _ => return None,
        },
    })
}

// ---------------------------------------------------------------- ternary

/// `clamp(x, lo, hi)` = min(max(x, lo), hi). MSL leaves lo > hi undefined;
/// this formula then returns hi.
fn clamp(k: IntKind, x: u64, lo: u64, hi: u64) -> u64 {
    min(k, max(k, x, lo), hi)
}

/// `mad24(x, y, z)` = mul24(x, y) + z, wrapping.
fn mad24(k: IntKind, a: u64, b: u64, c: u64) -> u64 {
    int_op(k, IntOp::Add, mul24(k, a, b), c)
}

/// `madhi(x, y, z)` = mulhi(x, y) + z, wrapping.
fn madhi(k: IntKind, a: u64, b: u64, c: u64) -> u64 {
    int_op(k, IntOp::Add, mulhi(k, a, b), c)
}

/// `madsat(x, y, z)` = x * y + z, saturated (computed exactly, no
/// intermediate wrap).
fn madsat(k: IntKind, a: u64, b: u64, c: u64) -> u64 {
    if k.signed {
        // |a*b| <= 2^126, |c| <= 2^63: fits i128.
        k.saturate(k.to_i128(a) * k.to_i128(b) + k.to_i128(c))
    } else {
        let p = (normalize(k, a) as u128) * (normalize(k, b) as u128);
        // p <= (2^64-1)^2 = 2^128 - 2^65 + 1, plus c < 2^64 still fits.
        let s = p.saturating_add(normalize(k, c) as u128);
        let max = low_mask(k.width()) as u128;
        normalize(k, s.min(max) as u64)
    }
}

fn min3(k: IntKind, a: u64, b: u64, c: u64) -> u64 {
    min(k, min(k, a, b), c)
}

fn max3(k: IntKind, a: u64, b: u64, c: u64) -> u64 {
    max(k, max(k, a, b), c)
}

/// `median3`: the middle of the three values.
fn median3(k: IntKind, a: u64, b: u64, c: u64) -> u64 {
    max(k, min(k, a, b), min(k, max(k, a, b), c))
}

/// `extract_bits` with the offset and count as 64-bit lane values (they are
/// `uint` in MSL); values above `u32::MAX` are treated as `u32::MAX`.
fn extract_bits3(k: IntKind, x: u64, offset: u64, bits: u64) -> u64 {
    let clamp32 = |v: u64| v.min(u32::MAX as u64) as u32;
    extract_bits(k, x, clamp32(offset), clamp32(bits))
}

/// `insert_bits` with the offset and count as 64-bit lane values (see
/// [`extract_bits3`]).
fn insert_bits4(k: IntKind, base: u64, insert: u64, offset: u64, bits: u64) -> u64 {
    let clamp32 = |v: u64| v.min(u32::MAX as u64) as u32;
    insert_bits(k, base, insert, clamp32(offset), clamp32(bits))
}

/// The function-pointer type returned by [`int_ternary`].
pub type IntTernaryFn = fn(IntKind, u64, u64, u64) -> u64;

/// Look up an integer function of three arguments by MSL name.
pub fn int_ternary(name: &str) -> Option<IntTernaryFn> {
    match IntFn::from_name(name)?.func() {
        IntImpl::I3(f) => Some(f),
        _ => None,
    }
}

/// The standard library's per-lane functions of integers: the typed
/// counterpart of the lookups by name, total by construction (see
/// `FloatFn`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IntFn {
    Abs,
    Clz,
    Ctz,
    Popcount,
    ReverseBits,
    Min,
    Max,
    Absdiff,
    Addsat,
    Subsat,
    Hadd,
    Rhadd,
    Mul24,
    Mulhi,
    Rotate,
    Clamp,
    Mad24,
    Madhi,
    Madsat,
    Min3,
    Max3,
    Median3,
    ExtractBits,
    InsertBits,
}

/// An [`IntFn`]'s implementation, by number of arguments.
#[derive(Clone, Copy, Debug)]
pub enum IntImpl {
    I1(fn(IntKind, u64) -> u64),
    I2(fn(IntKind, u64, u64) -> u64),
    I3(IntTernaryFn),
    I4(fn(IntKind, u64, u64, u64, u64) -> u64),
}

impl IntFn {
    pub fn func(self) -> IntImpl {
        use IntFn::*;
        use IntImpl::*;
        match self {
            Abs => I1(abs),
            Clz => I1(clz),
            Ctz => I1(ctz),
            Popcount => I1(popcount),
            ReverseBits => I1(reverse_bits),
            Min => I2(min),
            Max => I2(max),
            Absdiff => I2(absdiff),
            Addsat => I2(addsat),
            Subsat => I2(subsat),
            Hadd => I2(hadd),
            Rhadd => I2(rhadd),
            Mul24 => I2(mul24),
            Mulhi => I2(mulhi),
            Rotate => I2(rotate),
            Clamp => I3(clamp),
            Mad24 => I3(mad24),
            Madhi => I3(madhi),
            Madsat => I3(madsat),
            Min3 => I3(min3),
            Max3 => I3(max3),
            Median3 => I3(median3),
            ExtractBits => I3(extract_bits3),
            InsertBits => I4(insert_bits4),
        }
    }

    /// The function an MSL name calls on integers.
    pub fn from_name(name: &str) -> Option<IntFn> {
        use IntFn::*;
        Some(match name {
            "abs" => Abs,
            "clz" => Clz,
            "ctz" => Ctz,
            "popcount" => Popcount,
            "reverse_bits" => ReverseBits,
            "min" => Min,
            "max" => Max,
            "absdiff" => Absdiff,
            "addsat" => Addsat,
            "subsat" => Subsat,
            "hadd" => Hadd,
            "rhadd" => Rhadd,
            "mul24" => Mul24,
            "mulhi" => Mulhi,
            "rotate" => Rotate,
            "clamp" => Clamp,
            "mad24" => Mad24,
            "madhi" => Madhi,
            "madsat" => Madsat,
            "min3" => Min3,
            "max3" => Max3,
            "median3" => Median3,
            "extract_bits" => ExtractBits,
            "insert_bits" => InsertBits,
            _ => return None,
        })
    }
}

/// Clamp a bit-field (offset, count) to the width: MSL leaves
/// `offset + bits > width` undefined; we keep the part of the field that lies
/// inside the value (so nothing panics and nothing reads outside the value).
#[inline]
fn field(w: u32, offset: u32, bits: u32) -> (u32, u32) {
    let offset = offset.min(w);
    let bits = bits.min(w - offset);
    (offset, bits)
}

/// `insert_bits(base, insert, offset, bits)`: bits `[offset, offset+bits)` of
/// the result come from the low `bits` bits of `insert`, the rest from
/// `base`. `bits == 0` returns `base`.
pub fn insert_bits(k: IntKind, base: u64, insert: u64, offset: u32, bits: u32) -> u64 {
    let (offset, bits) = field(k.width(), offset, bits);
    if bits == 0 {
        return normalize(k, base);
    }
    let mask = low_mask(bits) << offset;
    normalize(k, (base & !mask) | ((insert << offset) & mask))
}

/// `extract_bits(x, offset, bits)`: bits `[offset, offset+bits)` of x moved
/// to the bottom; signed kinds sign-extend the field from its top bit,
/// unsigned kinds zero-extend. `bits == 0` returns 0.
pub fn extract_bits(k: IntKind, x: u64, offset: u32, bits: u32) -> u64 {
    let (offset, bits) = field(k.width(), offset, bits);
    if bits == 0 {
        return 0;
    }
    let v = (x >> offset) & low_mask(bits);
    if k.signed {
        let s = 64 - bits;
        normalize(k, (((v << s) as i64) >> s) as u64)
    } else {
        normalize(k, v)
    }
}
