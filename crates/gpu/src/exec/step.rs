//! The instruction budget, branch masks, and the instructions without
//! control flow.

use super::{Machine, Mask};
use crate::findings::FindingKind;
use crate::ir::*;
use crate::memory::{ptr_add, ptr_offset};
use msl::hir::ThreadAttr;

impl<'k> Machine<'k> {
    /// Take one instruction from the budget; false (and the machine
    /// stopped) when the budget is spent or the run was cancelled.
    pub(crate) fn spend(&mut self, inst: &Inst) -> bool {
        if self.budget == 0 {
            self.runaway(inst);
            return false;
        }
        self.budget -= 1;
        if self.budget & 4095 == 0 && self.cancel.as_ref().is_some_and(crate::Cancel::is_cancelled) {
            self.stopped = true;
            return false;
        }
        true
    }

    fn runaway(&mut self, inst: &Inst) {
        self.stopped = true;
        let at = match inst {
            Inst::Loop { at, .. } => Some(*at),
            _ => None,
        };
        // Blame a thread that is in the innermost loop running, and that
        // loop, not the threadgroup's first thread (which may have left).
        let looping = self.frames.iter().rev().find_map(|f| match f {
            crate::flow::Frame::Loop { inst: Inst::Loop { at, .. }, live, .. } => live.lanes().next().map(|l| (l, *at, live.count())),
            _ => None,
        });
        let at = at.or(looping.map(|x| x.1));
        let span = at.map(|a| self.k.accesses[a as usize].span).or(self.last_loop_span).unwrap_or(self.k.span);
        let lane = looping.map(|x| x.0).or_else(|| self.alive.lanes().next()).unwrap_or(0);
        let n = self.budget_total;
        let message = match looping {
            Some((_, _, count)) => format!(
                "the kernel ran more than {n} instructions in one threadgroup and was stopped while {} was still in this loop ({}): does the loop ever end for it?",
                self.thread_name(lane),
                if count == 1 { "the only thread of its threadgroup in it".to_string() } else { format!("with {} other threads of its threadgroup", count - 1) }
            ),
            None => format!("the kernel ran more than {n} instructions in one threadgroup and was stopped: is there a loop that never ends?"),
        };
        self.findings.report(
            FindingKind::RunawayKernel,
            span,
            None,
            self.geo.global(lane),
            self.geo.tg_pos,
            self.geo.requested_tg,
            message,
        );
    }

    pub(super) fn full(&self, mask: &Mask) -> bool {
        *mask == self.alive
    }

    pub(crate) fn cond_mask(&self, cond: Reg, mask: &Mask) -> (Mask, Mask) {
        if self.is_uniform(cond) {
            return if self.get(cond, 0) != 0 { (*mask, Mask::empty()) } else { (Mask::empty(), *mask) };
        }
        let mut t = Mask::empty();
        match cond {
            Reg::W32(c) => {
                // Build the mask 64 lanes at a time from the bool register.
                let base = c as usize * self.stride;
                let vals = &self.r32[base..base + self.n];
                for (w, chunk) in vals.chunks(64).enumerate() {
                    let mut bits = 0u64;
                    for (i, &v) in chunk.iter().enumerate() {
                        bits |= ((v != 0) as u64) << i;
                    }
                    t.w[w] = bits & mask.w[w];
                }
            }
            Reg::W64(_) => {
                for l in mask.lanes() {
                    if self.get(cond, l) != 0 {
                        t.set(l, true);
                    }
                }
            }
        }
        (t, mask.and_not(&t))
    }

    /// One instruction without control flow, seen by the observers first
    /// (a barrier's lanes are the ones that arrive).
    #[inline]
    /// Keep a probe's value seen by the watched lane `l`; for the
    /// interactive debugger, also the value in every active lane of its
    /// SIMD-group (`lane_value`).
    fn record_probe(
        &mut self,
        hit: crate::probe::ProbeHit,
        l: usize,
        mask: &Mask,
        lane_value: &dyn Fn(&Self, usize) -> crate::stops::LaneValue,
    ) {
        if self.stops.is_some() {
            let (first, n) = (l / 32 * 32, self.n);
            let lanes = (first..(first + 32).min(n)).map(|q| mask.get(q).then(|| lane_value(self, q))).collect();
            if let Some(p) = self.stops.as_mut() {
                p.probe(hit.clone(), lanes);
            }
        }
        if let Some(p) = self.probe.as_mut() {
            p.record(hit);
        }
    }

    pub(crate) fn exec_simple(&mut self, inst: &Inst, mask: &Mask) {
        if self.observers {
            self.observe_inst(inst, mask);
            if self.nan.is_some() {
                let before = self.nan_before(inst, mask);
                if !self.undef.is_empty() {
                    self.track_undefined(inst, mask);
                }
                self.simple(inst, mask);
                self.nan_after(inst, mask, before);
                return;
            }
        }
        if self.undef.is_empty() {
            self.simple(inst, mask);
        } else {
            self.track_undefined(inst, mask);
            self.simple(inst, mask);
        }
    }

    /// Instructions without control flow.
    fn simple(&mut self, inst: &Inst, mask: &Mask) {
        match inst {
            Inst::Const { dst, bits } => self.set_uniform(*dst, *bits),
            Inst::Copy { dst, src } => {
                if self.is_uniform(*src) {
                    let v = self.get(*src, 0);
                    self.set_uniform(*dst, v);
                } else {
                    let n = self.n;
                    match (*dst, *src) {
                        (Reg::W32(d), Reg::W32(s)) => {
                            let st = self.stride;
                            self.r32.copy_within(s as usize * st..s as usize * st + n, d as usize * st);
                            self.u32f[d as usize] = false;
                        }
                        (Reg::W64(d), Reg::W64(s)) => {
                            let st = self.stride;
                            self.r64.copy_within(s as usize * st..s as usize * st + n, d as usize * st);
                            self.u64f[d as usize] = false;
                        }
                        _ => self.map_generic(*dst, &[*src], |v| v[0]),
                    }
                }
            }
            Inst::Assign { dst, src } => {
                let full = self.full(mask);
                if full && self.is_uniform(*src) {
                    let v = self.get(*src, 0);
                    self.set_uniform(*dst, v);
                } else if let (Reg::W32(d), Reg::W32(s)) = (*dst, *src) {
                    let (d, s, st, n) = (d as usize, s as usize, self.stride, self.n);
                    if full {
                        self.r32.copy_within(s * st..s * st + n, d * st);
                        self.u32f[d] = false;
                    } else {
                        self.expand(*dst);
                        let su = self.u32f[s];
                        for l in mask.lanes() {
                            self.r32[d * st + l] = self.r32[s * st + if su { 0 } else { l }];
                        }
                    }
                } else {
                    let src = *src;
                    self.write_masked(*dst, mask, full, |m, l| m.get(src, l));
                }
            }
            Inst::Unary { op, ty, dst, a } => self.unary(*op, *ty, *dst, *a),
            Inst::Binary { op, ty, dst, a, b, at } => self.binary(*op, *ty, *dst, *a, *b, *at, mask),
            Inst::Compare { op, ty, dst, a, b } => self.compare(*op, *ty, *dst, *a, *b),
            Inst::Convert { from, to, dst, src } => self.convert(*from, *to, *dst, *src),
            Inst::Select { dst, cond, a, b } => {
                let (c, a, b) = (*cond, *a, *b);
                self.map_generic(*dst, &[c, a, b], |v| if v[0] != 0 { v[1] } else { v[2] });
            }
            Inst::BitCast { dst, dst_ty, src, src_ty } => self.bitcast(dst, *dst_ty, src, *src_ty),
            Inst::Math { f, ty, dst, args, .. } => self.math(*f, *ty, *dst, args),
            Inst::Geometric { op, ty, dst, args, .. } => self.geometric(*op, *ty, dst, args),
            Inst::Special { op, ty, dst, args, .. } => self.special(*op, *ty, dst, args),
            Inst::PtrIndex { dst, ptr, index, index_ty, scale } => self.ptr_index(*dst, *ptr, *index, *index_ty, *scale),
            Inst::PtrAdd { dst, ptr, bytes } => {
                let (Reg::W64(d), Reg::W64(p)) = (*dst, *ptr) else { return };
                let (d, p, s, n, b) = (d as usize, p as usize, self.stride, self.n, *bytes);
                if self.u64f[p] {
                    self.r64[d * s] = ptr_add(self.r64[p * s], b);
                    self.u64f[d] = true;
                } else {
                    self.u64f[d] = false;
                    for l in 0..n {
                        self.r64[d * s + l] = ptr_add(self.r64[p * s + l], b);
                    }
                }
            }
            Inst::PtrDiff { dst, a, b, scale } => {
                let s = *scale;
                self.map_generic(*dst, &[*a, *b], |v| (ptr_offset(v[0]).wrapping_sub(ptr_offset(v[1])) / s) as u64);
            }
            Inst::Load { dst, ty, ptr, at, .. } => self.load(*dst, *ty, *ptr, *at, mask),
            Inst::Store { src, ty, ptr, at, .. } => self.store(*src, *ty, *ptr, *at, mask),
            Inst::MemCopy { dst, src, bytes, align, at, .. } => self.memcopy(*dst, *src, *bytes, *align, *at, mask),
            Inst::Atomic { op, ty, dst, ptr, a, b, at, .. } => self.atomic(*op, *ty, *dst, *ptr, *a, *b, *at, mask),
            Inst::Barrier { simdgroup, at, flags } => {
                if !*simdgroup {
                    self.count_lanes(mask, |c| c.barriers += 1);
                }
                let flags = mask.lanes().next().map_or(0, |l| self.get(*flags, l) as u32);
                self.barrier(*simdgroup, flags, *at, mask)
            }
            Inst::Lane { op, quad, ty, dst, a, arg, fill, at } => {
                self.count_lanes(mask, |c| c.simd_ops += 1);
                self.lane_op(*op, *quad, *ty, *dst, (*a, *arg, *fill), *at, mask)
            }
            Inst::Matrix { op, ty, dst, args, mats, at, .. } => {
                self.count_lanes(mask, |c| c.simd_ops += 1);
                self.matrix(*op, *ty, dst, args, mats, *at, mask)
            }
            Inst::Attr { attr, component, dst } => {
                let uniform = super::uniform_attr(*attr);
                if uniform {
                    let v = self.geo.attr(*attr, *component, 0);
                    self.set_uniform(*dst, v as u64);
                } else {
                    let Reg::W32(d) = *dst else { return };
                    let (d, s, c) = (d as usize, self.stride, *component as usize);
                    self.u32f[d] = false;
                    match attr {
                        ThreadAttr::ThreadPositionInGrid | ThreadAttr::ThreadPositionInThreadgroup => {
                            let base =
                                if *attr == ThreadAttr::ThreadPositionInGrid { self.geo.tg_pos[c] * self.geo.requested_tg[c] } else { 0 };
                            let n = self.n;
                            for (o, loc) in self.r32[d * s..d * s + n].iter_mut().zip(&self.local[..n]) {
                                *o = base + loc[c];
                            }
                        }
                        _ => {
                            for l in 0..self.n {
                                let v = self.geo.attr(*attr, *component, l);
                                self.r32[d * s + l] = v;
                            }
                        }
                    }
                }
            }
            Inst::Nop => {}
            Inst::RecursionTooDeep { at, limit } => {
                if let Some(l) = mask.lanes().next() {
                    self.stopped = true;
                    let what = self.k.accesses.get(*at as usize).map(|a| a.what.clone()).unwrap_or_default();
                    self.report_lane(
                        FindingKind::RunawayKernel,
                        *at,
                        l,
                        format!("{what} recursed more than {limit} calls deep and the kernel was stopped: does the recursion reach its base case?"),
                    );
                }
            }
            Inst::BadCall { at } => {
                if let Some(l) = mask.lanes().next() {
                    self.stopped = true;
                    self.report_lane(
                        FindingKind::OutOfBounds,
                        *at,
                        l,
                        "calls through a function pointer that holds no function of the program (null, or never set): \
                         the GPU would jump to a bad address, and the kernel was stopped"
                            .to_string(),
                    );
                }
            }
            Inst::NoReturn { at } => {
                if let (true, Some(l)) = (self.check_memory, mask.lanes().next()) {
                    let what = self.k.accesses.get(*at as usize).map(|a| a.what.clone()).unwrap_or_default();
                    let f = self.report_lane(
                        FindingKind::UninitializedRead,
                        *at,
                        l,
                        format!("{what} reached its end without `return`: the value it gives its caller is undefined (garbage on a GPU)"),
                    );
                    f.count += mask.count().saturating_sub(1) as u64;
                    if f.notes.is_empty() {
                        f.notes
                            .push("every path through a function that returns a value must end in `return`: add one for this path".into());
                    }
                }
            }
            Inst::Mark { at } => {
                let n = self.n;
                if let Some(p) = self.profiler.as_mut() {
                    p.statement(*at, mask, n);
                }
            }
            Inst::Stop { site } => self.stop(*site, mask),
            Inst::Log { site, args } => {
                if let Some(mut logger) = self.logger.take() {
                    let kinds: Vec<crate::probe::ProbeKind> = args.iter().map(|a| a.0).collect();
                    let geo = self.geo;
                    logger.record(site, &kinds, mask, &geo, &|l| args.iter().map(|a| self.get(a.1, l)).collect());
                    self.logger = Some(logger);
                }
            }
            Inst::Probe { probe, slot, kind, regs } => {
                if let Some(l) = self.watched_lane(mask) {
                    let bits: Vec<u64> = regs.iter().map(|&r| self.get(r, l)).collect();
                    let hit = crate::probe::ProbeHit { probe: *probe, slot: *slot, kind: *kind, bits, shown: None };
                    self.record_probe(hit, l, mask, &|m, q| {
                        if regs.iter().any(|&r| m.undef.undefined_at(r, q)) {
                            crate::stops::LaneValue::Undefined
                        } else {
                            crate::stops::LaneValue::Bits(regs.iter().map(|&r| m.get(r, q)).collect())
                        }
                    });
                }
            }
            Inst::Returned { depth, home, layout } => {
                if let Some(lane) = self.stops.as_ref().and_then(|p| p.lane_in(mask)) {
                    let text = self.home_text(home, layout, lane);
                    if let Some(p) = self.stops.as_mut() {
                        p.returned(*depth, text);
                    }
                }
            }
            Inst::ProbeAt { probe, slot, layout, ptr } => {
                if let Some(l) = self.watched_lane(mask) {
                    let text = |m: &Self, q: usize| {
                        let p = m.get(*ptr, q);
                        crate::stops::memory_text(layout, &m.mem, p, q, &|a, n| m.bytes_written(a, n, q))
                    };
                    let kind = crate::probe::ProbeKind::Pointer;
                    let hit = crate::probe::ProbeHit { probe: *probe, slot: *slot, kind, bits: Vec::new(), shown: Some(text(self, l)) };
                    self.record_probe(hit, l, mask, &|m, q| crate::stops::LaneValue::Text(text(m, q)));
                }
            }
            Inst::If { .. }
            | Inst::Loop { .. }
            | Inst::Switch { .. }
            | Inst::Break
            | Inst::Continue
            | Inst::Return { .. }
            | Inst::Probing { .. }
            | Inst::Scope { .. } => {
                unreachable!("control flow handled by inst()")
            }
        }
    }
}
