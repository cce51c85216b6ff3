//! SIMD-group functions in compiled code: threads stop at them, and the
//! runner applies each to the threads of a SIMD-group that stopped there
//! together. That is lockstep's set of active lanes only when every thread
//! of the group that stopped at such a function stopped at the same one, at
//! the same loop trips; otherwise the code must give up. Each fixture here
//! says which it expects, and the buffers must be the interpreter's.

#[path = "../../gpu/tests/common/fixture.rs"]
#[allow(dead_code)]
mod fixture;

use gpu::{CheckLevel, Dispatch, DispatchMode, RunOptions};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

/// Runs `file` (in tests/kernels) interpreted and compiled with checks off;
/// returns whether the compiled code ran every threadgroup.
fn compiled_agrees(file: &str) -> bool {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/kernels").join(file);
    let src = std::fs::read_to_string(&path).expect("read");
    let case = fixture::parse(&src, &path);
    let c = msl::compile(file, &src, &Default::default());
    let p = c.program.as_ref().expect("compiles");
    let (id, _) = p.kernels().find(|(_, f)| f.name == case.kernel).expect("the kernel");
    let k = gpu::lower::lower_kernel(p, id).expect("lowers");
    let native = Arc::new(jit::compile(&k).expect("the compiled tier takes SIMD-group functions"));
    let d = Dispatch { grid: case.grid, threadgroup: case.threadgroup, mode: DispatchMode::Threads };
    let groups: u64 = (0..3).map(|i| case.grid[i].div_ceil(case.threadgroup[i]) as u64).product();
    let run = |compiled: Option<Arc<jit::Native>>, check: CheckLevel| {
        let mut bufs: BTreeMap<u32, Vec<u8>> = case.buffers.iter().map(|(i, init, n, t)| (*i, fixture::contents(init, *n, t))).collect();
        let opts = RunOptions { check, threads: 1, compiled: compiled.map(|n| n as Arc<dyn gpu::engine::Compiled>), ..Default::default() };
        let r = gpu::run(&k, &d, &mut bufs, &opts);
        (bufs, r.findings.len())
    };
    assert_eq!(run(None, CheckLevel::All).1, 0, "{file}: the fixture must be clean");
    let want = run(None, CheckLevel::None).0;
    let got = run(Some(native.clone()), CheckLevel::None).0;
    assert!(got == want, "{file}: compiled and interpreted buffers differ");
    match native.threadgroups_run() {
        0 => false,
        n if n == groups => true,
        n => panic!("{file}: {n} of {groups} threadgroups ran compiled: a run is compiled or given up whole"),
    }
}

#[test]
fn a_second_simd_sum_in_one_simdgroup_runs_while_the_others_finish() {
    assert!(compiled_agrees("simd_reduction_two_levels.metal"));
}

#[test]
fn functions_in_a_loop_lanes_leave_early_see_the_lanes_still_in_it() {
    assert!(compiled_agrees("simd_in_loops_with_early_exits.metal"));
}

#[test]
fn a_function_in_a_branch_then_one_after_it_gives_up() {
    assert!(!compiled_agrees("simd_after_divergent_branch.metal"));
}

#[test]
fn lanes_at_other_loop_trips_give_up() {
    assert!(!compiled_agrees("simd_continue_before_function.metal"));
}
