//! Golden tests: the generated source must match MLX's byte for byte.

use arrays::DType;
use mlx::{InputSpec, MetalKernel, MlxError, TemplateArg};

fn spec(dtype: DType, shape: &[usize]) -> InputSpec {
    InputSpec { dtype, shape: shape.to_vec() }
}

const MYEXP: &str = "
        uint elem = thread_position_in_grid.x;
        T tmp = inp[elem];
        out[elem] = metal::exp(tmp);
";

#[test]
fn myexp_docs_example() {
    let k = MetalKernel::new("myexp", &["inp"], &["out"], MYEXP, "", true, false).unwrap();
    let g = k.generate(&[spec(DType::F16, &[4, 16])], &[DType::F16], &[("T".into(), TemplateArg::DType(DType::F32))]).unwrap();
    assert_eq!(g.kernel_name, "custom_kernel_myexp__float_float16_t_float16_t");
    assert!(g.full_source.starts_with(mlx::PREAMBLE));
    assert!(g.full_source.ends_with(&g.source));
    insta::assert_snapshot!(g.source, @r###"
    template <typename T>
    [[kernel]] void custom_kernel_myexp__float_float16_t_float16_t(
      const device float16_t* inp [[buffer(0)]],
      device float16_t* out [[buffer(1)]],
      uint3 thread_position_in_grid [[thread_position_in_grid]]) {

            uint elem = thread_position_in_grid.x;
            T tmp = inp[elem];
            out[elem] = metal::exp(tmp);

    }

    template [[host_name("custom_kernel_myexp__float_float16_t_float16_t")]] [[kernel]] decltype(custom_kernel_myexp__float_float16_t_float16_t<float>) custom_kernel_myexp__float_float16_t_float16_t<float>;
    "###);
}

#[test]
fn mlx_args_case() {
    let source = "
        uint elem = thread_position_in_grid.x;
        int64_t loc = elem_to_loc(elem, a_shape, a_strides, a_ndim);
        out1[elem] = a[loc] + d;
        out2[elem] = b[0] + c[1] + f;
    ";
    let k = MetalKernel::new("arg_test", &["a", "b", "c", "d"], &["out1", "out2"], source, "", false, false).unwrap();
    let template = vec![
        ("e".to_string(), TemplateArg::Bool(true)),
        ("f".to_string(), TemplateArg::Int(3)),
        ("T".to_string(), TemplateArg::DType(DType::F16)),
    ];
    let inputs = [spec(DType::F32, &[3, 6]), spec(DType::I32, &[3]), spec(DType::BF16, &[2, 2]), spec(DType::F32, &[])];
    let g = k.generate(&inputs, &[DType::F32, DType::I32], &template).unwrap();
    let mut lines = g.source.lines();
    assert_eq!(lines.next(), Some("template <bool e, int f, typename T>"));
    assert_eq!(
        lines.next(),
        Some("[[kernel]] void custom_kernel_arg_test__1_3_float16_t_float_int32_tc_bfloat16_tc_floats_float_int32_t(")
    );
    insta::assert_snapshot!(g.source, @r###"
    template <bool e, int f, typename T>
    [[kernel]] void custom_kernel_arg_test__1_3_float16_t_float_int32_tc_bfloat16_tc_floats_float_int32_t(
      const device float* a [[buffer(0)]],
      const constant int* a_shape [[buffer(1)]],
      const constant int64_t* a_strides [[buffer(2)]],
      const constant int& a_ndim [[buffer(3)]],
      const constant int32_t* b [[buffer(4)]],
      const constant bfloat16_t* c [[buffer(5)]],
      const constant float& d [[buffer(6)]],
      device float* out1 [[buffer(7)]],
      device int32_t* out2 [[buffer(8)]],
      uint3 thread_position_in_grid [[thread_position_in_grid]]) {

            uint elem = thread_position_in_grid.x;
            int64_t loc = elem_to_loc(elem, a_shape, a_strides, a_ndim);
            out1[elem] = a[loc] + d;
            out2[elem] = b[0] + c[1] + f;
        
    }

    template [[host_name("custom_kernel_arg_test__1_3_float16_t_float_int32_tc_bfloat16_tc_floats_float_int32_t")]] [[kernel]] decltype(custom_kernel_arg_test__1_3_float16_t_float_int32_tc_bfloat16_tc_floats_float_int32_t<1, 3, float16_t>) custom_kernel_arg_test__1_3_float16_t_float_int32_tc_bfloat16_tc_floats_float_int32_t<1, 3, float16_t>;
    "###);
    assert_eq!(g.inputs[0], mlx::InputSlots { buffer: 0, shape: Some(1), strides: Some(2), ndim: Some(3) });
    assert_eq!(g.outputs, vec![7, 8]);
}

#[test]
fn atomic_outputs_and_header() {
    let k = MetalKernel::new(
        "scatter",
        &["idx", "val"],
        &["out"],
        "\n  uint i = thread_position_in_grid.x;\n  atomic_fetch_add_explicit(&out[idx[i]], val[i], memory_order_relaxed);\n",
        "constant int K = 4;\n",
        true,
        true,
    )
    .unwrap();
    let g = k.generate(&[spec(DType::I32, &[16]), spec(DType::F32, &[16])], &[DType::F32], &[]).unwrap();
    insta::assert_snapshot!(g.source, @r###"
    constant int K = 4;
    [[kernel]] void custom_kernel_scatter_int32_t_float_float(
      const device int32_t* idx [[buffer(0)]],
      const device float* val [[buffer(1)]],
      device atomic<float>* out [[buffer(2)]],
      uint3 thread_position_in_grid [[thread_position_in_grid]]) {

      uint i = thread_position_in_grid.x;
      atomic_fetch_add_explicit(&out[idx[i]], val[i], memory_order_relaxed);

    }
    "###);
}

#[test]
fn no_attributes_closes_after_last_output() {
    let k = MetalKernel::new("plain", &["a"], &["out"], "out[0] = a[0];", "", true, false).unwrap();
    let g = k.generate(&[spec(DType::F32, &[8])], &[DType::F32], &[]).unwrap();
    insta::assert_snapshot!(g.source, @r###"
    [[kernel]] void custom_kernel_plain_float_float(
      const device float* a [[buffer(0)]],
      device float* out [[buffer(1)]]) {
    out[0] = a[0];
    }
    "###);
}

/// Every attribute, with its type, in MLX's order; the
/// `dispatch_threads_per_threadgroup` ⇒ `threads_per_threadgroup` quirk.
#[test]
fn every_attribute() {
    for (name, ty) in mlx::ATTRIBUTES {
        let body = format!("out[0] = float({name}{});", if ty == "uint3" { ".x" } else { "" });
        let k = MetalKernel::new("attr", &[], &["out"], &body, "", true, false).unwrap();
        let g = k.generate(&[], &[DType::F32], &[]).unwrap();
        let _ = ty;
        // Substring detection: `dispatch_X_per_threadgroup` also adds `X_per_threadgroup`.
        let expect: Vec<String> =
            mlx::ATTRIBUTES.iter().filter(|(a, _)| name.contains(a)).map(|(a, t)| format!("  {t} {a} [[{a}]]")).collect();
        if name == "dispatch_threads_per_threadgroup" {
            assert_eq!(expect.len(), 2);
            assert_eq!(expect[1], "  uint3 threads_per_threadgroup [[threads_per_threadgroup]]");
        }
        let params: Vec<&str> = g.source.lines().skip(2).take(expect.len()).collect();
        let params: Vec<String> = params.iter().map(|l| l.trim_end_matches(',').trim_end_matches(") {").to_string()).collect();
        assert_eq!(params, expect, "{name}:\n{}", g.source);
        assert_eq!(g.attributes.len(), expect.len(), "{name}");
    }
    // All of them at once, in alphabetical order.
    let body: String = mlx::ATTRIBUTES.iter().map(|(n, _)| format!("{n};\n")).collect();
    let k = MetalKernel::new("all", &[], &["out"], &body, "", true, false).unwrap();
    let g = k.generate(&[], &[DType::F32], &[]).unwrap();
    let names: Vec<&str> = g.attributes.clone();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted);
    assert_eq!(names.len(), 20);
    assert!(g.source.contains(
        "  uint threads_per_simdgroup [[threads_per_simdgroup]],\n  uint3 threads_per_threadgroup [[threads_per_threadgroup]]) {\n"
    ));
}

#[test]
fn shape_strides_ndim_detection() {
    // Substring detection: `inp_shape` inside a comment counts; 0-d inputs never get them.
    let body = "// inp_shape\nout[0] = inp_ndim + x + s;\n";
    let k = MetalKernel::new("det", &["inp", "x", "s"], &["out"], body, "", true, false).unwrap();
    let g = k.generate(&[spec(DType::F32, &[10]), spec(DType::U8, &[2, 3]), spec(DType::F32, &[])], &[DType::F32], &[]).unwrap();
    insta::assert_snapshot!(g.source, @r###"
    [[kernel]] void custom_kernel_det_float_uint8_tc_floats_float(
      const device float* inp [[buffer(0)]],
      const constant int* inp_shape [[buffer(1)]],
      const constant int& inp_ndim [[buffer(2)]],
      const constant uint8_t* x [[buffer(3)]],
      const constant float& s [[buffer(4)]],
      device float* out [[buffer(5)]]) {
    // inp_shape
    out[0] = inp_ndim + x + s;

    }
    "###);
    // A 0-d input mentioning its shape gets nothing.
    let k = MetalKernel::new("det0", &["s"], &["out"], "out[0] = s_shape[0] + s_strides[0] + s_ndim;", "", true, false).unwrap();
    let g = k.generate(&[spec(DType::F32, &[])], &[DType::F32], &[]).unwrap();
    assert!(!g.source.contains("s_shape ["), "{}", g.source);
    // Strides only.
    let k = MetalKernel::new("det1", &["a"], &["out"], "out[0] = a[a_strides[0]];", "", false, false).unwrap();
    let g = k.generate(&[spec(DType::F32, &[9])], &[DType::F32], &[]).unwrap();
    assert!(
        g.source.contains("  const constant int64_t* a_strides [[buffer(1)]],\n  device float* out [[buffer(2)]]) {\n"),
        "{}",
        g.source
    );
}

#[test]
fn malformed_signature_quirk_is_reproduced() {
    let k = MetalKernel::new("quirk", &["a"], &["o1", "o2"], "o1[0] = a_shape[0]; o2[0] = 1;", "", true, false).unwrap();
    let g = k.generate(&[spec(DType::F32, &[8])], &[DType::F32, DType::F32], &[]).unwrap();
    assert!(g.signature_quirk);
    insta::assert_snapshot!(g.source, @r###"
    [[kernel]] void custom_kernel_quirk_float_float_float(
      const device float* a [[buffer(0)]],
      const constant int* a_shape [[buffer(1)]],
      device float* o1 [[buffer(2)]]) {
      device float* o2 [[buffer(3)]]) {
    o1[0] = a_shape[0]; o2[0] = 1;
    }
    "###);
}

#[test]
fn bad_construction_and_counts() {
    assert!(matches!(MetalKernel::new("k", &["a"], &[], "", "", true, false), Err(MlxError::Argument(m)) if m.contains("output_names")));
    let k = MetalKernel::new("k", &["a", "b"], &["out"], "", "", true, false).unwrap();
    let e = k.generate(&[spec(DType::F32, &[4])], &[DType::F32], &[]).unwrap_err();
    assert!(e.to_string().contains("inputs") && e.to_string().contains("a, b"), "{e}");
    let e = k.generate(&[spec(DType::F32, &[4]), spec(DType::F32, &[4])], &[], &[]).unwrap_err();
    assert!(e.to_string().contains("output_dtypes"), "{e}");
}

#[test]
fn preamble_compiles_on_its_own() {
    let c = msl::compile("preamble.metal", mlx::PREAMBLE, &msl::CompileOptions::default());
    assert!(!c.has_errors(), "{}", c.render(false));
}

#[test]
fn verbose_text_is_mlx_format() {
    let k = MetalKernel::new("v", &[], &["out"], "out[0] = 1;", "", true, false).unwrap();
    let g = k.generate(&[], &[DType::F32], &[]).unwrap();
    assert_eq!(mlx::verbose_text(&g), format!("Generated source code for `custom_kernel_v_float`:\n```\n{}\n```\n", g.source));
}
