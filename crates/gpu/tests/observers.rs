//! The debugger's observers: the profiler and the probe recorder exist only
//! when asked for, and watching a thread changes neither results nor findings.

mod common;
use common::*;

const SRC: &str = "#include <metal_stdlib>
using namespace metal;
kernel void k(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    float v = 0;
    for (uint r = 0; r < i; r++) {
        auto __mp_probe_0_0 = (v);
        auto __mp_probe_0_1 = (out[i + 100]);
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

#[test]
fn probes_see_one_thread_and_leave_findings_alone() {
    let k = compile(SRC, "k");
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
    let log = r.probes.expect("probes");
    assert!(log.truncated && log.hits.len() == 2);
}

#[test]
fn profile_counts_per_site() {
    let c = msl::compile("t.metal", SRC, &Default::default());
    let p = c.program.as_ref().expect("program");
    let (id, _) = p.kernel("k").expect("kernel");
    let k = gpu::lower::lower_kernel_with(p, id, gpu::lower::LowerOptions { statement_marks: true }).expect("lower");
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
