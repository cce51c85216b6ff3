//! `metal-puzzles run`: one kernel of a full Metal source on the simulator,
//! arguments bound by parameter name (see the Usage section of README.md).

use crate::lint::{compile_options, read_source, PreprocessArgs};
use crate::report::exit_code;
use crate::{EXIT_BAD_RESULT, EXIT_CANNOT_START, EXIT_OK};
use arrays::Array;
use clap::{Args, ValueEnum};
use gpu::ir::ParamKind;
use gpu::{CheckLevel, Dispatch, DispatchMode, RunOptions};
use mlx::shader::buffer_bytes;
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
    #[arg(long, default_value_t = 10_000_000)]
    pub budget: u64,
    /// Worker threads for large dispatches (0: two, on every machine; 1:
    /// threadgroups strictly in order). Race-free kernels give the same
    /// result with any number; racy ones the same result for the same number.
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
    /// Print statistics per source line: executions, SIMD lane utilisation,
    /// memory traffic, atomics, barrier waits (with --json: a "profile" object).
    #[arg(long)]
    pub profile: bool,
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

/// A stable seed per parameter name, so generated inputs differ between
/// parameters but not between runs.
pub fn name_seed(name: &str) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ b as u64).wrapping_mul(0x100_0000_01b3))
}

/// A `--arg` value before it meets its parameter: JSON is laid out only
/// once the parameter's type is known.
enum Given {
    Array(Array),
    Json(serde_json::Value),
}

/// The files a run reads: the source, the headers it included and every
/// `NAME=@file` argument (outputs must never be written over them).
pub fn input_paths(file: &std::path::Path, args: &[String], sources: &msl::source::SourceMap) -> Vec<PathBuf> {
    let mut out = vec![file.to_path_buf()];
    out.extend(args.iter().filter_map(|a| a.split_once('=')).filter_map(|(_, v)| v.trim().strip_prefix('@')).map(PathBuf::from));
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

/// JSON files for arguments are small; refuse anything that could exhaust memory.
const MAX_JSON_BYTES: u64 = 64 << 20;

fn read_json(path: &str) -> Result<serde_json::Value, String> {
    let text = files::read_text(std::path::Path::new(path), MAX_JSON_BYTES, "the JSON argument")
        .map_err(|e| format!("{e} (use a .npy for large buffers)"))?;
    serde_json::from_str(&text).map_err(|e| format!("`{path}` is not valid JSON: {e}"))
}

struct Bound {
    name: String,
    index: u32,
    array: Array,
    output: bool,
}

pub fn run(args: &RunArgs) -> u8 {
    exit_code(run_inner(args), args.json)
}

pub(crate) fn run_inner(args: &RunArgs) -> Result<u8, String> {
    let text = read_source(&args.file)?;
    let name = args.file.display().to_string();
    let grid = parse_dims(&args.grid, "--grid")?;
    let tg = parse_dims(&args.threadgroup, "--threadgroup")?;
    let pp = compile_options(&args.pp, Some(&args.file));
    if args.debug.is_some() && (args.json || args.bench.is_some()) {
        return Err("debug prints a table: drop --json and --bench".into());
    }
    let (text, placed) = match &args.debug {
        Some(req) => {
            let grid_threads = match args.dispatch {
                DispatchKind::Threads => grid,
                DispatchKind::Threadgroups => [0, 1, 2].map(|d| grid[d].saturating_mul(tg[d])),
            };
            req.check_thread(grid_threads)?;
            crate::debug::instrument_file(&name, &text, &pp, req)?
        }
        None => (text, Vec::new()),
    };
    let c = msl::compile(&name, &text, &pp);
    let sink = args.debug.as_ref().and_then(|r| r.interactive.clone());
    let color = std::io::stderr().is_terminal();
    let diag_json = |c: &msl::Compilation| -> Vec<serde_json::Value> {
        c.diagnostics.items.iter().map(|d| msl::diag::to_json(&c.sources, d)).collect()
    };
    let Some(program) = c.program.as_ref() else {
        if let Some(sink) = &sink {
            sink.borrow_mut().failed(&c.sources, &c.diagnostics.items, &placed);
            return Ok(EXIT_BAD_RESULT);
        }
        if args.json {
            println!("{}", serde_json::json!({"diagnostics": diag_json(&c), "findings": [], "outputs": {}}));
        } else {
            eprint!("{}", c.render(color));
            if !placed.is_empty() {
                eprintln!("{}", crate::debug::placed_note(&placed));
            }
        }
        return Ok(EXIT_BAD_RESULT);
    };
    if !args.json && sink.is_none() && !c.diagnostics.items.is_empty() {
        eprint!("{}", c.render(color));
    }
    crate::lint::check_constants_exist(&args.pp, program)?;
    let Some((kid, _)) = program.kernel(&args.kernel) else {
        let names: Vec<String> = program.kernels().filter_map(|(_, f)| f.host_name.clone()).collect();
        return Err(format!(
            "`{}` has no kernel named `{}`; its kernels are: {}",
            name,
            args.kernel,
            if names.is_empty() { "(none)".into() } else { names.join(", ") }
        ));
    };
    let kernel = match gpu::lower::lower_kernel_with(
        program,
        kid,
        gpu::lower::LowerOptions { statement_marks: args.profile, debug_stops: crate::debug::Request::wants_stops(args.debug.as_ref()) },
    ) {
        Ok(k) => k,
        Err(e) => {
            let d = e.to_diagnostic();
            if let Some(sink) = &sink {
                sink.borrow_mut().failed(&c.sources, &[d], &placed);
                return Ok(EXIT_BAD_RESULT);
            }
            if args.json {
                println!("{}", serde_json::json!({"diagnostics": [msl::diag::to_json(&c.sources, &d)], "findings": [], "outputs": {}}));
            } else {
                eprint!("{}", msl::diag::render(&c.sources, &[d], color));
            }
            // A pipeline Metal would refuse to build: a usage error.
            return Ok(if e.is_limitation { EXIT_BAD_RESULT } else { EXIT_CANNOT_START });
        }
    };

    // Bind arguments by parameter name.
    let mut given: BTreeMap<String, Given> = BTreeMap::new();
    // All buffers together stay within one budget, checked before each
    // is allocated or read.
    let mut used: usize = 0;
    for a in &args.args {
        let room = arrays::MAX_TOTAL_BUFFER_BYTES.saturating_sub(used);
        let (pname, spec) = a.split_once('=').ok_or_else(|| format!("--arg `{a}` must look like NAME=VALUE"))?;
        let pname = pname.trim();
        let value = if spec.trim_start().starts_with(['{', '[']) {
            Given::Json(serde_json::from_str(spec).map_err(|e| format!("parameter `{pname}`: `{spec}` is not valid JSON: {e}"))?)
        } else if let Some(path) = spec.strip_prefix('@').filter(|p| p.ends_with(".json")) {
            Given::Json(read_json(path).map_err(|e| format!("parameter `{pname}`: {e}"))?)
        } else if let Some(path) = spec.strip_prefix('@') {
            let cannot = |e: String| format!("parameter `{pname}`: cannot load `{path}`: {e}");
            let bytes = files::read_bytes(std::path::Path::new(path), room as u64, "the array").map_err(|e| {
                cannot(format!("{e} (all buffers of a dispatch together may take {} bytes)", arrays::MAX_TOTAL_BUFFER_BYTES))
            })?;
            if arrays::is_record_npy(&bytes) {
                // A NumPy record array: its fields are matched to the struct's by name.
                Given::Json(arrays::records_from_npy_bytes(&bytes).map_err(cannot)?)
            } else {
                Given::Array(Array::from_npy_bytes(&bytes).map_err(cannot)?)
            }
        } else {
            Given::Array(arrays::parse_value_within(spec, name_seed(pname), room).map_err(|e| format!("parameter `{pname}`: {e}"))?)
        };
        used += match &value {
            Given::Array(a) => a.nbytes(),
            Given::Json(_) => 0,
        };
        if given.insert(pname.to_string(), value).is_some() {
            return Err(format!("parameter `{pname}` is bound twice"));
        }
    }
    let mut bound: Vec<Bound> = Vec::new();
    for p in &kernel.params {
        match &p.kind {
            ParamKind::Buffer { index, pointee, pointee_size, writable, by_reference, .. } => {
                let Some(value) = given.remove(&p.name) else {
                    return Err(format!(
                        "kernel `{}` needs a value for its buffer parameter `{}` (`{}`): add --arg {}=@file.npy or {}={}",
                        args.kernel,
                        p.name,
                        program.types.display(pointee),
                        p.name,
                        p.name,
                        if *by_reference { "VALUE:DTYPE" } else { "zeros(N):DTYPE" }
                    ));
                };
                let a = match value {
                    Given::Array(a) => a,
                    Given::Json(v) => {
                        let bytes = mlx::json_args::json_to_bytes(&v, pointee, &program.types, !*by_reference, &p.name)?;
                        Array::from_bytes(arrays::DType::U8, &[bytes.len()], bytes)?
                    }
                };
                let bytes = buffer_bytes(&p.name, &a, pointee, *pointee_size, &program.types)?;
                // A reference (`constant long2&`, `constant Params&`) is one
                // value: a scalar, or the elements (or raw bytes) of one
                // vector, array or struct.
                if *by_reference && bytes.len() != *pointee_size as usize {
                    return Err(format!(
                        "parameter `{}` is a single `{}` ({} bytes), but {} values ({} bytes) were given",
                        p.name,
                        program.types.display(pointee),
                        pointee_size,
                        a.len(),
                        bytes.len()
                    ));
                }
                bound.push(Bound { name: p.name.clone(), index: *index, array: a, output: *writable });
            }
            ParamKind::ThreadgroupBuffer { .. } => {}
            ParamKind::Attr { .. } => {
                if given.contains_key(&p.name) {
                    return Err(format!(
                        "parameter `{}` is a thread-position attribute; the simulator supplies it, do not bind it",
                        p.name
                    ));
                }
            }
        }
    }
    if let Some((extra, _)) = given.iter().next() {
        let names: Vec<&str> =
            kernel.params.iter().filter(|p| matches!(p.kind, ParamKind::Buffer { .. })).map(|p| p.name.as_str()).collect();
        return Err(format!(
            "kernel `{}` has no buffer parameter named `{extra}`; its buffer parameters are: {}",
            args.kernel,
            names.join(", ")
        ));
    }
    // Outputs never replace what the run read: its source, headers and
    // argument files. Checked before running, so nothing is lost.
    let inputs = input_paths(&args.file, &args.args, &c.sources);
    args.capture.check_target(&inputs)?;
    if let Some(dir) = &args.out {
        for b in bound.iter().filter(|b| b.output) {
            files::refuse_overwrite(&dir.join(format!("{}.npy", b.name)), &inputs, "--out")?;
        }
    }
    let mut buffers: BTreeMap<u32, Vec<u8>> = BTreeMap::new();
    for b in &bound {
        buffers.insert(b.index, b.array.contiguous_bytes());
    }
    let dispatch = Dispatch {
        grid,
        threadgroup: tg,
        mode: match args.dispatch {
            DispatchKind::Threads => DispatchMode::Threads,
            DispatchKind::Threadgroups => DispatchMode::Threadgroups,
        },
    };
    let threadgroup_buffers = threadgroup_buffer_sizes(&args.threadgroup_memory, &kernel)?;
    let opts = RunOptions {
        threadgroup_buffers,
        check: match args.check {
            Check::None => CheckLevel::None,
            Check::Memory => CheckLevel::Memory,
            Check::All => CheckLevel::All,
        },
        budget: args.budget,
        count: args.counts,
        threads: args.threads,
        profile: args.profile,
        probe: args.debug.as_ref().and_then(|r| r.probe()),
        stops: args.debug.as_ref().and_then(|r| r.stops()),
        log: args.logging.options()?,
        ..Default::default()
    };
    // A dispatch Metal would refuse is a usage error: nothing runs.
    gpu::validate(&kernel, &dispatch, &opts).map_err(|e| format!("cannot dispatch this kernel: {e}"))?;
    let inputs = if args.bench.is_some() { Some(buffers.clone()) } else { None };
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
    let report = gpu::run_with_progress(&kernel, &dispatch, &mut buffers, &opts, &mut progress);
    if show_progress && started.elapsed().as_secs_f64() > 1.0 {
        eprint!("\r{}\r", " ".repeat(60));
    }
    if let Some(sink) = &sink {
        let mut o = sink.borrow_mut();
        o.finished(&report, &c.sources, &placed);
        o.grid = match args.dispatch {
            DispatchKind::Threads => grid,
            DispatchKind::Threadgroups => [0, 1, 2].map(|d| grid[d].saturating_mul(tg[d])),
        };
        o.threadgroup = tg;
        o.what = format!("kernel `{}` of {name}", args.kernel);
        return Ok(if report.has_errors() { EXIT_BAD_RESULT } else { EXIT_OK });
    }
    if let (Some(reps), Some(inputs)) = (args.bench, inputs) {
        let mut times = Vec::new();
        for _ in 0..reps {
            let mut bufs = inputs.clone();
            let t = Instant::now();
            let _ = gpu::run(&kernel, &dispatch, &mut bufs, &opts);
            times.push(t.elapsed().as_secs_f64());
        }
        if times.is_empty() {
            times.push(started.elapsed().as_secs_f64());
        }
        times.sort_by(|a, b| a.total_cmp(b));
        println!("kernel_seconds_median={}", times[times.len() / 2]);
    }

    if let (Some(logs), false) = (&report.logs, args.json) {
        print!("{}", crate::logs::text(logs));
    }
    if let Some(req) = &args.debug {
        let [gx, gy, gz] = grid;
        let [tx, ty, tz] = tg;
        let note = format!(" of kernel `{}`: grid {gx},{gy},{gz}, threadgroup {tx},{ty},{tz}", args.kernel);
        print!("{}", crate::debug::render(req, tg, &placed, report.probes.as_ref(), &note));
        let diags: Vec<msl::diag::Diagnostic> = report.findings.iter().map(gpu::Finding::to_diagnostic).collect();
        eprint!("{}", msl::diag::render(&c.sources, &diags, color));
        return Ok(if report.has_errors() { EXIT_BAD_RESULT } else { EXIT_OK });
    }

    // Outputs.
    let mut results: Vec<(String, Array)> = Vec::new();
    let mut outputs = serde_json::Map::new();
    let mut printed = Vec::new();
    if let Some(dir) = &args.out {
        std::fs::create_dir_all(dir).map_err(|e| format!("cannot create `{}`: {e}", dir.display()))?;
    }
    for b in bound.iter().filter(|b| b.output) {
        let bytes = buffers.remove(&b.index).unwrap_or_default();
        let result = Array::from_bytes(b.array.dtype, &b.array.shape, bytes).map_err(|e| format!("output `{}`: {e}", b.name))?;
        results.push((b.name.clone(), result.clone()));
        match &args.out {
            Some(dir) => {
                let path = dir.join(format!("{}.npy", b.name));
                result.write_npy(&path).map_err(|e| format!("cannot write `{}`: {e}", path.display()))?;
                outputs.insert(b.name.clone(), serde_json::Value::String(path.display().to_string()));
            }
            None => {
                outputs.insert(b.name.clone(), serde_json::Value::Null);
                printed.push(format!("{} = {}", b.name, result.repr_numpy()));
            }
        }
    }
    let has_errors = report.has_errors() || c.has_errors();
    if args.json {
        let findings: Vec<serde_json::Value> = report.findings.iter().map(|f| f.to_json(&c.sources)).collect();
        let mut doc = serde_json::json!({"diagnostics": diag_json(&c), "findings": findings, "outputs": outputs});
        if let Some(m) = report.max_counts {
            doc["counts"] = counts_json(&m);
        }
        if let Some(l) = &report.logs {
            doc["logs"] = crate::logs::json(l);
        }
        if let Some(p) = &report.profile {
            doc["profile"] = crate::profile::json(&args.kernel, p, &c.sources, report.threads, report.threadgroups);
        }
        println!("{doc}");
    } else {
        let diags: Vec<msl::diag::Diagnostic> = report.findings.iter().map(gpu::Finding::to_diagnostic).collect();
        eprint!("{}", msl::diag::render(&c.sources, &diags, color));
        for p in printed {
            println!("{p}");
        }
        if let Some(m) = report.max_counts {
            print!("{}", counts_table(&m));
        }
        if let Some(p) = &report.profile {
            print!("{}", crate::profile::text(&args.kernel, p, &c.sources, report.threads, report.threadgroups));
        }
    }
    args.capture.save(&args.kernel, || {
        let run = capture::SourceRun {
            sources: &c.sources,
            main: c.file,
            compile_options: &pp,
            kernel: &args.kernel,
            dispatch,
            options: &opts,
            arguments: bound.iter().map(|b| (b.name.clone(), b.array.clone(), b.output)).collect(),
            outputs: results,
            findings: &report.findings,
        };
        capture::from_source(&run, "metal-puzzles run", format!("kernel `{}` of {name}", args.kernel), capture::DEFAULT_LIMIT)
    })?;
    Ok(if has_errors { EXIT_BAD_RESULT } else { EXIT_OK })
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
