//! `metal-puzzles run`: one kernel of a full Metal source on the simulator,
//! arguments bound by parameter name (see the Usage section of README.md).

use crate::lint::{compile_options, read_source, PreprocessArgs};
use crate::report::exit_code;
use crate::EXIT_BAD_RESULT;
use clap::{Args, ValueEnum};
use gpu::ir::ParamKind;
use gpu::{CheckLevel, Dispatch, DispatchMode, RunOptions};
use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Instant;

#[derive(Args)]
pub struct RunArgs {
    /// The Metal source file.
    pub file: PathBuf,
    /// The kernel to run (its `[[host_name]]` or function name).
    #[arg(long)]
    pub kernel: String,
    /// Threads per dimension (or threadgroups with `--dispatch threadgroups`): X[,Y[,Z]].
    #[arg(long)]
    pub grid: String,
    /// Threads per threadgroup: X[,Y[,Z]].
    #[arg(long)]
    pub threadgroup: String,
    /// Bind a kernel parameter: NAME=@file.npy, NAME=VALUE:DTYPE, NAME=zeros(SHAPE):DTYPE,
    /// NAME={"field": VALUE, ...}, NAME=@file.json or a NumPy record array (a struct, vector or
    /// array, laid out as Metal does), ...
    #[arg(long = "arg", value_name = "NAME=VALUE")]
    pub args: Vec<String>,
    /// Size of a `[[threadgroup(N)]]` buffer parameter, in bytes, as the
    /// host's `setThreadgroupMemoryLength:atIndex:` would give it:
    /// `--threadgroup-memory 0=4096` (repeatable).
    #[arg(long = "threadgroup-memory", value_name = "INDEX=BYTES")]
    pub threadgroup_memory: Vec<String>,
    /// Write every output buffer as DIR/NAME.npy.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Sanitizer level.
    #[arg(long, value_enum, default_value = "all")]
    pub check: Check,
    /// Run the dispatch REPS more times and print kernel_seconds_median=...
    #[arg(long, value_name = "REPS")]
    pub bench: Option<u32>,
    /// Print one JSON document instead of text.
    #[arg(long)]
    pub json: bool,
    /// `threads` (dispatchThreads, the default) or `threadgroups`.
    #[arg(long, value_enum, default_value = "threads")]
    pub dispatch: DispatchKind,
    #[command(flatten)]
    pub pp: PreprocessArgs,
    /// Count memory operations per thread and print the per-thread maxima
    /// (the book's score table; `--help` says what counts).
    #[arg(long, long_help = counts_help())]
    pub counts: bool,
    /// Instructions one threadgroup may execute before the kernel counts as
    /// runaway (threads run in lock-step, so this is about the instructions
    /// per thread; a 1024x1024 tiled matmul needs under 100,000).
    #[arg(long, default_value_t = session::DEFAULT_BUDGET)]
    pub budget: u64,
    /// Also write a JUnit XML report (one test case: the kernel) to FILE.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Worker threads for large dispatches (0: two, on every machine; 1:
    /// threadgroups strictly in order). Race-free kernels give the same
    /// result with any number; racy ones the same result for the same number.
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
    #[command(flatten)]
    pub engine: EngineArgs,
    /// Print statistics per source line: executions, SIMD lane utilisation,
    /// memory traffic, atomics, barrier waits (with --json: a "profile" object).
    #[arg(long)]
    pub profile: bool,
    #[command(flatten)]
    pub schedules: ScheduleArgs,
    #[command(flatten)]
    pub logging: crate::logs::LogArgs,
    #[command(flatten)]
    pub capture: crate::captures::CaptureArgs,
    /// Set by `debug`: the thread to watch and what to print.
    #[arg(skip)]
    pub debug: Option<crate::debug::Request>,
}

#[derive(Clone, Copy, ValueEnum)]
pub enum Check {
    None,
    Memory,
    All,
    /// `all`, and for every NaN or infinity in the outputs, the operation
    /// that first made a non-finite value from finite operands.
    Nan,
}

#[derive(Clone, Copy, ValueEnum)]
pub enum DispatchKind {
    Threads,
    Threadgroups,
}

/// Parse `X[,Y[,Z]]`.
pub fn parse_dims(s: &str, what: &str) -> Result<[u32; 3], String> {
    let parts: Vec<&str> = s.split(',').map(|p| p.trim()).collect();
    if parts.is_empty() || parts.len() > 3 {
        return Err(format!("{what} must be X, X,Y or X,Y,Z (got `{s}`)"));
    }
    let mut out = [1u32; 3];
    for (i, p) in parts.iter().enumerate() {
        out[i] = match p.parse::<u64>() {
            Ok(v) if v > u32::MAX as u64 => {
                return Err(format!("{what}: `{p}` is over the limit of {} per dimension (in `{s}`)", u32::MAX))
            }
            Ok(v) => v as u32,
            Err(_) => return Err(format!("{what}: `{p}` is not a whole number (in `{s}`)")),
        };
        if out[i] == 0 {
            return Err(format!("{what}: every dimension must be at least 1 (got `{s}`)"));
        }
    }
    Ok(out)
}

pub use session::bind::name_seed;

/// The files named by `NAME=@path` arguments.
pub fn argument_files(args: &[String]) -> impl Iterator<Item = PathBuf> + '_ {
    args.iter().filter_map(|a| a.split_once('=')).filter_map(|(_, v)| v.trim().strip_prefix('@')).map(PathBuf::from)
}

/// The files a run reads: the source, the headers it included and every
/// `NAME=@file` argument (outputs must never be written over them).
pub fn input_paths(file: &std::path::Path, args: &[String], sources: &msl::source::SourceMap) -> Vec<PathBuf> {
    let mut out = vec![file.to_path_buf()];
    out.extend(argument_files(args));
    // A header's name is its path as shown: relative to the main file's
    // folder, or as found under a `-I` root.
    let dir = file.parent().unwrap_or(std::path::Path::new(""));
    for e in sources.includes() {
        let name = PathBuf::from(&sources.file(e.to).name);
        out.push(dir.join(&name));
        out.push(name);
    }
    out
}

pub fn run(args: &RunArgs) -> u8 {
    exit_code(run_inner(args), args.json)
}

/// How a session that could not give an outcome ends: printed (or handed
/// to the debugger's screen), with its exit code.
pub(crate) fn report_error(e: session::Error, json: bool, debug: Option<&crate::debug::Request>) -> Result<u8, String> {
    let Some((sources, diagnostics)) = e.diagnostics() else {
        return Err(e.to_string());
    };
    if let Some(sink) = debug.and_then(|r| r.interactive.as_ref()) {
        sink.borrow_mut().failed(sources, diagnostics);
        return Ok(EXIT_BAD_RESULT);
    }
    if json {
        println!("{}", e.to_json());
    } else {
        eprint!("{}", e.render(crate::color::stderr()));
        if debug.is_some() {
            return Ok(crate::debug::compile_failure_code(diagnostics));
        }
    }
    Ok(e.exit_code())
}

pub(crate) fn run_inner(args: &RunArgs) -> Result<u8, String> {
    let text = read_source(&args.file)?;
    let name = args.file.display().to_string();
    let grid = parse_dims(&args.grid, "--grid")?;
    let tg = parse_dims(&args.threadgroup, "--threadgroup")?;
    let mut pp = compile_options(&args.pp, Some(&args.file));
    if args.debug.is_some() && (args.json || args.bench.is_some()) {
        return Err("debug prints a table: drop --json and --bench".into());
    }
    if let Some(req) = &args.debug {
        let grid_threads = match args.dispatch {
            DispatchKind::Threads => grid,
            DispatchKind::Threadgroups => [0, 1, 2].map(|d| grid[d].saturating_mul(tg[d])),
        };
        req.check_thread(grid_threads)?;
        pp.probes = msl::probe::Probes { requests: req.probe_requests(), view: None };
    }
    let sink = args.debug.as_ref().and_then(|r| r.interactive.clone());
    let color = crate::color::stderr();
    let lib = match session::Library::compile(&name, &text, &pp) {
        Ok(lib) => lib,
        Err(e) => return report_error(e, args.json, args.debug.as_ref()),
    };
    if !args.json && sink.is_none() && !lib.diagnostics().is_empty() {
        eprint!("{}", msl::diag::render(lib.sources(), lib.diagnostics(), color));
    }
    crate::lint::check_constants_exist(&args.pp, lib.program())?;
    let nan = matches!(args.check, Check::Nan) || args.debug.as_ref().is_some_and(|r| r.nan);
    let how =
        session::LowerKey { statement_marks: args.profile || nan, debug_stops: crate::debug::Request::wants_stops(args.debug.as_ref()) };
    let kernel = match lib.kernel_with(&args.kernel, how) {
        Ok(k) => k,
        Err(e) => return report_error(e, args.json, args.debug.as_ref()),
    };

    // Bind arguments by parameter name.
    // All buffers together stay within one budget, checked before each is
    // read or generated.
    let mut values = Vec::new();
    let mut used = 0usize;
    for a in &args.args {
        let (pname, spec) = a.split_once('=').ok_or_else(|| format!("--arg `{a}` must look like NAME=VALUE"))?;
        let room = arrays::MAX_TOTAL_BUFFER_BYTES.saturating_sub(used);
        let v = session::bind::parse_value_within(pname.trim(), spec, room)?;
        used += session::bind::value_bytes(&v);
        values.push((pname.trim().to_string(), v));
    }
    let bindings = kernel.bind(values).map_err(|e| e.to_string())?;
    // Outputs never replace what the run read: its source, headers and
    // argument files. Checked before running, so nothing is lost.
    let inputs = input_paths(&args.file, &args.args, lib.sources());
    args.capture.check_target(&inputs)?;
    if let Some(dir) = &args.out {
        for b in bindings.items.iter().filter(|b| b.writable) {
            files::refuse_overwrite(&dir.join(format!("{}.npy", b.name)), &inputs, "--out")?;
        }
    }
    let dispatch = Dispatch {
        grid,
        threadgroup: tg,
        mode: match args.dispatch {
            DispatchKind::Threads => DispatchMode::Threads,
            DispatchKind::Threadgroups => DispatchMode::Threadgroups,
        },
    };
    let threadgroup_buffers = threadgroup_buffer_sizes(&args.threadgroup_memory, kernel.ir())?;
    let opts = RunOptions {
        threadgroup_buffers,
        check: match args.check {
            Check::None => CheckLevel::None,
            Check::Memory => CheckLevel::Memory,
            Check::All | Check::Nan => CheckLevel::All,
        },
        budget: args.budget,
        count: args.counts,
        threads: args.threads,
        engine: args.engine.engine(),
        profile: args.profile,
        nan,
        probe: args.debug.as_ref().and_then(|r| r.probe()),
        stops: args.debug.as_ref().and_then(|r| r.stops()),
        log: {
            let (threads, groups) = match args.dispatch {
                DispatchKind::Threads => (grid, [0, 1, 2].map(|d| grid[d].div_ceil(tg[d]))),
                DispatchKind::Threadgroups => ([0, 1, 2].map(|d| grid[d].saturating_mul(tg[d])), grid),
            };
            let watched = args.debug.as_ref().filter(|r| r.interactive.is_none()).map(|r| r.thread);
            crate::logs::run_options(&args.logging, threads, groups, watched)?
        },
        schedules: args.schedules.schedules,
        schedule_tolerance: args.schedules.tolerance(),
        ..Default::default()
    };
    let started = Instant::now();
    let show_progress = std::io::stderr().is_terminal() && !args.json && sink.is_none();
    let mut last_draw = Instant::now();
    let mut progress = |done: u64, total: u64| {
        if show_progress && started.elapsed().as_secs_f64() > 1.0 && last_draw.elapsed().as_millis() > 100 {
            last_draw = Instant::now();
            let width = 30usize;
            let filled = (done as f64 / total.max(1) as f64 * width as f64) as usize;
            eprint!("\r[{}{}] {done}/{total} threadgroups", "#".repeat(filled), " ".repeat(width - filled.min(width)));
        }
    };
    // A dispatch Metal would refuse is a usage error: nothing runs.
    let outcome = kernel.run_with_progress(&bindings, dispatch, &opts, &mut progress).map_err(|e| e.to_string())?;
    if show_progress && started.elapsed().as_secs_f64() > 1.0 {
        eprint!("\r{}\r", " ".repeat(60));
    }
    let report = &outcome.report;
    if let Some(sink) = &sink {
        let mut o = sink.borrow_mut();
        if let Some(req) = &args.debug {
            o.finished(report, &outcome.sources, req);
        }
        o.grid = match args.dispatch {
            DispatchKind::Threads => grid,
            DispatchKind::Threadgroups => [0, 1, 2].map(|d| grid[d].saturating_mul(tg[d])),
        };
        o.threadgroup = tg;
        o.what = format!("kernel `{}` of {name}", args.kernel);
        return Ok(outcome.exit_code());
    }
    if let Some(reps) = args.bench {
        let mut times = Vec::new();
        for _ in 0..reps {
            times.push(kernel.time_dispatch(&bindings, dispatch, &opts).map_err(|e| e.to_string())?.as_secs_f64());
        }
        if times.is_empty() {
            times.push(started.elapsed().as_secs_f64());
        }
        times.sort_by(|a, b| a.total_cmp(b));
        println!("kernel_seconds_median={}", times[times.len() / 2]);
    }

    let shown = Presentation {
        kernel: &args.kernel,
        json: args.json,
        out: args.out.as_deref(),
        debug: args.debug.as_ref(),
        dispatch_note: format!(
            " of kernel `{}`: grid {},{},{}, threadgroup {},{},{}",
            args.kernel, grid[0], grid[1], grid[2], tg[0], tg[1], tg[2]
        ),
        threadgroup: tg,
        compile_warnings_shown: true,
    };
    if let Some(code) = present(&outcome, &shown, color)? {
        return Ok(code);
    }
    if let Some(path) = &args.junit {
        let case = junit_case(&outcome, &name, &args.kernel);
        session::formats::write_atomically(path, &session::formats::junit("metal-puzzles run", &[case]))?;
    }
    args.capture.save(&args.kernel, || {
        let run = capture::SourceRun {
            sources: &outcome.sources,
            main: lib.file(),
            compile_options: &pp,
            kernel: &args.kernel,
            dispatch,
            options: &opts,
            arguments: bindings.items.iter().map(|b| (b.name.clone(), b.array.clone(), b.writable)).collect(),
            outputs: outcome.outputs.iter().map(|o| (o.name.clone(), o.array.clone())).collect(),
            findings: &report.findings,
        };
        capture::from_source(&run, "metal-puzzles run", format!("kernel `{}` of {name}", args.kernel), capture::DEFAULT_LIMIT)
    })?;
    Ok(outcome.exit_code())
}

/// How a finished run is shown: what `run` and `mlx` share.
pub(crate) struct Presentation<'a> {
    pub kernel: &'a str,
    pub json: bool,
    /// Write the outputs as `.npy` files here instead of printing them.
    pub out: Option<&'a std::path::Path>,
    pub debug: Option<&'a crate::debug::Request>,
    /// " of kernel `k`: grid …, threadgroup …", for the debugger's table.
    pub dispatch_note: String,
    pub threadgroup: [u32; 3],
    /// The compile's warnings were printed before the run.
    pub compile_warnings_shown: bool,
}

/// Print a finished run: logs, the debugger's table (then stop: the exit
/// code is returned), or outputs, findings, counts, profile and NaN origins
/// as text or one JSON document.
pub(crate) fn present(outcome: &session::Outcome, p: &Presentation, color: bool) -> Result<Option<u8>, String> {
    let report = &outcome.report;
    if let (Some(logs), false) = (&report.logs, p.json) {
        print!("{}", crate::logs::text(logs));
    }
    let findings = || {
        let diags: Vec<msl::diag::Diagnostic> = report.findings.iter().map(gpu::Finding::to_diagnostic).collect();
        msl::diag::render(&outcome.sources, &diags, color)
    };
    if let Some(req) = p.debug {
        let placed = crate::debug::placed(&req.prints, &report.probe_sites, &outcome.sources);
        print!("{}", crate::debug::render(req, p.threadgroup, &placed, report.probes.as_ref(), &p.dispatch_note));
        eprint!("{}", findings());
        return Ok(Some(outcome.exit_code()));
    }
    let mut outputs = serde_json::Map::new();
    let mut printed = Vec::new();
    if let Some(dir) = p.out {
        std::fs::create_dir_all(dir).map_err(|e| format!("cannot create `{}`: {e}", dir.display()))?;
    }
    for o in &outcome.outputs {
        match p.out {
            Some(dir) => {
                let path = dir.join(format!("{}.npy", o.name));
                o.array.write_npy(&path).map_err(|e| format!("cannot write `{}`: {e}", path.display()))?;
                outputs.insert(o.name.clone(), serde_json::Value::String(path.display().to_string()));
            }
            None => {
                outputs.insert(o.name.clone(), serde_json::Value::Null);
                printed.push(format!("{} = {}", o.name, o.array.repr_numpy()));
            }
        }
    }
    let (threads, groups) = (report.threads, report.threadgroups);
    if p.json {
        let mut doc = outcome.to_json(outputs);
        doc["kernel"] = serde_json::Value::String(outcome.kernel.clone());
        if let Some(m) = report.max_counts {
            doc["counts"] = counts_json(&m);
        }
        if let Some(l) = &report.logs {
            doc["logs"] = crate::logs::json(l);
        }
        if let Some(prof) = &report.profile {
            doc["profile"] = crate::profile::json(p.kernel, prof, &outcome.sources, threads, groups);
        }
        if let Some(n) = &report.nan {
            doc["nan"] = session::nan::json(n, &outcome.sources);
        }
        println!("{doc}");
    } else {
        if p.compile_warnings_shown {
            eprint!("{}", findings());
            for w in &outcome.warnings {
                eprintln!("warning: {w}");
            }
        } else {
            eprint!("{}", outcome.render(color));
        }
        if let Some(n) = &outcome.report.engine_note {
            eprintln!("note: {n}");
        }
        for line in printed {
            println!("{line}");
        }
        if let Some(m) = report.max_counts {
            print!("{}", counts_table(&m));
        }
        if let Some(prof) = &report.profile {
            print!("{}", crate::profile::text(p.kernel, prof, &outcome.sources, threads, groups));
        }
        if let Some(n) = &report.nan {
            eprint!("{}", session::nan::text(n, &outcome.sources));
        }
    }
    Ok(None)
}

/// One JUnit test case for a run: failed when a finding is an error.
pub fn junit_case(outcome: &session::Outcome, file: &str, kernel: &str) -> session::formats::TestCase {
    let errors: Vec<&gpu::Finding> = outcome.findings().iter().filter(|f| f.is_error).collect();
    session::formats::TestCase {
        name: kernel.to_string(),
        classname: file.to_string(),
        seconds: 0.0,
        failure: errors.first().map(|f| {
            let line = outcome.sources.line_col(f.span).0;
            (format!("{} at line {line}: {}", f.kind.name(), f.message), outcome.render(false))
        }),
        skipped: None,
        output: outcome.warnings.join("\n"),
    }
}

/// `--counts`' long help: what it prints and the counting rule.
pub fn counts_help() -> String {
    format!(
        "Count memory operations per thread and print the per-thread maxima as the book's score table.\n\n{}",
        puzzles::render::COUNTING_RULE
    )
}

/// Per-thread maxima as JSON.
pub fn counts_json(m: &gpu::sanitizer::Counts) -> serde_json::Value {
    serde_json::json!({
        "global_reads": m.device_reads,
        "global_writes": m.device_writes,
        "shared_reads": m.threadgroup_reads,
        "shared_writes": m.threadgroup_writes,
    })
}

/// Per-thread maxima as the puzzle book's table (its four columns, then
/// any later one the kernel used).
pub fn counts_table(m: &gpu::sanitizer::Counts) -> String {
    let score = puzzles::check::score_of(m);
    puzzles::render::counts_table(score, &puzzles::render::counts_columns(score))
}

/// `--threadgroup-memory INDEX=BYTES` values, checked against the kernel's
/// `[[threadgroup(N)]]` parameters: every one needs a size, and every size
/// names one of them.
fn threadgroup_buffer_sizes(specs: &[String], kernel: &gpu::Kernel) -> Result<BTreeMap<u32, u32>, String> {
    let declared: Vec<(u32, &str)> = kernel
        .params
        .iter()
        .filter_map(|p| match &p.kind {
            ParamKind::ThreadgroupBuffer { index, .. } => Some((*index, p.name.as_str())),
            _ => None,
        })
        .collect();
    let mut sizes = BTreeMap::new();
    for spec in specs {
        let parsed = spec.split_once('=').and_then(|(i, b)| Some((i.trim().parse::<u32>().ok()?, b.trim().parse::<u32>().ok()?)));
        let Some((index, bytes)) = parsed else {
            return Err(format!("--threadgroup-memory `{spec}` must look like INDEX=BYTES, e.g. `0=4096`"));
        };
        if !declared.iter().any(|&(i, _)| i == index) {
            let have: Vec<String> = declared.iter().map(|(i, n)| format!("{i} (`{n}`)")).collect();
            return Err(format!(
                "--threadgroup-memory {index}=…: kernel `{}` has no `[[threadgroup({index})]]` parameter{}",
                kernel.name,
                if have.is_empty() { String::new() } else { format!("; it has: {}", have.join(", ")) }
            ));
        }
        if sizes.insert(index, bytes).is_some() {
            return Err(format!("--threadgroup-memory gives index {index} twice"));
        }
    }
    if let Some((index, name)) = declared.iter().find(|(i, _)| !sizes.contains_key(i)) {
        return Err(format!(
            "kernel `{}` has a threadgroup buffer parameter `{name}` [[threadgroup({index})]]: give its size with --threadgroup-memory {index}=BYTES",
            kernel.name
        ));
    }
    Ok(sizes)
}

/// Schedule exploration (with `--check all`): a real GPU may run the
/// `--engine`: the interpreter or the compiled tier.
#[derive(clap::Args, Debug, Clone)]
pub struct EngineArgs {
    /// How to run: `interp` (the interpreter), `jit` (compiled to native
    /// code where it can be, with a note where not), `auto` (compiled
    /// before running from 65,536 threads; from 1,024, or once a kernel has
    /// run interpreted for 2 ms, compiled in the background for the runs
    /// after). The results are the same; only the time differs.
    #[arg(long = "engine", value_name = "ENGINE", default_value = "auto", value_parser = ["interp", "jit", "auto"])]
    pub choice: String,
}

impl EngineArgs {
    pub fn engine(&self) -> session::engine::Engine {
        self.choice.parse().unwrap_or_default()
    }
}

/// SIMD-groups of a threadgroup, its threadgroups and the lanes of one
/// atomic in any order; a result that depends on the order is a finding.
#[derive(clap::Args, Debug, Clone)]
pub struct ScheduleArgs {
    /// Other legal schedules to run the kernel under when unordered atomics
    /// may make the result depend on the order (SIMD-groups one at a time
    /// between barriers, threadgroups and atomic lanes in other orders);
    /// 0 turns exploration off.
    #[arg(long, default_value_t = 2, value_name = "N")]
    pub schedules: usize,
    /// Float outputs of two schedules within ATOL + RTOL * |value| of each
    /// other differ only by rounding (e.g. atomic float sums in another order).
    #[arg(long, default_value_t = 1e-4, value_name = "RTOL")]
    pub schedule_rtol: f64,
    #[arg(long, default_value_t = 1e-5, value_name = "ATOL")]
    pub schedule_atol: f64,
}

impl ScheduleArgs {
    pub fn tolerance(&self) -> (f64, f64) {
        (self.schedule_rtol, self.schedule_atol)
    }
}
