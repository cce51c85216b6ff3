//! The Metal Puzzles book: GPU puzzles as data (book one: puzzles 1–14;
//! book two, from 15: SIMD-groups, atomics, ML kernels), and [`check`],
//! which runs a learner's kernel on the simulated GPU against each puzzle's
//! exact and randomized tests.
//!
//! Seams for other front ends: [`Puzzle`] describes a puzzle completely
//! (inputs, dispatch, header, starter, spec, targets), and [`check()`]
//! returns a [`CheckResult`] holding every run's inputs, outputs, score and
//! findings, which a watch mode or a diagram renderer can use directly.

pub mod beginner;
mod book;
mod book2;
pub mod check;
pub mod explain;
pub mod goal;
pub mod guide;
pub mod pipeline;
pub mod render;
pub mod show;
mod spec;
mod spec2;
pub mod style;
pub mod workspace;

use arrays::{Array, DType};

pub use book::{CHAPTERS, PUZZLES};

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
    /// The input's [`Random`] rule with this fixed seed (book-two tests whose
    /// values must have a shape arange cannot give, e.g. sorted ids).
    Seeded(u64),
}

/// How the randomized tests fill an input.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Random {
    /// Integers uniform in `[lo, hi)` (book one: exact in float32 through
    /// every puzzle's arithmetic).
    Ints(i64, i64),
    /// Floats uniform in `[lo, hi)`, rounded to float32: their sums depend
    /// on the order of additions, which the puzzle's tolerance allows for.
    Floats(f64, f64),
    /// Integers in `[lo, hi)`, sorted ascending.
    SortedInts(i64, i64),
    /// Floats uniform in `[lo, hi)`, except that every `every`-th row (rows
    /// 0, `every`, …) is all zeros: a norm must not divide by 0 there.
    FloatsZeroRows { lo: f64, hi: f64, every: usize },
    /// Sorted segment ids `0, 0, …, 1, 1, …`: runs of `min..=max` equal
    /// ids, the next run's id 1 or 2 higher (some ids have no elements),
    /// ids capped at `ids - 1`.
    Runs { min: usize, max: usize, ids: i64 },
}

/// Book one's random inputs: integers in [-9, 10).
pub const BOOK_ONE_RANDOM: Random = Random::Ints(check::RANDOM_LO, check::RANDOM_HI);

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
    /// Values of the randomized tests.
    pub random: Random,
}

/// One of the book's tests: the exact inputs, output shape and dispatch.
#[derive(Clone, Copy, Debug)]
pub struct TestCase {
    /// Display name, e.g. `1D Conv (Full)`.
    pub name: &'static str,
    pub inputs: &'static [InputSpec],
    /// Shape of the output (of the puzzle's dtype, filled with 0 before the
    /// kernel runs).
    pub output_shape: &'static [usize],
    /// MLX grid: total threads per dimension (dispatchThreads).
    pub grid: [u32; 3],
    pub threadgroup: [u32; 3],
}

/// Per-thread maxima of memory operations (the book's score), and of the
/// operations book two counts: atomics, barriers, SIMD-group functions.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Score {
    pub global_reads: u64,
    pub global_writes: u64,
    pub shared_reads: u64,
    pub shared_writes: u64,
    pub device_atomics: u64,
    pub threadgroup_atomics: u64,
    pub barriers: u64,
    pub simd_ops: u64,
    /// Device atomics of one whole threadgroup (the most of any threadgroup).
    pub threadgroup_device_atomics: u64,
}

/// Every score column: (JSON key, table heading). The first four are book
/// one's and always shown; the others only for puzzles with a target there.
pub const COLUMNS: [(&str, &str); 9] = [
    ("global_reads", "Global Reads"),
    ("global_writes", "Global Writes"),
    ("shared_reads", "Shared Reads"),
    ("shared_writes", "Shared Writes"),
    ("device_atomics", "Dev Atomics"),
    ("threadgroup_atomics", "TG Atomics"),
    ("barriers", "Barriers"),
    ("simd_ops", "SIMD Ops"),
    ("threadgroup_device_atomics", "Dev Atomics/TG"),
];

/// How many of [`COLUMNS`] every puzzle shows.
pub const BOOK_COLUMNS: usize = 4;

impl Score {
    pub fn max(self, o: Score) -> Score {
        let (a, b) = (self.columns(), o.columns());
        Score::from_columns(std::array::from_fn(|k| a[k].max(b[k])))
    }

    /// Book one's four columns.
    pub fn as_array(self) -> [u64; 4] {
        [self.global_reads, self.global_writes, self.shared_reads, self.shared_writes]
    }

    /// Every column, in the order of [`COLUMNS`].
    pub fn columns(self) -> [u64; 9] {
        [
            self.global_reads,
            self.global_writes,
            self.shared_reads,
            self.shared_writes,
            self.device_atomics,
            self.threadgroup_atomics,
            self.barriers,
            self.simd_ops,
            self.threadgroup_device_atomics,
        ]
    }

    pub fn from_columns(c: [u64; 9]) -> Score {
        let [global_reads, global_writes, shared_reads, shared_writes, device_atomics, threadgroup_atomics, barriers, simd_ops, threadgroup_device_atomics] =
            c;
        Score {
            global_reads,
            global_writes,
            shared_reads,
            shared_writes,
            device_atomics,
            threadgroup_atomics,
            barriers,
            simd_ops,
            threadgroup_device_atomics,
        }
    }
}

/// Upper bounds on the score; `None` where the book sets no limit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Targets {
    pub global_reads: Option<u64>,
    pub global_writes: Option<u64>,
    pub shared_reads: Option<u64>,
    pub shared_writes: Option<u64>,
    pub device_atomics: Option<u64>,
    pub threadgroup_atomics: Option<u64>,
    pub barriers: Option<u64>,
    pub simd_ops: Option<u64>,
    pub threadgroup_device_atomics: Option<u64>,
}

/// No target at all (a base for `Targets { global_reads: Some(1), ..NO_TARGETS }`).
pub const NO_TARGETS: Targets = Targets {
    global_reads: None,
    global_writes: None,
    shared_reads: None,
    shared_writes: None,
    device_atomics: None,
    threadgroup_atomics: None,
    barriers: None,
    simd_ops: None,
    threadgroup_device_atomics: None,
};

impl Targets {
    /// The loosest of the stages' targets, column by column: a column has a
    /// target when some stage sets one, the largest of them (a pipeline's
    /// score is the maximum of its kernels' scores).
    pub const fn loosest(stages: &[Stage]) -> Targets {
        let mut cols: [Option<u64>; 9] = [None; 9];
        let mut s = 0;
        while s < stages.len() {
            let c = stages[s].targets.columns();
            let mut k = 0;
            while k < 9 {
                cols[k] = match (cols[k], c[k]) {
                    (Some(a), Some(b)) => Some(if a > b { a } else { b }),
                    (None, b) => b,
                    (a, None) => a,
                };
                k += 1;
            }
            s += 1;
        }
        Targets::from_columns(cols)
    }

    /// Targets from every column, in the order of [`COLUMNS`].
    pub const fn from_columns(c: [Option<u64>; 9]) -> Targets {
        let [global_reads, global_writes, shared_reads, shared_writes, device_atomics, threadgroup_atomics, barriers, simd_ops, threadgroup_device_atomics] =
            c;
        Targets {
            global_reads,
            global_writes,
            shared_reads,
            shared_writes,
            device_atomics,
            threadgroup_atomics,
            barriers,
            simd_ops,
            threadgroup_device_atomics,
        }
    }

    /// Book one's four columns.
    pub fn as_array(self) -> [Option<u64>; 4] {
        [self.global_reads, self.global_writes, self.shared_reads, self.shared_writes]
    }

    /// Every column, in the order of [`COLUMNS`].
    pub const fn columns(self) -> [Option<u64>; 9] {
        [
            self.global_reads,
            self.global_writes,
            self.shared_reads,
            self.shared_writes,
            self.device_atomics,
            self.threadgroup_atomics,
            self.barriers,
            self.simd_ops,
            self.threadgroup_device_atomics,
        ]
    }

    /// Indices into [`COLUMNS`] this puzzle shows: book one's four, then
    /// each later column that has a target.
    pub fn shown_columns(self) -> Vec<usize> {
        (0..COLUMNS.len()).filter(|&k| k < BOOK_COLUMNS || self.columns()[k].is_some()).collect()
    }

    /// Whether `score` is within every target.
    pub fn met_by(self, score: Score) -> bool {
        self.columns().iter().zip(score.columns()).all(|(t, s)| t.is_none_or(|t| s <= t))
    }
}

/// How close an output cell must be to the spec: NumPy's `isclose`,
/// `|yours - spec| <= atol + rtol * |spec|`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tolerance {
    pub rtol: f64,
    pub atol: f64,
}

impl Tolerance {
    pub fn matches(self, yours: f64, spec: f64) -> bool {
        arrays::isclose(yours, spec, self.rtol, self.atol)
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
    /// About how many lines of code a solution adds to the starter (the
    /// size hint; a test keeps it close to the reference solution's).
    pub answer_lines: u32,
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
    /// The chapter it belongs to (one of [`CHAPTERS`]).
    pub chapter: &'static str,
    /// dtype of the output (book one: float32).
    pub output_dtype: arrays::DType,
    /// The output is `device atomic<T>*` (MLX's `atomic_outputs=True`).
    pub atomic_outputs: bool,
    /// How close the output must be to the spec.
    pub tolerance: Tolerance,
    /// A pipeline's kernels, run in this order on shared buffers (empty for
    /// a one-kernel puzzle). The file then holds one section per stage, each
    /// under a line `// ---- kernel NAME ----` (see [`split_kernels`]).
    pub stages: &'static [Stage],
}

/// The line that opens a stage's section in a pipeline's workspace file is
/// `KERNEL_MARKER_START` + the stage's name + `KERNEL_MARKER_END`.
pub const KERNEL_MARKER_START: &str = "// ---- kernel ";
pub const KERNEL_MARKER_END: &str = " ----";

/// How one stage of a pipeline is dispatched for an input of `n` elements.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dispatch {
    pub output_shape: Vec<usize>,
    pub grid: [u32; 3],
    pub threadgroup: [u32; 3],
}

/// One kernel of a multi-kernel puzzle.
#[derive(Clone, Copy, Debug)]
pub struct Stage {
    /// Name of its section in the file (`// ---- kernel reduce ----`).
    pub name: &'static str,
    /// MLX kernel name.
    pub kernel_name: &'static str,
    /// What it computes, for the starter file.
    pub about: &'static str,
    /// Its inputs: the puzzle's inputs or outputs of earlier stages.
    pub inputs: &'static [&'static str],
    /// The buffer it writes (the last stage's is the puzzle's output).
    pub output: &'static str,
    pub output_dtype: DType,
    /// Its dispatch, from the number of elements of the puzzle's first input.
    pub dispatch: fn(usize) -> Dispatch,
    /// Its reference: the expected output from the inputs it was given.
    pub spec: SpecFn,
    /// Its starter body.
    pub starter: &'static str,
    /// Upper bounds on this kernel's per-thread score (each kernel is
    /// judged against its own; the puzzle's targets are their loosest).
    pub targets: Targets,
    /// A closer look at a wrong output (the inputs given, yours, the
    /// reference): a sentence naming the mistake when it is recognised.
    pub diagnose: Option<DiagnoseFn>,
}

/// See [`Stage::diagnose`].
pub type DiagnoseFn = fn(&[Array], &Array, &Array) -> Option<String>;

impl Stage {
    /// The marker line of its section.
    pub fn marker(&self) -> String {
        format!("{KERNEL_MARKER_START}{}{KERNEL_MARKER_END}", self.name)
    }
}

/// One `// ---- kernel NAME ----` section of a pipeline's file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelSection {
    pub name: String,
    /// 1-based line of the marker.
    pub line: usize,
    /// Byte offset of the body (the line after the marker) in the file.
    pub offset: usize,
    pub body: String,
}

/// Split the body part of a pipeline's file (after the header marker, if
/// any) into its kernel sections. `base` is the offset of `body` in the
/// file and `base_line` its first line (1-based), for positions. Text
/// before the first marker may hold only comments and blank lines; an
/// error names the line.
pub fn split_kernels(body: &str, base: usize, base_line: usize) -> Result<Vec<KernelSection>, (usize, String)> {
    let mut sections: Vec<KernelSection> = Vec::new();
    let mut offset = 0;
    for (k, line) in body.split_inclusive('\n').enumerate() {
        let bare = line.trim_end_matches(['\n', '\r']).trim();
        let name = bare.strip_prefix(KERNEL_MARKER_START.trim_end()).and_then(|r| r.strip_suffix(KERNEL_MARKER_END.trim_start()));
        if let Some(name) = name.map(str::trim).filter(|_| bare.starts_with("// ----")) {
            if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                return Err((base_line + k, format!("`{bare}`: a kernel's name is letters, digits and `_`")));
            }
            if let Some(first) = sections.iter().find(|s| s.name == name) {
                return Err((base_line + k, format!("a second `kernel {name}` section (the first is on line {})", first.line)));
            }
            sections.push(KernelSection {
                name: name.to_string(),
                line: base_line + k,
                offset: base + offset + line.len(),
                body: String::new(),
            });
        } else if let Some(s) = sections.last_mut() {
            s.body.push_str(line);
        } else if !bare.is_empty() && !bare.starts_with("//") {
            return Err((base_line + k, "code before the first `// ---- kernel NAME ----` line belongs to no kernel".into()));
        }
        offset += line.len();
    }
    Ok(sections)
}

impl Puzzle {
    /// The workspace file name, `NN_slug.metal`.
    pub fn file_name(&self) -> String {
        format!("{:02}_{}.metal", self.number, self.slug)
    }

    /// Whether one output cell matches the spec under this puzzle's tolerance.
    pub fn cell_matches(&self, yours: f64, spec: f64) -> bool {
        self.tolerance.matches(yours, spec)
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
