//! A quick mutation fuzzer for machines without cargo-fuzz (the targets in
//! `fuzz/` are the thorough ones): compiles mutated copies of seed files
//! (line and token edits, inserted C++ words), half of them with debugger
//! probes asked for at random lines, runs the kernels of those that compile
//! on a tiny grid (watching a thread, stop by stop, when probes were asked
//! for), and reports any panic or a case slower than two seconds.
//!
//! cargo run --release -p gpu --example mutate -- SECONDS FILE.metal...

use gpu::ir::ParamKind;
use gpu::{Dispatch, DispatchMode, RunOptions};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

mod mutation;
use mutation::{mutate, Rng};

/// Expressions a probe asks for (names kernels often have, and mistakes).
const PROBES: &[&str] =
    &["i", "tid", "a[i]", "out[i]", "x + 1", "acc", "s, i * 2", "gid.x", "sum", "i = 3", "f(1.0f)", "{", "a[", "(", "simd_sum(x)"];

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let secs: u64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(60);
    let seeds: Vec<String> = args[2.min(args.len())..].iter().filter_map(|p| std::fs::read_to_string(p).ok()).collect();
    if seeds.is_empty() {
        eprintln!("usage: mutate SECONDS FILE.metal...");
        std::process::exit(2);
    }
    let start = Instant::now();
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let (mut runs, mut failures) = (0u64, 0u64);
    while start.elapsed() < Duration::from_secs(secs) {
        let seed = &seeds[rng.below(seeds.len())];
        let text = mutate(seed, &mut rng);
        let t = text.clone();
        let probes = probe_requests(&text, &mut rng);
        // Kept on disk first: a stack overflow aborts the process.
        let _ = std::fs::write("mutate-current.metal", &text);
        let began = Instant::now();
        let r = std::thread::Builder::new()
            .stack_size(2 * 1024 * 1024)
            .spawn(move || {
                let watched = !probes.requests.is_empty();
                let c = msl::compile("fuzz.metal", &t, &msl::CompileOptions { probes, ..Default::default() });
                let _ = c.render(false);
                if let Some(p) = c.program.as_ref() {
                    run_kernels(p, watched);
                }
            })
            .expect("spawn")
            .join();
        runs += 1;
        let slow = began.elapsed() > Duration::from_secs(2);
        if r.is_err() || slow {
            failures += 1;
            let name = format!("mutate-failure-{runs}.metal");
            let _ = std::fs::write(&name, &text);
            eprintln!("{} after {:?}: saved {name}", if slow { "slow" } else { "panic" }, began.elapsed());
        }
    }
    println!("{runs} runs, {failures} failures");
}

/// Probes for half of the cases: one to three lines (or every line) of
/// the text, each with an expression from `PROBES`.
fn probe_requests(text: &str, rng: &mut Rng) -> msl::probe::Probes {
    use msl::probe::{ProbeAt, ProbeRequest};
    let mut requests = Vec::new();
    if rng.below(2) == 0 {
        let lines = text.lines().count() + 2;
        for n in 0..1 + rng.below(3) {
            let at = if rng.below(4) == 0 { ProbeAt::Everywhere } else { ProbeAt::Line { file: None, line: rng.below(lines) as u32 } };
            let optional = matches!(at, ProbeAt::Everywhere);
            requests.push(ProbeRequest { at, text: PROBES[rng.below(PROBES.len())].to_string(), name: format!("probe {n}"), optional });
        }
    }
    msl::probe::Probes { requests, view: None }
}

/// Lower and run up to two kernels on four threads with zeroed buffers;
/// `watched`: as the debugger does, recording thread 1's probes, then its
/// stops.
fn run_kernels(p: &msl::hir::Program, watched: bool) {
    let ids: Vec<_> = p.kernels().map(|(id, _)| id).take(2).collect();
    for id in ids {
        let Ok(k) = gpu::lower::lower_kernel(p, id) else { continue };
        let mut buffers = BTreeMap::new();
        let mut opts = RunOptions { budget: 20_000, probe: watched.then_some(([1, 0, 0], 100)), ..Default::default() };
        for param in &k.params {
            match &param.kind {
                ParamKind::Buffer { index, .. } => {
                    buffers.insert(*index, vec![0u8; 256]);
                }
                ParamKind::ThreadgroupBuffer { index, .. } => {
                    opts.threadgroup_buffers.insert(*index, 256);
                }
                ParamKind::Attr { .. } => {}
            }
        }
        let d = Dispatch { grid: [4, 1, 1], threadgroup: [4, 1, 1], mode: DispatchMode::Threads };
        let _ = gpu::run(&k, &d, &mut buffers.clone(), &opts);
        if watched {
            let how = gpu::lower::LowerOptions { debug_stops: true, ..Default::default() };
            let Ok(k) = gpu::lower::lower_kernel_with(p, id, how) else { continue };
            let stops = RunOptions { probe: None, stops: Some(([1, 0, 0], 200)), ..opts };
            let _ = gpu::run(&k, &d, &mut buffers, &stops);
        }
    }
}
