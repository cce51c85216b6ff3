//! Control flow: the interpreter's main loop, over an explicit stack of
//! frames instead of Rust recursion, so that a group of lanes can stop at a
//! barrier and resume later.
//!
//! A threadgroup runs either in lockstep — one *context* holding all its
//! lanes, barriers executed where they stand: the default, and the fastest
//! — or as several contexts (a SIMD-group each) that a scheduler runs one
//! at a time, each until it reaches a barrier, in an order it chooses: a
//! real GPU may run the SIMD-groups of a threadgroup in any order between
//! barriers, and `schedule.rs` explores such orders. Each context has its
//! own registers and control state; memory, findings and the sanitizer are
//! shared.
//!
//! Straight-line instructions run in a tight loop over the innermost block;
//! the frames of `if`, loops, `switch` and inlined calls only change when
//! one of their blocks ends.

use crate::exec::{Machine, Mask};
use crate::ir::{is_control, AccessId, Inst};

/// Where a context is inside one construct.
pub(crate) enum Frame<'k> {
    /// Running `insts` from `pc` with the lanes of `mask` (lanes leave the
    /// mask at `break`, `continue` and `return`).
    Block {
        insts: &'k [Inst],
        pc: usize,
        mask: Mask,
    },
    /// An `if`: `t` and `e` are the lanes of each side, `after` the lanes
    /// that came out of the sides run so far; `stage` 1 runs `then`, 2 `else`.
    If {
        then: &'k [Inst],
        els: &'k [Inst],
        t: Mask,
        e: Mask,
        after: Mask,
        divergent: bool,
        at: AccessId,
        stage: u8,
    },
    Loop {
        inst: &'k Inst,
        live: Mask,
        entry: Mask,
        first: bool,
        stage: LoopStage,
    },
    Switch {
        inst: &'k Inst,
        case: usize,
        running: Mask,
        unmatched: Mask,
        entry: Mask,
    },
    /// An inlined call: `break`s of the caller do not apply inside it.
    Scope {
        entered: Mask,
        saved_breaks: Vec<Mask>,
    },
    /// A debugger probe's evaluation, with the observers detached.
    Probing {
        saved: Box<Detached>,
    },
}

/// The observers a debugger probe runs without (printing must not change findings).
pub(crate) type Detached =
    (Option<Box<crate::sanitizer::Sanitizer>>, Option<Box<crate::trace::Tracer>>, Option<Box<crate::profile::Profiler>>, bool);

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum LoopStage {
    /// Before the condition of an iteration.
    Top,
    /// The condition's block ran; test it.
    Cond,
    /// Decide whether to run the body.
    Test,
    /// The body ran.
    Body,
    /// The step ran.
    Step,
}

/// Why a context stopped running.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Yield {
    /// It finished the kernel (or the run was stopped).
    Done,
    /// It reached a `threadgroup_barrier` (only when contexts wait at
    /// barriers): the barrier runs when every context got there.
    Barrier,
    /// The scheduler asked it to make way after an atomic operation.
    Preempt,
}

impl<'k> Machine<'k> {
    /// Run the current context until it finishes or yields.
    pub(crate) fn run_frames(&mut self) -> Yield {
        loop {
            let Some(Frame::Block { insts, pc, mask }) = self.frames.last_mut() else {
                return Yield::Done;
            };
            let (insts, mut i, mut m): (&'k [Inst], usize, Mask) = (*insts, *pc, *mask);
            let mut control: Option<&'k Inst> = None;
            let mut yielded = None;
            while i < insts.len() && !m.is_empty() && !self.stopped {
                let inst = &insts[i];
                if self.waits_at_barriers && matches!(inst, Inst::Barrier { simdgroup: false, .. }) {
                    // The barrier itself runs once every context has come.
                    self.waiting = Some((inst, m));
                    i += 1;
                    yielded = Some(Yield::Barrier);
                    break;
                }
                i += 1;
                if !self.spend(inst) {
                    break;
                }
                if is_control(inst) {
                    match inst {
                        Inst::Break => {
                            if let Some(b) = self.breaks.last_mut() {
                                *b = b.or(&m);
                            }
                            m = Mask::empty();
                        }
                        Inst::Continue => m = Mask::empty(),
                        Inst::Return { at } => {
                            if let Some(r) = self.returns.last_mut() {
                                *r = r.or(&m);
                            }
                            if self.returns.len() == 1 {
                                // Returning from the kernel itself: these threads are done.
                                self.alive = self.alive.and_not(&m);
                                if self.returned_at.len() < self.n {
                                    self.returned_at.resize(self.n, None);
                                }
                                for l in m.lanes() {
                                    self.returned_at[l] = Some(*at);
                                }
                            }
                            m = Mask::empty();
                        }
                        _ => control = Some(inst),
                    }
                    if control.is_some() {
                        break;
                    }
                    continue;
                }
                self.exec_simple(inst, &m);
                if self.preempting && matches!(inst, Inst::Atomic { .. }) && self.preempt_now() {
                    yielded = Some(Yield::Preempt);
                    break;
                }
            }
            if let Some(Frame::Block { pc, mask, .. }) = self.frames.last_mut() {
                *pc = i;
                *mask = m;
            }
            if let Some(y) = yielded {
                return y;
            }
            match control {
                Some(inst) => self.enter(inst, m),
                None => {
                    self.frames.pop();
                    self.step(Some(m));
                }
            }
        }
    }

    /// Start a construct `inst` with the lanes of `mask`.
    fn enter(&mut self, inst: &'k Inst, mask: Mask) {
        match inst {
            Inst::If { cond, then, els, at } => {
                self.branch_on(*cond, &mask, *at);
                let (t, e) = self.cond_mask(*cond, &mask);
                let divergent = !t.is_empty() && !e.is_empty();
                let after = Mask::empty();
                self.frames.push(Frame::If { then, els, t, e, after, divergent, at: *at, stage: 0 });
                self.step(None);
            }
            Inst::Loop { at, .. } => {
                self.last_loop_span = Some(self.k.accesses[*at as usize].span);
                self.breaks.push(Mask::empty());
                self.frames.push(Frame::Loop { inst, live: mask, entry: mask, first: true, stage: LoopStage::Top });
                self.step(None);
            }
            Inst::Switch { value, ty, cases } => {
                self.breaks.push(Mask::empty());
                // Lanes whose value matches no case go to `default`.
                let mut unmatched = mask;
                for l in mask.lanes() {
                    let v = self.get_pub(*value, l) & crate::exec::width_mask(*ty);
                    if cases.iter().any(|(vals, _, _)| vals.iter().any(|c| c & crate::exec::width_mask(*ty) == v)) {
                        unmatched.set(l, false);
                    }
                }
                self.frames.push(Frame::Switch { inst, case: 0, running: Mask::empty(), unmatched, entry: mask });
                self.step(None);
            }
            Inst::Scope { body } => {
                self.returns.push(Mask::empty());
                let saved_breaks = std::mem::take(&mut self.breaks);
                self.frames.push(Frame::Scope { entered: mask, saved_breaks });
                self.frames.push(Frame::Block { insts: body, pc: 0, mask });
            }
            Inst::Probing { body } => {
                // All the active lanes evaluate it, as they would the same
                // code in the kernel (SIMD-group functions see their group),
                // but only when the watched thread is among them.
                if self.watched_lane(&mask).is_none() {
                    return;
                }
                let saved = Box::new((self.san.take(), self.tracer.take(), self.profiler.take(), self.check_memory));
                self.check_memory = false;
                self.update_observing();
                self.frames.push(Frame::Probing { saved });
                self.frames.push(Frame::Block { insts: body, pc: 0, mask });
            }
            _ => unreachable!("not a construct"),
        }
    }

    /// Advance the construct on top of the stack: `child` is the mask a
    /// block of it finished with (`None` when it was just entered).
    fn step(&mut self, child: Option<Mask>) {
        match self.frames.last() {
            Some(Frame::If { .. }) => self.step_if(child),
            Some(Frame::Loop { inst, .. }) => {
                let inst: &'k Inst = inst;
                self.step_loop(inst);
            }
            Some(Frame::Switch { inst, .. }) => {
                let inst: &'k Inst = inst;
                self.step_switch(inst, child);
            }
            Some(Frame::Scope { .. }) => {
                let Some(Frame::Scope { entered, saved_breaks }) = self.frames.pop() else { return };
                self.breaks = saved_breaks;
                self.returns.pop();
                self.set_parent_mask(entered.and(&self.alive));
            }
            Some(Frame::Probing { .. }) => {
                let Some(Frame::Probing { saved }) = self.frames.pop() else { return };
                (self.san, self.tracer, self.profiler, self.check_memory) = *saved;
                self.update_observing();
            }
            Some(Frame::Block { .. }) | None => {}
        }
    }

    fn step_if(&mut self, child: Option<Mask>) {
        let Some(Frame::If { then, els, t, e, after, divergent, at, stage }) = self.frames.last_mut() else { return };
        let (then, els, t, e, divergent, at): (&'k [Inst], &'k [Inst], Mask, Mask, bool, AccessId) = (*then, *els, *t, *e, *divergent, *at);
        if let Some(m) = child {
            *after = after.or(&m);
        }
        let next = match *stage {
            0 if !t.is_empty() => Some((1, then, t, e, false)),
            0 | 1 if !e.is_empty() => Some((2, els, e, t, true)),
            _ => None,
        };
        let finished_side = child.is_some();
        let after = *after;
        if let Some((s, _, _, _, _)) = next {
            *stage = s;
        }
        if finished_side && divergent {
            self.branches.pop();
        }
        match next {
            Some((_, body, lanes, other, in_else)) => {
                if divergent {
                    self.branches.push((at, other, in_else));
                }
                self.frames.push(Frame::Block { insts: body, pc: 0, mask: lanes });
            }
            None => {
                self.frames.pop();
                self.set_parent_mask(after);
            }
        }
    }

    fn step_loop(&mut self, inst: &'k Inst) {
        let Inst::Loop { cond_block, cond, body, step, check_first, at } = inst else { return };
        loop {
            let Some(Frame::Loop { live, first, stage, .. }) = self.frames.last_mut() else { return };
            let lanes = *live;
            match *stage {
                LoopStage::Top => {
                    if self.stopped {
                        break;
                    }
                    if *check_first || !*first {
                        *stage = LoopStage::Cond;
                        self.frames.push(Frame::Block { insts: cond_block, pc: 0, mask: lanes });
                        return;
                    }
                    *stage = LoopStage::Test;
                }
                LoopStage::Cond => {
                    *stage = LoopStage::Test;
                    if let Some(c) = cond {
                        self.branch_on(*c, &lanes, *at);
                        let (t, _) = self.cond_mask(*c, &lanes);
                        if let Some(Frame::Loop { live, .. }) = self.frames.last_mut() {
                            *live = t;
                        }
                    }
                }
                LoopStage::Test => {
                    *first = false;
                    *stage = LoopStage::Body;
                    // (Each trip costs one instruction, so an empty loop
                    // that never ends still runs out of budget.)
                    if lanes.is_empty() || !self.spend(inst) {
                        break;
                    }
                    self.frames.push(Frame::Block { insts: body, pc: 0, mask: lanes });
                    return;
                }
                LoopStage::Body => {
                    let broke = self.breaks.last().copied().unwrap_or(Mask::empty());
                    let returned = self.returns.last().copied().unwrap_or(Mask::empty());
                    let next = lanes.and_not(&broke).and_not(&returned).and(&self.alive);
                    let Some(Frame::Loop { live, stage, .. }) = self.frames.last_mut() else { return };
                    *live = next;
                    if next.is_empty() {
                        break;
                    }
                    *stage = LoopStage::Step;
                    self.frames.push(Frame::Block { insts: step, pc: 0, mask: next });
                    return;
                }
                LoopStage::Step => *stage = LoopStage::Top,
            }
        }
        let Some(Frame::Loop { entry, .. }) = self.frames.pop() else { return };
        self.breaks.pop();
        let returned = self.returns.last().copied().unwrap_or(Mask::empty());
        self.set_parent_mask(entry.and_not(&returned).and(&self.alive));
    }

    fn step_switch(&mut self, inst: &'k Inst, child: Option<Mask>) {
        let Inst::Switch { value, ty, cases } = inst else { return };
        let Some(Frame::Switch { case, running, unmatched, entry, .. }) = self.frames.last_mut() else { return };
        let (mut case, mut running, unmatched, entry) = (*case, *running, *unmatched, *entry);
        if let Some(m) = child {
            running = m;
            case += 1;
        }
        let default_idx = cases.iter().position(|c| c.1);
        let wm = crate::exec::width_mask(*ty);
        while case < cases.len() {
            let (vals, _, body) = &cases[case];
            let mut enter = Mask::empty();
            for l in entry.lanes() {
                let v = self.get_pub(*value, l) & wm;
                if vals.iter().any(|c| c & wm == v) {
                    enter.set(l, true);
                }
            }
            if Some(case) == default_idx {
                enter = enter.or(&unmatched);
            }
            // Fall-through: lanes that ran the previous case continue.
            let broke = self.breaks.last().copied().unwrap_or(Mask::empty());
            running = running.or(&enter).and_not(&broke);
            if !running.is_empty() {
                if let Some(Frame::Switch { case: c, running: r, .. }) = self.frames.last_mut() {
                    (*c, *r) = (case, running);
                }
                self.frames.push(Frame::Block { insts: body, pc: 0, mask: running });
                return;
            }
            case += 1;
        }
        self.frames.pop();
        self.breaks.pop();
        let returned = self.returns.last().copied().unwrap_or(Mask::empty());
        self.set_parent_mask(entry.and_not(&returned).and(&self.alive));
    }

    /// Whether the context makes way now: a coin flip from the scheduler's
    /// seeded state (xorshift), so a schedule is the same on every run.
    pub(crate) fn preempt_now(&mut self) -> bool {
        let mut x = self.rng.max(1);
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.rng = x;
        x & 3 == 0
    }

    /// The block enclosing a finished construct continues with `mask`.
    fn set_parent_mask(&mut self, m: Mask) {
        if let Some(Frame::Block { mask, .. }) = self.frames.last_mut() {
            *mask = m;
        }
    }
}
