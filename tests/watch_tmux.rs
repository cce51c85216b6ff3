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
        let whole = |s: &str| s.lines().rev().find(|l| !l.trim().is_empty()).is_some_and(|l| l.contains("n/p puzzle"));
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
    assert!(last.contains("n/p puzzle"), "the key bar is the last line:\n{s}");
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
            let marker = if key == "d" { "Diagram of test 1" } else { "Hints:" };
            let s = t.wait_for(marker, CHECK_TIMEOUT, |s| s.contains(marker));
            assert!(verdict_on_top(&s, "Failed Tests."), "{cols}x{rows} {key}:\n{s}");
            assert_frame(&s, cols as usize, rows as usize, "Puzzle 14: Matrix Multiply");
            t.keys(key);
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
