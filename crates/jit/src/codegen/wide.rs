//! Four threads at a time: kernels without barriers or SIMD-group
//! functions, whose loops are short counted ones the one-thread code
//! unrolls, also get a second threads' loop that runs a chunk of four
//! consecutive threads with 128-bit vector instructions — one lane per
//! thread — where the threadgroup is one row (so the chunk's positions are
//! consecutive). What has no vector form (math functions, integer
//! division, accesses at unrelated places) is done lane by lane, as the
//! one-thread code does it.
//!
//! The chunk's threads run the same instructions in the same order, one
//! of each for all four, as the interpreter's lockstep does. A branch of
//! register operations runs both ways, each lane keeping its side; where
//! the threads would take another branch apart the chunk goes back to the
//! one-thread code, which runs them one after another from the start.
//! That is only sound while the chunk has changed nothing, so such a
//! branch may not follow a store (the code is not made otherwise).
//!
//! The code generator knows, for registers whose lanes are evenly spaced
//! (`Lin`: thread positions, constants, kernel arguments and sums and
//! constant multiples of them), the first lane's value and the spacing,
//! and for pointers (`WPtr`) the first lane's offset and the spacing in
//! bytes: four 4-byte accesses 4 bytes apart are one 16-byte access with
//! one bounds check, a shared address one access; others go lane by lane.

use super::*;
use cranelift_codegen::ir::types::{F32X4, I32X4};
use cranelift_codegen::ir::Endianness;

/// Threads per chunk.
const LANES: i64 = 4;

/// Most spacing between lanes of an index the code follows (so that three
/// steps cannot wrap around 32 bits unnoticed).
const MOST_STEP: i64 = 1 << 20;

/// An integer register whose lane `k` holds `base + k * step` (wrapping
/// at its width): `base` is an `i32` value for a 32-bit register, an `i64`
/// for a 64-bit one (which has no lanes of its own: the code follows
/// 64-bit integers only while they are evenly spaced).
#[derive(Clone, Copy)]
struct Lin {
    base: Value,
    step: i32,
}

/// A pointer register whose lane `k` points `k * stride` bytes after
/// where `known` says lane 0 does, and with `lanes`, lane `k` of an index
/// vector times a scale further.
#[derive(Clone, Copy)]
struct WPtr {
    known: Known,
    stride: i64,
    lanes: Option<Lanes>,
}

/// Indices that differ lane by lane in no known way (`a[b[i]]`).
#[derive(Clone, Copy)]
struct Lanes {
    /// An `i32x4`.
    idx: Value,
    signed: bool,
    scale: i64,
}

/// What the chunk code knows of registers at a point of the code.
#[derive(Clone, Default)]
struct Facts {
    lin: HashMap<Reg, Lin>,
    ptrs: HashMap<Reg, WPtr>,
    /// Bool registers made from a comparison's lane masks (all ones or
    /// zero), which a branch tests as they are.
    masks: HashMap<Reg, Value>,
    /// Bool registers from comparisons whose lanes are in order (an evenly
    /// spaced side, the other one value): whether all are true and whether
    /// any may be, from the first and last lanes (`i8`s).
    spans: HashMap<Reg, (Value, Value)>,
    /// Evenly spaced indices known not to wrap (`Lin` base, step, signed).
    no_wrap: HashSet<(Value, i32, bool)>,
}

impl Facts {
    /// Forget what is known of register `r`.
    fn forget_reg(&mut self, r: Reg) {
        self.lin.remove(&r);
        self.ptrs.remove(&r);
        self.masks.remove(&r);
        self.spans.remove(&r);
    }

    /// What is known of `src`, now of `dst` too (a copy).
    fn copy(&mut self, src: Reg, dst: Reg) {
        self.forget_reg(dst);
        if let Some(&l) = self.lin.get(&src) {
            self.lin.insert(dst, l);
        }
        if let Some(&p) = self.ptrs.get(&src) {
            self.ptrs.insert(dst, p);
        }
        if let Some(&m) = self.masks.get(&src) {
            self.masks.insert(dst, m);
        }
        if let Some(&s) = self.spans.get(&src) {
            self.spans.insert(dst, s);
        }
    }

    /// Forget what is known of the registers in `kill`.
    fn forget(&mut self, kill: &HashSet<Reg>) {
        self.lin.retain(|r, _| !kill.contains(r));
        self.ptrs.retain(|r, _| !kill.contains(r));
        self.masks.retain(|r, _| !kill.contains(r));
        self.spans.retain(|r, _| !kill.contains(r));
    }
}

/// The chunk code's state in `Gen`.
#[derive(Default)]
pub(super) struct Wide {
    pub(super) vars: HashMap<Reg, Variable>,
    k: Facts,
    /// The chunk's first thread, as an `i32`.
    first: Option<Value>,
    /// Where a chunk whose threads disagree at a branch goes.
    fallback: Option<Block>,
    /// A store has been compiled on the way here.
    stored: bool,
    /// Where a return goes: the end of each inlined function around.
    scopes: Vec<Block>,
}

/// Whether `body` is made only of what the chunk code handles (a cheap
/// test before trying: the code generator may still refuse it).
pub(super) fn candidate(body: &[Inst]) -> bool {
    let mut ok = true;
    let mut memory = false;
    gpu::ir::walk(body, &mut |i| {
        memory |= matches!(i, Inst::Load { .. } | Inst::Store { .. });
        ok &= matches!(
            i,
            Inst::Const { .. }
                | Inst::Copy { .. }
                | Inst::Assign { .. }
                | Inst::Unary { .. }
                | Inst::Binary { .. }
                | Inst::Compare { .. }
                | Inst::Convert { .. }
                | Inst::Select { .. }
                | Inst::PtrIndex { .. }
                | Inst::PtrAdd { .. }
                | Inst::Load { .. }
                | Inst::Store { .. }
                | Inst::Attr { .. }
                | Inst::If { .. }
                | Inst::Scope { .. }
                | Inst::Nop
                | Inst::NoReturn { .. }
                | Inst::Math { func: BuiltinId::Min | BuiltinId::Max, ty: Scalar::Int | Scalar::UInt, .. }
                | Inst::Math { ty: Scalar::Float, .. }
                | Inst::Return { .. }
                | Inst::Loop { check_first: true, .. }
        );
    });
    ok && memory
}

/// Whether `body` only computes registers (no memory access, no return).
fn registers_only(body: &[Inst]) -> bool {
    let mut ok = true;
    gpu::ir::walk(body, &mut |i| ok &= !matches!(i, Inst::Load { .. } | Inst::Store { .. } | Inst::Return { .. }));
    ok
}

fn unsupported(what: &str) -> Unsupported {
    Unsupported(format!("four threads at a time: {what}"))
}

fn lane_order() -> MemFlags {
    MemFlags::new().with_endianness(Endianness::Little)
}

impl Gen<'_, '_> {
    /// The chunks' loop: block `head` (parameter: the chunk's first
    /// thread) runs chunks while four threads are left, then
    /// hands the rest to the one-thread loop (`self.lane_head`, up to
    /// `n`). A chunk that falls back runs its four in a second copy of the
    /// one-thread code, which comes back here after them. (Two copies, so
    /// that the loops nest without a cycle through both: Cranelift moves
    /// what stays put out of a loop only to the block before it, and the
    /// copy's block before it is the cold fallback.)
    pub(super) fn wide_loop(&mut self, body: &[Inst], preset: &[Reg], head: Block, n: Value) -> Result<(), Unsupported> {
        self.b.switch_to_block(head);
        let c = self.b.block_params(head)[0];
        let (chunk, tail, fallback) = (self.b.create_block(), self.b.create_block(), self.b.create_block());
        let end = self.b.ins().iadd_imm(c, LANES);
        let fits = self.b.ins().icmp(IntCC::UnsignedLessThanOrEqual, end, n);
        loop_branch(self.b, fits, chunk, tail);
        self.b.switch_to_block(tail);
        self.b.ins().jump(self.lane_head, &[c.into()]);
        self.b.set_cold_block(fallback);
        self.b.switch_to_block(fallback);
        self.scalar_copy(body, preset, c, end, head)?;
        self.b.switch_to_block(chunk);
        let first = self.b.ins().ireduce(I32, c);
        self.wide = Wide { first: Some(first), fallback: Some(fallback), ..Default::default() };
        for (i, &r) in preset.iter().enumerate() {
            if let Reg::W32(_) = r {
                let v = self.b.ins().load(I64, FIXED, self.initial, i as i32 * 8);
                let v = self.b.ins().ireduce(I32, v);
                self.set_lin(r, Lin { base: v, step: 0 });
            }
        }
        self.wide_block(body)?;
        self.b.ins().jump(head, &[end.into()]);
        Ok(())
    }

    /// Threads `from..to` by the one-thread code (a copy of it), then on
    /// to `next` with `to`. Only for kernels without stops, which keep no
    /// state, spill slots or counts: the copy's thread has none.
    fn scalar_copy(&mut self, body: &[Inst], preset: &[Reg], from: Value, to: Value, next: Block) -> Result<(), Unsupported> {
        let (head, lane_body, done) = (self.b.create_block(), self.b.create_block(), self.b.create_block());
        self.b.append_block_param(head, I64);
        self.b.ins().jump(head, &[from.into()]);
        self.b.switch_to_block(head);
        let lane = self.b.block_params(head)[0];
        let more = self.b.ins().icmp(IntCC::UnsignedLessThan, lane, to);
        loop_branch(self.b, more, lane_body, done);
        self.b.switch_to_block(done);
        self.b.ins().jump(next, &[to.into()]);
        self.b.switch_to_block(lane_body);
        let main = (self.lane, self.lane_head);
        (self.lane, self.lane_head) = (lane, head);
        let zero = self.b.ins().iconst(I64, 0);
        self.b.def_var(self.cnt, zero);
        (self.pending, self.dead) = (0, false);
        self.prov.clear();
        self.clean.clear();
        self.load_presets(preset);
        self.block(body)?;
        if !self.dead {
            self.flush();
            self.exit(FINISHED);
        }
        (self.lane, self.lane_head) = main;
        Ok(())
    }

    fn wide_block(&mut self, insts: &[Inst]) -> Result<(), Unsupported> {
        stacker::maybe_grow(crate::WALK_RED_ZONE, crate::WALK_STACK, || {
            for inst in insts {
                self.within_size()?;
                self.wide_inst(inst)?;
            }
            Ok(())
        })
    }

    fn wide_inst(&mut self, inst: &Inst) -> Result<(), Unsupported> {
        match inst {
            Inst::If { cond, then, els, .. } if self.uniform(*cond).is_none() && registers_only(then) && registers_only(els) => {
                self.wide_select_if(inst, *cond, then, els)?
            }
            Inst::If { cond, then, els, .. } => {
                let (t, e, join) = (self.b.create_block(), self.b.create_block(), self.b.create_block());
                if let Some(c) = self.uniform(*cond) {
                    self.b.ins().brif(c, t, &[], e, &[]);
                } else {
                    if self.wide.stored {
                        return Err(unsupported("a branch the threads may take apart after a store"));
                    }
                    let fallback = self.wide.fallback.ok_or_else(|| unsupported("internal: no fallback"))?;
                    let (all, any) = match (self.wide.k.spans.get(cond), self.wide.k.masks.get(cond)) {
                        (Some(&(all, any)), _) => (all, any),
                        (None, m) => {
                            let v = match m {
                                Some(&m) => m,
                                None => self.wbits(*cond),
                            };
                            (self.b.ins().vall_true(v), self.b.ins().vany_true(v))
                        }
                    };
                    let mixed = self.b.create_block();
                    self.b.ins().brif(all, t, &[], mixed, &[]);
                    self.b.switch_to_block(mixed);
                    self.b.ins().brif(any, fallback, &[], e, &[]);
                }
                // What is known after the branch: what was before, less
                // the registers it assigns.
                let kill: HashSet<Reg> = assigned(std::slice::from_ref(inst)).into_iter().collect();
                let before = self.wide.k.clone();
                for (blk, body) in [(t, then), (e, els)] {
                    self.b.switch_to_block(blk);
                    self.wide.k = before.clone();
                    self.wide_block(body)?;
                    self.b.ins().jump(join, &[]);
                }
                self.b.switch_to_block(join);
                self.wide.k = before;
                self.wide.k.forget(&kill);
            }
            Inst::Loop { cond_block, body, step, .. } => {
                // A short counted loop from a constant start (as the
                // one-thread code unrolls it): its trips, one after
                // another, the counter a constant in each.
                let n = self.wide_unroll_trips(inst).ok_or_else(|| unsupported("a loop it does not unroll"))?;
                let mut jumps = false;
                for b in [cond_block, body, step] {
                    gpu::ir::walk(b, &mut |i| jumps |= matches!(i, Inst::Break | Inst::Continue));
                }
                if jumps {
                    return Err(unsupported("a break or continue"));
                }
                for _ in 0..n {
                    self.wide_block(cond_block)?;
                    self.wide_block(body)?;
                    self.wide_block(step)?;
                }
                // (The last, failing test.)
                self.wide_block(cond_block)?;
            }
            Inst::Scope { body } => {
                // (Its returns come here, each with what it assigned.)
                let end = self.b.create_block();
                let mut returns = false;
                gpu::ir::walk(body, &mut |i| returns |= matches!(i, Inst::Return { .. }));
                let before = self.wide.k.clone();
                self.wide.scopes.push(end);
                self.wide_block(body)?;
                self.wide.scopes.pop();
                self.b.ins().jump(end, &[]);
                self.b.switch_to_block(end);
                // (Without a return, the one way through: what is known
                // at its end holds.)
                if returns {
                    self.wide.k = before;
                    self.wide.k.forget(&assigned(body).into_iter().collect());
                }
            }
            Inst::Return { .. } => {
                // Every thread of the chunk returns (branches are the
                // chunk's all together); what follows is not reached.
                let end = *self.wide.scopes.last().ok_or_else(|| unsupported("a return outside a function"))?;
                self.b.ins().jump(end, &[]);
                let unreached = self.b.create_block();
                self.b.switch_to_block(unreached);
            }
            Inst::Nop => {}
            Inst::NoReturn { .. } if !self.checks => {}
            _ => self.wide_simple(inst)?,
        }
        Ok(())
    }

    /// A branch of register operations only, whichever way the lanes go:
    /// both ways run, and each register either assigns takes, lane by
    /// lane, the value of the way that lane goes.
    fn wide_select_if(&mut self, inst: &Inst, cond: Reg, then: &[Inst], els: &[Inst]) -> Result<(), Unsupported> {
        let m = match self.wide.k.masks.get(&cond) {
            Some(&m) => m,
            None => {
                let c = self.wbits(cond);
                let zero = self.splat_i32(0);
                self.b.ins().icmp(IntCC::NotEqual, c, zero)
            }
        };
        let kill = assigned(std::slice::from_ref(inst));
        if kill.iter().any(|r| matches!(r, Reg::W64(_))) {
            return Err(unsupported("a pointer chosen by a branch"));
        }
        let vars: Vec<Variable> = kill.iter().map(|&r| self.wvar(r)).collect();
        let before: Vec<Value> = vars.iter().map(|&v| self.b.use_var(v)).collect();
        let facts = self.wide.k.clone();
        self.wide_block(then)?;
        let taken: Vec<Value> = kill.iter().map(|&r| self.wbits(r)).collect();
        for (&var, &v) in vars.iter().zip(&before) {
            self.b.def_var(var, v);
        }
        self.wide.k = facts.clone();
        self.wide_block(els)?;
        let other: Vec<Value> = kill.iter().map(|&r| self.wbits(r)).collect();
        self.wide.k = facts;
        for (k, &r) in kill.iter().enumerate() {
            let v = self.b.ins().bitselect(m, taken[k], other[k]);
            self.wset(r, v);
        }
        Ok(())
    }

    /// Give up unless no lane of 32-bit `l` wraps around 32 bits
    /// (`signed`: as signed integers), once per value: else lanes widened
    /// to 64 bits would not be evenly spaced. Rare enough to give up on.
    fn no_wrap(&mut self, l: Lin, signed: bool) -> Result<(), Unsupported> {
        if (l.step as i64).abs() > MOST_STEP {
            return Err(unsupported("an index whose lanes are far apart"));
        }
        if l.step != 0 && self.wide.k.no_wrap.insert((l.base, l.step, signed)) {
            let ok = self.in_order(l, signed);
            self.guard(ok);
        }
        Ok(())
    }

    /// Lane `k` of `l`.
    fn lane_of(&mut self, l: Lin, k: i64) -> Value {
        if l.step == 0 {
            return l.base;
        }
        self.b.ins().iadd_imm(l.base, k * l.step as i64)
    }

    /// Whether the lanes of `l` (stepping) are in order, none wrapping
    /// around their width (`signed`: as signed integers).
    fn in_order(&mut self, l: Lin, signed: bool) -> Value {
        let last = self.b.ins().iadd_imm(l.base, 3 * l.step as i64);
        let cc = match (signed, l.step > 0) {
            (true, true) => IntCC::SignedGreaterThanOrEqual,
            (false, true) => IntCC::UnsignedGreaterThanOrEqual,
            (true, false) => IntCC::SignedLessThanOrEqual,
            (false, false) => IntCC::UnsignedLessThanOrEqual,
        };
        self.b.ins().icmp(cc, last, l.base)
    }

    /// For `a cc b` with one side evenly spaced (a small step) and the
    /// other one value: whether all lanes are true and whether any may be,
    /// from the first and last lanes only — an order comparison of lanes
    /// in order is true on a run of them at one end. (Lanes that wrap
    /// around: "not all, maybe some", which the one-thread code sorts out.)
    fn span(&mut self, cc: IntCC, a: Reg, b: Reg) -> Option<(Value, Value)> {
        let (la, lb) = (self.wide.k.lin.get(&a).copied()?, self.wide.k.lin.get(&b).copied()?);
        if matches!(cc, IntCC::Equal | IntCC::NotEqual) || (la.step == 0) == (lb.step == 0) {
            return None;
        }
        let spaced = if la.step != 0 { la } else { lb };
        if (spaced.step as i64).abs() > MOST_STEP {
            return None;
        }
        let signed =
            matches!(cc, IntCC::SignedLessThan | IntCC::SignedLessThanOrEqual | IntCC::SignedGreaterThan | IntCC::SignedGreaterThanOrEqual);
        let ordered = self.in_order(spaced, signed);
        let (a0, b0) = (self.lane_of(la, 0), self.lane_of(lb, 0));
        let (a3, b3) = (self.lane_of(la, 3), self.lane_of(lb, 3));
        let first = self.b.ins().icmp(cc, a0, b0);
        let last = self.b.ins().icmp(cc, a3, b3);
        let both = self.b.ins().band(first, last);
        let all = self.b.ins().band(both, ordered);
        let either = self.b.ins().bor(first, last);
        let wraps = self.b.ins().bxor_imm(ordered, 1);
        let any = self.b.ins().bor(either, wraps);
        Some((all, any))
    }

    /// The trips of loop `inst` if the one-thread code would unroll it
    /// (`Gen::unroll_trips`), its counter's start known here.
    fn wide_unroll_trips(&mut self, inst: &Inst) -> Option<u64> {
        let shape = crate::analysis::loop_shape(inst, self.fixed)?;
        let crate::analysis::Bounded::CountsUp { k, .. } = shape else { return None };
        let start = self.wide.k.lin.get(&k).filter(|l| l.step == 0)?.base;
        self.unroll_trips_from(inst, shape, self.constant(start)?)
    }

    fn wvar(&mut self, r: Reg) -> Variable {
        if let Some(v) = self.wide.vars.get(&r) {
            return *v;
        }
        let ty = if self.floats.contains(&r) { F32X4 } else { I32X4 };
        let v = self.b.declare_var(ty);
        self.wide.vars.insert(r, v);
        v
    }

    /// A 32-bit register's lanes as integers.
    fn wbits(&mut self, r: Reg) -> Value {
        let var = self.wvar(r);
        let v = self.b.use_var(var);
        if self.floats.contains(&r) {
            return self.b.ins().bitcast(I32X4, lane_order(), v);
        }
        v
    }

    /// A 32-bit register's lanes as floats.
    fn wfloat(&mut self, r: Reg) -> Value {
        let var = self.wvar(r);
        let v = self.b.use_var(var);
        if self.floats.contains(&r) {
            return v;
        }
        self.b.ins().bitcast(F32X4, lane_order(), v)
    }

    /// Set a 32-bit register's lanes (integers or floats); what was known
    /// of it is forgotten.
    fn wset(&mut self, r: Reg, v: Value) {
        self.wide.k.forget_reg(r);
        let var = self.wvar(r);
        let want = if self.floats.contains(&r) { F32X4 } else { I32X4 };
        let v = if self.b.func.dfg.value_type(v) == want { v } else { self.b.ins().bitcast(want, lane_order(), v) };
        self.b.def_var(var, v);
    }

    fn set_lin(&mut self, r: Reg, l: Lin) {
        if let Reg::W64(_) = r {
            self.wide.k.forget_reg(r);
            self.wide.k.lin.insert(r, l);
            return;
        }
        let mut v = self.b.ins().splat(I32X4, l.base);
        if l.step != 0 {
            let bytes: Vec<u8> = (0..LANES as i32).flat_map(|k| k.wrapping_mul(l.step).to_le_bytes()).collect();
            let h = self.b.func.dfg.constants.insert(bytes.into());
            let steps = self.b.ins().vconst(I32X4, h);
            v = self.b.ins().iadd(v, steps);
        }
        self.wset(r, v);
        self.wide.k.lin.insert(r, l);
    }

    fn set_ptr(&mut self, r: Reg, p: WPtr) {
        self.wide.k.forget_reg(r);
        self.wide.k.ptrs.insert(r, p);
    }

    /// The value every lane of `r` holds, if it is known to be one.
    fn uniform(&self, r: Reg) -> Option<Value> {
        self.wide.k.lin.get(&r).filter(|l| l.step == 0).map(|l| l.base)
    }

    fn splat_i32(&mut self, x: i64) -> Value {
        let c = self.b.ins().iconst(I32, x);
        self.b.ins().splat(I32X4, c)
    }

    /// Lanes that are nonzero integers as 1, the rest 0.
    fn ones(&mut self, mask: Value) -> Value {
        let one = self.splat_i32(1);
        self.b.ins().band(mask, one)
    }

    fn wptr(&mut self, r: Reg) -> Result<WPtr, Unsupported> {
        if let Some(p) = self.wide.k.ptrs.get(&r) {
            return Ok(*p);
        }
        let &(id, off) = self.statics.get(&r).ok_or_else(|| unsupported("a pointer it cannot follow"))?;
        let v = self.b.ins().iconst(I64, off);
        Ok(WPtr { known: Known { id, off: v, align: align_of(off) }, stride: 0, lanes: None })
    }

    /// Lane `k`'s pointer of `p`.
    fn lane_ptr(&mut self, p: WPtr, k: i64) -> Known {
        let mut off = self.b.ins().iadd_imm(p.known.off, k * p.stride);
        let mut align = p.known.align.min(align_of(p.stride));
        if let Some(l) = p.lanes {
            let i = self.b.ins().extractlane(l.idx, k as u8);
            let i = if l.signed { self.b.ins().sextend(I64, i) } else { self.b.ins().uextend(I64, i) };
            let delta = self.b.ins().imul_imm(i, l.scale);
            off = self.b.ins().iadd(off, delta);
            align = align.min(align_of(l.scale));
        }
        Known { id: p.known.id, off, align }
    }

    fn wide_attr(&mut self, inst: &Inst, attr: ThreadAttr, c: u8) -> Result<Lin, Unsupported> {
        let first = self.wide.first.ok_or_else(|| unsupported("internal: no chunk"))?;
        Ok(match attr {
            // (Chunks run only in threadgroups of one row.)
            ThreadAttr::ThreadPositionInThreadgroup | ThreadAttr::ThreadIndexInThreadgroup if c == 0 => Lin { base: first, step: 1 },
            ThreadAttr::ThreadPositionInThreadgroup if c < 3 => Lin { base: self.b.ins().iconst(I32, 0), step: 0 },
            ThreadAttr::ThreadPositionInGrid if c < 3 => {
                let pos = self.b.ins().load(I32, FIXED, self.ctx, rt::OFF_TG_POS + 4 * c as i32);
                let req = self.b.ins().load(I32, FIXED, self.ctx, rt::OFF_REQUESTED + 4 * c as i32);
                let base = self.b.ins().imul(pos, req);
                if c == 0 {
                    Lin { base: self.b.ins().iadd(base, first), step: 1 }
                } else {
                    Lin { base, step: 0 }
                }
            }
            _ if self.uniform_attrs.contains(&(attr, c)) => Lin { base: self.attr(inst, attr, c), step: 0 },
            _ => return Err(unsupported("a thread attribute it does not spell out")),
        })
    }

    fn wide_simple(&mut self, inst: &Inst) -> Result<(), Unsupported> {
        use Scalar::*;
        let w32 = |r: &Reg| matches!(r, Reg::W32(_));
        let w64 = |r: &Reg| matches!(r, Reg::W64(_));
        match inst {
            Inst::Const { dst: dst @ Reg::W32(_), bits } => {
                let v = self.b.ins().iconst(I32, *bits as u32 as i64);
                self.set_lin(*dst, Lin { base: v, step: 0 });
            }
            Inst::Copy { dst, src } | Inst::Assign { dst, src } if w32(dst) && w32(src) => {
                let var = self.wvar(*src);
                let v = self.b.use_var(var);
                self.wset(*dst, v);
                self.wide.k.copy(*src, *dst);
            }
            Inst::Copy { dst, src } | Inst::Assign { dst, src } if w64(dst) && w64(src) => match self.wide.k.lin.get(src).copied() {
                Some(l) => self.set_lin(*dst, l),
                None => {
                    let p = self.wptr(*src)?;
                    self.set_ptr(*dst, p);
                }
            },
            Inst::Unary { op, ty, dst, a } if w32(dst) && w32(a) => {
                let x = self.wbits(*a);
                let known = self.wide.k.lin.get(a).copied();
                match (op, ty) {
                    (UnOp::Neg, Float | Half | BFloat) => {
                        let sign = self.splat_i32(0x8000_0000u32 as i32 as i64);
                        let v = self.b.ins().bxor(x, sign);
                        self.wset(*dst, v);
                    }
                    (UnOp::Neg, Int | UInt) => match known {
                        Some(l) => {
                            let base = self.b.ins().ineg(l.base);
                            self.set_lin(*dst, Lin { base, step: l.step.wrapping_neg() });
                        }
                        None => {
                            let v = self.b.ins().ineg(x);
                            self.wset(*dst, v);
                        }
                    },
                    (UnOp::Not, _) => {
                        let zero = self.splat_i32(0);
                        let m = self.b.ins().icmp(IntCC::Equal, x, zero);
                        let v = self.ones(m);
                        self.wset(*dst, v);
                    }
                    (UnOp::BitNot, Int | UInt) => {
                        let v = self.b.ins().bnot(x);
                        self.wset(*dst, v);
                    }
                    _ => return Err(unsupported("a unary operation")),
                }
            }
            Inst::Binary { op, ty: Float, dst, a, b, .. } if w32(dst) && w32(a) && w32(b) => {
                let (x, y) = (self.wfloat(*a), self.wfloat(*b));
                let v = float_arith(self.b, *op, x, y).ok_or_else(|| unsupported("a float operation"))?;
                self.wset(*dst, v);
            }
            Inst::Binary { op, ty: Int | UInt, dst, a, b, .. } if w32(dst) && w32(a) && w32(b) => self.wide_int(*op, *dst, *a, *b, inst)?,
            Inst::Binary { op, ty: Long | ULong, dst, a, b, .. } if w64(dst) && w64(a) && w64(b) => {
                self.wide_int(*op, *dst, *a, *b, inst)?
            }
            Inst::Const { dst: dst @ Reg::W64(_), bits } => {
                let v = self.b.ins().iconst(I64, *bits as i64);
                self.set_lin(*dst, Lin { base: v, step: 0 });
            }
            Inst::Compare { op, ty: ty @ (Long | ULong), dst, a, b } if w32(dst) && w64(a) && w64(b) => {
                let cc = int_cc(*op, *ty == Long).ok_or_else(|| unsupported("a 64-bit comparison"))?;
                let la = self.wide.k.lin.get(a).copied().ok_or_else(|| unsupported("64-bit integers that are not evenly spaced"))?;
                let lb = self.wide.k.lin.get(b).copied().ok_or_else(|| unsupported("64-bit integers that are not evenly spaced"))?;
                let span = self.span(cc, *a, *b);
                if la.step == 0 && lb.step == 0 {
                    let c = self.b.ins().icmp(cc, la.base, lb.base);
                    let base = self.bool32(c);
                    self.set_lin(*dst, Lin { base, step: 0 });
                } else {
                    // (Lane by lane: there are no 64-bit lanes to compare.)
                    let mut v = None;
                    for k in 0..LANES {
                        let (x, y) = (self.lane_of(la, k), self.lane_of(lb, k));
                        let c = self.b.ins().icmp(cc, x, y);
                        let c = self.bool32(c);
                        v = Some(match v {
                            None => self.b.ins().splat(I32X4, c),
                            Some(v) => self.b.ins().insertlane(v, c, k as u8),
                        });
                    }
                    let v = v.ok_or_else(|| unsupported("internal: no lanes"))?;
                    self.wset(*dst, v);
                    if let Some(sp) = span {
                        self.wide.k.spans.insert(*dst, sp);
                    }
                }
            }
            Inst::Convert { from: from @ (Int | UInt), to: Long | ULong, dst, src } if w64(dst) && w32(src) => {
                let l = self.wide.k.lin.get(src).copied().ok_or_else(|| unsupported("an index whose lanes are not evenly spaced"))?;
                let signed = *from == Int;
                self.no_wrap(l, signed)?;
                let base = if signed { self.b.ins().sextend(I64, l.base) } else { self.b.ins().uextend(I64, l.base) };
                self.set_lin(*dst, Lin { base, step: l.step });
            }
            Inst::Convert { from: Long | ULong, to: Long | ULong, dst, src } if w64(dst) && w64(src) => {
                let l = self.wide.k.lin.get(src).copied().ok_or_else(|| unsupported("64-bit integers that are not evenly spaced"))?;
                self.set_lin(*dst, l);
            }
            Inst::Convert { from: Long | ULong, to: Int | UInt, dst, src } if w32(dst) && w64(src) => {
                let l = self.wide.k.lin.get(src).copied().ok_or_else(|| unsupported("64-bit integers that are not evenly spaced"))?;
                let base = self.b.ins().ireduce(I32, l.base);
                self.set_lin(*dst, Lin { base, step: l.step });
            }
            Inst::Binary { op, ty: Bool, dst, a, b, .. } if w32(dst) && w32(a) && w32(b) => {
                let (x, y) = (self.wbits(*a), self.wbits(*b));
                let v = match op {
                    BinaryOp::BitAnd | BinaryOp::LogAnd => self.b.ins().band(x, y),
                    BinaryOp::BitOr | BinaryOp::LogOr => self.b.ins().bor(x, y),
                    BinaryOp::BitXor => self.b.ins().bxor(x, y),
                    _ => return Err(unsupported("a bool operation")),
                };
                let v = self.ones(v);
                self.wset(*dst, v);
            }
            Inst::Compare { op, ty, dst, a, b } if w32(dst) && w32(a) && w32(b) && !matches!(ty, Long | ULong) => {
                if ty.is_float() {
                    let cc = float_cc(*op).ok_or_else(|| unsupported("a float comparison"))?;
                    let (x, y) = (self.wfloat(*a), self.wfloat(*b));
                    let m = self.b.ins().fcmp(cc, x, y);
                    let v = self.ones(m);
                    self.wset(*dst, v);
                    self.wide.k.masks.insert(*dst, m);
                } else {
                    let cc = int_cc(*op, ty.is_signed()).ok_or_else(|| unsupported("an integer comparison"))?;
                    if let (Some(x), Some(y)) = (self.uniform(*a), self.uniform(*b)) {
                        let c = self.b.ins().icmp(cc, x, y);
                        let base = self.bool32(c);
                        self.set_lin(*dst, Lin { base, step: 0 });
                    } else {
                        let (x, y) = (self.wbits(*a), self.wbits(*b));
                        let m = self.b.ins().icmp(cc, x, y);
                        let v = self.ones(m);
                        self.wset(*dst, v);
                        self.wide.k.masks.insert(*dst, m);
                        if let Some(sp) = self.span(cc, *a, *b) {
                            self.wide.k.spans.insert(*dst, sp);
                        }
                    }
                }
            }
            Inst::Convert { from, to, dst, src } if w32(dst) && w32(src) => {
                let x = self.wbits(*src);
                let known = self.wide.k.lin.get(src).copied();
                let v = match (from, to) {
                    _ if from == to || matches!((from, to), (Int, UInt) | (UInt, Int)) => {
                        self.wset(*dst, x);
                        if let Some(l) = known {
                            self.wide.k.lin.insert(*dst, l);
                        }
                        return Ok(());
                    }
                    (Int, Float) => self.b.ins().fcvt_from_sint(F32X4, x),
                    (UInt, Float) => self.b.ins().fcvt_from_uint(F32X4, x),
                    (Float, Int) => {
                        let f = self.wfloat(*src);
                        self.b.ins().fcvt_to_sint_sat(I32X4, f)
                    }
                    (Float, UInt) => {
                        let f = self.wfloat(*src);
                        self.b.ins().fcvt_to_uint_sat(I32X4, f)
                    }
                    (Bool, Int | UInt) => self.ones(x),
                    // (`gpu_math::scalar::is_true`: nonzero; NaN is true.)
                    (Int | UInt, Bool) => {
                        let zero = self.splat_i32(0);
                        let m = self.b.ins().icmp(IntCC::NotEqual, x, zero);
                        let v = self.ones(m);
                        self.wset(*dst, v);
                        self.wide.k.masks.insert(*dst, m);
                        return Ok(());
                    }
                    (Float, Bool) => {
                        let f = self.wfloat(*src);
                        let zero = self.b.ins().f32const(0.0);
                        let zero = self.b.ins().splat(F32X4, zero);
                        let m = self.b.ins().fcmp(FloatCC::NotEqual, f, zero);
                        let v = self.ones(m);
                        self.wset(*dst, v);
                        self.wide.k.masks.insert(*dst, m);
                        return Ok(());
                    }
                    // (`gpu_math::scalar::convert`: the low bit, as a float.)
                    (Bool, Float) => {
                        let bit = self.ones(x);
                        self.b.ins().fcvt_from_sint(F32X4, bit)
                    }
                    _ => return Err(unsupported("a conversion")),
                };
                self.wset(*dst, v);
            }
            Inst::Select { dst, cond, a, b } if w32(cond) && w32(dst) && w32(a) && w32(b) => {
                let c = self.wbits(*cond);
                let zero = self.splat_i32(0);
                let m = self.b.ins().icmp(IntCC::NotEqual, c, zero);
                let (x, y) = (self.wbits(*a), self.wbits(*b));
                let v = self.b.ins().bitselect(m, x, y);
                self.wset(*dst, v);
            }
            Inst::Math { ty: ty @ (Int | UInt), dst: dst @ Reg::W32(_), args, func: func @ (BuiltinId::Min | BuiltinId::Max), .. }
                if args.len() == 2 && args.iter().all(w32) =>
            {
                let (x, y) = (self.wbits(args[0]), self.wbits(args[1]));
                let v = min_max(self.b, *func, *ty == Int, x, y);
                self.wset(*dst, v);
            }
            // The math library's `f32` functions, as the one-thread code
            // calls them, once per lane.
            Inst::Math { f, ty: Float, dst: dst @ Reg::W32(_), args, .. } if args.iter().all(w32) => {
                let MathCall { tramp, g, n, sig } = self.math_call(*f).ok_or_else(|| unsupported("a math function"))?;
                if args.len() != n {
                    return Err(unsupported("a math function's arguments"));
                }
                let pred = matches!(f, gpu::ir::MathFn::FPred(_) | gpu::ir::MathFn::FRel(_));
                let xs: Vec<Value> = args.iter().map(|&a| self.wfloat(a)).collect();
                let mut v = None;
                for k in 0..LANES as u8 {
                    let mut vals = vec![self.b.ins().iconst(I64, g as i64)];
                    for &x in &xs {
                        vals.push(self.b.ins().extractlane(x, k));
                    }
                    let r = self.call(sig, tramp, &vals).ok_or_else(|| unsupported("internal: no result"))?;
                    v = Some(match v {
                        None => self.b.ins().splat(if pred { I32X4 } else { F32X4 }, r),
                        Some(v) => self.b.ins().insertlane(v, r, k),
                    });
                }
                let v = v.ok_or_else(|| unsupported("internal: no lanes"))?;
                self.wset(*dst, v);
            }
            Inst::PtrIndex { dst, ptr, index: index @ Reg::W32(_), index_ty, scale }
                if w64(dst) && w64(ptr) && !self.wide.k.lin.contains_key(index) =>
            {
                // Indices with no known spacing: each lane's own.
                let p = self.wptr(*ptr)?;
                if p.lanes.is_some() {
                    return Err(unsupported("an index into memory found by another index"));
                }
                let idx = self.wbits(*index);
                let lanes = Lanes { idx, signed: index_ty.is_signed(), scale: *scale };
                self.set_ptr(*dst, WPtr { lanes: Some(lanes), ..p });
            }
            Inst::PtrIndex { dst, ptr, index, index_ty, scale } if w64(dst) && w64(ptr) => {
                let p = self.wptr(*ptr)?;
                if p.lanes.is_some() {
                    return Err(unsupported("an index into memory found by another index"));
                }
                let l = self.wide.k.lin.get(index).copied().ok_or_else(|| unsupported("64-bit indices that are not evenly spaced"))?;
                if (l.step as i64).abs() > MOST_STEP {
                    return Err(unsupported("an index whose lanes are far apart"));
                }
                let signed = index_ty.is_signed();
                // (A 64-bit index whose lanes wrap puts the first lane's
                // offset near 2^64: out of bounds, and the code gives up.)
                let i = match index {
                    Reg::W32(_) => {
                        self.no_wrap(l, signed)?;
                        if signed {
                            self.b.ins().sextend(I64, l.base)
                        } else {
                            self.b.ins().uextend(I64, l.base)
                        }
                    }
                    Reg::W64(_) => l.base,
                };
                let delta = self.b.ins().imul_imm(i, *scale);
                let off = self.b.ins().iadd(p.known.off, delta);
                let known = Known { id: p.known.id, off, align: p.known.align.min(align_of(*scale)) };
                self.set_ptr(*dst, WPtr { known, stride: p.stride + l.step as i64 * scale, lanes: None });
            }
            Inst::PtrAdd { dst, ptr, bytes } if w64(dst) && w64(ptr) => {
                let p = self.wptr(*ptr)?;
                let off = self.b.ins().iadd_imm(p.known.off, *bytes);
                let known = Known { id: p.known.id, off, align: p.known.align.min(align_of(*bytes)) };
                self.set_ptr(*dst, WPtr { known, ..p });
            }
            Inst::Attr { attr, component, dst } if w32(dst) => {
                let l = self.wide_attr(inst, *attr, *component)?;
                self.set_lin(*dst, l);
            }
            Inst::Load { dst: dst @ Reg::W32(_), ty: ty @ (Int | UInt | Float), ptr, .. } if w64(ptr) => {
                let p = self.wptr(*ptr)?;
                let float = self.floats.contains(dst);
                match (p.lanes, p.stride) {
                    (None, 0) => {
                        let cached = self.statics.get(ptr).and_then(|&(id, off)| self.invariant.get(&(id, off, *ty))).copied();
                        let v = match cached {
                            Some(v) => v,
                            None => {
                                let a = self.address_known(p.known, 4, 4, false, false);
                                self.b.ins().load(I32, MemFlags::trusted(), a, 0)
                            }
                        };
                        if float {
                            let f = self.b.ins().bitcast(F32, MemFlags::new(), v);
                            let v = self.b.ins().splat(F32X4, f);
                            self.wset(*dst, v);
                        } else {
                            self.set_lin(*dst, Lin { base: v, step: 0 });
                        }
                    }
                    (None, 4) => {
                        // The four lanes' bytes, one after another: in
                        // bounds and aligned as each lane's access is.
                        let a = self.address_known(p.known, 16, 4, false, false);
                        let v = self.b.ins().load(if float { F32X4 } else { I32X4 }, MemFlags::new().with_notrap(), a, 0);
                        self.wset(*dst, v);
                    }
                    _ => {
                        let mut v = None;
                        for k in 0..LANES {
                            let known = self.lane_ptr(p, k);
                            let a = self.address_known(known, 4, 4, false, false);
                            let x = self.b.ins().load(I32, MemFlags::trusted(), a, 0);
                            v = Some(match v {
                                None => self.b.ins().splat(I32X4, x),
                                Some(v) => self.b.ins().insertlane(v, x, k as u8),
                            });
                        }
                        let v = v.ok_or_else(|| unsupported("internal: no lanes"))?;
                        self.wset(*dst, v);
                    }
                }
            }
            Inst::Load { dst: dst @ Reg::W64(_), ty: Long | ULong, ptr, .. } if w64(ptr) => {
                let p = self.wptr(*ptr)?;
                if p.stride != 0 || p.lanes.is_some() {
                    return Err(unsupported("64-bit integers loaded per thread"));
                }
                let a = self.address_known(p.known, 8, 8, false, false);
                let v = self.b.ins().load(I64, MemFlags::trusted(), a, 0);
                self.set_lin(*dst, Lin { base: v, step: 0 });
            }
            Inst::Store { src: src @ Reg::W32(_), ty: Int | UInt | Float, ptr, .. } if w64(ptr) => {
                let p = self.wptr(*ptr)?;
                let v = self.wbits(*src);
                match (p.lanes, p.stride) {
                    (None, 4) => {
                        let a = self.address_known(p.known, 16, 4, true, false);
                        self.b.ins().store(MemFlags::new().with_notrap(), v, a, 0);
                    }
                    // Lane by lane, in the one-thread code's order (one
                    // address: the last lane's value stays).
                    (lanes, stride) => {
                        let lanes = if stride == 0 && lanes.is_none() { LANES - 1..LANES } else { 0..LANES };
                        for k in lanes {
                            let known = self.lane_ptr(p, k);
                            let a = self.address_known(known, 4, 4, true, false);
                            let x = self.b.ins().extractlane(v, k as u8);
                            self.b.ins().store(MemFlags::trusted(), x, a, 0);
                        }
                    }
                }
                self.wide.stored = true;
            }
            _ => return Err(unsupported(&format!("an instruction it does not spell out: {inst:?}"))),
        }
        Ok(())
    }

    /// A 32-bit integer operation, following evenly spaced lanes where it can.
    fn wide_int(&mut self, op: BinaryOp, dst: Reg, a: Reg, b: Reg, inst: &Inst) -> Result<(), Unsupported> {
        let (la, lb) = (self.wide.k.lin.get(&a).copied(), self.wide.k.lin.get(&b).copied());
        let konst = |g: &Self, l: Option<Lin>| l.filter(|l| l.step == 0).and_then(|l| g.constant(l.base));
        if let (Some(x), Some(y)) = (la, lb) {
            let (ka, kb) = (konst(self, la), konst(self, lb));
            let (sx, sy) = (x.step as i64, y.step as i64);
            // The step at the register's width: 32-bit lanes wrap with it,
            // 64-bit ones keep only steps an `i32` holds.
            let wide64 = matches!(dst, Reg::W64(_));
            let step = |s: i64| -> Option<i32> {
                if wide64 {
                    i32::try_from(s).ok()
                } else {
                    Some(s as i32)
                }
            };
            let lin = match op {
                BinaryOp::Add => step(sx + sy).map(|s| Lin { base: self.b.ins().iadd(x.base, y.base), step: s }),
                BinaryOp::Sub => step(sx - sy).map(|s| Lin { base: self.b.ins().isub(x.base, y.base), step: s }),
                BinaryOp::Mul if y.step == 0 && (x.step == 0 || kb.is_some()) => {
                    step(sx.wrapping_mul(kb.unwrap_or(0))).map(|s| Lin { base: self.b.ins().imul(x.base, y.base), step: s })
                }
                BinaryOp::Mul if x.step == 0 && ka.is_some() => {
                    step(sy.wrapping_mul(ka.unwrap_or(0))).map(|s| Lin { base: self.b.ins().imul(x.base, y.base), step: s })
                }
                BinaryOp::Shl if y.step == 0 && (x.step == 0 || kb.is_some_and(|k| (0..32).contains(&k))) => {
                    step(sx << kb.unwrap_or(0)).map(|s| Lin { base: self.b.ins().ishl(x.base, y.base), step: s })
                }
                _ if x.step == 0 && y.step == 0 => {
                    let signed = matches!(inst, Inst::Binary { ty: Scalar::Int | Scalar::Long, .. });
                    let base = match op {
                        BinaryOp::BitAnd => self.b.ins().band(x.base, y.base),
                        BinaryOp::BitOr => self.b.ins().bor(x.base, y.base),
                        BinaryOp::BitXor => self.b.ins().bxor(x.base, y.base),
                        BinaryOp::Shr if signed => self.b.ins().sshr(x.base, y.base),
                        BinaryOp::Shr => self.b.ins().ushr(x.base, y.base),
                        _ => return self.wide_int_lanes(op, dst, a, b, inst),
                    };
                    Some(Lin { base, step: 0 })
                }
                _ => None,
            };
            if let Some(l) = lin {
                self.set_lin(dst, l);
                return Ok(());
            }
        }
        self.wide_int_lanes(op, dst, a, b, inst)
    }

    fn wide_int_lanes(&mut self, op: BinaryOp, dst: Reg, a: Reg, b: Reg, inst: &Inst) -> Result<(), Unsupported> {
        if let Reg::W64(_) = dst {
            return Err(unsupported("64-bit integers that are not evenly spaced"));
        }
        let signed = matches!(inst, Inst::Binary { ty: Scalar::Int, .. });
        let x = self.wbits(a);
        let v = match op {
            BinaryOp::Shl | BinaryOp::Shr => {
                // (Vector shifts take one amount for every lane.)
                let n = self.uniform(b).ok_or_else(|| unsupported("a shift by amounts that differ between threads"))?;
                match op {
                    BinaryOp::Shl => self.b.ins().ishl(x, n),
                    _ if signed => self.b.ins().sshr(x, n),
                    _ => self.b.ins().ushr(x, n),
                }
            }
            BinaryOp::Div | BinaryOp::Rem => {
                // (No vector division: lane by lane, as one thread does it.)
                let y = self.wbits(b);
                let mut v = x;
                for k in 0..LANES as u8 {
                    let (xk, yk) = (self.b.ins().extractlane(x, k), self.b.ins().extractlane(y, k));
                    let r = self.int_div(op == BinaryOp::Div, signed, xk, yk);
                    v = self.b.ins().insertlane(v, r, k);
                }
                v
            }
            _ => {
                let y = self.wbits(b);
                int_arith(self.b, op, x, y).ok_or_else(|| unsupported("an integer operation"))?
            }
        };
        self.wset(dst, v);
        Ok(())
    }
}
