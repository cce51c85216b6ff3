//! Threadgroups on several worker threads give exactly what one thread
//! gives: the same buffers, findings (in order, with counts and example
//! threads) and counters — and races between threadgroups of different
//! workers are still found.

mod common;
use common::*;
use std::collections::BTreeMap;

fn with_threads(check: CheckLevel, threads: usize) -> RunOptions {
    RunOptions { check, threads, count: true, ..Default::default() }
}

/// Run with 1, the default, 2, 3 and 7 workers; every run must agree with the first.
fn same_everywhere(
    src: &str,
    kernel: &str,
    d: Dispatch,
    inputs: BTreeMap<u32, Vec<u8>>,
    check: CheckLevel,
) -> (RunReport, BTreeMap<u32, Vec<u8>>) {
    let k = compile(&format!("{PRELUDE}{src}"), kernel);
    let mut serial_bufs = inputs.clone();
    let serial = run(&k, &d, &mut serial_bufs, &with_threads(check, 1));
    for threads in [0, 2, 3, 7] {
        let mut b = inputs.clone();
        let r = run(&k, &d, &mut b, &with_threads(check, threads));
        assert_eq!(b, serial_bufs, "{kernel}: buffers differ with {threads} workers");
        assert_eq!(r.findings, serial.findings, "{kernel}: findings differ with {threads} workers");
        assert_eq!(r.max_counts, serial.max_counts, "{kernel}: counters differ with {threads} workers");
        assert_eq!((r.threads, r.threadgroups), (serial.threads, serial.threadgroups));
    }
    (serial, serial_bufs)
}

const TILED: &str = r#"
kernel void conv(const device float* a [[buffer(0)]], device float* out [[buffer(1)]],
                 constant uint& n [[buffer(2)]],
                 uint i [[thread_position_in_grid]], uint l [[thread_position_in_threadgroup]],
                 uint g [[threadgroup_position_in_grid]], uint tn [[threads_per_threadgroup]]) {
  threadgroup float tile[66];
  tile[l] = i < n ? a[i] : 0.0f;
  if (l < 2) tile[tn + l] = (g * 64 + tn + l) < n ? a[g * 64 + tn + l] : 0.0f;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  if (i < n) out[i] = tile[l] + 2.0f * tile[l + 1] + tile[l + 2];
}
"#;

#[test]
fn race_free_kernel_gives_identical_results() {
    let n = 64 * 97 + 5; // a partial edge threadgroup; large enough for two workers by default
    let a: Vec<f32> = (0..n).map(|i| (i as f32 * 0.37).sin()).collect();
    let inputs = bufs(vec![(0, f32s(&a)), (1, f32s(&vec![0.0; n])), (2, u32s(&[n as u32]))]);
    let (r, out) = same_everywhere(TILED, "conv", threads([n as u32, 1, 1], [64, 1, 1]), inputs, CheckLevel::All);
    let got = to_f32(&out[&1]);
    for i in 0..n - 2 {
        assert_eq!(got[i], a[i] + 2.0 * a[i + 1] + a[i + 2], "element {i}");
    }
    // The last threads read past `n` in their tile, which the kernel guards:
    // no findings at all.
    assert!(r.findings.is_empty(), "{:?}", r.findings);
}

#[test]
fn findings_are_the_same_with_any_number_of_workers() {
    // Out-of-bounds reads from the last threadgroups, a divergent barrier in
    // every fifth threadgroup and a threadgroup race: grouped, counted and
    // ordered as in one thread.
    let src = r#"
kernel void k(const device float* a [[buffer(0)]], device float* out [[buffer(1)]],
              uint i [[thread_position_in_grid]], uint l [[thread_position_in_threadgroup]],
              uint g [[threadgroup_position_in_grid]]) {
  threadgroup float s[32];
  s[l] = a[i + 8];
  if (g % 5 == 0 && l == 3) return;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  s[(l + 1) % 32] += 1.0f;
  out[i] = s[l];
}
"#;
    let n = 32 * 40;
    let inputs = bufs(vec![(0, f32s(&vec![1.0; n])), (1, f32s(&vec![0.0; n]))]);
    let (r, _) = same_everywhere(src, "k", threads([n as u32, 1, 1], [32, 1, 1]), inputs, CheckLevel::All);
    let kinds: Vec<FindingKind> = r.findings.iter().map(|f| f.kind).collect();
    assert!(kinds.contains(&FindingKind::OutOfBounds), "{kinds:?}");
    assert!(kinds.contains(&FindingKind::BarrierDivergence), "{kinds:?}");
    assert!(kinds.contains(&FindingKind::DataRace), "{kinds:?}");
    let divergence = r.findings.iter().find(|f| f.kind == FindingKind::BarrierDivergence).unwrap();
    assert_eq!(divergence.count, 8, "threadgroups 0, 5, ..., 35");
}

#[test]
fn runaway_threadgroup_stops_the_dispatch_at_the_same_place() {
    // Threadgroup 29 never leaves its loop: outputs of earlier threadgroups
    // are written, later ones never start, whichever worker ran them.
    let src = r#"
kernel void k(device uint* out [[buffer(0)]], uint i [[thread_position_in_grid]],
              uint g [[threadgroup_position_in_grid]]) {
  uint x = 1;
  while (g == 29 && x != 0) { x = x * 3 + 1; x |= 1; }
  out[i] = i + 1;
}
"#;
    let k = compile(&format!("{PRELUDE}{src}"), "k");
    let d = threads([32 * 64, 1, 1], [32, 1, 1]);
    let mut results = Vec::new();
    for t in [1, 2, 4] {
        let mut b = bufs(vec![(0, u32s(&vec![0; 32 * 64]))]);
        let o = RunOptions { budget: 5_000, threads: t, ..Default::default() };
        let r = run(&k, &d, &mut b, &o);
        results.push((to_u32(&b[&0]), r.findings, r.threadgroups));
    }
    let (out, findings, groups) = &results[0];
    assert_eq!(findings.len(), 1);
    assert_eq!(findings[0].kind, FindingKind::RunawayKernel);
    assert_eq!(*groups, 30);
    assert!(out[..29 * 32].iter().enumerate().all(|(i, &v)| v == i as u32 + 1));
    assert!(out[30 * 32..].iter().all(|&v| v == 0));
    for r in &results[1..] {
        assert_eq!(r, &results[0]);
    }
}

#[test]
fn races_between_workers_are_found() {
    // Every threadgroup adds into out[0] (no atomics): with the threadgroups
    // split over workers the race must still be reported, once, as a race
    // between threadgroups, and the result must not depend on timing.
    let src = r#"
kernel void k(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]],
              uint l [[thread_position_in_threadgroup]]) {
  if (l == 0) out[0] += 1.0f;
}
"#;
    let k = compile(&format!("{PRELUDE}{src}"), "k");
    let d = threads([64 * 32, 1, 1], [64, 1, 1]);
    let mut first: Option<Vec<u8>> = None;
    for _ in 0..5 {
        let mut b = bufs(vec![(0, f32s(&[0.0]))]);
        let r = run(&k, &d, &mut b, &with_threads(CheckLevel::All, 4));
        let races: Vec<&Finding> = r.findings.iter().filter(|f| f.kind == FindingKind::DataRace).collect();
        assert_eq!(races.len(), 1, "{:?}", r.findings);
        assert!(races[0].message.contains("in another threadgroup"), "{}", races[0].message);
        assert!(races[0].count >= 31, "one per later threadgroup at least: {}", races[0].count);
        match &first {
            None => first = Some(b[&0].clone()),
            Some(f) => assert_eq!(f, &b[&0], "same result on every run"),
        }
    }
}

#[test]
fn race_at_a_worker_boundary_only() {
    // Each threadgroup reads the first element its right neighbour writes:
    // inside one worker that is caught as the neighbour runs; between
    // workers it must be caught when their shadows are merged.
    let src = r#"
kernel void k(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]],
              uint l [[thread_position_in_threadgroup]], uint g [[threadgroup_position_in_grid]]) {
  out[i] = 1.0f;
  if (l == 0 && g > 0) out[i - 1] += 0.5f;
}
"#;
    let k = compile(&format!("{PRELUDE}{src}"), "k");
    let d = threads([16 * 32, 1, 1], [16, 1, 1]);
    for t in [1, 2, 5] {
        let mut b = bufs(vec![(0, f32s(&vec![0.0; 16 * 32]))]);
        let r = run(&k, &d, &mut b, &with_threads(CheckLevel::All, t));
        let total: u64 = r.findings.iter().filter(|f| f.kind == FindingKind::DataRace).map(|f| f.count).sum();
        assert!(total >= 31, "{t} workers: every boundary races ({total}): {:?}", r.findings);
    }
}

#[test]
fn device_atomics_run_in_order() {
    // Float atomics are order-dependent: such kernels stay on one thread, so
    // the sum is bit-for-bit the sequential one.
    let src = r#"
kernel void k(const device float* a [[buffer(0)]], device atomic_float* sum [[buffer(1)]],
              uint i [[thread_position_in_grid]]) {
  atomic_fetch_add_explicit(sum, a[i], memory_order_relaxed);
}
"#;
    let n = 256 * 64;
    let a: Vec<f32> = (0..n).map(|i| 1.0 / (1.0 + i as f32)).collect();
    let (_, out) =
        same_everywhere(src, "k", threads([n as u32, 1, 1], [256, 1, 1]), bufs(vec![(0, f32s(&a)), (1, f32s(&[0.0]))]), CheckLevel::None);
    let mut expect = 0.0f32;
    for x in &a {
        expect += x;
    }
    assert_eq!(to_f32(&out[&1])[0], expect);
}
