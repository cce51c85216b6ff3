//! Kernel fixtures: `.metal` files whose header says how to run them and
//! what must come out, run by this one harness.
//!
//! - `fixtures/kinder/`: kernels whose result depends on a freedom the
//!   hardware has (uninitialized memory, barrier flags, schedules, SIMD-group
//!   lanes, alignment); each states the findings it must get and where. The
//!   simulator must never be kinder than a real Apple GPU.
//! - `fixtures/idioms/`: correct idioms that must get no finding.
//! - `fixtures/semantics/`: the C++ that real Metal libraries are written
//!   in; each states the exact contents its buffers must end with, computed
//!   by hand, and must get no finding.
//!
//! A file's header says how to run it:
//!
//! ```text
//! // KERNEL: name
//! // GRID: 64            (threads, as dispatchThreads; x[,y[,z]])
//! // THREADGROUP: 32
//! // BUFFER: 0 arange 64 f32      (index, contents, element count, dtype)
//! // EXPECT: data-race @ 12       (kind @ line; several allowed)
//! // OUTPUT: 1 = 0 2 4 6          (buffer 1's elements after the run)
//! ```
//!
//! Contents: `zeros`, `ones`, `arange`, `mod=M` (arange modulo M), `fill=V`,
//! `rand` (seeded, in [-1, 1)), `uninit` (garbage until written, as an MLX
//! output without `init_value`). Dtypes: `f32 f16 i32 u32 u16 u8 u64`.
//! `OUTPUT` values are compared exactly (as the buffer's dtype; `nan`,
//! `inf`, `-inf` allowed). Every kernel also runs with the access trace
//! attached: tracing must not change what is found.

mod common;
use common::*;
use std::collections::BTreeMap;
use std::path::Path;

struct Case {
    kernel: String,
    grid: [u32; 3],
    threadgroup: [u32; 3],
    buffers: Vec<(u32, String, usize, String)>,
    expect: Vec<(String, usize)>,
    outputs: Vec<(u32, Vec<f64>)>,
}

fn dims(v: &str) -> [u32; 3] {
    let mut d = [1u32; 3];
    for (i, x) in v.split(',').enumerate().take(3) {
        d[i] = x.trim().parse().expect("a dimension");
    }
    d
}

fn parse(src: &str, path: &Path) -> Case {
    let mut c =
        Case { kernel: String::new(), grid: [1; 3], threadgroup: [1; 3], buffers: Vec::new(), expect: Vec::new(), outputs: Vec::new() };
    for line in src.lines().take_while(|l| l.starts_with("//")) {
        let Some((key, value)) = line.trim_start_matches("//").split_once(':') else { continue };
        let value = value.trim();
        match key.trim() {
            "KERNEL" => c.kernel = value.to_string(),
            "GRID" => c.grid = dims(value),
            "THREADGROUP" => c.threadgroup = dims(value),
            "BUFFER" => {
                let f: Vec<&str> = value.split_whitespace().collect();
                assert_eq!(f.len(), 4, "{}: BUFFER takes index, contents, count, dtype", path.display());
                c.buffers.push((f[0].parse().expect("index"), f[1].into(), f[2].parse().expect("count"), f[3].into()));
            }
            "EXPECT" => {
                let (kind, at) = value.split_once('@').expect("EXPECT: kind @ line");
                c.expect.push((kind.trim().to_string(), at.trim().parse().expect("a line")));
            }
            "OUTPUT" => {
                let (index, values) = value.split_once('=').expect("OUTPUT: index = values");
                let values = values.split_whitespace().map(|v| v.parse().unwrap_or_else(|_| panic!("OUTPUT value `{v}`"))).collect();
                c.outputs.push((index.trim().parse().expect("a buffer index"), values));
            }
            _ => {}
        }
    }
    assert!(!c.kernel.is_empty(), "{}: no KERNEL line", path.display());
    c
}

fn element(dtype: &str, v: f64) -> Vec<u8> {
    match dtype {
        "f32" => (v as f32).to_le_bytes().to_vec(),
        "f16" => half::f16::from_f64(v).to_le_bytes().to_vec(),
        "i32" => (v as i32).to_le_bytes().to_vec(),
        "u32" => (v as u32).to_le_bytes().to_vec(),
        "u16" => (v as u16).to_le_bytes().to_vec(),
        "u8" => vec![v as u8],
        "u64" => (v as u64).to_le_bytes().to_vec(),
        other => panic!("unknown dtype {other}"),
    }
}

/// The elements of a buffer of `dtype`, as f64 (exact for every dtype here).
fn elements(dtype: &str, bytes: &[u8]) -> Vec<f64> {
    let width = element(dtype, 0.0).len();
    bytes
        .chunks_exact(width)
        .map(|b| match dtype {
            "f32" => f32::from_le_bytes(b.try_into().unwrap()) as f64,
            "f16" => half::f16::from_le_bytes(b.try_into().unwrap()).to_f64(),
            "i32" => i32::from_le_bytes(b.try_into().unwrap()) as f64,
            "u32" => u32::from_le_bytes(b.try_into().unwrap()) as f64,
            "u16" => u16::from_le_bytes(b.try_into().unwrap()) as f64,
            "u8" => b[0] as f64,
            "u64" => u64::from_le_bytes(b.try_into().unwrap()) as f64,
            other => panic!("unknown dtype {other}"),
        })
        .collect()
}

fn contents(init: &str, count: usize, dtype: &str) -> Vec<u8> {
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    (0..count)
        .flat_map(|i| {
            let v = match init {
                "zeros" | "uninit" => 0.0,
                "ones" => 1.0,
                "arange" => i as f64,
                "rand" => {
                    seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    (seed >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
                }
                s if s.starts_with("mod=") => (i % s[4..].parse::<usize>().expect("modulus")) as f64,
                s if s.starts_with("fill=") => s[5..].parse().expect("a value"),
                other => panic!("unknown contents {other}"),
            };
            element(dtype, v)
        })
        .collect()
}

/// (kind, line) of every finding of one run of `case`, and the buffers after it.
/// (finding kind, line) pairs, sorted.
type Found = Vec<(String, usize)>;

fn run_case(k: &Compiled, case: &Case, traced: bool) -> (Found, BTreeMap<u32, Vec<u8>>) {
    let mut bufs = BTreeMap::new();
    let mut opts = RunOptions { trace: traced.then_some(1 << 20), ..Default::default() };
    for (index, init, count, dtype) in &case.buffers {
        bufs.insert(*index, contents(init, *count, dtype));
        if init == "uninit" {
            opts.uninitialized_buffers.push(*index);
        }
    }
    let r = run(&k.kernel, &threads(case.grid, case.threadgroup), &mut bufs, &opts);
    let mut out: Vec<(String, usize)> = r.findings.iter().map(|f| (f.kind.name().to_string(), k.line(f))).collect();
    out.sort();
    out.dedup();
    (out, bufs)
}

fn findings(k: &Compiled, case: &Case, traced: bool) -> Vec<(String, usize)> {
    run_case(k, case, traced).0
}

/// Where the buffers after the run differ from the file's `OUTPUT` lines.
fn wrong_outputs(case: &Case, bufs: &BTreeMap<u32, Vec<u8>>) -> Vec<String> {
    let mut wrong = Vec::new();
    for (index, want) in &case.outputs {
        let dtype = case.buffers.iter().find(|b| b.0 == *index).map(|b| b.3.as_str()).expect("OUTPUT of a declared BUFFER");
        let got = elements(dtype, &bufs[index]);
        let same = |a: f64, b: f64| a == b || (a.is_nan() && b.is_nan());
        if got.len() != want.len() || got.iter().zip(want).any(|(g, w)| !same(*g, *w)) {
            wrong.push(format!("buffer {index}: expected {want:?}, got {got:?}"));
        }
    }
    wrong
}

fn corpus(dir: &str) -> Vec<(std::path::PathBuf, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(dir);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "metal"))
        .collect();
    files.sort();
    files.into_iter().map(|p| (p.clone(), std::fs::read_to_string(&p).expect("read"))).collect()
}

fn check_file(path: &Path, src: &str) -> Result<usize, String> {
    let case = parse(src, path);
    let k = compile_full(src, &case.kernel);
    let (got, bufs) = run_case(&k, &case, false);
    let traced = findings(&k, &case, true);
    let name = path.file_name().unwrap().to_string_lossy();
    let wrong = wrong_outputs(&case, &bufs);
    if !wrong.is_empty() {
        return Err(format!("{name}: {}", wrong.join("; ")));
    }
    if got != traced {
        return Err(format!("{name}: tracing changed the findings: {got:?} untraced, {traced:?} traced"));
    }
    if findings(&k, &case, false) != got {
        return Err(format!("{name}: two runs gave different findings"));
    }
    if case.expect.is_empty() {
        return if got.is_empty() { Ok(0) } else { Err(format!("{name}: a correct idiom got findings {got:?}")) };
    }
    for want in &case.expect {
        if !got.contains(want) {
            return Err(format!("{name}: expected {} at line {}, got {got:?}", want.0, want.1));
        }
    }
    Ok(case.expect.len())
}

fn check_corpus(dir: &str, min_files: usize) {
    let files = corpus(dir);
    assert!(files.len() >= min_files, "{dir}: {} kernels, want at least {min_files}", files.len());
    let errors: Vec<String> = files.iter().filter_map(|(p, s)| check_file(p, s).err()).collect();
    assert!(errors.is_empty(), "{} of {} failed:\n{}", errors.len(), files.len(), errors.join("\n"));
}

#[test]
fn kinder_than_hardware_kernels_get_their_findings() {
    check_corpus("kinder", 1);
}

#[test]
fn correct_idioms_get_no_finding() {
    check_corpus("idioms", 1);
}

#[test]
fn cpp_semantics_fixtures_compute_their_outputs() {
    check_corpus("semantics", 1);
    // Every semantics fixture states what it computes.
    for (path, src) in corpus("semantics") {
        assert!(!parse(&src, &path).outputs.is_empty(), "{}: no OUTPUT line", path.display());
    }
}
