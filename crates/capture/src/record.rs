//! Making captures: from an MLX call, or from a full source run.

use crate::{check_name, ArrayRecord, Capture, CompileRecord, FileRecord, FindingRecord, HeaderRecord, Options, Program, TemplateValue};
use arrays::Array;
use msl::source::{FileId, SourceMap};
use std::path::{Path, PathBuf};

/// The environment variable that turns captures on (Xcode's name for it).
pub const ENV_VAR: &str = "MTL_CAPTURE_ENABLED";
/// Where captures go when no path is given.
pub const DEFAULT_DIR: &str = "metal-puzzles-captures";

/// Whether `MTL_CAPTURE_ENABLED` asks for captures (set, not empty, not `0`).
pub fn enabled_by_env() -> bool {
    std::env::var(ENV_VAR).map(|v| !v.is_empty() && v != "0").unwrap_or(false)
}

/// `metal-puzzles-captures/KERNEL-N.mpcapture` in `dir`, N the first
/// number not taken yet.
pub fn default_path(dir: &Path, kernel: &str) -> PathBuf {
    let stem: String = kernel.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' }).collect();
    let folder = dir.join(DEFAULT_DIR);
    let mut n = 1u64;
    loop {
        let p = folder.join(format!("{stem}-{n}.{}", crate::EXTENSION));
        if !p.exists() || n >= 1_000_000 {
            return p;
        }
        n += 1;
    }
}

fn new_capture(origin: &str, title: String, compile: CompileRecord, program: Program, options: Options) -> Capture {
    Capture {
        format: crate::FORMAT.to_string(),
        version: crate::VERSION,
        made_by: format!("metal-puzzles {}", env!("CARGO_PKG_VERSION")),
        origin: origin.to_string(),
        title,
        compile,
        program,
        options,
        outputs: Vec::new(),
        findings: Vec::new(),
        left_out: Vec::new(),
    }
}

/// The preprocessor settings and every header the compilation read.
fn compile_record(opts: &msl::CompileOptions, sources: &SourceMap) -> CompileRecord {
    let name = |id: FileId| sources.files().get(id.0 as usize).map(|f| f.name.clone()).unwrap_or_default();
    let headers = sources
        .includes()
        .iter()
        .filter_map(|e| {
            let to = sources.files().get(e.to.0 as usize)?;
            Some(HeaderRecord {
                from: name(e.from),
                spelled: e.spelled.clone(),
                quoted: e.quoted,
                name: to.name.clone(),
                text: to.text.clone(),
            })
        })
        .collect();
    CompileRecord {
        defines: opts.defines.clone(),
        function_constants: opts.function_constants.clone(),
        metal_version: opts.metal_version,
        headers,
    }
}

/// The findings of a run, with file, line and column from `sources`.
pub(crate) fn finding_records(findings: &[gpu::Finding], sources: &SourceMap) -> Vec<FindingRecord> {
    findings
        .iter()
        .map(|f| {
            let (file, line, column) = match sources.files().get(f.span.file.0 as usize) {
                Some(file) if f.kind != gpu::FindingKind::InvalidDispatch => {
                    let (l, c) = file.line_col(f.span.lo);
                    (file.name.clone(), l, c)
                }
                _ => (String::new(), 0, 0),
            };
            FindingRecord {
                kind: f.kind.name().to_string(),
                severity: if f.is_error { "error" } else { "warning" }.to_string(),
                message: f.message.clone(),
                file,
                line,
                column,
                thread: f.thread,
                local: f.local,
                threadgroup: f.threadgroup,
                count: f.count,
            }
        })
        .collect()
}

/// Keeps the stored bytes under the limit: inputs must all fit, outputs
/// that do not fit keep only their checksum.
struct Budget {
    limit: usize,
    used: usize,
}

impl Budget {
    fn inputs(&mut self, what: &str, named: &[(&str, &Array)]) -> Result<(), String> {
        let total: usize = named.iter().map(|(_, a)| view_size(a)).sum();
        if total > self.limit {
            let mut sizes: Vec<(usize, &str)> = named.iter().map(|(n, a)| (view_size(a), *n)).collect();
            sizes.sort_by(|a, b| b.cmp(a));
            let biggest: Vec<String> = sizes.iter().take(3).map(|(s, n)| format!("`{n}` {}", mib(*s))).collect();
            return Err(format!(
                "capture not written: the {what} take {} ({}), over the capture limit of {}; a capture must hold every input to replay the run, so capture a smaller dispatch (fewer or smaller arrays) that shows the same problem",
                mib(total),
                biggest.join(", "),
                mib(self.limit)
            ));
        }
        self.used = total;
        Ok(())
    }

    /// Whether an output of `n` bytes is stored (and counts it).
    fn output(&mut self, n: usize) -> bool {
        if self.used + n <= self.limit {
            self.used += n;
            true
        } else {
            false
        }
    }
}

fn view_size(a: &Array) -> usize {
    let start = (a.offset * a.dtype.size()).min(a.data.len());
    (a.data.len() - start).max(a.nbytes())
}

fn mib(n: usize) -> String {
    if n >= 1 << 20 {
        format!("{:.1} MiB", n as f64 / (1 << 20) as f64)
    } else {
        format!("{n} bytes")
    }
}

fn record_outputs(capture: &mut Capture, budget: &mut Budget, outputs: &[(&str, &Array)]) {
    for (name, a) in outputs {
        let keep = budget.output(view_size(a));
        if !keep {
            capture.left_out.push(format!(
                "output `{name}` ({}) is over the capture limit of {}: only its checksum is kept, so a replay tells whether it is the same but not where it differs",
                mib(view_size(a)),
                mib(budget.limit)
            ));
        }
        capture.outputs.push(ArrayRecord::new(name, a, true, keep));
    }
}

fn template_value(v: &mlx::TemplateArg) -> TemplateValue {
    match v {
        mlx::TemplateArg::DType(d) => TemplateValue::Dtype(d.mlx_name().to_string()),
        mlx::TemplateArg::Int(i) => TemplateValue::Int(*i),
        mlx::TemplateArg::Bool(b) => TemplateValue::Bool(*b),
    }
}

fn file_record(f: &mlx::UserFile) -> FileRecord {
    FileRecord { name: f.name.clone(), text: f.text.clone(), offset: f.offset }
}

/// A capture of one MLX call that ran: the kernel, the call's inputs (as
/// they were before the run), its outputs and findings.
pub fn from_mlx(
    kernel: &mlx::MetalKernel,
    call: &mlx::Call,
    result: &mlx::CallResult,
    origin: &str,
    title: String,
    limit: usize,
) -> Result<Capture, String> {
    let run = MlxRun { sources: &result.sources, outputs: &result.outputs, findings: &result.report.findings };
    from_mlx_run(kernel, call, &run, origin, title, limit)
}

/// What an MLX run produced, as a capture records it.
pub struct MlxRun<'a> {
    pub sources: &'a SourceMap,
    pub outputs: &'a [Array],
    pub findings: &'a [gpu::Finding],
}

/// [`from_mlx`] from the parts of a run (a `session::Outcome`'s).
pub fn from_mlx_run(
    kernel: &mlx::MetalKernel,
    call: &mlx::Call,
    result: &MlxRun,
    origin: &str,
    title: String,
    limit: usize,
) -> Result<Capture, String> {
    let inputs: Vec<Array> = call.inputs.iter().map(mlx::Input::to_array).collect();
    let named: Vec<(&str, &Array)> = kernel.input_names.iter().map(String::as_str).zip(&inputs).collect();
    let mut budget = Budget { limit, used: 0 };
    budget.inputs("inputs", &named)?;
    let source_file = kernel.source_file.as_ref().map(file_record).unwrap_or_else(|| FileRecord {
        name: format!("{}.metal", kernel.name),
        text: kernel.source.clone(),
        offset: 0,
    });
    let program = Program::Mlx {
        name: kernel.name.clone(),
        input_names: kernel.input_names.clone(),
        output_names: kernel.output_names.clone(),
        source: kernel.source.clone(),
        header: kernel.header.clone(),
        source_file,
        header_file: kernel.header_file.as_ref().map(file_record),
        ensure_row_contiguous: kernel.ensure_row_contiguous,
        atomic_outputs: kernel.atomic_outputs,
        inputs: named.iter().map(|(n, a)| ArrayRecord::new(n, a, false, true)).collect(),
        output_shapes: call.output_shapes.clone(),
        output_dtypes: call.output_dtypes.iter().map(|d| d.mlx_name().to_string()).collect(),
        grid: call.grid,
        threadgroup: call.threadgroup,
        template: call.template.iter().map(|(n, v)| (n.clone(), template_value(v))).collect(),
        init_value: call.init_value.map(|v| format!("{v:?}")),
    };
    let options = Options {
        check: check_name(call.check).to_string(),
        budget: call.budget.unwrap_or(gpu::RunOptions::default().budget),
        threads: 0,
        atomics_last_lane_first: call.atomics_last_lane_first,
    };
    let mut c = new_capture(origin, title, compile_record(&kernel.compile_options, result.sources), program, options);
    let outs: Vec<(&str, &Array)> = kernel.output_names.iter().map(String::as_str).zip(result.outputs).collect();
    record_outputs(&mut c, &mut budget, &outs);
    c.findings = finding_records(result.findings, result.sources);
    Ok(c)
}

/// A full-source run, as `metal-puzzles run` and `compile_shader` make it.
pub struct SourceRun<'a> {
    /// The compilation's sources and its main file.
    pub sources: &'a SourceMap,
    pub main: FileId,
    pub compile_options: &'a msl::CompileOptions,
    pub kernel: &'a str,
    pub dispatch: gpu::Dispatch,
    pub options: &'a gpu::RunOptions,
    /// Every bound buffer before the run: (parameter name, array, writable).
    pub arguments: Vec<(String, Array, bool)>,
    /// The writable buffers after the run.
    pub outputs: Vec<(String, Array)>,
    pub findings: &'a [gpu::Finding],
}

/// A capture of one full-source run.
pub fn from_source(run: &SourceRun, origin: &str, title: String, limit: usize) -> Result<Capture, String> {
    let named: Vec<(&str, &Array)> = run.arguments.iter().map(|(n, a, _)| (n.as_str(), a)).collect();
    let mut budget = Budget { limit, used: 0 };
    budget.inputs("arguments", &named)?;
    let main = run.sources.files().get(run.main.0 as usize).ok_or("the source map has no main file")?;
    let program = Program::Source {
        main: FileRecord { name: main.name.clone(), text: main.text.clone(), offset: 0 },
        kernel: run.kernel.to_string(),
        grid: run.dispatch.grid,
        threadgroup: run.dispatch.threadgroup,
        dispatch: match run.dispatch.mode {
            gpu::DispatchMode::Threads => "threads",
            gpu::DispatchMode::Threadgroups => "threadgroups",
        }
        .to_string(),
        arguments: run.arguments.iter().map(|(n, a, w)| ArrayRecord::new(n, a, *w, true)).collect(),
    };
    let options = Options {
        check: check_name(run.options.check).to_string(),
        budget: run.options.budget,
        threads: run.options.threads,
        atomics_last_lane_first: run.options.atomics_last_lane_first,
    };
    let mut c = new_capture(origin, title, compile_record(run.compile_options, run.sources), program, options);
    let outs: Vec<(&str, &Array)> = run.outputs.iter().map(|(n, a)| (n.as_str(), a)).collect();
    record_outputs(&mut c, &mut budget, &outs);
    c.findings = finding_records(run.findings, run.sources);
    Ok(c)
}
