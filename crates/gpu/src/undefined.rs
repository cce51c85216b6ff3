//! Values the Metal specification leaves undefined: a SIMD-group function
//! reading a lane that is inactive (or does not exist in a partial
//! SIMD-group), a lane number outside the group, a delta that differs
//! between threads.
//!
//! Such a lane gets a poison value and its register is *marked*. The mark
//! follows the value through register instructions; a finding is reported
//! only when an undefined value reaches memory, an address or a branch. A
//! shuffle whose undefined result a lane then discards (`if (lane < n - 1)
//! v += other;`) is correct code and gets nothing. With no marks (the
//! common case) the interpreter pays one test per instruction.

use crate::exec::{Machine, Mask};
use crate::findings::FindingKind;
use crate::ir::{AccessId, Inst, LaneOp, Reg};
use crate::memory::{ptr_alloc, AllocKind};

/// The bits an undefined lane gets (NaN as a float, all ones as an integer).
pub const POISON: u64 = u64::MAX;

/// Why a SIMD-group function's result is undefined in a lane.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Undefined {
    /// The source lane (threadgroup lane number) is inactive or missing.
    Inactive(usize),
    /// The lane asked for is not in the group.
    BadLane(usize),
    /// The lane, delta or mask differs between the threads.
    NotUniform,
}

/// Where an undefined value was made.
#[derive(Clone, Copy, Debug)]
struct Origin {
    at: AccessId,
    lane: usize,
    why: Undefined,
    /// The SIMD-group (or, with `quad`, quad-group) function.
    op: LaneOp,
    quad: bool,
}

#[derive(Clone)]
struct Mark {
    reg: Reg,
    lanes: Mask,
    origin: Origin,
}

/// The registers holding undefined values, and in which lanes.
#[derive(Clone, Default)]
pub struct Marks {
    marks: Vec<Mark>,
    /// Undefined values stored into the threads' own (private) memory,
    /// which keeps them as values: (pointer, bytes, lanes, origin).
    memory: Vec<(u64, usize, Mask, Origin)>,
}

/// What an undefined value reached.
#[derive(Clone, Copy)]
pub(crate) enum Sink {
    Memory,
    Address,
    Branch,
}

impl Marks {
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.marks.is_empty() && self.memory.is_empty()
    }

    /// Lane `l` stored `size` bytes at private pointer `p`: undefined ones
    /// (with `origin`), or defined ones (`None`).
    fn store_private(&mut self, p: u64, size: usize, l: usize, origin: Option<Origin>) {
        let overlaps = |q: u64, n: usize| q < p + size as u64 && p < q + n as u64;
        for m in self.memory.iter_mut().filter(|m| overlaps(m.0, m.1)) {
            m.2.set(l, false);
        }
        self.memory.retain(|m| !m.2.is_empty());
        if let Some(o) = origin {
            match self.memory.iter_mut().find(|m| m.0 == p && m.1 == size) {
                Some(m) => m.2.set(l, true),
                None => {
                    let mut lanes = Mask::empty();
                    lanes.set(l, true);
                    self.memory.push((p, size, lanes, o));
                }
            }
        }
    }

    /// Whether lane `l`'s `size` bytes at private pointer `p` hold an undefined value.
    fn load_private(&self, p: u64, size: usize, l: usize) -> Option<Origin> {
        self.memory.iter().find(|m| m.0 < p + size as u64 && p < m.0 + m.1 as u64 && m.2.get(l)).map(|m| m.3)
    }

    /// Whether register `r` holds an undefined value in lane `l` (the
    /// debugger shows it as undefined, not as the poison bits).
    pub fn undefined_at(&self, r: Reg, l: usize) -> bool {
        self.get(r).is_some_and(|m| m.lanes.get(l))
    }

    fn get(&self, r: Reg) -> Option<&Mark> {
        self.marks.iter().find(|m| m.reg == r)
    }

    /// Lanes of `mask` in which `r` is undefined, with the first origin.
    fn undefined_in(&self, r: Reg, mask: &Mask) -> Option<(Mask, Origin)> {
        let m = self.get(r)?;
        let lanes = m.lanes.and(mask);
        (!lanes.is_empty()).then_some((lanes, m.origin))
    }

    /// `r` is now undefined in `lanes` and defined in the other lanes of `mask`.
    fn set(&mut self, r: Reg, mask: &Mask, lanes: Mask, origin: Option<Origin>) {
        match self.marks.iter().position(|m| m.reg == r) {
            Some(i) => {
                let m = &mut self.marks[i];
                m.lanes = m.lanes.and_not(mask).or(&lanes);
                if let Some(o) = origin.filter(|_| !lanes.is_empty()) {
                    m.origin = o;
                }
                if m.lanes.is_empty() {
                    self.marks.swap_remove(i);
                }
            }
            None => {
                if let (Some(origin), false) = (origin, lanes.is_empty()) {
                    self.marks.push(Mark { reg: r, lanes, origin });
                }
            }
        }
    }
}

impl Machine<'_> {
    /// After a SIMD-group function wrote `dst` for the lanes of `mask`:
    /// mark the lanes whose result is undefined, or that depend on an
    /// undefined operand `a` (a reduction or shuffle mixes lanes).
    /// `undefined` are the lanes of `mask` whose own result is undefined.
    pub(crate) fn track_lane_result(
        &mut self,
        dst: Reg,
        a: Reg,
        (mask, undefined): (&Mask, &Mask),
        first: Option<(usize, Undefined)>,
        (op, quad): (LaneOp, bool),
        at: AccessId,
    ) {
        if !self.check_memory || (first.is_none() && self.undef.is_empty()) {
            return;
        }
        let mut lanes = *undefined;
        let mut origin = first.map(|(lane, why)| Origin { at, lane, why, op, quad });
        if let Some((_, o)) = self.undef.undefined_in(a, mask) {
            lanes = *mask;
            origin = origin.or(Some(o));
        }
        self.undef.set(dst, mask, lanes, origin);
    }

    /// Before a register or memory instruction runs in the lanes of `mask`
    /// (only while some register is marked): carry the marks from its
    /// operands to its results, and report an undefined value that reaches
    /// memory or an address.
    pub(crate) fn track_undefined(&mut self, inst: &Inst, mask: &Mask) {
        match inst {
            Inst::Store { src, ptr, at, ty, .. } => {
                self.use_undefined(*ptr, mask, *at, Sink::Address);
                // Into the thread's own memory a value stays a value (it
                // matters only where it goes next); anywhere else it is a result.
                let (undefined, origin) = self.undef.undefined_in(*src, mask).map_or((Mask::empty(), None), |(l, o)| (l, Some(o)));
                let mut private = Mask::empty();
                for l in mask.lanes() {
                    let p = self.get_pub(*ptr, l);
                    if matches!(ptr_alloc(p).kind(), AllocKind::Private(_)) {
                        private.set(l, true);
                        if undefined.get(l) || !self.undef.memory.is_empty() {
                            self.undef.store_private(p, ty.size() as usize, l, origin.filter(|_| undefined.get(l)));
                        }
                    }
                }
                self.use_undefined(*src, &mask.and_not(&private), *at, Sink::Memory);
            }
            Inst::Load { dst, ptr, at, ty, .. } => {
                self.use_undefined(*ptr, mask, *at, Sink::Address);
                let mut lanes = Mask::empty();
                let mut origin = None;
                if !self.undef.memory.is_empty() {
                    for l in mask.lanes() {
                        if let Some(o) = self.undef.load_private(self.get_pub(*ptr, l), ty.size() as usize, l) {
                            lanes.set(l, true);
                            origin = origin.or(Some(o));
                        }
                    }
                }
                self.undef.set(*dst, mask, lanes, origin);
            }
            Inst::Atomic { dst, ptr, a, b, at, .. } => {
                self.use_undefined(*ptr, mask, *at, Sink::Address);
                self.use_undefined(*a, mask, *at, Sink::Memory);
                self.use_undefined(*b, mask, *at, Sink::Memory);
                self.undef.set(*dst, mask, Mask::empty(), None);
            }
            Inst::MemCopy { dst, src, at, .. } => {
                self.use_undefined(*dst, mask, *at, Sink::Address);
                self.use_undefined(*src, mask, *at, Sink::Address);
            }
            // Lane functions mark their own results.
            Inst::Lane { .. } => {}
            _ => {
                let (dsts, srcs) = crate::trace::regs_of(inst);
                let mut lanes = Mask::empty();
                let mut origin = None;
                for s in &srcs {
                    if let Some((l, o)) = self.undef.undefined_in(*s, mask) {
                        lanes = lanes.or(&l);
                        origin = origin.or(Some(o));
                    }
                }
                for d in dsts {
                    self.undef.set(d, mask, lanes, origin);
                }
            }
        }
    }

    /// `r` decides a branch in the lanes of `mask` (reported if undefined there).
    pub(crate) fn branch_on(&mut self, r: Reg, mask: &Mask, at: AccessId) {
        if !self.undef.is_empty() {
            self.use_undefined(r, mask, at, Sink::Branch);
        }
    }

    /// Report `r` if it is undefined in some lane of `mask`, used as `sink` at `at`.
    fn use_undefined(&mut self, r: Reg, mask: &Mask, at: AccessId, sink: Sink) {
        let Some((lanes, o)) = self.undef.undefined_in(r, mask) else { return };
        // Report once per value: the lanes are no longer marked.
        self.undef.set(r, &lanes, Mask::empty(), None);
        let lane = if lanes.get(o.lane) { o.lane } else { lanes.lanes().next().unwrap_or(o.lane) };
        let span_of = |m: &Self, a: AccessId| m.k.accesses.get(a as usize).map(|x| x.span).unwrap_or(m.k.span);
        let sink_text = match sink {
            Sink::Memory => "the undefined value is stored here",
            Sink::Address => "the undefined value is used as an address here",
            Sink::Branch => "a branch depends on the undefined value here",
        };
        let secondary = Some((span_of(self, at), sink_text.to_string()));
        let group = o.lane - o.lane % 32;
        let func = crate::trace::lane_op_name(o.op, o.quad);
        let message = match o.why {
            Undefined::Inactive(src) if src >= self.n || src >= group + 32 => format!(
                "`{}` gives lane {} the value of lane {}, which does not exist (this SIMD-group has only {} threads): the value is undefined",
                func,
                o.lane % 32,
                src % 32,
                (self.n - group).min(32)
            ),
            Undefined::Inactive(src) => format!(
                "`{}` gives lane {} the value of lane {}, which is not active here: the value is undefined",
                func,
                o.lane % 32,
                src % 32
            ),
            Undefined::BadLane(l) => format!("`{}` asks for lane {l}, which is not a lane of the SIMD-group (0-31): the value is undefined", func),
            Undefined::NotUniform => format!(
                "the lane, delta or mask given to `{}` differs between the threads of the SIMD-group; Metal requires it to be the same, so the value is undefined",
                func
            ),
        };
        let (thread, tg) = (self.geo.global(lane), self.geo.tg_pos);
        let origin_span = span_of(self, o.at);
        let f = self.findings.report(FindingKind::UninitializedRead, origin_span, secondary, thread, tg, self.geo.requested_tg, message);
        f.count += lanes.count().saturating_sub(1) as u64;
        if f.notes.is_empty() {
            f.notes.push(match o.why {
                Undefined::Inactive(_) => "a SIMD-group function can only read lanes that run it: call it where every lane of the SIMD-group is active (before the branch or early return), or only use results that come from active lanes".into(),
                Undefined::BadLane(_) => "keep the lane number in 0..32 (e.g. `lane % 32`)".into(),
                Undefined::NotUniform => "compute the delta (or lane, or mask) from values that are the same in every thread, such as a loop counter".into(),
            });
        }
    }
}
