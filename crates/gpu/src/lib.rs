//! A simulated Apple GPU for Metal compute kernels.
//!
//! [`lower::lower_kernel`] turns a checked kernel into IR; [`run`]
//! dispatches it: threadgroups one after another, or split over workers
//! with a deterministic merge (`parallel`); the threads of a threadgroup in
//! lockstep as lanes, SIMD-groups of 32.

pub mod access;
mod cells;
pub mod conflicts;
pub mod engine;
pub mod exec;
pub mod findings;
mod flow;
pub mod ir;
pub mod log;
pub mod lower;
pub mod memory;
pub mod nan;
mod ops;
mod parallel;
pub mod probe;
pub mod profile;
pub mod sanitizer;
pub mod schedule;
pub mod stops;
pub mod trace;
pub mod undefined;

pub use findings::{Finding, FindingKind};
pub use ir::Kernel;

use exec::{Geometry, Machine};
use ir::ParamKind;
use memory::{ptr_bits, Memory};
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// A flag another thread sets to stop a running dispatch at once (a live
/// screen abandoning a check the learner no longer wants). The simulator
/// polls it every few thousand instructions; a cancelled run is marked
/// [`RunReport::cancelled`] and its results mean nothing.
#[derive(Clone, Debug, Default)]
pub struct Cancel(Arc<AtomicBool>);

impl Cancel {
    pub fn new() -> Cancel {
        Cancel::default()
    }

    pub fn cancel(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// Apple GPU limits.
pub const MAX_THREADS_PER_THREADGROUP: u32 = 1024;
pub const MAX_THREADGROUP_MEMORY: u64 = 32 * 1024;
pub const SIMD_WIDTH: u32 = 32;
/// Instructions one threadgroup may run before the kernel counts as
/// runaway, unless a caller sets its own (the puzzle book does): about 3 s
/// for a 32-thread `while (true)` in a release build.
pub const DEFAULT_BUDGET: u64 = 10_000_000;
/// Grids beyond this many threads (2^28, a 16384 x 16384 image) are
/// refused up front: the simulator runs some million threads a second, so a
/// bigger grid would run for minutes with nothing to show.
pub const MAX_GRID_THREADS: u64 = 1 << 28;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CheckLevel {
    /// No checks beyond what keeps the simulator safe.
    None,
    /// Out-of-bounds, uninitialized reads, barrier divergence, runaway loops.
    Memory,
    /// Memory checks plus data races.
    All,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DispatchMode {
    /// `dispatchThreads`: the grid counts threads; edge threadgroups may be partial.
    Threads,
    /// `dispatchThreadgroups`: the grid counts threadgroups, all full.
    Threadgroups,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dispatch {
    pub grid: [u32; 3],
    pub threadgroup: [u32; 3],
    pub mode: DispatchMode,
}

impl Dispatch {
    /// The grid in threads (x, y, z).
    pub fn grid_threads(&self) -> [u32; 3] {
        geometry(self).grid_threads
    }
}

#[derive(Clone, Debug)]
pub struct RunOptions {
    pub check: CheckLevel,
    /// Instructions one threadgroup may execute before the kernel counts
    /// as runaway (each instruction covers all lanes of the threadgroup).
    pub budget: u64,
    /// Sizes of `[[threadgroup(n)]]` buffers by index.
    pub threadgroup_buffers: BTreeMap<u32, u32>,
    /// Count per-thread memory operations (`RunReport::max_counts`).
    pub count: bool,
    /// Buffers whose reads are not counted (MLX's shape/stride metadata).
    pub uncounted_buffers: Vec<u32>,
    /// Record an access trace with provenance, keeping at most this many events.
    pub trace: Option<usize>,
    /// Buffers whose contents are garbage until written (MLX outputs
    /// without `init_value`): reading an unwritten byte is a finding.
    pub uninitialized_buffers: Vec<u32>,
    /// Worker threads for the threadgroups: 0 picks by itself (two for
    /// large dispatches that allow it, on every machine), 1 runs them in
    /// order. Race-free kernels give the same result with any number.
    pub threads: usize,
    /// Count per-site statistics (`RunReport::profile`); the kernel should
    /// be lowered with statement marks (`lower::LowerOptions`).
    pub profile: bool,
    /// Record the probes of this thread, keeping at most this many values.
    pub probe: Option<([u32; 3], usize)>,
    /// Record this thread stop by stop, at most this many stops (the
    /// kernel should be lowered with `lower::LowerOptions::debug_stops`).
    pub stops: Option<([u32; 3], usize)>,
    /// Keep the messages of shader logging (`RunReport::logs`; `None`: drop them).
    pub log: Option<log::LogOptions>,
    /// Stop early when this is cancelled.
    pub cancel: Option<Cancel>,
    /// Apply the lanes of one atomic instruction last lane first instead of
    /// first lane first. Hardware promises no order, so a kernel whose
    /// result depends on it (e.g. ranks taken from an atomic counter, which
    /// makes a scatter unstable) gives a different answer under one of the
    /// two; the puzzle book runs with this set.
    pub atomics_last_lane_first: bool,
    /// Other legal schedules to run the dispatch under when its atomics may
    /// be order-sensitive (`schedule.rs`); 0 turns exploration off. Needs
    /// `check: All`.
    pub schedules: usize,
    /// Run under this schedule instead of lockstep (what exploration runs use).
    pub schedule: Option<schedule::Schedule>,
    /// Outputs of two schedules that differ by no more than this (floats:
    /// `|a - b| <= atol + rtol * |b|`) differ only by rounding.
    pub schedule_tolerance: (f64, f64),
    /// `--check nan`: trace where non-finite values are born
    /// (`RunReport::nan`); the kernel should be lowered with statement marks.
    pub nan: bool,
    /// The kernel compiled (crates/jit), to run its threadgroups where
    /// nothing observes them (`engine.rs`); the interpreter otherwise.
    pub compiled: Option<Arc<dyn engine::Compiled>>,
    /// Which engine the caller wants; `compiler` makes the compiled
    /// kernel when it is not `Interp` and `compiled` is not given.
    pub engine: engine::Engine,
    pub compiler: Option<engine::Compiler>,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            check: CheckLevel::All,
            budget: DEFAULT_BUDGET,
            threadgroup_buffers: BTreeMap::new(),
            count: false,
            uncounted_buffers: Vec::new(),
            uninitialized_buffers: Vec::new(),
            trace: None,
            threads: 0,
            profile: false,
            probe: None,
            stops: None,
            log: None,
            cancel: None,
            atomics_last_lane_first: false,
            schedules: 2,
            schedule: None,
            schedule_tolerance: (1e-4, 1e-5),
            compiled: None,
            engine: engine::Engine::default(),
            compiler: None,
            nan: false,
        }
    }
}

/// What a dispatch produced besides the buffer contents.
#[derive(Debug, Default)]
pub struct RunReport {
    pub findings: Vec<Finding>,
    /// Why a run that asked for the compiled tier ran interpreted.
    pub engine_note: Option<String>,
    pub threadgroups: u64,
    pub threads: u64,
    /// Per-thread maxima of memory operations (when counting was asked for).
    pub max_counts: Option<sanitizer::Counts>,
    /// The access trace (when asked for).
    pub trace: Option<trace::Trace>,
    /// Per-site statistics (when asked for).
    pub profile: Option<profile::Profile>,
    /// Where the non-finite outputs came from (`RunOptions::nan`).
    pub nan: Option<nan::NanReport>,
    /// What the watched thread's probes saw (when asked for).
    pub probes: Option<probe::ProbeLog>,
    /// Where the kernel's probes are (`ProbeHit::probe` indexes it), when
    /// probes or stops were recorded.
    pub probe_sites: Vec<msl::probe::ProbeSite>,
    /// The watched thread stop by stop (when asked for).
    pub stops: Option<stops::StopLog>,
    /// Shader log messages (when asked for and the kernel logs).
    pub logs: Option<log::LogOutput>,
    /// The run was cancelled through [`RunOptions::cancel`]: it stopped
    /// part way, and its outputs and findings mean nothing.
    pub cancelled: bool,
    /// For each buffer that started uninitialized
    /// ([`RunOptions::uninitialized_buffers`]), which of its bytes the
    /// kernel wrote (when checks were on): the others still hold garbage.
    pub written: BTreeMap<u32, Vec<bool>>,
    /// Unordered atomic operations whose order may change the result.
    pub order_pairs: Vec<sanitizer::OrderPair>,
    /// Other schedules the dispatch was run under (see `schedule.rs`).
    pub schedules_explored: usize,
}

impl RunReport {
    pub fn has_errors(&self) -> bool {
        self.findings.iter().any(|f| f.is_error)
    }
}

fn invalid(message: String) -> RunReport {
    RunReport {
        findings: vec![Finding {
            kind: FindingKind::InvalidDispatch,
            is_error: true,
            message,
            span: Default::default(),
            secondary: None,
            thread: [0; 3],
            local: [0; 3],
            threadgroup: [0; 3],
            count: 1,
            examples: Vec::new(),
            notes: Vec::new(),
        }],
        ..Default::default()
    }
}

/// Check a dispatch's sizes alone (no kernel needed: captures are checked
/// with it before anything runs); returns the threads per threadgroup.
pub fn check_dispatch(d: &Dispatch) -> Result<u64, String> {
    if d.grid.contains(&0) || d.threadgroup.contains(&0) {
        return Err(format!("grid {:?} and threadgroup {:?} must have every dimension at least 1", d.grid, d.threadgroup));
    }
    let tg_threads = d.threadgroup.iter().map(|&x| x as u64).product::<u64>();
    if tg_threads > MAX_THREADS_PER_THREADGROUP as u64 {
        return Err(format!(
            "a threadgroup of {}x{}x{} = {tg_threads} threads is over Apple GPUs' limit of {MAX_THREADS_PER_THREADGROUP} threads per threadgroup",
            d.threadgroup[0], d.threadgroup[1], d.threadgroup[2]
        ));
    }
    // Products are checked: a grid of 2^22 x 2^22 x 2^20 threads wraps a
    // 64-bit product to 0 and would silently run nothing.
    let mut total: u64 = 1;
    for i in 0..3 {
        let threads = match d.mode {
            DispatchMode::Threads => d.grid[i] as u64,
            DispatchMode::Threadgroups => d.grid[i] as u64 * d.threadgroup[i] as u64,
        };
        // Kernels see grid sizes as 32-bit values (`threads_per_grid`).
        if threads > u32::MAX as u64 {
            return Err(format!(
                "dimension {} of the grid has {threads} threads; a grid dimension holds at most {} (a 32-bit `uint`)",
                ["x", "y", "z"][i],
                u32::MAX
            ));
        }
        total = match total.checked_mul(threads) {
            Some(t) if t <= MAX_GRID_THREADS => t,
            _ => {
                return Err(format!(
                    "the grid {}x{}x{} has more than {MAX_GRID_THREADS} threads, the most the simulator runs (it would take far too long)",
                    d.grid[0], d.grid[1], d.grid[2]
                ))
            }
        };
    }
    Ok(tg_threads)
}

/// Check the dispatch against Apple's limits; the error explains the limit.
pub fn validate(kernel: &Kernel, d: &Dispatch, opts: &RunOptions) -> Result<(), String> {
    let tg_threads = check_dispatch(d)?;
    let tg_mem: u64 = kernel.threadgroup_vars.iter().map(|v| v.size as u64).sum::<u64>()
        + opts.threadgroup_buffers.values().map(|&s| s as u64).sum::<u64>();
    if tg_mem > MAX_THREADGROUP_MEMORY {
        return Err(format!(
            "the kernel uses {tg_mem} bytes of threadgroup memory; Apple GPUs allow {MAX_THREADGROUP_MEMORY} (32 KiB) per threadgroup"
        ));
    }
    let regs = (kernel.n32 as u64 * 4 + kernel.n64 as u64 * 8).saturating_mul(tg_threads);
    if regs > 1 << 30 {
        return Err(format!(
            "the kernel is too large to simulate with {tg_threads} threads per threadgroup ({} values per thread); use a smaller threadgroup",
            kernel.n32 as u64 + kernel.n64 as u64
        ));
    }
    if let Some(log) = &opts.log {
        log.check_filters(&kernel.log_origins)?;
    }
    let private: u64 = kernel.private_vars.iter().map(|v| v.size as u64).sum();
    if private > 64 * 1024 {
        return Err(format!("each thread uses {private} bytes of private memory; the simulator allows 64 KiB per thread"));
    }
    Ok(())
}

/// Run `kernel` over the dispatch. `buffers` maps `[[buffer(n)]]` indices
/// to their bytes; outputs are written in place.
pub fn run(kernel: &Kernel, d: &Dispatch, buffers: &mut BTreeMap<u32, Vec<u8>>, opts: &RunOptions) -> RunReport {
    run_with_progress(kernel, d, buffers, opts, &mut |_, _| {})
}

/// Whether `opts` carries a cancel flag that was set.
fn cancelled(opts: &RunOptions) -> bool {
    opts.cancel.as_ref().is_some_and(Cancel::is_cancelled)
}

/// Like [`run`], calling `progress(done, total)` threadgroups now and then.
pub fn run_with_progress(
    kernel: &Kernel,
    d: &Dispatch,
    buffers: &mut BTreeMap<u32, Vec<u8>>,
    opts: &RunOptions,
    progress: &mut dyn FnMut(u64, u64),
) -> RunReport {
    run_kept(kernel, d, buffers, opts, progress, None)
}

/// The contents of a dispatch's buffers as it begins, by index, kept by
/// the caller: `buffers` was copied from them. Compiled code may then
/// write an output in place (no copy of its initial contents first), and
/// should it give up, the buffer is restored from here.
pub type Pristine<'p> = BTreeMap<u32, &'p [u8]>;

/// [`run_with_progress`] on `buffers` equal to `pristine` (see [`Pristine`]).
pub fn run_from_pristine(
    kernel: &Kernel,
    d: &Dispatch,
    buffers: &mut BTreeMap<u32, Vec<u8>>,
    opts: &RunOptions,
    progress: &mut dyn FnMut(u64, u64),
    pristine: &Pristine,
) -> RunReport {
    run_kept(kernel, d, buffers, opts, progress, Some(pristine))
}

fn run_kept(
    kernel: &Kernel,
    d: &Dispatch,
    buffers: &mut BTreeMap<u32, Vec<u8>>,
    opts: &RunOptions,
    progress: &mut dyn FnMut(u64, u64),
    pristine: Option<&Pristine>,
) -> RunReport {
    if let Err(e) = validate(kernel, d, opts) {
        return invalid(e);
    }
    if let (None, Some(compiler), false) = (&opts.compiled, opts.compiler, opts.engine == engine::Engine::Interp) {
        let (compiled, note) = (compiler.prepare)(kernel, d, opts);
        let interpreted = compiled.is_none();
        let with = RunOptions { compiled, compiler: None, ..opts.clone() };
        let started = std::time::Instant::now();
        let mut report = run_kept(kernel, d, buffers, &with, progress, pristine);
        if interpreted {
            (compiler.interpreted)(kernel, opts, started.elapsed());
        }
        report.engine_note = note;
        return report;
    }
    if let Some(c) = &opts.compiled {
        // (Exploring schedules needs the interpreter's runs.)
        let explores = schedule::worth_exploring(kernel, d, opts) && sanitizer::atomics_order_sensitive(kernel);
        if engine::compiled_blocked(kernel, opts).is_none() && c.checks() == opts.check && !explores {
            if let Some(report) = engine::run_compiled(kernel, d, buffers, opts, progress, pristine) {
                return report;
            }
        }
        let interpreted = RunOptions { compiled: None, ..opts.clone() };
        return run_with_progress(kernel, d, buffers, &interpreted, progress);
    }
    let initial = schedule::worth_exploring(kernel, d, opts).then(|| buffers.clone());
    let mut report = run_lockstep(kernel, d, buffers, opts, progress);
    if let Some(initial) = initial {
        schedule::explore(kernel, d, initial, buffers, opts, &mut report);
    }
    report
}

/// One run of the dispatch under `opts.schedule` (lockstep when `None`).
pub(crate) fn run_lockstep(
    kernel: &Kernel,
    d: &Dispatch,
    buffers: &mut BTreeMap<u32, Vec<u8>>,
    opts: &RunOptions,
    progress: &mut dyn FnMut(u64, u64),
) -> RunReport {
    let dispatch = geometry(d);
    let groups = dispatch.groups;
    let total_groups = groups.iter().map(|&g| g as u64).product::<u64>();
    let workers = parallel::workers(kernel, opts, total_groups, dispatch.lanes_requested(), buffers);
    if workers <= 1 {
        let owned = std::mem::take(buffers).into_iter().map(|(i, b)| (i, Cow::Owned(b))).collect();
        let mut done = 0u64;
        let mut tick = |n: u64| {
            done += n;
            progress(done, total_groups);
            true
        };
        let mut part = run_part(kernel, &dispatch, owned, Vec::new(), opts, 0..total_groups, &mut tick);
        for (i, b) in part.buffers.drain(..).enumerate() {
            if let Some(b) = b {
                buffers.insert(i as u32, b.into_owned());
            }
        }
        part.report.findings = part.findings.list;
        part.report.cancelled = cancelled(opts);
        return part.report;
    }
    // (Only a compiled run gives up, and this one is interpreted.)
    let mut report = parallel::run(kernel, &dispatch, buffers, opts, workers, progress, None).unwrap_or_default();
    report.cancelled = cancelled(opts);
    report
}

/// The threadgroups and threads of a dispatch.
pub(crate) fn geometry(d: &Dispatch) -> Geometry {
    let tg = d.threadgroup;
    let (groups, grid_threads) = match d.mode {
        DispatchMode::Threads => ([0, 1, 2].map(|i| d.grid[i].div_ceil(tg[i])), d.grid),
        DispatchMode::Threadgroups => (d.grid, [0, 1, 2].map(|i| d.grid[i].saturating_mul(tg[i]))),
    };
    Geometry { grid_threads, groups, requested_tg: tg, ..Default::default() }
}

/// What running some of a dispatch's threadgroups left behind.
pub(crate) struct Part<'a> {
    pub buffers: Vec<Option<Cow<'a, [u8]>>>,
    pub report: RunReport,
    pub san: Option<Box<sanitizer::Sanitizer>>,
    /// The compiled tier's shadow (compiled code with checks on).
    pub shadows: Option<Box<conflicts::Shadows>>,
    pub findings: findings::Findings,
    pub stopped: bool,
    /// The compiled kernel could not vouch for a threadgroup (`engine.rs`).
    pub gave_up: bool,
}

/// Run the threadgroups numbered `range` (x fastest) one after another on
/// `buffers`. `tick(n)` is called after every few threadgroups; it returns
/// false to abandon the run.
pub(crate) fn run_part<'a>(
    kernel: &'a Kernel,
    dispatch: &Geometry,
    buffers: BTreeMap<u32, Cow<'a, [u8]>>,
    shared_outputs: Vec<(u32, engine::Region)>,
    opts: &RunOptions,
    range: std::ops::Range<u64>,
    tick: &mut dyn FnMut(u64) -> bool,
) -> Part<'a> {
    let lanes = dispatch.lanes_requested();
    let mut m = Machine::new(kernel, lanes, memory_for(kernel, opts, lanes, buffers), opts.check != CheckLevel::None, opts.budget);
    m.shared_outputs = shared_outputs;
    m.cancel = opts.cancel.clone();
    m.schedule = opts.schedule;
    m.rng = opts.schedule.map_or(0, |s| s.seed);
    m.atomics_last_lane_first = opts.atomics_last_lane_first;
    // Compiled code with checks on keeps its own detect-only shadow.
    let compiled_checks = opts.compiled.is_some() && opts.check != CheckLevel::None;
    if compiled_checks {
        // (A shared output written in place is not among the worker's buffers.)
        let buffer_len = |i: u32| match m.shared_output(i) {
            Some(r) => r.len as usize,
            None => m.mem.buffers.get(i as usize).and_then(|b| b.as_ref()).map_or(0, |b| b.len()),
        };
        let tgb: Vec<usize> = m.mem.tg_buffers.iter().map(|b| b.len()).collect();
        m.shadows = Some(Box::new(conflicts::Shadows::new(kernel, &buffer_len, &tgb)));
    } else {
        m.san = sanitizer_for(kernel, opts, &m.mem, lanes);
    }
    if let Some(limit) = opts.trace {
        m.tracer = Some(Box::new(trace::Tracer::new(kernel.n32 as usize, kernel.n64 as usize, lanes, limit)));
    }
    if opts.profile {
        m.profiler = Some(Box::new(profile::Profiler::new(kernel.accesses.len())));
    }
    if opts.nan {
        m.nan = Some(Box::new(nan::NanTracker::new()));
    }
    if let Some((thread, limit)) = opts.probe {
        m.probe = Some(Box::new(probe::ProbeRecorder::new(thread, limit)));
    }
    if let Some((thread, limit)) = opts.stops {
        m.stops = Some(Box::new(stops::StopRecorder::new(thread, limit)));
    }
    if let (Some(o), true) = (opts.log.clone(), kernel.logs) {
        m.logger = Some(Box::new(log::LogRecorder::new(o)));
    }
    m.update_observing();
    let mut report = RunReport::default();
    let mut since_tick = 0u64;
    let mut gave_up = false;
    for linear in schedule::threadgroup_order(opts.schedule.as_ref(), range) {
        let geo = dispatch.for_group(linear);
        // Fresh threadgroup and private memory for each threadgroup.
        for b in &mut m.mem.threadgroup {
            b.fill(0);
        }
        for b in &mut m.mem.tg_buffers {
            b.fill(0);
        }
        // (An empty fill still costs a call to `memset`, per threadgroup.)
        if !m.mem.private.is_empty() {
            m.mem.private.fill(0);
        }
        for (reg, id) in kernel.params.iter().filter_map(|p| p.kind.memory()) {
            m.set_uniform_pub(reg, ptr_bits(id, 0));
        }
        report.threads += geo.lanes() as u64;
        match &opts.compiled {
            Some(c) => {
                m.begin_threadgroup(geo, linear as u32);
                let private_bytes = m.mem.private.len();
                let started = m.shadows.as_mut().is_none_or(|s| s.start_threadgroup(private_bytes));
                let vouched = started && c.run_threadgroup(&mut engine::Threadgroup { m: &mut m });
                m.end_threadgroup();
                // (With checks on, anything reported by the interpreter's
                // code the compiled code called makes the interpreter
                // rerun the dispatch: its report is the one to give.)
                if !vouched || (compiled_checks && !m.findings.list.is_empty()) {
                    if let Some(s) = m.shadows.as_mut() {
                        s.all_touched();
                    }
                    gave_up = true;
                    break;
                }
            }
            None => m.run_threadgroup(geo, linear as u32),
        }
        report.threadgroups += 1;
        since_tick += 1;
        if since_tick == 256 {
            since_tick = 0;
            if !tick(256) {
                break;
            }
        }
        if m.stopped {
            break;
        }
        if cancelled(opts) {
            m.stopped = true;
            break;
        }
    }
    tick(since_tick);
    report.trace = m.tracer.take().map(|t| t.trace);
    let tg_mem = kernel.threadgroup_vars.iter().map(|v| v.size as u64).sum::<u64>()
        + opts.threadgroup_buffers.values().map(|&s| s as u64).sum::<u64>();
    let tg_threads = lanes as u64;
    report.profile = m.profiler.take().map(|p| p.finish(kernel, tg_mem, tg_threads));
    report.probes = m.probe.take().map(|p| p.log);
    report.nan = m.nan.take().map(|t| t.report);
    report.stops = m.stops.take().map(|p| p.log);
    if report.probes.is_some() || report.stops.is_some() {
        report.probe_sites = kernel.probe_sites.clone();
    }
    report.logs = m.logger.take().map(|l| l.out);
    report.max_counts = m.san.as_ref().filter(|s| s.counting).map(|s| s.max_counts);
    if let Some(s) = m.san.as_mut() {
        report.written = std::mem::take(&mut s.device_written).into_iter().collect();
        report.order_pairs = std::mem::take(&mut s.order_pairs);
    }
    Part {
        buffers: std::mem::take(&mut m.mem.buffers),
        report,
        san: m.san.take(),
        shadows: m.shadows.take(),
        findings: std::mem::take(&mut m.findings),
        stopped: m.stopped,
        gave_up,
    }
}

/// One worker's memory: the bound buffers plus fresh threadgroup,
/// program-constant and per-lane private memory.
fn memory_for<'a>(kernel: &Kernel, opts: &RunOptions, lanes: usize, buffers: BTreeMap<u32, Cow<'a, [u8]>>) -> Memory<'a> {
    let mut mem = Memory::default();
    let max_index = buffers.keys().copied().max().map(|m| m as usize + 1).unwrap_or(0);
    mem.buffers = vec![None; max_index.max(31)];
    for (i, b) in buffers {
        if let Some(slot) = mem.buffers.get_mut(i as usize) {
            *slot = Some(b);
        }
    }
    mem.constants = kernel.constants.iter().map(|(_, b)| b.clone()).collect();
    mem.threadgroup = kernel.threadgroup_vars.iter().map(|v| vec![0u8; v.size as usize]).collect();
    let max_tg = opts.threadgroup_buffers.keys().copied().max().map(|m| m as usize + 1).unwrap_or(0);
    mem.tg_buffers = vec![Vec::new(); max_tg];
    for (&i, &size) in &opts.threadgroup_buffers {
        mem.tg_buffers[i as usize] = vec![0u8; size as usize];
    }
    let mut frame = 0usize;
    for v in &kernel.private_vars {
        let a = v.align.max(1) as usize;
        frame = frame.div_ceil(a) * a;
        mem.private_offsets.push(frame as u32);
        mem.private_sizes.push(v.size);
        frame += v.size as usize;
    }
    let frame = frame.div_ceil(16) * 16;
    mem.frame = frame;
    mem.private = vec![0u8; frame * lanes];
    mem
}

/// Shadow state for the checks and counters asked for (none without them).
fn sanitizer_for(kernel: &Kernel, opts: &RunOptions, mem: &Memory, lanes: usize) -> Option<Box<sanitizer::Sanitizer>> {
    if opts.check == CheckLevel::None && !opts.count {
        return None;
    }
    let buffer_len = |i: u32| mem.buffers.get(i as usize).and_then(|b| b.as_ref()).map(|b| b.len()).unwrap_or(0);
    let mut san = sanitizer::Sanitizer::new(opts.check == CheckLevel::All, opts.check != CheckLevel::None, opts.count);
    if opts.check == CheckLevel::All {
        for p in &kernel.params {
            if let ParamKind::Buffer { index, writable: true, pointee, .. } = &p.kind {
                san.track_device(*index, buffer_len(*index), element_size(pointee));
            }
        }
    }
    san.uncounted = opts.uncounted_buffers.clone();
    if opts.check == CheckLevel::All {
        san.atomic_sites = ir::atomic_sites(kernel);
    }
    san.lanes_per_threadgroup = lanes as u32;
    if opts.check != CheckLevel::None {
        for &i in &opts.uninitialized_buffers {
            san.track_uninitialized(i, buffer_len(i));
        }
    }
    let tg_sizes: Vec<(usize, u32)> = kernel.threadgroup_vars.iter().map(|v| (v.size as usize, v.grain)).collect();
    let tgb: Vec<usize> = mem.tg_buffers.iter().map(|b| b.len()).collect();
    san.set_threadgroup_sizes(&tg_sizes, &tgb);
    Some(Box::new(san))
}

/// Size of the scalars a buffer's elements are made of (the sanitizer's grain).
pub(crate) fn element_size(t: &msl::types::Type) -> u32 {
    use msl::types::Type;
    match t {
        Type::Scalar(s) | Type::Atomic(s) => s.size(),
        Type::Vector { elem, .. } | Type::Matrix { elem, .. } => elem.size(),
        Type::Array { elem, .. } => element_size(elem),
        _ => 1,
    }
}
