use arrays::{parse_value, Array, DType, Scalar, ALL_DTYPES};

// ------------------------------------------------------------------ dtypes

#[test]
fn dtype_names() {
    for dt in ALL_DTYPES {
        assert_eq!(DType::parse(dt.short_name()).unwrap(), dt);
        assert_eq!(DType::parse(dt.mlx_name()).unwrap(), dt);
        assert_eq!(DType::parse(dt.metal_type()).unwrap(), dt);
    }
    assert_eq!(DType::parse("bool_").unwrap(), DType::Bool);
    assert_eq!(DType::parse("float32").unwrap(), DType::F32);
    assert_eq!(DType::parse("bfloat16").unwrap(), DType::BF16);
    assert_eq!(DType::F32.metal_type(), "float");
    assert_eq!(DType::F16.metal_type(), "float16_t");
    assert_eq!(DType::BF16.metal_type(), "bfloat16_t");
    assert_eq!(DType::U8.metal_type(), "uint8_t");
    assert_eq!(DType::BF16.mlx_name(), "bfloat16");
    let e = DType::parse("float64").unwrap_err();
    assert!(e.contains("no double"), "{e}");
    assert!(DType::parse("f64").unwrap_err().contains("no double"));
    let e = DType::parse("complex64").unwrap_err();
    assert!(e.contains("valid dtypes") && e.contains("bf16"), "{e}");
    assert_eq!(DType::I64.size(), 8);
    assert_eq!(DType::BF16.size(), 2);
    assert!(DType::BF16.is_float() && DType::BF16.is_signed());
    assert!(!DType::U32.is_signed() && DType::I8.is_signed() && !DType::Bool.is_float());
}

// ------------------------------------------------------------------ npy

#[test]
fn npy_round_trip_every_dtype() {
    for (k, dt) in ALL_DTYPES.into_iter().enumerate() {
        for shape in [vec![], vec![0], vec![5], vec![3, 4], vec![2, 3, 2], vec![1, 0, 3]] {
            let a = Array::rand(dt, &shape, k as u64 + 7);
            let bytes = a.to_npy_bytes();
            let b = Array::from_npy_bytes(&bytes).unwrap();
            let b = if dt == DType::BF16 {
                assert_eq!(b.dtype, DType::U16);
                b.reinterpret(DType::BF16).unwrap()
            } else {
                b
            };
            assert!(a.same_as(&b), "{dt:?} {shape:?}");
            assert_eq!(b.shape, shape);
        }
    }
}

#[test]
fn npy_file_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("a.npy");
    let a = Array::arange(DType::I32, &[3, 4]).t();
    a.write_npy(&p).unwrap();
    let b = Array::read_npy(&p).unwrap();
    assert!(b.is_row_contiguous());
    assert_eq!(b.shape, vec![4, 3]);
    assert_eq!(b.to_f64_vec(), a.to_f64_vec());
    let e = Array::read_npy(dir.path().join("missing.npy")).unwrap_err();
    assert!(e.contains("missing.npy"), "{e}");
}

#[test]
fn npy_header_is_numpy_compatible() {
    let a = Array::zeros(DType::F32, &[2, 3]);
    let bytes = a.to_npy_bytes();
    assert_eq!(&bytes[..8], b"\x93NUMPY\x01\x00");
    let hlen = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
    assert_eq!((10 + hlen) % 64, 0);
    let header = std::str::from_utf8(&bytes[10..10 + hlen]).unwrap();
    assert!(header.starts_with("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"));
    assert!(header.ends_with('\n'));
    assert!(header[..header.len() - 1].trim_end().ends_with('}'));
    // NumPy 2 writes exactly this (128-byte header, room for the first axis to grow)
    assert_eq!(hlen, 118);
    assert_eq!(bytes.len(), 128 + 24);
    let zero_d = Array::full(DType::F32, &[], 1.5).to_npy_bytes();
    let h = std::str::from_utf8(&zero_d[10..128]).unwrap();
    assert!(h.starts_with("{'descr': '<f4', 'fortran_order': False, 'shape': (), }"));
    assert_eq!(zero_d.len(), 132);
    let one_d = Array::zeros(DType::U8, &[5]).to_npy_bytes();
    let h = std::str::from_utf8(&one_d[10..128]).unwrap();
    assert!(h.starts_with("{'descr': '|u1', 'fortran_order': False, 'shape': (5,), }"));
    let descrs: Vec<&str> = ALL_DTYPES.iter().map(|d| d.npy_descr()).collect();
    assert_eq!(descrs, ["|b1", "|i1", "<i2", "<i4", "<i8", "|u1", "<u2", "<u4", "<u8", "<f2", "<u2", "<f4"]);
}

fn npy_with_header(dict: &str, data: &[u8]) -> Vec<u8> {
    let mut h = dict.to_string();
    while (10 + h.len() + 1) % 64 != 0 {
        h.push(' ');
    }
    h.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend_from_slice(&(h.len() as u16).to_le_bytes());
    out.extend_from_slice(h.as_bytes());
    out.extend_from_slice(data);
    out
}

#[test]
fn npy_reads_fortran_order_and_variants() {
    // column-major 2x3: memory holds columns [0,3],[1,4],[2,5]
    let data: Vec<u8> = [0i32, 3, 1, 4, 2, 5].iter().flat_map(|v| v.to_le_bytes()).collect();
    let f = npy_with_header("{'descr': '<i4', 'fortran_order': True, 'shape': (2, 3), }", &data);
    let a = Array::from_npy_bytes(&f).unwrap();
    assert!(a.is_row_contiguous());
    assert_eq!(a.to_f64_vec(), vec![0.0, 1.0, 2.0, 3.0, 4.0, 5.0]);
    // key order, double quotes, no trailing comma, '=' order, big-endian single bytes
    let f = npy_with_header("{\"shape\": (2,), \"fortran_order\": False, \"descr\": \"=u4\"}", &data[..8]);
    let a = Array::from_npy_bytes(&f).unwrap();
    assert_eq!((a.dtype, a.to_f64_vec()), (DType::U32, vec![0.0, 3.0]));
    let f = npy_with_header("{'descr': '>u1', 'fortran_order': False, 'shape': (3,), }", &[1, 2, 3]);
    assert_eq!(Array::from_npy_bytes(&f).unwrap().to_f64_vec(), vec![1.0, 2.0, 3.0]);
    // bools are normalised
    let f = npy_with_header("{'descr': '|b1', 'fortran_order': False, 'shape': (2,), }", &[0, 7]);
    assert_eq!(Array::from_npy_bytes(&f).unwrap().contiguous_bytes(), vec![0, 1]);
    // version 2.0
    let mut v2 = b"\x93NUMPY\x02\x00".to_vec();
    let h = "{'descr': '|u1', 'fortran_order': False, 'shape': (2,), }\n";
    v2.extend_from_slice(&(h.len() as u32).to_le_bytes());
    v2.extend_from_slice(h.as_bytes());
    v2.extend_from_slice(&[9, 8]);
    assert_eq!(Array::from_npy_bytes(&v2).unwrap().to_f64_vec(), vec![9.0, 8.0]);
}

#[test]
fn npy_errors() {
    let err = |dict: &str, data: &[u8]| Array::from_npy_bytes(&npy_with_header(dict, data)).unwrap_err();
    let e = err("{'descr': '<f8', 'fortran_order': False, 'shape': (1,), }", &[0; 8]);
    assert!(e.contains("float64") && e.contains("astype(np.float32)"), "{e}");
    let e = err("{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }", &[0; 4]);
    assert!(e.contains("big-endian"), "{e}");
    let e = err("{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }", &[0; 8]);
    assert!(e.contains("unsupported"), "{e}");
    let e = err("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }", &[0; 4]);
    assert!(e.contains("structured"), "{e}");
    let e = err("{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", &[0; 8]);
    assert!(e.contains("truncated"), "{e}");
    let e = err("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", &[0; 8]);
    assert!(e.contains("mismatch"), "{e}");
    let e = err("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 4294967296), }", &[0; 8]);
    assert!(e.contains("too large"), "{e}");
    let e = err("{'descr': '<f4', 'fortran_order': False, 'shape': (1000000000000,), }", &[0; 8]);
    assert!(e.contains("truncated"), "{e}");
    let e = err("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999999999999999999999999,), }", &[]);
    assert!(e.contains("too large"), "{e}");
    for bad in [
        "{'descr': '<f4', 'fortran_order': False, }",
        "{'descr': '<f4', 'shape': (1,), }",
        "{'fortran_order': False, 'shape': (1,), }",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), ",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }",
        "{'descr': '<f4', 'fortran_order': False, 'shape': ('a',), }",
        "['descr']",
        "",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), } junk",
    ] {
        let e = err(bad, &[0; 4]);
        assert!(e.contains("npy"), "{bad}: {e}");
    }
    assert!(Array::from_npy_bytes(b"").is_err());
    assert!(Array::from_npy_bytes(b"\x93NUMPY").is_err());
    assert!(Array::from_npy_bytes(b"\x93NUMPY\x01\x00\xff\xff{").is_err());
    assert!(Array::from_npy_bytes(b"\x93NUMPY\x09\x00\x00\x00").is_err());
    assert!(Array::from_npy_bytes(b"PK\x03\x04 this is a zip").is_err());
    // a valid file cut anywhere is an error
    let good = Array::arange(DType::F32, &[3, 3]).to_npy_bytes();
    for n in 0..good.len() {
        assert!(Array::from_npy_bytes(&good[..n]).is_err(), "cut at {n}");
    }
}

// ------------------------------------------------------------------ views

#[test]
fn slices_and_views() {
    let a = Array::arange(DType::I32, &[10]);
    let v = |a: &Array| a.to_f64_vec().into_iter().map(|x| x as i64).collect::<Vec<_>>();
    assert_eq!(v(&a.slice(0, 1, 8, 3).unwrap()), vec![1, 4, 7]);
    assert_eq!(v(&a.slice(0, -3, isize::MAX, 1).unwrap()), vec![7, 8, 9]);
    assert_eq!(v(&a.slice(0, isize::MAX, isize::MIN, -1).unwrap()), vec![9, 8, 7, 6, 5, 4, 3, 2, 1, 0]);
    assert_eq!(v(&a.slice(0, 8, 2, -2).unwrap()), vec![8, 6, 4]);
    assert_eq!(v(&a.slice(0, -1, -4, -1).unwrap()), vec![9, 8, 7]);
    assert_eq!(v(&a.slice_opt(0, None, None, -3).unwrap()), vec![9, 6, 3, 0]);
    assert_eq!(v(&a.slice(0, 5, 2, 1).unwrap()), Vec::<i64>::new());
    assert_eq!(v(&a.slice(0, 20, 30, 1).unwrap()), Vec::<i64>::new());
    assert!(a.slice(0, 0, 1, 0).is_err());
    assert!(a.slice(1, 0, 1, 1).is_err());
    // views share data and are not contiguous; to_contiguous copies
    let s = a.slice(0, 0, 10, 2).unwrap();
    assert!(std::sync::Arc::ptr_eq(&s.data, &a.data));
    assert!(!s.is_row_contiguous());
    let c = s.to_contiguous();
    assert!(c.is_row_contiguous() && c.offset == 0);
    assert!(!std::sync::Arc::ptr_eq(&c.data, &a.data));
    assert_eq!(c.contiguous_bytes(), s.contiguous_bytes());
    assert_eq!(c.data.len(), 5 * 4);
    // an offset contiguous view
    let tail = a.slice(0, 6, 10, 1).unwrap();
    assert!(tail.is_row_contiguous());
    assert_eq!(tail.offset, 6);
    assert_eq!(v(&tail.to_contiguous()), vec![6, 7, 8, 9]);

    let m = Array::arange(DType::F32, &[3, 4]);
    let t = m.t();
    assert_eq!(t.shape, vec![4, 3]);
    assert_eq!(t.get_f64(&[3, 1]), 7.0);
    assert_eq!(v(&t), vec![0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11]);
    assert!(!t.is_row_contiguous());
    let r = t.reshape(&[2, 6]).unwrap();
    assert_eq!(v(&r), vec![0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11]);
    assert!(m.reshape(&[5]).is_err());
    assert!(m.transpose(&[0, 0]).is_err());
    assert!(m.transpose(&[0]).is_err());
    // column 2 reversed rows: m[::-1, 2]
    let col = m.slice(0, isize::MAX, isize::MIN, -1).unwrap().slice(1, 2, 3, 1).unwrap();
    assert_eq!(v(&col), vec![10, 6, 2]);
    let m3 = Array::arange(DType::U16, &[2, 3, 4]);
    let p = m3.transpose(&[2, 0, 1]).unwrap();
    assert_eq!(p.shape, vec![4, 2, 3]);
    assert_eq!(p.get_f64(&[1, 1, 2]), m3.get_f64(&[1, 2, 1]));
    // size-1 axes do not break contiguity
    assert!(Array::zeros(DType::F32, &[1, 5]).t().is_row_contiguous());
}

#[test]
fn constructors() {
    assert_eq!(Array::arange(DType::Bool, &[4]).contiguous_bytes(), vec![0, 1, 0, 1]);
    assert_eq!(Array::arange(DType::U8, &[300]).get_f64(&[299]), 43.0);
    assert_eq!(Array::ones(DType::BF16, &[2]).to_f64_vec(), vec![1.0, 1.0]);
    assert_eq!(Array::full(DType::U8, &[1], 300.0).to_f64_vec(), vec![255.0]);
    assert_eq!(Array::full(DType::F16, &[], 0.5).get_f64(&[]), 0.5);
    let a = Array::from_f64(DType::I16, &[2], &[-3.0, 7.9]).unwrap();
    assert_eq!(a.to_f64_vec(), vec![-3.0, 7.0]);
    let a = Array::from_i64(DType::U64, &[1], &[-1]).unwrap();
    assert_eq!(a.get(&[0]), Scalar::UInt(u64::MAX));
    assert!(Array::from_i64(DType::I32, &[3], &[1]).is_err());
    assert!(Array::from_bytes(DType::F32, &[2], vec![0; 7]).is_err());
    assert_eq!(Array::zeros(DType::I64, &[2, 0]).len(), 0);
    assert_eq!(Array::zeros(DType::I64, &[]).len(), 1);
}

#[test]
fn rand_is_deterministic_and_in_range() {
    for dt in ALL_DTYPES {
        let a = Array::rand(dt, &[1000], 42);
        let b = Array::rand(dt, &[1000], 42);
        let c = Array::rand(dt, &[1000], 43);
        assert_eq!(a.contiguous_bytes(), b.contiguous_bytes());
        assert_ne!(a.contiguous_bytes(), c.contiguous_bytes());
        let vals = a.to_f64_vec();
        if dt.is_float() {
            assert!(vals.iter().all(|&v| (0.0..1.0).contains(&v)), "{dt:?}");
            let mean = vals.iter().sum::<f64>() / vals.len() as f64;
            assert!((mean - 0.5).abs() < 0.05, "{dt:?} mean {mean}");
        } else if dt == DType::Bool {
            let ones = vals.iter().filter(|&&v| v == 1.0).count();
            assert!((400..600).contains(&ones), "{ones}");
        } else {
            let neg = vals.iter().filter(|&&v| v < 0.0).count();
            if dt.is_signed() {
                assert!((400..600).contains(&neg));
            } else {
                assert_eq!(neg, 0);
            }
        }
    }
    // pinned values: the generator is part of the contract (same on every machine)
    let a = Array::rand(DType::U32, &[2], 0);
    assert_eq!(a.to_f64_vec(), vec![2065550767.0, 2713282036.0]);
    let r = Array::randint(DType::I32, &[2000], -5, 5, 9).unwrap();
    let vals = r.to_f64_vec();
    assert!(vals.iter().all(|&v| (-5.0..5.0).contains(&v)));
    assert!(vals.contains(&-5.0) && vals.contains(&4.0));
    assert!(Array::randint(DType::U8, &[2], 0, 257, 1).is_err());
    assert!(Array::randint(DType::U8, &[2], 3, 3, 1).is_err());
    assert!(Array::randint(DType::U8, &[2], 0, 256, 1).is_ok());
}

#[test]
fn allclose_semantics() {
    let a = Array::from_f64(DType::F32, &[3], &[1.0, 2.0, 3.0]).unwrap();
    let b = Array::from_f64(DType::F32, &[3], &[1.0, 2.0000001, 3.0]).unwrap();
    assert!(a.allclose(&b, 1e-5, 1e-8));
    let c = Array::from_f64(DType::F32, &[3], &[1.0, 2.1, 3.0]).unwrap();
    assert!(!a.allclose(&c, 1e-5, 1e-8));
    assert!(!a.allclose(&a.reshape(&[3, 1]).unwrap(), 1e-5, 1e-8));
    let n = Array::from_f64(DType::F32, &[1], &[f64::NAN]).unwrap();
    assert!(!n.allclose(&n, 1e-5, 1e-8));
    let i = Array::from_f64(DType::F32, &[1], &[f64::INFINITY]).unwrap();
    assert!(i.allclose(&i, 1e-5, 1e-8));
    // mixed dtypes compare by value
    assert!(Array::arange(DType::I32, &[3]).allclose(&Array::arange(DType::F16, &[3]), 0.0, 0.0));
}

// ------------------------------------------------------------------ repr

#[test]
fn repr_mlx_golden() {
    let i = |shape: &[usize]| Array::arange(DType::I32, shape);
    assert_eq!(i(&[3]).repr_mlx(), "array([0, 1, 2], dtype=int32)");
    assert_eq!(i(&[2, 2]).repr_mlx(), "array([[0, 1],\n       [2, 3]], dtype=int32)");
    assert_eq!(i(&[2, 2, 2]).repr_mlx(), "array([[[0, 1],\n        [2, 3]],\n       [[4, 5],\n        [6, 7]]], dtype=int32)");
    assert_eq!(Array::arange(DType::Bool, &[2]).repr_mlx(), "array([False, True], dtype=bool)");
    let f = Array::from_f64(DType::F32, &[4], &[1.0, 2.5, 3.0, 0.1]).unwrap();
    assert_eq!(f.repr_mlx(), "array([1, 2.5, 3, 0.1], dtype=float32)");
    let f = Array::from_f64(DType::F32, &[4], &[1e10, -1.5e-5, 1.0 / 3.0, f64::NAN]).unwrap();
    assert_eq!(f.repr_mlx(), "array([1e+10, -1.5e-05, 0.333333, nan], dtype=float32)");
    assert_eq!(Array::full(DType::F32, &[], 1.5).repr_mlx(), "array(1.5, dtype=float32)");
    assert_eq!(Array::full(DType::Bool, &[], 1.0).repr_mlx(), "array(True, dtype=bool)");
    assert_eq!(Array::full(DType::BF16, &[1], 0.5).repr_mlx(), "array([0.5], dtype=bfloat16)");
    assert_eq!(Array::zeros(DType::F32, &[0]).repr_mlx(), "array([], dtype=float32)");
    let big = Array::arange(DType::F32, &[2000]);
    assert_eq!(big.repr_mlx(), "array([0, 1, 2, ..., 1997, 1998, 1999], dtype=float32)");
    let m = Array::arange(DType::U8, &[8, 8]);
    assert_eq!(
        m.repr_mlx(),
        "array([[0, 1, 2, ..., 5, 6, 7],\n       [8, 9, 10, ..., 13, 14, 15],\n       [16, 17, 18, ..., 21, 22, 23],\n       ...,\n       [40, 41, 42, ..., 45, 46, 47],\n       [48, 49, 50, ..., 53, 54, 55],\n       [56, 57, 58, ..., 61, 62, 63]], dtype=uint8)"
    );
    // views print their logical elements
    assert_eq!(i(&[2, 3]).t().repr_mlx(), "array([[0, 3],\n       [1, 4],\n       [2, 5]], dtype=int32)");
}

#[test]
fn repr_numpy_golden() {
    let i = |shape: &[usize]| Array::arange(DType::I32, shape);
    assert_eq!(i(&[3]).repr_numpy(), "array([0, 1, 2], dtype=int32)");
    assert_eq!(Array::arange(DType::I64, &[2, 6]).repr_numpy(), "array([[ 0,  1,  2,  3,  4,  5],\n       [ 6,  7,  8,  9, 10, 11]])");
    assert_eq!(i(&[2, 2, 2]).repr_numpy(), "array([[[0, 1],\n        [2, 3]],\n\n       [[4, 5],\n        [6, 7]]], dtype=int32)");
    assert_eq!(Array::arange(DType::Bool, &[2]).repr_numpy(), "array([False,  True])");
    let f = Array::from_f64(DType::F32, &[3], &[1.0, 2.5, 3.0]).unwrap();
    assert_eq!(f.repr_numpy(), "array([1. , 2.5, 3. ], dtype=float32)");
    let f = Array::from_f64(DType::F32, &[3], &[1e-5, -1.5e-5, f64::INFINITY]).unwrap();
    assert_eq!(f.repr_numpy(), "array([ 1.0e-05, -1.5e-05,      inf], dtype=float32)");
    let f = Array::from_f64(DType::F16, &[3], &[f64::NAN, 1.25, f64::NEG_INFINITY]).unwrap();
    assert_eq!(f.repr_numpy(), "array([ nan, 1.25, -inf], dtype=float16)");
    assert_eq!(Array::full(DType::F32, &[], 1.5).repr_numpy(), "array(1.5, dtype=float32)");
    assert_eq!(Array::full(DType::F32, &[], 1.0).repr_numpy(), "array(1., dtype=float32)");
    assert_eq!(Array::zeros(DType::I64, &[0]).repr_numpy(), "array([], dtype=int64)");
    assert_eq!(Array::zeros(DType::F32, &[0, 3]).repr_numpy(), "array([], shape=(0, 3), dtype=float32)");
    assert_eq!(
        Array::arange(DType::F32, &[2000]).repr_numpy(),
        "array([0.000e+00, 1.000e+00, 2.000e+00, ..., 1.997e+03, 1.998e+03,\n       1.999e+03], shape=(2000,), dtype=float32)"
    );
    assert_eq!(
        Array::arange(DType::I32, &[2000]).repr_numpy(),
        "array([   0,    1,    2, ..., 1997, 1998, 1999],\n      shape=(2000,), dtype=int32)"
    );
    let long = Array::arange(DType::I32, &[30]).repr_numpy();
    assert_eq!(
        long,
        "array([ 0,  1,  2,  3,  4,  5,  6,  7,  8,  9, 10, 11, 12, 13, 14, 15, 16,\n       17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29], dtype=int32)"
    );
}

// ------------------------------------------------------------------ parse_value

#[test]
fn parse_value_scalars() {
    let s = |spec: &str| parse_value(spec, 0).unwrap();
    let a = s("1024:u32");
    assert_eq!((a.dtype, a.ndim(), a.get(&[])), (DType::U32, 0, Scalar::UInt(1024)));
    assert_eq!(s("0.5:f32").get(&[]), Scalar::Float(0.5));
    assert_eq!(s("true:bool").get(&[]), Scalar::Bool(true));
    assert_eq!(s("False:bool").get(&[]), Scalar::Bool(false));
    assert_eq!(s("-3:int32").get(&[]), Scalar::Int(-3));
    assert_eq!(s("0xFF:u8").get(&[]), Scalar::UInt(255));
    assert_eq!(s("-0x10:i64").get(&[]), Scalar::Int(-16));
    assert_eq!(s("18446744073709551615:u64").get(&[]), Scalar::UInt(u64::MAX));
    assert_eq!(s("-9223372036854775808:i64").get(&[]), Scalar::Int(i64::MIN));
    assert_eq!(s("1e3:i32").get(&[]), Scalar::Int(1000));
    assert_eq!(s("1.5:bfloat16").get(&[]), Scalar::Float(1.5));
    assert_eq!(s("3:float16").get(&[]), Scalar::Float(3.0));
    assert!(s("inf:f32").get_f64(&[]).is_infinite());
    assert!(s("nan:f32").get_f64(&[]).is_nan());
    assert_eq!(s(" 7 : i8 ").get(&[]), Scalar::Int(7));
}

#[test]
fn parse_value_generators() {
    let g = |spec: &str| parse_value(spec, 5).unwrap();
    let z = g("zeros(512,512):f32");
    assert_eq!((z.dtype, z.shape.clone()), (DType::F32, vec![512, 512]));
    assert!(z.to_f64_vec().iter().all(|&v| v == 0.0));
    assert_eq!(g("ones(3):i16").to_f64_vec(), vec![1.0; 3]);
    assert_eq!(g("arange(2,3):u32").to_f64_vec(), vec![0.0, 1.0, 2.0, 3.0, 4.0, 5.0]);
    let r = g("rand(64,4):f32");
    assert_eq!(r.shape, vec![64, 4]);
    assert!(r.same_as(&Array::rand(DType::F32, &[64, 4], 5)));
    let ri = g("randint(10,20,0,3):i32");
    assert_eq!(ri.shape, vec![10, 20]);
    assert!(ri.to_f64_vec().iter().all(|&v| (0.0..3.0).contains(&v)));
    let f = g("fill(2,2,0.25):f16");
    assert_eq!(f.to_f64_vec(), vec![0.25; 4]);
    assert_eq!(g("fill(3,-1):i8").to_f64_vec(), vec![-1.0; 3]);
    assert_eq!(g("zeros():f32").shape, Vec::<usize>::new());
    assert_eq!(g("zeros((4, 4)):float32").shape, vec![4, 4]);
    assert_eq!(g("arange(0):f32").len(), 0);
}

#[test]
fn parse_value_errors() {
    let e = |spec: &str| parse_value(spec, 0).unwrap_err();
    assert!(e("1024").contains("VALUE:DTYPE"));
    assert!(e("1:f64").contains("no double"));
    assert!(e("1:f99").contains("valid dtypes"));
    assert!(e("256:u8").contains("out of range"));
    assert!(e("-1:u32").contains("out of range"));
    assert!(e("1.5:i32").contains("integer"));
    assert!(e("abc:f32").contains("not a number"));
    assert!(e("2:bool").contains("true or false"));
    assert!(e(":f32").contains("missing value"));
    assert!(e("1e6:f16").contains("overflows"));
    assert!(e("zeros(4,x):f32").contains("SHAPE"));
    assert!(e("zeros(4,-1):f32").contains("SHAPE"));
    assert!(e("zeros(4:f32").contains("missing `)`"));
    assert!(e("empty(4):f32").contains("unknown generator"));
    assert!(e("randint(4):i32").contains("SHAPE,LO,HI"));
    assert!(e("randint(4,5,1):i32").contains("empty range"));
    assert!(e("randint(4,0,300):u8").contains("does not fit"));
    assert!(e("fill():f32").contains("SHAPE,VALUE"));
    assert!(e("fill(2,300):u8").contains("out of range"));
    assert!(e("zeros(100000,100000,100000):f32").contains("limit"));
    assert!(e("zeros(4294967296,4294967296,4294967296):f32").contains("too large"));
    assert!(e("@/nonexistent/x.npy").contains("cannot read"));
}
