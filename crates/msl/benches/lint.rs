//! `msl::compile` on a generated, realistic 5,000-line Metal file: many
//! kernels and helper functions with loops, vectors, threadgroup memory,
//! atomics, SIMD reductions, structs, templates and macros.
//!
//! Also a kernel library in the style of MLX's (functors, kernel templates,
//! registration macros: 1,600 explicit instantiations), as `lint` sees it
//! and as `run` does.
//!
//! cargo bench -p msl --bench lint -- --warm-up-time 1 --measurement-time 5

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use std::fmt::Write;

/// One module of about 100 lines; `i` makes every name unique.
fn module(out: &mut String, i: usize) {
    write!(
        out,
        r#"
// ---- module {i} -------------------------------------------------------
#define TILE_{i} 16
#define CLAMP_{i}(x, lo, hi) (min(max((x), (lo)), (hi)))

struct Params{i} {{
  uint n;
  uint stride;
  float scale;
  float4 bias;
}};

inline float saxpy_{i}(float a, float x, float y) {{
  return fma(a, x, y);
}}

template <typename T>
T weighted_{i}(T a, T b, float w) {{
  return a * T(1.0f - w) + b * T(w);
}}

float4 shade_{i}(float4 c, float3 n, float3 l) {{
  float d = max(dot(normalize(n), normalize(l)), 0.0f);
  float4 lit = c * d;
  lit.w = c.w;
  return clamp(lit, float4(0.0f), float4(1.0f));
}}

kernel void map_{i}(
    device const float* in [[buffer(0)]],
    device float* out [[buffer(1)]],
    constant Params{i}& p [[buffer(2)]],
    uint gid [[thread_position_in_grid]]) {{
  if (gid >= p.n) {{
    return;
  }}
  float x = in[gid * p.stride];
  out[gid] = saxpy_{i}(p.scale, x, p.bias.x) + weighted_{i}<float>(x, 1.0f, 0.25f);
}}

kernel void reduce_{i}(
    device const float* in [[buffer(0)]],
    device atomic_float* total [[buffer(1)]],
    constant uint& n [[buffer(2)]],
    uint gid [[thread_position_in_grid]],
    uint lid [[thread_position_in_threadgroup]],
    uint tgsize [[threads_per_threadgroup]],
    uint simd_lane [[thread_index_in_simdgroup]],
    uint simd_id [[simdgroup_index_in_threadgroup]]) {{
  threadgroup float partial[32];
  float v = gid < n ? in[gid] : 0.0f;
  v = simd_sum(v);
  if (simd_lane == 0) {{
    partial[simd_id] = v;
  }}
  threadgroup_barrier(mem_flags::mem_threadgroup);
  if (lid == 0) {{
    float acc = 0.0f;
    for (uint s = 0; s < (tgsize + 31) / 32; ++s) {{
      acc += partial[s];
    }}
    atomic_fetch_add_explicit(total, acc, memory_order_relaxed);
  }}
}}

kernel void tiled_matmul_{i}(
    device const float* a [[buffer(0)]],
    device const float* b [[buffer(1)]],
    device float* c [[buffer(2)]],
    constant uint3& dims [[buffer(3)]],
    uint2 gid [[thread_position_in_grid]],
    uint2 lid [[thread_position_in_threadgroup]]) {{
  threadgroup float ta[TILE_{i}][TILE_{i}];
  threadgroup float tb[TILE_{i}][TILE_{i}];
  float acc = 0.0f;
  for (uint t = 0; t < (dims.z + TILE_{i} - 1) / TILE_{i}; ++t) {{
    uint ak = t * TILE_{i} + lid.x;
    uint bk = t * TILE_{i} + lid.y;
    ta[lid.y][lid.x] = (gid.y < dims.x && ak < dims.z) ? a[gid.y * dims.z + ak] : 0.0f;
    tb[lid.y][lid.x] = (bk < dims.z && gid.x < dims.y) ? b[bk * dims.y + gid.x] : 0.0f;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    for (uint k = 0; k < TILE_{i}; ++k) {{
      acc += ta[lid.y][k] * tb[k][lid.x];
    }}
    threadgroup_barrier(mem_flags::mem_threadgroup);
  }}
  if (gid.y < dims.x && gid.x < dims.y) {{
    c[gid.y * dims.y + gid.x] = CLAMP_{i}(acc, -1e6f, 1e6f);
  }}
}}

kernel void image_{i}(
    device float4* pixels [[buffer(0)]],
    constant float3& light [[buffer(1)]],
    uint2 pos [[thread_position_in_grid]],
    uint2 size [[threads_per_grid]]) {{
  uint idx = pos.y * size.x + pos.x;
  float2 uv = float2(pos) / float2(size);
  float3 n = float3(uv * 2.0f - 1.0f, 1.0f);
  half4 h = half4(shade_{i}(pixels[idx], n, light));
  pixels[idx] = float4(h.zyxw);
}}
"#
    )
    .unwrap();
}

pub fn generate(lines: usize) -> String {
    let mut s = String::from("#include <metal_stdlib>\nusing namespace metal;\n");
    let mut i = 0;
    while s.lines().count() < lines {
        module(&mut s, i);
        i += 1;
    }
    s
}

fn bench(c: &mut Criterion) {
    let src = generate(5_000);
    let lines = src.lines().count();
    // The input must be valid, or we would be timing error recovery.
    let first = msl::compile("bench.metal", &src, &msl::CompileOptions::default());
    assert!(!first.has_errors(), "{}", first.render(false));
    let kernels = first.program.as_ref().unwrap().kernels().count();
    eprintln!("lint benchmark input: {lines} lines, {} bytes, {kernels} kernels", src.len());
    stage_breakdown(&src);
    c.bench_function(&format!("compile_{lines}_lines"), |b| {
        b.iter(|| msl::compile("bench.metal", black_box(&src), &msl::CompileOptions::default()))
    });
}

/// Print the median time of each stage, to see which one dominates.
fn stage_breakdown(src: &str) {
    use std::time::{Duration, Instant};
    let opts = msl::CompileOptions::default();
    let (mut pp, mut parse, mut check, mut drop) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for _ in 0..15 {
        let mut sources = msl::source::SourceMap::new();
        let file = sources.add("bench.metal", src);
        let mut diags = msl::diag::Diagnostics::new();
        let t0 = Instant::now();
        let tokens = msl::preprocess::preprocess(&mut sources, file, &opts, &mut diags);
        let t1 = Instant::now();
        let unit = msl::parse::parse(&tokens, &mut diags);
        let t2 = Instant::now();
        let program = msl::check::check(&unit, &[], &mut diags);
        let t3 = Instant::now();
        black_box(&program);
        std::mem::drop((tokens, unit, program, sources));
        let t4 = Instant::now();
        drop.push(t4 - t3);
        pp.push(t1 - t0);
        parse.push(t2 - t1);
        check.push(t3 - t2);
    }
    let median = |v: &mut Vec<Duration>| {
        v.sort();
        v[v.len() / 2]
    };
    eprintln!(
        "stages (median of 15): preprocess {:?}, parse {:?}, check {:?}, freeing tokens/AST/HIR {:?}",
        median(&mut pp),
        median(&mut parse),
        median(&mut check),
        median(&mut drop)
    );
}

/// A kernel library in the style of the big production ones: functor
/// structs with templated `operator()`, kernel templates, and registration
/// macros that expand to thousands of explicit instantiations
/// (`template [[host_name("…")]] [[kernel]] decltype(k<…>) k<…>;`).
pub fn generate_templated_library(ops: usize) -> String {
    let mut s = String::from(
        r#"#include <metal_stdlib>
using namespace metal;

template <typename T, typename U, typename Op>
[[kernel]] void map_ss(device const T* a [[buffer(0)]], device const T* b [[buffer(1)]], device U* c [[buffer(2)]],
                       uint i [[thread_position_in_grid]]) {
  c[i] = Op()(a[0], b[0]);
}
template <typename T, typename U, typename Op, int N = 1>
[[kernel]] void map_vv(device const T* a [[buffer(0)]], device const T* b [[buffer(1)]], device U* c [[buffer(2)]],
                       constant uint& n [[buffer(3)]], uint i [[thread_position_in_grid]]) {
  uint base = i * N;
  for (int k = 0; k < N && base + k < n; ++k) {
    c[base + k] = Op()(a[base + k], b[base + k]);
  }
}
template <typename T, typename U, typename Op, typename IdxT = long>
[[kernel]] void map_g(device const T* a [[buffer(0)]], device const T* b [[buffer(1)]], device U* c [[buffer(2)]],
                      constant const int* shape [[buffer(3)]], constant const long* sa [[buffer(4)]],
                      constant const long* sb [[buffer(5)]], constant int& ndim [[buffer(6)]],
                      uint3 index [[thread_position_in_grid]], uint3 grid [[threads_per_grid]]) {
  IdxT ia = 0;
  IdxT ib = 0;
  IdxT e = IdxT(index.x) + IdxT(grid.x) * (IdxT(index.y) + IdxT(grid.y) * IdxT(index.z));
  for (int d = ndim - 1; d >= 0; --d) {
    IdxT q = e % shape[d];
    ia += q * IdxT(sa[d]);
    ib += q * IdxT(sb[d]);
    e /= shape[d];
  }
  auto r = Op()(a[ia], b[ib]);
  c[IdxT(index.x) + IdxT(grid.x) * IdxT(index.y)] = static_cast<U>(r);
}

#define register_kernel(name, func, ...)   template [[host_name(name)]] [[kernel]] decltype(func<__VA_ARGS__>) func<__VA_ARGS__>;

#define register_op_type(op, tname, T, U)                           register_kernel("ss_" #op #tname, map_ss, T, U, op)                register_kernel("vv_" #op #tname, map_vv, T, U, op)                register_kernel("vv4_" #op #tname, map_vv, T, U, op, 4)            register_kernel("g_" #op #tname, map_g, T, U, op)                  register_kernel("g32_" #op #tname, map_g, T, U, op, int)

#define register_op(op)                              register_op_type(op, float32, float, float)        register_op_type(op, float16, half, half)          register_op_type(op, bfloat16, bfloat, bfloat)     register_op_type(op, int32, int, int)              register_op_type(op, uint32, uint, uint)           register_op_type(op, int16, short, short)          register_op_type(op, uint8, uchar, uchar)          register_op_type(op, int64, long, long)
"#,
    );
    for i in 0..ops {
        let body = match i % 4 {
            0 => format!("return x * T({}) + y;", i + 1),
            1 => "return x > y ? x - y : y - x;".to_string(),
            2 => "return metal::max(x, y);".to_string(),
            _ => "T t = x; t += y; return t;".to_string(),
        };
        write!(
            s,
            "
struct Op{i} {{
  template <typename T>
  T operator()(T x, T y) thread {{ {body} }}
}};
register_op(Op{i})
"
        )
        .unwrap();
    }
    s
}

fn bench_templated(c: &mut Criterion) {
    let src = generate_templated_library(40);
    let first = msl::compile("library.metal", &src, &msl::CompileOptions::default());
    assert!(!first.has_errors(), "{}", first.render(false));
    let kernels = first.program.as_ref().unwrap().kernels().count();
    eprintln!("templated library input: {} lines, {kernels} kernels", src.lines().count());
    let lint = msl::CompileOptions { diagnostics_only: true, ..Default::default() };
    c.bench_function(&format!("lint_templated_library_{kernels}_kernels"), |b| {
        b.iter(|| msl::compile("library.metal", black_box(&src), &lint))
    });
    c.bench_function(&format!("compile_templated_library_{kernels}_kernels"), |b| {
        b.iter(|| msl::compile("library.metal", black_box(&src), &msl::CompileOptions::default()))
    });
}

criterion_group!(benches, bench, bench_templated);
criterion_main!(benches);
