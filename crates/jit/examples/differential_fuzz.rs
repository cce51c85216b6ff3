//! A differential mutation fuzzer for the compiled tier: mutates seed
//! kernels (the edits of `crates/gpu/examples/mutation`), and for every
//! kernel that compiles, runs it interpreted and compiled with checks off
//! on two threadgroups of small, varied inputs. A failure is a panic, a
//! case slower than five seconds, or — for a kernel `--check all` finds
//! nothing wrong with — buffers that differ; each is saved to a file.
//!
//! cargo run --release -p jit --example differential_fuzz -- SECONDS FILE.metal...

#[path = "../../gpu/examples/mutation/mod.rs"]
mod mutation;

use gpu::ir::ParamKind;
use gpu::{CheckLevel, Dispatch, DispatchMode, RunOptions};
use mutation::{mutate, Rng};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let secs: u64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(60);
    let seeds: Vec<String> = args[2.min(args.len())..].iter().filter_map(|p| std::fs::read_to_string(p).ok()).collect();
    if seeds.is_empty() {
        eprintln!("usage: differential_fuzz SECONDS FILE.metal...");
        std::process::exit(2);
    }
    let start = Instant::now();
    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    let (mut runs, mut compared, mut native, mut failures) = (0u64, 0u64, 0u64, 0u64);
    while start.elapsed() < Duration::from_secs(secs) {
        let seed = &seeds[rng.below(seeds.len())];
        // One case in four runs the seed itself: unmutated kernels reach
        // the compiled code far more often.
        let text = if rng.below(4) == 0 { seed.clone() } else { mutate(seed, &mut rng) };
        let fill = rng.next();
        let _ = std::fs::write("differential-current.metal", &text);
        let t = text.clone();
        let began = Instant::now();
        let r = std::thread::Builder::new().stack_size(8 * 1024 * 1024).spawn(move || check(&t, fill)).expect("spawn").join();
        runs += 1;
        let slow = began.elapsed() > Duration::from_secs(5);
        let why = match r {
            Err(_) => Some("panic".to_string()),
            Ok(Err(e)) => Some(e),
            Ok(Ok((c, n))) => {
                compared += c;
                native += n;
                slow.then(|| format!("slow ({:?})", began.elapsed()))
            }
        };
        if let Some(why) = why {
            failures += 1;
            let name = format!("differential-failure-{runs}.metal");
            let _ = std::fs::write(&name, &text);
            eprintln!("{why}: saved {name}");
        }
    }
    println!("{runs} runs, {compared} compared ({native} ran compiled), {failures} failures");
}

/// Both engines on every kernel (up to two) of `text`: how many runs were
/// compared and how many of them ran compiled, or what differed.
fn check(text: &str, fill: u64) -> Result<(u64, u64), String> {
    let c = msl::compile("fuzz.metal", text, &Default::default());
    let Some(p) = c.program.as_ref() else { return Ok((0, 0)) };
    let (mut compared, mut native) = (0, 0);
    for (id, f) in p.kernels().take(2) {
        let Ok(k) = gpu::lower::lower_kernel(p, id) else { continue };
        let Ok(n) = jit::compile(&k) else { continue };
        let n = Arc::new(n);
        let mut buffers = BTreeMap::new();
        let mut tg_buffers = BTreeMap::new();
        for param in &k.params {
            match &param.kind {
                ParamKind::Buffer { index, .. } => {
                    // Small integers (as floats or ints), so indices stay in range often.
                    let words: Vec<u8> = (0..256u64)
                        .flat_map(|i| {
                            let v = (i.wrapping_mul(fill | 1) >> 7) % 9;
                            if fill & 1 == 0 {
                                (v as f32).to_le_bytes()
                            } else {
                                (v as u32).to_le_bytes()
                            }
                        })
                        .collect();
                    buffers.insert(*index, words);
                }
                ParamKind::ThreadgroupBuffer { index, .. } => {
                    tg_buffers.insert(*index, 256);
                }
                ParamKind::Attr { .. } => {}
            }
        }
        let d = Dispatch { grid: [48, 1, 1], threadgroup: [32, 1, 1], mode: DispatchMode::Threads };
        let run = |check: CheckLevel, compiled: Option<Arc<jit::Native>>| {
            let opts = RunOptions {
                check,
                budget: 200_000,
                threadgroup_buffers: tg_buffers.clone(),
                compiled: compiled.map(|n| n as Arc<dyn gpu::engine::Compiled>),
                ..Default::default()
            };
            let mut b = buffers.clone();
            let r = gpu::run(&k, &d, &mut b, &opts);
            (b, r.findings.len())
        };
        let clean = run(CheckLevel::All, None).1 == 0;
        let want = run(CheckLevel::None, None);
        let before = n.threadgroups_run();
        let got = run(CheckLevel::None, Some(n.clone()));
        let ran = n.threadgroups_run() > before;
        if clean || !ran {
            compared += 1;
            native += ran as u64;
            if got.0 != want.0 {
                return Err(format!("kernel `{}`: the compiled run's buffers differ (it ran compiled: {ran})", f.name));
            }
            if got.1 != want.1 {
                return Err(format!("kernel `{}`: {} findings compiled, {} interpreted", f.name, got.1, want.1));
            }
        }
    }
    Ok((compared, native))
}
