//! A differential mutation fuzzer for the compiled tier: mutates seed
//! kernels (the edits of `crates/gpu/examples/mutation`), and for every
//! kernel that compiles, runs it interpreted and compiled, with checks off
//! and on, on two threadgroups of small, varied inputs. A failure is a
//! panic, a case slower than five seconds, findings that differ with
//! checks on, or buffers that differ (with checks off: for a kernel
//! `--check all` finds nothing wrong with); each is saved to a file.
//! `DIFFERENTIAL_CURRENT=path` keeps the input being run in `path`.
//!
//! cargo run --release -p jit --example differential_fuzz -- SECONDS FILE.metal...

mod differential;
#[path = "../../gpu/examples/mutation/mod.rs"]
mod mutation;

use mutation::{mutate, Rng};
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
        // A crash that kills the process leaves its input here, when asked
        // (as the cargo-fuzz target): never a file in the working folder
        // by default.
        if let Some(path) = std::env::var_os("DIFFERENTIAL_CURRENT") {
            let _ = std::fs::write(path, &text);
        }
        let t = text.clone();
        let began = Instant::now();
        let r = std::thread::Builder::new().stack_size(8 * 1024 * 1024).spawn(move || differential::check(&t, fill)).expect("spawn").join();
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
