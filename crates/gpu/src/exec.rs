//! The interpreter: runs one threadgroup at a time, every instruction
//! applied to all active lanes (lockstep), divergence handled with masks.
//!
//! Registers are struct-of-arrays (`r32[reg * stride + lane]`). A register
//! whose value is the same in every lane is marked *uniform* and only its
//! lane-0 slot is meaningful: uniform inputs give uniform outputs computed
//! once, which is where loop counters and addresses of shared data go.

use crate::findings::{xyz, FindingKind, Findings};
use crate::ir::Reg;
use crate::ir::*;
use crate::memory::AllocKind;
use crate::memory::{ptr_add, ptr_offset, Memory};
use crate::sanitizer::{Race, Sanitizer};
use msl::hir::ThreadAttr;
use msl::types::Scalar;

pub const MAX_LANES: usize = 1024;
const WORDS: usize = MAX_LANES / 64;

/// A set of lanes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Mask {
    pub(crate) w: [u64; WORDS],
}

impl Mask {
    pub fn empty() -> Mask {
        Mask { w: [0; WORDS] }
    }
    pub fn first(n: usize) -> Mask {
        let mut m = Mask::empty();
        for i in 0..WORDS {
            let lo = i * 64;
            if n >= lo + 64 {
                m.w[i] = !0;
            } else if n > lo {
                m.w[i] = (1u64 << (n - lo)) - 1;
            }
        }
        m
    }
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.w.iter().all(|&x| x == 0)
    }
    #[inline]
    pub fn get(&self, l: usize) -> bool {
        self.w[l >> 6] >> (l & 63) & 1 == 1
    }
    #[inline]
    pub fn set(&mut self, l: usize, v: bool) {
        if v {
            self.w[l >> 6] |= 1 << (l & 63);
        } else {
            self.w[l >> 6] &= !(1 << (l & 63));
        }
    }
    pub fn and(&self, o: &Mask) -> Mask {
        let mut m = *self;
        for i in 0..WORDS {
            m.w[i] &= o.w[i];
        }
        m
    }
    pub fn and_not(&self, o: &Mask) -> Mask {
        let mut m = *self;
        for i in 0..WORDS {
            m.w[i] &= !o.w[i];
        }
        m
    }
    pub fn or(&self, o: &Mask) -> Mask {
        let mut m = *self;
        for i in 0..WORDS {
            m.w[i] |= o.w[i];
        }
        m
    }
    pub fn count(&self) -> u32 {
        self.w.iter().map(|x| x.count_ones()).sum()
    }
    /// Iterate over set lanes in increasing order.
    #[inline]
    pub fn lanes(&self) -> LaneIter<'_> {
        LaneIter { words: &self.w, index: 0, bits: self.w[0] }
    }
}

/// The set lanes of a mask, lowest first.
pub struct LaneIter<'m> {
    words: &'m [u64; WORDS],
    index: usize,
    bits: u64,
}

impl Iterator for LaneIter<'_> {
    type Item = usize;

    #[inline]
    fn next(&mut self) -> Option<usize> {
        while self.bits == 0 {
            self.index += 1;
            if self.index >= WORDS {
                return None;
            }
            self.bits = self.words[self.index];
        }
        let t = self.bits.trailing_zeros() as usize;
        self.bits &= self.bits - 1;
        Some(self.index * 64 + t)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let rest: u32 = self.words.get(self.index + 1..).unwrap_or(&[]).iter().map(|w| w.count_ones()).sum();
        let n = (self.bits.count_ones() + rest) as usize;
        (n, Some(n))
    }
}

/// Geometry of the threadgroup being run.
#[derive(Clone, Copy, Debug, Default)]
pub struct Geometry {
    pub grid_threads: [u32; 3],
    pub groups: [u32; 3],
    pub requested_tg: [u32; 3],
    pub tg_pos: [u32; 3],
    pub tg_size: [u32; 3],
}

impl Geometry {
    /// Where global thread `t` sits in this threadgroup: its position in
    /// the threadgroup and its lane (linear index), or None if it is not here.
    pub fn local_lane(&self, t: [u32; 3]) -> Option<([u32; 3], usize)> {
        let inside = (0..3).all(|d| {
            let lo = self.tg_pos[d] as u64 * self.requested_tg[d] as u64;
            (t[d] as u64) >= lo && (t[d] as u64) < lo + self.tg_size[d] as u64
        });
        inside.then(|| {
            let local = [0, 1, 2].map(|d| t[d] - self.tg_pos[d] * self.requested_tg[d]);
            (local, (local[0] + self.tg_size[0] * (local[1] + self.tg_size[1] * local[2])) as usize)
        })
    }

    /// The threadgroup numbered `linear` (x fastest) of this dispatch;
    /// edge threadgroups of `dispatchThreads` are partial.
    pub fn for_group(&self, linear: u64) -> Geometry {
        let [gx, gy, _] = self.groups.map(|g| g.max(1) as u64);
        let pos = [linear % gx, (linear / gx) % gy, linear / (gx * gy)].map(|v| v as u32);
        let size = [0, 1, 2].map(|d| self.requested_tg[d].min(self.grid_threads[d].saturating_sub(pos[d] * self.requested_tg[d])));
        Geometry { tg_pos: pos, tg_size: size, ..*self }
    }

    /// Global position of the thread numbered `tid` (threadgroup number
    /// times the threads of a full threadgroup, plus lane, plus one), and
    /// of its threadgroup.
    pub fn thread_of(&self, tid: u32) -> ([u32; 3], [u32; 3]) {
        let t = tid.saturating_sub(1) as u64;
        let stride = self.lanes_requested().max(1) as u64;
        let g = self.for_group(t / stride);
        (g.global((t % stride) as usize), g.tg_pos)
    }

    /// Threads of a full threadgroup.
    pub fn lanes_requested(&self) -> usize {
        self.requested_tg.iter().map(|&x| x as usize).product()
    }

    pub fn lanes(&self) -> usize {
        (self.tg_size[0] * self.tg_size[1] * self.tg_size[2]) as usize
    }

    /// Position of lane `l` within its threadgroup.
    pub fn local(&self, l: usize) -> [u32; 3] {
        let l = l as u32;
        let (x, y) = (self.tg_size[0], self.tg_size[1]);
        [l % x, (l / x) % y, l / (x * y)]
    }

    pub fn global(&self, l: usize) -> [u32; 3] {
        let loc = self.local(l);
        [0, 1, 2].map(|d| self.tg_pos[d] * self.requested_tg[d] + loc[d])
    }

    fn attr(&self, attr: ThreadAttr, comp: u8, l: usize) -> u32 {
        use ThreadAttr::*;
        let c = comp as usize;
        let n = self.lanes() as u32;
        let req = self.requested_tg[0] * self.requested_tg[1] * self.requested_tg[2];
        match attr {
            ThreadPositionInGrid => self.global(l)[c],
            ThreadPositionInThreadgroup => self.local(l)[c],
            ThreadgroupPositionInGrid => self.tg_pos[c],
            ThreadsPerThreadgroup => self.tg_size[c],
            DispatchThreadsPerThreadgroup => self.requested_tg[c],
            ThreadsPerGrid | GridSize => self.grid_threads[c],
            ThreadgroupsPerGrid => self.groups[c],
            GridOrigin => 0,
            ThreadIndexInThreadgroup => l as u32,
            ThreadIndexInSimdgroup => l as u32 % 32,
            ThreadIndexInQuadgroup => l as u32 % 4,
            SimdgroupIndexInThreadgroup => l as u32 / 32,
            SimdgroupsPerThreadgroup => n.div_ceil(32),
            DispatchSimdgroupsPerThreadgroup => req.div_ceil(32),
            QuadgroupIndexInThreadgroup => l as u32 / 4,
            QuadgroupsPerThreadgroup => n.div_ceil(4),
            DispatchQuadgroupsPerThreadgroup => req.div_ceil(4),
            ThreadExecutionWidth | ThreadsPerSimdgroup => 32,
        }
    }
}

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
    /// Where each lane returned from the kernel, if it did.
    pub(crate) returned_at: Vec<Option<AccessId>>,
    /// Registers holding values the specification leaves undefined.
    pub(crate) undef: crate::undefined::Marks,
}

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
        }
    }

    /// Run the kernel for the threadgroup described by `geo`, whose linear
    /// number is `linear`.
    pub fn run_threadgroup(&mut self, geo: Geometry, linear: u32) {
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
        self.returned_at.clear();
        self.returned_at.resize(self.n, None);
        self.branches.clear();
        self.undef = Default::default();
        let k: &'k Kernel = self.k;
        self.frames.clear();
        match self.schedule {
            Some(s) => self.run_serial(&s),
            None => {
                self.frames.push(crate::flow::Frame::Block { insts: &k.body, pc: 0, mask: self.alive });
                self.run_frames();
            }
        }
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

    // ----- register access ---------------------------------------------------

    #[inline]
    fn get(&self, r: Reg, l: usize) -> u64 {
        match r {
            Reg::W32(i) => {
                let i = i as usize;
                let l = if self.u32f[i] { 0 } else { l };
                self.r32[i * self.stride + l] as u64
            }
            Reg::W64(i) => {
                let i = i as usize;
                let l = if self.u64f[i] { 0 } else { l };
                self.r64[i * self.stride + l]
            }
        }
    }

    #[inline]
    fn is_uniform(&self, r: Reg) -> bool {
        match r {
            Reg::W32(i) => self.u32f[i as usize],
            Reg::W64(i) => self.u64f[i as usize],
        }
    }

    /// Make a register per-lane (copy its uniform value into every lane).
    fn expand(&mut self, r: Reg) {
        let n = self.n;
        match r {
            Reg::W32(i) => {
                let i = i as usize;
                if self.u32f[i] {
                    let base = i * self.stride;
                    let v = self.r32[base];
                    self.r32[base..base + n].fill(v);
                    self.u32f[i] = false;
                }
            }
            Reg::W64(i) => {
                let i = i as usize;
                if self.u64f[i] {
                    let base = i * self.stride;
                    let v = self.r64[base];
                    self.r64[base..base + n].fill(v);
                    self.u64f[i] = false;
                }
            }
        }
    }

    #[inline]
    fn set_lane(&mut self, r: Reg, l: usize, v: u64) {
        match r {
            Reg::W32(i) => self.r32[i as usize * self.stride + l] = v as u32,
            Reg::W64(i) => self.r64[i as usize * self.stride + l] = v,
        }
    }

    fn set_uniform(&mut self, r: Reg, v: u64) {
        match r {
            Reg::W32(i) => {
                self.r32[i as usize * self.stride] = v as u32;
                self.u32f[i as usize] = true;
            }
            Reg::W64(i) => {
                self.r64[i as usize * self.stride] = v;
                self.u64f[i as usize] = true;
            }
        }
    }

    /// Write `f(lane)` to `dst` for the lanes in `mask` (others keep their value).
    fn write_masked(&mut self, dst: Reg, mask: &Mask, full: bool, f: impl Fn(&Self, usize) -> u64) {
        if full {
            // Every live lane is written: no need to keep old values.
            match dst {
                Reg::W32(i) => self.u32f[i as usize] = false,
                Reg::W64(i) => self.u64f[i as usize] = false,
            }
            for l in 0..self.n {
                let v = f(self, l);
                self.set_lane(dst, l, v);
            }
        } else {
            self.expand(dst);
            for l in mask.lanes() {
                let v = f(self, l);
                self.set_lane(dst, l, v);
            }
        }
    }

    /// Dense unary op on 32-bit registers (computes every lane, or once if uniform).
    #[inline]
    pub(crate) fn map1_32(&mut self, d: u32, a: Reg, f: impl Fn(u32) -> u32) {
        let Reg::W32(a) = a else { return self.map_generic(Reg::W32(d), &[a], |v| f(v[0] as u32) as u64) };
        let (d, a) = (d as usize, a as usize);
        let s = self.stride;
        if self.u32f[a] {
            self.r32[d * s] = f(self.r32[a * s]);
            self.u32f[d] = true;
            return;
        }
        self.u32f[d] = false;
        let n = self.n;
        if d == a {
            for l in 0..n {
                self.r32[d * s + l] = f(self.r32[a * s + l]);
            }
            return;
        }
        let (src, dst) = if a < d {
            let (lo, hi) = self.r32.split_at_mut(d * s);
            (&lo[a * s..a * s + n], &mut hi[..n])
        } else {
            let (lo, hi) = self.r32.split_at_mut(a * s);
            (&hi[..n], &mut lo[d * s..d * s + n])
        };
        for (o, &x) in dst.iter_mut().zip(src) {
            *o = f(x);
        }
    }

    /// Dense binary op on 32-bit registers.
    #[inline]
    pub(crate) fn map2_32(&mut self, d: u32, a: Reg, b: Reg, f: impl Fn(u32, u32) -> u32) {
        let (Reg::W32(a), Reg::W32(b)) = (a, b) else {
            return self.map_generic(Reg::W32(d), &[a, b], |v| f(v[0] as u32, v[1] as u32) as u64);
        };
        let (d, a, b) = (d as usize, a as usize, b as usize);
        let s = self.stride;
        let n = self.n;
        let (ua, ub) = (self.u32f[a], self.u32f[b]);
        if ua && ub {
            self.r32[d * s] = f(self.r32[a * s], self.r32[b * s]);
            self.u32f[d] = true;
            return;
        }
        self.u32f[d] = false;
        // Gather inputs into fixed buffers to keep borrows simple and loops tight.
        let mut out = std::mem::take(&mut self.scratch32());
        out.clear();
        {
            let ra = &self.r32[a * s..a * s + n];
            let rb = &self.r32[b * s..b * s + n];
            match (ua, ub) {
                (true, false) => {
                    let x = ra[0];
                    out.extend(rb.iter().map(|&y| f(x, y)));
                }
                (false, true) => {
                    let y = rb[0];
                    out.extend(ra.iter().map(|&x| f(x, y)));
                }
                _ => out.extend(ra.iter().zip(rb).map(|(&x, &y)| f(x, y))),
            }
        }
        self.r32[d * s..d * s + n].copy_from_slice(&out);
        self.put_scratch32(out);
    }

    // Crate-visible register helpers for `ops`.
    #[inline]
    pub(crate) fn get_pub(&self, r: Reg, l: usize) -> u64 {
        self.get(r, l)
    }
    #[inline]
    pub(crate) fn is_uniform_pub(&self, r: Reg) -> bool {
        self.is_uniform(r)
    }
    pub(crate) fn set_uniform_pub(&mut self, r: Reg, v: u64) {
        self.set_uniform(r, v)
    }
    #[inline]
    pub(crate) fn set_lane_pub(&mut self, r: Reg, l: usize, v: u64) {
        self.set_lane(r, l, v)
    }
    pub(crate) fn expand_pub(&mut self, r: Reg) {
        self.expand(r)
    }
    /// Declare that every lane of `r` is about to be written.
    pub(crate) fn mark_varying(&mut self, r: Reg) {
        match r {
            Reg::W32(i) => self.u32f[i as usize] = false,
            Reg::W64(i) => self.u64f[i as usize] = false,
        }
    }
    pub(crate) fn is_full(&self, mask: &Mask) -> bool {
        self.full(mask)
    }

    /// When the race checker is on and every lane of `mask` (two or more)
    /// stores the same value to the same shared address: the first lane and
    /// the others. Their stores race only formally (the memory ends up the
    /// same whichever lands last), so `store` performs them as one store
    /// and reports a warning instead of a write-write race.
    pub(crate) fn agreeing_store(&self, src: Reg, ptr: Reg, mask: &Mask) -> Option<(usize, Mask)> {
        self.san.as_ref().filter(|s| s.races)?;
        let mut lanes = mask.lanes();
        let first = lanes.next()?;
        let (p0, v0) = (self.get(ptr, first), self.get(src, first));
        if matches!(crate::memory::ptr_alloc(p0).kind(), AllocKind::Private(_) | AllocKind::Constant(_)) {
            return None;
        }
        let uniform = self.is_uniform(ptr) && self.is_uniform(src);
        let mut rest = Mask::empty();
        for l in lanes {
            if !uniform && (self.get(ptr, l) != p0 || self.get(src, l) != v0) {
                return None;
            }
            rest.set(l, true);
        }
        (!rest.is_empty()).then_some((first, rest))
    }

    /// The other lanes of an agreeing store (see [`Self::agreeing_store`]):
    /// counted as writes, and reported once as a warning-level race.
    pub(crate) fn note_agreeing_store(&mut self, ptr: Reg, at: AccessId, first: usize, rest: &Mask) {
        let p = self.get(ptr, first);
        let kind = crate::memory::ptr_alloc(p).kind();
        self.count_lanes(rest, |c| c.access(kind, true, false));
        if !self.san.as_ref().is_some_and(|s| s.observes(kind)) {
            return;
        }
        let Some(second) = rest.lanes().next() else { return };
        let what = self.k.accesses.get(at as usize).map(|a| a.what.clone()).unwrap_or_default();
        let (n, first_t) = (rest.count() + 1, self.geo.global(first));
        let f = self.report_lane(
            FindingKind::DataRace,
            at,
            second,
            format!(
                "formal data race whose stores agree: {n} threads (the first {}) store the same value to `{what}` (byte offset {}) at once",
                crate::findings::xyz(first_t),
                crate::memory::ptr_offset(p)
            ),
        );
        f.is_error = false;
        if f.notes.is_empty() {
            f.notes.push("the value stored is the same whichever thread lands last, so the result is well defined in practice; Metal's memory model still calls unordered stores a race: to be strictly correct, let one thread store (e.g. `if (thread_index_in_simdgroup == 0)`)".into());
        }
    }

    /// Record a finding for lane `l` at access `at`.
    pub(crate) fn report_lane(&mut self, kind: FindingKind, at: AccessId, l: usize, message: String) -> &mut crate::Finding {
        let span = self.k.accesses.get(at as usize).map(|a| a.span).unwrap_or(self.k.span);
        let (thread, tg) = (self.geo.global(l), self.geo.tg_pos);
        if let Some(st) = self.stops.as_mut() {
            st.fault(l, kind.name(), &message);
        }
        self.findings.report(kind, span, None, thread, tg, self.geo.requested_tg, message)
    }

    /// A barrier not reached by every thread it needs: say how many
    /// arrived and where the others went.
    pub(crate) fn divergence(&mut self, at: AccessId, arrived: &Mask, expected: &Mask, simdgroup: bool) {
        if !self.check_memory {
            return;
        }
        let missing = expected.and_not(arrived);
        let first_missing = missing.lanes().next().unwrap_or(0);
        let returned = missing.and_not(&self.alive);
        let skipped = missing.and(&self.alive);
        let what = if simdgroup { "simdgroup_barrier" } else { "threadgroup_barrier" };
        let group = if simdgroup { "SIMD-group" } else { "threadgroup" };
        let mut msg = format!("`{what}` reached by only {} of the {} threads of this {group}", arrived.count(), expected.count(),);
        let span_of = |m: &Self, a: AccessId| m.k.accesses.get(a as usize).map(|x| x.span).unwrap_or(m.k.span);
        let mut secondary = None;
        if !returned.is_empty() {
            let l = returned.lanes().next().unwrap_or(0);
            msg.push_str(&format!("; {} returned early (e.g. thread {})", returned.count(), xyz(self.geo.global(l))));
            if let Some(r) = self.returned_at[l] {
                secondary = Some((span_of(self, r), format!("{}{} returned here", self.thread_name(l), and_others(returned.count() - 1))));
            }
        }
        if !skipped.is_empty() {
            let l = skipped.lanes().next().unwrap_or(0);
            let n = skipped.count();
            let are = if n == 1 { "1 is" } else { "are" };
            let lead = if n == 1 { String::new() } else { format!("{n} ") };
            msg.push_str(&format!("; {lead}{are} on the other side of a branch (e.g. thread {})", xyz(self.geo.global(l))));
            if secondary.is_none() {
                if let Some((if_at, _, in_else)) = self.branches.iter().rev().find(|(_, other, _)| other.get(l)).copied() {
                    let side = if in_else { "took the `if` branch" } else { "skipped the `if` branch" };
                    secondary =
                        Some((span_of(self, if_at), format!("{}{} {side} here", self.thread_name(l), and_others(skipped.count() - 1))));
                }
            }
        }
        let span = span_of(self, at);
        let (thread, tg) = (self.geo.global(first_missing), self.geo.tg_pos);
        let f = self.findings.report(FindingKind::BarrierDivergence, span, secondary, thread, tg, self.geo.requested_tg, msg);
        if f.notes.is_empty() {
            f.notes.push(format!("Metal requires every thread of the {group} to execute each barrier; threads that skip it or return early leave the others waiting (a hang or garbage on a real GPU)"));
            if !returned.is_empty() {
                f.notes.push(
                    "instead of returning early, guard the work (`if (i < n) { ... }`) and keep the barrier where every thread reaches it"
                        .into(),
                );
            } else {
                f.notes.push("move the barrier out of the branch so that all threads execute it".into());
            }
        }
    }

    // Observer hooks: the sanitizer and the counters attach here.
    #[inline]
    pub(crate) fn tracing(&self) -> bool {
        self.tracer.is_some()
    }

    /// Tell the tracer about a load (`dst` given) or store (`src` given).
    pub(crate) fn trace_access(&mut self, reg: Option<Reg>, write: bool, p: u64, size: usize, l: usize, at: AccessId) {
        self.trace_access_value(reg, None, write, p, size, l, at);
    }

    /// Tell the tracer about a SIMD-group function run by one SIMD-group.
    pub(crate) fn trace_exchange(
        &mut self,
        name: String,
        kind: crate::trace::ExchangeKind,
        lanes: Vec<u32>,
        moves: Vec<(u32, u32)>,
        at: AccessId,
    ) {
        let tg = self.geo.tg_pos;
        let span = self.k.accesses.get(at as usize).map(|a| a.span).unwrap_or(self.k.span);
        if let Some(t) = self.tracer.as_mut() {
            t.exchange(name, kind, lanes, moves, tg, span);
        }
    }

    /// [`Self::trace_access`] for a store whose value is known.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn trace_access_value(
        &mut self,
        reg: Option<Reg>,
        value: Option<(msl::types::Scalar, u64)>,
        write: bool,
        p: u64,
        size: usize,
        l: usize,
        at: AccessId,
    ) {
        let (thread, tg) = (self.geo.global(l), self.geo.tg_pos);
        let span = self.k.accesses.get(at as usize).map(|a| a.span).unwrap_or(self.k.span);
        if let Some(t) = self.tracer.as_mut() {
            if write {
                t.write(reg, value, p, size, l, thread, tg, span);
            } else if let Some(r) = reg {
                t.read(r, p, size, l, thread, tg, span);
            }
        }
    }
    #[inline]
    pub(crate) fn on_barrier(&mut self, simdgroup: bool, flags: u32, at: AccessId) {
        if let Some(s) = self.san.as_mut() {
            s.barrier(flags, simdgroup, at);
        }
        if let (Some(t), false) = (self.tracer.as_mut(), simdgroup) {
            t.interval += 1;
        }
    }

    /// The initialization state of `size` bytes of lane `l`'s private
    /// memory at `p` (`None` when `p` is not private or it is not tracked).
    pub(crate) fn private_init_bits(&self, p: u64, size: usize, l: usize) -> Option<Vec<bool>> {
        let san = self.san.as_ref().filter(|s| s.uninit)?;
        private_shadow(&self.mem, p, size, l).and_then(|r| san.private_init.get(r)).map(|b| b.to_vec())
    }

    /// Whether lane `l` would read written values from the `size` bytes
    /// at `p` (`true` where the sanitizer tracks nothing). Also while a
    /// debugger probe runs with the sanitizer detached: it shows what the
    /// kernel would read.
    pub(crate) fn bytes_written(&self, p: u64, size: usize, l: usize) -> bool {
        let detached = || {
            self.frames.iter().rev().find_map(|f| match f {
                crate::flow::Frame::Probing { saved } => saved.0.as_deref(),
                _ => None,
            })
        };
        let Some(san) = self.san.as_deref().or_else(detached).filter(|s| s.uninit) else { return true };
        match crate::memory::ptr_alloc(p).kind() {
            AllocKind::Private(_) => {
                private_shadow(&self.mem, p, size, l).and_then(|r| san.private_init.get(r)).is_none_or(|b| b.iter().all(|&x| x))
            }
            kind => san.written(kind, crate::memory::ptr_offset(p), size),
        }
    }

    /// Set the initialization state of lane `l`'s private bytes at `p`.
    pub(crate) fn set_private_init_bits(&mut self, p: u64, l: usize, bits: &[bool]) {
        let Some(r) = private_shadow(&self.mem, p, bits.len(), l) else { return };
        if let Some(dst) = self.san.as_mut().and_then(|s| s.private_init.get_mut(r)) {
            dst.copy_from_slice(bits);
        }
    }

    /// Global thread number + 1 of lane `l` (0 means nobody).
    pub(crate) fn tid(&self, l: usize) -> u32 {
        self.tg_linear.wrapping_mul(self.stride as u32).wrapping_add(l as u32).wrapping_add(1)
    }

    /// Lane `l` of the current threadgroup as messages name a thread.
    fn thread_name(&self, l: usize) -> String {
        crate::findings::thread_name(self.geo.global(l), self.geo.local(l), self.geo.tg_pos)
    }

    /// Count an operation for every lane of `mask` (when counting).
    #[inline]
    fn count_lanes(&mut self, mask: &Mask, f: impl Fn(&mut crate::sanitizer::Counts)) {
        let Some(san) = self.san.as_mut().filter(|s| s.counting) else { return };
        for l in mask.lanes() {
            if let Some(c) = san.lane_counts.get_mut(l) {
                f(c);
            }
        }
    }

    pub(crate) fn report_race(&mut self, r: Race, at: AccessId, l: usize, write: bool) -> &mut crate::Finding {
        let device = matches!(r.alloc, AllocKind::Buffer(_));
        let cross_tg = device && r.first.interval < self.san.as_ref().map(|s| s.tg_start).unwrap_or(0);
        // A barrier ran between them but its flags left this memory unordered.
        let weak = self.san.as_ref().filter(|_| !cross_tg).and_then(|s| s.weak_barrier(device, r.first.interval));
        let (first, first_tg) = self.geo.thread_of(r.first.tid);
        let threads =
            RaceThreads { first, first_tg, second: self.geo.global(l), second_tg: self.geo.tg_pos, tg_size: self.geo.requested_tg };
        let f = report_race(&mut self.findings, self.k, r, threads, at, write, cross_tg);
        if let Some(st) = self.stops.as_mut() {
            st.fault(l, FindingKind::DataRace.name(), &f.message);
        }
        if let (Some(w), true) = (weak, f.count == 1) {
            let which = if w.simdgroup { "simdgroup_barrier" } else { "threadgroup_barrier" };
            let (memory, flag) = if device { ("device", "mem_device") } else { ("threadgroup", "mem_threadgroup") };
            f.notes = vec![format!(
                    "a `{which}({})` ran in between, but its flags order no {memory} memory: write `mem_flags::{flag}` (or `mem_flags::mem_device | mem_flags::mem_threadgroup` for both)",
                mem_flags_text(w.flags)
            )];
        }
        f
    }

    /// `dst = ptr + index * scale`, the address computation of every array
    /// access: kept as a tight loop over lanes.
    fn ptr_index(&mut self, dst: Reg, ptr: Reg, index: Reg, ity: Scalar, scale: i64) {
        let (Reg::W64(d), Reg::W64(p)) = (dst, ptr) else { return };
        let (d, p, s, n) = (d as usize, p as usize, self.stride, self.n);
        let pu = self.u64f[p];
        let Reg::W32(i) = index else {
            return self.map_generic(dst, &[ptr, index], |v| ptr_add(v[0], index_value(ity, v[1]).wrapping_mul(scale)));
        };
        let i = i as usize;
        let iu = self.u32f[i];
        let signed = ity.is_signed();
        let idx = move |v: u32| if signed { v as i32 as i64 } else { v as i64 };
        if pu && iu {
            self.r64[d * s] = ptr_add(self.r64[p * s], idx(self.r32[i * s]).wrapping_mul(scale));
            self.u64f[d] = true;
            return;
        }
        self.u64f[d] = false;
        let indices = &self.r32[i * s..i * s + n];
        if pu {
            let p0 = self.r64[p * s];
            let out = &mut self.r64[d * s..d * s + n];
            for (o, &iv) in out.iter_mut().zip(indices) {
                *o = ptr_add(p0, idx(iv).wrapping_mul(scale));
            }
        } else if d != p {
            let (src, out) = if p < d {
                let (lo, hi) = self.r64.split_at_mut(d * s);
                (&lo[p * s..p * s + n], &mut hi[..n])
            } else {
                let (lo, hi) = self.r64.split_at_mut(p * s);
                (&hi[..n], &mut lo[d * s..d * s + n])
            };
            if iu {
                let delta = idx(indices[0]).wrapping_mul(scale);
                for (o, &pv) in out.iter_mut().zip(src) {
                    *o = ptr_add(pv, delta);
                }
            } else {
                for ((o, &pv), &iv) in out.iter_mut().zip(src).zip(indices) {
                    *o = ptr_add(pv, idx(iv).wrapping_mul(scale));
                }
            }
        } else {
            for l in 0..n {
                let iv = if iu { self.r32[i * s] } else { self.r32[i * s + l] };
                self.r64[d * s + l] = ptr_add(self.r64[p * s + l], idx(iv).wrapping_mul(scale));
            }
        }
    }

    fn scratch32(&mut self) -> Vec<u32> {
        std::mem::take(&mut self.scratch)
    }

    fn put_scratch32(&mut self, v: Vec<u32>) {
        self.scratch = v;
    }

    /// Slow path for ops mixing register widths: lane by lane.
    pub(crate) fn map_generic(&mut self, dst: Reg, srcs: &[Reg], f: impl Fn(&[u64]) -> u64) {
        let mut vals = [0u64; 4];
        if srcs.iter().all(|&r| self.is_uniform(r)) {
            for (i, &r) in srcs.iter().enumerate() {
                vals[i] = self.get(r, 0);
            }
            let v = f(&vals[..srcs.len()]);
            self.set_uniform(dst, v);
            return;
        }
        let mut out = Vec::with_capacity(self.n);
        for l in 0..self.n {
            for (i, &r) in srcs.iter().enumerate() {
                vals[i] = self.get(r, l);
            }
            out.push(f(&vals[..srcs.len()]));
        }
        match dst {
            Reg::W32(i) => self.u32f[i as usize] = false,
            Reg::W64(i) => self.u64f[i as usize] = false,
        }
        for (l, v) in out.into_iter().enumerate() {
            self.set_lane(dst, l, v);
        }
    }

    // ----- control flow ------------------------------------------------------

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

    fn full(&self, mask: &Mask) -> bool {
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
            Inst::MemCopy { dst, src, bytes, at, .. } => self.memcopy(*dst, *src, *bytes, *at, mask),
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
                let uniform = matches!(
                    attr,
                    ThreadAttr::ThreadgroupPositionInGrid
                        | ThreadAttr::ThreadsPerThreadgroup
                        | ThreadAttr::DispatchThreadsPerThreadgroup
                        | ThreadAttr::ThreadsPerGrid
                        | ThreadAttr::GridSize
                        | ThreadAttr::ThreadgroupsPerGrid
                        | ThreadAttr::GridOrigin
                        | ThreadAttr::SimdgroupsPerThreadgroup
                        | ThreadAttr::DispatchSimdgroupsPerThreadgroup
                        | ThreadAttr::QuadgroupsPerThreadgroup
                        | ThreadAttr::DispatchQuadgroupsPerThreadgroup
                        | ThreadAttr::ThreadExecutionWidth
                        | ThreadAttr::ThreadsPerSimdgroup
                );
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
                    if self.stops.is_some() {
                        // The debugger's SIMD-group view: every lane of the group.
                        let (first, n) = (l / 32 * 32, self.n);
                        let lanes = (first..(first + 32).min(n))
                            .map(|q| {
                                if !mask.get(q) {
                                    None
                                } else if regs.iter().any(|&r| self.undef.undefined_at(r, q)) {
                                    Some(crate::stops::LaneValue::Undefined)
                                } else {
                                    Some(crate::stops::LaneValue::Bits(regs.iter().map(|&r| self.get(r, q)).collect()))
                                }
                            })
                            .collect();
                        if let Some(p) = self.stops.as_mut() {
                            p.probe(hit.clone(), lanes);
                        }
                    }
                    if let Some(p) = self.probe.as_mut() {
                        p.record(hit);
                    }
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
                    let text = |q: usize| {
                        let p = self.get(*ptr, q);
                        crate::stops::memory_text(layout, &self.mem, p, q, &|a, n| self.bytes_written(a, n, q))
                    };
                    let kind = crate::probe::ProbeKind::Pointer;
                    let hit = crate::probe::ProbeHit { probe: *probe, slot: *slot, kind, bits: Vec::new(), shown: Some(text(l)) };
                    if self.stops.is_some() {
                        let (first, n) = (l / 32 * 32, self.n);
                        let lanes =
                            (first..(first + 32).min(n)).map(|q| mask.get(q).then(|| crate::stops::LaneValue::Text(text(q)))).collect();
                        if let Some(p) = self.stops.as_mut() {
                            p.probe(hit.clone(), lanes);
                        }
                    }
                    if let Some(p) = self.probe.as_mut() {
                        p.record(hit);
                    }
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

/// Mask for comparing values of a type's width (switch cases).
pub(crate) fn width_mask(s: Scalar) -> u64 {
    match s.size() {
        8 => u64::MAX,
        n => (1u64 << (n * 8)) - 1,
    }
}

/// An index register value as a signed 64-bit count.
#[inline]
pub fn index_value(ty: Scalar, bits: u64) -> i64 {
    match ty {
        Scalar::Long | Scalar::ULong => bits as i64,
        s if s.is_signed() => bits as u32 as i32 as i64,
        _ => bits as u32 as i64,
    }
}

/// The global positions of the two threads of a race (and the second's threadgroup).
pub(crate) struct RaceThreads {
    pub first: [u32; 3],
    pub first_tg: [u32; 3],
    pub second: [u32; 3],
    pub second_tg: [u32; 3],
    /// Threads of a full threadgroup (to name each thread's position in it).
    pub tg_size: [u32; 3],
}

/// Report a race whose second access is `at` (a write if `write`);
/// `cross_tg` when the two threads are in different threadgroups.
pub(crate) fn report_race<'f>(
    findings: &'f mut Findings,
    k: &Kernel,
    r: Race,
    t: RaceThreads,
    at: AccessId,
    write: bool,
    cross_tg: bool,
) -> &'f mut crate::Finding {
    let what = k.accesses.get(at as usize).map(|a| a.what.clone()).unwrap_or_default();
    let first_span = k.accesses.get(r.first.at as usize).map(|a| a.span).unwrap_or(k.span);
    let span = k.accesses.get(at as usize).map(|a| a.span).unwrap_or(k.span);
    let verb = |w: bool| if w { "writes" } else { "reads" };
    let kind_name = match (r.first_is_write, r.second_is_write) {
        (true, false) => "read-after-write",
        (false, true) => "write-after-read",
        _ => "write-after-write",
    };
    let space = match r.alloc {
        AllocKind::Buffer(_) => "device memory",
        _ => "threadgroup memory",
    };
    let msg = format!(
        "data race ({kind_name}) on `{what}` ({space}, byte offset {}): thread {} {} it while thread {} {} it {}",
        r.offset,
        xyz(t.second),
        verb(write),
        xyz(t.first),
        if r.first_is_write { "wrote" } else { "read" },
        if cross_tg { "in another threadgroup" } else { "in the same barrier interval" }
    );
    let first_name = crate::findings::thread_name(t.first, crate::findings::local_of(t.first, t.first_tg, t.tg_size), t.first_tg);
    let other = format!("the other access: {first_name} {}", if r.first_is_write { "writes here" } else { "reads here" });
    let f = findings.report(FindingKind::DataRace, span, Some((first_span, other)), t.second, t.second_tg, t.tg_size, msg);
    if f.notes.is_empty() {
        if cross_tg {
            f.notes.push("threadgroups of one dispatch run in no defined order and cannot wait for each other: have each element written by one threadgroup only, or use atomic operations (e.g. `atomic_fetch_add_explicit`)".into());
        } else if first_span == span {
            // Many threads running the same update (`out[0] += x`): no
            // barrier can separate them.
            f.notes.push("the threads run the same statement on the same element, so no barrier can order them: combine the values first (e.g. in threadgroup memory) and let one thread write the result, or make the update atomic (`atomic_fetch_add_explicit`)".into());
        } else if matches!(r.alloc, AllocKind::Buffer(_)) {
            f.notes.push("add `threadgroup_barrier(mem_flags::mem_device)` between the two accesses, or make the update atomic".into());
        } else {
            f.notes.push("add `threadgroup_barrier(mem_flags::mem_threadgroup)` between the two accesses so that one happens before the other (every thread must reach it)".into());
        }
    }
    f
}

/// `mem_flags` bits as a kernel writes them.
fn mem_flags_text(flags: u32) -> String {
    let names: Vec<&str> = [(1, "mem_device"), (2, "mem_threadgroup"), (4, "mem_texture"), (8, "mem_threadgroup_imageblock")]
        .iter()
        .filter(|(bit, _)| flags & bit != 0)
        .map(|&(_, n)| n)
        .collect();
    if names.is_empty() {
        "mem_flags::mem_none".into()
    } else {
        names.iter().map(|n| format!("mem_flags::{n}")).collect::<Vec<_>>().join(" | ")
    }
}

/// " and 3 others", " and 1 other", or nothing.
fn and_others(n: u32) -> String {
    match n {
        0 => String::new(),
        1 => " and 1 other".into(),
        n => format!(" and {n} others"),
    }
}

/// Where `size` bytes of lane `l`'s private memory at `p` sit in the
/// sanitizer's per-byte initialization shadow.
pub(crate) fn private_shadow(mem: &crate::memory::Memory, p: u64, size: usize, l: usize) -> Option<std::ops::Range<usize>> {
    let AllocKind::Private(slot) = crate::memory::ptr_alloc(p).kind() else { return None };
    let off = usize::try_from(crate::memory::ptr_offset(p)).ok()?;
    let start = l * mem.frame + mem.private_offsets.get(slot as usize).copied().unwrap_or(0) as usize + off;
    Some(start..start + size)
}
