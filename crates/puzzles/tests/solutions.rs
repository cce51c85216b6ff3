//! Every reference solution passes the book's and the randomized tests,
//! meets its targets and has no findings; every starter fails.

mod common;
use common::*;
use puzzles::PUZZLES;

#[test]
fn every_puzzle_has_a_reference_solution() {
    let slugs: Vec<&str> = PUZZLES.iter().map(|p| p.slug).collect();
    let ours: Vec<&str> = SOLUTIONS.iter().map(|(s, _)| *s).collect();
    assert_eq!(slugs, ours);
}

#[test]
fn reference_solutions_pass() {
    for (slug, body) in SOLUTIONS {
        let r = check(slug, body);
        let failed: Vec<&str> = r.tests.iter().filter(|t| !t.passed).map(|t| t.name.as_str()).collect();
        assert!(r.error.is_none(), "{slug}: {:?}\n{}", r.error, puzzles::render::human(&r, false));
        assert!(failed.is_empty(), "{slug}: failed {failed:?}\n{}", puzzles::render::human(&r, false));
        assert!(r.findings.is_empty(), "{slug}: findings {:?}", kinds(&r));
        assert!(r.targets_met, "{slug}: score {:?} over targets {:?}", r.score, r.puzzle.targets);
        assert!(r.passed, "{slug}");
        // Exact tests plus the randomized ones.
        let p = r.puzzle;
        assert_eq!(r.tests.len(), p.tests.len() * (1 + puzzles::check::RANDOM_TESTS_PER_CASE as usize), "{slug}");
        assert!(r.tests.iter().any(|t| t.seed.is_some()), "{slug}");
    }
}

#[test]
fn scores_match_the_book() {
    let score = |slug| check(slug, solution(slug)).score.as_array();
    assert_eq!(score("map"), [1, 1, 0, 0]);
    assert_eq!(score("pooling")[..2], [1, 1]);
    assert_eq!(score("dot_product")[..2], [2, 1]);
    assert_eq!(score("1d_conv")[..2], [2, 1]);
    assert_eq!(score("matmul")[..2], [6, 1]);
    assert_eq!(score("threadgroup_memory"), [1, 1, 1, 1]);
}

#[test]
fn starters_fail() {
    for p in PUZZLES.iter() {
        let r = puzzles::check(p, &p.starter_file());
        assert!(!r.passed, "starter of {} passes", p.slug);
        assert!(r.error.is_none(), "starter of {} does not run: {:?}", p.slug, r.error);
        assert!(!r.tests[0].passed, "starter of {} passes the book's test", p.slug);
    }
}
