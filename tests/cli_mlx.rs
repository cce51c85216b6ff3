//! `metal-puzzles mlx`: --print-source and a --json run.

use std::process::Command;

const MYEXP: &str = "
        uint elem = thread_position_in_grid.x;
        T tmp = inp[elem];
        out[elem] = metal::exp(tmp);
";

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_metal-puzzles"))
}

fn body_file(dir: &std::path::Path, name: &str, text: &str) -> std::path::PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// A temporary folder, removed when the test ends.
struct Temp(tempfile::TempDir);

impl std::ops::Deref for Temp {
    type Target = std::path::Path;
    fn deref(&self) -> &std::path::Path {
        self.0.path()
    }
}

fn tempdir(tag: &str) -> Temp {
    Temp(tempfile::Builder::new().prefix(&format!("mlx-cli-{tag}-")).tempdir().unwrap())
}

#[test]
fn print_source_matches_mlx() {
    let dir = tempdir("print");
    let body = body_file(&dir, "myexp.metal", MYEXP);
    let out = bin()
        .args(["mlx", body.to_str().unwrap(), "--name", "myexp", "--input", "inp=rand(4,16):f16", "--output", "out:float16:4,16"])
        .args(["--grid", "64", "--threadgroup", "256", "--template", "T=float32", "--print-source"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    let expected = "template <typename T>\n[[kernel]] void custom_kernel_myexp__float_float16_t_float16_t(\n  const device float16_t* inp [[buffer(0)]],\n  device float16_t* out [[buffer(1)]],\n  uint3 thread_position_in_grid [[thread_position_in_grid]]) {\n".to_string()
        + MYEXP
        + "\n}\n\ntemplate [[host_name(\"custom_kernel_myexp__float_float16_t_float16_t\")]] [[kernel]] decltype(custom_kernel_myexp__float_float16_t_float16_t<float>) custom_kernel_myexp__float_float16_t_float16_t<float>;\n";
    assert_eq!(text, expected);
}

#[test]
fn json_run_with_outputs_and_counts() {
    let dir = tempdir("json");
    let body = body_file(&dir, "myexp.metal", MYEXP);
    let outdir = dir.join("out");
    let out = bin()
        .args(["mlx", body.to_str().unwrap(), "--name", "myexp", "--input", "inp=ones(4,16):f16", "--output", "out:float16:4,16"])
        .args(["--grid", "64", "--threadgroup", "256", "--template", "T=float32", "--json", "--counts", "--out", outdir.to_str().unwrap()])
        .env("VERBOSE", "1")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("stdout is one JSON document");
    assert_eq!(doc["diagnostics"], serde_json::json!([]));
    assert_eq!(doc["findings"], serde_json::json!([]));
    assert_eq!(doc["counts"]["global_reads"], 1);
    assert_eq!(doc["counts"]["global_writes"], 1);
    let path = doc["outputs"]["out"].as_str().unwrap();
    assert!(std::path::Path::new(path).exists());
    // VERBOSE=1 goes to stderr with --json.
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("Generated source code for `custom_kernel_myexp__float_float16_t_float16_t`:\n```\n"), "{err}");

    // A run with a finding: line numbers are the body file's.
    let out = bin()
        .args(["mlx", body.to_str().unwrap(), "--name", "myexp", "--input", "inp=ones(6):f32", "--output", "out:float32:6"])
        .args(["--grid", "8", "--threadgroup", "8", "--template", "T=float32", "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let f = &doc["findings"][0];
    assert_eq!(f["kind"], "out-of-bounds");
    assert_eq!(f["line"], 3);

    // Bad arguments exit 2 and name the argument.
    let out = bin()
        .args(["mlx", body.to_str().unwrap(), "--input", "inp=ones(6):f32", "--output", "out:float16:6", "--atomic-outputs"])
        .args(["--grid", "8", "--threadgroup", "8", "--template", "T=float32"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("output `out`"));

    // Compile errors exit 1 with diagnostics in the body file.
    let out = bin()
        .args(["mlx", body.to_str().unwrap(), "--input", "inp=ones(6):f32", "--output", "out:float32:6"])
        .args(["--grid", "8", "--threadgroup", "8", "--template", "T=4", "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["diagnostics"][0]["line"], 3);
    assert!(doc["diagnostics"][0]["file"].as_str().unwrap().ends_with("myexp.metal"));
}

#[test]
fn workspace_file_with_header_marker() {
    let dir = tempdir("marker");
    let body = body_file(
        &dir,
        "scale.metal",
        "constant float SCALE = 2.0f;\n// ---- body ----\nuint i = thread_position_in_grid.x;\nout[i] = a[i] * SCALE + oops;\n",
    );
    let out = bin()
        .args([
            "mlx",
            body.to_str().unwrap(),
            "--input",
            "a=ones(4):f32",
            "--output",
            "out:float32:4",
            "--grid",
            "4",
            "--threadgroup",
            "4",
            "--json",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["diagnostics"][0]["line"], 4);
    let out = bin()
        .args([
            "mlx",
            body.to_str().unwrap(),
            "--input",
            "a=ones(4):f32",
            "--output",
            "out:float32:4",
            "--grid",
            "4",
            "--threadgroup",
            "4",
            "--print-source",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.starts_with("constant float SCALE = 2.0f;\n[[kernel]] void custom_kernel_scale_floatc_float(\n"), "{text}");
}

#[test]
fn output_elements_no_thread_writes_are_a_warning() {
    let dir = tempdir("unwritten");
    let body = body_file(&dir, "myexp.metal", MYEXP);
    // 48 threads for 64 elements: the last 16 are never written.
    let args = ["--grid", "48", "--threadgroup", "16", "--template", "T=float32"];
    let base = ["mlx", body.to_str().unwrap(), "--name", "myexp", "--input", "inp=ones(4,16):f32", "--output", "out:float32:4,16"];
    let out = bin().args(base).args(args).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "a warning, not an error");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("warning: 16 of the 64 elements of output `out` were never written (the first is `out[3, 0]`)"), "{err}");
    let out = bin().args(base).args(args).arg("--json").output().unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(doc["warnings"][0].as_str().unwrap().starts_with("16 of the 64 elements of output `out`"), "{doc}");
    // With init_value every element has a value: no warning.
    let out = bin().args(base).args(args).args(["--init-value", "0"]).output().unwrap();
    assert!(!String::from_utf8_lossy(&out.stderr).contains("never written"));
}
