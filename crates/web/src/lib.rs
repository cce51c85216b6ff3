//! The puzzle book for the browser: the same crates as the command line
//! (`puzzles`, which runs `mlx`, `gpu` and `msl`; `diagram` for SVG) behind
//! one function, [`handle`], which takes a JSON request and answers JSON.
//! `ffi` exports it to WebAssembly with a plain C ABI; the page
//! (tools/playground) calls it from a Web Worker.
//!
//! Nothing here checks, scores or explains: every verdict comes from
//! `puzzles::check_file` and `puzzles::render`, exactly as `check --json`
//! prints them; this crate only lays them out for the page (positions of
//! findings in the learner's file, score tables as data, diagrams as SVG).

mod ffi;

use puzzles::{Puzzle, Score, Targets, COLUMNS, PUZZLES};
use serde::Deserialize;
use serde_json::{json, Value};

/// One request from the page.
#[derive(Deserialize, Debug)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
pub enum Request {
    /// Every chapter and puzzle (number, slug, title, file name).
    Book,
    /// One puzzle's text, starter file, hints, targets and tests.
    Puzzle { puzzle: u32 },
    /// Check a workspace file's text; `outputs` adds every test's output.
    Check {
        puzzle: u32,
        source: String,
        #[serde(default)]
        outputs: bool,
    },
    /// The diagram of the learner's kernel on a book test (SVG).
    Diagram {
        puzzle: u32,
        source: String,
        #[serde(default)]
        test: usize,
    },
    /// The goal picture of a book test (SVG).
    Goal {
        puzzle: u32,
        #[serde(default)]
        test: usize,
    },
}

/// Answer one request (JSON text in, JSON text out): `{"ok": …}` or
/// `{"error": "…"}`. Never panics on any input it can parse or not.
pub fn handle(request: &str) -> String {
    let answer = match serde_json::from_str::<Request>(request) {
        Ok(r) => answer(r),
        Err(e) => Err(format!("bad request: {e}")),
    };
    match answer {
        Ok(v) => json!({ "ok": v }).to_string(),
        Err(e) => json!({ "error": e }).to_string(),
    }
}

/// The answer to a parsed request.
pub fn answer(r: Request) -> Result<Value, String> {
    match r {
        Request::Book => Ok(book()),
        Request::Puzzle { puzzle } => puzzle_info(find(puzzle)?),
        Request::Check { puzzle, source, outputs } => Ok(check(find(puzzle)?, &source, outputs)),
        Request::Diagram { puzzle, source, test } => diagram(find(puzzle)?, &source, test),
        Request::Goal { puzzle, test } => {
            let p = find(puzzle)?;
            let shown = puzzles::goal::goal(p, test)?;
            Ok(json!({ "svg": diagram::render_svg(&shown.spec, &shown.trace) }))
        }
    }
}

fn find(number: u32) -> Result<&'static Puzzle, String> {
    PUZZLES.iter().find(|p| p.number == number).ok_or_else(|| format!("there is no puzzle {number}; the book has 1 to {}", PUZZLES.len()))
}

/// The table of contents.
pub fn book() -> Value {
    let chapters: Vec<Value> = puzzles::CHAPTERS
        .iter()
        .map(|c| {
            let list: Vec<Value> = PUZZLES
                .iter()
                .filter(|p| p.chapter == *c)
                .map(|p| json!({ "number": p.number, "slug": p.slug, "title": p.title, "file_name": p.file_name() }))
                .collect();
            json!({ "title": c, "puzzles": list })
        })
        .collect();
    json!({ "chapters": chapters, "count": PUZZLES.len() })
}

/// Everything the page shows about a puzzle before a check.
pub fn puzzle_info(p: &'static Puzzle) -> Result<Value, String> {
    let starter = p.starter_file();
    let tests: Vec<Value> = p
        .tests
        .iter()
        .map(|t| {
            let inputs: Vec<Value> =
                t.inputs.iter().map(|i| json!({ "name": i.name, "dtype": i.dtype.mlx_name(), "shape": i.shape })).collect();
            json!({ "name": t.name, "inputs": inputs, "output_shape": t.output_shape, "grid": t.grid, "threadgroup": t.threadgroup })
        })
        .collect();
    let stages: Vec<Value> =
        p.stages.iter().map(|s| json!({ "name": s.name, "kernel": s.kernel_name, "about": s.about, "marker": s.marker() })).collect();
    Ok(json!({
        "number": p.number,
        "slug": p.slug,
        "title": p.title,
        "chapter": p.chapter,
        "file_name": p.file_name(),
        "kernel_name": p.kernel_name,
        "explanation": p.explanation,
        "inputs": p.input_names,
        "output": p.output_name,
        "output_dtype": p.output_dtype.mlx_name(),
        "header": p.header,
        "starter": starter,
        "signatures": puzzles::check::signatures(p, &starter),
        "hints": p.hints,
        "targets": targets_rows(p.targets),
        "tests": tests,
        "stages": stages,
        "counting_rule": puzzles::render::COUNTING_RULE,
    }))
}

/// (JSON key, heading, target) of every column the puzzle shows.
fn targets_rows(t: Targets) -> Vec<Value> {
    let limits = t.columns();
    t.shown_columns().into_iter().map(|k| json!({ "key": COLUMNS[k].0, "heading": COLUMNS[k].1, "target": limits[k] })).collect()
}

/// A span's position in the learner's file: 1-based (line, column, end
/// line, end column); `None` when it points elsewhere (generated source).
fn position(sources: &msl::source::SourceMap, span: msl::source::Span, file_name: &str) -> Option<[u32; 4]> {
    let file = sources.files().get(span.file.0 as usize)?;
    if file.name != file_name {
        return None;
    }
    let (line, col) = file.line_col(span.lo);
    let (end_line, end_col) = file.line_col(span.hi.max(span.lo));
    Some([line, col, end_line, end_col])
}

/// Check `source` as the puzzle's workspace file.
pub fn check(p: &'static Puzzle, source: &str, outputs: bool) -> Value {
    let file_name = p.file_name();
    let r = puzzles::check_file(p, &file_name, source);
    let mut marks = Vec::new();
    for d in &r.diagnostics {
        marks.push(json!({
            "source": "compiler",
            "severity": d.severity,
            "kind": d.code,
            "message": d.message,
            "at": position(&r.diagnostic_sources, d.span, &file_name),
            "text": msl::diag::render(&r.diagnostic_sources, std::slice::from_ref(d), false),
        }));
    }
    for f in &r.findings {
        let mut d = f.finding.to_diagnostic();
        d.notes.push(format!("found while running test `{}`", f.test));
        marks.push(json!({
            "source": "sanitizer",
            "severity": if f.finding.is_error { "error" } else { "warning" },
            "kind": f.finding.kind.name(),
            "message": f.finding.message,
            "at": position(&f.sources, f.finding.span, &file_name),
            "secondary_at": f.finding.secondary.as_ref().and_then(|(s, _)| position(&f.sources, *s, &file_name)),
            "text": msl::diag::render(&f.sources, &[d], false),
        }));
    }
    let mut v = json!({
        "number": p.number,
        "passed": r.passed,
        "solved": r.solved(),
        "headline": puzzles::render::verdict_lines(&r, false),
        "report": puzzles::render::human(&r, false),
        "targets_verdict": if r.passed { Some(puzzles::render::targets_verdict(&r)) } else { None },
        "explanations": r.explanations,
        "marks": marks,
        "tables": score_tables(&r),
        "signatures": puzzles::check::signatures(p, source),
        "check": puzzles::render::json(&r),
    });
    if outputs {
        v["outputs"] = r
            .tests
            .iter()
            .map(|t| {
                json!({
                    "name": t.name,
                    "passed": t.passed,
                    "output": t.yours.as_ref().map(|a| json!({ "dtype": a.dtype.mlx_name(), "shape": a.shape, "values": a.to_f64_vec() })),
                })
            })
            .collect();
    }
    v
}

/// The score tables as `check` prints them (one per book test, or one per
/// kernel of a pipeline), as rows of cells.
fn score_tables(r: &puzzles::CheckResult) -> Vec<Value> {
    let p = r.puzzle;
    let shown = p.targets.shown_columns();
    let table = |title: String, score: Score, targets: Targets| {
        let (values, limits) = (score.columns(), targets.columns());
        let cells: Vec<Value> = shown
            .iter()
            .map(|&k| {
                json!({
                    "key": COLUMNS[k].0,
                    "heading": COLUMNS[k].1,
                    "value": values[k],
                    "target": limits[k],
                    // Judged only once the tests pass, as on the command line.
                    "met": limits[k].filter(|_| r.passed).map(|t| values[k] <= t),
                })
            })
            .collect();
        json!({ "title": title, "cells": cells })
    };
    let mut out = Vec::new();
    for (k, stage) in p.stages.iter().enumerate() {
        if let Some((_, score)) = r.stage_scores.iter().find(|(n, _)| *n == stage.name) {
            out.push(table(format!("Kernel {} of {}: {}", k + 1, p.stages.len(), stage.name), *score, stage.targets));
        }
    }
    for (case, test) in p.tests.iter().enumerate().filter(|_| p.stages.is_empty()) {
        if let Some(score) = r.tests.iter().filter(|t| t.case == case).filter_map(|t| t.score).reduce(Score::max) {
            out.push(table(test.name.to_string(), score, p.targets));
        }
    }
    out
}

/// The learner's diagram on book test `test`.
pub fn diagram(p: &'static Puzzle, source: &str, test: usize) -> Result<Value, String> {
    if test >= p.tests.len() {
        return Err(format!("puzzle {} has tests 0 to {}", p.number, p.tests.len() - 1));
    }
    match puzzles::show::trace_test(p, &p.file_name(), source, test, None) {
        Ok(shown) => Ok(json!({ "svg": diagram::render_svg(&shown.spec, &shown.trace), "title": shown.spec.title })),
        // (A kernel that does not compile has no diagram: the verdict says why.)
        Err(e) => Ok(json!({ "svg": null, "why": e })),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(request: Value) -> Value {
        let out: Value = serde_json::from_str(&handle(&request.to_string())).unwrap();
        assert!(out.get("error").is_none(), "{out}");
        out["ok"].clone()
    }

    #[test]
    fn book_lists_every_puzzle_once() {
        let b = ok(json!({ "op": "book" }));
        let n: usize = b["chapters"].as_array().unwrap().iter().map(|c| c["puzzles"].as_array().unwrap().len()).sum();
        assert_eq!(n, PUZZLES.len());
        assert_eq!(b["chapters"][0]["puzzles"][0]["file_name"], "01_map.metal");
    }

    #[test]
    fn puzzle_has_signature_hints_and_targets() {
        let p = ok(json!({ "op": "puzzle", "puzzle": 10 }));
        assert!(p["signatures"][0].as_str().unwrap().contains("[[kernel]]"), "{p}");
        assert_eq!(p["starter"], PUZZLES[9].starter_file());
        let pipeline = PUZZLES.iter().find(|p| !p.stages.is_empty()).unwrap();
        let p = ok(json!({ "op": "puzzle", "puzzle": pipeline.number }));
        assert_eq!(p["signatures"].as_array().unwrap().len(), pipeline.stages.len(), "{p}");
        assert!(!p["hints"].as_array().unwrap().is_empty());
        assert!(p["targets"].as_array().unwrap().iter().any(|t| t["target"].is_number()));
    }

    #[test]
    fn bad_requests_are_errors_not_panics() {
        for bad in [
            "",
            "{",
            "[]",
            r#"{"op":"check"}"#,
            r#"{"op":"check","puzzle":99,"source":""}"#,
            r#"{"op":"diagram","puzzle":1,"source":"","test":7}"#,
        ] {
            let out: Value = serde_json::from_str(&handle(bad)).unwrap();
            assert!(out["error"].is_string(), "{bad}: {out}");
        }
    }

    #[test]
    fn out_of_bounds_read_is_marked_at_its_line() {
        let src = "uint i = thread_position_in_grid.x;\nout[i] = a[i] + b[i + 1];\n";
        let v = ok(json!({ "op": "check", "puzzle": 2, "source": src }));
        assert_eq!(v["passed"], false);
        let oob = v["marks"].as_array().unwrap().iter().find(|m| m["kind"] == "out-of-bounds").expect("finding");
        assert_eq!(oob["at"][0], 2);
        assert_eq!(v["check"], puzzles::render::json(&puzzles::check(&PUZZLES[1], src)));
    }

    #[test]
    fn solved_puzzle_has_judged_tables() {
        let src = "uint i = thread_position_in_grid.x;\nout[i] = a[i] + 10;\n";
        let v = ok(json!({ "op": "check", "puzzle": 1, "source": src, "outputs": true }));
        assert_eq!(v["solved"], true);
        let cells = v["tables"][0]["cells"].as_array().unwrap();
        assert!(cells.iter().any(|c| c["met"] == true));
        assert_eq!(v["outputs"][0]["output"]["values"], json!([10.0, 11.0, 12.0, 13.0]));
        let d = ok(json!({ "op": "diagram", "puzzle": 1, "source": src }));
        assert!(d["svg"].as_str().unwrap().starts_with("<svg"));
        let g = ok(json!({ "op": "goal", "puzzle": 1 }));
        assert!(g["svg"].as_str().unwrap().starts_with("<svg"));
    }

    #[test]
    fn compile_error_is_marked_and_has_no_diagram() {
        let src = "uint i = thread_position_in_grid.x\nout[i] = a[i];\n";
        let v = ok(json!({ "op": "check", "puzzle": 1, "source": src }));
        let m = &v["marks"][0];
        assert_eq!(m["source"], "compiler");
        assert!(m["at"][0].as_u64().unwrap() >= 1);
        let d = ok(json!({ "op": "diagram", "puzzle": 1, "source": src }));
        assert!(d["svg"].is_null() && d["why"].is_string());
    }
}
