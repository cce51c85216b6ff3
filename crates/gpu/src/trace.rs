//! The access tracer: for small dispatches, every read and write of device
//! and threadgroup memory by every thread, in order, with its barrier
//! interval and the cells whose values fed each write (provenance). This is
//! what the puzzle book's diagrams are drawn from.
//!
//! Provenance flows through registers and thread-private memory: a load
//! marks its destination register with the cell read; arithmetic unions
//! the marks of its operands; a store records an event whose sources are
//! the marks of the stored value.

use crate::ir::{Inst, Reg};
use crate::memory::{ptr_alloc, ptr_offset, AllocKind};
use msl::source::Span;
use std::collections::HashMap;

/// A traced memory cell (one element of a buffer or threadgroup array).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CellInfo {
    pub alloc: CellAlloc,
    /// Byte offset in the allocation.
    pub offset: i64,
    pub size: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CellAlloc {
    /// `[[buffer(n)]]`
    Buffer(u32),
    /// A threadgroup variable (index into `Kernel::threadgroup_vars`).
    Threadgroup(u32),
    ThreadgroupBuffer(u32),
}

#[derive(Clone, Debug, PartialEq)]
pub struct TraceEvent {
    pub thread: [u32; 3],
    pub threadgroup: [u32; 3],
    /// Barrier intervals passed so far in this threadgroup (0 before the first barrier).
    pub interval: u32,
    pub write: bool,
    pub cell: u32,
    /// For writes: the cells whose values produced the written value.
    pub sources: Vec<u32>,
    /// For plain stores: the value written (its type and register bits).
    pub value: Option<(msl::types::Scalar, u64)>,
    pub span: Span,
    /// Part of an atomic operation (its read and its write are both marked).
    pub atomic: bool,
}

/// How a SIMD-group function moves values between lanes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ExchangeKind {
    /// Every lane's value into one result for all (`simd_sum`, `simd_max`, `simd_ballot`…).
    Reduce,
    /// Each lane gets the combination of the lanes before it (`simd_prefix_*`).
    Scan,
    /// Each lane gets one other lane's value (`simd_shuffle*`, `simd_broadcast*`).
    Shuffle,
    /// An 8x8 matrix spread over the SIMD-group is multiplied (`simdgroup_multiply*`).
    Matrix,
}

/// One SIMD-group (or quad) function run by one SIMD-group: which lanes took
/// part and, for shuffles, which lane's value went where.
#[derive(Clone, Debug, PartialEq)]
pub struct LaneExchange {
    pub threadgroup: [u32; 3],
    pub interval: u32,
    /// The function as written in Metal: `simd_sum`, `quad_shuffle_xor`…
    pub name: String,
    pub kind: ExchangeKind,
    /// Threadgroup-local indices of the lanes that took part.
    pub lanes: Vec<u32>,
    /// Shuffles and broadcasts: (source lane, destination lane), where they differ.
    pub moves: Vec<(u32, u32)>,
    pub span: Span,
}

/// The Metal name of a lane function (`simd_prefix_inclusive_sum`).
pub fn lane_op_name(op: crate::ir::LaneOp, quad: bool) -> String {
    let mut name = String::from(if quad { "quad" } else { "simd" });
    for ch in format!("{op:?}").chars() {
        if ch.is_ascii_uppercase() {
            name.push('_');
        }
        name.push(ch.to_ascii_lowercase());
    }
    name
}

/// How `op` moves values between lanes (`None`: it reads no other lane's value).
pub fn exchange_kind(op: crate::ir::LaneOp) -> Option<ExchangeKind> {
    use crate::ir::LaneOp as L;
    match op {
        L::Sum | L::Product | L::Min | L::Max | L::And | L::Or | L::Xor | L::All | L::Any | L::Ballot => Some(ExchangeKind::Reduce),
        L::PrefixInclusiveSum | L::PrefixExclusiveSum | L::PrefixInclusiveProduct | L::PrefixExclusiveProduct => Some(ExchangeKind::Scan),
        L::Broadcast
        | L::BroadcastFirst
        | L::Shuffle
        | L::ShuffleXor
        | L::ShuffleUp
        | L::ShuffleDown
        | L::ShuffleRotateUp
        | L::ShuffleRotateDown
        | L::ShuffleAndFillUp
        | L::ShuffleAndFillDown => Some(ExchangeKind::Shuffle),
        L::ActiveMask | L::IsFirst => None,
    }
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Trace {
    pub cells: Vec<CellInfo>,
    pub events: Vec<TraceEvent>,
    /// SIMD-group functions, in the order they ran (at most as many as
    /// the event limit).
    pub exchanges: Vec<LaneExchange>,
    /// Set when the event limit was reached and later events were dropped.
    pub truncated: bool,
}

/// Sources kept per value (more are dropped: diagrams stay readable). A
/// value with this many sources may have had more.
pub const MAX_SOURCES: usize = 64;

#[derive(Debug)]
pub struct Tracer {
    pub trace: Trace,
    cell_ids: HashMap<CellInfo, u32>,
    limit: usize,
    stride: usize,
    /// Provenance of each register lane: taint32[reg * stride + lane].
    taint32: Vec<Vec<u32>>,
    taint64: Vec<Vec<u32>>,
    /// Provenance of private memory bytes: (lane, alloc slot, offset) → cells.
    private: HashMap<(usize, u32, i64), Vec<u32>>,
    pub interval: u32,
    /// Set while an atomic operation's accesses are recorded.
    pub atomic: bool,
}

impl Tracer {
    pub fn new(n32: usize, n64: usize, stride: usize, limit: usize) -> Tracer {
        Tracer {
            trace: Trace::default(),
            cell_ids: HashMap::new(),
            limit,
            stride,
            taint32: vec![Vec::new(); n32 * stride],
            taint64: vec![Vec::new(); n64 * stride],
            private: HashMap::new(),
            interval: 0,
            atomic: false,
        }
    }

    pub fn start_threadgroup(&mut self) {
        self.interval = 0;
        self.private.clear();
        for t in self.taint32.iter_mut().chain(self.taint64.iter_mut()) {
            t.clear();
        }
    }

    fn slot(&mut self, r: Reg, l: usize) -> &mut Vec<u32> {
        match r {
            Reg::W32(i) => &mut self.taint32[i as usize * self.stride + l],
            Reg::W64(i) => &mut self.taint64[i as usize * self.stride + l],
        }
    }

    fn get(&self, r: Reg, l: usize) -> &[u32] {
        match r {
            Reg::W32(i) => &self.taint32[i as usize * self.stride + l],
            Reg::W64(i) => &self.taint64[i as usize * self.stride + l],
        }
    }

    fn cell(&mut self, p: u64, size: usize) -> Option<u32> {
        let alloc = match ptr_alloc(p).kind() {
            AllocKind::Buffer(i) => CellAlloc::Buffer(i),
            AllocKind::Threadgroup(i) => CellAlloc::Threadgroup(i),
            AllocKind::ThreadgroupBuffer(i) => CellAlloc::ThreadgroupBuffer(i),
            _ => return None,
        };
        let info = CellInfo { alloc, offset: ptr_offset(p), size: size as u32 };
        if let Some(&id) = self.cell_ids.get(&info) {
            return Some(id);
        }
        let id = self.trace.cells.len() as u32;
        self.trace.cells.push(info.clone());
        self.cell_ids.insert(info, id);
        Some(id)
    }

    fn push(&mut self, e: TraceEvent) {
        if self.trace.events.len() >= self.limit {
            self.trace.truncated = true;
            return;
        }
        self.trace.events.push(e);
    }

    /// A load into `dst` by lane `l`.
    #[allow(clippy::too_many_arguments)]
    pub fn read(&mut self, dst: Reg, p: u64, size: usize, l: usize, thread: [u32; 3], tg: [u32; 3], span: Span) {
        if let AllocKind::Private(slot) = ptr_alloc(p).kind() {
            let t = self.private.get(&(l, slot, ptr_offset(p))).cloned().unwrap_or_default();
            *self.slot(dst, l) = t;
            return;
        }
        let Some(c) = self.cell(p, size) else { return };
        *self.slot(dst, l) = vec![c];
        let interval = self.interval;
        let atomic = self.atomic;
        self.push(TraceEvent { thread, threadgroup: tg, interval, write: false, cell: c, sources: Vec::new(), value: None, span, atomic });
    }

    /// A store of `src` by lane `l`.
    #[allow(clippy::too_many_arguments)]
    pub fn write(
        &mut self,
        src: Option<Reg>,
        value: Option<(msl::types::Scalar, u64)>,
        p: u64,
        size: usize,
        l: usize,
        thread: [u32; 3],
        tg: [u32; 3],
        span: Span,
    ) {
        let sources = src.map(|r| self.get(r, l).to_vec()).unwrap_or_default();
        if let AllocKind::Private(slot) = ptr_alloc(p).kind() {
            self.private.insert((l, slot, ptr_offset(p)), sources);
            return;
        }
        let Some(c) = self.cell(p, size) else { return };
        let interval = self.interval;
        let atomic = self.atomic;
        self.push(TraceEvent { thread, threadgroup: tg, interval, write: true, cell: c, sources, value, span, atomic });
    }

    /// A SIMD-group function run by `lanes` of threadgroup `tg`.
    pub fn exchange(&mut self, name: String, kind: ExchangeKind, lanes: Vec<u32>, moves: Vec<(u32, u32)>, tg: [u32; 3], span: Span) {
        if self.trace.exchanges.len() >= self.limit {
            self.trace.truncated = true;
            return;
        }
        let interval = self.interval;
        self.trace.exchanges.push(LaneExchange { threadgroup: tg, interval, name, kind, lanes, moves, span });
    }

    /// A SIMD-group function: each destination lane gets the provenance of
    /// the lanes whose values it received (`from`: destination lane, then
    /// (register, source lane) pairs), so a value followed back through
    /// shuffles, reductions and scans reaches the cells it came from.
    pub fn lane_provenance(&mut self, dst: Reg, from: &[(usize, Vec<(Reg, usize)>)]) {
        let new: Vec<(usize, Vec<u32>)> = from
            .iter()
            .map(|(l, srcs)| {
                let mut u: Vec<u32> = Vec::new();
                for &(r, s) in srcs {
                    for &c in self.get(r, s) {
                        if !u.contains(&c) && u.len() < MAX_SOURCES {
                            u.push(c);
                        }
                    }
                }
                (*l, u)
            })
            .collect();
        for (l, u) in new {
            *self.slot(dst, l) = u;
        }
    }

    /// Propagate provenance through a register instruction for the lanes that ran it.
    pub fn propagate(&mut self, inst: &Inst, lanes: &[usize]) {
        let (dsts, srcs) = regs_of(inst);
        if dsts.is_empty() {
            return;
        }
        for &l in lanes {
            let mut u: Vec<u32> = Vec::new();
            for s in &srcs {
                for &c in self.get(*s, l) {
                    if !u.contains(&c) && u.len() < MAX_SOURCES {
                        u.push(c);
                    }
                }
            }
            for d in &dsts {
                *self.slot(*d, l) = u.clone();
            }
        }
    }
}

/// Destination and source registers of a register-only instruction (memory
/// instructions are handled by `read`/`write`).
pub(crate) fn regs_of(inst: &Inst) -> (Vec<Reg>, Vec<Reg>) {
    match inst {
        Inst::Const { dst, .. } => (vec![*dst], vec![]),
        Inst::Assign { dst, src } | Inst::Copy { dst, src } => (vec![*dst], vec![*src]),
        Inst::Unary { dst, a, .. } => (vec![*dst], vec![*a]),
        Inst::Binary { dst, a, b, .. } | Inst::Compare { dst, a, b, .. } => (vec![*dst], vec![*a, *b]),
        Inst::Convert { dst, src, .. } => (vec![*dst], vec![*src]),
        Inst::Select { dst, cond, a, b } => (vec![*dst], vec![*cond, *a, *b]),
        Inst::BitCast { dst, src, .. } => (dst.clone(), src.clone()),
        Inst::Math { dst, args, .. } => (vec![*dst], args.clone()),
        Inst::Geometric { dst, args, .. } => (dst.clone(), args.iter().flatten().copied().collect()),
        Inst::Special { dst, args, .. } => (dst.clone(), args.clone()),
        // Pointers carry no data provenance.
        Inst::PtrIndex { dst, .. } | Inst::PtrAdd { dst, .. } | Inst::PtrDiff { dst, .. } | Inst::Attr { dst, .. } => (vec![*dst], vec![]),
        Inst::Lane { dst, a, fill, .. } => (vec![*dst], vec![*a, *fill]),
        // Per lane only (a matrix product mixes lanes; this keeps the
        // lane's own operands as an approximation). Loads then set the
        // cells they read.
        Inst::Matrix { dst, args, mats, .. } => (dst.clone(), args.iter().chain(mats.iter().flatten()).copied().collect()),
        _ => (vec![], vec![]),
    }
}
