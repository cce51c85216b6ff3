//! The sanitizer's findings, each with its exact source line: out-of-bounds,
//! data races (RAW/WAR/WAW, partial edge groups, across SIMD-groups, across
//! loop iterations, across threadgroups), grouping, barrier divergence,
//! uninitialized reads, division by zero, runaway loops; and negative
//! controls that must stay clean.

mod common;
use common::*;
use std::collections::BTreeMap;

struct Case {
    src: String,
    c: Compiled,
}

impl Case {
    fn new(body: &str) -> Case {
        let src = format!("{PRELUDE}{body}");
        let c = compile_full(&src, "k");
        Case { src, c }
    }
    fn line(&self, marker: &str) -> usize {
        line_of(&self.src, marker)
    }
    fn run(&self, d: Dispatch, b: &mut BTreeMap<u32, Vec<u8>>) -> RunReport {
        run(&self.c.kernel, &d, b, &RunOptions::default())
    }
    fn run_opts(&self, d: Dispatch, b: &mut BTreeMap<u32, Vec<u8>>, o: &RunOptions) -> RunReport {
        run(&self.c.kernel, &d, b, o)
    }
    /// Exactly one finding, of `kind`, on the line marked `marker`.
    fn expect_one(&self, r: &RunReport, kind: FindingKind, marker: &str) -> Finding {
        assert_eq!(kinds_lines(&self.c, r), vec![(kind, self.line(marker))], "{:#?}", r.findings);
        r.findings[0].clone()
    }
}

fn zeros(n: usize) -> Vec<u8> {
    vec![0u8; n]
}

// ------------------------------------------------------------ out of bounds

#[test]
fn out_of_bounds_device_write_and_read() {
    let k = Case::new(
        "kernel void k(const device float* a [[buffer(0)]], device float* out [[buffer(1)]], device float* out2 [[buffer(2)]], uint i [[thread_position_in_grid]]) {\n  float v = a[i + 2]; // @read\n  out[i] = v;\n  out2[i] = 1.0f; // @write\n}\n",
    );
    let mut b = bufs(vec![(0, zeros(16 * 4)), (1, zeros(16 * 4)), (2, zeros(8 * 4))]);
    let r = k.run(threads([16, 1, 1], [16, 1, 1]), &mut b);
    assert_eq!(
        kinds_lines(&k.c, &r),
        vec![(FindingKind::OutOfBounds, k.line("@read")), (FindingKind::OutOfBounds, k.line("@write"))],
        "{:#?}",
        r.findings
    );
    assert_eq!(r.findings[0].thread, [14, 0, 0]);
    assert_eq!(r.findings[0].count, 2);
    assert_eq!(r.findings[1].thread, [8, 0, 0]);
    assert_eq!(r.findings[1].count, 8);
    // In-bounds lanes still did their work.
    assert_eq!(to_f32(&b[&2]), vec![1.0; 8]);
}

#[test]
fn out_of_bounds_constant_buffer() {
    let k = Case::new("kernel void k(constant float* c [[buffer(0)]], device float* out [[buffer(1)]], uint i [[thread_position_in_grid]]) {\n  out[i] = c[i + 4]; // @c\n}\n");
    let mut b = bufs(vec![(0, zeros(8 * 4)), (1, zeros(8 * 4))]);
    let f = k.expect_one(&k.run(threads([8, 1, 1], [8, 1, 1]), &mut b), FindingKind::OutOfBounds, "@c");
    assert_eq!(f.thread, [4, 0, 0]);
    assert_eq!(f.count, 4);
}

#[test]
fn out_of_bounds_threadgroup_array() {
    let k = Case::new(
        "kernel void k(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]], uint l [[thread_position_in_threadgroup]]) {\n  threadgroup float t[16];\n  threadgroup float u[16];\n  if (l < 16) u[l] = 2.0f;\n  t[l] = 1.0f; // @tg\n  threadgroup_barrier(mem_flags::mem_threadgroup);\n  out[i] = t[l % 16] + u[l % 16];\n}\n",
    );
    let mut b = bufs(vec![(0, zeros(20 * 4))]);
    let r = k.run(threads([20, 1, 1], [20, 1, 1]), &mut b);
    let f = k.expect_one(&r, FindingKind::OutOfBounds, "@tg");
    assert_eq!(f.thread, [16, 0, 0]);
    assert_eq!(f.count, 4);
    // The write past t did not land in u.
    assert!(to_f32(&b[&0]).iter().all(|&v| v == 3.0), "{:?}", to_f32(&b[&0]));
}

#[test]
fn out_of_bounds_thread_local_array() {
    let k = Case::new(
        "kernel void k(device int* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {\n  int loc[4] = {1, 2, 3, 4};\n  int other[4] = {5, 6, 7, 8};\n  loc[i] = 9; // @priv\n  out[i] = loc[i % 4] + other[i % 4];\n}\n",
    );
    let mut b = bufs(vec![(0, zeros(6 * 4))]);
    let r = k.run(threads([6, 1, 1], [6, 1, 1]), &mut b);
    let f = k.expect_one(&r, FindingKind::OutOfBounds, "@priv");
    assert_eq!(f.thread, [4, 0, 0]);
    assert_eq!(f.count, 2);
    assert_eq!(to_i32(&b[&0]), vec![14, 15, 16, 17, 6, 8], "other[] untouched by the stray writes");
}

// ------------------------------------------------------------------ races

fn one_race(k: &Case, r: &RunReport, second: &str, first: &str) -> Finding {
    let f = k.expect_one(r, FindingKind::DataRace, second);
    assert_eq!(k.c.secondary_line(&f), Some(k.line(first)), "the other access: {f:#?}");
    f
}

#[test]
fn race_read_after_write_in_threadgroup_memory() {
    let k = Case::new(
        "kernel void k(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]], uint l [[thread_position_in_threadgroup]]) {\n  threadgroup float t[32];\n  t[l] = float(i); // @w\n  out[i] = t[(l + 1) % 32]; // @r\n}\n",
    );
    let mut b = bufs(vec![(0, zeros(64 * 4))]);
    let f = one_race(&k, &k.run(threads([64, 1, 1], [32, 1, 1]), &mut b), "@r", "@w");
    assert_eq!(f.threadgroup, [0, 0, 0]);
}

#[test]
fn race_write_after_read_in_threadgroup_memory() {
    let k = Case::new(
        "kernel void k(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]], uint l [[thread_position_in_threadgroup]]) {\n  threadgroup float t[32];\n  t[l] = 1.0f;\n  threadgroup_barrier(mem_flags::mem_threadgroup);\n  float v = t[(l + 1) % 32]; // @r\n  t[l] = v + 1.0f; // @w\n  out[i] = v;\n}\n",
    );
    let mut b = bufs(vec![(0, zeros(32 * 4))]);
    one_race(&k, &k.run(threads([32, 1, 1], [32, 1, 1]), &mut b), "@w", "@r");
}

#[test]
fn race_write_after_write_in_threadgroup_memory() {
    let k = Case::new(
        "kernel void k(device uint* out [[buffer(0)]], uint i [[thread_position_in_grid]], uint l [[thread_position_in_threadgroup]]) {\n  threadgroup uint t[1];\n  t[0] = l; // @w\n  threadgroup_barrier(mem_flags::mem_threadgroup);\n  out[i] = t[0];\n}\n",
    );
    let mut b = bufs(vec![(0, zeros(16 * 4))]);
    let r = k.run(threads([16, 1, 1], [16, 1, 1]), &mut b);
    let f = k.expect_one(&r, FindingKind::DataRace, "@w");
    assert_eq!(k.c.secondary_line(&f), Some(k.line("@w")));
}

#[test]
fn race_only_on_the_partial_edge_threadgroup() {
    // t[l * n / 32] is a permutation for a full group of 32, but a partial
    // group of 20 threads maps several threads to one element.
    let k = Case::new(
        "kernel void k(device uint* out [[buffer(0)]], uint i [[thread_position_in_grid]], uint l [[thread_position_in_threadgroup]], uint n [[threads_per_threadgroup]]) {\n  threadgroup uint t[32];\n  t[l * n / 32u] = i; // @w\n  threadgroup_barrier(mem_flags::mem_threadgroup);\n  out[i] = t[l];\n}\n",
    );
    let mut b = bufs(vec![(0, zeros(64 * 4))]);
    let full = k.run_opts(threads([64, 1, 1], [32, 1, 1]), &mut b, &opts(CheckLevel::All));
    assert!(full.findings.iter().all(|f| f.kind != FindingKind::DataRace), "{:#?}", full.findings);
    let mut b = bufs(vec![(0, zeros(52 * 4))]);
    let r = k.run_opts(threads([52, 1, 1], [32, 1, 1]), &mut b, &opts(CheckLevel::All));
    let races: Vec<&Finding> = r.findings.iter().filter(|f| f.kind == FindingKind::DataRace).collect();
    assert_eq!(races.len(), 1, "{:#?}", r.findings);
    assert_eq!(k.c.line(races[0]), k.line("@w"));
    assert_eq!(races[0].threadgroup, [1, 0, 0], "only the edge group races");
}

#[test]
fn race_between_two_simdgroups_of_one_threadgroup() {
    let k = Case::new(
        "kernel void k(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]], uint lane [[thread_index_in_simdgroup]], uint sg [[simdgroup_index_in_threadgroup]]) {\n  threadgroup float t[32];\n  if (sg == 1) {\n    t[lane] = 2.0f; // @w\n  }\n  simdgroup_barrier(mem_flags::mem_threadgroup);\n  if (sg == 0) {\n    out[i] = t[lane]; // @r\n  }\n}\n",
    );
    let mut b = bufs(vec![(0, zeros(64 * 4))]);
    let r = k.run(threads([64, 1, 1], [64, 1, 1]), &mut b);
    let f = one_race(&k, &r, "@r", "@w");
    assert!(f.thread[0] < 32, "the reader is in SIMD-group 0: {f:?}");
    assert!(f.count >= 32, "{f:?}");
}

#[test]
fn simdgroup_barrier_orders_threads_of_one_simdgroup() {
    // Exchange through threadgroup memory inside each SIMD-group: a
    // simdgroup_barrier is enough, with one or several SIMD-groups.
    let k = Case::new(
        "kernel void k(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]], uint l [[thread_position_in_threadgroup]], uint lane [[thread_index_in_simdgroup]]) {\n  threadgroup float t[64];\n  t[l] = float(i);\n  simdgroup_barrier(mem_flags::mem_threadgroup);\n  out[i] = t[l - lane + (lane + 1) % 32];\n}\n",
    );
    let mut b = bufs(vec![(0, zeros(128 * 4))]);
    let r = k.run(threads([128, 1, 1], [64, 1, 1]), &mut b);
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
    let out = to_f32(&b[&0]);
    assert_eq!(out[31], 0.0);
    assert_eq!(out[70], 71.0);
}

#[test]
fn race_write_after_read_across_loop_iterations() {
    // A tiled loop missing its second barrier: iteration k+1 overwrites the
    // tile while neighbours may still read iteration k's values.
    let k = Case::new(
        "kernel void k(const device float* a [[buffer(0)]], device float* out [[buffer(1)]], uint i [[thread_position_in_grid]], uint l [[thread_position_in_threadgroup]]) {\n  threadgroup float tile[16];\n  float acc = 0.0f;\n  for (uint k0 = 0; k0 < 64; k0 += 16) {\n    tile[l] = a[k0 + l]; // @w\n    threadgroup_barrier(mem_flags::mem_threadgroup);\n    for (uint j = 0; j < 16; j++) acc += tile[j]; // @r\n  }\n  out[i] = acc;\n}\n",
    );
    let a: Vec<f32> = (0..64).map(|x| x as f32).collect();
    let mut b = bufs(vec![(0, f32s(&a)), (1, zeros(16 * 4))]);
    one_race(&k, &k.run(threads([16, 1, 1], [16, 1, 1]), &mut b), "@w", "@r");
    // With the second barrier it is clean.
    let fixed = Case::new(
        &k.src[PRELUDE.len()..]
            .replace("acc += tile[j]; // @r\n", "acc += tile[j]; // @r\n    threadgroup_barrier(mem_flags::mem_threadgroup);\n"),
    );
    let mut b = bufs(vec![(0, f32s(&a)), (1, zeros(16 * 4))]);
    let r = fixed.run(threads([16, 1, 1], [16, 1, 1]), &mut b);
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
    assert!(to_f32(&b[&1]).iter().all(|&v| v == (0..64).sum::<i32>() as f32));
}

#[test]
fn device_race_across_threadgroups() {
    let k = Case::new("kernel void k(device uint* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {\n  out[i % 32] = i; // @w\n}\n");
    let mut b = bufs(vec![(0, zeros(32 * 4))]);
    let r = k.run(threads([64, 1, 1], [32, 1, 1]), &mut b);
    let f = k.expect_one(&r, FindingKind::DataRace, "@w");
    assert_eq!(f.threadgroup, [1, 0, 0], "found when the second threadgroup writes");
    assert_eq!(f.count, 32);
    // One threadgroup alone is fine; so is `--check memory`.
    let mut b = bufs(vec![(0, zeros(32 * 4))]);
    assert!(k.run(threads([32, 1, 1], [32, 1, 1]), &mut b).findings.is_empty());
    let mut b = bufs(vec![(0, zeros(32 * 4))]);
    assert!(k.run_opts(threads([64, 1, 1], [32, 1, 1]), &mut b, &opts(CheckLevel::Memory)).findings.is_empty());
}

#[test]
fn device_read_of_other_threadgroups_write_races() {
    let k = Case::new(
        "kernel void k(device uint* buf [[buffer(0)]], uint i [[thread_position_in_grid]], uint g [[threadgroup_position_in_grid]]) {\n  if (g == 0) {\n    buf[i] = i; // @w\n  } else {\n    buf[64 + i] = buf[i - 32]; // @r\n  }\n}\n",
    );
    let mut b = bufs(vec![(0, zeros(128 * 4))]);
    one_race(&k, &k.run(threads([64, 1, 1], [32, 1, 1]), &mut b), "@r", "@w");
}

#[test]
fn atomics_are_not_races() {
    let k = Case::new(
        "kernel void k(device atomic_uint* d [[buffer(0)]], device uint* out [[buffer(1)]], uint i [[thread_position_in_grid]], uint l [[thread_position_in_threadgroup]]) {\n  threadgroup atomic_uint t;\n  if (l == 0) atomic_store_explicit(&t, 0u, memory_order_relaxed);\n  threadgroup_barrier(mem_flags::mem_threadgroup);\n  atomic_fetch_add_explicit(&t, 1u, memory_order_relaxed);\n  atomic_fetch_max_explicit(&d[1], i, memory_order_relaxed);\n  uint old = atomic_exchange_explicit(&d[2], i, memory_order_relaxed);\n  atomic_fetch_add_explicit(&d[0], old & 0u, memory_order_relaxed);\n  threadgroup_barrier(mem_flags::mem_threadgroup);\n  if (l == 0) out[i / 64] = atomic_load_explicit(&t, memory_order_relaxed);\n}\n",
    );
    let mut b = bufs(vec![(0, zeros(3 * 4)), (1, zeros(4 * 4))]);
    // (The last exchange into d[2] is the order's pick: exploring other
    // schedules reports that, below; the race rules themselves are quiet.)
    let r = k.run_opts(threads([256, 1, 1], [64, 1, 1]), &mut b, &RunOptions { schedules: 0, ..Default::default() });
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
    assert_eq!(to_u32(&b[&1]), vec![64; 4]);
    assert_eq!(to_u32(&b[&0])[1], 255);
    let mut b = bufs(vec![(0, zeros(3 * 4)), (1, zeros(4 * 4))]);
    let r = k.run(threads([256, 1, 1], [64, 1, 1]), &mut b);
    assert_eq!(r.findings.len(), 1, "{:#?}", r.findings);
    assert!(r.findings[0].message.contains("`d[2]`"), "{}", r.findings[0].message);
}

#[test]
fn hundreds_of_racing_addresses_are_one_grouped_finding() {
    let k = Case::new(
        "kernel void k(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]], uint l [[thread_position_in_threadgroup]]) {\n  threadgroup float t[512];\n  t[l] = float(i); // @w\n  out[i] = t[(l + 1) % 512]; // @r\n}\n",
    );
    let mut b = bufs(vec![(0, zeros(1024 * 4))]);
    let r = k.run(threads([1024, 1, 1], [512, 1, 1]), &mut b);
    let f = one_race(&k, &r, "@r", "@w");
    assert!(f.count >= 500, "count {}", f.count);
    assert!(!f.examples.is_empty() && f.examples.len() <= 4, "a few examples: {:?}", f.examples);
}

// ------------------------------------------------------- barrier divergence

#[test]
fn barrier_divergence_after_early_return() {
    let k = Case::new(
        "kernel void k(device uint* out [[buffer(0)]], uint i [[thread_position_in_grid]], uint l [[thread_position_in_threadgroup]]) {\n  if (l >= 24) return;\n  threadgroup uint t[32];\n  t[l] = i;\n  threadgroup_barrier(mem_flags::mem_threadgroup); // @b\n  out[i] = t[(l + 1) % 24] + 1u;\n}\n",
    );
    let mut b = bufs(vec![(0, zeros(64 * 4))]);
    let r = k.run(threads([64, 1, 1], [32, 1, 1]), &mut b);
    let f = k.expect_one(&r, FindingKind::BarrierDivergence, "@b");
    assert_eq!(f.thread, [24, 0, 0], "the first thread that did not arrive");
    assert!(f.message.contains("returned"), "{}", f.message);
    // Execution continued after the barrier and terminated.
    let out = to_u32(&b[&0]);
    assert_eq!(out[0], 2);
    assert_eq!(out[32], 34);
    assert_eq!(r.threadgroups, 2);
}

#[test]
fn barrier_divergence_inside_a_branch() {
    let k = Case::new(
        "kernel void k(device uint* out [[buffer(0)]], uint i [[thread_position_in_grid]], uint l [[thread_position_in_threadgroup]]) {\n  threadgroup uint t[32];\n  t[l] = i;\n  if (l % 2 == 0) {\n    threadgroup_barrier(mem_flags::mem_threadgroup); // @b\n  }\n  out[i] = l;\n}\n",
    );
    let mut b = bufs(vec![(0, zeros(32 * 4))]);
    let r = k.run(threads([32, 1, 1], [32, 1, 1]), &mut b);
    let div: Vec<_> = r.findings.iter().filter(|f| f.kind == FindingKind::BarrierDivergence).collect();
    assert_eq!(div.len(), 1, "{:#?}", r.findings);
    assert_eq!(k.c.line(div[0]), k.line("@b"));
    assert_eq!(div[0].thread, [1, 0, 0]);
    assert_eq!(to_u32(&b[&0]), (0..32).collect::<Vec<u32>>(), "every thread went on");
}

// --------------------------------------------- uninitialized, div0, runaway

#[test]
fn uninitialized_threadgroup_read() {
    let k = Case::new(
        "kernel void k(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]], uint l [[thread_position_in_threadgroup]]) {\n  threadgroup float t[32];\n  if (l < 16) t[l] = 1.0f;\n  threadgroup_barrier(mem_flags::mem_threadgroup);\n  out[i] = t[l]; // @u\n}\n",
    );
    let mut b = bufs(vec![(0, zeros(32 * 4))]);
    let f = k.expect_one(&k.run(threads([32, 1, 1], [32, 1, 1]), &mut b), FindingKind::UninitializedRead, "@u");
    assert_eq!(f.thread, [16, 0, 0]);
}

#[test]
fn out_parameters_of_frexp_modf_sincos_are_written_not_read() {
    // Each writes its second argument; the locals start uninitialized.
    let k = Case::new(
        "kernel void k(const device float* a [[buffer(0)]], device float* out [[buffer(1)]], uint i [[thread_position_in_grid]]) {\n  int e;\n  float m = frexp(a[i], e);\n  float ip;\n  float f = modf(a[i], ip);\n  float2 c;\n  float2 s = sincos(float2(a[i], 0.0f), c);\n  out[i] = m * float(e) + f + ip + s.x + c.y;\n}\n",
    );
    let a: Vec<f32> = vec![0.5, 1.25, 6.0, -3.75];
    let mut b = bufs(vec![(0, f32s(&a)), (1, zeros(16))]);
    let r = k.run(threads([4, 1, 1], [4, 1, 1]), &mut b);
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
    let want: Vec<f32> = a
        .iter()
        .map(|&x: &f32| {
            let e = if x == 0.0 { 0 } else { x.abs().log2().floor() as i32 + 1 };
            let m = x / 2f32.powi(e);
            m * e as f32 + x.fract() + x.trunc() + x.sin() + 1.0
        })
        .collect();
    for (got, want) in to_f32(&b[&1]).iter().zip(&want) {
        assert!((got - want).abs() < 1e-5, "{got} vs {want}");
    }
    // Reading the out parameter itself before the call is still reported.
    let k = Case::new(
        "kernel void k(const device float* a [[buffer(0)]], device float* out [[buffer(1)]], uint i [[thread_position_in_grid]]) {\n  float ip;\n  out[i] = ip + modf(a[i], ip); // @r\n}\n",
    );
    let mut b = bufs(vec![(0, f32s(&a)), (1, zeros(16))]);
    k.expect_one(&k.run(threads([4, 1, 1], [4, 1, 1]), &mut b), FindingKind::UninitializedRead, "@r");
}

/// Copying a struct copies its padding without reading it, and the copy
/// carries the source's initialization state: a field never written in
/// the source is still reported when read from the copy.
#[test]
fn struct_copies_carry_initialization_state() {
    let k = Case::new(
        "struct P { float f; short s; short t; char c; };\nkernel void k(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {\n  P a;\n  a.f = float(i);\n  a.s = 2;\n  a.c = 1;\n  P b = a;\n  P c = b;\n  out[i] = c.f + float(c.s) + float(c.c);\n  out[i] += float(c.t); // @t\n}\n",
    );
    let mut b = bufs(vec![(0, zeros(16))]);
    k.expect_one(&k.run(threads([4, 1, 1], [4, 1, 1]), &mut b), FindingKind::UninitializedRead, "@t");
}

#[test]
fn integer_division_by_zero() {
    let k = Case::new(
        "kernel void k(const device int* a [[buffer(0)]], const device int* d [[buffer(1)]], device int* out [[buffer(2)]], uint i [[thread_position_in_grid]]) {\n  int q = a[i] / d[i]; // @div\n  out[i] = q + a[i] % max(d[i], 1);\n}\n",
    );
    let d: Vec<i32> = (0..8).map(|x| if x == 3 || x == 6 { 0 } else { x + 1 }).collect();
    let a: Vec<i32> = (0..8).map(|x| 100 + x).collect();
    let mut b = bufs(vec![(0, i32s(&a)), (1, i32s(&d)), (2, zeros(32))]);
    let f = k.expect_one(&k.run(threads([8, 1, 1], [8, 1, 1]), &mut b), FindingKind::DivisionByZero, "@div");
    assert_eq!(f.thread, [3, 0, 0]);
    assert_eq!(f.count, 2);
    // Float division by zero is IEEE and fine.
    let fl =
        Case::new("kernel void k(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) { out[i] = 1.0f / float(i); }\n");
    let mut b = bufs(vec![(0, zeros(16))]);
    assert!(fl.run(threads([4, 1, 1], [4, 1, 1]), &mut b).findings.is_empty());
    assert_eq!(to_f32(&b[&0])[0], f32::INFINITY);
}

#[test]
fn runaway_loop_is_stopped() {
    let k = Case::new(
        "kernel void k(device uint* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {\n  uint x = i;\n  while (x != 7u) { // @loop\n    x += 2u;\n  }\n  out[i] = x;\n}\n",
    );
    let mut b = bufs(vec![(0, zeros(16 * 4))]);
    let o = RunOptions { budget: 20_000, ..Default::default() };
    let r = k.run_opts(threads([16, 1, 1], [4, 1, 1]), &mut b, &o);
    assert_eq!(r.findings.len(), 1, "{:#?}", r.findings);
    assert_eq!(r.findings[0].kind, FindingKind::RunawayKernel);
    let line = k.c.line(&r.findings[0]);
    assert!((k.line("@loop")..=k.line("@loop") + 1).contains(&line), "runaway reported at line {line}");
    // Only the even threads never stop; the first group holds thread 0.
    assert_eq!(r.findings[0].threadgroup, [0, 0, 0]);
}

// ----------------------------------------------------- order and negatives

#[test]
fn findings_are_the_same_in_the_same_order_every_run() {
    let k = Case::new(
        "kernel void k(const device int* a [[buffer(0)]], device int* out [[buffer(1)]], uint i [[thread_position_in_grid]], uint l [[thread_position_in_threadgroup]]) {\n  threadgroup int t[64];\n  t[l] = a[i];\n  int v = t[63 - l];\n  out[i % 40] = v / (a[i] % 5);\n  out[i + 100] = 1;\n  if (l == 3) return;\n  threadgroup_barrier(mem_flags::mem_threadgroup);\n}\n",
    );
    let a: Vec<i32> = (0..256).map(|x| x * 7 % 23).collect();
    let go = || {
        let mut b = bufs(vec![(0, i32s(&a)), (1, zeros(300 * 4))]);
        let r = k.run(threads([256, 1, 1], [64, 1, 1]), &mut b);
        (r.findings, b)
    };
    let (f1, b1) = go();
    let kinds: std::collections::BTreeSet<FindingKind> = f1.iter().map(|f| f.kind).collect();
    assert!(kinds.len() >= 4, "several kinds of findings: {:#?}", f1);
    for _ in 0..3 {
        let (f2, b2) = go();
        assert_eq!(f1, f2);
        assert_eq!(b1, b2);
    }
}

#[test]
fn negative_controls_are_clean() {
    // Tiled reduction with barriers, guarded bounds, SIMD reductions.
    let k = Case::new(
        "kernel void k(const device float* a [[buffer(0)]], device float* out [[buffer(1)]], constant uint& n [[buffer(2)]], uint i [[thread_position_in_grid]], uint l [[thread_position_in_threadgroup]], uint g [[threadgroup_position_in_grid]], uint tn [[threads_per_threadgroup]]) {\n  threadgroup float t[64];\n  t[l] = i < n ? a[i] : 0.0f;\n  threadgroup_barrier(mem_flags::mem_threadgroup);\n  for (uint s = tn / 2; s > 0; s /= 2) {\n    if (l < s) t[l] += t[l + s];\n    threadgroup_barrier(mem_flags::mem_threadgroup);\n  }\n  if (l == 0) out[g] = t[0];\n}\n",
    );
    let a: Vec<f32> = (0..250).map(|x| x as f32).collect();
    let mut b = bufs(vec![(0, f32s(&a)), (1, zeros(4 * 4)), (2, u32s(&[250]))]);
    let r = k.run(threads([256, 1, 1], [64, 1, 1]), &mut b);
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
    let out = to_f32(&b[&1]);
    for (g, &got) in out.iter().enumerate() {
        let want: f32 = (g * 64..(g * 64 + 64).min(250)).map(|x| x as f32).sum();
        assert_eq!(got, want);
    }
    // Each thread reading its own writes without barriers is fine; distinct
    // device elements from many threadgroups are fine.
    let k = Case::new(
        "kernel void k(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]], uint l [[thread_position_in_threadgroup]]) {\n  threadgroup float t[32];\n  t[l] = float(i);\n  t[l] = t[l] * 2.0f;\n  float s = simd_sum(t[l]);\n  out[i] = s + simd_shuffle_down(t[l], 1u);\n}\n",
    );
    let mut b = bufs(vec![(0, zeros(96 * 4))]);
    let r = k.run(threads([96, 1, 1], [32, 1, 1]), &mut b);
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
}

// Reads of fully written threadgroup memory are recorded lazily (only a
// later write in the same interval needs them): these pin down that the
// lazy path finds exactly what the eager one would.

#[test]
fn write_after_many_reads_in_a_loop_races_with_the_right_read() {
    // 300 iterations x 64 lanes of reads (past the lazy list's limit, so it
    // is applied midway), then each thread overwrites an element another
    // thread read in this interval.
    let k = Case::new(
        "kernel void k(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]], uint l [[thread_position_in_threadgroup]]) {\n  threadgroup float t[64];\n  t[l] = 1.0f;\n  threadgroup_barrier(mem_flags::mem_threadgroup);\n  float acc = 0.0f;\n  for (uint j = 0; j < 300; j++) acc += t[(l + j) % 64]; // @r\n  t[l] = acc; // @w\n  out[i] = acc;\n}\n",
    );
    let mut b = bufs(vec![(0, zeros(64 * 4))]);
    let f = one_race(&k, &k.run(threads([64, 1, 1], [64, 1, 1]), &mut b), "@w", "@r");
    assert!(f.message.contains("write-after-read"), "{}", f.message);
}

#[test]
fn reads_then_barrier_then_writes_do_not_race() {
    let k = Case::new(
        "kernel void k(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]], uint l [[thread_position_in_threadgroup]]) {\n  threadgroup float t[64];\n  t[l] = 1.0f;\n  threadgroup_barrier(mem_flags::mem_threadgroup);\n  float acc = 0.0f;\n  for (uint j = 0; j < 64; j++) acc += t[j];\n  threadgroup_barrier(mem_flags::mem_threadgroup);\n  t[(l + 1) % 64] = acc;\n  out[i] = acc;\n}\n",
    );
    let mut b = bufs(vec![(0, zeros(64 * 4))]);
    let r = k.run(threads([64, 1, 1], [64, 1, 1]), &mut b);
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
}

#[test]
fn lazy_reads_keep_their_simdgroup_epoch() {
    // Lane l reads t[l ^ 1] (its SIMD-group neighbour) or t[(l + 32) % 64]
    // (the other SIMD-group), then a simdgroup_barrier, then writes t[l]:
    // ordered within a SIMD-group, a race across SIMD-groups.
    for (index, racy) in [("l ^ 1", false), ("(l + 32) % 64", true)] {
        let k = Case::new(&format!(
            "kernel void k(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]], uint l [[thread_position_in_threadgroup]]) {{\n  threadgroup float t[64];\n  t[l] = 1.0f;\n  threadgroup_barrier(mem_flags::mem_threadgroup);\n  float v = t[{index}]; // @r\n  simdgroup_barrier(mem_flags::mem_threadgroup);\n  t[l] = v + 1.0f; // @w\n  out[i] = v;\n}}\n"
        ));
        let mut b = bufs(vec![(0, zeros(64 * 4))]);
        let r = k.run(threads([64, 1, 1], [64, 1, 1]), &mut b);
        if racy {
            one_race(&k, &r, "@w", "@r");
        } else {
            assert!(r.findings.is_empty(), "{index}: {:#?}", r.findings);
        }
    }
}

#[test]
fn racing_updates_of_one_element_get_advice_that_works() {
    let src = format!(
        "{PRELUDE}kernel void k(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {{\n  out[0] += float(i);\n}}\n"
    );
    let k = compile(&src, "k");
    let mut b = bufs(vec![(0, f32s(&[0.0; 4]))]);
    let r = run(&k, &threads([4, 1, 1], [4, 1, 1]), &mut b, &opts(CheckLevel::All));
    let race = r.findings.iter().find(|f| f.kind == FindingKind::DataRace).expect("a race");
    let advice = race.notes.join(" ");
    assert!(advice.contains("no barrier can order them") && advice.contains("atomic_fetch_add_explicit"), "{advice}");
    assert!(!advice.contains("add `threadgroup_barrier"), "{advice}");
}

#[test]
fn every_lane_storing_the_same_value_is_a_warning_not_an_error() {
    // mlx-lm's masked GatedDeltaNet path and MLX's own attribute test:
    // every thread writes one value to one element.
    let k = Case::new(
        "kernel void k(device float* out [[buffer(0)]], device uint* n [[buffer(1)]], uint i [[thread_position_in_grid]], uint3 tpt [[threads_per_threadgroup]]) {\n  out[0] = 7.0f; // @same\n  n[0] = tpt.x; // @uniform\n  out[1 + i] = 1.0f;\n}\n",
    );
    let mut b = bufs(vec![(0, zeros(33 * 4)), (1, zeros(4))]);
    let r = k.run(threads([32, 1, 1], [32, 1, 1]), &mut b);
    assert!(!r.has_errors(), "{:#?}", r.findings);
    assert_eq!(r.findings.len(), 2, "{:#?}", r.findings);
    for f in &r.findings {
        assert_eq!(f.kind, FindingKind::DataRace);
        assert!(!f.is_error);
        assert!(f.message.contains("formal data race whose stores agree: 32 threads"), "{}", f.message);
    }
    assert_eq!(to_f32(&b[&0])[0], 7.0);
    assert_eq!(u32::from_le_bytes(b[&1][..4].try_into().unwrap()), 32);
}

#[test]
fn lanes_storing_different_values_to_one_element_still_race() {
    let k = Case::new(
        "kernel void k(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {\n  out[0] = float(i); // @diff\n}\n",
    );
    let mut b = bufs(vec![(0, zeros(4))]);
    let r = k.run(threads([32, 1, 1], [32, 1, 1]), &mut b);
    let f = k.expect_one(&r, FindingKind::DataRace, "@diff");
    assert!(f.is_error);
    assert!(f.message.contains("write-after-write"), "{}", f.message);
}

#[test]
fn agreeing_stores_still_race_with_other_accesses() {
    // The agreeing store is one write: a read by another thread in the same
    // barrier interval is still a race (an error).
    let k = Case::new(
        "kernel void k(device float* out [[buffer(0)]], uint l [[thread_position_in_threadgroup]]) {\n  threadgroup float t[1];\n  t[0] = 3.0f;\n  out[l] = t[0]; // @read\n}\n",
    );
    let mut b = bufs(vec![(0, zeros(32 * 4))]);
    let r = k.run(threads([32, 1, 1], [32, 1, 1]), &mut b);
    assert!(r.has_errors(), "{:#?}", r.findings);
    assert!(r.findings.iter().any(|f| f.is_error && f.kind == FindingKind::DataRace), "{:#?}", r.findings);
}

#[test]
fn an_order_dependent_exchange_is_a_warning_and_a_lost_update_an_error() {
    // Exchanges: every update happens once, only who gets which old value
    // back depends on the order (the sum of `olds` plus the last value is
    // fixed). Reported, as a warning, at the atomic on the differing buffer.
    let k = Case::new(
        "kernel void k(device atomic_uint* acc [[buffer(0)]], device atomic_uint* x [[buffer(1)]], device uint* olds [[buffer(2)]], uint i [[thread_position_in_grid]]) {\n  atomic_fetch_add_explicit(&acc[0], i, memory_order_relaxed);\n  atomic_fetch_min_explicit(&acc[1], i, memory_order_relaxed);\n  olds[i] = atomic_exchange_explicit(&x[0], i, memory_order_relaxed); // @xchg\n}\n",
    );
    let mut b = bufs(vec![(0, zeros(8)), (1, zeros(4)), (2, zeros(64 * 4))]);
    let r = k.run_opts(threads([64, 1, 1], [32, 1, 1]), &mut b, &opts(CheckLevel::All));
    let f = k.expect_one(&r, FindingKind::DataRace, "@xchg");
    assert!(!f.is_error && f.message.contains("depends on the order"), "{f:#?}");
    // Zeroing with atomic_store while another SIMD-group adds: an update
    // can be lost. An error, at the pair with the store.
    let k = Case::new(
        "kernel void k(device atomic_int* out [[buffer(0)]], uint l [[thread_position_in_threadgroup]]) {\n  threadgroup atomic_int bins[1];\n  if (l == 0) atomic_store_explicit(&bins[0], 0, memory_order_relaxed);\n  atomic_fetch_add_explicit(&bins[0], 1, memory_order_relaxed); // @add\n  threadgroup_barrier(mem_flags::mem_threadgroup);\n  if (l == 0) atomic_store_explicit(&out[0], atomic_load_explicit(&bins[0], memory_order_relaxed), memory_order_relaxed);\n}\n",
    );
    let mut b = bufs(vec![(0, zeros(4))]);
    let r = k.run_opts(threads([64, 1, 1], [64, 1, 1]), &mut b, &opts(CheckLevel::All));
    let f = k.expect_one(&r, FindingKind::DataRace, "@add");
    assert!(f.is_error, "{f:#?}");
}

/// Shadows are kept between dispatches of one process (the book, benches)
/// and cleared when reused: what one dispatch did must not show in the next.
#[test]
fn a_reused_shadow_remembers_nothing_of_the_last_dispatch() {
    let n = 8192u32;
    let write = compile(
        &format!("{PRELUDE}kernel void w(device float* a [[buffer(0)]], uint i [[thread_position_in_grid]]) {{ a[i] = 1.0f; }}"),
        "w",
    );
    let read = compile(
        &format!(
            "{PRELUDE}kernel void r(device float* a [[buffer(0)]], device float* b [[buffer(1)]], uint i [[thread_position_in_grid]]) {{ b[i] = a[(i + 1) % {n}]; }}"
        ),
        "r",
    );
    let d = threads([n, 1, 1], [256, 1, 1]);
    for round in 0..3 {
        let mut b = bufs(vec![(0, zeros(n as usize * 4))]);
        let r = run(&write, &d, &mut b, &opts(CheckLevel::All));
        assert!(r.findings.is_empty(), "round {round}: {:?}", r.findings);
        let mut b = bufs(vec![(0, zeros(n as usize * 4)), (1, zeros(n as usize * 4))]);
        let r = run(&read, &d, &mut b, &opts(CheckLevel::All));
        assert!(r.findings.is_empty(), "round {round}: a stale shadow made {:?}", r.findings);
    }
}
