//! Deliberately broken solutions are reported for the right reason.

mod common;
use common::*;

#[test]
fn racy_pooling_without_barrier() {
    let body = solution("pooling").replace("threadgroup_barrier(mem_flags::mem_threadgroup);", "");
    let r = check("pooling", &body);
    assert!(!r.passed);
    assert!(kinds(&r).contains(&"data-race"), "{:?}", kinds(&r));
}

#[test]
fn matmul_missing_second_barrier() {
    let body = solution("matmul");
    let last = body.rfind("threadgroup_barrier(mem_flags::mem_threadgroup);").unwrap();
    let body = format!("{}{}", &body[..last], &body[last + "threadgroup_barrier(mem_flags::mem_threadgroup);".len()..]);
    assert_eq!(body.matches("threadgroup_barrier").count(), 1);
    let r = check("matmul", &body);
    assert!(!r.passed);
    assert!(kinds(&r).contains(&"data-race"), "{:?}", kinds(&r));
}

#[test]
fn guard_without_the_guard() {
    let r = check("guard", "uint local_i = thread_position_in_grid.x;\nout[local_i] = a[local_i] + 10;\n");
    assert!(!r.passed);
    assert!(kinds(&r).contains(&"out-of-bounds"), "{:?}", kinds(&r));
    let f = r.findings.iter().find(|f| f.finding.kind.name() == "out-of-bounds").unwrap();
    assert!(f.finding.is_error);
}

#[test]
fn broadcast_with_swapped_inputs_fails_a_randomized_test() {
    let body = solution("broadcast").replace("a[thread_y] + b[thread_x]", "a[thread_x] + b[thread_y]");
    let r = check("broadcast", &body);
    assert!(!r.passed);
    assert!(r.tests[0].passed, "the book's arange test cannot tell");
    assert!(r.tests[0].seed.is_none());
    let failed = r.first_failure().unwrap();
    assert!(failed.seed.is_some(), "{}", failed.name);
    assert!(r.findings.is_empty());
}

#[test]
fn divergent_barrier() {
    let body = solution("pooling").replace(
        "threadgroup_barrier(mem_flags::mem_threadgroup);",
        "if (local_i < 4) { threadgroup_barrier(mem_flags::mem_threadgroup); }",
    );
    let r = check("pooling", &body);
    assert!(!r.passed);
    assert!(kinds(&r).contains(&"barrier-divergence"), "{:?}", kinds(&r));
}

#[test]
fn compile_error_is_reported() {
    let r = check("map", "uint local_i = thread_position_in_grid.x;\nout[local_i] = a[local_i] + undefined_name;\n");
    assert!(!r.passed);
    assert!(r.error.is_some());
    assert!(r.diagnostics.iter().any(|d| d.is_error()));
}

#[test]
fn passing_but_over_target_is_not_solved() {
    // Thread 0 reads all 16 inputs: right answer, 16 global reads (target 2).
    let body = "uint local_i = thread_position_in_threadgroup.x;\n\
if (local_i == 0) {\n\
    float s = 0;\n\
    for (int k = 0; k < 8; k++) s += a[k] * b[k];\n\
    out[0] = s;\n\
}\n";
    let r = check("dot_product", body);
    assert!(r.passed, "the tests pass");
    assert!(!r.targets_met && !r.solved());
    let text = puzzles::render::human(&r, false);
    assert!(text.starts_with("Passed Tests!\nNot solved yet: the tests pass, but the kernel misses a target."), "{text}");
    assert!(text.contains("Global Reads: 16 per thread, target ≤ 2"), "{text}");
    assert!(text.contains("# Dot Product") && text.contains("≤ 2 ✗"), "{text}");
    assert_eq!(puzzles::render::json(&r)["solved"], false);

    // A starter is not judged against targets at all.
    let r = check("dot_product", "");
    let text = puzzles::render::human(&r, false);
    assert!(!r.passed && !text.contains('✓') && !text.contains('✗'), "{text}");
    assert!(text.contains("targets are judged once the tests pass"), "{text}");

    // The reference solution is solved.
    let r = check("dot_product", solution("dot_product"));
    assert!(r.solved());
    assert!(puzzles::render::human(&r, false).contains("Puzzle 10 solved: the tests pass and every target is met."));
}

#[test]
fn wrong_cells_are_explained_from_the_trace() {
    // Reads the neighbour: the explanation names the thread, line and source.
    let r = check("map", "uint i = thread_position_in_grid.x;\nif (i < 3) out[i] = a[i + 1] + 10;\n");
    assert!(!r.passed);
    assert_eq!(
        r.explanations[0],
        "out[0] = 11, expected 10: written by thread (0, 0, 0) in the grid, (0, 0, 0) in threadgroup (0, 0, 0) at line 2 from a[1] (read at line 2) — expected from a[0]"
    );
    let text = puzzles::render::human(&r, false);
    assert!(text.contains("Why (from the trace of this test):\n  out[0] = 11"), "{text}");
    // JSON carries both arrays of the failing test and the explanations.
    let j = puzzles::render::json(&r);
    // (No thread wrote the last cell: MLX leaves it uninitialized.)
    assert_eq!(j["tests"][0]["yours"], serde_json::json!([11.0, 12.0, 13.0, null]));
    assert_eq!(j["tests"][0]["unwritten_cells"], serde_json::json!([3]));
    assert_eq!(j["tests"][0]["spec"], serde_json::json!([10.0, 11.0, 12.0, 13.0]));
    assert_eq!(j["tests"][0]["mismatched_cells"], serde_json::json!([0, 1, 2, 3]));
    assert_eq!(j["explanations"].as_array().unwrap().len(), r.explanations.len());
    // A guard that is too strict: nobody wrote the last cell.
    let r = check("map", "uint i = thread_position_in_grid.x;\nif (i < 3) out[i] = a[i] + 10;\n");
    assert!(r.explanations[0].starts_with("out[3] = ?, expected 13: no thread wrote it"), "{:?}", r.explanations);

    // Through threadgroup memory: the store that fed the read is named.
    let body =
        solution("threadgroup_memory").replace("shared[local_i] + 10", "shared[(local_i + 1) % 4] + 10").replace("= a[i];", "= a[i] * 2;");
    let r = check("threadgroup_memory", &body);
    assert!(!r.passed);
    let e = &r.explanations[0];
    assert!(e.starts_with("out[0] = 12, expected 11: written by thread (0, 0, 0) in the grid, (0, 0, 0) in threadgroup (0, 0, 0)"), "{e}");
    assert!(
        e.contains("from shared[1] (read at line")
            && e.contains("which thread (1, 0, 0) in the grid, (1, 0, 0) in threadgroup (0, 0, 0) stored at line"),
        "{e}"
    );
    assert!(e.ends_with("from a[1] (read at line 4)") || e.contains("from a[1]"), "{e}");
}

#[test]
fn a_loop_that_never_ends_is_reported_as_runaway() {
    // The classic unsigned countdown: `s >= 0` is always true.
    let body = "uint i = thread_position_in_grid.x;\nfor (uint s = 4; s >= 0; s /= 2) { out[i] = a[i] + 10; }\n";
    let r = check("map", body);
    assert!(!r.passed);
    assert!(kinds(&r).contains(&"runaway-kernel"), "{:?}", kinds(&r));
    assert!(r.explanations.is_empty(), "the finding explains it: {:?}", r.explanations);
}

#[test]
fn a_cancelled_check_reports_nothing() {
    let p = puzzles::find("map").unwrap();
    let body = "uint i = thread_position_in_grid.x;\nwhile (true) { out[i] = a[i] + 10; }\n";
    let cancel = gpu::Cancel::new();
    assert!(puzzles::check::check_file_cancellable(p, "01_map.metal", &file_with("map", body), Some(&cancel)).is_some());
    cancel.cancel();
    assert!(puzzles::check::check_file_cancellable(p, "01_map.metal", &file_with("map", body), Some(&cancel)).is_none());
    let shown = puzzles::show::trace_test_cancellable(p, "01_map.metal", &file_with("map", body), 0, None, Some(&cancel));
    assert!(shown.is_err(), "a cancelled trace draws nothing");
}

/// Issue 24: what the hardware leaves undefined or unordered fails the
/// book's checks, where a learner writes it.
mod never_kinder {
    use super::*;

    fn error_kinds_at(r: &puzzles::CheckResult) -> Vec<(&'static str, usize)> {
        r.findings
            .iter()
            .filter(|f| f.finding.is_error)
            .map(|f| (f.finding.kind.name(), f.sources.line_col(f.finding.span).0 as usize))
            .collect()
    }

    #[test]
    fn histogram_bins_never_zeroed_fail() {
        let body = solution("histogram")
            .replace("if (local_i < BINS) {\n    atomic_store_explicit(&bins[local_i], 0, memory_order_relaxed);\n}\n", "");
        assert!(!body.contains("atomic_store"), "{body}");
        let r = check("histogram", &body);
        assert!(!r.passed);
        assert!(error_kinds_at(&r).iter().any(|(k, _)| *k == "uninitialized-read"), "{:?}", error_kinds_at(&r));
    }

    #[test]
    fn accumulating_into_an_output_mlx_never_cleared_fails() {
        let r = check("map", "uint i = thread_position_in_grid.x;\nout[i] += a[i] + 10;\n");
        assert!(!r.passed);
        // (line 3 of the workspace file: the header marker line comes first)
        assert!(error_kinds_at(&r).iter().any(|(k, _)| *k == "uninitialized-read"), "{:?}", error_kinds_at(&r));
    }

    #[test]
    fn histogram_without_a_barrier_after_zeroing_fails() {
        let body = solution("histogram").replacen("threadgroup_barrier(mem_flags::mem_threadgroup);\n", "", 1);
        let r = check("histogram", &body);
        assert!(!r.passed, "{}", puzzles::render::human(&r, false));
        assert!(error_kinds_at(&r).iter().any(|(k, _)| *k == "data-race"), "{:?}", error_kinds_at(&r));
    }

    #[test]
    fn histogram_reading_bins_without_a_barrier_fails() {
        let body = solution("histogram");
        let at = body.rfind("threadgroup_barrier(mem_flags::mem_threadgroup);\n").expect("second barrier");
        let body = format!("{}{}", &body[..at], &body[at + "threadgroup_barrier(mem_flags::mem_threadgroup);\n".len()..]);
        let r = check("histogram", &body);
        assert!(!r.passed, "{}", puzzles::render::human(&r, false));
        assert!(error_kinds_at(&r).iter().any(|(k, _)| *k == "data-race"), "{:?}", error_kinds_at(&r));
    }

    #[test]
    fn radix_histogram_without_barriers_fails() {
        for which in [0, 1] {
            let sol = solution("radix_pass");
            let barrier = "threadgroup_barrier(mem_flags::mem_threadgroup);\n";
            let at = sol.match_indices(barrier).nth(which).expect("barrier").0;
            let r = check("radix_pass", &format!("{}{}", &sol[..at], &sol[at + barrier.len()..]));
            assert!(!r.passed, "barrier {which} removed:\n{}", puzzles::render::human(&r, false));
        }
    }

    #[test]
    fn barriers_that_order_no_threadgroup_memory_fail() {
        for slug in ["pooling", "matmul"] {
            for flags in ["mem_flags::mem_none", "mem_flags::mem_device"] {
                let body = solution(slug).replace("mem_flags::mem_threadgroup", flags);
                let r = check(slug, &body);
                assert!(!r.passed, "{slug} with {flags}");
                assert!(error_kinds_at(&r).iter().any(|(k, _)| *k == "data-race"), "{slug} with {flags}: {:?}", error_kinds_at(&r));
            }
        }
    }

    #[test]
    fn every_reference_solution_stays_clean() {
        for (slug, _) in SOLUTIONS {
            let r = check(slug, solution(slug));
            assert!(r.solved(), "{slug}:\n{}", puzzles::render::human(&r, false));
            assert!(r.findings.is_empty(), "{slug}: {:?}", error_kinds_at(&r));
        }
    }
}
