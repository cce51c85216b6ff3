//! End-to-end tests of `metal-puzzles lint` (see the Usage section of README.md):
//! exit 0 for a clean file, 1 for compile errors, 2 when it cannot start.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_metal-puzzles"))
}

fn kernel(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/msl/tests/kernels").join(rel)
}

fn lint(args: &[&str]) -> Output {
    bin().arg("lint").args(args).output().expect("run metal-puzzles")
}

fn code(o: &Output) -> i32 {
    o.status.code().expect("exited with a status")
}

fn show(o: &Output) -> String {
    format!("status {:?}\n--- stdout\n{}\n--- stderr\n{}", o.status, String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

#[test]
fn valid_file_exits_0() {
    let f = kernel("puzzles/01_map.metal");
    let o = lint(&[f.to_str().unwrap()]);
    assert_eq!(code(&o), 0, "{}", show(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains("ok"), "{}", show(&o));
}

#[test]
fn valid_file_json_has_no_errors() {
    let f = kernel("features/vectors.metal");
    let o = lint(&[f.to_str().unwrap(), "--json"]);
    assert_eq!(code(&o), 0, "{}", show(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("stdout is JSON");
    let diags = v["diagnostics"].as_array().expect("diagnostics array");
    assert!(diags.iter().all(|d| d["severity"] != "error"), "{}", show(&o));
}

#[test]
fn invalid_file_exits_1_with_rendered_error() {
    let f = kernel("invalid/undeclared_identifier.metal");
    let o = lint(&[f.to_str().unwrap()]);
    assert_eq!(code(&o), 1, "{}", show(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("error"), "{}", show(&o));
    assert!(err.contains("undeclared_identifier.metal:12:"), "{}", show(&o));
}

#[test]
fn invalid_file_json() {
    let f = kernel("invalid/wrong_arg_count.metal");
    let o = lint(&[f.to_str().unwrap(), "--json"]);
    assert_eq!(code(&o), 1, "{}", show(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("stdout is one JSON document");
    let diags = v["diagnostics"].as_array().expect("`diagnostics` is an array");
    assert!(!diags.is_empty());
    for d in diags {
        assert!(d["severity"] == "error" || d["severity"] == "warning", "{d}");
        assert!(d["message"].is_string(), "{d}");
        assert!(d["line"].is_u64() && d["column"].is_u64(), "{d}");
    }
    let first_error = diags.iter().find(|d| d["severity"] == "error").expect("an error");
    assert_eq!(first_error["line"], 16, "{d}", d = first_error);
    assert!(first_error["column"].as_u64().unwrap() >= 1);
}

#[test]
fn every_invalid_corpus_file_exits_1() {
    let dir = kernel("invalid");
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "metal") {
            let o = lint(&[p.to_str().unwrap(), "--json"]);
            assert_eq!(code(&o), 1, "{}: {}", p.display(), show(&o));
            let want: u64 = std::fs::read_to_string(&p).unwrap().lines().next().unwrap()["// ERROR:".len()..]
                .split(':')
                .next()
                .unwrap()
                .trim()
                .parse()
                .unwrap();
            let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
            let first = v["diagnostics"].as_array().unwrap().iter().find(|d| d["severity"] == "error").cloned();
            assert_eq!(first.map(|d| d["line"].as_u64().unwrap()), Some(want), "{}", p.display());
        }
    }
}

#[test]
fn define_flag_reaches_the_preprocessor() {
    let dir = std::env::temp_dir().join(format!("metal-puzzles-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("needs_define.metal");
    std::fs::write(
        &f,
        "#ifndef N\n#error \"N must be defined\"\n#endif\nkernel void k(device float* o [[buffer(0)]], uint i [[thread_position_in_grid]]) { o[i] = N; }\n",
    )
    .unwrap();
    let o = lint(&[f.to_str().unwrap()]);
    assert_eq!(code(&o), 1, "{}", show(&o));
    let o = lint(&[f.to_str().unwrap(), "-D", "N=4"]);
    assert_eq!(code(&o), 0, "{}", show(&o));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn missing_file_exits_2() {
    let o = lint(&["/definitely/not/here.metal"]);
    assert_eq!(code(&o), 2, "{}", show(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains("cannot read"), "{}", show(&o));
    let o = lint(&["/definitely/not/here.metal", "--json"]);
    assert_eq!(code(&o), 2, "{}", show(&o));
}

#[test]
fn bad_flag_exits_2() {
    let f = kernel("puzzles/01_map.metal");
    let o = lint(&[f.to_str().unwrap(), "--no-such-flag"]);
    assert_eq!(code(&o), 2, "{}", show(&o));
    let o = lint(&[]);
    assert_eq!(code(&o), 2, "missing FILE: {}", show(&o));
    let o = bin().arg("no-such-command").output().unwrap();
    assert_eq!(code(&o), 2, "{}", show(&o));
}

#[test]
fn help_exits_0() {
    let o = bin().arg("--help").output().unwrap();
    assert_eq!(code(&o), 0, "{}", show(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("lint"), "{}", show(&o));
}

/// A library instantiating many kernels: the text names the first eight
/// and counts the rest; `--json` lists every one.
#[test]
fn many_kernels_are_counted_in_text_and_listed_in_json() {
    let dir = std::env::temp_dir().join(format!("mp-lint-many-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut src = String::from("#include <metal_stdlib>\nusing namespace metal;\n");
    src.push_str("template <int N> kernel void k(device int* d [[buffer(0)]], uint i [[thread_position_in_grid]]) { d[i] = N; }\n");
    for n in 0..20 {
        src.push_str(&format!("template [[host_name(\"k{n}\")]] kernel void k<{n}>(device int*, uint);\n"));
    }
    let f = dir.join("many.metal");
    std::fs::write(&f, src).unwrap();
    let o = lint(&[f.to_str().unwrap()]);
    assert_eq!(code(&o), 0, "{}", show(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("ok (20 kernels: k0, k1, k2, k3, k4, k5, k6, k7, and 12 more (`--json` lists them all))"), "{err}");
    let o = lint(&[f.to_str().unwrap(), "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("stdout is JSON");
    let names: Vec<String> = (0..20).map(|n| format!("k{n}")).collect();
    assert_eq!(v["kernels"], serde_json::json!(names));
    let _ = std::fs::remove_dir_all(&dir);
}
