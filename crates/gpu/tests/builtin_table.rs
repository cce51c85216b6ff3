//! Every overload of every builtin the checker's table declares, called
//! once through the whole pipeline: it must type-check, lower (a builtin the
//! checker accepts but the lowering cannot handle fails here, by name) and
//! run without findings, and it must not silently produce zeros. Where a
//! Rust reference is given ([`reference`]), the scalar `float` and `int`
//! overloads are compared with it on every lane.
//!
//! The arguments are values computed from the thread index (so nothing is
//! constant-folded away): argument `k`, component `c` of lane `i` is
//! `v = (7i + 4k + c) mod 11`, as `(v - 5) * 0.375 + 0.0625 (k + 1)` for
//! floating types, `v - 5` for signed integers, `v + 1` for unsigned ones
//! and `v mod 3 == 0` for `bool`.

mod common;
use common::*;
use msl::builtins::{self, BuiltinId, Overload};
use msl::types::{BuiltinEnum, Scalar, Type};

const LANES: u32 = 64;
/// Elements of each pointer argument's buffer (SIMD-group matrices read up
/// to (origin + 8) rows of `elements_per_row`).
const BUF_ELEMS: usize = 1024;

/// Which argument values to compare against, and how.
enum Reference {
    Float(fn(&[f64]) -> f64),
    Int(fn(&[i64]) -> i64),
    /// Both overloads, one formula.
    Both(fn(&[f64]) -> f64),
}

/// The Rust reference of a builtin's scalar overloads; `None` for those
/// checked elsewhere (`tests/simd.rs`, `tests/builtins.rs`, the sanitizer's
/// tests) or without a scalar value. No catch-all arm: a new builtin must
/// be decided here.
fn reference(id: BuiltinId) -> Option<Reference> {
    use BuiltinId as B;
    use Reference::*;
    let r = match id {
        B::Abs => Both(|a| a[0].abs()),
        B::Fabs => Float(|a| a[0].abs()),
        B::Acos => Float(|a| a[0].acos()),
        B::Acosh => Float(|a| a[0].acosh()),
        B::Asin => Float(|a| a[0].asin()),
        B::Asinh => Float(|a| a[0].asinh()),
        B::Atan => Float(|a| a[0].atan()),
        B::Atan2 => Float(|a| a[0].atan2(a[1])),
        B::Atanh => Float(|a| a[0].atanh()),
        B::Ceil => Float(|a| a[0].ceil()),
        B::Copysign => Float(|a| a[0].copysign(a[1])),
        B::Cos => Float(|a| a[0].cos()),
        B::Cosh => Float(|a| a[0].cosh()),
        B::Cospi => Float(|a| (a[0] * std::f64::consts::PI).cos()),
        B::Divide => Float(|a| a[0] / a[1]),
        B::Exp => Float(|a| a[0].exp()),
        B::Exp2 => Float(|a| a[0].exp2()),
        B::Exp10 => Float(|a| 10f64.powf(a[0])),
        B::Fdim => Float(|a| (a[0] - a[1]).max(0.0)),
        B::Floor => Float(|a| a[0].floor()),
        B::Fma => Float(|a| a[0] * a[1] + a[2]),
        B::Fmax => Float(|a| a[0].max(a[1])),
        B::Fmin => Float(|a| a[0].min(a[1])),
        B::Fmax3 => Float(|a| a[0].max(a[1]).max(a[2])),
        B::Fmin3 => Float(|a| a[0].min(a[1]).min(a[2])),
        B::Fmedian3 => Float(median3),
        B::Fmod => Float(|a| a[0] % a[1]),
        B::Fract => Float(|a| a[0] - a[0].floor()),
        B::Log => Float(|a| a[0].ln()),
        B::Log2 => Float(|a| a[0].log2()),
        B::Log10 => Float(|a| a[0].log10()),
        B::Nextafter => Float(|a| {
            let x = a[0] as f32;
            let step = if (a[1] > a[0]) == (x > 0.0) { 1 } else { -1 };
            if a[0] == a[1] {
                a[1]
            } else {
                f32::from_bits((x.to_bits() as i64 + step) as u32) as f64
            }
        }),
        B::Pow => Float(|a| a[0].powf(a[1])),
        B::Powr => Float(|a| if a[0] < 0.0 { f64::NAN } else { a[0].powf(a[1]) }),
        B::Rint => Float(|a| a[0].round_ties_even()),
        B::Round => Float(|a| a[0].round()),
        B::Rsqrt => Float(|a| 1.0 / a[0].sqrt()),
        B::Sin => Float(|a| a[0].sin()),
        B::Sinh => Float(|a| a[0].sinh()),
        B::Sinpi => Float(|a| (a[0] * std::f64::consts::PI).sin()),
        B::Sqrt => Float(|a| a[0].sqrt()),
        B::Tan => Float(|a| a[0].tan()),
        B::Tanh => Float(|a| a[0].tanh()),
        B::Tanpi => Float(|a| (a[0] * std::f64::consts::PI).tan()),
        B::Trunc => Float(|a| a[0].trunc()),
        B::Isfinite => Float(|a| a[0].is_finite() as i64 as f64),
        B::Isinf => Float(|a| a[0].is_infinite() as i64 as f64),
        B::Isnan => Float(|a| a[0].is_nan() as i64 as f64),
        B::Isnormal => Float(|a| a[0].is_normal() as i64 as f64),
        B::Signbit => Float(|a| a[0].is_sign_negative() as i64 as f64),
        B::Isordered => Float(|a| (!a[0].is_nan() && !a[1].is_nan()) as i64 as f64),
        B::Isunordered => Float(|a| (a[0].is_nan() || a[1].is_nan()) as i64 as f64),
        B::Clamp => Both(|a| a[0].max(a[1]).min(a[2])),
        B::Mix => Float(|a| a[0] + (a[1] - a[0]) * a[2]),
        B::Saturate => Float(|a| a[0].clamp(0.0, 1.0)),
        B::Sign => Float(|a| if a[0] == 0.0 { 0.0 } else { a[0].signum() }),
        B::Smoothstep => Float(|a| {
            let t = ((a[2] - a[0]) / (a[1] - a[0])).clamp(0.0, 1.0);
            t * t * (3.0 - 2.0 * t)
        }),
        B::Step => Float(|a| if a[1] < a[0] { 0.0 } else { 1.0 }),
        B::Min => Both(|a| a[0].min(a[1])),
        B::Max => Both(|a| a[0].max(a[1])),
        B::Min3 => Both(|a| a[0].min(a[1]).min(a[2])),
        B::Max3 => Both(|a| a[0].max(a[1]).max(a[2])),
        B::Median3 => Both(median3),
        B::Absdiff => Int(|a| (a[0] - a[1]).abs()),
        B::Addsat => Int(|a| (a[0] + a[1]).clamp(i32::MIN as i64, i32::MAX as i64)),
        B::Subsat => Int(|a| (a[0] - a[1]).clamp(i32::MIN as i64, i32::MAX as i64)),
        B::Clz => Int(|a| (a[0] as i32).leading_zeros() as i64),
        B::Ctz => Int(|a| (a[0] as i32).trailing_zeros() as i64),
        B::Popcount => Int(|a| (a[0] as i32).count_ones() as i64),
        B::ReverseBits => Int(|a| (a[0] as i32).reverse_bits() as i64),
        B::ExtractBits => Int(|a| {
            let (off, bits) = (a[1] as u32, a[2] as u32);
            if bits == 0 {
                0
            } else {
                (((a[0] as i32) << (32 - off - bits)) >> (32 - bits)) as i64
            }
        }),
        B::InsertBits => Int(|a| {
            let (off, bits) = (a[2] as u32, a[3] as u32);
            let mask = if bits == 0 { 0 } else { (u32::MAX >> (32 - bits)) << off };
            (((a[0] as u32) & !mask) | (((a[1] as u32) << off) & mask)) as i32 as i64
        }),
        B::Hadd => Int(|a| (a[0] + a[1]) >> 1),
        B::Rhadd => Int(|a| (a[0] + a[1] + 1) >> 1),
        B::Mad24 => Int(|a| a[0] * a[1] + a[2]),
        B::Mul24 => Int(|a| a[0] * a[1]),
        B::Madhi => Int(|a| ((a[0] * a[1]) >> 32) + a[2]),
        B::Madsat => Int(|a| a[0] * a[1] + a[2]),
        B::Mulhi => Int(|a| (a[0] * a[1]) >> 32),
        B::Rotate => Int(|a| (a[0] as i32).rotate_left(a[1] as u32) as i64),
        // A one-component vector is a scalar: the geometric functions reduce
        // to products.
        B::Distance => Float(|a| (a[0] - a[1]).abs()),
        B::DistanceSquared => Float(|a| (a[0] - a[1]) * (a[0] - a[1])),
        B::Dot => Float(|a| a[0] * a[1]),
        B::Faceforward => Float(|a| if a[2] * a[1] < 0.0 { a[0] } else { -a[0] }),
        B::Length => Float(|a| a[0].abs()),
        B::LengthSquared => Float(|a| a[0] * a[0]),
        B::Normalize => Float(|a| a[0] / a[0].abs()),
        B::Reflect => Float(|a| a[0] - 2.0 * a[1] * a[0] * a[1]),
        B::Refract => Float(|a| {
            let (i, n, eta) = (a[0], a[1], a[2]);
            let d = n * i;
            let k = 1.0 - eta * eta * (1.0 - d * d);
            if k < 0.0 {
                0.0
            } else {
                eta * i - (eta * d + k.sqrt()) * n
            }
        }),
        // Out parameters, vectors only, lane exchanges, memory and
        // synchronization: `tests/builtins.rs`, `tests/simd.rs`,
        // `tests/sanitizer.rs`, `tests/cpp_features.rs` and the fixtures in
        // `tests/fixtures/semantics/` check their values.
        B::Frexp
        | B::Ilogb
        | B::Ldexp
        | B::Modf
        | B::Sincos
        | B::All
        | B::Any
        | B::Select
        | B::Cross
        | B::ThreadgroupBarrier
        | B::SimdgroupBarrier
        | B::AtomicThreadFence
        | B::AtomicLoadExplicit
        | B::AtomicStoreExplicit
        | B::AtomicExchangeExplicit
        | B::AtomicCompareExchangeWeakExplicit
        | B::AtomicFetchAddExplicit
        | B::AtomicFetchSubExplicit
        | B::AtomicFetchAndExplicit
        | B::AtomicFetchOrExplicit
        | B::AtomicFetchXorExplicit
        | B::AtomicFetchMinExplicit
        | B::AtomicFetchMaxExplicit
        | B::AtomicMinExplicit
        | B::AtomicMaxExplicit
        | B::SimdSum
        | B::SimdProduct
        | B::SimdMin
        | B::SimdMax
        | B::SimdAnd
        | B::SimdOr
        | B::SimdXor
        | B::SimdPrefixInclusiveSum
        | B::SimdPrefixInclusiveProduct
        | B::SimdPrefixExclusiveSum
        | B::SimdPrefixExclusiveProduct
        | B::SimdBroadcast
        | B::SimdBroadcastFirst
        | B::SimdShuffle
        | B::SimdShuffleXor
        | B::SimdShuffleUp
        | B::SimdShuffleDown
        | B::SimdShuffleRotateUp
        | B::SimdShuffleRotateDown
        | B::SimdShuffleAndFillUp
        | B::SimdShuffleAndFillDown
        | B::SimdAll
        | B::SimdAny
        | B::SimdBallot
        | B::SimdActiveThreadsMask
        | B::SimdIsFirst
        | B::SimdIsHelperThread
        | B::QuadSum
        | B::QuadProduct
        | B::QuadMin
        | B::QuadMax
        | B::QuadAnd
        | B::QuadOr
        | B::QuadXor
        | B::QuadPrefixInclusiveSum
        | B::QuadPrefixInclusiveProduct
        | B::QuadPrefixExclusiveSum
        | B::QuadPrefixExclusiveProduct
        | B::QuadBroadcast
        | B::QuadBroadcastFirst
        | B::QuadShuffle
        | B::QuadShuffleXor
        | B::QuadShuffleUp
        | B::QuadShuffleDown
        | B::QuadShuffleRotateUp
        | B::QuadShuffleRotateDown
        | B::QuadShuffleAndFillUp
        | B::QuadShuffleAndFillDown
        | B::QuadAll
        | B::QuadAny
        | B::QuadBallot
        | B::QuadActiveThreadsMask
        | B::QuadIsFirst
        | B::QuadIsHelperThread
        | B::SimdgroupLoad
        | B::SimdgroupStore
        | B::SimdgroupMultiply
        | B::SimdgroupMultiplyAccumulate
        | B::MakeFilledSimdgroupMatrix
        // The checker's own: `tests/cpp_features.rs` (matrices) and the
        // logging tests.
        | B::Transpose
        | B::Determinant
        | B::MatrixMultiply
        | B::SimdgroupDiagonal
        | B::OsLog => return None,
    };
    Some(r)
}

fn median3(a: &[f64]) -> f64 {
    let mut v = [a[0], a[1], a[2]];
    v.sort_by(f64::total_cmp);
    v[1]
}

/// Builtins whose result may be all zeros (all false) on these inputs.
fn may_be_zero(id: BuiltinId) -> bool {
    use BuiltinId as B;
    match id {
        // No NaN or infinity among the inputs; compute kernels have no
        // helper threads; the compared value is rarely the expected one.
        B::Isnan | B::Isinf | B::Isunordered | B::SimdIsHelperThread | B::QuadIsHelperThread => true,
        B::AtomicCompareExchangeWeakExplicit => true,
        // The high half of a product of small values.
        B::Mulhi => true,
        // Inputs that mix true and false; the `and` of mixed bit patterns;
        // a product of lanes with a zero in them (or, in 8 bits, with many
        // factors of two).
        B::All | B::SimdAll | B::QuadAll | B::SimdAnd | B::QuadAnd | B::SimdProduct | B::QuadProduct => true,
        _ => false,
    }
}

/// Lane `i`'s value of argument `k`, component `c`, before conversion.
fn raw(i: u32, k: usize, c: usize) -> u32 {
    (7 * i + 4 * k as u32 + c as u32) % 11
}

/// The same value as MSL source of scalar type `s`.
fn value_src(s: Scalar, k: usize, c: usize) -> String {
    let v = format!("((i * 7u + {}u) % 11u)", 4 * k + c);
    let name = s.name();
    match s {
        Scalar::Bool => format!("({v} % 3u == 0u)"),
        _ if s.is_float() => format!("({name})(((float){v} - 5.0f) * 0.375f + {}f)", 0.0625 * (k + 1) as f64),
        _ if s.is_signed() => format!("({name})((int){v} - 5)"),
        _ => format!("({name})({v} + 1u)"),
    }
}

fn float_value(i: u32, k: usize) -> f64 {
    ((raw(i, k, 0) as f32 - 5.0) * 0.375 + 0.0625 * (k + 1) as f32) as f64
}

fn int_value(i: u32, k: usize, signed: bool) -> i64 {
    if signed {
        raw(i, k, 0) as i64 - 5
    } else {
        raw(i, k, 0) as i64 + 1
    }
}

/// A value of scalar or vector type `t` for argument `k`.
fn arg_value(t: &Type, k: usize) -> Option<String> {
    match t {
        Type::Scalar(s) => Some(value_src(*s, k, 0)),
        Type::Vector { elem, len, .. } => {
            let parts: Vec<String> = (0..*len as usize).map(|c| value_src(*elem, k, c)).collect();
            Some(format!("{t}({})", parts.join(", ")))
        }
        _ => None,
    }
}

/// A kernel calling `id` with the parameter types of `o` (the first
/// `arity` of them), or why the overload cannot be written as a call.
fn kernel_for(id: BuiltinId, o: &Overload, arity: usize) -> String {
    let mut params = Vec::new(); // kernel parameters after the output
    let mut setup = Vec::new(); // statements before the call
    let mut call_args = Vec::new();
    let mut outs = Vec::new(); // (expression, its type) written to `out`
    let matrix_family = matches!(
        id,
        BuiltinId::SimdgroupLoad | BuiltinId::SimdgroupStore | BuiltinId::SimdgroupMultiply | BuiltinId::SimdgroupMultiplyAccumulate
    );
    for (k, p) in o.params.iter().take(arity).enumerate() {
        let arg = match p {
            Type::Scalar(Scalar::Bool) if matrix_family => "false".to_string(), // `transpose_matrix` must be a constant
            Type::Scalar(_) | Type::Vector { .. } => arg_value(p, k).expect("value"),
            Type::BuiltinEnum(BuiltinEnum::MemFlags) => "mem_flags::mem_threadgroup".into(),
            Type::BuiltinEnum(BuiltinEnum::MemoryOrder) => "memory_order_relaxed".into(),
            Type::BuiltinEnum(BuiltinEnum::ThreadScope) => "thread_scope_device".into(),
            Type::SimdMatrix { elem, .. } => format!("make_filled_simdgroup_matrix<{}, 8, 8>({})", elem.name(), value_src(*elem, k, 0)),
            Type::Reference { referee, .. } => {
                let name = format!("o{k}");
                match &**referee {
                    Type::SimdMatrix { elem, .. } => {
                        setup.push(format!("simdgroup_matrix<{0}, 8, 8> {name} = make_filled_simdgroup_matrix<{0}, 8, 8>(0);", elem.name()))
                    }
                    t => setup.push(format!("{t} {name};")),
                }
                outs.push((name.clone(), (**referee).clone()));
                name
            }
            Type::Pointer { pointee, space, .. } => {
                let name = format!("p{k}");
                let elem = match &**pointee {
                    Type::Atomic(s) => format!("atomic<{}>", s.name()),
                    t => t.to_string(),
                };
                match space {
                    msl::ast::AddressSpace::Device => {
                        params.push(format!("device {elem}* {name} [[buffer({})]]", k + 1));
                        name
                    }
                    msl::ast::AddressSpace::Threadgroup => {
                        // Ones, like the device buffers (see `exercise`).
                        let init = match &**pointee {
                            Type::Atomic(s) => format!("atomic_store_explicit(&{name}[j], ({})1, memory_order_relaxed);", s.name()),
                            t => format!("{name}[j] = ({t})1;"),
                        };
                        setup.push(format!("threadgroup {elem} {name}[{BUF_ELEMS}];"));
                        setup.push(format!("for (uint j = i % 32u; j < {BUF_ELEMS}u; j += 32u) {{ {init} }}"));
                        setup.push("threadgroup_barrier(mem_flags::mem_threadgroup);".into());
                        name
                    }
                    _ => {
                        // `thread T* expected`: a local holding a value.
                        let v = arg_value(pointee, k).expect("thread pointee");
                        setup.push(format!("{pointee} {name} = {v};"));
                        format!("&{name}")
                    }
                }
            }
            t => panic!("{id}: no argument of type {t} in this test"),
        };
        call_args.push(arg);
    }
    let callee = match &o.ret {
        // Called with its template arguments, as Metal requires.
        Type::SimdMatrix { elem, .. } if id == BuiltinId::MakeFilledSimdgroupMatrix => format!("{id}<{}, 8, 8>", elem.name()),
        _ => id.name().to_string(),
    };
    let call = format!("{callee}({})", call_args.join(", "));
    let mut body = setup;
    match &o.ret {
        Type::Void => body.push(format!("{call};")),
        t => {
            body.push(format!("auto r = {call};"));
            outs.insert(0, ("r".into(), t.clone()));
        }
    }
    // Only the first output is checked; it goes to `out`.
    let out_ty = match outs.first() {
        Some((e, Type::SimdMatrix { elem, .. })) => {
            body.push(format!("simdgroup_store({e}, out, 8);"));
            elem.name().to_string()
        }
        Some((e, t)) => {
            body.push(format!("out[i] = {e};"));
            t.to_string()
        }
        None => "uint".into(),
    };
    format!(
        "{PRELUDE}kernel void k(device {out_ty}* out [[buffer(0)]], {}uint i [[thread_position_in_grid]]) {{\n    {}\n}}\n",
        params.iter().map(|p| format!("{p}, ")).collect::<String>(),
        body.join("\n    ")
    )
}

/// Size in bytes of an output element of `t` (Metal's layout).
fn size_of(t: &Type) -> usize {
    msl::types::TypeTables::default().size_of(t) as usize
}

fn check_reference(id: BuiltinId, o: &Overload, arity: usize, out: &[u8]) -> Result<(), String> {
    let Some(r) = reference(id) else { return Ok(()) };
    if arity != o.params.len() || o.params.iter().any(|p| !matches!(p, Type::Scalar(_))) {
        return Ok(());
    }
    let s = match o.params[0] {
        Type::Scalar(s) => s,
        _ => return Ok(()),
    };
    let signed = |k: usize| matches!(o.params[k], Type::Scalar(s) if s.is_signed());
    for i in 0..LANES {
        let (got, want, tol) = match (&r, s) {
            (Reference::Float(f) | Reference::Both(f), Scalar::Float) => {
                let args: Vec<f64> = (0..arity).map(|k| float_value(i, k)).collect();
                let got = match o.ret {
                    Type::Scalar(Scalar::Bool) => out[i as usize] as f64,
                    _ => f32::from_le_bytes(out[i as usize * 4..][..4].try_into().unwrap()) as f64,
                };
                (got, f(&args) as f32 as f64, 4e-6)
            }
            (Reference::Int(f), Scalar::Int) => {
                let args: Vec<i64> = (0..arity).map(|k| int_value(i, k, signed(k))).collect();
                let got = i32::from_le_bytes(out[i as usize * 4..][..4].try_into().unwrap());
                // absdiff's result is unsigned; here it is small and positive.
                (got as f64, f(&args) as i32 as f64, 0.0)
            }
            (Reference::Both(f), Scalar::Int) => {
                let args: Vec<f64> = (0..arity).map(|k| int_value(i, k, signed(k)) as f64).collect();
                let got = i32::from_le_bytes(out[i as usize * 4..][..4].try_into().unwrap());
                (got as f64, f(&args), 0.0)
            }
            _ => return Ok(()),
        };
        let close = (got.is_nan() && want.is_nan()) || got == want || (got - want).abs() <= tol * want.abs().max(1.0);
        if !close {
            let args: Vec<String> = (0..arity)
                .map(|k| if s.is_float() { float_value(i, k).to_string() } else { int_value(i, k, signed(k)).to_string() })
                .collect();
            return Err(format!("{id}({}) = {got}, the reference says {want}", args.join(", ")));
        }
    }
    Ok(())
}

/// Compile, lower and run one call; `Err` says what went wrong.
fn exercise(id: BuiltinId, o: &Overload, arity: usize) -> Result<usize, String> {
    let src = kernel_for(id, o, arity);
    let c = msl::compile("table.metal", &src, &Default::default());
    if c.has_errors() {
        return Err(format!("the checker refuses it:\n{}\n{src}", c.render(false)));
    }
    let p = c.program.as_ref().expect("program");
    let (kid, _) = p.kernel("k").expect("kernel k");
    let k = gpu::lower::lower_kernel(p, kid).map_err(|e| format!("the lowering refuses it: {}\n{src}", e.message))?;
    let out_elem = match (&o.ret, o.params.iter().take(arity).find_map(|p| p.strip_ref_out())) {
        (Type::Void, Some(t)) | (t, _) if *t != Type::Void => t.clone(),
        _ => Type::Scalar(Scalar::UInt),
    };
    let out_len = match &out_elem {
        Type::SimdMatrix { elem, .. } => 64 * size_of(&Type::Scalar(*elem)),
        t => LANES as usize * size_of(t),
    };
    let mut b = std::collections::BTreeMap::new();
    b.insert(0u32, vec![0u8; out_len]);
    for (j, p) in o.params.iter().take(arity).enumerate() {
        if let Type::Pointer { pointee, space: msl::ast::AddressSpace::Device, .. } = p {
            let elem = match &**pointee {
                Type::Atomic(s) => Type::Scalar(*s),
                t => t.clone(),
            };
            // Ones of the element type, so loads and atomics see non-zero values.
            let one: Vec<u8> = match elem {
                Type::Scalar(s) if s.is_float() && s.size() == 4 => 1f32.to_le_bytes().to_vec(),
                Type::Scalar(Scalar::Half) => half::f16::ONE.to_le_bytes().to_vec(),
                Type::Scalar(Scalar::BFloat) => half::bf16::ONE.to_le_bytes().to_vec(),
                ref t => {
                    let mut v = vec![0u8; size_of(t)];
                    v[0] = 1;
                    v
                }
            };
            b.insert(j as u32 + 1, one.repeat(BUF_ELEMS));
        }
    }
    let r = run(&k, &threads([LANES, 1, 1], [32, 1, 1]), &mut b, &opts(CheckLevel::None));
    if !r.findings.is_empty() {
        return Err(format!("findings: {:?}\n{src}", r.findings));
    }
    let out = &b[&0];
    let produces = o.ret != Type::Void || o.params.iter().take(arity).any(|p| p.strip_ref_out().is_some());
    if produces && !may_be_zero(id) && out.iter().all(|&x| x == 0) {
        return Err(format!("every lane's result is zero\n{src}"));
    }
    check_reference(id, o, arity, out).map_err(|e| format!("{e}\n{src}"))?;
    Ok(1)
}

trait OutParam {
    /// The referee of an out parameter (a non-const reference).
    fn strip_ref_out(&self) -> Option<&Type>;
}

impl OutParam for Type {
    fn strip_ref_out(&self) -> Option<&Type> {
        match self {
            Type::Reference { referee, is_const: false, .. } => Some(referee),
            _ => None,
        }
    }
}

#[test]
fn every_overload_lowers_and_runs() {
    let mut failures = Vec::new();
    let mut calls = 0;
    for &id in BuiltinId::ALL {
        let Some(f) = builtins::function(id) else { continue };
        for sig in &f.signatures {
            for o in sig.overloads() {
                let arities: Vec<usize> =
                    if sig.min_args < o.params.len() { vec![sig.min_args, o.params.len()] } else { vec![o.params.len()] };
                for arity in arities {
                    match exercise(id, &o, arity) {
                        Ok(n) => calls += n,
                        Err(e) => failures.push(format!("`{}` with {arity} argument(s): {e}", sig.text)),
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "{} of {} calls failed:\n\n{}", failures.len(), calls + failures.len(), failures.join("\n\n"));
    // Every table builtin was called (a broken enumeration would pass vacuously).
    assert!(calls > 1000, "only {calls} calls");
}
