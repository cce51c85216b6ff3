//! C++ constructs PyTorch's Metal kernels (aten/src/ATen/native/mps) rely
//! on, run end to end and checked against values computed here.

mod common;
use common::*;

/// Run kernel `k` of `src` over `n` threads in one threadgroup with the
/// given buffers; no findings allowed.
fn run_bufs(src: &str, k: &str, n: u32, list: Vec<(u32, Vec<u8>)>) -> std::collections::BTreeMap<u32, Vec<u8>> {
    let kernel = compile(src, k);
    let mut b = bufs(list);
    let r = run(&kernel, &threads([n, 1, 1], [n, 1, 1]), &mut b, &opts(CheckLevel::All));
    assert!(r.findings.is_empty(), "{:?}", r.findings);
    b
}

#[test]
fn func_name_and_string_literals_through_packs() {
    let src = include_str!("../../msl/tests/kernels/features/func_name_and_string_packs.metal");
    let b = run_bufs(src, "func_name_kernel", 4, vec![(0, vec![0xff; 64]), (1, u32s(&[0; 4]))]);
    let expect = "func_name_kernel: thread 0 of 4";
    assert_eq!(&b[&0][..expect.len()], expect.as_bytes());
    assert_eq!(b[&0][expect.len()], 0, "terminating zero");
    let name_len = "name_length".len() as u32;
    assert_eq!(to_u32(&b[&1]), (0..4).map(|t| name_len + t).collect::<Vec<_>>());
}

#[test]
fn metal_array_data_points_into_its_address_space() {
    let src = include_str!("../../msl/tests/kernels/features/metal_array_data.metal");
    let (extents, steps) = ([2, 3, 4], [12, 4, 1]);
    let shape: Vec<i32> = extents.iter().chain(&steps).copied().collect();
    let b = run_bufs(src, "array_data_kernel", 4, vec![(0, i32s(&[0; 4])), (1, i32s(&shape))]);
    let dot: i32 = extents.iter().zip(&steps).map(|(a, b)| a * b).sum();
    let expect: Vec<i32> = (0..4).map(|t| dot + (t + 1) * 10 + t).collect();
    assert_eq!(to_i32(&b[&0]), expect);
}

#[test]
fn mixed_precision_simdgroup_products_accumulate_in_float() {
    let src = include_str!("../../msl/tests/kernels/features/simdgroup_mixed_precision.metal");
    // Values exact in half and bfloat, so the float result is exact too.
    let a: Vec<f32> = (0..64).map(|i| ((i % 7) as f32 - 3.0) * 0.25).collect();
    let b: Vec<f32> = (0..64).map(|i| (i % 5) as f32 * 0.5 - 1.0).collect();
    let halves: Vec<u8> = a.iter().flat_map(|x| half::f16::from_f32(*x).to_bits().to_le_bytes()).collect();
    let bfloats: Vec<u8> = b.iter().flat_map(|x| half::bf16::from_f32(*x).to_bits().to_le_bytes()).collect();
    let out = run_bufs(src, "mixed_mma", 32, vec![(0, halves), (1, bfloats), (2, f32s(&[0.0; 64]))]);
    let gram = |m: &[f32], r: usize, c: usize| (0..8).map(|k| m[r * 8 + k] * m[c * 8 + k]).sum::<f32>();
    let expect: Vec<f32> = (0..64).map(|e| 1.0 + gram(&a, e / 8, e % 8) + gram(&b, e / 8, e % 8)).collect();
    assert_eq!(to_f32(&out[&2]), expect);
}

#[test]
fn numeric_limits_data_members_are_constants() {
    let src = include_str!("../../msl/tests/kernels/features/numeric_limits_constants.metal");
    let b = run_bufs(src, "limits_constants", 1, vec![(0, i32s(&[0; 9]))]);
    // (digits, digits10, is_signed, is_integer) as C++ defines them.
    let describe =
        |digits: i32, digits10: i32, signed: bool, integer: bool| digits * 100 + digits10 * 10 + i32::from(signed) + 2 * i32::from(integer);
    let expect = vec![
        f32::MANTISSA_DIGITS as i32 - 1,
        10,
        7,
        describe(31, 9, true, true),
        describe(8, 2, false, true),
        describe(24, f32::DIGITS as i32, true, false),
        2,
        16 - 13,
        65504 >> 11,
    ];
    assert_eq!(to_i32(&b[&0]), expect);
}

#[test]
fn using_declared_alias_defaults_and_pack_initialized_arrays() {
    let src = include_str!("../../msl/tests/kernels/features/using_alias_defaults_and_pack_arrays.metal");
    let input = [1.5f32, 2.25, -0.5, 4.0];
    let halves: Vec<u8> = input.iter().flat_map(|x| half::f16::from_f32(*x).to_bits().to_le_bytes()).collect();
    let b = run_bufs(src, "wide_sum_half", 4, vec![(0, halves), (1, f32s(&[0.0; 4]))]);
    // The accumulator is float (4 bytes); `largest` sees 4 values.
    let expect: Vec<f32> = (0..4)
        .map(|t| {
            let sum: f32 = input[..=t].iter().sum();
            sum * 4.0 + (t as f32).max(7.5) + 4000.0
        })
        .collect();
    assert_eq!(to_f32(&b[&1]), expect);
}

#[test]
fn threadgroup_arrays_decay_into_their_space_when_deducing() {
    let src = include_str!("../../msl/tests/kernels/features/array_decay_in_deduction.metal");
    let input = [3.0f32, 1.0, 5.0, 2.0, 4.0, 0.5, 6.0, 2.0];
    let b = run_bufs(src, "count_pairs", 8, vec![(0, f32s(&input)), (1, i32s(&[0; 8]))]);
    let less = (0..4).filter(|&k| input[k] < input[k + 4]).count() as i32;
    assert_eq!(to_i32(&b[&1]), (0..8).map(|t| less + t * 10).collect::<Vec<_>>());
}

#[test]
fn pointers_convert_to_addresses_and_back() {
    let src = include_str!("../../msl/tests/kernels/features/pointer_addresses.metal");
    let input: Vec<u8> = (0..64u8).map(|x| x.wrapping_mul(7).wrapping_add(1)).collect();
    let b = run_bufs(src, "pointer_address_kernel", 4, vec![(0, vec![0; 64]), (1, input.clone()), (2, u64s(&[0; 8]))]);
    let mut expect = vec![0u8; 64];
    for t in 0..4 {
        let start = 9 * t;
        expect[start..start + 6].copy_from_slice(&input[start..start + 6]);
    }
    assert_eq!(b[&0], expect);
    let info = to_u64(&b[&2]);
    for t in 0..4u64 {
        assert_eq!(info[2 * t as usize], t % 4, "buffers start aligned, so the address's low bits are the offset's");
        assert_eq!(info[2 * t as usize + 1], t + 2, "an address converts back to the same pointer");
    }
}

#[test]
fn vector_type_traits_limits_and_exhaustive_enum_switches() {
    let src = include_str!("../../msl/tests/kernels/features/vector_traits_and_limits.metal");
    let c = msl::compile("traits.metal", src, &Default::default());
    assert!(c.diagnostics.items.is_empty(), "{}", c.render(false));
    let b = run_bufs(src, "vector_traits_kernel", 3, vec![(0, f32s(&[0.0; 24]))]);
    let out = to_f32(&b[&0]);
    for t in 0..3 {
        let row = &out[8 * t..8 * t + 8];
        let kind = [t as f32, t as f32 + 10.0, 2.0][t % 3];
        assert_eq!(row, [1.0, 2.0, 3.0, 1.0, 1.0, 1.0, kind, 1.0 + 2.0 + 4.0 * 11.0], "thread {t}");
    }
}

/// A kernel declared before its definition and again after it (PyTorch's
/// Indexing.metal re-declares a kernel to attach its host name) is one
/// kernel, found by that name.
#[test]
fn kernel_prototypes_and_redeclarations_name_one_kernel() {
    let src = r#"
#include <metal_stdlib>
kernel void mark(device uint* out [[buffer(0)]], uint t [[thread_position_in_grid]]);
kernel void mark(device uint* out [[buffer(0)]], uint t [[thread_position_in_grid]]) { out[t] = t * 3; }
[[host_name("mark")]] kernel void mark(device uint*, uint);
"#;
    let c = msl::compile("redeclared.metal", src, &Default::default());
    assert!(c.diagnostics.items.is_empty(), "{}", c.render(false));
    assert_eq!(c.program.as_ref().unwrap().kernels().count(), 1);
    let b = run_bufs(src, "mark", 4, vec![(0, u32s(&[0; 4]))]);
    assert_eq!(to_u32(&b[&0]), [0, 3, 6, 9]);
}

#[test]
fn atomic_element_types_deduce_in_compare_and_swap_helpers() {
    let src = include_str!("../../msl/tests/kernels/features/atomic_template_deduction.metal");
    let b = run_bufs(src, "atomic_combine_kernel", 16, vec![(0, f32s(&[0.0; 2])), (1, i32s(&[1]))]);
    assert_eq!(to_f32(&b[&0]), [7.0, 7.5], "even threads reach 14 * 0.5, odd ones 15 * 0.5");
    assert_eq!(to_i32(&b[&1]), [720], "1 * 2 * ... * 6");
}

/// Only explicit instantiations make a kernel template's instance an entry
/// point: one named in `decltype` (llama.cpp's flash-attention kernels name
/// their function type that way) is not a kernel the host can pick.
#[test]
fn kernel_template_instances_named_in_decltype_are_not_entry_points() {
    let src = r#"
#include <metal_stdlib>
template<int N> kernel void kt(device int* d [[buffer(0)]], uint i [[thread_position_in_grid]]) { d[i] = N + int(i); }
typedef decltype(kt<1>) kt_t;
template [[host_name("kt_2")]] kernel kt_t kt<2>;
"#;
    let c = msl::compile("decltype.metal", src, &Default::default());
    assert!(c.diagnostics.items.is_empty(), "{}", c.render(false));
    let names: Vec<_> = c.program.as_ref().unwrap().kernels().map(|(_, f)| f.host_name.clone().unwrap()).collect();
    assert_eq!(names, ["kt_2"]);
    let b = run_bufs(src, "kt_2", 3, vec![(0, u32s(&[0; 3]))]);
    assert_eq!(to_u32(&b[&0]), [2, 3, 4]);
}
