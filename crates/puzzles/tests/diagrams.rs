//! Golden SVG diagrams of two solved puzzles, drawn from the simulator's
//! trace (`metal-puzzles show`), plus structural checks for every puzzle.

mod common;

use common::{file_with, solution};

fn svg(slug: &str) -> String {
    let p = puzzles::find(slug).expect("puzzle");
    let text = file_with(slug, solution(slug));
    let shown = puzzles::show::trace_test(p, &p.file_name(), &text, 0).expect("traced run");
    diagram::render_svg(&shown.spec, &shown.trace)
}

#[test]
fn zip_diagram() {
    insta::assert_snapshot!(svg("zip"));
}

#[test]
fn threadgroup_memory_diagram() {
    insta::assert_snapshot!(svg("threadgroup_memory"));
}

#[test]
fn every_solution_draws_its_writes() {
    for p in puzzles::PUZZLES.iter() {
        let text = file_with(p.slug, solution(p.slug));
        let shown = puzzles::show::trace_test(p, &p.file_name(), &text, 0).expect("traced run");
        assert!(shown.findings.is_empty(), "{}: {:?}", p.slug, shown.findings);
        let writes = shown.trace.events.iter().filter(|e| e.write).count();
        assert!(writes > 0, "{}: no writes traced", p.slug);
        let doc = diagram::render_svg(&shown.spec, &shown.trace);
        assert!(doc.starts_with("<svg") || doc.starts_with("<?xml"), "{}", p.slug);
        // Every output value the solution produced appears as a cell label.
        assert!(doc.contains(p.output_name), "{}: output table missing", p.slug);
    }
}
