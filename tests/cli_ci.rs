//! End-to-end tests of the CI-facing command line: `test DIR` on a sample
//! kernel project (text, JSON, JUnit, shards), `lint --format github|sarif`
//! and `run --junit`, with the exit codes of docs/exit-codes.md.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_metal-puzzles"))
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn fixture(rel: &str) -> PathBuf {
    root().join("tests/fixtures").join(rel)
}

fn run(args: &[&str]) -> Output {
    bin().args(args).output().expect("run metal-puzzles")
}

fn code(o: &Output) -> i32 {
    o.status.code().expect("exited with a status")
}

fn show(o: &Output) -> String {
    format!("status {:?}\n--- stdout\n{}\n--- stderr\n{}", o.status, String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn a_sample_project_passes() {
    let dir = fixture("kernel_project");
    let o = run(&["test", dir.to_str().unwrap()]);
    assert_eq!(code(&o), 0, "{}", show(&o));
    let out = stdout(&o);
    assert!(out.contains("affine.test.toml::affine f16 with relu ... ok"), "{}", show(&o));
    assert!(out.trim_end().ends_with("3 passed, 0 failed"), "{}", show(&o));
}

#[test]
fn a_planted_bug_fails_with_its_line_in_every_format() {
    let dir = fixture("kernel_project_bad");
    let o = run(&["test", dir.to_str().unwrap()]);
    assert_eq!(code(&o), 1, "{}", show(&o));
    let out = stdout(&o);
    assert!(out.contains("off by one ... FAILED"), "{}", show(&o));
    assert!(out.contains("out-of-bounds at line 6"), "{}", show(&o));
    assert!(out.contains("out[3] is 6, expected 7"), "{}", show(&o));
    assert!(out.trim_end().ends_with("0 passed, 2 failed"), "{}", show(&o));

    let o = run(&["test", dir.to_str().unwrap(), "--format", "json"]);
    assert_eq!(code(&o), 1, "{}", show(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    let first = &v["tests"][0];
    assert_eq!(first["status"], "failed");
    assert_eq!(first["findings"][0]["kind"], "out-of-bounds");
    assert_eq!(first["findings"][0]["line"], 6);
    assert_eq!(first["findings"][0]["thread"], serde_json::json!([8, 0, 0]));
    assert_eq!(v["failed"], 2);

    let tmp = tempfile::tempdir().unwrap();
    let report = tmp.path().join("reports/junit.xml");
    let o = run(&["test", dir.to_str().unwrap(), "--junit", report.to_str().unwrap()]);
    assert_eq!(code(&o), 1, "{}", show(&o));
    let xml = std::fs::read_to_string(&report).unwrap();
    assert!(xml.contains("<testsuite name=\"metal-puzzles test\" tests=\"2\" failures=\"2\""), "{xml}");
    assert!(xml.contains("<failure message=\"out-of-bounds at line 6"), "{xml}");
    assert!(xml.contains("testcase name=\"off by one\""), "{xml}");

    let o = run(&["test", dir.to_str().unwrap(), "--format", "github"]);
    let out = stdout(&o);
    assert!(out.contains("::error file=") && out.contains("bad.metal,line=6,col="), "{}", show(&o));
    assert!(out.contains("metal-tests.toml,line=1,col=1,title=metal-puzzles%3A kernel-test::wrong values"), "{}", show(&o));
}

#[test]
fn shards_split_the_suite_without_overlap() {
    let dir = fixture("kernel_project");
    let names = |shard: &str| -> Vec<String> {
        let o = run(&["test", dir.to_str().unwrap(), "--shard", shard, "--format", "json"]);
        assert_eq!(code(&o), 0, "{}", show(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        v["tests"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_string()).collect()
    };
    let (a, b) = (names("1/2"), names("2/2"));
    assert_eq!(a.len() + b.len(), 3);
    assert!(a.iter().all(|n| !b.contains(n)));
    assert_eq!(names("3/3").len(), 1);
    let o = run(&["test", dir.to_str().unwrap(), "--shard", "3/2"]);
    assert_eq!(code(&o), 2, "{}", show(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains("K/N"), "{}", show(&o));
}

#[test]
fn test_cannot_start_without_specs_or_with_a_bad_spec() {
    let tmp = tempfile::tempdir().unwrap();
    let o = run(&["test", tmp.path().to_str().unwrap()]);
    assert_eq!(code(&o), 2, "{}", show(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no kernel test specs"), "{}", show(&o));
    std::fs::write(
        tmp.path().join("k.test.toml"),
        "file = \"k.metal\"\n[[test]]\nkernel = \"k\"\ngrid = [1]\nthreadgroup = [1]\nbogus = 1\n",
    )
    .unwrap();
    let o = run(&["test", tmp.path().to_str().unwrap()]);
    assert_eq!(code(&o), 2, "{}", show(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains("bogus"), "{}", show(&o));
}

#[test]
fn a_missing_parameter_is_an_error_naming_it() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::copy(fixture("kernel_project_bad/bad.metal"), tmp.path().join("bad.metal")).unwrap();
    std::fs::write(
        tmp.path().join("metal-tests.toml"),
        "file = \"bad.metal\"\n[[test]]\nkernel = \"twice\"\ngrid = [4]\nthreadgroup = [4]\ninputs = { a = \"arange(4):float32\" }\n",
    )
    .unwrap();
    let o = run(&["test", tmp.path().to_str().unwrap()]);
    assert_eq!(code(&o), 1, "{}", show(&o));
    assert!(stdout(&o).contains("ERROR") && stdout(&o).contains("needs a value for its buffer parameter `out`"), "{}", show(&o));
}

const BUGGY: &str = "#include <metal_stdlib>\nusing namespace metal;\nkernel void k(device float* o [[buffer(0)]], uint i [[thread_position_in_grid]]) {\n    o[i] = undeclared;\n}\n";

#[test]
fn lint_github_annotates_the_offending_line() {
    let tmp = tempfile::tempdir().unwrap();
    let f = tmp.path().join("k.metal");
    std::fs::write(&f, BUGGY).unwrap();
    let o = run(&["lint", f.to_str().unwrap(), "--format", "github"]);
    assert_eq!(code(&o), 1, "{}", show(&o));
    let out = stdout(&o);
    assert!(out.starts_with("::error file="), "{}", show(&o));
    assert!(out.contains("k.metal,line=4,col=12,title=metal-puzzles%3A "), "{}", show(&o));
    assert!(out.contains("undeclared"), "{}", show(&o));
    assert_eq!(out.lines().count(), 1, "{}", show(&o));
}

/// The parts of SARIF 2.1.0 that the schema requires and code scanning reads.
fn check_sarif(v: &serde_json::Value) {
    assert_eq!(v["version"], "2.1.0");
    assert!(v["$schema"].as_str().unwrap().contains("sarif-2.1.0"));
    let runs = v["runs"].as_array().expect("runs is an array");
    assert_eq!(runs.len(), 1);
    let driver = &runs[0]["tool"]["driver"];
    assert!(driver["name"].is_string());
    let rules: Vec<&str> = driver["rules"].as_array().unwrap().iter().map(|r| r["id"].as_str().unwrap()).collect();
    for r in runs[0]["results"].as_array().unwrap() {
        assert!(r["message"]["text"].as_str().is_some_and(|t| !t.is_empty()));
        assert!(["none", "note", "warning", "error"].contains(&r["level"].as_str().unwrap()));
        let id = r["ruleId"].as_str().unwrap();
        assert_eq!(rules[r["ruleIndex"].as_u64().unwrap() as usize], id);
        for loc in r["locations"].as_array().unwrap() {
            let p = &loc["physicalLocation"];
            assert!(p["artifactLocation"]["uri"].as_str().is_some_and(|u| !u.contains('\\') && !u.contains(' ')));
            assert!(p["region"]["startLine"].as_u64().unwrap() >= 1);
            assert!(p["region"]["startColumn"].as_u64().unwrap() >= 1);
        }
    }
}

#[test]
fn lint_sarif_is_a_valid_log() {
    let tmp = tempfile::tempdir().unwrap();
    let f = tmp.path().join("k.metal");
    std::fs::write(&f, BUGGY).unwrap();
    let o = run(&["lint", f.to_str().unwrap(), "--format", "sarif"]);
    assert_eq!(code(&o), 1, "{}", show(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("SARIF is JSON");
    check_sarif(&v);
    let r = &v["runs"][0]["results"][0];
    assert_eq!(r["level"], "error");
    assert_eq!(r["locations"][0]["physicalLocation"]["region"]["startLine"], 4);

    let ok = fixture("kernel_project_bad/bad.metal");
    let o = run(&["lint", ok.to_str().unwrap(), "--format", "sarif"]);
    assert_eq!(code(&o), 0, "{}", show(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    check_sarif(&v);
    assert_eq!(v["runs"][0]["results"].as_array().unwrap().len(), 0);
}

#[test]
fn run_junit_has_one_case_per_kernel() {
    let tmp = tempfile::tempdir().unwrap();
    let report = tmp.path().join("run.xml");
    let f = fixture("kernel_project_bad/bad.metal");
    let args = ["run", f.to_str().unwrap(), "--kernel", "copy", "--grid", "9", "--threadgroup", "9"];
    let o = bin()
        .args(args)
        .args(["--arg", "a=arange(8):f32", "--arg", "out=zeros(8):f32", "--junit", report.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(code(&o), 1, "{}", show(&o));
    let xml = std::fs::read_to_string(&report).unwrap();
    assert!(xml.contains("tests=\"1\" failures=\"1\""), "{xml}");
    assert!(xml.contains("<testcase name=\"copy\""), "{xml}");
    assert!(xml.contains("out-of-bounds at line 6"), "{xml}");
}

#[test]
fn check_junit_lists_the_puzzles_tests() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    let o = run(&["init", ws.to_str().unwrap()]);
    assert_eq!(code(&o), 0, "{}", show(&o));
    let report = tmp.path().join("check.xml");
    let o = run(&["check", "1", "--dir", ws.to_str().unwrap(), "--junit", report.to_str().unwrap()]);
    assert_eq!(code(&o), 1, "{}", show(&o));
    let xml = std::fs::read_to_string(&report).unwrap();
    assert!(xml.contains("<testcase name=\"map: "), "{xml}");
    assert!(xml.contains("<failure"), "{xml}");
}
