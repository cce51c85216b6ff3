//! End-to-end: MSL source → checked program → IR → run on the simulator.

use gpu::{run, CheckLevel, Dispatch, DispatchMode, RunOptions};
use std::collections::BTreeMap;

fn compile(src: &str, kernel: &str) -> gpu::Kernel {
    let c = msl::compile("test.metal", src, &Default::default());
    assert!(!c.has_errors(), "{}", c.render(false));
    let p = c.program.expect("program");
    let (id, _) = p.kernel(kernel).expect("kernel");
    gpu::lower::lower_kernel(&p, id).expect("lower")
}

fn f32s(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn to_f32(b: &[u8]) -> Vec<f32> {
    b.chunks(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
}

fn u32s(v: &[u32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn dispatch(grid: [u32; 3], tg: [u32; 3]) -> Dispatch {
    Dispatch { grid, threadgroup: tg, mode: DispatchMode::Threads }
}

#[test]
fn map_adds_ten_with_partial_threadgroups() {
    let k = compile(
        "#include <metal_stdlib>\nusing namespace metal;\nkernel void map(const device float* a [[buffer(0)]], device float* out [[buffer(1)]], constant uint& n [[buffer(2)]], uint i [[thread_position_in_grid]]) { if (i < n) out[i] = a[i] + 10.0f; }",
        "map",
    );
    let n = 1000u32;
    let a: Vec<f32> = (0..n).map(|i| i as f32 * 0.5).collect();
    let mut bufs = BTreeMap::new();
    bufs.insert(0, f32s(&a));
    bufs.insert(1, vec![0u8; n as usize * 4]);
    bufs.insert(2, u32s(&[n]));
    let r = run(&k, &dispatch([n, 1, 1], [256, 1, 1]), &mut bufs, &RunOptions::default());
    assert!(r.findings.is_empty(), "{:?}", r.findings);
    let out = to_f32(&bufs[&1]);
    for i in 0..n as usize {
        assert_eq!(out[i], a[i] + 10.0);
    }
    assert_eq!(r.threadgroups, 4);
}

#[test]
fn tiled_matmul_matches_reference() {
    let src = r#"
#include <metal_stdlib>
using namespace metal;
constant constexpr uint T = 16;
kernel void matmul(const device float* A [[buffer(0)]], const device float* B [[buffer(1)]], device float* C [[buffer(2)]],
                   constant uint& n [[buffer(3)]], uint2 gid [[thread_position_in_grid]], uint2 lid [[thread_position_in_threadgroup]]) {
  threadgroup float As[T][T];
  threadgroup float Bs[T][T];
  uint r = gid.y, c = gid.x, lr = lid.y, lc = lid.x;
  float acc = 0.0f;
  for (uint k0 = 0; k0 < n; k0 += T) {
    As[lr][lc] = A[r * n + k0 + lc];
    Bs[lr][lc] = B[(k0 + lr) * n + c];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    for (uint k = 0; k < T; k++) acc += As[lr][k] * Bs[k][lc];
    threadgroup_barrier(mem_flags::mem_threadgroup);
  }
  C[r * n + c] = acc;
}"#;
    let k = compile(src, "matmul");
    let n = 64usize;
    let a: Vec<f32> = (0..n * n).map(|i| (i % 7) as f32 - 3.0).collect();
    let b: Vec<f32> = (0..n * n).map(|i| (i % 5) as f32 * 0.5).collect();
    let mut bufs = BTreeMap::new();
    bufs.insert(0, f32s(&a));
    bufs.insert(1, f32s(&b));
    bufs.insert(2, vec![0u8; n * n * 4]);
    bufs.insert(3, u32s(&[n as u32]));
    let r = run(&k, &dispatch([n as u32, n as u32, 1], [16, 16, 1]), &mut bufs, &RunOptions::default());
    assert!(r.findings.is_empty(), "{:?}", r.findings);
    let c = to_f32(&bufs[&2]);
    for i in 0..n {
        for j in 0..n {
            let want: f32 = (0..n).map(|k| a[i * n + k] * b[k * n + j]).sum();
            assert_eq!(c[i * n + j], want, "C[{i}][{j}]");
        }
    }
}

#[test]
fn simd_sum_and_threadgroup_reduce() {
    let src = r#"
#include <metal_stdlib>
using namespace metal;
kernel void reduce(const device float* a [[buffer(0)]], device float* out [[buffer(1)]],
                   uint i [[thread_position_in_grid]], uint l [[thread_index_in_simdgroup]],
                   uint sg [[simdgroup_index_in_threadgroup]], uint g [[threadgroup_position_in_grid]]) {
  threadgroup float partial[8];
  float s = simd_sum(a[i]);
  if (l == 0) partial[sg] = s;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  if (sg == 0) {
    float v = l < 8 ? partial[l] : 0.0f;
    v = simd_sum(v);
    if (l == 0) out[g] = v;
  }
}"#;
    let k = compile(src, "reduce");
    let a: Vec<f32> = (0..512).map(|i| (i % 10) as f32).collect();
    let mut bufs = BTreeMap::new();
    bufs.insert(0, f32s(&a));
    bufs.insert(1, vec![0u8; 2 * 4]);
    let r = run(&k, &dispatch([512, 1, 1], [256, 1, 1]), &mut bufs, &RunOptions::default());
    assert!(r.findings.is_empty(), "{:?}", r.findings);
    let out = to_f32(&bufs[&1]);
    assert_eq!(out[0], a[..256].iter().sum::<f32>());
    assert_eq!(out[1], a[256..].iter().sum::<f32>());
}

#[test]
fn out_of_bounds_is_reported_not_crashed() {
    let k = compile("kernel void k(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) { out[i + 1] = 1.0f; }", "k");
    let mut bufs = BTreeMap::new();
    bufs.insert(0, vec![0u8; 8 * 4]);
    let r = run(&k, &dispatch([8, 1, 1], [8, 1, 1]), &mut bufs, &RunOptions::default());
    assert_eq!(r.findings.len(), 1, "{:?}", r.findings);
    assert_eq!(r.findings[0].kind, gpu::FindingKind::OutOfBounds);
    assert_eq!(r.findings[0].thread, [7, 0, 0]);
    // Named by grid position and by position within its threadgroup.
    let r = run(&k, &dispatch([8, 1, 1], [4, 1, 1]), &mut bufs, &RunOptions::default());
    assert_eq!((r.findings[0].thread, r.findings[0].local, r.findings[0].threadgroup), ([7, 0, 0], [3, 0, 0], [1, 0, 0]));
    assert_eq!(r.findings[0].to_diagnostic().label, "thread (7, 0, 0) in the grid, (3, 0, 0) in threadgroup (1, 0, 0)");
    let none = RunOptions { check: CheckLevel::None, ..Default::default() };
    let r = run(&k, &dispatch([8, 1, 1], [8, 1, 1]), &mut bufs, &none);
    assert!(r.findings.is_empty());
}

#[test]
fn infinite_loop_is_a_runaway_finding() {
    let k = compile("kernel void k(device uint* out [[buffer(0)]], uint i [[thread_position_in_grid]]) { uint x = 0; while (true) { x++; } out[i] = x; }", "k");
    let mut bufs = BTreeMap::new();
    bufs.insert(0, vec![0u8; 4]);
    let opts = RunOptions { budget: 10_000, ..Default::default() };
    let r = run(&k, &dispatch([1, 1, 1], [1, 1, 1]), &mut bufs, &opts);
    assert_eq!(r.findings[0].kind, gpu::FindingKind::RunawayKernel);
}

#[test]
fn an_empty_loop_that_never_ends_is_a_runaway_finding() {
    // (No instruction in the body: each trip still costs from the budget.)
    for body in ["while (true) {}", "for (;;) {}", "for (uint s = 4; s >= 0; s /= 2) {}"] {
        let src = format!("kernel void k(device uint* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {{ {body} out[i] = 1; }}");
        let k = compile(&src, "k");
        let mut bufs = BTreeMap::new();
        bufs.insert(0, vec![0u8; 4 * 32]);
        let opts = RunOptions { budget: 10_000, ..Default::default() };
        let r = run(&k, &dispatch([32, 1, 1], [32, 1, 1]), &mut bufs, &opts);
        assert_eq!(r.findings.len(), 1, "{body}: {:?}", r.findings);
        assert_eq!(r.findings[0].kind, gpu::FindingKind::RunawayKernel, "{body}");
    }
}

#[test]
fn a_cancelled_run_stops_without_findings() {
    // Cancelled before it starts: a loop that would take the whole default
    // budget stops at the first poll, says it was cancelled and reports nothing.
    let k = compile("kernel void k(device uint* out [[buffer(0)]], uint i [[thread_position_in_grid]]) { uint x = 0; while (true) { x++; } out[i] = x; }", "k");
    let cancel = gpu::Cancel::new();
    cancel.cancel();
    let opts = RunOptions { cancel: Some(cancel), ..Default::default() };
    for groups in [1u32, 64] {
        let mut bufs = BTreeMap::new();
        bufs.insert(0, vec![0u8; 4 * 32 * groups as usize]);
        let r = run(&k, &dispatch([32 * groups, 1, 1], [32, 1, 1]), &mut bufs, &opts);
        assert!(r.cancelled);
        assert!(r.findings.is_empty(), "{:?}", r.findings);
        assert!(r.threadgroups <= 2, "ran {} threadgroups after the cancel", r.threadgroups);
    }
    // Not cancelled: the same options without the flag set run to the runaway finding.
    let opts = RunOptions { cancel: Some(gpu::Cancel::new()), budget: 10_000, ..Default::default() };
    let mut bufs = BTreeMap::new();
    bufs.insert(0, vec![0u8; 4]);
    let r = run(&k, &dispatch([1, 1, 1], [1, 1, 1]), &mut bufs, &opts);
    assert!(!r.cancelled);
    assert_eq!(r.findings[0].kind, gpu::FindingKind::RunawayKernel);
}

#[test]
fn trace_records_provenance_through_threadgroup_memory() {
    let src = r#"
kernel void k(const device float* a [[buffer(0)]], device float* out [[buffer(1)]],
              uint i [[thread_position_in_grid]], uint l [[thread_position_in_threadgroup]]) {
  threadgroup float s[4];
  s[l] = a[i];
  threadgroup_barrier(mem_flags::mem_threadgroup);
  float t = s[l] + (l < 3 ? s[l + 1] : 0.0f);
  out[i] = t * 2.0f;
}"#;
    let k = compile(src, "k");
    let mut bufs = BTreeMap::new();
    bufs.insert(0, f32s(&[1.0, 2.0, 3.0, 4.0]));
    bufs.insert(1, vec![0u8; 16]);
    let opts = RunOptions { trace: Some(1000), count: true, ..Default::default() };
    let r = run(&k, &dispatch([4, 1, 1], [4, 1, 1]), &mut bufs, &opts);
    assert!(r.findings.is_empty(), "{:?}", r.findings);
    let t = r.trace.expect("trace");
    // Thread 0 writes out[0] from s[0] and s[1] (both threadgroup cells).
    let w = t
        .events
        .iter()
        .find(|e| e.write && e.thread == [0, 0, 0] && matches!(t.cells[e.cell as usize].alloc, gpu::trace::CellAlloc::Buffer(1)))
        .expect("write of out[0]");
    let mut srcs: Vec<(gpu::trace::CellAlloc, i64)> =
        w.sources.iter().map(|&c| (t.cells[c as usize].alloc, t.cells[c as usize].offset)).collect();
    srcs.sort_by_key(|s| s.1);
    assert_eq!(srcs, vec![(gpu::trace::CellAlloc::Threadgroup(0), 0), (gpu::trace::CellAlloc::Threadgroup(0), 4)]);
    assert_eq!(w.interval, 1);
    // The threadgroup cell s[0] was written from a[0].
    let ws = t
        .events
        .iter()
        .find(|e| e.write && e.thread == [0, 0, 0] && matches!(t.cells[e.cell as usize].alloc, gpu::trace::CellAlloc::Threadgroup(0)))
        .unwrap();
    assert_eq!(t.cells[ws.sources[0] as usize].alloc, gpu::trace::CellAlloc::Buffer(0));
    let c = r.max_counts.expect("counts");
    assert_eq!((c.device_reads, c.device_writes, c.threadgroup_reads, c.threadgroup_writes), (1, 1, 2, 1));
}

#[test]
fn misaligned_access_through_a_pointer_cast_is_reported() {
    let k = compile(
        "kernel void k(device uchar* bytes [[buffer(0)]], device float* out [[buffer(1)]], uint i [[thread_position_in_grid]]) {\n  device float* f = (device float*)(bytes + 2);\n  out[i] = f[i];\n}",
        "k",
    );
    let mut bufs = BTreeMap::new();
    bufs.insert(0, vec![0u8; 16]);
    bufs.insert(1, vec![0u8; 8]);
    let r = run(&k, &dispatch([2, 1, 1], [2, 1, 1]), &mut bufs, &RunOptions::default());
    assert_eq!(r.findings.len(), 1, "{:?}", r.findings);
    assert_eq!(r.findings[0].kind, gpu::FindingKind::MisalignedAccess);
    assert_eq!(r.findings[0].count, 2);
    // Aligned casts are fine.
    let k = compile(
        "kernel void k(device uchar* bytes [[buffer(0)]], device float* out [[buffer(1)]], uint i [[thread_position_in_grid]]) {\n  device float* f = (device float*)(bytes + 4);\n  out[i] = f[i];\n}",
        "k",
    );
    let r = run(&k, &dispatch([2, 1, 1], [2, 1, 1]), &mut bufs, &RunOptions::default());
    assert!(r.findings.is_empty(), "{:?}", r.findings);
}

#[test]
fn atomics_barriers_and_simd_operations_are_counted_per_thread() {
    // 64 threads (two SIMD-groups): a threadgroup atomic each, a device
    // atomic for lane 0 of each SIMD-group, two barriers, two SIMD functions.
    let src = r#"#include <metal_stdlib>
using namespace metal;
kernel void k(device const float* a [[buffer(0)]], device atomic_float* out [[buffer(1)]],
              device atomic_uint* hits [[buffer(2)]],
              uint i [[thread_position_in_grid]], uint l [[thread_position_in_threadgroup]],
              uint lane [[thread_index_in_simdgroup]]) {
  threadgroup atomic_uint count;
  if (l == 0) { atomic_store_explicit(&count, 0u, memory_order_relaxed); }
  threadgroup_barrier(mem_flags::mem_threadgroup);
  atomic_fetch_add_explicit(&count, 1u, memory_order_relaxed);
  threadgroup_barrier(mem_flags::mem_threadgroup);
  float s = simd_sum(a[i]);
  float m = simd_broadcast_first(s);
  if (lane == 0) { atomic_fetch_add_explicit(out, m, memory_order_relaxed); }
  if (l == 0) { atomic_fetch_add_explicit(hits, atomic_load_explicit(&count, memory_order_relaxed), memory_order_relaxed); }
}"#;
    let k = compile(src, "k");
    let mut bufs = BTreeMap::new();
    bufs.insert(0, f32s(&(0..64).map(|x| x as f32).collect::<Vec<_>>()));
    bufs.insert(1, vec![0u8; 4]);
    bufs.insert(2, vec![0u8; 4]);
    let opts = RunOptions { count: true, ..Default::default() };
    let r = run(&k, &dispatch([64, 1, 1], [64, 1, 1]), &mut bufs, &opts);
    assert!(r.findings.is_empty(), "{:?}", r.findings);
    assert_eq!(to_f32(&bufs[&1]), [2016.0]);
    assert_eq!(bufs[&2], u32s(&[64]));
    let c = r.max_counts.expect("counts");
    // Thread 0: store + add + load on `count`; one add on `out`, one on `hits`.
    assert_eq!((c.threadgroup_atomics, c.device_atomics), (3, 2), "{c:?}");
    // Atomics are not counted as plain reads or writes.
    assert_eq!((c.device_reads, c.device_writes, c.threadgroup_reads, c.threadgroup_writes), (1, 0, 0, 0), "{c:?}");
    assert_eq!((c.barriers, c.simd_ops), (2, 2), "{c:?}");
}

#[test]
fn simdgroup_matrix_loads_and_stores_are_traced() {
    let src = r#"#include <metal_stdlib>
#include <metal_simdgroup_matrix>
using namespace metal;
kernel void k(device const float* a [[buffer(0)]], device float* out [[buffer(1)]]) {
  simdgroup_float8x8 m;
  simdgroup_load(m, a, 8);
  simdgroup_store(m, out, 8);
}"#;
    let k = compile(src, "k");
    let mut bufs = BTreeMap::new();
    bufs.insert(0, f32s(&(0..64).map(|x| x as f32).collect::<Vec<_>>()));
    bufs.insert(1, vec![0u8; 256]);
    let opts = RunOptions { trace: Some(1000), count: true, ..Default::default() };
    let r = run(&k, &dispatch([32, 1, 1], [32, 1, 1]), &mut bufs, &opts);
    assert!(r.findings.is_empty(), "{:?}", r.findings);
    assert_eq!(to_f32(&bufs[&1]), (0..64).map(|x| x as f32).collect::<Vec<_>>());
    let t = r.trace.expect("trace");
    let out = |e: &&gpu::trace::TraceEvent| matches!(t.cells[e.cell as usize].alloc, gpu::trace::CellAlloc::Buffer(1));
    let writes: Vec<_> = t.events.iter().filter(|e| e.write).filter(out).collect();
    assert_eq!(writes.len(), 64, "every element of the stored tile");
    // Element 5 (row 0, column 5) is lane 8's second slot in Apple's layout: loaded from a[5].
    let w = writes.iter().find(|e| t.cells[e.cell as usize].offset == 20).expect("out[5]");
    assert_eq!(w.thread, [8, 0, 0]);
    assert_eq!(
        w.sources.iter().map(|&c| (t.cells[c as usize].alloc, t.cells[c as usize].offset)).collect::<Vec<_>>(),
        [(gpu::trace::CellAlloc::Buffer(0), 20)]
    );
    let c = r.max_counts.expect("counts");
    assert_eq!((c.device_reads, c.device_writes, c.simd_ops), (2, 2, 2));
}

#[test]
fn atomics_can_run_last_lane_first() {
    // Each thread takes a ticket from a counter: which thread gets which
    // ticket is the order the atomics of one instruction are applied in.
    let src = r#"#include <metal_stdlib>
using namespace metal;
kernel void k(device atomic_uint* next [[buffer(0)]], device uint* ticket [[buffer(1)]],
              threadgroup atomic_uint* local_next [[threadgroup(0)]],
              uint i [[thread_position_in_grid]]) {
  // (Threadgroup memory starts uninitialized, atomics included.)
  if (i == 0) atomic_store_explicit(local_next, 0u, memory_order_relaxed);
  threadgroup_barrier(mem_flags::mem_threadgroup);
  ticket[i] = atomic_fetch_add_explicit(next, 1u, memory_order_relaxed)
            + 100u * atomic_fetch_add_explicit(local_next, 1u, memory_order_relaxed);
}"#;
    let k = compile(src, "k");
    for (last_first, traced) in [(false, false), (true, false), (true, true)] {
        let mut bufs = BTreeMap::new();
        bufs.insert(0, vec![0u8; 4]);
        bufs.insert(1, vec![0u8; 4 * 40]);
        // (Exploring other schedules would report that the tickets depend on
        // the order: that is what this kernel shows; see below.)
        let mut opts = RunOptions { atomics_last_lane_first: last_first, schedules: 0, ..Default::default() };
        opts.threadgroup_buffers.insert(0, 4);
        // (A trace takes the lane-by-lane path through the atomics.)
        opts.trace = traced.then_some(10_000);
        let r = run(&k, &dispatch([40, 1, 1], [40, 1, 1]), &mut bufs, &opts);
        assert!(r.findings.is_empty(), "{:?}", r.findings);
        let want: Vec<u32> = if last_first { (0..40).rev().map(|t| t * 101).collect() } else { (0..40).map(|t| t * 101).collect() };
        let got: Vec<u32> = bufs[&1].chunks_exact(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect();
        assert_eq!(got, want, "last lane first: {last_first}, traced: {traced}");
    }
    // With exploration on (the default), the order dependence is a finding.
    let mut bufs = BTreeMap::new();
    bufs.insert(0, vec![0u8; 4]);
    bufs.insert(1, vec![0u8; 4 * 40]);
    let mut opts = RunOptions::default();
    opts.threadgroup_buffers.insert(0, 4);
    let r = run(&k, &dispatch([40, 1, 1], [40, 1, 1]), &mut bufs, &opts);
    assert!(r.findings.iter().any(|f| f.kind == gpu::FindingKind::DataRace && f.message.contains("order")), "{:?}", r.findings);
}
