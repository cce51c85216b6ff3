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
use common::fixture::*;
use common::*;
use std::collections::BTreeMap;
use std::path::Path;

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
