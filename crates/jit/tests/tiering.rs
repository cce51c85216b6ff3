//! `auto` tiering: a small dispatch runs interpreted, until the
//! interpreter has spent `AUTO_HOT_AFTER` on the kernel (with those
//! checks) in this process; then the compiled form runs it, with the same
//! result. A mid-sized dispatch starts the compile on a thread of its own
//! and runs interpreted meanwhile.

use gpu::{CheckLevel, Dispatch, DispatchMode, RunOptions};
use std::collections::BTreeMap;

/// The first kernel of `src`, lowered.
fn kernel(src: &str) -> gpu::Kernel {
    let c = msl::compile("k.metal", src, &Default::default());
    let p = c.program.as_ref().expect("compiles");
    let (id, _) = p.kernels().next().expect("a kernel");
    gpu::lower::lower_kernel(p, id).expect("lowers")
}

const SRC: &str = r#"
#include <metal_stdlib>
using namespace metal;
kernel void spin(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    float acc = 0.0f;
    for (uint k = 0; k < 4000u; k++) acc += float((i * 7u + k) % 13u);
    out[i] = acc;
}
"#;

#[test]
fn a_small_dispatch_compiles_once_the_interpreter_has_spent_long_enough_on_it() {
    let k = kernel(SRC);
    let d = Dispatch { grid: [64, 1, 1], threadgroup: [64, 1, 1], mode: DispatchMode::Threads };
    for check in [CheckLevel::None, CheckLevel::All] {
        // (The form `auto` picks for this one-row grid.)
        let native = jit::compiled_for(&k, check, true).expect("compilable");
        let run = || {
            let mut b = BTreeMap::from([(0u32, vec![0u8; 64 * 4])]);
            let opts = RunOptions { check, ..Default::default() };
            let (r, note) = jit::run(&k, &d, &mut b, &opts, jit::Engine::Auto);
            assert!(r.findings.is_empty() && note.is_none());
            b
        };
        let first = run();
        assert_eq!(native.threadgroups_run(), 0, "64 threads: the first run is interpreted");
        let mut runs = 1;
        while native.threadgroups_run() == 0 {
            assert!(runs < 10_000, "never compiled");
            assert_eq!(run(), first, "the interpreted runs agree");
            runs += 1;
        }
        assert_eq!(run(), first, "the compiled run agrees");
    }
}

const MID: &str = r#"
#include <metal_stdlib>
using namespace metal;
kernel void mid(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    float acc = 0.0f;
    for (uint k = 0; k < 50u; k++) acc += float((i * 5u + k) % 11u);
    out[i] = acc;
}
"#;

#[test]
fn a_mid_sized_dispatch_runs_interpreted_while_the_kernel_compiles_in_the_background() {
    let k = kernel(MID);
    let n = jit::AUTO_BACKGROUND_THREADS as u32 * 2;
    assert!((n as u64) < jit::AUTO_MIN_THREADS);
    let d = Dispatch { grid: [n, 1, 1], threadgroup: [64, 1, 1], mode: DispatchMode::Threads };
    let run = || {
        let mut b = BTreeMap::from([(0u32, vec![0u8; n as usize * 4])]);
        let opts = RunOptions { check: CheckLevel::None, ..Default::default() };
        let (r, note) = jit::run(&k, &d, &mut b, &opts, jit::Engine::Auto);
        assert!(r.findings.is_empty() && note.is_none());
        b
    };
    let first = run();
    // (Waits for the compile the first run started, and gives its result.)
    let native = jit::compiled_for(&k, CheckLevel::None, true).expect("compilable");
    assert_eq!(native.threadgroups_run(), 0, "the first run is interpreted: nobody waits for the compiler");
    assert_eq!(run(), first, "the compiled run agrees");
    assert!(native.threadgroups_run() > 0, "once compiled, the kernel runs compiled");
}
