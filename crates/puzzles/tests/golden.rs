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
