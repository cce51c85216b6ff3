//! Cross-checks against a real NumPy. Ignored by default (needs python3 with
//! numpy): `cargo test -p arrays -- --ignored`.

use std::process::Command;

use arrays::{Array, DType, ALL_DTYPES};

fn cases() -> Vec<(String, Array)> {
    let mut v: Vec<(String, Array)> = Vec::new();
    let mut seed = 1u64;
    let mut add = |name: &str, a: Array| v.push((name.to_string(), a));
    for dt in ALL_DTYPES {
        if dt == DType::BF16 {
            continue;
        }
        for shape in [
            vec![],
            vec![0],
            vec![3],
            vec![2, 3],
            vec![2, 3, 4],
            vec![2, 0],
            vec![7],
            vec![100],
            vec![1001],
            vec![40, 50],
            vec![11, 11, 11],
            vec![3, 30],
        ] {
            seed += 1;
            add(&format!("rand_{}_{:?}", dt.short_name(), shape), Array::rand(dt, &shape, seed));
            add(&format!("arange_{}_{:?}", dt.short_name(), shape), Array::arange(dt, &shape));
        }
    }
    let floats: Vec<(&str, Vec<f64>)> = vec![
        ("halves", vec![1.0, 2.5, 3.0]),
        ("big", vec![1e10, 1.5]),
        ("tiny", vec![1e-5, -1.5e-5, f64::INFINITY]),
        ("nan", vec![f64::NAN, 1.25, f64::NEG_INFINITY]),
        ("allnan", vec![f64::NAN, f64::INFINITY]),
        ("neg", vec![-1.0, 0.0, -0.0, 2.0]),
        ("thirds", vec![1.0 / 3.0, 2.0 / 3.0, 100.0]),
        ("ratio", vec![1.0, 999.0]),
        ("ratio2", vec![1.0, 1001.0]),
        ("e8", vec![99999999.0, 1.0]),
        ("long", (0..100).map(|i| i as f64 / 7.0 - 5.0).collect()),
        ("sci_long", (0..60).map(|i| (i as f64 - 30.0) * 1e5 + 0.5).collect()),
        ("small", vec![0.0001, 0.5, 0.00012345678]),
        ("million", vec![999999.0, 1e6, 3.25]),
        ("f16_1000", vec![3.0, 1000.0]),
        ("sub", vec![1e-40, 1.0]),
        ("wide", (0..30).map(|i| (i as f64 - 15.0) * 12345.678).collect()),
    ];
    for (name, vals) in floats {
        for dt in [DType::F32, DType::F16] {
            let a = Array::from_f64(dt, &[vals.len()], &vals).unwrap();
            add(&format!("{name}_{}", dt.short_name()), a);
        }
    }
    // random magnitudes, signs and shapes (some as transposed/sliced views)
    let mut rng = arrays::SplitMix64(99);
    for k in 0..80 {
        let nd = (rng.next_u64() % 4) as usize;
        let shape: Vec<usize> = (0..nd).map(|_| (rng.next_u64() % 9) as usize + 1).collect();
        let n: usize = shape.iter().product();
        let scale = 10f64.powi((rng.next_u64() % 16) as i32 - 7);
        let vals: Vec<f64> = (0..n)
            .map(|_| {
                let u = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
                let v = (u - 0.3) * scale;
                if rng.next_u64() % 5 == 0 {
                    v.round()
                } else {
                    v
                }
            })
            .collect();
        let dt = [DType::F32, DType::F16, DType::I32, DType::U8][k % 4];
        let a = Array::from_f64(dt, &shape, &vals).unwrap();
        let a = if k % 3 == 0 { a.t() } else { a };
        let a = if a.ndim() > 0 && k % 5 == 1 { a.slice(0, isize::MAX, isize::MIN, -2).unwrap() } else { a };
        add(&format!("random{k}_{}", dt.short_name()), a);
    }
    for x in [1.5, 1.0, -0.0, 1e-7, f64::NAN] {
        add(&format!("0d_{x}"), Array::full(DType::F32, &[], x));
    }
    add("bool0d", Array::full(DType::Bool, &[], 1.0));
    add("i64neg", Array::from_i64(DType::I64, &[2, 2], &[-5, 3, 100000, i64::MIN]).unwrap());
    add("u64max", Array::from_i64(DType::U64, &[2], &[-1, 3]).unwrap());
    v
}

#[test]
#[ignore]
fn repr_and_npy_match_numpy() {
    if Command::new("python3").args(["-c", "import numpy"]).status().map(|s| !s.success()).unwrap_or(true) {
        eprintln!("python3 with numpy not available; skipping");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let cases = cases();
    for (i, (_, a)) in cases.iter().enumerate() {
        a.write_npy(dir.path().join(format!("{i}.npy"))).unwrap();
    }
    let script = r#"
import sys, io, numpy as np
d, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    p = f"{d}/{i}.npy"
    a = np.load(p)
    b = io.BytesIO(); np.save(b, a)
    same = b.getvalue() == open(p, 'rb').read()
    print(repr(repr(a)), same)
"#;
    let out = Command::new("python3").args(["-c", script, dir.path().to_str().unwrap(), &cases.len().to_string()]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    let mut failures = Vec::new();
    for ((name, a), line) in cases.iter().zip(text.lines()) {
        let (lit, same) = line.rsplit_once(' ').unwrap();
        // lit is a Python string literal; evaluate the escapes we produce
        let expected = lit[1..lit.len() - 1].replace("\\n", "\n").replace("\\'", "'");
        let got = a.repr_numpy();
        if got != expected {
            failures.push(format!("{name}:\n--- numpy\n{expected}\n--- ours\n{got}\n"));
        }
        if same != "True" {
            failures.push(format!("{name}: np.save bytes differ from ours"));
        }
    }
    assert!(failures.is_empty(), "{} mismatches:\n{}", failures.len(), failures.join("\n"));
}

#[test]
#[ignore]
fn reads_files_numpy_writes() {
    if Command::new("python3").args(["-c", "import numpy"]).status().map(|s| !s.success()).unwrap_or(true) {
        eprintln!("python3 with numpy not available; skipping");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let script = r#"
import sys, numpy as np
d = sys.argv[1]
rng = np.random.default_rng(0)
cases = {
  'f4': rng.random((3, 4), dtype=np.float32),
  'f2': rng.random((5,)).astype(np.float16),
  'i1': np.arange(-5, 5, dtype=np.int8),
  'u1': np.arange(250, 256, dtype=np.uint8),
  'i2': np.arange(-3, 3, dtype=np.int16).reshape(2, 3),
  'u2': np.array([0, 65535], dtype=np.uint16),
  'i4': np.array([-2**31, 2**31 - 1], dtype=np.int32),
  'u4': np.array([2**32 - 1], dtype=np.uint32),
  'i8': np.array([-2**62, 5], dtype=np.int64),
  'u8': np.array([2**52, 7], dtype=np.uint64),
  'b1': np.array([[True, False], [False, True]]),
  'zero_d': np.array(2.5, dtype=np.float32),
  'empty': np.zeros((0, 3), dtype=np.int32),
  'fortran': np.asfortranarray(np.arange(24, dtype=np.int32).reshape(2, 3, 4)),
  'fortran2': np.asfortranarray(np.arange(6, dtype=np.float32).reshape(2, 3)),
  'view': np.arange(20, dtype=np.float32).reshape(4, 5)[::-1, 1::2],
}
for k, v in cases.items():
    np.save(f"{d}/{k}.npy", v)
    print(k, v.dtype.name, list(v.shape), [float(x) for x in v.ravel(order='C')])
np.save(f"{d}/bad_f8.npy", np.zeros(3))
np.save(f"{d}/bad_be.npy", np.zeros(3, dtype='>i4'))
"#;
    let out = Command::new("python3").args(["-c", script, dir.path().to_str().unwrap()]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    for line in String::from_utf8(out.stdout).unwrap().lines() {
        let mut parts = line.splitn(3, ' ');
        let (name, dtype) = (parts.next().unwrap(), parts.next().unwrap());
        let rest = parts.next().unwrap();
        let a = Array::read_npy(dir.path().join(format!("{name}.npy"))).unwrap();
        assert_eq!(a.dtype.mlx_name(), dtype, "{name}");
        let (shape, vals) = rest.split_once("] ").unwrap();
        let shape: Vec<usize> =
            shape.trim_start_matches('[').split(',').filter(|s| !s.trim().is_empty()).map(|s| s.trim().parse().unwrap()).collect();
        assert_eq!(a.shape, shape, "{name}");
        let vals: Vec<f64> =
            vals.trim_matches(['[', ']']).split(',').filter(|s| !s.trim().is_empty()).map(|s| s.trim().parse().unwrap()).collect();
        assert_eq!(a.to_f64_vec(), vals, "{name}");
    }
    assert!(Array::read_npy(dir.path().join("bad_f8.npy")).unwrap_err().contains("no double"));
    assert!(Array::read_npy(dir.path().join("bad_be.npy")).unwrap_err().contains("big-endian"));
}
