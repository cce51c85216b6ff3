//! One run session for Metal compute kernels on the simulated GPU.
//!
//! Everything that runs a kernel goes through here: the command line
//! (`run`, `mlx`, `debug`, `test`), the Python package (`compile_shader`,
//! `metal_kernel`, the pytest plugin) and Rust tests. A session is
//!
//! ```text
//! source (a full Metal file, or an MLX kernel body) + compile options
//!   → compile ([`Library`], or [`run_mlx`])
//!   → bind arguments (by parameter name, or PyTorch-style by position)
//!   → run (dispatch + run options)
//!   → Outcome (outputs, findings, diagnostics)
//!   → text (rustc-style) and the command-line contract's JSON (`json`)
//! ```
//!
//! From Rust, the [`Kernel::call`] builder binds slices and reads them back:
//!
//! ```
//! use session::{CompileOptions, Library};
//!
//! let src = r#"
//! #include <metal_stdlib>
//! using namespace metal;
//! kernel void scale(device const float* x [[buffer(0)]],
//!                   device float* y [[buffer(1)]],
//!                   constant float& k [[buffer(2)]],
//!                   uint i [[thread_position_in_grid]]) {
//!     y[i] = x[i] * k;
//! }"#;
//! let lib = Library::compile("scale.metal", src, &CompileOptions::default()).unwrap();
//! let out = lib
//!     .kernel("scale")
//!     .unwrap()
//!     .call()
//!     .input("x", &[1.0f32, 2.0, 3.0, 4.0])
//!     .output::<f32>("y", 4)
//!     .scalar("k", 2.0f32)
//!     .threads([4, 1, 1], [4, 1, 1])
//!     .run()
//!     .unwrap();
//! assert!(out.findings().is_empty());
//! assert_eq!(out.read::<f32>("y").unwrap(), vec![2.0, 4.0, 6.0, 8.0]);
//! ```
//!
//! A bug is a finding, not a crash: here thread 4 writes past the end.
//!
//! ```
//! use session::{CompileOptions, Library};
//! let src = "kernel void k(device float* y [[buffer(0)]], uint i [[thread_position_in_grid]]) { y[i] = 1; }";
//! let lib = Library::compile("k.metal", src, &CompileOptions::default()).unwrap();
//! let out = lib.kernel("k").unwrap().call().output::<f32>("y", 4).threads([5, 1, 1], [5, 1, 1]).run().unwrap();
//! assert!(out.has_errors());
//! assert_eq!(out.findings()[0].kind.name(), "out-of-bounds");
//! assert_eq!(out.exit_code(), session::EXIT_BAD_RESULT);
//! ```

pub mod bind;
mod builder;
pub mod formats;
pub mod json;
pub mod nan;
pub mod spec;

pub use arrays::{Array, DType};
pub use bind::{Arg, Bindings, Bound, Value};
pub use builder::{Call, Element};
pub use gpu::{engine, CheckLevel, Dispatch, DispatchMode, Finding, FindingKind, RunOptions};
pub use msl::diag::Diagnostic;
pub use msl::source::SourceMap;
pub use msl::CompileOptions;

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::{Arc, Mutex};

/// Exit statuses of every command (the command-line contract): the run
/// went fine.
pub const EXIT_OK: u8 = 0;
/// It ran, but the result is bad: a test failed, the sanitizer reported an
/// error finding, or the source has compile errors.
pub const EXIT_BAD_RESULT: u8 = 1;
/// It could not start: bad arguments, an unreadable file, a dispatch Metal
/// would refuse.
pub const EXIT_CANNOT_START: u8 = 2;

/// Instructions one threadgroup may run before the kernel counts as
/// runaway, for every kernel run outside the puzzle book (`run`, `mlx`,
/// `test`, Python's `metal_kernel` and `compile_shader`, the pytest
/// plugin). Threads run in lock-step, so this is about the instructions
/// per thread: a 32-thread `while (true)` is stopped after about 3 s of a
/// release build. The book's budget is `puzzles::check::BOOK_BUDGET`.
pub const DEFAULT_BUDGET: u64 = gpu::DEFAULT_BUDGET;

/// Why a session could not give an outcome.
#[derive(Debug)]
pub enum Error {
    /// The source does not compile, or the simulator cannot run this valid
    /// kernel (exit 1); the diagnostics point into the user's files.
    Compile { sources: Arc<SourceMap>, diagnostics: Vec<Diagnostic> },
    /// Metal itself would refuse to build the pipeline (a function constant
    /// without a value...): a usage error (exit 2), with a diagnostic.
    Pipeline { sources: Arc<SourceMap>, diagnostics: Vec<Diagnostic> },
    /// Bad arguments or a dispatch Metal would refuse (exit 2).
    Usage(String),
}

impl Error {
    /// The command-line exit status for this error.
    pub fn exit_code(&self) -> u8 {
        match self {
            Error::Compile { .. } => EXIT_BAD_RESULT,
            Error::Pipeline { .. } | Error::Usage(_) => EXIT_CANNOT_START,
        }
    }

    /// The error as people read it (rustc-style diagnostics, or `error: …`).
    pub fn render(&self, color: bool) -> String {
        match self {
            Error::Compile { sources, diagnostics } | Error::Pipeline { sources, diagnostics } => {
                msl::diag::render(sources, diagnostics, color)
            }
            Error::Usage(m) => format!("error: {m}\n"),
        }
    }

    /// The source map and diagnostics of a compile or pipeline error.
    pub fn diagnostics(&self) -> Option<(&SourceMap, &[Diagnostic])> {
        match self {
            Error::Compile { sources, diagnostics } | Error::Pipeline { sources, diagnostics } => Some((sources, diagnostics)),
            Error::Usage(_) => None,
        }
    }

    /// The contract's JSON document for a run that ended here.
    pub fn to_json(&self) -> serde_json::Value {
        match self {
            Error::Compile { sources, diagnostics } | Error::Pipeline { sources, diagnostics } => {
                json::run_document(sources, diagnostics, &[], serde_json::Map::new())
            }
            Error::Usage(m) => json::error_document(m),
        }
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Usage(m) => f.write_str(m),
            other => f.write_str(other.render(false).trim_end()),
        }
    }
}

impl std::error::Error for Error {}

impl From<mlx::MlxError> for Error {
    fn from(e: mlx::MlxError) -> Error {
        match e {
            mlx::MlxError::Compile { sources, diagnostics, .. } => Error::Compile { sources: Arc::new(sources), diagnostics },
            mlx::MlxError::Argument(m) => Error::Usage(m),
        }
    }
}

/// A compiled full Metal source (what `run` takes and
/// `torch.mps.compile_shader` returns): its kernels, lowered on first use.
#[derive(Debug)]
pub struct Library {
    sources: Arc<SourceMap>,
    file: msl::source::FileId,
    program: msl::hir::Program,
    diagnostics: Vec<Diagnostic>,
    options: CompileOptions,
    lowered: Mutex<HashMap<(String, LowerKey), Arc<gpu::Kernel>>>,
}

/// How a kernel is lowered: plain, with statement marks (profiling) or
/// with debugger stops.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct LowerKey {
    pub statement_marks: bool,
    pub debug_stops: bool,
}

impl Library {
    /// Compile `text` (named `name` in messages) with include roots,
    /// defines and function constants from `options`.
    pub fn compile(name: &str, text: &str, options: &CompileOptions) -> Result<Library, Error> {
        let c = msl::compile(name, text, options);
        let has_errors = c.has_errors();
        let sources = Arc::new(c.sources);
        match c.program {
            Some(program) if !has_errors => Ok(Library {
                sources,
                file: c.file,
                program,
                diagnostics: c.diagnostics.items,
                options: options.clone(),
                lowered: Mutex::new(HashMap::new()),
            }),
            _ => Err(Error::Compile { sources, diagnostics: c.diagnostics.items }),
        }
    }

    /// Read and compile a file; `#include "…"` looks in its folder first.
    pub fn compile_file(path: &Path, options: &CompileOptions) -> Result<Library, Error> {
        let text = read_source(path).map_err(Error::Usage)?;
        let mut options = options.clone();
        if options.main_dir.is_none() {
            options.main_dir = Some(match path.parent() {
                Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
                _ => std::path::PathBuf::from("."),
            });
        }
        Library::compile(&path.display().to_string(), &text, &options)
    }

    pub fn sources(&self) -> &Arc<SourceMap> {
        &self.sources
    }

    /// The compiled file in [`Library::sources`].
    pub fn file(&self) -> msl::source::FileId {
        self.file
    }

    /// Compile warnings (errors make [`Library::compile`] fail).
    pub fn diagnostics(&self) -> &[Diagnostic] {
        &self.diagnostics
    }

    pub fn options(&self) -> &CompileOptions {
        &self.options
    }

    pub fn program(&self) -> &msl::hir::Program {
        &self.program
    }

    /// The names kernels are called by (their `[[host_name]]` or function name).
    pub fn kernel_names(&self) -> Vec<String> {
        self.program.kernel_names()
    }

    /// Kernel `name`, lowered for the simulator.
    pub fn kernel(&self, name: &str) -> Result<Kernel<'_>, Error> {
        self.kernel_with(name, LowerKey::default())
    }

    /// Kernel `name` lowered with statement marks or debugger stops.
    pub fn kernel_with(&self, name: &str, how: LowerKey) -> Result<Kernel<'_>, Error> {
        let key = (name.to_string(), how);
        if let Some(k) = self.lowered.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
            return Ok(Kernel { lib: self, ir: k.clone() });
        }
        let Some((kid, _)) = self.program.kernel(name) else {
            let names = self.kernel_names();
            return Err(Error::Usage(format!(
                "`{}` has no kernel named `{name}`; its kernels are: {}",
                self.sources.file(self.file).name,
                if names.is_empty() { "(none)".into() } else { names.join(", ") }
            )));
        };
        let options = gpu::lower::LowerOptions { statement_marks: how.statement_marks, debug_stops: how.debug_stops };
        let ir = match gpu::lower::lower_kernel_with(&self.program, kid, options) {
            Ok(k) => Arc::new(k),
            Err(e) => {
                let diagnostics = vec![e.to_diagnostic()];
                let sources = self.sources.clone();
                return Err(if e.is_limitation {
                    Error::Compile { sources, diagnostics }
                } else {
                    Error::Pipeline { sources, diagnostics }
                });
            }
        };
        self.lowered.lock().unwrap_or_else(|e| e.into_inner()).insert(key, ir.clone());
        Ok(Kernel { lib: self, ir })
    }
}

/// Read a source file as text, or say why not (a regular file only, at
/// most `files::MAX_SOURCE_BYTES`, UTF-8 errors by line and column).
pub fn read_source(path: &Path) -> Result<String, String> {
    files::read_text(path, files::MAX_SOURCE_BYTES, "the source")
}

/// One kernel of a [`Library`], ready to bind and run.
#[derive(Clone, Debug)]
pub struct Kernel<'l> {
    lib: &'l Library,
    ir: Arc<gpu::Kernel>,
}

impl<'l> Kernel<'l> {
    pub fn name(&self) -> &str {
        &self.ir.name
    }

    pub fn library(&self) -> &'l Library {
        self.lib
    }

    /// The lowered kernel (its parameters, threadgroup memory...).
    pub fn ir(&self) -> &gpu::Kernel {
        &self.ir
    }

    /// A builder that binds Rust slices and scalars by parameter name.
    pub fn call(&self) -> Call<'_> {
        Call::new(self)
    }

    /// Bind values by parameter name (`run --arg NAME=…`, test specs).
    pub fn bind(&self, values: Vec<(String, Value)>) -> Result<Bindings, Error> {
        bind::by_name(&self.ir, &self.lib.program.types, values).map_err(Error::Usage)
    }

    /// Bind arguments by position, as `torch.mps.compile_shader` does:
    /// argument k to `[[buffer(k)]]`.
    pub fn bind_positional(&self, args: &[Arg]) -> Result<Bindings, Error> {
        bind::positional(&self.ir, &self.lib.program.types, args).map_err(Error::Usage)
    }

    /// Run with `bindings`; a dispatch Metal would refuse is a usage error
    /// and nothing runs.
    pub fn run(&self, bindings: &Bindings, dispatch: Dispatch, options: &RunOptions) -> Result<Outcome, Error> {
        self.run_with_progress(bindings, dispatch, options, &mut |_, _| {})
    }

    /// How long the dispatch itself takes: the buffers are copied in before
    /// the clock starts and dropped after it stops, as a GPU benchmark times
    /// the kernel without host<->device copies.
    pub fn time_dispatch(&self, bindings: &Bindings, dispatch: Dispatch, options: &RunOptions) -> Result<std::time::Duration, Error> {
        gpu::validate(&self.ir, &dispatch, options).map_err(|e| Error::Usage(format!("cannot dispatch `{}`: {e}", self.ir.name)))?;
        let options = self.engine_options(options);
        let mut buffers: BTreeMap<u32, Vec<u8>> = bindings.items.iter().map(|b| (b.index, b.bytes.clone())).collect();
        let pristine = bindings.pristine();
        let started = std::time::Instant::now();
        gpu::run_from_pristine(&self.ir, &dispatch, &mut buffers, &options, &mut |_, _| {}, &pristine);
        Ok(started.elapsed())
    }

    /// `options` with this build's compiler for `options.engine`.
    fn engine_options(&self, options: &RunOptions) -> RunOptions {
        with_compiler(options.clone())
    }

    /// [`Kernel::run`], calling `progress(done, total)` threadgroups now and then.
    pub fn run_with_progress(
        &self,
        bindings: &Bindings,
        dispatch: Dispatch,
        options: &RunOptions,
        progress: &mut dyn FnMut(u64, u64),
    ) -> Result<Outcome, Error> {
        gpu::validate(&self.ir, &dispatch, options).map_err(|e| Error::Usage(format!("cannot dispatch `{}`: {e}", self.ir.name)))?;
        let options = self.engine_options(options);
        let mut buffers: BTreeMap<u32, Vec<u8>> = bindings.items.iter().map(|b| (b.index, b.bytes.clone())).collect();
        let report = gpu::run_from_pristine(&self.ir, &dispatch, &mut buffers, &options, progress, &bindings.pristine());
        let mut outputs = Vec::new();
        for b in bindings.items.iter().filter(|b| b.writable) {
            let bytes = buffers.remove(&b.index).unwrap_or_default();
            let array = b.read_back(bytes).map_err(|e| Error::Usage(format!("output `{}`: {e}", b.name)))?;
            outputs.push(Output { name: b.name.clone(), position: b.position, array });
        }
        Ok(Outcome {
            kernel: self.ir.name.clone(),
            sources: self.lib.sources.clone(),
            diagnostics: self.lib.diagnostics.clone(),
            report,
            outputs,
            warnings: bindings.warnings.clone(),
            dispatch,
        })
    }
}

/// A buffer the kernel may write, after the run.
#[derive(Clone, Debug)]
pub struct Output {
    /// The parameter's name (or the MLX output's name).
    pub name: String,
    /// The argument position it was passed at (positional binding).
    pub position: Option<usize>,
    /// Its contents, with the dtype and shape it was given.
    pub array: Array,
}

/// What a run produced.
#[derive(Debug)]
pub struct Outcome {
    /// The kernel's name (MLX: the generated `custom_kernel_…` name).
    pub kernel: String,
    pub sources: Arc<SourceMap>,
    /// Compile warnings (spans in the user's files).
    pub diagnostics: Vec<Diagnostic>,
    /// Findings, counts, profile, logs, probes...
    pub report: gpu::RunReport,
    /// Every writable buffer, in parameter order.
    pub outputs: Vec<Output>,
    /// Binding warnings (a Python int that does not fit its parameter...).
    pub warnings: Vec<String>,
    pub dispatch: Dispatch,
}

impl Outcome {
    pub fn findings(&self) -> &[Finding] {
        &self.report.findings
    }

    /// Whether any finding is an error.
    pub fn has_errors(&self) -> bool {
        self.report.has_errors()
    }

    /// `EXIT_BAD_RESULT` when a finding is an error, else `EXIT_OK`.
    pub fn exit_code(&self) -> u8 {
        if self.has_errors() {
            EXIT_BAD_RESULT
        } else {
            EXIT_OK
        }
    }

    /// The output named `name`.
    pub fn output(&self, name: &str) -> Option<&Array> {
        self.outputs.iter().find(|o| o.name == name).map(|o| &o.array)
    }

    /// The output named `name` as a vector of `T` (its dtype must be `T`'s).
    pub fn read<T: Element>(&self, name: &str) -> Result<Vec<T>, String> {
        let a = self.output(name).ok_or_else(|| {
            let names: Vec<&str> = self.outputs.iter().map(|o| o.name.as_str()).collect();
            format!("kernel `{}` has no output `{name}`; its outputs are: {}", self.kernel, names.join(", "))
        })?;
        builder::read_elements(name, a)
    }

    /// Compile warnings and findings, rendered rustc-style.
    pub fn render(&self, color: bool) -> String {
        let mut diags = self.diagnostics.clone();
        diags.extend(self.report.findings.iter().map(Finding::to_diagnostic));
        let mut text = msl::diag::render(&self.sources, &diags, color);
        for w in &self.warnings {
            text.push_str(&format!("warning: {w}\n"));
        }
        text
    }

    /// The contract's JSON document; `outputs` maps each output's name to
    /// where it was written (or null).
    pub fn to_json(&self, outputs: serde_json::Map<String, serde_json::Value>) -> serde_json::Value {
        let mut doc = json::run_document(&self.sources, &self.diagnostics, &self.report.findings, outputs);
        if !self.warnings.is_empty() {
            doc["warnings"] = serde_json::json!(self.warnings);
        }
        doc
    }

    /// Findings in the contract's JSON shape (with file, column and notes).
    pub fn findings_json(&self) -> Vec<serde_json::Value> {
        self.report.findings.iter().map(|f| json::finding(&self.sources, f)).collect()
    }
}

/// Run an MLX custom kernel (`mx.fast.metal_kernel`): the source is
/// generated exactly as MLX generates it, compiled and run; `on_generated`
/// sees the generated source first (MLX's `verbose=True`).
pub fn run_mlx(kernel: &mlx::MetalKernel, call: &mlx::Call, on_generated: &mut dyn FnMut(&mlx::Generated)) -> Result<MlxOutcome, Error> {
    let call = &mlx::Call { compiler: call.compiler.or(with_compiler(RunOptions::default()).compiler), ..call.clone() };
    let r = kernel.call_with(call, on_generated)?;
    // Elements no thread wrote hold garbage: say so rather than let them pass as values.
    let warnings = r.unwritten_warnings(&kernel.output_names);
    let outputs = kernel
        .output_names
        .iter()
        .zip(&r.outputs)
        .map(|(name, a)| Output { name: name.clone(), position: None, array: a.clone() })
        .collect();
    let dispatch =
        Dispatch { grid: call.grid, threadgroup: [0, 1, 2].map(|i| call.threadgroup[i].min(call.grid[i])), mode: DispatchMode::Threads };
    let outcome = Outcome {
        kernel: r.generated.kernel_name.clone(),
        sources: Arc::new(r.sources),
        diagnostics: r.diagnostics,
        report: r.report,
        outputs,
        warnings,
        dispatch,
    };
    Ok(MlxOutcome { outcome, generated: r.generated, kernel: r.kernel })
}

/// An MLX run's outcome, with the source MLX generated and the kernel as run.
#[derive(Debug)]
pub struct MlxOutcome {
    pub outcome: Outcome,
    pub generated: mlx::Generated,
    pub kernel: gpu::Kernel,
}

/// The check level named `none`, `memory` or `all`.
pub fn check_level(name: &str) -> Result<CheckLevel, String> {
    match name {
        "none" => Ok(CheckLevel::None),
        "memory" => Ok(CheckLevel::Memory),
        "all" => Ok(CheckLevel::All),
        other => Err(format!("check must be \"none\", \"memory\" or \"all\", not {other:?}")),
    }
}

/// A call's `check=` name, which may also be `"nan"`: `all`, and trace
/// where each NaN or infinity of the outputs was born (the bool).
pub fn check_option(name: &str) -> Result<(CheckLevel, bool), String> {
    if name == "nan" {
        return Ok((CheckLevel::All, true));
    }
    check_level(name)
        .map(|level| (level, false))
        .map_err(|_| format!("check must be \"none\", \"memory\", \"all\" or \"nan\", not {name:?}"))
}

/// `options` with the compiled tier's compiler (`gpu::engine::Compiler`)
/// where this build has one (not in WebAssembly) and none is set.
pub fn with_compiler(options: RunOptions) -> RunOptions {
    #[cfg(not(target_family = "wasm"))]
    if options.compiler.is_none() {
        return RunOptions { compiler: Some(jit::COMPILER), ..options };
    }
    options
}
