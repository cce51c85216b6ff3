//! Compile arbitrary source; if it has a kernel, lower it and run it on a
//! tiny grid (4 threads, one threadgroup) with zeroed 256-byte buffers and a
//! small instruction budget, then on four threadgroups split over three
//! workers. Nothing may panic or hang: bad kernels end in findings, lowering
//! errors or compile errors; split runs give the same result every time.
#![no_main]

use gpu::ir::ParamKind;
use gpu::{CheckLevel, Dispatch, DispatchMode, RunOptions};
use libfuzzer_sys::fuzz_target;
use std::collections::BTreeMap;

fuzz_target!(|data: &[u8]| {
    let Ok(src) = std::str::from_utf8(data) else { return };
    if src.len() > 16 * 1024 {
        return;
    }
    let c = msl::compile("fuzz.metal", src, &Default::default());
    if c.has_errors() {
        return;
    }
    let Some(p) = c.program.as_ref() else { return };
    let ids: Vec<_> = p.kernels().map(|(id, _)| id).take(2).collect();
    for id in ids {
        let Ok(k) = gpu::lower::lower_kernel(p, id) else { continue };
        let mut buffers = BTreeMap::new();
        let mut opts = RunOptions { budget: 20_000, ..Default::default() };
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
        let r = gpu::run(&k, &d, &mut buffers, &opts);
        // The same run without checks must not panic either.
        let mut again: BTreeMap<u32, Vec<u8>> = buffers.keys().map(|&i| (i, vec![0u8; 256])).collect();
        let none = RunOptions { check: CheckLevel::None, ..opts.clone() };
        let _ = gpu::run(&k, &d, &mut again, &none);
        let _ = r.has_errors();
        // Threadgroups split over workers (copy-on-write buffers, merged
        // shadows and findings): no panic, and the same result every time.
        let split = Dispatch { grid: [8, 1, 1], threadgroup: [2, 1, 1], mode: DispatchMode::Threads };
        let parallel = RunOptions { threads: 3, ..opts.clone() };
        let mut results = Vec::new();
        for _ in 0..2 {
            let mut b: BTreeMap<u32, Vec<u8>> = buffers.keys().map(|&i| (i, vec![0u8; 256])).collect();
            let r = gpu::run(&k, &split, &mut b, &parallel);
            results.push((b, r.findings));
        }
        assert!(results[0] == results[1], "a split dispatch gave different results on two runs");
    }
});
