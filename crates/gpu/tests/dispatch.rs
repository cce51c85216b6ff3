//! Dispatch geometry: every thread-position attribute in 1-, 2- and 3-D
//! grids (partial edge threadgroups and `dispatchThreadgroups`), invalid
//! dispatches, determinism and atomics.

mod common;
use common::*;

const R: usize = 24;

/// A kernel that writes every attribute of every thread into a record of R
/// uints at the thread's linear global index (grid dims baked in).
fn attrs_kernel(gx: u32, gy: u32) -> gpu::Kernel {
    let src = format!(
        r#"{PRELUDE}
kernel void k(device uint* out [[buffer(0)]],
  uint3 gid [[thread_position_in_grid]], uint3 lid [[thread_position_in_threadgroup]], uint3 tgid [[threadgroup_position_in_grid]],
  uint3 tpt [[threads_per_threadgroup]], uint3 dtpt [[dispatch_threads_per_threadgroup]], uint3 tpg [[threads_per_grid]],
  uint3 tgpg [[threadgroups_per_grid]], uint tidx [[thread_index_in_threadgroup]], uint sl [[thread_index_in_simdgroup]],
  uint sg [[simdgroup_index_in_threadgroup]], uint sgpt [[simdgroups_per_threadgroup]], uint qi [[thread_index_in_quadgroup]],
  uint qg [[quadgroup_index_in_threadgroup]], uint tew [[thread_execution_width]]) {{
  uint idx = ((gid.z * {gy}u + gid.y) * {gx}u + gid.x) * {R}u;
  out[idx + 0] = 1u;
  out[idx + 1] = gid.x; out[idx + 2] = gid.y; out[idx + 3] = gid.z;
  out[idx + 4] = lid.x; out[idx + 5] = lid.y; out[idx + 6] = lid.z;
  out[idx + 7] = tgid.x; out[idx + 8] = tgid.y; out[idx + 9] = tgid.z;
  out[idx + 10] = tpt.x; out[idx + 11] = tpt.y; out[idx + 12] = tpt.z;
  out[idx + 13] = dtpt.x; out[idx + 14] = dtpt.y; out[idx + 15] = dtpt.z;
  out[idx + 16] = tpg.x * 1000000u + tpg.y * 1000u + tpg.z;
  out[idx + 17] = tgpg.x * 1000000u + tgpg.y * 1000u + tgpg.z;
  out[idx + 18] = tidx; out[idx + 19] = sl; out[idx + 20] = sg; out[idx + 21] = sgpt;
  out[idx + 22] = qi * 1000u + qg; out[idx + 23] = tew;
}}
"#
    );
    compile(&src, "k")
}

/// Expected record of the thread at global position g.
fn expected(g: [u32; 3], grid_threads: [u32; 3], tg: [u32; 3]) -> Vec<u32> {
    let groups: [u32; 3] = [0, 1, 2].map(|d| grid_threads[d].div_ceil(tg[d]));
    let tgid = [0, 1, 2].map(|d| g[d] / tg[d]);
    let lid = [0, 1, 2].map(|d| g[d] % tg[d]);
    let actual = [0, 1, 2].map(|d| tg[d].min(grid_threads[d] - tgid[d] * tg[d]));
    let tidx = (lid[2] * actual[1] + lid[1]) * actual[0] + lid[0];
    let n = actual.iter().product::<u32>();
    let mut v = vec![1, g[0], g[1], g[2], lid[0], lid[1], lid[2], tgid[0], tgid[1], tgid[2]];
    v.extend(actual);
    v.extend(tg);
    v.push(grid_threads[0] * 1_000_000 + grid_threads[1] * 1000 + grid_threads[2]);
    v.push(groups[0] * 1_000_000 + groups[1] * 1000 + groups[2]);
    v.extend([tidx, tidx % 32, tidx / 32, n.div_ceil(32), (tidx % 4) * 1000 + tidx / 4, 32]);
    v
}

fn check_geometry(grid: [u32; 3], tg: [u32; 3], mode: DispatchMode) {
    let grid_threads = match mode {
        DispatchMode::Threads => grid,
        DispatchMode::Threadgroups => [0, 1, 2].map(|d| grid[d] * tg[d]),
    };
    let k = attrs_kernel(grid_threads[0], grid_threads[1]);
    let total = grid_threads.iter().product::<u32>() as usize;
    let mut b = bufs(vec![(0, vec![0xff; total * R * 4])]);
    let r = run(&k, &Dispatch { grid, threadgroup: tg, mode }, &mut b, &RunOptions::default());
    assert!(r.findings.is_empty(), "{grid:?} {tg:?} {mode:?}: {:?}", r.findings);
    let groups = [0, 1, 2].map(|d| grid_threads[d].div_ceil(tg[d]));
    assert_eq!(r.threadgroups, groups.iter().map(|&x| x as u64).product::<u64>());
    assert_eq!(r.threads, total as u64);
    let out = to_u32(&b[&0]);
    for z in 0..grid_threads[2] {
        for y in 0..grid_threads[1] {
            for x in 0..grid_threads[0] {
                let i = ((z * grid_threads[1] + y) * grid_threads[0] + x) as usize;
                let got = &out[i * R..i * R + R];
                let want = expected([x, y, z], grid_threads, tg);
                assert_eq!(got, &want[..], "thread ({x},{y},{z}) of grid {grid:?} tg {tg:?} {mode:?}\nfields: ok gid[3] lid[3] tgid[3] tpt[3] dtpt[3] tpg tgpg tidx lane sg sgpt quad tew");
            }
        }
    }
}

#[test]
fn attributes_1d_with_partial_edge_group() {
    check_geometry([100, 1, 1], [32, 1, 1], DispatchMode::Threads);
    check_geometry([100, 1, 1], [40, 1, 1], DispatchMode::Threads);
    check_geometry([7, 1, 1], [64, 1, 1], DispatchMode::Threads);
}

#[test]
fn attributes_2d_with_partial_edge_groups() {
    check_geometry([20, 13, 1], [8, 6, 1], DispatchMode::Threads);
    check_geometry([33, 5, 1], [16, 4, 1], DispatchMode::Threads);
}

#[test]
fn attributes_3d_with_partial_edge_groups() {
    check_geometry([7, 6, 5], [4, 4, 3], DispatchMode::Threads);
    check_geometry([10, 3, 9], [5, 2, 4], DispatchMode::Threads);
}

#[test]
fn attributes_in_threadgroups_mode() {
    check_geometry([3, 1, 1], [40, 1, 1], DispatchMode::Threadgroups);
    check_geometry([2, 3, 1], [8, 5, 1], DispatchMode::Threadgroups);
    check_geometry([2, 2, 2], [3, 4, 5], DispatchMode::Threadgroups);
}

#[test]
fn scalar_and_ushort_attribute_types() {
    let src = format!(
        "{PRELUDE}kernel void k(device uint* out [[buffer(0)]], uint i [[thread_position_in_grid]], ushort l [[thread_position_in_threadgroup]], ushort n [[threads_per_threadgroup]], uint g [[threadgroup_position_in_grid]]) {{ out[i] = uint(l) + uint(n) * 100u + g * 10000u; }}\n"
    );
    let k = compile(&src, "k");
    let mut b = bufs(vec![(0, vec![0; 50 * 4])]);
    let r = run(&k, &threads([50, 1, 1], [16, 1, 1]), &mut b, &RunOptions::default());
    assert!(r.findings.is_empty());
    let out = to_u32(&b[&0]);
    for i in 0..50u32 {
        let n = if i >= 48 { 2 } else { 16 };
        assert_eq!(out[i as usize], i % 16 + n * 100 + (i / 16) * 10000, "thread {i}");
    }
}

// ---------------------------------------------------------------- invalid

fn assert_invalid(k: &gpu::Kernel, d: Dispatch, o: &RunOptions, what: &str) {
    let mut b = bufs(vec![(0, vec![7u8; 64])]);
    let r = run(k, &d, &mut b, o);
    assert_eq!(r.findings.len(), 1, "{what}: {:?}", r.findings);
    assert_eq!(r.findings[0].kind, FindingKind::InvalidDispatch, "{what}");
    assert!(r.findings[0].is_error);
    assert_eq!(r.threadgroups, 0, "{what}: must not run");
    assert_eq!(r.threads, 0, "{what}: must not run");
    assert_eq!(b[&0], vec![7u8; 64], "{what}: buffers untouched");
}

#[test]
fn invalid_dispatches_do_not_run() {
    let k = compile(
        &format!("{PRELUDE}kernel void k(device uint* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {{ out[i % 16] = 1u; }}\n"),
        "k",
    );
    let o = RunOptions::default();
    assert_invalid(&k, threads([2048, 1, 1], [1025, 1, 1]), &o, "1025-thread threadgroup");
    assert_invalid(&k, threads([64, 64, 1], [32, 32, 2]), &o, "32x32x2 threadgroup");
    assert_invalid(&k, threads([0, 1, 1], [1, 1, 1]), &o, "zero grid");
    assert_invalid(&k, threads([4, 1, 1], [4, 0, 1]), &o, "zero threadgroup dim");
    assert_invalid(&k, groups([1, 1, 0], [4, 1, 1]), &o, "zero threadgroups");
    assert_invalid(&k, threads([65536, 65536, 1], [256, 1, 1]), &o, "2^32-thread grid");
    assert_invalid(&k, groups([1 << 22, 1, 1], [1024, 1, 1]), &o, "2^32 threads as threadgroups");
    // The limits themselves are fine.
    let mut b = bufs(vec![(0, vec![0u8; 64])]);
    let r = run(&k, &threads([1024, 1, 1], [1024, 1, 1]), &mut b, &opts(CheckLevel::None));
    assert!(r.findings.is_empty(), "{:?}", r.findings);

    let big = compile(&format!("{PRELUDE}kernel void k(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {{ threadgroup float t[8193]; t[i] = 1.0f; threadgroup_barrier(mem_flags::mem_threadgroup); out[i % 16] = t[0]; }}\n"), "k");
    assert_invalid(&big, threads([4, 1, 1], [4, 1, 1]), &o, "32 KiB + 4 bytes of threadgroup memory");
    let ok = compile(&format!("{PRELUDE}kernel void k(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {{ threadgroup float t[8192]; t[i] = 1.0f; threadgroup_barrier(mem_flags::mem_threadgroup); out[i % 16] = t[0]; }}\n"), "k");
    let mut b = bufs(vec![(0, vec![0u8; 64])]);
    let r = run(&ok, &threads([4, 1, 1], [4, 1, 1]), &mut b, &o);
    assert!(r.findings.is_empty(), "exactly 32 KiB is allowed: {:?}", r.findings);
    // Threadgroup buffers count too.
    let tgb = compile(&format!("{PRELUDE}kernel void k(device float* out [[buffer(0)]], threadgroup float* t [[threadgroup(0)]], uint i [[thread_position_in_grid]]) {{ t[i] = 1.0f; threadgroup_barrier(mem_flags::mem_threadgroup); out[i % 16] = t[0]; }}\n"), "k");
    let mut o2 = RunOptions::default();
    o2.threadgroup_buffers.insert(0, 32 * 1024 + 16);
    assert_invalid(&tgb, threads([4, 1, 1], [4, 1, 1]), &o2, "threadgroup buffer over 32 KiB");
}

// ------------------------------------------------------------ determinism

#[test]
fn runs_are_deterministic() {
    let src = format!(
        r#"{PRELUDE}
kernel void k(device float* out [[buffer(0)]], device atomic_float* acc [[buffer(1)]], device uint* racy [[buffer(2)]],
              uint i [[thread_position_in_grid]], uint t [[thread_index_in_threadgroup]]) {{
  threadgroup float s[64];
  s[t] = float(i) * 0.1f;
  float v = s[(t + 1) % 64];
  atomic_fetch_add_explicit(acc, v * 1.37f + 1e7f * float(i % 3), memory_order_relaxed);
  racy[i % 7] = i;
  out[i] = v + simd_sum(v);
}}
"#
    );
    let c = compile_full(&src, "k");
    let go = || {
        let mut b = bufs(vec![(0, vec![0; 512 * 4]), (1, vec![0; 4]), (2, vec![0; 7 * 4])]);
        let r = run(&c.kernel, &threads([500, 1, 1], [64, 1, 1]), &mut b, &RunOptions::default());
        (b, r.findings)
    };
    let (b1, f1) = go();
    assert!(!f1.is_empty(), "the kernel has races; they must be reported");
    for _ in 0..2 {
        let (b2, f2) = go();
        assert_eq!(b1, b2, "identical bytes");
        assert_eq!(f1, f2, "identical findings in identical order");
    }
}

#[test]
fn atomics_from_many_threadgroups_give_exact_totals() {
    let src = format!(
        r#"{PRELUDE}
kernel void k(device atomic_uint* total [[buffer(0)]], device atomic_int* mx [[buffer(1)]], device atomic_uint* bins [[buffer(2)]],
              threadgroup atomic_uint* unused [[threadgroup(0)]], uint i [[thread_position_in_grid]], uint t [[thread_index_in_threadgroup]]) {{
  threadgroup atomic_uint local;
  if (t == 0) atomic_store_explicit(&local, 0u, memory_order_relaxed);
  threadgroup_barrier(mem_flags::mem_threadgroup);
  atomic_fetch_add_explicit(&local, i, memory_order_relaxed);
  atomic_fetch_add_explicit(total, i, memory_order_relaxed);
  atomic_fetch_max_explicit(mx, int(i * 7919u % 10007u) - 5000, memory_order_relaxed);
  atomic_fetch_add_explicit(&bins[i % 10], 1u, memory_order_relaxed);
  atomic_fetch_sub_explicit(&bins[10], 1u, memory_order_relaxed);
  threadgroup_barrier(mem_flags::mem_threadgroup);
  if (t == 0) atomic_fetch_add_explicit(&bins[11], atomic_load_explicit(&local, memory_order_relaxed), memory_order_relaxed);
}}
"#
    );
    let k = compile(&src, "k");
    let n = 10_000u32;
    let mut o = RunOptions::default();
    o.threadgroup_buffers.insert(0, 16);
    let mut b = bufs(vec![(0, vec![0; 4]), (1, i32s(&[i32::MIN])), (2, vec![0; 12 * 4])]);
    let r = run(&k, &threads([n, 1, 1], [96, 1, 1]), &mut b, &o);
    assert!(r.findings.is_empty(), "atomics never race: {:?}", r.findings);
    let sum: u64 = (0..n as u64).sum();
    assert_eq!(to_u32(&b[&0])[0], sum as u32);
    assert_eq!(to_i32(&b[&1])[0], (0..n).map(|i| (i * 7919 % 10007) as i32 - 5000).max().unwrap());
    let bins = to_u32(&b[&2]);
    for (j, &count) in bins[..10].iter().enumerate() {
        assert_eq!(count, n / 10, "bin {j}");
    }
    assert_eq!(bins[10], 0u32.wrapping_sub(n));
    assert_eq!(bins[11], sum as u32, "per-threadgroup partials add up");
}

#[test]
fn float_atomics_are_deterministic_and_close() {
    let src = format!(
        "{PRELUDE}kernel void k(const device float* a [[buffer(0)]], device atomic_float* s [[buffer(1)]], uint i [[thread_position_in_grid]]) {{ atomic_fetch_add_explicit(&s[i % 3], a[i], memory_order_relaxed); }}\n"
    );
    let k = compile(&src, "k");
    let a: Vec<f32> =
        (0..5000).map(|i| ((i * 2654435761u32 as usize) % 1000) as f32 * 0.001 + if i % 17 == 0 { 1e4 } else { 0.0 }).collect();
    let go = || {
        let mut b = bufs(vec![(0, f32s(&a)), (1, vec![0; 12])]);
        let r = run(&k, &threads([5000, 1, 1], [128, 1, 1]), &mut b, &RunOptions::default());
        assert!(r.findings.is_empty(), "{:?}", r.findings);
        b[&1].clone()
    };
    let first = go();
    for _ in 0..3 {
        assert_eq!(go(), first, "float atomics accumulate in a defined order");
    }
    let got = to_f32(&first);
    for (j, &sum) in got.iter().enumerate() {
        let exact: f64 = a.iter().skip(j).step_by(3).map(|&x| x as f64).sum();
        assert!((sum as f64 - exact).abs() <= exact.abs() * 1e-4, "sum {j}: {sum} vs {exact}");
    }
}
