//! Hand-picked edge cases of the MSL semantics.

use gpu_math::*;
use std::cmp::Ordering;

const I8: IntKind = IntKind::I8;
const U8: IntKind = IntKind::U8;
const I16: IntKind = IntKind::I16;
const U16: IntKind = IntKind::U16;
const I32: IntKind = IntKind::I32;
const U32: IntKind = IntKind::U32;
const I64: IntKind = IntKind::I64;
const U64: IntKind = IntKind::U64;
const ALL: [IntKind; 8] = [I8, U8, I16, U16, I32, U32, I64, U64];

fn s(v: i64) -> u64 {
    v as u64
}
fn u1(name: &str) -> fn(IntKind, u64) -> u64 {
    int_unary(name).unwrap()
}
fn u2(name: &str) -> fn(IntKind, u64, u64) -> u64 {
    int_binary(name).unwrap()
}
fn u3(name: &str) -> IntTernaryFn {
    int_ternary(name).unwrap()
}
fn f1(name: &str) -> fn(f32) -> f32 {
    float_unary(name, false).unwrap()
}
fn f2(name: &str) -> fn(f32, f32) -> f32 {
    float_binary(name, false).unwrap()
}
fn f3(name: &str) -> fn(f32, f32, f32) -> f32 {
    float_ternary(name, false).unwrap()
}

#[test]
fn normalize_truncates_and_extends() {
    assert_eq!(normalize(I8, 0xff), s(-1));
    assert_eq!(normalize(U8, s(-1)), 0xff);
    assert_eq!(normalize(I32, 0x8000_0000), s(i32::MIN as i64));
    assert_eq!(normalize(U32, 0x1_0000_0005), 5);
    assert_eq!(normalize(I64, 12345), 12345);
    // Non-MSL widths do not panic.
    let _ = normalize(IntKind { bits: 0, signed: true }, 7);
    let _ = normalize(IntKind { bits: 99, signed: false }, 7);
}

#[test]
fn clz_ctz_popcount() {
    for k in ALL {
        assert_eq!(u1("clz")(k, 0), k.bits as u64, "{k:?}");
        assert_eq!(u1("ctz")(k, 0), k.bits as u64, "{k:?}");
        assert_eq!(u1("popcount")(k, 0), 0);
        assert_eq!(u1("clz")(k, 1), k.bits as u64 - 1);
        assert_eq!(u1("ctz")(k, 1), 0);
        // All ones (-1 for signed kinds).
        let ones = normalize(k, u64::MAX);
        assert_eq!(u1("clz")(k, ones), 0);
        assert_eq!(u1("ctz")(k, ones), 0);
        assert_eq!(u1("popcount")(k, ones), k.bits as u64);
    }
    assert_eq!(u1("clz")(U32, 0), 32);
    assert_eq!(u1("clz")(I32, s(-1)), 0);
    assert_eq!(u1("clz")(U32, 0x0001_0000), 15);
    assert_eq!(u1("ctz")(I16, s(-32768)), 15);
    assert_eq!(u1("popcount")(I8, s(-128)), 1);
    assert_eq!(u1("popcount")(U64, 0xf0f0), 8);
}

#[test]
fn reverse_bits_and_abs() {
    assert_eq!(u1("reverse_bits")(U32, 1), 0x8000_0000);
    assert_eq!(u1("reverse_bits")(I8, 1), s(-128));
    assert_eq!(u1("reverse_bits")(U16, 0x00f1), 0x8f00);
    assert_eq!(u1("abs")(I32, s(-5)), 5);
    assert_eq!(u1("abs")(I32, s(i32::MIN as i64)), s(i32::MIN as i64));
    assert_eq!(u1("abs")(U8, 200), 200);
}

#[test]
fn rotate() {
    let r = u2("rotate");
    assert_eq!(r(U32, 0x8000_0001, 1), 0x0000_0003);
    assert_eq!(r(U32, 0x8000_0001, 33), 0x0000_0003);
    assert_eq!(r(U32, 0x1234_5678, 0), 0x1234_5678);
    assert_eq!(r(U32, 0x1234_5678, 32), 0x1234_5678);
    assert_eq!(r(U8, 0x81, 4), 0x18);
    assert_eq!(r(I8, s(-127), 1), 3); // 0x81 -> 0x03
    assert_eq!(r(I8, 0x40, 1), s(-128)); // 0x40 -> 0x80
    assert_eq!(r(U64, 1u64 << 63, 1), 1);
    // Negative amount: the low bits of its two's complement (-1 = 31 mod 32).
    assert_eq!(r(I32, 1, s(-1)), s(i32::MIN as i64));
}

#[test]
fn mulhi() {
    let m = u2("mulhi");
    assert_eq!(m(U32, 0xffff_ffff, 0xffff_ffff), 0xffff_fffe);
    assert_eq!(m(U32, 0x8000_0000, 2), 1);
    assert_eq!(m(I32, s(-1), s(-1)), 0);
    assert_eq!(m(I32, s(-1), 1), s(-1));
    assert_eq!(m(I32, s(i32::MIN as i64), s(i32::MIN as i64)), 0x4000_0000);
    assert_eq!(m(I32, s(i32::MIN as i64), s(i32::MAX as i64)), s(-0x4000_0000));
    assert_eq!(m(U64, u64::MAX, u64::MAX), u64::MAX - 1);
    assert_eq!(m(I64, s(i64::MIN), s(i64::MIN)), 1u64 << 62);
    assert_eq!(m(I64, s(-1), s(i64::MAX)), s(-1));
    assert_eq!(m(I16, s(-2), 0x4000), s(-1));
}

#[test]
fn saturating_add_sub() {
    let add = u2("addsat");
    let sub = u2("subsat");
    assert_eq!(add(U8, 200, 100), 255);
    assert_eq!(sub(U8, 100, 200), 0);
    assert_eq!(add(I8, 100, 100), 127);
    assert_eq!(add(I8, s(-100), s(-100)), s(-128));
    assert_eq!(sub(I8, s(-100), 100), s(-128));
    assert_eq!(sub(I8, 100, s(-100)), 127);
    assert_eq!(add(U32, 0xffff_fff0, 0x20), 0xffff_ffff);
    assert_eq!(add(I32, s(i32::MAX as i64), 1), s(i32::MAX as i64));
    assert_eq!(sub(I32, s(i32::MIN as i64), 1), s(i32::MIN as i64));
    assert_eq!(add(U64, u64::MAX, 1), u64::MAX);
    assert_eq!(sub(U64, 0, 1), 0);
    assert_eq!(add(I64, s(i64::MAX), s(i64::MAX)), s(i64::MAX));
    assert_eq!(sub(I64, s(i64::MIN), 1), s(i64::MIN));
    assert_eq!(add(I32, 3, s(-5)), s(-2));
}

#[test]
fn halving_adds_do_not_overflow() {
    let h = u2("hadd");
    let rh = u2("rhadd");
    assert_eq!(h(U32, 0xffff_ffff, 0xffff_ffff), 0xffff_ffff);
    assert_eq!(rh(U32, 0xffff_ffff, 0xffff_fffe), 0xffff_ffff);
    assert_eq!(h(I32, s(i32::MAX as i64), s(i32::MAX as i64)), s(i32::MAX as i64));
    assert_eq!(h(I32, s(i32::MIN as i64), s(i32::MIN as i64)), s(i32::MIN as i64));
    assert_eq!(h(I32, s(-1), 0), s(-1)); // floor(-1/2)
    assert_eq!(rh(I32, s(-1), 0), 0);
    assert_eq!(h(U64, u64::MAX, u64::MAX - 2), u64::MAX - 1);
    assert_eq!(rh(U64, u64::MAX, u64::MAX), u64::MAX);
    assert_eq!(rh(I64, s(i64::MAX), s(i64::MAX)), s(i64::MAX));
}

#[test]
fn absdiff_is_unsigned() {
    let d = u2("absdiff");
    assert_eq!(d(I32, s(i32::MIN as i64), s(i32::MAX as i64)), 0xffff_ffff);
    assert_eq!(d(I32, s(-3), 4), 7);
    assert_eq!(d(I8, s(-128), 127), 255);
    assert_eq!(d(U8, 3, 250), 247);
    assert_eq!(d(I64, s(i64::MIN), s(i64::MAX)), u64::MAX);
    assert_eq!(d(U64, 0, u64::MAX), u64::MAX);
}

#[test]
fn mul24_mad24_madhi_madsat() {
    assert_eq!(u2("mul24")(U32, 0xff_ffff, 2), 0x1ff_fffe);
    assert_eq!(u2("mul24")(I32, s(-3), 5), s(-15));
    assert_eq!(u3("mad24")(I32, s(-3), 5, 20), 5);
    assert_eq!(u3("madhi")(U32, 0xffff_ffff, 0xffff_ffff, 2), 0);
    assert_eq!(u3("madsat")(U32, 0x10000, 0x10000, 0), 0xffff_ffff);
    assert_eq!(u3("madsat")(I32, 0x10000, s(-0x10000), 0), s(i32::MIN as i64));
    assert_eq!(u3("madsat")(I32, 0x10000, s(-0x8000), 5), s(-0x8000_0000 + 5));
    assert_eq!(u3("madsat")(U64, u64::MAX, u64::MAX, u64::MAX), u64::MAX);
    assert_eq!(u3("madsat")(I64, s(i64::MIN), s(i64::MIN), s(i64::MIN)), s(i64::MAX));
    assert_eq!(u3("madsat")(U8, 10, 10, 5), 105);
}

#[test]
fn int_clamp_min_max_median() {
    assert_eq!(u3("clamp")(I32, s(-7), s(-5), 5), s(-5));
    assert_eq!(u3("clamp")(U32, 0xffff_fff0, 0, 10), 10);
    assert_eq!(u2("min")(I8, s(-1), 1), s(-1));
    assert_eq!(u2("min")(U8, 255, 1), 1);
    assert_eq!(u2("max")(I64, s(i64::MIN), 0), 0);
    assert_eq!(u3("median3")(I32, 3, s(-1), 2), 2);
    assert_eq!(u3("min3")(I32, 3, s(-1), 2), s(-1));
    assert_eq!(u3("max3")(U16, 3, 0xffff, 2), 0xffff);
}

#[test]
fn bitfields() {
    // bits == 0
    assert_eq!(extract_bits(U32, 0xffff_ffff, 4, 0), 0);
    assert_eq!(extract_bits(I32, s(-1), 0, 0), 0);
    assert_eq!(insert_bits(U32, 0x1234, 0xffff, 4, 0), 0x1234);
    // bits == width
    assert_eq!(extract_bits(U32, 0xdead_beef, 0, 32), 0xdead_beef);
    assert_eq!(extract_bits(I32, s(-2), 0, 32), s(-2));
    assert_eq!(extract_bits(U64, u64::MAX - 1, 0, 64), u64::MAX - 1);
    assert_eq!(insert_bits(U32, 0x1234, 0xdead_beef, 0, 32), 0xdead_beef);
    assert_eq!(insert_bits(I64, 0, s(-1), 0, 64), s(-1));
    // ordinary fields
    assert_eq!(extract_bits(U32, 0xdead_beef, 8, 8), 0xbe);
    assert_eq!(extract_bits(I32, 0xdead_beef, 8, 8), s(-0x42)); // 0xbe sign-extended
    assert_eq!(extract_bits(I32, 0x0000_7e00, 8, 8), 0x7e);
    assert_eq!(extract_bits(I8, s(-128), 7, 1), s(-1));
    assert_eq!(insert_bits(U32, 0xffff_ffff, 0, 8, 8), 0xffff_00ff);
    assert_eq!(insert_bits(I32, 0, 1, 31, 1), s(i32::MIN as i64));
    assert_eq!(insert_bits(U8, 0, 0xff, 4, 8), 0xf0); // clamped to the width
                                                      // ternary lookup form
    assert_eq!(u3("extract_bits")(U32, 0xdead_beef, 16, 16), 0xdead);
    // out-of-range offsets do not panic
    assert_eq!(extract_bits(U32, 0xffff_ffff, 40, 4), 0);
    let _ = extract_bits(I64, 1, u32::MAX, u32::MAX);
    let _ = insert_bits(I64, 1, 2, u32::MAX, u32::MAX);
}

#[test]
fn division_and_remainder() {
    for k in ALL {
        for a in [0u64, 1, 7, normalize(k, u64::MAX)] {
            assert_eq!(int_op(k, IntOp::Div, a, 0), 0);
            assert_eq!(int_op(k, IntOp::Rem, a, 0), 0);
        }
    }
    for k in [I8, I16, I32, I64] {
        let min = normalize(k, 1u64 << (k.bits - 1));
        assert_eq!(int_op(k, IntOp::Div, min, s(-1)), min, "{k:?}");
        assert_eq!(int_op(k, IntOp::Rem, min, s(-1)), 0, "{k:?}");
    }
    assert_eq!(int_op(I32, IntOp::Div, s(-7), 2), s(-3));
    assert_eq!(int_op(I32, IntOp::Rem, s(-7), 2), s(-1));
    assert_eq!(int_op(I32, IntOp::Rem, 7, s(-2)), 1);
    assert_eq!(int_op(U32, IntOp::Div, 0xffff_fff9, 2), 0x7fff_fffc);
}

#[test]
fn shifts_use_amount_mod_width() {
    assert_eq!(int_op(U32, IntOp::Shl, 1, 32), 1);
    assert_eq!(int_op(U32, IntOp::Shl, 1, 33), 2);
    assert_eq!(int_op(U32, IntOp::Shl, 1, 31), 0x8000_0000);
    assert_eq!(int_op(I32, IntOp::Shl, 1, 31), s(i32::MIN as i64));
    assert_eq!(int_op(I32, IntOp::Shr, s(-8), 1), s(-4));
    assert_eq!(int_op(I32, IntOp::Shr, s(-8), 33), s(-4));
    assert_eq!(int_op(U32, IntOp::Shr, 0x8000_0000, 31), 1);
    assert_eq!(int_op(U8, IntOp::Shl, 0x81, 1), 0x02);
    assert_eq!(int_op(U8, IntOp::Shl, 1, 8), 1);
    assert_eq!(int_op(I8, IntOp::Shr, s(-128), 7), s(-1));
    assert_eq!(int_op(U64, IntOp::Shl, 1, 64), 1);
    assert_eq!(int_op(U64, IntOp::Shr, u64::MAX, 65), u64::MAX >> 1);
    assert_eq!(int_op(I64, IntOp::Shr, s(i64::MIN), 63), s(-1));
    assert_eq!(int_op(I32, IntOp::Shl, 1, s(-1)), s(i32::MIN as i64));
}

#[test]
fn wrapping_arithmetic_and_compare() {
    assert_eq!(int_op(I32, IntOp::Add, s(i32::MAX as i64), 1), s(i32::MIN as i64));
    assert_eq!(int_op(U8, IntOp::Sub, 0, 1), 255);
    assert_eq!(int_op(I16, IntOp::Mul, 0x4000, 4), 0);
    assert_eq!(int_op(I8, IntOp::Xor, s(-1), 0x0f), s(-16));
    assert_eq!(int_cmp(I32, s(-1), 1), Ordering::Less);
    assert_eq!(int_cmp(U32, 0xffff_ffff, 1), Ordering::Greater);
    assert_eq!(u2("+")(U8, 255, 1), 0);
}

#[test]
fn conversions() {
    assert_eq!(float_to_int(I32, 1e10), s(i32::MAX as i64));
    assert_eq!(float_to_int(I32, -1e10), s(i32::MIN as i64));
    assert_eq!(float_to_int(I32, f32::NAN), 0);
    assert_eq!(float_to_int(U32, -5.0), 0);
    assert_eq!(float_to_int(U32, f32::INFINITY), 0xffff_ffff);
    assert_eq!(float_to_int(I8, 200.0), 127);
    assert_eq!(float_to_int(I8, -2.9), s(-2));
    assert_eq!(float_to_int(U8, 255.9), 255);
    assert_eq!(float_to_int(U16, 1e6), 0xffff);
    assert_eq!(float_to_int(I64, f32::NEG_INFINITY), s(i64::MIN));
    assert_eq!(float_to_int(U64, 1e30), u64::MAX);
    assert_eq!(float_to_int(U64, -0.5), 0);
    assert_eq!(int_to_float(U32, 0xffff_ffff), 4294967296.0);
    assert_eq!(int_to_float(I32, s(-16777217)), -16777216.0);
    assert_eq!(int_to_float(U32, 16777219), 16777220.0); // tie -> even
    assert_eq!(int_to_float(U64, u64::MAX), 18446744073709551616.0);
    assert_eq!(int_to_float(I64, s(i64::MIN)), -9223372036854775808.0);
    assert_eq!(int_to_float(I8, 0xff), 255.0 - 256.0);
    assert!(float_to_bool(f32::NAN));
    assert!(!float_to_bool(-0.0));
    assert!(float_to_bool(1e-45));
}

#[test]
fn fract_cases() {
    let fract = f1("fract");
    assert_eq!(fract(-0.25), 0.75);
    assert_eq!(fract(1.25), 0.25);
    assert_eq!(fract(3.0), 0.0);
    // -tiny - floor(-tiny) = 1 - tiny rounds to 1.0; fract clamps below 1.
    let r = fract(-1e-10);
    assert!(r < 1.0);
    assert_eq!(r, f32::from_bits(0x3f7f_ffff));
    assert_eq!(fract(f32::from_bits(0x3f7f_ffff)), f32::from_bits(0x3f7f_ffff));
    assert!(fract(f32::NAN).is_nan());
    assert_eq!(fract(f32::INFINITY), 0.0);
    assert_eq!(fract(f32::NEG_INFINITY), 0.0);
}

#[test]
fn rounding_functions() {
    assert_eq!(f1("round")(2.5), 3.0);
    assert_eq!(f1("round")(-2.5), -3.0);
    assert_eq!(f1("round")(0.49999997), 0.0);
    assert_eq!(f1("rint")(2.5), 2.0);
    assert_eq!(f1("rint")(3.5), 4.0);
    assert_eq!(f1("rint")(-2.5), -2.0);
    assert_eq!(f1("trunc")(-2.7), -2.0);
    assert_eq!(f1("ceil")(-0.5).to_bits(), (-0.0f32).to_bits());
    assert_eq!(f1("floor")(-0.5), -1.0);
}

#[test]
fn fmin_fmax_nan() {
    for name in ["fmin", "fmax", "min", "max"] {
        let f = f2(name);
        assert_eq!(f(f32::NAN, 2.0), 2.0, "{name}");
        assert_eq!(f(2.0, f32::NAN), 2.0, "{name}");
        assert!(f(f32::NAN, f32::NAN).is_nan(), "{name}");
    }
    assert_eq!(f2("fmin")(1.0, 2.0), 1.0);
    assert_eq!(f2("fmax")(1.0, 2.0), 2.0);
    assert_eq!(f3("fmin3")(f32::NAN, 3.0, 1.0), 1.0);
    assert_eq!(f3("fmax3")(f32::NAN, 3.0, 1.0), 3.0);
    assert_eq!(f3("fmedian3")(5.0, 1.0, 3.0), 3.0);
    assert_eq!(f3("fmedian3")(1.0, 5.0, 3.0), 3.0);
    assert_eq!(f3("fmedian3")(3.0, 5.0, 1.0), 3.0);
    assert_eq!(f3("clamp")(f32::NAN, 0.0, 1.0), 0.0);
    assert_eq!(f3("clamp")(5.0, 0.0, 1.0), 1.0);
}

#[test]
fn sign_step_smoothstep_saturate() {
    let sign = f1("sign");
    assert_eq!(sign(-0.0).to_bits(), (-0.0f32).to_bits());
    assert_eq!(sign(0.0).to_bits(), 0.0f32.to_bits());
    assert_eq!(sign(f32::NAN), 0.0);
    assert_eq!(sign(-3.0), -1.0);
    assert_eq!(sign(1e-45), 1.0);
    assert_eq!(sign(f32::NEG_INFINITY), -1.0);

    let step = f2("step");
    assert_eq!(step(1.0, 0.5), 0.0);
    assert_eq!(step(1.0, 1.0), 1.0);
    assert_eq!(step(1.0, 2.0), 1.0);
    assert_eq!(step(1.0, f32::NAN), 1.0);

    let ss = f3("smoothstep");
    assert_eq!(ss(0.0, 1.0, 0.0), 0.0);
    assert_eq!(ss(0.0, 1.0, 1.0), 1.0);
    assert_eq!(ss(0.0, 1.0, -5.0), 0.0);
    assert_eq!(ss(0.0, 1.0, 5.0), 1.0);
    assert_eq!(ss(0.0, 1.0, 0.5), 0.5);
    assert_eq!(ss(2.0, 4.0, 2.0), 0.0);
    assert_eq!(ss(2.0, 4.0, 4.0), 1.0);

    let sat = f1("saturate");
    assert_eq!(sat(1.5), 1.0);
    assert_eq!(sat(-1.5), 0.0);
    assert_eq!(sat(f32::NAN), 0.0);
    assert_eq!(sat(0.25), 0.25);

    assert_eq!(f3("mix")(2.0, 4.0, 0.25), 2.5);
    assert_eq!(f3("fma")(0.1, 10.0, -1.0), 0.1f32.mul_add(10.0, -1.0));
}

#[test]
fn misc_binary() {
    assert_eq!(f2("fmod")(-7.5, 2.0), -1.5);
    assert_eq!(f2("fmod")(7.5, -2.0), 1.5);
    assert!(f2("fmod")(1.0, 0.0).is_nan());
    assert_eq!(f2("pow")(-2.0, 3.0), -8.0);
    assert!(f2("pow")(-8.0, 1.0 / 3.0).is_nan());
    assert_eq!(f2("pow")(f32::NAN, 0.0), 1.0);
    assert!(f2("powr")(-2.0, 2.0).is_nan());
    assert_eq!(f2("powr")(2.0, 10.0), 1024.0);
    assert!(f2("powr")(0.0, 0.0).is_nan());
    assert_eq!(f2("powr")(0.0, -1.0), f32::INFINITY);
    assert_eq!(f2("fdim")(3.0, 5.0), 0.0);
    assert_eq!(f2("fdim")(5.0, 3.0), 2.0);
    assert_eq!(f2("copysign")(3.0, -0.0), -3.0);
    assert_eq!(f2("nextafter")(1.0, 2.0), 1.0 + f32::EPSILON);
    assert_eq!(f2("nextafter")(1.0, 0.0), 1.0 - f32::EPSILON / 2.0);
    assert_eq!(f2("nextafter")(0.0, -1.0), -f32::from_bits(1));
    assert_eq!(f2("nextafter")(-f32::from_bits(1), 1.0), 0.0);
    assert_eq!(f2("nextafter")(f32::MAX, f32::INFINITY), f32::INFINITY);
    assert_eq!(f2("nextafter")(f32::INFINITY, 0.0), f32::MAX);
    assert_eq!(f2("divide")(1.0, 4.0), 0.25);
    assert_eq!(ldexp(1.0, -149), f32::from_bits(1));
    assert_eq!(ldexp(1.0, -150), 0.0);
    assert_eq!(ldexp(1.5, 3), 12.0);
    assert_eq!(ldexp(1.0, 128), f32::INFINITY);
    assert_eq!(ldexp(f32::from_bits(1), 149), 1.0);
    assert_eq!(ldexp(3.0, i32::MIN), 0.0);
    assert_eq!(frexp(8.0), (0.5, 4));
    assert_eq!(frexp(f32::from_bits(1)), (0.5, -148));
    assert_eq!(modf(-2.5), (-0.5, -2.0));
}

#[test]
fn pi_functions_exact_points() {
    let (sp, cp, tp) = (f1("sinpi"), f1("cospi"), f1("tanpi"));
    assert_eq!(sp(0.5), 1.0);
    assert_eq!(sp(-0.5), -1.0);
    assert_eq!(sp(1.0).to_bits(), 0.0f32.to_bits());
    assert_eq!(sp(-1.0).to_bits(), (-0.0f32).to_bits());
    assert_eq!(sp(1e20).to_bits(), 0.0f32.to_bits());
    assert_eq!(sp(1.5), -1.0);
    assert_eq!(sp(0.25), std::f32::consts::FRAC_1_SQRT_2);
    assert_eq!(cp(0.0), 1.0);
    assert_eq!(cp(1.0), -1.0);
    assert_eq!(cp(0.5).to_bits(), 0.0f32.to_bits());
    assert_eq!(cp(-1.5).to_bits(), 0.0f32.to_bits());
    assert_eq!(cp(16777217.0 * 2.0), 1.0);
    assert_eq!(cp(8388609.0), -1.0); // odd integer above 2^23
    assert_eq!(tp(0.25), 1.0);
    assert_eq!(tp(-0.25), -1.0);
    assert_eq!(tp(0.5), f32::INFINITY);
    assert_eq!(tp(1.5), f32::NEG_INFINITY);
    assert_eq!(tp(1.0).to_bits(), 0.0f32.to_bits());
    assert!(sp(f32::INFINITY).is_nan());
    assert!(cp(f32::NAN).is_nan());
}

#[test]
fn transcendental_spot_checks() {
    assert_eq!(f1("exp10")(2.0), 100.0);
    assert_eq!(f1("exp2")(10.0), 1024.0);
    assert_eq!(f1("log2")(1024.0), 10.0);
    assert_eq!(f1("log10")(1000.0), 3.0);
    assert_eq!(f1("rsqrt")(4.0), 0.5);
    assert_eq!(f1("rsqrt")(0.0), f32::INFINITY);
    assert!(f1("sqrt")(-1.0).is_nan());
    assert_eq!(f1("abs")(-0.0).to_bits(), 0);
    assert_eq!(f1("fabs")(-3.0), 3.0);
}

#[test]
fn predicates_and_relations() {
    let p = |n: &str| float_predicate(n).unwrap();
    assert!(p("isnan")(f32::NAN));
    assert!(p("isinf")(f32::NEG_INFINITY));
    assert!(!p("isfinite")(f32::INFINITY));
    assert!(!p("isnormal")(f32::from_bits(1)));
    assert!(!p("isnormal")(0.0));
    assert!(p("isnormal")(1.0));
    assert!(p("signbit")(-0.0));
    assert!(!p("signbit")(0.0));
    let r = |n: &str| float_relation(n).unwrap();
    assert!(r("isordered")(1.0, 2.0));
    assert!(!r("isordered")(f32::NAN, 2.0));
    assert!(r("isunordered")(1.0, f32::NAN));
    assert!(!is_normal_in(FloatKind::F32, 1e-40));
    assert!(!is_normal_in(FloatKind::F16, 1e-5)); // a half denormal
    assert!(is_normal_in(FloatKind::F16, 1e-4));
}

#[test]
fn lookups_reject_unknown_names() {
    assert!(float_unary("log1p", false).is_none());
    assert!(float_unary("pow", false).is_none());
    assert!(float_binary("hypot", true).is_none());
    assert!(float_ternary("fma", true).is_some());
    assert!(int_unary("sqrt").is_none());
    assert!(int_binary("clamp").is_none());
    assert!(int_ternary("min").is_none());
    assert!(float_predicate("isordered").is_none());
    assert!(float_relation("isnan").is_none());
}

#[test]
fn round_to_kinds() {
    assert_eq!(round_to(FloatKind::F32, 0.1), 0.1);
    assert_eq!(round_to(FloatKind::F16, 65520.0), f32::INFINITY); // rounds up past max
    assert_eq!(round_to(FloatKind::F16, 65519.0), 65504.0);
    assert_eq!(round_to(FloatKind::F16, 2049.0), 2048.0); // tie -> even
    assert_eq!(round_to(FloatKind::F16, 2051.0), 2052.0); // tie -> even
    assert_eq!(round_to(FloatKind::BF16, 257.0), 256.0); // tie -> even
    assert_eq!(round_to(FloatKind::BF16, 259.0), 260.0);
    assert!(round_to(FloatKind::F16, f32::NAN).is_nan());
    assert!(round_to(FloatKind::BF16, f32::NAN).is_nan());
    assert_eq!(round_to(FloatKind::F16, 1e-8), 0.0);
    assert_eq!(round_to(FloatKind::F16, -1e-8).to_bits(), (-0.0f32).to_bits());
}

#[test]
fn geometry() {
    assert_eq!(dot(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0]), 32.0);
    assert_eq!(length(&[3.0, 4.0]), 5.0);
    assert_eq!(distance(&[1.0, 1.0], &[4.0, 5.0]), 5.0);
    let mut out = [0.0; 2];
    normalize_vec(&[3.0, 4.0], &mut out);
    assert_eq!(out, [0.6, 0.8]);
    geometric::normalize(&[0.0, 0.0], &mut out);
    assert!(out[0].is_nan());
    assert_eq!(cross(&[1.0, 0.0, 0.0], &[0.0, 1.0, 0.0]), [0.0, 0.0, 1.0]);
    let mut o3 = [0.0; 3];
    reflect(&[1.0, -1.0, 0.0], &[0.0, 1.0, 0.0], &mut o3);
    assert_eq!(o3, [1.0, 1.0, 0.0]);
    refract(&[1.0, -1.0, 0.0], &[0.0, 1.0, 0.0], 1.0, &mut o3);
    assert_eq!(o3, [1.0, -1.0, 0.0]);
    // Total internal reflection gives the zero vector.
    let i = [0.9f32, -0.1, 0.0];
    refract(&i, &[0.0, 1.0, 0.0], 1.5, &mut o3);
    assert_eq!(o3, [0.0, 0.0, 0.0]);
    faceforward(&[0.0, 1.0], &[0.0, -1.0], &[0.0, 1.0], &mut out);
    assert_eq!(out, [0.0, 1.0]);
    faceforward(&[0.0, 1.0], &[0.0, 1.0], &[0.0, 1.0], &mut out);
    assert_eq!(out, [-0.0, -1.0]);
    // Mismatched lengths do not panic.
    let mut o4 = [9.0; 4];
    reflect(&[1.0, 2.0], &[0.0, 1.0, 0.0], &mut o4);
    assert_eq!(o4[2..], [9.0, 9.0]);
    assert_eq!(dot(&[], &[1.0]), 0.0);
}
