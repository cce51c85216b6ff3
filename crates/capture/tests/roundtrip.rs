//! Captures made from MLX calls survive writing and reading, replay to the
//! same outputs and findings, and stay under their size limit.

use arrays::{Array, DType};
use capture::{Capture, OutputCheck, ReplayOptions};

fn kernel(source: &str, row_contiguous: bool) -> mlx::MetalKernel {
    mlx::MetalKernel::new("k", &["inp"], &["out"], source, "", row_contiguous, false).unwrap()
}

fn round_trip(c: &Capture) -> Capture {
    let d = tempfile::tempdir().unwrap();
    let path = d.path().join("c.mpcapture");
    c.write(&path).unwrap();
    Capture::read(&path).unwrap()
}

#[test]
fn strided_inputs_templates_and_nan_init_replay_exactly() {
    // A transposed (strided) view, read through its strides, with a template
    // value and a NaN init_value: all of it must come back as it was.
    let src = "uint i = thread_position_in_grid.x;\nuint r = i / 3, c = i % 3;\nif (i < 5) out[i] = T(inp[r * inp_strides[0] + c * inp_strides[1]]) * SCALE;\n";
    let k = kernel(src, false);
    let a = Array::arange(DType::F32, &[3, 2]).t();
    let mut call = mlx::Call::new(vec![mlx::Input::Array(a)], vec![vec![6]], vec![DType::F32], [6, 1, 1], [4, 1, 1])
        .template("T", mlx::TemplateArg::DType(DType::F32))
        .template("SCALE", mlx::TemplateArg::Int(3));
    call.init_value = Some(f64::NAN);
    let r = k.call(&call).unwrap();
    let c = capture::from_mlx(&k, &call, &r, "test", "strided".into(), capture::DEFAULT_LIMIT).unwrap();
    let back = round_trip(&c);
    let replayed = capture::replay(&back, &ReplayOptions::default()).unwrap();
    let cmp = capture::compare(&back, &replayed);
    assert!(cmp.reproduces(), "{cmp:#?}");
    assert_eq!(replayed.outputs[0].1.to_f64_vec()[..5], r.outputs[0].to_f64_vec()[..5]);
    assert!(replayed.outputs[0].1.to_f64_vec()[5].is_nan());
}

#[test]
fn outputs_over_the_limit_keep_only_a_checksum() {
    let k = kernel("uint i = thread_position_in_grid.x;\nout[i] = inp[i] + 1;\n", true);
    let a = Array::arange(DType::F32, &[64]);
    let call = mlx::Call::new(vec![mlx::Input::Array(a)], vec![vec![64]], vec![DType::F32], [64, 1, 1], [32, 1, 1]);
    let r = k.call(&call).unwrap();
    // Room for the input (256 bytes) but not for the output too.
    let c = capture::from_mlx(&k, &call, &r, "test", "limit".into(), 300).unwrap();
    assert!(c.outputs[0].data.is_none());
    assert_eq!(c.stored_bytes(), 256);
    assert!(c.left_out[0].contains("output `out` (256 bytes) is over the capture limit of 300 bytes"), "{:?}", c.left_out);
    let back = round_trip(&c);
    let replayed = capture::replay(&back, &ReplayOptions::default()).unwrap();
    assert!(capture::compare(&back, &replayed).reproduces());
    // A changed checksum is noticed even without the data.
    let mut edited = back.clone();
    edited.outputs[0].checksum = "0123456789abcdef".into();
    let cmp = capture::compare(&edited, &replayed);
    assert!(matches!(&cmp.outputs[0].1, OutputCheck::Differs(m) if m.contains("checksum")), "{cmp:?}");
    // Inputs over the limit: no capture, and a message that says why.
    let e = capture::from_mlx(&k, &call, &r, "test", "limit".into(), 100).unwrap_err();
    assert!(e.contains("the inputs take 256 bytes (`inp` 256 bytes), over the capture limit of 100 bytes"), "{e}");
}

#[test]
fn findings_are_recorded_with_their_place_and_thread() {
    let k = kernel("uint i = thread_position_in_grid.x;\nout[i] = inp[i + 1];\n", true);
    let a = Array::arange(DType::F32, &[4]);
    let call = mlx::Call::new(vec![mlx::Input::Array(a)], vec![vec![4]], vec![DType::F32], [4, 1, 1], [2, 1, 1]);
    let r = k.call(&call).unwrap();
    let c = capture::from_mlx(&k, &call, &r, "test", "oob".into(), capture::DEFAULT_LIMIT).unwrap();
    assert_eq!(c.findings.len(), 1);
    let f = &c.findings[0];
    assert_eq!((f.kind.as_str(), f.file.as_str(), f.line), ("out-of-bounds", "k.metal", 2));
    assert_eq!((f.thread, f.local, f.threadgroup), ([3, 0, 0], [1, 0, 0], [1, 0, 0]));
    let back = round_trip(&c);
    assert!(capture::compare(&back, &capture::replay(&back, &ReplayOptions::default()).unwrap()).reproduces());
}
