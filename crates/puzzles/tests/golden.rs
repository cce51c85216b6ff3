//! Golden tests of the human `check` output (one passing, one failing puzzle).

mod common;
use common::*;

#[test]
fn passing_pooling() {
    let r = check("pooling", solution("pooling"));
    insta::assert_snapshot!(puzzles::render::human(&r, false));
}

#[test]
fn failing_broadcast_swapped() {
    let body = solution("broadcast").replace("a[thread_y] + b[thread_x]", "a[thread_x] + b[thread_y]");
    let r = check("broadcast", &body);
    insta::assert_snapshot!(puzzles::render::human(&r, false));
}

#[test]
fn failing_racy_pooling() {
    let body = solution("pooling").replace("threadgroup_barrier(mem_flags::mem_threadgroup);", "");
    let r = check("pooling", &body);
    insta::assert_snapshot!(puzzles::render::human(&r, false));
}

#[test]
fn failing_matmul_starter() {
    let p = puzzles::find("matmul").unwrap();
    let r = puzzles::check(p, &p.starter_file());
    insta::assert_snapshot!(puzzles::render::human(&r, false));
}

// ---- messages of issue 28 ----------------------------------------------

#[test]
fn beginner_whole_kernel_pasted_into_the_body() {
    let body = "kernel void map(device const int* a [[buffer(0)]], device float* out [[buffer(1)]], uint i [[thread_position_in_grid]]) {\n    out[i] = a[i] + 10;\n}\n";
    let r = check("map", body);
    assert_eq!(r.diagnostics[0].code, Some(puzzles::beginner::CODE_WHOLE_KERNEL));
    insta::assert_snapshot!(puzzles::render::human(&r, false));
}

#[test]
fn beginner_printf_and_a_pasted_multiplication_sign() {
    let r = check("zip", "uint i = thread_position_in_grid.x;\nprintf(\"%d %f\", i, a[i]);\nout[i] = a[i] × b[i];\n");
    let codes: Vec<_> = r.diagnostics.iter().map(|d| d.code).collect();
    assert_eq!(codes, [Some(puzzles::beginner::CODE_PRINTF), Some(puzzles::beginner::CODE_NOT_ASCII)]);
    insta::assert_snapshot!(puzzles::render::human(&r, false));
}

#[test]
fn missed_read_target_is_explained_for_the_case_at_hand() {
    // The output read back, and a cell read twice by the same thread.
    let r = check("map", "uint i = thread_position_in_grid.x;\nout[i] = a[i];\nout[i] = out[i] + 10 + a[i] - a[i];\n");
    assert!(r.passed && !r.solved());
    insta::assert_snapshot!(puzzles::render::human(&r, false));
}

#[test]
fn atomic_cells_are_explained_by_their_updates() {
    // The two horizontal weights swapped: every pixel gets the other's share.
    let body = solution("grid_sample_vjp").replace("(dx ? fx : 1.0f - fx)", "(dx ? 1.0f - fx : fx)");
    let r = check("grid_sample_vjp", &body);
    assert!(!r.passed);
    assert!(r.explanations[0].contains("atomic update"), "{:?}", r.explanations);
    insta::assert_snapshot!(r.explanations.join("\n"));
}

#[test]
fn values_are_followed_through_simd_shuffles() {
    // Shuffled down instead of up: each lane adds the lanes after it.
    let body = "uint i = thread_position_in_grid.x;\nuint lane = thread_index_in_simdgroup;\n\
float s = i < uint(a_shape[0]) ? a[i] : 0.0f;\n\
for (ushort d = 1; d < 32; d *= 2) { float up = simd_shuffle_down(s, d); if (lane + d < 32) s += up; }\n\
if (i < uint(a_shape[0])) out[i] = s;\n";
    let r = check("simd_scan", body);
    assert!(!r.passed);
    let e = &r.explanations[0];
    assert!(e.contains("passed on by a SIMD-group function") && e.contains("— expected from a[0]"), "{e}");
    insta::assert_snapshot!(r.explanations.join("\n"));
}

#[test]
fn the_book_gives_no_template_argument_advice() {
    // An unknown short type name: MLX's callers could pass it as a template
    // argument, the book cannot.
    let r = check("map", "uint i = thread_position_in_grid.x;\nT x = a[i];\nout[i] = x + 10;\n");
    let help: Vec<&String> = r.diagnostics.iter().flat_map(|d| &d.help).collect();
    assert!(help.iter().all(|h| !h.contains("--template") && !h.contains("template=")), "{help:?}");
    assert!(help.iter().any(|h| h.contains("the book passes no template arguments")), "{help:?}");
}
