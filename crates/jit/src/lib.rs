//! The compiled tier of the simulated GPU: a kernel's IR compiled with
//! Cranelift into native code that runs one thread at a time between
//! barriers (`codegen.rs`) — and kernels without barriers four at a time
//! where it can (`codegen/wide.rs`) — with the interpreter's results.
//!
//! Running threads one after another instead of in lockstep gives the same
//! memory contents whenever no two threads of a threadgroup touch the same
//! place between two barriers with one of them writing — a data race, which
//! `--check all` reports and which leaves a real GPU's result undefined
//! too. SIMD-group functions and `simdgroup_barrier` are stops like
//! barriers, but per SIMD-group: the threads of a group that stopped at one
//! together are lockstep's active lanes, and the runner applies it to them
//! with the interpreter's code. What the compiled code cannot vouch for, it
//! does not run: kernels with SIMD-group matrices are refused when compiling
//! (`analysis::check`), and a threadgroup that faults, may have exceeded the
//! interpreter's budget, or whose threads disagree about barriers or SIMD-group
//! functions gives up at run time, and the interpreter reruns the dispatch
//! (`gpu::engine`).
//!
//! [`prepare`] picks the engine for a run and caches compiled kernels per
//! process.

mod analysis;
mod codegen;
mod runtime;

pub use analysis::Unsupported;
pub use gpu::engine::Engine;

use cranelift_codegen::ir::{types, AbiParam};
use cranelift_codegen::settings::{self, Configurable};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{Linkage, Module};
use gpu::engine::{Compiled, Threadgroup};
use gpu::ir::{Inst, Reg};
use gpu::{CheckLevel, Dispatch, Kernel, RunOptions};
use runtime::{Ctx, Entry};
use std::cell::RefCell;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

type KernelFn = extern "C" fn(*mut Ctx) -> u64;

/// How hard Cranelift works on a function, chosen by its size in SSA
/// values. The backtracking register allocator's time grows much faster
/// than the code: candle's `softmax_f32` (eleven block sizes, some 67,000
/// values) took 14 s and 2 GB to compile with it, 0.6 s and 0.2 GB with
/// the single-pass one, and ran as fast; a kernel of 6,000 lines with
/// 2,000 values live across a barrier took 70 s. Small functions, where
/// its better code shows, keep it. Past a larger size the code generator
/// stops ([`codegen::MOST_VALUES`], [`codegen::MOST_VAR_BLOCKS`]) and the
/// interpreter runs the kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Effort {
    /// The backtracking register allocator.
    Thorough,
    /// The single-pass register allocator.
    Quick,
}

/// Most SSA values compiled with [`Effort::Thorough`].
const THOROUGH_VALUES: usize = 12_000;

impl Effort {
    fn for_size(values: usize) -> Effort {
        if values <= THOROUGH_VALUES {
            Effort::Thorough
        } else {
            Effort::Quick
        }
    }

    fn regalloc(self) -> &'static str {
        match self {
            Effort::Thorough => "backtracking",
            Effort::Quick => "single_pass",
        }
    }
}

/// A kernel in native code.
pub struct Native {
    /// The kernel the code was made from (helpers get its instructions).
    kernel: Box<Kernel>,
    insts: Vec<*const Inst>,
    func: KernelFn,
    /// Registers set before the kernel starts (parameters' pointers).
    preset: Vec<Reg>,
    spill_slots: usize,
    /// Every thread takes the same path: the budget holds per thread.
    convergent: bool,
    /// Attributes with one value per threadgroup the code reads.
    uniform_attrs: Vec<(msl::hir::ThreadAttr, u8)>,
    /// Owns the code's memory for as long as the kernel may run.
    _module: Code,
    /// Threadgroups the native code has run to the end (tests check it).
    ran: Tally,
    /// Time spent compiling.
    pub compile_time: std::time::Duration,
    /// Bytes of stack the code's frame takes.
    frame_size: usize,
    /// Most loops around a barrier (with checks on: their trips are compared).
    trip_depth: usize,
    /// The checks the code keeps (`CheckLevel::None`: none).
    checks: CheckLevel,
    /// The buffers the code may write (`analysis::written_buffers`).
    written: Vec<u32>,
    /// The checks rely on the grid being one row ([`compile_for`]).
    assumes_1d: bool,
    /// One per barrier or SIMD-group function (by its state's number):
    /// what the runner checks or does there.
    stops: Vec<codegen::Stop>,
    /// The kernel has SIMD-group functions.
    lane_functions: bool,
    /// The allocations in the code's table, with their entries and whether
    /// their shadow is kept (with checks on) (`runtime::table_ids`).
    table_ids: Vec<(gpu::memory::AllocId, usize, bool)>,
    /// Buffers the code only stores to, each thread its element
    /// `thread_position_in_grid.x` (`analysis::RaceFree::outputs`): index
    /// and element size.
    shared_outputs: Vec<(u32, u64)>,
    /// The code keeps no state between calls (no barriers or SIMD-group
    /// functions): every thread runs start to end in one.
    stateless: bool,
    /// The code leaves each thread's instruction count in `ctx.counts`
    /// (`codegen::Plan::keep_counts`): a thread that stops comes back to
    /// it, and threads on different paths in code with loops may need
    /// their sum. (In code without loops the lockstep bound, a constant,
    /// decides alone.)
    counts_kept: bool,
    /// What bounds the interpreter's instruction count for a threadgroup
    /// whose threads take different paths.
    lockstep: analysis::LockstepBound,
    /// The code runs four threads at a time where it can (`codegen/wide.rs`).
    chunked: bool,
    /// The register allocator it was compiled with.
    effort: Effort,
    /// The bound on the interpreter's count for a threadgroup whatever the
    /// values, when there is one (`analysis::LockstepBound::static_bound`):
    /// the code then counts nothing.
    static_bound: Option<u64>,
}

/// A count the workers of a dispatch add to once per threadgroup: one
/// shared atomic bounced its cache line between them (a seventh of a
/// 16M-thread map's time on two cores), so each worker thread adds to a
/// shard of its own (padded to a cache line) and reading sums them.
#[derive(Default)]
struct Tally([Shard; TALLY_SHARDS]);

#[derive(Default)]
#[repr(align(128))]
struct Shard(AtomicU64);

const TALLY_SHARDS: usize = 16;

impl Tally {
    fn add_one(&self) {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        thread_local!(static SHARD: usize = NEXT.fetch_add(1, Ordering::Relaxed) as usize % TALLY_SHARDS);
        SHARD.with(|&k| self.0[k].0.fetch_add(1, Ordering::Relaxed));
    }

    fn total(&self) -> u64 {
        self.0.iter().map(|s| s.0.load(Ordering::Relaxed)).sum()
    }
}

/// Stack the recursive walks over nested blocks keep free, and the size of
/// a stack grown when less is left.
pub(crate) const WALK_RED_ZONE: usize = 64 * 1024;
pub(crate) const WALK_STACK: usize = 1024 * 1024;

/// Stack kept free below the compiled code's frame for what it calls (the
/// interpreter's one-thread helpers), and the size of a stack grown for it.
const CODE_STACK_MARGIN: usize = 256 * 1024;
const CODE_STACK: usize = 2 * 1024 * 1024;

impl Native {
    /// The loop trip counters in the threads' spill slots `spill` (after
    /// the registers' slots).
    fn trip_slots<'a>(&self, spill: &'a [u64]) -> runtime::TripSlots<'a> {
        runtime::TripSlots { spill, slots: self.spill_slots, from: self.spill_slots - self.trip_depth }
    }

    /// Whether the code runs four threads at a time where it can (in
    /// threadgroups of one row).
    pub fn chunked(&self) -> bool {
        self.chunked
    }

    /// The register allocator the code was compiled with.
    pub fn effort(&self) -> Effort {
        self.effort
    }

    /// How many threadgroups this code ran to the end.
    pub fn threadgroups_run(&self) -> u64 {
        self.ran.total()
    }
}

// SAFETY: after `finalize_definitions` the module and the instruction
// pointers (into `kernel`, which is never changed) are only read; the code
// keeps all its mutable state in the `Ctx` each call is given.
unsafe impl Send for Native {}
unsafe impl Sync for Native {}

impl std::fmt::Debug for Native {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Native({})", self.kernel.name)
    }
}

/// Compile `kernel` to run with checks off, or say why it cannot be.
pub fn compile(kernel: &Kernel) -> Result<Native, Unsupported> {
    compile_checked(kernel, CheckLevel::None)
}

/// Compile `kernel` to run under `checks`, or say why it cannot be. With
/// checks on, the code gives up wherever the interpreter might report
/// something, and the interpreter reruns the dispatch to report it.
pub fn compile_checked(kernel: &Kernel, checks: CheckLevel) -> Result<Native, Unsupported> {
    compile_for(kernel, checks, false)
}

/// [`compile_checked`] for dispatches whose grid is one row of threads
/// (`grid_1d`: y and z are 1) when that lets the checks do less
/// (`analysis::race_free_buffers`); the code then gives up on any other grid.
pub fn compile_for(kernel: &Kernel, checks: CheckLevel, grid_1d: bool) -> Result<Native, Unsupported> {
    compile_with(kernel, checks, grid_1d, None)
}

/// [`compile_for`] with the given effort whatever the kernel's size (the
/// tests run both register allocators on every kernel).
#[doc(hidden)]
pub fn compile_with_effort(kernel: &Kernel, checks: CheckLevel, grid_1d: bool, effort: Effort) -> Result<Native, Unsupported> {
    compile_with(kernel, checks, grid_1d, Some(effort))
}

fn compile_with(kernel: &Kernel, checks: CheckLevel, grid_1d: bool, effort: Option<Effort>) -> Result<Native, Unsupported> {
    let started = std::time::Instant::now();
    analysis::check(kernel)?;
    if checks != CheckLevel::None {
        analysis::check_checked(kernel)?;
    }
    if !runtime::layout_ok() {
        return Err(Unsupported("internal: the context layout changed".into()));
    }
    let kernel = Box::new(kernel.clone());
    let written = analysis::written_buffers(&kernel);
    let preset: Vec<Reg> = analysis::preset_registers(&kernel);
    if let Some(r) = analysis::maybe_unassigned_read(&kernel.body, &preset)? {
        return Err(Unsupported(format!("the kernel may read register {r:?} before writing it on some path; the interpreter runs it")));
    }
    let fixed = analysis::fixed_registers(&kernel.body, &preset);
    let spills = analysis::spills(&kernel.body, &fixed)?;
    let statics = analysis::static_pointers(&kernel);
    let lens = analysis::fixed_sizes(&kernel);
    let mut uniform_attrs = Vec::new();
    gpu::ir::walk(&kernel.body, &mut |i| {
        if let Inst::Attr { attr, component, .. } = i {
            if gpu::exec::uniform_attr(*attr) && !uniform_attrs.contains(&(*attr, *component)) {
                uniform_attrs.push((*attr, *component));
            }
        }
    });
    let convergent = analysis::convergent(&kernel.body, &preset);
    let lockstep = analysis::LockstepBound::new(&kernel.body);
    let (mut stateful, mut lane_stops) = (false, false);
    gpu::ir::walk(&kernel.body, &mut |i| {
        stateful |= analysis::is_stop(i);
        lane_stops |= matches!(i, Inst::Lane { .. } | Inst::Barrier { simdgroup: true, .. });
    });
    // Whether the budget needs counting while the code runs: not when
    // every loop ends after a few trips, whatever the values (the runner
    // then compares the bound with the budget before running).
    let static_bound = lockstep.static_bound(&kernel.body, &fixed);
    let counted = static_bound.is_none();
    let counts_kept = counted && (stateful || (!convergent && !lockstep.loops.is_empty()));
    let record_most = counted && !convergent;
    // Loops around stops keep their trips across them for the checks, the
    // SIMD-group functions and the most trips.
    let trip_depth = if checks != CheckLevel::None || lane_stops || record_most { analysis::trip_depth(&kernel.body) } else { 0 };
    let read_only = if checks != CheckLevel::None { analysis::read_only_loads(&kernel) } else { Default::default() };
    // The allocations the sanitizer watches: threadgroup and private
    // memory and the writable buffers (races are looked for under
    // `--check memory` too: see `gpu::conflicts`).
    // Each with the log2 of its cells' size (`None`: private memory,
    // whose shadow is bytes).
    let mut shadowed: HashMap<u32, Option<u32>> = HashMap::new();
    let mut assumes_1d = false;
    let free = analysis::race_free_buffers(&kernel);
    if checks != CheckLevel::None {
        use gpu::memory::AllocId;
        let race_free = free.on(grid_1d);
        assumes_1d = grid_1d && !free.own_element.is_subset(&free.atomic);
        let params = kernel.params.iter().filter_map(|p| p.kind.memory()).map(|(_, id)| id).filter(|id| !race_free.contains(&id.0));
        for id in (0..kernel.threadgroup_vars.len() as u32).map(AllocId::threadgroup).chain(params) {
            if let Some(shift) = gpu::conflicts::cell_shift(&kernel, id) {
                shadowed.insert(id.0, Some(shift));
            }
        }
        shadowed.extend((0..kernel.private_vars.len() as u32).map(|i| (AllocId::private(i).0, None)));
    }
    let err = |e: &dyn std::fmt::Display| Unsupported(format!("the code generator failed: {e}"));
    // (The host's calling convention; the target's settings wait for the
    // function's size: `Effort`.)
    let call_conv = cranelift_native::builder()
        .map_err(|e| err(&e))?
        .finish(settings::Flags::new(settings::builder()))
        .map_err(|e| err(&e))?
        .default_call_conv();
    let mut ctx = cranelift_codegen::Context::new();
    ctx.func.signature.call_conv = call_conv;
    ctx.func.signature.params.push(AbiParam::new(types::I64));
    ctx.func.signature.returns.push(AbiParam::new(types::I64));
    let mut insts = Vec::new();
    let signature = ctx.func.signature.clone();
    // With the four-threads loop if the kernel may have it; if its code
    // generator refuses the kernel, without.
    let mut wide = codegen::wide_candidate(&kernel.body, checks != CheckLevel::None, stateful);
    // (A development aid: METAL_PUZZLES_JIT_NO_CHUNKS=1 leaves it out, to compare.)
    wide &= std::env::var_os("METAL_PUZZLES_JIT_NO_CHUNKS").is_none();
    let stops = loop {
        ctx.func = cranelift_codegen::ir::Function::with_name_signature(Default::default(), signature.clone());
        insts.clear();
        // (A fresh builder context: a refused attempt leaves its own half-built.)
        let mut fbc = FunctionBuilderContext::new();
        let mut b = FunctionBuilder::new(&mut ctx.func, &mut fbc);
        let plan = codegen::Plan {
            body: &kernel.body,
            preset: &preset,
            spills: &spills,
            statics: &statics,
            lens: &lens,
            uniform_attrs: &uniform_attrs,
            checks: checks != CheckLevel::None,
            shadowed: &shadowed,
            spill_slots: spills.slot.len() + trip_depth,
            read_only: &read_only,
            fixed: &fixed,
            loops: &lockstep.loops,
            bound_trips: record_most,
            keep_counts: counts_kept,
            keep_trips: trip_depth > 0,
            count: counted,
            wide,
        };
        match codegen::compile_body(&mut b, &mut insts, call_conv, &plan) {
            Ok(stops) => {
                b.finalize();
                break stops;
            }
            Err(e) if wide => {
                if std::env::var_os("METAL_PUZZLES_JIT_DUMP").is_some() {
                    eprintln!("{}", e.0);
                }
                wide = false
            }
            Err(e) => return Err(e),
        }
    };
    // (Sealing a loop may add a block parameter per variable at each of
    // its joins at once, past the checks as the code grew.)
    let values = ctx.func.dfg.num_values();
    if values > codegen::MOST_VALUES {
        return Err(codegen::too_large(values, 0, 0));
    }
    let effort = effort.unwrap_or(Effort::for_size(values));
    let mut flags = settings::builder();
    flags.set("opt_level", "speed").map_err(|e| err(&e))?;
    flags.set("regalloc_algorithm", effort.regalloc()).map_err(|e| err(&e))?;
    flags.set("use_colocated_libcalls", "false").map_err(|e| err(&e))?;
    flags.set("is_pic", "false").map_err(|e| err(&e))?;
    // Frames over a page touch each page on entry, so an overflow (were
    // the check around each call wrong) hits the guard page instead of
    // writing past it.
    flags.set("enable_probestack", "true").map_err(|e| err(&e))?;
    flags.set("probestack_strategy", "inline").map_err(|e| err(&e))?;
    let isa = cranelift_native::builder().map_err(|e| err(&e))?.finish(settings::Flags::new(flags)).map_err(|e| err(&e))?;
    let mut owner = Code(std::mem::ManuallyDrop::new(JITModule::new(JITBuilder::with_isa(isa, cranelift_module::default_libcall_names()))));
    let module = &mut *owner.0;
    let id = module.declare_function("kernel", Linkage::Export, &ctx.func.signature).map_err(|e| err(&e))?;
    // A development aid: METAL_PUZZLES_JIT_DUMP=1 prints the machine code.
    let dump = std::env::var_os("METAL_PUZZLES_JIT_DUMP").is_some();
    if dump {
        eprintln!("{} SSA values: {effort:?} effort", ctx.func.dfg.num_values());
    }
    ctx.set_disasm(dump);
    module.define_function(id, &mut ctx).map_err(|e| err(&e))?;
    if let Some(code) = ctx.compiled_code().and_then(|c| c.vcode.as_ref()).filter(|_| dump) {
        eprintln!("{code}");
    }
    let frame_size = ctx.compiled_code().map_or(0, |c| c.frame_size as usize);
    module.clear_context(&mut ctx);
    module.finalize_definitions().map_err(|e| err(&e))?;
    let code = module.get_finalized_function(id);
    // SAFETY: the function was defined with exactly this signature.
    let func = unsafe { std::mem::transmute::<*const u8, KernelFn>(code) };
    let table_ids = runtime::table_ids(&kernel, &shadowed.keys().copied().collect());
    let shared_outputs = free
        .outputs
        .iter()
        .filter_map(|(&id, &size)| match gpu::memory::AllocId(id).kind() {
            gpu::memory::AllocKind::Buffer(n) => Some((n, size as u64)),
            _ => None,
        })
        .collect();
    Ok(Native {
        kernel,
        insts,
        func,
        preset,
        spill_slots: spills.slot.len() + trip_depth,
        convergent,
        uniform_attrs,
        _module: owner,
        ran: Tally::default(),
        compile_time: started.elapsed(),
        frame_size,
        trip_depth,
        checks,
        written,
        assumes_1d,
        lane_functions: stops.iter().any(|s| s.lane.is_some()),
        table_ids,
        shared_outputs,
        stateless: stops.is_empty(),
        counts_kept,
        stops,
        lockstep,
        chunked: wide,
        effort,
        static_bound,
    })
}

/// A module whose code memory is freed with it (a `JITModule` dropped
/// without `free_memory` keeps its pages mapped forever).
struct Code(std::mem::ManuallyDrop<JITModule>);

impl Drop for Code {
    fn drop(&mut self) {
        // SAFETY: `Code` lives inside `Native` (or dies before one is made);
        // running the code borrows the `Native`, so no call into these
        // pages is running or can start once it is dropped.
        unsafe { std::mem::ManuallyDrop::take(&mut self.0).free_memory() };
    }
}

/// Per worker thread: buffers reused from one threadgroup to the next.
#[derive(Default)]
struct Scratch {
    table: Vec<Entry>,
    /// The code and worker memory (`Threadgroup::memory_id`) the table was
    /// filled for: the next threadgroup of the same finds it filled.
    filled_for: Option<(usize, u64)>,
    used: Vec<usize>,
    spill: Vec<u64>,
    counts: Vec<u64>,
    state: Vec<u64>,
    initial: Vec<u64>,
    local: Vec<[u32; 3]>,
    /// The threadgroup size `local` was made for.
    local_for: Option<[u32; 3]>,
    attrs: Vec<u32>,
    lane_args: Vec<u64>,
    loop_most: Vec<u64>,
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

impl Compiled for Native {
    fn run_threadgroup(&self, t: &mut Threadgroup<'_, '_>) -> bool {
        let n = t.lanes();
        if self.assumes_1d && t.grid_threads()[1..] != [1, 1] {
            return false;
        }
        let budget = t.instruction_budget();
        if self.static_bound.is_some_and(|b| b > budget) {
            return false; // (a budget that small: the interpreter decides)
        }
        let ok = SCRATCH.with(|s| {
            let mut s = s.borrow_mut();
            let s = &mut *s;
            s.table.resize(runtime::TABLE, Entry::default());
            let filled_for = Some((self as *const Native as usize, t.memory_id()));
            if s.filled_for != filled_for {
                runtime::fill_table(t, &mut s.table, &mut s.used, &self.table_ids);
                runtime::own_written(t, &mut s.table, &self.written);
                s.filled_for = filled_for;
            } else {
                runtime::new_threadgroup(&mut s.table, &s.used);
            }
            s.initial.clear();
            s.initial.extend(self.preset.iter().map(|&r| t.initial(r)));
            s.loop_most.clear();
            s.loop_most.resize(self.lockstep.loops.len().max(1), 0);
            // (Stateless code sets every thread's count at its end and
            // keeps nothing else: what an earlier threadgroup left needs no
            // clearing.)
            if !self.stateless {
                s.spill.clear();
                s.counts.clear();
                s.state.clear();
            }
            s.spill.resize(n * self.spill_slots.max(1), 0);
            s.counts.resize(n, 0);
            s.state.resize(n, codegen::START);
            if self.lane_functions {
                s.lane_args.resize(3 * n, 0);
            }
            let geo = t.geometry();
            // (Positions in the threadgroup follow from its size alone.)
            if s.local_for != Some(geo.0) {
                s.local = (0..n).map(|l| t.local(l)).collect();
                s.local_for = Some(geo.0);
            }
            s.attrs.clear();
            s.attrs.extend(self.uniform_attrs.iter().map(|&(a, c)| t.attr(a, c, 0)));
            let mut ctx = Ctx {
                table: s.table.as_mut_ptr(),
                spill: s.spill.as_mut_ptr(),
                counts: s.counts.as_mut_ptr(),
                budget,
                initial: s.initial.as_ptr(),
                tg_size: geo.0,
                tg_pos: geo.1,
                requested: geo.2,
                _pad: 0,
                tg: (t as *mut Threadgroup<'_, '_>).cast(),
                insts: self.insts.as_ptr(),
                state: s.state.as_mut_ptr(),
                n: n as u64,
                local: s.local.as_ptr(),
                uniform_attrs: s.attrs.as_ptr(),
                round_flags: u64::MAX,
                epochs: t.shadow_epochs(),
                thread_base: t.thread_base(),
                _pad2: 0,
                lane_args: s.lane_args.as_mut_ptr(),
                hold: 0,
                loop_most: s.loop_most.as_mut_ptr(),
            };
            // Rounds: every thread still running goes to its next barrier
            // (or the end); all that stop must stop at the same barrier.
            // Threads that stop at SIMD-group functions have them applied
            // and go on alone, the others holding where they are.
            loop {
                if ctx.hold == 0 {
                    ctx.round_flags = u64::MAX;
                }
                // The code's frame (and the interpreter helpers it calls)
                // must fit the stack: machine code has no guard of its own.
                let func = self.func;
                let status = stacker::maybe_grow(self.frame_size + CODE_STACK_MARGIN, self.frame_size + CODE_STACK, || func(&mut ctx));
                if status == codegen::GIVE_UP {
                    return false;
                }
                if self.stateless {
                    break; // (every thread ran to the end)
                }
                if self.lane_functions {
                    let trips = self.trip_slots(&s.spill);
                    match runtime::lane_functions(t, &self.stops, &self.insts, &s.state, trips, &mut s.lane_args) {
                        Some(true) => {
                            ctx.hold = 1;
                            continue;
                        }
                        Some(false) => return false,
                        None => ctx.hold = 0,
                    }
                }
                let (at, some_finished) = match runtime::round_end(&s.state) {
                    runtime::RoundEnd::Finished => break,
                    runtime::RoundEnd::Split => return false, // threads wait at different barriers
                    runtime::RoundEnd::At { state, some_finished } => (state, some_finished),
                };
                if self.checks != CheckLevel::None {
                    // A thread that finished while others wait at a
                    // barrier is a divergence the interpreter reports (and
                    // so is one at other trips of the loops around it: the
                    // code gave up on that).
                    let Some(stop) = self.stops.get((at - codegen::BARRIER) as usize) else { return false };
                    if some_finished {
                        return false;
                    }
                    let flags = stop.flags.unwrap_or(ctx.round_flags as u32);
                    if !t.shadow_barrier(flags) {
                        return false;
                    }
                    ctx.epochs = t.shadow_epochs();
                    runtime::mark_written(t, &mut s.table, &s.used);
                }
                if t.cancelled() {
                    return false;
                }
            }
            if self.checks != CheckLevel::None {
                runtime::fold_touched(t, &s.table, &s.used);
            }
            // Would the interpreter have run out of budget? It runs exactly
            // one thread's instructions when all go the same way (each
            // thread's count was checked as it stopped); else at most every
            // thread's in turn, and at most the loops' most trips allow
            // (`analysis::LockstepBound`). (Each thread gave up as soon as
            // its own count passed the budget.)
            if self.convergent || self.static_bound.is_some() {
                true
            } else {
                // (The bound first: for code without loops it is a constant.)
                self.lockstep.bound(&s.loop_most) <= budget
                    || (self.counts_kept && s.counts.iter().fold(0u64, |a, &c| a.saturating_add(c)) <= budget)
            }
        });
        if ok {
            self.ran.add_one();
        }
        ok
    }

    fn checks(&self) -> CheckLevel {
        self.checks
    }

    fn shared_outputs(&self) -> &[(u32, u64)] {
        &self.shared_outputs
    }
}

/// What [`prepare`] decided for a run.
#[derive(Debug, Default)]
pub struct Prepared {
    /// The compiled kernel to put into `RunOptions::compiled`.
    pub compiled: Option<Arc<Native>>,
    /// Why a run asked to be compiled (`--engine jit`) is interpreted.
    pub note: Option<String>,
}

/// Dispatches of at least this many threads are compiled before they run
/// under `auto` (compiling costs a millisecond or two, less than they take
/// interpreted). Smaller ones run interpreted...
pub const AUTO_MIN_THREADS: u64 = 1 << 16;
/// ...while, from a dispatch of this many threads on, the kernel is
/// compiled on a thread of its own, and the dispatches after that compile
/// finished run compiled (the results are the same either way)...
pub const AUTO_BACKGROUND_THREADS: u64 = 1 << 10;
/// ...and once the interpreter has spent this long on the kernel in this
/// process (with these checks: a benchmark, a test suite or a notebook that
/// runs it again and again), its dispatches wait for it to be compiled.
pub const AUTO_HOT_AFTER: std::time::Duration = std::time::Duration::from_millis(2);

/// Interpreter time per kernel (and checks) under `auto`, for tiering.
fn interpreter_time() -> &'static Mutex<HashMap<(u64, u8), std::time::Duration>> {
    static T: OnceLock<Mutex<HashMap<(u64, u8), std::time::Duration>>> = OnceLock::new();
    T.get_or_init(Default::default)
}

/// Whether the interpreter has spent [`AUTO_HOT_AFTER`] on `kernel` with `checks`.
fn hot(kernel: &Kernel, checks: CheckLevel) -> bool {
    let key = (kernel_hash(kernel), checks as u8);
    interpreter_time().lock().is_ok_and(|t| t.get(&key).is_some_and(|&d| d >= AUTO_HOT_AFTER))
}

/// A kernel's compiled form: set once, by whoever compiles it first
/// (others asking meanwhile wait for it, or, in the background case, go on
/// interpreting).
type Slot = Arc<OnceLock<Result<Arc<Native>, String>>>;
type Key = (u64, u8, bool);
type Cache = Mutex<HashMap<Key, Slot>>;

/// Compiled kernels kept per process (the cache starts over past this).
const CACHE_LIMIT: usize = 256;

fn cache() -> &'static Cache {
    static C: OnceLock<Cache> = OnceLock::new();
    C.get_or_init(Default::default)
}

/// A hash of everything in the kernel that the code depends on.
fn kernel_hash(k: &Kernel) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    format!("{:?}{:?}{:?}{:?}{:?}{}{}", k.body, k.params, k.threadgroup_vars, k.private_vars, k.constants, k.n32, k.n64).hash(&mut h);
    h.finish()
}

/// The compiled form of `kernel` for `checks`, from the cache or compiled now.
pub fn compiled(kernel: &Kernel, checks: CheckLevel) -> Result<Arc<Native>, String> {
    compiled_for(kernel, checks, false)
}

/// [`compiled`] for a dispatch whose grid is one row when `grid_1d` ([`compile_for`]).
pub fn compiled_for(kernel: &Kernel, checks: CheckLevel, grid_1d: bool) -> Result<Arc<Native>, String> {
    let (slot, _) = slot(key(kernel, checks, grid_1d));
    slot.get_or_init(|| compile_catching(kernel, checks, grid_1d)).clone()
}

/// [`compiled_for`] if the kernel has been compiled; else `None`, having
/// started compiling it on a thread of its own unless that had been done
/// (or [`BACKGROUND_COMPILES`] are under way: a later dispatch starts it).
fn compiled_in_background(kernel: &Kernel, checks: CheckLevel, grid_1d: bool) -> Option<Result<Arc<Native>, String>> {
    let key = key(kernel, checks, grid_1d);
    if let Some(slot) = cache().lock().ok()?.get(&key).cloned() {
        return slot.get().cloned();
    }
    let turn = BackgroundTurn::take()?;
    let (slot, fresh) = slot(key);
    if !fresh {
        return slot.get().cloned();
    }
    let (owned, s) = (kernel.clone(), slot.clone());
    let job = move || {
        let _turn = turn;
        s.get_or_init(|| compile_catching(&owned, checks, grid_1d));
    };
    if std::thread::Builder::new().name("metal-puzzles-jit".into()).spawn(job).is_err() {
        // (No thread to be had: compile now.)
        return Some(slot.get_or_init(|| compile_catching(kernel, checks, grid_1d)).clone());
    }
    None
}

/// Most compiles under way in the background at once (a run of many
/// different kernels must not start a thread for each).
const BACKGROUND_COMPILES: usize = 2;

/// One of the [`BACKGROUND_COMPILES`] turns, given back when dropped.
struct BackgroundTurn;

static BACKGROUND_RUNNING: AtomicU64 = AtomicU64::new(0);

impl BackgroundTurn {
    fn take() -> Option<BackgroundTurn> {
        let was = BACKGROUND_RUNNING.fetch_add(1, Ordering::SeqCst);
        let turn = BackgroundTurn;
        (was < BACKGROUND_COMPILES as u64).then_some(turn)
    }
}

impl Drop for BackgroundTurn {
    fn drop(&mut self) {
        BACKGROUND_RUNNING.fetch_sub(1, Ordering::SeqCst);
    }
}

/// The cache's key for a kernel compiled for `checks` (and a one-row
/// grid, which only checked code makes use of).
fn key(kernel: &Kernel, checks: CheckLevel, grid_1d: bool) -> Key {
    (kernel_hash(kernel), checks as u8, grid_1d && checks != CheckLevel::None)
}

/// The cache's slot for `key`, and whether it was made just now.
fn slot(key: Key) -> (Slot, bool) {
    let Ok(mut c) = cache().lock() else { return (Slot::default(), true) };
    if let Some(s) = c.get(&key) {
        return (s.clone(), false);
    }
    if c.len() >= CACHE_LIMIT {
        c.clear();
    }
    let s = Slot::default();
    c.insert(key, s.clone());
    (s, true)
}

/// [`compile_for`], where a bug in the code generator costs speed, never the run.
fn compile_catching(kernel: &Kernel, checks: CheckLevel, grid_1d: bool) -> Result<Arc<Native>, String> {
    let grid_1d = grid_1d && checks != CheckLevel::None;
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| compile_for(kernel, checks, grid_1d)))
        .unwrap_or_else(|_| Err(Unsupported("the code generator failed on this kernel".into())))
        .map(Arc::new)
        .map_err(|e| e.0)
}

/// Choose how `kernel` runs over `d` with `opts` under `engine`, compiling
/// (or taking from the cache) when the compiled tier is to run it.
pub fn prepare(kernel: &Kernel, d: &Dispatch, opts: &RunOptions, engine: Engine) -> Prepared {
    if engine == Engine::Interp {
        return Prepared::default();
    }
    let loud = engine == Engine::Jit;
    let note = |s: String| Prepared { compiled: None, note: loud.then_some(s) };
    if let Some(why) = gpu::engine::compiled_blocked(kernel, opts) {
        return note(format!("the kernel runs interpreted: {why}"));
    }
    if opts.atomics_last_lane_first {
        return note("the kernel runs interpreted: atomics applied last thread first".into());
    }
    if engine == Engine::Auto {
        let threads: u64 = match d.mode {
            gpu::DispatchMode::Threads => d.grid.iter().map(|&x| x as u64).product(),
            gpu::DispatchMode::Threadgroups => d.grid.iter().chain(&d.threadgroup).map(|&x| x as u64).product(),
        };
        // (A hot kernel waits for its compile, as one run 65,536 threads.)
        if threads < AUTO_MIN_THREADS && !hot(kernel, opts.check) {
            if threads < AUTO_BACKGROUND_THREADS {
                return Prepared::default();
            }
            return match compiled_in_background(kernel, opts.check, d.grid_threads()[1..] == [1, 1]) {
                Some(Ok(n)) => Prepared { compiled: Some(n), note: None },
                _ => Prepared::default(),
            };
        }
    }
    match compiled_for(kernel, opts.check, d.grid_threads()[1..] == [1, 1]) {
        Ok(n) => Prepared { compiled: Some(n), note: None },
        Err(e) => note(format!("the kernel runs interpreted: {e}")),
    }
}

/// Run a dispatch with the engine chosen: [`prepare`], then `gpu::run`.
/// Returns the report and the note of [`Prepared`].
pub fn run(
    kernel: &Kernel,
    d: &Dispatch,
    buffers: &mut std::collections::BTreeMap<u32, Vec<u8>>,
    opts: &RunOptions,
    engine: Engine,
) -> (gpu::RunReport, Option<String>) {
    let opts = RunOptions { compiled: None, compiler: Some(COMPILER), engine, ..opts.clone() };
    let report = gpu::run(kernel, d, buffers, &opts);
    let note = report.engine_note.clone();
    (report, note)
}

/// The [`gpu::engine::Compiler`] of this crate: [`prepare`] for
/// `opts.engine`, and the interpreter's time for tiering.
pub const COMPILER: gpu::engine::Compiler = gpu::engine::Compiler { prepare: compiler, interpreted };

fn compiler(kernel: &Kernel, d: &Dispatch, opts: &RunOptions) -> (Option<Arc<dyn Compiled>>, Option<String>) {
    let p = prepare(kernel, d, opts, opts.engine);
    (p.compiled.map(|n| n as Arc<dyn Compiled>), p.note)
}

/// Count an interpreted run of `kernel` toward compiling it (`auto` only).
fn interpreted(kernel: &Kernel, opts: &RunOptions, took: std::time::Duration) {
    // (Runs the compiled tier cannot take — the book's, with counters —
    // are not worth hashing the kernel for.)
    if opts.engine != Engine::Auto || gpu::engine::compiled_blocked(kernel, opts).is_some() {
        return;
    }
    if let Ok(mut t) = interpreter_time().lock() {
        if t.len() >= CACHE_LIMIT {
            t.clear();
        }
        *t.entry((kernel_hash(kernel), opts.check as u8)).or_default() += took;
    }
}
