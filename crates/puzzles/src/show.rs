//! `show`: run a puzzle's first book test with the access tracer and build
//! the diagram of which thread touched which cell.

use crate::check::build_input;
use crate::{split_source, Puzzle};
use arrays::Array;
use diagram::{DiagramSpec, Role, TableDesc};

/// Events kept in a trace (puzzle sizes need far fewer).
const TRACE_LIMIT: usize = 200_000;

/// A traced run ready to draw.
pub struct Shown {
    pub spec: DiagramSpec,
    pub trace: gpu::trace::Trace,
    /// Findings of the traced run (the diagram is a debugging aid: it is
    /// drawn for wrong kernels too).
    pub findings: Vec<gpu::Finding>,
}

/// Cell labels short enough to stay readable inside a cell: whole numbers
/// up to 5 digits as they are, others with 3 significant digits
/// (`0.25`, `-3.14`, `1.03e6`).
pub(crate) fn labels(a: &Array) -> Vec<String> {
    a.to_f64_vec().iter().map(|&v| label(v)).collect()
}

fn label(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e5 {
        format!("{}", v as i64)
    } else if v.is_finite() && (v.abs() >= 1e4 || (v != 0.0 && v.abs() < 1e-2)) {
        let t = format!("{v:.2e}");
        // `1.03e6`, not `1.03e+06`.
        t.replace("e0", "e").replace("e-0", "e-")
    } else if v.is_finite() {
        let t = format!("{v:.3}");
        t.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        format!("{v}")
    }
}

/// Shape for drawing: 1-D stays, 2-D is (rows, cols), higher is flattened.
pub(crate) fn draw_shape(shape: &[usize]) -> Vec<usize> {
    match shape.len() {
        0 => vec![1],
        1 | 2 => shape.to_vec(),
        _ => vec![shape[..shape.len() - 1].iter().product(), shape[shape.len() - 1]],
    }
}

/// Run test `case` of `puzzle` on the learner's file with tracing.
/// `focus`: the threadgroup to draw alone; `None` lets the diagram choose
/// (every threadgroup, unless threadgroup memory over several threadgroups
/// would make it too large to read, or the puzzle is from book two: then
/// the first one).
pub fn trace_test(
    puzzle: &'static Puzzle,
    file_name: &str,
    file_text: &str,
    case: usize,
    focus: Option<[u32; 3]>,
) -> Result<Shown, String> {
    trace_test_cancellable(puzzle, file_name, file_text, case, focus, None)
}

/// [`trace_test`] that stops early when `cancel` is set (and then says so
/// in its error).
pub fn trace_test_cancellable(
    puzzle: &'static Puzzle,
    file_name: &str,
    file_text: &str,
    case: usize,
    focus: Option<[u32; 3]>,
    cancel: Option<&gpu::Cancel>,
) -> Result<Shown, String> {
    if !puzzle.stages.is_empty() {
        return trace_stage(puzzle, file_name, file_text, case, focus);
    }
    let (header, body) = split_source(file_text);
    let body_file = mlx::UserFile { name: file_name.to_string(), text: file_text.to_string(), offset: file_text.len() - body.len() };
    let header_file = mlx::UserFile { name: file_name.to_string(), text: file_text.to_string(), offset: 0 };
    let kernel =
        crate::check::puzzle_kernel(puzzle, &header, &body).map_err(|e| e.to_string())?.with_files(Some(body_file), Some(header_file));
    let tc = puzzle.tests.get(case).ok_or_else(|| format!("puzzle {} has no test {}", puzzle.number, case + 1))?;
    let inputs: Vec<Array> = tc.inputs.iter().map(|s| build_input(s, None)).collect();
    let mut call = crate::check::book_call(puzzle, tc, &inputs);
    call.cancel = cancel.cloned();
    // "Map" under "Map" adds nothing; "Prefix Sum (Simple)" under "Prefix
    // Sum" replaces the title rather than repeating it.
    let title = if tc.name.eq_ignore_ascii_case(puzzle.title) {
        format!("Puzzle {}: {}", puzzle.number, puzzle.title)
    } else if tc.name.starts_with(puzzle.title) {
        format!("Puzzle {}: {}", puzzle.number, tc.name)
    } else {
        format!("Puzzle {}: {} — {}", puzzle.number, puzzle.title, tc.name)
    };
    // Book two's threadgroups are large (32 to 256 threads): one panel per
    // threadgroup would not fit a screen, so it draws the first alone.
    let groups: u64 = (0..3).map(|d| tc.grid[d].div_ceil(tc.threadgroup[d].max(1)) as u64).product();
    let book_two = puzzle.number > 14;
    let focus = focus.or_else(|| (book_two && groups > 1).then_some([0, 0, 0]));
    trace_call(&kernel, title, &inputs, call, focus)
}

/// Run one call of `kernel` with the access tracer and build its diagram:
/// the inputs, the threadgroup arrays and the first output, named as the
/// kernel names them. `focus`: the threadgroup to draw alone; `None` draws
/// every threadgroup unless threadgroup memory over several threadgroups
/// would make it too large to read (then the first one).
pub fn trace_call(
    kernel: &mlx::MetalKernel,
    title: String,
    inputs: &[Array],
    mut call: mlx::Call,
    focus: Option<[u32; 3]>,
) -> Result<Shown, String> {
    call.trace = Some(TRACE_LIMIT);
    let r = kernel.call_with(&call, &mut |_| {}).map_err(|e| match e {
        mlx::MlxError::Compile { sources, diagnostics, .. } => msl::diag::render(&sources, &diagnostics, false),
        other => other.to_string(),
    })?;
    if r.report.cancelled {
        return Err("cancelled".to_string());
    }
    let trace = r.report.trace.clone().unwrap_or_default();
    let input_name = |k: usize| kernel.input_names.get(k).map(String::as_str).unwrap_or("input").to_string();
    let output_name = kernel.output_names.first().cloned().unwrap_or_else(|| "out".into());
    let tables = tables_of(&r, inputs, input_name, output_name)?;
    let groups: u64 = (0..3).map(|d| call.grid[d].div_ceil(call.threadgroup[d].max(1)) as u64).product();
    let focus = focus.or_else(|| (!r.kernel.threadgroup_vars.is_empty() && groups > 2).then_some([0, 0, 0]));
    let spec = DiagramSpec { title, grid: call.grid, threadgroup: call.threadgroup, tables, focus };
    Ok(Shown { spec, trace, findings: r.report.findings })
}

/// A pipeline's diagram: its last stage, run on what the learner's earlier
/// stages produced for test `case`.
fn trace_stage(puzzle: &'static Puzzle, file_name: &str, file_text: &str, case: usize, focus: Option<[u32; 3]>) -> Result<Shown, String> {
    let kernels = crate::pipeline::stage_kernels(puzzle, file_name, file_text).map_err(|e| match e {
        crate::pipeline::LayoutError::Layout(m) => m,
        crate::pipeline::LayoutError::Mlx(mlx::MlxError::Compile { sources, diagnostics, .. }) => {
            msl::diag::render(&sources, &diagnostics, false)
        }
        crate::pipeline::LayoutError::Mlx(other) => other.to_string(),
    })?;
    let tc = puzzle.tests.get(case).ok_or_else(|| format!("puzzle {} has no test {}", puzzle.number, case + 1))?;
    let inputs: Vec<Array> = tc.inputs.iter().map(|s| build_input(s, None)).collect();
    let last = puzzle.stages.len() - 1;
    let stage = &puzzle.stages[last];
    let given = crate::pipeline::inputs_of_stage(puzzle, &kernels, &inputs, last)?;
    let n = crate::pipeline::size_of(&inputs);
    let mut call = crate::pipeline::stage_call(stage, &given, n);
    call.trace = Some(TRACE_LIMIT);
    let r = kernels[last].call_with(&call, &mut |_| {}).map_err(|e| e.to_string())?;
    let trace = r.report.trace.clone().unwrap_or_default();
    let input_name = |k: usize| stage.inputs.get(k).copied().unwrap_or("input").to_string();
    let tables = tables_of(&r, &given, input_name, stage.output.to_string())?;
    let d = (stage.dispatch)(n);
    let title = format!("Puzzle {}: {}, kernel {} of {} ({})", puzzle.number, tc.name, last + 1, puzzle.stages.len(), stage.name);
    let groups: u32 = (0..3).map(|k| d.grid[k].div_ceil(d.threadgroup[k].max(1))).product();
    let focus = focus.or_else(|| (groups > 1).then_some([0, 0, 0]));
    let spec = DiagramSpec { title, grid: d.grid, threadgroup: d.threadgroup, tables, focus };
    Ok(Shown { spec, trace, findings: r.report.findings })
}

/// The tables of a traced run: each input (named by `input_name`, from its
/// position), each threadgroup array, and the first output.
fn tables_of(
    r: &mlx::CallResult,
    inputs: &[Array],
    input_name: impl Fn(usize) -> String,
    output_name: String,
) -> Result<Vec<TableDesc>, String> {
    let mut tables = Vec::new();
    for (k, (a, slots)) in inputs.iter().zip(&r.generated.inputs).enumerate() {
        let mut t = TableDesc::for_buffer(&r.kernel, slots.buffer, Role::Input, draw_shape(&a.shape), Some(labels(a)))
            .ok_or("input buffer missing")?;
        t.name = input_name(k);
        tables.push(t);
    }
    for v in 0..r.kernel.threadgroup_vars.len() {
        if let Some(t) = TableDesc::for_threadgroup_var(&r.kernel, v as u32, None) {
            tables.push(t);
        }
    }
    if let (Some(out), Some(&index)) = (r.outputs.first(), r.generated.outputs.first()) {
        // A cell no thread wrote holds garbage: `?`, never a plausible number.
        let mut values = labels(out);
        if let Some(Some(unwritten)) = r.unwritten.first() {
            for (v, _) in values.iter_mut().zip(unwritten).filter(|(_, &u)| u) {
                *v = "?".into();
            }
        }
        let mut t =
            TableDesc::for_buffer(&r.kernel, index, Role::Output, draw_shape(&out.shape), Some(values)).ok_or("output buffer missing")?;
        t.name = output_name;
        tables.push(t);
    }
    Ok(tables)
}

#[cfg(test)]
mod tests {
    #[test]
    fn labels_are_short() {
        assert_eq!(super::label(3.0), "3");
        assert_eq!(super::label(-0.5), "-0.5");
        assert_eq!(super::label(1029041.0), "1.03e6");
        assert_eq!(super::label(0.001234), "1.23e-3");
        assert_eq!(super::label(1.23456), "1.235");
        assert!(super::label(f64::NAN).len() <= 4);
    }
}
