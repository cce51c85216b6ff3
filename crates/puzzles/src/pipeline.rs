//! Multi-kernel puzzles (book two's Pipelines chapter): the workspace file
//! holds one section per stage, each under a line `// ---- kernel NAME ----`
//! (an optional MLX header above `// ---- body ----` is shared by all).
//! The stages run in the puzzle's order on shared buffers: a stage's output
//! is an input of later stages. Each stage is compared with its own
//! reference, computed from the inputs it was actually given, so the first
//! wrong stage is named even when the final output is wrong only as a
//! consequence.

use crate::check::{absorb_error, score_of, CheckResult, ReportedFinding, TestResult, BOOK_BUDGET};
use crate::{split_kernels, split_source, Puzzle, Score, Stage};
use arrays::Array;
use std::rc::Rc;

/// Why a pipeline's file cannot be turned into kernels.
pub enum LayoutError {
    /// The sections are wrong (missing, unknown, duplicated, stray code):
    /// `file:line:column: message`.
    Layout(String),
    /// A stage does not compile.
    Mlx(mlx::MlxError),
}

/// The kernels of a pipeline's file, one per stage in the puzzle's order;
/// messages point at the file's lines.
pub fn stage_kernels(puzzle: &Puzzle, file_name: &str, text: &str) -> Result<Vec<mlx::MetalKernel>, LayoutError> {
    let (header, body) = split_source(text);
    let base = text.len() - body.len();
    let base_line = text[..base].matches('\n').count() + 1;
    let names = puzzle.stages.iter().map(|s| s.name).collect::<Vec<_>>().join(", ");
    let sections = split_kernels(&body, base, base_line).map_err(|(line, m)| LayoutError::Layout(format!("{file_name}:{line}:1: {m}")))?;
    if let Some(s) = sections.iter().find(|s| !puzzle.stages.iter().any(|st| st.name == s.name)) {
        return Err(LayoutError::Layout(format!(
            "{file_name}:{}:1: puzzle {} has no kernel `{}` (its kernels, in order: {names})",
            s.line, puzzle.number, s.name
        )));
    }
    let mut kernels = Vec::new();
    for stage in puzzle.stages {
        let Some(section) = sections.iter().find(|s| s.name == stage.name) else {
            return Err(LayoutError::Layout(format!(
                "{file_name}: no `{}` line: each of this puzzle's kernels ({names}) needs its own section under such a line",
                stage.marker()
            )));
        };
        let body_file = mlx::UserFile { name: file_name.to_string(), text: text.to_string(), offset: section.offset };
        let header_file = mlx::UserFile { name: file_name.to_string(), text: text.to_string(), offset: 0 };
        let mut k = mlx::MetalKernel::new(stage.kernel_name, stage.inputs, &[stage.output], &section.body, &header, true, false)
            .map_err(LayoutError::Mlx)?;
        k.templates = false;
        kernels.push(k.with_files(Some(body_file), Some(header_file)));
    }
    Ok(kernels)
}

/// Number of elements of the puzzle's first input (what stages are sized by).
pub fn size_of(inputs: &[Array]) -> usize {
    inputs.first().map_or(0, |a| a.shape.iter().product())
}

/// The inputs of `stage` among the buffers so far.
fn stage_inputs(stage: &Stage, buffers: &[(&str, Array)]) -> Result<Vec<Array>, String> {
    stage
        .inputs
        .iter()
        .map(|name| {
            buffers
                .iter()
                .rev()
                .find(|(b, _)| b == name)
                .map(|(_, a)| a.clone())
                .ok_or_else(|| format!("stage `{}`: no buffer `{name}`", stage.name))
        })
        .collect()
}

/// The call of one stage: its inputs, an uninitialized output (as MLX
/// gives it), its dispatch.
pub fn stage_call(stage: &Stage, inputs: &[Array], n: usize) -> mlx::Call {
    let d = (stage.dispatch)(n);
    let mut call = mlx::Call::new(
        inputs.iter().cloned().map(mlx::Input::Array).collect(),
        vec![d.output_shape],
        vec![stage.output_dtype],
        d.grid,
        d.threadgroup,
    );
    call.budget = Some(BOOK_BUDGET);
    call.atomics_last_lane_first = true;
    call.schedule_tolerance = (crate::check::RTOL, crate::check::ATOL);
    call
}

/// Run the stages before `last` quietly (no checks) and return every
/// buffer, then the inputs of stage `last` (for a traced run of it).
pub fn inputs_of_stage(puzzle: &Puzzle, kernels: &[mlx::MetalKernel], inputs: &[Array], last: usize) -> Result<Vec<Array>, String> {
    let n = size_of(inputs);
    let mut buffers: Vec<(&str, Array)> = puzzle.input_names.iter().copied().zip(inputs.iter().cloned()).collect();
    for (stage, kernel) in puzzle.stages.iter().zip(kernels).take(last) {
        let mut call = stage_call(stage, &stage_inputs(stage, &buffers)?, n);
        call.check = gpu::CheckLevel::None;
        let out = kernel.call_with(&call, &mut |_| {}).map_err(|e| e.to_string())?;
        let y = out.outputs.into_iter().next().ok_or("a stage produced no output")?;
        buffers.push((stage.output, y));
    }
    stage_inputs(puzzle.stages.get(last).ok_or("no such stage")?, &buffers)
}

fn value(v: f64) -> String {
    format!("{}", v as f32)
}

/// Check a pipeline's workspace file; `None` when `cancel` was set meanwhile.
pub fn check_pipeline(puzzle: &'static Puzzle, file_name: &str, text: &str, cancel: Option<&gpu::Cancel>) -> Option<CheckResult> {
    let is_cancelled = || cancel.is_some_and(gpu::Cancel::is_cancelled);
    let mut result = CheckResult::empty(puzzle);
    let kernels = match stage_kernels(puzzle, file_name, text) {
        Ok(k) => k,
        Err(LayoutError::Layout(m)) => {
            result.error = Some(m);
            return Some(result);
        }
        Err(LayoutError::Mlx(e)) => {
            absorb_error(&mut result, e);
            return Some(result);
        }
    };
    let tol = puzzle.tolerance;
    let mut stage_scores: Vec<Option<Score>> = vec![None; puzzle.stages.len()];
    'runs: for (name, ci, seed, inputs) in crate::check::runs(puzzle) {
        let n = size_of(&inputs);
        let spec = (puzzle.spec)(&inputs);
        let mut test = TestResult {
            name,
            case: ci,
            seed,
            inputs: inputs.clone(),
            yours: None,
            unwritten: None,
            spec,
            passed: false,
            score: None,
            error: None,
        };
        let mut buffers: Vec<(&str, Array)> = puzzle.input_names.iter().copied().zip(inputs).collect();
        let mut wrong_stage = None;
        for (si, (stage, kernel)) in puzzle.stages.iter().zip(&kernels).enumerate() {
            let given = match stage_inputs(stage, &buffers) {
                Ok(g) => g,
                Err(m) => {
                    result.error = Some(m);
                    break 'runs;
                }
            };
            let mut call = stage_call(stage, &given, n);
            call.count = true;
            call.cancel = cancel.cloned();
            let out = kernel.call_with(&call, &mut |_| {});
            if is_cancelled() {
                return None;
            }
            let out = match out {
                Ok(out) => out,
                Err(e) => {
                    test.error = Some(match &e {
                        mlx::MlxError::Compile { .. } => format!("kernel `{}` does not compile", stage.name),
                        mlx::MlxError::Argument(m) => format!("kernel `{}`: {m}", stage.name),
                    });
                    result.tests.push(test);
                    absorb_error(&mut result, e);
                    break 'runs;
                }
            };
            if result.diagnostics.is_empty() && !out.diagnostics.is_empty() {
                result.diagnostics = out.diagnostics.clone();
                result.diagnostic_sources = Rc::new(out.sources.clone());
            }
            if let Some(c) = out.report.max_counts {
                let s = score_of(&c);
                test.score = Some(test.score.map_or(s, |m| m.max(s)));
                stage_scores[si] = Some(stage_scores[si].map_or(s, |m| m.max(s)));
            }
            let mut sources: Option<Rc<msl::source::SourceMap>> = None;
            for f in out.report.findings {
                let known = result.findings.iter().any(|r| r.finding.same_place(&f));
                if !known {
                    let sources = sources.get_or_insert_with(|| Rc::new(out.sources.clone())).clone();
                    result.findings.push(ReportedFinding { finding: f, sources, test: test.name.clone() });
                }
            }
            let unwritten = out.unwritten.into_iter().next().flatten().filter(|u| u.contains(&true));
            let Some(yours) = out.outputs.into_iter().next() else { break };
            let expected = (stage.spec)(&given);
            // An element no thread wrote is wrong whatever garbage it holds.
            if unwritten.is_some() || !yours.allclose(&expected, tol.rtol, tol.atol) {
                test.unwritten = unwritten;
                wrong_stage = Some((si, yours, expected, given));
                break;
            }
            buffers.push((stage.output, yours));
        }
        match wrong_stage {
            Some((si, yours, expected, given)) => {
                if result.explanations.is_empty() {
                    result.explanations = stage_verdict(puzzle, si, &yours, &expected, &test.name);
                    // What the mistake looks like, right under the headline.
                    if let Some(d) = puzzle.stages[si].diagnose.and_then(|d| d(&given, &yours, &expected)) {
                        result.explanations.insert(1, d);
                    }
                }
                test.yours = Some(yours);
                test.spec = expected;
            }
            None => {
                let last = puzzle.stages.last().map(|s| s.output);
                test.yours = buffers.iter().rev().find(|(b, _)| Some(*b) == last).map(|(_, a)| a.clone());
                test.passed = test.yours.as_ref().is_some_and(|y| y.allclose(&test.spec, tol.rtol, tol.atol));
                if !test.passed && result.explanations.is_empty() {
                    result.explanations =
                        vec![format!("every stage matched its own reference, but `{}` is not the spec's result", puzzle.output_name)];
                }
            }
        }
        result.tests.push(test);
    }
    result.stage_scores = puzzle.stages.iter().zip(&stage_scores).filter_map(|(s, sc)| sc.map(|sc| (s.name, sc))).collect();
    let score = stage_scores.iter().flatten().copied().reduce(Score::max);
    result.settle(score, puzzle.targets);
    // Each kernel against its own targets (every kernel must have run).
    result.targets_met = puzzle.stages.iter().zip(&stage_scores).all(|(st, sc)| sc.is_some_and(|sc| st.targets.met_by(sc)));
    Some(result)
}

/// Most wrong cells listed in a stage's verdict.
const LISTED_CELLS: usize = 3;

/// `stage 2 (scan) is wrong: …` and its first wrong cells.
pub fn stage_verdict(puzzle: &Puzzle, si: usize, yours: &Array, expected: &Array, test: &str) -> Vec<String> {
    let stage = &puzzle.stages[si];
    let (y, e) = (yours.to_f64_vec(), expected.to_f64_vec());
    let wrong: Vec<usize> = (0..y.len().max(e.len()))
        .filter(|&i| match (y.get(i), e.get(i)) {
            (Some(a), Some(b)) => !puzzle.cell_matches(*a, *b),
            _ => true,
        })
        .collect();
    let given = if si == 0 {
        "the puzzle's inputs".to_string()
    } else {
        let earlier: Vec<String> = (0..si).map(|k| format!("{} ({})", k + 1, puzzle.stages[k].name)).collect();
        format!("inputs from stage{} {}, which matched their references", if si > 1 { "s" } else { "" }, earlier.join(", "))
    };
    let mut lines = vec![format!(
        "stage {} ({}) is wrong in `{test}`: {} of {} cells of `{}` differ from its reference, computed from the inputs it was given ({given})",
        si + 1,
        stage.name,
        wrong.len(),
        e.len(),
        stage.output
    )];
    if y.len() != e.len() {
        lines.push(format!("`{}` has {} cells, the reference {}", stage.output, y.len(), e.len()));
    }
    for &i in wrong.iter().take(LISTED_CELLS) {
        if let (Some(a), Some(b)) = (y.get(i), e.get(i)) {
            lines.push(format!("{}[{i}] is {}, expected {}", stage.output, value(*a), value(*b)));
        }
    }
    if si + 1 < puzzle.stages.len() {
        lines.push("(later stages did not run: their inputs would already be wrong)".into());
    }
    lines
}
