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
