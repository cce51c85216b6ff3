//! Geometric functions on short vectors (2 to 4 elements), computed in f32;
//! the caller rounds each element to half / bfloat if needed.
//!
//! Slices of different lengths are not an error: the functions use the
//! common prefix (the shorter length) and leave any extra `out` elements
//! untouched, so nothing panics.
//!
//! The float `normalize` is named [`normalize`] inside this module and
//! re-exported at the crate root as `normalize_vec`, because the root
//! `normalize` is the integer normalization.

/// Sum of the element-wise products (plain f32 multiply-adds, left to right).
#[inline]
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).fold(0.0, |acc, (x, y)| acc + x * y)
}

/// sqrt(dot(a, a)) (no overflow rescaling, like MSL's precise length is not
/// required to do).
#[inline]
pub fn length(a: &[f32]) -> f32 {
    dot(a, a).sqrt()
}

/// length(a - b).
#[inline]
pub fn distance(a: &[f32], b: &[f32]) -> f32 {
    a.iter()
        .zip(b)
        .fold(0.0f32, |acc, (x, y)| {
            let d = x - y;
            acc + d * d
        })
        .sqrt()
}

/// out = a / length(a) (as a * rsqrt(dot(a, a))). The zero vector gives NaN
/// elements (MSL: undefined).
#[inline]
pub fn normalize(a: &[f32], out: &mut [f32]) {
    let inv = 1.0 / length(a);
    for (o, x) in out.iter_mut().zip(a) {
        *o = x * inv;
    }
}

/// Alias of [`normalize`] for the crate root.
#[inline]
pub fn normalize_vec(a: &[f32], out: &mut [f32]) {
    normalize(a, out)
}

/// Cross product of two 3-vectors.
#[inline]
pub fn cross(a: &[f32; 3], b: &[f32; 3]) -> [f32; 3] {
    [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
}

/// out = i - 2 * dot(n, i) * n (n should be normalized).
#[inline]
pub fn reflect(i: &[f32], n: &[f32], out: &mut [f32]) {
    let d = 2.0 * dot(n, i);
    for ((o, x), m) in out.iter_mut().zip(i).zip(n) {
        *o = x - d * m;
    }
}

/// Refraction of incident `i` at a surface with normal `n` and ratio of
/// indices `eta`: k = 1 - eta^2 (1 - dot(n, i)^2); if k < 0 the result is the
/// zero vector, else eta * i - (eta * dot(n, i) + sqrt(k)) * n.
#[inline]
pub fn refract(i: &[f32], n: &[f32], eta: f32, out: &mut [f32]) {
    let d = dot(n, i);
    let k = 1.0 - eta * eta * (1.0 - d * d);
    if k < 0.0 {
        for o in out.iter_mut().zip(i).zip(n).map(|((o, _), _)| o) {
            *o = 0.0;
        }
        return;
    }
    let f = eta * d + k.sqrt();
    for ((o, x), m) in out.iter_mut().zip(i).zip(n) {
        *o = eta * x - f * m;
    }
}

/// out = dot(nref, i) < 0 ? n : -n.
#[inline]
pub fn faceforward(n: &[f32], i: &[f32], nref: &[f32], out: &mut [f32]) {
    // A NaN dot compares false, so it gives -n.
    let keep = dot(nref, i) < 0.0;
    for (o, x) in out.iter_mut().zip(n) {
        *o = if keep { *x } else { -x };
    }
}
