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

/// The geometric functions of the standard library, named by type so a
/// caller cannot ask for one that has no implementation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GeometricFn {
    Dot,
    Length,
    LengthSquared,
    Distance,
    DistanceSquared,
    Normalize,
    Cross,
    Reflect,
    Refract,
    Faceforward,
}

impl GeometricFn {
    /// Apply the function to a call's arguments (each a vector widened to
    /// f32; `refract`'s `eta` a one-element slice) and write its result into
    /// `out`; returns the result's length (1 for the scalar results). A
    /// missing argument or element reads as 0, so nothing panics.
    pub fn eval(self, args: &[&[f32]], out: &mut [f32; 4]) -> usize {
        let arg = |i: usize| -> &[f32] { args.get(i).copied().unwrap_or(&[]) };
        let a = arg(0);
        let n = a.len().min(4);
        let scalar = |out: &mut [f32; 4], v: f32| {
            out[0] = v;
            1
        };
        match self {
            GeometricFn::Dot => scalar(out, dot(a, arg(1))),
            GeometricFn::Length => scalar(out, length(a)),
            GeometricFn::LengthSquared => scalar(out, dot(a, a)),
            GeometricFn::Distance => scalar(out, distance(a, arg(1))),
            GeometricFn::DistanceSquared => {
                let d = a.iter().zip(arg(1)).fold(0.0f32, |acc, (x, y)| acc + (x - y) * (x - y));
                scalar(out, d)
            }
            GeometricFn::Normalize => {
                normalize(a, &mut out[..n]);
                n
            }
            GeometricFn::Cross => {
                let three = |v: &[f32]| [0, 1, 2].map(|i| v.get(i).copied().unwrap_or(0.0));
                out[..3].copy_from_slice(&cross(&three(a), &three(arg(1))));
                3
            }
            GeometricFn::Reflect => {
                reflect(a, arg(1), &mut out[..n]);
                n
            }
            GeometricFn::Refract => {
                let eta = arg(2).first().copied().unwrap_or(0.0);
                refract(a, arg(1), eta, &mut out[..n]);
                n
            }
            GeometricFn::Faceforward => {
                faceforward(a, arg(1), arg(2), &mut out[..n]);
                n
            }
        }
    }
}
