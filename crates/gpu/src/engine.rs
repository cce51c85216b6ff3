//! The hook for a compiled tier (crates/jit): a [`Compiled`] kernel runs
//! whole threadgroups instead of the interpreter, through the narrow
//! [`Threadgroup`] view of the machine defined here.
//!
//! A compiled run is optimistic. It only runs where nothing observes the
//! kernel instruction by instruction (checks off, no counters, trace,
//! profile, debugger or log), always on copy-on-write views of the buffers,
//! and a compiled threadgroup may answer "I cannot promise the
//! interpreter's result here" (a fault, a budget it cannot bound, barriers
//! it cannot pair). Then the whole dispatch is run again by the
//! interpreter from the untouched buffers, so a compiled run either equals
//! the interpreter's or is replaced by it.

use crate::exec::{Machine, Mask};
use crate::ir::{Inst, Reg};
use crate::memory::{AllocId, AllocKind};
use crate::{CheckLevel, Kernel, RunOptions};
use msl::hir::ThreadAttr;
use std::borrow::Cow;

/// Which engine runs a dispatch (`--engine`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Engine {
    /// Always the interpreter.
    Interp,
    /// The compiled tier wherever it can run.
    Jit,
    /// The compiled tier for dispatches large enough to repay compiling.
    #[default]
    Auto,
}

impl std::str::FromStr for Engine {
    type Err = String;
    fn from_str(s: &str) -> Result<Engine, String> {
        match s {
            "interp" => Ok(Engine::Interp),
            "jit" => Ok(Engine::Jit),
            "auto" => Ok(Engine::Auto),
            _ => Err(format!("unknown engine `{s}`: use interp, jit or auto")),
        }
    }
}

/// A kernel in another form than the interpreter's.
pub trait Compiled: Send + Sync + std::fmt::Debug {
    /// Run the threadgroup `t` was set up for. `false`: the result cannot
    /// be promised equal to the interpreter's, and the dispatch is rerun
    /// interpreted (whatever this call did to memory is thrown away).
    fn run_threadgroup(&self, t: &mut Threadgroup<'_, '_>) -> bool;

    /// The checks the code was compiled with; it runs only under exactly
    /// these (`CheckLevel::None`: checks off).
    fn checks(&self) -> CheckLevel;

    /// Buffers the code only stores to, each thread to element
    /// `thread_position_in_grid.x` (of the bytes given) and nowhere else,
    /// by their `[[buffer(n)]]` index. On a grid of one row no two threads
    /// share an element, so the workers of a dispatch may write one copy
    /// of such a buffer together instead of a copy each
    /// ([`Threadgroup::shared_output`]).
    fn shared_outputs(&self) -> &[(u32, u64)] {
        &[]
    }
}

/// What compiles kernels for runs (crates/jit provides one).
#[derive(Clone, Copy, Debug)]
pub struct Compiler {
    /// The compiled kernel for a run, if it is to be used, and a note
    /// saying why not when `RunOptions::engine` asked for it (`Engine::Jit`).
    #[allow(clippy::type_complexity)]
    pub prepare: fn(&Kernel, &crate::Dispatch, &RunOptions) -> (Option<std::sync::Arc<dyn Compiled>>, Option<String>),
    /// A run `prepare` left to the interpreter took this long (a kernel
    /// that keeps the interpreter busy is worth compiling).
    pub interpreted: fn(&Kernel, &RunOptions, std::time::Duration),
}

/// Why a run cannot use a compiled kernel, if it cannot: something watches
/// every instruction, or the run is not plain lockstep.
pub fn compiled_blocked(kernel: &Kernel, opts: &RunOptions) -> Option<&'static str> {
    if opts.count || opts.profile || opts.trace.is_some() || opts.nan {
        Some("counters, traces, profiles and --check nan run in the interpreter")
    } else if opts.probe.is_some() || opts.stops.is_some() {
        Some("the debugger runs in the interpreter")
    } else if opts.log.is_some() && kernel.logs {
        Some("shader logging runs in the interpreter")
    } else if opts.schedule.is_some() || !opts.uninitialized_buffers.is_empty() {
        Some("schedule exploration and uninitialized-output tracking run in the interpreter")
    } else {
        None
    }
}

/// One threadgroup as a compiled kernel sees it.
pub struct Threadgroup<'m, 'k> {
    pub(crate) m: &'m mut Machine<'k>,
}

/// An allocation as raw memory: `len` bytes at `base` (each lane's own
/// `len` bytes at `base + lane * lane_stride` for private variables).
#[derive(Clone, Copy, Debug, Default)]
pub struct Region {
    pub base: *mut u8,
    pub len: u64,
    pub lane_stride: u64,
    /// Stores may go straight in (false: read-only, or a buffer this
    /// worker shares and has not copied yet; see [`Threadgroup::writable`]).
    pub writable: bool,
}

impl<'k> Threadgroup<'_, 'k> {
    pub fn kernel(&self) -> &'k Kernel {
        self.m.k
    }

    /// Threads in this threadgroup.
    pub fn lanes(&self) -> usize {
        self.m.n
    }

    /// Instructions the interpreter would let this threadgroup run.
    pub fn instruction_budget(&self) -> u64 {
        self.m.budget_total
    }

    /// The threadgroup's size, its position in the grid and the requested
    /// threadgroup size (x, y, z).
    pub fn geometry(&self) -> ([u32; 3], [u32; 3], [u32; 3]) {
        let g = &self.m.geo;
        (g.tg_size, g.tg_pos, g.requested_tg)
    }

    /// The dispatch's grid in threads (x, y, z).
    pub fn grid_threads(&self) -> [u32; 3] {
        self.m.geo.grid_threads
    }

    /// Lane `l`'s position in the threadgroup.
    pub fn local(&self, l: usize) -> [u32; 3] {
        self.m.geo.local(l)
    }

    /// Whether the run was cancelled.
    pub fn cancelled(&self) -> bool {
        self.m.cancel.as_ref().is_some_and(crate::Cancel::is_cancelled)
    }

    /// Attribute component `comp` of lane `l`.
    pub fn attr(&self, attr: ThreadAttr, comp: u8, l: usize) -> u32 {
        self.m.geo.attr(attr, comp, l)
    }

    /// The value every lane's register `r` holds before the kernel starts
    /// (the buffer pointers of parameters).
    pub fn initial(&self, r: Reg) -> u64 {
        self.m.get_pub(r, 0)
    }

    /// The memory of allocation `id`, if it exists (a buffer the workers
    /// write together: their shared copy, [`Threadgroup::shared_output`]).
    pub fn region(&mut self, id: AllocId) -> Option<Region> {
        if let AllocKind::Buffer(i) = id.kind() {
            if let Some(r) = self.shared_output(i) {
                return Some(r);
            }
        }
        let mem = &mut self.m.mem;
        let whole = |b: &mut Vec<u8>| Region { base: b.as_mut_ptr(), len: b.len() as u64, lane_stride: 0, writable: true };
        Some(match id.kind() {
            AllocKind::Buffer(i) => match mem.buffers.get_mut(i as usize)?.as_mut()? {
                Cow::Borrowed(s) => Region { base: s.as_ptr() as *mut u8, len: s.len() as u64, lane_stride: 0, writable: false },
                Cow::Owned(v) => whole(v),
            },
            AllocKind::ThreadgroupBuffer(i) => whole(mem.tg_buffers.get_mut(i as usize)?),
            AllocKind::Threadgroup(i) => whole(mem.threadgroup.get_mut(i as usize)?),
            AllocKind::Constant(i) => Region { writable: false, ..whole(mem.constants.get_mut(i as usize)?) },
            AllocKind::Private(i) => {
                let off = *mem.private_offsets.get(i as usize)? as usize;
                let len = *mem.private_sizes.get(i as usize)? as u64;
                // SAFETY: `off` is within the first lane's frame.
                let base = unsafe { mem.private.as_mut_ptr().add(off) };
                Region { base, len, lane_stride: mem.frame as u64, writable: true }
            }
            AllocKind::Null | AllocKind::Invalid => return None,
        })
    }

    /// With checks on: thread `l` makes access `op` of `size` bytes at byte
    /// offset `off` of allocation `id` (in bounds). False when the
    /// sanitizer might report it (`conflicts.rs`), or no shadow is kept.
    pub fn shadow_access(&mut self, id: AllocId, off: u64, size: u64, l: usize, op: crate::conflicts::Op) -> bool {
        let tid = self.m.tid(l);
        if let AllocKind::Private(_) = id.kind() {
            let p = crate::memory::ptr_bits(id, off as i64);
            let Some(range) = crate::exec::private_shadow(&self.m.mem, p, size as usize, l) else { return false };
            return self.m.shadows.as_mut().is_some_and(|s| s.private_access(range, op.write));
        }
        self.m.shadows.as_mut().is_some_and(|s| s.access(id.kind(), off, size, tid, op))
    }

    /// With checks on: where the shadow cells of allocation `id` start
    /// (null: it has none); see `conflicts::Shadows::cells`.
    pub fn shadow_cells(&mut self, id: AllocId) -> *mut u8 {
        self.m.shadows.as_mut().and_then(|s| s.cells(id)).unwrap_or(std::ptr::null_mut())
    }

    /// With checks on: whether every cell of threadgroup memory `id` was
    /// written in this threadgroup (`conflicts::Shadows::all_written`).
    pub fn shadow_all_written(&mut self, id: AllocId, from: &mut usize) -> bool {
        self.m.shadows.as_mut().is_some_and(|s| s.all_written(id, from))
    }

    /// With checks on: compiled code touched cells `lo..hi` of allocation `id`.
    pub fn shadow_touched(&mut self, id: AllocId, lo: usize, hi: usize) {
        if let Some(s) = self.m.shadows.as_mut() {
            s.touched(id, lo, hi);
        }
    }

    /// With checks on: the epochs of `conflicts::Shadows::epochs`.
    pub fn shadow_epochs(&self) -> [u32; 4] {
        self.m.shadows.as_ref().map_or([0; 4], |s| s.epochs())
    }

    /// Identifies the worker's memory for this dispatch: the places of its
    /// allocations (and shadows) stay the same from one threadgroup to the
    /// next while this does, once each writable buffer is the worker's own.
    pub fn memory_id(&self) -> u64 {
        self.m.id
    }

    /// The thread number (global number + 1) of lane 0; lane `l`'s is
    /// this plus `l` (wrapping), as the sanitizer numbers threads.
    pub fn thread_base(&self) -> u32 {
        self.m.tid(0)
    }

    /// With checks on: every thread passed a `threadgroup_barrier` with
    /// (at least) `mem_flags` `flags`. False when it cannot be followed.
    pub fn shadow_barrier(&mut self, flags: u32) -> bool {
        self.m.shadows.as_mut().is_some_and(|s| s.barrier(flags))
    }

    /// Where buffer `index` is when the dispatch's workers share one copy
    /// of it ([`Compiled::shared_outputs`]): the code stores its threads'
    /// elements there (and the interpreter never touches the buffer in
    /// this run, being given nothing to do with it).
    pub fn shared_output(&self, index: u32) -> Option<Region> {
        self.m.shared_output(index)
    }

    /// Make buffer `index` this worker's own copy (as the interpreter does
    /// on its first write), and say where it now is. `None` for a buffer
    /// that is not bound.
    pub fn writable(&mut self, index: u32) -> Option<Region> {
        crate::memory::own(self.m.mem.buffers.get_mut(index as usize)?.as_mut()?);
        self.region(AllocId::buffer(index)).filter(|r| r.writable)
    }

    /// Whether thread `l` may access `size` bytes at `p` aligned to `align`
    /// (the interpreter's rule: in bounds, aligned, not read-only).
    pub fn may_access(&self, p: u64, size: usize, align: usize, write: bool) -> bool {
        self.m.fault(p, size, align, write).is_none()
    }

    /// Thread `l` copies `bytes` bytes from `src` to `dst`, both aligned to
    /// `align`; false (nothing copied) where the interpreter would refuse.
    pub fn copy_lane(&mut self, l: usize, dst: u64, src: u64, bytes: usize, align: usize) -> bool {
        if !self.may_access(src, bytes, align, false) || !self.may_access(dst, bytes, align, true) {
            return false;
        }
        let Some(data) = self.m.mem.region(src, l).map(|(b, off)| b[off as usize..off as usize + bytes].to_vec()) else { return false };
        match self.m.mem.region_mut(dst, l) {
            Some((b, off)) => {
                b[off as usize..off as usize + bytes].copy_from_slice(&data);
                true
            }
            None => false,
        }
    }

    /// Thread `l`'s atomic `inst` at `p` with operands `a` and `b`, by the
    /// interpreter; what it returns, or `None` where the interpreter would
    /// refuse the access.
    pub fn atomic_lane(&mut self, inst: &Inst, l: usize, p: u64, a: u64, b: u64) -> Option<u64> {
        let Inst::Atomic { op, ty, dst, ptr, a: ra, b: rb, .. } = inst else { return None };
        let size = ty.size() as usize;
        let align = crate::access::natural_align(size);
        if !self.may_access(p, size, align, *op != crate::ir::AtomicOp::Load) {
            return None;
        }
        if *op == crate::ir::AtomicOp::CompareExchange && !self.may_access(a, size, align, true) {
            return None;
        }
        self.m.set_uniform_pub(*rb, b);
        self.m.set_uniform_pub(*ra, a);
        self.m.set_uniform_pub(*ptr, p);
        let mut mask = Mask::empty();
        mask.set(l, true);
        self.m.exec_simple(inst, &mask);
        Some(self.m.get_pub(*dst, l))
    }

    /// SIMD-group function `inst` (an `Inst::Lane`) by the interpreter's
    /// code, for the threads `lanes` as the active ones: `args` holds three
    /// slots per thread (its operands `a`, `arg`, `fill`); each active
    /// thread's result goes to its first slot.
    pub fn lane_function(&mut self, inst: &Inst, lanes: &[usize], args: &mut [u64]) {
        let Inst::Lane { dst, a, arg, fill, .. } = inst else { return };
        let mut mask = Mask::empty();
        for (k, r) in [*a, *arg, *fill].into_iter().enumerate() {
            self.m.expand_pub(r);
            for &l in lanes {
                self.m.set_lane_pub(r, l, args[3 * l + k]);
            }
        }
        for &l in lanes {
            mask.set(l, true);
        }
        self.m.exec_simple(inst, &mask);
        for &l in lanes {
            args[3 * l] = self.m.get_pub(*dst, l);
        }
    }

    /// Evaluate `inst` (an instruction without memory effects or control
    /// flow) for one thread with the interpreter's own arithmetic: `inputs`
    /// are its source registers' values, the result is its destination
    /// registers' values, in `ir::reg_uses` order.
    pub fn eval(&mut self, inst: &Inst, inputs: &[u64], outputs: &mut [u64]) {
        let k = self.m.k;
        let one = self.m.one_lane.get_or_insert_with(|| {
            let mut one = Machine::new(k, 1, Default::default(), false, u64::MAX);
            one.n = 1;
            one.alive = Mask::first(1);
            Box::new(one)
        });
        let (defs, uses, _) = crate::ir::reg_uses(inst);
        for (&r, &v) in uses.iter().zip(inputs) {
            one.set_uniform_pub(r, v);
        }
        let mask = Mask::first(1);
        one.exec_simple(inst, &mask);
        for (o, &r) in outputs.iter_mut().zip(&defs) {
            *o = one.get_pub(r, 0);
        }
    }
}

/// Run the dispatch with `opts.compiled`; `None` when a threadgroup gave up
/// (then `buffers` are as they were and the caller runs the interpreter).
pub(crate) fn run_compiled(
    kernel: &Kernel,
    d: &crate::Dispatch,
    buffers: &mut std::collections::BTreeMap<u32, Vec<u8>>,
    opts: &RunOptions,
    progress: &mut dyn FnMut(u64, u64),
    pristine: Option<&crate::Pristine>,
) -> Option<crate::RunReport> {
    let dispatch = crate::geometry(d);
    let total_groups = dispatch.groups.iter().map(|&g| g as u64).product::<u64>();
    let workers = crate::parallel::workers(kernel, opts, total_groups, dispatch.lanes_requested(), buffers);
    let mut report = crate::parallel::run(kernel, &dispatch, buffers, opts, workers, progress, pristine)?;
    report.cancelled = opts.cancel.as_ref().is_some_and(crate::Cancel::is_cancelled);
    Some(report)
}
