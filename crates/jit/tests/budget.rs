//! The instruction budget: a compiled run must end as the interpreter's
//! would, with or without a runaway finding, whatever the budget. Threads
//! that take different paths count their own instructions; the threadgroup
//! is within budget if their sum is, or if the bound from the loops' most
//! trips is (`analysis::LockstepBound`); otherwise the code gives up and
//! the interpreter decides.

use gpu::{CheckLevel, Dispatch, DispatchMode, RunOptions};
use std::collections::BTreeMap;
use std::sync::Arc;

const SRC: &str = r#"
#include <metal_stdlib>
using namespace metal;
kernel void k(device uint* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    uint acc = 0;
    for (uint t = 0; t < (i % 7u) * 3u; t++) {
        if (t & 1u) acc += t; else acc ^= i;
        for (uint u = 0; u < t % 3u; u++) {
            acc += u * i;
            if (acc == 12345u) return;
        }
    }
    out[i] = acc;
}
"#;

/// The kernel of `src` (its first), and its compiled form.
fn kernel(src: &str) -> (gpu::Kernel, Arc<jit::Native>) {
    let c = msl::compile("k.metal", src, &Default::default());
    let p = c.program.as_ref().expect("compiles");
    let (id, _) = p.kernels().next().expect("a kernel");
    let k = gpu::lower::lower_kernel(p, id).expect("lowers");
    let native = Arc::new(jit::compile(&k).expect("compiles"));
    (k, native)
}

/// One run of `k` on one threadgroup of `threads` with `budget` and
/// checks off (compiled when given the code): its findings and buffers.
fn run(
    k: &gpu::Kernel,
    threads: u32,
    mut buffers: BTreeMap<u32, Vec<u8>>,
    budget: u64,
    compiled: Option<Arc<jit::Native>>,
) -> (Vec<String>, BTreeMap<u32, Vec<u8>>) {
    let d = Dispatch { grid: [threads, 1, 1], threadgroup: [threads, 1, 1], mode: DispatchMode::Threads };
    let opts = RunOptions {
        check: CheckLevel::None,
        budget,
        threads: 1,
        compiled: compiled.map(|n| n as Arc<dyn gpu::engine::Compiled>),
        ..Default::default()
    };
    let r = gpu::run(k, &d, &mut buffers, &opts);
    (r.findings.iter().map(|f| format!("{f:?}")).collect(), buffers)
}

#[test]
fn compiled_runs_end_as_the_interpreter_would_for_every_budget() {
    let (k, native) = kernel(SRC);
    let run = |budget: u64, compiled: Option<Arc<jit::Native>>| run(&k, 64, BTreeMap::from([(0u32, vec![0u8; 64 * 4])]), budget, compiled);
    let (mut ran_over_sum, mut runaway) = (0, 0);
    for budget in (20..4000).step_by(13) {
        let want = run(budget, None);
        let before = native.threadgroups_run();
        let got = run(budget, Some(native.clone()));
        assert_eq!(got, want, "budget {budget}");
        runaway += !want.0.is_empty() as usize;
        // The threads' instructions added up pass this budget (the sum of
        // 64 threads is far over it), yet the compiled code vouched.
        if native.threadgroups_run() > before && budget < 2000 {
            ran_over_sum += 1;
        }
    }
    assert!(runaway > 0, "small budgets make the interpreter stop the kernel");
    assert!(ran_over_sum > 0, "the loops' bound lets compiled code run where the threads' sum is over budget");
}

/// Loops of a few trips run without a budget check on each trip
/// (`analysis::loop_shape`); around and beside them, the budget still
/// ends a compiled run exactly where it ends the interpreter's: a runaway
/// loop whose body is such a loop, one whose counter the body changes too,
/// and threads that take different paths.
const SHORT_LOOPS: &str = r#"
#include <metal_stdlib>
using namespace metal;
kernel void k(device uint* out [[buffer(0)]], constant uint& spin [[buffer(1)]],
              uint i [[thread_position_in_grid]]) {
    uint acc = i;
    for (uint k = 0; k < 16u; k++) acc = acc * 3u + k;
    for (uint k = 0; k <= 5u; k++) { if (k == i % 4u) continue; acc += k; }
    for (uint k = 0; k < 9u; k += 1u) { acc ^= k; k += acc & 1u; }
    for (uint s = acc | 1u; s > 0u; s >>= 1) acc += s;
    while (spin != 0u && acc != 0u) {
        for (uint k = 0; k < 8u; k++) acc += k;
    }
    if (i % 2u == 0u) {
        for (uint k = 0; k < 4000u; k++) acc += k ^ i;
    }
    out[i] = acc;
}
"#;

#[test]
fn short_loops_end_as_the_interpreter_would_for_every_budget() {
    let (k, native) = kernel(SHORT_LOOPS);
    let run = |budget: u64, spin: u32, compiled: Option<Arc<jit::Native>>| {
        run(&k, 32, BTreeMap::from([(0u32, vec![0u8; 32 * 4]), (1u32, spin.to_le_bytes().to_vec())]), budget, compiled)
    };
    let (mut compiled_ran, mut runaway) = (0, 0);
    for spin in [0, 1] {
        for budget in [10, 50, 100, 200, 400, 1000, 5000, 20_000, 100_000, 1_000_000] {
            let want = run(budget, spin, None);
            let before = native.threadgroups_run();
            let got = run(budget, spin, Some(native.clone()));
            assert_eq!(got, want, "budget {budget}, spin {spin}");
            runaway += !want.0.is_empty() as usize;
            compiled_ran += (native.threadgroups_run() > before) as usize;
        }
    }
    assert!(runaway > 0 && compiled_ran > 0, "some budgets stop the kernel ({runaway}), some let the code run ({compiled_ran})");
}
