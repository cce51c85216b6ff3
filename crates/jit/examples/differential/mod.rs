//! One differential case, shared by the `differential_fuzz` example and
//! the cargo-fuzz target `fuzz/fuzz_targets/differential.rs`: every kernel
//! (up to two) of a source, interpreted and compiled, with checks off and
//! on, on two threadgroups of small inputs chosen by `fill` (which also
//! picks the register allocator).

use gpu::ir::ParamKind;
use gpu::{CheckLevel, Dispatch, DispatchMode, RunOptions};
use std::collections::BTreeMap;
use std::sync::Arc;

/// Both engines on every kernel (up to two) of `text`: how many runs were
/// compared and how many of them ran compiled, or what differed.
pub fn check(text: &str, fill: u64) -> Result<(u64, u64), String> {
    let c = msl::compile("fuzz.metal", text, &Default::default());
    let Some(p) = c.program.as_ref() else { return Ok((0, 0)) };
    let (mut compared, mut native) = (0, 0);
    // Half the cases with the quick register allocator that large kernels get.
    let effort = if fill & 2 == 0 { None } else { Some(jit::Effort::Quick) };
    let compile = |k: &gpu::Kernel, check: CheckLevel, one_row: bool| match effort {
        None => jit::compile_for(k, check, one_row),
        Some(e) => jit::compile_with_effort(k, check, one_row, e),
    };
    for (id, f) in p.kernels().take(2) {
        let Ok(k) = gpu::lower::lower_kernel(p, id) else { continue };
        let Ok(n) = compile(&k, CheckLevel::None, false) else { continue };
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
        let run = |check: CheckLevel, compiled: Option<Arc<jit::Native>>| -> (BTreeMap<u32, Vec<u8>>, usize, Vec<String>) {
            let opts = RunOptions {
                check,
                budget: 200_000,
                threadgroup_buffers: tg_buffers.clone(),
                compiled: compiled.map(|n| n as Arc<dyn gpu::engine::Compiled>),
                ..Default::default()
            };
            let mut b = buffers.clone();
            let r = gpu::run(&k, &d, &mut b, &opts);
            (b, r.findings.len(), r.findings.iter().map(|f| format!("{f:?}")).collect())
        };
        // With checks on: exactly the interpreter's findings and buffers,
        // whether the compiled code ran or gave up.
        for check in [CheckLevel::Memory, CheckLevel::All] {
            let Ok(c) = compile(&k, check, d.grid_threads()[1..] == [1, 1]) else { continue };
            let c = Arc::new(c);
            let want = run(check, None);
            let before = c.threadgroups_run();
            let got = run(check, Some(c.clone()));
            let ran = c.threadgroups_run() > before;
            compared += 1;
            native += ran as u64;
            if got.2 != want.2 {
                return Err(format!(
                    "kernel `{}` with --check {check:?}: findings differ (it ran compiled: {ran})\ncompiled: {:?}\ninterpreted: {:?}",
                    f.name, got.2, want.2
                ));
            }
            if got.0 != want.0 {
                return Err(format!("kernel `{}` with --check {check:?}: buffers differ (it ran compiled: {ran})", f.name));
            }
        }
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
