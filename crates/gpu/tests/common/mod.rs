//! Helpers shared by the executor's integration tests: compile MSL source,
//! lower one kernel, run it, and convert buffers to and from bytes.
#![allow(dead_code)]

pub mod fixture;

pub use gpu::{run, CheckLevel, Dispatch, DispatchMode, Finding, FindingKind, RunOptions, RunReport};
use std::collections::BTreeMap;

pub const PRELUDE: &str = "#include <metal_stdlib>\nusing namespace metal;\n";

pub struct Compiled {
    pub kernel: gpu::Kernel,
    pub sources: msl::source::SourceMap,
}

impl Compiled {
    /// 1-based line of a finding's (primary) span.
    pub fn line(&self, f: &Finding) -> usize {
        self.sources.line_col(f.span).0 as usize
    }
    pub fn secondary_line(&self, f: &Finding) -> Option<usize> {
        f.secondary.as_ref().map(|(s, _)| self.sources.line_col(*s).0 as usize)
    }
}

pub fn compile_full(src: &str, kernel: &str) -> Compiled {
    let c = msl::compile("test.metal", src, &Default::default());
    assert!(!c.has_errors(), "{}\n--- source ---\n{}", c.render(false), src);
    let p = c.program.as_ref().expect("program");
    let (id, _) = p.kernel(kernel).unwrap_or_else(|| panic!("kernel {kernel}"));
    let k = gpu::lower::lower_kernel(p, id).unwrap_or_else(|e| panic!("lower: {}\n{src}", e.message));
    Compiled { kernel: k, sources: c.sources }
}

pub fn compile(src: &str, kernel: &str) -> gpu::Kernel {
    compile_full(src, kernel).kernel
}

pub fn threads(grid: [u32; 3], tg: [u32; 3]) -> Dispatch {
    Dispatch { grid, threadgroup: tg, mode: DispatchMode::Threads }
}

pub fn groups(grid: [u32; 3], tg: [u32; 3]) -> Dispatch {
    Dispatch { grid, threadgroup: tg, mode: DispatchMode::Threadgroups }
}

pub fn opts(check: CheckLevel) -> RunOptions {
    RunOptions { check, ..Default::default() }
}

pub fn bufs(list: Vec<(u32, Vec<u8>)>) -> BTreeMap<u32, Vec<u8>> {
    list.into_iter().collect()
}

pub fn f32s(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}
pub fn to_f32(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect()
}
pub fn u32s(v: &[u32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}
pub fn to_u32(b: &[u8]) -> Vec<u32> {
    b.chunks_exact(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect()
}
pub fn i32s(v: &[i32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}
pub fn to_i32(b: &[u8]) -> Vec<i32> {
    b.chunks_exact(4).map(|c| i32::from_le_bytes(c.try_into().unwrap())).collect()
}
pub fn u16s(v: &[u16]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}
pub fn to_u16(b: &[u8]) -> Vec<u16> {
    b.chunks_exact(2).map(|c| u16::from_le_bytes(c.try_into().unwrap())).collect()
}
pub fn u64s(v: &[u64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}
pub fn to_u64(b: &[u8]) -> Vec<u64> {
    b.chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().unwrap())).collect()
}

/// Findings as (kind, line) pairs, for compact assertions.
pub fn kinds_lines(c: &Compiled, r: &RunReport) -> Vec<(FindingKind, usize)> {
    r.findings.iter().map(|f| (f.kind, c.line(f))).collect()
}

/// 1-based line of the first source line containing `marker`.
pub fn line_of(src: &str, marker: &str) -> usize {
    src.lines().position(|l| l.contains(marker)).unwrap_or_else(|| panic!("marker {marker} not in source")) + 1
}
