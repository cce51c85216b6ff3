//! MLX custom kernels on the simulated GPU.
//!
//! [`MetalKernel`] mirrors `mx.fast.metal_kernel`: it takes a kernel *body*
//! plus input/output names, generates the full Metal source exactly as MLX
//! does ([`MetalKernel::generate`]), compiles it behind MLX's preamble and
//! runs it with MLX's calling convention and dispatch ([`MetalKernel::call`]).
//! Diagnostics and run-time findings point into the user's own body and
//! header, not into the generated text.

mod gen;
pub mod json_args;

pub use gen::{kernel_name, Generated, InputSlots, InputSpec, ATTRIBUTES, MAX_CONSTANT_ARRAY_SIZE};

use arrays::{Array, DType};
use gpu::{CheckLevel, Dispatch, DispatchMode, RunOptions};
use msl::diag::{codes, Diagnostic};
use msl::source::{FileId, SourceMap, Span};
use std::collections::BTreeMap;
use std::fmt;

/// The text MLX compiles in front of every custom kernel.
pub const PREAMBLE: &str = include_str!("preamble.metal");

/// Apple GPUs' limit on threads per threadgroup.
pub const MAX_THREADS_PER_THREADGROUP: u64 = gpu::MAX_THREADS_PER_THREADGROUP as u64;

/// A piece of user text (body or header) and the file it came from, so that
/// messages can point at the user's file and line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UserFile {
    /// Name shown in messages (usually the path).
    pub name: String,
    /// The whole file's text.
    pub text: String,
    /// Where the piece starts in `text`.
    pub offset: usize,
}

#[derive(Clone, Debug)]
pub struct MetalKernel {
    pub name: String,
    pub input_names: Vec<String>,
    pub output_names: Vec<String>,
    pub source: String,
    pub header: String,
    pub ensure_row_contiguous: bool,
    pub atomic_outputs: bool,
    /// The file holding `source` (default: a file named `NAME.metal` that is
    /// exactly the body).
    pub source_file: Option<UserFile>,
    /// The file holding `header` (default: `NAME_header.metal`).
    pub header_file: Option<UserFile>,
    /// Preprocessor settings (`-D`, include folders) for compiling the
    /// generated source.
    pub compile_options: msl::CompileOptions,
    /// Whether the caller can pass template arguments (`mx.fast.metal_kernel`
    /// and `mlx --template` can; the puzzle book cannot, so its help for an
    /// unknown short name says to declare it instead).
    pub templates: bool,
    /// Kernels already compiled, by generated source (MLX caches them too;
    /// compiling the preamble dominates a small call).
    cache: CompileCache,
}

/// A compiled kernel ready to run, with what its messages need.
#[derive(Debug)]
struct Compiled {
    sources: SourceMap,
    /// Compile warnings, already pointing into the user's files.
    diagnostics: Vec<Diagnostic>,
    kernel: gpu::Kernel,
    remap: Remap,
}

/// The most recently used compiled kernels of one `MetalKernel`, newest last.
#[derive(Clone, Debug, Default)]
struct CompileCache(std::sync::Arc<std::sync::Mutex<Vec<CacheEntry>>>);

/// A generated source and what it compiled to.
type CacheEntry = (String, std::sync::Arc<Compiled>);

/// Compiled variants (dtypes, shapes, templates) kept per kernel.
const CACHED_VARIANTS: usize = 16;

impl CompileCache {
    fn get(&self, source: &str) -> Option<std::sync::Arc<Compiled>> {
        let mut list = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let at = list.iter().position(|(s, _)| s == source)?;
        let entry = list.remove(at);
        let found = entry.1.clone();
        list.push(entry);
        Some(found)
    }

    fn put(&self, source: String, compiled: std::sync::Arc<Compiled>) {
        let mut list = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if list.len() >= CACHED_VARIANTS {
            list.remove(0);
        }
        list.push((source, compiled));
    }
}

/// A template value; its kind decides the template parameter's kind.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum TemplateArg {
    DType(DType),
    Int(i64),
    Bool(bool),
}

impl TemplateArg {
    /// `typename`, `int` or `bool`.
    pub fn kind(&self) -> &'static str {
        match self {
            TemplateArg::DType(_) => "typename",
            TemplateArg::Int(_) => "int",
            TemplateArg::Bool(_) => "bool",
        }
    }

    /// The value as MLX writes it (bools as 1/0, dtypes as Metal types).
    pub fn value_text(&self) -> String {
        match self {
            TemplateArg::DType(d) => d.metal_type().to_string(),
            TemplateArg::Int(i) => i.to_string(),
            TemplateArg::Bool(b) => (if *b { "1" } else { "0" }).to_string(),
        }
    }

    /// Parse a command-line template value: `true`/`false`, an integer or a dtype name.
    pub fn parse(s: &str) -> Result<TemplateArg, String> {
        let t = s.trim();
        match t {
            "true" | "True" => return Ok(TemplateArg::Bool(true)),
            "false" | "False" => return Ok(TemplateArg::Bool(false)),
            _ => {}
        }
        if let Ok(i) = t.parse::<i64>() {
            return Ok(TemplateArg::Int(i));
        }
        DType::parse(t).map(TemplateArg::DType).map_err(|e| format!("`{t}` is not true/false, an integer or a dtype: {e}"))
    }
}

/// One input: an array or a Python-style scalar (which becomes a 0-d array:
/// bool → bool, int → int32 (int64 if it does not fit), float → float32).
#[derive(Clone, Debug)]
pub enum Input {
    Array(Array),
    Bool(bool),
    Int(i64),
    Float(f64),
}

impl Input {
    /// Bytes the input takes as a buffer (a scalar: a few).
    pub fn nbytes(&self) -> usize {
        match self {
            Input::Array(a) => a.nbytes(),
            _ => 8,
        }
    }

    pub fn to_array(&self) -> Array {
        match self {
            Input::Array(a) => a.clone(),
            Input::Bool(b) => Array::scalar_f64(DType::Bool, if *b { 1.0 } else { 0.0 }),
            Input::Int(i) => match i32::try_from(*i) {
                Ok(v) => Array::from_i64(DType::I32, &[], &[v as i64]).expect("one element"),
                Err(_) => Array::from_i64(DType::I64, &[], &[*i]).expect("one element"),
            },
            Input::Float(f) => Array::scalar_f64(DType::F32, *f),
        }
    }
}

impl From<Array> for Input {
    fn from(a: Array) -> Input {
        Input::Array(a)
    }
}

/// The arguments of one call of the kernel.
#[derive(Clone, Debug)]
pub struct Call {
    pub inputs: Vec<Input>,
    pub output_shapes: Vec<Vec<usize>>,
    pub output_dtypes: Vec<DType>,
    pub grid: [u32; 3],
    pub threadgroup: [u32; 3],
    pub template: Vec<(String, TemplateArg)>,
    pub init_value: Option<f64>,
    pub verbose: bool,
    pub check: CheckLevel,
    pub count: bool,
    /// Record an access trace with at most this many events (for diagrams).
    pub trace: Option<usize>,
    /// Instructions a threadgroup may run before it counts as runaway
    /// (`None`: the simulator's default).
    pub budget: Option<u64>,
    /// Count per-line statistics (`report.profile`, spans in the user's files).
    pub profile: bool,
    /// Trace where non-finite values are born (`report.nan`).
    pub nan: bool,
    /// Record the debugger probes of this thread, at most this many values.
    pub probe: Option<([u32; 3], usize)>,
    /// Record this thread stop by stop for the interactive debugger, at
    /// most this many stops (`report.stops`, spans in the user's files).
    pub stops: Option<([u32; 3], usize)>,
    /// Debugger probes to place, lines counted in the body's file
    /// (`report.probe_sites`, spans in the user's files).
    pub probes: Vec<msl::probe::ProbeRequest>,
    /// Keep shader log messages (`report.logs`).
    pub log: Option<gpu::log::LogOptions>,
    /// Stop the run early when this is cancelled (see `gpu::Cancel`).
    pub cancel: Option<gpu::Cancel>,
    /// Apply each atomic instruction's lanes last lane first
    /// (`gpu::RunOptions::atomics_last_lane_first`).
    pub atomics_last_lane_first: bool,
    /// Other schedules to explore when atomics may be order-sensitive, and
    /// the float tolerance within which outputs differ only by rounding
    /// (`gpu::RunOptions::schedules`, `schedule_tolerance`).
    pub schedules: usize,
    pub schedule_tolerance: (f64, f64),
    /// Which engine runs it, and what compiles it for the compiled tier
    /// (`gpu::RunOptions::engine`, `compiler`).
    pub engine: gpu::engine::Engine,
    pub compiler: Option<gpu::engine::Compiler>,
}

impl Call {
    /// A call with the given inputs and outputs and everything else at its default.
    pub fn new(
        inputs: Vec<Input>,
        output_shapes: Vec<Vec<usize>>,
        output_dtypes: Vec<DType>,
        grid: [u32; 3],
        threadgroup: [u32; 3],
    ) -> Call {
        Call {
            inputs,
            output_shapes,
            output_dtypes,
            grid,
            threadgroup,
            template: Vec::new(),
            init_value: None,
            verbose: false,
            check: CheckLevel::All,
            count: false,
            trace: None,
            budget: None,
            profile: false,
            nan: false,
            probe: None,
            stops: None,
            probes: Vec::new(),
            log: None,
            cancel: None,
            atomics_last_lane_first: false,
            schedules: gpu::RunOptions::default().schedules,
            schedule_tolerance: gpu::RunOptions::default().schedule_tolerance,
            engine: gpu::engine::Engine::default(),
            compiler: None,
        }
    }

    pub fn template(mut self, name: &str, value: TemplateArg) -> Call {
        self.template.push((name.to_string(), value));
        self
    }

    pub fn init_value(mut self, v: f64) -> Call {
        self.init_value = Some(v);
        self
    }
}

/// An output MLX leaves uninitialized, before the kernel runs: garbage
/// (all bits set: NaN as a float, -1 as an integer), never a lucky 0.
fn garbage(dtype: DType, shape: &[usize]) -> Array {
    let n: usize = shape.iter().product();
    Array::from_bytes(dtype, shape, vec![0xff; n * dtype.size()]).unwrap_or_else(|_| Array::zeros(dtype, shape))
}

/// What to tell about output `name` (of `shape`) when the elements
/// `unwritten` marks were never written (`None` when all were).
pub fn unwritten_message(name: &str, unwritten: &[bool], shape: &[usize]) -> Option<String> {
    let count = unwritten.iter().filter(|&&b| b).count();
    let first = unwritten.iter().position(|&b| b)?;
    let mut index = Vec::with_capacity(shape.len());
    let mut rest = first;
    for &d in shape.iter().rev() {
        index.push(rest % d.max(1));
        rest /= d.max(1);
    }
    index.reverse();
    let at = index.iter().map(|i| i.to_string()).collect::<Vec<_>>().join(", ");
    Some(format!(
        "{count} of the {} elements of output `{name}` were never written (the first is `{name}[{at}]`): MLX leaves outputs uninitialized, so they hold garbage; make the grid cover every element (it counts threads, not threadgroups), or pass `init_value` if that is intended",
        unwritten.len()
    ))
}

/// What a call produced.
#[derive(Debug)]
pub struct CallResult {
    pub outputs: Vec<Array>,
    /// For each output, which elements no thread wrote (they hold garbage,
    /// as MLX leaves outputs without `init_value` uninitialized); `None`
    /// when the output was initialized or checks were off.
    pub unwritten: Vec<Option<Vec<bool>>>,
    /// Findings with spans already in the user's files.
    pub report: gpu::RunReport,
    pub sources: SourceMap,
    /// Compile warnings (spans in the user's files).
    pub diagnostics: Vec<Diagnostic>,
    pub generated: Generated,
    /// The kernel as the simulator ran it (names of its threadgroup memory...).
    pub kernel: gpu::Kernel,
}

impl CallResult {
    /// One warning per output that has elements no thread wrote
    /// (`names`: the kernel's output names, in order).
    pub fn unwritten_warnings(&self, names: &[String]) -> Vec<String> {
        let outs = names.iter().zip(&self.outputs).zip(&self.unwritten);
        outs.filter_map(|((name, a), u)| unwritten_message(name, u.as_deref()?, &a.shape)).collect()
    }
}

#[derive(Debug)]
pub enum MlxError {
    /// The generated source does not compile (or the simulator cannot run
    /// it); spans are in the user's files where possible.
    Compile { sources: SourceMap, diagnostics: Vec<Diagnostic>, generated: Box<Generated> },
    /// A bad argument; the message names it and says what to do.
    Argument(String),
}

impl MlxError {
    /// The diagnostics rendered rustc-style (or the argument message).
    pub fn render(&self, color: bool) -> String {
        match self {
            MlxError::Compile { sources, diagnostics, .. } => msl::diag::render(sources, diagnostics, color),
            MlxError::Argument(m) => format!("error: {m}\n"),
        }
    }
}

impl fmt::Display for MlxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MlxError::Argument(m) => f.write_str(m),
            MlxError::Compile { .. } => f.write_str(self.render(false).trim_end()),
        }
    }
}

impl std::error::Error for MlxError {}

fn arg(msg: impl Into<String>) -> MlxError {
    MlxError::Argument(msg.into())
}

/// Whether `VERBOSE=1` (or any value other than 0/empty) is set.
pub fn verbose_env() -> bool {
    std::env::var("VERBOSE").map(|v| !v.is_empty() && v != "0").unwrap_or(false)
}

/// The text MLX prints for `verbose=True`.
pub fn verbose_text(g: &Generated) -> String {
    format!("Generated source code for `{}`:\n```\n{}\n```\n", g.kernel_name, g.source)
}

/// Where the pieces of the generated file map to.
#[derive(Debug)]
struct Remap {
    generated: FileId,
    /// (range in the generated file, user file id, offset of the piece in
    /// the user file, whether a span starting right at the end belongs to it)
    pieces: Vec<(std::ops::Range<u32>, FileId, u32, bool)>,
    source_offset: u32,
    signature_end: u32,
}

impl Remap {
    fn span(&self, s: Span) -> (Span, Where) {
        if s.file != self.generated {
            return (s, Where::Other);
        }
        for (r, file, off, inclusive) in &self.pieces {
            // A span may start right after the body (e.g. a missing `;`).
            if s.lo >= r.start && (s.lo < r.end || (*inclusive && s.lo == r.end)) {
                let lo = s.lo - r.start + off;
                let hi = s.hi.min(r.end).max(s.lo) - r.start + off;
                return (Span::new(*file, lo, hi), Where::User);
            }
        }
        if s.lo < self.source_offset {
            (s, Where::Preamble)
        } else if s.lo < self.signature_end {
            (s, Where::Signature)
        } else {
            (s, Where::Generated)
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Where {
    User,
    Preamble,
    Signature,
    Generated,
    Other,
}

impl MetalKernel {
    /// `mx.fast.metal_kernel(name, input_names, output_names, source, header,
    /// ensure_row_contiguous, atomic_outputs)`.
    pub fn new(
        name: &str,
        input_names: &[&str],
        output_names: &[&str],
        source: &str,
        header: &str,
        ensure_row_contiguous: bool,
        atomic_outputs: bool,
    ) -> Result<MetalKernel, MlxError> {
        if output_names.is_empty() {
            return Err(arg(format!("output_names: kernel `{name}` needs at least one output name (MLX kernels return their outputs; e.g. output_names=[\"out\"])")));
        }
        let mut seen = std::collections::BTreeSet::new();
        for n in input_names.iter().chain(output_names) {
            if !gen::is_identifier(n) {
                return Err(arg(format!(
                    "input_names/output_names: `{n}` is not a valid Metal parameter name (use a C identifier such as `inp` or `out`)"
                )));
            }
            if !seen.insert(*n) {
                return Err(arg(format!("input_names/output_names: `{n}` is used twice; every input and output needs its own name")));
            }
        }
        // The name is only ever used after `custom_kernel_`, so it may start
        // with a digit (the Metal Puzzles book's `1D_conv`).
        if !gen::is_identifier(&format!("custom_kernel_{name}")) {
            return Err(arg(format!(
                "name: `{name}` is not a valid kernel name (it becomes part of a Metal function name; use letters, digits and `_`)"
            )));
        }
        Ok(MetalKernel {
            name: name.to_string(),
            input_names: input_names.iter().map(|s| s.to_string()).collect(),
            output_names: output_names.iter().map(|s| s.to_string()).collect(),
            source: source.to_string(),
            header: header.to_string(),
            ensure_row_contiguous,
            atomic_outputs,
            source_file: None,
            header_file: None,
            compile_options: msl::CompileOptions::default(),
            templates: true,
            cache: CompileCache::default(),
        })
    }

    /// Name the files the body and header came from (for messages).
    pub fn with_files(mut self, source_file: Option<UserFile>, header_file: Option<UserFile>) -> MetalKernel {
        self.source_file = source_file;
        self.header_file = header_file;
        self.cache = CompileCache::default();
        self
    }

    /// Compile with these preprocessor settings (include folders, macros).
    pub fn with_compile_options(mut self, options: msl::CompileOptions) -> MetalKernel {
        self.compile_options = options;
        self.cache = CompileCache::default();
        self
    }

    /// The source MLX generates for inputs of these dtypes/shapes.
    pub fn generate(
        &self,
        inputs: &[InputSpec],
        output_dtypes: &[DType],
        template: &[(String, TemplateArg)],
    ) -> Result<Generated, MlxError> {
        gen::generate(self, inputs, output_dtypes, template)
    }

    /// The source generated for a call (without running it).
    pub fn generate_for(&self, call: &Call) -> Result<Generated, MlxError> {
        let arrays = self.input_arrays(call)?;
        let specs: Vec<InputSpec> = arrays.iter().map(|a| InputSpec { dtype: a.dtype, shape: a.shape.clone() }).collect();
        self.generate(&specs, &call.output_dtypes, &call.template)
    }

    fn input_arrays(&self, call: &Call) -> Result<Vec<Array>, MlxError> {
        if call.inputs.len() != self.input_names.len() {
            return Err(arg(format!(
                "inputs: kernel `{}` was made with {} input name{} [{}], but the call passes {} input{}; pass exactly one input per name, in order",
                self.name,
                self.input_names.len(),
                if self.input_names.len() == 1 { "" } else { "s" },
                self.input_names.join(", "),
                call.inputs.len(),
                if call.inputs.len() == 1 { "" } else { "s" }
            )));
        }
        Ok(call.inputs.iter().map(Input::to_array).collect())
    }

    fn check_call(&self, call: &Call) -> Result<(), MlxError> {
        let n = self.output_names.len();
        if call.output_shapes.len() != n {
            return Err(arg(format!(
                "output_shapes: kernel `{}` has {n} output{} [{}], but {} output shape{} given; pass one shape per output",
                self.name,
                if n == 1 { "" } else { "s" },
                self.output_names.join(", "),
                call.output_shapes.len(),
                if call.output_shapes.len() == 1 { " was" } else { "s were" }
            )));
        }
        if call.output_dtypes.len() != n {
            return Err(arg(format!(
                "output_dtypes: kernel `{}` has {n} output{} [{}], but {} output dtype{} given; pass one dtype per output",
                self.name,
                if n == 1 { "" } else { "s" },
                self.output_names.join(", "),
                call.output_dtypes.len(),
                if call.output_dtypes.len() == 1 { " was" } else { "s were" }
            )));
        }
        if self.atomic_outputs {
            for (name, d) in self.output_names.iter().zip(&call.output_dtypes) {
                if !matches!(d, DType::I32 | DType::U32 | DType::F32 | DType::Bool) {
                    return Err(arg(format!(
                        "output `{name}` has dtype {}, but with atomic_outputs=True it becomes `device atomic<{}>*` and Metal has atomics only for int32, uint32, float32 and bool; make `{name}` float32 (or int32/uint32) and convert afterwards",
                        d.mlx_name(),
                        d.metal_type()
                    )));
                }
            }
        }
        let mut total: usize = call.inputs.iter().map(Input::nbytes).sum();
        for ((name, shape), &dtype) in self.output_names.iter().zip(&call.output_shapes).zip(&call.output_dtypes) {
            match arrays::checked_nbytes(dtype, shape) {
                Ok(n) if n <= arrays::MAX_GENERATED_BYTES && total.saturating_add(n) > arrays::MAX_TOTAL_BUFFER_BYTES => {
                    return Err(arg(format!(
                        "output_shapes: with output `{name}` the inputs and outputs take more than {} bytes, the simulator's limit for all buffers of one dispatch together; use smaller shapes",
                        arrays::MAX_TOTAL_BUFFER_BYTES
                    )))
                }
                Ok(n) if n <= arrays::MAX_GENERATED_BYTES => total += n,
                _ => {
                    return Err(arg(format!(
                        "output_shapes: output `{name}` of shape {shape:?} ({}) would be over the simulator's limit of {} bytes per output; use a smaller shape",
                        dtype.mlx_name(),
                        arrays::MAX_GENERATED_BYTES
                    )))
                }
            }
        }
        if call.grid.contains(&0) {
            return Err(arg(format!(
                "grid: {:?} has a zero dimension; every dimension of the grid (threads, not threadgroups) must be at least 1",
                call.grid
            )));
        }
        if call.threadgroup.contains(&0) {
            return Err(arg(format!("threadgroup: {:?} has a zero dimension; every dimension must be at least 1", call.threadgroup)));
        }
        let tg: u64 = call.threadgroup.iter().map(|&x| x as u64).product();
        if tg > MAX_THREADS_PER_THREADGROUP {
            return Err(arg(format!(
                "threadgroup: ({}, {}, {}) is {tg} threads, over the maximum of {MAX_THREADS_PER_THREADGROUP} threads per threadgroup; use a smaller threadgroup (the grid counts threads, so it need not change)",
                call.threadgroup[0], call.threadgroup[1], call.threadgroup[2]
            )));
        }
        if let Some(v) = call.init_value {
            if !v.is_finite() && call.output_dtypes.iter().any(|d| !d.is_float()) {
                return Err(arg(format!("init_value: {v} cannot be stored in an integer output")));
            }
        }
        Ok(())
    }

    /// Run the kernel like calling the object MLX returns: prints the
    /// generated source to stdout when `call.verbose` or `VERBOSE=1`.
    pub fn call(&self, call: &Call) -> Result<CallResult, MlxError> {
        let verbose = call.verbose || verbose_env();
        self.call_with(call, &mut |g| {
            if verbose {
                print!("{}", verbose_text(g));
            }
        })
    }

    /// Like [`MetalKernel::call`], handing the generated source to `on_generated`
    /// (before compiling) instead of printing it.
    pub fn call_with(&self, call: &Call, on_generated: &mut dyn FnMut(&Generated)) -> Result<CallResult, MlxError> {
        self.check_call(call)?;
        let mut arrays = self.input_arrays(call)?;
        for a in &mut arrays {
            // Copy views that are not row-contiguous (MLX's ensure_row_contiguous);
            // views with negative strides are copied too (a buffer cannot start
            // before its first element here).
            if (self.ensure_row_contiguous && !a.is_row_contiguous()) || a.strides.iter().any(|&s| s < 0) {
                *a = a.to_contiguous();
            }
        }
        let specs: Vec<InputSpec> = arrays.iter().map(|a| InputSpec { dtype: a.dtype, shape: a.shape.clone() }).collect();
        let generated = self.generate(&specs, &call.output_dtypes, &call.template)?;
        on_generated(&generated);

        // (profiling lowers with statement marks: another kernel)
        let key = format!(
            "{}{}{:?}\n{}",
            if call.profile || call.nan { "profile\n" } else { "" },
            if call.stops.is_some() { "stops\n" } else { "" },
            call.probes,
            generated.full_source
        );
        let compiled = match self.cache.get(&key) {
            Some(c) => c,
            None => {
                let c = std::sync::Arc::new(self.compile(&generated, &specs, call)?);
                self.cache.put(key, c.clone());
                c
            }
        };
        let remap = &compiled.remap;
        let kernel = &compiled.kernel;

        // Buffers.
        let mut buffers: BTreeMap<u32, Vec<u8>> = BTreeMap::new();
        let mut uncounted = Vec::new();
        for (a, slot) in arrays.iter().zip(&generated.inputs) {
            let sz = a.dtype.size();
            // Like MLX, an array is bound at its offset: the buffer is the
            // underlying data from the view's first element on (a strided
            // view is walked with NAME_strides).
            let start = (a.offset * sz).min(a.data.len());
            let bytes = a.data[start..].to_vec();
            buffers.insert(slot.buffer, bytes);
            if let Some(i) = slot.shape {
                buffers.insert(i, a.shape.iter().flat_map(|&d| (d as i32).to_le_bytes()).collect());
                uncounted.push(i);
            }
            if let Some(i) = slot.strides {
                let strides: Vec<isize> = if a.is_row_contiguous() { arrays::row_major_strides(&a.shape) } else { a.strides.clone() };
                buffers.insert(i, strides.iter().flat_map(|&s| (s as i64).to_le_bytes()).collect());
                uncounted.push(i);
            }
            if let Some(i) = slot.ndim {
                buffers.insert(i, (a.ndim() as i32).to_le_bytes().to_vec());
                uncounted.push(i);
            }
        }
        let mut uninitialized = Vec::new();
        for ((shape, &dtype), &index) in call.output_shapes.iter().zip(&call.output_dtypes).zip(&generated.outputs) {
            let out = match call.init_value {
                Some(v) => Array::full(dtype, shape, v),
                None => {
                    uninitialized.push(index);
                    garbage(dtype, shape)
                }
            };
            buffers.insert(index, out.contiguous_bytes());
        }
        let dispatch = Dispatch {
            grid: call.grid,
            threadgroup: [0, 1, 2].map(|i| call.threadgroup[i].min(call.grid[i])),
            mode: DispatchMode::Threads,
        };
        let opts = RunOptions {
            check: call.check,
            count: call.count,
            uncounted_buffers: uncounted,
            uninitialized_buffers: uninitialized,
            trace: call.trace,
            budget: call.budget.unwrap_or(RunOptions::default().budget),
            profile: call.profile,
            nan: call.nan,
            probe: call.probe,
            stops: call.stops,
            log: call.log.clone(),
            cancel: call.cancel.clone(),
            atomics_last_lane_first: call.atomics_last_lane_first,
            schedules: call.schedules,
            schedule_tolerance: call.schedule_tolerance,
            engine: call.engine,
            compiler: call.compiler,
            ..Default::default()
        };
        let mut report = gpu::run(kernel, &dispatch, &mut buffers, &opts);
        for f in report.findings.iter_mut().filter(|f| f.kind != gpu::FindingKind::InvalidDispatch) {
            let (span, w) = remap.span(f.span);
            f.span = span;
            if let Some((s, _)) = &mut f.secondary {
                *s = remap.span(*s).0;
            }
            match w {
                Where::Signature | Where::Generated => {
                    f.notes.push("this is in the code MLX generates around your body (see it with verbose=True / --print-source)".into())
                }
                Where::Preamble => f.notes.push("this is in MLX's preamble (a helper such as elem_to_loc), called from your kernel".into()),
                _ => {}
            }
        }
        // Trace lines point into the user's files too (for explanations).
        if let Some(t) = report.trace.as_mut() {
            for e in &mut t.events {
                e.span = remap.span(e.span).0;
            }
        }
        if let Some(p) = report.profile.as_mut() {
            for (span, _) in &mut p.sites {
                *span = remap.span(*span).0;
            }
        }
        if let Some(s) = report.stops.as_mut() {
            for stop in &mut s.stops {
                stop.span = remap.span(stop.span).0;
            }
        }
        for site in &mut report.probe_sites {
            site.stmt = remap.span(site.stmt).0;
        }
        if let Some(n) = report.nan.as_mut() {
            for s in &mut n.steps {
                s.span = remap.span(s.span).0;
            }
            for o in &mut n.outputs {
                o.span = remap.span(o.span).0;
            }
        }
        let mut outputs = Vec::new();
        let mut unwritten = Vec::new();
        for ((shape, &dtype), (&index, name)) in
            call.output_shapes.iter().zip(&call.output_dtypes).zip(generated.outputs.iter().zip(&self.output_names))
        {
            let bytes = buffers.remove(&index).unwrap_or_default();
            let missing = report
                .written
                .get(&index)
                .map(|bits| bits.chunks(dtype.size().max(1)).map(|e| !e.iter().all(|&b| b)).collect::<Vec<bool>>());
            unwritten.push(missing);
            outputs.push(Array::from_bytes(dtype, shape, bytes).map_err(|e| arg(format!("output `{name}`: {e}")))?);
        }
        Ok(CallResult {
            outputs,
            unwritten,
            report,
            sources: compiled.sources.clone(),
            diagnostics: compiled.diagnostics.clone(),
            generated,
            kernel: compiled.kernel.clone(),
        })
    }

    /// Compile the generated source; messages point into the user's files.
    fn compile(&self, generated: &Generated, specs: &[InputSpec], call: &Call) -> Result<Compiled, MlxError> {
        let mut sources = SourceMap::new();
        let gen_name = format!("<generated by mlx: {}>", generated.kernel_name);
        let gen_file = sources.add(gen_name, generated.full_source.clone());
        let options;
        let mut opts = &self.compile_options;
        if !call.probes.is_empty() {
            options = msl::CompileOptions { probes: self.probes(generated, &call.probes), ..self.compile_options.clone() };
            opts = &options;
        }
        let c = msl::compile_file(sources, gen_file, opts);
        let mut sources = c.sources;
        let remap = self.add_user_files(&mut sources, gen_file, generated);
        let diagnostics: Vec<Diagnostic> = c.diagnostics.items.iter().map(|d| self.remap_diag(&remap, d, generated, specs, call)).collect();
        let Some(program) = c.program.as_ref() else {
            return Err(MlxError::Compile { sources, diagnostics, generated: Box::new(generated.clone()) });
        };
        let Some((kid, _)) = program.kernel(&generated.kernel_name) else {
            let d = Diagnostic::error(
                Span::new(gen_file, generated.source_offset as u32, generated.source_offset as u32),
                format!("the generated source has no kernel named `{}`", generated.kernel_name),
            )
            .note("this should not happen; please report it with the generated source (verbose=True)");
            return Err(MlxError::Compile { sources, diagnostics: vec![d], generated: Box::new(generated.clone()) });
        };
        let lower_options = gpu::lower::LowerOptions { statement_marks: call.profile || call.nan, debug_stops: call.stops.is_some() };
        match gpu::lower::lower_kernel_with(program, kid, lower_options) {
            Ok(kernel) => Ok(Compiled { sources, diagnostics, kernel, remap }),
            Err(e) => {
                let d = e.to_diagnostic();
                let d = self.remap_diag(&remap, &d, generated, specs, call);
                Err(MlxError::Compile { sources, diagnostics: vec![d], generated: Box::new(generated.clone()) })
            }
        }
    }

    /// `requests` placed in the body as the user's file numbers its lines.
    fn probes(&self, g: &Generated, requests: &[msl::probe::ProbeRequest]) -> msl::probe::Probes {
        let (name, first_line) = match &self.source_file {
            Some(f) => (f.name.clone(), 1 + f.text.get(..f.offset).unwrap_or("").matches('\n').count() as u32),
            None => (format!("{}.metal", self.name), 1),
        };
        let base = g.source_offset as u32;
        let view = msl::probe::MainView { name, lo: base + g.body_range.start as u32, hi: base + g.body_range.end as u32, first_line };
        msl::probe::Probes { requests: requests.to_vec(), view: Some(view) }
    }

    fn add_user_files(&self, sources: &mut SourceMap, gen_file: FileId, g: &Generated) -> Remap {
        let body = self.source_file.clone().unwrap_or_else(|| UserFile {
            name: format!("{}.metal", self.name),
            text: self.source.clone(),
            offset: 0,
        });
        let header = self.header_file.clone().unwrap_or_else(|| UserFile {
            name: format!("{}_header.metal", self.name),
            text: self.header.clone(),
            offset: 0,
        });
        let base = g.source_offset as u32;
        let mut pieces = Vec::new();
        let body_id = sources.add(body.name.clone(), body.text.clone());
        pieces.push(((base + g.body_range.start as u32)..(base + g.body_range.end as u32), body_id, body.offset as u32, true));
        if !self.header.is_empty() {
            let header_id = if header.name == body.name && header.text == body.text {
                body_id
            } else {
                sources.add(header.name.clone(), header.text.clone())
            };
            pieces.push(((base + g.header_range.start as u32)..(base + g.header_range.end as u32), header_id, header.offset as u32, false));
        }
        Remap { generated: gen_file, pieces, source_offset: base, signature_end: base + g.body_range.start as u32 }
    }

    fn remap_diag(&self, remap: &Remap, d: &Diagnostic, g: &Generated, specs: &[InputSpec], call: &Call) -> Diagnostic {
        let mut d = d.clone();
        let (span, w) = remap.span(d.span);
        // What the message and the code under the caret mention.
        let snippet_src = match d.span.file == remap.generated {
            true => {
                // The whole line(s) the caret is on.
                let text = &g.full_source;
                let lo = (d.span.lo as usize).min(text.len());
                let hi = (d.span.hi as usize).clamp(lo, text.len());
                let start = text[..lo].rfind('\n').map_or(0, |p| p + 1);
                let end = text[hi..].find('\n').map_or(text.len(), |p| hi + p);
                format!("{} {}", d.message, text.get(start..end).unwrap_or(""))
            }
            false => d.message.clone(),
        };
        d.span = span;
        for l in &mut d.secondary {
            l.span = remap.span(l.span).0;
        }
        // An unclosed `{` in the body surfaces at the end of the generated
        // code: point at the learner's brace instead.
        if w == Where::Generated && d.code == Some(codes::EXPECTED_CLOSING_BRACE) {
            let body_at = g.source_offset + g.body_range.start;
            let body = g.full_source.get(body_at..g.source_offset + g.body_range.end).unwrap_or("");
            if let Some(open) = last_unclosed_brace(body) {
                let at = (body_at + open) as u32;
                let (brace, bw) = remap.span(Span::new(remap.generated, at, at + 1));
                if bw == Where::User {
                    return Diagnostic::error(brace, "this `{` is never closed: the body ends before its `}`")
                        .label("opened here")
                        .help("add the missing `}` (MLX adds only the kernel's own closing brace after your body)");
                }
            }
        }
        match w {
            Where::Generated => {
                d.notes.push(format!("this is in the code MLX generates after your body (the closing brace or the explicit template instantiation of `{}`); see it with verbose=True or --print-source", g.kernel_name));
            }
            Where::Signature => {
                d.notes.push(format!("this is in the signature MLX generates for `{}` from the inputs, outputs, template arguments and the attributes your body mentions (see it with verbose=True or --print-source)", g.kernel_name));
            }
            Where::Preamble => d.notes.push("this is in MLX's preamble (the helpers every custom kernel gets)".into()),
            _ => {}
        }
        if g.signature_quirk && d.is_error() {
            d.notes.push(
                "this is a known MLX quirk: with two or more outputs, a NAME_shape/NAME_strides/NAME_ndim buffer and no thread attribute, MLX closes the parameter list too early and the source cannot compile; mention an attribute such as thread_position_in_grid in the body".into(),
            );
        }
        if d.is_error() {
            // Explain template parameter kinds and names.
            for (n, a) in &call.template {
                if mentions(&snippet_src, n) {
                    d.notes.push(format!(
                        "template parameter `{n}` is declared `{} {n}` because its value is {}; MLX picks the kind from the value (a dtype → typename, an integer → int, a bool → bool)",
                        a.kind(),
                        match a {
                            TemplateArg::DType(t) => format!("the dtype {}", t.mlx_name()),
                            TemplateArg::Int(i) => format!("the integer {i}"),
                            TemplateArg::Bool(b) => format!("the bool {b}"),
                        }
                    ));
                }
            }
            let unknown = matches!(d.code, Some(codes::UNKNOWN_TYPE | codes::UNDECLARED_NAME));
            if let Some(name) = d.subject.clone().filter(|n| unknown && gen::is_identifier(n)) {
                let known =
                    call.template.iter().any(|(n, _)| *n == name) || self.input_names.contains(&name) || self.output_names.contains(&name);
                if !known && w == Where::User && name.len() <= 3 && name.chars().next().is_some_and(|c| c.is_ascii_uppercase()) {
                    d.help.push(if self.templates {
                        format!("if `{name}` is meant to be a template parameter, pass it in the call's template (template=[(\"{name}\", mx.float32)], or --template {name}=float32)")
                    } else {
                        format!("the book passes no template arguments: declare `{name}` yourself (a type with `typedef float {name};`, a number with `constant uint {name} = 4;`), or use the sizes MLX passes, such as `a_shape[0]`")
                    });
                }
            }
            for (n, spec) in self.input_names.iter().zip(specs) {
                if mentions(&snippet_src, n) {
                    d.notes.push(format!(
                        "input `{n}` is {} of shape {:?}, so MLX declares it `const {} {}{} {n}`",
                        spec.dtype.mlx_name(),
                        spec.shape,
                        if spec.is_constant() { "constant" } else { "device" },
                        spec.dtype.metal_type(),
                        if spec.is_scalar() { "&" } else { "*" }
                    ));
                }
            }
            for (n, dt) in self.output_names.iter().zip(&call.output_dtypes) {
                if mentions(&snippet_src, n) {
                    d.notes.push(format!(
                        "output `{n}` is {}, so MLX declares it `device {}* {n}`",
                        dt.mlx_name(),
                        if self.atomic_outputs { format!("atomic<{}>", dt.metal_type()) } else { dt.metal_type().to_string() }
                    ));
                }
            }
        }
        d
    }
}

/// Whether `text` mentions `name` as a whole word.
fn mentions(text: &str, name: &str) -> bool {
    let b = text.as_bytes();
    let is_word = |c: u8| c == b'_' || c.is_ascii_alphanumeric();
    let mut start = 0;
    while let Some(p) = text[start..].find(name) {
        let lo = start + p;
        let hi = lo + name.len();
        if (lo == 0 || !is_word(b[lo - 1])) && (hi >= b.len() || !is_word(b[hi])) {
            return true;
        }
        start = hi;
    }
    false
}

/// The first `identifier` in backticks in a message.
/// Byte offset of the last `{` in `text` that no `}` closes (comments,
/// strings and character literals skipped).
fn last_unclosed_brace(text: &str) -> Option<usize> {
    let b = text.as_bytes();
    let mut open: Vec<usize> = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i + 1 < b.len() && !(b[i] == b'*' && b[i + 1] == b'/') {
                    i += 1;
                }
                i += 1;
            }
            q @ (b'"' | b'\'') => {
                i += 1;
                while i < b.len() && b[i] != q {
                    if b[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
            }
            b'{' => open.push(i),
            b'}' => {
                open.pop();
            }
            _ => {}
        }
        i += 1;
    }
    open.pop()
}
