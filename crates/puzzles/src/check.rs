//! Checking a learner's kernel against a puzzle's tests.

use crate::{split_source, Fill, InputSpec, Puzzle, Random, Score, TestCase, Tolerance};
use arrays::{Array, DType};
use gpu::Finding;
use msl::diag::Diagnostic;
use msl::source::SourceMap;
use std::rc::Rc;

/// Randomized tests run after each of the book's tests.
pub const RANDOM_TESTS_PER_CASE: u64 = 3;
/// Whether one output cell matches the spec under book one's tolerance
/// (book-two puzzles state their own: [`Puzzle::cell_matches`]).
pub fn cell_matches(yours: f64, spec: f64) -> bool {
    BOOK_ONE_TOLERANCE.matches(yours, spec)
}

/// Book one's tolerances of the comparison with the spec (NumPy's `allclose`).
pub const RTOL: f64 = 1e-5;
pub const ATOL: f64 = 1e-8;
pub const BOOK_ONE_TOLERANCE: Tolerance = Tolerance { rtol: RTOL, atol: ATOL };
/// Random inputs are integers in `[RANDOM_LO, RANDOM_HI)` (exact in float32
/// through every puzzle's arithmetic).
pub const RANDOM_LO: i64 = -9;
pub const RANDOM_HI: i64 = 10;

/// One run of the kernel: a book test or a randomized variant of it.
#[derive(Clone, Debug)]
pub struct TestResult {
    /// `Matmul (Full)` or `Matmul (Full), random #2`.
    pub name: String,
    /// Index into the puzzle's `tests`.
    pub case: usize,
    /// The seed of a randomized test; `None` for the book's own inputs.
    pub seed: Option<u64>,
    pub inputs: Vec<Array>,
    /// The kernel's output (`None` when it could not run).
    pub yours: Option<Array>,
    /// Elements of `yours` no thread wrote (garbage, shown as `?`); `None`
    /// when the output starts initialized.
    pub unwritten: Option<Vec<bool>>,
    pub spec: Array,
    pub passed: bool,
    /// Per-thread maxima of this run.
    pub score: Option<Score>,
    /// Why the kernel could not run, if it could not.
    pub error: Option<String>,
}

/// A sanitizer finding with the sources its spans point into.
#[derive(Clone, Debug)]
pub struct ReportedFinding {
    pub finding: Finding,
    pub sources: Rc<SourceMap>,
    /// The first test that produced it.
    pub test: String,
}

/// Everything `check` learned about one puzzle solution.
#[derive(Clone, Debug)]
pub struct CheckResult {
    pub puzzle: &'static Puzzle,
    /// Exact tests first, each followed by its randomized variants.
    pub tests: Vec<TestResult>,
    /// Per-thread maxima over every run.
    pub score: Score,
    pub targets_met: bool,
    /// Sanitizer findings, deduplicated over runs (first occurrence kept).
    pub findings: Vec<ReportedFinding>,
    /// Compile diagnostics (errors and warnings) and their sources.
    pub diagnostics: Vec<Diagnostic>,
    pub diagnostic_sources: Rc<SourceMap>,
    /// A failure before any test could run (e.g. the kernel does not compile).
    pub error: Option<String>,
    /// Generated kernel source of each book test (for `--verbose`).
    pub generated: Vec<(String, String)>,
    /// Tests pass, no error findings, no compile errors.
    pub passed: bool,
    /// Why the first wrong cells of the first failing test are wrong, from
    /// a traced re-run (see [`crate::explain`]).
    pub explanations: Vec<String>,
    /// When a read target is missed: which buffers the busiest thread
    /// read, and what to do about it in this kernel (see [`read_advice`]).
    pub advice: Vec<String>,
    /// A pipeline's per-thread maxima, stage by stage (empty for a
    /// one-kernel puzzle).
    pub stage_scores: Vec<(&'static str, Score)>,
}

impl CheckResult {
    /// A result with nothing run yet.
    pub fn empty(puzzle: &'static Puzzle) -> CheckResult {
        CheckResult {
            puzzle,
            tests: Vec::new(),
            score: Score::default(),
            targets_met: false,
            findings: Vec::new(),
            diagnostics: Vec::new(),
            diagnostic_sources: Rc::new(SourceMap::new()),
            error: None,
            generated: Vec::new(),
            passed: false,
            explanations: Vec::new(),
            advice: Vec::new(),
            stage_scores: Vec::new(),
        }
    }

    /// Tests pass, every memory target is met and no stores race. (A race
    /// whose stores agree is only a warning for kernel authors, but the book
    /// teaches Metal's rule: one thread stores.)
    pub fn solved(&self) -> bool {
        self.passed && self.targets_met && !self.has_racing_stores()
    }

    /// Some race was found, even one whose stores agree.
    pub fn has_racing_stores(&self) -> bool {
        self.findings.iter().any(|f| f.finding.kind == gpu::FindingKind::DataRace)
    }

    pub fn has_error_findings(&self) -> bool {
        self.findings.iter().any(|f| f.finding.is_error)
    }

    /// Records the score (the per-thread maxima over every run, `None` when
    /// nothing ran) and the verdicts that follow from it: the targets are
    /// judged only on a real score, and the tests pass only when every test
    /// passed with no error finding or diagnostic.
    pub(crate) fn settle(&mut self, score: Option<Score>, targets: crate::Targets) {
        self.score = score.unwrap_or_default();
        self.targets_met = score.is_some() && targets.met_by(self.score);
        self.passed = self.error.is_none()
            && !self.tests.is_empty()
            && self.tests.iter().all(|t| t.passed)
            && !self.has_error_findings()
            && !self.diagnostics.iter().any(|d| d.is_error());
    }

    /// The first failing test, if any.
    pub fn first_failure(&self) -> Option<&TestResult> {
        self.tests.iter().find(|t| !t.passed)
    }
}

/// Build one input of a test: the book's values, or values from the
/// input's [`Random`] rule when `seed` is given (same dtype and shape).
pub fn build_input(spec: &InputSpec, seed: Option<u64>) -> Array {
    let base = match (seed, spec.fill) {
        (Some(seed), _) | (None, Fill::Seeded(seed)) => random_values(spec, seed),
        (None, Fill::Arange) => Array::arange(spec.dtype, spec.shape),
        (None, Fill::Ones) => Array::ones(spec.dtype, spec.shape),
    };
    if spec.transpose {
        base.t()
    } else {
        base
    }
}

fn random_values(spec: &InputSpec, seed: u64) -> Array {
    let n: usize = spec.shape.iter().product();
    let ints = |lo: i64, hi: i64| Array::randint(DType::I64, &[n], lo, hi.max(lo + 1), seed).expect("range fits int64").to_f64_vec();
    let values: Vec<f64> = match spec.random {
        Random::Ints(lo, hi) => ints(lo, hi),
        Random::SortedInts(lo, hi) => {
            let mut v = ints(lo, hi);
            v.sort_by(f64::total_cmp);
            v
        }
        Random::Runs { min, max, ids } => {
            let draws = Array::randint(DType::I64, &[2 * n + 2], 0, 1 << 30, seed).expect("range fits int64").to_f64_vec();
            let mut draws = draws.into_iter().map(|d| d as usize);
            let (mut v, mut id) = (Vec::with_capacity(n), 0i64);
            while v.len() < n {
                let len = min.max(1) + draws.next().unwrap_or(0) % (max.saturating_sub(min) + 1);
                v.extend(std::iter::repeat_n(id.min(ids - 1) as f64, len.min(n - v.len())));
                id += 1 + (draws.next().unwrap_or(0) % 2) as i64;
            }
            v
        }
        Random::Floats(lo, hi) => {
            let unit = Array::rand(DType::F32, &[n], seed).to_f64_vec();
            unit.into_iter().map(|u| (lo + u * (hi - lo)) as f32 as f64).collect()
        }
        Random::FloatsZeroRows { lo, hi, every } => {
            let row = spec.shape.last().copied().unwrap_or(1).max(1);
            let unit = Array::rand(DType::F32, &[n], seed).to_f64_vec();
            let every = every.max(1);
            unit.into_iter()
                .enumerate()
                .map(|(i, u)| if (i / row) % every == 0 { 0.0 } else { (lo + u * (hi - lo)) as f32 as f64 })
                .collect()
        }
    };
    Array::from_f64(spec.dtype, spec.shape, &values).expect("values fill the shape")
}

/// The seed of randomized test `k` of case `case` of puzzle `number`.
pub fn random_seed(number: u32, case: usize, k: u64) -> u64 {
    0x4d50_0000_0000 + (number as u64) * 1000 + (case as u64) * 10 + k
}

/// The seed of input `k` of a randomized test (inputs get different values).
pub fn input_seed(test_seed: u64, k: usize) -> u64 {
    test_seed ^ (k as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// The inputs of every run of a puzzle: (name, case index, seed, inputs).
pub fn runs(puzzle: &Puzzle) -> Vec<(String, usize, Option<u64>, Vec<Array>)> {
    let mut out = Vec::new();
    for (ci, case) in puzzle.tests.iter().enumerate() {
        let build = |seed: Option<u64>| {
            case.inputs.iter().enumerate().map(|(k, s)| build_input(s, seed.map(|seed| input_seed(seed, k)))).collect::<Vec<_>>()
        };
        out.push((case.name.to_string(), ci, None, build(None)));
        for k in 1..=RANDOM_TESTS_PER_CASE {
            let seed = random_seed(puzzle.number, ci, k);
            out.push((format!("{}, random #{k}", case.name), ci, Some(seed), build(Some(seed))));
        }
    }
    out
}

/// Check a workspace file's text (header and body split at the marker).
pub fn check(puzzle: &'static Puzzle, file_text: &str) -> CheckResult {
    check_file(puzzle, &puzzle.file_name(), file_text)
}

/// Check a workspace file; messages name it `file_name` and point at its
/// lines (header and body both live in that one file).
pub fn check_file(puzzle: &'static Puzzle, file_name: &str, file_text: &str) -> CheckResult {
    check_file_cancellable(puzzle, file_name, file_text, None).expect("a check without a cancel flag finishes")
}

/// [`check_file`] that stops as soon as `cancel` is set (from another
/// thread) and then returns `None`: a cancelled check reports nothing.
pub fn check_file_cancellable(
    puzzle: &'static Puzzle,
    file_name: &str,
    file_text: &str,
    cancel: Option<&gpu::Cancel>,
) -> Option<CheckResult> {
    // Mistakes the compiler would explain badly are named first.
    if let Some((sources, diagnostics)) = crate::beginner::check(puzzle, file_name, file_text) {
        let mut result = CheckResult::empty(puzzle);
        result.error = Some("the kernel does not compile".into());
        result.diagnostics = diagnostics;
        result.diagnostic_sources = Rc::new(sources);
        result.settle(None, puzzle.targets);
        return Some(result);
    }
    if !puzzle.stages.is_empty() {
        return crate::pipeline::check_pipeline(puzzle, file_name, file_text, cancel);
    }
    let (header, body) = split_source(file_text);
    let body_file = mlx::UserFile { name: file_name.to_string(), text: file_text.to_string(), offset: file_text.len() - body.len() };
    // (the body is always a suffix of the file)
    let header_file = mlx::UserFile { name: file_name.to_string(), text: file_text.to_string(), offset: 0 };
    run_checks(puzzle, &header, &body, Some((body_file, header_file)), cancel)
}

/// The book's kernel for a workspace file's text (header and body split at
/// the marker; messages name `file_name` and point at its lines).
pub fn book_kernel(puzzle: &'static Puzzle, file_name: &str, file_text: &str) -> Result<mlx::MetalKernel, mlx::MlxError> {
    if !puzzle.stages.is_empty() {
        return Err(pipeline_only(puzzle));
    }
    let (header, body) = split_source(file_text);
    let body_file = mlx::UserFile { name: file_name.to_string(), text: file_text.to_string(), offset: file_text.len() - body.len() };
    let header_file = mlx::UserFile { name: file_name.to_string(), text: file_text.to_string(), offset: 0 };
    let k = puzzle_kernel(puzzle, &header, &body)?;
    Ok(k.with_files(Some(body_file), Some(header_file)))
}

/// The kernel signatures a workspace file's bodies run inside, as MLX
/// generates them for the puzzle's first test: one per kernel (a pipeline
/// has one per stage, in order), each the `[[kernel]]` line through the
/// opening brace, then `...your code...` and the closing brace. Empty when
/// the file's layout or header does not generate.
pub fn signatures(puzzle: &'static Puzzle, file_text: &str) -> Vec<String> {
    let Some(case) = puzzle.tests.first() else { return Vec::new() };
    let inputs: Vec<Array> = case.inputs.iter().map(|s| build_input(s, None)).collect();
    let generated: Vec<Option<mlx::Generated>> = if puzzle.stages.is_empty() {
        let Ok(kernel) = book_kernel(puzzle, &puzzle.file_name(), file_text) else { return Vec::new() };
        vec![kernel.generate_for(&book_call(puzzle, case, &inputs)).ok()]
    } else {
        let Ok(kernels) = crate::pipeline::stage_kernels(puzzle, &puzzle.file_name(), file_text) else { return Vec::new() };
        // Each stage sees the puzzle's inputs and earlier stages' outputs:
        // only their dtypes and shapes matter to the signature.
        let n = crate::pipeline::size_of(&inputs);
        let mut buffers: Vec<(&str, Array)> = puzzle.input_names.iter().copied().zip(inputs.iter().cloned()).collect();
        let mut out = Vec::new();
        for (stage, kernel) in puzzle.stages.iter().zip(&kernels) {
            let given: Option<Vec<Array>> =
                stage.inputs.iter().map(|name| buffers.iter().rev().find(|(b, _)| b == name).map(|(_, a)| a.clone())).collect();
            out.push(given.and_then(|g| kernel.generate_for(&crate::pipeline::stage_call(stage, &g, n)).ok()));
            buffers.push((stage.output, Array::zeros(stage.output_dtype, &(stage.dispatch)(n).output_shape)));
        }
        out
    };
    generated
        .iter()
        .flatten()
        .filter_map(|g| {
            let src = &g.source;
            let start = src.find("[[kernel]]")?;
            let end = src[start..].find(") {")? + start + 3;
            Some(format!("{}\n    ...your code...\n}}\n", &src[start..end]))
        })
        .collect()
}

/// The run a capture of this check holds: the first failing test (the
/// one `check` explains), or the first test when all pass, as the book
/// runs it: (title, kernel, call). Pipelines are not captured yet.
pub fn capture_run(result: &CheckResult, file_name: &str, file_text: &str) -> Result<(String, mlx::MetalKernel, mlx::Call), String> {
    let puzzle = result.puzzle;
    if !puzzle.stages.is_empty() {
        return Err(format!(
            "puzzle {} is a pipeline of {} kernels; captures hold one kernel's dispatch and do not cover pipelines yet",
            puzzle.number,
            puzzle.stages.len()
        ));
    }
    let test = result.first_failure().or(result.tests.first()).ok_or_else(|| {
        format!("no test of puzzle {} ran (the kernel does not compile), so there is no dispatch to capture", puzzle.number)
    })?;
    let case = &puzzle.tests[test.case];
    let kernel = book_kernel(puzzle, file_name, file_text).map_err(|e| e.to_string())?;
    let title = format!("puzzle {} ({}), test `{}`", puzzle.number, puzzle.title, test.name);
    Ok((title, kernel, book_call(puzzle, case, &test.inputs)))
}

/// Check an MLX header and body (messages name `NAME.metal` and
/// `NAME_header.metal`, as MLX's own defaults do).
pub fn check_source(puzzle: &'static Puzzle, header: &str, body: &str) -> CheckResult {
    if !puzzle.stages.is_empty() {
        let text = if header.is_empty() { body.to_string() } else { format!("{header}{}\n{body}", crate::BODY_MARKER) };
        return crate::pipeline::check_pipeline(puzzle, &puzzle.file_name(), &text, None).expect("a check without a cancel flag finishes");
    }
    run_checks(puzzle, header, body, None, None).expect("a check without a cancel flag finishes")
}

fn run_checks(
    puzzle: &'static Puzzle,
    header: &str,
    body: &str,
    files: Option<(mlx::UserFile, mlx::UserFile)>,
    cancel: Option<&gpu::Cancel>,
) -> Option<CheckResult> {
    let is_cancelled = || cancel.is_some_and(gpu::Cancel::is_cancelled);
    let mut result = CheckResult::empty(puzzle);
    let kernel = match puzzle_kernel(puzzle, header, body) {
        Ok(k) => match files {
            Some((b, h)) => k.with_files(Some(b), Some(h)),
            None => k,
        },
        Err(e) => {
            absorb_error(&mut result, e);
            return Some(result);
        }
    };
    let mut score: Option<Score> = None;
    for (name, ci, seed, inputs) in runs(puzzle) {
        let case: &TestCase = &puzzle.tests[ci];
        let spec = (puzzle.spec)(&inputs);
        let mut call = book_call(puzzle, case, &inputs);
        call.count = true;
        call.cancel = cancel.cloned();
        let mut test =
            TestResult { name, case: ci, seed, inputs, yours: None, unwritten: None, spec, passed: false, score: None, error: None };
        let mut generated = None;
        let outcome = kernel.call_with(&call, &mut |g| generated = Some(mlx::verbose_text(g)));
        if is_cancelled() {
            return None;
        }
        match outcome {
            Ok(out) => {
                if let (None, Some(g)) = (seed, generated) {
                    result.generated.push((case.name.to_string(), g));
                }
                if result.diagnostics.is_empty() && !out.diagnostics.is_empty() {
                    result.diagnostics = out.diagnostics.clone();
                    result.diagnostic_sources = Rc::new(out.sources.clone());
                }
                let yours = out.outputs.into_iter().next();
                let tol = puzzle.tolerance;
                test.unwritten = out.unwritten.into_iter().next().flatten();
                // An element no thread wrote is wrong whatever garbage it holds.
                let all_written = !test.unwritten.as_ref().is_some_and(|u| u.contains(&true));
                test.passed = all_written && yours.as_ref().is_some_and(|y| y.allclose(&test.spec, tol.rtol, tol.atol));
                test.yours = yours;
                if let Some(c) = out.report.max_counts {
                    let s = score_of(&c);
                    test.score = Some(s);
                    score = Some(score.map_or(s, |m| m.max(s)));
                }
                let mut sources: Option<Rc<SourceMap>> = None;
                for f in out.report.findings {
                    let known = result.findings.iter().any(|r| r.finding.same_place(&f));
                    if !known {
                        let sources = sources.get_or_insert_with(|| Rc::new(out.sources.clone())).clone();
                        result.findings.push(ReportedFinding { finding: f, sources, test: test.name.clone() });
                    }
                }
                result.tests.push(test);
            }
            Err(e) => {
                // A compile error (or an invalid call) stops the check: every
                // later run would fail the same way.
                test.error = Some(match &e {
                    mlx::MlxError::Compile { .. } => "the kernel does not compile".into(),
                    mlx::MlxError::Argument(m) => m.clone(),
                });
                result.tests.push(test);
                absorb_error(&mut result, e);
                break;
            }
        }
    }
    // (A runaway loop's output explains nothing: the finding says it all.)
    let runaway = result.findings.iter().any(|f| f.finding.kind == gpu::FindingKind::RunawayKernel);
    if let Some(t) = result.tests.iter().find(|t| !t.passed && t.yours.is_some()).filter(|_| !runaway) {
        result.explanations = explain_test(puzzle, &kernel, t, cancel);
        if is_cancelled() {
            return None;
        }
    }
    result.settle(score, puzzle.targets);
    if result.passed && !result.targets_met {
        result.advice = read_advice(puzzle, &kernel, &result, cancel);
        if is_cancelled() {
            return None;
        }
    }
    Some(result)
}

/// The book's score columns from the simulator's counters.
pub fn score_of(c: &gpu::sanitizer::Counts) -> Score {
    Score {
        global_reads: c.device_reads,
        global_writes: c.device_writes,
        shared_reads: c.threadgroup_reads,
        shared_writes: c.threadgroup_writes,
        device_atomics: c.device_atomics,
        threadgroup_atomics: c.threadgroup_atomics,
        barriers: c.barriers,
        simd_ops: c.simd_ops,
        threadgroup_device_atomics: c.threadgroup_device_atomics,
    }
}

/// The MLX kernel of a puzzle (its names, atomic outputs) for a header and body.
pub fn puzzle_kernel(puzzle: &Puzzle, header: &str, body: &str) -> Result<mlx::MetalKernel, mlx::MlxError> {
    if !puzzle.stages.is_empty() {
        return Err(pipeline_only(puzzle));
    }
    let mut k =
        mlx::MetalKernel::new(puzzle.kernel_name, puzzle.input_names, &[puzzle.output_name], body, header, true, puzzle.atomic_outputs)?;
    k.templates = false;
    Ok(k)
}

/// The error of a one-kernel tool asked about a pipeline.
fn pipeline_only(puzzle: &Puzzle) -> mlx::MlxError {
    mlx::MlxError::Argument(format!(
        "puzzle {} is a pipeline of {} kernels; this works on one-kernel puzzles (use `check` and `show`)",
        puzzle.number,
        puzzle.stages.len()
    ))
}

pub(crate) fn absorb_error(result: &mut CheckResult, e: mlx::MlxError) {
    match e {
        mlx::MlxError::Compile { sources, diagnostics, generated } => {
            result.error = Some("the kernel does not compile".into());
            result.diagnostics = diagnostics;
            result.diagnostic_sources = Rc::new(sources);
            if result.generated.is_empty() {
                result.generated.push((String::new(), mlx::verbose_text(&generated)));
            }
        }
        mlx::MlxError::Argument(m) => result.error = Some(m),
    }
}

/// Instructions a threadgroup may run in the book (threads run in lock-step,
/// so about the instructions per thread): every solution needs a few
/// thousand at most, and a loop that never ends is reported in well under a
/// second.
pub const BOOK_BUDGET: u64 = 200_000;

/// How the book runs a test: its inputs, the output as MLX gives it
/// (uninitialized, except an atomic output, which is zeroed as
/// `init_value=0` does: atomics accumulate into it), the test's dispatch
/// and the book's budget, atomics applied last lane first, every check on
/// (callers adjust counting, checks and tracing).
pub fn book_call(puzzle: &Puzzle, case: &TestCase, inputs: &[Array]) -> mlx::Call {
    let mut call = mlx::Call::new(
        inputs.iter().cloned().map(mlx::Input::Array).collect(),
        vec![case.output_shape.to_vec()],
        vec![puzzle.output_dtype],
        case.grid,
        case.threadgroup,
    );
    if puzzle.atomic_outputs {
        call = call.init_value(0.0);
    }
    call.budget = Some(BOOK_BUDGET);
    // No order of atomics is promised: the book runs them in the order that
    // exposes kernels relying on the first-lane-first one, and other
    // schedules must give the same output within the puzzle's tolerance.
    call.atomics_last_lane_first = true;
    call.schedule_tolerance = (puzzle.tolerance.rtol, puzzle.tolerance.atol);
    call
}

/// Most wrong cells explained per failing test.
const EXPLAINED_CELLS: usize = 3;
/// Most trace events recorded for an explanation.
const EXPLAIN_TRACE_LIMIT: usize = 200_000;

/// A test run again with the access trace on: the trace, its sources, the
/// tables naming its cells (inputs, threadgroup arrays, the output) and
/// the output.
struct Traced {
    trace: gpu::trace::Trace,
    sources: SourceMap,
    tables: Vec<crate::explain::Table>,
    namer: crate::explain::Namer,
    out_alloc: gpu::trace::CellAlloc,
    yours: Array,
}

fn traced_run(puzzle: &'static Puzzle, kernel: &mlx::MetalKernel, t: &TestResult, cancel: Option<&gpu::Cancel>) -> Option<Traced> {
    let case: &TestCase = &puzzle.tests[t.case];
    let mut call = book_call(puzzle, case, &t.inputs);
    call.cancel = cancel.cloned();
    call.check = gpu::CheckLevel::None;
    call.trace = Some(EXPLAIN_TRACE_LIMIT);
    // Quietly: the source was already shown (VERBOSE) by the test run itself.
    let out = kernel.call_with(&call, &mut |_| {}).ok()?;
    let (Some(trace), Some(yours), Some(&out_index)) = (out.report.trace.clone(), out.outputs.first(), out.generated.outputs.first())
    else {
        return None;
    };
    let mut tables = Vec::new();
    for (k, (a, slots)) in t.inputs.iter().zip(&out.generated.inputs).enumerate() {
        let name = puzzle.input_names.get(k).copied().unwrap_or("input").to_string();
        tables.push(crate::explain::Table {
            alloc: gpu::trace::CellAlloc::Buffer(slots.buffer),
            name,
            shape: a.shape.clone(),
            elem_size: a.dtype.size() as u32,
        });
    }
    for (v, var) in out.kernel.threadgroup_vars.iter().enumerate() {
        let shape = if var.dims.len() > 1 { var.dims.iter().map(|&d| d as usize).collect() } else { Vec::new() };
        tables.push(crate::explain::Table {
            alloc: gpu::trace::CellAlloc::Threadgroup(v as u32),
            name: var.name.clone(),
            shape,
            elem_size: var.grain.max(1),
        });
    }
    let out_alloc = gpu::trace::CellAlloc::Buffer(out_index);
    tables.push(crate::explain::Table {
        alloc: out_alloc,
        name: puzzle.output_name.to_string(),
        shape: yours.shape.clone(),
        elem_size: puzzle.output_dtype.size() as u32,
    });
    // (MLX clamps the threadgroup to the grid, as the run did.)
    let threads_per_threadgroup = [0, 1, 2].map(|d| case.threadgroup[d].min(case.grid[d]));
    let namer = crate::explain::Namer { tables: tables.clone(), threads_per_threadgroup };
    Some(Traced { trace, sources: out.sources, tables, namer, out_alloc, yours: yours.clone() })
}

/// When the tests pass but a read target is missed: the test where the
/// count is highest, run again with the trace, and for its busiest thread
/// which buffers it read how often, with advice for what it did (a value
/// read twice wants a register; the output read back wants a local
/// accumulator; values other threads read too want threadgroup memory).
pub fn read_advice(puzzle: &'static Puzzle, kernel: &mlx::MetalKernel, r: &CheckResult, cancel: Option<&gpu::Cancel>) -> Vec<String> {
    let over = |k: usize| puzzle.targets.columns()[k].is_some_and(|t| r.score.columns()[k] > t);
    let mut out = Vec::new();
    for (column, device) in [(0, true), (2, false)] {
        if !over(column) {
            continue;
        }
        let Some(t) = r.tests.iter().filter(|t| t.score.is_some()).rev().max_by_key(|t| t.score.map(|s| s.columns()[column])) else {
            continue;
        };
        let Some(tr) = traced_run(puzzle, kernel, t, cancel) else { continue };
        out.extend(crate::explain::read_advice(&tr.trace, &tr.sources, &tr.namer, tr.out_alloc, device, &t.name));
    }
    out
}

/// Re-run a failing test with the access trace on and explain its first
/// wrong output cells.
fn explain_test(puzzle: &'static Puzzle, kernel: &mlx::MetalKernel, t: &TestResult, cancel: Option<&gpu::Cancel>) -> Vec<String> {
    let Some(Traced { trace, sources, tables, namer, out_alloc, yours }) = traced_run(puzzle, kernel, t, cancel) else { return Vec::new() };
    let trace = &trace;
    let (yours, spec) = (yours.to_f64_vec(), t.spec.to_f64_vec());
    // Which input cells the spec computes each wrong cell from.
    let wrong = crate::explain::wrong_cells(&yours, &spec, EXPLAINED_CELLS, puzzle.tolerance);
    let deps = crate::explain::spec_dependencies(puzzle.spec, &t.inputs, &wrong, puzzle.tolerance).unwrap_or_default();
    let expected = |i: usize| -> Vec<String> {
        let Some(d) = wrong.iter().position(|&w| w == i).and_then(|p| deps.get(p)) else { return Vec::new() };
        d.iter().map(|&(k, e)| tables[k].name_of(e)).collect()
    };
    let mut lines =
        crate::explain::explain(trace, &sources, &namer, out_alloc, &yours, &spec, EXPLAINED_CELLS, puzzle.tolerance, &expected);
    if trace.truncated && !lines.is_empty() {
        lines.push("(the trace was cut short; later accesses are not taken into account)".into());
    }
    lines
}
