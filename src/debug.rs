//! `metal-puzzles debug`: watch one thread of any kernel the tool runs.
//!
//! `debug … --thread X,Y,Z --print 'LINE: expr, expr'` prints the values of
//! the expressions each time that thread reaches LINE. The expressions are
//! real MSL: they are placed into a copy of the source, just before the
//! statement that starts on LINE (for a loop line: at the start of every
//! iteration), as `{ auto __mp_probe_P_S = (expr); … }`, and compiled with
//! the rest, so they see exactly the names in scope there. The simulator
//! records them for the watched thread only (`gpu::probe`).
//!
//! Three forms share this: a puzzle (`debug PUZZLE [--test N]`), a full
//! source (`debug FILE.metal --kernel K …`, `run`'s arguments) and an MLX
//! body (`debug BODY.metal --output … `, `mlx`'s arguments).

use crate::report::exit_code;
use crate::run::parse_dims;
use crate::{EXIT_BAD_RESULT, EXIT_CANNOT_START, EXIT_OK};
use clap::{Args, FromArgMatches};
use gpu::probe::{ProbeLog, PROBE_PREFIX};
use msl::ast::{Item, ItemKind, MemberKind, Stmt, StmtKind, TranslationUnit};
use msl::source::{FileId, SourceMap, Span};
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
    /// Placed before every line with a statement (`line` unused), except
    /// the lines in `skip` (the interactive debugger's watches).
    pub everywhere: bool,
    pub skip: Vec<(String, u32)>,
}

impl PrintSpec {
    pub fn at(line: u32, exprs: Vec<String>) -> PrintSpec {
        PrintSpec { file: None, line, exprs, everywhere: false, skip: Vec::new() }
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
    /// The kernel did not compile: the rendered errors, and where they are
    /// (file name, byte offset) so probes that cause them can be dropped.
    pub failure: Option<String>,
    pub error_spots: Vec<(String, usize, String)>,
    /// Threads in the grid, threads per threadgroup, and what ran.
    pub grid: [u32; 3],
    pub threadgroup: [u32; 3],
    pub what: String,
}

impl Outcome {
    /// Record a compile failure (diagnostics of `sources`).
    pub fn failed(&mut self, sources: &SourceMap, diags: &[msl::diag::Diagnostic], placed: &[Placed]) {
        let mut text = msl::diag::render(sources, diags, false);
        if !placed.is_empty() {
            text.push_str(&placed_note(placed));
        }
        self.failure = Some(text);
        self.error_spots = diags
            .iter()
            .filter(|d| d.severity == msl::diag::Severity::Error)
            .map(|d| (sources.file(d.span.file).name.clone(), d.span.lo as usize, d.message.clone()))
            .collect();
        self.placed = placed.to_vec();
    }

    /// Record a finished run.
    pub fn finished(&mut self, report: &gpu::RunReport, sources: &SourceMap, placed: &[Placed]) {
        self.stops = report.stops.clone();
        self.findings = report.findings.iter().map(|f| render_as_written(sources, &[f.to_diagnostic()], placed, false)).collect();
        self.finding_sites = report
            .findings
            .iter()
            .map(|f| FindingSite { thread: f.thread, file: sources.file(f.span.file).name.clone(), line: sources.line_col(f.span).0 })
            .collect();
        self.sources = Some(sources.clone());
        self.placed = placed.to_vec();
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

/// Where a line's probes can be inserted, as byte offsets in the edited text.
#[derive(Clone, Copy, Debug)]
enum Spot {
    /// Before a statement inside a `{ }` block.
    Before(usize),
    /// Before a statement that is the unbraced body of an `if`/loop: it
    /// must be wrapped in braces with the probes (start, end).
    Wrap(usize, usize),
}

/// A statement the debugger can stop at: its first byte and where its probes go.
#[derive(Clone, Copy, Debug)]
struct Stop {
    start: usize,
    spot: Spot,
}

/// Every statement of the parsed unit whose span `to_offset` maps into the edited text.
fn stops(unit: &TranslationUnit, to_offset: &dyn Fn(Span) -> Option<usize>) -> Vec<Stop> {
    let mut out = Vec::new();
    for item in &unit.items {
        item_stops(item, to_offset, &mut out);
    }
    out
}

fn item_stops(item: &Item, to_offset: &dyn Fn(Span) -> Option<usize>, out: &mut Vec<Stop>) {
    match &item.kind {
        ItemKind::Function(f) => {
            if let Some(b) = &f.body {
                b.stmts.iter().for_each(|s| stmt_stops(s, true, to_offset, out));
            }
        }
        ItemKind::Struct(st) => {
            for m in &st.members {
                match &m.kind {
                    MemberKind::Method(f) | MemberKind::Constructor { func: f, .. } => {
                        if let Some(b) = &f.body {
                            b.stmts.iter().for_each(|s| stmt_stops(s, true, to_offset, out));
                        }
                    }
                    MemberKind::Nested(i) => item_stops(i, to_offset, out),
                    _ => {}
                }
            }
        }
        ItemKind::Namespace { items, .. } => items.iter().for_each(|i| item_stops(i, to_offset, out)),
        ItemKind::Template { item, .. } => item_stops(item, to_offset, out),
        _ => {}
    }
}

/// The spot for probes that run before `body` each time it runs.
fn body_spot(body: &Stmt, to_offset: &dyn Fn(Span) -> Option<usize>) -> Option<Spot> {
    let lo = to_offset(body.span)?;
    match &body.kind {
        StmtKind::Block(_) => Some(Spot::Before(lo + 1)),
        _ => Some(Spot::Wrap(lo, to_offset(Span { lo: body.span.hi, ..body.span })?)),
    }
}

fn stmt_stops(s: &Stmt, in_block: bool, to_offset: &dyn Fn(Span) -> Option<usize>, out: &mut Vec<Stop>) {
    let start = to_offset(s.span);
    let here = |out: &mut Vec<Stop>| {
        if let Some(start) = start {
            let spot = if in_block {
                Some(Spot::Before(start))
            } else {
                to_offset(Span { lo: s.span.hi, ..s.span }).map(|end| Spot::Wrap(start, end))
            };
            if let Some(spot) = spot {
                out.push(Stop { start, spot });
            }
        }
    };
    match &s.kind {
        StmtKind::Block(b) => b.stmts.iter().for_each(|x| stmt_stops(x, true, to_offset, out)),
        StmtKind::If { then, els, .. } => {
            here(out);
            stmt_stops(then, false, to_offset, out);
            if let Some(e) = els {
                stmt_stops(e, false, to_offset, out);
            }
        }
        // A loop line stops at the start of every iteration, where its
        // variables are in scope.
        StmtKind::For { body, .. } | StmtKind::RangeFor { body, .. } | StmtKind::While { body, .. } | StmtKind::DoWhile { body, .. } => {
            if let (Some(start), Some(spot)) = (start, body_spot(body, to_offset)) {
                out.push(Stop { start, spot });
            }
            stmt_stops(body, false, to_offset, out);
        }
        StmtKind::Switch { body, .. } => {
            here(out);
            stmt_stops(body, false, to_offset, out);
        }
        StmtKind::Case(_) | StmtKind::Default | StmtKind::Empty => {}
        _ => here(out),
    }
}

/// Lines (1-based, counted from the start of the file) and their text.
fn line_of(file_prefix_lines: u32, text: &str, offset: usize) -> u32 {
    file_prefix_lines + 1 + text[..offset.min(text.len())].bytes().filter(|&b| b == b'\n').count() as u32
}

/// One `--print` placed in the source.
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
    /// The text inserted for it in the edited source (byte ranges, the
    /// probe itself first), to tell which probe a compile error is in and
    /// to show the source as written.
    pub edits: Vec<(usize, usize)>,
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

    /// Move the ranges by `by` bytes (the edited text starts that far into its file).
    fn shifted(mut self, by: usize) -> Placed {
        self.edits.iter_mut().for_each(|r| *r = (r.0 + by, r.1 + by));
        self
    }
}

/// Diagnostics of the probed source rendered against the source as written:
/// the probes taken out of every file and each span moved back over them.
pub fn render_as_written(sources: &SourceMap, diags: &[msl::diag::Diagnostic], placed: &[Placed], color: bool) -> String {
    if placed.is_empty() {
        return msl::diag::render(sources, diags, color);
    }
    let written = sources.with_texts(|f| without_probes(&f.text, &f.name, placed));
    let back = |s: Span| {
        let name = &sources.file(s.file).name;
        Span::new(s.file, offset_as_written(s.lo, name, placed), offset_as_written(s.hi, name, placed))
    };
    let diags: Vec<msl::diag::Diagnostic> = diags
        .iter()
        .cloned()
        .map(|mut d| {
            d.span = back(d.span);
            d.secondary.iter_mut().for_each(|l| l.span = back(l.span));
            d
        })
        .collect();
    msl::diag::render(&written, &diags, color)
}

/// Where byte `offset` of the probed file `file` is in the file as written
/// (an offset inside a probe goes to where the probe was inserted).
fn offset_as_written(offset: u32, file: &str, placed: &[Placed]) -> u32 {
    let mut removed = 0;
    for &(lo, hi) in placed.iter().filter(|p| p.file == file).flat_map(|p| p.edits.iter()) {
        let (lo, hi) = (lo as u32, hi as u32);
        if hi <= offset {
            removed += hi - lo;
        } else if lo < offset {
            removed += offset - lo;
        }
    }
    offset - removed
}

/// `text` of file `file` with the inserted probes of `placed` taken out again.
pub fn without_probes(text: &str, file: &str, placed: &[Placed]) -> String {
    let mut ranges: Vec<(usize, usize)> = placed.iter().filter(|p| p.file == file).flat_map(|p| p.edits.iter().copied()).collect();
    ranges.sort();
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (lo, hi) in ranges {
        if lo < at || hi > text.len() || !text.is_char_boundary(lo) || !text.is_char_boundary(hi) {
            continue;
        }
        out.push_str(&text[at..lo]);
        at = hi;
    }
    out.push_str(&text[at..]);
    out
}

/// Insert the probes of the `prints` that `here` accepts into `text` (the
/// editable part of file `file_name`, which starts `prefix_lines` lines
/// into the file); probes are numbered from `first_probe`.
fn instrument(
    text: &str,
    prefix_lines: u32,
    file_name: &str,
    stops: &[Stop],
    prints: &[PrintSpec],
    here: &dyn Fn(&PrintSpec) -> bool,
    first_probe: usize,
) -> Result<(String, Vec<Placed>), String> {
    let mut edits: Vec<(usize, String)> = Vec::new();
    // (indices of the probe's edits, its spec and line)
    let mut placed_at: Vec<(Vec<usize>, usize, u32)> = Vec::new();
    // One placement per (spec, line): every line with a statement for `everywhere`.
    let mut wanted: Vec<(usize, u32)> = Vec::new();
    for (i, spec) in prints.iter().enumerate().filter(|(_, p)| here(p)) {
        if spec.everywhere {
            let mut lines: Vec<u32> = stops.iter().map(|s| line_of(prefix_lines, text, s.start)).collect();
            lines.sort();
            lines.dedup();
            wanted.extend(lines.into_iter().filter(|&l| !spec.skip.contains(&(file_name.to_string(), l))).map(|l| (i, l)));
        } else {
            wanted.push((i, spec.line));
        }
    }
    for (p, &(spec_index, line)) in wanted.iter().enumerate() {
        let spec = &prints[spec_index];
        let stop = stops.iter().filter(|s| line_of(prefix_lines, text, s.start) == line).min_by_key(|s| s.start);
        let Some(stop) = stop else {
            let mut lines: Vec<u32> = stops.iter().map(|s| line_of(prefix_lines, text, s.start)).collect();
            lines.sort();
            lines.dedup();
            let near: Vec<String> = {
                let mut by_distance = lines.clone();
                by_distance.sort_by_key(|&l| (l.abs_diff(line), l));
                let mut n: Vec<u32> = by_distance.into_iter().take(5).collect();
                n.sort();
                n.iter().map(|l| l.to_string()).collect()
            };
            return Err(format!(
                "line {} of `{file_name}` has no statement of the kernel to stop at; lines with statements near it: {}",
                line,
                if near.is_empty() { "(none)".to_string() } else { near.join(", ") }
            ));
        };
        let p = first_probe + p;
        let decls: Vec<String> = spec.exprs.iter().enumerate().map(|(s, e)| format!("auto {PROBE_PREFIX}{p}_{s} = ({e});")).collect();
        let probe = format!("{{ {} }}", decls.join(" "));
        match stop.spot {
            Spot::Before(at) => {
                placed_at.push((vec![edits.len()], spec_index, line));
                edits.push((at, format!("{probe} ")));
            }
            Spot::Wrap(start, end) => {
                placed_at.push((vec![edits.len(), edits.len() + 1], spec_index, line));
                edits.push((start, format!("{{ {probe} ")));
                edits.push((end, " }".to_string()));
            }
        }
    }
    // Where each edit lands: shifted by every edit before it (edits at the
    // same offset end up in their order).
    let mut by_place: Vec<usize> = (0..edits.len()).collect();
    by_place.sort_by_key(|&i| (edits[i].0, i));
    let mut shift = vec![0usize; edits.len()];
    let mut total = 0;
    for &i in &by_place {
        shift[i] = total;
        total += edits[i].1.len();
    }
    let final_start = |i: usize| edits[i].0 + shift[i];
    let placed: Vec<Placed> = placed_at
        .iter()
        .map(|(es, spec, line)| Placed {
            file: file_name.to_string(),
            header: false,
            line: *line,
            exprs: prints[*spec].exprs.clone(),
            spec: *spec,
            edits: es.iter().map(|&e| (final_start(e), final_start(e) + edits[e].1.len())).collect(),
        })
        .collect();
    // Apply from the end so earlier offsets stay valid (stable for equal offsets).
    let mut order: Vec<usize> = (0..edits.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse((edits[i].0, i)));
    let mut out = text.to_string();
    for i in order {
        let (at, t) = &edits[i];
        out.insert_str((*at).min(out.len()), t);
    }
    Ok((out, placed))
}

/// Parse a source (macros expanded as the compiler will) for its statements.
fn parse_unit(sources: &mut SourceMap, file: FileId, opts: &msl::CompileOptions) -> TranslationUnit {
    let mut diags = msl::diag::Diagnostics::new();
    let tokens = msl::preprocess::preprocess(sources, file, opts, &mut diags);
    msl::parse::parse(&tokens, &mut diags)
}

/// A source with the probes placed.
pub struct Instrumented {
    pub text: String,
    pub placed: Vec<Placed>,
    /// When a probe went into a header: every header the source includes,
    /// as text, the instrumented ones edited (for
    /// `CompileOptions::captured_headers`, so the compile reads these).
    pub headers: Option<msl::include::CapturedHeaders>,
}

/// Whether `name` (a display name or path) is what `wanted` names: the
/// same, or the same file name.
pub fn names_file(name: &str, wanted: &str) -> bool {
    let base = |p: &str| p.rsplit(['/', '\\']).next().unwrap_or(p).to_string();
    name == wanted || base(name) == base(wanted)
}

/// Instrument a full source file (`run`'s form), and the headers it
/// includes that a `FILE:LINE` names.
pub fn instrument_file(name: &str, text: &str, opts: &msl::CompileOptions, req: &Request) -> Result<Instrumented, String> {
    let mut sources = SourceMap::new();
    let file = sources.add(name, text);
    let unit = parse_unit(&mut sources, file, opts);
    let main = |p: &PrintSpec| p.file.as_deref().is_none_or(|f| names_file(name, f));
    let to_offset = |s: Span| (s.file == file).then_some(s.lo as usize);
    let (text, mut placed) = instrument(text, 0, name, &stops(&unit, &to_offset), &req.prints, &main, 0)?;
    let headers = instrument_headers(&sources, &unit, req, &main, &mut placed)?;
    Ok(Instrumented { text, placed, headers })
}

/// Place the probes of `FILE:LINE` specs (those `main` does not take) in
/// the headers `sources` read; appends to `placed`.
fn instrument_headers(
    sources: &SourceMap,
    unit: &TranslationUnit,
    req: &Request,
    main: &dyn Fn(&PrintSpec) -> bool,
    placed: &mut Vec<Placed>,
) -> Result<Option<msl::include::CapturedHeaders>, String> {
    let wanted: Vec<&str> = req.prints.iter().filter(|p| !main(p)).filter_map(|p| p.file.as_deref()).collect();
    let everywhere = req.prints.iter().any(|p| p.everywhere);
    if wanted.is_empty() && !everywhere {
        return Ok(None);
    }
    let headers: Vec<FileId> = sources.includes().iter().map(|e| e.to).collect();
    // Watches go everywhere the thread can stop: every header too.
    let mut wanted: Vec<String> = wanted.into_iter().map(str::to_string).collect();
    if everywhere {
        wanted.extend(headers.iter().map(|&h| sources.file(h).name.clone()));
    }
    let mut edited: Vec<(FileId, String)> = Vec::new();
    for w in &wanted {
        let Some(&id) = headers.iter().find(|&&h| names_file(&sources.file(h).name, w.as_str())) else {
            let mut names: Vec<String> = headers.iter().map(|&h| sources.file(h).name.clone()).collect();
            names.sort();
            names.dedup();
            return Err(format!(
                "`{w}` is not a file this kernel reads; its headers are: {}",
                if names.is_empty() { "(none)".to_string() } else { names.join(", ") }
            ));
        };
        if edited.iter().any(|e| e.0 == id) {
            continue;
        }
        let f = sources.file(id);
        let this = |p: &PrintSpec| p.everywhere || (!main(p) && p.file.as_deref().is_some_and(|x| names_file(&f.name, x)));
        let to_offset = |s: Span| (s.file == id).then_some(s.lo as usize);
        let (text, more) = instrument(&f.text, 0, &f.name, &stops(unit, &to_offset), &req.prints, &this, placed.len())?;
        placed.extend(more.into_iter().map(|p| Placed { header: true, ..p }));
        edited.push((id, text));
    }
    let entries = sources
        .includes()
        .iter()
        .map(|e| msl::include::CapturedInclude {
            from: sources.file(e.from).name.clone(),
            spelled: e.spelled.clone(),
            quoted: e.quoted,
            name: sources.file(e.to).name.clone(),
            text: edited.iter().find(|x| x.0 == e.to).map(|x| x.1.clone()).unwrap_or_else(|| sources.file(e.to).text.clone()),
        })
        .collect();
    Ok(Some(msl::include::CapturedHeaders { entries }))
}

/// Instrument an MLX body: `g` is the source generated for the original
/// body, whose statements locate the lines; the body starts `prefix_lines`
/// lines into the user's file.
pub fn instrument_body(
    body: &str,
    body_offset: usize,
    prefix_lines: u32,
    file_name: &str,
    g: &mlx::Generated,
    opts: &msl::CompileOptions,
    req: &Request,
) -> Result<(String, Vec<Placed>), String> {
    let mut sources = SourceMap::new();
    let file = sources.add("<generated>", g.full_source.clone());
    let unit = parse_unit(&mut sources, file, opts);
    let (lo, hi) = (g.source_offset + g.body_range.start, g.source_offset + g.body_range.end);
    let to_offset = |s: Span| (s.file == file && (lo..=hi).contains(&(s.lo as usize))).then(|| s.lo as usize - lo);
    let own = |p: &PrintSpec| p.file.as_deref().is_none_or(|f| names_file(file_name, f));
    let (text, placed) = instrument(body, prefix_lines, file_name, &stops(&unit, &to_offset), &req.prints, &own, 0)?;
    if let Some(p) = req.prints.iter().find(|p| !own(p)) {
        return Err(format!(
            "--print {}:{}: an MLX kernel's probes go in its body (LINE of `{file_name}`); FILE:LINE works with full sources (`debug FILE.metal --kernel K …`)",
            p.file.as_deref().unwrap_or(""),
            p.line
        ));
    }
    Ok((text, placed.into_iter().map(|p| p.shifted(body_offset)).collect()))
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
    for (p, place) in placed.iter().enumerate() {
        let mut rows: Vec<Vec<String>> = Vec::new();
        for h in log.hits.iter().filter(|h| h.probe == p as u32) {
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
    let (header, body) = puzzles::split_source(&file_text);
    let body_offset = file_text.len() - body.len();
    let prefix_lines = file_text[..body_offset].bytes().filter(|&b| b == b'\n').count() as u32;
    let original = puzzles::check::book_kernel(puzzle, &file_name, &file_text).map_err(|e| e.to_string())?;
    let g = original.generate_for(&call).map_err(|e| e.to_string())?;
    let (new_body, placed) = instrument_body(&body, body_offset, prefix_lines, &file_name, &g, &msl::CompileOptions::default(), req)?;
    let new_text = format!("{}{new_body}", &file_text[..body_offset]);
    let _ = header;
    let kernel = puzzles::check::book_kernel(puzzle, &file_name, &new_text).map_err(|e| e.to_string())?;
    let color = crate::color::stderr();
    let result = kernel.call_with(&call, &mut |_| {});
    if let Some(sink) = &req.interactive {
        let mut o = sink.borrow_mut();
        match &result {
            Ok(r) => o.finished(&r.report, &r.sources, &placed),
            Err(mlx::MlxError::Compile { sources, diagnostics, .. }) => o.failed(sources, diagnostics, &placed),
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
            print!("{}", render(req, case.threadgroup, &placed, r.report.probes.as_ref(), &note));
            let diags: Vec<msl::diag::Diagnostic> = r.report.findings.iter().map(gpu::Finding::to_diagnostic).collect();
            eprint!("{}", render_as_written(&r.sources, &diags, &placed, color));
            Ok(if r.report.has_errors() { EXIT_BAD_RESULT } else { EXIT_OK })
        }
        Err(mlx::MlxError::Compile { sources, diagnostics, .. }) => {
            eprint!("{}", msl::diag::render(&sources, &diagnostics, color));
            eprintln!("{}", placed_note(&placed));
            Ok(EXIT_BAD_RESULT)
        }
        Err(mlx::MlxError::Argument(m)) => Err(m),
    }
}

/// Says where the `--print` expressions went, for compile errors in them.
pub fn placed_note(placed: &[Placed]) -> String {
    let lines: Vec<String> = placed.iter().map(|p| format!("{}: {}", p.place(), p.exprs.join(", "))).collect();
    format!(
        "note: the --print expressions are compiled where they are printed ({}), as `auto {PROBE_PREFIX}…` locals; an error there is an expression that does not compile at that point",
        lines.join("; ")
    )
}
