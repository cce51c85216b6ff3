//! The interpreter: runs one threadgroup at a time, every instruction
//! applied to all active lanes (lockstep), divergence handled with masks.
//!
//! Registers are struct-of-arrays (`r32[reg * stride + lane]`). A register
//! whose value is the same in every lane is marked *uniform* and only its
//! lane-0 slot is meaningful: uniform inputs give uniform outputs computed
//! once, which is where loop counters and addresses of shared data go.
//!
//! This file holds the machine's state, the running of one threadgroup
//! and the debugger's stops; `lanes` has lane masks and the threadgroup's
//! geometry, `regs` register access and per-lane maps, `step` the
//! instruction budget and the instructions without control flow (the main
//! loop is in `flow.rs`), `report` findings, tracing and race reports.

use crate::findings::{FindingKind, Findings};
use crate::ir::*;
use crate::memory::Memory;
use crate::sanitizer::Sanitizer;

mod lanes;
mod regs;
mod report;
mod step;

pub use lanes::{uniform_attr, Geometry, LaneIter, Mask, MAX_LANES};
pub use regs::index_value;
pub use regs::width_mask;
pub(crate) use report::{private_shadow, report_race, RaceThreads};

/// How far an instruction stream got.
pub struct Machine<'k> {
    pub k: &'k Kernel,
    pub stride: usize,
    pub n: usize,
    pub r32: Vec<u32>,
    pub r64: Vec<u64>,
    pub u32f: Vec<bool>,
    pub u64f: Vec<bool>,
    pub mem: Memory<'k>,
    pub geo: Geometry,
    pub findings: Findings,
    pub check_memory: bool,
    /// Instructions left before the kernel is declared runaway.
    pub budget: u64,
    pub budget_total: u64,
    pub stopped: bool,
    /// Polled every few thousand instructions; when set, the run stops
    /// without a finding.
    pub cancel: Option<crate::Cancel>,
    /// Atomics of one instruction go last lane first (`RunOptions`).
    pub atomics_last_lane_first: bool,
    /// The current context's control stack (see `flow.rs`).
    pub(crate) frames: Vec<crate::flow::Frame<'k>>,
    /// Contexts stop at `threadgroup_barrier`s (several contexts share the
    /// threadgroup); in lockstep a barrier runs where it stands.
    pub(crate) waits_at_barriers: bool,
    /// The barrier the current context stopped at, with its lanes.
    pub(crate) waiting: Option<(&'k Inst, Mask)>,
    /// Contexts may be asked to make way after atomic operations.
    pub(crate) preempting: bool,
    /// The scheduler's random state (schedule exploration).
    pub(crate) rng: u64,
    /// Run threadgroups under this schedule instead of lockstep.
    pub(crate) schedule: Option<crate::schedule::Schedule>,
    /// Lanes that left a loop with `break`, innermost loop last.
    pub(crate) breaks: Vec<Mask>,
    /// Lanes that returned, innermost inlined function last.
    pub(crate) returns: Vec<Mask>,
    /// All lanes of the threadgroup still running (not returned from the kernel).
    pub alive: Mask,
    /// The most recent loop entered (where a runaway kernel is reported).
    pub(crate) last_loop_span: Option<msl::source::Span>,
    /// Position within the threadgroup of each lane (for the current size).
    local: Vec<[u32; 3]>,
    /// Shadow state when checking races/uninitialized reads or counting.
    pub san: Option<Box<Sanitizer>>,
    /// The compiled tier's detect-only shadow, when compiled code runs
    /// with checks on (it replaces `san`).
    pub(crate) shadows: Option<Box<crate::conflicts::Shadows>>,
    /// Linear number of the current threadgroup (x fastest), which with
    /// the lane makes a thread number (see `tid`).
    pub tg_linear: u32,
    /// The access tracer, when a trace was asked for.
    pub tracer: Option<Box<crate::trace::Tracer>>,
    /// Per-site statistics, when profiling.
    pub profiler: Option<Box<crate::profile::Profiler>>,
    /// `--check nan`: where non-finite values are born (`nan.rs`).
    pub nan: Option<Box<crate::nan::NanTracker>>,
    /// The debugger's watched thread, when debugging.
    pub probe: Option<Box<crate::probe::ProbeRecorder>>,
    /// The interactive debugger's watched thread, stop by stop.
    pub stops: Option<Box<crate::stops::StopRecorder>>,
    /// Shader log messages, when kept.
    pub logger: Option<Box<crate::log::LogRecorder>>,
    /// Whether any of the three observers above is attached (one test per
    /// instruction instead of three).
    observers: bool,
    /// Reusable buffer for dense binary operations (no allocation per op).
    scratch: Vec<u32>,
    /// Enclosing divergent branches: (the `if`, the lanes on the other side,
    /// whether we are in the `else` side). For barrier-divergence reports.
    pub(crate) branches: Vec<(AccessId, Mask, bool)>,
    /// Where each lane returned from the kernel, if it did (empty until one does).
    pub(crate) returned_at: Vec<Option<AccessId>>,
    /// Registers holding values the specification leaves undefined.
    pub(crate) undef: crate::undefined::Marks,
    /// A one-lane machine for a compiled kernel's per-thread evaluations
    /// (`engine::Threadgroup::eval`).
    pub(crate) one_lane: Option<Box<Machine<'k>>>,
    /// Buffers this worker writes in place, in one copy all workers of the
    /// dispatch share (`engine::Threadgroup::shared_output`).
    pub(crate) shared_outputs: Vec<(u32, crate::engine::Region)>,
    /// Different for every machine made in this process: compiled code
    /// keeps what it learnt about a machine's memory while this is the same.
    pub(crate) id: u64,
}

/// The last [`Machine::id`] handed out.
static MACHINES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

impl<'k> Machine<'k> {
    pub fn new(k: &'k Kernel, max_lanes: usize, mem: Memory<'k>, check_memory: bool, budget: u64) -> Machine<'k> {
        let stride = max_lanes.max(1);
        Machine {
            k,
            stride,
            n: 0,
            r32: vec![0; k.n32 as usize * stride],
            r64: vec![0; k.n64 as usize * stride],
            u32f: vec![true; k.n32 as usize],
            u64f: vec![true; k.n64 as usize],
            mem,
            geo: Geometry::default(),
            findings: Findings::default(),
            check_memory,
            budget,
            budget_total: budget,
            stopped: false,
            cancel: None,
            atomics_last_lane_first: false,
            frames: Vec::new(),
            waits_at_barriers: false,
            waiting: None,
            preempting: false,
            rng: 0,
            schedule: None,
            breaks: Vec::new(),
            returns: Vec::new(),
            alive: Mask::empty(),
            last_loop_span: None,
            local: Vec::new(),
            san: None,
            shadows: None,
            tg_linear: 0,
            tracer: None,
            profiler: None,
            nan: None,
            probe: None,
            stops: None,
            logger: None,
            observers: false,
            scratch: Vec::new(),
            branches: Vec::new(),
            returned_at: Vec::new(),
            undef: Default::default(),
            one_lane: None,
            shared_outputs: Vec::new(),
            id: MACHINES.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1,
        }
    }

    /// Run the kernel for the threadgroup described by `geo`, whose linear
    /// number is `linear`.
    pub fn run_threadgroup(&mut self, geo: Geometry, linear: u32) {
        self.begin_threadgroup(geo, linear);
        let k: &'k Kernel = self.k;
        self.frames.clear();
        match self.schedule {
            Some(s) => self.run_serial(&s),
            None => {
                self.frames.push(crate::flow::Frame::Block { insts: &k.body, pc: 0, mask: self.alive });
                self.run_frames();
            }
        }
        self.end_threadgroup();
    }

    /// Reset the per-threadgroup state for the threadgroup `geo` (also
    /// what a compiled kernel starts from, `engine.rs`).
    pub(crate) fn begin_threadgroup(&mut self, geo: Geometry, linear: u32) {
        if geo.tg_size != self.geo.tg_size || self.local.len() != geo.lanes() {
            self.local = (0..geo.lanes()).map(|l| geo.local(l)).collect();
        }
        self.n = geo.lanes();
        self.tg_linear = linear;
        self.geo = geo;
        let private_bytes = self.mem.private.len();
        let n = self.n;
        if let Some(s) = self.san.as_mut() {
            s.start_threadgroup(n, private_bytes);
        }
        if let Some(t) = self.tracer.as_mut() {
            t.start_threadgroup();
        }
        if let Some(p) = self.probe.as_mut() {
            p.start_threadgroup(&geo);
        }
        if let Some(p) = self.stops.as_mut() {
            p.start_threadgroup(&geo);
        }
        if let Some(t) = self.nan.as_mut() {
            t.start_threadgroup();
        }
        self.budget = self.budget_total;
        self.alive = Mask::first(self.n);
        // (Sized when a thread first returns: most threadgroups' stay empty.)
        self.returned_at.clear();
        self.branches.clear();
        if !self.undef.is_empty() {
            self.undef = Default::default();
        }
    }

    /// Where buffer `index` is when the dispatch's workers share one copy
    /// of it (`shared_outputs`).
    pub(crate) fn shared_output(&self, index: u32) -> Option<crate::engine::Region> {
        self.shared_outputs.iter().find(|s| s.0 == index).map(|s| s.1)
    }

    pub(crate) fn end_threadgroup(&mut self) {
        if let Some(s) = self.san.as_mut() {
            s.end_threadgroup();
        }
    }

    /// Recompute `observers` after attaching or removing one.
    pub fn update_observing(&mut self) {
        self.observers =
            self.tracer.is_some() || self.profiler.is_some() || self.probe.is_some() || self.stops.is_some() || self.nan.is_some();
    }

    /// Tell the attached observers about an instruction the lanes in `mask` ran.
    fn observe_inst(&mut self, inst: &Inst, mask: &Mask) {
        if self.stops.is_some() {
            self.stop_access(inst, mask);
        }
        if let Some(p) = self.profiler.as_mut() {
            p.instruction(inst, mask);
        }
        if let (Some(_), Inst::Load { ty, ptr, space, at, .. } | Inst::Store { ty, ptr, space, at, .. }) = (&self.profiler, inst) {
            let lanes: Vec<(usize, u64)> = mask.lanes().map(|l| (l, self.get(*ptr, l))).collect();
            if let Some(p) = self.profiler.as_mut() {
                p.addresses(*at, *space, ty.size() as u64, &lanes);
            }
        }
        // (SIMD-group functions set their provenance lane by lane themselves.)
        if self.tracer.is_some()
            && !matches!(inst, Inst::Load { .. } | Inst::Store { .. } | Inst::MemCopy { .. } | Inst::Atomic { .. } | Inst::Lane { .. })
        {
            let lanes: Vec<usize> = mask.lanes().collect();
            if let Some(t) = self.tracer.as_mut() {
                t.propagate(inst, &lanes);
            }
        }
    }

    /// The lane whose probes are recorded, if it is in `mask`.
    pub(crate) fn watched_lane(&self, mask: &Mask) -> Option<usize> {
        self.probe.as_ref().and_then(|p| p.lane_in(mask)).or_else(|| self.stops.as_ref().and_then(|p| p.lane_in(mask)))
    }

    /// The interactive debugger's stop `site`: the watched thread's locals.
    fn stop(&mut self, site: u32, mask: &Mask) {
        let Some(lane) = self.stops.as_ref().and_then(|p| p.lane_in(mask)) else { return };
        if !self.stops.as_mut().is_some_and(|p| p.room()) {
            return;
        }
        let Some(site) = self.k.stop_sites.get(site as usize) else { return };
        let vars_omitted = site.vars.len().saturating_sub(crate::stops::MAX_VARS);
        let vars =
            site.vars.iter().take(crate::stops::MAX_VARS).map(|v| (v.name.clone(), self.home_text(&v.home, &v.layout, lane))).collect();
        let (simd_active, simd_width) = crate::stops::simd_bits(mask, lane, self.n);
        let record = crate::stops::StopRecord {
            span: site.span,
            depth: site.depth,
            func: site.func.clone(),
            vars,
            vars_omitted,
            simd_active,
            simd_width,
            accesses: Vec::new(),
            accesses_omitted: 0,
            faults: Vec::new(),
            returned: None,
        };
        if let Some(p) = self.stops.as_mut() {
            p.push(record);
        }
    }

    /// The value at `home` read by `layout`, as lane `lane` sees it.
    fn home_text(&self, home: &crate::stops::Home, layout: &crate::stops::Layout, lane: usize) -> String {
        use crate::stops::{Home, Layout};
        match (home, layout) {
            (Home::Regs(r), Layout::SimdMatrix { elem, name }) => {
                // Element e lives in the lane and slot Apple's layout says.
                let (first, n) = (lane / 32 * 32, self.n);
                crate::stops::simd_matrix_text(*elem, name, &|e| {
                    let (l, slot) = crate::ops::matrix_lane_slot(e);
                    let q = first + l;
                    (q < n).then(|| r.get(slot).map(|&reg| self.get(reg, q))).flatten()
                })
            }
            (Home::Regs(r), _) => crate::stops::regs_text(layout, r, &|reg| self.get(reg, lane)),
            (Home::Memory(p), _) => crate::stops::memory_text(layout, &self.mem, *p, lane, &|q, n| self.bytes_written(q, n, lane)),
            (Home::Referee(r), _) => {
                let p = self.get(*r, lane);
                crate::stops::memory_text(layout, &self.mem, p, lane, &|q, n| self.bytes_written(q, n, lane))
            }
        }
    }

    /// A load or store about to run: the watched thread's cell and its neighbours.
    fn stop_access(&mut self, inst: &Inst, mask: &Mask) {
        let (ty, ptr, value, write, at) = match inst {
            Inst::Load { ty, ptr, at, .. } => (*ty, *ptr, None, false, *at),
            Inst::Store { src, ty, ptr, at, .. } => (*ty, *ptr, Some(*src), true, *at),
            _ => return,
        };
        let Some(lane) = self.stops.as_ref().and_then(|p| p.lane_in(mask)) else { return };
        let p = self.get(ptr, lane);
        let Some(name) = crate::stops::alloc_name(self.k, p) else { return };
        let bits = value.map(|r| self.get(r, lane));
        // (The sanitizer names only the first lane of an instruction that
        // reads garbage; the watched thread's own read is known here.)
        let garbage = !write && !self.bytes_written(p, ty.size() as usize, lane);
        let span = self.k.accesses.get(at as usize).map(|a| a.span).unwrap_or(self.k.span);
        let place = (name, crate::stops::alloc_dims(self.k, p, ty.size()), span);
        let a = crate::stops::access_of(&self.mem, place, write, ty, p, bits, lane, &|q, n| self.bytes_written(q, n, lane));
        if let Some(s) = self.stops.as_mut() {
            if garbage {
                s.fault(lane, FindingKind::UninitializedRead.name(), &format!("reads `{}` before it was written (garbage)", a.place()));
            }
            s.access(a);
        }
    }
}
