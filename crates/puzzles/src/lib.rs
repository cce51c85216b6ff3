//! The Metal Puzzles book: fourteen GPU puzzles as data, and [`check`],
//! which runs a learner's kernel on the simulated GPU against each puzzle's
//! exact and randomized tests.
//!
//! Seams for other front ends: [`Puzzle`] describes a puzzle completely
//! (inputs, dispatch, header, starter, spec, targets), and [`check()`]
//! returns a [`CheckResult`] holding every run's inputs, outputs, score and
//! findings, which a watch mode or a diagram renderer can use directly.

mod book;
pub mod check;
pub mod explain;
pub mod render;
pub mod show;
mod spec;
pub mod workspace;

use arrays::{Array, DType};

pub use book::PUZZLES;
pub use check::{check, check_file, check_source, CheckResult, TestResult};

/// The line that separates the MLX header (above) from the body (below) in
/// a workspace file.
pub const BODY_MARKER: &str = "// ---- body ----";

/// How one test input is built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fill {
    /// 0, 1, 2, ... in row-major order.
    Arange,
    /// All ones.
    Ones,
}

/// One kernel input of a test: name, dtype, shape and how it is filled.
#[derive(Clone, Copy, Debug)]
pub struct InputSpec {
    pub name: &'static str,
    pub dtype: DType,
    pub shape: &'static [usize],
    pub fill: Fill,
    /// Pass the transpose of the filled array (a non-contiguous view,
    /// which MLX copies to row-contiguous memory before the kernel runs).
    pub transpose: bool,
}

/// One of the book's tests: the exact inputs, output shape and dispatch.
#[derive(Clone, Copy, Debug)]
pub struct TestCase {
    /// Display name, e.g. `1D Conv (Full)`.
    pub name: &'static str,
    pub inputs: &'static [InputSpec],
    /// Shape of the float32 output (filled with 0 before the kernel runs).
    pub output_shape: &'static [usize],
    /// MLX grid: total threads per dimension (dispatchThreads).
    pub grid: [u32; 3],
    pub threadgroup: [u32; 3],
}

/// Per-thread maxima of memory operations (the book's score).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Score {
    pub global_reads: u64,
    pub global_writes: u64,
    pub shared_reads: u64,
    pub shared_writes: u64,
}

impl Score {
    pub fn max(self, o: Score) -> Score {
        Score {
            global_reads: self.global_reads.max(o.global_reads),
            global_writes: self.global_writes.max(o.global_writes),
            shared_reads: self.shared_reads.max(o.shared_reads),
            shared_writes: self.shared_writes.max(o.shared_writes),
        }
    }

    pub fn as_array(self) -> [u64; 4] {
        [self.global_reads, self.global_writes, self.shared_reads, self.shared_writes]
    }
}

/// Upper bounds on the score; `None` where the book sets no limit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Targets {
    pub global_reads: Option<u64>,
    pub global_writes: Option<u64>,
    pub shared_reads: Option<u64>,
    pub shared_writes: Option<u64>,
}

impl Targets {
    pub fn as_array(self) -> [Option<u64>; 4] {
        [self.global_reads, self.global_writes, self.shared_reads, self.shared_writes]
    }

    /// Whether `score` is within every target.
    pub fn met_by(self, score: Score) -> bool {
        self.as_array().iter().zip(score.as_array()).all(|(t, s)| t.is_none_or(|t| s <= t))
    }
}

/// The spec: the expected output, computed on the host from the inputs.
pub type SpecFn = fn(&[Array]) -> Array;

/// One puzzle of the book.
#[derive(Clone, Copy, Debug)]
pub struct Puzzle {
    pub number: u32,
    /// Workspace slug (`map`, `1d_conv`, ...).
    pub slug: &'static str,
    pub title: &'static str,
    /// MLX kernel name (the book's `name=`), e.g. `map_2D`.
    pub kernel_name: &'static str,
    /// What to compute and the rules, in a few sentences.
    pub explanation: &'static str,
    pub input_names: &'static [&'static str],
    pub output_name: &'static str,
    /// MLX `header` (constants); empty when the puzzle has none.
    pub header: &'static str,
    /// The starter body the learner completes.
    pub starter: &'static str,
    pub tests: &'static [TestCase],
    pub spec: SpecFn,
    pub targets: Targets,
    pub hints: &'static [&'static str],
}

impl Puzzle {
    /// The workspace file name, `NN_slug.metal`.
    pub fn file_name(&self) -> String {
        format!("{:02}_{}.metal", self.number, self.slug)
    }

    /// The text of the untouched workspace file.
    pub fn starter_file(&self) -> String {
        workspace::starter_text(self)
    }
}

/// Look a puzzle up by number (`7`, `07`) or slug (`map_2d`); case-insensitive.
pub fn find(key: &str) -> Option<&'static Puzzle> {
    let key = key.trim();
    if let Ok(n) = key.parse::<u32>() {
        return PUZZLES.iter().find(|p| p.number == n);
    }
    let key = key.to_ascii_lowercase().replace('-', "_");
    let key = key.strip_suffix(".metal").unwrap_or(&key);
    PUZZLES.iter().find(|p| p.slug == key || p.file_name().trim_end_matches(".metal") == key || p.kernel_name.eq_ignore_ascii_case(key))
}

/// Split a workspace file into (header, body) at a line that is exactly
/// [`BODY_MARKER`]; without one the whole text is the body.
pub fn split_source(text: &str) -> (String, String) {
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let bare = line.strip_suffix('\n').unwrap_or(line);
        let bare = bare.strip_suffix('\r').unwrap_or(bare);
        if bare == BODY_MARKER {
            return (text[..offset].to_string(), text[offset + line.len()..].to_string());
        }
        offset += line.len();
    }
    (String::new(), text.to_string())
}
