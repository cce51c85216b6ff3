//! Property tests against independent reference implementations (i128 / bit
//! loops for integers, f64 for floats), plus "never panics" sweeps over all
//! bit patterns.

use gpu_math::*;
use proptest::prelude::*;

const KINDS: [IntKind; 8] = [IntKind::I8, IntKind::U8, IntKind::I16, IntKind::U16, IntKind::I32, IntKind::U32, IntKind::I64, IntKind::U64];

// ------------------------------------------------------------ int reference

/// The value of a lane of kind k as a mathematical integer.
fn val(k: IntKind, v: u64) -> i128 {
    let w = k.bits;
    let m = if w == 64 { v as u128 } else { (v as u128) & ((1u128 << w) - 1) };
    if k.signed && (m >> (w - 1)) & 1 == 1 {
        m as i128 - (1i128 << w)
    } else {
        m as i128
    }
}

/// A mathematical integer wrapped to kind k, in the normalized lane form.
fn lane(k: IntKind, x: i128) -> u64 {
    let w = k.bits;
    let m = x.rem_euclid(1i128 << w);
    let v = if k.signed && m >= (1i128 << (w - 1)) { m - (1i128 << w) } else { m };
    v as i64 as u64 // sign-extends negatives; non-negatives < 2^64 map exactly
}

fn lo(k: IntKind) -> i128 {
    if k.signed {
        -(1i128 << (k.bits - 1))
    } else {
        0
    }
}
fn hi(k: IntKind) -> i128 {
    if k.signed {
        (1i128 << (k.bits - 1)) - 1
    } else {
        (1i128 << k.bits) - 1
    }
}
fn sat(k: IntKind, x: i128) -> u64 {
    lane(k, x.clamp(lo(k), hi(k)))
}

/// Unsigned lane bits as an integer in [0, 2^w).
fn ubits(k: IntKind, v: u64) -> u128 {
    val(IntKind { bits: k.bits, signed: false }, v) as u128
}

fn ref_op(k: IntKind, op: IntOp, a: u64, b: u64) -> u64 {
    let (x, y) = (val(k, a), val(k, b));
    let w = k.bits as u128;
    let s = (ubits(k, b) % w) as u32;
    match op {
        IntOp::Add => lane(k, x + y),
        IntOp::Sub => lane(k, x - y),
        IntOp::Mul => lane(k, x.wrapping_mul(y)), // |x*y| <= 2^128: wrap is fine mod 2^w
        IntOp::Div => {
            if y == 0 {
                0
            } else {
                lane(k, x / y)
            }
        }
        IntOp::Rem => {
            if y == 0 {
                0
            } else {
                lane(k, x % y)
            }
        }
        IntOp::Shl => lane(k, x << s), // x < 2^64, s < 64: fits i128
        IntOp::Shr => lane(k, x >> s), // floor division: arithmetic for signed
        IntOp::And => lane(k, x & y),
        IntOp::Or => lane(k, x | y),
        IntOp::Xor => lane(k, x ^ y),
    }
}

/// High half of the product, by 32-bit limbs for the unsigned 64-bit case
/// (where the product does not fit an i128).
fn ref_mulhi(k: IntKind, a: u64, b: u64) -> u64 {
    if k.bits == 64 && !k.signed {
        let (a0, a1, b0, b1) = (a & 0xffff_ffff, a >> 32, b & 0xffff_ffff, b >> 32);
        let p00 = a0 * b0;
        let p01 = a0 * b1;
        let p10 = a1 * b0;
        let p11 = a1 * b1;
        let mid = (p00 >> 32) + (p01 & 0xffff_ffff) + (p10 & 0xffff_ffff);
        p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32)
    } else {
        let p = val(k, a) * val(k, b);
        lane(k, p.div_euclid(1i128 << k.bits))
    }
}

fn ref_madsat(k: IntKind, a: u64, b: u64, c: u64) -> u64 {
    if k.bits == 64 && !k.signed {
        a.checked_mul(b).and_then(|p| p.checked_add(c)).unwrap_or(u64::MAX)
    } else {
        sat(k, val(k, a) * val(k, b) + val(k, c))
    }
}

fn bit(v: u64, i: u32) -> bool {
    (v >> i) & 1 == 1
}

fn ref_clz(k: IntKind, v: u64) -> u64 {
    let mut n = 0;
    for i in (0..k.bits).rev() {
        if bit(v, i) {
            break;
        }
        n += 1;
    }
    n
}
fn ref_ctz(k: IntKind, v: u64) -> u64 {
    (0..k.bits).take_while(|&i| !bit(v, i)).count() as u64
}
fn ref_popcount(k: IntKind, v: u64) -> u64 {
    (0..k.bits).filter(|&i| bit(v, i)).count() as u64
}
fn from_bits(k: IntKind, f: impl Fn(u32) -> bool) -> u64 {
    let mut r: u64 = 0;
    for i in 0..k.bits {
        if f(i) {
            r |= 1 << i;
        }
    }
    lane(k, val(IntKind { bits: k.bits, signed: false }, r))
}
fn ref_reverse(k: IntKind, v: u64) -> u64 {
    from_bits(k, |i| bit(v, k.bits - 1 - i))
}
fn ref_rotate(k: IntKind, v: u64, amt: u64) -> u64 {
    let s = (ubits(k, amt) % k.bits as u128) as u32;
    from_bits(k, |i| bit(v, (i + k.bits - s) % k.bits))
}
fn ref_extract(k: IntKind, v: u64, off: u32, n: u32) -> u64 {
    if n == 0 {
        return 0;
    }
    let f = ubits(IntKind { bits: n, signed: false }, v >> off) as i128;
    let f = if k.signed && (f >> (n - 1)) & 1 == 1 { f - (1i128 << n) } else { f };
    lane(k, f)
}
fn ref_insert(k: IntKind, base: u64, ins: u64, off: u32, n: u32) -> u64 {
    from_bits(k, |i| if i >= off && i < off + n { bit(ins, i - off) } else { bit(base, i) })
}

fn kind() -> impl Strategy<Value = IntKind> {
    (0usize..8).prop_map(|i| KINDS[i])
}

/// A kind and values already in normalized lane form, biased to edges.
fn lane_val(k: IntKind) -> impl Strategy<Value = u64> {
    prop_oneof![
        any::<u64>(),
        Just(0u64),
        Just(1u64),
        Just(u64::MAX),
        (0u32..64).prop_map(|i| 1u64 << i),
        (0u32..64).prop_map(|i| (1u64 << i).wrapping_sub(1)),
        (-300i64..300i64).prop_map(|v| v as u64),
    ]
    .prop_map(move |v| lane(k, val(k, v)))
}

fn kv2() -> impl Strategy<Value = (IntKind, u64, u64)> {
    kind().prop_flat_map(|k| (Just(k), lane_val(k), lane_val(k)))
}
fn kv3() -> impl Strategy<Value = (IntKind, u64, u64, u64)> {
    kind().prop_flat_map(|k| (Just(k), lane_val(k), lane_val(k), lane_val(k)))
}

const OPS: [IntOp; 10] =
    [IntOp::Add, IntOp::Sub, IntOp::Mul, IntOp::Div, IntOp::Rem, IntOp::Shl, IntOp::Shr, IntOp::And, IntOp::Or, IntOp::Xor];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]

    #[test]
    fn int_ops_match_i128((k, a, b) in kv2(), op in 0usize..10) {
        let op = OPS[op];
        prop_assert_eq!(int_op(k, op, a, b), ref_op(k, op, a, b), "{:?} {:?} {:#x} {:#x}", k, op, a, b);
        prop_assert_eq!(int_cmp(k, a, b), val(k, a).cmp(&val(k, b)));
    }

    #[test]
    fn int_binary_match_i128((k, a, b) in kv2()) {
        let (x, y) = (val(k, a), val(k, b));
        let f = |n: &str| int_binary(n).unwrap()(k, a, b);
        prop_assert_eq!(f("min"), lane(k, x.min(y)));
        prop_assert_eq!(f("max"), lane(k, x.max(y)));
        prop_assert_eq!(f("absdiff"), lane(IntKind { bits: k.bits, signed: false }, (x - y).abs()));
        prop_assert_eq!(f("addsat"), sat(k, x + y));
        prop_assert_eq!(f("subsat"), sat(k, x - y));
        prop_assert_eq!(f("hadd"), lane(k, (x + y).div_euclid(2)));
        prop_assert_eq!(f("rhadd"), lane(k, (x + y + 1).div_euclid(2)));
        prop_assert_eq!(f("mulhi"), ref_mulhi(k, a, b), "{:?} {:#x} {:#x}", k, a, b);
        prop_assert_eq!(f("rotate"), ref_rotate(k, a, b));
        // mul24 is defined for operands in 24-bit range.
        let in24 = |v: i128| if k.signed { (-(1 << 23)..(1 << 23)).contains(&v) } else { v < (1 << 24) };
        if in24(x) && in24(y) {
            prop_assert_eq!(f("mul24"), lane(k, x * y));
        }
        for (name, op) in [("+", IntOp::Add), ("<<", IntOp::Shl), (">>", IntOp::Shr), ("/", IntOp::Div)] {
            prop_assert_eq!(f(name), ref_op(k, op, a, b));
        }
    }

    #[test]
    fn int_ternary_match_i128((k, a, b, c) in kv3()) {
        let (x, y, z) = (val(k, a), val(k, b), val(k, c));
        let f = |n: &str| int_ternary(n).unwrap()(k, a, b, c);
        let mut v = [x, y, z];
        v.sort();
        prop_assert_eq!(f("min3"), lane(k, v[0]));
        prop_assert_eq!(f("max3"), lane(k, v[2]));
        prop_assert_eq!(f("median3"), lane(k, v[1]));
        prop_assert_eq!(f("clamp"), lane(k, x.max(y).min(z)));
        prop_assert_eq!(f("madsat"), ref_madsat(k, a, b, c), "{:?} {:#x} {:#x} {:#x}", k, a, b, c);
        prop_assert_eq!(f("madhi"), lane(k, val(k, ref_mulhi(k, a, b)) + z));
    }

    #[test]
    fn int_unary_match_bit_loops(k in kind(), a in any::<u64>()) {
        let a = lane(k, val(k, a));
        let f = |n: &str| int_unary(n).unwrap()(k, a);
        prop_assert_eq!(f("clz"), ref_clz(k, a));
        prop_assert_eq!(f("ctz"), ref_ctz(k, a));
        prop_assert_eq!(f("popcount"), ref_popcount(k, a));
        prop_assert_eq!(f("reverse_bits"), ref_reverse(k, a));
        prop_assert_eq!(f("abs"), lane(k, val(k, a).abs()));
    }

    #[test]
    fn bitfields_match_bit_loops(k in kind(), a in any::<u64>(), b in any::<u64>(), off in 0u32..=64, n in 0u32..=64) {
        let (a, b) = (lane(k, val(k, a)), lane(k, val(k, b)));
        // Defined range: offset + bits <= width.
        let off = off.min(k.bits);
        let n = n.min(k.bits - off);
        prop_assert_eq!(extract_bits(k, a, off, n), ref_extract(k, a, off, n));
        prop_assert_eq!(insert_bits(k, a, b, off, n), ref_insert(k, a, b, off, n));
        // Round trip: inserting a field and extracting it gives the field back.
        let ins = insert_bits(k, a, b, off, n);
        prop_assert_eq!(
            extract_bits(IntKind { signed: false, ..k }, ins, off, n),
            ref_extract(IntKind { signed: false, ..k }, b, 0, n)
        );
    }

    #[test]
    fn results_are_normalized(k in kind(), a in any::<u64>(), b in any::<u64>(), c in any::<u64>()) {
        // Even for non-normalized inputs, outputs are normalized.
        let norm = |v: u64| normalize(k, v) == v;
        for op in OPS {
            prop_assert!(norm(int_op(k, op, a, b)));
        }
        for n in ["abs", "clz", "ctz", "popcount", "reverse_bits"] {
            prop_assert!(norm(int_unary(n).unwrap()(k, a)));
        }
        for n in ["min", "max", "addsat", "subsat", "hadd", "rhadd", "mul24", "mulhi", "rotate"] {
            prop_assert!(norm(int_binary(n).unwrap()(k, a, b)), "{}", n);
        }
        for n in ["clamp", "mad24", "madhi", "madsat", "min3", "max3", "median3", "extract_bits"] {
            prop_assert!(norm(int_ternary(n).unwrap()(k, a, b, c)), "{}", n);
        }
        prop_assert!(norm(float_to_int(k, f32::from_bits(a as u32))));
    }
}

// ------------------------------------------------------------ conversions

/// The next f32 above a finite x (by bits, independent of the crate).
fn next_up(x: f32) -> f32 {
    let b = x.to_bits();
    if x == 0.0 {
        f32::from_bits(1)
    } else if b >> 31 == 0 {
        f32::from_bits(b + 1)
    } else {
        f32::from_bits(b - 1)
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]

    #[test]
    fn float_to_int_saturates(k in kind(), bits in any::<u32>()) {
        let x = f32::from_bits(bits);
        let expect = if x.is_nan() {
            0
        } else {
            // x as f64 is exact and so is its trunc; the i128 cast is exact
            // below 2^127 and saturates above, then clamp to the kind.
            lane(k, ((x as f64).trunc() as i128).clamp(lo(k), hi(k)))
        };
        prop_assert_eq!(float_to_int(k, x), expect, "{:?} {}", k, x);
    }

    #[test]
    fn int_to_float_is_nearest_even((k, a, _b) in kv2()) {
        let v = val(k, a);
        let r = int_to_float(k, a);
        prop_assert!(r.is_finite());
        let ri = r as f64 as i128; // f32 results here are integers or 0
        prop_assert_eq!(ri as f64, r as f64);
        let err = (ri - v).abs();
        let up = next_up(r) as f64 as i128;
        let down = -(next_up(-r) as f64 as i128);
        prop_assert!(err <= (up - v).abs() && err <= (down - v).abs(), "{} -> {}", v, r);
        if err != 0 && (err == (up - v).abs() || err == (down - v).abs()) {
            prop_assert_eq!(r.to_bits() & 1, 0, "tie must go to even: {} -> {}", v, r);
        }
    }

    #[test]
    fn float_to_bool_is_not_zero(bits in any::<u32>()) {
        let x = f32::from_bits(bits);
        prop_assert_eq!(float_to_bool(x), !(x == 0.0));
    }
}

// ------------------------------------------------------------ float reference

/// Distance in units in the last place between two f32 (NaN == NaN).
fn ulps(a: f32, b: f32) -> u64 {
    if a.is_nan() && b.is_nan() {
        return 0;
    }
    if a.is_nan() || b.is_nan() {
        return u64::MAX;
    }
    let key = |x: f32| {
        let b = x.to_bits() as i32 as i64;
        if b < 0 {
            // negative: map so that order is preserved, -0 == +0
            -(b & 0x7fff_ffff)
        } else {
            b
        }
    };
    (key(a) - key(b)).unsigned_abs()
}

fn finite() -> impl Strategy<Value = f32> {
    any::<u32>().prop_map(f32::from_bits).prop_filter("finite", |x| x.is_finite())
}
fn anyf() -> impl Strategy<Value = f32> {
    prop_oneof![
        any::<u32>().prop_map(f32::from_bits),
        Just(0.0f32),
        Just(-0.0f32),
        Just(f32::INFINITY),
        Just(f32::NEG_INFINITY),
        Just(f32::NAN),
        Just(1.0f32),
        Just(-1.0f32),
        (1u32..0x80_0000).prop_map(f32::from_bits),
        -10.0f32..10.0,
    ]
}
fn moderate() -> impl Strategy<Value = f32> {
    prop_oneof![-100.0f32..100.0, -1.0f32..1.0, -1e6f32..1e6]
}

type R1 = fn(f64) -> f64;

const UNARY_REFS: [(&str, R1); 20] = [
    ("exp", f64::exp),
    ("exp2", f64::exp2),
    ("exp10", |x| 10f64.powf(x)),
    ("log", f64::ln),
    ("log2", f64::log2),
    ("log10", f64::log10),
    ("sqrt", f64::sqrt),
    ("rsqrt", |x| 1.0 / x.sqrt()),
    ("sin", f64::sin),
    ("cos", f64::cos),
    ("tan", f64::tan),
    ("asin", f64::asin),
    ("acos", f64::acos),
    ("atan", f64::atan),
    ("sinh", f64::sinh),
    ("cosh", f64::cosh),
    ("tanh", f64::tanh),
    ("asinh", f64::asinh),
    ("acosh", f64::acosh),
    ("atanh", f64::atanh),
];

const ULP_BOUND: u64 = 2;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn unary_within_ulps_of_f64(x in prop_oneof![anyf(), moderate()]) {
        for (name, r) in UNARY_REFS {
            for fast in [false, true] {
                let got = float_unary(name, fast).unwrap()(x);
                let want = r(x as f64) as f32;
                prop_assert!(ulps(got, want) <= ULP_BOUND, "{}({:e}) = {:e}, f64 says {:e}", name, x, got, want);
            }
        }
    }

    #[test]
    fn pi_functions_within_ulps(x in prop_oneof![-4096.0f32..4096.0, -2.0f32..2.0, (-8192i32..8192).prop_map(|i| i as f32 * 0.25)]) {
        use std::f64::consts::PI;
        // x * PI in f64 is accurate enough for |x| < 2^13 (see unit tests for
        // the exact points).
        let xd = x as f64;
        let checks: [(&str, f64); 2] = [("sinpi", (PI * xd).sin()), ("cospi", (PI * xd).cos())];
        for (name, want) in checks {
            let got = float_unary(name, false).unwrap()(x);
            let want = want as f32;
            // Exact zeros: the f64 reference gives ~1e-13 instead of 0.
            if got == 0.0 {
                // (pi * x in f64 is off by up to ~|x| * 2^-52.)
                prop_assert!(want.abs() < 1e-10, "{}({}) = 0, f64 says {:e}", name, x, want);
            } else {
                prop_assert!(ulps(got, want) <= ULP_BOUND, "{}({:e}) = {:e}, f64 says {:e}", name, x, got, want);
            }
        }
        let t = float_unary("tanpi", false).unwrap()(x);
        let s = float_unary("sinpi", false).unwrap()(x);
        let c = float_unary("cospi", false).unwrap()(x);
        if c != 0.0 && t.is_finite() {
            let want = (s as f64 / c as f64) as f32;
            prop_assert!(ulps(t, want) <= 4, "tanpi({}) = {:e}, sinpi/cospi = {:e}", x, t, want);
        }
    }

    #[test]
    fn pi_functions_on_any_finite(x in finite()) {
        let s = float_unary("sinpi", false).unwrap()(x);
        let c = float_unary("cospi", false).unwrap()(x);
        let sum = s as f64 * s as f64 + c as f64 * c as f64;
        prop_assert!((sum - 1.0).abs() < 1e-6, "sinpi({x:e})^2 + cospi^2 = {sum}");
        if x.abs() >= 8388608.0 {
            // Every such f32 is an integer: sinpi is a signed zero, cospi is
            // (-1)^x (odd only below 2^24).
            prop_assert_eq!(s, 0.0);
            prop_assert_eq!(s.is_sign_negative(), x.is_sign_negative());
            let odd = x.abs() < 16777216.0 && (x as i64) % 2 != 0;
            prop_assert_eq!(c, if odd { -1.0 } else { 1.0 });
        }
    }

    #[test]
    fn binary_within_ulps_of_f64(x in prop_oneof![anyf(), moderate()], y in prop_oneof![anyf(), moderate()]) {
        let (xd, yd) = (x as f64, y as f64);
        let pow = float_binary("pow", false).unwrap()(x, y);
        prop_assert!(ulps(pow, xd.powf(yd) as f32) <= ULP_BOUND, "pow({:e}, {:e}) = {:e}", x, y, pow);
        let atan2 = float_binary("atan2", false).unwrap()(x, y);
        prop_assert!(ulps(atan2, xd.atan2(yd) as f32) <= ULP_BOUND);
        // fmod is exact.
        let fm = float_binary("fmod", false).unwrap()(x, y);
        prop_assert!(ulps(fm, (xd % yd) as f32) == 0);
        let div = float_binary("divide", false).unwrap()(x, y);
        prop_assert!(ulps(div, (xd / yd) as f32) == 0);
        let powr = float_binary("powr", false).unwrap()(x, y);
        if x > 0.0 && x.is_finite() && y.is_finite() && x != 1.0 {
            prop_assert!(ulps(powr, xd.powf(yd) as f32) <= ULP_BOUND);
        }
        if x < 0.0 || x.is_nan() || y.is_nan() {
            prop_assert!(powr.is_nan());
        }
        // fmin / fmax: IEEE minNum / maxNum.
        let mn = float_binary("fmin", false).unwrap()(x, y);
        let mx = float_binary("fmax", false).unwrap()(x, y);
        if x.is_nan() {
            prop_assert!(ulps(mn, y) == 0 && ulps(mx, y) == 0);
        } else if y.is_nan() {
            prop_assert!(ulps(mn, x) == 0 && ulps(mx, x) == 0);
        } else {
            prop_assert!(mn == x.min(y) && mx == x.max(y));
            prop_assert!(mn <= x && mn <= y && mx >= x && mx >= y);
        }
        // nextafter moves by one ulp toward y.
        let na = float_binary("nextafter", false).unwrap()(x, y);
        if !x.is_nan() && !y.is_nan() {
            if x == y {
                prop_assert_eq!(na.to_bits(), y.to_bits());
            } else {
                prop_assert_eq!(ulps(na, x), 1, "nextafter({:e}, {:e}) = {:e}", x, y, na);
                prop_assert!((na > x) == (y > x));
            }
        }
        let fd = float_binary("fdim", false).unwrap()(x, y);
        if !x.is_nan() && !y.is_nan() {
            // f64 has >= 2p+2 bits, so rounding through it is exact for -.
            prop_assert_eq!(fd, if x > y { (xd - yd) as f32 } else { 0.0 });
        }
    }

    #[test]
    fn ternary_properties(a in prop_oneof![anyf(), moderate()], b in prop_oneof![anyf(), moderate()], c in prop_oneof![anyf(), moderate()]) {
        // fma has one rounding: f64 product is exact, the sum may double-round.
        let f = float_ternary("fma", false).unwrap()(a, b, c);
        let want = (a as f64 * b as f64 + c as f64) as f32;
        prop_assert!(ulps(f, want) <= 1, "fma({:e},{:e},{:e}) = {:e} vs {:e}", a, b, c, f, want);
        if !a.is_nan() && !b.is_nan() && !c.is_nan() {
            let mut v = [a, b, c];
            v.sort_by(|p, q| p.partial_cmp(q).unwrap());
            let med = float_ternary("fmedian3", false).unwrap()(a, b, c);
            prop_assert!(med == v[1], "fmedian3({},{},{}) = {}", a, b, c, med);
            prop_assert!(float_ternary("fmin3", false).unwrap()(a, b, c) == v[0]);
            prop_assert!(float_ternary("fmax3", false).unwrap()(a, b, c) == v[2]);
            if b <= c {
                let cl = float_ternary("clamp", false).unwrap()(a, b, c);
                prop_assert!(cl >= b && cl <= c);
            }
        }
        if a.is_finite() && b.is_finite() && a < b && c.is_finite() {
            let s = float_ternary("smoothstep", false).unwrap()(a, b, c);
            if (b as f64 - a as f64) < 1e38 {
                prop_assert!((0.0..=1.0).contains(&s), "smoothstep({},{},{}) = {}", a, b, c, s);
            }
        }
    }

    #[test]
    fn rounding_functions_match(x in anyf()) {
        let g = |n: &str| float_unary(n, false).unwrap()(x);
        let xd = x as f64;
        // Same value and sign; any NaN matches any NaN (payloads may differ).
        let same = |a: f32, b: f64| (a.is_nan() && b.is_nan()) || a.to_bits() == (b as f32).to_bits();
        prop_assert!(same(g("floor"), xd.floor()));
        prop_assert!(same(g("ceil"), xd.ceil()));
        prop_assert!(same(g("trunc"), xd.trunc()));
        if !x.is_nan() {
            prop_assert_eq!(g("round"), xd.round() as f32);
            prop_assert_eq!(g("rint"), xd.round_ties_even() as f32);
            let fr = g("fract");
            prop_assert!((0.0..1.0).contains(&fr), "fract({:e}) = {:e}", x, fr);
            if x.is_finite() {
                // fract is x - floor(x) rounded once, except the clamp below 1.
                let want = ((xd - xd.floor()) as f32).min(f32::from_bits(0x3f7f_ffff));
                prop_assert_eq!(fr, want);
            }
            let sg = g("sign");
            prop_assert!(sg == 1.0 || sg == -1.0 || sg == 0.0);
            prop_assert_eq!(sg.is_sign_negative(), x.is_sign_negative());
            let sat = g("saturate");
            prop_assert!((0.0..=1.0).contains(&sat));
        }
        prop_assert_eq!(g("abs").to_bits(), x.to_bits() & 0x7fff_ffff);
    }

    #[test]
    fn ldexp_frexp_modf(x in anyf(), n in prop_oneof![-300i32..300, any::<i32>()]) {
        let r = ldexp(x, n);
        // Reference: repeated exact scaling in f64 with one final rounding.
        let want = if x.is_nan() { f32::NAN } else {
            let e = n.clamp(-1100, 1100);
            let mut v = x as f64;
            // split to keep each factor a normal f64
            let (e1, e2) = (e / 2, e - e / 2);
            v *= 2f64.powi(e1);
            v *= 2f64.powi(e2);
            v as f32
        };
        prop_assert!(ulps(r, want) == 0, "ldexp({:e}, {}) = {:e} vs {:e}", x, n, r, want);
        let (m, e) = frexp(x);
        if x.is_finite() && x != 0.0 {
            prop_assert!((0.5..1.0).contains(&m.abs()));
            prop_assert_eq!(ldexp(m, e), x);
        }
        let (fr, int) = modf(x);
        if x.is_finite() {
            prop_assert_eq!(fr + int, x);
            prop_assert_eq!(int, x.trunc());
        }
    }
}

// ------------------------------------------------------------ half / bfloat

fn check_nearest(x: f32, r: f32, next_up: f32, next_down: f32, r_bits_even: bool) -> Result<(), TestCaseError> {
    let (xd, rd) = (x as f64, r as f64);
    let err = (xd - rd).abs();
    for n in [next_up, next_down] {
        let e = (xd - n as f64).abs();
        prop_assert!(err <= e, "{:e} -> {:e}, but {:e} is closer", x, r, n);
        if err == e && n.is_finite() {
            prop_assert!(r_bits_even, "tie {:e} -> {:e} not even", x, r);
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(5000))]

    #[test]
    fn round_to_f16_is_nearest(x in prop_oneof![finite(), -70000.0f32..70000.0, -1.0f32..1.0, -1e-4f32..1e-4]) {
        let r = round_to(FloatKind::F16, x);
        prop_assert_eq!(round_to(FloatKind::F16, r).to_bits(), r.to_bits(), "idempotent");
        if x.abs() <= 65504.0 {
            prop_assert!(r.is_finite());
            // Neighbours of r in f16, built from the bits independently of
            // f32 arithmetic.
            let h = half::f16::from_f32(r).to_bits();
            let step = |b: u16| half::f16::from_bits(b).to_f32();
            let (up, down) = if h & 0x8000 == 0 {
                (step(h + 1), if h == 0 { step(0x8001) } else { step(h - 1) })
            } else {
                (if h == 0x8000 { step(1) } else { step(h - 1) }, step(h + 1))
            };
            check_nearest(x, r, up, down, h & 1 == 0)?;
        } else if x.abs() >= 65520.0 {
            prop_assert!(r.is_infinite() && r.is_sign_negative() == x.is_sign_negative());
        }
        prop_assert_eq!(r.is_sign_negative(), x.is_sign_negative());
    }

    #[test]
    fn round_to_bf16_is_nearest(x in prop_oneof![finite(), -1e4f32..1e4, -1.0f32..1.0]) {
        let r = round_to(FloatKind::BF16, x);
        prop_assert_eq!(r.to_bits() & 0xffff, 0, "bf16 is the top half of an f32");
        prop_assert_eq!(round_to(FloatKind::BF16, r).to_bits(), r.to_bits());
        if r.is_finite() {
            let h = r.to_bits() >> 16;
            let step = |b: u32| f32::from_bits(b << 16);
            let (up, down) = if h & 0x8000 == 0 {
                (step(h + 1), if h == 0 { step(0x8001) } else { step(h - 1) })
            } else {
                (if h == 0x8000 { step(1) } else { step(h - 1) }, step(h + 1))
            };
            check_nearest(x, r, up, down, h & 1 == 0)?;
        }
        prop_assert_eq!(round_to(FloatKind::F32, x).to_bits(), x.to_bits());
    }
}

// ------------------------------------------------------------ never panics

const F1: [&str; 33] = [
    "exp", "exp2", "exp10", "log", "log2", "log10", "sqrt", "rsqrt", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh",
    "asinh", "acosh", "atanh", "sinpi", "cospi", "tanpi", "ceil", "floor", "trunc", "round", "rint", "fract", "abs", "fabs", "saturate",
    "sign",
];
const F2: [&str; 13] = ["pow", "powr", "atan2", "fmod", "fmin", "fmax", "min", "max", "copysign", "fdim", "nextafter", "step", "divide"];
const F3: [&str; 11] = ["fma", "mad", "clamp", "mix", "smoothstep", "fmin3", "fmax3", "fmedian3", "min3", "max3", "median3"];
const I1: [&str; 5] = ["abs", "clz", "ctz", "popcount", "reverse_bits"];
const I2: [&str; 20] = [
    "min", "max", "absdiff", "addsat", "subsat", "hadd", "rhadd", "mul24", "mulhi", "rotate", "+", "-", "*", "/", "%", "<<", ">>", "&",
    "|", "^",
];
const I3: [&str; 8] = ["clamp", "mad24", "madhi", "madsat", "min3", "max3", "median3", "extract_bits"];

#[test]
fn every_listed_name_resolves() {
    for fast in [false, true] {
        for n in F1 {
            assert!(float_unary(n, fast).is_some(), "{n}");
        }
        for n in F2 {
            assert!(float_binary(n, fast).is_some(), "{n}");
        }
        for n in F3 {
            assert!(float_ternary(n, fast).is_some(), "{n}");
        }
    }
    for n in I1 {
        assert!(int_unary(n).is_some(), "{n}");
    }
    for n in I2 {
        assert!(int_binary(n).is_some(), "{n}");
    }
    for n in I3 {
        assert!(int_ternary(n).is_some(), "{n}");
    }
    for n in ["isnan", "isinf", "isfinite", "isnormal", "signbit"] {
        assert!(float_predicate(n).is_some(), "{n}");
    }
    for n in ["isordered", "isunordered"] {
        assert!(float_relation(n).is_some(), "{n}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn floats_never_panic(a in any::<u32>(), b in any::<u32>(), c in any::<u32>(), n in any::<i32>()) {
        let (x, y, z) = (f32::from_bits(a), f32::from_bits(b), f32::from_bits(c));
        for fast in [false, true] {
            for name in F1 {
                let _ = float_unary(name, fast).unwrap()(x);
            }
            for name in F2 {
                let _ = float_binary(name, fast).unwrap()(x, y);
            }
            for name in F3 {
                let _ = float_ternary(name, fast).unwrap()(x, y, z);
            }
        }
        for name in ["isnan", "isinf", "isfinite", "isnormal", "signbit"] {
            let _ = float_predicate(name).unwrap()(x);
        }
        for name in ["isordered", "isunordered"] {
            let _ = float_relation(name).unwrap()(x, y);
        }
        let _ = (ldexp(x, n), frexp(x), modf(x), float_to_bool(x));
        for kind in [FloatKind::F16, FloatKind::BF16, FloatKind::F32] {
            let _ = (round_to(kind, x), is_normal_in(kind, x));
        }
        for k in KINDS {
            let _ = float_to_int(k, x);
        }
        let v = [x, y, z, x];
        let w = [z, y, x];
        let mut out = [0.0f32; 4];
        let _ = (dot(&v, &w), length(&v), distance(&v, &w), cross(&[x, y, z], &[z, x, y]));
        normalize_vec(&v, &mut out);
        reflect(&v, &w, &mut out);
        refract(&w, &v, x, &mut out[..2]);
        faceforward(&v, &w, &v[..2], &mut out);
    }

    #[test]
    fn ints_never_panic(bits in prop_oneof![Just(8u32), Just(16), Just(32), Just(64), 0u32..200, any::<u32>()],
                        signed in any::<bool>(), a in any::<u64>(), b in any::<u64>(), c in any::<u64>(),
                        off in any::<u32>(), n in any::<u32>()) {
        let k = IntKind { bits, signed };
        let _ = normalize(k, a);
        for op in OPS {
            let _ = int_op(k, op, a, b);
        }
        let _ = int_cmp(k, a, b);
        for name in I1 {
            let _ = int_unary(name).unwrap()(k, a);
        }
        for name in I2 {
            let _ = int_binary(name).unwrap()(k, a, b);
        }
        for name in I3 {
            let _ = int_ternary(name).unwrap()(k, a, b, c);
        }
        let _ = (insert_bits(k, a, b, off, n), extract_bits(k, a, off, n));
        let _ = (insert_bits(k, a, b, off % 72, n % 72), extract_bits(k, a, off % 72, n % 72));
        let _ = (int_to_float(k, a), float_to_int(k, f32::from_bits(a as u32)));
    }
}
