//! Captures end to end: written by `run`, `mlx` and `check` (`--capture FILE`
//! or `MTL_CAPTURE_ENABLED=1`), replayed by `replay` and opened by `debug`;
//! damaged captures are refused with a clear error.

use std::path::Path;
use std::process::{Command, Output};

fn bin(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_metal-puzzles"))
        .current_dir(dir)
        .args(args)
        .env_remove("VERBOSE")
        .env_remove("MTL_CAPTURE_ENABLED")
        .output()
        .expect("runs")
}

fn out(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

const ADD: &str = "#include <metal_stdlib>
#include \"twice.h\"
using namespace metal;

kernel void add(device const float* a [[buffer(0)]],
                device const float* b [[buffer(1)]],
                device float* out     [[buffer(2)]],
                uint i [[thread_position_in_grid]]) {
    float s = twice(a[i]);
    out[i] = s + b[i];
}
";

/// A run with an out-of-bounds read (a has 4 elements, 5 threads run).
fn add_run(dir: &Path, extra: &[&str]) -> Output {
    std::fs::write(dir.join("add.metal"), ADD).unwrap();
    std::fs::write(dir.join("twice.h"), "inline float twice(float x) { return 2 * x; }\n").unwrap();
    let mut args = vec![
        "run",
        "add.metal",
        "--kernel",
        "add",
        "--grid",
        "5",
        "--threadgroup",
        "4",
        "--arg",
        "a=arange(4):float32",
        "--arg",
        "b=ones(5):float32",
        "--arg",
        "out=zeros(5):float32",
    ];
    args.extend(extra);
    bin(dir, &args)
}

#[test]
fn run_capture_replays_and_debugs_without_the_original_files() {
    let d = tempfile::tempdir().unwrap();
    let o = add_run(d.path(), &["--capture", "add.mpcapture"]);
    assert_eq!(o.status.code(), Some(1), "{}", err(&o));
    assert!(err(&o).contains("capture written to add.mpcapture"), "{}", err(&o));
    // The capture holds the source and the header: the originals may go.
    std::fs::remove_file(d.path().join("add.metal")).unwrap();
    std::fs::remove_file(d.path().join("twice.h")).unwrap();
    let r = bin(d.path(), &["replay", "add.mpcapture"]);
    assert_eq!(r.status.code(), Some(0), "{}{}", out(&r), err(&r));
    insta::assert_snapshot!("replay_run", out(&r));
    let g = bin(d.path(), &["debug", "add.mpcapture", "--thread", "2", "--print", "10: s, b[i]"]);
    insta::assert_snapshot!("debug_run_capture", out(&g));
    // The recorded finding is reported again, with its thread.
    assert!(err(&g).contains("out-of-bounds read of `a`"), "{}", err(&g));
    assert_eq!(g.status.code(), Some(1));
    // Every replay is the same.
    assert_eq!(out(&bin(d.path(), &["replay", "add.mpcapture"])), out(&r));
}

#[test]
fn env_variable_writes_to_the_default_place() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("double.metal"), "uint i = thread_position_in_grid.x;\nfloat v = a[i] * 2;\nout[i] = v;\n").unwrap();
    let args = ["mlx", "double.metal", "--input", "a=arange(6):float32", "--output", "out:float32:6", "--grid", "6", "--threadgroup", "4"];
    for n in 1..=2 {
        let o = Command::new(env!("CARGO_BIN_EXE_metal-puzzles"))
            .current_dir(d.path())
            .args(args)
            .env("MTL_CAPTURE_ENABLED", "1")
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", err(&o));
        let path = format!("metal-puzzles-captures/double-{n}.mpcapture");
        assert!(err(&o).contains(&format!("capture written to {path}")), "{}", err(&o));
        assert!(d.path().join(&path).is_file());
    }
    // `MTL_CAPTURE_ENABLED=0` writes nothing.
    let o = Command::new(env!("CARGO_BIN_EXE_metal-puzzles"))
        .current_dir(d.path())
        .args(args)
        .env("MTL_CAPTURE_ENABLED", "0")
        .output()
        .unwrap();
    assert!(!err(&o).contains("capture written"));
    let r = bin(d.path(), &["replay", "metal-puzzles-captures/double-1.mpcapture"]);
    assert_eq!(r.status.code(), Some(0), "{}{}", out(&r), err(&r));
    insta::assert_snapshot!("replay_mlx", out(&r));
    let g = bin(d.path(), &["debug", "metal-puzzles-captures/double-2.mpcapture", "--thread", "5", "--print", "3: v, a[i]"]);
    assert_eq!(g.status.code(), Some(0), "{}", err(&g));
    insta::assert_snapshot!("debug_mlx_capture", out(&g));
}

#[test]
fn check_capture_holds_the_failing_test() {
    let d = tempfile::tempdir().unwrap();
    assert_eq!(bin(d.path(), &["init", "ws"]).status.code(), Some(0));
    // Puzzle 2 (zip) with a swapped index: every test fails.
    std::fs::write(d.path().join("ws/02_zip.metal"), "uint i = thread_position_in_grid.x;\nout[i] = a[i] + b[3 - i];\n").unwrap();
    let o = bin(d.path(), &["check", "2", "--dir", "ws", "--capture", "zip.mpcapture"]);
    assert_eq!(o.status.code(), Some(1), "{}", out(&o));
    let r = bin(d.path(), &["replay", "zip.mpcapture"]);
    assert_eq!(r.status.code(), Some(0), "{}{}", out(&r), err(&r));
    insta::assert_snapshot!("replay_check", out(&r));
    // The book's order of atomics is part of the run, so it is recorded.
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(d.path().join("zip.mpcapture")).unwrap()).unwrap();
    assert_eq!(doc["options"]["atomics_last_lane_first"], true);
    let g = bin(d.path(), &["debug", "zip.mpcapture", "--thread", "1", "--print", "2: i, a[i], b[3 - i]"]);
    assert_eq!(g.status.code(), Some(0), "{}", err(&g));
    insta::assert_snapshot!("debug_check_capture", out(&g));
    // --capture FILE with several puzzles is refused with a hint.
    let o = bin(d.path(), &["check", "--all", "--dir", "ws", "--capture", "all.mpcapture"]);
    assert!(err(&o).contains("--capture FILE saves one puzzle's run"), "{}", err(&o));
    assert!(!d.path().join("all.mpcapture").exists());
}

#[test]
fn an_edited_capture_does_not_reproduce() {
    let d = tempfile::tempdir().unwrap();
    add_run(d.path(), &["--capture", "add.mpcapture"]);
    let path = d.path().join("add.mpcapture");
    let mut doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    // Claim the recorded output was all zeros (5 float32 zeros) and drop the finding.
    doc["outputs"][0]["data"] = "AAAAAAAAAAAAAAAAAAAAAAAAAAA=".into();
    doc["outputs"][0]["checksum"] = "0000000000000000".into();
    doc["findings"] = serde_json::json!([]);
    std::fs::write(&path, serde_json::to_string(&doc).unwrap()).unwrap();
    let r = bin(d.path(), &["replay", "add.mpcapture"]);
    assert_eq!(r.status.code(), Some(1), "{}", out(&r));
    let text = out(&r);
    assert!(
        text.contains("DIFFERS from the recording: 5 of 5 elements differ; the first is element 0 (flat, row-major): now 1, recorded 0"),
        "{text}"
    );
    assert!(text.contains("NEW (not in the recording): error out-of-bounds at add.metal:9:21"), "{text}");
    assert!(text.contains("Not reproduced"), "{text}");
}

#[test]
fn damaged_captures_are_refused_clearly() {
    let d = tempfile::tempdir().unwrap();
    add_run(d.path(), &["--capture", "good.mpcapture"]);
    let good = std::fs::read_to_string(d.path().join("good.mpcapture")).unwrap();
    let doc: serde_json::Value = serde_json::from_str(&good).unwrap();
    let edit = |f: &dyn Fn(&mut serde_json::Value)| {
        let mut v = doc.clone();
        f(&mut v);
        serde_json::to_string(&v).unwrap()
    };
    let cases: Vec<(String, &str)> = vec![
        (good[..good.len() / 2].to_string(), "the file ends early"),
        ("not json at all".into(), "is not valid JSON"),
        ("{}".into(), "has no `\"format\": \"metal-puzzles-capture\"` field"),
        (edit(&|v| v["version"] = 99.into()), "it is version 99 of the capture format"),
        (edit(&|v| v["program"]["grid"] = serde_json::json!([0, 1, 1])), "has a zero dimension"),
        (edit(&|v| v["program"]["arguments"][0]["dtype"] = "float128".into()), "array `a`"),
        (
            edit(&|v| v["program"]["arguments"][0]["shape"] = serde_json::json!([1_000_000_000_000u64])),
            "array `a` is float32 of shape [1000000000000]",
        ),
        (
            edit(&|v| v["program"]["arguments"][0]["bytes"] = 1_000_000_000_000u64.into()),
            "array `a` declares 1000000000000 bytes but its data holds 16",
        ),
        (edit(&|v| v["program"]["arguments"][0]["data"] = "AAA".into()), "not a multiple of 4"),
        (edit(&|v| v["program"]["kernel"] = "nope".into()), "has no kernel named `nope`"),
        (edit(&|v| v["compile"]["headers"] = serde_json::json!([])), "the capture holds no such header"),
        (edit(&|v| v["program"]["kind"] = "tensor".into()), "a field is missing or has the wrong type"),
    ];
    for (k, (text, want)) in cases.iter().enumerate() {
        let name = format!("bad{k}.mpcapture");
        std::fs::write(d.path().join(&name), text).unwrap();
        let r = bin(d.path(), &["replay", &name]);
        let e = err(&r);
        assert!(matches!(r.status.code(), Some(1) | Some(2)), "case {k}: {e}");
        assert!(e.contains(want), "case {k}: wanted `{want}` in:\n{e}");
        assert!(!e.contains("panicked"), "case {k}: {e}");
        let g = bin(d.path(), &["debug", &name, "--thread", "0", "--print", "10: s"]);
        assert!(matches!(g.status.code(), Some(1) | Some(2)) && !err(&g).contains("panicked"), "case {k}: {}", err(&g));
    }
    // A file over the size limit is refused before it is read (a sparse file: no disk used).
    let huge = std::fs::File::create(d.path().join("huge.mpcapture")).unwrap();
    huge.set_len(600 << 20).unwrap();
    let r = bin(d.path(), &["replay", "huge.mpcapture"]);
    assert_eq!(r.status.code(), Some(2));
    assert!(err(&r).contains("larger than the limit of 512 MiB"), "{}", err(&r));
    // debug on a capture takes no run arguments.
    let g = bin(d.path(), &["debug", "good.mpcapture", "--grid", "4", "--thread", "0", "--print", "10: s"]);
    assert_eq!(g.status.code(), Some(2));
    assert!(err(&g).contains("a capture holds its own arguments and dispatch"), "{}", err(&g));
}

#[test]
fn inputs_over_the_limit_are_not_captured() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(
        d.path().join("one.metal"),
        "kernel void one(device float* a [[buffer(0)]], uint i [[thread_position_in_grid]]) { a[i] = 1; }\n",
    )
    .unwrap();
    // 80 MiB of input, over the 64 MiB capture limit; one thread runs.
    let o = bin(
        d.path(),
        &[
            "run",
            "one.metal",
            "--kernel",
            "one",
            "--grid",
            "1",
            "--threadgroup",
            "1",
            "--arg",
            "a=zeros(20971520):float32",
            "--capture",
            "big.mpcapture",
        ],
    );
    // The run asked for a capture it cannot have: an error (exit 2), not a
    // warning after which the command "succeeded".
    assert_eq!(o.status.code(), Some(2), "{}", err(&o));
    assert!(
        err(&o).contains("capture not written: the arguments take 80.0 MiB (`a` 80.0 MiB), over the capture limit of 64.0 MiB"),
        "{}",
        err(&o)
    );
    assert!(!d.path().join("big.mpcapture").exists());
}

#[test]
fn replay_with_changed_inputs_and_source_and_extract_the_arrays() {
    let d = tempfile::tempdir().unwrap();
    add_run(d.path(), &["--capture", "add.mpcapture"]);
    // The arrays as .npy files: before the run and after.
    let x = bin(d.path(), &["replay", "add.mpcapture", "--extract", "arrays"]);
    assert_eq!(x.status.code(), Some(0), "{}", err(&x));
    for f in ["inputs/a.npy", "inputs/b.npy", "inputs/out.npy", "outputs/out.npy"] {
        let bytes = std::fs::read(d.path().join("arrays").join(f)).unwrap_or_else(|e| panic!("{f}: {e}"));
        assert!(bytes.starts_with(b"\x93NUMPY"), "{f} is an .npy file");
    }
    assert!(out(&x).contains("inputs/a.npy"), "{}", out(&x));
    // A changed input (an .npy file, here the extracted `b`: 5 elements) fixes the read past `a`.
    let r = bin(d.path(), &["replay", "add.mpcapture", "--arg", "a=@arrays/inputs/b.npy"]);
    assert_eq!(r.status.code(), Some(0), "{}{}", out(&r), err(&r));
    assert!(out(&r).contains("changed before replaying"), "{}", out(&r));
    assert!(out(&r).contains("argument `a`: float32 [4] → float32 [5] from `@arrays/inputs/b.npy`"), "{}", out(&r));
    // A changed source: the guard added, the recorded input kept.
    let fixed = ADD.replace("float s = twice(a[i]);", "float s = i < 4 ? twice(a[i]) : 0.0f;");
    std::fs::write(d.path().join("fixed.metal"), fixed).unwrap();
    std::fs::remove_file(d.path().join("twice.h")).unwrap();
    let r = bin(d.path(), &["replay", "add.mpcapture", "--source", "fixed.metal"]);
    assert_eq!(r.status.code(), Some(0), "{}{}", out(&r), err(&r));
    assert!(out(&r).contains("source: `fixed.metal` instead of the captured one"), "{}", out(&r));
    // Unchanged, the capture still reproduces its finding (exit 0: it reproduces).
    assert_eq!(bin(d.path(), &["replay", "add.mpcapture"]).status.code(), Some(0));
    // Mistakes are explained.
    let r = bin(d.path(), &["replay", "add.mpcapture", "--arg", "nope=ones(3):f32"]);
    assert_eq!(r.status.code(), Some(2));
    assert!(err(&r).contains("the capture has no argument `nope`; its arguments are: a, b, out"), "{}", err(&r));
    let r = bin(d.path(), &["replay", "add.mpcapture", "--extract", "arrays", "--source", "fixed.metal"]);
    assert_eq!(r.status.code(), Some(2));
}
