//! `metal-puzzles mlx`: an MLX custom kernel (`mx.fast.metal_kernel`) from
//! its body, run on the simulator (see the Usage section of README.md).

use crate::lint::read_source;
use crate::report::exit_code;
use crate::run::{name_seed, parse_dims, Check};
use crate::EXIT_OK;
use arrays::{Array, DType};
use clap::Args;
use gpu::CheckLevel;
use mlx::{Call, Input, MetalKernel, TemplateArg, UserFile};
use std::path::PathBuf;

/// The line that separates header and body in a puzzle workspace file.
const BODY_MARKER: &str = "// ---- body ----";

#[derive(Args)]
pub struct MlxArgs {
    /// The kernel body (MLX's `source`).
    pub body: PathBuf,
    /// The kernel name (MLX's `name`; default: the file's stem).
    #[arg(long)]
    pub name: Option<String>,
    /// An input, in order: NAME=@file.npy, NAME=VALUE:DTYPE (a 0-d input), NAME=GEN(SHAPE):DTYPE,
    /// or a Python-style scalar NAME=3 / NAME=0.5 / NAME=true.
    #[arg(long = "input", value_name = "NAME=VALUE")]
    pub inputs: Vec<String>,
    /// An output: NAME:DTYPE:SHAPE (SHAPE comma-separated, empty for 0-d).
    #[arg(long = "output", value_name = "NAME:DTYPE:SHAPE")]
    pub outputs: Vec<String>,
    /// Total threads per dimension: X[,Y[,Z]].
    #[arg(long)]
    pub grid: Option<String>,
    /// Threads per threadgroup: X[,Y[,Z]].
    #[arg(long)]
    pub threadgroup: Option<String>,
    /// A template argument: NAME=DTYPE, NAME=INTEGER or NAME=true|false.
    #[arg(long = "template", value_name = "NAME=VALUE")]
    pub template: Vec<String>,
    /// The MLX `header` (text placed before the generated kernel).
    #[arg(long, value_name = "FILE")]
    pub header: Option<PathBuf>,
    /// Fill the outputs with this value first (otherwise they are uninitialized).
    #[arg(long, value_name = "V", allow_hyphen_values = true)]
    pub init_value: Option<f64>,
    /// Declare the outputs `device atomic<T>*`.
    #[arg(long)]
    pub atomic_outputs: bool,
    /// Pass strided views as they are (ensure_row_contiguous=False).
    #[arg(long)]
    pub no_row_contiguous: bool,
    /// Print the generated source and exit without running.
    #[arg(long)]
    pub print_source: bool,
    /// With --print-source: include MLX's preamble (what is compiled).
    #[arg(long)]
    pub with_preamble: bool,
    /// Print the generated source before running (like verbose=True or VERBOSE=1).
    #[arg(long)]
    pub verbose: bool,
    /// Write every output as DIR/NAME.npy.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Sanitizer level.
    #[arg(long, value_enum, default_value = "all")]
    pub check: Check,
    /// Print the per-thread maxima of global/shared reads and writes
    /// (the book's score table; `--help` says what counts).
    #[arg(long, long_help = crate::run::counts_help())]
    pub counts: bool,
    /// Print one JSON document instead of text.
    #[arg(long)]
    pub json: bool,
    /// Also write a JUnit XML report (one test case: the kernel) to FILE.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    #[command(flatten)]
    pub schedules: crate::run::ScheduleArgs,
    #[command(flatten)]
    pub engine: crate::run::EngineArgs,
    #[command(flatten)]
    pub pp: crate::lint::PreprocessArgs,
    /// Print statistics per line of the body (see `run --profile`).
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

pub fn run(args: &MlxArgs) -> u8 {
    exit_code(run_inner(args), args.json)
}

/// An input value: the `run` forms, or a Python-style scalar.
/// `room`: bytes left in the dispatch's buffer budget.
fn parse_input(name: &str, spec: &str, room: usize) -> Result<Input, String> {
    let s = spec.trim();
    if let Some(path) = s.strip_prefix('@') {
        let cannot = |e: String| format!("input `{name}`: cannot load `{path}`: {e}");
        let bytes = session::bind::read_npy_bytes(std::path::Path::new(path), room).map_err(cannot)?;
        return Array::from_npy_bytes(&bytes).map(Input::Array).map_err(cannot);
    }
    if !s.contains(':') {
        match s {
            "true" | "True" => return Ok(Input::Bool(true)),
            "false" | "False" => return Ok(Input::Bool(false)),
            _ => {}
        }
        if let Ok(i) = s.parse::<i64>() {
            return Ok(Input::Int(i));
        }
        if let Ok(f) = s.parse::<f64>() {
            return Ok(Input::Float(f));
        }
    }
    arrays::parse_value_within(s, name_seed(name), room).map(Input::Array).map_err(|e| format!("input `{name}`: {e}"))
}

/// `NAME:DTYPE:SHAPE`.
fn parse_output(spec: &str) -> Result<(String, DType, Vec<usize>), String> {
    let parts: Vec<&str> = spec.splitn(3, ':').collect();
    if parts.len() != 3 {
        return Err(format!(
            "--output `{spec}` must look like NAME:DTYPE:SHAPE, e.g. out:float32:4,16 (SHAPE empty for a 0-d output: out:float32:)"
        ));
    }
    let name = parts[0].trim().to_string();
    let dtype = DType::parse(parts[1]).map_err(|e| format!("output `{name}`: {e}"))?;
    let shape_text = parts[2].trim().trim_start_matches('(').trim_end_matches(')');
    let shape = if shape_text.is_empty() {
        Vec::new()
    } else {
        shape_text
            .split(',')
            .filter(|p| !p.trim().is_empty())
            .map(|p| p.trim().parse::<usize>().map_err(|_| format!("output `{name}`: `{p}` in shape `{}` is not a whole number", parts[2])))
            .collect::<Result<Vec<_>, _>>()?
    };
    Ok((name, dtype, shape))
}

pub(crate) fn run_inner(args: &MlxArgs) -> Result<u8, String> {
    let text = read_source(&args.body)?;
    let body_name = args.body.display().to_string();
    let name = match &args.name {
        Some(n) => n.clone(),
        None => args
            .body
            .file_stem()
            .map(|s| s.to_string_lossy().replace(|c: char| !c.is_ascii_alphanumeric() && c != '_', "_"))
            .unwrap_or_else(|| "kernel".into()),
    };
    // Header: --header FILE, or the part of a workspace file above the marker.
    let (header, header_file, source, source_file) = match &args.header {
        Some(h) => {
            let htext = read_source(h)?;
            let hf = UserFile { name: h.display().to_string(), text: htext.clone(), offset: 0 };
            let bf = UserFile { name: body_name.clone(), text: text.clone(), offset: 0 };
            (htext, Some(hf), text.clone(), bf)
        }
        None => match find_marker(&text) {
            Some((hdr_end, body_start)) => {
                let hf = UserFile { name: body_name.clone(), text: text.clone(), offset: 0 };
                let bf = UserFile { name: body_name.clone(), text: text.clone(), offset: body_start };
                (text[..hdr_end].to_string(), Some(hf), text[body_start..].to_string(), bf)
            }
            None => (String::new(), None, text.clone(), UserFile { name: body_name.clone(), text: text.clone(), offset: 0 }),
        },
    };

    let mut input_names = Vec::new();
    let mut inputs = Vec::new();
    for a in &args.inputs {
        let (n, v) = a.split_once('=').ok_or_else(|| format!("--input `{a}` must look like NAME=VALUE"))?;
        let n = n.trim();
        let used: usize = inputs.iter().map(Input::nbytes).sum();
        inputs.push(parse_input(n, v, arrays::MAX_TOTAL_BUFFER_BYTES.saturating_sub(used))?);
        input_names.push(n.to_string());
    }
    let mut output_names = Vec::new();
    let mut output_dtypes = Vec::new();
    let mut output_shapes = Vec::new();
    for o in &args.outputs {
        let (n, d, s) = parse_output(o)?;
        output_names.push(n);
        output_dtypes.push(d);
        output_shapes.push(s);
    }
    // Outputs never replace what the command reads (checked before running).
    let mut read: Vec<std::path::PathBuf> = vec![args.body.clone()];
    read.extend(args.header.clone());
    read.extend(crate::run::argument_files(&args.inputs));
    args.capture.check_target(&read)?;
    if let Some(dir) = &args.out {
        for n in &output_names {
            files::refuse_overwrite(&dir.join(format!("{n}.npy")), &read, "--out")?;
        }
    }
    let mut template = Vec::new();
    for t in &args.template {
        let (n, v) =
            t.split_once('=').ok_or_else(|| format!("--template `{t}` must look like NAME=VALUE (a dtype, an integer or true/false)"))?;
        let v = TemplateArg::parse(v).map_err(|e| format!("template `{}`: {e}", n.trim()))?;
        template.push((n.trim().to_string(), v));
    }
    let in_refs: Vec<&str> = input_names.iter().map(|s| s.as_str()).collect();
    let out_refs: Vec<&str> = output_names.iter().map(|s| s.as_str()).collect();
    let pp = crate::lint::compile_options(&args.pp, Some(args.header.as_deref().unwrap_or(&args.body)));
    let kernel = MetalKernel::new(&name, &in_refs, &out_refs, &source, &header, !args.no_row_contiguous, args.atomic_outputs)
        .map_err(|e| e.to_string().replace("output_names:", "--output:"))?
        .with_files(Some(source_file), header_file)
        .with_compile_options(pp);

    let grid = match &args.grid {
        Some(g) => parse_dims(g, "--grid")?,
        None if args.print_source => [1, 1, 1],
        None => return Err("--grid X[,Y[,Z]] is required (the total number of threads per dimension)".into()),
    };
    let threadgroup = match &args.threadgroup {
        Some(t) => parse_dims(t, "--threadgroup")?,
        None if args.print_source => [1, 1, 1],
        None => return Err("--threadgroup X[,Y[,Z]] is required (threads per threadgroup)".into()),
    };
    let mut call = Call {
        inputs,
        output_shapes,
        output_dtypes,
        grid,
        threadgroup,
        template,
        init_value: args.init_value,
        verbose: false,
        check: match args.check {
            Check::None => CheckLevel::None,
            Check::Memory => CheckLevel::Memory,
            Check::All | Check::Nan => CheckLevel::All,
        },
        count: args.counts,
        trace: None,
        budget: None,
        profile: args.profile,
        nan: matches!(args.check, Check::Nan) || args.debug.as_ref().is_some_and(|r| r.nan),
        probe: args.debug.as_ref().and_then(|r| r.probe()),
        stops: args.debug.as_ref().and_then(|r| r.stops()),
        log: {
            let groups = [0, 1, 2].map(|d| grid[d].div_ceil(threadgroup[d].max(1)));
            let watched = args.debug.as_ref().filter(|r| r.interactive.is_none()).map(|r| r.thread);
            crate::logs::run_options(&args.logging, grid, groups, watched)?
        },
        cancel: None,
        atomics_last_lane_first: false,
        schedules: args.schedules.schedules,
        schedule_tolerance: args.schedules.tolerance(),
        probes: Vec::new(),
        engine: args.engine.engine(),
        compiler: None,
    };

    if let Some(req) = &args.debug {
        if args.json || args.print_source {
            return Err("debug prints a table: drop --json and --print-source".into());
        }
        req.check_thread(grid)?;
        call.probes = req.probe_requests();
    }

    if args.print_source {
        let g = kernel.generate_for(&call).map_err(|e| e.to_string())?;
        if args.json {
            println!("{}", serde_json::json!({"kernel": g.kernel_name, "source": g.source, "full_source": g.full_source}));
        } else if args.with_preamble {
            print!("{}", g.full_source);
        } else {
            print!("{}", g.source);
        }
        return Ok(EXIT_OK);
    }

    // (Nothing on stdout under the interactive debugger's screen.)
    let verbose = (args.verbose || mlx::verbose_env()) && !crate::debug::Request::wants_stops(args.debug.as_ref());
    let json = args.json;
    let result = session::run_mlx(&kernel, &call, &mut |g| {
        if verbose {
            // MLX prints to stdout; keep stdout clean for --json.
            if json {
                eprint!("{}", mlx::verbose_text(g));
            } else {
                print!("{}", mlx::verbose_text(g));
            }
        }
    });
    let color = crate::color::stderr();
    let sink = args.debug.as_ref().and_then(|r| r.interactive.clone());
    let r = match result {
        Ok(r) => r.outcome,
        Err(session::Error::Usage(m)) => return Err(m),
        Err(e) => return crate::run::report_error(e, json, args.debug.as_ref()),
    };
    if let Some(sink) = &sink {
        let mut o = sink.borrow_mut();
        if let Some(req) = &args.debug {
            o.finished(&r.report, &r.sources, req);
        }
        (o.grid, o.threadgroup) = (grid, threadgroup);
        o.what = format!("MLX kernel `{name}`");
        return Ok(r.exit_code());
    }
    let [gx, gy, gz] = grid;
    let [tx, ty, tz] = threadgroup;
    let shown = crate::run::Presentation {
        kernel: &name,
        json,
        out: args.out.as_deref(),
        debug: args.debug.as_ref(),
        dispatch_note: format!(" of kernel `{name}`: grid {gx},{gy},{gz}, threadgroup {tx},{ty},{tz}"),
        threadgroup,
        compile_warnings_shown: false,
    };
    if let Some(code) = crate::run::present(&r, &shown, color)? {
        return Ok(code);
    }
    if let Some(path) = &args.junit {
        let case = crate::run::junit_case(&r, &body_name, &name);
        session::formats::write_atomically(path, &session::formats::junit("metal-puzzles mlx", &[case]))?;
    }
    args.capture.save(&name, || {
        let outs: Vec<arrays::Array> = r.outputs.iter().map(|o| o.array.clone()).collect();
        let run = capture::MlxRun { sources: &r.sources, outputs: &outs, findings: &r.report.findings };
        let title = format!("MLX kernel `{name}` from {body_name}");
        capture::from_mlx_run(&kernel, &call, &run, "metal-puzzles mlx", title, capture::DEFAULT_LIMIT)
    })?;
    Ok(r.exit_code())
}

/// (end of the header, start of the body) when `text` has the marker line.
fn find_marker(text: &str) -> Option<(usize, usize)> {
    let mut pos = 0;
    for line in text.split_inclusive('\n') {
        if line.trim_end_matches(['\n', '\r']) == BODY_MARKER {
            return Some((pos, pos + line.len()));
        }
        pos += line.len();
    }
    None
}
