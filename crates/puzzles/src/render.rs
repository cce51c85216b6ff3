//! Rendering check results: the book's text format and the contract's JSON.

use crate::check::{CheckResult, ReportedFinding};
use crate::style::Tone;
use crate::{Score, Targets, COLUMNS};
use gpu::Finding;
use msl::diag::Diagnostic;
use msl::source::SourceMap;
use std::fmt::Write;

/// The score table: the book's columns (and book two's atomics, barriers
/// and SIMD-group columns where the puzzle sets a target), a row with the
/// learner's per-thread maxima and a row with the targets, each marked ✓
/// (met) or ✗ (over). One score table as the book prints it under
/// `# Title`; targets are judged (✓/✗) only once the tests pass.
pub fn score_table(title: &str, score: Score, targets: Targets, judged: bool) -> String {
    score_table_styled(title, score, targets.shown_columns(), targets, judged, false)
}

/// A pipeline kernel's table: the puzzle's columns (the same in every
/// kernel's table), this kernel's own targets (`-` where it sets none).
pub fn stage_score_table(title: &str, score: Score, puzzle_targets: Targets, targets: Targets, judged: bool) -> String {
    score_table_styled(title, score, puzzle_targets.shown_columns(), targets, judged, false)
}

/// [`score_table`] over the columns `shown`, with ✓ and ✗ in colour when `color`.
fn score_table_styled(title: &str, score: Score, shown: Vec<usize>, targets: Targets, judged: bool, color: bool) -> String {
    let (values, limits) = (score.columns(), targets.columns());
    let target_cells: Vec<String> = shown
        .iter()
        .map(|&k| match limits[k] {
            Some(t) if judged => {
                let ok = values[k] <= t;
                let mark = crate::style::paint(color, if ok { Tone::Good } else { Tone::Bad }, if ok { "✓" } else { "✗" });
                format!("≤ {t} {mark}")
            }
            Some(t) => format!("≤ {t}"),
            None => "-".to_string(),
        })
        .collect();
    format!("# {title}\n{}", table(score, &shown, Some(&target_cells)))
}

/// What the memory counts count (for `--help`, the README and the book).
pub const COUNTING_RULE: &str = "How memory is counted: a global read is one load, by one thread, from a buffer \
bound to the kernel (a `device` or `constant` buffer parameter, a scalar passed as `constant T&` included); a \
global write is one store to a `device` buffer; shared reads and writes are the same for `threadgroup` memory. \
A vector load or store counts each element (a `float4` load is four reads). Not counted: program-scope `constant` values (such as `constant uint N = 3;` \
in a header) and the `NAME_shape`, `NAME_strides` and `NAME_ndim` arrays MLX adds for its inputs. Atomic \
operations, `threadgroup_barrier`s reached and SIMD-group functions have columns of their own: `check` shows \
those its puzzle sets a target for, `run --counts` and `mlx --counts` those the kernel used. The table shows, \
for each column, the largest count of any one thread.";

/// The score table's header and the `Yours` row for the columns `shown`
/// (indices into [`COLUMNS`]), as `check`, `run --counts` and
/// `mlx --counts` all print it.
pub fn counts_table(score: Score, shown: &[usize]) -> String {
    table(score, shown, None)
}

/// Widest table, in columns, that is laid out across: book one's four
/// columns fit 80 columns; more are stacked, one row per column.
const ACROSS_MAX_WIDTH: usize = 80;
/// Width of a column of the table laid out across.
const CELL_WIDTH: usize = 13;

/// The score table: across (`| Yours | 1 | 1 | …`) when it fits 80
/// columns, else stacked (a row per column: `| Global Reads | 1 | ≤ 1 ✓ |`),
/// so no column is ever cut off. `targets`: the Target row's cells.
fn table(score: Score, shown: &[usize], targets: Option<&[String]>) -> String {
    let values = score.columns();
    let mut s = String::new();
    let _ = writeln!(s, "   Score (Max Per Thread):");
    let across = 3 + 10 + shown.len() * (CELL_WIDTH + 3);
    if across <= ACROSS_MAX_WIDTH {
        let _ = write!(s, "   |        |");
        for &k in shown {
            let _ = write!(s, " {:>13} |", COLUMNS[k].1);
        }
        let _ = write!(s, "\n   | Yours  |");
        for &k in shown {
            let _ = write!(s, " {:>13} |", values[k]);
        }
        s.push('\n');
        if let Some(cells) = targets {
            let _ = write!(s, "   | Target |");
            for cell in cells {
                let pad = CELL_WIDTH.saturating_sub(crate::style::visible_width(cell));
                let _ = write!(s, " {}{cell} |", " ".repeat(pad));
            }
            s.push('\n');
        }
        return s;
    }
    let name_w = shown.iter().map(|&k| COLUMNS[k].1.len()).max().unwrap_or(0);
    let target_w = targets.map(|c| c.iter().map(|t| crate::style::visible_width(t)).max().unwrap_or(0)).unwrap_or(0).max(6);
    let _ = write!(s, "   | {:name_w$} | Yours |", "");
    if targets.is_some() {
        let _ = write!(s, " {:>target_w$} |", "Target");
    }
    s.push('\n');
    for (i, &k) in shown.iter().enumerate() {
        let _ = write!(s, "   | {:<name_w$} | {:>5} |", COLUMNS[k].1, values[k]);
        if let Some(cells) = targets {
            let pad = target_w.saturating_sub(crate::style::visible_width(&cells[i]));
            let _ = write!(s, " {}{} |", " ".repeat(pad), cells[i]);
        }
        s.push('\n');
    }
    s
}

/// The columns `run --counts` and `mlx --counts` show: the book's four,
/// then each later one (atomics, barriers, SIMD-group functions) the kernel used.
pub fn counts_columns(score: Score) -> Vec<usize> {
    let values = score.columns();
    (0..COLUMNS.len()).filter(|&k| k < crate::BOOK_COLUMNS || values[k] > 0).collect()
}

/// A finding as a diagnostic pointing at the access in the learner's file.
pub fn finding_diagnostic(f: &Finding) -> Diagnostic {
    f.to_diagnostic()
}

/// The contract's JSON form of a finding (as `run --json` prints it).
pub fn finding_json(sources: &SourceMap, f: &Finding) -> serde_json::Value {
    f.to_json(sources)
}

fn render_finding(r: &ReportedFinding, color: bool) -> String {
    let mut d = finding_diagnostic(&r.finding);
    d.notes.push(format!("found while running test `{}`", r.test));
    msl::diag::render(&r.sources, &[d], color)
}

/// The human report of one puzzle: `Passed Tests!` / `Failed Tests.`, the
/// arrays of the failing test, the score table, findings and diagnostics.
pub fn human(r: &CheckResult, color: bool) -> String {
    let mut s = String::new();
    let multi = r.puzzle.tests.len() > 1;
    let failed = |what: &str| format!("{}{what}\n", crate::style::paint(color, Tone::Bad, "Failed Tests."));
    if r.passed {
        let _ = writeln!(s, "{}", crate::style::paint(color, Tone::Good, "Passed Tests!"));
        s.push_str(&targets_verdict_styled(r, color));
        s.push_str(&tests_run_line(r));
    } else if let Some(error) = &r.error {
        if r.diagnostics.iter().any(|d| d.is_error()) {
            s.push_str(&failed(" (the kernel does not compile)"));
        } else {
            s.push_str(&failed(&format!(" (the kernel could not run: {error})")));
        }
    } else if let Some(t) = r.first_failure() {
        if t.seed.is_some() || multi {
            s.push_str(&failed(&format!(" ({})", t.name)));
        } else {
            s.push_str(&failed(""));
        }
        if let Some(seed) = t.seed {
            let _ = writeln!(s, "Randomized inputs (seed {seed}; the book's inputs passed):");
            for (spec, a) in r.puzzle.tests[t.case].inputs.iter().zip(&t.inputs) {
                let _ = writeln!(s, "{} = {}", spec.name, indent_after_first(&repr(a), spec.name.len() + 3));
            }
        }
        if let Some(y) = &t.yours {
            let _ = writeln!(s, "Yours: {}", repr_unknown(y, t.unwritten.as_deref()));
            if t.unwritten.as_ref().is_some_and(|u| u.contains(&true)) {
                s.push_str("(`?`: no thread wrote that element; MLX leaves outputs uninitialized, so it holds garbage)\n");
            }
        }
        let _ = writeln!(s, "Spec : {}", repr(&t.spec));
        if !r.explanations.is_empty() {
            let why = if r.puzzle.stages.is_empty() {
                "Why (from the trace of this test):"
            } else {
                "Why (each kernel checked against its own reference):"
            };
            let _ = writeln!(s, "{}", crate::style::paint(color, Tone::Strong, why));
            for e in &r.explanations {
                let _ = writeln!(s, "  {e}");
            }
        }
    } else {
        s.push_str(&failed(" (every output matches, but the sanitizer reported errors below)"));
    }
    // A pipeline: one table per kernel (every test included).
    for (name, score) in &r.stage_scores {
        let Some((k, stage)) = r.puzzle.stages.iter().enumerate().find(|(_, st)| st.name == *name) else { continue };
        s.push('\n');
        let title = format!("Kernel {} of {}: {name}", k + 1, r.puzzle.stages.len());
        s.push_str(&score_table_styled(&title, *score, r.puzzle.targets.shown_columns(), stage.targets, r.passed, color));
    }
    // One table per book test (its randomized variants included).
    for (case, test) in r.puzzle.tests.iter().enumerate().filter(|_| r.puzzle.stages.is_empty()) {
        let scores = r.tests.iter().filter(|t| t.case == case).filter_map(|t| t.score);
        if let Some(score) = scores.reduce(Score::max) {
            s.push('\n');
            s.push_str(&score_table_styled(test.name, score, r.puzzle.targets.shown_columns(), r.puzzle.targets, r.passed, color));
        }
    }
    if !r.passed && r.puzzle.targets.columns().iter().any(|t| t.is_some()) && !r.tests.iter().all(|t| t.score.is_none()) {
        s.push_str("   (targets are judged once the tests pass)\n");
    }
    let errors_first = {
        let mut v: Vec<&ReportedFinding> = r.findings.iter().collect();
        v.sort_by_key(|f| !f.finding.is_error);
        v
    };
    if !errors_first.is_empty() {
        s.push('\n');
    }
    for f in errors_first {
        s.push_str(&render_finding(f, color));
    }
    if !r.diagnostics.is_empty() {
        s.push('\n');
        s.push_str(&msl::diag::render(&r.diagnostic_sources, &r.diagnostics, color));
    }
    s
}

/// The verdict in a few short lines (no color): what watch mode keeps on
/// screen whatever the terminal's size. The first line is the book's
/// `Passed Tests!` / `Failed Tests.`; then the most important reason.
/// With `color`, the verdict is painted as in [`human`].
pub fn verdict_lines(r: &CheckResult, color: bool) -> Vec<String> {
    let full = human(r, color);
    let mut out = vec![full.lines().next().unwrap_or_default().to_string()];
    if r.passed {
        let v = targets_verdict_styled(r, color);
        out.extend(v.lines().take(3).map(|l| l.to_string()));
        return out;
    }
    let errors: Vec<&Diagnostic> = r.diagnostics.iter().filter(|d| d.is_error()).collect();
    if let Some(d) = errors.first() {
        let (line, col) = r.diagnostic_sources.line_col(d.span);
        let path = &r.diagnostic_sources.file(d.span.file).name;
        let file = std::path::Path::new(path).file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_else(|| path.clone());
        out.push(format!("{file}:{line}:{col}: error: {}", d.message));
        return out;
    }
    if let Some(f) = r.findings.iter().find(|f| f.finding.is_error) {
        let (line, _) = f.sources.line_col(f.finding.span);
        let g = &f.finding;
        let thread = gpu::findings::thread_name(g.thread, g.local, g.threadgroup);
        out.push(format!("{}: line {line}: {} ({thread})", g.kind.name(), g.message));
        return out;
    }
    if let Some(t) = r.first_failure() {
        if let Some(y) = &t.yours {
            out.push(format!("Yours: {}", one_line(&repr_unknown(y, t.unwritten.as_deref()))));
        }
        out.push(format!("Spec : {}", one_line(&repr(&t.spec))));
    }
    if let Some(e) = r.explanations.first() {
        out.push(format!("Why: {e}"));
    }
    out
}

/// An array as nested JSON lists of numbers.
fn array_json(a: &arrays::Array) -> serde_json::Value {
    array_json_unknown(a, None)
}

/// [`array_json`] with `null` for the elements `unknown` marks.
fn array_json_unknown(a: &arrays::Array, unknown: Option<&[bool]>) -> serde_json::Value {
    fn nest(v: &[Option<f64>], shape: &[usize]) -> serde_json::Value {
        match shape {
            [] | [_] => serde_json::Value::Array(v.iter().map(|x| serde_json::json!(x)).collect()),
            [n, rest @ ..] => {
                let step = rest.iter().product::<usize>().max(1);
                serde_json::Value::Array((0..*n).map(|i| nest(&v[(i * step).min(v.len())..((i + 1) * step).min(v.len())], rest)).collect())
            }
        }
    }
    let values: Vec<Option<f64>> =
        a.to_f64_vec().into_iter().enumerate().map(|(i, x)| unknown.is_none_or(|u| u.get(i) != Some(&true)).then_some(x)).collect();
    nest(&values, &a.shape)
}

/// A multi-line array repr on one line.
fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// After `Passed Tests!`: whether the puzzle is solved (every target met),
/// else which target is missed and what it asks for.
pub fn targets_verdict(r: &CheckResult) -> String {
    targets_verdict_styled(r, false)
}

/// How many tests ran, the hidden randomized ones included (they are
/// never a surprise when one fails).
fn tests_run_line(r: &CheckResult) -> String {
    let book = r.tests.iter().filter(|t| t.seed.is_none()).count();
    let random = r.tests.len() - book;
    let plural = |n: usize, what: &str| if n == 1 { format!("1 {what}") } else { format!("{n} {what}s") };
    format!("({} and {} with random inputs, all passed)\n", plural(book, "book test"), plural(random, "test"))
}

fn targets_verdict_styled(r: &CheckResult, color: bool) -> String {
    if r.targets_met && r.has_racing_stores() {
        let head = crate::style::paint(color, Tone::Warn, "Not solved yet:");
        return format!("{head} the tests pass, but threads store to the same place at once (the warning above): let one thread store.\n");
    }
    if r.targets_met {
        let head = crate::style::paint(color, Tone::Good, &format!("Puzzle {} solved:", r.puzzle.number));
        return format!("{head} the tests pass and every target is met.\n");
    }
    if !r.puzzle.stages.is_empty() {
        // A pipeline: each kernel against its own targets.
        let mut s = not_solved_yet(color);
        let n = r.puzzle.stages.len();
        for (k, stage) in r.puzzle.stages.iter().enumerate() {
            let Some((_, score)) = r.stage_scores.iter().find(|(name, _)| *name == stage.name) else { continue };
            for (what, v) in missed_targets(*score, stage.targets) {
                let _ = writeln!(s, "  Kernel {} of {n} ({}): {what}", k + 1, stage.name);
                let _ = writeln!(s, "    {v}");
            }
        }
        return s;
    }
    let mut s = not_solved_yet(color);
    for (k, v) in missed_targets(r.score, r.puzzle.targets) {
        let _ = writeln!(s, "  {k}");
        let _ = writeln!(s, "    {v}");
    }
    for a in &r.advice {
        let _ = writeln!(s, "  {a}");
    }
    s
}

fn not_solved_yet(color: bool) -> String {
    format!("{} the tests pass, but the kernel misses a target.\n", crate::style::paint(color, Tone::Warn, "Not solved yet:"))
}

/// (what is over, what the target means) for every missed target.
pub fn missed_targets(score: Score, targets: Targets) -> Vec<(String, String)> {
    const WHAT: [&str; 9] = [
        "reads of device memory per thread: read each input value once (share it through threadgroup memory if other threads need it too)",
        "writes to device memory per thread: accumulate in a local variable and write the result once",
        "reads of threadgroup memory per thread: keep values you reuse in a local variable",
        "writes to threadgroup memory per thread: each thread should store only its own share of the tile",
        "atomic operations on device memory per thread: combine values locally (in registers, a SIMD-group or threadgroup memory) and send one atomic per result",
        "atomic operations on threadgroup memory per thread: accumulate in a register first where you can",
        "threadgroup barriers each thread reaches: exchange within a SIMD-group (simd_sum, shuffles) needs none",
        "SIMD-group functions per thread (simd_sum, simd_shuffle_*, simd_prefix_*, simdgroup_matrix operations): one built-in reduction or scan replaces a tree of shuffles",
        "atomic operations on device memory by a whole threadgroup, all its threads together: combine the threadgroup's values first (simd_sum, threadgroup memory) and let one thread send each result",
    ];
    let mut out = Vec::new();
    for ((t, v), (k, meaning)) in targets.columns().into_iter().zip(score.columns()).zip(WHAT.iter().enumerate()) {
        if let Some(t) = t {
            if v > t {
                out.push((format!("{}: {v} per thread, target ≤ {t}", COLUMNS[k].1), format!("the target counts {meaning}")));
            }
        }
    }
    out
}

/// [`repr`], with `?` for the elements `unknown` marks (in row-major
/// order): memory no thread wrote holds no value worth printing.
pub fn repr_unknown(a: &arrays::Array, unknown: Option<&[bool]>) -> String {
    let Some(unknown) = unknown.filter(|u| u.contains(&true)) else { return repr(a) };
    fn sub(a: &arrays::Array, unknown: &[bool], idx: &mut Vec<usize>, out: &mut String) {
        let dim = idx.len();
        let last = dim + 1 == a.ndim();
        out.push('[');
        for i in 0..a.shape[dim] {
            if i > 0 {
                out.push_str(if last { ", " } else { ",\n" });
                if !last {
                    out.push_str(&" ".repeat(7 + dim));
                }
            }
            idx.push(i);
            if last {
                let flat = idx.iter().zip(&a.shape).fold(0usize, |acc, (&x, &d)| acc * d + x);
                if unknown.get(flat).copied().unwrap_or(false) {
                    out.push('?');
                } else {
                    out.push_str(&element_text(a.get(idx)));
                }
            } else {
                sub(a, unknown, idx, out);
            }
            idx.pop();
        }
        out.push(']');
    }
    let mut out = String::from("array(");
    if a.ndim() == 0 {
        out.push('?');
    } else {
        sub(a, unknown, &mut Vec::new(), &mut out);
    }
    out.push_str(", dtype=");
    out.push_str(a.dtype.mlx_name());
    out.push(')');
    out
}

/// One element as MLX prints it.
fn element_text(s: arrays::Scalar) -> String {
    match s {
        arrays::Scalar::Bool(b) => if b { "True" } else { "False" }.into(),
        arrays::Scalar::Int(i) => i.to_string(),
        arrays::Scalar::UInt(u) => u.to_string(),
        arrays::Scalar::Float(f) => arrays::format_g6(f),
    }
}

/// An array as MLX prints it, but never summarized: the puzzles' arrays are
/// small and every element matters when comparing `Yours` with `Spec`.
/// (Identical to [`arrays::Array::repr_mlx`] when no axis is longer than 6.)
pub fn repr(a: &arrays::Array) -> String {
    fn sub(a: &arrays::Array, idx: &mut Vec<usize>, out: &mut String) {
        let dim = idx.len();
        let last = dim + 1 == a.ndim();
        out.push('[');
        for i in 0..a.shape[dim] {
            if i > 0 {
                if last {
                    out.push_str(", ");
                } else {
                    out.push_str(",\n");
                    out.push_str(&" ".repeat(7 + dim));
                }
            }
            idx.push(i);
            if last {
                out.push_str(&element_text(a.get(idx)));
            } else {
                sub(a, idx, out);
            }
            idx.pop();
        }
        out.push(']');
    }
    if a.ndim() == 0 || a.shape.iter().all(|&d| d <= 6) {
        return a.repr_mlx();
    }
    let mut out = String::from("array(");
    sub(a, &mut Vec::new(), &mut out);
    out.push_str(", dtype=");
    out.push_str(a.dtype.mlx_name());
    out.push(')');
    out
}

fn indent_after_first(text: &str, n: usize) -> String {
    let pad = " ".repeat(n);
    let mut lines = text.lines();
    let mut out = lines.next().unwrap_or("").to_string();
    for l in lines {
        out.push('\n');
        out.push_str(&pad);
        out.push_str(l);
    }
    out
}

/// One puzzle's entry of `check --json`.
pub fn json(r: &CheckResult) -> serde_json::Value {
    let mut v = book_json(r);
    // Pipelines only (book one's JSON stays as it is): each kernel's score.
    if !r.puzzle.stages.is_empty() {
        v["stages"] = serde_json::Value::Array(
            r.puzzle
                .stages
                .iter()
                .map(|st| {
                    let score = r.stage_scores.iter().find(|(n, _)| *n == st.name).map(|(_, s)| *s);
                    // Judged like the puzzle's: only on a real score.
                    let met = score.is_some_and(|s| st.targets.met_by(s));
                    let score = score.map(|s| puzzle_score_json(s, r.puzzle.targets));
                    serde_json::json!({
                        "name": st.name,
                        "kernel": st.kernel_name,
                        "score": score,
                        "targets": targets_json(st.targets),
                        "targets_met": met,
                    })
                })
                .collect(),
        );
    }
    v
}

fn book_json(r: &CheckResult) -> serde_json::Value {
    let t = r.puzzle.targets;
    serde_json::json!({
        "puzzle": r.puzzle.slug,
        "number": r.puzzle.number,
        "title": r.puzzle.title,
        "passed": r.passed,
        "solved": r.solved(),
        "tests": r.tests.iter().map(|t| {
            let mut v = serde_json::json!({
                "name": t.name,
                "passed": t.passed,
                "randomized": t.seed.is_some(),
            });
            // A failing test carries both arrays (nested lists).
            if !t.passed {
                v["yours"] = t.yours.as_ref().map(|y| array_json_unknown(y, t.unwritten.as_deref())).unwrap_or(serde_json::Value::Null);
                // Flat indices of the cells no thread wrote (`null` in `yours`).
                if let Some(u) = t.unwritten.as_ref().filter(|u| u.contains(&true)) {
                    v["unwritten_cells"] = serde_json::json!(u.iter().enumerate().filter(|(_, &b)| b).map(|(i, _)| i).collect::<Vec<_>>());
                }
                v["spec"] = array_json(&t.spec);
                // Flat (row-major) indices of the cells that differ.
                if let Some(y) = &t.yours {
                    let (yv, sv) = (y.to_f64_vec(), t.spec.to_f64_vec());
                    let wrong: Vec<usize> = yv
                        .iter()
                        .zip(&sv)
                        .enumerate()
                        .filter(|(_, (a, b))| !r.puzzle.cell_matches(**a, **b))
                        .map(|(i, _)| i)
                        .collect();
                    v["mismatched_cells"] = serde_json::json!(wrong);
                }
            }
            v
        }).collect::<Vec<_>>(),
        "explanations": r.explanations,
        "score": puzzle_score_json(r.score, t),
        "targets": targets_json(t),
        "targets_met": r.targets_met,
        "findings": r.findings.iter().map(|f| finding_json(&f.sources, &f.finding)).collect::<Vec<_>>(),
        "diagnostics": r.diagnostics.iter().map(|d| msl::diag::to_json(&r.diagnostic_sources, d)).collect::<Vec<_>>(),
        "error": r.error,
    })
}

pub fn score_json(s: Score) -> serde_json::Value {
    serde_json::json!({
        "global_reads": s.global_reads,
        "global_writes": s.global_writes,
        "shared_reads": s.shared_reads,
        "shared_writes": s.shared_writes,
    })
}

/// `score_json` plus the book-two columns this puzzle sets targets for
/// (book one's JSON keeps exactly its four keys).
pub fn puzzle_score_json(s: Score, targets: Targets) -> serde_json::Value {
    let mut v = score_json(s);
    let values = s.columns();
    for k in targets.shown_columns().into_iter().filter(|&k| k >= crate::BOOK_COLUMNS) {
        v[COLUMNS[k].0] = serde_json::json!(values[k]);
    }
    v
}

/// The targets as JSON, with the same keys as [`puzzle_score_json`].
pub fn targets_json(t: Targets) -> serde_json::Value {
    let limits = t.columns();
    let mut v = serde_json::json!({});
    for k in t.shown_columns() {
        v[COLUMNS[k].0] = serde_json::json!(limits[k]);
    }
    v
}
