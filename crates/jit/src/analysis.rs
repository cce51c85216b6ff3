//! What the code generator needs to know about a kernel before compiling
//! it: whether it can be run one thread at a time at all, which registers
//! live across each barrier, and whether every thread takes the same path.

use gpu::ir::{AtomicOp, Inst, Reg};
use msl::ast::AddressSpace;
use msl::hir::ThreadAttr;
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
                let commutes = matches!(op, AtomicOp::Add | AtomicOp::Sub | AtomicOp::And | AtomicOp::Or | AtomicOp::Xor | AtomicOp::Min | AtomicOp::Max)
                    && !ty.is_float();
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

/// `f(inst, enclosing loops)` for every instruction, outermost first.
fn walk_depth<'a>(block: &'a [Inst], loops: usize, f: &mut dyn FnMut(&'a Inst, usize)) {
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
}

/// Attributes with one value for the whole threadgroup.
pub fn uniform_attr(a: ThreadAttr) -> bool {
    use ThreadAttr::*;
    matches!(
        a,
        ThreadgroupPositionInGrid
            | ThreadsPerThreadgroup
            | DispatchThreadsPerThreadgroup
            | ThreadsPerGrid
            | GridSize
            | ThreadgroupsPerGrid
            | GridOrigin
            | SimdgroupsPerThreadgroup
            | DispatchSimdgroupsPerThreadgroup
            | QuadgroupsPerThreadgroup
            | DispatchQuadgroupsPerThreadgroup
            | ThreadExecutionWidth
            | ThreadsPerSimdgroup
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
            Inst::Attr { attr, .. } => !uniform_attr(*attr),
            Inst::Load { space, .. } => *space != AddressSpace::Constant || any_varying,
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
            | Inst::PtrDiff { .. } => any_varying,
            _ => true,
        };
        if divergent || produces_varying {
            varying.extend(defs);
        }
    }
}

/// Registers live across each barrier, by the barrier's address, and one
/// spill slot per register that is live across any.
pub struct Spills {
    pub at: HashMap<usize, Vec<Reg>>,
    pub slot: HashMap<Reg, u32>,
}

/// A register is kept across a barrier when it may be defined before it
/// (in program order, or anywhere in a loop around it) and used after it
/// (likewise) — a superset of the registers truly live there.
pub fn spills(body: &[Inst], preset: &[Reg]) -> Spills {
    #[derive(Default)]
    struct Walk {
        pos: usize,
        defs: HashMap<Reg, Vec<usize>>,
        uses: HashMap<Reg, Vec<usize>>,
        /// (barrier address, position, outermost enclosing loop's span).
        barriers: Vec<(usize, usize, Option<(usize, usize)>)>,
    }
    fn go(w: &mut Walk, block: &[Inst], outer_loop: Option<usize>) {
        for inst in block {
            let p = w.pos;
            w.pos += 1;
            let (d, u, _) = gpu::ir::reg_uses(inst);
            d.into_iter().for_each(|r| w.defs.entry(r).or_default().push(p));
            u.into_iter().for_each(|r| w.uses.entry(r).or_default().push(p));
            match inst {
                Inst::If { then, els, .. } => {
                    go(w, then, outer_loop);
                    go(w, els, outer_loop);
                }
                Inst::Loop { cond_block, body, step, .. } => {
                    let start = outer_loop.unwrap_or(p);
                    let first = w.barriers.len();
                    go(w, cond_block, Some(start));
                    go(w, body, Some(start));
                    go(w, step, Some(start));
                    if outer_loop.is_none() {
                        let end = w.pos;
                        for b in &mut w.barriers[first..] {
                            b.2 = Some((p, end));
                        }
                    }
                }
                Inst::Switch { cases, .. } => cases.iter().for_each(|c| go(w, &c.2, outer_loop)),
                Inst::Scope { body } | Inst::Probing { body } => go(w, body, outer_loop),
                Inst::Barrier { .. } => w.barriers.push((inst as *const Inst as usize, p, None)),
                _ => {}
            }
        }
    }
    let mut w = Walk::default();
    go(&mut w, body, None);
    let mut out = Spills { at: HashMap::new(), slot: HashMap::new() };
    let mut regs: Vec<&Reg> = w.uses.keys().collect();
    regs.sort_by_key(|r| match r {
        Reg::W32(i) => (0, *i),
        Reg::W64(i) => (1, *i),
    });
    for &(addr, p, span) in &w.barriers {
        let inside = |q: usize| span.is_some_and(|(s, e)| q >= s && q < e);
        let mut live = Vec::new();
        for &r in &regs {
            let defined = preset.contains(r) || w.defs.get(r).is_some_and(|d| d.iter().any(|&q| q < p || inside(q)));
            let used = w.uses[r].iter().any(|&q| q > p || inside(q));
            if defined && used {
                live.push(*r);
                let n = out.slot.len() as u32;
                out.slot.entry(*r).or_insert(n);
            }
        }
        out.at.insert(addr, live);
    }
    out
}
