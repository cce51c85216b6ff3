//! Floating-point functions. All math is done in `f32`; the caller rounds the
//! result to `half` / `bfloat` with [`round_to`] where the element kind needs
//! it.
//!
//! The `fast` flag of the lookups selects the `metal::fast::` variant. The
//! fast variants are allowed to be less precise and to treat NaN / infinity /
//! denormals loosely; returning the precise result is always a valid
//! implementation, so this crate currently returns the same function for both.

/// Floating element kind; computation happens in f32 and the result is
/// rounded to the kind (round-to-nearest-even for half and bfloat).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FloatKind {
    F16,
    BF16,
    F32,
}

/// Round an f32 to the nearest value of `kind` (RNE, via the `half` crate;
/// overflow gives ±inf, NaN stays NaN) and return it widened back to f32.
/// `F32` is the identity.
#[inline]
pub fn round_to(kind: FloatKind, x: f32) -> f32 {
    match kind {
        FloatKind::F16 => half::f16::from_f32(x).to_f32(),
        FloatKind::BF16 => half::bf16::from_f32(x).to_f32(),
        FloatKind::F32 => x,
    }
}

/// `ldexp(x, n)` = x * 2^n, correctly rounded (including denormal results).
pub fn ldexp(x: f32, n: i32) -> f32 {
    // Any f32 times 2^±400 is exact in f64 (no overflow, no denormal), and
    // anything scaled further is already ±0 / ±inf in f32; the single
    // rounding f64 -> f32 is then correct.
    let n = n.clamp(-400, 400);
    let scaled = x as f64 * f64::from_bits(((1023 + n as i64) as u64) << 52);
    scaled as f32
}

/// `frexp(x)`: (m, e) with x = m * 2^e and 0.5 <= |m| < 1; zero, infinity
/// and NaN return (x, 0) as in C99.
pub fn frexp(x: f32) -> (f32, i32) {
    if x == 0.0 || !x.is_finite() {
        return (x, 0);
    }
    // Exact in f64, where no f32 value is denormal.
    let d = x as f64;
    let bits = d.to_bits();
    let e = ((bits >> 52) & 0x7ff) as i32 - 1022;
    let m = f64::from_bits((bits & !(0x7ffu64 << 52)) | (1022u64 << 52));
    (m as f32, e)
}

/// `modf(x)`: (fractional part, integral part), both with the sign of x; for
/// ±inf the fractional part is ±0 (C99).
pub fn modf(x: f32) -> (f32, f32) {
    let i = x.trunc();
    let f = if x.is_infinite() { 0.0f32.copysign(x) } else { (x - i).copysign(x) };
    (f, i)
}

// ---------------------------------------------------------------- unary

// Transcendental functions are computed in f64 by the `libm` crate and
// rounded once: the same code on every platform (the system's libm differs
// between machines, and WebAssembly has none), so results are identical
// everywhere, and within an ulp of the exact value.
fn via_f64(f: fn(f64) -> f64, x: f32) -> f32 {
    f(x as f64) as f32
}

fn exp(x: f32) -> f32 {
    via_f64(libm::exp, x)
}
fn exp2(x: f32) -> f32 {
    via_f64(libm::exp2, x)
}
/// 10^x; computed in f64 (f32 has no exp10) and rounded once.
fn exp10(x: f32) -> f32 {
    libm::pow(10.0, x as f64) as f32
}
fn log(x: f32) -> f32 {
    via_f64(libm::log, x)
}
fn log2(x: f32) -> f32 {
    via_f64(libm::log2, x)
}
fn log10(x: f32) -> f32 {
    via_f64(libm::log10, x)
}
fn sqrt(x: f32) -> f32 {
    x.sqrt()
}
/// 1 / sqrt(x), computed in f64 and rounded once (rsqrt(0) = inf,
/// rsqrt(-0) = -inf, negative -> NaN).
fn rsqrt(x: f32) -> f32 {
    (1.0 / (x as f64).sqrt()) as f32
}
/// sin(x) (also what `sincos` returns first).
pub fn sin(x: f32) -> f32 {
    via_f64(libm::sin, x)
}
/// cos(x) (also what `sincos` returns second).
pub fn cos(x: f32) -> f32 {
    via_f64(libm::cos, x)
}
fn tan(x: f32) -> f32 {
    via_f64(libm::tan, x)
}
fn asin(x: f32) -> f32 {
    via_f64(libm::asin, x)
}
fn acos(x: f32) -> f32 {
    via_f64(libm::acos, x)
}
fn atan(x: f32) -> f32 {
    via_f64(libm::atan, x)
}
fn sinh(x: f32) -> f32 {
    via_f64(libm::sinh, x)
}
fn cosh(x: f32) -> f32 {
    via_f64(libm::cosh, x)
}
fn tanh(x: f32) -> f32 {
    via_f64(libm::tanh, x)
}
fn asinh(x: f32) -> f32 {
    via_f64(libm::asinh, x)
}
/// NaN below 1 (`libm::acosh` returns a number for x <= -2).
fn acosh(x: f32) -> f32 {
    if x < 1.0 {
        return f32::NAN;
    }
    via_f64(libm::acosh, x)
}
fn atanh(x: f32) -> f32 {
    via_f64(libm::atanh, x)
}

/// Exact reduction for the *pi functions: |x| = 2j + k/2 + r with integer j,
/// k in 0..4 and r in [-1/4, 1/4]. Returns (k, r) in f64 (exact).
#[inline]
fn reduce_pi(ax: f32) -> (u32, f64) {
    let m = (ax as f64) % 2.0; // exact, in [0, 2)
    let k = (m * 2.0).round(); // 0..=4
    let r = m - k * 0.5; // exact
    ((k as u32) & 3, r)
}

/// sin(pi x), with an exact argument reduction. Integers give ±0 with the
/// sign of x (C23 sinpi); ±inf and NaN give NaN.
fn sinpi(x: f32) -> f32 {
    if !x.is_finite() {
        return f32::NAN;
    }
    let (k, r) = reduce_pi(x.abs());
    let pr = std::f64::consts::PI * r;
    let s = match k {
        0 => libm::sin(pr),
        1 => libm::cos(pr),
        2 => -libm::sin(pr),
        _ => -libm::cos(pr),
    };
    // Exact zeros (integer x) get the sign of x; otherwise sinpi is odd.
    let s = if s == 0.0 { 0.0 } else { s as f32 };
    if x.is_sign_negative() {
        -s
    } else {
        s
    }
}

/// cos(pi x), with an exact argument reduction. Half-integers give +0
/// (C23 cospi); ±inf and NaN give NaN.
fn cospi(x: f32) -> f32 {
    if !x.is_finite() {
        return f32::NAN;
    }
    let (k, r) = reduce_pi(x.abs());
    let pr = std::f64::consts::PI * r;
    let c = match k {
        0 => libm::cos(pr),
        1 => -libm::sin(pr),
        2 => -libm::cos(pr),
        _ => libm::sin(pr),
    };
    if c == 0.0 {
        0.0
    } else {
        c as f32
    }
}

/// tan(pi x) = sinpi(x) / cospi(x) computed in f64 from the exact
/// reduction; n + 1/2 gives +inf for even n and -inf for odd n (C23 tanpi),
/// integers give ±0.
fn tanpi(x: f32) -> f32 {
    if !x.is_finite() {
        return f32::NAN;
    }
    let (k, r) = reduce_pi(x.abs());
    let pr = std::f64::consts::PI * r;
    let (s, c) = (libm::sin(pr), libm::cos(pr));
    // tan(pi(r + k/2)): period 1, so k and k+2 agree.
    let t = match k & 1 {
        0 => s / c,
        _ => {
            if s == 0.0 {
                // Exactly a half-integer: +inf for k == 1, -inf for k == 3.
                if k == 1 {
                    f64::INFINITY
                } else {
                    f64::NEG_INFINITY
                }
            } else {
                -c / s
            }
        }
    };
    let t = t as f32;
    if x.is_sign_negative() {
        -t
    } else {
        t
    }
}

fn ceil(x: f32) -> f32 {
    x.ceil()
}
fn floor(x: f32) -> f32 {
    x.floor()
}
fn trunc(x: f32) -> f32 {
    x.trunc()
}
/// Round half away from zero.
fn round(x: f32) -> f32 {
    x.round()
}
/// Round half to even (the default rounding mode).
fn rint(x: f32) -> f32 {
    x.round_ties_even()
}

/// Largest f32 below 1 (0x1.fffffep-1).
const BELOW_ONE: f32 = 0.999_999_94;

/// `fract(x)` = fmin(x - floor(x), 0x1.fffffep-1f), so the result is always
/// in [0, 1) (fract(-tiny) would otherwise round to 1.0). MSL is silent on
/// inf / NaN; we follow OpenCL C: fract(±inf) = +0, fract(NaN) = NaN.
fn fract(x: f32) -> f32 {
    if x.is_nan() {
        return x;
    }
    if x.is_infinite() {
        return 0.0;
    }
    (x - x.floor()).min(BELOW_ONE)
}

fn fabs(x: f32) -> f32 {
    x.abs()
}

/// `saturate(x)` = clamp(x, 0, 1). NaN -> 0 (fmin/fmax semantics of the
/// clamp: fmax(NaN, 0) = 0).
#[allow(clippy::manual_clamp)] // f32::clamp would return NaN for NaN
fn saturate(x: f32) -> f32 {
    x.max(0.0).min(1.0)
}

/// `sign(x)`: 1.0 for x > 0, -1.0 for x < 0, ±0 for ±0 (sign kept), and 0.0
/// for NaN (MSL spec).
fn sign(x: f32) -> f32 {
    if x > 0.0 {
        1.0
    } else if x < 0.0 {
        -1.0
    } else if x.is_nan() {
        0.0
    } else {
        x
    }
}

/// Look up a floating function of one argument by MSL name (`fast` selects
/// `metal::fast::`; currently the same functions).
pub fn float_unary(name: &str, fast: bool) -> Option<fn(f32) -> f32> {
    let _ = fast;
    match FloatFn::from_name(name)?.func(FloatKind::F32) {
        FloatImpl::F1(f) => Some(f),
        _ => None,
    }
}

// ---------------------------------------------------------------- binary

/// C pow semantics (pow(x, ±0) = 1 and pow(1, y) = 1 even for NaN,
/// pow(-x, non-integer) = NaN, ...). The two NaN-absorbing cases are made
/// explicit because libm returns NaN for them when the NaN is signaling
/// (GPUs have no signaling NaNs).
fn pow(x: f32, y: f32) -> f32 {
    if y == 0.0 || x == 1.0 {
        return 1.0;
    }
    libm::pow(x as f64, y as f64) as f32
}

/// `powr(x, y)`: x^y for x >= 0. MSL: undefined/NaN for x < 0; the special
/// cases follow OpenCL C powr: powr(±0, ±0), powr(+inf, ±0), powr(1, ±inf)
/// and any NaN argument give NaN; powr(±0, y<0) = +inf, powr(±0, y>0) = +0.
fn powr(x: f32, y: f32) -> f32 {
    if x.is_nan() || y.is_nan() || x < 0.0 {
        return f32::NAN;
    }
    if x == 0.0 {
        return if y == 0.0 {
            f32::NAN
        } else if y < 0.0 {
            f32::INFINITY
        } else {
            0.0
        };
    }
    if (x.is_infinite() && y == 0.0) || (x == 1.0 && y.is_infinite()) {
        return f32::NAN;
    }
    libm::pow(x as f64, y as f64) as f32
}

fn atan2(y: f32, x: f32) -> f32 {
    libm::atan2(y as f64, x as f64) as f32
}

/// C fmod: x - trunc(x / y) * y computed exactly; result has the sign of x.
fn fmod(x: f32, y: f32) -> f32 {
    x % y
}

/// IEEE fmin (minNum): if exactly one argument is NaN, the other is returned.
pub fn fmin(x: f32, y: f32) -> f32 {
    x.min(y)
}

/// IEEE fmax (maxNum): if exactly one argument is NaN, the other is returned.
pub fn fmax(x: f32, y: f32) -> f32 {
    x.max(y)
}

fn copysign(x: f32, y: f32) -> f32 {
    x.copysign(y)
}

/// C fdim: x - y if x > y, +0 otherwise; NaN if either is NaN.
fn fdim(x: f32, y: f32) -> f32 {
    if x.is_nan() || y.is_nan() {
        f32::NAN
    } else if x > y {
        x - y
    } else {
        0.0
    }
}

/// C nextafter: the next representable f32 after x in the direction of y;
/// y if x == y; NaN if either is NaN.
fn nextafter(x: f32, y: f32) -> f32 {
    if x.is_nan() || y.is_nan() {
        return f32::NAN;
    }
    if x == y {
        return y;
    }
    if x == 0.0 {
        // Smallest denormal with the sign of the direction.
        return f32::from_bits(1).copysign(y - x);
    }
    let b = x.to_bits();
    let away_from_zero = (y > x) == (x > 0.0);
    f32::from_bits(if away_from_zero { b + 1 } else { b - 1 })
}

/// `step(edge, x)`: 0.0 if x < edge, else 1.0 (so NaN gives 1.0).
fn step(edge: f32, x: f32) -> f32 {
    if x < edge {
        0.0
    } else {
        1.0
    }
}

fn divide(x: f32, y: f32) -> f32 {
    x / y
}

/// Look up a floating function of two arguments by MSL name.
pub fn float_binary(name: &str, fast: bool) -> Option<fn(f32, f32) -> f32> {
    float_binary_in(FloatKind::F32, name, fast)
}

// ---------------------------------------------------------------- ternary

/// Fused multiply-add, one rounding.
fn fma(a: f32, b: f32, c: f32) -> f32 {
    a.mul_add(b, c)
}

/// `clamp(x, lo, hi)` = fmin(fmax(x, lo), hi) (MSL: undefined if lo > hi).
fn clamp(x: f32, lo: f32, hi: f32) -> f32 {
    x.max(lo).min(hi)
}

/// `mix(x, y, a)` = x + (y - x) * a.
fn mix(x: f32, y: f32, a: f32) -> f32 {
    x + (y - x) * a
}

/// `smoothstep(e0, e1, x)`: t = clamp((x - e0) / (e1 - e0), 0, 1), then
/// t * t * (3 - 2t). MSL: undefined if e0 >= e1.
fn smoothstep(e0: f32, e1: f32, x: f32) -> f32 {
    let t = clamp((x - e0) / (e1 - e0), 0.0, 1.0);
    t * t * (3.0 - 2.0 * t)
}

fn fmin3(a: f32, b: f32, c: f32) -> f32 {
    a.min(b).min(c)
}

fn fmax3(a: f32, b: f32, c: f32) -> f32 {
    a.max(b).max(c)
}

/// `fmedian3`: the middle value, computed as fmax(fmin(a, b), fmin(fmax(a,
/// b), c)). The MSL specification does not define NaN handling here; with
/// this formula a single NaN argument is ignored the way fmin/fmax ignore it.
fn fmedian3(a: f32, b: f32, c: f32) -> f32 {
    a.min(b).max(a.max(b).min(c))
}

/// Look up a floating function of three arguments by MSL name. `mad` is
/// computed fused (one rounding), as Apple GPUs do; MSL allows either.
pub fn float_ternary(name: &str, fast: bool) -> Option<fn(f32, f32, f32) -> f32> {
    float_ternary_in(FloatKind::F32, name, fast)
}

/// `fma(a, b, c)` rounded once to `kind`. The product of two f32 values is
/// exact in f64; TwoSum gives the sum's rounding error exactly; rounding the
/// f64 sum to odd (the nearer neighbour with an odd last bit when the sum was
/// inexact) keeps the information a later rounding to 51 bits or fewer
/// needs, so the final rounding to the kind is the only one that counts.
fn fma_rounded_to(kind: FloatKind, a: f32, b: f32, c: f32) -> f32 {
    let p = a as f64 * b as f64;
    let c = c as f64;
    let s = p + c;
    if !s.is_finite() || s == 0.0 {
        // Infinities and NaN follow IEEE from the f64 sum; an exact zero sum
        // has the sign IEEE gives it.
        return crate::round::round_f64_to(kind, s);
    }
    let bp = s - p;
    let err = (p - (s - bp)) + (c - bp);
    let odd = if err != 0.0 && s.to_bits() & 1 == 0 {
        // One step along the error's direction: away from zero when the
        // error has the sum's sign, towards zero otherwise.
        let away = (err > 0.0) == (s > 0.0);
        f64::from_bits(if away { s.to_bits() + 1 } else { s.to_bits() - 1 })
    } else {
        s
    };
    crate::round::round_f64_to(kind, odd)
}

fn fma_half(a: f32, b: f32, c: f32) -> f32 {
    fma_rounded_to(FloatKind::F16, a, b, c)
}

fn fma_bfloat(a: f32, b: f32, c: f32) -> f32 {
    fma_rounded_to(FloatKind::BF16, a, b, c)
}

/// [`float_ternary`] for elements of `kind`: `fma` and `mad` round once to
/// the kind (the MSL specification requires `fma` correctly rounded, and
/// computing in f32 and rounding again is off by one ulp for some half
/// triples).
pub fn float_ternary_in(kind: FloatKind, name: &str, fast: bool) -> Option<fn(f32, f32, f32) -> f32> {
    let _ = fast;
    match FloatFn::from_name(name)?.func(kind) {
        FloatImpl::F3(f) => Some(f),
        _ => None,
    }
}

/// `nextafter` in a 16-bit float format given by its bits conversions: the
/// neighbour of x towards y in that format's spacing (y if x == y, NaN if
/// either is NaN), returned widened to f32.
fn nextafter16(x: f32, y: f32, to_bits: fn(f32) -> u16, from_bits: fn(u16) -> f32) -> f32 {
    if x.is_nan() || y.is_nan() {
        return f32::NAN;
    }
    if x == y {
        return y;
    }
    let b = to_bits(x);
    let r = if x == 0.0 {
        if y > 0.0 {
            1
        } else {
            0x8001
        }
    } else if (y > x) == (x > 0.0) {
        b + 1
    } else {
        b - 1
    };
    from_bits(r)
}

fn nextafter_half(x: f32, y: f32) -> f32 {
    nextafter16(x, y, |v| half::f16::from_f32(v).to_bits(), |b| half::f16::from_bits(b).to_f32())
}

fn nextafter_bfloat(x: f32, y: f32) -> f32 {
    nextafter16(x, y, |v| half::bf16::from_f32(v).to_bits(), |b| half::bf16::from_bits(b).to_f32())
}

/// [`float_binary`] for elements of `kind`: `nextafter` steps by the kind's
/// own spacing.
pub fn float_binary_in(kind: FloatKind, name: &str, fast: bool) -> Option<fn(f32, f32) -> f32> {
    let _ = fast;
    match FloatFn::from_name(name)?.func(kind) {
        FloatImpl::F2(f) => Some(f),
        _ => None,
    }
}

// ---------------------------------------------------------------- predicates

fn isnan(x: f32) -> bool {
    x.is_nan()
}
fn isinf(x: f32) -> bool {
    x.is_infinite()
}
fn isfinite(x: f32) -> bool {
    x.is_finite()
}
fn isnormal(x: f32) -> bool {
    x.is_normal()
}
fn signbit(x: f32) -> bool {
    x.is_sign_negative()
}

/// Look up a floating classification function by MSL name.
///
/// Note: for `half` / `bfloat` values the caller must pass the value widened
/// from its own kind; `isnormal` is then answered for f32, so a half denormal
/// (normal in f32) reports normal. Use [`is_normal_in`] for the kind-aware
/// answer.
pub fn float_predicate(name: &str) -> Option<fn(f32) -> bool> {
    float_predicate_in(FloatKind::F32, name)
}

/// `isnormal` for a value of `kind` carried in an f32.
pub fn is_normal_in(kind: FloatKind, x: f32) -> bool {
    match kind {
        FloatKind::F32 => x.is_normal(),
        FloatKind::F16 => half::f16::from_f32(x).is_normal(),
        FloatKind::BF16 => half::bf16::from_f32(x).is_normal(),
    }
}

fn isnormal_half(x: f32) -> bool {
    is_normal_in(FloatKind::F16, x)
}

fn isnormal_bfloat(x: f32) -> bool {
    is_normal_in(FloatKind::BF16, x)
}

/// [`float_predicate`] for elements of `kind`: `isnormal` answers for the
/// kind's own exponent range.
pub fn float_predicate_in(kind: FloatKind, name: &str) -> Option<fn(f32) -> bool> {
    match FloatFn::from_name(name)?.func(kind) {
        FloatImpl::Pred(f) => Some(f),
        _ => None,
    }
}

fn isordered(x: f32, y: f32) -> bool {
    !x.is_nan() && !y.is_nan()
}
fn isunordered(x: f32, y: f32) -> bool {
    x.is_nan() || y.is_nan()
}

/// Look up a floating relation of two arguments by MSL name.
pub fn float_relation(name: &str) -> Option<fn(f32, f32) -> bool> {
    match FloatFn::from_name(name)?.func(FloatKind::F32) {
        FloatImpl::Rel(f) => Some(f),
        _ => None,
    }
}

// ---------------------------------------------------------------- by type

/// The standard library's per-lane functions of floating-point values. A
/// caller that knows which function it wants (the simulator's lowering)
/// names it here, so every function has an implementation by construction;
/// the lookups by MSL name above are for tools and tests.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FloatFn {
    Exp,
    Exp2,
    Exp10,
    Log,
    Log2,
    Log10,
    Sqrt,
    Rsqrt,
    Sin,
    Cos,
    Tan,
    Asin,
    Acos,
    Atan,
    Sinh,
    Cosh,
    Tanh,
    Asinh,
    Acosh,
    Atanh,
    Sinpi,
    Cospi,
    Tanpi,
    Ceil,
    Floor,
    Trunc,
    Round,
    Rint,
    Fract,
    Fabs,
    Saturate,
    Sign,
    Pow,
    Powr,
    Atan2,
    Fmod,
    Fmin,
    Fmax,
    Copysign,
    Fdim,
    Nextafter,
    Step,
    Divide,
    Fma,
    Clamp,
    Mix,
    Smoothstep,
    Fmin3,
    Fmax3,
    Fmedian3,
    IsNan,
    IsInf,
    IsFinite,
    IsNormal,
    SignBit,
    IsOrdered,
    IsUnordered,
}

/// A [`FloatFn`]'s implementation, by shape.
#[derive(Clone, Copy, Debug)]
pub enum FloatImpl {
    F1(fn(f32) -> f32),
    F2(fn(f32, f32) -> f32),
    F3(fn(f32, f32, f32) -> f32),
    /// A classification (`isnan`).
    Pred(fn(f32) -> bool),
    /// A relation of two values (`isordered`).
    Rel(fn(f32, f32) -> bool),
}

impl FloatFn {
    /// The implementation for elements of `kind` (functions whose result
    /// depends on the kind's spacing, range or rounding have one per kind).
    pub fn func(self, kind: FloatKind) -> FloatImpl {
        use FloatFn::*;
        use FloatImpl::*;
        use FloatKind::{BF16, F16};
        match self {
            Exp => F1(exp),
            Exp2 => F1(exp2),
            Exp10 => F1(exp10),
            Log => F1(log),
            Log2 => F1(log2),
            Log10 => F1(log10),
            Sqrt => F1(sqrt),
            Rsqrt => F1(rsqrt),
            Sin => F1(sin),
            Cos => F1(cos),
            Tan => F1(tan),
            Asin => F1(asin),
            Acos => F1(acos),
            Atan => F1(atan),
            Sinh => F1(sinh),
            Cosh => F1(cosh),
            Tanh => F1(tanh),
            Asinh => F1(asinh),
            Acosh => F1(acosh),
            Atanh => F1(atanh),
            Sinpi => F1(sinpi),
            Cospi => F1(cospi),
            Tanpi => F1(tanpi),
            Ceil => F1(ceil),
            Floor => F1(floor),
            Trunc => F1(trunc),
            Round => F1(round),
            Rint => F1(rint),
            Fract => F1(fract),
            Fabs => F1(fabs),
            Saturate => F1(saturate),
            Sign => F1(sign),
            Pow => F2(pow),
            Powr => F2(powr),
            Atan2 => F2(atan2),
            Fmod => F2(fmod),
            Fmin => F2(fmin),
            Fmax => F2(fmax),
            Copysign => F2(copysign),
            Fdim => F2(fdim),
            Nextafter => F2(match kind {
                F16 => nextafter_half,
                BF16 => nextafter_bfloat,
                FloatKind::F32 => nextafter,
            }),
            Step => F2(step),
            Divide => F2(divide),
            Fma => F3(match kind {
                F16 => fma_half,
                BF16 => fma_bfloat,
                FloatKind::F32 => fma,
            }),
            Clamp => F3(clamp),
            Mix => F3(mix),
            Smoothstep => F3(smoothstep),
            Fmin3 => F3(fmin3),
            Fmax3 => F3(fmax3),
            Fmedian3 => F3(fmedian3),
            IsNan => Pred(isnan),
            IsInf => Pred(isinf),
            IsFinite => Pred(isfinite),
            IsNormal => Pred(match kind {
                F16 => isnormal_half,
                BF16 => isnormal_bfloat,
                FloatKind::F32 => isnormal,
            }),
            SignBit => Pred(signbit),
            IsOrdered => Rel(isordered),
            IsUnordered => Rel(isunordered),
        }
    }

    /// The function an MSL name calls on floating-point values (`min` is
    /// `fmin`, `mad` is `fma`, `abs` is `fabs`).
    pub fn from_name(name: &str) -> Option<FloatFn> {
        use FloatFn::*;
        Some(match name {
            "exp" => Exp,
            "exp2" => Exp2,
            "exp10" => Exp10,
            "log" => Log,
            "log2" => Log2,
            "log10" => Log10,
            "sqrt" => Sqrt,
            "rsqrt" => Rsqrt,
            "sin" => Sin,
            "cos" => Cos,
            "tan" => Tan,
            "asin" => Asin,
            "acos" => Acos,
            "atan" => Atan,
            "sinh" => Sinh,
            "cosh" => Cosh,
            "tanh" => Tanh,
            "asinh" => Asinh,
            "acosh" => Acosh,
            "atanh" => Atanh,
            "sinpi" => Sinpi,
            "cospi" => Cospi,
            "tanpi" => Tanpi,
            "ceil" => Ceil,
            "floor" => Floor,
            "trunc" => Trunc,
            "round" => Round,
            "rint" => Rint,
            "fract" => Fract,
            "abs" | "fabs" => Fabs,
            "saturate" => Saturate,
            "sign" => Sign,
            "pow" => Pow,
            "powr" => Powr,
            "atan2" => Atan2,
            "fmod" => Fmod,
            "fmin" | "min" => Fmin,
            "fmax" | "max" => Fmax,
            "copysign" => Copysign,
            "fdim" => Fdim,
            "nextafter" => Nextafter,
            "step" => Step,
            "divide" => Divide,
            "fma" | "mad" => Fma,
            "clamp" => Clamp,
            "mix" => Mix,
            "smoothstep" => Smoothstep,
            "fmin3" | "min3" => Fmin3,
            "fmax3" | "max3" => Fmax3,
            "fmedian3" | "median3" => Fmedian3,
            "isnan" => IsNan,
            "isinf" => IsInf,
            "isfinite" => IsFinite,
            "isnormal" => IsNormal,
            "signbit" => SignBit,
            "isordered" => IsOrdered,
            "isunordered" => IsUnordered,
            _ => return None,
        })
    }
}
