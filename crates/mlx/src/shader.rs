//! `torch.mps.compile_shader`'s route: the user writes a whole Metal
//! source; a kernel is called with positional arguments, argument `k`
//! bound to `[[buffer(k)]]`, and `threads` counts threads
//! (`dispatchThreads`).

use arrays::{Array, DType};
use gpu::ir::ParamKind;
use gpu::{CheckLevel, Dispatch, DispatchMode, RunOptions};
use msl::diag::Diagnostic;
use msl::source::SourceMap;
use msl::types::{Scalar, Type, TypeTables};
use std::collections::BTreeMap;

/// A compiled source and its kernels.
#[derive(Debug)]
pub struct Library {
    pub sources: SourceMap,
    /// The compiled file in `sources`.
    pub file: msl::source::FileId,
    /// Warnings of the compile (errors make [`compile`] fail).
    pub diagnostics: Vec<Diagnostic>,
    program: msl::hir::Program,
}

/// One argument of a call.
#[derive(Clone, Debug)]
pub enum Arg {
    /// A tensor/array: bound whole (a one-element one may back a scalar).
    Array(Array),
    /// A Python int: sent as a 64-bit integer.
    Int(i64),
    /// A Python float: sent as a 32-bit float.
    Float(f64),
    /// A Python bool: sent as one byte.
    Bool(bool),
}

/// The arguments of one call.
#[derive(Clone, Debug)]
pub struct ShaderCall {
    pub args: Vec<Arg>,
    /// Total threads per dimension (`None`: the first array's element count).
    pub threads: Option<[u32; 3]>,
    /// Threads per threadgroup (`None`: `min(threads.x, 1024)`).
    pub group_size: Option<[u32; 3]>,
    pub check: CheckLevel,
    pub budget: Option<u64>,
    pub cancel: Option<gpu::Cancel>,
}

/// What a call produced.
#[derive(Debug)]
pub struct ShaderResult {
    /// The new contents of every array argument the kernel may write
    /// (`None` for read-only arguments and scalars), in argument order.
    pub written: Vec<Option<Array>>,
    pub report: gpu::RunReport,
    /// How it was dispatched and run (for captures).
    pub dispatch: Dispatch,
    pub options: RunOptions,
}

impl Arg {
    /// The array this argument is bound as (a Python int as a 64-bit
    /// integer, a float as a 32-bit float, a bool as one byte).
    pub fn to_array(&self) -> Result<Array, String> {
        match self {
            Arg::Array(a) => Ok(a.clone()),
            Arg::Int(i) => Array::from_i64(DType::I64, &[], &[*i]),
            Arg::Float(f) => Ok(Array::scalar_f64(DType::F32, *f)),
            Arg::Bool(b) => Ok(Array::scalar_f64(DType::Bool, if *b { 1.0 } else { 0.0 })),
        }
    }
}

/// Compile a whole Metal source; on errors, the rendered diagnostics and
/// the source map they point into.
pub fn compile(file_name: &str, source: &str) -> Result<Library, (SourceMap, Vec<Diagnostic>)> {
    let c = msl::compile(file_name, source, &msl::CompileOptions::default());
    match c.program {
        Some(program) if !c.diagnostics.has_errors() => {
            Ok(Library { sources: c.sources, file: c.file, diagnostics: c.diagnostics.items, program })
        }
        _ => Err((c.sources, c.diagnostics.items)),
    }
}

/// The dtype of memory holding `s`.
pub fn scalar_dtype(s: Scalar) -> DType {
    match s {
        Scalar::Bool => DType::Bool,
        Scalar::Char => DType::I8,
        Scalar::UChar => DType::U8,
        Scalar::Short => DType::I16,
        Scalar::UShort => DType::U16,
        Scalar::Int => DType::I32,
        Scalar::UInt => DType::U32,
        Scalar::Long => DType::I64,
        Scalar::ULong => DType::U64,
        Scalar::Half => DType::F16,
        Scalar::BFloat => DType::BF16,
        Scalar::Float => DType::F32,
    }
}

/// The element scalar of a buffer's pointee (through atomics, vectors, arrays, structs).
pub fn element_scalar(t: &Type, tables: &TypeTables) -> Option<Scalar> {
    match t {
        Type::Scalar(s) | Type::Atomic(s) => Some(*s),
        Type::Vector { elem, .. } | Type::Matrix { elem, .. } => Some(*elem),
        Type::Array { elem, .. } => element_scalar(elem, tables),
        Type::Enum(id) => Some(tables.enum_def(*id).underlying),
        Type::Struct(id) => {
            let fields = &tables.struct_def(*id).fields;
            let first = element_scalar(&fields.first()?.ty, tables)?;
            fields.iter().all(|f| element_scalar(&f.ty, tables) == Some(first)).then_some(first)
        }
        _ => None,
    }
}

/// Check that `a` may back a buffer of `pointee` and return its bytes.
pub fn buffer_bytes(name: &str, a: &Array, pointee: &Type, pointee_size: u32, tables: &TypeTables) -> Result<Vec<u8>, String> {
    let shown = tables.display(pointee);
    let want = element_scalar(pointee, tables).map(scalar_dtype);
    let ok_dtype = match want {
        Some(DType::BF16) => matches!(a.dtype, DType::BF16 | DType::U16),
        Some(w) => a.dtype == w || a.dtype == DType::U8 && !matches!(pointee, Type::Scalar(_) | Type::Atomic(_)),
        None => a.dtype == DType::U8,
    };
    if !ok_dtype {
        let expect = match want {
            Some(DType::BF16) => "uint16 (bfloat16 bit patterns) or bfloat16".to_string(),
            Some(w) if matches!(pointee, Type::Scalar(_) | Type::Atomic(_)) => w.mlx_name().to_string(),
            Some(w) => format!("{} (or raw uint8 bytes)", w.mlx_name()),
            None => "uint8 (raw bytes)".into(),
        };
        return Err(format!("parameter `{name}` points to `{shown}`, so its array must have dtype {expect}, not {}", a.dtype.mlx_name()));
    }
    let bytes = a.contiguous_bytes();
    if pointee_size > 0 && bytes.len() % pointee_size as usize != 0 {
        return Err(format!(
            "parameter `{name}` points to `{shown}` ({pointee_size} bytes each), but its array has {} bytes, which is not a whole number of elements",
            bytes.len()
        ));
    }
    Ok(bytes)
}

impl Library {
    /// The struct and enum tables the kernels' types refer to.
    pub fn types(&self) -> &TypeTables {
        &self.program.types
    }

    /// The names kernels are called by (their `[[host_name]]` or function name).
    pub fn kernel_names(&self) -> Vec<String> {
        self.program.kernels().filter_map(|(_, f)| f.host_name.clone()).collect()
    }

    /// Lower kernel `name` for the simulator.
    pub fn kernel(&self, name: &str) -> Result<gpu::Kernel, String> {
        let Some((kid, _)) = self.program.kernel(name) else {
            let names = self.kernel_names();
            return Err(format!(
                "the library has no kernel named `{name}`; its kernels are: {}",
                if names.is_empty() { "(none)".into() } else { names.join(", ") }
            ));
        };
        gpu::lower::lower_kernel(&self.program, kid).map_err(|e| msl::diag::render(&self.sources, &[e.to_diagnostic()], false))
    }

    /// Run `kernel` (from [`Library::kernel`]) with PyTorch's binding rules.
    pub fn call(&self, kernel: &gpu::Kernel, call: &ShaderCall) -> Result<ShaderResult, String> {
        let tables = &self.program.types;
        let kname = &kernel.name;
        let mut by_index: BTreeMap<u32, (&str, &Type, u32, bool, bool)> = BTreeMap::new();
        for p in &kernel.params {
            if let ParamKind::Buffer { index, pointee, pointee_size, writable, by_reference, .. } = &p.kind {
                by_index.insert(*index, (p.name.as_str(), pointee, *pointee_size, *writable, *by_reference));
            }
        }
        if let Some((&i, (name, ..))) = by_index.iter().find(|(&i, _)| i as usize >= call.args.len()) {
            return Err(format!(
                "kernel `{kname}` reads its parameter `{name}` from [[buffer({i})]], but only {} argument{} passed (argument k is bound to [[buffer(k)]]); pass one argument per buffer, in index order",
                call.args.len(),
                if call.args.len() == 1 { " was" } else { "s were" }
            ));
        }
        let mut buffers: BTreeMap<u32, Vec<u8>> = BTreeMap::new();
        let mut outputs: Vec<(usize, u32)> = Vec::new();
        for (k, arg) in call.args.iter().enumerate() {
            let index = k as u32;
            let Some(&(name, pointee, size, writable, by_reference)) = by_index.get(&index) else {
                // PyTorch binds it anyway; the kernel never looks at it.
                continue;
            };
            let shown = tables.display(pointee);
            let array = arg.to_array().map_err(|e| format!("argument {k}: {e}"))?;
            let scalar_note = match arg {
                Arg::Int(_) => " (a Python int is sent as a 64-bit integer, as PyTorch does: declare the parameter `constant long&` or pass a one-element tensor of the parameter's type)",
                Arg::Float(_) => " (a Python float is sent as a 32-bit float: declare the parameter `constant float&` or pass a one-element tensor of its type)",
                Arg::Bool(_) => " (a Python bool is sent as one byte: declare the parameter `constant bool&`)",
                Arg::Array(_) => "",
            };
            if by_reference && array.len() != 1 {
                return Err(format!(
                    "argument {k} is bound to `{name}`, a single `{shown}` at [[buffer({index})]], but it has {} elements; pass a Python scalar or a one-element tensor",
                    array.len()
                ));
            }
            let bytes = buffer_bytes(name, &array, pointee, size, tables).map_err(|e| format!("argument {k}: {e}{scalar_note}"))?;
            if writable && !matches!(arg, Arg::Array(_)) {
                return Err(format!(
                    "argument {k} is bound to `{name}` (`device {shown}*`), which the kernel may write, but a Python scalar was passed; pass a tensor/array to receive the result"
                ));
            }
            if writable {
                outputs.push((k, index));
            }
            buffers.insert(index, bytes);
        }
        let threads = match call.threads {
            Some(t) => t,
            None => {
                let Some(first) = call.args.iter().find_map(|a| if let Arg::Array(a) = a { Some(a) } else { None }) else {
                    return Err("threads: no tensor argument to take the thread count from; pass threads=N".into());
                };
                let n = u32::try_from(first.len().max(1))
                    .map_err(|_| format!("threads: the first tensor has {} elements, too many threads for one dispatch", first.len()))?;
                [n, 1, 1]
            }
        };
        let group = call.group_size.unwrap_or([threads[0].min(gpu::MAX_THREADS_PER_THREADGROUP), 1, 1]);
        let dispatch = Dispatch { grid: threads, threadgroup: group, mode: DispatchMode::Threads };
        let opts = RunOptions {
            check: call.check,
            budget: call.budget.unwrap_or(RunOptions::default().budget),
            cancel: call.cancel.clone(),
            ..Default::default()
        };
        gpu::validate(kernel, &dispatch, &opts).map_err(|e| format!("cannot dispatch `{kname}`: {e}"))?;
        let report = gpu::run(kernel, &dispatch, &mut buffers, &opts);
        let mut written: Vec<Option<Array>> = vec![None; call.args.len()];
        for (k, index) in outputs {
            let Arg::Array(a) = &call.args[k] else { continue };
            let bytes = buffers.remove(&index).unwrap_or_default();
            written[k] = Some(Array::from_bytes(a.dtype, &a.shape, bytes).map_err(|e| format!("argument {k}: {e}"))?);
        }
        Ok(ShaderResult { written, report, dispatch, options: RunOptions { cancel: None, ..opts } })
    }
}

/// The check level for a name (`none`, `memory`, `all`).
pub fn check_level(name: &str) -> Result<CheckLevel, String> {
    match name {
        "none" => Ok(CheckLevel::None),
        "memory" => Ok(CheckLevel::Memory),
        "all" => Ok(CheckLevel::All),
        other => Err(format!("check must be \"none\", \"memory\" or \"all\", not {other:?}")),
    }
}
