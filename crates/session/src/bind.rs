//! Values for a kernel's buffer parameters: by name (`run --arg`, test
//! specs, the Rust builder) or by position as `torch.mps.compile_shader`
//! passes them (argument k to `[[buffer(k)]]`, Python scalars as PyTorch
//! sends them).

use arrays::{Array, DType};
use gpu::ir::ParamKind;
use msl::types::{Scalar, Type, TypeTables};
use std::collections::BTreeMap;

/// A value given for a parameter by name, before it meets its type: JSON
/// is laid out only once the parameter's type is known.
#[derive(Clone, Debug)]
pub enum Value {
    Array(Array),
    Json(serde_json::Value),
}

/// One positional argument, as PyTorch sends it.
#[derive(Clone, Debug)]
pub enum Arg {
    /// A tensor/array: bound whole, writes land in it.
    Array(Array),
    /// A Python int: 8 bytes, int64.
    Int(i64),
    /// A Python float: 4 bytes, float32.
    Float(f64),
    /// A Python bool: 1 byte.
    Bool(bool),
    /// A list of Python ints: int64 each.
    Ints(Vec<i64>),
    /// A list of Python floats: float32 each.
    Floats(Vec<f64>),
}

/// One bound buffer.
#[derive(Clone, Debug)]
pub struct Bound {
    pub name: String,
    /// Its `[[buffer(index)]]`.
    pub index: u32,
    /// The value as given (outputs come back with its dtype and shape).
    pub array: Array,
    /// The bytes the kernel sees.
    pub bytes: Vec<u8>,
    /// A non-`const` `device` pointer: the kernel may write it.
    pub writable: bool,
    /// The argument's position (positional binding).
    pub position: Option<usize>,
}

impl Bound {
    /// The buffer's bytes after the run, as an array like the one given.
    pub fn read_back(&self, bytes: Vec<u8>) -> Result<Array, String> {
        Array::from_bytes(self.array.dtype, &self.array.shape, bytes)
    }
}

/// Every bound buffer of one call, and what binding had to say.
#[derive(Clone, Debug, Default)]
pub struct Bindings {
    pub items: Vec<Bound>,
    /// Values the kernel reads differently from how they were given (a
    /// Python int into a `constant float&`...): the run goes on, as on a Mac.
    pub warnings: Vec<String>,
}

impl Bindings {
    /// The buffers' bytes by index, which a run's copies are made from
    /// (the run may then write outputs in place: `gpu::Pristine`).
    pub fn pristine(&self) -> gpu::Pristine<'_> {
        self.items.iter().map(|b| (b.index, &b.bytes[..])).collect()
    }
}

/// A stable seed per parameter name, so generated inputs differ between
/// parameters but not between runs.
pub fn name_seed(name: &str) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ b as u64).wrapping_mul(0x100_0000_01b3))
}

/// JSON files for arguments are small; refuse anything that could exhaust memory.
const MAX_JSON_BYTES: u64 = 64 << 20;

fn read_json(path: &str) -> Result<serde_json::Value, String> {
    let text = files::read_text(Path::new(path), MAX_JSON_BYTES, "the JSON argument")
        .map_err(|e| format!("{e} (use a .npy for large buffers)"))?;
    serde_json::from_str(&text).map_err(|e| format!("`{path}` is not valid JSON: {e}"))
}

/// A value written as `run --arg` takes it: `@file.npy` (a record array
/// becomes JSON), `@file.json`, inline JSON, `VALUE:DTYPE` or
/// `GEN(SHAPE):DTYPE` (generated with a seed from the name), within the
/// whole budget of a dispatch's buffers.
pub fn parse_value(name: &str, spec: &str) -> Result<Value, String> {
    parse_value_within(name, spec, arrays::MAX_TOTAL_BUFFER_BYTES)
}

/// [`parse_value`] with `room` bytes left in the dispatch's buffer budget
/// (checked before a file is read or an array generated).
pub fn parse_value_within(name: &str, spec: &str, room: usize) -> Result<Value, String> {
    if spec.trim_start().starts_with(['{', '[']) {
        return serde_json::from_str(spec).map(Value::Json).map_err(|e| format!("parameter `{name}`: `{spec}` is not valid JSON: {e}"));
    }
    if let Some(path) = spec.strip_prefix('@').filter(|p| p.ends_with(".json")) {
        return read_json(path).map(Value::Json).map_err(|e| format!("parameter `{name}`: {e}"));
    }
    if let Some(path) = spec.strip_prefix('@') {
        return load_npy_within(name, Path::new(path), room);
    }
    arrays::parse_value_within(spec, name_seed(name), room).map(Value::Array).map_err(|e| format!("parameter `{name}`: {e}"))
}

/// The bytes a value takes in the dispatch's buffer budget.
pub fn value_bytes(v: &Value) -> usize {
    match v {
        Value::Array(a) => a.nbytes(),
        _ => 0,
    }
}

use std::path::Path;

/// A `.npy` file as a value (a record array becomes JSON matched by field name).
pub fn load_npy(name: &str, path: &Path) -> Result<Value, String> {
    load_npy_within(name, path, arrays::MAX_TOTAL_BUFFER_BYTES)
}

fn load_npy_within(name: &str, path: &Path, room: usize) -> Result<Value, String> {
    let cannot = |e: String| format!("parameter `{name}`: cannot load `{}`: {e}", path.display());
    let bytes = read_npy_bytes(path, room).map_err(cannot)?;
    if arrays::is_record_npy(&bytes) {
        Ok(Value::Json(arrays::records_from_npy_bytes(&bytes).map_err(cannot)?))
    } else {
        Ok(Value::Array(Array::from_npy_bytes(&bytes).map_err(cannot)?))
    }
}

/// A `.npy` file's bytes, read only while they fit in `room`, what is left
/// of the dispatch's buffer budget.
pub fn read_npy_bytes(path: &Path, room: usize) -> Result<Vec<u8>, String> {
    let why = format!(" left (all buffers of a dispatch together may take {} bytes)", arrays::MAX_TOTAL_BUFFER_BYTES);
    files::read_bytes_within(path, room as u64, "the array", &why)
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
    // A byte pointer (`device const char* src0`, as llama.cpp's kernels
    // take every tensor) addresses raw bytes: any array is its bytes, as
    // any MTLBuffer is.
    let bytes_view = matches!(pointee, Type::Scalar(Scalar::Char | Scalar::UChar));
    let ok_dtype = bytes_view
        || match want {
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

/// A kernel's buffer parameter, as binding sees it.
struct Param<'k> {
    name: &'k str,
    index: u32,
    pointee: &'k Type,
    size: u32,
    writable: bool,
    by_reference: bool,
}

fn buffer_params(kernel: &gpu::Kernel) -> Vec<Param<'_>> {
    kernel
        .params
        .iter()
        .filter_map(|p| match &p.kind {
            ParamKind::Buffer { index, pointee, pointee_size, writable, by_reference, .. } => {
                Some(Param { name: &p.name, index: *index, pointee, size: *pointee_size, writable: *writable, by_reference: *by_reference })
            }
            _ => None,
        })
        .collect()
}

/// Bind values by parameter name: every buffer parameter needs one, and
/// every value names one.
pub fn by_name(kernel: &gpu::Kernel, tables: &TypeTables, values: Vec<(String, Value)>) -> Result<Bindings, String> {
    let kname = &kernel.name;
    let mut given: BTreeMap<String, Value> = BTreeMap::new();
    for (name, v) in values {
        if given.insert(name.clone(), v).is_some() {
            return Err(format!("parameter `{name}` is bound twice"));
        }
    }
    for p in &kernel.params {
        if matches!(p.kind, ParamKind::Attr { .. }) && given.contains_key(&p.name) {
            return Err(format!("parameter `{}` is a thread-position attribute; the simulator supplies it, do not bind it", p.name));
        }
    }
    let mut out = Bindings::default();
    for p in buffer_params(kernel) {
        let Some(value) = given.remove(p.name) else {
            return Err(format!(
                "kernel `{kname}` needs a value for its buffer parameter `{}` (`{}`): add --arg {}=@file.npy or {}={}",
                p.name,
                tables.display(p.pointee),
                p.name,
                p.name,
                if p.by_reference { "VALUE:DTYPE" } else { "zeros(N):DTYPE" }
            ));
        };
        let array = match value {
            Value::Array(a) => a,
            Value::Json(v) => {
                let bytes = mlx::json_args::json_to_bytes(&v, p.pointee, tables, !p.by_reference, p.name)?;
                // Laid out as the pointee: a list for `float*` is floats.
                match p.pointee {
                    Type::Scalar(s) if s.size() > 0 && bytes.len() % s.size() as usize == 0 => {
                        Array::from_bytes(scalar_dtype(*s), &[bytes.len() / s.size() as usize], bytes)?
                    }
                    _ => Array::from_bytes(DType::U8, &[bytes.len()], bytes)?,
                }
            }
        };
        let bytes = buffer_bytes(p.name, &array, p.pointee, p.size, tables)?;
        // A reference (`constant long2&`, `constant Params&`) is one value:
        // a scalar, or the elements (or raw bytes) of one vector, array or struct.
        if p.by_reference && bytes.len() != p.size as usize {
            return Err(format!(
                "parameter `{}` is a single `{}` ({} bytes), but {} values ({} bytes) were given",
                p.name,
                tables.display(p.pointee),
                p.size,
                array.len(),
                bytes.len()
            ));
        }
        out.items.push(Bound { name: p.name.to_string(), index: p.index, array, bytes, writable: p.writable, position: None });
    }
    if let Some((extra, _)) = given.iter().next() {
        let names: Vec<&str> = buffer_params(kernel).iter().map(|p| p.name).collect();
        return Err(format!("kernel `{kname}` has no buffer parameter named `{extra}`; its buffer parameters are: {}", names.join(", ")));
    }
    Ok(out)
}

impl Arg {
    /// The bytes PyTorch sends for this argument.
    pub fn bytes(&self) -> Vec<u8> {
        match self {
            Arg::Array(a) => a.contiguous_bytes(),
            Arg::Int(i) => i.to_le_bytes().to_vec(),
            Arg::Float(f) => (*f as f32).to_le_bytes().to_vec(),
            Arg::Bool(b) => vec![*b as u8],
            Arg::Ints(v) => v.iter().flat_map(|i| i.to_le_bytes()).collect(),
            Arg::Floats(v) => v.iter().flat_map(|f| (*f as f32).to_le_bytes()).collect(),
        }
    }

    /// The argument as an array of what is sent (int64, float32, bool).
    pub fn to_array(&self) -> Array {
        let n = |len: usize| vec![len];
        match self {
            Arg::Array(a) => a.clone(),
            Arg::Int(i) => Array::from_i64(DType::I64, &[], &[*i]).expect("one element"),
            Arg::Float(f) => Array::scalar_f64(DType::F32, *f),
            Arg::Bool(b) => Array::scalar_f64(DType::Bool, if *b { 1.0 } else { 0.0 }),
            Arg::Ints(v) => Array::from_i64(DType::I64, &n(v.len()), v).expect("one value per element"),
            Arg::Floats(v) => Array::from_f64(DType::F32, &n(v.len()), v).expect("one value per element"),
        }
    }

    /// The values as Python has them (for comparing with what the kernel reads).
    fn python_values(&self) -> Option<Vec<f64>> {
        match self {
            Arg::Array(_) => None,
            Arg::Int(i) => Some(vec![*i as f64]),
            Arg::Float(f) => Some(vec![*f]),
            Arg::Bool(b) => Some(vec![*b as u8 as f64]),
            Arg::Ints(v) => Some(v.iter().map(|&i| i as f64).collect()),
            Arg::Floats(v) => Some(v.clone()),
        }
    }

    /// How this argument travels, for messages.
    fn sent_as(&self) -> String {
        match self {
            Arg::Array(a) => format!("an array of {} {} ({} bytes)", a.len(), a.dtype.mlx_name(), a.nbytes()),
            Arg::Int(i) => format!("the Python int {i}, sent as an 8-byte int64 as PyTorch does"),
            Arg::Float(f) => format!("the Python float {f}, sent as a 4-byte float32 as PyTorch does"),
            Arg::Bool(b) => format!("the Python bool {b}, sent as 1 byte"),
            Arg::Ints(v) => format!("a list of {} Python ints, sent as int64 ({} bytes) as PyTorch does", v.len(), v.len() * 8),
            Arg::Floats(v) => format!("a list of {} Python floats, sent as float32 ({} bytes) as PyTorch does", v.len(), v.len() * 4),
        }
    }
}

/// Read `count` elements of scalar type `s` from `bytes` as a GPU would
/// (missing bytes read as 0).
fn read_scalars(bytes: &[u8], s: Scalar, count: usize) -> Vec<f64> {
    let size = s.size() as usize;
    (0..count)
        .map(|i| {
            let mut b = [0u8; 8];
            let start = (i * size).min(bytes.len());
            let end = (start + size).min(bytes.len());
            b[..end - start].copy_from_slice(&bytes[start..end]);
            match s {
                Scalar::Bool => (b[0] != 0) as u8 as f64,
                Scalar::Char => b[0] as i8 as f64,
                Scalar::UChar => b[0] as f64,
                Scalar::Short => i16::from_le_bytes([b[0], b[1]]) as f64,
                Scalar::UShort => u16::from_le_bytes([b[0], b[1]]) as f64,
                Scalar::Int => i32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f64,
                Scalar::UInt => u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f64,
                Scalar::Long => i64::from_le_bytes(b) as f64,
                Scalar::ULong => u64::from_le_bytes(b) as f64,
                Scalar::Half => half::f16::from_le_bytes([b[0], b[1]]).to_f64(),
                Scalar::BFloat => half::bf16::from_le_bytes([b[0], b[1]]).to_f64(),
                Scalar::Float => f32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f64,
            }
        })
        .collect()
}

/// Scalars per value of `t` when `t` is a scalar, vector or array of one scalar type.
fn scalar_count(t: &Type) -> Option<(Scalar, usize)> {
    match t {
        Type::Scalar(s) => Some((*s, 1)),
        Type::Vector { elem, len, .. } => Some((*elem, *len as usize)),
        Type::Array { elem, len } => scalar_count(elem).map(|(s, n)| (s, n * *len as usize)),
        _ => None,
    }
}

fn show_values(v: &[f64]) -> String {
    let shown: Vec<String> = v.iter().take(8).map(|x| format!("{x}")).collect();
    if v.len() == 1 {
        shown[0].clone()
    } else {
        format!("({}{})", shown.join(", "), if v.len() > 8 { ", …" } else { "" })
    }
}

/// Bind arguments by position (`torch.mps.compile_shader`): argument k to
/// `[[buffer(k)]]`. Arrays and tensors are bound whole. Python scalars and
/// lists travel as PyTorch sends them (ints as int64, floats as float32);
/// a `constant T&` reads the first bytes of them as its own type, as on a
/// Mac, with a warning when that is not the value that was passed.
pub fn positional(kernel: &gpu::Kernel, tables: &TypeTables, args: &[Arg]) -> Result<Bindings, String> {
    let kname = &kernel.name;
    let params = buffer_params(kernel);
    if let Some(p) = params.iter().find(|p| p.index as usize >= args.len()) {
        return Err(format!(
            "kernel `{kname}` reads its parameter `{}` from [[buffer({})]], but only {} argument{} passed (argument k is bound to [[buffer(k)]]); pass one argument per buffer, in index order",
            p.name,
            p.index,
            args.len(),
            if args.len() == 1 { " was" } else { "s were" }
        ));
    }
    let mut out = Bindings::default();
    for (k, arg) in args.iter().enumerate() {
        // An argument no parameter reads: PyTorch binds it anyway; the kernel never looks at it.
        let Some(p) = params.iter().find(|p| p.index as usize == k) else { continue };
        let shown = tables.display(p.pointee);
        let is_array = matches!(arg, Arg::Array(_));
        if p.writable && !is_array {
            return Err(format!(
                "argument {k} is bound to `{}` (`device {shown}*`), which the kernel may write, but {} was passed; pass a tensor/array to receive the result",
                p.name,
                arg.sent_as()
            ));
        }
        let bytes = match arg {
            Arg::Array(a) if !p.by_reference => {
                buffer_bytes(p.name, a, p.pointee, p.size, tables).map_err(|e| format!("argument {k}: {e}"))?
            }
            other => other.bytes(),
        };
        if p.by_reference || !is_array {
            check_read(k, p, &shown, arg, &bytes, tables, &mut out.warnings)?;
        }
        out.items.push(Bound {
            name: p.name.to_string(),
            index: p.index,
            array: arg.to_array(),
            bytes,
            writable: p.writable,
            position: Some(k),
        });
    }
    Ok(out)
}

/// What a parameter read from raw bytes will see, compared with what was
/// passed: a warning when they differ (the run goes on, as on a Mac); an
/// error when fewer bytes were passed than one value needs.
fn check_read(
    k: usize,
    p: &Param,
    shown: &str,
    arg: &Arg,
    bytes: &[u8],
    tables: &TypeTables,
    warnings: &mut Vec<String>,
) -> Result<(), String> {
    let size = p.size as usize;
    let what = if p.by_reference { format!("`constant {shown}& {}`", p.name) } else { format!("`{shown}* {}`", p.name) };
    if p.by_reference && bytes.len() < size {
        return Err(format!(
            "argument {k} is {}, but {what} at [[buffer({})]] reads {size} bytes: a Mac would read past the end of it; pass {}",
            arg.sent_as(),
            p.index,
            suggestion(p.pointee, tables)
        ));
    }
    let Some(given) = arg.python_values() else {
        // An array bound to a `constant T&`: its bytes are read as one T.
        if let Arg::Array(a) = arg {
            let want = element_scalar(p.pointee, tables).map(scalar_dtype);
            let read = scalar_count(p.pointee).map(|(s, n)| read_scalars(bytes, s, n));
            // (another dtype whose bytes read as the same values, e.g. int32 for `uint2`, is fine)
            let differs = read.as_ref().is_none_or(|r| *r != a.to_f64_vec());
            if want.is_some_and(|w| w != a.dtype && !(w == DType::BF16 && a.dtype == DType::U16)) && a.dtype != DType::U8 && differs {
                warnings.push(format!(
                    "argument {k} is {}, but {what} reads its bytes as `{shown}`{}",
                    arg.sent_as(),
                    read.map(|r| format!(": it sees {}", show_values(&r))).unwrap_or_default()
                ));
            } else if bytes.len() > size {
                warnings.push(format!("argument {k} is {}, but {what} reads only its first {size} bytes", arg.sent_as()));
            }
        }
        return Ok(());
    };
    let Some((scalar, count)) = scalar_count(p.pointee) else {
        // A struct: its fields are read from the bytes as laid out.
        if bytes.len() != size && p.by_reference {
            warnings.push(format!("argument {k} is {}, but {what} is {size} bytes: it reads only the first {size}", arg.sent_as()));
        }
        return Ok(());
    };
    let count = if p.by_reference { count } else { bytes.len() / scalar.size().max(1) as usize };
    let read = read_scalars(bytes, scalar, count);
    let same = read.len() == given.len()
        && read.iter().zip(&given).all(|(r, g)| r == g || (scalar.is_float() && (*g as f32 as f64 == *r || (r.is_nan() && g.is_nan()))));
    if !same {
        warnings.push(format!(
            "argument {k} is {}; {what} reads {} from those bytes as a Mac does, not {}: pass {}",
            arg.sent_as(),
            show_values(&read),
            show_values(&given),
            suggestion(p.pointee, tables)
        ));
    }
    Ok(())
}

/// How to pass a value of `t` so that the kernel reads what was meant.
fn suggestion(t: &Type, tables: &TypeTables) -> String {
    match t {
        Type::Scalar(s) if s.is_float() && *s == Scalar::Float => "a Python float (sent as float32)".into(),
        Type::Scalar(Scalar::Long) => "a Python int (sent as int64)".into(),
        _ => match element_scalar(t, tables) {
            Some(s) => format!(
                "a tensor or array of dtype {} with the `{}`'s {} bytes (e.g. torch.tensor([...], dtype=torch.{}))",
                scalar_dtype(s).mlx_name(),
                tables.display(t),
                tables.size_of(t),
                torch_name(scalar_dtype(s))
            ),
            None => format!("a uint8 array of the `{}`'s {} bytes", tables.display(t), tables.size_of(t)),
        },
    }
}

fn torch_name(d: DType) -> &'static str {
    match d {
        DType::Bool => "bool",
        DType::I8 => "int8",
        DType::U8 => "uint8",
        DType::I16 => "int16",
        DType::U16 => "uint16",
        DType::I32 => "int32",
        DType::U32 => "uint32",
        DType::I64 => "int64",
        DType::U64 => "uint64",
        DType::F16 => "float16",
        DType::BF16 => "bfloat16",
        DType::F32 => "float32",
    }
}
