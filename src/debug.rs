//! `metal-puzzles debug`: watch one thread of any kernel the tool runs.
//!
//! `debug … --thread X,Y,Z --print 'LINE: expr, expr'` prints the values of
//! the expressions each time that thread reaches LINE. The expressions are
//! real MSL: the front end checks them in the scope just before the
//! statement that starts on LINE (for a loop line: at the start of every
//! iteration) and places them in the program there (`msl::probe`); the
//! source is never edited. The simulator records them for the watched
//! thread only (`gpu::probe`).
//!
//! Three forms share this: a puzzle (`debug PUZZLE [--test N]`), a full
//! source (`debug FILE.metal --kernel K …`, `run`'s arguments) and an MLX
//! body (`debug BODY.metal --output … `, `mlx`'s arguments).

use crate::report::exit_code;
use crate::run::parse_dims;
use crate::{EXIT_BAD_RESULT, EXIT_CANNOT_START, EXIT_OK};
use clap::{Args, FromArgMatches};
use gpu::probe::ProbeLog;
use msl::source::SourceMap;
use std::path::PathBuf;

/// Values recorded per run by default (`--limit`).
pub const DEFAULT_LIMIT: usize = 1000;
/// Stops the interactive debugger records per run by default (`--limit`).
pub const DEFAULT_STOP_LIMIT: usize = 10_000;

#[derive(Args)]
#[command(trailing_var_arg = true)]
pub struct DebugArgs {
    /// The thread to watch: its position in the grid, X[,Y[,Z]].
    #[arg(long, value_name = "X,Y,Z")]
    pub thread: Option<String>,
    /// What to print: 'LINE: expr, expr' (MSL expressions over the names in
    /// scope at LINE), repeatable.
    #[arg(long = "print", value_name = "'LINE: EXPR, …'")]
    pub prints: Vec<String>,
    /// A puzzle: which test to run (counting from 1; default 1).
    #[arg(long, value_name = "N")]
    pub test: Option<usize>,
    /// Most values recorded with --print (default 1000), or stops recorded
    /// by the interactive debugger (default 10000); later ones are dropped
    /// with a note.
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
    /// What to debug: PUZZLE [--dir DIR], FILE.metal --kernel K … (run's
    /// arguments), BODY.metal --output … (mlx's arguments) or a capture
    /// FILE.mpcapture (written by --capture or MTL_CAPTURE_ENABLED=1).
    #[arg(required = true, allow_hyphen_values = true, value_name = "TARGET …")]
    pub target: Vec<String>,
}

/// `LINE: expr, expr`.
#[derive(Clone, Debug, PartialEq)]
pub struct PrintSpec {
    /// A header's name or path (`softmax.h`); `None`: the kernel's own file.
    pub file: Option<String>,
    pub line: u32,
    pub exprs: Vec<String>,
    /// Placed before every line with a statement where it compiles (`line`
    /// unused): the interactive debugger's watches.
    pub everywhere: bool,
}

impl PrintSpec {
    pub fn at(line: u32, exprs: Vec<String>) -> PrintSpec {
        PrintSpec { file: None, line, exprs, everywhere: false }
    }
}

/// What the debugger was asked to watch.
#[derive(Clone, Debug, Default)]
pub struct Request {
    pub thread: [u32; 3],
    pub prints: Vec<PrintSpec>,
    pub limit: usize,
    /// Set by the interactive debugger: record the thread stop by stop and
    /// hand the outcome back here instead of printing.
    pub interactive: Option<Sink>,
    /// Trace non-finite values (the debugger's `break nan`).
    pub nan: bool,
}

/// Where an interactive run leaves what it found.
pub type Sink = std::rc::Rc<std::cell::RefCell<Outcome>>;

/// Where a finding happened (the first thread that hit it).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FindingSite {
    pub thread: [u32; 3],
    pub file: String,
    pub line: u32,
}

/// One run of the target for the interactive debugger.
#[derive(Debug, Default)]
pub struct Outcome {
    pub stops: Option<gpu::stops::StopLog>,
    pub sources: Option<SourceMap>,
    pub placed: Vec<Placed>,
    /// Sanitizer findings, rendered (no colour).
    pub findings: Vec<String>,
    /// Where each finding is: its first thread, file name and line.
    pub finding_sites: Vec<FindingSite>,
    /// The kernel did not compile: the rendered errors, and for each error
    /// in a probe's expressions, that probe's `PrintSpec` and the message
    /// (so the debugger can drop it).
    pub failure: Option<String>,
    pub probe_errors: Vec<(usize, String)>,
    /// The lines where each watch did not compile (by `PrintSpec`).
    pub skipped: Vec<Vec<(String, u32)>>,
    /// Threads in the grid, threads per threadgroup, and what ran.
    pub grid: [u32; 3],
    pub threadgroup: [u32; 3],
    pub what: String,
}

impl Outcome {
    /// Record a compile failure (diagnostics of `sources`).
    pub fn failed(&mut self, sources: &SourceMap, diags: &[msl::diag::Diagnostic]) {
        self.failure = Some(msl::diag::render(sources, diags, false));
        self.probe_errors = diags
            .iter()
            .filter(|d| d.is_error())
            .filter_map(|d| Some((sources.file(d.span.file).probe? as usize, d.message.clone())))
            .collect();
    }

    /// Record a finished run of `req`.
    pub fn finished(&mut self, report: &gpu::RunReport, sources: &SourceMap, req: &Request) {
        let placed = placed(&req.prints, &report.probe_sites, sources);
        self.skipped = (0..req.prints.len()).map(|i| skipped(i, &report.probe_sites, sources)).collect();
        self.stops = report.stops.clone();
        self.findings = report.findings.iter().map(|f| msl::diag::render(sources, &[f.to_diagnostic()], false)).collect();
        self.finding_sites = report
            .findings
            .iter()
            .map(|f| FindingSite { thread: f.thread, file: sources.file(f.span.file).name.clone(), line: sources.line_col(f.span).0 })
            .collect();
        self.sources = Some(sources.clone());
        self.placed = placed;
    }
}

/// `LINE` or `FILE:LINE` (a header the kernel includes, by name or path).
pub fn parse_place(s: &str) -> Result<(Option<String>, u32), String> {
    let (file, line) = match s.rsplit_once(':') {
        Some((f, l)) if !f.trim().is_empty() => (Some(f.trim().to_string()), l),
        _ => (None, s),
    };
    let line = line.trim().parse::<u32>().map_err(|_| format!("`{}` is not a line number", line.trim()))?;
    Ok((file, line))
}

pub fn parse_print(s: &str) -> Result<PrintSpec, String> {
    let shape =
        || format!("--print `{s}` must look like 'LINE: expr, expr' or 'FILE:LINE: expr, …' (e.g. '5: i, a[i]', 'softmax.h:70: x')");
    let (head, mut rest) = s.split_once(':').ok_or_else(shape)?;
    let head = head.trim();
    let file = match head.parse::<u32>() {
        Ok(_) => None,
        // `FILE:LINE:`: the line is the next field.
        Err(_) if !head.is_empty() && !head.contains(char::is_whitespace) && rest.contains(':') => Some(head.to_string()),
        Err(_) => return Err(format!("--print `{s}`: `{head}` is not a line number (nor FILE:LINE)")),
    };
    let line_text = match file {
        Some(_) => {
            let (l, r) = rest.split_once(':').ok_or_else(shape)?;
            rest = r;
            l.trim()
        }
        None => head,
    };
    let line: u32 = line_text.parse().map_err(|_| format!("--print `{s}`: `{line_text}` is not a line number"))?;
    let exprs = split_exprs(rest);
    if exprs.is_empty() {
        return Err(format!("--print `{s}` names no expression; add some after the colon, e.g. '{line}: i, a[i]'"));
    }
    if let Some(e) = exprs.iter().find(|e| e.contains(['\n', ';', '{', '}'])) {
        return Err(format!("--print expression `{e}` must be one expression on one line (no `;`, braces or line breaks)"));
    }
    Ok(PrintSpec { file, ..PrintSpec::at(line, exprs) })
}

/// Split at the commas that are not inside brackets (`a[min(i, 3)], b`).
fn split_exprs(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut cur = String::new();
    for c in s.chars() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => depth -= 1,
            ',' if depth == 0 => {
                out.push(std::mem::take(&mut cur));
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    out.push(cur);
    out.into_iter().map(|e| e.trim().to_string()).filter(|e| !e.is_empty()).collect()
}

impl Request {
    fn from_args(a: &DebugArgs) -> Result<Request, String> {
        let thread = match &a.thread {
            Some(t) => parse_dims0(t, "--thread")?,
            None => return Err("--thread X,Y,Z is required: the thread to watch (its position in the grid)".into()),
        };
        if a.prints.is_empty() {
            return Err("--print 'LINE: expr, …' is required: what to show each time the thread reaches LINE".into());
        }
        let prints = a.prints.iter().map(|p| parse_print(p)).collect::<Result<Vec<_>, _>>()?;
        Ok(Request { thread, prints, limit: a.limit.unwrap_or(DEFAULT_LIMIT).max(1), interactive: None, nan: false })
    }

    /// The probe recorder's settings (the non-interactive form).
    pub fn probe(&self) -> Option<([u32; 3], usize)> {
        self.interactive.is_none().then_some((self.thread, self.limit))
    }

    /// The stop recorder's settings (the interactive form).
    pub fn stops(&self) -> Option<([u32; 3], usize)> {
        self.interactive.is_some().then_some((self.thread, self.limit))
    }

    /// Whether the kernel must be lowered with debugger stops.
    pub fn wants_stops(req: Option<&Request>) -> bool {
        req.is_some_and(|r| r.interactive.is_some())
    }

    /// The error for a thread outside the grid (threads per dimension).
    pub fn check_thread(&self, grid_threads: [u32; 3]) -> Result<(), String> {
        if (0..3).any(|d| self.thread[d] >= grid_threads[d]) {
            let [x, y, z] = self.thread;
            let [gx, gy, gz] = grid_threads;
            return Err(format!("--thread {x},{y},{z} is outside the grid of {gx}x{gy}x{gz} threads: pick X < {gx}, Y < {gy}, Z < {gz}"));
        }
        Ok(())
    }
}

/// Like `parse_dims` but positions may be 0.
fn parse_dims0(s: &str, what: &str) -> Result<[u32; 3], String> {
    let shifted: Vec<String> =
        s.split(',').map(|p| p.trim().parse::<u64>().map(|v| (v + 1).to_string()).unwrap_or_else(|_| p.to_string())).collect();
    parse_dims(&shifted.join(","), what).map(|d| d.map(|v| v - 1)).map_err(|e| e.replace("at least 1", "at least 0"))
}

// ----- where probes go --------------------------------------------------------

impl PrintSpec {
    /// The front end's request (`msl::probe`): a watch is left out where
    /// it does not compile; a `--print` that does not compile is an error.
    pub fn request(&self) -> msl::probe::ProbeRequest {
        use msl::probe::{ProbeAt, ProbeRequest};
        let (at, name) = if self.everywhere {
            (ProbeAt::Everywhere, "watch".to_string())
        } else {
            let place = match &self.file {
                Some(f) => format!("{f}:{}", self.line),
                None => self.line.to_string(),
            };
            (ProbeAt::Line { file: self.file.clone(), line: self.line }, format!("--print {place}"))
        };
        ProbeRequest { at, text: self.exprs.join(", "), name, optional: self.everywhere }
    }
}

impl Request {
    /// What the front end places for this request.
    pub fn probe_requests(&self) -> Vec<msl::probe::ProbeRequest> {
        self.prints.iter().map(PrintSpec::request).collect()
    }
}

/// One `--print` (or watch) at one line, and the probe sites standing for
/// it there (one per compiled copy of the statement: a template's
/// instances each have one).
#[derive(Clone, Debug, PartialEq)]
pub struct Placed {
    /// The file it is in (display name) and its line there.
    pub file: String,
    /// The file is a header (not the kernel's own file).
    pub header: bool,
    pub line: u32,
    pub exprs: Vec<String>,
    /// Which `PrintSpec` it came from.
    pub spec: usize,
    /// `ProbeHit::probe` numbers of this place.
    pub sites: Vec<u32>,
}

impl Placed {
    /// `line 12`, or `softmax.h:70` in a header.
    pub fn place(&self) -> String {
        if self.header {
            format!("{}:{}", self.file, self.line)
        } else {
            format!("line {}", self.line)
        }
    }
}

/// Where the probes of `prints` went, from a run's probe sites (spans in
/// `sources`): one entry per print and line, in the order of `prints`. A
/// `--print` placed nowhere (its function never compiled for this run)
/// keeps its own line, with no sites.
pub fn placed(prints: &[PrintSpec], sites: &[msl::probe::ProbeSite], sources: &SourceMap) -> Vec<Placed> {
    let mut out: Vec<Placed> = Vec::new();
    for (i, site) in sites.iter().enumerate().filter(|(_, s)| s.placed) {
        let Some(spec) = prints.get(site.request as usize) else { continue };
        let f = site.stmt.file;
        let file = sources.file(f).name.clone();
        let line = sources.line_col(site.stmt).0;
        let header = spec.file.is_some() || sources.includes().iter().any(|e| e.to == f);
        match out.iter_mut().find(|p| p.spec == site.request as usize && p.file == file && p.line == line) {
            Some(p) => p.sites.push(i as u32),
            None => out.push(Placed { file, header, line, exprs: spec.exprs.clone(), spec: site.request as usize, sites: vec![i as u32] }),
        }
    }
    for (i, spec) in prints.iter().enumerate() {
        if !spec.everywhere && !out.iter().any(|p| p.spec == i) {
            let file = spec.file.clone().unwrap_or_default();
            out.push(Placed { file, header: spec.file.is_some(), line: spec.line, exprs: spec.exprs.clone(), spec: i, sites: Vec::new() });
        }
    }
    out.sort_by_key(|p| (p.spec, p.file.clone(), p.line));
    out
}

/// How a debug run whose kernel did not compile ends: a probe that names
/// a line without a statement (or a file the kernel does not read) is a
/// mistake in the arguments, anything else a kernel that does not compile.
pub fn compile_failure_code(diags: &[msl::diag::Diagnostic]) -> u8 {
    if diags.iter().any(|d| d.code == Some(msl::diag::codes::PROBE_PLACE)) {
        EXIT_CANNOT_START
    } else {
        EXIT_BAD_RESULT
    }
}

/// The lines where watch `spec` did not compile anywhere (file name,
/// line), sorted. (A loop's line has two places: its entry and each pass.)
pub fn skipped(spec: usize, sites: &[msl::probe::ProbeSite], sources: &SourceMap) -> Vec<(String, u32)> {
    let at = |s: &msl::probe::ProbeSite| (sources.file(s.stmt.file).name.clone(), sources.line_col(s.stmt).0);
    let mine = || sites.iter().filter(|s| s.request as usize == spec);
    let shown: Vec<(String, u32)> = mine().filter(|s| s.placed).map(at).collect();
    let mut out: Vec<(String, u32)> = mine().filter(|s| !s.placed).map(at).filter(|l| !shown.contains(l)).collect();
    out.sort();
    out.dedup();
    out
}

/// The table of what the watched thread saw (`tg`: threads per threadgroup,
/// to name the thread the project's one way).
pub fn render(req: &Request, tg: [u32; 3], placed: &[Placed], log: Option<&ProbeLog>, grid_note: &str) -> String {
    let group = [0, 1, 2].map(|d| req.thread[d] / tg[d].max(1));
    let local = gpu::findings::local_of(req.thread, group, tg);
    let mut out = format!("{}{grid_note}\n", gpu::findings::thread_name(req.thread, local, group));
    let Some(log) = log else { return out };
    if !log.thread_ran {
        out.push_str("this thread did not run (it is not in the dispatch)\n");
        return out;
    }
    for place in placed {
        let mut rows: Vec<Vec<String>> = Vec::new();
        for h in log.hits.iter().filter(|h| place.sites.contains(&h.probe)) {
            if h.slot == 0 || rows.is_empty() {
                rows.push(Vec::new());
            }
            if let Some(r) = rows.last_mut() {
                r.push(h.text());
            }
        }
        let at = place.place();
        out.push_str(&format!("\n{at}:\n"));
        if rows.is_empty() {
            out.push_str(&format!("  the thread never reached {at} (a guard, a branch or an earlier `return` kept it away)\n"));
            continue;
        }
        let mut header = vec!["pass".to_string()];
        header.extend(place.exprs.iter().cloned());
        let mut table = vec![header];
        for (i, r) in rows.into_iter().enumerate() {
            let mut row = vec![(i + 1).to_string()];
            row.extend(r);
            table.push(row);
        }
        let cols = table.iter().map(|r| r.len()).max().unwrap_or(0);
        let widths: Vec<usize> =
            (0..cols).map(|c| table.iter().filter_map(|r| r.get(c)).map(|s| s.chars().count()).max().unwrap_or(0)).collect();
        for (i, r) in table.iter().enumerate() {
            let cells: Vec<String> = r.iter().enumerate().map(|(c, s)| format!("{s:>w$}", w = widths[c])).collect();
            out.push_str(&format!("  {}\n", cells.join(" | ").trim_end()));
            if i == 0 {
                let rule: Vec<String> = widths.iter().map(|&w| "-".repeat(w)).collect();
                out.push_str(&format!("  {}\n", rule.join("-+-")));
            }
        }
    }
    if log.truncated {
        out.push_str(&format!("\n(stopped recording after {} values; `--limit N` keeps more)\n", req.limit));
    }
    out
}

// ----- the command ------------------------------------------------------------

/// Move the debugger's own flags given after the target (`debug 1
/// --thread 2 …`) out of the target's arguments.
fn take_own_flags(args: &DebugArgs) -> Result<(DebugArgs, Vec<String>), String> {
    let mut own =
        DebugArgs { thread: args.thread.clone(), prints: args.prints.clone(), test: args.test, limit: args.limit, target: Vec::new() };
    let mut rest = Vec::new();
    let mut it = args.target.iter();
    while let Some(a) = it.next() {
        let (flag, inline) = match a.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f, Some(v.to_string())),
            _ => (a.as_str(), None),
        };
        if !matches!(flag, "--thread" | "--print" | "--test" | "--limit") {
            rest.push(a.clone());
            continue;
        }
        let value = match inline {
            Some(v) => v,
            None => it.next().cloned().ok_or_else(|| format!("{flag} needs a value"))?,
        };
        match flag {
            "--thread" => own.thread = Some(value),
            "--print" => own.prints.push(value),
            "--test" => own.test = Some(value.parse().map_err(|_| format!("--test `{value}` is not a test number (1, 2, …)"))?),
            _ => own.limit = Some(value.parse().map_err(|_| format!("--limit `{value}` is not a whole number"))?),
        }
    }
    Ok((own, rest))
}

pub fn run(args: &DebugArgs) -> u8 {
    let (args, target) = match take_own_flags(args) {
        Ok(x) => x,
        Err(e) => return exit_code(Err(e), false),
    };
    if args.prints.is_empty() {
        // No --print: the interactive debugger.
        let thread = match args.thread.as_deref().map(|t| parse_dims0(t, "--thread")).transpose() {
            Ok(t) => t.unwrap_or([0, 0, 0]),
            Err(e) => return exit_code(Err(e), false),
        };
        let target = Target { argv: target, test: args.test };
        return crate::debug_tui::run(target, thread, args.limit.unwrap_or(DEFAULT_STOP_LIMIT).max(1));
    }
    let req = match Request::from_args(&args) {
        Ok(r) => r,
        Err(e) => return exit_code(Err(e), false),
    };
    if let Some(file) = target.first().filter(|t| crate::captures::is_capture(t)) {
        return exit_code(crate::captures::debug(std::path::Path::new(file), &target[1..], &req), false);
    }
    let target = &target;
    let has = |flag: &str| has_flag(target, flag);
    let argv = std::iter::once("metal-puzzles debug".to_string()).chain(target.iter().cloned());
    if has("--kernel") {
        let cmd = crate::run::RunArgs::augment_args(clap::Command::new("debug"));
        let mut run_args = match cmd.try_get_matches_from(argv).and_then(|m| crate::run::RunArgs::from_arg_matches(&m)) {
            Ok(a) => a,
            Err(e) => return usage(e),
        };
        run_args.debug = Some(req);
        return crate::run::run(&run_args);
    }
    if has("--output") {
        let cmd = crate::mlx_cmd::MlxArgs::augment_args(clap::Command::new("debug"));
        let mut mlx_args = match cmd.try_get_matches_from(argv).and_then(|m| crate::mlx_cmd::MlxArgs::from_arg_matches(&m)) {
            Ok(a) => a,
            Err(e) => return usage(e),
        };
        mlx_args.debug = Some(req);
        return crate::mlx_cmd::run(&mlx_args);
    }
    let cmd = PuzzleTarget::augment_args(clap::Command::new("debug"));
    match cmd.try_get_matches_from(argv).and_then(|m| PuzzleTarget::from_arg_matches(&m)) {
        Ok(p) => exit_code(debug_puzzle(&p, args.test, &req), false),
        Err(e) => usage(e),
    }
}

fn has_flag(argv: &[String], flag: &str) -> bool {
    argv.iter().any(|t| t == flag || t.starts_with(&format!("{flag}=")))
}

/// What to debug, as given on the command line (after the debugger's own
/// flags): re-resolved on every run, so a restart sees the file as saved.
/// A new target form (a capture file, say) is one more branch in `record`.
#[derive(Clone, Debug)]
pub struct Target {
    pub argv: Vec<String>,
    /// A puzzle's test (counting from 1).
    pub test: Option<usize>,
}

impl Target {
    /// Run the target once with `req` (its thread and probes), recording
    /// the thread stop by stop. `Err` is a problem with the arguments;
    /// a kernel that does not compile is an `Outcome` with `failure`.
    pub fn record(&self, req: &Request) -> Result<Outcome, String> {
        let sink: Sink = Default::default();
        let req = Request { interactive: Some(sink.clone()), ..req.clone() };
        let argv = std::iter::once("metal-puzzles debug".to_string()).chain(self.argv.iter().cloned());
        let usage = |e: clap::Error| e.render().to_string().trim_end().to_string();
        if let Some(file) = self.argv.first().filter(|t| crate::captures::is_capture(t)) {
            crate::captures::debug(std::path::Path::new(file), &self.argv[1..], &req)?;
            return Ok(sink.take());
        }
        if has_flag(&self.argv, "--kernel") {
            let cmd = crate::run::RunArgs::augment_args(clap::Command::new("debug"));
            let mut a = cmd.try_get_matches_from(argv).and_then(|m| crate::run::RunArgs::from_arg_matches(&m)).map_err(usage)?;
            a.debug = Some(req);
            crate::run::run_inner(&a)?;
        } else if has_flag(&self.argv, "--output") {
            let cmd = crate::mlx_cmd::MlxArgs::augment_args(clap::Command::new("debug"));
            let mut a = cmd.try_get_matches_from(argv).and_then(|m| crate::mlx_cmd::MlxArgs::from_arg_matches(&m)).map_err(usage)?;
            a.debug = Some(req);
            crate::mlx_cmd::run_inner(&a)?;
        } else {
            let cmd = PuzzleTarget::augment_args(clap::Command::new("debug"));
            let p = cmd.try_get_matches_from(argv).and_then(|m| PuzzleTarget::from_arg_matches(&m)).map_err(usage)?;
            debug_puzzle(&p, self.test, &req)?;
        }
        Ok(sink.take())
    }
}

fn usage(e: clap::Error) -> u8 {
    let _ = e.print();
    EXIT_CANNOT_START
}

#[derive(Args)]
struct PuzzleTarget {
    /// Puzzle number or slug.
    puzzle: String,
    /// The workspace directory.
    #[arg(long, default_value = puzzles::workspace::DEFAULT_DIR)]
    dir: PathBuf,
}

fn debug_puzzle(t: &PuzzleTarget, test: Option<usize>, req: &Request) -> Result<u8, String> {
    let puzzle = puzzles::find(&t.puzzle).ok_or_else(|| {
        format!("`{}` is not a puzzle, a `.metal` file with --kernel, nor an MLX body with --output; puzzles are 1..{} or their names (`metal-puzzles list`)", t.puzzle, puzzles::PUZZLES.len())
    })?;
    let ws = puzzles::workspace::Workspace::new(&t.dir);
    let path = ws.path(puzzle);
    let file_text = ws.read(puzzle).map_err(|e| format!("cannot read `{}`: {e}", path.display()))?;
    let file_name = path.display().to_string();
    let runs: Vec<_> = puzzles::check::runs(puzzle).into_iter().filter(|r| r.2.is_none()).collect();
    let n = test.unwrap_or(1);
    let Some((test_name, case, _, inputs)) = runs.get(n.wrapping_sub(1)).cloned() else {
        let names: Vec<String> = runs.iter().enumerate().map(|(i, r)| format!("{} ({})", i + 1, r.0)).collect();
        return Err(format!("puzzle {} has no test {n}; its tests are: {}", puzzle.number, names.join(", ")));
    };
    let case = &puzzle.tests[case];
    req.check_thread(case.grid)?;
    let mut call = puzzles::check::book_call(puzzle, case, &inputs);
    call.probe = req.probe();
    call.stops = req.stops();
    call.nan = req.nan;
    call.probes = req.probe_requests();
    let kernel = puzzles::check::book_kernel(puzzle, &file_name, &file_text).map_err(|e| e.to_string())?;
    let color = crate::color::stderr();
    let result = kernel.call_with(&call, &mut |_| {});
    if let Some(sink) = &req.interactive {
        let mut o = sink.borrow_mut();
        match &result {
            Ok(r) => o.finished(&r.report, &r.sources, req),
            Err(mlx::MlxError::Compile { sources, diagnostics, .. }) => o.failed(sources, diagnostics),
            Err(mlx::MlxError::Argument(m)) => return Err(m.clone()),
        }
        (o.grid, o.threadgroup) = (case.grid, case.threadgroup);
        o.what = format!("puzzle {} ({}), test {n} `{test_name}`", puzzle.number, puzzle.title);
        return Ok(EXIT_OK);
    }
    match result {
        Ok(r) => {
            let [gx, gy, gz] = case.grid;
            let [tx, ty, tz] = case.threadgroup;
            let note = format!(
                " of puzzle {} ({}), test {n} `{test_name}`: grid {gx},{gy},{gz}, threadgroup {tx},{ty},{tz}",
                puzzle.number, puzzle.title
            );
            let placed = placed(&req.prints, &r.report.probe_sites, &r.sources);
            print!("{}", render(req, case.threadgroup, &placed, r.report.probes.as_ref(), &note));
            let diags: Vec<msl::diag::Diagnostic> = r.report.findings.iter().map(gpu::Finding::to_diagnostic).collect();
            eprint!("{}", msl::diag::render(&r.sources, &diags, color));
            Ok(if r.report.has_errors() { EXIT_BAD_RESULT } else { EXIT_OK })
        }
        Err(mlx::MlxError::Compile { sources, diagnostics, .. }) => {
            eprint!("{}", msl::diag::render(&sources, &diagnostics, color));
            Ok(compile_failure_code(&diagnostics))
        }
        Err(mlx::MlxError::Argument(m)) => Err(m),
    }
}
