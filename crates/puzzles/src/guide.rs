//! What the book tells a learner before and between attempts: the
//! puzzle's description with its sizes and targets, how big an answer is,
//! the goal (which input cells each output cell is computed from, found by
//! probing the spec) and the hints, revealed one at a time.

use crate::check::{build_input, BOOK_ONE_TOLERANCE, RANDOM_TESTS_PER_CASE};
use crate::explain::{spec_dependencies, Table};
use crate::workspace::wrap;
use crate::{Puzzle, COLUMNS};
use std::fmt::Write;

/// `global reads ≤ 1`, … for every column with a target.
pub fn target_list(t: crate::Targets) -> Vec<String> {
    COLUMNS.iter().zip(t.columns()).filter_map(|((_, n), t)| t.map(|t| format!("{} ≤ {t}", n.to_lowercase()))).collect()
}

/// How big the answer is, as the notebook says it.
pub fn size_hint(p: &Puzzle) -> String {
    let n = p.answer_lines;
    let lines = if n == 1 { "1 line".to_string() } else { format!("{n} lines") };
    if p.stages.is_empty() {
        format!("Size: roughly {lines} of code of your own, below the starter's.")
    } else {
        format!("Size: roughly {lines} of code of your own, over the {} kernels.", p.stages.len())
    }
}

/// When outputs count as equal, in words.
pub fn tolerance_text(p: &Puzzle) -> Option<String> {
    let t = p.tolerance;
    if t == BOOK_ONE_TOLERANCE {
        None
    } else if t.rtol == 0.0 && t.atol == 0.0 {
        Some("Outputs must match the spec exactly.".into())
    } else {
        Some(format!("Outputs match when |yours - spec| <= {} + {} * |spec|", t.atol, t.rtol))
    }
}

/// The puzzle's description: explanation, inputs and tests, targets, size,
/// tolerance and the hidden random tests, wrapped to `width`.
pub fn about(p: &Puzzle, width: usize) -> String {
    let mut s = wrap(p.explanation, width);
    let atomic = if p.atomic_outputs { ", atomic" } else { "" };
    let _ = writeln!(s, "\nInputs: {}  Output: {} ({}{atomic})", p.input_names.join(", "), p.output_name, p.output_dtype.mlx_name());
    for t in p.tests {
        let shapes: Vec<String> = t.inputs.iter().map(|i| format!("{} {:?}", i.name, i.shape)).collect();
        let line = format!(
            "Test \"{}\": {}, {} {:?}; grid {:?}, threadgroup {:?}",
            t.name,
            shapes.join(", "),
            p.output_name,
            t.output_shape,
            t.grid,
            t.threadgroup
        );
        for l in wrap(&line, width.saturating_sub(4)).lines() {
            let _ = writeln!(s, "  {l}");
        }
    }
    let targets = target_list(p.targets);
    if !targets.is_empty() {
        s.push_str(&wrap(&format!("Targets per thread: {}", targets.join(", ")), width));
    }
    // A pipeline: each kernel is judged against its own targets.
    for (k, stage) in p.stages.iter().enumerate() {
        s.push_str(&wrap(&format!("  Kernel {} ({}): {}", k + 1, stage.name, target_list(stage.targets).join(", ")), width));
    }
    if let Some(t) = tolerance_text(p) {
        s.push_str(&wrap(&t, width));
    }
    s.push_str(&wrap(
        &format!(
            "Each test also runs {RANDOM_TESTS_PER_CASE} more times on random inputs of the same shapes (hidden until one fails), so a solution cannot pass by a coincidence of the book's values."
        ),
        width,
    ));
    s.push_str(&wrap(&size_hint(p), width));
    s
}

/// Output cells listed at most in the goal.
const GOAL_CELLS: usize = 8;

/// The goal of the puzzle's first test before any attempt: for the first
/// output cells, the input cells the spec computes each from (`out[1] ←
/// a[0], a[1]`), found by changing one input cell at a time. `None` when
/// the inputs are too large to probe.
pub fn goal(p: &Puzzle, width: usize) -> Option<String> {
    let test = p.tests.first()?;
    let inputs: Vec<arrays::Array> = test.inputs.iter().map(|s| build_input(s, None)).collect();
    let out_len: usize = test.output_shape.iter().product::<usize>().max(1);
    let mut cells: Vec<usize> = (0..out_len.min(GOAL_CELLS)).collect();
    if out_len > GOAL_CELLS {
        cells.push(out_len - 1);
    }
    let deps = spec_dependencies(p.spec, &inputs, &cells, p.tolerance)?;
    let table = |name: &str, shape: &[usize]| Table {
        alloc: gpu::trace::CellAlloc::Buffer(0),
        name: name.to_string(),
        shape: shape.to_vec(),
        elem_size: 1,
    };
    let ins: Vec<Table> = test.inputs.iter().zip(&inputs).map(|(s, a)| table(s.name, &a.shape)).collect();
    let out = table(p.output_name, test.output_shape);
    let mut s = String::new();
    let _ = writeln!(s, "Goal of test \"{}\": each cell of {} and the input cells it is computed from", test.name, p.output_name);
    for (k, (&cell, d)) in cells.iter().zip(&deps).enumerate() {
        if k == GOAL_CELLS {
            let _ = writeln!(s, "  … ({} cells in all; the last one:)", out_len);
        }
        let from = if d.is_empty() { "no input (a constant)".to_string() } else { runs_text(&ins, d) };
        let line = format!("{} ← {from}", out.name_of(cell));
        for (i, l) in wrap(&line, width.saturating_sub(6)).lines().enumerate() {
            let _ = writeln!(s, "{}{l}", if i == 0 { "  " } else { "      " });
        }
    }
    Some(s)
}

/// `a[0] to a[3], b[2]`: runs of consecutive cells of one row, at most a
/// few runs per input (then `and N more cells`).
fn runs_text(tables: &[Table], deps: &[(usize, usize)]) -> String {
    const MAX_RUNS: usize = 4;
    let mut parts = Vec::new();
    for (k, t) in tables.iter().enumerate() {
        let mut idx: Vec<usize> = deps.iter().filter(|(i, _)| *i == k).map(|(_, e)| *e).collect();
        idx.sort_unstable();
        if idx.is_empty() {
            continue;
        }
        let row = t.shape.last().copied().filter(|_| t.shape.len() > 1).unwrap_or(usize::MAX);
        let mut runs: Vec<(usize, usize)> = Vec::new();
        for e in idx {
            match runs.last_mut() {
                Some((_, last)) if *last + 1 == e && e % row != 0 => *last = e,
                _ => runs.push((e, e)),
            }
        }
        let cells: usize = runs.iter().map(|(a, b)| b - a + 1).sum();
        let shown: Vec<String> = runs
            .iter()
            .take(MAX_RUNS)
            .map(|&(a, b)| if a == b { t.name_of(a) } else { format!("{} to {}", t.name_of(a), t.name_of(b)) })
            .collect();
        let shown_cells: usize = runs.iter().take(MAX_RUNS).map(|(a, b)| b - a + 1).sum();
        let mut text = shown.join(", ");
        if cells > shown_cells {
            let _ = write!(text, " and {} more cells of {}", cells - shown_cells, t.name);
        }
        parts.push(text);
    }
    parts.join(", ")
}

/// Hints 1 to `upto` (at most all of them), each `Hint k of n: …`.
pub fn hints(p: &Puzzle, upto: usize, width: usize) -> String {
    let n = p.hints.len();
    let mut s = String::new();
    for (k, h) in p.hints.iter().enumerate().take(upto.min(n)) {
        s.push_str(&wrap(&format!("Hint {} of {n}: {h}", k + 1), width));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn goals_name_the_cells_the_spec_reads() {
        let map = crate::find("map").unwrap();
        let g = goal(map, 78).unwrap();
        assert!(g.contains("out[0] ← a[0]\n") && g.contains("out[3] ← a[3]\n"), "{g}");
        let pooling = crate::find("pooling").unwrap();
        let g = goal(pooling, 78).unwrap();
        assert!(g.contains("out[5] ← a[3] to a[5]\n"), "{g}");
        let axis = crate::find("axis_sum").unwrap();
        let g = goal(axis, 78).unwrap();
        assert!(g.contains("out[1][0] ← a[1][0] to a[1][5]\n"), "{g}");
    }

    #[test]
    fn exact_tolerance_is_said_in_words() {
        let h = crate::find("histogram").unwrap();
        assert_eq!(tolerance_text(h).as_deref(), Some("Outputs must match the spec exactly."));
        assert_eq!(tolerance_text(crate::find("map").unwrap()), None);
    }
}
