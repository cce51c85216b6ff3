//! Watch mode: the puzzle book as a live screen, like rustlings. Shows the
//! current puzzle and its latest check; re-checks on every save. Its own
//! list screen (arrows and Enter) jumps to any puzzle; hints come one at a
//! time; every line wraps to the terminal, none is cut off.

use crate::book::{invocation, list_line, next_unsolved, progress_bar};
use crate::EXIT_OK;
use crossterm::event::{self, Event, KeyCode, KeyEventKind, KeyModifiers};
use crossterm::{cursor, execute, queue, terminal};
use puzzles::style::{paint, wrap_line, Tone};
use puzzles::workspace::{Status, Workspace};
use puzzles::{Puzzle, PUZZLES};
use std::io::Write;
use std::path::PathBuf;
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime};

/// What the lower part of the screen shows.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum View {
    Check,
    Hint,
    /// The list of puzzles, a screen of its own.
    List,
    /// The diagram of one test (by index) alone.
    Diagram(usize),
}

struct Watch {
    ws: Workspace,
    index: usize,
    view: View,
    /// The latest finished check of the current puzzle.
    result: Option<Checked>,
    /// The current file's modification time and size when last checked
    /// (the polling fallback for file systems without change events).
    stamp: Option<(SystemTime, u64)>,
    /// Every puzzle file's and the progress file's stamps when last drawn:
    /// a change (another puzzle edited, a `check` in another terminal)
    /// redraws the progress.
    ws_stamp: Vec<Option<(SystemTime, u64)>>,
    message: String,
    /// First line of the scrollable pane shown.
    scroll: usize,
    /// The check running on a worker thread, if any.
    running: Option<Running>,
    /// A diagram being drawn on a worker thread, if any.
    drawing: Option<Running>,
    /// Hints revealed so far, per puzzle.
    hints_shown: Vec<usize>,
    /// The selected line of the list screen (a puzzle index).
    cursor: usize,
    color: bool,
}

/// What the screen keeps of a finished check: plain text, made on the
/// worker thread that ran it.
struct Checked {
    /// `Passed Tests!`/`Failed Tests.` and the first reason.
    verdict: Vec<String>,
    /// The full report.
    report: String,
    /// The kernel signature the learner's body runs inside.
    signature: Option<String>,
    /// Compact terminal diagrams, by test (the first is drawn with the
    /// check, the others when asked for): the text, or why there is none.
    diagrams: Vec<Option<Result<String, String>>>,
    message: String,
    /// Wall-clock time of the check (tests, explanations and diagram).
    seconds: f64,
}

/// A job on a worker thread: `cancel` stops it at once (a new save,
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
    /// `c`: every puzzle was checked; how many are solved.
    All(usize),
    /// The diagram of (puzzle, test).
    Diagram(usize, usize, Result<String, String>),
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
    let index = ws.statuses().iter().position(|s| *s != Status::Solved).unwrap_or(0);
    let mut w = Watch::new(ws, index, crate::color::screen());
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
                if ctrl_c || !w.key(k.code) {
                    break;
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
        } else if (w.running.is_some() || w.drawing.is_some()) && last_draw.elapsed() > Duration::from_millis(200) {
            // The indicator counts the seconds.
            w.draw();
            last_draw = Instant::now();
        }
        // A save: an OS event, or (every 250 ms) a changed modification time.
        let mut changed = false;
        while rx.try_recv().is_ok() {
            changed = true;
        }
        if changed || last_poll.elapsed() > Duration::from_millis(250) {
            last_poll = Instant::now();
            if w.file_stamp() != w.stamp {
                if w.view != View::List {
                    w.view = View::Check;
                }
                w.check_current();
                w.draw();
                last_draw = Instant::now();
            } else if w.workspace_stamp() != w.ws_stamp {
                // Another file changed: the progress shown must stay true.
                w.draw();
                last_draw = Instant::now();
            }
        }
    }
    // Quit at once: a running check is told to stop and not waited for.
    w.stop_running();
    if let Some(d) = w.drawing.take() {
        d.cancel.cancel();
    }
    EXIT_OK
}

/// Lines a page scroll moves.
fn page() -> usize {
    terminal::size().map(|(_, r)| (r as usize).saturating_sub(8).max(1)).unwrap_or(10)
}

impl Watch {
    /// The screen on puzzle `index`, nothing checked yet.
    fn new(ws: Workspace, index: usize, color: bool) -> Watch {
        Watch {
            ws,
            index,
            view: View::Check,
            result: None,
            stamp: None,
            ws_stamp: Vec::new(),
            message: String::new(),
            scroll: 0,
            running: None,
            drawing: None,
            hints_shown: vec![0; PUZZLES.len()],
            cursor: index,
            color,
        }
    }

    /// Handle a key; false when it quits.
    fn key(&mut self, code: KeyCode) -> bool {
        if self.view == View::List {
            match code {
                KeyCode::Char('q') => return false,
                KeyCode::Esc | KeyCode::Char('l') => self.set_view(View::Check),
                KeyCode::Up | KeyCode::Char('k') => self.cursor = self.cursor.saturating_sub(1),
                KeyCode::Down | KeyCode::Char('j') => self.cursor = (self.cursor + 1).min(PUZZLES.len() - 1),
                KeyCode::PageUp => self.cursor = self.cursor.saturating_sub(page()),
                KeyCode::PageDown | KeyCode::Char(' ') => self.cursor = (self.cursor + page()).min(PUZZLES.len() - 1),
                KeyCode::Home => self.cursor = 0,
                KeyCode::End => self.cursor = PUZZLES.len() - 1,
                KeyCode::Char('n') => {
                    if let Some(k) = next_unsolved(&self.ws.statuses(), self.cursor) {
                        self.cursor = k;
                    }
                }
                KeyCode::Enter => self.open(self.cursor),
                KeyCode::Char('c') => self.check_all(),
                _ => {}
            }
            return true;
        }
        match code {
            KeyCode::Char('q') => return false,
            KeyCode::Esc if self.view == View::Check => return false,
            KeyCode::Esc => self.set_view(View::Check),
            KeyCode::Char('n') => self.next_unsolved(),
            KeyCode::Right => self.open((self.index + 1) % PUZZLES.len()),
            KeyCode::Char('p') | KeyCode::Left => self.open((self.index + PUZZLES.len() - 1) % PUZZLES.len()),
            KeyCode::Char('h') => self.hint_key(),
            KeyCode::Char('l') => {
                self.cursor = self.index;
                self.set_view(View::List);
            }
            KeyCode::Char('d') => self.diagram_key(),
            KeyCode::Up | KeyCode::Char('k') => self.scroll = self.scroll.saturating_sub(1),
            KeyCode::Down | KeyCode::Char('j') => self.scroll += 1,
            KeyCode::PageUp => self.scroll = self.scroll.saturating_sub(page()),
            KeyCode::PageDown | KeyCode::Char(' ') => self.scroll += page(),
            KeyCode::Home => self.scroll = 0,
            KeyCode::End => self.scroll = usize::MAX,
            KeyCode::Char('c') => self.check_all(),
            KeyCode::Char('r') => {
                self.set_view(View::Check);
                self.check_current();
            }
            _ => {}
        }
        true
    }

    fn set_view(&mut self, v: View) {
        self.view = v;
        self.scroll = 0;
    }

    /// `h`: the hints view with one more hint each press; once every hint
    /// is shown, `h` closes it.
    fn hint_key(&mut self) {
        let n = self.puzzle().hints.len();
        let shown = &mut self.hints_shown[self.index];
        if self.view != View::Hint {
            *shown = (*shown).max(1).min(n);
            self.set_view(View::Hint);
        } else if *shown < n {
            *shown += 1;
        } else {
            self.set_view(View::Check);
        }
    }

    /// `d`: the diagram of test 1, then of each next test, then back.
    fn diagram_key(&mut self) {
        let tests = self.puzzle().tests.len();
        let next = match self.view {
            View::Diagram(t) if t + 1 < tests => Some(t + 1),
            View::Diagram(_) => None,
            _ => Some(0),
        };
        match next {
            Some(t) => {
                self.set_view(View::Diagram(t));
                self.draw_diagram(t);
            }
            None => self.set_view(View::Check),
        }
    }

    /// `n`: the next puzzle that is not solved.
    fn next_unsolved(&mut self) {
        match next_unsolved(&self.ws.statuses(), self.index) {
            Some(k) => self.open(k),
            None => self.message = "Every puzzle is solved: the book is finished.".into(),
        }
    }

    fn puzzle(&self) -> &'static Puzzle {
        &PUZZLES[self.index]
    }

    fn path(&self) -> PathBuf {
        self.ws.path(self.puzzle())
    }

    fn file_stamp(&self) -> Option<(SystemTime, u64)> {
        stamp_of(&self.path())
    }

    fn workspace_stamp(&self) -> Vec<Option<(SystemTime, u64)>> {
        let mut v: Vec<_> = PUZZLES.iter().map(|p| stamp_of(&self.ws.path(p))).collect();
        v.push(stamp_of(&self.ws.dir.join(puzzles::workspace::PROGRESS_FILE)));
        v
    }

    /// Go to puzzle `k` and check it.
    fn open(&mut self, k: usize) {
        self.index = k;
        self.cursor = k;
        self.set_view(View::Check);
        // (The last result belongs to the other puzzle.)
        self.result = None;
        self.message.clear();
        if let Some(d) = self.drawing.take() {
            d.cancel.cancel();
        }
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
                self.message = format!("cannot read `{}`: {e} ({})", self.path().display(), e.help(&invocation("init", &self.ws.dir)));
                return;
            }
        };
        let (ws, index, file) = (self.ws.clone(), self.index, self.path().display().to_string());
        let what = self.path().file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default();
        let width = terminal::size().map(|(c, _)| c as usize).unwrap_or(100);
        let color = self.color;
        self.spawn(false, what, move |cancel| {
            let started = Instant::now();
            let r = puzzles::check::check_file_cancellable(p, &file, &text, Some(cancel))?;
            let diagram = puzzles::show::trace_test_cancellable(p, &file, &text, 0, None, Some(cancel))
                .map(|s| diagram::render_terminal(&s.spec, &s.trace, color, width));
            if cancel.is_cancelled() {
                return None;
            }
            let mut message = String::new();
            if let Err(e) = ws.record(&[(&r, text.as_str())]) {
                message = format!("cannot save progress: {e}");
            } else if r.solved() {
                message = solved_message(p, &ws.statuses());
            } else if r.passed {
                message = "Tests pass, but a target is missed: not solved yet (see below).".to_string();
            }
            let signature = r.generated.first().and_then(|(_, src)| puzzles::beginner::signature_of(src));
            let mut diagrams = vec![None; p.tests.len().max(1)];
            diagrams[0] = Some(diagram);
            let checked = Checked {
                verdict: puzzles::render::verdict_lines(&r, color),
                report: puzzles::render::human(&r, color),
                signature,
                diagrams,
                message,
                seconds: started.elapsed().as_secs_f64(),
            };
            Some(Done::One(index, checked))
        });
    }

    /// The diagram of test `t` of the current puzzle, drawn on a worker
    /// thread unless it is there already.
    fn draw_diagram(&mut self, t: usize) {
        let have = self.result.as_ref().and_then(|r| r.diagrams.get(t)).is_some_and(Option::is_some);
        if have || self.result.is_none() {
            return;
        }
        if let Some(d) = self.drawing.take() {
            d.cancel.cancel();
        }
        let p = self.puzzle();
        let (index, file) = (self.index, self.path().display().to_string());
        let Ok(text) = self.ws.read(p) else { return };
        let width = terminal::size().map(|(c, _)| c as usize).unwrap_or(100);
        let color = self.color;
        self.spawn(true, format!("the diagram of test {}", t + 1), move |cancel| {
            let d = puzzles::show::trace_test_cancellable(p, &file, &text, t, None, Some(cancel))
                .map(|s| diagram::render_terminal(&s.spec, &s.trace, color, width));
            Some(Done::Diagram(index, t, d))
        });
    }

    /// `c`: check every puzzle on a worker thread, then show the list.
    fn check_all(&mut self) {
        self.stop_running();
        let ws = self.ws.clone();
        self.spawn(false, "every puzzle".to_string(), move |cancel| {
            let mut solved = 0;
            for p in PUZZLES.iter() {
                if let Ok(text) = ws.read(p) {
                    let r = puzzles::check::check_file_cancellable(p, &ws.path(p).display().to_string(), &text, Some(cancel))?;
                    let _ = ws.record(&[(&r, text.as_str())]);
                    solved += usize::from(r.solved());
                }
            }
            Some(Done::All(solved))
        });
    }

    /// Run `job` on a worker thread with a fresh cancel flag; what it
    /// returns (unless cancelled, or `None`) arrives through `take_done`.
    /// `diagram`: a drawing job (it runs beside a check).
    fn spawn(&mut self, diagram: bool, what: String, job: impl FnOnce(&gpu::Cancel) -> Option<Done> + Send + 'static) {
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
        let job = Some(Running { cancel, done, started: Instant::now(), what });
        if diagram {
            self.drawing = job;
        } else {
            self.running = job;
        }
    }

    /// Take finished jobs' results; true when the screen changed.
    fn take_done(&mut self) -> bool {
        let mut changed = false;
        for diagram in [false, true] {
            let slot = if diagram { &mut self.drawing } else { &mut self.running };
            let Some(r) = slot else { continue };
            match r.done.try_recv() {
                Ok(d) => {
                    *slot = None;
                    self.apply(d);
                    changed = true;
                }
                Err(mpsc::TryRecvError::Empty) => {}
                Err(mpsc::TryRecvError::Disconnected) => {
                    // (Cancelled, or the worker panicked: nothing to show.)
                    *slot = None;
                    changed = true;
                }
            }
        }
        changed
    }

    fn apply(&mut self, d: Done) {
        match d {
            Done::One(index, c) if index == self.index => {
                self.message = c.message.clone();
                self.result = Some(c);
                self.scroll = 0;
                if let View::Diagram(t) = self.view {
                    self.draw_diagram(t);
                }
            }
            Done::One(..) => {}
            Done::All(solved) => {
                self.message = format!("Checked every puzzle: {solved}/{} solved.", PUZZLES.len());
                self.cursor = self.index;
                self.set_view(View::List);
            }
            Done::Diagram(index, t, d) if index == self.index => {
                if let Some(slot) = self.result.as_mut().and_then(|r| r.diagrams.get_mut(t)) {
                    *slot = Some(d);
                }
            }
            Done::Diagram(..) => {}
        }
    }

    /// Wait for the running jobs (tests).
    #[cfg(test)]
    fn wait(&mut self) {
        for job in [self.running.take(), self.drawing.take()].into_iter().flatten() {
            if let Ok(d) = job.done.recv() {
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

    /// Whether the current file still holds only the starter's code.
    fn untouched(&self) -> bool {
        self.ws.read(self.puzzle()).is_ok_and(|t| puzzles::workspace::is_untouched(self.puzzle(), &t))
    }

    /// The scrollable part of the screen for the current view, as text
    /// (wrapped to the terminal by `layout`).
    fn body(&self, cols: usize) -> String {
        let p = self.puzzle();
        let width = cols.clamp(20, 100);
        let mut out = String::new();
        match self.view {
            View::Hint => {
                // The hints first (what `h` was pressed for), then the goal
                // and the puzzle's description.
                let n = p.hints.len();
                let shown = self.hints_shown[self.index].min(n);
                out.push_str(&paint(self.color, Tone::Hint, puzzles::guide::hints(p, shown, width).trim_end()));
                out.push('\n');
                out.push_str(&if shown < n {
                    format!("(press h for hint {} of {n})\n", shown + 1)
                } else {
                    format!("(all {n} hints shown; h closes this view)\n")
                });
                if let Some(g) = puzzles::guide::goal(p, width) {
                    out.push('\n');
                    out.push_str(&g);
                }
                out.push('\n');
                out.push_str(&puzzles::guide::about(p, width));
            }
            View::List => {}
            View::Diagram(t) => {
                let tests = p.tests.len();
                let next = if t + 1 < tests { format!("d: test {}", t + 2) } else { "d: back".to_string() };
                out.push_str(&format!("Diagram of test {} of {tests} ({})   [{next}]\n", t + 1, p.tests[t].name));
                match self.result.as_ref().and_then(|r| r.diagrams.get(t)).and_then(|d| d.as_ref()) {
                    Some(Ok(d)) => out.push_str(d),
                    Some(Err(e)) => {
                        out.push_str("No diagram: the kernel does not run.\n");
                        out.push_str(e);
                    }
                    None => out.push_str("Drawing…\n"),
                }
            }
            View::Check => {
                if self.untouched() {
                    out.push_str(&format!(
                        "Open `{}` in your editor and write your kernel below its comments; this screen checks it again every time you save.\n\n",
                        self.path().display()
                    ));
                }
                out.push_str(&puzzles::workspace::wrap(p.explanation, width));
                if self.untouched() {
                    out.push('\n');
                    out.push_str(&puzzles::guide::size_hint(p));
                    out.push('\n');
                    if let Some(g) = puzzles::guide::goal(p, width) {
                        out.push('\n');
                        out.push_str(&g);
                    }
                }
                if let Some(r) = &self.result {
                    if let Some(sig) = &r.signature {
                        out.push_str("\nYour code runs inside:\n");
                        out.push_str(sig);
                    }
                    out.push('\n');
                    out.push_str(&r.report);
                    if let Some(Some(Ok(d))) = r.diagrams.first() {
                        out.push_str("\nDiagram of test 1 ([d] shows it alone, then the other tests):\n");
                        out.push_str(d);
                    }
                }
            }
        }
        out
    }

    /// The list screen's lines: chapters and puzzles, the selected one marked.
    fn list_lines(&self, cols: usize) -> (Vec<String>, usize) {
        let statuses = self.ws.statuses();
        let with_file = cols >= 90;
        let mut lines = Vec::new();
        let mut at = 0;
        for (k, p) in PUZZLES.iter().enumerate() {
            if k == 0 || PUZZLES[k - 1].chapter != p.chapter {
                let done = PUZZLES.iter().zip(&statuses).filter(|(q, s)| q.chapter == p.chapter && **s == Status::Solved).count();
                let of = PUZZLES.iter().filter(|q| q.chapter == p.chapter).count();
                lines.push(paint(self.color, Tone::Strong, &format!("{} ({done}/{of})", p.chapter)));
            }
            if k == self.cursor {
                at = lines.len();
            }
            let pointer = if k == self.cursor { "▶ " } else { "  " };
            let line = format!("{pointer}{}", list_line(k, statuses[k], self.color, with_file));
            lines.push(if k == self.cursor && self.color { format!("\x1b[7m{line}\x1b[0m") } else { line });
        }
        (lines, at)
    }

    /// The whole screen as at most `rows` lines of at most `cols` columns:
    /// title, verdict and message always on top, the key bar at the bottom,
    /// the rest in a pane that scrolls.
    fn layout(&mut self, cols: usize, rows: usize) -> Vec<String> {
        let cols = cols.max(20);
        let rows = rows.max(8);
        self.ws_stamp = self.workspace_stamp();
        let statuses = self.ws.statuses();
        let solved = statuses.iter().filter(|s| **s == Status::Solved).count();
        let p = self.puzzle();
        let color = self.color;
        let mut top = vec![format!(
            "{}  {} {solved}/{} solved",
            paint(color, Tone::Strong, "Metal Puzzles"),
            progress_bar(solved, PUZZLES.len(), cols.clamp(20, 60) - 10),
            PUZZLES.len()
        )];
        if self.view == View::List {
            top.push("Choose a puzzle: ↑↓ move, Enter opens it, n jumps to the next unsolved, Esc goes back.".to_string());
        } else {
            let status = crate::book::status_label(statuses[self.index], color);
            top.push(format!("Puzzle {}: {}   [{}]   ({})   {status}", p.number, p.title, p.chapter, self.path().display()));
        }
        if let Some(job) = &self.running {
            top.push(format!("Checking {}… {:.1} s  (saving again or `q` stops it)", job.what, job.started.elapsed().as_secs_f64()));
        }
        if let Some(job) = &self.drawing {
            top.push(format!("Drawing {}… {:.1} s", job.what, job.started.elapsed().as_secs_f64()));
        }
        if let (Some(r), true) = (&self.result, self.view != View::List) {
            for (i, l) in r.verdict.iter().enumerate() {
                // The first line (`Passed Tests!`/`Failed Tests.`) says how long the check took.
                top.push(if i == 0 { format!("{l}   (checked in {:.2} s)", r.seconds) } else { l.clone() });
            }
        }
        if !self.message.is_empty() {
            top.push(paint(color, Tone::Hint, &self.message));
        } else if self.view != View::List && self.untouched() {
            top.push(format!("Open `{}` in your editor; this screen checks it again on every save.", self.path().display()));
        }
        // Long top lines wrap; when the top would take more than half the
        // screen it is cut there, and the pane holds the whole text.
        let mut top: Vec<String> = top.iter().flat_map(|l| wrap_line(l, cols, 2)).collect();
        let max_top = (rows / 2).max(3);
        if top.len() > max_top {
            top.truncate(max_top - 1);
            top.push(paint(color, Tone::Dim, "(more in the pane below)"));
        }
        let keys = match self.view {
            View::List => "↑↓ move  Enter open  n next unsolved  c check all  Esc back  q quit",
            _ => "n next  p prev  h hint  l list  d diagram  c all  r rerun  ↑↓ scroll  q quit",
        };
        let keys: Vec<String> = wrap_line(keys, cols, 0);
        let pane = rows.saturating_sub(top.len() + 1 + keys.len()).max(1);
        let (body, focus) = match self.view {
            View::List => self.list_lines(cols),
            _ => (self.body(cols).lines().flat_map(|l| wrap_line(l, cols, hang_of(l))).collect(), usize::MAX),
        };
        let max_scroll = body.len().saturating_sub(pane);
        if focus != usize::MAX {
            // The list follows the selection.
            if focus < self.scroll {
                self.scroll = focus.saturating_sub(1);
            } else if focus >= self.scroll + pane {
                self.scroll = focus + 1 - pane;
            }
        }
        self.scroll = self.scroll.min(max_scroll);
        let shown = &body[self.scroll..(self.scroll + pane).min(body.len())];
        let rule = if body.len() > pane {
            format!("── lines {}–{} of {} (↑↓ to scroll) ", self.scroll + 1, self.scroll + shown.len(), body.len())
        } else {
            String::from("──")
        };
        let mut out = top;
        let rule = format!("{rule}{}", "─".repeat(cols.saturating_sub(rule.chars().count())));
        out.push(rule.chars().take(cols).collect());
        out.extend(shown.iter().cloned());
        while out.len() + keys.len() < rows {
            out.push(String::new());
        }
        out.extend(keys);
        out.truncate(rows);
        out
    }
}

fn stamp_of(path: &std::path::Path) -> Option<(SystemTime, u64)> {
    let m = std::fs::metadata(path).ok()?;
    Some((m.modified().ok()?, m.len()))
}

/// How far a wrapped line's continuations are indented: under the text of
/// a `= help:` or `= note:` line, two more for anything else.
fn hang_of(line: &str) -> usize {
    let plain = puzzles::style::strip(line);
    let rest = plain.trim_start();
    if rest.starts_with("= ") {
        rest.find(": ").map(|i| i + 2).unwrap_or(2)
    } else {
        2
    }
}

/// What the screen says when a check solves a puzzle: where to go next,
/// and that the book is finished only when every puzzle is solved.
fn solved_message(p: &Puzzle, statuses: &[Status]) -> String {
    let solved = statuses.iter().filter(|s| **s == Status::Solved).count();
    let index = p.number as usize - 1;
    let Some(next) = next_unsolved(statuses, index) else {
        return format!("Puzzle {} solved! Every puzzle is solved: the book is finished.", p.number);
    };
    let q = &PUZZLES[next];
    let chapter_done = PUZZLES.iter().zip(statuses).filter(|(x, _)| x.chapter == p.chapter).all(|(_, s)| *s == Status::Solved);
    let head = if chapter_done {
        format!("Puzzle {} solved, and with it the chapter {}!", p.number, p.chapter)
    } else {
        format!("Puzzle {} solved!", p.number)
    };
    format!("{head} {solved}/{} solved; press n for the next unsolved one, puzzle {}: {}.", PUZZLES.len(), q.number, q.title)
}

#[cfg(test)]
mod tests {
    use super::*;
    use puzzles::style::visible_width;

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
        let mut w = Watch::new(ws, index, false);
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
                    assert!(!l.contains('…') || l.contains("Drawing…"), "{puzzle} {cols}x{rows}: cut off: {l}");
                }
                assert!(lines[..6].iter().any(|l| l.starts_with("Failed Tests.")), "{puzzle} {cols}x{rows}: {lines:#?}");
                if body.is_some() {
                    assert!(lines[..6].iter().any(|l| l.starts_with("01_map.metal:1:") && l.contains("error: ")), "{lines:#?}");
                }
                assert!(lines[rows - 1].contains("q quit"), "{lines:#?}");
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
    fn hints_come_one_at_a_time() {
        let mut w = watch_on("simd_scan", None, "hints");
        let n = w.puzzle().hints.len();
        assert_eq!(n, 3);
        w.key(KeyCode::Char('h'));
        let text = w.body(80);
        assert!(text.contains("Hint 1 of 3") && !text.contains("Hint 2 of 3") && text.contains("press h for hint 2 of 3"), "{text}");
        w.key(KeyCode::Char('h'));
        w.key(KeyCode::Char('h'));
        let text = w.body(80);
        assert!(text.contains("Hint 3 of 3") && text.contains("all 3 hints shown"), "{text}");
        w.key(KeyCode::Char('h'));
        assert_eq!(w.view, View::Check);
        let _ = std::fs::remove_dir_all(&w.ws.dir);
    }

    #[test]
    fn the_list_is_a_screen_to_jump_from() {
        let mut w = watch_on("map", None, "list");
        w.key(KeyCode::Char('l'));
        assert_eq!(w.view, View::List);
        let lines = w.layout(80, 24);
        assert!(lines.iter().any(|l| l.starts_with("▶ ") && l.contains("Map")), "{lines:#?}");
        for _ in 0..21 {
            w.key(KeyCode::Down);
        }
        let lines = w.layout(80, 24);
        assert!(lines.iter().any(|l| l.starts_with("▶ ") && l.contains("22") && l.contains("RMS Norm")), "{lines:#?}");
        assert!(lines.iter().all(|l| visible_width(l) <= 80), "{lines:#?}");
        w.key(KeyCode::Enter);
        assert_eq!((w.view, w.index), (View::Check, 21));
        w.wait();
        let _ = std::fs::remove_dir_all(&w.ws.dir);
    }

    #[test]
    fn the_book_is_finished_only_when_every_puzzle_is_solved() {
        let last = &PUZZLES[PUZZLES.len() - 1];
        let mut statuses = vec![Status::Solved; PUZZLES.len()];
        statuses[3] = Status::Edited;
        let m = solved_message(last, &statuses);
        assert!(!m.contains("finished") && m.contains("puzzle 4: Map 2D"), "{m}");
        statuses[3] = Status::Solved;
        assert!(solved_message(&PUZZLES[3], &statuses).contains("the book is finished"));
    }

    #[test]
    fn wrapped_help_lines_hang_under_their_text() {
        assert_eq!(hang_of("   = help: add a barrier"), 8);
        assert_eq!(hang_of("  out[0] = 1"), 2);
    }
}
