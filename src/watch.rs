//! Watch mode: the puzzle book as a live screen, like rustlings. Shows the
//! current puzzle and its latest check; re-checks on every save.

use crate::book::list_text;
use crate::EXIT_OK;
use crossterm::event::{self, Event, KeyCode, KeyEventKind, KeyModifiers};
use crossterm::{cursor, execute, terminal};
use puzzles::workspace::{Status, Workspace};
use puzzles::{CheckResult, Puzzle, PUZZLES};
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
}

struct Watch {
    ws: Workspace,
    index: usize,
    view: View,
    result: Option<CheckResult>,
    all: Vec<(u32, bool)>,
    /// The current file's modification time and size when last checked
    /// (the polling fallback for file systems without change events).
    stamp: Option<(SystemTime, u64)>,
    message: String,
    /// Compact terminal diagram of the current puzzle's first test.
    diagram: Option<String>,
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
    let mut w = Watch { ws, index, view: View::Check, result: None, all: Vec::new(), stamp: None, message: String::new(), diagram: None };
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
                    KeyCode::Char('h') => w.view = if w.view == View::Hint { View::Check } else { View::Hint },
                    KeyCode::Char('l') => w.view = if w.view == View::List { View::Check } else { View::List },
                    KeyCode::Char('c') => w.check_all(),
                    KeyCode::Char('r') => {
                        w.view = View::Check;
                        w.check_current();
                    }
                    _ => {}
                }
                w.draw();
            }
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
        }
    }
    EXIT_OK
}

impl Watch {
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

    fn go(&mut self, delta: isize) {
        let n = PUZZLES.len() as isize;
        self.index = ((self.index as isize + delta).rem_euclid(n)) as usize;
        self.view = View::Check;
        self.check_current();
    }

    fn check_current(&mut self) {
        let p = self.puzzle();
        self.stamp = self.file_stamp();
        match self.ws.read(p) {
            Ok(text) => {
                let r = puzzles::check_file(p, &self.path().display().to_string(), &text);
                if let Err(e) = self.ws.record(&[(&r, text.as_str())]) {
                    self.message = format!("cannot save progress: {e}");
                }
                if r.solved() {
                    self.message = if p.number as usize == PUZZLES.len() {
                        format!("Puzzle {} solved! That was the last one: the book is finished.", p.number)
                    } else {
                        format!("Puzzle {} solved! Press `n` for the next one.", p.number)
                    };
                } else if r.passed {
                    self.message = "Tests pass, but a target is missed: not solved yet (see below).".to_string();
                } else {
                    self.message.clear();
                }
                let width = terminal::size().map(|(c, _)| c as usize).unwrap_or(100);
                self.diagram = puzzles::show::trace_test(p, &self.path().display().to_string(), &text, 0)
                    .ok()
                    .map(|s| diagram::render_terminal(&s.spec, &s.trace, true, width));
                self.result = Some(r);
            }
            Err(e) => {
                self.result = None;
                self.message = format!(
                    "cannot read `{}`: {e} (run `{}` to restore it)",
                    self.path().display(),
                    crate::book::invocation("init", &self.ws.dir)
                );
            }
        }
    }

    fn check_all(&mut self) {
        let mut all = Vec::new();
        for p in PUZZLES.iter() {
            if let Ok(text) = self.ws.read(p) {
                let r = puzzles::check_file(p, &self.ws.path(p).display().to_string(), &text);
                let _ = self.ws.record(&[(&r, text.as_str())]);
                all.push((p.number, r.solved()));
            }
        }
        self.all = all;
        self.view = View::AllChecked;
    }

    fn draw(&self) {
        let mut out = String::new();
        let (cols, _rows) = terminal::size().unwrap_or((100, 40));
        let progress = self.ws.load_progress();
        let solved = PUZZLES.iter().filter(|p| self.ws.status(p, &progress) == Status::Solved).count();
        let width = (cols as usize).clamp(20, 60) - 10;
        let filled = solved * width / PUZZLES.len();
        out.push_str(&format!("Metal Puzzles  [{}{}] {solved}/{}\n", "#".repeat(filled), "-".repeat(width - filled), PUZZLES.len()));
        let p = self.puzzle();
        out.push_str(&format!("\nPuzzle {}: {}   ({})\n\n", p.number, p.title, self.path().display()));
        out.push_str(&puzzles::workspace::wrap(p.explanation, (cols as usize).clamp(40, 100)));
        out.push('\n');
        match self.view {
            View::Hint => {
                out.push_str("\nHints:\n");
                for h in p.hints {
                    out.push_str(&format!(
                        "  - {}\n",
                        puzzles::workspace::wrap(h, (cols as usize).clamp(40, 96)).trim_end().replace('\n', "\n    ")
                    ));
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
            View::Check => {
                if let Some(r) = &self.result {
                    if let Some((_, src)) = r.generated.first() {
                        if let Some(sig) = signature(src) {
                            out.push_str("\nYour code runs inside:\n");
                            out.push_str(&sig);
                        }
                    }
                    out.push('\n');
                    out.push_str(&puzzles::render::human(r, true));
                    if let Some(d) = &self.diagram {
                        out.push('\n');
                        out.push_str(d);
                    }
                }
            }
        }
        if !self.message.is_empty() {
            out.push_str(&format!("\n{}\n", self.message));
        }
        out.push_str("\n[n] next  [p] previous  [h] hint  [l] list  [c] check all  [r] re-run  [q] quit   (saving the file re-checks)\n");
        let mut stdout = std::io::stdout();
        let _ = execute!(stdout, cursor::MoveTo(0, 0), terminal::Clear(terminal::ClearType::All));
        // Raw mode needs explicit carriage returns.
        let _ = stdout.write_all(out.replace('\n', "\r\n").as_bytes());
        let _ = stdout.flush();
    }
}

/// The kernel signature lines of a generated source (the `[[kernel]]` line
/// through the opening brace).
fn signature(src: &str) -> Option<String> {
    let start = src.find("[[kernel]]")?;
    let end = src[start..].find(") {")? + start + 3;
    Some(format!("{}\n    ...your code...\n}}\n", &src[start..end]))
}
