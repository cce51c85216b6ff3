//! Watch mode: the puzzle book as a live screen, like rustlings. Shows the
//! current puzzle and its latest check; re-checks on every save.

use crate::book::list_text;
use crate::EXIT_OK;
use crossterm::event::{self, Event, KeyCode, KeyEventKind, KeyModifiers};
use crossterm::{cursor, execute, queue, terminal};
use puzzles::workspace::{Status, Workspace};
use puzzles::{Puzzle, PUZZLES};
use std::io::Write;
use std::path::PathBuf;
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime};

/// What the lower part of the screen shows.
#[derive(Clone, Copy, PartialEq, Eq)]
enum View {
    Check,
    Hint,
    List,
    AllChecked,
    Diagram,
}

struct Watch {
    ws: Workspace,
    index: usize,
    view: View,
    /// The latest finished check of the current puzzle.
    result: Option<Checked>,
    all: Vec<(u32, bool)>,
    /// The current file's modification time and size when last checked
    /// (the polling fallback for file systems without change events).
    stamp: Option<(SystemTime, u64)>,
    message: String,
    /// First line of the scrollable pane shown.
    scroll: usize,
    /// The check running on a worker thread, if any.
    running: Option<Running>,
}

/// What the screen keeps of a finished check: plain text, made on the
/// worker thread that ran it.
struct Checked {
    /// `Passed Tests!`/`Failed Tests.` and the first reason.
    verdict: Vec<String>,
    /// The full report (colored).
    report: String,
    /// The kernel signature the learner's body runs inside.
    signature: Option<String>,
    /// Compact terminal diagram of the puzzle's first test.
    diagram: Option<String>,
    message: String,
    /// Wall-clock time of the check (tests, explanations and diagram).
    seconds: f64,
}

/// A check on a worker thread: `cancel` stops it at once (a new save,
/// another puzzle, `q`); `done` receives its result unless it was cancelled.
struct Running {
    cancel: gpu::Cancel,
    done: mpsc::Receiver<Done>,
    started: Instant,
    /// What is being checked, for the indicator.
    what: String,
}

enum Done {
    /// The current puzzle (by index) was checked.
    One(usize, Checked),
    /// `c`: every puzzle was checked; (number, solved).
    All(Vec<(u32, bool)>),
}

/// Restores the terminal even if drawing fails.
struct RawMode;

impl Drop for RawMode {
    fn drop(&mut self) {
        let _ = terminal::disable_raw_mode();
        let _ = execute!(std::io::stdout(), terminal::LeaveAlternateScreen, cursor::Show);
    }
}

pub fn run(ws: Workspace) -> u8 {
    let progress = ws.load_progress();
    let index = PUZZLES.iter().position(|p| ws.status(p, &progress) != Status::Solved).unwrap_or(0);
    let mut w = Watch::new(ws, index);
    // File events from the OS when available; polling otherwise.
    let (tx, rx) = mpsc::channel();
    let watcher = notify::recommended_watcher(move |res: notify::Result<notify::Event>| {
        if res.is_ok() {
            let _ = tx.send(());
        }
    });
    let mut _watcher = match watcher {
        Ok(mut wt) => {
            use notify::Watcher;
            if wt.watch(&w.ws.dir, notify::RecursiveMode::NonRecursive).is_ok() {
                Some(wt)
            } else {
                None
            }
        }
        Err(_) => None,
    };
    if terminal::enable_raw_mode().is_err() {
        return crate::book::default_command_plain(&w.ws);
    }
    let _guard = RawMode;
    let _ = execute!(std::io::stdout(), terminal::EnterAlternateScreen, cursor::Hide);
    w.check_current();
    w.draw();
    let mut last_poll = Instant::now();
    let mut last_draw = Instant::now();
    loop {
        if event::poll(Duration::from_millis(50)).unwrap_or(false) {
            if let Ok(Event::Key(k)) = event::read() {
                if k.kind == KeyEventKind::Release {
                    continue;
                }
                let ctrl_c = k.modifiers.contains(KeyModifiers::CONTROL) && k.code == KeyCode::Char('c');
                match k.code {
                    KeyCode::Char('q') | KeyCode::Esc => break,
                    _ if ctrl_c => break,
                    KeyCode::Char('n') | KeyCode::Right => w.go(1),
                    KeyCode::Char('p') | KeyCode::Left => w.go(-1),
                    KeyCode::Char('h') => w.toggle(View::Hint),
                    KeyCode::Char('l') => w.toggle(View::List),
                    KeyCode::Char('d') => w.toggle(View::Diagram),
                    KeyCode::Up | KeyCode::Char('k') => w.scroll = w.scroll.saturating_sub(1),
                    KeyCode::Down | KeyCode::Char('j') => w.scroll += 1,
                    KeyCode::PageUp => w.scroll = w.scroll.saturating_sub(page()),
                    KeyCode::PageDown | KeyCode::Char(' ') => w.scroll += page(),
                    KeyCode::Home => w.scroll = 0,
                    KeyCode::End => w.scroll = usize::MAX,
                    KeyCode::Char('c') => w.check_all(),
                    KeyCode::Char('r') => {
                        w.view = View::Check;
                        w.check_current();
                    }
                    _ => {}
                }
                w.draw();
                last_draw = Instant::now();
            } else {
                // (A resized terminal gets a screen that fits it.)
                w.draw();
            }
        }
        if w.take_done() {
            w.draw();
            last_draw = Instant::now();
        } else if w.running.is_some() && last_draw.elapsed() > Duration::from_millis(200) {
            // The indicator counts the seconds.
            w.draw();
            last_draw = Instant::now();
        }
        // A save: an OS event, or (every 250 ms) a changed modification time.
        let mut changed = false;
        while rx.try_recv().is_ok() {
            changed = true;
        }
        if last_poll.elapsed() > Duration::from_millis(250) {
            last_poll = Instant::now();
            if w.file_stamp() != w.stamp {
                changed = true;
            }
        }
        if changed && w.file_stamp() != w.stamp {
            w.view = View::Check;
            w.check_current();
            w.draw();
            last_draw = Instant::now();
        }
    }
    // Quit at once: a running check is told to stop and not waited for.
    w.stop_running();
    EXIT_OK
}

impl Watch {
    /// The screen on puzzle `index`, nothing checked yet.
    fn new(ws: Workspace, index: usize) -> Watch {
        Watch { ws, index, view: View::Check, result: None, all: Vec::new(), stamp: None, message: String::new(), scroll: 0, running: None }
    }

    fn puzzle(&self) -> &'static Puzzle {
        &PUZZLES[self.index]
    }

    fn path(&self) -> PathBuf {
        self.ws.path(self.puzzle())
    }

    fn file_stamp(&self) -> Option<(SystemTime, u64)> {
        let m = std::fs::metadata(self.path()).ok()?;
        Some((m.modified().ok()?, m.len()))
    }

    fn toggle(&mut self, v: View) {
        self.view = if self.view == v { View::Check } else { v };
        self.scroll = 0;
    }

    fn go(&mut self, delta: isize) {
        let n = PUZZLES.len() as isize;
        self.index = ((self.index as isize + delta).rem_euclid(n)) as usize;
        self.view = View::Check;
        // (The last result belongs to the other puzzle.)
        self.result = None;
        self.message.clear();
        self.check_current();
    }

    /// Cancel the running check, if any; its result is never shown.
    fn stop_running(&mut self) {
        if let Some(r) = self.running.take() {
            r.cancel.cancel();
        }
    }

    /// Start checking the current puzzle's file on a worker thread (the
    /// screen stays live: keys work and a newer save replaces this check).
    fn check_current(&mut self) {
        self.stop_running();
        self.scroll = 0;
        let p = self.puzzle();
        self.stamp = self.file_stamp();
        let text = match self.ws.read(p) {
            Ok(text) => text,
            Err(e) => {
                self.result = None;
                self.message = format!(
                    "cannot read `{}`: {e} (run `{}` to restore it)",
                    self.path().display(),
                    crate::book::invocation("init", &self.ws.dir)
                );
                return;
            }
        };
        let (ws, index, file) = (self.ws.clone(), self.index, self.path().display().to_string());
        let what = self.path().file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default();
        let width = terminal::size().map(|(c, _)| c as usize).unwrap_or(100);
        self.spawn(what, move |cancel| {
            let started = Instant::now();
            let r = puzzles::check::check_file_cancellable(p, &file, &text, Some(cancel))?;
            let diagram = puzzles::show::trace_test_cancellable(p, &file, &text, 0, None, Some(cancel))
                .ok()
                .map(|s| diagram::render_terminal(&s.spec, &s.trace, true, width));
            if cancel.is_cancelled() {
                return None;
            }
            let mut message = if r.solved() {
                let next = PUZZLES.get(p.number as usize);
                if p.number as usize == PUZZLES.len() {
                    format!("Puzzle {} solved! That was the last one: the book is finished.", p.number)
                } else if let Some(q) = next.filter(|q| q.chapter != p.chapter) {
                    format!(
                        "Puzzle {} solved, and with it the chapter {}! Press `n` to start the chapter {}.",
                        p.number, p.chapter, q.chapter
                    )
                } else {
                    format!("Puzzle {} solved! Press `n` for the next one.", p.number)
                }
            } else if r.passed {
                "Tests pass, but a target is missed: not solved yet (see below).".to_string()
            } else {
                String::new()
            };
            if let Err(e) = ws.record(&[(&r, text.as_str())]) {
                message = format!("cannot save progress: {e}");
            }
            let signature = r.generated.first().and_then(|(_, src)| signature(src));
            let checked = Checked {
                verdict: puzzles::render::verdict_lines(&r),
                report: puzzles::render::human(&r, true),
                signature,
                diagram,
                message,
                seconds: started.elapsed().as_secs_f64(),
            };
            Some(Done::One(index, checked))
        });
    }

    /// `c`: check every puzzle on a worker thread.
    fn check_all(&mut self) {
        self.stop_running();
        let ws = self.ws.clone();
        self.spawn("every puzzle".to_string(), move |cancel| {
            let mut all = Vec::new();
            for p in PUZZLES.iter() {
                if let Ok(text) = ws.read(p) {
                    let r = puzzles::check::check_file_cancellable(p, &ws.path(p).display().to_string(), &text, Some(cancel))?;
                    let _ = ws.record(&[(&r, text.as_str())]);
                    all.push((p.number, r.solved()));
                }
            }
            Some(Done::All(all))
        });
    }

    /// Run `job` on a worker thread with a fresh cancel flag; what it
    /// returns (unless cancelled, or `None`) arrives through `take_done`.
    fn spawn(&mut self, what: String, job: impl FnOnce(&gpu::Cancel) -> Option<Done> + Send + 'static) {
        let cancel = gpu::Cancel::new();
        let (tx, done) = mpsc::channel();
        let flag = cancel.clone();
        std::thread::spawn(move || {
            if let Some(d) = job(&flag) {
                if !flag.is_cancelled() {
                    let _ = tx.send(d);
                }
            }
        });
        self.running = Some(Running { cancel, done, started: Instant::now(), what });
    }

    /// Take the running check's result if it has finished; true when the
    /// screen changed.
    fn take_done(&mut self) -> bool {
        let Some(r) = &self.running else { return false };
        match r.done.try_recv() {
            Ok(d) => {
                self.running = None;
                self.apply(d);
                true
            }
            Err(mpsc::TryRecvError::Empty) => false,
            Err(mpsc::TryRecvError::Disconnected) => {
                // (Cancelled, or the worker panicked: nothing to show.)
                self.running = None;
                true
            }
        }
    }

    fn apply(&mut self, d: Done) {
        match d {
            Done::One(index, c) if index == self.index => {
                self.message = c.message.clone();
                self.result = Some(c);
                self.scroll = 0;
            }
            Done::One(..) => {}
            Done::All(all) => {
                self.all = all;
                self.view = View::AllChecked;
                self.scroll = 0;
            }
        }
    }

    /// Wait for the running check (tests).
    #[cfg(test)]
    fn wait(&mut self) {
        if let Some(r) = self.running.take() {
            if let Ok(d) = r.done.recv() {
                self.apply(d);
            }
        }
    }

    fn draw(&mut self) {
        let (cols, rows) = terminal::size().unwrap_or((100, 40));
        let lines = self.layout(cols as usize, rows as usize);
        // Each line is cleared and redrawn, all in one write: the terminal
        // never shows a blank or half-drawn screen.
        let mut frame = Vec::new();
        for (row, line) in lines.iter().enumerate() {
            let _ = queue!(frame, cursor::MoveTo(0, row as u16), terminal::Clear(terminal::ClearType::CurrentLine));
            frame.extend_from_slice(line.as_bytes());
        }
        let _ = queue!(frame, terminal::Clear(terminal::ClearType::FromCursorDown));
        let mut stdout = std::io::stdout();
        let _ = stdout.write_all(&frame);
        let _ = stdout.flush();
    }

    /// The scrollable part of the screen for the current view.
    fn body(&self, cols: usize) -> Vec<String> {
        let p = self.puzzle();
        let mut out = String::new();
        out.push_str(&puzzles::workspace::wrap(p.explanation, cols.clamp(40, 100)));
        match self.view {
            View::Hint => {
                out.push_str("\nHints:\n");
                for h in p.hints {
                    out.push_str(&format!("  - {}\n", puzzles::workspace::wrap(h, cols.clamp(40, 96)).trim_end().replace('\n', "\n    ")));
                }
            }
            View::List => {
                out.push('\n');
                out.push_str(&list_text(&self.ws));
            }
            View::AllChecked => {
                out.push_str("\nChecked every puzzle:\n");
                for (n, ok) in &self.all {
                    let q = &PUZZLES[*n as usize - 1];
                    out.push_str(&format!("  {:>2} {:<20} {}\n", n, q.slug, if *ok { "solved" } else { "not yet" }));
                }
            }
            View::Diagram => {
                out.clear();
                match self.result.as_ref().and_then(|r| r.diagram.as_ref()) {
                    Some(d) => {
                        out.push_str(&format!("Diagram of test 1 ({}):\n", p.tests[0].name));
                        out.push_str(d);
                    }
                    None if self.running.is_some() => out.push_str("Checking…\n"),
                    None => out.push_str("No diagram: the kernel does not compile yet.\n"),
                }
            }
            View::Check => {
                if let Some(r) = &self.result {
                    if let Some(sig) = &r.signature {
                        out.push_str("\nYour code runs inside:\n");
                        out.push_str(sig);
                    }
                    out.push('\n');
                    out.push_str(&r.report);
                    if let Some(d) = &r.diagram {
                        out.push_str("\nDiagram ([d] shows it alone):\n");
                        out.push_str(d);
                    }
                }
            }
        }
        out.lines().map(|l| clip(l, cols)).collect()
    }

    /// The whole screen as at most `rows` lines of at most `cols` columns:
    /// title, verdict and message always on top, the key bar at the bottom,
    /// the rest in a pane that scrolls.
    fn layout(&mut self, cols: usize, rows: usize) -> Vec<String> {
        let cols = cols.max(20);
        let rows = rows.max(8);
        let progress = self.ws.load_progress();
        let solved = PUZZLES.iter().filter(|p| self.ws.status(p, &progress) == Status::Solved).count();
        let width = cols.clamp(20, 60) - 10;
        let filled = solved * width / PUZZLES.len();
        let p = self.puzzle();
        let mut top = vec![
            format!("Metal Puzzles  [{}{}] {solved}/{} solved", "#".repeat(filled), "-".repeat(width - filled), PUZZLES.len()),
            format!("Puzzle {}: {}   [{}]   ({})", p.number, p.title, p.chapter, self.path().display()),
        ];
        if let Some(r) = &self.running {
            top.push(format!("Checking {}… {:.1} s  (saving again or `q` stops it)", r.what, r.started.elapsed().as_secs_f64()));
        }
        if let Some(r) = &self.result {
            for (i, l) in r.verdict.iter().enumerate() {
                // The first line (`Passed Tests!`/`Failed Tests.`) says how long the check took.
                top.push(if i == 0 { format!("{l}   (checked in {:.2} s)", r.seconds) } else { l.clone() });
            }
        }
        if !self.message.is_empty() {
            top.push(self.message.clone());
        }
        // (A long first reason wraps: its end says the line and thread.)
        let mut top: Vec<String> = top.iter().flat_map(|l| wrap_plain(l, cols, 3)).collect();
        top.truncate(rows - 3);
        let keys = clip("n/p puzzle  h hint  l list  d diagram  c all  r rerun  ↑↓ PgUp/Dn scroll q quit", cols);
        let body = self.body(cols);
        let pane = rows - top.len() - 2;
        let max_scroll = body.len().saturating_sub(pane);
        self.scroll = self.scroll.min(max_scroll);
        let shown = &body[self.scroll..(self.scroll + pane).min(body.len())];
        let rule = if body.len() > pane {
            format!("── lines {}–{} of {} (↑↓ to scroll) ", self.scroll + 1, self.scroll + shown.len(), body.len())
        } else {
            String::from("──")
        };
        let mut out = top;
        out.push(clip(&format!("{rule}{}", "─".repeat(cols.saturating_sub(rule.chars().count()))), cols));
        out.extend(shown.iter().cloned());
        while out.len() < rows - 1 {
            out.push(String::new());
        }
        out.push(keys);
        out
    }
}

/// Cut a line to `cols` visible columns (ANSI color codes take none),
/// marking the cut and resetting colors.
fn clip(line: &str, cols: usize) -> String {
    let mut out = String::new();
    let mut visible = 0;
    let mut chars = line.chars().peekable();
    let mut cut = false;
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            out.push(c);
            for d in chars.by_ref() {
                out.push(d);
                if d.is_ascii_alphabetic() {
                    break;
                }
            }
            continue;
        }
        if visible + 1 >= cols && chars.peek().is_some() {
            cut = true;
            break;
        }
        out.push(c);
        visible += 1;
    }
    if cut {
        out.push('…');
    }
    if line.contains('\x1b') {
        out.push_str("\x1b[0m");
    }
    out
}

/// Wrap a plain line (no color codes) at spaces into at most `max_lines`
/// lines of at most `cols` columns; the last one is clipped.
fn wrap_plain(line: &str, cols: usize, max_lines: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = line;
    while rest.chars().count() >= cols && out.len() + 1 < max_lines {
        let cut = rest.char_indices().nth(cols - 1).map(|(i, _)| i).unwrap_or(rest.len());
        let at = rest[..cut].rfind(' ').filter(|&i| i > 0).unwrap_or(cut);
        out.push(rest[..at].to_string());
        rest = rest[at..].trim_start();
    }
    out.push(clip(rest, cols));
    out
}

/// Lines a page scroll moves.
fn page() -> usize {
    terminal::size().map(|(_, r)| (r as usize).saturating_sub(8).max(1)).unwrap_or(10)
}

/// The kernel signature lines of a generated source (the `[[kernel]]` line
/// through the opening brace).
fn signature(src: &str) -> Option<String> {
    let start = src.find("[[kernel]]")?;
    let end = src[start..].find(") {")? + start + 3;
    Some(format!("{}\n    ...your code...\n}}\n", &src[start..end]))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn visible_width(l: &str) -> usize {
        let mut n = 0;
        let mut in_escape = false;
        for c in l.chars() {
            match (in_escape, c) {
                (false, '\x1b') => in_escape = true,
                (true, c) if c.is_ascii_alphabetic() => in_escape = false,
                (true, _) => {}
                (false, _) => n += 1,
            }
        }
        n
    }

    fn watch_on(puzzle: &str, body: Option<&str>, name: &str) -> Watch {
        let dir = std::env::temp_dir().join(format!("mp-watch-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let ws = Workspace::new(&dir);
        ws.init().expect("init");
        let index = PUZZLES.iter().position(|p| p.slug == puzzle).expect("puzzle");
        if let Some(b) = body {
            // (Only used with puzzles without a header: the body is the file.)
            std::fs::write(ws.path(&PUZZLES[index]), b).unwrap();
        }
        let mut w = Watch::new(ws, index);
        w.check_current();
        w.wait();
        w
    }

    #[test]
    fn the_screen_fits_and_keeps_the_verdict_and_keys() {
        // A failing starter with a big diagram (matmul) and a compile error.
        for (puzzle, body) in [("matmul", None), ("map", Some("out[thread_position_in_grid.x] = a[thread_position_in_grid.x] +;\n"))] {
            let mut w = watch_on(puzzle, body, puzzle);
            for (cols, rows) in [(80, 24), (160, 50)] {
                let lines = w.layout(cols, rows);
                assert_eq!(lines.len(), rows, "{puzzle} {cols}x{rows}");
                for l in &lines {
                    assert!(visible_width(l) <= cols, "{puzzle} {cols}x{rows}: too wide: {l}");
                }
                assert!(lines[..6].iter().any(|l| l.starts_with("Failed Tests.")), "{puzzle} {cols}x{rows}: {lines:#?}");
                if body.is_some() {
                    assert!(lines[..6].iter().any(|l| l.starts_with("01_map.metal:1:") && l.contains("error: ")), "{lines:#?}");
                }
                assert!(lines[rows - 1].contains("q quit") || lines[rows - 1].ends_with('…'), "{lines:#?}");
            }
            // Scrolling moves the pane, never the verdict; it stops at the end.
            let first = w.layout(80, 24);
            w.scroll = usize::MAX;
            let last = w.layout(80, 24);
            assert_eq!(first[2], last[2]);
            assert!(last.iter().any(|l| l.contains("── lines")), "{last:#?}");
            let _ = std::fs::remove_dir_all(&w.ws.dir);
        }
    }

    #[test]
    fn long_top_lines_wrap_at_spaces() {
        let l = "out-of-bounds: line 2: out-of-bounds read of `b`: 4 bytes at byte offset 16 (thread (4, 0, 0) in the grid)";
        let w = wrap_plain(l, 40, 3);
        assert!(w.len() <= 3 && w.iter().all(|x| x.chars().count() <= 40), "{w:#?}");
        assert_eq!(w.join(" ").replace('…', ""), l[..w.join(" ").replace('…', "").len()]);
        assert_eq!(wrap_plain("short", 40, 3), vec!["short".to_string()]);
        assert!(wrap_plain(&"x".repeat(200), 40, 2).iter().all(|x| x.chars().count() <= 40));
    }

    #[test]
    fn clip_counts_visible_columns_only() {
        let colored = "\x1b[31mred text here\x1b[0m";
        let c = clip(colored, 5);
        assert_eq!(visible_width(&c), 5);
        assert!(c.ends_with("\x1b[0m"));
        assert_eq!(clip("short", 80), "short");
    }
}
