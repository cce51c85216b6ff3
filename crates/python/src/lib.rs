//! `metal_puzzles._native`: the Python package's bridge to the Rust crates.
//!
//! Conversion only: arrays arrive as plain tuples `(dtype, shape, strides,
//! offset, bytes)` built by the Python side (which speaks NumPy, MLX and
//! DLPack) and leave as `(dtype, shape, bytearray)`; findings and
//! diagnostics leave as JSON text. The MLX layer, the PyTorch-style binding,
//! the book and the simulator live in their own crates.

use arrays::{Array, DType};
use pyo3::exceptions::{PyKeyError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyByteArray, PyBytes, PyFloat, PyInt, PyString};
use std::sync::Arc;
use std::time::Duration;

/// An array as the Python side hands it over.
type ArrayTuple<'py> = (String, Vec<usize>, Vec<isize>, usize, Bound<'py, PyBytes>);
/// An array as it goes back: dtype name, shape, bytes.
type ArrayOut = (String, Vec<usize>, Py<PyByteArray>);

fn dtype(name: &str) -> PyResult<DType> {
    DType::parse(name).map_err(PyValueError::new_err)
}

/// Build an array, refusing views that reach outside their bytes.
fn array_in(t: &ArrayTuple) -> PyResult<Array> {
    let (name, shape, strides, offset, data) = t;
    let dtype = dtype(name)?;
    let data = data.as_bytes();
    if shape.len() != strides.len() {
        return Err(PyValueError::new_err(format!("array with shape {shape:?} has {} strides", strides.len())));
    }
    let size = dtype.size() as i128;
    let numel = arrays::checked_nbytes(dtype, shape).map_err(PyValueError::new_err)?;
    if numel > 0 {
        let (mut lo, mut hi) = (*offset as i128, *offset as i128);
        for (&d, &s) in shape.iter().zip(strides) {
            let reach = (d as i128 - 1) * s as i128;
            if reach < 0 {
                lo += reach;
            } else {
                hi += reach;
            }
        }
        if lo < 0 || (hi + 1) * size > data.len() as i128 {
            return Err(PyValueError::new_err(format!(
                "array view (shape {shape:?}, strides {strides:?}, offset {offset}) reaches outside its {} bytes",
                data.len()
            )));
        }
    }
    Ok(Array { dtype, shape: shape.clone(), strides: strides.clone(), offset: *offset, data: Arc::new(data.to_vec()) })
}

fn array_out(py: Python<'_>, a: &Array) -> ArrayOut {
    let bytes = a.contiguous_bytes();
    (a.dtype.mlx_name().to_string(), a.shape.clone(), PyByteArray::new(py, &bytes).unbind())
}

/// `metal_puzzles._errors.CompileError(message, diagnostics_json)`.
fn compile_error(py: Python<'_>, sources: &msl::source::SourceMap, diagnostics: &[msl::diag::Diagnostic]) -> PyErr {
    let message = msl::diag::render(sources, diagnostics, false);
    let json: Vec<serde_json::Value> = diagnostics.iter().map(|d| diagnostic_json(sources, d)).collect();
    let json = serde_json::Value::Array(json).to_string();
    match py.import("metal_puzzles._errors").and_then(|m| m.getattr("CompileError")).and_then(|c| c.call1((message.clone(), json))) {
        Ok(e) => PyErr::from_value(e),
        Err(e) => e,
    }
}

/// A diagnostic as JSON, with the text of the line it points at.
fn diagnostic_json(sources: &msl::source::SourceMap, d: &msl::diag::Diagnostic) -> serde_json::Value {
    let mut v = msl::diag::to_json(sources, d);
    v["source_line"] = serde_json::Value::String(source_line(sources, d.span));
    v
}

fn source_line(sources: &msl::source::SourceMap, span: msl::source::Span) -> String {
    if sources.files().is_empty() || span == msl::source::Span::default() && sources.files().len() <= span.file.0 as usize {
        return String::new();
    }
    let (line, _) = sources.line_col(span);
    let text = &sources.file(span.file).text;
    text.lines().nth(line.saturating_sub(1) as usize).unwrap_or("").to_string()
}

/// Findings as JSON: the contract's shape (`session::json::finding`, the
/// one the command line prints) plus the rendered report.
fn findings_json(sources: &msl::source::SourceMap, findings: &[gpu::Finding]) -> String {
    let list: Vec<serde_json::Value> = findings
        .iter()
        .map(|f| {
            let mut v = session::json::finding(sources, f);
            v["rendered"] = serde_json::Value::String(if v["file"].is_null() {
                format!("error: {}\n", f.message)
            } else {
                msl::diag::render(sources, &[f.to_diagnostic()], false)
            });
            v
        })
        .collect();
    serde_json::Value::Array(list).to_string()
}

/// A `check=` name: the sanitizer level, and whether to trace NaNs.
fn level(name: &str) -> PyResult<(gpu::CheckLevel, bool)> {
    session::check_option(name).map_err(PyValueError::new_err)
}

/// Run `work` on a helper thread with the GIL released, looking for
/// Ctrl-C (and other signals) every few milliseconds; on a signal the
/// run is cancelled and the signal's exception raised.
fn run_interruptibly<T: Send>(py: Python<'_>, work: impl FnOnce(gpu::Cancel) -> T + Send) -> PyResult<T> {
    let cancel = gpu::Cancel::new();
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    std::thread::scope(|s| {
        let flag = cancel.clone();
        let handle = s.spawn(move || {
            let out = work(flag);
            let _ = tx.send(());
            out
        });
        let mut interrupted: Option<PyErr> = None;
        let mut rx = Some(rx);
        loop {
            // (the receiver moves into the GIL-free closure and back)
            let (back, finished) = py.detach(move || {
                let r = rx.take().expect("receiver present");
                let waited = r.recv_timeout(Duration::from_millis(25));
                (r, !matches!(waited, Err(std::sync::mpsc::RecvTimeoutError::Timeout)))
            });
            rx = Some(back);
            if finished {
                break;
            }
            if interrupted.is_none() {
                if let Err(e) = py.check_signals() {
                    cancel.cancel();
                    interrupted = Some(e);
                }
            }
        }
        let out = py.detach(|| handle.join());
        match (interrupted, out) {
            (Some(e), _) => Err(e),
            (None, Ok(v)) => Ok(v),
            (None, Err(_)) => Err(PyValueError::new_err("the simulator stopped unexpectedly (internal error); please report the kernel")),
        }
    })
}

/// A template value: a dtype name, an int or a bool (Python side converts dtypes to names).
fn template_arg(v: &Bound<'_, PyAny>) -> PyResult<mlx::TemplateArg> {
    if let Ok(b) = v.cast::<PyBool>() {
        return Ok(mlx::TemplateArg::Bool(b.is_true()));
    }
    if v.cast::<PyInt>().is_ok() {
        return Ok(mlx::TemplateArg::Int(v.extract::<i64>()?));
    }
    if let Ok(s) = v.cast::<PyString>() {
        return Ok(mlx::TemplateArg::DType(dtype(&s.to_string())?));
    }
    Err(PyValueError::new_err("[metal_kernel] template values must be a dtype, an int or a bool"))
}

/// A kernel input: a Python scalar or an array tuple.
fn mlx_input(v: &Bound<'_, PyAny>) -> PyResult<mlx::Input> {
    if let Ok(b) = v.cast::<PyBool>() {
        return Ok(mlx::Input::Bool(b.is_true()));
    }
    if v.cast::<PyInt>().is_ok() {
        return Ok(mlx::Input::Int(v.extract::<i64>()?));
    }
    if let Ok(f) = v.cast::<PyFloat>() {
        return Ok(mlx::Input::Float(f.value()));
    }
    Ok(mlx::Input::Array(array_in(&v.extract::<ArrayTuple>()?)?))
}

/// A `compile_shader` argument: a Python scalar, a list/tuple of Python
/// numbers (sent as PyTorch sends them), or an array tuple.
fn shader_arg(v: &Bound<'_, PyAny>) -> PyResult<session::Arg> {
    if let Ok(items) = v.extract::<Vec<Bound<'_, PyAny>>>() {
        if !items.is_empty() && items.iter().all(|i| i.cast::<PyInt>().is_ok() || i.cast::<PyFloat>().is_ok()) {
            if items.iter().all(|i| i.cast::<PyInt>().is_ok()) {
                return Ok(session::Arg::Ints(items.iter().map(|i| i.extract::<i64>()).collect::<PyResult<_>>()?));
            }
            return Ok(session::Arg::Floats(items.iter().map(|i| i.extract::<f64>()).collect::<PyResult<_>>()?));
        }
    }
    Ok(match mlx_input(v)? {
        mlx::Input::Array(a) => session::Arg::Array(a),
        mlx::Input::Bool(b) => session::Arg::Bool(b),
        mlx::Input::Int(i) => session::Arg::Int(i),
        mlx::Input::Float(f) => session::Arg::Float(f),
    })
}

/// `mx.fast.metal_kernel`'s object (see `metal_puzzles.fast`).
#[pyclass(frozen, module = "metal_puzzles._native")]
struct MlxKernel {
    kernel: mlx::MetalKernel,
}

/// What one kernel call returns to Python.
/// (outputs, findings JSON, verbose text, warnings, counts, capture note)
type CallOut = (Vec<ArrayOut>, String, Option<String>, String, Option<[u64; 9]>, Option<String>);

/// Where a capture goes: the path given, the default place (`""`, or no
/// path and `MTL_CAPTURE_ENABLED=1`), or nowhere.
fn capture_path(capture: Option<&str>, kernel: &str) -> Option<std::path::PathBuf> {
    match capture {
        Some("") => Some(capture::default_path(std::path::Path::new(""), kernel)),
        Some(p) => Some(std::path::PathBuf::from(p)),
        None if capture::enabled_by_env() => Some(capture::default_path(std::path::Path::new(""), kernel)),
        None => None,
    }
}

/// Write the capture `make` builds to `path`; the line to print either way.
fn save_capture(path: Option<std::path::PathBuf>, make: impl FnOnce() -> Result<capture::Capture, String>) -> Option<String> {
    let path = path?;
    Some(match make().and_then(|c| c.write(&path)) {
        Ok(()) => format!("capture written to {} (open it with `metal-puzzles debug {0} …` or `metal-puzzles replay {0}`)", path.display()),
        Err(e) => format!("warning: {e}"),
    })
}

#[pymethods]
impl MlxKernel {
    #[new]
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (name, input_names, output_names, source, header, ensure_row_contiguous, atomic_outputs, defines=Vec::new()))]
    fn new(
        name: &str,
        input_names: Vec<String>,
        output_names: Vec<String>,
        source: &str,
        header: &str,
        ensure_row_contiguous: bool,
        atomic_outputs: bool,
        defines: Vec<(String, String)>,
    ) -> PyResult<MlxKernel> {
        let ins: Vec<&str> = input_names.iter().map(String::as_str).collect();
        let outs: Vec<&str> = output_names.iter().map(String::as_str).collect();
        let options = msl::CompileOptions { defines, ..Default::default() };
        mlx::MetalKernel::new(name, &ins, &outs, source, header, ensure_row_contiguous, atomic_outputs)
            .map(|kernel| MlxKernel { kernel: kernel.with_compile_options(options) })
            .map_err(|e| PyValueError::new_err(format!("[metal_kernel] {e}")))
    }

    /// The generated source for inputs given as `(dtype, shape)` pairs
    /// (what `metal-puzzles mlx --print-source` prints).
    fn generate(
        &self,
        inputs: Vec<(String, Vec<usize>)>,
        output_dtypes: Vec<String>,
        template: Vec<(String, Bound<'_, PyAny>)>,
    ) -> PyResult<String> {
        let specs = inputs.iter().map(|(d, s)| Ok(mlx::InputSpec { dtype: dtype(d)?, shape: s.clone() })).collect::<PyResult<Vec<_>>>()?;
        let outs = output_dtypes.iter().map(|d| dtype(d)).collect::<PyResult<Vec<_>>>()?;
        let template = template.iter().map(|(n, v)| Ok((n.clone(), template_arg(v)?))).collect::<PyResult<Vec<_>>>()?;
        self.kernel.generate(&specs, &outs, &template).map(|g| g.source).map_err(|e| PyValueError::new_err(format!("[metal_kernel] {e}")))
    }

    /// Run once. Returns (outputs, findings JSON, verbose text, rendered
    /// warnings, per-thread counts when `count`).
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (inputs, output_shapes, output_dtypes, grid, threadgroup, template, init_value, verbose, check, count, capture=None))]
    fn call(
        &self,
        py: Python<'_>,
        inputs: Vec<Bound<'_, PyAny>>,
        output_shapes: Vec<Vec<usize>>,
        output_dtypes: Vec<String>,
        grid: [u32; 3],
        threadgroup: [u32; 3],
        template: Vec<(String, Bound<'_, PyAny>)>,
        init_value: Option<f64>,
        verbose: bool,
        check: &str,
        count: bool,
        capture: Option<&str>,
    ) -> PyResult<CallOut> {
        let inputs = inputs.iter().map(mlx_input).collect::<PyResult<Vec<_>>>()?;
        let output_dtypes = output_dtypes.iter().map(|d| dtype(d)).collect::<PyResult<Vec<_>>>()?;
        let mut call = mlx::Call::new(inputs, output_shapes, output_dtypes, grid, threadgroup);
        call.template = template.iter().map(|(n, v)| Ok((n.clone(), template_arg(v)?))).collect::<PyResult<Vec<_>>>()?;
        call.init_value = init_value;
        (call.check, call.nan) = level(check)?;
        call.count = count;
        let kernel = &self.kernel;
        let capture_to = capture_path(capture, &kernel.name);
        let (result, text, note) = run_interruptibly(py, move |cancel| {
            call.cancel = Some(cancel);
            let mut text = None;
            let r = kernel.call_with(&call, &mut |g| {
                if verbose {
                    text = Some(mlx::verbose_text(g));
                }
            });
            let note = match &r {
                Ok(r) if !r.report.cancelled => save_capture(capture_to, || {
                    let title = format!("MLX kernel `{}`", kernel.name);
                    capture::from_mlx(kernel, &call, r, "metal_puzzles.fast.metal_kernel", title, capture::DEFAULT_LIMIT)
                }),
                _ => None,
            };
            (r, text, note)
        })?;
        match result {
            Ok(r) => {
                if r.report.cancelled {
                    return Err(pyo3::exceptions::PyKeyboardInterrupt::new_err("the kernel was interrupted"));
                }
                let outs = r.outputs.iter().map(|a| array_out(py, a)).collect();
                let mut warnings =
                    if r.diagnostics.is_empty() { String::new() } else { msl::diag::render(&r.sources, &r.diagnostics, false) };
                for w in r.unwritten_warnings(&kernel.output_names) {
                    warnings.push_str(&format!("warning: {w}\n"));
                }
                if let Some(n) = &r.report.nan {
                    warnings.push_str(&session::nan::text(n, &r.sources));
                }
                let counts = r.report.max_counts.map(|c| puzzles::check::score_of(&c).columns());
                Ok((outs, findings_json(&r.sources, &r.report.findings), text, warnings, counts, note))
            }
            Err(mlx::MlxError::Compile { sources, diagnostics, generated }) => {
                let e = compile_error(py, &sources, &diagnostics);
                // The generated source is worth seeing when it does not compile.
                if verbose {
                    e.value(py).setattr("generated_source", mlx::verbose_text(&generated))?;
                }
                Err(e)
            }
            Err(mlx::MlxError::Argument(m)) => Err(PyValueError::new_err(format!("[metal_kernel] {m}"))),
        }
    }
}

/// `torch.mps.compile_shader`'s library (see `metal_puzzles.compile_shader`).
#[pyclass(frozen, module = "metal_puzzles._native")]
struct ShaderLibrary {
    library: session::Library,
}

/// What one shader call returns: new contents per argument, findings JSON,
/// binding warnings, capture note.
type ShaderOut = (Vec<Option<ArrayOut>>, String, Vec<String>, Option<String>);

#[pymethods]
impl ShaderLibrary {
    #[new]
    fn new(py: Python<'_>, source: &str, file_name: &str) -> PyResult<ShaderLibrary> {
        match session::Library::compile(file_name, source, &msl::CompileOptions::default()) {
            Ok(library) => Ok(ShaderLibrary { library }),
            Err(session::Error::Usage(m)) => Err(PyValueError::new_err(m)),
            Err(e) => {
                let (sources, diagnostics) = e.diagnostics().expect("compile errors have diagnostics");
                Err(compile_error(py, sources, diagnostics))
            }
        }
    }

    fn kernel_names(&self) -> Vec<String> {
        self.library.kernel_names()
    }

    /// Compile warnings, rendered.
    fn warnings(&self) -> String {
        if self.library.diagnostics().is_empty() {
            String::new()
        } else {
            msl::diag::render(self.library.sources(), self.library.diagnostics(), false)
        }
    }

    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (name, args, threads, group_size, check, capture=None))]
    fn call(
        &self,
        py: Python<'_>,
        name: &str,
        args: Vec<Bound<'_, PyAny>>,
        threads: Option<[u32; 3]>,
        group_size: Option<[u32; 3]>,
        check: &str,
        capture: Option<&str>,
    ) -> PyResult<ShaderOut> {
        let args = args.iter().map(shader_arg).collect::<PyResult<Vec<_>>>()?;
        let (check, nan) = level(check)?;
        let library = &self.library;
        let capture_to = capture_path(capture, name);
        let (result, note) = run_interruptibly(py, move |cancel| {
            let r = shader_call(library, name, &args, threads, group_size, (check, nan), cancel);
            let note = match &r {
                Ok((kernel, bound, opts, outcome)) if !outcome.report.cancelled => {
                    save_capture(capture_to, || shader_capture(library, kernel, bound, opts, outcome))
                }
                _ => None,
            };
            (r.map(|(_, _, _, o)| o), note)
        })?;
        let outcome = result.map_err(|e| match e {
            session::Error::Usage(m) => PyValueError::new_err(format!("{name}: {m}")),
            other => match other.diagnostics() {
                Some((sources, diagnostics)) => compile_error(py, sources, diagnostics),
                None => PyValueError::new_err(other.to_string()),
            },
        })?;
        if outcome.report.cancelled {
            return Err(pyo3::exceptions::PyKeyboardInterrupt::new_err("the kernel was interrupted"));
        }
        let written: Vec<Option<ArrayOut>> = (0..args_len(&outcome))
            .map(|k| outcome.outputs.iter().find(|o| o.position == Some(k)).map(|o| array_out(py, &o.array)))
            .collect();
        let mut warnings = outcome.warnings.clone();
        if let Some(n) = &outcome.report.nan {
            warnings.push(session::nan::text(n, &outcome.sources));
        }
        Ok((written, findings_json(&outcome.sources, outcome.findings()), warnings, note))
    }
}

/// The number of argument slots the written list needs (the last output's position + 1).
fn args_len(outcome: &session::Outcome) -> usize {
    outcome.outputs.iter().filter_map(|o| o.position).max().map_or(0, |k| k + 1)
}

/// Bind and run one `compile_shader` call: PyTorch's rules for arguments,
/// `threads` defaulting to the first array's element count and `group_size`
/// to `min(threads, 1024)`.
fn shader_call<'l>(
    library: &'l session::Library,
    name: &str,
    args: &[session::Arg],
    threads: Option<[u32; 3]>,
    group_size: Option<[u32; 3]>,
    (check, nan): (gpu::CheckLevel, bool),
    cancel: gpu::Cancel,
) -> Result<(session::Kernel<'l>, session::Bindings, gpu::RunOptions, session::Outcome), session::Error> {
    let kernel = library.kernel_with(name, session::LowerKey { statement_marks: nan, debug_stops: false })?;
    let bound = kernel.bind_positional(args)?;
    let threads = match threads {
        Some(t) => t,
        None => {
            let Some(first) = args.iter().find_map(|a| if let session::Arg::Array(a) = a { Some(a) } else { None }) else {
                return Err(session::Error::Usage("threads: no tensor argument to take the thread count from; pass threads=N".into()));
            };
            let n = u32::try_from(first.len().max(1)).map_err(|_| {
                session::Error::Usage(format!("threads: the first tensor has {} elements, too many threads for one dispatch", first.len()))
            })?;
            [n, 1, 1]
        }
    };
    let group = group_size.unwrap_or([threads[0].min(gpu::MAX_THREADS_PER_THREADGROUP), 1, 1]);
    let dispatch = gpu::Dispatch { grid: threads, threadgroup: group, mode: gpu::DispatchMode::Threads };
    let opts = gpu::RunOptions { check, nan, budget: session::DEFAULT_BUDGET, cancel: Some(cancel), ..Default::default() };
    let outcome = kernel.run(&bound, dispatch, &opts)?;
    Ok((kernel, bound, gpu::RunOptions { cancel: None, ..opts }, outcome))
}

/// A capture of a `compile_shader` call: argument k as the parameter bound
/// to `[[buffer(k)]]`.
fn shader_capture(
    library: &session::Library,
    kernel: &session::Kernel<'_>,
    bound: &session::Bindings,
    options: &gpu::RunOptions,
    outcome: &session::Outcome,
) -> Result<capture::Capture, String> {
    let run = capture::SourceRun {
        sources: library.sources(),
        main: library.file(),
        compile_options: library.options(),
        kernel: kernel.name(),
        dispatch: outcome.dispatch,
        options,
        arguments: bound.items.iter().map(|b| (b.name.clone(), b.array.clone(), b.writable)).collect(),
        outputs: outcome.outputs.iter().map(|o| (o.name.clone(), o.array.clone())).collect(),
        findings: outcome.findings(),
    };
    capture::from_source(&run, "metal_puzzles.compile_shader", format!("shader kernel `{}`", kernel.name()), capture::DEFAULT_LIMIT)
}

/// The book's puzzles as JSON (the data the command line uses).
#[pyfunction]
fn book_puzzles() -> String {
    let list: Vec<serde_json::Value> = puzzles::PUZZLES
        .iter()
        .map(|p| {
            let tests: Vec<serde_json::Value> = p
                .tests
                .iter()
                .map(|t| {
                    serde_json::json!({
                        "name": t.name,
                        "inputs": t.inputs.iter().map(|i| serde_json::json!({
                            "name": i.name, "dtype": i.dtype.mlx_name(), "shape": i.shape,
                            "fill": match i.fill { puzzles::Fill::Arange => "arange", puzzles::Fill::Ones => "ones", puzzles::Fill::Seeded(_) => "seeded" },
                            "transpose": i.transpose,
                        })).collect::<Vec<_>>(),
                        "output_shape": t.output_shape,
                        "grid": t.grid,
                        "threadgroup": t.threadgroup,
                    })
                })
                .collect();
            serde_json::json!({
                "number": p.number, "slug": p.slug, "title": p.title, "kernel_name": p.kernel_name,
                "explanation": p.explanation, "input_names": p.input_names, "output_name": p.output_name,
                "header": p.header, "starter": p.starter, "tests": tests, "targets": p.targets.columns(),
                "chapter": p.chapter, "output_dtype": p.output_dtype.mlx_name(), "atomic_outputs": p.atomic_outputs,
                "hints": p.hints,
            })
        })
        .collect();
    serde_json::Value::Array(list).to_string()
}

fn puzzle(number: u32) -> PyResult<&'static puzzles::Puzzle> {
    puzzles::PUZZLES.iter().find(|p| p.number == number).ok_or_else(|| PyKeyError::new_err(format!("the book has no puzzle {number}")))
}

/// The inputs of test `case` of a puzzle: the book's own, or the randomized
/// variant `k` (1, 2, ...) the checks use.
#[pyfunction]
#[pyo3(signature = (number, case, random=None))]
fn book_inputs(py: Python<'_>, number: u32, case: usize, random: Option<u64>) -> PyResult<Vec<ArrayOut>> {
    let p = puzzle(number)?;
    let tc = p.tests.get(case).ok_or_else(|| PyKeyError::new_err(format!("puzzle {number} has no test {}", case + 1)))?;
    let seed = random.map(|k| puzzles::check::random_seed(number, case, k));
    Ok(tc
        .inputs
        .iter()
        .enumerate()
        .map(|(k, s)| array_out(py, &puzzles::check::build_input(s, seed.map(|seed| puzzles::check::input_seed(seed, k)))))
        .collect())
}

/// What a book check returns: passed, solved, the report, findings JSON, score, capture note.
type BookCheck = (bool, bool, String, String, [u64; 9], Option<String>);

/// Check a header and body against a puzzle's tests, as `metal-puzzles check` does.
#[pyfunction]
#[pyo3(signature = (number, header, body, capture=None))]
fn book_check(py: Python<'_>, number: u32, header: &str, body: &str, capture: Option<&str>) -> PyResult<BookCheck> {
    let p = puzzle(number)?;
    let capture_to = capture_path(capture, p.kernel_name);
    run_interruptibly(py, move |_| {
        let r = puzzles::check_source(p, header, body);
        let note = save_capture(capture_to, || {
            let text = if header.is_empty() { body.to_string() } else { format!("{header}{}\n{body}", puzzles::BODY_MARKER) };
            let (title, kernel, call) = puzzles::check::capture_run(&r, &p.file_name(), &text)?;
            let result = kernel.call(&call).map_err(|e| format!("capture not written: {e}"))?;
            capture::from_mlx(&kernel, &call, &result, "metal_puzzles MetalProblem.check", title, capture::DEFAULT_LIMIT)
        });
        let mut findings = Vec::new();
        for f in &r.findings {
            let one: Vec<serde_json::Value> =
                serde_json::from_str(&findings_json(&f.sources, std::slice::from_ref(&f.finding))).unwrap_or_default();
            findings.extend(one);
        }
        (r.passed, r.solved(), puzzles::render::human(&r, false), serde_json::Value::Array(findings).to_string(), r.score.columns(), note)
    })
}

/// The book's expected output of a puzzle for these inputs (its spec).
#[pyfunction]
fn book_spec(py: Python<'_>, number: u32, inputs: Vec<ArrayTuple<'_>>) -> PyResult<ArrayOut> {
    let p = puzzle(number)?;
    let arrays = inputs.iter().map(array_in).collect::<PyResult<Vec<_>>>()?;
    if arrays.len() != p.input_names.len() {
        return Err(PyValueError::new_err(format!("puzzle {number} takes {} inputs, not {}", p.input_names.len(), arrays.len())));
    }
    Ok(array_out(py, &(p.spec)(&arrays)))
}

/// The book's score table (the columns of `puzzles::COLUMNS`).
#[pyfunction]
#[pyo3(signature = (title, score, targets, judged))]
fn score_table(title: &str, score: [u64; 9], targets: [Option<u64>; 9], judged: bool) -> String {
    let s = puzzles::Score::from_columns(score);
    let t = puzzles::Targets::from_columns(targets);
    puzzles::render::score_table(title, s, t, judged)
}

/// An array as the book prints it (`array([0, 1], dtype=float32)`).
#[pyfunction]
fn book_repr(a: ArrayTuple<'_>) -> PyResult<String> {
    Ok(puzzles::render::repr(&array_in(&a)?))
}

/// Trace one call and draw it: (terminal text, SVG).
#[allow(clippy::too_many_arguments)]
#[pyfunction]
#[pyo3(signature = (kernel, title, inputs, output_shape, output_dtype, grid, threadgroup, width, color))]
fn draw_call(
    py: Python<'_>,
    kernel: &MlxKernel,
    title: String,
    inputs: Vec<Bound<'_, PyAny>>,
    output_shape: Vec<usize>,
    output_dtype: &str,
    grid: [u32; 3],
    threadgroup: [u32; 3],
    width: usize,
    color: bool,
) -> PyResult<(String, String)> {
    let output_dtype = dtype(output_dtype)?;
    let arrays = inputs.iter().map(|v| Ok(mlx_input(v)?.to_array())).collect::<PyResult<Vec<_>>>()?;
    let call =
        mlx::Call::new(arrays.iter().cloned().map(mlx::Input::Array).collect(), vec![output_shape], vec![output_dtype], grid, threadgroup)
            .init_value(0.0);
    let k = &kernel.kernel;
    let shown = run_interruptibly(py, move |cancel| {
        let mut call = call;
        call.cancel = Some(cancel);
        call.budget = Some(puzzles::check::BOOK_BUDGET);
        puzzles::show::trace_call(k, title, &arrays, call, None)
            .map(|s| (diagram::render_terminal(&s.spec, &s.trace, color, width), diagram::render_svg(&s.spec, &s.trace)))
    })?;
    shown.map_err(PyValueError::new_err)
}

/// Run the command line with `argv` (the program name first) in this
/// process, as the `metal-puzzles` command installed by the wheel and
/// `python -m metal_puzzles` do; the exit status. The GIL is released.
#[pyfunction]
fn cli_main(py: Python<'_>, argv: Vec<String>, program: String) -> u8 {
    let _ = metal_puzzles::PROGRAM.set(program);
    py.detach(|| metal_puzzles::main_with_args(argv))
}

/// Whether `VERBOSE` asks for generated sources (MLX's rule).
#[pyfunction]
fn verbose_env() -> bool {
    mlx::verbose_env()
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<MlxKernel>()?;
    m.add_class::<ShaderLibrary>()?;
    m.add_function(wrap_pyfunction!(verbose_env, m)?)?;
    m.add_function(wrap_pyfunction!(cli_main, m)?)?;
    m.add_function(wrap_pyfunction!(book_puzzles, m)?)?;
    m.add_function(wrap_pyfunction!(book_inputs, m)?)?;
    m.add_function(wrap_pyfunction!(book_check, m)?)?;
    m.add_function(wrap_pyfunction!(book_spec, m)?)?;
    m.add_function(wrap_pyfunction!(score_table, m)?)?;
    m.add_function(wrap_pyfunction!(book_repr, m)?)?;
    m.add_function(wrap_pyfunction!(draw_call, m)?)?;
    Ok(())
}
