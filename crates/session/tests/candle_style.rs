//! The session from Rust, as a candle-style project's kernel tests would use
//! it: compile a `.metal` file with include roots and function constants,
//! bind slices, dispatch, read outputs and findings. Also PyTorch-style
//! positional binding and the contract's JSON.

use session::{Arg, CompileOptions, Dispatch, DispatchMode, Library, RunOptions};
use std::path::PathBuf;

fn project() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/kernel_project/kernels")
}

fn options(relu: bool) -> CompileOptions {
    CompileOptions {
        include_dirs: vec![project().join("include")],
        function_constants: vec![("use_relu".into(), relu.to_string())],
        ..Default::default()
    }
}

#[test]
fn a_candle_style_kernel_runs_from_slices() {
    let lib = Library::compile_file(&project().join("affine.metal"), &options(false)).unwrap();
    assert_eq!(lib.kernel_names(), vec!["affine_f32", "affine_f16", "sum_rows"]);
    let out = lib
        .kernel("affine_f32")
        .unwrap()
        .call()
        .scalar("n", 4u64)
        .scalar("mul", 2.0f32)
        .scalar("add", 1.0f32)
        .input("input", &[1.0f32, 2.0, 3.0, 4.0])
        .output::<f32>("output", 4)
        .threads([4, 1, 1], [4, 1, 1])
        .run()
        .unwrap();
    assert!(!out.has_errors(), "{}", out.render(false));
    assert_eq!(out.read::<f32>("output").unwrap(), vec![3.0, 5.0, 7.0, 9.0]);
    assert!(out.read::<i32>("output").unwrap_err().contains("dtype float32"));
}

#[test]
fn function_constants_and_half_outputs() {
    let lib = Library::compile_file(&project().join("affine.metal"), &options(true)).unwrap();
    let xs: Vec<half::f16> = [-2.0f32, 0.5, 3.0].iter().map(|&x| half::f16::from_f32(x)).collect();
    let out = lib
        .kernel("affine_f16")
        .unwrap()
        .call()
        .scalar("n", 3u64)
        .scalar("mul", 1.0f32)
        .scalar("add", 0.0f32)
        .input("input", &xs)
        .output::<half::f16>("output", 3)
        .threads([3, 1, 1], [3, 1, 1])
        .run()
        .unwrap();
    let got: Vec<f32> = out.read::<half::f16>("output").unwrap().iter().map(|h| h.to_f32()).collect();
    assert_eq!(got, vec![0.0, 0.5, 3.0]);
}

#[test]
fn a_bug_is_a_finding_with_its_line_and_thread() {
    let lib = Library::compile_file(&project().join("affine.metal"), &options(false)).unwrap();
    // n says 5, the buffers hold 4: thread 4 reads and writes past the end.
    let out = lib
        .kernel("affine_f32")
        .unwrap()
        .call()
        .scalar("n", 5u64)
        .scalar("mul", 1.0f32)
        .scalar("add", 0.0f32)
        .input("input", &[1.0f32; 4])
        .output::<f32>("output", 4)
        .threads([5, 1, 1], [5, 1, 1])
        .run()
        .unwrap();
    assert!(out.has_errors());
    assert_eq!(out.exit_code(), session::EXIT_BAD_RESULT);
    let f = &out.findings()[0];
    assert_eq!(f.kind.name(), "out-of-bounds");
    assert_eq!(f.thread, [4, 0, 0]);
    let json = out.to_json(serde_json::Map::new());
    assert_eq!(json["findings"][0]["line"], 18);
    assert!(json["findings"][0]["file"].as_str().unwrap().ends_with("affine.metal"));
    assert_eq!(json["findings"][0]["source_line"], "    T y = apply_affine(input[tid], mul, add);");
}

#[test]
fn a_missing_parameter_and_a_bad_dispatch_are_usage_errors() {
    let lib = Library::compile_file(&project().join("affine.metal"), &options(false)).unwrap();
    let k = lib.kernel("affine_f32").unwrap();
    let e = k.call().scalar("n", 1u64).threads([1, 1, 1], [1, 1, 1]).run().unwrap_err();
    assert_eq!(e.exit_code(), session::EXIT_CANNOT_START);
    assert!(e.to_string().contains("needs a value for its buffer parameter `mul`"), "{e}");
    let e = lib.kernel("nope").unwrap_err();
    assert!(e.to_string().contains("its kernels are: affine_f32, affine_f16, sum_rows"), "{e}");
    let b = k
        .bind(vec![
            ("n".into(), session::Value::Array(session::Array::from_i64(session::DType::U64, &[], &[1]).unwrap())),
            ("mul".into(), session::Value::Array(session::Array::scalar_f64(session::DType::F32, 1.0))),
            ("add".into(), session::Value::Array(session::Array::scalar_f64(session::DType::F32, 1.0))),
            ("input".into(), session::Value::Array(session::Array::zeros(session::DType::F32, &[1]))),
            ("output".into(), session::Value::Array(session::Array::zeros(session::DType::F32, &[1]))),
        ])
        .unwrap();
    let d = Dispatch { grid: [2048, 1, 1], threadgroup: [2048, 1, 1], mode: DispatchMode::Threads };
    let e = k.run(&b, d, &RunOptions::default()).unwrap_err();
    assert!(e.to_string().contains("1024 threads per threadgroup"), "{e}");
}

#[test]
fn a_compile_error_points_into_the_file() {
    let e = Library::compile("bad.metal", "kernel void k(device float* o [[buffer(0)]]) { o[0] = nope; }", &CompileOptions::default())
        .unwrap_err();
    assert_eq!(e.exit_code(), session::EXIT_BAD_RESULT);
    let doc = e.to_json();
    assert_eq!(doc["diagnostics"][0]["line"], 1);
    assert_eq!(doc["findings"], serde_json::json!([]));
}

const TORCH: &str = r#"
#include <metal_stdlib>
using namespace metal;
kernel void k(device float* y [[buffer(0)]], constant uint& w [[buffer(1)]], constant float& a [[buffer(2)]],
              constant long2& s [[buffer(3)]], uint i [[thread_position_in_grid]]) {
    y[i] = float(w) + a + float(s.x - s.y);
}
"#;

fn torch_run(args: Vec<Arg>) -> Result<session::Outcome, session::Error> {
    let lib = Library::compile("t.metal", TORCH, &CompileOptions::default()).unwrap();
    let k = lib.kernel("k").unwrap();
    let b = k.bind_positional(&args)?;
    k.run(&b, Dispatch { grid: [2, 1, 1], threadgroup: [2, 1, 1], mode: DispatchMode::Threads }, &RunOptions::default())
}

fn y() -> Arg {
    Arg::Array(session::Array::zeros(session::DType::F32, &[2]))
}

#[test]
fn python_scalars_bind_as_pytorch_sends_them() {
    let o = torch_run(vec![y(), Arg::Int(4), Arg::Float(0.5), Arg::Ints(vec![10, 3])]).unwrap();
    assert!(o.warnings.is_empty(), "{:?}", o.warnings);
    assert_eq!(o.read::<f32>("y").unwrap(), vec![11.5, 11.5]);
    assert_eq!(o.outputs[0].position, Some(0));

    // Too large for `uint`: the low 4 bytes are read, with a warning.
    let o = torch_run(vec![y(), Arg::Int((1 << 32) + 2), Arg::Float(0.0), Arg::Ints(vec![0, 0])]).unwrap();
    assert_eq!(o.read::<f32>("y").unwrap(), vec![2.0, 2.0]);
    assert!(o.warnings[0].contains("reads 2 from those bytes as a Mac does, not 4294967298"), "{:?}", o.warnings);

    // An int into a `constant float&`: its bits, as on a Mac.
    let o = torch_run(vec![y(), Arg::Int(0), Arg::Int(1), Arg::Ints(vec![0, 0])]).unwrap();
    assert_eq!(o.read::<f32>("y").unwrap(), vec![f32::from_bits(1); 2]);
    assert!(o.warnings[0].contains("pass a Python float"), "{:?}", o.warnings);

    // Too few bytes for a `constant long2&`, or a scalar into a written buffer: refused.
    let e = torch_run(vec![y(), Arg::Int(0), Arg::Float(0.0), Arg::Ints(vec![1])]).unwrap_err();
    assert!(e.to_string().contains("reads 16 bytes"), "{e}");
    let e = torch_run(vec![Arg::Float(1.0), Arg::Int(0), Arg::Float(0.0), Arg::Ints(vec![0, 0])]).unwrap_err();
    assert!(e.to_string().contains("pass a tensor/array to receive the result"), "{e}");
    let e = torch_run(vec![y(), Arg::Int(0)]).unwrap_err();
    assert!(e.to_string().contains("[[buffer(2)]], but only 2 arguments were passed"), "{e}");
}

#[test]
fn an_mlx_kernel_runs_through_the_session() {
    let k = mlx::MetalKernel::new("twice", &["a"], &["out"], "uint i = thread_position_in_grid.x;\nout[i] = a[i] * 2;", "", true, false)
        .unwrap();
    let a = session::Array::arange(session::DType::F32, &[4]);
    let call = mlx::Call::new(vec![mlx::Input::Array(a)], vec![vec![4]], vec![session::DType::F32], [4, 1, 1], [4, 1, 1]);
    let r = session::run_mlx(&k, &call, &mut |_| {}).unwrap();
    assert_eq!(r.outcome.kernel, "custom_kernel_twice_floatc_float");
    assert_eq!(r.outcome.read::<f32>("out").unwrap(), vec![0.0, 2.0, 4.0, 6.0]);
    let doc = r.outcome.to_json(serde_json::Map::new());
    assert_eq!(doc["findings"], serde_json::json!([]));
}
