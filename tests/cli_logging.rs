//! Shader logging (`os_log`) end to end: formats, thread tags, order, the
//! per-dispatch cap, `--log` filters and the front end's checks.

use std::path::Path;
use std::process::{Command, Output};

fn bin(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_metal-puzzles")).current_dir(dir).args(args).output().expect("runs")
}

/// A temporary folder, removed when the test ends.
struct Temp(tempfile::TempDir);

impl std::ops::Deref for Temp {
    type Target = std::path::Path;
    fn deref(&self) -> &std::path::Path {
        self.0.path()
    }
}

fn temp(name: &str, file: &str, text: &str) -> Temp {
    let d = Temp(tempfile::Builder::new().prefix(&format!("mp-log-{name}-")).tempdir().unwrap());
    std::fs::write(d.join(file), text).unwrap();
    d
}

fn out(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

const LOGS: &str = "#include <metal_stdlib>
#include <metal_logging>
using namespace metal;

constant os_log custom_log(\"com.example.puzzles\", \"scan\");

kernel void k(device const float* a [[buffer(0)]],
              device float* out [[buffer(1)]],
              uint i [[thread_position_in_grid]],
              uint g [[threadgroup_position_in_grid]]) {
    float v = a[i] * 2;
    if (i % 3 == 0) {
        os_log_default.log(\"i=%u v=%.2f hex=%#x %5d|%-4d|%e\", i, v, i * 17, -int(i), int(i), v);
    }
    if (v > 10) {
        custom_log.log_error(\"big value %g in group %d (%%)\", v, g);
    }
    out[i] = v;
}
";

const ARGS: &[&str] =
    &["run", "log.metal", "--kernel", "k", "--grid", "8", "--threadgroup", "4", "--arg", "a=arange(8):f32", "--arg", "out=zeros(8):f32"];

#[test]
fn messages_are_tagged_ordered_and_filtered() {
    let d = temp("basic", "log.metal", LOGS);
    let o = bin(&d, ARGS);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    insta::assert_snapshot!("log_all", out(&o));
    let mut a = ARGS.to_vec();
    a.extend(["--log", "thread=6"]);
    let o = bin(&d, &a);
    assert_eq!(out(&o).lines().filter(|l| l.starts_with("thread")).count(), 2, "{}", out(&o));
    assert!(
        out(&o)
            .lines()
            .all(|l| !l.starts_with("thread") || l.starts_with("thread (6, 0, 0) in the grid, (2, 0, 0) in threadgroup (1, 0, 0)")),
        "{}",
        out(&o)
    );
    let mut a = ARGS.to_vec();
    a.extend(["--log", "none"]);
    assert!(!out(&bin(&d, &a)).contains("thread ("));
    let mut a = ARGS.to_vec();
    a.extend(["--log", "sometimes"]);
    let o = bin(&d, &a);
    assert_eq!(o.status.code(), Some(2));
    assert!(err(&o).contains("--log `sometimes` must be all, none, thread=X,Y,Z, threadgroup=X,Y,Z, level="), "{}", err(&o));
    let mut a = ARGS.to_vec();
    a.push("--json");
    let v: serde_json::Value = serde_json::from_str(&out(&bin(&d, &a))).unwrap();
    let m = &v["logs"]["messages"];
    assert_eq!(m.as_array().unwrap().len(), 5);
    assert_eq!(m[3]["level"], "log_error");
    assert_eq!(m[3]["thread"], serde_json::json!([6, 0, 0]));
    assert_eq!(m[3]["threadgroup"], serde_json::json!([1, 0, 0]));
    assert_eq!(m[3]["message"], "big value 12 in group 1 (%)");
    // The source stays valid Metal: lint accepts it.
    assert_eq!(bin(&d, &["lint", "log.metal"]).status.code(), Some(0));
}

#[test]
fn large_dispatches_are_capped_with_a_note_and_the_same_every_time() {
    let src = "#include <metal_stdlib>
using namespace metal;
kernel void k(device uint* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    os_log_default.log(\"thread %u\", i);
    out[i] = i;
}
";
    let d = temp("cap", "cap.metal", src);
    let args =
        ["run", "cap.metal", "--kernel", "k", "--grid", "4096", "--threadgroup", "256", "--arg", "out=zeros(4096):u32", "--out", "o"];
    let first = out(&bin(&d, &args));
    let lines: Vec<&str> = first.lines().collect();
    assert_eq!(lines.len(), 1001, "{}", &first[first.len().saturating_sub(300)..]);
    assert_eq!(lines[0], "thread (0, 0, 0) in the grid, (0, 0, 0) in threadgroup (0, 0, 0): thread 0");
    assert_eq!(lines[999], "thread (999, 0, 0) in the grid, (231, 0, 0) in threadgroup (3, 0, 0): thread 999");
    assert_eq!(
        lines[1000],
        "(3096 more log message(s) not shown: at most 1000 are kept per dispatch; `--log thread=X,Y,Z`, `threadgroup=X,Y,Z` or `level=error` shows fewer)"
    );
    assert_eq!(out(&bin(&d, &args)), first);
    let o = bin(
        &d,
        &[
            "run",
            "cap.metal",
            "--kernel",
            "k",
            "--grid",
            "4096",
            "--threadgroup",
            "256",
            "--arg",
            "out=zeros(4096):u32",
            "--out",
            "o",
            "--log",
            "thread=4000",
        ],
    );
    assert_eq!(out(&o), "thread (4000, 0, 0) in the grid, (160, 0, 0) in threadgroup (15, 0, 0): thread 4000\n");
}

#[test]
fn mistakes_in_log_calls_are_compile_errors() {
    let src = "#include <metal_stdlib>
using namespace metal;
kernel void k(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    os_log_default.log(\"i=%d %f\", i);
    os_log_default.log(\"v=%d\", out[i]);
    os_log_default.log(\"v=%s\", i);
    os_log_default.logx(\"v\");
    os_log_default.log(i);
    os_log_default.log(\"v=%f\", float2(1, 2));
}
";
    let d = temp("bad", "bad.metal", src);
    let o = bin(&d, &["lint", "bad.metal"]);
    assert_eq!(o.status.code(), Some(1));
    let e = err(&o) + &out(&o);
    for (line, text) in [
        (4, "the format has 2 conversion(s) but 1 value(s) follow it"),
        (5, "this `float` does not match its conversion, which prints an integer"),
        (6, "`%s` is not supported by the simulator"),
        (7, "`os_log` has no member `logx`"),
        (8, "needs a format string literal first"),
        (9, "this `float2` does not match its conversion"),
    ] {
        assert!(e.contains(text) && e.contains(&format!("bad.metal:{line}:")), "{text}\n{e}");
    }
}

#[test]
fn mlx_bodies_log_too() {
    let d = temp(
        "mlx",
        "body.metal",
        "uint i = thread_position_in_grid.x;\nif (i == 2) { os_log_default.log_info(\"a[%u] = %.1f\", i, a[i]); }\nout[i] = a[i];\n",
    );
    let o = bin(&d, &["mlx", "body.metal", "--input", "a=arange(4):f32", "--output", "out:float32:4", "--grid", "4", "--threadgroup", "4"]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert!(out(&o).starts_with("thread (2, 0, 0) in the grid, (2, 0, 0) in threadgroup (0, 0, 0) [info]: a[2] = 2.0\n"), "{}", out(&o));
}

#[test]
fn level_and_threadgroup_filters_and_out_of_grid_errors() {
    let d = temp("filters", "log.metal", LOGS);
    let run = |extra: &[&str]| {
        let mut a = ARGS.to_vec();
        a.extend_from_slice(extra);
        bin(&d, &a)
    };
    let threads = |o: &Output| out(o).lines().filter(|l| l.starts_with("thread")).map(str::to_string).collect::<Vec<_>>();
    // Errors only: the two big values (threads 6 and 7).
    let o = run(&["--log", "level=error"]);
    assert_eq!(threads(&o).len(), 2, "{}", out(&o));
    assert!(threads(&o).iter().all(|l| l.contains("[error]")), "{}", out(&o));
    // Threadgroup 0 only: threads 0 and 3 log by default, none is big.
    let o = run(&["--log", "threadgroup=0"]);
    assert_eq!(threads(&o).len(), 2, "{}", out(&o));
    assert!(threads(&o).iter().all(|l| l.contains("in threadgroup (0, 0, 0)")), "{}", out(&o));
    // Filters add up.
    assert_eq!(threads(&run(&["--log", "threadgroup=1", "--log", "level=error"])).len(), 2);
    assert_eq!(threads(&run(&["--log", "threadgroup=0", "--log", "level=error"])).len(), 0);
    // A thread or threadgroup outside the dispatch is an error, not silence.
    let o = run(&["--log", "thread=9"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(err(&o).contains("--log thread=9,0,0 is outside the grid of 8x1x1 threads"), "{}", err(&o));
    let o = run(&["--log", "threadgroup=2"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(err(&o).contains("--log threadgroup=2,0,0 is outside the 2x1x1 threadgroups"), "{}", err(&o));
    let o = run(&["--log", "level=loud"]);
    assert_eq!(o.status.code(), Some(2));
    // JSON names the severity.
    let v: serde_json::Value = serde_json::from_str(&out(&run(&["--json"]))).unwrap();
    assert_eq!(v["logs"]["messages"][3]["severity"], "error");
    assert_eq!(v["logs"]["messages"][0]["severity"], "default");
    // debug --print shows the watched thread's messages only.
    let mut a = vec!["debug"];
    a.extend_from_slice(&ARGS[1..]);
    a.extend(["--thread", "6", "--print", "18: v"]);
    let o = bin(&d, &a);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let text = out(&o);
    let logged: Vec<&str> = text.lines().filter(|l| l.starts_with("thread (") && l.contains("): ")).collect();
    assert!(logged.iter().all(|l| l.starts_with("thread (6, 0, 0)")), "{}", out(&o));
    assert!(!logged.is_empty(), "{}", out(&o));
}

#[test]
fn subsystem_and_category_are_printed_filtered_and_checked() {
    let d = temp("origin", "log.metal", LOGS);
    let run = |extra: &[&str]| {
        let mut a = ARGS.to_vec();
        a.extend_from_slice(extra);
        bin(&d, &a)
    };
    let threads = |o: &Output| out(o).lines().filter(|l| l.starts_with("thread")).map(str::to_string).collect::<Vec<_>>();
    // The declared logger's lines carry its subsystem and category;
    // `os_log_default`'s carry none.
    let all = threads(&run(&[]));
    assert_eq!(all.iter().filter(|l| l.contains("[com.example.puzzles:scan] [error]: big value")).count(), 2, "{all:?}");
    assert_eq!(all.iter().filter(|l| l.contains(" [")).count(), 2, "{all:?}");
    // Either filter keeps the declared logger's lines only; they add up.
    for f in [["--log", "subsystem=com.example.puzzles"], ["--log", "category=scan"]] {
        let o = run(&f);
        assert_eq!(o.status.code(), Some(0), "{}", err(&o));
        let t = threads(&o);
        assert_eq!(t.len(), 2, "{t:?}");
        assert!(t.iter().all(|l| l.contains("[com.example.puzzles:scan]")), "{t:?}");
    }
    assert_eq!(threads(&run(&["--log", "category=scan", "--log", "threadgroup=0"])).len(), 0);
    // A name no log call uses would show nothing: an error naming those it has.
    let o = run(&["--log", "category=scna"]);
    assert_eq!(o.status.code(), Some(2), "{}", out(&o));
    assert!(err(&o).contains("category=scna names no category the kernel logs to (its `os_log` objects have `scan`)"), "{}", err(&o));
    let o = run(&["--log", "subsystem="]);
    assert_eq!(o.status.code(), Some(2));
    assert!(err(&o).contains("--log subsystem= needs a name"), "{}", err(&o));
    // JSON: null for `os_log_default`.
    let v: serde_json::Value = serde_json::from_str(&out(&run(&["--json"]))).unwrap();
    let m = &v["logs"]["messages"];
    assert_eq!(m[3]["subsystem"], "com.example.puzzles");
    assert_eq!(m[3]["category"], "scan");
    assert_eq!(m[0]["subsystem"], serde_json::Value::Null);
    assert_eq!(m[0]["category"], serde_json::Value::Null);
}
