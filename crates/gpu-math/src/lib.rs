//! Per-lane scalar semantics of the Metal Shading Language (MSL) standard
//! library, for the simulated Apple GPU.
//!
//! Everything here is a pure function on one lane's scalar values. The
//! interpreter names the functions it needs **once** (at lowering time) as
//! [`FloatFn`], [`IntFn`] or [`GeometricFn`] and gets plain `fn` pointers back
//! (every name has one, by construction), which it then calls in its per-lane
//! loops; tools and tests may look them up by MSL name ([`float_unary`],
//! [`int_binary`], ...). No function allocates, and no function
//! panics for any input (this is property-tested).
//!
//! Conventions:
//! * Floating-point math is done in `f32`; for `half` / `bfloat` elements the
//!   caller rounds the `f32` result with [`round_to`].
//! * Integers of every width travel as `u64` holding the value zero-extended
//!   (unsigned kinds) or sign-extended (signed kinds) to 64 bits; see
//!   [`normalize`]. Every integer function returns its result in that form.
//! * Where the MSL specification is silent or says "undefined", the behaviour
//!   chosen is documented at the function (usually C99 / IEEE-754 or what the
//!   GPU hardware does), and it never panics.

mod convert;
mod float;
pub mod geometric;
mod int;
mod round;
pub mod scalar;

pub use convert::{float_to_bool, float_to_int, int_to_float};
pub use float::{
    cos, float_binary, float_binary_in, float_predicate, float_predicate_in, float_relation, float_ternary, float_ternary_in, float_unary,
    fmax, fmin, frexp, is_normal_in, ldexp, modf, round_to, sin, FloatFn, FloatImpl, FloatKind,
};
pub use geometric::{cross, distance, dot, faceforward, length, normalize_vec, reflect, refract, GeometricFn};
pub use int::{
    extract_bits, insert_bits, int_binary, int_cmp, int_op, int_ternary, int_unary, normalize, IntFn, IntImpl, IntKind, IntOp, IntTernaryFn,
};
pub use round::{decimal_to_kind, int_to_kind, round_f64_to};
