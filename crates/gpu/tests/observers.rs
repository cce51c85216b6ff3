//! The debugger's observers: the profiler and the probe recorder exist only
//! when asked for, and watching a thread changes neither results nor findings.

mod common;
use common::*;

const SRC: &str = "#include <metal_stdlib>
using namespace metal;
kernel void k(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    float v = 0;
    for (uint r = 0; r < i; r++) {
        // The probes of `probed()` go before the next line:
        // `v` and `out[i + 100]`.
        v += 1;
    }
    if (i < 40) {
        out[i] = v;
    }
}
";

fn contains_mark(b: &[gpu::ir::Inst]) -> bool {
    use gpu::ir::Inst;
    b.iter().any(|i| match i {
        Inst::Mark { .. } => true,
        Inst::If { then, els, .. } => contains_mark(then) || contains_mark(els),
        Inst::Loop { cond_block, body, step, .. } => contains_mark(cond_block) || contains_mark(body) || contains_mark(step),
        Inst::Scope { body } | Inst::Probing { body } => contains_mark(body),
        Inst::Switch { cases, .. } => cases.iter().any(|c| contains_mark(&c.2)),
        _ => false,
    })
}

#[test]
fn off_means_absent() {
    let k = compile(SRC, "k");
    assert!(!contains_mark(&k.body), "statement marks only when profiling");
    let mut b = bufs(vec![(0, f32s(&[0.0; 64]))]);
    let r = run(&k, &threads([64, 1, 1], [64, 1, 1]), &mut b, &opts(CheckLevel::All));
    assert!(r.profile.is_none() && r.probes.is_none());
    assert!(r.findings.is_empty(), "{:?}", r.findings);
}

/// `SRC` with `v, out[i + 100]` printed before line 8.
fn probed() -> gpu::Kernel {
    let request = msl::probe::ProbeRequest {
        at: msl::probe::ProbeAt::Line { file: None, line: 8 },
        text: "v, out[i + 100]".into(),
        name: "--print 8".into(),
        optional: false,
    };
    let opts = msl::CompileOptions { probes: msl::probe::Probes { requests: vec![request], view: None }, ..Default::default() };
    let c = msl::compile("t.metal", SRC, &opts);
    let p = c.program.as_ref().unwrap_or_else(|| panic!("{}", c.render(false)));
    assert_eq!(p.probe_sites.len(), 1);
    let (id, _) = p.kernel("k").expect("kernel");
    gpu::lower::lower_kernel(p, id).expect("lower")
}

#[test]
fn probes_see_one_thread_and_leave_findings_alone() {
    let k = probed();
    let mut plain = bufs(vec![(0, f32s(&[0.0; 64]))]);
    let r0 = run(&k, &threads([64, 1, 1], [64, 1, 1]), &mut plain, &opts(CheckLevel::All));
    let mut watched = bufs(vec![(0, f32s(&[0.0; 64]))]);
    let o = RunOptions { probe: Some(([3, 0, 0], 100)), ..opts(CheckLevel::All) };
    let r = run(&k, &threads([64, 1, 1], [64, 1, 1]), &mut watched, &o);
    assert_eq!(plain, watched);
    // `out[i + 100]` is out of bounds for every thread: not reported, as the
    // kernel itself never reads it.
    assert_eq!(r.findings.len(), r0.findings.len());
    let log = r.probes.expect("probes");
    assert!(log.thread_ran && !log.truncated);
    let v: Vec<String> = log.hits.iter().filter(|h| h.slot == 0).map(|h| h.text()).collect();
    assert_eq!(v, ["0", "1", "2"]);
    let capped = RunOptions { probe: Some(([3, 0, 0], 2)), ..opts(CheckLevel::All) };
    let r = run(&k, &threads([64, 1, 1], [64, 1, 1]), &mut bufs(vec![(0, f32s(&[0.0; 64]))]), &capped);
    assert_eq!(r.probe_sites.len(), 1);
    let log = r.probes.expect("probes");
    assert!(log.truncated && log.hits.len() == 2);
}

#[test]
fn profile_counts_per_site() {
    let c = msl::compile("t.metal", SRC, &Default::default());
    let p = c.program.as_ref().expect("program");
    let (id, _) = p.kernel("k").expect("kernel");
    let k = gpu::lower::lower_kernel_with(p, id, gpu::lower::LowerOptions { statement_marks: true, ..Default::default() }).expect("lower");
    assert!(contains_mark(&k.body));
    let o = RunOptions { profile: true, ..opts(CheckLevel::None) };
    let r = run(&k, &threads([64, 1, 1], [64, 1, 1]), &mut bufs(vec![(0, f32s(&[0.0; 64]))]), &o);
    let prof = r.profile.expect("profile");
    let line = |n: u32| {
        let mut s = gpu::profile::SiteStats::default();
        for (span, st) in &prof.sites {
            if c.sources.line_col(*span).0 == n {
                s.add(st);
            }
        }
        s
    };
    // Line 11 (`out[i] = v`): 40 threads, all of SIMD-group 0 and 8 of SIMD-group 1.
    let l11 = line(11);
    assert_eq!((l11.executions, l11.simd_executions, l11.simd_lanes), (40, 2, 64));
    assert_eq!((l11.device_writes, l11.device_bytes), (40, 160));
    // Line 8 (`v += 1`) runs i times for thread i: 0 + 1 + … + 63.
    assert_eq!(line(8).executions, 63 * 64 / 2);
}

const STOPS_SRC: &str = "#include <metal_stdlib>
using namespace metal;
float twice(float x) {
    float y = x * 2;
    return y;
}
kernel void k(device const float* a [[buffer(0)]], device float* out [[buffer(1)]],
              uint i [[thread_position_in_grid]], uint l [[thread_position_in_threadgroup]]) {
    threadgroup float tile[4];
    tile[l] = a[i];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    float s = 0;
    for (uint k = 0; k < 2; k++) {
        s += tile[k];
    }
    if (l % 2 == 0) {
        out[i] = twice(s);
    }
}
";

fn stops_kernel() -> (gpu::Kernel, msl::source::SourceMap) {
    let c = msl::compile("t.metal", STOPS_SRC, &Default::default());
    let p = c.program.as_ref().expect("program");
    let (id, _) = p.kernel("k").expect("kernel");
    let k = gpu::lower::lower_kernel_with(p, id, gpu::lower::LowerOptions { debug_stops: true, ..Default::default() }).expect("lower");
    (k, c.sources)
}

#[test]
fn stops_record_lines_locals_masks_and_cells() {
    let (k, sources) = stops_kernel();
    let a = f32s(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]);
    let mut plain = bufs(vec![(0, a.clone()), (1, f32s(&[0.0; 8]))]);
    run(&k, &threads([8, 1, 1], [4, 1, 1]), &mut plain, &opts(CheckLevel::All));
    let mut watched = bufs(vec![(0, a), (1, f32s(&[0.0; 8]))]);
    let o = RunOptions { stops: Some(([4, 0, 0], 100)), ..opts(CheckLevel::All) };
    let r = run(&k, &threads([8, 1, 1], [4, 1, 1]), &mut watched, &o);
    assert_eq!(plain, watched, "watching changes nothing");
    let log = r.stops.expect("stops");
    assert!(log.thread_ran && !log.truncated);
    assert_eq!((log.threadgroup, log.local), ([1, 0, 0], [0, 0, 0]));
    let lines: Vec<u32> = log.stops.iter().map(|s| sources.line_col(s.span).0).collect();
    // tile, its write, barrier, s, for (init and 3 tests), body ×2, if, out, helper ×2.
    assert_eq!(lines, [9, 10, 11, 12, 13, 13, 14, 13, 14, 13, 16, 17, 4, 5]);
    let first = &log.stops[1];
    let names: Vec<&str> = first.vars.iter().map(|v| v.0.as_str()).collect();
    assert_eq!(names, ["a", "out", "i", "l", "tile"]);
    assert_eq!(first.vars[2].1, "4");
    assert_eq!(first.simd_width, 4);
    assert_eq!(first.simd_active, 0b1111);
    // The first statement reads a[4] and writes tile[0].
    let acc: Vec<(bool, &str, i64, &str)> = first.accesses.iter().map(|a| (a.write, a.name.as_str(), a.index, a.value.as_str())).collect();
    assert_eq!(acc, [(false, "a", 4, "5"), (true, "tile", 0, "5")]);
    // After the barrier the tile is full; inside the loop `k` is in scope.
    let loop_body = &log.stops[8];
    let vars: std::collections::HashMap<&str, &str> = loop_body.vars.iter().map(|(n, v)| (n.as_str(), v.as_str())).collect();
    assert_eq!(vars["tile"], "[5, 6, 7, 8]");
    assert_eq!(vars["k"], "1");
    assert_eq!(vars["s"], "5");
    // Only even lanes enter the `if`; the helper is one call deeper with its own locals.
    assert_eq!(log.stops[11].simd_active, 0b0101);
    let helper = &log.stops[12];
    assert_eq!((helper.depth, helper.func.as_str()), (2, "twice"));
    assert_eq!(helper.vars.iter().map(|v| v.0.as_str()).collect::<Vec<_>>(), ["x"]);
    assert_eq!(log.stops[13].vars[1], ("y".to_string(), "22".to_string()));
    // Capped: a clear flag, never more than the limit.
    let o = RunOptions { stops: Some(([4, 0, 0], 3)), ..opts(CheckLevel::All) };
    let r = run(&k, &threads([8, 1, 1], [4, 1, 1]), &mut bufs(vec![(0, f32s(&[0.0; 8])), (1, f32s(&[0.0; 8]))]), &o);
    let log = r.stops.expect("stops");
    assert!(log.truncated && log.stops.len() == 3);
}

/// A range-based `for` is an ordinary loop to the debugger: its variable is
/// in scope in the body, each element read is an access of the array, and
/// the hidden index and range are not shown.
#[test]
fn stops_in_a_range_for_show_the_element_reads() {
    let src = "#include <metal_stdlib>
using namespace metal;
kernel void k(device const float* a [[buffer(0)]], device float* out [[buffer(1)]],
              uint i [[thread_position_in_grid]]) {
    threadgroup float tile[4];
    tile[i] = a[i];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    float s = 0;
    for (float v : tile) {
        s += v;
    }
    out[i] = s;
}
";
    let c = msl::compile("t.metal", src, &Default::default());
    let p = c.program.as_ref().expect("program");
    let (id, _) = p.kernel("k").expect("kernel");
    let k = gpu::lower::lower_kernel_with(p, id, gpu::lower::LowerOptions { debug_stops: true, ..Default::default() }).expect("lower");
    let o = RunOptions { stops: Some(([1, 0, 0], 100)), ..opts(CheckLevel::All) };
    let mut b = bufs(vec![(0, f32s(&[1.0, 2.0, 3.0, 4.0])), (1, f32s(&[0.0; 4]))]);
    let r = run(&k, &threads([4, 1, 1], [4, 1, 1]), &mut b, &o);
    assert_eq!(to_f32(&b[&1]), [10.0; 4]);
    let log = r.stops.expect("stops");
    assert!(log.stops.iter().all(|s| s.vars.iter().all(|v| !v.0.starts_with('$'))));
    // The body's stops see `v` as each element in turn.
    let body: Vec<&str> = log
        .stops
        .iter()
        .filter(|s| c.sources.line_col(s.span).0 == 10)
        .filter_map(|s| s.vars.iter().find(|v| v.0 == "v"))
        .map(|v| v.1.as_str())
        .collect();
    assert_eq!(body, ["1", "2", "3", "4"]);
    let reads: Vec<(&str, i64)> =
        log.stops.iter().flat_map(|s| &s.accesses).filter(|a| !a.write && a.name == "tile").map(|a| (a.name.as_str(), a.index)).collect();
    assert_eq!(reads, [("tile", 0), ("tile", 1), ("tile", 2), ("tile", 3)]);
}

/// A reference is shown as the value it refers to (`constant uint3& dims`
/// as `uint3(…)`, a struct by its fields, a `thread float&` as the float it
/// names), not as a pointer.
#[test]
fn stops_show_references_as_their_values() {
    let src = "#include <metal_stdlib>
using namespace metal;
struct P { uint n; float s; };
void bump(thread float& x) {
    x += 1.0f;
}
kernel void k(constant uint3& dims [[buffer(0)]], constant P& p [[buffer(1)]], device float* out [[buffer(2)]],
              uint i [[thread_position_in_grid]]) {
    float v = p.s * float(dims.x);
    bump(v);
    out[i] = v;
}
";
    let c = msl::compile("t.metal", src, &Default::default());
    assert!(c.diagnostics.items.is_empty(), "{}", c.render(false));
    let p = c.program.as_ref().expect("program");
    let (id, _) = p.kernel("k").expect("kernel");
    let k = gpu::lower::lower_kernel_with(p, id, gpu::lower::LowerOptions { debug_stops: true, ..Default::default() }).expect("lower");
    let o = RunOptions { stops: Some(([1, 0, 0], 100)), ..opts(CheckLevel::All) };
    let mut params = u32s(&[4, 1, 1, 0]);
    let mut ps = u32s(&[3]);
    ps.extend_from_slice(&2.5f32.to_le_bytes());
    params.truncate(16);
    let mut b = bufs(vec![(0, params), (1, ps), (2, f32s(&[0.0; 2]))]);
    let r = run(&k, &threads([2, 1, 1], [2, 1, 1]), &mut b, &o);
    assert_eq!(to_f32(&b[&2]), [11.0; 2]);
    let log = r.stops.expect("stops");
    let vars: std::collections::HashMap<&str, &str> = log.stops[0].vars.iter().map(|(n, v)| (n.as_str(), v.as_str())).collect();
    assert_eq!(vars["dims"], "uint3(4, 1, 1)");
    assert_eq!(vars["p"], "{n: 3, s: 2.5}");
    let in_bump = log.stops.iter().find(|s| s.func == "bump").expect("a stop in bump");
    assert_eq!(in_bump.vars[0], ("x".to_string(), "10".to_string()));
}
