//! Kernel libraries in the styles of PyTorch's MPS kernels and candle's,
//! written for this project: a header-only "ops" library under its own
//! include root (angle-bracket includes, `#pragma once`, a namespace pulled
//! in with `using namespace`, `result_of` through `declval`, functors with
//! `enable_if`-constrained `operator()` templates, registration macros that
//! expand to `template [[host_name]] kernel void ::ns::k<…>(…);`), and
//! candle-style `decltype(k<…>)` instantiations with a per-thread element
//! count as a default template argument, a struct holding `constant`
//! pointers, a `[[threadgroup(0)]]` buffer sized by `--threadgroup-memory`
//! and a `constant long2&` argument. Each is run by `metal-puzzles run` and
//! compared with values computed here.

use arrays::{Array, DType};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_metal-puzzles");

/// The mini library's header, found as `<mini/metal/ops.h>` under `-I lib`.
const OPS_H: &str = r#"// A small elementwise library, PyTorch MPS style.
#pragma once
#include <metal_stdlib>

namespace mini {
namespace metal {

template <typename F, typename... Args>
using result_of = decltype(::metal::declval<F>()(::metal::declval<Args>()...));

template <typename T>
constexpr constant bool is_pair_v = ::metal::is_same_v<T, float2> || ::metal::is_same_v<T, half2>;

template <typename T>
constexpr constant bool is_real_v = ::metal::is_floating_point_v<T> && ::metal::is_scalar_v<T>;

template <typename T, typename F>
kernel void map_dense(
    device result_of<F, T>* out [[buffer(0)]],
    constant T* in [[buffer(1)]],
    uint i [[thread_position_in_grid]]) {
  F f;
  out[i] = f(in[i]);
}

template <typename T, typename F>
kernel void map_strided(
    device result_of<F, T>* out [[buffer(0)]],
    constant T* in [[buffer(1)]],
    constant long* sizes [[buffer(2)]],
    constant long* in_strides [[buffer(3)]],
    constant uint& ndim [[buffer(4)]],
    uint i [[thread_position_in_grid]]) {
  F f;
  long rest = i;
  long offs = 0;
  for (uint d = 0; d < ndim; ++d) {
    offs += (rest % sizes[d]) * in_strides[d];
    rest /= sizes[d];
  }
  out[i] = f(in[offs]);
}

#define MINI_REGISTER_MAP(NAME, TIN, TOUT)                                      \
  static_assert(::metal::is_same_v<TOUT, ::mini::metal::result_of<NAME##_op, TIN>>, \
                "output type of " #NAME);                                       \
  template [[host_name(#NAME "_dense_" #TOUT "_" #TIN)]] kernel void ::         \
      mini::metal::map_dense<TIN, NAME##_op>(                                   \
          device ::mini::metal::result_of<NAME##_op, TIN> * out,                \
          constant TIN * in,                                                    \
          uint i);                                                              \
  template [[host_name(#NAME "_strided_" #TOUT "_" #TIN)]] kernel void ::       \
      mini::metal::map_strided<TIN, NAME##_op>(                                 \
          device ::mini::metal::result_of<NAME##_op, TIN> * out,                \
          constant TIN * in,                                                    \
          constant long* sizes,                                                 \
          constant long* in_strides,                                            \
          constant uint& ndim,                                                  \
          uint i)

} // namespace metal
} // namespace mini
"#;

/// Functors and registrations, in the kernel folder.
const MAP_METAL: &str = r#"#include <mini/metal/ops.h>
#include <metal_stdlib>
using namespace metal;
using namespace mini::metal;

// Squares reals, squares integers into a float, squares a complex pair.
struct square_op {
  template <typename T, enable_if_t<is_real_v<T>, bool> = true>
  inline T operator()(const T x) {
    return x * x;
  }
  template <typename T, enable_if_t<is_integral_v<T>, bool> = true>
  inline float operator()(const T x) {
    return float(x) * float(x);
  }
  template <typename T, enable_if_t<is_pair_v<T>, bool> = true>
  inline T operator()(const T z) {
    return T(z.x * z.x - z.y * z.y, 2 * z.x * z.y);
  }
};

MINI_REGISTER_MAP(square, float, float);
MINI_REGISTER_MAP(square, int, float);
MINI_REGISTER_MAP(square, float2, float2);
"#;

/// candle style: kernels instantiated through `decltype`, a step loop over
/// W elements per thread, a struct of `constant` pointers, a threadgroup
/// buffer parameter and a vector constant.
const CANDLE_STYLE: &str = r#"#include <metal_stdlib>
using namespace metal;

template <uint Y> constexpr uint ceil_div(uint x) { return x / Y + (x % Y > 0); }
template <typename T> constexpr uint per_thread() { return 8 / sizeof(T) + (8 % sizeof(T) > 0); }

struct affine_op {
  float mul, add;
  float operator()(float x) const { return x * mul + add; }
};

template <typename T, typename Op, uint W = per_thread<T>()>
[[kernel]] void scale_shift(constant size_t &n, constant float &mul, constant float &add,
                            device const T *src, device T *dst, uint tid [[thread_position_in_grid]]) {
  Op op{mul, add};
  const uint step = ceil_div<W>(n);
  for (uint i = tid; i < n; i += step) {
    dst[i] = static_cast<T>(op(float(src[i])));
  }
}

struct shape_view {
  constant size_t *dims;
  constant size_t *strides;
  uint offset(uint i, uint nd) const {
    uint o = 0;
    for (uint d = 0; d < nd; d++) {
      uint k = nd - 1 - d;
      o += (i % dims[k]) * strides[k];
      i /= dims[k];
    }
    return o;
  }
};

template <typename T>
[[kernel]] void copy_view(constant size_t &n, constant size_t &nd, constant size_t *dims,
                          constant size_t *strides, device const T *src, device T *dst,
                          uint tid [[thread_position_in_grid]]) {
  if (tid >= n) return;
  shape_view v{dims, strides};
  dst[tid] = src[v.offset(tid, nd)];
}

// Reverses each row through a threadgroup buffer sized by the host.
template <typename T>
[[kernel]] void reverse_rows(device const T *x, device T *y, constant long2 &shape,
                             threadgroup T *row [[threadgroup(0)]],
                             uint2 tg [[threadgroup_position_in_grid]], uint2 t [[thread_position_in_threadgroup]]) {
  long cols = shape.y;
  row[t.x] = x[tg.y * cols + t.x];
  threadgroup_barrier(mem_flags::mem_threadgroup);
  y[tg.y * cols + t.x] = row[cols - 1 - t.x];
}

// C's out-parameter form of frexp: the exponent through a `thread int*`.
template <typename T>
[[kernel]] void split_exp(device const T *x, device T *mant, device int *e, uint i [[thread_position_in_grid]]) {
  int k;
  mant[i] = frexp(x[i], &k);
  e[i] = k;
}

#define instantiate(name, func, ...) \
  template [[host_name(name)]] [[kernel]] decltype(func<__VA_ARGS__>) func<__VA_ARGS__>;

instantiate("affine_f32", scale_shift, float, affine_op)
instantiate("affine_f16", scale_shift, half, affine_op)
instantiate("copy_view_f32", copy_view, float)
instantiate("reverse_rows_f32", reverse_rows, float)
instantiate("split_exp_f32", split_exp, float)
"#;

/// A reduction header, PyTorch MPS style: the accumulation type is an alias
/// template written with a *relative* qualified name (`detail::Accum<T>`
/// inside `mini::metal`), and `group_sum`'s first parameter
/// `threadgroup accum_t<T>*` is a non-deduced context, so `T` comes from
/// the second argument only.
const REDUCE_H: &str = r#"#pragma once
#include <metal_stdlib>

namespace mini {
namespace metal {
constant constexpr unsigned lanes = 32;

namespace detail {
template <typename T>
struct Accum {
  using type = T;
};
template <>
struct Accum<half> {
  using type = float;
};
} // namespace detail

template <typename T>
using accum_t = typename detail::Accum<T>::type;

// Sum over a whole threadgroup of up to 32 simdgroups.
template <typename T>
accum_t<T> group_sum(threadgroup accum_t<T>* scratch, T v, uint tid, uint n) {
  auto s = ::metal::simd_sum(static_cast<accum_t<T>>(v));
  if (tid % lanes == 0) {
    scratch[tid / lanes] = s;
  }
  ::metal::threadgroup_barrier(::metal::mem_flags::mem_threadgroup);
  if (tid == 0) {
    accum_t<T> total = 0;
    for (uint i = 0; i < (n + lanes - 1) / lanes; ++i) {
      total += scratch[i];
    }
    scratch[0] = total;
  }
  ::metal::threadgroup_barrier(::metal::mem_flags::mem_threadgroup);
  return scratch[0];
}

template <typename I = uint>
struct RowParams {
  I cols;
  I rows;
};
} // namespace metal
} // namespace mini
"#;

/// One simdgroup per row divides each row by its sum (half in, float
/// accumulation); one threadgroup sums a whole vector.
const REDUCE_METAL: &str = r#"#include <mini/metal/reduce.h>
using namespace metal;

template <typename T, typename I>
[[max_total_threads_per_threadgroup(64)]] [[kernel]] void
row_normalize(
    constant T* x,
    device T* y,
    constant mini::metal::RowParams<I>& p,
    uint tgid [[threadgroup_position_in_grid]],
    uint lane [[thread_index_in_simdgroup]],
    uint sg [[simdgroup_index_in_threadgroup]],
    uint tptg [[threads_per_threadgroup]]) {
  const I row = I(tgid) * (tptg / mini::metal::lanes) + sg;
  if (row >= p.rows) {
    return;
  }
  mini::metal::accum_t<T> s = 0;
  for (I c = lane; c < p.cols; c += mini::metal::lanes) {
    s += x[row * p.cols + c];
  }
  s = simd_sum(s);
  for (I c = lane; c < p.cols; c += mini::metal::lanes) {
    y[row * p.cols + c] = static_cast<T>(x[row * p.cols + c] / s);
  }
}

template <typename T>
kernel void total(
    constant T* x [[buffer(0)]],
    device float* out [[buffer(1)]],
    uint tid [[thread_position_in_threadgroup]],
    uint n [[threads_per_threadgroup]]) {
  threadgroup float scratch[32];
  const float s = mini::metal::group_sum(scratch, x[tid], tid, n);
  if (tid == 0) {
    out[0] = s;
  }
}

template [[host_name("row_normalize_half_u32")]] [[kernel]] void
row_normalize<half, uint>(
    constant half*, device half*, constant mini::metal::RowParams<uint>&, uint, uint, uint, uint);
template [[host_name("total_half")]] kernel void total<half>(constant half*, device float*, uint, uint);
"#;

struct Scratch(PathBuf);

impl Scratch {
    fn new(tag: &str) -> Scratch {
        let d = std::env::temp_dir().join(format!("mp-lib-styles-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        Scratch(d)
    }
    fn file(&self, rel: &str, text: &str) -> PathBuf {
        let p = self.0.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, text).unwrap();
        p
    }
    fn npy(&self, name: &str, a: &Array) -> String {
        let p = self.0.join(name);
        a.write_npy(&p).unwrap();
        format!("@{}", p.display())
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn mp(args: &[String]) -> Output {
    Command::new(BIN).args(args).output().expect("run metal-puzzles")
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Run `kernel` and return the named output, read back from `--out`.
fn run(s: &Scratch, file: &Path, kernel: &str, grid: &str, tg: &str, extra: &[String], output: &str) -> Array {
    let out = s.0.join(format!("out-{kernel}"));
    let mut args: Vec<String> = ["run", &file.display().to_string(), "--kernel", kernel, "--grid", grid, "--threadgroup", tg]
        .iter()
        .map(|x| x.to_string())
        .collect();
    args.extend(extra.iter().cloned());
    args.extend(["--out".to_string(), out.display().to_string()]);
    let o = mp(&args);
    assert_eq!(o.status.code(), Some(0), "{kernel}: {}", err(&o));
    Array::read_npy(out.join(format!("{output}.npy"))).unwrap()
}

fn arg(name: &str, value: String) -> [String; 2] {
    ["--arg".into(), format!("{name}={value}")]
}

#[test]
fn pytorch_style_library_lints_and_runs_from_its_include_root() {
    let s = Scratch::new("torch");
    s.file("lib/mini/metal/ops.h", OPS_H);
    let k = s.file("kernels/Map.metal", MAP_METAL);
    let inc = ["-I".to_string(), s.0.join("lib").display().to_string()];

    let mut lint = vec!["lint".to_string(), k.display().to_string()];
    lint.extend(inc.iter().cloned());
    let o = mp(&lint);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let listed = err(&o);
    for name in ["square_dense_float_float", "square_strided_float_int", "square_dense_float2_float2"] {
        assert!(listed.contains(name), "{name} missing from: {listed}");
    }

    // Reals through the floating-point overload.
    let x: Vec<f64> = (0..10).map(|i| i as f64 * 0.5 - 2.0).collect();
    let mut extra = inc.to_vec();
    extra.extend(arg("in", s.npy("x.npy", &Array::from_f64(DType::F32, &[10], &x).unwrap())));
    extra.extend(arg("out", s.npy("o.npy", &Array::zeros(DType::F32, &[10]))));
    let got = run(&s, &k, "square_dense_float_float", "10", "4", &extra, "out").to_f64_vec();
    assert_eq!(got, x.iter().map(|v| v * v).collect::<Vec<_>>());

    // Integers through the integral overload, read through strides (a transpose).
    let n: Vec<f64> = (0..6).map(|i| i as f64 - 3.0).collect();
    let mut extra = inc.to_vec();
    extra.extend(arg("in", s.npy("n.npy", &Array::from_f64(DType::I32, &[2, 3], &n).unwrap())));
    extra.extend(arg("out", s.npy("o2.npy", &Array::zeros(DType::F32, &[3, 2]))));
    extra.extend(arg("sizes", s.npy("sz.npy", &Array::from_f64(DType::I64, &[2], &[2.0, 3.0]).unwrap())));
    extra.extend(arg("in_strides", s.npy("st.npy", &Array::from_f64(DType::I64, &[2], &[3.0, 1.0]).unwrap())));
    extra.extend(arg("ndim", "2:u32".into()));
    let got = run(&s, &k, "square_strided_float_int", "6", "6", &extra, "out").to_f64_vec();
    // Output element i = p0 + 2*p1 reads input (p0, p1) of the 2x3 array.
    let want: Vec<f64> = (0..6).map(|i| n[(i % 2) * 3 + i / 2].powi(2)).collect();
    assert_eq!(got, want);

    // Complex pairs through the `is_pair_v` overload.
    let z: Vec<f64> = vec![1.0, 2.0, -0.5, 0.25, 3.0, 0.0];
    let mut extra = inc.to_vec();
    extra.extend(arg("in", s.npy("z.npy", &Array::from_f64(DType::F32, &[3, 2], &z).unwrap())));
    extra.extend(arg("out", s.npy("o3.npy", &Array::zeros(DType::F32, &[3, 2]))));
    let got = run(&s, &k, "square_dense_float2_float2", "3", "3", &extra, "out").to_f64_vec();
    let want: Vec<f64> = z.chunks(2).flat_map(|c| [c[0] * c[0] - c[1] * c[1], 2.0 * c[0] * c[1]]).collect();
    assert_eq!(got, want);
}

#[test]
fn candle_style_instantiations_structs_of_pointers_and_threadgroup_buffers() {
    let s = Scratch::new("candle");
    let k = s.file("kernels.metal", CANDLE_STYLE);

    // 11 floats, two per thread: 6 threads.
    let x: Vec<f64> = (0..11).map(|i| i as f64).collect();
    let mut extra = Vec::new();
    extra.extend(arg("n", "11:u64".into()));
    extra.extend(arg("mul", "2.0:f32".into()));
    extra.extend(arg("add", "0.5:f32".into()));
    extra.extend(arg("src", s.npy("x.npy", &Array::from_f64(DType::F32, &[11], &x).unwrap())));
    extra.extend(arg("dst", s.npy("y.npy", &Array::zeros(DType::F32, &[11]))));
    let got = run(&s, &k, "affine_f32", "6", "6", &extra, "dst").to_f64_vec();
    assert_eq!(got, x.iter().map(|v| v * 2.0 + 0.5).collect::<Vec<_>>());

    // A 3x4 array read column-major through the struct of pointers.
    let m: Vec<f64> = (0..12).map(|i| i as f64).collect();
    let mut extra = Vec::new();
    extra.extend(arg("n", "12:u64".into()));
    extra.extend(arg("nd", "2:u64".into()));
    extra.extend(arg("dims", s.npy("d.npy", &Array::from_f64(DType::U64, &[2], &[4.0, 3.0]).unwrap())));
    extra.extend(arg("strides", s.npy("s.npy", &Array::from_f64(DType::U64, &[2], &[1.0, 4.0]).unwrap())));
    extra.extend(arg("src", s.npy("m.npy", &Array::from_f64(DType::F32, &[12], &m).unwrap())));
    extra.extend(arg("dst", s.npy("t.npy", &Array::zeros(DType::F32, &[12]))));
    let got = run(&s, &k, "copy_view_f32", "12", "4", &extra, "dst").to_f64_vec();
    // dst viewed as 4x3 (row-major) holds src viewed as 3x4, transposed.
    let want: Vec<f64> = (0..12).map(|i| m[(i % 3) * 4 + i / 3]).collect();
    assert_eq!(got, want);

    // Rows reversed through threadgroup memory; the shape is a `constant long2&`.
    let r: Vec<f64> = (0..15).map(|i| i as f64).collect();
    let mut extra = Vec::new();
    extra.extend(arg("x", s.npy("r.npy", &Array::from_f64(DType::F32, &[3, 5], &r).unwrap())));
    extra.extend(arg("y", s.npy("ry.npy", &Array::zeros(DType::F32, &[3, 5]))));
    extra.extend(arg("shape", s.npy("sh.npy", &Array::from_f64(DType::I64, &[2], &[3.0, 5.0]).unwrap())));
    extra.extend(["--threadgroup-memory".to_string(), "0=20".to_string()]);
    let got = run(&s, &k, "reverse_rows_f32", "5,3", "5,1", &extra, "y").to_f64_vec();
    let want: Vec<f64> = (0..15).map(|i| r[(i / 5) * 5 + 4 - i % 5]).collect();
    assert_eq!(got, want);
}

#[test]
fn frexp_takes_its_exponent_through_a_pointer_too() {
    let s = Scratch::new("frexp");
    let k = s.file("kernels.metal", CANDLE_STYLE);
    let x = [8.0, -0.75, 1.0, 3.0];
    let mut extra = Vec::new();
    extra.extend(arg("x", s.npy("x.npy", &Array::from_f64(DType::F32, &[4], &x).unwrap())));
    extra.extend(arg("mant", s.npy("m.npy", &Array::zeros(DType::F32, &[4]))));
    extra.extend(arg("e", s.npy("e.npy", &Array::zeros(DType::I32, &[4]))));
    let mant = run(&s, &k, "split_exp_f32", "4", "4", &extra, "mant").to_f64_vec();
    let e = Array::read_npy(s.0.join("out-split_exp_f32").join("e.npy")).unwrap().to_f64_vec();
    assert_eq!(mant, vec![0.5, -0.75, 0.5, 0.75]);
    assert_eq!(e, vec![4.0, 0.0, 1.0, 2.0]);
}

#[test]
fn threadgroup_memory_and_vector_constants_are_checked() {
    let s = Scratch::new("checks");
    let k = s.file("kernels.metal", CANDLE_STYLE);
    let base = |extra: &[String]| {
        let mut a: Vec<String> = ["run", &k.display().to_string(), "--kernel", "reverse_rows_f32", "--grid", "5,3", "--threadgroup", "5,1"]
            .iter()
            .map(|x| x.to_string())
            .collect();
        a.extend(arg("x", "zeros(15):f32".into()));
        a.extend(arg("y", "zeros(15):f32".into()));
        a.extend(extra.iter().cloned());
        mp(&a)
    };
    let shape = arg("shape", s.npy("sh.npy", &Array::from_f64(DType::I64, &[2], &[3.0, 5.0]).unwrap()));
    // No size for the threadgroup buffer.
    let o = base(&shape);
    assert_eq!(o.status.code(), Some(2));
    assert!(err(&o).contains("--threadgroup-memory 0=BYTES"), "{}", err(&o));
    // A size for an index the kernel does not have.
    let mut e = shape.to_vec();
    e.extend(["--threadgroup-memory".into(), "1=64".into()]);
    let o = base(&e);
    assert_eq!(o.status.code(), Some(2));
    assert!(err(&o).contains("no `[[threadgroup(1)]]` parameter"), "{}", err(&o));
    // A `long2` needs exactly two int64 values.
    let mut e = arg("shape", s.npy("bad.npy", &Array::from_f64(DType::I64, &[4], &[3.0, 5.0, 1.0, 1.0]).unwrap())).to_vec();
    e.extend(["--threadgroup-memory".into(), "0=20".into()]);
    let o = base(&e);
    assert_eq!(o.status.code(), Some(2));
    assert!(err(&o).contains("is a single `long2` (16 bytes)"), "{}", err(&o));
}

#[test]
fn pytorch_style_reductions_resolve_relative_qualified_aliases() {
    let s = Scratch::new("reduce");
    s.file("lib/mini/metal/reduce.h", REDUCE_H);
    let k = s.file("kernels/Reduce.metal", REDUCE_METAL);
    let inc = ["-I".to_string(), s.0.join("lib").display().to_string()];

    // Three rows of 40 (more than one simdgroup's width) with two rows
    // per threadgroup of 64 threads.
    let (rows, cols) = (3usize, 40usize);
    let x: Vec<f64> = (0..rows * cols).map(|i| 0.25 + (i % 7) as f64 * 0.5).collect();
    let mut extra = inc.to_vec();
    extra.extend(arg("x", s.npy("x.npy", &Array::from_f64(DType::F16, &[rows, cols], &x).unwrap())));
    extra.extend(arg("y", s.npy("y.npy", &Array::zeros(DType::F16, &[rows, cols]))));
    extra.extend(arg("p", s.npy("p.npy", &Array::from_f64(DType::U32, &[2], &[cols as f64, rows as f64]).unwrap())));
    let got = run(&s, &k, "row_normalize_half_u32", "128", "64", &extra, "y").to_f64_vec();
    for r in 0..rows {
        let row = &x[r * cols..(r + 1) * cols];
        let sum: f64 = row.iter().sum();
        for c in 0..cols {
            let want = row[c] / sum;
            let g = got[r * cols + c];
            assert!((g - want).abs() <= 1e-3 * want.abs() + 1e-5, "row {r} col {c}: {g} vs {want}");
        }
    }

    // A 100-thread threadgroup: four simdgroups, the last one partial.
    let v: Vec<f64> = (0..100).map(|i| (i as f64) * 0.125 - 3.0).collect();
    let mut extra = inc.to_vec();
    extra.extend(arg("x", s.npy("v.npy", &Array::from_f64(DType::F16, &[100], &v).unwrap())));
    extra.extend(arg("out", s.npy("t.npy", &Array::zeros(DType::F32, &[1]))));
    let got = run(&s, &k, "total_half", "100", "100", &extra, "out").to_f64_vec();
    assert_eq!(got, vec![v.iter().sum::<f64>()]);
}
