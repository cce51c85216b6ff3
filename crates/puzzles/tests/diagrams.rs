//! Golden SVG diagrams of two solved puzzles, drawn from the simulator's
//! trace (`metal-puzzles show`), plus structural checks for every puzzle.

mod common;

use common::{file_with, solution};

fn svg(slug: &str) -> String {
    let p = puzzles::find(slug).expect("puzzle");
    let text = file_with(slug, solution(slug));
    let shown = puzzles::show::trace_test(p, &p.file_name(), &text, 0, None).expect("traced run");
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
        let shown = puzzles::show::trace_test(p, &p.file_name(), &text, 0, None).expect("traced run");
        assert!(shown.findings.is_empty(), "{}: {:?}", p.slug, shown.findings);
        let writes = shown.trace.events.iter().filter(|e| e.write).count();
        assert!(writes > 0, "{}: no writes traced", p.slug);
        let doc = diagram::render_svg(&shown.spec, &shown.trace);
        assert!(doc.starts_with("<svg") || doc.starts_with("<?xml"), "{}", p.slug);
        // Every output value the solution produced appears as a cell label.
        assert!(doc.contains(p.output_name), "{}: output table missing", p.slug);
    }
}

#[test]
fn matmul_full_draws_2d_tiles_with_values_for_one_threadgroup() {
    let p = puzzles::find("matmul").expect("puzzle");
    let text = file_with("matmul", solution("matmul"));
    let shown = puzzles::show::trace_test(p, &p.file_name(), &text, 1, None).expect("traced run");
    // Nine threadgroups with threadgroup memory: the first is drawn alone.
    assert_eq!(shown.spec.focus, Some([0, 0, 0]));
    let tile = shown.spec.tables.iter().find(|t| t.name == "a_shared").expect("a_shared");
    assert_eq!(tile.shape, vec![3, 3], "declared `a_shared[3][3]`");
    let doc = diagram::render_svg(&shown.spec, &shown.trace);
    let height: f64 = doc.split("height=\"").nth(1).and_then(|s| s.split('"').next()).and_then(|s| s.parse().ok()).unwrap();
    assert!(height < 1200.0, "readable size, got height {height}");
    assert!(doc.contains("threadgroup (0, 0, 0) shown"));
    // a is arange(64) reshaped 8x8: the first tile holds a[0..3][0..3].
    assert!(doc.contains(r##"fill="#333">9</text>"##), "tile values are drawn");
    // Another threadgroup on request.
    let other = puzzles::show::trace_test(p, &p.file_name(), &text, 1, Some([2, 1, 0])).expect("traced run");
    let doc = diagram::render_svg(&other.spec, &other.trace);
    assert!(doc.contains("threadgroup (2, 1, 0) shown"), "{}", &doc[..400]);
    let term = diagram::render_terminal(&other.spec, &other.trace, false, 100);
    assert!(term.contains("interval k: threadgroup memory after k barriers"));
}
