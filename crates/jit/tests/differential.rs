//! The compiled tier against the interpreter on every kernel fixture of the
//! repository: with checks off, both must leave every buffer bit for bit
//! the same, for every kernel `--check all` finds nothing wrong with (a
//! racy or faulting kernel has no one right answer; there the compiled
//! tier must give up or agree). Also counts how many kernels really ran
//! compiled, so that a tier that always gives up cannot pass.

#[path = "../../gpu/tests/common/fixture.rs"]
#[allow(dead_code)]
mod fixture;

use gpu::{CheckLevel, Dispatch, DispatchMode, RunOptions};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

fn files() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut out = Vec::new();
    for dir in [
        "crates/gpu/tests/fixtures/semantics",
        "crates/gpu/tests/fixtures/idioms",
        "crates/gpu/tests/fixtures/kinder",
        "crates/msl/tests/kernels/features",
        "crates/msl/tests/kernels/seeds",
        "crates/jit/tests/kernels",
    ] {
        let Ok(rd) = std::fs::read_dir(root.join(dir)) else { continue };
        for e in rd.flatten() {
            let p = e.path();
            if p.extension().is_some_and(|x| x == "metal") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// Buffers for a kernel whose file names none: for every buffer
/// parameter, one element per thread (at least 1,024), small values.
fn made_up_buffers(k: &gpu::Kernel, case: &fixture::Case) -> Vec<(u32, String, usize, String)> {
    let threads = case.grid.iter().product::<u32>().max(1024) as usize;
    let mut out = Vec::new();
    for p in &k.params {
        if let gpu::ir::ParamKind::Buffer { index, pointee, pointee_size, .. } = &p.kind {
            let float = format!("{pointee:?}").to_lowercase().contains("float") || format!("{pointee:?}").to_lowercase().contains("half");
            let (dtype, width) = if float { ("f32", 4) } else { ("u32", 4) };
            let count = (threads * (*pointee_size as usize).max(4)).div_ceil(width);
            out.push((*index, "mod=7".to_string(), count, dtype.to_string()));
        }
    }
    out
}

struct Outcome {
    buffers: BTreeMap<u32, Vec<u8>>,
    findings: usize,
    /// Every finding as the report gives it (kind, message, place, thread, count).
    report: Vec<String>,
}

/// A run of `case`; compiled runs on two workers are given the initial
/// buffers as the caller's (`gpu::run_from_pristine`, as the command line
/// runs), so that outputs are written in place and restored on giving up.
fn run(k: &gpu::Kernel, case: &fixture::Case, check: CheckLevel, threads: usize, compiled: Option<Arc<jit::Native>>) -> Outcome {
    let mut bufs = BTreeMap::new();
    for (index, init, count, dtype) in &case.buffers {
        bufs.insert(*index, fixture::contents(init, *count, dtype));
    }
    let kept = bufs.clone();
    let in_place = compiled.is_some() && threads == 2;
    let opts = RunOptions { check, threads, compiled: compiled.map(|n| n as Arc<dyn gpu::engine::Compiled>), ..Default::default() };
    let d = Dispatch { grid: case.grid, threadgroup: case.threadgroup, mode: DispatchMode::Threads };
    let r = if in_place {
        let pristine: gpu::Pristine = kept.iter().map(|(&i, b)| (i, &b[..])).collect();
        gpu::run_from_pristine(k, &d, &mut bufs, &opts, &mut |_, _| {}, &pristine)
    } else {
        gpu::run(k, &d, &mut bufs, &opts)
    };
    let report = r.findings.iter().map(|f| format!("{f:?}")).collect();
    Outcome { buffers: bufs, findings: r.findings.len(), report }
}

/// With checks on, a run with the compiled kernel must give exactly the
/// interpreter's findings and buffers: the compiled code gives up wherever
/// the interpreter might report something. Returns how many runs
/// compared, and how many of those ran compiled.
fn compare_checked(
    name: &str,
    k: &gpu::Kernel,
    case: &fixture::Case,
    failures: &mut Vec<String>,
    refused: &mut Vec<String>,
) -> (usize, usize) {
    let (mut compared, mut native) = (0, 0);
    let one_row = case.grid[1..] == [1, 1];
    for (check, effort) in [(CheckLevel::Memory, None), (CheckLevel::All, None), (CheckLevel::All, Some(jit::Effort::Quick))] {
        // (As `auto` compiles it: a one-row grid lets the checks skip buffers no two threads share.)
        let n = match effort.map_or_else(|| jit::compile_for(k, check, one_row), |e| jit::compile_with_effort(k, check, one_row, e)) {
            Ok(n) => Arc::new(n),
            Err(e) => {
                refused.push(format!("{name} ({check:?}, {effort:?}): {e}"));
                continue;
            }
        };
        for threads in [1, 2] {
            let want = run(k, case, check, threads, None);
            let before = n.threadgroups_run();
            let got = run(k, case, check, threads, Some(n.clone()));
            let ran = n.threadgroups_run() > before;
            compared += 1;
            native += ran as usize;
            if got.report != want.report {
                failures.push(format!(
                    "{name} ({check:?}, {effort:?}, threads {threads}, compiled code ran: {ran}): findings differ\n  compiled: {:?}\n  interpreted: {:?}",
                    got.report, want.report
                ));
            } else if got.buffers != want.buffers {
                failures.push(format!("{name} ({check:?}, {effort:?}, threads {threads}, compiled code ran: {ran}): buffers differ"));
            }
        }
    }
    (compared, native)
}

#[test]
fn compiled_runs_agree_with_the_interpreter() {
    let (mut compared, mut native, mut refused, mut failures) = (0, 0, Vec::new(), Vec::new());
    let (mut checked, mut checked_native, mut checked_refused) = (0, 0, Vec::new());
    for path in files() {
        let src = std::fs::read_to_string(&path).expect("read");
        if !src.lines().take_while(|l| l.starts_with("//")).any(|l| l.starts_with("// KERNEL:")) {
            continue;
        }
        // Only the lines that say how to run it (other corpora have other
        // expectation lines).
        let header: String = src
            .lines()
            .take_while(|l| l.starts_with("//"))
            .filter(|l| ["// KERNEL:", "// GRID:", "// THREADGROUP:", "// BUFFER:"].iter().any(|k| l.starts_with(k)))
            .map(|l| format!("{l}\n"))
            .collect();
        let mut case = fixture::parse(&header, &path);
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let c = msl::compile(&name, &src, &Default::default());
        let Some(p) = c.program.as_ref() else { continue };
        let Some((id, _)) = p.kernels().find(|(_, f)| f.name == case.kernel) else { continue };
        let Ok(k) = gpu::lower::lower_kernel(p, id) else { continue };
        if case.buffers.is_empty() {
            case.buffers = made_up_buffers(&k, &case);
        }
        let (c, nat) = compare_checked(&name, &k, &case, &mut failures, &mut checked_refused);
        checked += c;
        checked_native += nat;
        let clean = run(&k, &case, CheckLevel::All, 1, None).findings == 0;
        // (The effort its size picks, and the quick register allocator
        // that large kernels get, on every kernel.)
        for (effort, n) in
            [("by size", jit::compile(&k)), ("quick", jit::compile_with_effort(&k, CheckLevel::None, false, jit::Effort::Quick))]
        {
            let n = match n {
                Ok(n) => Arc::new(n),
                Err(e) => {
                    refused.push(format!("{name} ({effort}): {e}"));
                    continue;
                }
            };
            let (c, nat) = compare_unchecked(&name, &k, &case, &n, clean, effort, &mut failures);
            compared += c;
            native += nat;
        }
    }
    eprintln!("{compared} runs compared, {native} of them ran compiled; {} kernels refused:\n  {}", refused.len(), refused.join("\n  "));
    eprintln!(
        "with checks on: {checked} runs compared, {checked_native} of them ran compiled; {} refused:\n  {}",
        checked_refused.len(),
        checked_refused.join("\n  ")
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(native >= 200, "only {native} clean runs ran compiled: the tier gives up too often");
    assert!(checked_native >= 150, "only {checked_native} runs with checks ran compiled: the checked tier gives up too often");
}

/// Runs `case` with checks off, interpreted and with `n`, on one worker
/// and two: a clean kernel's buffers and findings must agree. Returns how
/// many runs compared, and how many of those ran compiled.
fn compare_unchecked(
    name: &str,
    k: &gpu::Kernel,
    case: &fixture::Case,
    n: &Arc<jit::Native>,
    clean: bool,
    effort: &str,
    failures: &mut Vec<String>,
) -> (usize, usize) {
    let (mut compared, mut native) = (0, 0);
    for threads in [1, 2] {
        let want = run(k, case, CheckLevel::None, threads, None);
        let before = n.threadgroups_run();
        let got = run(k, case, CheckLevel::None, threads, Some(n.clone()));
        let ran = n.threadgroups_run() > before;
        if ran && clean {
            native += 1;
        }
        if clean || !ran {
            compared += 1;
            if got.buffers != want.buffers {
                failures.push(format!("{name} ({effort}, threads {threads}, compiled code ran: {ran}): buffers differ"));
            }
            if got.findings != want.findings {
                failures.push(format!(
                    "{name} ({effort}, threads {threads}): {} findings compiled, {} interpreted",
                    got.findings, want.findings
                ));
            }
        }
    }
    (compared, native)
}

/// Code compiled for a one-row grid skips the race shadow of `out[x]`
/// (each thread its own element); on a 2-D grid the rows share `x`, so it
/// must give up and let the interpreter report the race.
#[test]
fn one_row_code_gives_up_on_other_grids() {
    let src = "#include <metal_stdlib>\nusing namespace metal;\n\
               kernel void k(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) { out[i] = float(i); }\n";
    let c = msl::compile("k.metal", src, &Default::default());
    let p = c.program.as_ref().expect("compiles");
    let (id, _) = p.kernels().next().expect("a kernel");
    let k = gpu::lower::lower_kernel(p, id).expect("lowers");
    let one_row = Arc::new(jit::compile_for(&k, CheckLevel::All, true).expect("compiles"));
    let run = |grid: [u32; 3], compiled: Option<Arc<jit::Native>>| {
        let mut bufs = BTreeMap::from([(0u32, vec![0u8; 64 * 4])]);
        let opts =
            RunOptions { check: CheckLevel::All, compiled: compiled.map(|n| n as Arc<dyn gpu::engine::Compiled>), ..Default::default() };
        let d = Dispatch { grid, threadgroup: [8, 2, 1], mode: DispatchMode::Threads };
        let r = gpu::run(&k, &d, &mut bufs, &opts);
        (r.findings.iter().map(|f| format!("{f:?}")).collect::<Vec<_>>(), bufs)
    };
    // One row: compiled, clean, the interpreter's buffers.
    let before = one_row.threadgroups_run();
    let got = run([64, 1, 1], Some(one_row.clone()));
    assert!(one_row.threadgroups_run() > before, "the one-row code ran");
    assert_eq!(got, run([64, 1, 1], None));
    assert!(got.0.is_empty());
    // Two rows: the same findings as the interpreter's (a race), never clean.
    let got = run([16, 4, 1], Some(one_row.clone()));
    let want = run([16, 4, 1], None);
    assert!(!want.0.is_empty(), "the interpreter finds the race");
    assert_eq!(got, want);
}
