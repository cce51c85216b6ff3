//! What the code generator needs to know about a kernel before compiling
//! it: whether it can be run one thread at a time at all, which registers
//! live across each barrier, and whether every thread takes the same path.

use gpu::ir::{AtomicOp, Inst, Reg};
use msl::ast::AddressSpace;
use msl::types::Scalar;
use std::collections::{HashMap, HashSet};

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
/// Threads of a SIMD-group that talk to each other (SIMD-group functions,
/// `simdgroup_barrier`) need lockstep. Atomics are applied in another
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
            Inst::Lane { .. } | Inst::Matrix { .. } => Some("SIMD-group functions"),
            Inst::Barrier { simdgroup: true, .. } => Some("simdgroup_barrier"),
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

/// The most loops around any `threadgroup_barrier` of `body`.
pub fn barrier_loop_depth(body: &[Inst]) -> usize {
    let mut depth = 0;
    walk_depth(body, 0, &mut |i, loops| {
        if matches!(i, Inst::Barrier { .. }) {
            depth = depth.max(loops);
        }
    });
    depth
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

type Live = HashSet<Reg>;

/// Where `break`, `continue` and `return` go, as live sets.
#[derive(Clone, Default)]
struct Exits {
    brk: Option<Live>,
    cont: Option<Live>,
    ret: Option<Live>,
}

/// Backward liveness over the structured IR (loops to a fixed point),
/// recording what is live just after every barrier.
struct Liveness {
    after_barrier: HashMap<usize, Live>,
}

impl Liveness {
    fn block(&mut self, block: &[Inst], out: &Live, ex: &Exits) -> Live {
        // Nesting (blocks, inlined calls) is bounded only by the kernel's size.
        stacker::maybe_grow(crate::WALK_RED_ZONE, crate::WALK_STACK, || {
            let mut live = out.clone();
            for inst in block.iter().rev() {
                live = self.inst(inst, &live, ex);
            }
            live
        })
    }

    fn inst(&mut self, inst: &Inst, out: &Live, ex: &Exits) -> Live {
        match inst {
            Inst::If { cond, then, els, .. } => {
                let mut l = self.block(then, out, ex);
                l.extend(self.block(els, out, ex));
                l.insert(*cond);
                l
            }
            Inst::Loop { cond_block, cond, body, step, check_first, .. } => {
                let mut head: Live = Live::new();
                loop {
                    let step_in = self.block(step, &head, ex);
                    let inner = Exits { brk: Some(out.clone()), cont: Some(step_in.clone()), ret: ex.ret.clone() };
                    let body_in = self.block(body, &step_in, &inner);
                    let mut cond_out: Live = body_in.union(out).copied().collect();
                    cond_out.extend(cond.iter().copied());
                    let cond_in = self.block(cond_block, &cond_out, &inner);
                    let grew = !cond_in.is_subset(&head);
                    head.extend(cond_in);
                    if !grew {
                        return if *check_first { head } else { body_in.union(&head).copied().collect() };
                    }
                }
            }
            Inst::Switch { value, cases, .. } => {
                let inner = Exits { brk: Some(out.clone()), ..ex.clone() };
                let mut next = out.clone();
                let mut all = Live::new();
                for (_, _, body) in cases.iter().rev() {
                    next = self.block(body, &next, &inner);
                    all.extend(next.iter().copied());
                }
                if !cases.iter().any(|c| c.1) {
                    all.extend(out.iter().copied());
                }
                all.insert(*value);
                all
            }
            Inst::Scope { body } | Inst::Probing { body } => {
                let inner = Exits { brk: None, cont: None, ret: Some(out.clone()) };
                self.block(body, out, &inner)
            }
            Inst::Break => ex.brk.clone().unwrap_or_default(),
            Inst::Continue => ex.cont.clone().unwrap_or_default(),
            Inst::Return { .. } => ex.ret.clone().unwrap_or_default(),
            _ => {
                if let Inst::Barrier { .. } = inst {
                    self.after_barrier.entry(inst as *const Inst as usize).or_default().extend(out.iter().copied());
                }
                let (defs, uses, _) = gpu::ir::reg_uses(inst);
                let mut l = out.clone();
                for d in defs {
                    l.remove(&d);
                }
                l.extend(uses);
                l
            }
        }
    }
}

/// The registers to keep across each barrier: those live just after it.
pub fn spills(body: &[Inst], fixed: &HashMap<Reg, Remake>) -> Spills {
    let mut lv = Liveness { after_barrier: HashMap::new() };
    lv.block(body, &Live::new(), &Exits::default());
    let mut out = Spills { at: HashMap::new(), slot: HashMap::new(), remade: HashMap::new() };
    let mut barriers: Vec<(usize, Live)> = lv.after_barrier.into_iter().collect();
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
    out
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
    for p in &k.params {
        let (reg, id) = match &p.kind {
            gpu::ir::ParamKind::Buffer { index, reg, .. } => (*reg, AllocId::buffer(*index)),
            gpu::ir::ParamKind::ThreadgroupBuffer { index, reg, .. } => (*reg, AllocId::tg_buffer(*index)),
            gpu::ir::ParamKind::Attr { .. } => continue,
        };
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

fn meet(a: &Assigned, b: &Assigned) -> Assigned {
    match (a, b) {
        (None, x) | (x, None) => x.clone(),
        (Some(a), Some(b)) => Some(a.intersection(b).copied().collect()),
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
pub fn maybe_unassigned_read(body: &[Inst], preset: &[Reg]) -> Option<Reg> {
    let mut found = None;
    let start: Assigned = Some(preset.iter().copied().collect());
    let mut jumps = vec![Jumps::default()];
    assigned(body, start, &mut jumps, &mut found);
    found
}

fn assigned(block: &[Inst], mut d: Assigned, jumps: &mut Vec<Jumps>, found: &mut Option<Reg>) -> Assigned {
    // Nesting (blocks, inlined calls) is bounded only by the kernel's size.
    stacker::maybe_grow(crate::WALK_RED_ZONE, crate::WALK_STACK, || {
        for inst in block {
            let Some(set) = &d else { return None };
            let (defs, uses, _) = gpu::ir::reg_uses(inst);
            // (A loop's condition is computed by its condition block.)
            if found.is_none() && !matches!(inst, Inst::Loop { .. }) {
                *found = uses.iter().find(|u| !set.contains(u)).copied();
            }
            let set = set.clone();
            d = match inst {
                Inst::If { then, els, .. } => {
                    let t = assigned(then, Some(set.clone()), jumps, found);
                    let e = assigned(els, Some(set), jumps, found);
                    meet(&t, &e)
                }
                Inst::Loop { cond_block, body, step, check_first, .. } => {
                    jumps.push(Jumps::default());
                    // (A back edge only adds writes: the head has what entry has.)
                    let Inst::Loop { cond, .. } = inst else { unreachable!() };
                    let cond_ready = |c: &Assigned, found: &mut Option<Reg>| {
                        if let (Some(r), Some(c), None) = (cond, c, &found) {
                            if !c.contains(r) {
                                *found = Some(*r);
                            }
                        }
                    };
                    let (after_cond, body_end) = if *check_first {
                        let c = assigned(cond_block, Some(set.clone()), jumps, found);
                        cond_ready(&c, found);
                        (c.clone(), assigned(body, c, jumps, found))
                    } else {
                        let b = assigned(body, Some(set.clone()), jumps, found);
                        let j = jumps.last_mut().expect("loop");
                        let cont = j.cont.drain(..).fold(b, |a, c| meet(&a, &c));
                        let s = assigned(step, cont, jumps, found);
                        let c = assigned(cond_block, s.clone(), jumps, found);
                        cond_ready(&c, found);
                        (meet(&c, &Some(set.clone())), None)
                    };
                    let j = jumps.last_mut().expect("loop");
                    let cont = j.cont.drain(..).fold(body_end, |a, c| meet(&a, &c));
                    if *check_first {
                        assigned(step, cont, jumps, found);
                    }
                    let j = jumps.pop().expect("loop");
                    if let Some(outer) = jumps.last_mut() {
                        outer.ret.extend(j.ret);
                    }
                    j.brk.iter().fold(after_cond, |a, b| meet(&a, b))
                }
                Inst::Switch { cases, .. } => {
                    jumps.push(Jumps::default());
                    let mut fall: Assigned = None;
                    for (_, _, body) in cases {
                        let entry = meet(&fall, &Some(set.clone()));
                        fall = assigned(body, entry, jumps, found);
                    }
                    let j = jumps.pop().expect("switch");
                    let mut out = j.brk.iter().fold(fall, |a, b| meet(&a, b));
                    if !cases.iter().any(|c| c.1) {
                        out = meet(&out, &Some(set));
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
                    let end = assigned(body, Some(set), jumps, found);
                    let j = jumps.pop().expect("scope");
                    j.ret.iter().fold(end, |a, b| meet(&a, b))
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
                _ => {
                    let mut set = set;
                    set.extend(defs);
                    Some(set)
                }
            };
        }
        d
    })
}
