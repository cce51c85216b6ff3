//! The standing abuse suite: small inputs that push every budget, each a
//! class of input rather than one file. Every probe must end with a clear
//! error (exit 1 or 2) or the right result, quickly and in bounded memory,
//! and no output flag may change a file the user gave or owns.
//!
//! The limits of README.md's "Limits" section are what these inputs hit.
#![cfg(unix)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// A probe must finish within this (10 s in a release build; the tests run
/// a debug build, on a machine other tests share).
const TIME_LIMIT: Duration = Duration::from_secs(30);
/// And stay under this much resident memory.
const MEMORY_LIMIT_KB: i64 = 1024 * 1024;

fn cmd(dir: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_metal-puzzles"));
    c.current_dir(dir).args(args).env_remove("MTL_CAPTURE_ENABLED").env("NO_COLOR", "1");
    c
}

/// Wait for `child` within the time limit (killing it past that), then
/// check the memory every child of this process used at most.
fn finish(mut child: Child, what: &str) -> Output {
    let start = Instant::now();
    loop {
        match child.try_wait().expect("wait") {
            Some(_) => break,
            None if start.elapsed() > TIME_LIMIT => {
                let _ = child.kill();
                panic!("`{what}` ran over {TIME_LIMIT:?}");
            }
            None => std::thread::sleep(Duration::from_millis(20)),
        }
    }
    let out = child.wait_with_output().expect("output");
    // SAFETY: getrusage fills the struct we pass.
    let max_kb = unsafe {
        let mut u: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_CHILDREN, &mut u);
        u.ru_maxrss
    };
    assert!(max_kb < MEMORY_LIMIT_KB, "a probe used {max_kb} KB (last: `{what}`)");
    out
}

fn run(dir: &Path, args: &[&str]) -> Output {
    let child = cmd(dir, args).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("spawn");
    finish(child, &args.join(" "))
}

fn code(o: &Output) -> i32 {
    o.status.code().unwrap_or(-1)
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn out(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn tmp() -> tempfile::TempDir {
    tempfile::tempdir().expect("tempdir")
}

fn write(dir: &Path, name: &str, text: impl AsRef<[u8]>) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).expect("write");
    p
}

const PRELUDE: &str = "#include <metal_stdlib>\nusing namespace metal;\n";

fn kernel(body: &str) -> String {
    format!("{PRELUDE}kernel void k(device float* o [[buffer(0)]], uint i [[thread_position_in_grid]]) {{\n{body}\n}}\n")
}

fn run_k(dir: &Path, file: &str, extra: &[&str]) -> Output {
    let mut args = vec!["run", file, "--kernel", "k", "--arg", "o=zeros(4):f32"];
    args.extend_from_slice(extra);
    for (flag, default) in [("--grid", "4"), ("--threadgroup", "4")] {
        if !extra.contains(&flag) {
            args.extend([flag, default]);
        }
    }
    run(dir, &args)
}

/// Exit 1 or 2 with an `error` on stderr that contains `needle`.
fn refused(o: &Output, needle: &str) {
    assert!(matches!(code(o), 1 | 2), "exit {}\n{}{}", code(o), out(o), err(o));
    assert!(err(o).contains(needle), "expected `{needle}` in:\n{}", err(o));
}

// ----- work that grows ------------------------------------------------------

#[test]
fn calls_that_fan_out_stop_at_the_lowering_budget() {
    let d = tmp();
    // Two calls per level, distinct instances: 2^N inlined copies.
    for (name, src) in [
        (
            "struct.metal",
            "template<int N> struct G { static float g(float x) { return G<N-1>::g(x) + G<N-1>::g(x * 2); } };\n\
             template<> struct G<0> { static float g(float x) { return x; } };\n",
        ),
        (
            "three.metal",
            "template<int N> struct G { static float g(float x) { float a = G<N-1>::g(x); return a - G<N-1>::g(x + a) * G<N-1>::g(x); } };\n\
             template<> struct G<0> { static float g(float x) { return x; } };\n",
        ),
    ] {
        let use_ = "o[i] = G<24>::g(o[i]);";
        write(d.path(), name, format!("{PRELUDE}{src}") + &kernel(use_)[PRELUDE.len()..]);
        let o = run_k(d.path(), name, &[]);
        refused(&o, "too large to simulate");
        assert!(err(&o).contains("100000 units of code"), "{}", err(&o));
    }
}

#[test]
fn templates_and_packs_that_double_stop_at_the_checker_budgets() {
    let d = tmp();
    write(
        d.path(),
        "double.metal",
        format!(
            "{PRELUDE}template<int N, typename T> struct E {{ using A = typename E<N-1, E<N,T>>::type; using B = typename E<N-1, T>::type; using type = T; }};\n\
             template<typename T> struct E<0, T> {{ using type = T; }};\n"
        ) + &kernel("typename E<40, float>::type x = 1; o[i] = x;")[PRELUDE.len()..],
    );
    refused(&run(d.path(), &["lint", "double.metal"]), "too many template instantiations");
    write(
        d.path(),
        "pack.metal",
        format!(
            "{PRELUDE}template<int N, typename... Ts> struct D {{ static int f() {{ return D<N-1, Ts..., Ts...>::f() + 1; }} }};\n\
             template<typename... Ts> struct D<0, Ts...> {{ static int f() {{ return sizeof...(Ts); }} }};\n"
        ) + &kernel("o[i] = D<40, float>::f();")[PRELUDE.len()..],
    );
    refused(&run(d.path(), &["lint", "pack.metal"]), "more than 1024");
    // A function pack expanded twice per level.
    write(
        d.path(),
        "fpack.metal",
        format!(
            "{PRELUDE}inline float h() {{ return 0; }}\n\
             template<typename T, typename... Ts> float h(T x, Ts... xs) {{ return x + h(xs...); }}\n\
             template<int N> struct F {{ template<typename... Ts> static float g(Ts... xs) {{ return F<N-1>::g(xs..., xs...); }} }};\n\
             template<> struct F<0> {{ template<typename... Ts> static float g(Ts... xs) {{ return h(xs...); }} }};\n"
        ) + &kernel("o[i] = F<40>::g(o[i]);")[PRELUDE.len()..],
    );
    let o = run(d.path(), &["lint", "fpack.metal"]);
    assert_eq!(code(&o), 1, "{}", err(&o));
}

#[test]
fn long_flat_expressions_fail_cleanly_and_shorter_ones_work() {
    let d = tmp();
    let terms = |n: usize, sep: &str| vec!["o[i]"; n].join(sep);
    // 150,000 terms on one line, on many lines, as a comma chain, and a
    // member chain: one clear error each, no stack overflow.
    write(d.path(), "line.metal", kernel(&format!("o[i] = {};", terms(150_000, " + "))));
    write(d.path(), "lines.metal", kernel(&format!("o[i] = {};", terms(150_000, "\n + "))));
    write(d.path(), "comma.metal", kernel(&format!("o[i] = ({});", terms(150_000, ", "))));
    write(d.path(), "member.metal", kernel(&format!("float4 v = 1; o[i] = v{}.x;", ".xxxx".repeat(150_000))));
    for f in ["line.metal", "lines.metal", "comma.metal", "member.metal"] {
        let o = run(d.path(), &["lint", f]);
        refused(&o, "this statement is too long: it chains more than 10000 operators");
        // The snippet is clipped around the column, never the whole line.
        assert!(err(&o).lines().all(|l| l.chars().count() < 300), "{f}: a long line in\n{}", &err(&o)[..2000.min(err(&o).len())]);
    }
    // 5,000 terms is a long but fine expression: it compiles and runs.
    write(d.path(), "sum.metal", kernel(&format!("o[i] = {};", vec!["1.0f"; 5_000].join(" + "))));
    let o = run_k(d.path(), "sum.metal", &[]);
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert!(out(&o).contains("[5000., 5000., 5000., 5000.]"), "{}", out(&o));
    // Deep nesting has its own limit and message.
    write(d.path(), "nest.metal", kernel(&format!("o[i] = {}1{};", "(".repeat(5_000), ")".repeat(5_000))));
    refused(&run(d.path(), &["lint", "nest.metal"]), "nested too deeply");
}

// ----- files ----------------------------------------------------------------

fn mkfifo(p: &Path) {
    let c = std::ffi::CString::new(p.to_str().unwrap()).unwrap();
    // SAFETY: a valid C string path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

#[test]
fn devices_fifos_and_huge_files_are_refused_without_reading_them() {
    let d = tmp();
    refused(&run(d.path(), &["lint", "/dev/zero"]), "not a regular file");
    std::os::unix::fs::symlink("/dev/zero", d.path().join("zero.metal")).unwrap();
    refused(&run(d.path(), &["lint", "zero.metal"]), "a device");
    mkfifo(&d.path().join("fifo.metal"));
    refused(&run(d.path(), &["lint", "fifo.metal"]), "FIFO");
    // A huge header in an -I root (sparse: nothing is really written).
    std::fs::create_dir(d.path().join("inc")).unwrap();
    let big = std::fs::File::create(d.path().join("inc/big.h")).unwrap();
    big.set_len(3 << 30).unwrap();
    write(d.path(), "inc.metal", format!("#include \"big.h\"\n{}", kernel("o[i] = 1;")));
    refused(&run(d.path(), &["lint", "inc.metal", "-I", "inc"]), "larger than the limit");
    // A puzzle file that is a FIFO or a link to a device: check and list end.
    let ws = d.path().join("ws");
    assert_eq!(code(&run(d.path(), &["init", "ws"])), 0);
    std::fs::remove_file(ws.join("01_map.metal")).unwrap();
    mkfifo(&ws.join("01_map.metal"));
    std::fs::remove_file(ws.join("02_zip.metal")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", ws.join("02_zip.metal")).unwrap();
    refused(&run(d.path(), &["check", "1", "--dir", "ws"]), "FIFO");
    refused(&run(d.path(), &["check", "2", "--dir", "ws"]), "a device");
    let o = run(d.path(), &["list", "--dir", "ws"]);
    assert!(matches!(code(&o), 0..=2), "{}", err(&o));
}

#[test]
fn line_endings_bom_and_invalid_utf8() {
    let d = tmp();
    let src = kernel("o[i] = 1;\nundefined_name = 2;");
    // CR only: the kernel is seen (an error on its line 4), never "ok (0 kernels)".
    write(d.path(), "cr.metal", src.replace('\n', "\r"));
    let o = run(d.path(), &["lint", "cr.metal"]);
    refused(&o, "cr.metal:5:1");
    write(d.path(), "crlf.metal", src.replace('\n', "\r\n"));
    refused(&run(d.path(), &["lint", "crlf.metal"]), "crlf.metal:5:1");
    let ok = kernel("o[i] = 1;");
    write(d.path(), "cr_ok.metal", ok.replace('\n', "\r"));
    assert!(err(&run(d.path(), &["lint", "cr_ok.metal"])).contains("ok (1 kernel: k)"));
    write(d.path(), "bom.metal", format!("\u{feff}{ok}"));
    assert!(err(&run(d.path(), &["lint", "bom.metal"])).contains("ok (1 kernel: k)"));
    let mut bad = ok.clone().into_bytes();
    bad.splice(PRELUDE.len() + 3..PRELUDE.len() + 3, [0xff]);
    write(d.path(), "bad.metal", bad);
    refused(&run(d.path(), &["lint", "bad.metal"]), "bad.metal:3:4: the source is not valid UTF-8 (byte 0xff)");
}

// ----- dispatch sizes -------------------------------------------------------

#[test]
fn buffers_workers_and_grids_stay_within_budgets() {
    let d = tmp();
    write(
        d.path(),
        "four.metal",
        format!("{PRELUDE}kernel void k(device float* a [[buffer(0)]], device float* b [[buffer(1)]], device float* c [[buffer(2)]], device float* e [[buffer(3)]], uint i [[thread_position_in_grid]]) {{ a[i] = 1; }}\n"),
    );
    let g = "zeros(268435456):f32";
    let (a, b, c, e) = (format!("a={g}"), format!("b={g}"), format!("c={g}"), format!("e={g}"));
    let o = run(
        d.path(),
        &["run", "four.metal", "--kernel", "k", "--grid", "4", "--threadgroup", "4", "--arg", &a, "--arg", &b, "--arg", &c, "--arg", &e],
    );
    refused(&o, "all buffers of a dispatch together may take 1073741824 bytes");
    // A million workers asked for: the cores are used, the result is right.
    write(d.path(), "add.metal", kernel("o[i] = o[i] + float(i);"));
    let o = run(
        d.path(),
        &[
            "run",
            "add.metal",
            "--kernel",
            "k",
            "--grid",
            "196608",
            "--threadgroup",
            "64",
            "--arg",
            "o=zeros(196608):f32",
            "--threads",
            "1000000",
            "--check",
            "none",
        ],
    );
    assert_eq!(code(&o), 0, "{}", err(&o));
    // Grids whose product wraps or is huge: an error, never a silent no-op or a hang.
    for grid in ["4194304,4194304,1048576", "65536,32768", "4294967295,4294967295,4294967295"] {
        let o = run_k(d.path(), "add.metal", &["--grid", grid]);
        refused(&o, "cannot dispatch");
        assert!(!out(&o).contains("o = array"), "{grid}: outputs printed as if it ran");
    }
    let o = run_k(d.path(), "add.metal", &["--grid", "4294967295,2", "--threadgroup", "1,2", "--dispatch", "threadgroups"]);
    refused(&o, "cannot dispatch");
}

// ----- outputs --------------------------------------------------------------

#[test]
fn output_flags_never_replace_an_input_or_a_workspace_file() {
    let d = tmp();
    let src = kernel("o[i] = 1;");
    write(d.path(), "k.metal", &src);
    write(d.path(), "k.mpcapture", "not really a capture");
    // --capture over the source, or with another extension.
    refused(&run_k(d.path(), "k.metal", &["--capture", "k.metal"]), "name it `k.mpcapture`");
    write(d.path(), "inputs.mpcapture", b"keep");
    let o = run(
        d.path(),
        &[
            "run",
            "k.metal",
            "--kernel",
            "k",
            "--grid",
            "4",
            "--threadgroup",
            "4",
            "--arg",
            "o=@inputs.mpcapture",
            "--capture",
            "inputs.mpcapture",
        ],
    );
    assert_eq!(code(&o), 2, "{}", err(&o));
    assert_eq!(std::fs::read_to_string(d.path().join("k.metal")).unwrap(), src);
    assert_eq!(std::fs::read(d.path().join("inputs.mpcapture")).unwrap(), b"keep");
    // --out writing NAME.npy over the .npy it read (and a JSON argument file).
    std::fs::create_dir(d.path().join("o")).unwrap();
    run_k(d.path(), "k.metal", &["--out", "o"]);
    let before = std::fs::read(d.path().join("o/o.npy")).unwrap();
    let o = run(d.path(), &["run", "k.metal", "--kernel", "k", "--grid", "4", "--threadgroup", "4", "--arg", "o=@o/o.npy", "--out", "o"]);
    refused(&o, "would overwrite");
    assert_eq!(std::fs::read(d.path().join("o/o.npy")).unwrap(), before);
    // The puzzle book: --png/--svg onto a learner's file, the progress file,
    // or PNG bytes into a .jpg.
    assert_eq!(code(&run(d.path(), &["init", "ws"])), 0);
    let map = std::fs::read(d.path().join("ws/01_map.metal")).unwrap();
    for (flag, target, needle) in [
        ("--png", "ws/01_map.metal", "name it `ws/01_map.png`"),
        ("--svg", "ws/01_map.metal", "name it `ws/01_map.svg`"),
        ("--png", "x.jpg", "name it `x.png`"),
        ("--svg", "ws/.progress.json", "name it"),
    ] {
        let o = run(d.path(), &["show", "1", "--dir", "ws", flag, target]);
        refused(&o, needle);
    }
    // A diagram named like a puzzle file but through another path.
    std::os::unix::fs::symlink(d.path().join("ws/01_map.metal"), d.path().join("link.png")).unwrap();
    refused(&run(d.path(), &["show", "1", "--dir", "ws", "--png", "link.png"]), "would overwrite");
    assert_eq!(std::fs::read(d.path().join("ws/01_map.metal")).unwrap(), map);
    assert!(!d.path().join("x.jpg").exists());
}

#[test]
fn write_errors_are_exit_2() {
    let d = tmp();
    write(d.path(), "k.metal", kernel("o[i] = 1;"));
    let full = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
    let child = cmd(d.path(), &["run", "k.metal", "--kernel", "k", "--grid", "4", "--threadgroup", "4", "--arg", "o=zeros(4):f32"])
        .stdout(full)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let o = finish(child, "run > /dev/full");
    refused(&o, "cannot write the output");
    // A closed stdout (`>&-`).
    let mut c = cmd(d.path(), &["lint", "k.metal"]);
    c.stderr(Stdio::piped());
    // SAFETY: closing fd 1 in the child before exec.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(&mut c, || {
            libc::close(1);
            Ok(())
        });
    }
    let o = finish(c.spawn().unwrap(), "lint >&-");
    refused(&o, "standard output is closed");
    // `/dev/null` opened for reading and writing (Python's DEVNULL, node's
    // "ignore") is a caller discarding the output, not a closed stdout.
    let null = std::fs::OpenOptions::new().read(true).write(true).open("/dev/null").unwrap();
    let child = cmd(d.path(), &["lint", "k.metal"]).stdout(null).stderr(Stdio::piped()).spawn().unwrap();
    let o = finish(child, "lint > DEVNULL");
    assert_eq!(code(&o), 0, "{}", err(&o));
    // A capture that cannot be written.
    std::fs::create_dir(d.path().join("ro")).unwrap();
    let o = run_k(d.path(), "k.metal", &["--capture", "missing/dir/../../ro"]);
    assert_eq!(code(&o), 2, "{}", err(&o));
}

#[test]
fn concurrent_checks_keep_every_mark() {
    let d = tmp();
    assert_eq!(code(&run(d.path(), &["init", "ws"])), 0);
    write(d.path(), "ws/01_map.metal", "uint local_i = thread_position_in_grid.x;\nout[local_i] = a[local_i] + 10;\n");
    write(d.path(), "ws/02_zip.metal", "uint local_i = thread_position_in_grid.x;\nout[local_i] = a[local_i] + b[local_i];\n");
    for _ in 0..4 {
        let _ = std::fs::remove_file(d.path().join("ws/.progress.json"));
        let spawn = |n: &str| cmd(d.path(), &["check", n, "--dir", "ws"]).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
        let (a, b) = (spawn("1"), spawn("2"));
        finish(a, "check 1");
        finish(b, "check 2");
        let progress = std::fs::read_to_string(d.path().join("ws/.progress.json")).unwrap();
        let v: serde_json::Value = serde_json::from_str(&progress).unwrap();
        assert_eq!(v["puzzles"]["map"]["solved"], true, "{progress}");
        assert_eq!(v["puzzles"]["zip"]["solved"], true, "{progress}");
    }
}

// ----- debugging ------------------------------------------------------------

#[test]
fn printed_expressions_that_write_are_refused() {
    let d = tmp();
    write(
        d.path(),
        "k.metal",
        format!(
            "{PRELUDE}void bump(device float* p) {{ p[0] += 1; }}\n\
             kernel void k(device float* o [[buffer(0)]], device atomic_int* c [[buffer(1)]], uint i [[thread_position_in_grid]]) {{\n\
             float acc = 1;\n\
             int n = 0;\n\
             o[i] = acc + float(n);\n\
             }}\n"
        ),
    );
    let dbg = |e: &str| {
        let print = format!("7: {e}");
        run(
            d.path(),
            &[
                "debug",
                "k.metal",
                "--kernel",
                "k",
                "--grid",
                "2",
                "--threadgroup",
                "2",
                "--arg",
                "o=zeros(2):f32",
                "--arg",
                "c=zeros(1):i32",
                "--thread",
                "1",
                "--print",
                &print,
            ],
        )
    };
    for e in [
        "acc = 99",
        "n++",
        "--n",
        "acc *= 2",
        "o[i] = 123",
        "atomic_fetch_add_explicit(c, 1, memory_order_relaxed)",
        "(bump(o), 1)",
        "(threadgroup_barrier(mem_flags::mem_none), 1)",
    ] {
        let o = dbg(e);
        refused(&o, "a printed expression must not change the kernel");
    }
    for e in ["acc * 2", "o[i]", "atomic_load_explicit(c, memory_order_relaxed)"] {
        let o = dbg(e);
        assert_eq!(code(&o), 0, "{e}: {}", err(&o));
    }
}

// ----- terminal hygiene -----------------------------------------------------

#[test]
fn control_characters_from_sources_and_captures_are_escaped() {
    let d = tmp();
    write(d.path(), "esc.metal", kernel("o[i] = 1; \x1b]0;pwned\x07 \x1b[2J"));
    let o = run(d.path(), &["lint", "esc.metal"]);
    assert_eq!(code(&o), 1);
    assert!(!err(&o).contains('\x1b') && !err(&o).contains('\x07'), "{}", err(&o));
    assert!(err(&o).contains("\\x1b]0;pwned\\x07"), "{}", err(&o));
    // A capture whose title and names carry escapes.
    write(d.path(), "k.metal", kernel("o[i] = 1;"));
    assert_eq!(code(&run_k(d.path(), "k.metal", &["--capture", "k.mpcapture"])), 0);
    let text = std::fs::read_to_string(d.path().join("k.mpcapture")).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v["title"] = "\u{1b}[2J\u{1b}]0;owned\u{7}reproduces".into();
    v["origin"] = "\u{9b}31m".into();
    write(d.path(), "evil.mpcapture", v.to_string());
    let o = run(d.path(), &["replay", "evil.mpcapture"]);
    let all = out(&o) + &err(&o);
    assert!(!all.contains('\x1b') && !all.contains('\u{9b}') && !all.contains('\x07'), "{all}");
    assert!(all.contains("\\x1b[2J"), "{all}");
}

#[test]
fn captures_are_validated_before_use() {
    let d = tmp();
    write(d.path(), "k.metal", kernel("o[i] = 1;"));
    assert_eq!(code(&run_k(d.path(), "k.metal", &["--capture", "k.mpcapture"])), 0);
    let text = std::fs::read_to_string(d.path().join("k.mpcapture")).unwrap();
    let base: serde_json::Value = serde_json::from_str(&text).unwrap();
    type Change = Box<dyn Fn(&mut serde_json::Value)>;
    let cases: Vec<(&str, Change)> = vec![
        ("more than 268435456 threads", Box::new(|v| v["program"]["grid"] = serde_json::json!([4194304, 4194304, 1048576]))),
        ("more than 268435456 threads", Box::new(|v| v["program"]["grid"] = serde_json::json!([65536, 32768, 1]))),
        ("worker threads", Box::new(|v| v["options"]["threads"] = serde_json::json!(1_000_000))),
        ("options.budget", Box::new(|v| v["options"]["budget"] = serde_json::json!(u64::MAX))),
        ("threads per threadgroup", Box::new(|v| v["program"]["threadgroup"] = serde_json::json!([1024, 1024, 1]))),
    ];
    for (needle, change) in cases {
        let mut v = base.clone();
        change(&mut v);
        write(d.path(), "bad.mpcapture", v.to_string());
        refused(&run(d.path(), &["replay", "bad.mpcapture"]), needle);
        refused(&run(d.path(), &["debug", "bad.mpcapture", "--thread", "0", "--print", "3: o[i]"]), needle);
    }
}
