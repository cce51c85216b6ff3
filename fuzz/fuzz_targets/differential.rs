//! The compiled tier against the interpreter: compile the input and run
//! every kernel (up to two) both ways with checks off on two threadgroups
//! of small inputs (`crates/jit/examples/differential`). For a kernel
//! `--check all` finds nothing wrong with, or one the compiled tier gave up
//! on, buffers and findings must be equal; any difference panics.
//!
//! Most inputs libFuzzer's byte edits make are not Metal, so three
//! mutations in four are the project's source edits (lines, tokens,
//! C++ words: `crates/gpu/examples/mutation`) and one is libFuzzer's own.
#![no_main]

#[path = "../../crates/jit/examples/differential/mod.rs"]
mod differential;
#[path = "../../crates/gpu/examples/mutation/mod.rs"]
mod mutation;

use libfuzzer_sys::{fuzz_mutator, fuzz_target, fuzzer_mutate};

fuzz_target!(|data: &[u8]| {
    let Ok(src) = std::str::from_utf8(data) else { return };
    if src.len() > 16 * 1024 {
        return;
    }
    // A crash that kills the process before libFuzzer can save the input
    // (a stack overflow in compiled code) leaves it here when asked.
    if let Some(path) = std::env::var_os("DIFFERENTIAL_CURRENT") {
        let _ = std::fs::write(path, data);
    }
    // The inputs' fill pattern comes from the bytes, so a case reproduces.
    let fill = data.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| (h ^ b as u64).wrapping_mul(0x100_0000_01b3));
    if let Err(e) = differential::check(src, fill) {
        panic!("{e}");
    }
});

fuzz_mutator!(|data: &mut [u8], size: usize, max_size: usize, seed: u32| {
    let mut rng = mutation::Rng(u64::from(seed) << 1 | 1);
    let Ok(src) = std::str::from_utf8(&data[..size]) else { return fuzzer_mutate(data, size, max_size) };
    if rng.below(4) == 0 {
        return fuzzer_mutate(data, size, max_size);
    }
    let out = mutation::mutate(src, &mut rng);
    if out.len() > max_size {
        return fuzzer_mutate(data, size, max_size);
    }
    data[..out.len()].copy_from_slice(out.as_bytes());
    out.len()
});
