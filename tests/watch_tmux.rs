//! Watch mode end to end: the real binary in a real terminal (tmux), driven
//! with send-keys and read with capture-pane, at 80x24 and 160x50.
//!
//! Timeouts here are generous upper bounds for a loaded machine, never
//! measurements: each test polls the screen until it shows what it must.

#[path = "../crates/puzzles/tests/common/mod.rs"]
mod common;

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

/// Longest wait for a check of a correct or plainly wrong kernel.
const CHECK_TIMEOUT: Duration = Duration::from_secs(60);
/// How long a never-ending loop may take to show on screen. The program
/// reports it in about 0.2 s (release) to 2 s (debug build on a loaded
/// machine); the bound is generous so that a busy CI machine cannot make the
/// test flaky, and the measured time is printed for the record.
const RUNAWAY_TIMEOUT: Duration = Duration::from_secs(20);

/// One tmux server (its own socket, so tests run in parallel) with one
/// session running the book; killed when dropped.
struct Screen {
    socket: String,
    root: PathBuf,
}

impl Screen {
    /// Start `metal-puzzles` (no sub-command: the live screen) in a fresh
    /// directory, in a `cols`x`rows` terminal.
    fn start(name: &str, cols: u16, rows: u16) -> Screen {
        Screen::start_with(name, cols, rows, &[])
    }

    /// [`Screen::start`] with environment variables set for the program.
    fn start_with(name: &str, cols: u16, rows: u16, env: &[(&str, &str)]) -> Screen {
        let socket = format!("mp-{name}-{}", std::process::id());
        let root = std::env::temp_dir().join(format!("mp-tmux-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).unwrap();
        // No status line: the program gets the whole window.
        let conf = root.join("tmux.conf");
        std::fs::write(&conf, "set -g status off\n").unwrap();
        let screen = Screen { socket, root };
        let bin = env!("CARGO_BIN_EXE_metal-puzzles");
        let ok = Command::new("tmux")
            .args(["-L", &screen.socket, "-f"])
            .arg(&conf)
            .args(["new-session", "-d", "-s", "book", "-x", &cols.to_string(), "-y", &rows.to_string(), "-c"])
            .arg(&screen.root)
            .arg("env")
            .args(env.iter().map(|(k, v)| format!("{k}={v}")))
            .arg(bin)
            .env_remove("VERBOSE")
            .status()
            .expect("tmux runs (install it: apt-get install tmux)")
            .success();
        assert!(ok, "tmux new-session failed");
        let size = screen.tmux(&["display-message", "-p", "-t", "book", "#{window_width}x#{window_height}"]);
        assert_eq!(size.trim(), format!("{cols}x{rows}"));
        screen
    }

    fn tmux(&self, args: &[&str]) -> String {
        let o = Command::new("tmux").args(["-L", &self.socket]).args(args).output().expect("tmux runs");
        String::from_utf8_lossy(&o.stdout).into_owned()
    }

    fn capture(&self) -> String {
        self.tmux(&["capture-pane", "-p", "-t", "book"])
    }

    /// The screen with its colours, as escape sequences.
    fn capture_colors(&self) -> String {
        self.tmux(&["capture-pane", "-p", "-e", "-t", "book"])
    }

    /// Every line of the pane, scrolled through from the top a page at a
    /// time (the top lines and key bar once per screen).
    fn whole_pane(&self) -> String {
        self.keys("Home");
        std::thread::sleep(Duration::from_millis(300));
        let mut all = String::new();
        for _ in 0..12 {
            let s = self.capture();
            all.push_str(&s);
            let at_end = s.lines().find(|l| l.starts_with("── lines")).is_none_or(|l| {
                // `── lines 5–20 of 20`: at the end when the two match.
                let nums: Vec<&str> = l.split(|c: char| !c.is_ascii_digit()).filter(|x| !x.is_empty()).collect();
                nums.len() >= 3 && nums[1] == nums[2]
            });
            if at_end {
                break;
            }
            self.keys("PageDown");
            std::thread::sleep(Duration::from_millis(300));
        }
        all
    }

    fn check_now(&self, puzzle: &str) {
        let o = Command::new(env!("CARGO_BIN_EXE_metal-puzzles")).current_dir(&self.root).args(["check", puzzle]).output().unwrap();
        assert!(o.status.code().is_some(), "check ran");
    }

    fn keys(&self, keys: &str) {
        self.tmux(&["send-keys", "-t", "book", keys]);
    }

    fn alive(&self) -> bool {
        Command::new("tmux").args(["-L", &self.socket, "has-session", "-t", "book"]).output().is_ok_and(|o| o.status.success())
    }

    /// Poll the screen until `ok` holds; panics with the last screen after
    /// `timeout`.
    fn wait_for(&self, what: &str, timeout: Duration, ok: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        // (A whole frame: the key bar is on its last line.)
        let whole = |s: &str| s.lines().rev().find(|l| !l.trim().is_empty()).is_some_and(|l| l.contains("q quit"));
        loop {
            let s = self.capture();
            if whole(&s) && ok(&s) {
                return s;
            }
            if start.elapsed() > timeout {
                panic!("the screen never showed {what} within {timeout:?}; it shows:\n{s}");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn workspace(&self) -> PathBuf {
        self.root.join("metal-puzzles")
    }

    fn save(&self, slug: &str, body: &str) {
        let p = puzzles::find(slug).unwrap();
        let path = self.workspace().join(p.file_name());
        std::fs::write(&path, common::file_with(slug, body)).unwrap();
    }
}

impl Drop for Screen {
    fn drop(&mut self) {
        let _ = Command::new("tmux").args(["-L", &self.socket, "kill-server"]).output();
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

/// The screen shows its frame: the title, the puzzle, the key bar on the
/// last line, and nothing wider than the terminal.
fn assert_frame(s: &str, cols: usize, rows: usize, puzzle: &str) {
    let lines: Vec<&str> = s.lines().collect();
    assert!(lines.len() <= rows, "{s}");
    assert!(lines.iter().all(|l| l.chars().count() <= cols), "a line is wider than {cols}:\n{s}");
    assert!(lines[0].starts_with("Metal Puzzles"), "{s}");
    assert!(lines[1].starts_with(puzzle), "{s}");
    let last = lines.iter().rev().find(|l| !l.trim().is_empty()).unwrap();
    assert!(last.contains("q quit"), "the key bar is the last line:\n{s}");
    // Nothing is cut off: long lines wrap.
    assert!(lines.iter().all(|l| !l.ends_with('…') || l.ends_with("Drawing…")), "a line is cut off:\n{s}");
}

/// The verdict sits in the first lines, where no scrolling moves it.
fn verdict_on_top(s: &str, verdict: &str) -> bool {
    s.lines().take(6).any(|l| l.starts_with(verdict))
}

/// The seconds a check took, as the screen reports them.
fn checked_in(s: &str) -> f64 {
    let at = s.find("(checked in ").expect("the verdict says how long the check took") + "(checked in ".len();
    s[at..].split(' ').next().unwrap().parse().unwrap()
}

/// A fresh workspace at 80x24: the starter fails, puzzle 1 gets solved,
/// puzzle 2 fails on purpose; the verdict and its first reason are on
/// screen at every step.
#[test]
fn first_steps_at_80x24_keep_the_verdict_and_first_finding_on_screen() {
    let (cols, rows) = (80, 24);
    let t = Screen::start("first", cols, rows);
    let s = t.wait_for("the starter's verdict", CHECK_TIMEOUT, |s| verdict_on_top(s, "Failed Tests."));
    assert_frame(&s, cols as usize, rows as usize, "Puzzle 1: Map");
    // The first reason: the wrong output against the spec.
    assert!(s.lines().take(8).any(|l| l.starts_with("Yours:")) && s.lines().take(8).any(|l| l.starts_with("Spec :")), "{s}");

    t.save("map", common::SOLUTIONS[0].1);
    let s = t.wait_for("puzzle 1 solved", CHECK_TIMEOUT, |s| verdict_on_top(s, "Passed Tests!") && s.contains("Puzzle 1 solved!"));
    assert_frame(&s, cols as usize, rows as usize, "Puzzle 1: Map");
    assert!(
        s.lines().next().unwrap().contains("1/14 solved")
            || s.lines().next().unwrap().contains(&format!("1/{} solved", puzzles::PUZZLES.len())),
        "{s}"
    );

    t.keys("n");
    let s = t.wait_for("puzzle 2's starter verdict", CHECK_TIMEOUT, |s| s.contains("Puzzle 2: Zip") && verdict_on_top(s, "Failed Tests."));
    assert_frame(&s, cols as usize, rows as usize, "Puzzle 2: Zip");

    // Reading past the end of `b`: the finding, its line and thread, on top.
    t.save("zip", "uint local_i = thread_position_in_grid.x;\nout[local_i] = a[local_i] + b[local_i + 1];\n");
    let s = t.wait_for("the out-of-bounds finding", CHECK_TIMEOUT, |s| s.lines().take(8).any(|l| l.starts_with("out-of-bounds:")));
    assert!(verdict_on_top(&s, "Failed Tests."), "{s}");
    // (It wraps: the top lines carry the line, then the thread by its grid
    // position and its position in its threadgroup.)
    let first = s.lines().position(|l| l.starts_with("out-of-bounds:")).unwrap();
    let finding = s.lines().skip(first).take(3).collect::<Vec<_>>().join(" ");
    assert!(finding.starts_with("out-of-bounds: line 2:"), "{s}");
    assert!(finding.contains("(thread (") && finding.contains(" in the grid, (") && finding.contains(" in threadgroup ("), "{s}");
    assert_frame(&s, cols as usize, rows as usize, "Puzzle 2: Zip");

    // A compile error: file, line and column on top.
    t.save("zip", "uint local_i = thread_position_in_grid.x;\nout[local_i] = a[local_i] +;\n");
    let s = t.wait_for("the compile error", CHECK_TIMEOUT, |s| s.lines().take(8).any(|l| l.starts_with("02_zip.metal:2:")));
    assert!(verdict_on_top(&s, "Failed Tests."), "{s}");
    assert_frame(&s, cols as usize, rows as usize, "Puzzle 2: Zip");

    // Scrolling moves the pane only.
    t.keys("End");
    let s = t.wait_for("the pane scrolled", CHECK_TIMEOUT, |s| s.contains("── lines"));
    assert!(verdict_on_top(&s, "Failed Tests."), "{s}");
    assert_frame(&s, cols as usize, rows as usize, "Puzzle 2: Zip");

    t.keys("q");
    let start = Instant::now();
    while t.alive() && start.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!t.alive(), "q did not quit");
}

/// Both sizes show the title, the verdict and the key bar, for a puzzle
/// with a large diagram (matmul's starter), and in the diagram and hint views.
#[test]
fn both_sizes_show_title_verdict_and_key_bar() {
    for (cols, rows) in [(80u16, 24u16), (160, 50)] {
        let t = Screen::start(&format!("sizes{cols}"), cols, rows);
        t.wait_for("the first verdict", CHECK_TIMEOUT, |s| verdict_on_top(s, "Failed Tests."));
        // Go to matmul (puzzle 14: the largest diagram of book one), each
        // key cancelling the check the previous one started.
        let matmul = puzzles::find("matmul").unwrap().number as usize;
        for _ in 0..puzzles::PUZZLES.len() + 1 - matmul {
            t.keys("p");
        }
        let s = t.wait_for("matmul's verdict", CHECK_TIMEOUT, |s| s.contains("Matrix Multiply") && verdict_on_top(s, "Failed Tests."));
        assert_frame(&s, cols as usize, rows as usize, "Puzzle 14: Matrix Multiply");
        for key in ["d", "h"] {
            t.keys(key);
            let marker = if key == "d" { "Diagram of test 1" } else { "Hint 1 of" };
            let s = t.wait_for(marker, CHECK_TIMEOUT, |s| s.contains(marker));
            assert!(verdict_on_top(&s, "Failed Tests."), "{cols}x{rows} {key}:\n{s}");
            assert_frame(&s, cols as usize, rows as usize, "Puzzle 14: Matrix Multiply");
            t.keys("Escape");
            t.wait_for("the check view", CHECK_TIMEOUT, |s| !s.contains(marker));
        }
    }
}

/// A loop that never ends is reported on the live screen (the book's budget
/// stops it in a fraction of a second); a long check shows that it runs,
/// and `q` or a new save stops it at once: the abandoned check never
/// reports (nor records progress).
#[test]
fn never_ending_loops_are_reported_and_running_checks_are_cancelled() {
    let (cols, rows) = (80, 24);
    let t = Screen::start("runaway", cols, rows);
    t.wait_for("the starter's verdict", CHECK_TIMEOUT, |s| verdict_on_top(s, "Failed Tests."));

    // The classic unsigned countdown never ends.
    t.save("map", "uint i = thread_position_in_grid.x;\nfor (uint s = 4; s >= 0; s /= 2) { out[i] = a[i] + 10; }\n");
    let saved = Instant::now();
    let s = t.wait_for("the runaway finding", RUNAWAY_TIMEOUT, |s| s.lines().take(8).any(|l| l.starts_with("runaway-kernel:")));
    let seen = saved.elapsed();
    assert!(verdict_on_top(&s, "Failed Tests."), "{s}");
    assert!(s.lines().find(|l| l.starts_with("runaway-kernel:")).unwrap().contains("line 2"), "{s}");
    assert_frame(&s, cols as usize, rows as usize, "Puzzle 1: Map");
    // (For the record, not asserted: how long the check took, by its own clock.)
    eprintln!("runaway loop: check took {} s by the program's clock; on screen {:?} after the save", checked_in(&s), seen);

    // A heavy but finite kernel: every thread loops 20,000 times (under the
    // budget), so its check takes seconds.
    let heavy = "uint i = thread_position_in_grid.x;\nfloat acc = 0;\nfor (uint k = 0; k < 20000; k++) { acc += 1.0f; }\nif (i < 1000) { out[i] = acc; }\n";
    let progress = |slug: &str| -> serde_json::Value {
        let text = std::fs::read_to_string(t.workspace().join(puzzles::workspace::PROGRESS_FILE)).unwrap_or_default();
        serde_json::from_str::<serde_json::Value>(&text).unwrap_or_default()["puzzles"][slug].clone()
    };
    let heavy_fingerprint = puzzles::workspace::fingerprint(&common::file_with("map", heavy));

    // A new save replaces the running check: the heavy one never reports.
    t.save("map", heavy);
    t.wait_for("the checking indicator", CHECK_TIMEOUT, |s| s.lines().take(4).any(|l| l.starts_with("Checking 01_map.metal")));
    t.save("map", common::SOLUTIONS[0].1);
    let s = t.wait_for("puzzle 1 solved", CHECK_TIMEOUT, |s| s.contains("Puzzle 1 solved!"));
    assert!(!s.contains("Checking"), "{s}");
    assert_ne!(progress("map")["fingerprint"].as_str(), Some(heavy_fingerprint.as_str()), "the abandoned check recorded progress");

    // `q` quits while a check runs, without waiting for it.
    t.save("map", heavy);
    t.wait_for("the checking indicator", CHECK_TIMEOUT, |s| s.lines().take(4).any(|l| l.starts_with("Checking 01_map.metal")));
    t.keys("q");
    let start = Instant::now();
    while t.alive() && start.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(!t.alive(), "q did not quit within 10 s while a check ran");
    eprintln!("q quit {:?} after the key while a check ran", start.elapsed());
    // Had q waited for the check, the check would have recorded its result.
    assert_ne!(progress("map")["fingerprint"].as_str(), Some(heavy_fingerprint.as_str()), "the check finished before q took effect");
}

/// Words of a capture joined across line breaks (wrapped text reads whole).
fn words(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Item 1 and 2 of issue 28 on the live screen: at both sizes a long "Why"
/// and a long `= help:` line wrap and are whole; colour is on in a
/// terminal and off under NO_COLOR.
#[test]
fn long_lines_wrap_whole_and_colour_follows_no_color() {
    for (cols, rows) in [(80u16, 24u16), (160, 50)] {
        let t = Screen::start(&format!("wrap{cols}"), cols, rows);
        t.wait_for("the starter's verdict", CHECK_TIMEOUT, |s| verdict_on_top(s, "Failed Tests."));
        // Colour: the verdict is red.
        let c = t.capture_colors();
        assert!(c.contains("\x1b[") && c.contains("31m"), "no colour on the screen:\n{c:?}");
        // A Why line longer than the terminal, whose end names the bug.
        t.save("map", "uint i = thread_position_in_grid.x;\nif (i < 3) { out[i] = a[i + 1] + 10; }\n");
        let s = t.wait_for("the Why line", CHECK_TIMEOUT, |s| s.contains("Why:"));
        assert_frame(&s, cols as usize, rows as usize, "Puzzle 1: Map");
        let pane = t.whole_pane();
        assert!(words(&pane).contains("— expected from a[0]"), "{cols}x{rows}: the end of the Why line is missing:\n{pane}");
        // A help line longer than the terminal.
        t.save("map", "uint i = thread_position_in_grid.x;\nout[i] = a[i] × 2;\n");
        let s = t.wait_for("the look-alike character", CHECK_TIMEOUT, |s| s.contains("B0003") || s.contains("multiplication sign"));
        assert_frame(&s, cols as usize, rows as usize, "Puzzle 1: Map");
        let pane = t.whole_pane();
        assert!(
            words(&pane).contains("= help: write `*` instead (such characters come with text copied from a PDF or a web page)"),
            "{cols}x{rows}: the help line is not whole:\n{pane}"
        );
    }
    let t = Screen::start_with("nocolor", 80, 24, &[("NO_COLOR", "1")]);
    t.wait_for("the starter's verdict", CHECK_TIMEOUT, |s| verdict_on_top(s, "Failed Tests."));
    let c = t.capture_colors();
    assert!(!c.contains("31m") && !c.contains("32m") && !c.contains("48;2;"), "colour under NO_COLOR:\n{c:?}");
}

/// Items 3–5: the list is a screen of its own (arrows and Enter), hints
/// come one at a time, `n` goes to the next unsolved puzzle, and the
/// progress bar follows edits made outside the screen.
#[test]
fn list_screen_hints_next_unsolved_and_live_progress() {
    let (cols, rows) = (80u16, 24usize);
    let t = Screen::start("list", cols, rows as u16);
    t.wait_for("the starter's verdict", CHECK_TIMEOUT, |s| verdict_on_top(s, "Failed Tests."));
    // Puzzle 2 solved from another terminal: the bar says so, unasked.
    t.save("zip", common::solution("zip"));
    t.check_now("2");
    t.wait_for("1 solved", CHECK_TIMEOUT, |s| s.lines().next().unwrap_or("").contains(" 1/29 solved"));
    // The first puzzle solved: `n` skips the solved puzzle 2.
    t.save("map", common::SOLUTIONS[0].1);
    t.wait_for("puzzle 1 solved", CHECK_TIMEOUT, |s| s.contains("Puzzle 1 solved!") && s.contains("2/29 solved"));
    t.keys("n");
    let s = t.wait_for("puzzle 3", CHECK_TIMEOUT, |s| s.contains("Puzzle 3: Guard") && verdict_on_top(s, "Failed Tests."));
    assert_frame(&s, cols as usize, rows, "Puzzle 3: Guard");
    // Editing a solved puzzle elsewhere: no longer solved, at once.
    std::fs::write(t.workspace().join("02_zip.metal"), "// changed\nuint i = 0;\n").unwrap();
    t.wait_for("the bar to drop", CHECK_TIMEOUT, |s| s.lines().next().unwrap_or("").contains(" 1/29 solved"));
    // Hints, one at a time.
    t.keys("h");
    let s = t.wait_for("hint 1", CHECK_TIMEOUT, |s| s.contains("Hint 1 of 2"));
    assert!(!s.contains("Hint 2 of 2"), "{s}");
    assert_frame(&s, cols as usize, rows, "Puzzle 3: Guard");
    t.keys("h");
    t.wait_for("hint 2", CHECK_TIMEOUT, |s| s.contains("Hint 2 of 2"));
    // The list: its own screen, arrows and Enter.
    t.keys("l");
    let s = t.wait_for("the list", CHECK_TIMEOUT, |s| s.contains("Choose a puzzle"));
    assert!(s.lines().any(|l| l.starts_with("▶") && l.contains("Guard")), "{s}");
    assert!(s.lines().any(|l| l.contains("Zip") && l.contains("edited, not checked")), "{s}");
    assert!(s.lines().all(|l| l.chars().count() <= cols as usize), "{s}");
    for _ in 0..19 {
        t.keys("Down");
    }
    let s = t.wait_for("RMS Norm selected", CHECK_TIMEOUT, |s| s.lines().any(|l| l.starts_with("▶") && l.contains("RMS Norm")));
    assert!(s.lines().all(|l| l.chars().count() <= cols as usize), "{s}");
    t.keys("Enter");
    let s = t.wait_for("puzzle 22", CHECK_TIMEOUT, |s| s.contains("Puzzle 22: RMS Norm") && verdict_on_top(s, "Failed Tests."));
    assert_frame(&s, cols as usize, rows, "Puzzle 22: RMS Norm");
}
