//! What the code generator needs to know about a kernel before compiling
//! it: whether it can be run one thread at a time at all, which registers
//! live across each barrier, and whether every thread takes the same path.

use gpu::ir::{AtomicOp, Inst, Reg};
use msl::ast::AddressSpace;
use msl::types::Scalar;
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

/// Why a kernel is left to the interpreter.
#[derive(Clone, Debug)]
pub struct Unsupported(pub String);

impl std::fmt::Display for Unsupported {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Whether the kernel can run one thread at a time between barriers with
/// the interpreter's results; else what stops it.
///
/// SIMD-group matrices need lockstep (SIMD-group functions and
/// `simdgroup_barrier` are stops: `codegen::Stop::lane`). Atomics are applied in another
/// order than lockstep's when a thread reaches several of them in one
/// barrier interval, which changes what they return: only atomics whose
/// order cannot show are allowed (integer read-modify-writes whose result
/// is unused, or a kernel's single atomic, reached once per thread).
pub fn check(k: &gpu::Kernel) -> Result<(), Unsupported> {
    let mut why: Option<&str> = None;
    let mut atomics = 0usize;
    let mut atomic_in_loop = false;
    walk_depth(&k.body, 0, &mut |i, loops| {
        let bad = match i {
            Inst::Matrix { .. } => Some("SIMD-group matrices"),
            Inst::Probing { .. } | Inst::Stop { .. } | Inst::Probe { .. } | Inst::ProbeAt { .. } | Inst::Returned { .. } => {
                Some("debugger probes")
            }
            Inst::Mark { .. } => Some("profiling marks"),
            Inst::Log { .. } => Some("shader logging"),
            Inst::Atomic { .. } => {
                atomics += 1;
                atomic_in_loop |= loops > 0;
                None
            }
            _ => None,
        };
        if why.is_none() {
            why = bad;
        }
    });
    if let Some(w) = why {
        return Err(Unsupported(format!("the kernel uses {w}, which only the interpreter runs")));
    }
    if atomics > 0 {
        let sites = gpu::ir::atomic_sites(k);
        let mut order_free = true;
        gpu::ir::walk(&k.body, &mut |i| {
            if let Inst::Atomic { op, ty, at, .. } = i {
                let used = sites.get(at).is_some_and(|s| s.1);
                let commutes = matches!(
                    op,
                    AtomicOp::Add | AtomicOp::Sub | AtomicOp::And | AtomicOp::Or | AtomicOp::Xor | AtomicOp::Min | AtomicOp::Max
                ) && !ty.is_float();
                order_free &= commutes && !used;
            }
        });
        if !order_free && (atomics > 1 || atomic_in_loop) {
            return Err(Unsupported(
                "the kernel's atomics could return other values when run a thread at a time; the interpreter runs it".into(),
            ));
        }
    }
    Ok(())
}

/// What the code compiled with checks on cannot follow (see
/// `gpu::conflicts`): atomics whose order could change results (the
/// sanitizer notes those and the run explores schedules), atomics the code
/// leaves to the interpreter, and block copies (which carry which bytes
/// of private memory were written).
pub fn check_checked(k: &gpu::Kernel) -> Result<(), Unsupported> {
    let mut why = None;
    gpu::ir::walk(&k.body, &mut |i| match i {
        Inst::Atomic { op, ty: Scalar::Int | Scalar::UInt, dst: Reg::W32(_), ptr: Reg::W64(_), a: Reg::W32(_), .. }
            if *op != AtomicOp::CompareExchange => {}
        Inst::Atomic { .. } => why = why.or(Some("compare-exchange, float or 64-bit atomics")),
        Inst::MemCopy { .. } => why = why.or(Some("block copies")),
        Inst::Lane { .. } | Inst::Barrier { simdgroup: true, .. } => why = why.or(Some("SIMD-group functions or simdgroup_barrier")),
        _ => {}
    });
    if gpu::sanitizer::atomics_order_sensitive(k) {
        why = why.or(Some("atomics whose order could change the result"));
    }
    match why {
        Some(w) => Err(Unsupported(format!("with checks on, kernels with {w} run interpreted"))),
        None => Ok(()),
    }
}

/// The most loops around any stop (`is_stop`): every loop counts its
/// trips, and those around a stop keep the count in a spill slot across it.
pub fn trip_depth(body: &[Inst]) -> usize {
    let mut depth = 0;
    walk_depth(body, 0, &mut |i, loops| {
        if is_stop(i) {
            depth = depth.max(loops);
        }
    });
    depth
}

/// Whether threads stop at `inst`: a barrier, a SIMD-group function or
/// `simdgroup_barrier`. Threads that stop at a SIMD-group function must be
/// at the same loop trips to be active together (as in lockstep); so must
/// threads at a barrier, for checks to vouch for it.
pub fn is_stop(inst: &Inst) -> bool {
    matches!(inst, Inst::Lane { .. } | Inst::Barrier { .. })
}

/// `f(inst, enclosing loops)` for every instruction, outermost first.
fn walk_depth<'a>(block: &'a [Inst], loops: usize, f: &mut dyn FnMut(&'a Inst, usize)) {
    // Nesting (blocks, inlined calls) is bounded only by the kernel's size.
    stacker::maybe_grow(crate::WALK_RED_ZONE, crate::WALK_STACK, || {
        for inst in block {
            f(inst, loops);
            match inst {
                Inst::If { then, els, .. } => {
                    walk_depth(then, loops, f);
                    walk_depth(els, loops, f);
                }
                Inst::Loop { cond_block, body, step, .. } => {
                    walk_depth(cond_block, loops + 1, f);
                    walk_depth(body, loops + 1, f);
                    walk_depth(step, loops + 1, f);
                }
                Inst::Switch { cases, .. } => cases.iter().for_each(|c| walk_depth(&c.2, loops, f)),
                Inst::Scope { body } | Inst::Probing { body } => walk_depth(body, loops, f),
                _ => {}
            }
        }
    })
}

/// Instructions that compute registers from registers, and nothing else.
pub fn register_only(inst: &Inst) -> bool {
    matches!(
        inst,
        Inst::Copy { .. }
            | Inst::Assign { .. }
            | Inst::Unary { .. }
            | Inst::Binary { .. }
            | Inst::Compare { .. }
            | Inst::Convert { .. }
            | Inst::Select { .. }
            | Inst::BitCast { .. }
            | Inst::Math { .. }
            | Inst::Geometric { .. }
            | Inst::Special { .. }
            | Inst::PtrIndex { .. }
            | Inst::PtrAdd { .. }
            | Inst::PtrDiff { .. }
    )
}

/// Whether every thread of a threadgroup follows the same path through the
/// kernel: every branch, loop and switch tests a value that is the same in
/// all of them. Then the interpreter, running the threadgroup in lockstep,
/// executes exactly the instructions one thread does, and the budget can
/// be checked per thread.
pub fn convergent(body: &[Inst], preset: &[Reg]) -> bool {
    // Optimistic: every register uniform until a definition says otherwise,
    // to a fixed point (loop-carried counters stay uniform).
    let mut varying: HashSet<Reg> = HashSet::new();
    loop {
        let before = varying.len();
        mark_varying(body, false, preset, &mut varying);
        if varying.len() == before {
            break;
        }
    }
    let mut ok = true;
    gpu::ir::walk(body, &mut |i| {
        let cond = match i {
            Inst::If { cond, .. } => Some(*cond),
            Inst::Loop { cond, .. } => *cond,
            Inst::Switch { value, .. } => Some(*value),
            _ => None,
        };
        if cond.is_some_and(|c| varying.contains(&c)) {
            ok = false;
        }
    });
    ok
}

fn mark_varying(block: &[Inst], divergent: bool, preset: &[Reg], varying: &mut HashSet<Reg>) {
    // Nesting (blocks, inlined calls) is bounded only by the kernel's size.
    stacker::maybe_grow(crate::WALK_RED_ZONE, crate::WALK_STACK, || {
        for inst in block {
            let (defs, uses, _) = gpu::ir::reg_uses(inst);
            let any_varying = uses.iter().any(|u| varying.contains(u) && !preset.contains(u));
            let produces_varying = match inst {
                Inst::If { cond, then, els, .. } => {
                    let d = divergent || varying.contains(cond);
                    mark_varying(then, d, preset, varying);
                    mark_varying(els, d, preset, varying);
                    continue;
                }
                Inst::Loop { cond_block, cond, body, step, .. } => {
                    let d = divergent || cond.is_some_and(|c| varying.contains(&c));
                    mark_varying(cond_block, d, preset, varying);
                    mark_varying(body, d, preset, varying);
                    mark_varying(step, d, preset, varying);
                    continue;
                }
                Inst::Switch { value, cases, .. } => {
                    let d = divergent || varying.contains(value);
                    for c in cases {
                        mark_varying(&c.2, d, preset, varying);
                    }
                    continue;
                }
                Inst::Scope { body } | Inst::Probing { body } => {
                    mark_varying(body, divergent, preset, varying);
                    continue;
                }
                Inst::Const { .. } => false,
                Inst::Attr { attr, .. } => !gpu::exec::uniform_attr(*attr),
                Inst::Load { space, .. } => *space != AddressSpace::Constant || any_varying,
                _ if register_only(inst) => any_varying,
                _ => true,
            };
            if divergent || produces_varying {
                varying.extend(defs);
            }
        }
    })
}

/// Registers live across each barrier, by the barrier's address, and one
/// spill slot per register that is live across any.
pub struct Spills {
    pub at: HashMap<usize, Vec<Reg>>,
    pub slot: HashMap<Reg, u32>,
    /// Registers live across some barrier that need no slot: their value
    /// is the same everywhere, and is made again after the barrier.
    pub remade: HashMap<usize, Vec<(Reg, Remake)>>,
}

/// How a register with one value for the whole kernel gets it.
#[derive(Clone, Copy, Debug)]
pub enum Remake {
    /// The `i`th register set before the kernel starts.
    Preset(usize),
    Const(u64),
}

/// The registers set before the kernel starts (its pointer parameters'),
/// in the order of `ctx.initial`.
pub fn preset_registers(k: &gpu::Kernel) -> Vec<Reg> {
    k.params
        .iter()
        .filter_map(|p| match p.kind {
            gpu::ir::ParamKind::Buffer { reg, .. } | gpu::ir::ParamKind::ThreadgroupBuffer { reg, .. } => Some(reg),
            gpu::ir::ParamKind::Attr { .. } => None,
        })
        .collect()
}

/// Registers with one value for the whole kernel: set before it starts, or
/// assigned once, by a constant.
pub fn fixed_registers(body: &[Inst], preset: &[Reg]) -> HashMap<Reg, Remake> {
    let mut defs: HashMap<Reg, usize> = HashMap::new();
    let mut consts: HashMap<Reg, u64> = HashMap::new();
    gpu::ir::walk(body, &mut |i| {
        for d in gpu::ir::reg_uses(i).0 {
            *defs.entry(d).or_default() += 1;
        }
        if let Inst::Const { dst, bits } = i {
            consts.insert(*dst, *bits);
        }
    });
    let mut out: HashMap<Reg, Remake> =
        consts.into_iter().filter(|(r, _)| defs.get(r) == Some(&1)).map(|(r, b)| (r, Remake::Const(b))).collect();
    for (i, r) in preset.iter().enumerate() {
        if !defs.contains_key(r) {
            out.insert(*r, Remake::Preset(i));
        }
    }
    out
}

/// How a loop [`loop_shape`] accepts ends after few trips.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Bounded {
    /// `k < limit` (`k <= limit` when `inclusive`), the step adding 1.
    CountsUp { k: Reg, limit: u64, inclusive: bool },
    /// `k > 0` or `k != 0`, the step shrinking `k`.
    Halves,
}

/// `Some` when loop `inst` makes at most [`SHORT_LOOP`] trips between
/// entering and leaving, whatever the values it starts with, and holds no
/// loop (with how it ends: [`Bounded`]). Its
/// condition is on a 32-bit unsigned `k` that only its step changes, and
/// either `k < c` or `k <= c` for a small constant `c` with the step adding
/// 1 (what `for (uint k = 0; k < 16; k++)` lowers to), or `k > 0` or `k !=
/// 0` with the step shifting `k` right or dividing it by a constant (at
/// most 32 trips: `for (uint s = n / 2; s > 0; s >>= 1)`). Such a loop
/// needs no budget check on each trip: it ends soon, and the count its
/// trips add is checked later (by an enclosing loop's trip, or at the end).
pub fn loop_shape(inst: &Inst, fixed: &HashMap<Reg, Remake>) -> Option<Bounded> {
    use msl::ast::BinaryOp;
    let Inst::Loop { cond_block, cond: Some(cond), body, step, .. } = inst else { return None };
    let [Inst::Compare { op, ty: Scalar::UInt, dst, a: k, b: limit }] = &cond_block[..] else { return None };
    let Some(&Remake::Const(c)) = fixed.get(limit) else { return None };
    let konst = |r: &Reg| match fixed.get(r) {
        Some(&Remake::Const(v)) => Some(v),
        _ => None,
    };
    // What the step must do to `k`, given a register equal to `k`, another
    // operand and the operation: count up by one, or shrink toward 0.
    let counts_up = match op {
        BinaryOp::Lt if c <= SHORT_LOOP as u64 => true,
        BinaryOp::Le if c < SHORT_LOOP as u64 => true,
        BinaryOp::Gt | BinaryOp::Ne if c == 0 => false,
        _ => return None,
    };
    if dst != cond || !matches!(k, Reg::W32(_)) {
        return None;
    }
    let mut nested = false;
    gpu::ir::walk(body, &mut |i| nested |= matches!(i, Inst::Loop { .. }));
    gpu::ir::walk(step, &mut |i| nested |= matches!(i, Inst::Loop { .. }));
    if nested {
        return None;
    }
    let mut defs_k = 0;
    gpu::ir::walk(body, &mut |i| defs_k += gpu::ir::reg_uses(i).0.iter().filter(|d| *d == k).count());
    // The step: copies of `k`, one of them stepped, assigned to `k` last.
    let (mut same, mut plus_one) = (HashSet::from([*k]), HashSet::new());
    let mut stepped = false;
    for i in step {
        let defs = gpu::ir::reg_uses(i).0;
        if defs.contains(k) {
            defs_k += 1;
        }
        for d in &defs {
            same.remove(d);
            plus_one.remove(d);
        }
        match i {
            Inst::Copy { dst, src } | Inst::Assign { dst, src } if dst == k => stepped = plus_one.contains(src),
            Inst::Copy { dst, src } | Inst::Assign { dst, src } if same.contains(src) => {
                same.insert(*dst);
            }
            Inst::Binary { op: bop, ty: Scalar::UInt, dst, a, b, .. } if dst != k => {
                let stepped_here = match (counts_up, bop) {
                    (true, BinaryOp::Add) => (same.contains(a) && konst(b) == Some(1)) || (same.contains(b) && konst(a) == Some(1)),
                    // (A shift by 32 or more is by its low five bits: only 1 to 31 shrink.)
                    (false, BinaryOp::Shr) => same.contains(a) && konst(b).is_some_and(|s| (1..32).contains(&(s & 31))),
                    (false, BinaryOp::Div) => same.contains(a) && konst(b).is_some_and(|d| d as u32 >= 2),
                    _ => false,
                };
                if stepped_here {
                    plus_one.insert(*dst);
                }
            }
            _ if defs.contains(k) => stepped = false,
            _ => {}
        }
    }
    let shape = if counts_up { Bounded::CountsUp { k: *k, limit: c, inclusive: *op == BinaryOp::Le } } else { Bounded::Halves };
    (stepped && defs_k == 1).then_some(shape)
}

/// The most trips of a loop [`loop_shape`] lets run without checks.
const SHORT_LOOP: u32 = 4096;

type Live = HashSet<Reg>;

/// Where `break`, `continue` and `return` go, as live sets (shared: each
/// construct inside passes them on).
#[derive(Clone, Default)]
struct Exits {
    brk: Option<Rc<Live>>,
    cont: Option<Rc<Live>>,
    ret: Option<Rc<Live>>,
}

/// Backward liveness over the structured IR (loops to a fixed point),
/// recording what is live just after every stop (a barrier or a SIMD-group
/// function).
struct Liveness {
    after_stop: HashMap<usize, Live>,
    /// Each loop's live-at-head set when last analysed (by the loop's
    /// address): the next analysis of it, in a later round of an
    /// enclosing loop, starts from there instead of from nothing. (Inputs
    /// only grow from round to round, and so does the answer; starting
    /// afresh took each nested loop at least twice per round of the one
    /// around it, 2^depth in all.)
    heads: HashMap<usize, Live>,
    /// Set elements copied or compared so far ([`MOST_ANALYSIS_WORK`]).
    work: u64,
}

impl Liveness {
    /// What is live before `block`, given what is live after it.
    fn block(&mut self, block: &[Inst], out: &Live, ex: &Exits) -> Live {
        let mut live = self.copy(out);
        // Nesting (blocks, inlined calls) is bounded only by the kernel's size.
        stacker::maybe_grow(crate::WALK_RED_ZONE, crate::WALK_STACK, || {
            for inst in block.iter().rev() {
                if self.work > MOST_ANALYSIS_WORK {
                    break; // (the caller refuses the kernel)
                }
                self.inst(inst, &mut live, ex);
            }
        });
        live
    }

    /// A copy of `set`, counted as work.
    fn copy(&mut self, set: &Live) -> Live {
        if self.work > MOST_ANALYSIS_WORK {
            return Live::new(); // (the caller refuses the kernel)
        }
        self.work += set.len() as u64 + 1;
        set.clone()
    }

    /// `live`, what is live after `inst`, becomes what is live before it.
    fn inst(&mut self, inst: &Inst, live: &mut Live, ex: &Exits) {
        match inst {
            Inst::If { cond, then, els, .. } => {
                let mut l = self.block(then, live, ex);
                let e = self.block(els, live, ex);
                self.work += e.len() as u64;
                l.extend(e);
                l.insert(*cond);
                *live = l;
            }
            Inst::Loop { cond_block, cond, body, step, check_first, .. } => {
                let out = Rc::new(std::mem::take(live));
                let key = inst as *const Inst as usize;
                let mut head = self.heads.get(&key).cloned().unwrap_or_default();
                loop {
                    let step_in = Rc::new(self.block(step, &head, ex));
                    let inner = Exits { brk: Some(out.clone()), cont: Some(step_in.clone()), ret: ex.ret.clone() };
                    let body_in = self.block(body, &step_in, &inner);
                    self.work += (body_in.len() + out.len() + head.len()) as u64;
                    let mut cond_out: Live = body_in.union(&out).copied().collect();
                    cond_out.extend(cond.iter().copied());
                    let cond_in = self.block(cond_block, &cond_out, &inner);
                    let grew = !cond_in.is_subset(&head);
                    head.extend(cond_in);
                    if !grew || self.work > MOST_ANALYSIS_WORK {
                        let live_in = if *check_first { head.clone() } else { body_in.union(&head).copied().collect() };
                        self.heads.insert(key, head);
                        *live = live_in;
                        return;
                    }
                }
            }
            Inst::Switch { value, cases, .. } => {
                let out = Rc::new(std::mem::take(live));
                let inner = Exits { brk: Some(out.clone()), ..ex.clone() };
                // (What is live at the next case's start: a case falls through.)
                let mut next: Option<Live> = None;
                let mut all = Live::new();
                for (_, _, body) in cases.iter().rev() {
                    let before = self.block(body, next.as_ref().unwrap_or(&out), &inner);
                    self.work += before.len() as u64;
                    all.extend(before.iter().copied());
                    next = Some(before);
                }
                if !cases.iter().any(|c| c.1) {
                    all.extend(out.iter().copied());
                }
                all.insert(*value);
                *live = all;
            }
            Inst::Scope { body } | Inst::Probing { body } => {
                let out = Rc::new(std::mem::take(live));
                let inner = Exits { brk: None, cont: None, ret: Some(out.clone()) };
                *live = self.block(body, &out, &inner);
            }
            Inst::Break | Inst::Continue | Inst::Return { .. } => {
                let to = match inst {
                    Inst::Break => &ex.brk,
                    Inst::Continue => &ex.cont,
                    _ => &ex.ret,
                };
                *live = to.as_deref().map(|l| self.copy(l)).unwrap_or_default();
            }
            _ => {
                if let Inst::Barrier { .. } | Inst::Lane { .. } = inst {
                    self.work += live.len() as u64;
                    self.after_stop.entry(inst as *const Inst as usize).or_default().extend(live.iter().copied());
                }
                let (defs, uses, _) = gpu::ir::reg_uses(inst);
                for d in defs {
                    live.remove(&d);
                }
                live.extend(uses);
            }
        }
    }
}

/// Most set elements the analyses before code generation may copy or
/// compare (their sets are per register, their walks per construct): past
/// it the kernel is refused and the interpreter runs it.
const MOST_ANALYSIS_WORK: u64 = 30_000_000;

/// Why a kernel past [`MOST_ANALYSIS_WORK`] is not compiled.
fn too_much_work() -> Unsupported {
    Unsupported("the kernel is too large to compile quickly: analysing its registers passed the compiler's budget".into())
}

/// The registers to keep across each barrier: those live just after it.
pub fn spills(body: &[Inst], fixed: &HashMap<Reg, Remake>) -> Result<Spills, Unsupported> {
    let mut lv = Liveness { after_stop: HashMap::new(), heads: HashMap::new(), work: 0 };
    lv.block(body, &Live::new(), &Exits::default());
    if lv.work > MOST_ANALYSIS_WORK {
        return Err(too_much_work());
    }
    let mut out = Spills { at: HashMap::new(), slot: HashMap::new(), remade: HashMap::new() };
    let mut barriers: Vec<(usize, Live)> = lv.after_stop.into_iter().collect();
    barriers.sort_by_key(|b| b.0);
    for (addr, live) in barriers {
        let mut regs: Vec<Reg> = live.into_iter().collect();
        regs.sort_by_key(|r| match r {
            Reg::W32(i) => (0, *i),
            Reg::W64(i) => (1, *i),
        });
        let remade: Vec<(Reg, Remake)> = regs.iter().filter_map(|r| fixed.get(r).map(|m| (*r, *m))).collect();
        regs.retain(|r| !fixed.contains_key(r));
        for r in &regs {
            let n = out.slot.len() as u32;
            out.slot.entry(*r).or_insert(n);
        }
        out.at.insert(addr, regs);
        out.remade.insert(addr, remade);
    }
    Ok(out)
}

/// Registers that hold one pointer for the whole kernel, with its
/// allocation id and offset: parameters' buffers, and pointers set once by
/// a constant (program-scope and threadgroup variables). Allocations that
/// share a table entry (`runtime::slot_of`) are left out.
pub fn static_pointers(k: &gpu::Kernel) -> HashMap<Reg, (u32, i64)> {
    use gpu::memory::{ptr_alloc, ptr_offset, AllocId, AllocKind};
    let mut defs: HashMap<Reg, usize> = HashMap::new();
    let mut consts: HashMap<Reg, u64> = HashMap::new();
    gpu::ir::walk(&k.body, &mut |i| {
        for d in gpu::ir::reg_uses(i).0 {
            *defs.entry(d).or_default() += 1;
        }
        if let Inst::Const { dst: dst @ Reg::W64(_), bits } = i {
            consts.insert(*dst, *bits);
        }
    });
    let mut out = HashMap::new();
    for (reg, id) in k.params.iter().filter_map(|p| p.kind.memory()) {
        if !defs.contains_key(&reg) {
            out.insert(reg, (id.0, 0));
        }
    }
    for (r, bits) in consts {
        let id = ptr_alloc(bits);
        if defs.get(&r) == Some(&1) && !matches!(id.kind(), AllocKind::Null | AllocKind::Invalid) {
            out.insert(r, (id.0, ptr_offset(bits)));
        }
    }
    // Every allocation the kernel can name, to find shared entries.
    let mut by_slot: HashMap<usize, HashSet<u32>> = HashMap::new();
    let mut all: Vec<u32> = out.values().map(|v| v.0).collect();
    all.extend((0..k.constants.len() as u32).map(|i| AllocId::constant(i).0));
    all.extend((0..k.threadgroup_vars.len() as u32).map(|i| AllocId::threadgroup(i).0));
    all.extend((0..k.private_vars.len() as u32).map(|i| AllocId::private(i).0));
    for id in all {
        by_slot.entry(crate::runtime::slot_of(id)).or_default().insert(id);
    }
    out.retain(|_, (id, _)| by_slot[&crate::runtime::slot_of(*id)].len() == 1);
    out
}

/// The sizes of allocations the kernel itself fixes (threadgroup, private
/// and program-scope variables), by allocation id.
pub fn fixed_sizes(k: &gpu::Kernel) -> HashMap<u32, u64> {
    use gpu::memory::AllocId;
    let mut out = HashMap::new();
    for (i, v) in k.threadgroup_vars.iter().enumerate() {
        out.insert(AllocId::threadgroup(i as u32).0, v.size as u64);
    }
    for (i, v) in k.private_vars.iter().enumerate() {
        out.insert(AllocId::private(i as u32).0, v.size as u64);
    }
    for (i, (_, bytes)) in k.constants.iter().enumerate() {
        out.insert(AllocId::constant(i as u32).0, bytes.len() as u64);
    }
    out
}

/// Registers that are written on every path before being read ("definitely
/// assigned"), or `None` for code no path reaches.
type Assigned = Option<HashSet<Reg>>;

/// A copy of `set` (its cost added to `work`).
fn copy_set(work: &mut u64, set: &HashSet<Reg>) -> Assigned {
    if *work > MOST_ANALYSIS_WORK {
        return None;
    }
    *work += set.len() as u64 + 1;
    Some(set.clone())
}

/// A copy of `a` (its cost added to `work`).
fn copy(work: &mut u64, a: &Assigned) -> Assigned {
    if *work > MOST_ANALYSIS_WORK {
        return None;
    }
    *work += a.as_ref().map_or(0, |s| s.len() as u64) + 1;
    a.clone()
}

/// What both `a` and `b` have assigned, made from `a` (its cost added to
/// `work`).
fn meet(work: &mut u64, a: Assigned, b: &Assigned) -> Assigned {
    if *work > MOST_ANALYSIS_WORK {
        return None; // (the caller refuses the kernel)
    }
    *work += a.as_ref().map_or(0, |s| s.len() as u64) + b.as_ref().map_or(0, |s| s.len() as u64) + 1;
    match (a, b) {
        (None, b) => b.clone(),
        (a, None) => a,
        (Some(mut a), Some(b)) => {
            a.retain(|r| b.contains(r));
            Some(a)
        }
    }
}

/// Where `break`, `continue` and `return` lead, with what is assigned there.
#[derive(Default)]
struct Jumps {
    brk: Vec<Assigned>,
    cont: Vec<Assigned>,
    ret: Vec<Assigned>,
}

/// The first register the kernel may read before any write to it on some
/// path, if there is one. Such a read sees whatever the register held (in
/// the interpreter, what the lane's register kept from earlier work): one
/// thread at a time cannot reproduce that, so those kernels are refused.
pub fn maybe_unassigned_read(body: &[Inst], preset: &[Reg]) -> Result<Option<Reg>, Unsupported> {
    // Registers written once, by an instruction of the kernel's top level
    // that is no construct (hoisted constants, most of a big kernel's
    // registers), are assigned from there to the end: a read in or before
    // that instruction is the only unassigned one. They are checked here
    // and left out of the sets, which every construct copies.
    let mut writes: HashMap<Reg, u32> = HashMap::new();
    gpu::ir::walk(body, &mut |i| {
        for d in gpu::ir::reg_uses(i).0 {
            *writes.entry(d).or_default() += 1;
        }
    });
    let mut written_at: HashMap<Reg, usize> = HashMap::new();
    for (at, inst) in body.iter().enumerate() {
        if !gpu::ir::is_control(inst) {
            for d in gpu::ir::reg_uses(inst).0 {
                if writes[&d] == 1 && !preset.contains(&d) {
                    written_at.insert(d, at);
                }
            }
        }
    }
    let mut found = None;
    for (at, inst) in body.iter().enumerate() {
        gpu::ir::walk(std::slice::from_ref(inst), &mut |i| {
            let early = gpu::ir::reg_uses(i).1.into_iter().find(|u| written_at.get(u).is_some_and(|&w| at <= w));
            found = found.or(early);
        });
    }
    if found.is_some() {
        return Ok(found);
    }
    let once: HashSet<Reg> = written_at.into_keys().collect();
    let start: Assigned = Some(preset.iter().copied().collect());
    let mut jumps = vec![Jumps::default()];
    let mut work = 0;
    assigned(body, start, &mut jumps, &mut found, &mut work, &once);
    if work > MOST_ANALYSIS_WORK {
        return Err(too_much_work());
    }
    Ok(found)
}

fn assigned(
    block: &[Inst],
    mut d: Assigned,
    jumps: &mut Vec<Jumps>,
    found: &mut Option<Reg>,
    work: &mut u64,
    once: &HashSet<Reg>,
) -> Assigned {
    // Nesting (blocks, inlined calls) is bounded only by the kernel's size.
    stacker::maybe_grow(crate::WALK_RED_ZONE, crate::WALK_STACK, || {
        for inst in block {
            if *work > MOST_ANALYSIS_WORK {
                return None; // (the caller refuses the kernel)
            }
            let Some(set) = &mut d else { return None };
            let (defs, uses, _) = gpu::ir::reg_uses(inst);
            // (A loop's condition is computed by its condition block.)
            if found.is_none() && !matches!(inst, Inst::Loop { .. }) {
                *found = uses.iter().find(|u| !set.contains(u) && !once.contains(u)).copied();
            }
            if !gpu::ir::is_control(inst) {
                set.extend(defs.into_iter().filter(|d| !once.contains(d)));
                continue;
            }
            let set = d.take().expect("reachable");
            d = match inst {
                Inst::If { then, els, .. } => {
                    let t = assigned(then, copy_set(work, &set), jumps, found, work, once);
                    let e = assigned(els, Some(set), jumps, found, work, once);
                    meet(work, t, &e)
                }
                Inst::Loop { cond_block, body, step, check_first, .. } => {
                    jumps.push(Jumps::default());
                    // (A back edge only adds writes: the head has what entry has.)
                    let Inst::Loop { cond, .. } = inst else { unreachable!() };
                    let cond_ready = |c: &Assigned, found: &mut Option<Reg>| {
                        if let (Some(r), Some(c), None) = (cond, c, &found) {
                            if !c.contains(r) && !once.contains(r) {
                                *found = Some(*r);
                            }
                        }
                    };
                    let (after_cond, body_end) = if *check_first {
                        let c = assigned(cond_block, copy_set(work, &set), jumps, found, work, once);
                        cond_ready(&c, found);
                        (copy(work, &c), assigned(body, c, jumps, found, work, once))
                    } else {
                        let b = assigned(body, copy_set(work, &set), jumps, found, work, once);
                        let j = jumps.last_mut().expect("loop");
                        let cont = j.cont.drain(..).fold(b, |a, c| meet(work, a, &c));
                        let s = assigned(step, cont, jumps, found, work, once);
                        let c = assigned(cond_block, s, jumps, found, work, once);
                        cond_ready(&c, found);
                        (meet(work, c, &Some(set)), None)
                    };
                    let j = jumps.last_mut().expect("loop");
                    let cont = j.cont.drain(..).fold(body_end, |a, c| meet(work, a, &c));
                    if *check_first {
                        assigned(step, cont, jumps, found, work, once);
                    }
                    let j = jumps.pop().expect("loop");
                    if let Some(outer) = jumps.last_mut() {
                        outer.ret.extend(j.ret);
                    }
                    j.brk.iter().fold(after_cond, |a, b| meet(work, a, b))
                }
                Inst::Switch { cases, .. } => {
                    jumps.push(Jumps::default());
                    let whole = Some(set);
                    let mut fall: Assigned = None;
                    for (_, _, body) in cases {
                        let entry = meet(work, fall, &whole);
                        fall = assigned(body, entry, jumps, found, work, once);
                    }
                    let j = jumps.pop().expect("switch");
                    let mut out = j.brk.iter().fold(fall, |a, b| meet(work, a, b));
                    if !cases.iter().any(|c| c.1) {
                        out = meet(work, out, &whole);
                    }
                    // `continue` inside a switch belongs to the loop around it.
                    if let Some(outer) = jumps.last_mut() {
                        outer.cont.extend(j.cont);
                        outer.ret.extend(j.ret);
                    }
                    out
                }
                Inst::Scope { body } | Inst::Probing { body } => {
                    jumps.push(Jumps::default());
                    let end = assigned(body, Some(set), jumps, found, work, once);
                    let j = jumps.pop().expect("scope");
                    j.ret.iter().fold(end, |a, b| meet(work, a, b))
                }
                Inst::Break => {
                    if let Some(j) = jumps.last_mut() {
                        j.brk.push(Some(set));
                    }
                    None
                }
                Inst::Continue => {
                    if let Some(j) = jumps.last_mut() {
                        j.cont.push(Some(set));
                    }
                    None
                }
                Inst::Return { .. } => {
                    // To the innermost scope: the loops and switches in between pass it on.
                    if let Some(j) = jumps.last_mut() {
                        j.ret.push(Some(set));
                    }
                    None
                }
                _ => unreachable!("not a construct"),
            };
        }
        d
    })
}

/// With checks on: the loads (by address) of threadgroup memory that need
/// no read record in the shadow, because no thread writes their allocation
/// in the barrier interval they run in. Only the check that the memory was
/// written in this threadgroup is left for them (a tiled kernel's inner
/// loop reads its tiles and writes nothing to them).
///
/// An interval here is a run of instructions of one block between two
/// `threadgroup_barrier`s of that block whose `mem_flags` (a constant)
/// name threadgroup memory — or, along the kernel's top level (inlined
/// calls included), its start or end — with no barrier nested in it.
/// Threads that stopped at the first barrier and stop at the second in
/// the same round (the compiled code checks that they all stop at one
/// barrier at the same loop trips) ran only instructions of that run in
/// between — as long as nothing in the run leaves it (a `break`,
/// `continue` or `return` to a place outside it: threads that all left it
/// the same way would stop together at another barrier, after other code).
/// So if the run stores (or does atomics or block copies) to no pointer
/// that may point into an allocation, nobody wrote it in the interval, and
/// a read of it can race with nothing.
pub fn read_only_loads(k: &gpu::Kernel) -> HashSet<usize> {
    let points_to = points_to(k);
    let may_point = |r: &Reg| -> Option<&HashSet<u32>> { points_to.get(r).and_then(|p| p.as_ref()) };
    // Registers set once, by a constant (barrier flags are).
    let mut defs: HashMap<Reg, usize> = HashMap::new();
    let mut consts: HashMap<Reg, u64> = HashMap::new();
    gpu::ir::walk(&k.body, &mut |i| {
        for d in gpu::ir::reg_uses(i).0 {
            *defs.entry(d).or_default() += 1;
        }
        if let Inst::Const { dst, bits } = i {
            consts.insert(*dst, *bits);
        }
    });
    let orders_threadgroup = |i: &Inst| match i {
        Inst::Barrier { simdgroup: false, flags, .. } => {
            defs.get(flags) == Some(&1) && consts.get(flags).is_some_and(|f| *f as u32 & gpu::sanitizer::MEM_THREADGROUP != 0)
        }
        _ => false,
    };
    let mut out = HashSet::new();
    // One run: the loads to keep, if it holds no barrier.
    let mut run = |insts: &[&Inst]| {
        if insts.iter().any(|i| escapes(std::slice::from_ref(*i), 0, 0, 0)) {
            return;
        }
        let mut barrier = false;
        let mut written: Option<HashSet<u32>> = Some(HashSet::new());
        let mut loads: Vec<(&Inst, Reg)> = Vec::new();
        for &i in insts {
            gpu::ir::walk(std::slice::from_ref(i), &mut |j| match j {
                Inst::Barrier { .. } => barrier = true,
                Inst::Store { ptr, .. } | Inst::Atomic { ptr, .. } | Inst::MemCopy { dst: ptr, .. } => {
                    match (written.as_mut(), may_point(ptr)) {
                        (Some(w), Some(p)) if !p.is_empty() => w.extend(p),
                        _ => written = None,
                    }
                }
                Inst::Load { ptr, .. } => loads.push((j, *ptr)),
                _ => {}
            });
        }
        let (false, Some(written)) = (barrier, written) else { return };
        for (l, ptr) in loads {
            if may_point(&ptr).is_some_and(|p| !p.is_empty() && p.iter().all(|id| !written.contains(id))) {
                out.insert(l as *const Inst as usize);
            }
        }
    };
    // The top level, inlined calls flattened: its start and end delimit runs too.
    fn spine<'a>(block: &'a [Inst], out: &mut Vec<&'a Inst>) {
        for i in block {
            match i {
                Inst::Scope { body } => spine(body, out),
                _ => out.push(i),
            }
        }
    }
    let mut top = Vec::new();
    spine(&k.body, &mut top);
    let mut runs_of = |items: &[&Inst], ends_delimit: bool| {
        let cuts: Vec<usize> = items.iter().enumerate().filter(|(_, i)| orders_threadgroup(i)).map(|(n, _)| n).collect();
        let mut bounds: Vec<(usize, usize)> = cuts.windows(2).map(|w| (w[0] + 1, w[1])).collect();
        if ends_delimit {
            match (cuts.first(), cuts.last()) {
                (Some(&f), Some(&l)) => {
                    bounds.push((0, f));
                    bounds.push((l + 1, items.len()));
                }
                _ => bounds.push((0, items.len())),
            }
        }
        for (a, b) in bounds {
            run(&items[a..b]);
        }
    };
    runs_of(&top, true);
    // Every other block (loop bodies, branches, cases), between its own barriers.
    let mut blocks: Vec<&[Inst]> = Vec::new();
    gpu::ir::walk(&k.body, &mut |i| match i {
        Inst::If { then, els, .. } => blocks.extend([&then[..], &els[..]]),
        Inst::Loop { cond_block, body, step, .. } => blocks.extend([&cond_block[..], &body[..], &step[..]]),
        Inst::Switch { cases, .. } => blocks.extend(cases.iter().map(|c| &c.2[..])),
        _ => {}
    });
    for b in blocks {
        let items: Vec<&Inst> = b.iter().collect();
        runs_of(&items, false);
    }
    out
}

/// The bound buffers (their `[[buffer(n)]]` indices) the kernel may write
/// through a store, a non-load atomic or a block copy: every worker makes
/// its own copy of them before running compiled code, so the code's stores
/// never wait on a copy (nor see a table entry go stale behind a helper).
pub fn written_buffers(k: &gpu::Kernel) -> Vec<u32> {
    use gpu::memory::{AllocId, AllocKind};
    let points_to = points_to(k);
    let all: Vec<u32> = k.params.iter().filter_map(|p| p.kind.memory()).map(|(_, id)| id.0).collect();
    let mark = |ptr: &Reg, ids: &mut HashSet<u32>| match points_to.get(ptr).and_then(|p| p.as_ref()) {
        Some(p) => ids.extend(p),
        None => ids.extend(&all),
    };
    let mut ids: HashSet<u32> = HashSet::new();
    gpu::ir::walk(&k.body, &mut |i| {
        let ptr = match i {
            Inst::Store { ptr, .. } | Inst::MemCopy { dst: ptr, .. } => ptr,
            Inst::Atomic { op, ptr, a, .. } if *op != gpu::ir::AtomicOp::Load => {
                // (A compare-exchange writes the value it found to `*a`.)
                if *op == gpu::ir::AtomicOp::CompareExchange {
                    mark(a, &mut ids);
                }
                ptr
            }
            _ => return,
        };
        mark(ptr, &mut ids);
    });
    let mut out: Vec<u32> = ids
        .into_iter()
        .filter_map(|id| match AllocId(id).kind() {
            AllocKind::Buffer(n) => Some(n),
            _ => None,
        })
        .collect();
    out.sort_unstable();
    out
}

/// Device buffers (allocation ids) the compiled code with checks on need
/// not watch for races, because no two threads can touch one of their
/// shadow cells with one of them writing plainly:
/// - every access to the buffer is a (native) atomic: atomics do not race
///   with each other;
/// - or, for a grid whose y and z are 1 (so threads have distinct
///   `thread_position_in_grid.x`), every access is `buffer[x]` itself: one
///   element per thread, the element a whole number of cells.
///
/// Device buffers hold no unwritten bytes the compiled code tracks (an
/// output declared uninitialized runs interpreted), so races are all their
/// shadow is for. Nothing is proven if some access's pointer could point
/// anywhere.
#[derive(Debug, Default)]
pub struct RaceFree {
    /// Buffers only ever touched atomically.
    pub atomic: HashSet<u32>,
    /// Buffers only ever accessed as `buffer[thread_position_in_grid.x]`,
    /// elements of one size (race-free for a one-row grid only).
    pub own_element: HashSet<u32>,
    /// Of those, the ones only ever stored to, with their elements' size.
    pub outputs: HashMap<u32, i64>,
}

impl RaceFree {
    /// The buffers free of races on a one-row grid (`grid_1d`) or any grid.
    pub fn on(&self, grid_1d: bool) -> HashSet<u32> {
        let mut all = self.atomic.clone();
        if grid_1d {
            all.extend(&self.own_element);
        }
        all
    }
}

/// The kernel's race-free device buffers ([`RaceFree`]).
pub fn race_free_buffers(k: &gpu::Kernel) -> RaceFree {
    use gpu::memory::{AllocId, AllocKind};
    let points_to = points_to(k);
    let statics = static_pointers(k);
    let mut defs: HashMap<Reg, Vec<&Inst>> = HashMap::new();
    gpu::ir::walk(&k.body, &mut |i| {
        for d in gpu::ir::reg_uses(i).0 {
            defs.entry(d).or_default().push(i);
        }
    });
    let once = |r: &Reg| -> Option<&Inst> {
        match defs.get(r).map(Vec::as_slice) {
            Some([i]) => Some(*i),
            _ => None,
        }
    };
    // The buffer element `x` of thread `x` when `ptr` is `&buffer[x]` with
    // `scale`-byte elements: (buffer id, scale).
    let own_element = |ptr: &Reg| -> Option<(u32, i64)> {
        let Some(Inst::PtrIndex { ptr: base, index, scale, .. }) = once(ptr) else { return None };
        let &(id, 0) = statics.get(base)? else { return None };
        match once(index)? {
            Inst::Attr { attr: msl::hir::ThreadAttr::ThreadPositionInGrid, component: 0, .. } => Some((id, *scale)),
            _ => None,
        }
    };
    // Per buffer: whether every access so far is atomic, and is thread x's
    // element (of the one size seen: thread x's 8-byte element overlaps
    // thread 2x's 4-byte one), and is a store.
    let mut all_atomic: HashMap<u32, bool> = HashMap::new();
    let mut all_own: HashMap<u32, bool> = HashMap::new();
    let mut sizes: HashMap<u32, i64> = HashMap::new();
    let mut all_stores: HashMap<u32, bool> = HashMap::new();
    let mut unknown = false;
    gpu::ir::walk(&k.body, &mut |i| {
        let store = matches!(i, Inst::Store { .. });
        let (ptrs, size, atomic): (Vec<&Reg>, i64, bool) = match i {
            Inst::Load { ptr, ty, .. } | Inst::Store { ptr, ty, .. } => (vec![ptr], ty.size() as i64, false),
            Inst::Atomic { ptr, ty, op, a, .. } => {
                let mut v = vec![ptr];
                if *op == gpu::ir::AtomicOp::CompareExchange {
                    v.push(a);
                }
                (v, ty.size() as i64, *op != gpu::ir::AtomicOp::CompareExchange)
            }
            Inst::MemCopy { dst, src, .. } => (vec![dst, src], 0, false),
            _ => return,
        };
        for ptr in ptrs {
            let Some(Some(ids)) = points_to.get(ptr) else {
                unknown = true;
                return;
            };
            let own = own_element(ptr);
            for &id in ids {
                *all_atomic.entry(id).or_insert(true) &= atomic;
                let cell = gpu::conflicts::cell_shift(k, AllocId(id)).map(|s| 1i64 << s);
                let mine = matches!((own, cell), (Some((o, scale)), Some(c)) if o == id && scale == size && size > 0 && size % c == 0);
                let one_size = *sizes.entry(id).or_insert(size) == size;
                *all_own.entry(id).or_insert(true) &= mine && one_size;
                *all_stores.entry(id).or_insert(true) &= store;
            }
        }
    });
    if unknown {
        return RaceFree::default();
    }
    let buffers = |set: &HashMap<u32, bool>| -> HashSet<u32> {
        set.iter().filter(|&(&id, &all)| all && matches!(AllocId(id).kind(), AllocKind::Buffer(_))).map(|(&id, _)| id).collect()
    };
    let own_element = buffers(&all_own);
    let outputs = own_element.iter().filter(|id| all_stores.get(id) == Some(&true)).map(|&id| (id, sizes[&id])).collect();
    RaceFree { atomic: buffers(&all_atomic), own_element, outputs }
}

/// The kernel's loops (numbered in the order `loops` lists them, by
/// instruction address) and a bound on the interpreter's instruction count
/// for a threadgroup from each loop's most trips in one entry, `M(L)`.
///
/// The interpreter runs a threadgroup in lockstep and spends one
/// instruction per instruction executed (whatever lanes are active) and
/// one per loop trip. In lockstep all threads at one loop trip run it
/// together, so an instruction runs at most once per combination of trips
/// of the loops around it: `Π (M(L) + 1)` (the `+ 1`: a loop's condition
/// is tested once more than it has trips). `terms` lists, per chain of
/// enclosing loops (outermost first), the instructions spent per
/// combination.
#[derive(Debug, Default)]
pub struct LockstepBound {
    pub loops: HashMap<usize, usize>,
    pub terms: Vec<(u64, Vec<usize>)>,
}

impl LockstepBound {
    pub fn new(body: &[Inst]) -> LockstepBound {
        fn walk(block: &[Inst], chain: &mut Vec<usize>, b: &mut LockstepBound, terms: &mut HashMap<Vec<usize>, u64>) {
            stacker::maybe_grow(crate::WALK_RED_ZONE, crate::WALK_STACK, || {
                *terms.entry(chain.clone()).or_default() += block.len() as u64;
                for inst in block {
                    match inst {
                        Inst::If { then, els, .. } => {
                            walk(then, chain, b, terms);
                            walk(els, chain, b, terms);
                        }
                        Inst::Loop { cond_block, body, step, .. } => {
                            let id = b.loops.len();
                            b.loops.insert(inst as *const Inst as usize, id);
                            chain.push(id);
                            // The trip itself.
                            *terms.entry(chain.clone()).or_default() += 1;
                            walk(cond_block, chain, b, terms);
                            walk(body, chain, b, terms);
                            walk(step, chain, b, terms);
                            chain.pop();
                        }
                        Inst::Switch { cases, .. } => cases.iter().for_each(|c| walk(&c.2, chain, b, terms)),
                        Inst::Scope { body } | Inst::Probing { body } => walk(body, chain, b, terms),
                        _ => {}
                    }
                }
            })
        }
        let mut b = LockstepBound::default();
        let mut terms = HashMap::new();
        walk(body, &mut Vec::new(), &mut b, &mut terms);
        b.terms = terms.into_iter().map(|(chain, n)| (n, chain)).collect();
        b.terms.sort();
        b
    }

    /// The bound whatever the values, when every loop of `body` (the body
    /// this was made from) ends after a few trips ([`loop_shape`]): its
    /// most trips then need not be recorded while the code runs.
    pub fn static_bound(&self, body: &[Inst], fixed: &HashMap<Reg, Remake>) -> Option<u64> {
        let mut most = vec![0u64; self.loops.len()];
        let mut all = true;
        gpu::ir::walk(body, &mut |i| {
            if let (Inst::Loop { .. }, Some(&id)) = (i, self.loops.get(&(i as *const Inst as usize))) {
                // (Two more than the test allows: a `do`-`while` runs once
                // before its first test, and a counter may wrap to 0 there.)
                match loop_shape(i, fixed) {
                    Some(Bounded::CountsUp { limit, inclusive, .. }) => most[id] = limit + inclusive as u64 + 2,
                    Some(Bounded::Halves) => most[id] = 34,
                    None => all = false,
                }
            }
        });
        all.then(|| self.bound(&most))
    }

    /// The bound for the loops' most trips `most` (indexed by loop number),
    /// saturating.
    pub fn bound(&self, most: &[u64]) -> u64 {
        self.terms.iter().fold(0u64, |sum, (n, chain)| {
            let combos = chain.iter().fold(1u64, |p, &l| p.saturating_mul(most.get(l).copied().unwrap_or(u64::MAX).saturating_add(1)));
            sum.saturating_add(n.saturating_mul(combos))
        })
    }
}

/// Whether `block` (inside `loops` loops, `switches` switches and `scopes`
/// inlined calls of the run being looked at) holds a `break`, `continue`
/// or `return` that leaves the run.
fn escapes(block: &[Inst], loops: usize, switches: usize, scopes: usize) -> bool {
    stacker::maybe_grow(crate::WALK_RED_ZONE, crate::WALK_STACK, || {
        block.iter().any(|i| match i {
            Inst::Break => loops + switches == 0,
            Inst::Continue => loops == 0,
            Inst::Return { .. } => scopes == 0,
            Inst::If { then, els, .. } => escapes(then, loops, switches, scopes) || escapes(els, loops, switches, scopes),
            Inst::Loop { cond_block, body, step, .. } => [cond_block, body, step].iter().any(|b| escapes(b, loops + 1, switches, scopes)),
            Inst::Switch { cases, .. } => cases.iter().any(|c| escapes(&c.2, loops, switches + 1, scopes)),
            Inst::Scope { body } | Inst::Probing { body } => escapes(body, loops, switches, scopes + 1),
            _ => false,
        })
    })
}

/// The allocations each 64-bit register may point into (`None`: any —
/// it is set by something other than a constant, a parameter, pointer
/// arithmetic or a copy), flow-insensitively.
fn points_to(k: &gpu::Kernel) -> HashMap<Reg, Option<HashSet<u32>>> {
    use gpu::memory::ptr_alloc;
    let mut map: HashMap<Reg, Option<HashSet<u32>>> = HashMap::new();
    for (reg, id) in k.params.iter().filter_map(|p| p.kind.memory()) {
        map.insert(reg, Some(HashSet::from([id.0])));
    }
    let mut insts: Vec<&Inst> = Vec::new();
    gpu::ir::walk(&k.body, &mut |i| insts.push(i));
    loop {
        let mut changed = false;
        for i in &insts {
            let (defs, _, _) = gpu::ir::reg_uses(i);
            for d in defs.into_iter().filter(|d| matches!(d, Reg::W64(_))) {
                let from: Option<HashSet<u32>> = match i {
                    Inst::Const { bits, .. } => Some(HashSet::from([ptr_alloc(*bits).0])),
                    Inst::PtrIndex { ptr, .. } | Inst::PtrAdd { ptr, .. } | Inst::Copy { src: ptr, .. } | Inst::Assign { src: ptr, .. } => {
                        match map.get(ptr) {
                            Some(p) => p.clone(),
                            None => Some(HashSet::new()), // not set yet (this round)
                        }
                    }
                    _ => None,
                };
                let entry = map.entry(d).or_insert_with(|| Some(HashSet::new()));
                let before = entry.as_ref().map(HashSet::len);
                match (entry.as_mut(), from) {
                    (Some(e), Some(f)) => e.extend(f),
                    (Some(_), None) => *entry = None,
                    (None, _) => {}
                }
                changed |= entry.as_ref().map(HashSet::len) != before;
            }
        }
        if !changed {
            return map;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether [`loop_shape`] accepts each loop of kernel `body` (outermost first).
    fn bounded(body: &str) -> Vec<bool> {
        let src = format!(
            "#include <metal_stdlib>\nusing namespace metal;\n\
             kernel void k(device uint* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {{ uint acc = i; {body} out[i] = acc; }}\n"
        );
        let c = msl::compile("k.metal", &src, &Default::default());
        let p = c.program.as_ref().expect("compiles");
        let (id, _) = p.kernels().next().expect("a kernel");
        let k = gpu::lower::lower_kernel(p, id).expect("lowers");
        let fixed = fixed_registers(&k.body, &preset_registers(&k));
        let mut out = Vec::new();
        gpu::ir::walk(&k.body, &mut |i| {
            if matches!(i, Inst::Loop { .. }) {
                out.push(loop_shape(i, &fixed).is_some());
            }
        });
        out
    }

    fn r(n: u32) -> Reg {
        Reg::W32(n)
    }

    fn konst(n: u32) -> Inst {
        Inst::Const { dst: r(n), bits: n as u64 }
    }

    fn copy(dst: u32, src: u32) -> Inst {
        Inst::Copy { dst: r(dst), src: r(src) }
    }

    /// [`maybe_unassigned_read`] of `body` after 100 constants the top
    /// level writes once (registers 100..200), register 0 preset.
    fn unassigned(body: Vec<Inst>) -> Option<Reg> {
        let mut all: Vec<Inst> = (100..200).map(konst).collect();
        all.extend(body);
        maybe_unassigned_read(&all, &[r(0)]).expect("within budget")
    }

    #[test]
    fn reads_before_writes_are_found_with_hoisted_constants_left_out() {
        let branch = |then: Vec<Inst>, els: Vec<Inst>| Inst::If { cond: r(0), then, els, at: 0 };
        // Written on one path, then read; on both.
        assert_eq!(unassigned(vec![branch(vec![copy(1, 100)], vec![]), copy(2, 1)]), Some(r(1)));
        assert_eq!(unassigned(vec![branch(vec![copy(1, 100)], vec![copy(1, 101)]), copy(2, 1)]), None);
        // A top-level constant read before the top level writes it: in
        // a branch, in the writing instruction itself.
        assert_eq!(maybe_unassigned_read(&[branch(vec![copy(1, 5)], vec![]), konst(5)], &[r(0)]).unwrap(), Some(r(5)));
        assert_eq!(maybe_unassigned_read(&[Inst::Copy { dst: r(5), src: r(5) }], &[]).unwrap(), Some(r(5)));
        // Cases that break without writing; every case writing.
        let switch = |last: Vec<Inst>| Inst::Switch {
            value: r(0),
            ty: Scalar::UInt,
            cases: vec![(vec![0], false, vec![copy(1, 100), Inst::Break]), (vec![1], true, [last, vec![Inst::Break]].concat())],
        };
        assert_eq!(unassigned(vec![switch(vec![]), copy(2, 1)]), Some(r(1)));
        assert_eq!(unassigned(vec![switch(vec![copy(1, 102)]), copy(2, 1)]), None);
        // A loop that may not run; `while (true)` on a hoisted constant
        // (the condition a register the top level wrote once).
        let body = vec![copy(1, 103)];
        let maybe = Inst::Loop { cond_block: vec![copy(3, 0)], cond: Some(r(3)), body, step: vec![], check_first: true, at: 0 };
        assert_eq!(unassigned(vec![maybe, copy(2, 1)]), Some(r(1)));
        let forever = Inst::Loop {
            cond_block: vec![],
            cond: Some(r(100)),
            body: vec![copy(1, 104), branch(vec![Inst::Break], vec![])],
            step: vec![],
            check_first: true,
            at: 0,
        };
        assert_eq!(unassigned(vec![copy(1, 105), forever, copy(2, 1)]), None);
    }

    #[test]
    fn short_counted_loops_are_bounded() {
        assert_eq!(bounded("for (uint k = 0; k < 16u; k++) acc += k;"), [true]);
        assert_eq!(bounded("for (uint k = 3; k <= 9u; ++k) { if (acc == k) break; acc += k; }"), [true]);
        assert_eq!(bounded("for (uint k = 0; k < 4096u; k++) acc += k;"), [true]);
        assert_eq!(bounded("for (uint s = i; s > 0u; s >>= 1) acc += s;"), [true]);
        assert_eq!(bounded("for (uint s = i; s != 0u; s /= 3u) acc += s;"), [true]);
    }

    #[test]
    fn other_loops_are_not() {
        // The body changes the counter; too many trips; a signed counter
        // (it may start far below the limit); a limit that is not a
        // constant; a loop holding another.
        assert_eq!(bounded("for (uint k = 0; k < 16u; k++) { k += acc & 1u; acc += k; }"), [false]);
        assert_eq!(bounded("for (uint k = 0; k < 4097u; k++) acc += k;"), [false]);
        assert_eq!(bounded("for (uint k = 0; k <= 0xffffffffu; k++) acc += k;"), [false]);
        assert_eq!(bounded("for (int k = 0; k < 16; k++) acc += uint(k);"), [false]);
        assert_eq!(bounded("for (uint k = 0; k < i; k++) acc += k;"), [false]);
        assert_eq!(bounded("for (uint k = 0; k < 4u; k++) for (uint j = 0; j < 4u; j++) acc += j;"), [false, true]);
        assert_eq!(bounded("while (acc < 100u) acc += 1u;"), [false]);
        assert_eq!(bounded("for (uint s = i; s > 0u; s <<= 1) acc += s;"), [false]);
        assert_eq!(bounded("for (uint s = i; s > 0u; s >>= 0u) acc += s;"), [false]);
        assert_eq!(bounded("for (uint s = i; s > 0u; s /= 1u) acc += s;"), [false]);
        assert_eq!(bounded("for (uint s = i; s > 1u; s >>= 1) acc += s;"), [false]);
        assert_eq!(bounded("for (uint s = i; s > 0u; s >>= 1) { s |= acc & 4u; acc += s; }"), [false]);
    }
}
