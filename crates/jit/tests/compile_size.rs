//! The compile budget: Cranelift's time and memory grow faster than a
//! kernel's size, so large functions get the single-pass register
//! allocator and still larger ones are left to the interpreter, whatever
//! shape makes them large. (Sizes, not times, are asserted: times belong
//! in benchmarks.)

use gpu::{CheckLevel, Dispatch, DispatchMode, RunOptions};
use jit::Effort;
use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::Arc;

fn lower(src: &str) -> gpu::Kernel {
    let c = msl::compile("k.metal", src, &Default::default());
    let p = c.program.as_ref().unwrap_or_else(|| panic!("compiles: {:?}", c.diagnostics));
    let (id, _) = p.kernels().next().expect("a kernel");
    gpu::lower::lower_kernel(p, id).expect("lowers")
}

/// `count` values read before a barrier and summed after it: each is live
/// across the barrier (the shape that took the backtracking allocator 70 s).
fn live_across_barrier(count: usize) -> String {
    let mut s =
        String::from("kernel void k(device float* a [[buffer(0)]], device float* o [[buffer(1)]], uint i [[thread_position_in_grid]]) {\n");
    for j in 0..count {
        writeln!(s, "  float v{j} = a[(i + {j}u) % 64u];").unwrap();
    }
    s.push_str("  threadgroup_barrier(mem_flags::mem_threadgroup);\n  float t = 0.0f;\n");
    for j in 0..count {
        writeln!(s, "  t += v{j} * {}.0f;", j % 5).unwrap();
    }
    s.push_str("  o[i] = t;\n}\n");
    s
}

/// `count` values live through a loop with `joins` branches in it: the
/// SSA builder gives each a block parameter at every join.
fn live_through_joins(count: usize, joins: usize) -> String {
    let mut s = String::from(
        "kernel void k(device float* a [[buffer(0)]], device float* o [[buffer(1)]], constant uint& n [[buffer(2)]], uint i [[thread_position_in_grid]]) {\n",
    );
    for j in 0..count {
        writeln!(s, "  float v{j} = a[(i + {j}u) % 64u];").unwrap();
    }
    s.push_str("  float t = 0.0f;\n  for (uint q = 0; q < n; q++) {\n");
    for j in 0..joins {
        writeln!(s, "    if (a[(q + {j}u) % 64u] > {j}.0f) t += 1.0f;").unwrap();
    }
    s.push_str("  }\n");
    for j in 0..count {
        writeln!(s, "  t += v{j};").unwrap();
    }
    s.push_str("  o[i] = t;\n}\n");
    s
}

/// A switch of `cases` cases in a loop (the cases once made a chain of
/// compares, quadratic for the SSA builder; their constants, hoisted to
/// the top, are live across all of them).
fn switch_in_loop(cases: usize) -> String {
    let mut s = String::from(
        "kernel void k(device float* a [[buffer(0)]], device float* o [[buffer(1)]], constant uint& n [[buffer(2)]], uint i [[thread_position_in_grid]]) {\n  float t = 0.0f;\n  for (uint q = 0; q < n; q++) {\n    switch ((i + q) % ",
    );
    writeln!(s, "{cases}u) {{").unwrap();
    for j in 0..cases {
        writeln!(s, "      case {j}u: t += {j}.0f; break;").unwrap();
    }
    s.push_str("    }\n  }\n  o[i] = t + a[i];\n}\n");
    s
}

/// Loops nested `depth` deep, each with a branch.
fn nested_loops(depth: usize) -> String {
    let mut s = String::from(
        "kernel void k(device float* a [[buffer(0)]], device float* o [[buffer(1)]], constant uint& n [[buffer(2)]], uint i [[thread_position_in_grid]]) {\n  float t = 0.0f;\n",
    );
    for j in 0..depth {
        writeln!(s, "  for (uint q{j} = 0; q{j} < n % 2u + 1u; q{j}++) {{ if (a[(i + {j}u) % 64u] > 3.0f) t += {j}.0f;").unwrap();
    }
    s.push_str("  t += 1.0f;\n");
    s.push_str(&"}".repeat(depth));
    s.push_str("\n  o[i] = t;\n}\n");
    s
}

/// One threadgroup of 64 threads: `o` as the interpreter leaves it, and
/// as the compiled code does (`None` when it gave up).
fn outputs(k: &gpu::Kernel, native: &Arc<jit::Native>, check: CheckLevel) -> (Vec<u8>, Option<Vec<u8>>) {
    let a: Vec<u8> = (0..64).flat_map(|x| (x as f32 * 0.25).to_le_bytes()).collect();
    let run = |compiled: Option<Arc<jit::Native>>| {
        let mut bufs = BTreeMap::from([(0u32, a.clone()), (1u32, vec![0u8; 64 * 4]), (2u32, 3u32.to_le_bytes().to_vec())]);
        let opts = RunOptions { check, compiled: compiled.map(|n| n as Arc<dyn gpu::engine::Compiled>), ..Default::default() };
        let d = Dispatch { grid: [64, 1, 1], threadgroup: [64, 1, 1], mode: DispatchMode::Threads };
        let r = gpu::run(k, &d, &mut bufs, &opts);
        assert!(r.findings.is_empty(), "{:?}", r.findings);
        bufs.remove(&1).unwrap()
    };
    let want = run(None);
    let before = native.threadgroups_run();
    let got = run(Some(native.clone()));
    (want, (native.threadgroups_run() > before).then_some(got))
}

#[test]
fn small_kernels_keep_the_thorough_allocator_and_large_ones_get_the_quick_one() {
    for check in [CheckLevel::None, CheckLevel::All] {
        let small = lower(&live_across_barrier(20));
        let n = Arc::new(jit::compile_checked(&small, check).expect("compiles"));
        assert_eq!(n.effort(), Effort::Thorough, "{check:?}");
        let (want, got) = outputs(&small, &n, check);
        assert_eq!(Some(want), got, "{check:?}: the compiled code ran and agreed");

        let large = lower(&live_across_barrier(400));
        let n = Arc::new(jit::compile_checked(&large, check).expect("compiles"));
        assert_eq!(n.effort(), Effort::Quick, "{check:?}");
        let (want, got) = outputs(&large, &n, check);
        assert_eq!(Some(want), got, "{check:?}: the compiled code ran and agreed");
    }
}

#[test]
fn large_switches_and_deep_loops_compile() {
    for (what, src) in [("a switch of 1,000 cases in a loop", switch_in_loop(1000)), ("loops nested 6 deep", nested_loops(6))] {
        let k = lower(&src);
        let n = Arc::new(jit::compile(&k).unwrap_or_else(|e| panic!("{what}: {}", e.0)));
        let (want, got) = outputs(&k, &n, CheckLevel::None);
        assert_eq!(Some(want), got, "{what}: the compiled code ran and agreed");
    }
}

#[test]
fn kernels_past_the_budget_are_left_to_the_interpreter() {
    let shapes = [
        ("live across a barrier", live_across_barrier(3000)),
        ("live through joins", live_through_joins(1000, 300)),
        ("a switch of 5,000 cases in a loop", switch_in_loop(5000)),
        ("loops nested 80 deep", nested_loops(80)),
    ];
    for (what, src) in shapes {
        let k = lower(&src);
        for check in [CheckLevel::None, CheckLevel::All] {
            match jit::compile_checked(&k, check) {
                Ok(_) => panic!("{what}, {check:?}: compiled, past the budget"),
                Err(e) => assert!(e.0.contains("too large to compile"), "{what}, {check:?}: {}", e.0),
            }
        }
    }
}
