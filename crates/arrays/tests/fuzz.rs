use arrays::{parse_value, Array, DType};
use proptest::prelude::*;

fn valid_file() -> Vec<u8> {
    Array::arange(DType::I16, &[3, 5]).to_npy_bytes()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
        let _ = Array::from_npy_bytes(&bytes);
        let mut with_magic = b"\x93NUMPY\x01\x00".to_vec();
        with_magic.extend_from_slice(&bytes);
        let _ = Array::from_npy_bytes(&with_magic);
    }

    #[test]
    fn mutated_files_never_panic(pos in 0usize..200, byte in any::<u8>(), cut in 0usize..200) {
        let mut f = valid_file();
        let p = pos % f.len();
        f[p] = byte;
        let _ = Array::from_npy_bytes(&f);
        f.truncate(cut.min(f.len()));
        let _ = Array::from_npy_bytes(&f);
    }

    #[test]
    fn random_headers_never_panic(
        descr in prop::sample::select(vec!["<f4", "|u1", "<f8", ">i4", "|b1", "<i8", "xx", "<f2"]),
        fortran in any::<bool>(),
        shape in proptest::collection::vec(any::<u64>(), 0..4),
        data_len in 0usize..64,
    ) {
        let dims: Vec<String> = shape.iter().map(|d| (d % 20).max(if *d > u64::MAX / 2 { *d } else { 0 }).to_string()).collect();
        let tuple = if dims.len() == 1 { format!("({},)", dims[0]) } else { format!("({})", dims.join(", ")) };
        let dict = format!("{{'descr': '{descr}', 'fortran_order': {}, 'shape': {tuple}, }}", if fortran { "True" } else { "False" });
        let mut f = b"\x93NUMPY\x01\x00".to_vec();
        f.extend_from_slice(&((dict.len() + 1) as u16).to_le_bytes());
        f.extend_from_slice(dict.as_bytes());
        f.push(b'\n');
        f.extend(vec![1u8; data_len]);
        if let Ok(a) = Array::from_npy_bytes(&f) {
            prop_assert_eq!(a.nbytes(), data_len);
            // the result round-trips
            let b = Array::from_npy_bytes(&a.to_npy_bytes()).unwrap();
            prop_assert!(a.same_as(&b));
        }
    }

    #[test]
    fn parse_value_never_panics(s in "[a-z0-9(),:. @x-]{0,24}") {
        let _ = parse_value(&s, 1);
    }

    #[test]
    fn slices_match_index_arithmetic(len in 0usize..12, start in -15isize..15, stop in -15isize..15, step in -4isize..5) {
        prop_assume!(step != 0);
        let a = Array::arange(DType::I32, &[len]);
        let s = a.slice(0, start, stop, step).unwrap();
        // reference: Python's slice.indices
        let n = len as isize;
        let clamp = |v: isize, lo: isize, hi: isize| { let v = if v < 0 { v + n } else { v }; v.clamp(lo, hi) };
        let mut expect = Vec::new();
        if step > 0 {
            let (mut i, e) = (clamp(start, 0, n), clamp(stop, 0, n));
            while i < e { expect.push(i as f64); i += step; }
        } else {
            let (mut i, e) = (clamp(start, -1, n - 1), clamp(stop, -1, n - 1));
            while i > e { expect.push(i as f64); i += step; }
        }
        prop_assert_eq!(s.to_f64_vec(), expect.clone());
        prop_assert_eq!(s.to_contiguous().to_f64_vec(), expect);
    }
}
