//! C++ semantics tests that the fixture harness (`fixtures.rs`, kernels in
//! `fixtures/semantics/`) cannot express; every other one is a `.metal`
//! fixture stating its expected outputs. These stay here because they
//! either run a kernel of the msl corpus (`msl/tests/kernels/features/`,
//! one copy of each, shared with the front end's tests) or need inputs the
//! fixture header cannot state (buffers holding specific non-sequential
//! values, several kernels or inputs per test, a tolerance), with the
//! expected values computed here by hand.

mod common;
use common::*;

/// The corpus kernel `features/inheritance.metal`, run and compared with
/// values computed by hand from C++'s rules.
#[test]
fn inheritance_corpus_kernel_matches_reference() {
    let src = include_str!("../../msl/tests/kernels/features/inheritance.metal");
    let out = run_eight_threads(src, "inheritance_kernel");
    for (i, v) in out.iter().enumerate() {
        let w = i as f32;
        // Box: width w, tag 3, depth w + 1; sides 4; sizeof = 3 floats/ints.
        let volume = w * w * (w + 1.0) + 3.0 + 4.0;
        let wide_side = 2.0 * w;
        // Meter: count 2 bumped to 3, unit 3: 3 * 3 + 3.
        let reading = 12.0;
        let expect = volume + wide_side + w + w + w + reading + 10.0 + 1.0 + 100.0 + 4.0 + 12.0;
        assert_eq!(*v, expect, "thread {i}");
    }
}

/// The corpus kernel `features/matrices.metal` against the same products
/// computed here on column-major arrays.
#[test]
fn matrix_arithmetic_matches_reference() {
    let src = include_str!("../../msl/tests/kernels/features/matrices.metal");
    let k = compile(src, "matrices_kernel");
    let cols = [[1.0f32, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 10.0]];
    // float3x3 columns take 16 bytes each; then float2 shift at offset 48.
    let mut xf: Vec<f32> = cols.iter().flat_map(|c| [c[0], c[1], c[2], 0.0]).collect();
    xf.extend([5.0, -1.0, 0.0, 0.0]);
    let n = 4usize;
    let mut b = bufs(vec![(0, f32s(&xf)), (1, f32s(&vec![0.0; n * 16]))]);
    let r = run(&k, &threads([n as u32, 1, 1], [n as u32, 1, 1]), &mut b, &opts(CheckLevel::All));
    assert!(r.findings.is_empty(), "{:?}", r.findings);
    let out = to_f32(&b[&1]);
    let el = |c: usize, r: usize| cols[c][r];
    for i in 0..n {
        let v = [i as f32, 1.0, -2.0];
        let mv: Vec<f32> = (0..3).map(|r| (0..3).map(|c| el(c, r) * v[c]).sum()).collect();
        let vm: Vec<f32> = (0..3).map(|c| (0..3).map(|r| v[r] * el(c, r)).sum()).collect();
        // (m * mᵀ)(c, r) = Σ_t m(t, r) · m(t, c).
        let mmt = |c: usize, r: usize| (0..3).map(|t| el(t, r) * el(t, c)).sum::<f32>();
        let mm = |c: usize, r: usize| mmt(c, r) + if c == r { 2.0 } else { 0.0 } - el(c, r) * 0.5;
        // r = (column 0, column 2); sq = rᵀ r, sq(c, r') = column c · column r'.
        let picked = [cols[0], cols[2]];
        let sq = |c: usize, rr: usize| (0..3).map(|t| picked[c][t] * picked[rr][t]).sum::<f32>();
        let det3 = el(0, 0) * (el(1, 1) * el(2, 2) - el(2, 1) * el(1, 2)) - el(1, 0) * (el(0, 1) * el(2, 2) - el(2, 1) * el(0, 2))
            + el(2, 0) * (el(0, 1) * el(1, 2) - el(1, 1) * el(0, 2));
        // Upper-triangular 4x4: the product of its diagonal, 2·3·1·4; float2x2(1,2,3,4): 1·4 − 3·2.
        let det = 24.0 + (4.0 - 6.0);
        let want = [
            mv[0],
            mv[1],
            mv[2],
            vm[0],
            vm[1],
            vm[2],
            mm(1, 2),
            mm(0, 0),
            sq(1, 0),
            sq(1, 1),
            v[0] + 5.0,
            v[1] - 1.0,
            2.0 * i as f32 + 4.0,
            vm[2],
            det3,
            // Column i % 3 of mᵀ, row 1: element (1, i % 3) of m.
            det + 100.0 * el(1, i % 3),
        ];
        assert_eq!(&out[i * 16..i * 16 + 16], &want, "thread {i}");
    }
}

/// The corpus kernel `features/steel_style_gemm.metal` (a tile GEMM in the
/// style of MLX's steel: fragments filled through `thread_elements()`,
/// partial specializations, alias templates, overloaded kernel templates),
/// both instantiations, compared with a product computed here.
#[test]
fn steel_style_gemm_matches_reference() {
    let src = include_str!("../../msl/tests/kernels/features/steel_style_gemm.metal");
    let (m, n, k) = (16usize, 16usize, 8usize);
    let a: Vec<f32> = (0..m * k).map(|x| (((x / k) * 3 + (x % k) * 5) % 7) as f32 - 3.0).collect();
    let b: Vec<f32> = (0..k * n).map(|x| (((x / n) * 2 + x % n) % 5) as f32 - 2.0).collect();
    let bias: Vec<f32> = (0..n).map(|j| j as f32 * 0.5).collect();
    let product = |i: usize, j: usize| (0..k).map(|p| a[i * k + p] * b[p * n + j]).sum::<f32>();
    for (kernel, with_bias) in [("gemm_f32_16x16x8", true), ("gemm_plain_f32_16x16x8", false)] {
        let compiled = compile(src, kernel);
        let mut bu = bufs(vec![(0, f32s(&a)), (1, f32s(&b)), (2, f32s(&vec![0.0; m * n])), (3, f32s(&bias))]);
        let r = run(&compiled, &threads([32, 1, 1], [32, 1, 1]), &mut bu, &opts(CheckLevel::All));
        assert!(r.findings.is_empty(), "{kernel}: {:?}", r.findings);
        let c = to_f32(&bu[&2]);
        for i in 0..m {
            for j in 0..n {
                let expect = product(i, j) + if with_bias { bias[j] } else { 0.0 };
                assert_eq!(c[i * n + j], expect, "{kernel}: C[{i}][{j}]");
            }
        }
    }
}

/// `a * b` on SIMD-group matrices is their product (MLX's Winograd
/// transforms); braces that leave out a vector's trailing components make
/// them zero (`uint4 k = {a, b, c}`, `uint2 v = {5}` is (5, 0)).
#[test]
fn simdgroup_matrix_product_operator_and_short_vector_braces() {
    let src = r#"
#include <metal_stdlib>
using namespace metal;
kernel void k(const device float* A [[buffer(0)]], const device float* B [[buffer(1)]], device float* out [[buffer(2)]],
              device uint* v [[buffer(3)]], uint lane [[thread_index_in_simdgroup]]) {
  simdgroup_float8x8 a, b;
  simdgroup_load(a, A, 8);
  simdgroup_load(b, B, 8);
  simdgroup_float8x8 c = (a * b) * a;
  simdgroup_store(c, out, 8);
  uint4 k = {lane, 2u, 3u};
  uint2 one = {5u};
  v[lane] = k.x + 10 * k.y + 100 * k.z + 1000 * k.w + 10000 * one.y + 100000 * (one.x == 5 ? 1 : 0);
}
"#;
    let a: Vec<f32> = (0..64).map(|i| ((i * 7) % 5) as f32 - 2.0).collect();
    let bm: Vec<f32> = (0..64).map(|i| ((i * 3) % 4) as f32 - 1.0).collect();
    let k = compile(src, "k");
    let mut b = bufs(vec![(0, f32s(&a)), (1, f32s(&bm)), (2, f32s(&[0.0; 64])), (3, u32s(&[7; 32]))]);
    let r = run(&k, &threads([32, 1, 1], [32, 1, 1]), &mut b, &opts(CheckLevel::All));
    assert!(r.findings.is_empty(), "{:?}", r.findings);
    let mul = |x: &[f32], y: &[f32]| -> Vec<f32> { (0..64).map(|e| (0..8).map(|t| x[(e / 8) * 8 + t] * y[t * 8 + e % 8]).sum()).collect() };
    assert_eq!(to_f32(&b[&2]), mul(&mul(&a, &bm), &a));
    let v = to_u32(&b[&3]);
    for (lane, x) in v.iter().enumerate() {
        assert_eq!(*x, lane as u32 + 320 + 100000, "lane {lane}");
    }
}

/// The corpus kernels `features/range_for.metal` and
/// `features/static_member_definitions.metal`, run and compared with the
/// same computations here.
#[test]
fn range_for_and_static_member_corpus_kernels_match_reference() {
    let src = include_str!("../../msl/tests/kernels/features/range_for.metal");
    let k = compile(src, "range_for_kernel");
    let mut b = bufs(vec![(0, u32s(&[0; 8]))]);
    let r = run(&k, &threads([8, 1, 1], [8, 1, 1]), &mut b, &opts(CheckLevel::All));
    assert!(r.findings.is_empty(), "{:?}", r.findings);
    let shifts = [[1u32, 2, 3], [4, 5, 6]];
    let mut total = 0;
    'rows: for row in &shifts {
        for &s in row {
            if s == 2 {
                continue;
            }
            if s == 5 {
                break 'rows;
            }
            total += s;
        }
    }
    for (tid, v) in to_u32(&b[&0]).iter().enumerate() {
        let tid = tid as u32;
        let acc = shifts[tid as usize % 2].iter().fold(tid, |acc, &s| acc + ((acc << s) & 0xFF));
        let last = 2 * (tid + 3);
        assert_eq!(*v, acc + total + (7 + last) + (9 + last), "thread {tid}");
    }

    let src = include_str!("../../msl/tests/kernels/features/static_member_definitions.metal");
    let k = compile(src, "static_member_definitions_kernel");
    let mut b = bufs(vec![(0, f32s(&[0.0; 6]))]);
    let r = run(&k, &threads([6, 1, 1], [6, 1, 1]), &mut b, &opts(CheckLevel::All));
    assert!(r.findings.is_empty(), "{:?}", r.findings);
    let w = [[0.5f32, 1.0, 1.5], [2.0, 2.5, 3.0]];
    for (tid, v) in to_f32(&b[&0]).iter().enumerate() {
        assert_eq!(*v, w[tid / 3 % 2][tid % 3], "thread {tid}");
    }
}

/// The corpus kernel `features/reduction_traits.metal`: an argmax over one
/// SIMD-group through a library's own (index, value) type, with
/// `numeric_limits` from its `_numeric_limits_impl` specialization and a
/// shuffle overload found where the reducer is instantiated. Ties go to the
/// lower index.
#[test]
fn library_reduction_traits_argmax() {
    let src = include_str!("../../msl/tests/kernels/features/reduction_traits.metal");
    let k = compile(src, "argmax_rows");
    let cases: [Vec<f32>; 3] = [
        (0..32).map(|i| ((i * 7919) % 101) as f32 * 0.25 - 3.0).collect(),
        (0..32).map(|i| if i == 5 || i == 20 { 9.5 } else { -(i as f32) }).collect(),
        (0..32).map(|i| -1.0e30 - i as f32).collect(),
    ];
    for x in cases {
        let mut b = bufs(vec![(0, f32s(&x)), (1, u32s(&[0; 32]))]);
        let r = run(&k, &threads([32, 1, 1], [32, 1, 1]), &mut b, &opts(CheckLevel::All));
        assert!(r.findings.is_empty(), "{:?}", r.findings);
        let best = (0..32).fold(0, |m, i| if x[i] > x[m] { i } else { m }) as u32;
        assert_eq!(to_u32(&b[&1]), vec![best; 32], "{x:?}");
    }
}

#[test]
fn function_pointers_corpus_kernel_matches_reference() {
    let src = include_str!("../../msl/tests/kernels/features/function_pointers.metal");
    let out = run_eight_threads(src, "function_pointers");
    for (i, v) in out.iter().enumerate() {
        let x = i as f32;
        let vals = [x, 1.0, 2.0, x - 3.0];
        let sum: f32 = vals.iter().sum();
        let max = vals.iter().cloned().fold(f32::MIN, f32::max);
        let prod: f32 = vals.iter().product();
        let sub = vals[0] - vals[1];
        let via = |f: &dyn Fn(f32) -> f32| f(f(x)) + f(1.0);
        let loaded = 3.0 * 0.5 + 5.0 * 0.5;
        let expect = sum + max * 10.0 + prod * 100.0 + sub * 1000.0 + via(&|t| 2.0 * t) + via(&|t| t * t) + loaded;
        assert_eq!(*v, expect, "thread {i}");
    }
}

/// A generic `apply` with a function pointer template parameter, and an
/// atomic-style helper taking `T (*op)(T, T)` called with two different
/// functions (a compare-and-swap loop applies the operation).
#[test]
fn function_pointer_template_parameter_and_atomic_style_helper() {
    let src = r#"
template <typename T, T (*Op)(T)>
void apply(device T* data, uint k) { data[k] = Op(data[k]); }
float cube(float v) { return v * v * v; }
template <typename T> T halve(T v) { return v / T(2); }

template <typename T>
T atomic_update(device atomic_uint* cell, T value, T (*op)(T, T)) {
  uint old = atomic_load_explicit(cell, memory_order_relaxed);
  uint next;
  do {
    next = as_type<uint>(op(as_type<T>(old), value));
  } while (!atomic_compare_exchange_weak_explicit(cell, &old, next, memory_order_relaxed, memory_order_relaxed));
  return as_type<T>(old);
}
float fmax2(float a, float b) { return a > b ? a : b; }
template <typename T> T plus(T a, T b) { return a + b; }

kernel void k(device float* out [[buffer(0)]], device atomic_uint* cells [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  out[i] = float(i) + 1.0f;
  if (i % 2 == 0) {
    apply<float, cube>(out, i);
  } else {
    apply<float, halve<float>>(out, i);
  }
  atomic_update(&cells[0], float(i) * 1.5f, fmax2);
  atomic_update(&cells[1], float(i), plus<float>);
}
"#;
    let full = format!("{PRELUDE}{src}");
    let k = compile(&full, "k");
    let n = 8usize;
    let mut b = bufs(vec![(0, f32s(&vec![0.0; n])), (1, f32s(&[-1.0, 0.0]))]);
    let r = run(&k, &threads([n as u32, 1, 1], [n as u32, 1, 1]), &mut b, &opts(CheckLevel::All));
    assert!(r.findings.is_empty(), "{:?}", r.findings);
    let out = to_f32(&b[&0]);
    for (i, v) in out.iter().enumerate() {
        let x = i as f32 + 1.0;
        let expect = if i % 2 == 0 { x * x * x } else { x / 2.0 };
        assert_eq!(*v, expect, "thread {i}");
    }
    let cells = to_f32(&b[&1]);
    let max = (0..n).map(|i| i as f32 * 1.5).fold(-1.0f32, f32::max);
    let sum: f32 = (0..n).map(|i| i as f32).sum();
    assert_eq!(cells, vec![max, sum]);
}

#[test]
fn local_union_variables_corpus_kernel_matches_reference() {
    let src = include_str!("../../msl/tests/kernels/features/local_union_variables.metal");
    let k = compile(src, "local_union_variables");
    let n = 8usize;
    let mut b = bufs(vec![(0, vec![0u8; 8]), (1, f32s(&vec![0.0; n]))]);
    let r = run(&k, &threads([n as u32, 1, 1], [n as u32, 1, 1]), &mut b, &opts(CheckLevel::All));
    assert!(r.findings.is_empty(), "{:?}", r.findings);
    let out = to_f32(&b[&1]);
    for (i, v) in out.iter().enumerate() {
        assert_eq!(*v, i as f32 * 2.0 + 3.0, "thread {i}");
    }
    // Threads i with (i % 4) / 2 == w add 0.25 to half i & 1 of word w:
    // every half gets two additions, 0.5 (0x3800).
    let words: Vec<u32> = b[&0].chunks(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
    assert_eq!(words, vec![0x3800_3800, 0x3800_3800]);
}

/// Run `kernel` of `src` over 8 threads in one threadgroup with buffer 0
/// of 8 floats and every check on; no findings; buffer 0 as floats.
fn run_eight_threads(src: &str, kernel: &str) -> Vec<f32> {
    let k = compile(src, kernel);
    let mut b = bufs(vec![(0, f32s(&[0.0; 8]))]);
    let r = run(&k, &threads([8, 1, 1], [8, 1, 1]), &mut b, &opts(CheckLevel::All));
    assert!(r.findings.is_empty(), "{:?}", r.findings);
    to_f32(&b[&0])
}

/// The corpus kernel `features/template_template_params.metal`: row
/// reductions parameterized by op class templates (`template <typename>
/// class OpFn`), one instance per op and load functor, and the other uses
/// of template template parameters, all compared with Rust.
#[test]
fn template_template_parameter_reductions() {
    let src = include_str!("../../msl/tests/kernels/features/template_template_params.metal");
    // Two rows of 64 values of mixed signs.
    let x: Vec<f32> = (0..128).map(|i| ((i * 37 % 61) as f32 - 30.0) * 0.5).collect();
    let rows: Vec<&[f32]> = x.chunks(64).collect();
    let sum = |r: &[f32]| r.iter().sum::<f32>();
    let abs_sum = |r: &[f32]| r.iter().map(|v| v.abs()).sum::<f32>();
    let max = |r: &[f32]| r.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let abs_min = |r: &[f32]| r.iter().map(|v| v.abs()).fold(f32::INFINITY, f32::min);
    type Reference = fn(&[f32]) -> f32;
    let cases: [(&str, Reference); 4] =
        [("row_reduce_sum", sum), ("row_reduce_max", max), ("row_reduce_abs_min", abs_min), ("row_reduce_alias_sum", abs_sum)];
    for (host, reference) in cases {
        let k = compile(src, host);
        let mut b = bufs(vec![(0, f32s(&x)), (1, f32s(&[0.0; 2]))]);
        let r = run(&k, &groups([2, 1, 1], [32, 1, 1]), &mut b, &opts(CheckLevel::All));
        assert!(r.findings.is_empty(), "{host}: {:?}", r.findings);
        let out = to_f32(&b[&1]);
        for (row, got) in rows.iter().zip(&out) {
            let want = reference(row);
            assert!((got - want).abs() <= 1e-4 * want.abs().max(1.0), "{host}: got {got}, want {want}");
        }
    }
    let k = compile(src, "ttp_misc");
    let x = &x[..64];
    let mut b = bufs(vec![(0, f32s(x)), (1, f32s(&[0.0; 8]))]);
    let r = run(&k, &threads([32, 1, 1], [32, 1, 1]), &mut b, &opts(CheckLevel::All));
    assert!(r.findings.is_empty(), "{:?}", r.findings);
    let argmax = (0..64).fold(0, |m, i| if x[i] > x[m] { i } else { m });
    let want = [x[0].max(x[1]), x[0] + x[1], 110.0, 2.0 * x[2], 1.0 + x[3] + x[4], 34.0 + 8.0, x[5] + 2.0, argmax as f32];
    assert_eq!(to_f32(&b[&1]), want.to_vec());
}

/// The corpus kernel `features/function_template_arguments.metal`: a
/// mixture-of-experts mat-vec instantiated once per storage format through
/// an overloaded wrapper template whose overloads differ in the function
/// type of their template parameter. Each instance picks matrix `ids[z]`
/// for input vector `z`; every output is checked against a dot product
/// computed here from the same (exactly representable) values.
#[test]
fn function_template_arguments_choose_overloads_by_function_type() {
    let src = include_str!("../../msl/tests/kernels/features/function_template_arguments.metal");
    const ROWS: usize = 4;
    const COLS: usize = 16;
    const QK: usize = 8;
    const MATS: usize = 3;
    let ids = [2i32, 0];
    let w = |e: usize, r: usize, k: usize| ((e * 7 + r * 3 + k * 5) % 11) as i32 - 5;
    let x: Vec<f32> = (0..ids.len() * COLS).map(|i| ((i * 5 + i / COLS) % 7) as f32 * 0.5 - 1.5).collect();
    let half_bytes = |v: f32| half::f16::from_f32(v).to_bits().to_le_bytes();
    // Per format: the matrices' bytes, bytes per row and per matrix, and
    // the value of element (e, r, k).
    type Elem = Box<dyn Fn(usize, usize, usize) -> f32>;
    let mut formats: Vec<(&str, Vec<u8>, usize, usize, Elem)> = Vec::new();
    let dense = |bytes_per: usize, enc: &dyn Fn(i32) -> Vec<u8>| {
        let mut m = Vec::new();
        for e in 0..MATS {
            for r in 0..ROWS {
                for k in 0..COLS {
                    m.extend(enc(w(e, r, k)));
                }
            }
        }
        (m, COLS * bytes_per, ROWS * COLS * bytes_per)
    };
    let (m, nr, nm) = dense(4, &|v| (v as f32).to_le_bytes().to_vec());
    formats.push(("mv_id_f32", m, nr, nm, Box::new(move |e, r, k| w(e, r, k) as f32)));
    let (m, nr, nm) = dense(2, &|v| half_bytes(v as f32).to_vec());
    formats.push(("mv_id_f16", m, nr, nm, Box::new(move |e, r, k| w(e, r, k) as f32)));
    let (m, nr, nm) = dense(1, &|v| vec![v as i8 as u8]);
    formats.push(("mv_id_i8", m, nr, nm, Box::new(move |e, r, k| w(e, r, k) as f32)));
    // block_q8: half d, char qs[8] (10 bytes).
    let q8_d = |e: usize, r: usize, b: usize| 0.25 * (1 + (e + r + b) % 3) as f32;
    let mut m = Vec::new();
    for e in 0..MATS {
        for r in 0..ROWS {
            for b in 0..COLS / QK {
                m.extend(half_bytes(q8_d(e, r, b)));
                m.extend((0..QK).map(|j| w(e, r, b * QK + j) as i8 as u8));
            }
        }
    }
    let row = COLS / QK * 10;
    formats.push(("mv_id_q8", m, row, ROWS * row, Box::new(move |e, r, k| q8_d(e, r, k / QK) * w(e, r, k) as f32)));
    // block_q4: half d, half m, uchar qs[4]: element j < 4 in the low
    // nibble of qs[j], element j >= 4 in the high nibble of qs[j - 4].
    let q4 = |e: usize, r: usize, k: usize| ((e + r * 2 + k * 3) % 16) as u8;
    let q4_dm = |e: usize, r: usize, b: usize| (0.5f32, -2.0 + (e + r + b) as f32);
    let mut m = Vec::new();
    for e in 0..MATS {
        for r in 0..ROWS {
            for b in 0..COLS / QK {
                let (d, mn) = q4_dm(e, r, b);
                m.extend(half_bytes(d));
                m.extend(half_bytes(mn));
                m.extend((0..QK / 2).map(|j| q4(e, r, b * QK + j) | (q4(e, r, b * QK + j + QK / 2) << 4)));
            }
        }
    }
    let row = COLS / QK * 8;
    formats.push((
        "mv_id_q4",
        m,
        row,
        ROWS * row,
        Box::new(move |e, r, k| {
            let (d, mn) = q4_dm(e, r, k / QK);
            d * q4(e, r, k) as f32 + mn
        }),
    ));
    let (m, nr, nm) = dense(4, &|v| (v as f32).to_le_bytes().to_vec());
    formats.push(("mv_id_scaled", m, nr, nm, Box::new(move |e, r, k| w(e, r, k) as f32)));

    for (host, mats, nb_row, nb_mat, elem) in formats {
        let k = compile(src, host);
        let mut b = bufs(vec![
            (0, mats),
            (1, f32s(&x)),
            (2, f32s(&[0.0; ROWS * 2])),
            (3, i32s(&ids)),
            (4, u64s(&[COLS as u64])),
            (5, u64s(&[nb_row as u64])),
            (6, u64s(&[nb_mat as u64])),
        ]);
        let r = run(&k, &threads([ROWS as u32, 2, 1], [ROWS as u32, 2, 1]), &mut b, &opts(CheckLevel::All));
        assert!(r.findings.is_empty(), "{host}: {:?}", r.findings);
        let scale = if host == "mv_id_scaled" { 0.5 } else { 1.0 };
        let expect: Vec<f32> = (0..2)
            .flat_map(|z| {
                let e = ids[z] as usize;
                let elem = &elem;
                let x = &x;
                (0..ROWS).map(move |r| (0..COLS).fold(0.0f32, |acc, k| acc + elem(e, r, k) * x[z * COLS + k]) * scale)
            })
            .collect();
        assert_eq!(to_f32(&b[&2]), expect, "{host}");
    }
}
