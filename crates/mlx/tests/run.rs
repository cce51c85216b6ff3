//! End-to-end: MLX kernels run on the simulator, checked against Rust references.

use arrays::{Array, DType};
use gpu::FindingKind;
use mlx::{Call, CallResult, Input, MetalKernel, MlxError, TemplateArg};

/// The body of one of the generated-form kernels in the msl test corpus
/// (between the signature's `) {` line and the closing `}`).
fn corpus_body(name: &str) -> String {
    let path = format!("{}/../msl/tests/kernels/mlx/{name}.metal", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap();
    let start = text.find("[[kernel]]").unwrap();
    let open = start + text[start..].find(") {\n").unwrap() + 4;
    let close = text[open..].find("\n}\n").unwrap() + open;
    text[open..close].to_string()
}

fn ok(r: Result<CallResult, MlxError>) -> CallResult {
    let r = r.unwrap_or_else(|e| panic!("{}", e.render(false)));
    let errors: Vec<_> = r.report.findings.iter().filter(|f| f.is_error).collect();
    assert!(errors.is_empty(), "findings: {:#?}", errors);
    r
}

fn assert_close(got: &Array, want: &[f64], tol: f64) {
    let g = got.to_f64_vec();
    assert_eq!(g.len(), want.len());
    for (i, (a, b)) in g.iter().zip(want).enumerate() {
        assert!((a - b).abs() <= tol * (1.0 + b.abs()), "element {i}: got {a}, want {b}");
    }
}

const MYEXP: &str = "
        uint elem = thread_position_in_grid.x;
        T tmp = inp[elem];
        out[elem] = metal::exp(tmp);
";

#[test]
fn myexp_float16() {
    let k = MetalKernel::new("myexp", &["inp"], &["out"], MYEXP, "", true, false).unwrap();
    let a = Array::rand(DType::F32, &[4, 16], 7).astype(DType::F16);
    let call = Call::new(vec![Input::Array(a.clone())], vec![vec![4, 16]], vec![DType::F16], [64, 1, 1], [256, 1, 1])
        .template("T", TemplateArg::DType(DType::F32));
    let r = ok(k.call(&call));
    assert_eq!(r.generated.kernel_name, "custom_kernel_myexp__float_float16_t_float16_t");
    assert_eq!(r.outputs[0].dtype, DType::F16);
    let want: Vec<f64> = a.to_f64_vec().iter().map(|x| x.exp()).collect();
    assert_close(&r.outputs[0], &want, 1e-3);
}

const MYEXP_STRIDED: &str = "
        uint elem = thread_position_in_grid.x;
        // Utils from the preamble map the flat index to the strided location
        uint loc = elem_to_loc(elem, inp_shape, inp_strides, inp_ndim);
        T tmp = inp[loc];
        out[elem] = metal::exp(tmp);
";

#[test]
fn myexp_strided_view() {
    let base = Array::rand(DType::F32, &[4, 16], 3).astype(DType::F16);
    let view = base.slice_opt(0, None, None, 2).unwrap();
    assert_eq!(view.shape, vec![2, 16]);
    assert!(!view.is_row_contiguous());
    let want: Vec<f64> = view.to_f64_vec().iter().map(|x| x.exp()).collect();
    for contiguous in [true, false] {
        let k = MetalKernel::new("myexp_strided", &["inp"], &["out"], MYEXP_STRIDED, "", contiguous, false).unwrap();
        let call = Call::new(vec![Input::Array(view.clone())], vec![vec![2, 16]], vec![DType::F16], [32, 1, 1], [256, 1, 1])
            .template("T", TemplateArg::DType(DType::F32));
        let r = ok(k.call(&call));
        assert_close(&r.outputs[0], &want, 1e-3);
    }
}

/// Bilinear sampling (zero padding, align_corners=False), channels last.
fn grid_sample_ref(x: &Array, grid: &Array) -> Vec<f64> {
    let (b, h, w, c) = (x.shape[0], x.shape[1], x.shape[2], x.shape[3]);
    let (gh, gw) = (grid.shape[1], grid.shape[2]);
    let xv = x.to_f64_vec();
    let gv = grid.to_f64_vec();
    let mut out = vec![0.0; b * gh * gw * c];
    for p in 0..b * gh * gw {
        let bi = p / (gh * gw);
        let px = ((gv[2 * p] + 1.0) * w as f64 - 1.0) / 2.0;
        let py = ((gv[2 * p + 1] + 1.0) * h as f64 - 1.0) / 2.0;
        let (x0, y0) = (px.floor(), py.floor());
        for ch in 0..c {
            let mut v = 0.0;
            for (dy, dx) in [(0.0, 0.0), (0.0, 1.0), (1.0, 0.0), (1.0, 1.0)] {
                let (xi, yi) = (x0 + dx, y0 + dy);
                let wgt = (1.0 - (px - xi).abs()) * (1.0 - (py - yi).abs());
                if xi >= 0.0 && xi < w as f64 && yi >= 0.0 && yi < h as f64 {
                    v += wgt * xv[((bi * h + yi as usize) * w + xi as usize) * c + ch];
                }
            }
            out[p * c + ch] = v;
        }
    }
    out
}

fn grid_input(shape: &[usize], seed: u64) -> Array {
    let r = Array::rand(DType::F32, shape, seed).to_f64_vec();
    Array::from_f64(DType::F32, shape, &r.iter().map(|v| v * 2.2 - 1.1).collect::<Vec<_>>()).unwrap()
}

#[test]
fn grid_sample_forward() {
    let x = Array::rand(DType::F32, &[2, 8, 8, 4], 11);
    let grid = grid_input(&[2, 5, 5, 2], 12);
    let k = MetalKernel::new("grid_sample", &["x", "grid"], &["out"], &corpus_body("grid_sample_fwd"), "", true, false).unwrap();
    let call = Call::new(vec![x.clone().into(), grid.clone().into()], vec![vec![2, 5, 5, 4]], vec![DType::F32], [200, 1, 1], [256, 1, 1]);
    let r = ok(k.call(&call));
    assert_close(&r.outputs[0], &grid_sample_ref(&x, &grid), 1e-5);
}

#[test]
fn grid_sample_vjp_atomic() {
    let (b, h, w, c, gh, gw) = (1usize, 4usize, 4usize, 32usize, 3usize, 3usize);
    let x = Array::rand(DType::F32, &[b, h, w, c], 21);
    let grid = grid_input(&[b, gh, gw, 2], 22);
    let cot = Array::rand(DType::F32, &[b, gh, gw, c], 23);
    let k = MetalKernel::new(
        "grid_sample_grad",
        &["x", "grid", "cotangent"],
        &["x_grad", "grid_grad"],
        &corpus_body("grid_sample_vjp"),
        "",
        true,
        true,
    )
    .unwrap();
    let call = Call::new(
        vec![x.clone().into(), grid.clone().into(), cot.clone().into()],
        vec![vec![b, h, w, c], vec![b, gh, gw, 2]],
        vec![DType::F32, DType::F32],
        [(b * gh * gw * c) as u32, 1, 1],
        [256, 1, 1],
    )
    .init_value(0.0);
    let r = ok(k.call(&call));
    // Reference: d/dx is the scatter of the bilinear weights; d/dgrid by
    // central differences of <cot, forward(x, grid)>.
    let cv = cot.to_f64_vec();
    let mut xg = vec![0.0; b * h * w * c];
    for i in 0..xg.len() {
        let mut xe = vec![0.0; xg.len()];
        xe[i] = 1.0;
        let e = Array::from_f64(DType::F32, &x.shape, &xe).unwrap();
        xg[i] = grid_sample_ref(&e, &grid).iter().zip(&cv).map(|(a, b)| a * b).sum();
    }
    assert_close(&r.outputs[0], &xg, 1e-4);
    let gv = grid.to_f64_vec();
    let f = |g: &[f64]| -> f64 {
        let ga = Array::from_f64(DType::F32, &grid.shape, g).unwrap();
        let ga64: Vec<f64> = g.to_vec();
        let _ = ga64;
        grid_sample_ref(&x, &ga).iter().zip(&cv).map(|(a, b)| a * b).sum()
    };
    let mut gg = vec![0.0; gv.len()];
    for i in 0..gv.len() {
        let eps = 1e-3;
        let mut p = gv.clone();
        p[i] += eps;
        let mut m = gv.clone();
        m[i] -= eps;
        gg[i] = (f(&p) - f(&m)) / (2.0 * eps);
    }
    assert_close(&r.outputs[1], &gg, 2e-2);
}

#[test]
fn simd_sum_then_atomic_from_lane_zero() {
    let body = "
    uint i = thread_position_in_grid.x;
    float v = i < uint(a_shape[0]) ? a[i] : 0.0f;
    v = simd_sum(v);
    if (thread_index_in_simdgroup == 0) {
        atomic_fetch_add_explicit(&out[0], v, memory_order_relaxed);
    }
";
    let a = Array::rand(DType::F32, &[300], 5);
    let k = MetalKernel::new("total", &["a"], &["out"], body, "", true, true).unwrap();
    let call = Call::new(vec![a.clone().into()], vec![vec![1]], vec![DType::F32], [320, 1, 1], [128, 1, 1]).init_value(0.0);
    let r = ok(k.call(&call));
    assert_close(&r.outputs[0], &[a.to_f64_vec().iter().sum()], 1e-5);
}

#[test]
fn scatter_add_atomic_outputs() {
    let values = Array::rand(DType::F32, &[64], 9);
    let idx: Vec<i64> = (0..64).map(|i| (i * 7) % 10).collect();
    let indices = Array::from_i64(DType::I32, &[64], &idx).unwrap();
    let k = MetalKernel::new("scatter_add", &["values", "indices"], &["out"], &corpus_body("scatter_add_atomic"), "", true, true).unwrap();
    let call =
        Call::new(vec![values.clone().into(), indices.into()], vec![vec![10]], vec![DType::F32], [64, 1, 1], [32, 1, 1]).init_value(0.0);
    let r = ok(k.call(&call));
    let mut want = vec![0.0; 10];
    for (v, &i) in values.to_f64_vec().iter().zip(&idx) {
        want[i as usize] += v;
    }
    assert_close(&r.outputs[0], &want, 1e-5);
}

#[test]
fn row_softmax_simd_and_threadgroup_memory() {
    let inp = Array::rand(DType::F32, &[4, 100], 31);
    let k = MetalKernel::new("softmax_rows", &["inp"], &["out"], &corpus_body("softmax_rows"), "", true, false).unwrap();
    let call = Call::new(vec![inp.clone().into()], vec![vec![4, 100]], vec![DType::F32], [512, 1, 1], [128, 1, 1]);
    let r = ok(k.call(&call));
    let v = inp.to_f64_vec();
    let mut want = Vec::new();
    for row in v.chunks(100) {
        let m = row.iter().cloned().fold(f64::MIN, f64::max);
        let s: f64 = row.iter().map(|x| (x - m).exp()).sum();
        want.extend(row.iter().map(|x| (x - m).exp() / s));
    }
    assert_close(&r.outputs[0], &want, 1e-5);
}

const MVMR: &str = "
    uint linear = thread_position_in_grid.x;
    uint T = uint(a_shape[0]);
    uint G = uint(a_shape[1]);
    uint M = uint(a_shape[2]);
    uint C = uint(a_shape[3]);
    if (linear >= T * G * M) {
        return;
    }
    uint t = linear / (G * M);
    uint g = (linear / M) % G;
    uint m = linear % M;
    uint row = b_idx[t];
    float acc = 0.0f;
    for (uint c = 0; c < C; ++c) {
        acc += a[((t * G + g) * M + m) * C + c] * b[(row * G + g) * C + c];
    }
    uint k = (o_idx[t] * G + g) * M + m;
    atomic_fetch_add_explicit((device atomic_float*)&out[k], acc, memory_order_relaxed);
";

#[test]
fn mvmr_sparse_matvec_with_duplicate_outputs() {
    let (t, g, m, c, nb, k_out) = (6usize, 2usize, 3usize, 5usize, 3usize, 2usize);
    let a = Array::rand(DType::F32, &[t, g, m, c], 41);
    let b = Array::rand(DType::F32, &[nb, g, c], 42);
    let b_idx_v: Vec<i64> = (0..t as i64).map(|i| i % nb as i64).collect();
    let o_idx_v: Vec<i64> = vec![0, 1, 0, 1, 1, 0];
    let b_idx = Array::from_i64(DType::U32, &[t], &b_idx_v).unwrap();
    let o_idx = Array::from_i64(DType::U32, &[t], &o_idx_v).unwrap();
    let kern = MetalKernel::new("mvmr", &["a", "b", "b_idx", "o_idx"], &["out"], MVMR, "", true, false).unwrap();
    let call = Call::new(
        vec![a.clone().into(), b.clone().into(), b_idx.into(), o_idx.into()],
        vec![vec![k_out, g, m]],
        vec![DType::F32],
        [64, 1, 1],
        [32, 1, 1],
    )
    .init_value(0.0);
    let r = ok(kern.call(&call));
    let (av, bv) = (a.to_f64_vec(), b.to_f64_vec());
    let mut want = vec![0.0; k_out * g * m];
    for ti in 0..t {
        for gi in 0..g {
            for mi in 0..m {
                let s: f64 = (0..c).map(|ci| av[((ti * g + gi) * m + mi) * c + ci] * bv[((b_idx_v[ti] as usize) * g + gi) * c + ci]).sum();
                want[((o_idx_v[ti] as usize) * g + gi) * m + mi] += s;
            }
        }
    }
    assert_close(&r.outputs[0], &want, 1e-5);
}

#[test]
fn scalars_become_0d_inputs() {
    let body = "uint i = thread_position_in_grid.x; out[i] = a[i] * s + float(n) + (flag ? 1.0f : 0.0f);";
    let k = MetalKernel::new("scalars", &["a", "s", "n", "flag"], &["out"], body, "", true, false).unwrap();
    let a = Array::arange(DType::F32, &[4]);
    let call = Call::new(
        vec![a.into(), Input::Float(0.5), Input::Int(3), Input::Bool(true)],
        vec![vec![4]],
        vec![DType::F32],
        [4, 1, 1],
        [4, 1, 1],
    );
    let r = ok(k.call(&call));
    assert_eq!(r.generated.kernel_name, "custom_kernel_scalars_floatc_floats_int32_ts_bools_float");
    assert_close(&r.outputs[0], &[4.0, 4.5, 5.0, 5.5], 0.0);
    // An int that does not fit int32 becomes int64.
    assert_eq!(Input::Int(1 << 40).to_array().dtype, DType::I64);
}

#[test]
fn unwritten_output_is_an_uninitialized_read() {
    let body = "uint i = thread_position_in_grid.x; if (i > 0) { out[i] = out[i - 1] + a[i]; } ";
    let k = MetalKernel::new("uninit", &["a"], &["out"], body, "", true, false).unwrap();
    let call = Call::new(vec![Array::arange(DType::F32, &[16]).into()], vec![vec![16]], vec![DType::F32], [16, 1, 1], [16, 1, 1]);
    let r = k.call(&call).unwrap();
    let f = r.report.findings.iter().find(|f| f.kind == FindingKind::UninitializedRead).expect("an uninitialized read");
    // The finding points into the body file.
    assert_eq!(r.sources.file(f.span.file).name, "uninit.metal");
    assert!(r.sources.snippet(f.span).contains("out[i - 1]"), "{:?}", r.sources.snippet(f.span));
    // With init_value the same kernel is fine (it reads the initial value).
    let r = k.call(&call.clone().init_value(0.0)).unwrap();
    assert!(!r.report.findings.iter().any(|f| f.kind == FindingKind::UninitializedRead));
}

#[test]
fn out_of_bounds_points_at_user_body_line() {
    let body = "\n    uint i = thread_position_in_grid.x;\n    out[i] = a[i + 1];\n";
    let k = MetalKernel::new("oob", &["a"], &["out"], body, "", true, false).unwrap();
    let call = Call::new(vec![Array::arange(DType::F32, &[16]).into()], vec![vec![16]], vec![DType::F32], [16, 1, 1], [16, 1, 1]);
    let r = k.call(&call).unwrap();
    let f = r.report.findings.iter().find(|f| f.kind == FindingKind::OutOfBounds).expect("out of bounds");
    assert_eq!(r.sources.file(f.span.file).name, "oob.metal");
    assert_eq!(r.sources.line_col(f.span).0, 3);
}

#[test]
fn counts_are_reported() {
    let k = MetalKernel::new(
        "cnt",
        &["a"],
        &["out"],
        "uint i = thread_position_in_grid.x; out[i] = a[i] + a[i] + a_shape[0];",
        "",
        true,
        false,
    )
    .unwrap();
    let mut call = Call::new(vec![Array::arange(DType::F32, &[8]).into()], vec![vec![8]], vec![DType::F32], [8, 1, 1], [8, 1, 1]);
    call.count = true;
    let r = ok(k.call(&call));
    let c = r.report.max_counts.expect("counts");
    assert_eq!(c.device_writes, 1);
    assert!(c.device_reads <= 2, "shape reads are not counted: {c:?}");
}

// ---- bad input -------------------------------------------------------------

fn argument_error(r: Result<CallResult, MlxError>) -> String {
    match r {
        Err(MlxError::Argument(m)) => m,
        Err(e) => panic!("expected an argument error, got {}", e.render(false)),
        Ok(_) => panic!("expected an argument error"),
    }
}

fn compile_error(r: Result<CallResult, MlxError>) -> String {
    match r {
        Err(e @ MlxError::Compile { .. }) => e.render(false),
        Err(e) => panic!("expected a compile error, got {e}"),
        Ok(_) => panic!("expected a compile error"),
    }
}

#[test]
fn wrong_number_of_inputs_and_outputs() {
    let k = MetalKernel::new("myexp", &["inp"], &["out"], MYEXP, "", true, false).unwrap();
    let a = Array::arange(DType::F32, &[8]);
    let call = Call::new(vec![a.clone().into(), a.clone().into()], vec![vec![8]], vec![DType::F32], [8, 1, 1], [8, 1, 1])
        .template("T", TemplateArg::DType(DType::F32));
    let m = argument_error(k.call(&call));
    assert!(m.starts_with("inputs:") && m.contains("inp"), "{m}");
    let call = Call::new(vec![a.clone().into()], vec![vec![8], vec![8]], vec![DType::F32], [8, 1, 1], [8, 1, 1]);
    let m = argument_error(k.call(&call));
    assert!(m.starts_with("output_shapes:") && m.contains("out"), "{m}");
    let call = Call::new(vec![a.into()], vec![vec![8]], vec![], [8, 1, 1], [8, 1, 1]);
    let m = argument_error(k.call(&call));
    assert!(m.starts_with("output_dtypes:"), "{m}");
}

#[test]
fn dtype_the_kernel_cannot_take() {
    let body = "uint i = thread_position_in_grid.x; out[i] = inp[i] >> 1;";
    let k = MetalKernel::new("shift", &["inp"], &["out"], body, "", true, false).unwrap();
    let call = Call::new(vec![Array::arange(DType::F32, &[8]).into()], vec![vec![8]], vec![DType::I32], [8, 1, 1], [8, 1, 1]);
    let text = compile_error(k.call(&call));
    assert!(text.contains("shift.metal:1:"), "{text}");
    assert!(text.contains("input `inp` is float32"), "{text}");
    // With an integer input it runs.
    let call = Call::new(vec![Array::arange(DType::I32, &[8]).into()], vec![vec![8]], vec![DType::I32], [8, 1, 1], [8, 1, 1]);
    ok(k.call(&call));
}

#[test]
fn atomic_float16_output_is_refused() {
    let k =
        MetalKernel::new("acc", &["a"], &["total"], "atomic_fetch_add_explicit(&total[0], a[0], memory_order_relaxed);", "", true, true)
            .unwrap();
    let call =
        Call::new(vec![Array::arange(DType::F16, &[8]).into()], vec![vec![1]], vec![DType::F16], [8, 1, 1], [8, 1, 1]).init_value(0.0);
    let m = argument_error(k.call(&call));
    assert!(m.contains("output `total`") && m.contains("float16") && m.contains("atomic"), "{m}");
}

#[test]
fn threadgroup_over_the_limit() {
    let k = MetalKernel::new("myexp", &["inp"], &["out"], MYEXP, "", true, false).unwrap();
    let call = Call::new(vec![Array::arange(DType::F32, &[8]).into()], vec![vec![8]], vec![DType::F32], [4096, 1, 1], [64, 32, 1])
        .template("T", TemplateArg::DType(DType::F32));
    let m = argument_error(k.call(&call));
    assert!(m.starts_with("threadgroup:") && m.contains("2048") && m.contains("1024"), "{m}");
}

#[test]
fn template_value_of_the_wrong_kind() {
    let k = MetalKernel::new("myexp", &["inp"], &["out"], MYEXP, "", true, false).unwrap();
    let call = Call::new(vec![Array::arange(DType::F32, &[8]).into()], vec![vec![8]], vec![DType::F32], [8, 1, 1], [8, 1, 1])
        .template("T", TemplateArg::Int(3));
    let text = compile_error(k.call(&call));
    assert!(text.contains("template parameter `T` is declared `int T`"), "{text}");
    assert!(text.contains("myexp.metal:3:"), "{text}");
    // And a template name the body uses but the call does not pass.
    let call = Call::new(vec![Array::arange(DType::F32, &[8]).into()], vec![vec![8]], vec![DType::F32], [8, 1, 1], [8, 1, 1]);
    let text = compile_error(k.call(&call));
    assert!(text.contains("--template T="), "{text}");
}

#[test]
fn signature_quirk_gets_a_note() {
    let k = MetalKernel::new("quirk", &["a"], &["o1", "o2"], "o1[0] = a_shape[0]; o2[0] = 1;", "", true, false).unwrap();
    let call =
        Call::new(vec![Array::arange(DType::F32, &[8]).into()], vec![vec![1], vec![1]], vec![DType::F32, DType::F32], [1, 1, 1], [1, 1, 1]);
    let text = compile_error(k.call(&call));
    assert!(text.contains("known MLX quirk"), "{text}");
}

#[test]
fn header_errors_point_at_the_header() {
    let k = MetalKernel::new(
        "hdr",
        &["a"],
        &["out"],
        "uint i = thread_position_in_grid.x; out[i] = scale(a[i]);",
        "inline float scale(float x) {\n  return x * undefined_thing;\n}\n",
        true,
        false,
    )
    .unwrap();
    let call = Call::new(vec![Array::arange(DType::F32, &[8]).into()], vec![vec![8]], vec![DType::F32], [8, 1, 1], [8, 1, 1]);
    let text = compile_error(k.call(&call));
    assert!(text.contains("hdr_header.metal:2:"), "{text}");
}

#[test]
fn every_attribute_compiles_and_runs() {
    // `thread_execution_width` is the old name of `threads_per_simdgroup`;
    // Metal refuses a kernel that takes both, so it gets a kernel of its own.
    let body_using = |names: &[(&str, &str)]| {
        let mut body = String::from("uint i = thread_position_in_grid.x;\nuint acc = 0;\n");
        for (name, ty) in names {
            body.push_str(&format!("acc += {name}{};\n", if *ty == "uint3" { ".x" } else { "" }));
        }
        body + "out[i] = acc;\n"
    };
    let all_but_old: Vec<_> = mlx::ATTRIBUTES.into_iter().filter(|(n, _)| *n != "thread_execution_width").collect();
    let call = Call::new(vec![], vec![vec![64]], vec![DType::U32], [64, 1, 1], [32, 1, 1]);
    let k = MetalKernel::new("attrs", &[], &["out"], &body_using(&all_but_old), "", true, false).unwrap();
    let r = ok(k.call(&call));
    assert_eq!(r.generated.attributes.len(), 19);
    // Thread 0 of threadgroup 0: the position-type attributes are 0, the sizes are not.
    let v = r.outputs[0].to_f64_vec();
    assert!(v[0] > 0.0 && v[1] > v[0]);
    let k = MetalKernel::new("width", &[], &["out"], &body_using(&[("thread_execution_width", "uint")]), "", true, false).unwrap();
    assert_eq!(ok(k.call(&call)).outputs[0].to_f64_vec()[0], 32.0);
    let k = MetalKernel::new("both", &[], &["out"], &body_using(&mlx::ATTRIBUTES), "", true, false).unwrap();
    let m = compile_error(k.call(&call));
    assert!(m.contains("cannot take both `[[thread_execution_width]]` and `[[threads_per_simdgroup]]`"), "{m}");
}

#[test]
fn contiguous_slice_is_bound_at_its_offset() {
    let base = Array::arange(DType::F32, &[10]);
    let view = base.slice_opt(0, Some(3), Some(7), 1).unwrap();
    assert!(view.is_row_contiguous() && view.offset == 3);
    let k = MetalKernel::new("off", &["a"], &["out"], "uint i = thread_position_in_grid.x; out[i] = a[i];", "", false, false).unwrap();
    let r = ok(k.call(&Call::new(vec![view.into()], vec![vec![4]], vec![DType::F32], [4, 1, 1], [4, 1, 1])));
    assert_close(&r.outputs[0], &[3.0, 4.0, 5.0, 6.0], 0.0);
}

#[test]
fn an_unclosed_brace_points_at_the_learners_brace() {
    let body = "uint i = thread_position_in_grid.x;\n// a { in a comment\nif (i < 8) {\n  out[i] = inp[i] * 2;\n";
    let k = MetalKernel::new("twice", &["inp"], &["out"], body, "", true, false).unwrap();
    let a = Array::arange(DType::F32, &[8]);
    let call = Call::new(vec![a.into()], vec![vec![8]], vec![DType::F32], [8, 1, 1], [8, 1, 1]);
    let m = compile_error(k.call(&call));
    assert!(m.contains("this `{` is never closed") && m.contains("twice.metal:3:12"), "{m}");
    assert!(!m.contains("<generated"), "{m}");
}

#[test]
fn an_undeclared_short_capitalised_name_is_explained_as_a_template_parameter() {
    let a = Array::arange(DType::F32, &[8]);
    let call = Call::new(vec![a.into()], vec![vec![8]], vec![DType::F32], [8, 1, 1], [8, 1, 1]);
    for body in
        ["uint i = thread_position_in_grid.x;\nT x = inp[i];\nout[i] = x;\n", "uint i = thread_position_in_grid.x;\nout[i] = inp[i] * N;\n"]
    {
        let k = MetalKernel::new("tp", &["inp"], &["out"], body, "", true, false).unwrap();
        let m = compile_error(k.call(&call));
        assert!(m.contains("template parameter") || m.contains("no template arguments"), "{m}");
    }
    // A long or lowercase name is a plain typo: no such help.
    let k = MetalKernel::new("tp", &["inp"], &["out"], "uint i = thread_position_in_grid.x;\nout[i] = inp[i] * scale;\n", "", true, false)
        .unwrap();
    let m = compile_error(k.call(&call));
    assert!(!m.contains("template parameter") && !m.contains("no template arguments"), "{m}");
}
