//! Correct rounding into the floating kinds from wider sources: an f64, a
//! 64-bit integer, a decimal literal. Rounding in two steps (f64 -> f32 ->
//! half) can be off by one ulp when the first step lands on a midpoint of the
//! second; these functions round once.

use crate::float::FloatKind;

/// (significand bits including the implicit one, smallest normal exponent,
/// largest exponent) of a kind.
fn format(kind: FloatKind) -> (i32, i32, i32) {
    match kind {
        FloatKind::F16 => (11, -14, 15),
        FloatKind::BF16 => (8, -126, 127),
        FloatKind::F32 => (24, -126, 127),
    }
}

/// `x` rounded to the nearest value of `kind` (ties to even; overflow gives
/// ±inf; subnormals of the kind are produced, none flushed), widened to f32.
/// NaN gives the NaN `round_to` gives for the same f32 NaN.
pub fn round_f64_to(kind: FloatKind, x: f64) -> f32 {
    if kind == FloatKind::F32 {
        return x as f32; // Rust's f64 -> f32 conversion rounds once, to nearest even.
    }
    if x.is_nan() {
        return crate::float::round_to(kind, x as f32);
    }
    if x == 0.0 || x.is_infinite() {
        return x as f32;
    }
    let (p, emin, emax) = format(kind);
    let ax = x.abs();
    // Far below half the smallest subnormal of either kind: zero. Also keeps
    // f64 subnormals (whose exponent field is 0) out of the arithmetic below.
    if ax < 2f64.powi(emin - p - 4) {
        return 0f32.copysign(x as f32);
    }
    let e = ((ax.to_bits() >> 52) & 0x7ff) as i32 - 1023; // floor(log2 ax); ax is normal
    let q = e.max(emin) - (p - 1); // exponent of the kind's ulp at ax
                                   // ax / 2^q and back are exact power-of-two scalings (no overflow or
                                   // underflow for these exponents); the only rounding is round_ties_even.
    let r = (ax * 2f64.powi(-q)).round_ties_even() * 2f64.powi(q);
    let r = if r >= 2f64.powi(emax + 1) { f64::INFINITY } else { r };
    (r as f32).copysign(x as f32) // exact: r is a value of the kind
}

/// An integer's magnitude rounded to odd at 53 bits: exact when it fits, and
/// otherwise truncated with the lowest kept bit forced to 1 if anything was
/// dropped. Rounding that f64 to nearest at 51 bits or fewer gives the same
/// result as rounding the integer once.
fn odd53(mag: u64) -> f64 {
    let bits = 64 - mag.leading_zeros();
    if bits <= 53 {
        return mag as f64;
    }
    let sh = bits - 53;
    let kept = mag >> sh;
    let sticky = (mag & ((1u64 << sh) - 1) != 0) as u64;
    (kept | sticky) as f64 * 2f64.powi(sh as i32)
}

/// A signed or unsigned 64-bit integer (`neg` gives the sign, `mag` the
/// magnitude) rounded once to `kind`, widened to f32.
pub fn int_to_kind(kind: FloatKind, neg: bool, mag: u64) -> f32 {
    let r = match kind {
        FloatKind::F32 => {
            // u64 -> f32 in Rust rounds once, to nearest even.
            mag as f32
        }
        _ => round_f64_to(kind, odd53(mag)),
    };
    if neg {
        -r
    } else {
        r
    }
}

/// A decimal floating literal's digits (the text without suffix or sign, as
/// C++ spells it: `1.5`, `.5e-3`, `2.`, `1e10`) rounded once to `kind`.
/// `None` if the text is not such a number.
pub fn decimal_to_kind(kind: FloatKind, text: &str) -> Option<f32> {
    if kind == FloatKind::F32 {
        return text.parse::<f32>().ok(); // Rust parses decimals straight to f32, rounding once.
    }
    let x = text.parse::<f64>().ok()?;
    let r = round_f64_to(kind, x);
    // Rounding the decimal to f64 first only matters when that lands exactly
    // on a midpoint between two values of the kind: then the decimal's side
    // of the midpoint decides. (Any other f64 rounds like the decimal would,
    // because no midpoint lies between the decimal and its nearest f64.)
    if !x.is_finite() || !is_midpoint(kind, x) {
        return Some(r);
    }
    let below = step(kind, x, false);
    let above = step(kind, x, true);
    Some(match compare_decimal(text, x)? {
        std::cmp::Ordering::Less => below,
        std::cmp::Ordering::Greater => above,
        std::cmp::Ordering::Equal => r,
    })
}

/// Whether the positive f64 `x` is exactly halfway between two values of
/// `kind` (so that rounding it is a tie). Past the largest finite value the
/// next value is the one the exponent range lacks (2^(emax+1)), as IEEE
/// rounding has it.
fn is_midpoint(kind: FloatKind, x: f64) -> bool {
    let lo = round_toward_zero(kind, x) as f64;
    lo != x && (lo + next_unbounded(kind, lo)) / 2.0 == x
}

/// The value of `kind` below (`up == false`) or above the positive `x`, for
/// an x that is not a value of the kind.
fn step(kind: FloatKind, x: f64, up: bool) -> f32 {
    let lo = round_toward_zero(kind, x);
    if !up {
        return lo;
    }
    let (_, _, emax) = format(kind);
    let n = next_unbounded(kind, lo as f64);
    if n >= 2f64.powi(emax + 1) {
        f32::INFINITY
    } else {
        n as f32
    }
}

/// The largest value of `kind` not above the positive f64 `x`.
fn round_toward_zero(kind: FloatKind, x: f64) -> f32 {
    let (p, emin, emax) = format(kind);
    let e = ((x.to_bits() >> 52) & 0x7ff) as i32 - 1023;
    let q = e.max(emin) - (p - 1);
    let r = (x * 2f64.powi(-q)).floor() * 2f64.powi(q);
    let max = (2.0 - 2f64.powi(1 - p)) * 2f64.powi(emax);
    r.min(max) as f32
}

/// The number one ulp of `kind` above the non-negative value `v` of the kind,
/// ignoring the kind's largest exponent.
fn next_unbounded(kind: FloatKind, v: f64) -> f64 {
    let (p, emin, _) = format(kind);
    let e = if v == 0.0 { emin } else { ((v.to_bits() >> 52) & 0x7ff) as i32 - 1023 };
    v + 2f64.powi(e.max(emin) - (p - 1))
}

/// A decimal number as (digits without leading or trailing zeros, exponent)
/// meaning 0.DIGITS x 10^exponent; zero is ("", 0).
fn decimal_parts(text: &str) -> Option<(Vec<u8>, i64)> {
    let (mant, exp) = match text.find(['e', 'E']) {
        Some(i) => (&text[..i], text[i + 1..].parse::<i64>().ok()?),
        None => (text, 0),
    };
    let (int, frac) = match mant.find('.') {
        Some(i) => (&mant[..i], &mant[i + 1..]),
        None => (mant, ""),
    };
    if !int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit()) {
        return None;
    }
    let mut digits: Vec<u8> = int.bytes().chain(frac.bytes()).collect();
    let mut point = int.len() as i64 + exp;
    let lead = digits.iter().take_while(|&&d| d == b'0').count();
    digits.drain(..lead);
    point -= lead as i64;
    while digits.last() == Some(&b'0') {
        digits.pop();
    }
    if digits.is_empty() {
        return Some((digits, 0));
    }
    Some((digits, point))
}

/// Compare the decimal `text` with the positive, finite f64 `x` exactly.
fn compare_decimal(text: &str, x: f64) -> Option<std::cmp::Ordering> {
    // Rust prints an f64 exactly when given enough digits; every f64 has at
    // most 767 significant decimal digits.
    let exact = format!("{x:.800e}");
    let (d1, p1) = decimal_parts(text)?;
    let (d2, p2) = decimal_parts(&exact)?;
    Some(match (d1.is_empty(), d2.is_empty()) {
        (true, true) => std::cmp::Ordering::Equal,
        (true, false) => std::cmp::Ordering::Less,
        (false, true) => std::cmp::Ordering::Greater,
        // Both normalized 0.d1d2... with d1 != 0: a larger exponent is a
        // larger number; with equal exponents the digit strings (without
        // trailing zeros) compare lexicographically.
        (false, false) => p1.cmp(&p2).then_with(|| d1.cmp(&d2)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_parts_normalize() {
        assert_eq!(decimal_parts("1.50"), Some((b"15".to_vec(), 1)));
        assert_eq!(decimal_parts("0.0025e2"), Some((b"25".to_vec(), 0)));
        assert_eq!(decimal_parts(".5"), Some((b"5".to_vec(), 0)));
        assert_eq!(decimal_parts("120."), Some((b"12".to_vec(), 3)));
        assert_eq!(decimal_parts("0.000"), Some((Vec::new(), 0)));
        assert_eq!(decimal_parts("1x"), None);
    }

    #[test]
    fn midpoint_literals_round_by_their_own_digits() {
        // 1 + 2^-11 is the midpoint between half 1 and 1 + 2^-10.
        let mid = "1.00048828125";
        assert_eq!(decimal_to_kind(FloatKind::F16, mid), Some(1.0));
        let above = "1.000488281250000000000000001";
        assert_eq!(above.parse::<f64>().unwrap(), 1.00048828125); // f64 lands on the midpoint
        assert_eq!(decimal_to_kind(FloatKind::F16, above), Some(1.0 + 2f32.powi(-10)));
        let below = "1.000488281249999999999999999";
        assert_eq!(decimal_to_kind(FloatKind::F16, below), Some(1.0));
        // The overflow threshold 65520 is a tie too (towards infinity).
        assert_eq!(decimal_to_kind(FloatKind::F16, "65520"), Some(f32::INFINITY));
        assert_eq!(decimal_to_kind(FloatKind::F16, "65519.9999999999999999999"), Some(65504.0));
        assert_eq!(decimal_to_kind(FloatKind::F16, "0.1"), Some(half::f16::from_f64(0.1).to_f32()));
    }

    #[test]
    fn f64_rounding_is_single() {
        // 1 + 2^-11 + 2^-30 rounds up in half; through f32 it would become the
        // midpoint 1 + 2^-11 and round down to 1.
        let x = 1.0 + 2f64.powi(-11) + 2f64.powi(-30);
        assert_eq!(half::f16::from_f32(x as f32).to_f32(), 1.0);
        assert_eq!(round_f64_to(FloatKind::F16, x), 1.0 + 2f32.powi(-10));
        assert_eq!(round_f64_to(FloatKind::F16, 65519.0), 65504.0);
        assert_eq!(round_f64_to(FloatKind::F16, 65520.0), f32::INFINITY);
        assert_eq!(round_f64_to(FloatKind::F16, -2f64.powi(-25)), -0.0);
        assert!(round_f64_to(FloatKind::F16, -2f64.powi(-25)).is_sign_negative());
        assert_eq!(round_f64_to(FloatKind::F16, 3.0 * 2f64.powi(-26)), 2f32.powi(-24));
        assert_eq!(round_f64_to(FloatKind::BF16, 2f64.powi(-133)), 2f64.powi(-133) as f32);
    }

    #[test]
    fn large_integers_round_once() {
        // 2^25 + 2^17 + 1 is just above a bfloat midpoint; through f32 the +1
        // is lost and the tie goes to even (down).
        let v = (1u64 << 25) + (1 << 17) + 1;
        assert_eq!(half::bf16::from_f32(v as f32).to_f32(), 2f32.powi(25));
        assert_eq!(int_to_kind(FloatKind::BF16, false, v), 2f32.powi(25) + 2f32.powi(18));
        assert_eq!(int_to_kind(FloatKind::BF16, true, v), -(2f32.powi(25) + 2f32.powi(18)));
        assert_eq!(int_to_kind(FloatKind::F16, false, u64::MAX), f32::INFINITY);
    }
}
