//! Long flat expressions: the input's bytes choose an operator mix, a length
//! (up to 200,000 terms), parentheses, line breaks and line endings. The
//! front end must compile the statement or stop with an error (never
//! overflow the stack, which is fatal, not a panic); every rendered line of
//! a diagnostic stays short (snippets are clipped around the column); a
//! compiled kernel lowers and runs on four threads.
#![no_main]

use gpu::ir::ParamKind;
use gpu::{CheckLevel, Dispatch, DispatchMode, RunOptions};
use libfuzzer_sys::fuzz_target;
use std::collections::BTreeMap;

const OPS: [&str; 10] = [" + ", " - ", " * ", " & ", " | ", " ^ ", ", ", " && ", " < ", " ? 1 : "];
const TERMS: [&str; 6] = ["o[i]", "x", "v.x", "f(x)", "(x + 1)", "-x"];
const BREAKS: [&str; 4] = ["", "\n", "\r\n", "\r"];

fuzz_target!(|data: &[u8]| {
    if data.len() < 4 {
        return;
    }
    let len = (u32::from_le_bytes([data[0], data[1], data[2], 0]) % 200_000) as usize + 1;
    let brk = BREAKS[data[3] as usize % BREAKS.len()];
    let mix = &data[4..];
    let pick = |k: usize| mix.get(k % mix.len().max(1)).copied().unwrap_or(0) as usize;
    let mut expr = String::with_capacity(len * 8);
    let mut open = 0usize;
    for k in 0..len {
        let m = pick(k);
        if m % 13 == 0 && open < 300 {
            expr.push('(');
            open += 1;
        }
        expr.push_str(TERMS[m % TERMS.len()]);
        if m % 17 == 0 && open > 0 {
            expr.push(')');
            open -= 1;
        }
        if k + 1 < len {
            expr.push_str(OPS[(m / 7) % OPS.len()]);
            if m % 5 == 0 {
                expr.push_str(brk);
            }
        }
    }
    expr.extend(std::iter::repeat_n(')', open));
    let src = format!(
        "#include <metal_stdlib>\nusing namespace metal;{brk}inline float f(float a) {{ return a * 2.0f; }}{brk}\
         kernel void k(device float* o [[buffer(0)]], uint i [[thread_position_in_grid]]) {{{brk}\
         float x = o[i]; float4 v = float4(x);{brk}o[i] = float({expr});{brk}}}{brk}"
    );
    let c = msl::compile("chains.metal", &src, &Default::default());
    for line in c.render(false).lines() {
        assert!(line.chars().count() <= 400, "a diagnostic line of {} characters", line.chars().count());
    }
    let Some(p) = c.program.as_ref() else {
        assert!(c.has_errors(), "no program and no error");
        return;
    };
    for (id, _) in p.kernels() {
        let Ok(k) = gpu::lower::lower_kernel(p, id) else { continue };
        let mut buffers = BTreeMap::new();
        for param in &k.params {
            if let ParamKind::Buffer { index, .. } = &param.kind {
                buffers.insert(*index, vec![0u8; 64]);
            }
        }
        let opts = RunOptions { budget: 200_000, check: CheckLevel::All, ..Default::default() };
        let d = Dispatch { grid: [4, 1, 1], threadgroup: [4, 1, 1], mode: DispatchMode::Threads };
        let _ = gpu::run(&k, &d, &mut buffers, &opts);
    }
});
