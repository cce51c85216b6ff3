//! The interactive debugger end to end: the real binary in a real terminal
//! (tmux, on its own socket), driven with send-keys and read with
//! capture-pane. Skipped (with a note) only when tmux is not installed.
//!
//! Timeouts are generous upper bounds for a loaded machine, never
//! measurements: each step polls the screen until it shows what it must.

use std::process::Command;
use std::time::{Duration, Instant};

const TIMEOUT: Duration = Duration::from_secs(30);

/// The debugger model's test kernel: a loop, a helper call, divergence, a barrier.
const SCAN: &str = include_str!("fixtures/debug_scan.metal");

fn have_tmux() -> bool {
    Command::new("tmux").arg("-V").output().is_ok_and(|o| o.status.success())
}

/// One tmux server running `metal-puzzles debug` on SCAN; killed when dropped.
struct Screen {
    socket: String,
    _dir: tempfile::TempDir,
}

impl Screen {
    fn start(name: &str, cols: u16, rows: u16, thread: &str) -> Screen {
        let args =
            format!("scan.metal --kernel scan --grid 8 --threadgroup 4 --arg 'a=arange(8):f32' --arg 'out=zeros(8):f32' --thread {thread}");
        Screen::start_with(name, cols, rows, &[("scan.metal", SCAN)], &args)
    }

    /// `metal-puzzles debug ARGS` in a folder holding `files`.
    fn start_with(name: &str, cols: u16, rows: u16, files: &[(&str, &str)], args: &str) -> Screen {
        let dir = tempfile::tempdir().expect("temp dir");
        for (f, text) in files {
            std::fs::write(dir.path().join(f), text).unwrap();
        }
        std::fs::write(dir.path().join("tmux.conf"), "set -g status off\n").unwrap();
        let screen = Screen { socket: format!("mp-debug-{name}-{}", std::process::id()), _dir: dir };
        let bin = env!("CARGO_BIN_EXE_metal-puzzles");
        let cmd = format!("{bin} debug {args}");
        let ok = Command::new("tmux")
            .args(["-L", &screen.socket, "-f"])
            .arg(screen._dir.path().join("tmux.conf"))
            .args(["new-session", "-d", "-s", "dbg", "-x", &cols.to_string(), "-y", &rows.to_string(), "-c"])
            .arg(screen._dir.path())
            .arg(cmd)
            .status()
            .expect("tmux runs")
            .success();
        assert!(ok, "tmux new-session failed");
        screen
    }

    fn tmux(&self, args: &[&str]) -> String {
        let o = Command::new("tmux").args(["-L", &self.socket]).args(args).output().expect("tmux runs");
        String::from_utf8_lossy(&o.stdout).into_owned()
    }

    fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "dbg"];
        args.extend_from_slice(keys);
        self.tmux(&args);
    }

    /// Type a command on the `:` line.
    fn command(&self, text: &str) {
        self.keys(&[":"]);
        self.wait_for("the command line", |s| s.lines().any(|l| l.starts_with(':')));
        self.keys(&["-l", text]);
        self.keys(&["Enter"]);
    }

    fn alive(&self) -> bool {
        Command::new("tmux").args(["-L", &self.socket, "has-session", "-t", "dbg"]).output().is_ok_and(|o| o.status.success())
    }

    /// Poll until the whole screen (title on top) satisfies `ok`.
    fn wait_for(&self, what: &str, ok: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            let s = self.tmux(&["capture-pane", "-p", "-t", "dbg"]);
            if s.starts_with("metal-puzzles debug") && ok(&s) {
                // A capture can catch the terminal halfway through a redraw
                // (the current line drawn, the memory pane not yet): take
                // the screen only once two captures agree.
                std::thread::sleep(Duration::from_millis(50));
                if self.tmux(&["capture-pane", "-p", "-t", "dbg"]) == s {
                    return s;
                }
            }
            if start.elapsed() > TIMEOUT {
                panic!("the screen never showed {what} within {TIMEOUT:?}; it shows:\n{s}");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Screen {
    fn drop(&mut self) {
        let _ = Command::new("tmux").args(["-L", &self.socket, "kill-server"]).output();
    }
}

/// The source pane's current line (marked `▶`).
fn current_line(s: &str) -> Option<u32> {
    s.lines().find_map(|l| {
        let at = l.find('▶')?;
        l[at + '▶'.len_utf8()..].split_whitespace().next()?.parse().ok()
    })
}

fn fits(s: &str, cols: usize) {
    assert!(s.lines().all(|l| l.chars().count() <= cols), "a line is wider than {cols}:\n{s}");
}

#[test]
fn stepping_and_breakpoints_at_80x24() {
    if !have_tmux() {
        eprintln!("skipped: tmux is not installed");
        return;
    }
    let t = Screen::start("step", 80, 24, "5");
    let s = t.wait_for("the first stop", |s| s.contains("stop 1/"));
    fits(&s, 80);
    assert!(s.contains("thread (5, 0, 0) in the grid, (1, 0, 0) in threadgroup (1, 0, 0)"), "{s}");
    assert_eq!(current_line(&s), Some(11), "{s}");
    assert!(s.contains("i = 5") && s.contains("s step") && s.contains("q quit"), "{s}");
    // A source line wider than its pane ends in `…`, not mid-word.
    assert!(s.lines().any(|l| l.contains("kernel void scan(device") && l.contains('…')), "{s}");
    // Step: the store into threadgroup memory, then the barrier with the tile full.
    t.keys(&["s"]);
    let s = t.wait_for("line 12", |s| current_line(s) == Some(12));
    assert!(s.contains("read  a[5] = 5") && s.contains("write tile[1] = 5"), "{s}");
    t.keys(&["s"]);
    let s = t.wait_for("line 13", |s| current_line(s) == Some(13));
    assert!(s.contains("tile = [4, 5, 6, 7]"), "{s}");
    // A conditional breakpoint, then continue to it.
    t.command("break 16 if k == 1");
    t.wait_for("the breakpoint listed", |s| s.contains("line 16 if k == 1"));
    t.keys(&["c"]);
    let s = t.wait_for("the breakpoint hit", |s| s.contains("stopped at the breakpoint on line 16"));
    assert_eq!(current_line(&s), Some(16));
    assert!(s.contains("k = 1") && s.contains("acc = 4"), "{s}");
    assert!(s.contains("●▶"), "the breakpoint marker on the current line:\n{s}");
    // Continue again: no more hits, the thread finishes; step back replays.
    t.keys(&["c"]);
    t.wait_for("the end", |s| s.contains("· finished") && s.contains("no breakpoint or finding on the way"));
    t.keys(&["p"]);
    let s = t.wait_for("a step back", |s| s.contains("stepped back"));
    assert_eq!(current_line(&s), Some(21), "the else branch of an odd thread:\n{s}");
    t.keys(&["q"]);
    let start = Instant::now();
    while t.alive() && start.elapsed() < TIMEOUT {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(!t.alive(), "q quits");
}

#[test]
fn switching_threads_and_watching_at_160x50() {
    if !have_tmux() {
        eprintln!("skipped: tmux is not installed");
        return;
    }
    let t = Screen::start("switch", 160, 50, "4");
    t.wait_for("the first stop", |s| s.contains("stop 1/"));
    // Run to the helper call with the cursor (↓ moves it, r runs to it).
    for _ in 0..8 {
        t.keys(&["Down"]);
    }
    t.wait_for("the cursor on line 19", |s| s.lines().any(|l| l.contains("›19")));
    t.keys(&["r"]);
    t.wait_for("line 19", |s| current_line(s) == Some(19));
    // Step into the helper: its own locals, one call deeper.
    t.keys(&["s"]);
    let s = t.wait_for("the helper", |s| current_line(s) == Some(5));
    assert!(s.contains("in `twice`") && s.contains("x = 4") && s.contains("call depth 2"), "{s}");
    // Watch an expression over the helper's locals.
    t.keys(&["w"]);
    t.wait_for("the watch prompt", |s| s.contains(":watch "));
    t.keys(&["-l", "x + 100"]);
    t.keys(&["Enter"]);
    t.wait_for("the watch", |s| s.contains("1 x + 100 = 104"));
    // Another thread: the same visit of the same line, re-run deterministically.
    t.keys(&["t"]);
    t.wait_for("the thread prompt", |s| s.contains(":thread "));
    t.keys(&["-l", "6"]);
    t.keys(&["Enter"]);
    let s = t.wait_for("thread 6", |s| s.contains("thread (6, 0, 0) in the grid, (2, 0, 0) in threadgroup (1, 0, 0)"));
    assert_eq!(current_line(&s), Some(5));
    assert!(s.contains("x = 15") && s.contains("1 x + 100 = 115"), "{s}");
    // Another threadgroup, same position in it.
    t.command("group 0");
    let s = t.wait_for("threadgroup 0", |s| s.contains("thread (2, 0, 0) in the grid, (2, 0, 0) in threadgroup (0, 0, 0)"));
    assert!(s.contains("x = 3"), "{s}");
    // A thread outside the grid is refused with the reason; nothing changes.
    t.command("thread 99");
    let s = t.wait_for("the refusal", |s| s.contains("outside the grid of 8x1x1 threads"));
    assert!(s.contains("thread (2, 0, 0) in the grid"), "{s}");
    // The divergent branch: only the even lanes are active.
    t.keys(&["p"]);
    let s = t.wait_for("back at the call", |s| current_line(s) == Some(19));
    assert!(s.contains("2/4 active ●·◆·"), "{s}");
    fits(&s, 160);
}

#[test]
fn without_a_terminal_it_says_how_to_script_it() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("scan.metal"), SCAN).unwrap();
    let run = |args: &[&str]| Command::new(env!("CARGO_BIN_EXE_metal-puzzles")).current_dir(dir.path()).args(args).output().expect("runs");
    let target = ["debug", "scan.metal", "--kernel", "scan", "--grid", "8", "--threadgroup", "4"];
    let mut args = target.to_vec();
    args.extend(["--arg", "a=arange(8):f32", "--arg", "out=zeros(8):f32"]);
    let o = run(&args);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("needs a terminal") && err.contains("--print"), "{err}");
    // A bad target is reported before that, as usual.
    let mut args = target.to_vec();
    args.extend(["--arg", "a=arange(8):f32"]);
    let o = run(&args);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("needs a value for its buffer parameter `out`"));
    // A kernel that does not compile: its errors and exit status 1.
    std::fs::write(dir.path().join("scan.metal"), SCAN.replace("tile[k]", "tile[q]")).unwrap();
    let mut args = target.to_vec();
    args.extend(["--arg", "a=arange(8):f32", "--arg", "out=zeros(8):f32"]);
    let o = run(&args);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("scan.metal:16"), "{}", String::from_utf8_lossy(&o.stderr));
}

/// A kernel whose work is in a header (as MLX's and candle's are), a
/// shuffle, a ballot, and an out-of-bounds read on the last thread.
const HEADER: &str = "#pragma once
template <typename T>
T shifted(T v) {
    T below = metal::simd_shuffle_down(v, 1);
    return v + below;
}
";

const USES_HEADER: &str = "#include <metal_stdlib>
#include \"shift.h\"
using namespace metal;
kernel void k(device const float* a [[buffer(0)]], device float* out [[buffer(1)]],
              uint i [[thread_position_in_grid]]) {
    float v = a[i];
    float s = shifted(v);
    out[i] = s + a[i + 1];
}
";

fn header_screen(name: &str, cols: u16, rows: u16, thread: &str) -> Screen {
    let args =
        format!("k.metal --kernel k --grid 32 --threadgroup 32 --arg 'a=arange(32):f32' --arg 'out=zeros(32):f32' --thread {thread}");
    Screen::start_with(name, cols, rows, &[("shift.h", HEADER), ("k.metal", USES_HEADER)], &args)
}

#[test]
fn headers_lanes_and_findings_at_80x24() {
    if !have_tmux() {
        eprintln!("skipped: tmux is not installed");
        return;
    }
    let t = header_screen("header", 80, 24, "31");
    let s = t.wait_for("the first stop", |s| s.contains("stop 1/"));
    fits(&s, 80);
    // Step into the header's code.
    t.keys(&["s"]);
    t.wait_for("line 7", |s| current_line(s) == Some(7));
    t.keys(&["s"]);
    let s = t.wait_for("the header", |s| s.contains("shift.h") && current_line(s) == Some(4));
    assert!(s.contains("in `shifted"), "{s}");
    fits(&s, 80);
    // The expression in all 32 lanes at the shuffle's next line.
    t.command("lanes below");
    t.keys(&["s"]);
    let s = t.wait_for("the lanes", |s| s.contains("Lanes of the SIMD-group: below") && current_line(s) == Some(5));
    assert!(s.contains("0:1") && s.contains("30:31"), "{s}");
    // Lane 31's shuffle_down keeps its own value (no lane above it).
    t.keys(&["K", "K", "K"]);
    // A breakpoint in the header by FILE:LINE, then continue to the fault.
    t.command("break shift.h:5");
    t.wait_for("the breakpoint", |s| s.contains("breakpoint set on shift.h:5"));
    t.keys(&["c"]);
    let s = t.wait_for("the finding", |s| s.contains("stopped before the finding on line 8"));
    assert_eq!(current_line(&s), Some(8), "{s}");
    assert!(s.contains("out-of-bounds"), "{s}");
    fits(&s, 80);
    // The right pane scrolls: the findings list is below the fold.
    t.keys(&["J", "J", "J", "J", "J"]);
    let s = t.wait_for("the pane scrolled", |s| s.contains("more above"));
    assert!(s.contains("Findings of this run (1"), "{s}");
    // finding 1 jumps to its thread and line.
    t.keys(&["e"]);
    t.wait_for("the finding prompt", |s| s.contains(":finding "));
    t.keys(&["-l", "1"]);
    t.keys(&["Enter"]);
    let s = t.wait_for("finding 1", |s| s.contains("finding 1: thread (31, 0, 0) at line 8"));
    assert_eq!(current_line(&s), Some(8), "{s}");
    // The help screen is complete at 80x24.
    t.keys(&["?"]);
    let s = t.wait_for("the help", |s| s.contains("keys and commands"));
    for l in ["findings on|off", "FILE:LINE names a header", "any key closes this help", "lanes EXPR"] {
        assert!(s.contains(l), "help misses `{l}`:\n{s}");
    }
    fits(&s, 80);
    t.keys(&["x"]);
    let s = t.wait_for("the help closed", |s| s.contains("stop "));
    assert!(s.contains("q quit"), "the key bar is whole:\n{s}");
}

#[test]
fn the_key_bar_is_never_cut() {
    if !have_tmux() {
        eprintln!("skipped: tmux is not installed");
        return;
    }
    for cols in [80u16, 120, 140, 160] {
        let t = Screen::start(&format!("keys{cols}"), cols, 30, "1");
        let s = t.wait_for("the first stop", |s| s.contains("stop 1/"));
        fits(&s, cols as usize);
        for k in ["s step", "J/K scroll", "l lanes", "? help", "q quit"] {
            assert!(s.contains(k), "{cols} columns: the key bar misses `{k}`:\n{s}");
        }
    }
}

#[test]
fn a_simdgroup_matrix_at_160x50() {
    if !have_tmux() {
        eprintln!("skipped: tmux is not installed");
        return;
    }
    let src = "#include <metal_stdlib>
using namespace metal;
kernel void m(device const float* a [[buffer(0)]], device float* out [[buffer(1)]]) {
    simdgroup_float8x8 tile;
    simdgroup_load(tile, a, 8);
    simdgroup_store(tile, out, 8);
}
";
    let args = "m.metal --kernel m --grid 32 --threadgroup 32 --arg 'a=arange(64):f32' --arg 'out=zeros(64):f32' --thread 0";
    let t = Screen::start_with("matrix", 160, 50, &[("m.metal", src)], args);
    t.wait_for("the first stop", |s| s.contains("stop 1/"));
    t.command("until 6");
    let s = t.wait_for("line 6", |s| current_line(s) == Some(6));
    assert!(s.contains("tile = simdgroup_float8x8"), "{s}");
    assert!(s.contains("[0, 1, 2, 3, 4, 5, 6, 7]") && s.contains("[56, 57, 58, 59, 60, 61, 62, 63]"), "{s}");
    fits(&s, 160);
}
