//! Capture files: one kernel dispatch saved whole, so that it can be
//! opened later (`metal-puzzles debug FILE`), replayed to see that it
//! reproduces (`metal-puzzles replay FILE`) and carried in a bug report.
//!
//! A capture is a JSON document (`docs/capture-format.md`): a format tag
//! and version, the sources (the main file and the text of every header it
//! included, so it needs no other file), how the kernel was made (a full
//! source and a kernel name, or an MLX `metal_kernel` and its call), the
//! arguments as bound before the run, the dispatch, the run options, and
//! the outputs and findings after the run. The access trace is not stored:
//! the simulator is deterministic, so a replay recomputes it.
//!
//! Captures are bounded: the arrays stored take at most a limit of bytes
//! ([`DEFAULT_LIMIT`]); outputs over it are kept as a checksum only (and the
//! capture says so), and a run whose inputs alone are over it is refused
//! with a message, since a capture without its inputs cannot be replayed.

mod base64;
mod record;
mod replay;
mod summary;

pub use record::{default_path, enabled_by_env, from_mlx, from_mlx_run, from_source, MlxRun, SourceRun, ENV_VAR};
pub use replay::{compare, compile_options, mlx_parts, replay, Comparison, OutputCheck, ReplayError, ReplayOptions, Replayed};
pub use summary::summary;

use arrays::{Array, DType};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The `format` tag of every capture.
pub const FORMAT: &str = "metal-puzzles-capture";
/// The version this simulator writes and reads.
pub const VERSION: u32 = 1;
/// File name extension of captures.
pub const EXTENSION: &str = "mpcapture";
/// Bytes of array data a capture stores by default (inputs and outputs).
pub const DEFAULT_LIMIT: usize = 64 << 20;
/// Largest capture file read (checked before reading it).
pub const MAX_FILE_BYTES: u64 = 512 << 20;
/// Largest array a capture may declare (checked before decoding it).
pub const MAX_ARRAY_BYTES: usize = 1 << 30;
/// Worker threads a capture may ask for (the run caps them by cores too).
pub const MAX_CAPTURE_WORKERS: usize = 1024;
/// Instructions per threadgroup a capture may allow before a kernel counts
/// as runaway (100 times the default): a replayed infinite loop must stop.
pub const MAX_CAPTURE_BUDGET: u64 = 1_000_000_000;

/// One dispatch, saved whole.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Capture {
    pub format: String,
    pub version: u32,
    /// The tool that wrote it (`metal-puzzles 0.1.0`).
    pub made_by: String,
    /// Where the run came from (`metal-puzzles run`, `metal_puzzles.fast.metal_kernel`, …).
    pub origin: String,
    /// What was run, for people (`kernel `add``, `puzzle 2 (Zip), test `Zip``).
    pub title: String,
    pub compile: CompileRecord,
    pub program: Program,
    pub options: Options,
    /// Outputs after the run.
    pub outputs: Vec<ArrayRecord>,
    /// Sanitizer findings of the run.
    pub findings: Vec<FindingRecord>,
    /// What the capture left out (arrays over the limit), for people.
    #[serde(default)]
    pub left_out: Vec<String>,
}

/// How the source was compiled: preprocessor settings and the headers.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct CompileRecord {
    /// `-D` definitions.
    #[serde(default)]
    pub defines: Vec<(String, String)>,
    /// Function constant values, by name or index.
    #[serde(default)]
    pub function_constants: Vec<(String, String)>,
    pub metal_version: u32,
    /// Every `#include` that read a file, as it was resolved.
    #[serde(default)]
    pub headers: Vec<HeaderRecord>,
}

/// One resolved `#include`: the file that asked, the name it wrote and
/// the header it got.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct HeaderRecord {
    pub from: String,
    pub spelled: String,
    pub quoted: bool,
    pub name: String,
    pub text: String,
}

/// A source file (`offset`: where an MLX body or header starts in it).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct FileRecord {
    pub name: String,
    pub text: String,
    #[serde(default)]
    pub offset: usize,
}

/// How the kernel is made and called.
// (one per capture: the variants' sizes do not matter)
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Program {
    /// A full Metal source: kernel `kernel`, arguments bound by parameter
    /// name (`metal-puzzles run`, `compile_shader`).
    Source {
        main: FileRecord,
        kernel: String,
        grid: [u32; 3],
        threadgroup: [u32; 3],
        /// `threads` (dispatchThreads) or `threadgroups`.
        dispatch: String,
        /// Every bound buffer, before the run (`output`: the kernel may write it).
        arguments: Vec<ArrayRecord>,
    },
    /// An MLX custom kernel (`mx.fast.metal_kernel`) and one call of it.
    Mlx {
        name: String,
        input_names: Vec<String>,
        output_names: Vec<String>,
        source: String,
        header: String,
        source_file: FileRecord,
        header_file: Option<FileRecord>,
        ensure_row_contiguous: bool,
        atomic_outputs: bool,
        /// Inputs in order (named by `input_names`).
        inputs: Vec<ArrayRecord>,
        output_shapes: Vec<Vec<usize>>,
        output_dtypes: Vec<String>,
        grid: [u32; 3],
        threadgroup: [u32; 3],
        template: Vec<(String, TemplateValue)>,
        /// `init_value` as text (`"0.0"`, `"NaN"`, `"-inf"`), `null` if none.
        init_value: Option<String>,
    },
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "snake_case")]
pub enum TemplateValue {
    Dtype(String),
    Int(i64),
    Bool(bool),
}

/// The run options that change what a run does.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Options {
    /// `none`, `memory` or `all`.
    pub check: String,
    /// Instructions a threadgroup may run before it counts as runaway.
    pub budget: u64,
    /// Worker threads (0: the simulator picks); racy kernels give the same
    /// result for the same number.
    pub threads: usize,
    /// Atomics applied last lane first (the puzzle book's order).
    #[serde(default)]
    pub atomics_last_lane_first: bool,
}

/// An array: dtype, shape and the data as base64 (`null` when it was over
/// the capture's limit: then only its checksum is kept).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ArrayRecord {
    pub name: String,
    pub dtype: String,
    pub shape: Vec<usize>,
    /// Element strides of a view (`null`: row-major).
    #[serde(default)]
    pub strides: Option<Vec<isize>>,
    /// The kernel may write it (a `run` argument bound to a `device` pointer).
    #[serde(default)]
    pub output: bool,
    /// FNV-1a 64 of the data bytes, as 16 hex digits.
    pub checksum: String,
    /// Size of the data in bytes.
    pub bytes: usize,
    pub data: Option<String>,
}

/// A finding as recorded: where, which thread, how often.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct FindingRecord {
    pub kind: String,
    pub severity: String,
    pub message: String,
    pub file: String,
    pub line: u32,
    pub column: u32,
    pub thread: [u32; 3],
    pub local: [u32; 3],
    pub threadgroup: [u32; 3],
    pub count: u64,
}

/// FNV-1a 64 of `bytes`: enough to tell whether an output changed.
pub fn checksum(bytes: &[u8]) -> String {
    let h = bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| (h ^ b as u64).wrapping_mul(0x100_0000_01b3));
    format!("{h:016x}")
}

impl ArrayRecord {
    /// Record `a` (its data from its first element on, as a buffer binds
    /// it), with the data when `keep`.
    pub fn new(name: &str, a: &Array, output: bool, keep: bool) -> ArrayRecord {
        let (bytes, strides) = view_bytes(a);
        ArrayRecord {
            name: name.to_string(),
            dtype: a.dtype.mlx_name().to_string(),
            shape: a.shape.clone(),
            strides,
            output,
            checksum: checksum(&bytes),
            bytes: bytes.len(),
            data: keep.then(|| base64::encode(&bytes)),
        }
    }

    pub fn dtype(&self) -> Result<DType, String> {
        DType::parse(&self.dtype).map_err(|e| format!("array `{}`: {e}", self.name))
    }

    /// The array, after checking its declared size against its data
    /// (before decoding anything).
    pub fn to_array(&self) -> Result<Array, String> {
        let name = &self.name;
        let dtype = self.dtype()?;
        let Some(text) = &self.data else {
            return Err(format!("array `{name}` was not stored (it was over the capture's size limit; only its checksum is kept)"));
        };
        let n = base64::decoded_len(text).map_err(|e| format!("array `{name}`: {e}"))?;
        if n != self.bytes {
            return Err(format!("array `{name}` declares {} bytes but its data holds {n}: the file is damaged", self.bytes));
        }
        if n > MAX_ARRAY_BYTES {
            return Err(format!("array `{name}` holds {n} bytes, over the limit of {MAX_ARRAY_BYTES} bytes per array"));
        }
        let numel = self
            .shape
            .iter()
            .try_fold(1usize, |n, &d| n.checked_mul(d))
            .ok_or_else(|| format!("array `{name}`: shape {:?} is too large", self.shape))?;
        let size = dtype.size();
        match &self.strides {
            None => {
                let want = numel.checked_mul(size).ok_or_else(|| format!("array `{name}`: shape {:?} is too large", self.shape))?;
                if want != n {
                    return Err(format!(
                        "array `{name}` is {} of shape {:?} ({want} bytes) but holds {n} bytes: the file is damaged",
                        self.dtype, self.shape
                    ));
                }
                let data = base64::decode(text).map_err(|e| format!("array `{name}`: {e}"))?;
                Array::from_bytes(dtype, &self.shape, data).map_err(|e| format!("array `{name}`: {e}"))
            }
            Some(strides) => {
                if strides.len() != self.shape.len() || !n.is_multiple_of(size) {
                    return Err(format!(
                        "array `{name}`: {} strides for {} dimensions, or a partial element",
                        strides.len(),
                        self.shape.len()
                    ));
                }
                // Every element the view reaches must be inside the data.
                if numel > 0 {
                    let elements = (n / size) as i128;
                    let (mut lo, mut hi) = (0i128, 0i128);
                    for (&d, &s) in self.shape.iter().zip(strides) {
                        let reach = (d as i128 - 1) * s as i128;
                        if reach < 0 {
                            lo += reach;
                        } else {
                            hi += reach;
                        }
                    }
                    if lo < 0 || hi >= elements {
                        return Err(format!("array `{name}`: its strides {strides:?} reach outside its data: the file is damaged"));
                    }
                }
                let data = base64::decode(text).map_err(|e| format!("array `{name}`: {e}"))?;
                Ok(Array { dtype, shape: self.shape.clone(), strides: strides.clone(), offset: 0, data: std::sync::Arc::new(data) })
            }
        }
    }
}

/// The bytes a buffer bound to `a` holds (from its first element on) and
/// its strides when it is not a plain row-major array.
fn view_bytes(a: &Array) -> (Vec<u8>, Option<Vec<isize>>) {
    if a.strides.iter().any(|&s| s < 0) {
        // (views with negative strides are copied before binding)
        return (a.contiguous_bytes(), None);
    }
    let start = (a.offset * a.dtype.size()).min(a.data.len());
    let rest = &a.data[start..];
    if a.is_row_contiguous() && rest.len() == a.nbytes() {
        (rest.to_vec(), None)
    } else {
        (rest.to_vec(), Some(a.strides.clone()))
    }
}

impl Capture {
    /// The kernel name, for file names and titles.
    pub fn kernel(&self) -> &str {
        match &self.program {
            Program::Source { kernel, .. } => kernel,
            Program::Mlx { name, .. } => name,
        }
    }

    /// Bytes of array data stored.
    pub fn stored_bytes(&self) -> usize {
        let args = match &self.program {
            Program::Source { arguments, .. } => arguments,
            Program::Mlx { inputs, .. } => inputs,
        };
        args.iter().chain(&self.outputs).filter(|a| a.data.is_some()).map(|a| a.bytes).sum()
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_else(|e| format!("{{\"error\": \"cannot serialize: {e}\"}}"))
    }

    /// Write the capture to `path` (its folder is created).
    pub fn write(&self, path: &Path) -> Result<(), String> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| format!("cannot create `{}`: {e}", dir.display()))?;
        }
        files::write_atomic(path, self.to_json().as_bytes()).map_err(|e| format!("cannot write the capture `{}`: {e}", path.display()))
    }

    /// Read and check a capture file.
    pub fn read(path: &Path) -> Result<Capture, String> {
        let shown = path.display();
        let bytes = files::read_bytes(path, MAX_FILE_BYTES, "the capture")
            .map_err(|e| format!("{e} (a capture's arrays are limited to {DEFAULT_LIMIT} bytes when it is written)"))?;
        Capture::parse(&bytes).map_err(|e| format!("`{shown}` is not a usable capture: {e}"))
    }

    /// Parse and check a capture from its bytes.
    pub fn parse(bytes: &[u8]) -> Result<Capture, String> {
        let value: serde_json::Value = serde_json::from_slice(bytes).map_err(|e| {
            if e.is_eof() {
                format!("the file ends early (line {}, column {}): it was cut short while being written or copied", e.line(), e.column())
            } else {
                format!("it is not valid JSON: {e}")
            }
        })?;
        match value.get("format").and_then(|f| f.as_str()) {
            Some(FORMAT) => {}
            Some(other) => return Err(format!("its format is `{other}`, not `{FORMAT}`")),
            None => return Err(format!("it has no `\"format\": \"{FORMAT}\"` field (is it a capture file?)")),
        }
        match value.get("version").and_then(|v| v.as_u64()) {
            Some(v) if v == VERSION as u64 => {}
            Some(v) => {
                return Err(format!(
                "it is version {v} of the capture format; this metal-puzzles reads version {VERSION} (use the metal-puzzles that wrote it)"
            ))
            }
            None => return Err("it has no `version` field".into()),
        }
        let capture: Capture = serde_json::from_value(value).map_err(|e| format!("a field is missing or has the wrong type: {e}"))?;
        capture.check()?;
        Ok(capture)
    }

    /// Check what the JSON types cannot: names, dtypes, sizes, dims.
    fn check(&self) -> Result<(), String> {
        if !matches!(self.options.check.as_str(), "none" | "memory" | "all") {
            return Err(format!("options.check is `{}`; it must be none, memory or all", self.options.check));
        }
        let (grid, tg) = match &self.program {
            Program::Source { grid, threadgroup, dispatch, arguments, .. } => {
                if !matches!(dispatch.as_str(), "threads" | "threadgroups") {
                    return Err(format!("program.dispatch is `{dispatch}`; it must be threads or threadgroups"));
                }
                for a in arguments {
                    a.dtype()?;
                }
                (grid, threadgroup)
            }
            Program::Mlx { inputs, output_shapes, output_dtypes, template, grid, threadgroup, .. } => {
                for a in inputs {
                    a.dtype()?;
                }
                for d in output_dtypes {
                    DType::parse(d).map_err(|e| format!("an output dtype: {e}"))?;
                }
                for s in output_shapes {
                    arrays::checked_nbytes(DType::I64, s)
                        .ok()
                        .filter(|&n| n <= MAX_ARRAY_BYTES)
                        .ok_or_else(|| format!("an output shape {s:?} is over the limit of {MAX_ARRAY_BYTES} bytes"))?;
                }
                for (n, v) in template {
                    if let TemplateValue::Dtype(d) = v {
                        DType::parse(d).map_err(|e| format!("template `{n}`: {e}"))?;
                    }
                }
                (grid, threadgroup)
            }
        };
        if grid.contains(&0) || tg.contains(&0) {
            return Err(format!("the dispatch (grid {grid:?}, threadgroup {tg:?}) has a zero dimension"));
        }
        // A capture may come from anyone: every size is checked before use.
        let mode = match &self.program {
            Program::Source { dispatch, .. } if dispatch == "threadgroups" => gpu::DispatchMode::Threadgroups,
            _ => gpu::DispatchMode::Threads,
        };
        gpu::check_dispatch(&gpu::Dispatch { grid: *grid, threadgroup: *tg, mode }).map_err(|e| format!("program: {e}"))?;
        if self.options.threads > MAX_CAPTURE_WORKERS {
            return Err(format!(
                "options.threads is {}; a capture may ask for at most {MAX_CAPTURE_WORKERS} worker threads",
                self.options.threads
            ));
        }
        if !(1..=MAX_CAPTURE_BUDGET).contains(&self.options.budget) {
            return Err(format!(
                "options.budget is {}; it must be 1 to {MAX_CAPTURE_BUDGET} instructions per threadgroup",
                self.options.budget
            ));
        }
        let arrays: &[ArrayRecord] = match &self.program {
            Program::Source { arguments, .. } => arguments,
            Program::Mlx { inputs, .. } => inputs,
        };
        let mut total: usize = 0;
        for a in arrays.iter().chain(&self.outputs) {
            a.dtype()?;
            if a.strides.as_ref().is_some_and(|s| s.len() != a.shape.len()) {
                return Err(format!("array `{}`: its strides and shape differ in length", a.name));
            }
            // What decoding will allocate (a damaged `bytes` field is
            // reported, more precisely, when the array is decoded).
            total = total.saturating_add(a.data.as_deref().and_then(|t| base64::decoded_len(t).ok()).unwrap_or(0));
        }
        if let Program::Mlx { output_shapes, output_dtypes, .. } = &self.program {
            for (s, d) in output_shapes.iter().zip(output_dtypes) {
                let d = DType::parse(d).map_err(|e| format!("an output dtype: {e}"))?;
                total = total.saturating_add(arrays::checked_nbytes(d, s).unwrap_or(usize::MAX));
            }
        }
        if total > 2 * arrays::MAX_TOTAL_BUFFER_BYTES {
            return Err(format!(
                "its arrays take {total} bytes; a dispatch's buffers may take {} bytes in all",
                arrays::MAX_TOTAL_BUFFER_BYTES
            ));
        }
        Ok(())
    }
}

/// The check level named in a capture.
pub fn check_level(name: &str) -> gpu::CheckLevel {
    match name {
        "none" => gpu::CheckLevel::None,
        "memory" => gpu::CheckLevel::Memory,
        _ => gpu::CheckLevel::All,
    }
}

pub fn check_name(level: gpu::CheckLevel) -> &'static str {
    match level {
        gpu::CheckLevel::None => "none",
        gpu::CheckLevel::Memory => "memory",
        gpu::CheckLevel::All => "all",
    }
}
