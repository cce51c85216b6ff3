//! Stop-by-stop recording of one thread, for the interactive debugger.
//!
//! A kernel lowered with `LowerOptions::debug_stops` has an `Inst::Stop`
//! before every statement (and at every test of a loop's condition). Each
//! names a `StopSite`: the statement, the inlined call depth, the function,
//! and where every local in scope lives (registers or memory) with a layout
//! to read it by. When the watched thread is active at a stop, the
//! `StopRecorder` writes down the values of those locals as MSL spells them,
//! its SIMD-group's active lanes, and then the memory the statement touches.
//! Everything is capped: stops, values per stop, text per value, accesses.

use crate::exec::Mask;
use crate::ir::Reg;
use crate::memory::{ptr_alloc, ptr_offset, read_le, AllocKind, Memory};
use crate::probe::{ProbeHit, ProbeKind};
use msl::source::Span;
use msl::types::Scalar;

/// Locals shown per stop (the rest are counted in a note).
pub const MAX_VARS: usize = 64;
/// Characters of one value's text.
pub const MAX_VALUE_CHARS: usize = 240;
/// Elements of an array shown (then `…`).
pub const MAX_ELEMENTS: u32 = 64;
/// Memory accesses recorded per stop.
pub const MAX_ACCESSES: usize = 16;
/// Elements shown on each side of an accessed cell.
pub const AROUND: i64 = 3;
/// Bytes of recorded text per run (names and values), whatever the limit.
pub const MAX_BYTES: usize = 32 << 20;

/// How to read a value of some type.
#[derive(Clone, Debug, PartialEq)]
pub enum Layout {
    /// A scalar (in memory: its own size).
    Scalar(Scalar),
    /// A vector or matrix of `n` components, spelled `name(c0, c1, …)`.
    Vector {
        elem: Scalar,
        n: u32,
        name: String,
    },
    Pointer,
    Array {
        elem: Box<Layout>,
        len: u32,
        stride: u32,
    },
    Struct {
        fields: Vec<(String, u32, Layout)>,
    },
    /// An 8x8 SIMD-group matrix (in registers: two elements per lane,
    /// spread over the SIMD-group), shown as its 64 values by rows.
    SimdMatrix {
        elem: Scalar,
        name: String,
    },
    /// Something the debugger does not spell out.
    Opaque(String),
}

/// Characters of a SIMD-group matrix's text (64 values).
pub const MAX_MATRIX_CHARS: usize = 1600;

/// The 8x8 values of a SIMD-group matrix, `get(e)` giving element `e`
/// (row-major) or `None` when the lane holding it is not in the group:
/// `simdgroup_float8x8[[r0c0, r0c1, …], [r1c0, …], …]`.
pub fn simd_matrix_text(elem: Scalar, name: &str, get: &dyn Fn(usize) -> Option<u64>) -> String {
    let rows: Vec<String> = (0..8)
        .map(|r| {
            let cells: Vec<String> = (0..8).map(|c| get(r * 8 + c).map(|b| scalar_text(elem, b)).unwrap_or_else(|| "?".into())).collect();
            format!("[{}]", cells.join(", "))
        })
        .collect();
    let mut text = format!("{name}[{}]", rows.join(", "));
    if text.chars().count() > MAX_MATRIX_CHARS {
        text = text.chars().take(MAX_MATRIX_CHARS).collect();
        text.push('…');
    }
    text
}

/// Where a local lives.
#[derive(Clone, Debug, PartialEq)]
pub enum Home {
    /// One register per component.
    Regs(Vec<Reg>),
    /// Memory at this pointer (private memory is per lane).
    Memory(u64),
    /// Memory at the pointer this register holds: a reference, shown as
    /// the value it refers to (`constant uint3& dims` as `uint3(4, 1, 1)`).
    Referee(Reg),
}

#[derive(Clone, Debug, PartialEq)]
pub struct VarView {
    pub name: String,
    pub home: Home,
    pub layout: Layout,
}

/// A statement the debugger can stop at, as the lowering saw it.
#[derive(Clone, Debug, PartialEq)]
pub struct StopSite {
    pub span: Span,
    /// Inlined call depth (1: the kernel itself).
    pub depth: u32,
    /// The function the statement is in.
    pub func: String,
    pub vars: Vec<VarView>,
}

/// One memory access by the watched thread.
#[derive(Clone, Debug, PartialEq)]
pub struct MemAccess {
    pub write: bool,
    /// What was accessed: the buffer parameter or threadgroup variable.
    pub name: String,
    /// Element index (the offset in elements of the accessed size).
    pub index: i64,
    /// The value read, or the value written.
    pub value: String,
    /// The cells around it at the time: (index, value), the accessed one
    /// showing the value read or written.
    pub around: Vec<(i64, String)>,
    /// Dimensions of a multi-dimensional threadgroup array (`As[16][16]`),
    /// to name the cell as declared; empty otherwise.
    pub dims: Vec<u32>,
    /// The access in the source (the debugger leaves out its own probes').
    pub span: Span,
}

impl MemAccess {
    /// The cell as the source names it: `a[19]`, `As[1][3]`.
    pub fn place(&self) -> String {
        format!("{}{}", self.name, index_text(self.index, &self.dims))
    }
}

/// `[19]`, or `[1][3]` for a flat index into an array of `dims`.
pub fn index_text(index: i64, dims: &[u32]) -> String {
    let total: i64 = dims.iter().map(|&d| d as i64).product();
    if dims.len() < 2 || index < 0 || index >= total {
        return format!("[{index}]");
    }
    let mut parts = Vec::new();
    let mut rest = index;
    for &d in dims.iter().rev() {
        parts.push(rest % d.max(1) as i64);
        rest /= d.max(1) as i64;
    }
    parts.iter().rev().map(|i| format!("[{i}]")).collect()
}

/// One stop of the watched thread.
#[derive(Clone, Debug, PartialEq)]
pub struct StopRecord {
    pub span: Span,
    pub depth: u32,
    pub func: String,
    /// (name, value) of the locals in scope, in declaration order.
    pub vars: Vec<(String, String)>,
    /// Locals left out (over `MAX_VARS`).
    pub vars_omitted: usize,
    /// Active lanes of the watched thread's SIMD-group (bit i: lane i).
    pub simd_active: u32,
    /// Lanes the SIMD-group has (the last one of a threadgroup may be short).
    pub simd_width: u32,
    /// Memory the statement accessed (after this stop, before the next).
    pub accesses: Vec<MemAccess>,
    pub accesses_omitted: usize,
    /// What the sanitizer found the watched thread doing at this statement
    /// (an out-of-bounds access, a race...): the debugger stops here.
    pub faults: Vec<Fault>,
    /// At a `return` of a called function: the value it returned.
    pub returned: Option<String>,
}

/// A finding of the watched thread, at the stop it happened after.
#[derive(Clone, Debug, PartialEq)]
pub struct Fault {
    /// The finding kind's name (`out-of-bounds`), or `nan` for a birth
    /// of a non-finite value under `--check nan`.
    pub kind: &'static str,
    pub message: String,
}

/// A debugger probe's value, and how many stops were recorded before it.
#[derive(Clone, Debug, PartialEq)]
pub struct StopProbe {
    pub after_stops: usize,
    pub hit: ProbeHit,
    /// The same expression in every lane of the watched thread's
    /// SIMD-group (lane i at index i): `None` for a lane not running it.
    pub lanes: Vec<Option<LaneValue>>,
}

/// One lane's value of a probe.
#[derive(Clone, Debug, PartialEq)]
pub enum LaneValue {
    Bits(Vec<u64>),
    /// Spelled out already (read from memory).
    Text(String),
    /// Undefined by the specification (a SIMD-group function read an
    /// inactive lane): shown as such, never as the poison bits.
    Undefined,
}

impl StopProbe {
    /// Lane `i`'s value as text (`—` inactive, `undefined`).
    pub fn lane_text(&self, i: usize) -> String {
        match self.lanes.get(i) {
            Some(Some(LaneValue::Bits(b))) => ProbeHit { bits: b.clone(), ..self.hit.clone() }.text(),
            Some(Some(LaneValue::Text(t))) => t.clone(),
            Some(Some(LaneValue::Undefined)) => "undefined".into(),
            _ => "—".into(),
        }
    }
}

/// What the watched thread did, stop by stop.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StopLog {
    pub stops: Vec<StopRecord>,
    pub probes: Vec<StopProbe>,
    /// More stops happened than the limit allowed.
    pub truncated: bool,
    pub thread_ran: bool,
    /// The thread's threadgroup (position in the grid of threadgroups).
    pub threadgroup: [u32; 3],
    /// The thread's position in its threadgroup.
    pub local: [u32; 3],
}

/// The observer: records the watched thread's stops, at most `limit`.
#[derive(Debug)]
pub struct StopRecorder {
    pub thread: [u32; 3],
    limit: usize,
    lane: Option<usize>,
    /// Text recorded so far (see `MAX_BYTES`).
    bytes: usize,
    pub log: StopLog,
}

impl StopRecorder {
    pub fn new(thread: [u32; 3], limit: usize) -> StopRecorder {
        StopRecorder { thread, limit: limit.max(1), lane: None, bytes: 0, log: StopLog::default() }
    }

    pub fn start_threadgroup(&mut self, geo: &crate::exec::Geometry) {
        self.lane = None;
        if let Some((local, lane)) = geo.local_lane(self.thread) {
            self.lane = Some(lane);
            self.log.thread_ran = true;
            self.log.threadgroup = geo.tg_pos;
            self.log.local = local;
        }
    }

    /// The watched thread's lane, when it is in `mask` and recording goes on.
    pub fn lane_in(&self, mask: &Mask) -> Option<usize> {
        self.lane.filter(|&l| mask.get(l) && !self.log.truncated)
    }

    /// Whether another stop may be recorded (marks the log truncated if not).
    pub fn room(&mut self) -> bool {
        if self.log.stops.len() >= self.limit || self.bytes > MAX_BYTES {
            self.log.truncated = true;
        }
        !self.log.truncated
    }

    pub fn push(&mut self, stop: StopRecord) {
        self.bytes += stop.vars.iter().map(|(n, v)| n.len() + v.len() + 48).sum::<usize>() + 128;
        self.log.stops.push(stop);
    }

    /// A called function at call depth `depth` returned `value`: kept with
    /// the last stop at that depth (its `return` statement).
    pub fn returned(&mut self, depth: u32, value: String) {
        if let Some(s) = self.log.stops.iter_mut().rev().find(|s| s.depth == depth) {
            self.bytes += value.len();
            s.returned = Some(value);
        }
    }

    pub fn probe(&mut self, hit: ProbeHit, lanes: Vec<Option<LaneValue>>) {
        if self.log.probes.len() < self.limit.saturating_mul(4) && self.bytes <= MAX_BYTES {
            self.bytes += 64 + lanes.len() * (32 + 8 * hit.bits.len());
            self.log.probes.push(StopProbe { after_stops: self.log.stops.len(), hit, lanes });
        }
    }

    /// A finding made by lane `lane` (kept when it is the watched thread's).
    pub fn fault(&mut self, lane: usize, kind: &'static str, message: &str) {
        if self.lane != Some(lane) || self.log.truncated {
            return;
        }
        if let Some(s) = self.log.stops.last_mut() {
            if s.faults.len() < 4 && !s.faults.iter().any(|f| f.kind == kind) {
                s.faults.push(Fault { kind, message: message.to_string() });
            }
        }
    }

    pub fn access(&mut self, a: MemAccess) {
        if let Some(s) = self.log.stops.last_mut() {
            if s.accesses.len() < MAX_ACCESSES {
                self.bytes += a.name.len() + a.value.len() + a.around.iter().map(|c| c.1.len() + 8).sum::<usize>() + 64;
                s.accesses.push(a);
            } else {
                s.accesses_omitted += 1;
            }
        }
    }
}

/// The active lanes of `lane`'s SIMD-group in `mask` of a threadgroup of `n` lanes.
pub fn simd_bits(mask: &Mask, lane: usize, n: usize) -> (u32, u32) {
    let first = lane / 32 * 32;
    let width = n.saturating_sub(first).min(32);
    let bits = (0..width).filter(|&i| mask.get(first + i)).fold(0u32, |b, i| b | 1 << i);
    (bits, width as u32)
}

/// A value in registers (`get(reg)` reads the watched lane).
pub fn regs_text(layout: &Layout, regs: &[Reg], get: &dyn Fn(Reg) -> u64) -> String {
    let bits: Vec<u64> = regs.iter().map(|&r| get(r)).collect();
    let text = match layout {
        Layout::Pointer => {
            bits.first().map(|&b| ProbeHit { probe: 0, slot: 0, kind: ProbeKind::Pointer, bits: vec![b], shown: None }.text())
        }
        Layout::Scalar(s) => bits.first().map(|&b| scalar_text(*s, b)),
        Layout::Vector { elem, name, .. } => {
            Some(format!("{name}({})", bits.iter().map(|&b| scalar_text(*elem, b)).collect::<Vec<_>>().join(", ")))
        }
        Layout::Opaque(what) | Layout::SimdMatrix { name: what, .. } => Some(format!("<{what}>")),
        _ => None,
    };
    cap(text.unwrap_or_else(|| "?".into()))
}

/// Whether the bytes at (pointer, size) were ever written; unwritten
/// ones show as `?` (their contents are garbage, not a value).
pub type Written<'a> = &'a dyn Fn(u64, usize) -> bool;

/// A value in memory at pointer `p`, as `lane` sees it.
pub fn memory_text(layout: &Layout, mem: &Memory, p: u64, lane: usize, written: Written) -> String {
    let Some((bytes, off)) = mem.region(p, lane) else { return "<not readable>".into() };
    let mut out = String::new();
    let base = p - ptr_offset(p) as u64;
    let known = |at: i64, size: u32| written(base.wrapping_add(at as u64), size as usize);
    write_value(layout, bytes, off, &known, &mut out);
    cap(out)
}

fn write_value(layout: &Layout, bytes: &[u8], off: i64, known: &dyn Fn(i64, u32) -> bool, out: &mut String) {
    if out.len() > MAX_VALUE_CHARS {
        return;
    }
    match layout {
        Layout::Scalar(s) if !known(off, s.size()) => out.push('?'),
        Layout::Scalar(s) => out.push_str(&read_scalar(*s, bytes, off)),
        Layout::Pointer if !known(off, 8) => out.push('?'),
        Layout::Pointer => match read_le(bytes, off, 8) {
            Some(b) => out.push_str(&ProbeHit { probe: 0, slot: 0, kind: ProbeKind::Pointer, bits: vec![b], shown: None }.text()),
            None => out.push('?'),
        },
        Layout::Vector { elem, n, name } => {
            let parts: Vec<String> = (0..*n)
                .map(|i| {
                    let at = off + (i * elem.size()) as i64;
                    if known(at, elem.size()) {
                        read_scalar(*elem, bytes, at)
                    } else {
                        "?".into()
                    }
                })
                .collect();
            out.push_str(&format!("{name}({})", parts.join(", ")));
        }
        Layout::Array { elem, len, stride } => {
            out.push('[');
            for i in 0..(*len).min(MAX_ELEMENTS) {
                if i > 0 {
                    out.push_str(", ");
                }
                write_value(elem, bytes, off + i as i64 * *stride as i64, known, out);
                if out.len() > MAX_VALUE_CHARS {
                    break;
                }
            }
            if *len > MAX_ELEMENTS {
                out.push_str(", …");
            }
            out.push(']');
        }
        Layout::Struct { fields } => {
            out.push('{');
            for (i, (name, at, l)) in fields.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(name);
                out.push_str(": ");
                write_value(l, bytes, off + *at as i64, known, out);
            }
            out.push('}');
        }
        Layout::Opaque(what) | Layout::SimdMatrix { name: what, .. } => out.push_str(&format!("<{what}>")),
    }
}

fn read_scalar(s: Scalar, bytes: &[u8], off: i64) -> String {
    match read_le(bytes, off, s.size() as usize) {
        Some(raw) => scalar_text(s, crate::ops::from_memory(s, raw)),
        None => "?".into(),
    }
}

/// Register bits of scalar type `s` as MSL would print them; a large
/// `ulong` (what a `simd_vote` ballot is) also in hex, where its lanes show.
pub fn scalar_text(s: Scalar, bits: u64) -> String {
    let text = ProbeHit { probe: 0, slot: 0, kind: ProbeKind::Value(s), bits: vec![bits], shown: None }.text();
    if s == Scalar::ULong && bits > 0xffff {
        return format!("{text} (0x{bits:x})");
    }
    text
}

fn cap(mut s: String) -> String {
    if s.chars().count() > MAX_VALUE_CHARS {
        s = s.chars().take(MAX_VALUE_CHARS).collect();
        s.push('…');
    }
    s
}

/// The accessed cell `p` (of scalar type `ty`) and its neighbours.
#[allow(clippy::too_many_arguments)]
pub fn access_of(
    mem: &Memory,
    (name, dims, span): (String, Vec<u32>, Span),
    write: bool,
    ty: Scalar,
    p: u64,
    value_bits: Option<u64>,
    lane: usize,
    written: Written,
) -> MemAccess {
    let size = ty.size().max(1) as i64;
    let off = ptr_offset(p);
    let index = off.div_euclid(size);
    let mut around = Vec::new();
    let mut value = value_bits.map(|b| scalar_text(ty, b)).unwrap_or_default();
    if let Some((bytes, _)) = mem.region(p, lane) {
        let base = off - index * size;
        for i in (index - AROUND).max(0)..=index + AROUND {
            let Some(raw) = read_le(bytes, base + i * size, size as usize) else { continue };
            let cell = p.wrapping_add(((i - index) * size) as u64);
            let mut text = if written(cell, size as usize) { scalar_text(ty, crate::ops::from_memory(ty, raw)) } else { "?".into() };
            if i == index {
                if write {
                    text = value.clone();
                } else {
                    value = text.clone();
                }
            }
            around.push((i, text));
        }
    }
    if value.is_empty() {
        value = "out of bounds".into();
    }
    MemAccess { write, name, index, value, around, dims, span }
}

/// A name for the allocation `p` points into (`out`, `tile`), given the
/// kernel's buffer and threadgroup variable names.
/// Dimensions of the threadgroup array `p` points into when it is an
/// array of scalars of `size` bytes (to name cells `As[i][j]`).
pub fn alloc_dims(k: &crate::ir::Kernel, p: u64, size: u32) -> Vec<u32> {
    let AllocKind::Threadgroup(i) = ptr_alloc(p).kind() else { return Vec::new() };
    let Some(v) = k.threadgroup_vars.get(i as usize) else { return Vec::new() };
    let elems: u64 = v.dims.iter().map(|&d| d as u64).product();
    if elems * size as u64 == v.size as u64 {
        v.dims.clone()
    } else {
        Vec::new()
    }
}

pub fn alloc_name(k: &crate::ir::Kernel, p: u64) -> Option<String> {
    match ptr_alloc(p).kind() {
        AllocKind::Buffer(i) => k
            .params
            .iter()
            .find(|q| matches!(q.kind, crate::ir::ParamKind::Buffer { index, .. } if index == i))
            .map(|q| q.name.clone())
            .or(Some(format!("buffer({i})"))),
        AllocKind::ThreadgroupBuffer(i) => k
            .params
            .iter()
            .find(|q| matches!(q.kind, crate::ir::ParamKind::ThreadgroupBuffer { index, .. } if index == i))
            .map(|q| q.name.clone()),
        AllocKind::Threadgroup(i) => k.threadgroup_vars.get(i as usize).map(|v| v.name.clone()),
        // Per-thread and program-scope memory are shown as locals, not cells.
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn simd_bits_of_a_short_last_group() {
        let mut m = Mask::empty();
        for l in [32, 33, 35] {
            m.set(l, true);
        }
        assert_eq!(simd_bits(&m, 34, 36), (0b1011, 4));
        assert_eq!(simd_bits(&m, 3, 36), (0, 32));
    }

    #[test]
    fn arrays_and_structs_in_memory_are_spelled_out() {
        let bytes: Vec<u8> = [1.5f32, 2.0, 3.0].iter().flat_map(|f| f.to_le_bytes()).collect();
        let arr = Layout::Array { elem: Box::new(Layout::Scalar(Scalar::Float)), len: 3, stride: 4 };
        let mut out = String::new();
        write_value(&arr, &bytes, 0, &|_, _| true, &mut out);
        assert_eq!(out, "[1.5, 2, 3]");
        let mut out = String::new();
        write_value(&arr, &bytes, 0, &|at, _| at != 4, &mut out);
        assert_eq!(out, "[1.5, ?, 3]");
        let st =
            Layout::Struct { fields: vec![("x".into(), 0, Layout::Scalar(Scalar::Float)), ("y".into(), 4, Layout::Scalar(Scalar::Int))] };
        let mut out = String::new();
        write_value(&st, &bytes, 0, &|_, _| true, &mut out);
        assert_eq!(out, format!("{{x: 1.5, y: {}}}", 2.0f32.to_bits() as i32));
    }

    #[test]
    fn flat_indices_of_2d_arrays_are_named_as_declared() {
        assert_eq!(index_text(19, &[4, 8]), "[2][3]");
        assert_eq!(index_text(19, &[32]), "[19]");
        assert_eq!(index_text(40, &[4, 8]), "[40]", "out of the array: the flat offset");
    }

    #[test]
    fn long_values_are_capped() {
        let bytes = vec![0u8; 4 * 1000];
        let arr = Layout::Array { elem: Box::new(Layout::Scalar(Scalar::Float)), len: 1000, stride: 4 };
        let mut out = String::new();
        write_value(&arr, &bytes, 0, &|_, _| true, &mut out);
        assert!(cap(out).chars().count() <= MAX_VALUE_CHARS + 1);
    }
}
