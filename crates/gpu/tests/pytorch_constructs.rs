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
