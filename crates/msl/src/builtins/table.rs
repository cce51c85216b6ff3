//! The builtin functions of the Metal standard library that compute kernels
//! call, as data. Each entry is `(name, kind, namespaces, declarations)`; the
//! declarations are in the signature language of [`super::sig`], `$` being
//! the entry's name. Several entries may share a name (e.g. `abs` for
//! floating-point in every namespace and for integers in `metal::` only):
//! they merge into one function, keeping the first entry's kind.
//!
//! Sources: the Metal Shading Language Specification (math, integer,
//! common, geometric, relational, SIMD-group, quad-group, atomic,
//! synchronization and SIMD-group matrix function tables).

use super::BuiltinKind::{self, *};

/// Which namespaces an entry's declarations are visible in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ns {
    /// `metal::` only.
    M,
    /// `metal::`, `metal::fast::` and `metal::precise::`.
    Mfp,
}
use Ns::*;

pub(crate) type Entry = (&'static str, BuiltinKind, Ns, &'static [&'static str]);

// Shared declaration texts.
const F1: &str = "Tn $(Tn x) where T: floating";
const F2: &str = "Tn $(Tn x, Tn y) where T: floating";
const F3: &str = "Tn $(Tn x, Tn y, Tn z) where T: floating";
const FCLASS: &str = "booln $(Tn x) where T: floating";
const I1: &str = "Tn $(Tn x) where T: integer";
const I2: &str = "Tn $(Tn x, Tn y) where T: integer";
const I3: &str = "Tn $(Tn x, Tn y, Tn z) where T: integer";
const N2: &str = "Tn $(Tn x, Tn y) where T: num";
const N3: &str = "Tn $(Tn x, Tn y, Tn z) where T: num";
const REDUCE: &str = "Tn $(Tn data) where T: num";
const REDUCE_BITS: &str = "Tn $(Tn data) where T: integer";
const LANE: &str = "Tn $(Tn data, ushort lane) where T: any";
const DELTA: &str = "Tn $(Tn data, ushort delta) where T: any";
const FILL: &str = "Tn $(Tn data, Tn filling_data, ushort delta) where T: any";
const FILL_MOD: &str = "Tn $(Tn data, Tn filling_data, ushort delta, ushort modulo) where T: any";
const ATOMIC_RMW_ARITH: &str =
    "T $(volatile S atomic<T>* object, T operand, memory_order order) where T: int|uint|float, S: device|threadgroup";
const ATOMIC_RMW_BITS: &str = "T $(volatile S atomic<T>* object, T operand, memory_order order) where T: int|uint, S: device|threadgroup";

pub(crate) static TABLE: &[Entry] = &[
    // ---- Math (section "Math Functions"); float ones also in fast:: and precise::
    ("abs", Math, Mfp, &[F1]),
    ("abs", Integer, M, &[I1]),
    ("fabs", Math, Mfp, &[F1]),
    ("acos", Math, Mfp, &[F1]),
    ("acosh", Math, Mfp, &[F1]),
    ("asin", Math, Mfp, &[F1]),
    ("asinh", Math, Mfp, &[F1]),
    ("atan", Math, Mfp, &[F1]),
    ("atan2", Math, Mfp, &["Tn atan2(Tn y, Tn x) where T: floating"]),
    ("atanh", Math, Mfp, &[F1]),
    ("ceil", Math, Mfp, &[F1]),
    ("copysign", Math, Mfp, &[F2]),
    ("cos", Math, Mfp, &[F1]),
    ("cosh", Math, Mfp, &[F1]),
    ("cospi", Math, Mfp, &[F1]),
    ("divide", Math, Mfp, &["Tn divide(Tn x, Tn y) where T: float"]),
    ("exp", Math, Mfp, &[F1]),
    ("exp2", Math, Mfp, &[F1]),
    ("exp10", Math, Mfp, &[F1]),
    ("fdim", Math, Mfp, &[F2]),
    ("floor", Math, Mfp, &[F1]),
    ("fma", Math, Mfp, &["Tn fma(Tn a, Tn b, Tn c) where T: floating"]),
    ("fmax", Math, Mfp, &[F2]),
    ("fmin", Math, Mfp, &[F2]),
    ("fmax3", Math, Mfp, &[F3]),
    ("fmin3", Math, Mfp, &[F3]),
    ("fmedian3", Math, Mfp, &[F3]),
    ("fmod", Math, Mfp, &[F2]),
    ("fract", Math, Mfp, &[F1]),
    ("frexp", Math, Mfp, &["Tn frexp(Tn x, thread intn& exponent) where T: floating"]),
    ("ilogb", Math, Mfp, &["intn ilogb(Tn x) where T: floating"]),
    ("ldexp", Math, Mfp, &["Tn ldexp(Tn x, intn k) where T: floating"]),
    ("log", Math, Mfp, &[F1]),
    ("log2", Math, Mfp, &[F1]),
    ("log10", Math, Mfp, &[F1]),
    ("modf", Math, Mfp, &["Tn modf(Tn x, thread Tn& intval) where T: floating"]),
    ("nextafter", Math, Mfp, &[F2]),
    ("pow", Math, Mfp, &[F2]),
    ("powr", Math, Mfp, &[F2]),
    ("rint", Math, Mfp, &[F1]),
    ("round", Math, Mfp, &[F1]),
    ("rsqrt", Math, Mfp, &[F1]),
    ("sin", Math, Mfp, &[F1]),
    ("sincos", Math, Mfp, &["Tn sincos(Tn x, thread Tn& cosval) where T: floating"]),
    ("sinh", Math, Mfp, &[F1]),
    ("sinpi", Math, Mfp, &[F1]),
    ("sqrt", Math, Mfp, &[F1]),
    ("tan", Math, Mfp, &[F1]),
    ("tanh", Math, Mfp, &[F1]),
    ("tanpi", Math, Mfp, &[F1]),
    ("trunc", Math, Mfp, &[F1]),
    // ---- Relational
    ("isfinite", Relational, M, &[FCLASS]),
    ("isinf", Relational, M, &[FCLASS]),
    ("isnan", Relational, M, &[FCLASS]),
    ("isnormal", Relational, M, &[FCLASS]),
    ("signbit", Relational, M, &[FCLASS]),
    ("isordered", Relational, M, &["booln isordered(Tn x, Tn y) where T: floating"]),
    ("isunordered", Relational, M, &["booln isunordered(Tn x, Tn y) where T: floating"]),
    ("all", Relational, M, &["bool all(booln x)"]),
    ("any", Relational, M, &["bool any(booln x)"]),
    ("select", Relational, M, &["Tn select(Tn a, Tn b, booln c) where T: any"]),
    // ---- Common (clamp, min, max also take integers)
    ("clamp", Common, Mfp, &["Tn clamp(Tn x, Tn minval, Tn maxval) where T: num"]),
    ("mix", Common, Mfp, &["Tn mix(Tn x, Tn y, Tn a) where T: floating"]),
    ("saturate", Common, Mfp, &[F1]),
    ("sign", Common, Mfp, &[F1]),
    ("smoothstep", Common, Mfp, &["Tn smoothstep(Tn edge0, Tn edge1, Tn x) where T: floating"]),
    ("step", Common, Mfp, &["Tn step(Tn edge, Tn x) where T: floating"]),
    // In `fast::`/`precise::` too: candle's reductions call `fast::max`.
    ("min", Common, Mfp, &[N2]),
    ("max", Common, Mfp, &[N2]),
    ("min3", Common, M, &[N3]),
    ("max3", Common, M, &[N3]),
    ("median3", Common, M, &[N3]),
    // ---- Integer
    ("absdiff", Integer, M, &[I2]),
    ("addsat", Integer, M, &[I2]),
    ("subsat", Integer, M, &[I2]),
    ("clz", Integer, M, &[I1]),
    ("ctz", Integer, M, &[I1]),
    ("popcount", Integer, M, &[I1]),
    ("reverse_bits", Integer, M, &[I1]),
    ("extract_bits", Integer, M, &["Tn extract_bits(Tn x, uint offset, uint bits) where T: integer"]),
    ("insert_bits", Integer, M, &["Tn insert_bits(Tn base, Tn insert, uint offset, uint bits) where T: integer"]),
    ("hadd", Integer, M, &[I2]),
    ("rhadd", Integer, M, &[I2]),
    ("mad24", Integer, M, &["Tn mad24(Tn x, Tn y, Tn z) where T: int|uint"]),
    ("mul24", Integer, M, &["Tn mul24(Tn x, Tn y) where T: int|uint"]),
    ("madhi", Integer, M, &[I3]),
    ("madsat", Integer, M, &[I3]),
    ("mulhi", Integer, M, &[I2]),
    ("rotate", Integer, M, &["Tn rotate(Tn v, Tn i) where T: integer"]),
    // ---- Geometric
    ("cross", Geometric, Mfp, &["T3 cross(T3 x, T3 y) where T: floating"]),
    ("distance", Geometric, Mfp, &["T distance(Tn x, Tn y) where T: floating"]),
    ("distance_squared", Geometric, Mfp, &["T distance_squared(Tn x, Tn y) where T: floating"]),
    ("dot", Geometric, Mfp, &["T dot(Tn x, Tn y) where T: floating"]),
    ("faceforward", Geometric, Mfp, &["Tn faceforward(Tn N, Tn I, Tn Nref) where T: floating"]),
    ("length", Geometric, Mfp, &["T length(Tn x) where T: floating"]),
    ("length_squared", Geometric, Mfp, &["T length_squared(Tn x) where T: floating"]),
    ("normalize", Geometric, Mfp, &["Tn normalize(Tn x) where T: floating"]),
    ("reflect", Geometric, Mfp, &["Tn reflect(Tn I, Tn N) where T: floating"]),
    ("refract", Geometric, Mfp, &["Tn refract(Tn I, Tn N, T eta) where T: floating"]),
    // ---- Synchronization
    ("threadgroup_barrier", Barrier, M, &["void threadgroup_barrier(mem_flags flags)"]),
    ("simdgroup_barrier", Barrier, M, &["void simdgroup_barrier(mem_flags flags)"]),
    (
        "atomic_thread_fence",
        Barrier,
        M,
        &["void atomic_thread_fence(mem_flags flags, memory_order order, thread_scope scope = thread_scope_device)"],
    ),
    // ---- Atomics (MSL has only the _explicit forms; `memory_order_relaxed`
    // is the order kernels use; the optional trailing `memory_scope` of
    // newer versions is not modelled). atomic<float> supports load, store,
    // exchange, compare-exchange and add/sub; atomic<ulong> only the
    // void atomic_min_explicit / atomic_max_explicit.
    (
        "atomic_load_explicit",
        Atomic,
        M,
        &["T atomic_load_explicit(const volatile S atomic<T>* object, memory_order order) where T: int|uint|bool|float, S: device|threadgroup"],
    ),
    (
        "atomic_store_explicit",
        Atomic,
        M,
        &["void atomic_store_explicit(volatile S atomic<T>* object, T desired, memory_order order) where T: int|uint|bool|float, S: device|threadgroup"],
    ),
    (
        "atomic_exchange_explicit",
        Atomic,
        M,
        &["T atomic_exchange_explicit(volatile S atomic<T>* object, T desired, memory_order order) where T: int|uint|bool|float, S: device|threadgroup"],
    ),
    (
        "atomic_compare_exchange_weak_explicit",
        Atomic,
        M,
        &["bool atomic_compare_exchange_weak_explicit(volatile S atomic<T>* object, thread T* expected, T desired, memory_order success, memory_order failure) where T: int|uint|bool|float, S: device|threadgroup"],
    ),
    ("atomic_fetch_add_explicit", Atomic, M, &[ATOMIC_RMW_ARITH]),
    ("atomic_fetch_sub_explicit", Atomic, M, &[ATOMIC_RMW_ARITH]),
    ("atomic_fetch_and_explicit", Atomic, M, &[ATOMIC_RMW_BITS]),
    ("atomic_fetch_or_explicit", Atomic, M, &[ATOMIC_RMW_BITS]),
    ("atomic_fetch_xor_explicit", Atomic, M, &[ATOMIC_RMW_BITS]),
    ("atomic_fetch_min_explicit", Atomic, M, &[ATOMIC_RMW_BITS]),
    ("atomic_fetch_max_explicit", Atomic, M, &[ATOMIC_RMW_BITS]),
    // 64-bit min/max (Apple GPU families 8 and later): no fetch, device only.
    ("atomic_min_explicit", Atomic, M, &["void $(volatile device atomic<ulong>* object, ulong operand, memory_order order)"]),
    ("atomic_max_explicit", Atomic, M, &["void $(volatile device atomic<ulong>* object, ulong operand, memory_order order)"]),
    // ---- SIMD-group functions. Lane ids, deltas and masks are `ushort`.
    ("simd_sum", Simd, M, &[REDUCE]),
    ("simd_product", Simd, M, &[REDUCE]),
    ("simd_min", Simd, M, &[REDUCE]),
    ("simd_max", Simd, M, &[REDUCE]),
    ("simd_and", Simd, M, &[REDUCE_BITS]),
    ("simd_or", Simd, M, &[REDUCE_BITS]),
    ("simd_xor", Simd, M, &[REDUCE_BITS]),
    ("simd_prefix_inclusive_sum", Simd, M, &[REDUCE]),
    ("simd_prefix_inclusive_product", Simd, M, &[REDUCE]),
    ("simd_prefix_exclusive_sum", Simd, M, &[REDUCE]),
    ("simd_prefix_exclusive_product", Simd, M, &[REDUCE]),
    ("simd_broadcast", Simd, M, &[LANE]),
    ("simd_broadcast_first", Simd, M, &["Tn simd_broadcast_first(Tn data) where T: any"]),
    ("simd_shuffle", Simd, M, &[LANE]),
    ("simd_shuffle_xor", Simd, M, &["Tn simd_shuffle_xor(Tn data, ushort mask) where T: any"]),
    ("simd_shuffle_up", Simd, M, &[DELTA]),
    ("simd_shuffle_down", Simd, M, &[DELTA]),
    ("simd_shuffle_rotate_up", Simd, M, &[DELTA]),
    ("simd_shuffle_rotate_down", Simd, M, &[DELTA]),
    ("simd_shuffle_and_fill_up", Simd, M, &[FILL, FILL_MOD]),
    ("simd_shuffle_and_fill_down", Simd, M, &[FILL, FILL_MOD]),
    ("simd_all", Simd, M, &["bool simd_all(bool expr)"]),
    ("simd_any", Simd, M, &["bool simd_any(bool expr)"]),
    // These return `simd_vote`, whose only use in kernels is converting to
    // its `vote_t` (a 64-bit mask); we model the result as `ulong`.
    ("simd_ballot", Simd, M, &["ulong simd_ballot(bool expr)"]),
    ("simd_active_threads_mask", Simd, M, &["ulong simd_active_threads_mask()"]),
    ("simd_is_first", Simd, M, &["bool simd_is_first()"]),
    ("simd_is_helper_thread", Simd, M, &["bool simd_is_helper_thread()"]),
    // ---- Quad-group functions (4 lanes).
    ("quad_sum", Quad, M, &[REDUCE]),
    ("quad_product", Quad, M, &[REDUCE]),
    ("quad_min", Quad, M, &[REDUCE]),
    ("quad_max", Quad, M, &[REDUCE]),
    ("quad_and", Quad, M, &[REDUCE_BITS]),
    ("quad_or", Quad, M, &[REDUCE_BITS]),
    ("quad_xor", Quad, M, &[REDUCE_BITS]),
    ("quad_prefix_inclusive_sum", Quad, M, &[REDUCE]),
    ("quad_prefix_inclusive_product", Quad, M, &[REDUCE]),
    ("quad_prefix_exclusive_sum", Quad, M, &[REDUCE]),
    ("quad_prefix_exclusive_product", Quad, M, &[REDUCE]),
    ("quad_broadcast", Quad, M, &[LANE]),
    ("quad_broadcast_first", Quad, M, &["Tn quad_broadcast_first(Tn data) where T: any"]),
    ("quad_shuffle", Quad, M, &[LANE]),
    ("quad_shuffle_xor", Quad, M, &["Tn quad_shuffle_xor(Tn data, ushort mask) where T: any"]),
    ("quad_shuffle_up", Quad, M, &[DELTA]),
    ("quad_shuffle_down", Quad, M, &[DELTA]),
    ("quad_shuffle_rotate_up", Quad, M, &[DELTA]),
    ("quad_shuffle_rotate_down", Quad, M, &[DELTA]),
    ("quad_shuffle_and_fill_up", Quad, M, &[FILL, FILL_MOD]),
    ("quad_shuffle_and_fill_down", Quad, M, &[FILL, FILL_MOD]),
    ("quad_all", Quad, M, &["bool quad_all(bool expr)"]),
    ("quad_any", Quad, M, &["bool quad_any(bool expr)"]),
    // `quad_vote`: only the low 4 bits are used; modelled as `ushort`.
    ("quad_ballot", Quad, M, &["ushort quad_ballot(bool expr)"]),
    ("quad_active_threads_mask", Quad, M, &["ushort quad_active_threads_mask()"]),
    ("quad_is_first", Quad, M, &["bool quad_is_first()"]),
    ("quad_is_helper_thread", Quad, M, &["bool quad_is_helper_thread()"]),
    // ---- SIMD-group matrices (8x8 of half, float or bfloat).
    (
        "simdgroup_load",
        SimdMatrix,
        M,
        &["void simdgroup_load(thread simdgroup_matrix<T,8,8>& d, const S T* src, ulong elements_per_row = 8, ulong2 matrix_origin = 0, bool transpose_matrix = false) where T: floating, S: device|threadgroup"],
    ),
    (
        "simdgroup_store",
        SimdMatrix,
        M,
        &["void simdgroup_store(simdgroup_matrix<T,8,8> a, S T* dst, ulong elements_per_row = 8, ulong2 matrix_origin = 0, bool transpose_matrix = false) where T: floating, S: device|threadgroup"],
    ),
    (
        "simdgroup_multiply",
        SimdMatrix,
        M,
        &["void simdgroup_multiply(thread simdgroup_matrix<T,8,8>& d, simdgroup_matrix<T,8,8> a, simdgroup_matrix<T,8,8> b) where T: floating"],
    ),
    (
        "simdgroup_multiply_accumulate",
        SimdMatrix,
        M,
        // Apple's compiler also takes half or bfloat factors with a float
        // accumulator (PyTorch's GEMMs); the product is computed in float.
        &[
            "void simdgroup_multiply_accumulate(thread simdgroup_matrix<T,8,8>& d, simdgroup_matrix<T,8,8> a, simdgroup_matrix<T,8,8> b, simdgroup_matrix<T,8,8> c) where T: floating",
            "void simdgroup_multiply_accumulate(thread simdgroup_matrix<float,8,8>& d, simdgroup_matrix<T,8,8> a, simdgroup_matrix<T,8,8> b, simdgroup_matrix<float,8,8> c) where T: half|bfloat",
        ],
    ),
    // Called as make_filled_simdgroup_matrix<T, 8, 8>(value); the checker
    // handles the explicit template arguments.
    (
        "make_filled_simdgroup_matrix",
        SimdMatrix,
        M,
        &["simdgroup_matrix<T,8,8> make_filled_simdgroup_matrix(T value) where T: floating"],
    ),
];

/// Named constants of the Metal headers: `(name, type, value)` where the
/// type is `float`, `half`, `int`, `uint`, `long` or `ulong`, written as
/// a scalar name.
pub(crate) enum CV {
    I(i64),
    U(u64),
    F(f64),
}

pub(crate) static CONSTANTS: &[(&str, &str, CV)] = {
    use std::f64::consts as c;
    use CV::*;
    &[
        // Math constants, float and half versions.
        ("M_E_F", "float", F(c::E)),
        ("M_LOG2E_F", "float", F(c::LOG2_E)),
        ("M_LOG10E_F", "float", F(c::LOG10_E)),
        ("M_LN2_F", "float", F(c::LN_2)),
        ("M_LN10_F", "float", F(c::LN_10)),
        ("M_PI_F", "float", F(c::PI)),
        ("M_PI_2_F", "float", F(c::FRAC_PI_2)),
        ("M_PI_4_F", "float", F(c::FRAC_PI_4)),
        ("M_1_PI_F", "float", F(c::FRAC_1_PI)),
        ("M_2_PI_F", "float", F(c::FRAC_2_PI)),
        ("M_2_SQRTPI_F", "float", F(c::FRAC_2_SQRT_PI)),
        ("M_SQRT2_F", "float", F(c::SQRT_2)),
        ("M_SQRT1_2_F", "float", F(c::FRAC_1_SQRT_2)),
        ("M_E_H", "half", F(c::E)),
        ("M_LOG2E_H", "half", F(c::LOG2_E)),
        ("M_LOG10E_H", "half", F(c::LOG10_E)),
        ("M_LN2_H", "half", F(c::LN_2)),
        ("M_LN10_H", "half", F(c::LN_10)),
        ("M_PI_H", "half", F(c::PI)),
        ("M_PI_2_H", "half", F(c::FRAC_PI_2)),
        ("M_PI_4_H", "half", F(c::FRAC_PI_4)),
        ("M_1_PI_H", "half", F(c::FRAC_1_PI)),
        ("M_2_PI_H", "half", F(c::FRAC_2_PI)),
        ("M_2_SQRTPI_H", "half", F(c::FRAC_2_SQRT_PI)),
        ("M_SQRT2_H", "half", F(c::SQRT_2)),
        ("M_SQRT1_2_H", "half", F(c::FRAC_1_SQRT_2)),
        // Special floating-point values.
        ("MAXFLOAT", "float", F(f32::MAX as f64)),
        ("HUGE_VALF", "float", F(f64::INFINITY)),
        ("INFINITY", "float", F(f64::INFINITY)),
        ("NAN", "float", F(f64::NAN)),
        ("MAXHALF", "half", F(65504.0)),
        ("HUGE_VALH", "half", F(f64::INFINITY)),
        // float limits
        ("FLT_DIG", "int", I(6)),
        ("FLT_MANT_DIG", "int", I(24)),
        ("FLT_MAX_10_EXP", "int", I(38)),
        ("FLT_MAX_EXP", "int", I(128)),
        ("FLT_MIN_10_EXP", "int", I(-37)),
        ("FLT_MIN_EXP", "int", I(-125)),
        ("FLT_RADIX", "int", I(2)),
        ("FLT_MAX", "float", F(f32::MAX as f64)),
        ("FLT_MIN", "float", F(f32::MIN_POSITIVE as f64)),
        ("FLT_EPSILON", "float", F(f32::EPSILON as f64)),
        // half limits
        ("HALF_DIG", "int", I(3)),
        ("HALF_MANT_DIG", "int", I(11)),
        ("HALF_MAX_10_EXP", "int", I(4)),
        ("HALF_MAX_EXP", "int", I(16)),
        ("HALF_MIN_10_EXP", "int", I(-4)),
        ("HALF_MIN_EXP", "int", I(-13)),
        ("HALF_RADIX", "int", I(2)),
        ("HALF_MAX", "half", F(65504.0)),
        ("HALF_MIN", "half", F(6.103515625e-05)),
        ("HALF_EPSILON", "half", F(9.765625e-04)),
        // Integer limits
        ("CHAR_BIT", "int", I(8)),
        ("SCHAR_MAX", "int", I(i8::MAX as i64)),
        ("SCHAR_MIN", "int", I(i8::MIN as i64)),
        ("UCHAR_MAX", "int", I(u8::MAX as i64)),
        ("CHAR_MAX", "int", I(i8::MAX as i64)),
        ("CHAR_MIN", "int", I(i8::MIN as i64)),
        ("USHRT_MAX", "int", I(u16::MAX as i64)),
        ("SHRT_MAX", "int", I(i16::MAX as i64)),
        ("SHRT_MIN", "int", I(i16::MIN as i64)),
        ("UINT_MAX", "uint", U(u32::MAX as u64)),
        ("INT_MAX", "int", I(i32::MAX as i64)),
        ("INT_MIN", "int", I(i32::MIN as i64)),
        ("ULONG_MAX", "ulong", U(u64::MAX)),
        ("LONG_MAX", "long", I(i64::MAX)),
        ("LONG_MIN", "long", I(i64::MIN)),
    ]
};
