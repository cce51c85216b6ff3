//! The book's kinds of wrong solutions each get a finding or an explanation
//! that names the right line, thread and cells (issue 13's acceptance list).

mod common;
use common::*;
use puzzles::CheckResult;

/// The finding of `kind` as (line, thread, message).
fn finding(r: &CheckResult, kind: &str) -> (u32, [u32; 3], String) {
    let f = r.findings.iter().find(|f| f.finding.kind.name() == kind).unwrap_or_else(|| panic!("no {kind}: {:?}", kinds(r)));
    (f.sources.line_col(f.finding.span).0, f.finding.thread, f.finding.message.clone())
}

#[test]
fn unguarded_index() {
    // Puzzle 3 without its guard: the extra threads go past the end.
    let r = check("guard", "uint local_i = thread_position_in_grid.x;\nout[local_i] = a[local_i] + 10;\n");
    assert!(!r.passed);
    let (line, thread, msg) = finding(&r, "out-of-bounds");
    assert_eq!((line, thread), (2, [4, 0, 0]));
    assert!(msg.contains("read of `a`") && msg.contains("(element 4 of 4)"), "{msg}");
}

#[test]
fn swapped_index() {
    let body = solution("map_2d").replace("out[thread_y * cols + thread_x]", "out[thread_x * cols + thread_y]");
    let r = check("map_2d", &body);
    assert!(!r.passed);
    assert_eq!(
        r.explanations[0],
        "out[0][1] = 12, expected 11: written by thread (0, 1, 0) in the grid, (0, 0, 0) in threadgroup (0, 1, 0) at line 7 from a[1][0] (read at line 7) — expected from a[0][1]"
    );
    assert!(
        r.explanations[1]
            .starts_with("out[1][0] = 11, expected 12: written by thread (1, 0, 0) in the grid, (0, 0, 0) in threadgroup (1, 0, 0)"),
        "{:?}",
        r.explanations
    );
}

#[test]
fn missing_barrier() {
    let body = solution("pooling").replace("threadgroup_barrier(mem_flags::mem_threadgroup);", "");
    let r = check("pooling", &body);
    assert!(!r.passed);
    let (line, thread, msg) = finding(&r, "data-race");
    assert_eq!((line, thread), (12, [1, 0, 0]));
    assert!(msg.contains("on `shared` (threadgroup memory, byte offset 0)") && msg.contains("while thread (0, 0, 0) wrote it"), "{msg}");
}

#[test]
fn race_on_the_tile() {
    // Every thread stores into the same cell of the tile.
    let body = solution("dot_product").replace("shared[local_i] = i <", "shared[0] = i <");
    let r = check("dot_product", &body);
    assert!(!r.passed);
    let (line, thread, msg) = finding(&r, "data-race");
    assert_eq!((line, thread), (7, [1, 0, 0]));
    assert!(msg.contains("write-after-write") && msg.contains("byte offset 0") && msg.contains("thread (0, 0, 0) wrote it"), "{msg}");
    let e = &r.explanations[0];
    assert!(e.starts_with("out[0] = 49, expected 140: written by thread (0, 0, 0) in the grid, (0, 0, 0) in threadgroup (0, 0, 0) at line 16 from shared[0]"), "{e}");
}

#[test]
fn wrong_row_offset() {
    let body = solution("axis_sum").replace("a[batch * cols + i]", "a[batch + i]");
    let r = check("axis_sum", &body);
    assert!(!r.passed);
    let e = &r.explanations[0];
    assert!(e.starts_with("out[1][0] = 21, expected 51: written by thread (0, 1, 0) in the grid, (0, 0, 0) in threadgroup (0, 1, 0) at line 19 from cache[0]"), "{e}");
    assert!(e.contains("which thread (0, 1, 0) in the grid, (0, 0, 0) in threadgroup (0, 1, 0) stored at line 13"), "{e}");
    // The row the spec sums, which the kernel never read.
    assert!(e.ends_with("— expected from a[1][0], a[1][1], a[1][2] and 3 more"), "{e}");
}

#[test]
fn uninitialized_shared_read() {
    let body = solution("threadgroup_memory")
        .replace("if (i < uint(a_shape[0])) {\n    shared[local_i] = a[i];", "if (local_i > 0) {\n    shared[local_i] = a[i];");
    let r = check("threadgroup_memory", &body);
    assert!(!r.passed);
    assert_eq!(
        r.explanations[0],
        "out[0] = 10, expected 11: written by thread (0, 0, 0) in the grid, (0, 0, 0) in threadgroup (0, 0, 0) at line 12 from shared[0] (read at line 12), which no thread of this threadgroup had stored yet — expected from a[0]"
    );
    let (line, thread, msg) = finding(&r, "uninitialized-read");
    assert_eq!((line, thread), (12, [0, 0, 0]));
    assert!(msg.contains("`shared` (threadgroup memory, byte offset 0)"), "{msg}");
}

#[test]
fn a_right_source_adds_no_expectation() {
    // The value came from the right cell but was combined wrongly: nothing
    // to say about the source.
    let r = check("map", "uint i = thread_position_in_grid.x;\nout[i] = a[i] + 11;\n");
    assert!(!r.passed);
    assert_eq!(
        r.explanations[0],
        "out[0] = 11, expected 10: written by thread (0, 0, 0) in the grid, (0, 0, 0) in threadgroup (0, 0, 0) at line 2 from a[0] (read at line 2)"
    );
}
