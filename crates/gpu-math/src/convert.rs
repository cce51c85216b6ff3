//! Conversions between floating and integer lane values.

use crate::int::{normalize, IntKind};

/// float -> integer conversion (`static_cast`, implicit conversion,
/// `convert_*`): truncate toward zero, **saturate** to the integer kind's
/// range, NaN -> 0.
///
/// C++ leaves out-of-range conversions undefined; Apple GPUs saturate (the
/// hardware conversion instructions clamp and map NaN to 0), and that is the
/// behaviour modelled here. It also matches Rust's `as`.
#[inline]
pub fn float_to_int(k: IntKind, x: f32) -> u64 {
    let v = match (k.width(), k.signed) {
        (8, true) => x as i8 as i64 as u64,
        (8, false) => x as u8 as u64,
        (16, true) => x as i16 as i64 as u64,
        (16, false) => x as u16 as u64,
        (32, true) => x as i32 as i64 as u64,
        (32, false) => x as u32 as u64,
        (64, true) => x as i64 as u64,
        (64, false) => x as u64,
        (w, signed) => {
            // Non-MSL widths: saturate through f64 bounds.
            if x.is_nan() {
                0
            } else {
                let t = x.trunc() as f64;
                let (lo, hi) =
                    if signed { (-(2f64.powi(w as i32 - 1)), 2f64.powi(w as i32 - 1) - 1.0) } else { (0.0, 2f64.powi(w as i32) - 1.0) };
                t.clamp(lo, hi) as i64 as u64
            }
        }
    };
    normalize(k, v)
}

/// integer -> float conversion: round to nearest even, exactly from the
/// full 64-bit value (64-bit kinds included). For half / bfloat elements the
/// caller then rounds the f32 with `round_to`; that second rounding is exact
/// for every int of at most 24 significant bits.
#[inline]
pub fn int_to_float(k: IntKind, v: u64) -> f32 {
    let v = normalize(k, v);
    if k.signed {
        v as i64 as f32
    } else {
        v as f32
    }
}

/// Conversion to `bool`: x != 0, so NaN -> true and ±0 -> false.
#[inline]
pub fn float_to_bool(x: f32) -> bool {
    x != 0.0
}
