//! The builtin functions of the Metal standard library that compute kernels
//! call, as data. Each entry is `(id, kind, namespaces, declarations)`; the
//! declarations are in the signature language of [`super::sig`], `$` being
//! the entry's name (`id.name()`). Several entries may share a name (e.g. `abs` for
//! floating-point in every namespace and for integers in `metal::` only):
//! they merge into one function, keeping the first entry's kind.
//!
//! Sources: the Metal Shading Language Specification (math, integer,
//! common, geometric, relational, SIMD-group, quad-group, atomic,
//! synchronization and SIMD-group matrix function tables).

use super::BuiltinId::{self, *};
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

pub(crate) type Entry = (BuiltinId, BuiltinKind, Ns, &'static [&'static str]);

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
    (Abs, Math, Mfp, &[F1]),
    (Abs, Integer, M, &[I1]),
    (Fabs, Math, Mfp, &[F1]),
    (Acos, Math, Mfp, &[F1]),
    (Acosh, Math, Mfp, &[F1]),
    (Asin, Math, Mfp, &[F1]),
    (Asinh, Math, Mfp, &[F1]),
    (Atan, Math, Mfp, &[F1]),
    (Atan2, Math, Mfp, &["Tn atan2(Tn y, Tn x) where T: floating"]),
    (Atanh, Math, Mfp, &[F1]),
    (Ceil, Math, Mfp, &[F1]),
    (Copysign, Math, Mfp, &[F2]),
    (Cos, Math, Mfp, &[F1]),
    (Cosh, Math, Mfp, &[F1]),
    (Cospi, Math, Mfp, &[F1]),
    (Divide, Math, Mfp, &["Tn divide(Tn x, Tn y) where T: float"]),
    (Exp, Math, Mfp, &[F1]),
    (Exp2, Math, Mfp, &[F1]),
    (Exp10, Math, Mfp, &[F1]),
    (Fdim, Math, Mfp, &[F2]),
    (Floor, Math, Mfp, &[F1]),
    (Fma, Math, Mfp, &["Tn fma(Tn a, Tn b, Tn c) where T: floating"]),
    (Fmax, Math, Mfp, &[F2]),
    (Fmin, Math, Mfp, &[F2]),
    (Fmax3, Math, Mfp, &[F3]),
    (Fmin3, Math, Mfp, &[F3]),
    (Fmedian3, Math, Mfp, &[F3]),
    (Fmod, Math, Mfp, &[F2]),
    (Fract, Math, Mfp, &[F1]),
    (Frexp, Math, Mfp, &["Tn frexp(Tn x, thread intn& exponent) where T: floating"]),
    (Ilogb, Math, Mfp, &["intn ilogb(Tn x) where T: floating"]),
    (Ldexp, Math, Mfp, &["Tn ldexp(Tn x, intn k) where T: floating"]),
    (Log, Math, Mfp, &[F1]),
    (Log2, Math, Mfp, &[F1]),
    (Log10, Math, Mfp, &[F1]),
    (Modf, Math, Mfp, &["Tn modf(Tn x, thread Tn& intval) where T: floating"]),
    (Nextafter, Math, Mfp, &[F2]),
    (Pow, Math, Mfp, &[F2]),
    (Powr, Math, Mfp, &[F2]),
    (Rint, Math, Mfp, &[F1]),
    (Round, Math, Mfp, &[F1]),
    (Rsqrt, Math, Mfp, &[F1]),
    (Sin, Math, Mfp, &[F1]),
    (Sincos, Math, Mfp, &["Tn sincos(Tn x, thread Tn& cosval) where T: floating"]),
    (Sinh, Math, Mfp, &[F1]),
    (Sinpi, Math, Mfp, &[F1]),
    (Sqrt, Math, Mfp, &[F1]),
    (Tan, Math, Mfp, &[F1]),
    (Tanh, Math, Mfp, &[F1]),
    (Tanpi, Math, Mfp, &[F1]),
    (Trunc, Math, Mfp, &[F1]),
    // ---- Relational
    (Isfinite, Relational, M, &[FCLASS]),
    (Isinf, Relational, M, &[FCLASS]),
    (Isnan, Relational, M, &[FCLASS]),
    (Isnormal, Relational, M, &[FCLASS]),
    (Signbit, Relational, M, &[FCLASS]),
    (Isordered, Relational, M, &["booln isordered(Tn x, Tn y) where T: floating"]),
    (Isunordered, Relational, M, &["booln isunordered(Tn x, Tn y) where T: floating"]),
    (All, Relational, M, &["bool all(booln x)"]),
    (Any, Relational, M, &["bool any(booln x)"]),
    (Select, Relational, M, &["Tn select(Tn a, Tn b, booln c) where T: any"]),
    // ---- Common (clamp, min, max also take integers)
    (Clamp, Common, Mfp, &["Tn clamp(Tn x, Tn minval, Tn maxval) where T: num"]),
    (Mix, Common, Mfp, &["Tn mix(Tn x, Tn y, Tn a) where T: floating"]),
    (Saturate, Common, Mfp, &[F1]),
    (Sign, Common, Mfp, &[F1]),
    (Smoothstep, Common, Mfp, &["Tn smoothstep(Tn edge0, Tn edge1, Tn x) where T: floating"]),
    (Step, Common, Mfp, &["Tn step(Tn edge, Tn x) where T: floating"]),
    // In `fast::`/`precise::` too: candle's reductions call `fast::max`.
    (Min, Common, Mfp, &[N2]),
    (Max, Common, Mfp, &[N2]),
    (Min3, Common, M, &[N3]),
    (Max3, Common, M, &[N3]),
    (Median3, Common, M, &[N3]),
    // ---- Integer
    (Absdiff, Integer, M, &[I2]),
    (Addsat, Integer, M, &[I2]),
    (Subsat, Integer, M, &[I2]),
    (Clz, Integer, M, &[I1]),
    (Ctz, Integer, M, &[I1]),
    (Popcount, Integer, M, &[I1]),
    (ReverseBits, Integer, M, &[I1]),
    (ExtractBits, Integer, M, &["Tn extract_bits(Tn x, uint offset, uint bits) where T: integer"]),
    (InsertBits, Integer, M, &["Tn insert_bits(Tn base, Tn insert, uint offset, uint bits) where T: integer"]),
    (Hadd, Integer, M, &[I2]),
    (Rhadd, Integer, M, &[I2]),
    (Mad24, Integer, M, &["Tn mad24(Tn x, Tn y, Tn z) where T: int|uint"]),
    (Mul24, Integer, M, &["Tn mul24(Tn x, Tn y) where T: int|uint"]),
    (Madhi, Integer, M, &[I3]),
    (Madsat, Integer, M, &[I3]),
    (Mulhi, Integer, M, &[I2]),
    (Rotate, Integer, M, &["Tn rotate(Tn v, Tn i) where T: integer"]),
    // ---- Geometric
    (Cross, Geometric, Mfp, &["T3 cross(T3 x, T3 y) where T: floating"]),
    (Distance, Geometric, Mfp, &["T distance(Tn x, Tn y) where T: floating"]),
    (DistanceSquared, Geometric, Mfp, &["T distance_squared(Tn x, Tn y) where T: floating"]),
    (Dot, Geometric, Mfp, &["T dot(Tn x, Tn y) where T: floating"]),
    (Faceforward, Geometric, Mfp, &["Tn faceforward(Tn N, Tn I, Tn Nref) where T: floating"]),
    (Length, Geometric, Mfp, &["T length(Tn x) where T: floating"]),
    (LengthSquared, Geometric, Mfp, &["T length_squared(Tn x) where T: floating"]),
    (Normalize, Geometric, Mfp, &["Tn normalize(Tn x) where T: floating"]),
    (Reflect, Geometric, Mfp, &["Tn reflect(Tn I, Tn N) where T: floating"]),
    (Refract, Geometric, Mfp, &["Tn refract(Tn I, Tn N, T eta) where T: floating"]),
    // ---- Synchronization
    (ThreadgroupBarrier, Barrier, M, &["void threadgroup_barrier(mem_flags flags)"]),
    (SimdgroupBarrier, Barrier, M, &["void simdgroup_barrier(mem_flags flags)"]),
    (
        AtomicThreadFence,
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
        AtomicLoadExplicit,
        Atomic,
        M,
        &["T atomic_load_explicit(const volatile S atomic<T>* object, memory_order order) where T: int|uint|bool|float, S: device|threadgroup"],
    ),
    (
        AtomicStoreExplicit,
        Atomic,
        M,
        &["void atomic_store_explicit(volatile S atomic<T>* object, T desired, memory_order order) where T: int|uint|bool|float, S: device|threadgroup"],
    ),
    (
        AtomicExchangeExplicit,
        Atomic,
        M,
        &["T atomic_exchange_explicit(volatile S atomic<T>* object, T desired, memory_order order) where T: int|uint|bool|float, S: device|threadgroup"],
    ),
    (
        AtomicCompareExchangeWeakExplicit,
        Atomic,
        M,
        &["bool atomic_compare_exchange_weak_explicit(volatile S atomic<T>* object, thread T* expected, T desired, memory_order success, memory_order failure) where T: int|uint|bool|float, S: device|threadgroup"],
    ),
    (AtomicFetchAddExplicit, Atomic, M, &[ATOMIC_RMW_ARITH]),
    (AtomicFetchSubExplicit, Atomic, M, &[ATOMIC_RMW_ARITH]),
    (AtomicFetchAndExplicit, Atomic, M, &[ATOMIC_RMW_BITS]),
    (AtomicFetchOrExplicit, Atomic, M, &[ATOMIC_RMW_BITS]),
    (AtomicFetchXorExplicit, Atomic, M, &[ATOMIC_RMW_BITS]),
    (AtomicFetchMinExplicit, Atomic, M, &[ATOMIC_RMW_BITS]),
    (AtomicFetchMaxExplicit, Atomic, M, &[ATOMIC_RMW_BITS]),
    // 64-bit min/max (Apple GPU families 8 and later): no fetch, device only.
    (AtomicMinExplicit, Atomic, M, &["void $(volatile device atomic<ulong>* object, ulong operand, memory_order order)"]),
    (AtomicMaxExplicit, Atomic, M, &["void $(volatile device atomic<ulong>* object, ulong operand, memory_order order)"]),
    // ---- SIMD-group functions. Lane ids, deltas and masks are `ushort`.
    (SimdSum, Simd, M, &[REDUCE]),
    (SimdProduct, Simd, M, &[REDUCE]),
    (SimdMin, Simd, M, &[REDUCE]),
    (SimdMax, Simd, M, &[REDUCE]),
    (SimdAnd, Simd, M, &[REDUCE_BITS]),
    (SimdOr, Simd, M, &[REDUCE_BITS]),
    (SimdXor, Simd, M, &[REDUCE_BITS]),
    (SimdPrefixInclusiveSum, Simd, M, &[REDUCE]),
    (SimdPrefixInclusiveProduct, Simd, M, &[REDUCE]),
    (SimdPrefixExclusiveSum, Simd, M, &[REDUCE]),
    (SimdPrefixExclusiveProduct, Simd, M, &[REDUCE]),
    (SimdBroadcast, Simd, M, &[LANE]),
    (SimdBroadcastFirst, Simd, M, &["Tn simd_broadcast_first(Tn data) where T: any"]),
    (SimdShuffle, Simd, M, &[LANE]),
    (SimdShuffleXor, Simd, M, &["Tn simd_shuffle_xor(Tn data, ushort mask) where T: any"]),
    (SimdShuffleUp, Simd, M, &[DELTA]),
    (SimdShuffleDown, Simd, M, &[DELTA]),
    (SimdShuffleRotateUp, Simd, M, &[DELTA]),
    (SimdShuffleRotateDown, Simd, M, &[DELTA]),
    (SimdShuffleAndFillUp, Simd, M, &[FILL, FILL_MOD]),
    (SimdShuffleAndFillDown, Simd, M, &[FILL, FILL_MOD]),
    (SimdAll, Simd, M, &["bool simd_all(bool expr)"]),
    (SimdAny, Simd, M, &["bool simd_any(bool expr)"]),
    // These return `simd_vote`, whose only use in kernels is converting to
    // its `vote_t` (a 64-bit mask); we model the result as `ulong`.
    (SimdBallot, Simd, M, &["ulong simd_ballot(bool expr)"]),
    (SimdActiveThreadsMask, Simd, M, &["ulong simd_active_threads_mask()"]),
    (SimdIsFirst, Simd, M, &["bool simd_is_first()"]),
    (SimdIsHelperThread, Simd, M, &["bool simd_is_helper_thread()"]),
    // ---- Quad-group functions (4 lanes).
    (QuadSum, Quad, M, &[REDUCE]),
    (QuadProduct, Quad, M, &[REDUCE]),
    (QuadMin, Quad, M, &[REDUCE]),
    (QuadMax, Quad, M, &[REDUCE]),
    (QuadAnd, Quad, M, &[REDUCE_BITS]),
    (QuadOr, Quad, M, &[REDUCE_BITS]),
    (QuadXor, Quad, M, &[REDUCE_BITS]),
    (QuadPrefixInclusiveSum, Quad, M, &[REDUCE]),
    (QuadPrefixInclusiveProduct, Quad, M, &[REDUCE]),
    (QuadPrefixExclusiveSum, Quad, M, &[REDUCE]),
    (QuadPrefixExclusiveProduct, Quad, M, &[REDUCE]),
    (QuadBroadcast, Quad, M, &[LANE]),
    (QuadBroadcastFirst, Quad, M, &["Tn quad_broadcast_first(Tn data) where T: any"]),
    (QuadShuffle, Quad, M, &[LANE]),
    (QuadShuffleXor, Quad, M, &["Tn quad_shuffle_xor(Tn data, ushort mask) where T: any"]),
    (QuadShuffleUp, Quad, M, &[DELTA]),
    (QuadShuffleDown, Quad, M, &[DELTA]),
    (QuadShuffleRotateUp, Quad, M, &[DELTA]),
    (QuadShuffleRotateDown, Quad, M, &[DELTA]),
    (QuadShuffleAndFillUp, Quad, M, &[FILL, FILL_MOD]),
    (QuadShuffleAndFillDown, Quad, M, &[FILL, FILL_MOD]),
    (QuadAll, Quad, M, &["bool quad_all(bool expr)"]),
    (QuadAny, Quad, M, &["bool quad_any(bool expr)"]),
    // `quad_vote`: only the low 4 bits are used; modelled as `ushort`.
    (QuadBallot, Quad, M, &["ushort quad_ballot(bool expr)"]),
    (QuadActiveThreadsMask, Quad, M, &["ushort quad_active_threads_mask()"]),
    (QuadIsFirst, Quad, M, &["bool quad_is_first()"]),
    (QuadIsHelperThread, Quad, M, &["bool quad_is_helper_thread()"]),
    // ---- SIMD-group matrices (8x8 of half, float or bfloat).
    (
        SimdgroupLoad,
        SimdMatrix,
        M,
        &["void simdgroup_load(thread simdgroup_matrix<T,8,8>& d, const S T* src, ulong elements_per_row = 8, ulong2 matrix_origin = 0, bool transpose_matrix = false) where T: floating, S: device|threadgroup"],
    ),
    (
        SimdgroupStore,
        SimdMatrix,
        M,
        &["void simdgroup_store(simdgroup_matrix<T,8,8> a, S T* dst, ulong elements_per_row = 8, ulong2 matrix_origin = 0, bool transpose_matrix = false) where T: floating, S: device|threadgroup"],
    ),
    (
        SimdgroupMultiply,
        SimdMatrix,
        M,
        &["void simdgroup_multiply(thread simdgroup_matrix<T,8,8>& d, simdgroup_matrix<T,8,8> a, simdgroup_matrix<T,8,8> b) where T: floating"],
    ),
    (
        SimdgroupMultiplyAccumulate,
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
        MakeFilledSimdgroupMatrix,
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
