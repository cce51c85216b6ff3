//! The puzzle book on the command line: `init`, `check`, `list`, `hint`,
//! `reset`, and what `metal-puzzles` does without a sub-command.

use crate::{EXIT_BAD_RESULT, EXIT_CANNOT_START, EXIT_OK};
use clap::Args;
use puzzles::style::{paint, Tone};
use puzzles::workspace::{Status, Workspace, DEFAULT_DIR};
use puzzles::{CheckResult, Puzzle, PUZZLES};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

#[derive(Args)]
pub struct InitArgs {
    /// Workspace directory to create (default: ./metal-puzzles).
    pub dir: Option<PathBuf>,
}

#[derive(Args)]
pub struct CheckArgs {
    /// Puzzle number (`1`, `15`, ...) or slug (`map`, `1d_conv`, ...). Default: the next unsolved puzzle.
    pub puzzle: Option<String>,
    /// Check every puzzle.
    #[arg(long, conflicts_with = "puzzle")]
    pub all: bool,
    /// The workspace directory.
    #[arg(long, default_value = DEFAULT_DIR)]
    pub dir: PathBuf,
    /// Print one JSON document instead of text.
    #[arg(long)]
    pub json: bool,
    /// Print the generated Metal source of each kernel (also VERBOSE=1).
    #[arg(long, short)]
    pub verbose: bool,
    /// Also print statistics per line of your file for the first test (see `run --profile`).
    #[arg(long)]
    pub profile: bool,
    /// Save the first failing test's run (or the first test's) as a capture file.
    #[command(flatten)]
    pub capture: crate::captures::CaptureArgs,
    /// Also write a JUnit XML report to FILE: one test case per test of each puzzle.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
}

#[derive(Args)]
pub struct DirArgs {
    /// The workspace directory.
    #[arg(long, default_value = DEFAULT_DIR)]
    pub dir: PathBuf,
}

#[derive(Args)]
pub struct PuzzleArgs {
    /// Puzzle number (`1`, `15`, ...) or slug.
    pub puzzle: String,
    /// The workspace directory.
    #[arg(long, default_value = DEFAULT_DIR)]
    pub dir: PathBuf,
}

#[derive(Args)]
pub struct HintArgs {
    /// Puzzle number (`1`, `15`, ...) or slug. Default: the next unsolved puzzle (as `check`).
    pub puzzle: Option<String>,
    /// Show hints 1 to K (default 1: the hints come one at a time).
    #[arg(long, value_name = "K", conflicts_with = "all")]
    pub level: Option<usize>,
    /// Show every hint at once.
    #[arg(long)]
    pub all: bool,
    /// The workspace directory.
    #[arg(long, default_value = DEFAULT_DIR)]
    pub dir: PathBuf,
}

#[derive(Args)]
pub struct ShowArgs {
    /// Puzzle number (`1`, `15`, ...) or slug.
    pub puzzle: String,
    /// The workspace directory.
    #[arg(long, default_value = DEFAULT_DIR)]
    pub dir: PathBuf,
    /// Write the diagram as SVG.
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,
    /// Write the diagram as PNG.
    #[arg(long, value_name = "FILE")]
    pub png: Option<PathBuf>,
    /// Which of the puzzle's book tests to draw (1 = the first).
    #[arg(long, default_value_t = 1)]
    pub test: usize,
    /// Draw only this threadgroup, by its position `X[,Y[,Z]]` (from 0).
    #[arg(long, value_name = "X,Y,Z")]
    pub threadgroup: Option<String>,
}

/// A threadgroup position `X[,Y[,Z]]` that exists in the dispatch.
fn parse_position(s: &str, grid: [u32; 3], tg: [u32; 3]) -> Result<[u32; 3], String> {
    let counts = [0, 1, 2].map(|d| grid[d].div_ceil(tg[d].max(1)));
    let parts: Vec<&str> = s.split(',').map(str::trim).collect();
    if parts.is_empty() || parts.len() > 3 {
        return Err(format!("--threadgroup must be X, X,Y or X,Y,Z (got `{s}`)"));
    }
    let mut pos = [0u32; 3];
    for (d, part) in parts.iter().enumerate() {
        pos[d] = part.parse().map_err(|_| format!("--threadgroup: `{part}` is not a whole number (in `{s}`)"))?;
    }
    if (0..3).any(|d| pos[d] >= counts[d]) {
        return Err(format!(
            "this test has {}x{}x{} threadgroups: --threadgroup takes X from 0 to {}, Y from 0 to {}, Z from 0 to {}",
            counts[0],
            counts[1],
            counts[2],
            counts[0] - 1,
            counts[1] - 1,
            counts[2] - 1
        ));
    }
    Ok(pos)
}

/// `show`: the score table and the diagram of the learner's kernel, drawn
/// from the simulator's trace (works for wrong solutions too).
/// `--png x.jpg` would write PNG bytes under another format's name: refused
/// before anything runs, with the name it should have.
fn check_image_name(path: &Path, ext: &str, flag: &str) -> Result<(), String> {
    let given = path.extension().map(|e| e.to_string_lossy().to_ascii_lowercase());
    if given.as_deref() == Some(ext) {
        return Ok(());
    }
    let fixed = path.with_extension(ext);
    Err(format!(
        "{flag} writes a {} file, but `{}` {}\nhelp: name it `{}`",
        ext.to_uppercase(),
        path.display(),
        match given {
            Some(e) => format!("ends in `.{e}`"),
            None => "has no extension".to_string(),
        },
        fixed.display()
    ))
}

pub fn show(args: &ShowArgs) -> u8 {
    let Some(p) = puzzles::find(&args.puzzle) else { return unknown_puzzle(&args.puzzle) };
    for (path, ext, flag) in [(&args.png, "png", "--png"), (&args.svg, "svg", "--svg")] {
        if let Some(Err(e)) = path.as_deref().map(|path| check_image_name(path, ext, flag)) {
            eprintln!("error: {e}");
            return EXIT_CANNOT_START;
        }
    }
    if args.test == 0 || args.test > p.tests.len() {
        let names: Vec<String> = p.tests.iter().enumerate().map(|(i, t)| format!("{} ({})", i + 1, t.name)).collect();
        eprintln!("error: puzzle {} has no test {}; its tests are: {}", p.number, args.test, names.join(", "));
        eprintln!("help: pick one with `--test N`, N from 1 to {}", p.tests.len());
        return EXIT_CANNOT_START;
    }
    let ws = Workspace::new(&args.dir);
    if !ws.exists() {
        return no_workspace(&ws);
    }
    // A diagram is never written over a workspace file (nor as PNG bytes
    // into a file named otherwise): refused before anything runs.
    let targets = [(&args.svg, "svg", "--svg"), (&args.png, "png", "--png")];
    for (path, ext, flag) in targets {
        if let Some(path) = path {
            if let Err(e) = files::require_extension(path, ext, flag).and_then(|()| files::refuse_overwrite(path, &ws.owned_files(), flag))
            {
                eprintln!("error: {e}");
                return EXIT_CANNOT_START;
            }
        }
    }
    let text = match ws.read(p) {
        Ok(t) => t,
        Err(e) => return unreadable(&ws, p, &e),
    };
    let file = ws.path(p).display().to_string();
    let color = crate::color::stdout();
    let result = puzzles::check_file(p, &file, &text);
    print!("{}", puzzles::render::human(&result, color));
    let focus = match args
        .threadgroup
        .as_deref()
        .map(|s| parse_position(s, p.tests[args.test - 1].grid, p.tests[args.test - 1].threadgroup))
        .transpose()
    {
        Ok(f) => f,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_CANNOT_START;
        }
    };
    let shown = match puzzles::show::trace_test(p, &file, &text, args.test - 1, focus) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{e}");
            eprintln!("note: the diagram needs a kernel that compiles");
            return EXIT_BAD_RESULT;
        }
    };
    let width = crossterm::terminal::size().map(|(c, _)| c as usize).unwrap_or(100);
    println!("\n{}", diagram::render_terminal(&shown.spec, &shown.trace, color, width));
    if args.svg.is_some() || args.png.is_some() {
        let svg = diagram::render_svg(&shown.spec, &shown.trace);
        if let Some(path) = &args.svg {
            if let Err(e) = files::write_atomic(path, svg.as_bytes()) {
                eprintln!("error: cannot write `{}`: {e}", path.display());
                return EXIT_CANNOT_START;
            }
            println!("wrote {}", path.display());
        }
        if let Some(path) = &args.png {
            match diagram::render_png(&svg)
                .map_err(|e| e.to_string())
                .and_then(|b| files::write_atomic(path, &b).map_err(|e| e.to_string()))
            {
                Ok(()) => println!("wrote {}", path.display()),
                Err(e) => {
                    eprintln!("error: cannot write `{}`: {e}", path.display());
                    return EXIT_CANNOT_START;
                }
            }
        }
    }
    if result.solved() {
        EXIT_OK
    } else {
        EXIT_BAD_RESULT
    }
}

fn unknown_puzzle(key: &str) -> u8 {
    let slugs: Vec<&str> = PUZZLES.iter().map(|p| p.slug).collect();
    eprintln!("error: there is no puzzle `{key}`");
    if let Some(s) = msl::diag::suggest(key, slugs.iter().copied()) {
        eprintln!("help: did you mean `{s}`?");
    }
    eprintln!("note: puzzles are numbered 1 to {}; their names are: {}", PUZZLES.len(), slugs.join(", "));
    EXIT_CANNOT_START
}

/// How the user can run sub-command `sub` from where they are: through
/// cargo when that is how they started us, by name when it is on PATH, else
/// by path; with `--dir` when the workspace is not the default one.
pub fn invocation(sub: &str, dir: &Path) -> String {
    let base = if let Some(p) = crate::PROGRAM.get() {
        p.clone()
    } else if std::env::var_os("CARGO").is_some() && std::env::var_os("CARGO_MANIFEST_DIR").is_some() {
        "cargo run --release --".to_string()
    } else {
        let exe = std::env::current_exe().ok();
        let on_path = exe.as_ref().and_then(|e| e.parent().map(Path::to_path_buf)).is_some_and(|d| {
            std::env::var_os("PATH").is_some_and(|p| std::env::split_paths(&p).any(|x| x.canonicalize().ok() == d.canonicalize().ok()))
        });
        match (on_path, std::env::args().next()) {
            (false, Some(arg0)) if arg0.contains('/') => arg0,
            _ => "metal-puzzles".to_string(),
        }
    };
    let dir_flag =
        if dir == Path::new(DEFAULT_DIR) { String::new() } else { format!(" --dir {}", shell_quote(&dir.display().to_string())) };
    if sub.is_empty() {
        format!("{base}{dir_flag}")
    } else {
        format!("{base} {sub}{dir_flag}")
    }
}

/// `error: cannot read …` with what to do about it; exit 2.
fn unreadable(ws: &Workspace, p: &Puzzle, e: &puzzles::workspace::FileError) -> u8 {
    eprintln!("error: cannot read `{}`: {e}", ws.path(p).display());
    eprintln!("help: {}", e.help(&invocation_init(&ws.dir)));
    EXIT_CANNOT_START
}

/// The command that creates (or completes) the workspace `dir`.
fn invocation_init(dir: &Path) -> String {
    invocation("init", Path::new(DEFAULT_DIR)).replace(" init", &format!(" init {}", shell_quote(&dir.display().to_string())))
}

/// `s` as one word for a POSIX shell: as it is when that is safe, else in
/// single quotes (`my ws` becomes `'my ws'`).
pub fn shell_quote(s: &str) -> String {
    let safe = !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || "/._-+=:@,%".contains(c));
    if safe {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

fn no_workspace(ws: &Workspace) -> u8 {
    eprintln!("error: there is no puzzle workspace at `{}`", ws.dir.display());
    eprintln!("help: create one with `{}`", invocation_init(&ws.dir));
    EXIT_CANNOT_START
}

pub fn init(args: &InitArgs) -> u8 {
    let ws = Workspace::new(args.dir.clone().unwrap_or_else(|| PathBuf::from(DEFAULT_DIR)));
    match ws.init() {
        Ok(created) => {
            let kept = PUZZLES.len() - created.len();
            let files = |n: usize| if n == 1 { "1 file".to_string() } else { format!("{n} files") };
            println!(
                "Workspace `{}`: {} starter {} written{}.",
                ws.dir.display(),
                created.len(),
                if created.len() == 1 { "file" } else { "files" },
                if kept > 0 { format!(", {} already there left untouched", files(kept)) } else { String::new() }
            );
            println!(
                "Open `{}` in your editor and start with puzzle 1; check it with `{}`, or open the live book with `{}` (it re-checks on every save).",
                ws.path(&PUZZLES[0]).display(),
                invocation("check 1", &ws.dir),
                invocation("", &ws.dir)
            );
            EXIT_OK
        }
        Err(e) => {
            eprintln!("error: cannot create the workspace `{}`: {e}", ws.dir.display());
            EXIT_CANNOT_START
        }
    }
}

fn verbose_env() -> bool {
    std::env::var("VERBOSE").is_ok_and(|v| !v.is_empty() && v != "0")
}

pub fn check(args: &CheckArgs) -> u8 {
    let ws = Workspace::new(&args.dir);
    if !ws.exists() {
        return no_workspace(&ws);
    }
    if let Err(e) = args.capture.check_target(&ws.owned_files()) {
        eprintln!("error: {e}");
        return EXIT_CANNOT_START;
    }
    let progress = ws.load_progress();
    let selected: Vec<&'static Puzzle> = if args.all {
        PUZZLES.iter().collect()
    } else if let Some(key) = &args.puzzle {
        match puzzles::find(key) {
            Some(p) => vec![p],
            None => return unknown_puzzle(key),
        }
    } else {
        match PUZZLES.iter().find(|p| ws.status(p, &progress) != Status::Solved) {
            Some(p) => vec![p],
            None => {
                if !args.json {
                    println!("Every puzzle is solved; checking them all again.\n");
                }
                PUZZLES.iter().collect()
            }
        }
    };
    let mut texts = Vec::new();
    for p in &selected {
        match ws.read(p) {
            Ok(t) => texts.push(t),
            Err(e) => return unreadable(&ws, p, &e),
        }
    }
    let verbose = args.verbose || verbose_env();
    let color = crate::color::stdout();
    let results: Vec<CheckResult> =
        selected.iter().zip(&texts).map(|(p, t)| puzzles::check_file(p, &ws.path(p).display().to_string(), t)).collect();
    let profiles: Vec<Option<ProfileRun>> = selected
        .iter()
        .zip(&texts)
        .map(|(p, t)| if args.profile { profile_puzzle(p, &ws.path(p).display().to_string(), t) } else { None })
        .collect();
    if args.json {
        let mut list: Vec<serde_json::Value> = results.iter().map(puzzles::render::json).collect();
        for (doc, prof) in list.iter_mut().zip(&profiles) {
            if let Some(p) = prof {
                doc["profile"] = crate::profile::json(&p.kernel, &p.profile, &p.sources, p.threads, p.threadgroups);
            }
        }
        println!("{}", serde_json::json!({ "puzzles": list }));
    } else {
        for (k, r) in results.iter().enumerate() {
            let untouched = puzzles::workspace::is_untouched(r.puzzle, &texts[k]);
            if selected.len() > 1 || k > 0 {
                if k > 0 && !(untouched && selected.len() > 1 && !verbose) {
                    println!();
                }
                let title = format!("━━ Puzzle {}: {} ({}) ━━", r.puzzle.number, r.puzzle.title, r.puzzle.file_name());
                // An untouched starter with others: one line, not a report of a
                // failure nobody has attempted yet.
                if untouched && selected.len() > 1 && !verbose {
                    let what = paint(color, Tone::Dim, "not started (the starter file is unchanged)");
                    println!("{} {what}", paint(color, Tone::Strong, &title));
                    continue;
                }
                println!("{}", paint(color, Tone::Strong, &title));
            }
            if verbose {
                // MLX generates (and prints) one kernel per input signature,
                // so a puzzle with tests of different shapes shows several.
                for (name, src) in &r.generated {
                    println!("// ── the kernel MLX generates for test `{name}` ──");
                    print!("{src}");
                }
            }
            print!("{}", puzzles::render::human(r, color));
            if let Some(p) = &profiles[k] {
                println!("\n── profile of test 1 ──");
                print!("{}", crate::profile::text(&p.kernel, &p.profile, &p.sources, p.threads, p.threadgroups));
            } else if args.profile {
                println!("\n(no profile: the kernel does not compile or run)");
            }
        }
        if results.len() > 1 {
            let solved = results.iter().filter(|r| r.solved()).count();
            let pass = results.iter().filter(|r| r.passed).count();
            let fresh = results.iter().zip(&texts).filter(|(r, t)| puzzles::workspace::is_untouched(r.puzzle, t)).count();
            let fresh = if fresh > 0 { format!(", {fresh} not started") } else { String::new() };
            println!("\n{solved}/{} puzzles solved ({pass} pass their tests{fresh}).", results.len());
        }
    }
    if args.capture.capture.is_some() && results.len() > 1 {
        eprintln!("warning: no capture written: --capture FILE saves one puzzle's run; name the puzzle, or use MTL_CAPTURE_ENABLED=1 for one capture per puzzle");
    } else {
        for ((r, p), t) in results.iter().zip(&selected).zip(&texts) {
            let saved = args.capture.save(p.kernel_name, || {
                let file = ws.path(p).display().to_string();
                let (title, kernel, call) = puzzles::check::capture_run(r, &file, t)?;
                let result = kernel.call(&call).map_err(|e| format!("capture not written: {e}"))?;
                capture::from_mlx(&kernel, &call, &result, "metal-puzzles check", title, capture::DEFAULT_LIMIT)
            });
            if let Err(e) = saved {
                eprintln!("error: {e}");
                return EXIT_CANNOT_START;
            }
        }
    }
    if let Some(path) = &args.junit {
        let cases: Vec<session::formats::TestCase> =
            results.iter().flat_map(|r| junit_cases(r, &ws.path(r.puzzle).display().to_string())).collect();
        if let Err(e) = session::formats::write_atomically(path, &session::formats::junit("metal-puzzles check", &cases)) {
            eprintln!("error: {e}");
            return EXIT_CANNOT_START;
        }
    }
    let pairs: Vec<(&CheckResult, &str)> = results.iter().zip(texts.iter().map(String::as_str)).collect();
    if let Err(e) = ws.record(&pairs) {
        eprintln!("warning: cannot save progress in `{}`: {e}", ws.dir.display());
    }
    if results.iter().all(|r| r.solved()) {
        EXIT_OK
    } else {
        EXIT_BAD_RESULT
    }
}

/// A puzzle's check as JUnit test cases: one per test; a kernel that could
/// not run, error findings or missed targets fail the puzzle's first case.
fn junit_cases(r: &CheckResult, file: &str) -> Vec<session::formats::TestCase> {
    let details = puzzles::render::human(r, false);
    let mut cases: Vec<session::formats::TestCase> = r
        .tests
        .iter()
        .map(|t| session::formats::TestCase {
            name: format!("{}: {}", r.puzzle.slug, t.name),
            classname: file.to_string(),
            failure: (!t.passed).then(|| (format!("test `{}` failed", t.name), details.clone())),
            ..Default::default()
        })
        .collect();
    let why = if let Some(e) = &r.error {
        Some(e.clone())
    } else if r.findings.iter().any(|f| f.finding.is_error) {
        Some("the sanitizer reported errors".to_string())
    } else if r.passed && !r.solved() {
        Some("the tests pass, but a memory target is missed".to_string())
    } else {
        None
    };
    if let Some(why) = why {
        // (a failing test already fails the report; otherwise the first case carries why)
        if cases.is_empty() {
            cases.push(session::formats::TestCase { name: r.puzzle.slug.to_string(), classname: file.to_string(), ..Default::default() });
        }
        if cases.iter().all(|c| c.failure.is_none()) {
            cases[0].failure = Some((why, details));
        }
    }
    cases
}

/// A puzzle's first test run again with per-line statistics.
struct ProfileRun {
    kernel: String,
    profile: gpu::profile::Profile,
    sources: msl::source::SourceMap,
    threads: u64,
    threadgroups: u64,
}

fn profile_puzzle(puzzle: &'static Puzzle, file_name: &str, text: &str) -> Option<ProfileRun> {
    let kernel = puzzles::check::book_kernel(puzzle, file_name, text).ok()?;
    let (_, case, _, inputs) = puzzles::check::runs(puzzle).into_iter().next()?;
    let mut call = puzzles::check::book_call(puzzle, &puzzle.tests[case], &inputs);
    call.profile = true;
    let r = kernel.call_with(&call, &mut |_| {}).ok()?;
    let profile = r.report.profile?;
    Some(ProfileRun {
        kernel: puzzle.kernel_name.to_string(),
        profile,
        sources: r.sources,
        threads: r.report.threads,
        threadgroups: r.report.threadgroups,
    })
}

/// The progress bar of the list and of the live screen: `[███░░░]`.
pub fn progress_bar(solved: usize, total: usize, width: usize) -> String {
    let filled = (solved * width).checked_div(total).unwrap_or(0).min(width);
    format!("[{}{}]", "█".repeat(filled), "░".repeat(width - filled))
}

/// A status's mark and colour, the same in `list` and on the live screen.
pub fn status_mark(st: Status, color: bool) -> String {
    match st {
        Status::Solved => paint(color, Tone::Good, "✓"),
        Status::Unsolved => paint(color, Tone::Bad, "✗"),
        Status::Edited => paint(color, Tone::Warn, "~"),
        Status::NotStarted => paint(color, Tone::Dim, "·"),
    }
}

/// A status's label, coloured like its mark.
pub fn status_label(st: Status, color: bool) -> String {
    let tone = match st {
        Status::Solved => Tone::Good,
        Status::Unsolved => Tone::Bad,
        Status::Edited => Tone::Warn,
        Status::NotStarted => Tone::Dim,
    };
    paint(color, tone, st.label())
}

/// The next puzzle to work on after `from` (wrapping around): the first
/// one not solved. `None` when every puzzle is solved.
pub fn next_unsolved(statuses: &[Status], from: usize) -> Option<usize> {
    let n = statuses.len();
    (1..=n).map(|k| (from + k) % n).find(|&i| statuses[i] != Status::Solved)
}

/// One puzzle's line of the list: mark, number, title, file (when
/// `with_file`), status.
pub fn list_line(k: usize, st: Status, color: bool, with_file: bool) -> String {
    let p = &PUZZLES[k];
    // Columns as wide as the longest title and file name, so they line up.
    let title_width = PUZZLES.iter().map(|p| p.title.chars().count()).max().unwrap_or(0);
    let file_width = PUZZLES.iter().map(|p| p.file_name().chars().count()).max().unwrap_or(0);
    let file = if with_file { format!("{:<file_width$} ", p.file_name()) } else { String::new() };
    format!("{} {:>2}  {:<title_width$} {file}{}", status_mark(st, color), p.number, p.title, status_label(st, color))
}

/// The progress overview: one line per puzzle and a progress bar.
pub fn list_text(ws: &Workspace, color: bool) -> String {
    let statuses = ws.statuses();
    // On a terminal narrower than a full line, the file names make room
    // (the `Next:` line names the file to edit).
    let with_file = !std::io::stdout().is_terminal() || crossterm::terminal::size().map_or(true, |(c, _)| c >= 100);
    let solved = statuses.iter().filter(|s| **s == Status::Solved).count();
    let mut s = format!(
        "{}  {} {solved}/{} solved  ({})\n\n",
        paint(color, Tone::Strong, "Metal Puzzles"),
        progress_bar(solved, PUZZLES.len(), 28),
        PUZZLES.len(),
        ws.dir.display()
    );
    let next = statuses.iter().position(|s| *s != Status::Solved);
    for (k, (p, st)) in PUZZLES.iter().zip(&statuses).enumerate() {
        // Puzzles are grouped by chapter, in the book's order.
        if k == 0 || PUZZLES[k - 1].chapter != p.chapter {
            let of: Vec<&Status> = PUZZLES.iter().zip(&statuses).filter(|(q, _)| q.chapter == p.chapter).map(|(_, s)| s).collect();
            let done = of.iter().filter(|s| ***s == Status::Solved).count();
            let heading = format!("{} ({done}/{})", p.chapter, of.len());
            s.push_str(&format!("{}{}\n", if k == 0 { "" } else { "\n" }, paint(color, Tone::Strong, &heading)));
        }
        let arrow = if Some(k) == next { "  ← next" } else { "" };
        s.push_str(&format!(" {}{arrow}\n", list_line(k, *st, color, with_file)));
    }
    if statuses.contains(&Status::Edited) {
        s.push_str(&format!(
            "\n~ edited, not checked: changed since its last check; `{}` checks them all.\n",
            invocation("check --all", &ws.dir)
        ));
    }
    if let Some(k) = next {
        s.push_str(&format!(
            "\nNext: edit `{}`, then run `{}`.\n",
            ws.path(&PUZZLES[k]).display(),
            invocation(&format!("check {}", PUZZLES[k].slug), &ws.dir)
        ));
    } else {
        s.push_str(&format!("\n{}\n", paint(color, Tone::Good, "Every puzzle is solved: the book is finished. Well done!")));
    }
    s
}

pub fn list(args: &DirArgs) -> u8 {
    let ws = Workspace::new(&args.dir);
    if !ws.exists() {
        return no_workspace(&ws);
    }
    print!("{}", list_text(&ws, crate::color::stdout()));
    EXIT_OK
}

/// The puzzle a command without one works on: the next unsolved one of
/// the workspace (the first when there is none, or all are solved).
fn current_puzzle(dir: &Path) -> &'static Puzzle {
    let ws = Workspace::new(dir);
    if !ws.exists() {
        return &PUZZLES[0];
    }
    let statuses = ws.statuses();
    statuses.iter().position(|s| *s != Status::Solved).map(|k| &PUZZLES[k]).unwrap_or(&PUZZLES[0])
}

/// `hint`: the puzzle's description, size, goal, and its hints one at a
/// time (`--level K` for the first K, `--all` for every one).
pub fn hint(args: &HintArgs) -> u8 {
    let p = match &args.puzzle {
        Some(key) => match puzzles::find(key) {
            Some(p) => p,
            None => return unknown_puzzle(key),
        },
        None => current_puzzle(&args.dir),
    };
    let color = crate::color::stdout();
    let width = 78;
    println!("{}\n", paint(color, Tone::Strong, &format!("Puzzle {}: {}", p.number, p.title)));
    print!("{}", puzzles::guide::about(p, width));
    if let Some(g) = puzzles::guide::goal(p, width) {
        println!();
        print!("{g}");
    }
    let n = p.hints.len();
    let upto = if args.all { n } else { args.level.unwrap_or(1).clamp(1, n.max(1)) };
    println!();
    print!("{}", paint(color, Tone::Hint, puzzles::guide::hints(p, upto, width).trim_end()));
    println!();
    if upto < n {
        let next = invocation(&format!("hint {} --level {}", p.slug, upto + 1), &args.dir);
        let all = invocation(&format!("hint {} --all", p.slug), &args.dir);
        println!(
            "\n{}",
            puzzles::workspace::wrap(
                &format!("{} more hint{}: `{next}` shows the next one, `{all}` every one.", n - upto, if n - upto == 1 { "" } else { "s" }),
                width
            )
            .trim_end()
        );
    }
    EXIT_OK
}

pub fn reset(args: &PuzzleArgs) -> u8 {
    let Some(p) = puzzles::find(&args.puzzle) else { return unknown_puzzle(&args.puzzle) };
    let ws = Workspace::new(&args.dir);
    if !ws.exists() {
        return no_workspace(&ws);
    }
    match ws.reset(p) {
        Ok(backup) => {
            if let Some(b) = backup {
                println!("Your version is saved as `{}`.", b.display());
            }
            println!("`{}` is back to the starter.", ws.path(p).display());
            EXIT_OK
        }
        Err(e) => {
            eprintln!("error: cannot reset `{}`: {e}", ws.path(p).display());
            EXIT_CANNOT_START
        }
    }
}

/// `metal-puzzles` without a sub-command: create the workspace on first
/// run, then watch mode in a terminal, or print progress otherwise.
pub fn default_command(dir: Option<PathBuf>) -> u8 {
    let ws = Workspace::new(dir.unwrap_or_else(|| PathBuf::from(DEFAULT_DIR)));
    if !ws.exists() {
        if let Err(e) = ws.init() {
            eprintln!("error: cannot create the workspace `{}`: {e}", ws.dir.display());
            return EXIT_CANNOT_START;
        }
        println!("Created the puzzle workspace `{}`.\n", ws.dir.display());
    }
    // Watch mode needs a terminal for keys; otherwise print progress and
    // exit (never wait for input that cannot come).
    if std::io::stdout().is_terminal() && std::io::stdin().is_terminal() {
        return crate::watch::run(ws);
    }
    print!("{}", list_text(&ws, crate::color::stdout()));
    EXIT_OK
}

/// Progress without watch mode (when the terminal cannot go raw).
pub fn default_command_plain(ws: &Workspace) -> u8 {
    print!("{}", list_text(ws, crate::color::stdout()));
    EXIT_OK
}
