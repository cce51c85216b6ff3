//! Schedules: a real GPU runs the SIMD-groups of a threadgroup in any order
//! between barriers (and interleaved), its threadgroups in any order, and
//! the atomics of one instruction in any order. The default run is one
//! legal schedule (lockstep, threadgroups in order). A result that depends
//! on which schedule the hardware picks is a bug that one run cannot show,
//! so a dispatch whose atomics could be order-sensitive (`sanitizer.rs`
//! records such pairs) is run again under other schedules and the outputs
//! compared (`explore`).
//!
//! In a serial schedule every SIMD-group is a context of its own (see
//! `flow.rs`): the scheduler runs one until it reaches a barrier (or, with
//! preemption, makes way after an atomic), then another, in the schedule's
//! order; a barrier runs once every context has reached it.

use crate::exec::{Machine, Mask};
use crate::flow::{Frame, Yield};
use crate::ir::{AccessId, Inst};

/// The order contexts run in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    /// The lowest SIMD-group first.
    Forward,
    /// The highest SIMD-group first.
    Reverse,
    /// A seeded shuffle at every barrier, with preemption after atomics.
    Random,
}

/// One legal schedule other than lockstep.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Schedule {
    pub order: Order,
    /// Threadgroups last first (otherwise first first; `Random` shuffles them).
    pub reverse_threadgroups: bool,
    /// Atomics of one instruction applied last lane first.
    pub atomics_last_lane_first: bool,
    pub seed: u64,
}

impl Schedule {
    /// The `k`th schedule explored (`k` from 0), given the lane order of
    /// atomics in the run it is compared with.
    pub fn nth(k: usize, main_last_lane_first: bool) -> Schedule {
        let flipped = !main_last_lane_first;
        match k {
            0 => Schedule { order: Order::Reverse, reverse_threadgroups: true, atomics_last_lane_first: flipped, seed: 0 },
            1 => Schedule { order: Order::Forward, reverse_threadgroups: false, atomics_last_lane_first: flipped, seed: 0 },
            k => Schedule {
                order: Order::Random,
                reverse_threadgroups: k % 2 == 0,
                atomics_last_lane_first: k % 2 == 1,
                seed: 0x9e37_79b9_7f4a_7c15u64.wrapping_mul(k as u64 + 1),
            },
        }
    }

    /// How messages describe it.
    pub fn describe(&self) -> String {
        let sg = match self.order {
            Order::Forward => "each SIMD-group alone up to each barrier, the first SIMD-group first",
            Order::Reverse => "each SIMD-group alone up to each barrier, the last SIMD-group first",
            Order::Random => "the SIMD-groups interleaved in a shuffled order, switching after atomic operations",
        };
        let tg = match (self.order, self.reverse_threadgroups) {
            (Order::Random, _) => "threadgroups shuffled",
            (_, true) => "threadgroups last first",
            (_, false) => "threadgroups first first",
        };
        let lanes = if self.atomics_last_lane_first { "atomics last lane first" } else { "atomics first lane first" };
        format!("{sg}; {tg}; {lanes}")
    }
}

/// A context's saved state while another one runs.
struct Ctx<'k> {
    frames: Vec<Frame<'k>>,
    breaks: Vec<Mask>,
    returns: Vec<Mask>,
    branches: Vec<(AccessId, Mask, bool)>,
    r32: Vec<u32>,
    r64: Vec<u64>,
    u32f: Vec<bool>,
    u64f: Vec<bool>,
    state: State<'k>,
}

#[derive(Clone, Copy)]
enum State<'k> {
    Ready,
    Waiting(&'k Inst, Mask),
    Done,
}

/// At most this many contexts per threadgroup (SIMD-groups are grouped
/// beyond it, which is still a legal schedule): each has its own registers.
const MAX_CONTEXTS: usize = 32;
/// Registers (bytes) all contexts of a threadgroup may hold together.
const CONTEXT_BYTES: usize = 256 << 20;

impl<'k> Machine<'k> {
    /// Exchange the running context's state with `c`'s.
    fn swap_context(&mut self, c: &mut Ctx<'k>) {
        std::mem::swap(&mut self.frames, &mut c.frames);
        std::mem::swap(&mut self.breaks, &mut c.breaks);
        std::mem::swap(&mut self.returns, &mut c.returns);
        std::mem::swap(&mut self.branches, &mut c.branches);
        std::mem::swap(&mut self.r32, &mut c.r32);
        std::mem::swap(&mut self.r64, &mut c.r64);
        std::mem::swap(&mut self.u32f, &mut c.u32f);
        std::mem::swap(&mut self.u64f, &mut c.u64f);
    }

    /// Run the threadgroup's body as one context per SIMD-group (or group
    /// of SIMD-groups), in the order of `schedule` (see the module comment).
    pub(crate) fn run_serial(&mut self, schedule: &Schedule) {
        let k: &'k crate::Kernel = self.k;
        let n = self.n;
        let groups = n.div_ceil(32).max(1);
        let file = self.r32.len() * 4 + self.r64.len() * 8;
        let most = MAX_CONTEXTS.min((CONTEXT_BYTES / file.max(1)).max(1));
        let per = groups.div_ceil(most);
        let mut ctxs: Vec<Ctx<'k>> = (0..groups.div_ceil(per))
            .map(|c| {
                let lanes = Mask::first(((c + 1) * per * 32).min(n)).and_not(&Mask::first(c * per * 32));
                Ctx {
                    frames: vec![Frame::Block { insts: &k.body, pc: 0, mask: lanes.and(&self.alive) }],
                    breaks: Vec::new(),
                    returns: Vec::new(),
                    branches: Vec::new(),
                    r32: self.r32.clone(),
                    r64: self.r64.clone(),
                    u32f: self.u32f.clone(),
                    u64f: self.u64f.clone(),
                    state: State::Ready,
                }
            })
            .collect();
        self.waits_at_barriers = true;
        self.preempting = schedule.order == Order::Random;
        let mut order: Vec<usize> = (0..ctxs.len()).collect();
        if schedule.order == Order::Reverse {
            order.reverse();
        }
        while !self.stopped {
            if schedule.order == Order::Random {
                self.shuffle(&mut order);
            }
            for &c in &order {
                if !matches!(ctxs[c].state, State::Ready) || self.stopped {
                    continue;
                }
                self.swap_context(&mut ctxs[c]);
                let y = self.run_frames();
                self.swap_context(&mut ctxs[c]);
                ctxs[c].state = match y {
                    Yield::Done => State::Done,
                    Yield::Preempt => State::Ready,
                    Yield::Barrier => match self.waiting.take() {
                        Some((inst, mask)) => State::Waiting(inst, mask),
                        None => State::Done,
                    },
                };
            }
            if ctxs.iter().all(|c| matches!(c.state, State::Done)) {
                break;
            }
            if ctxs.iter().any(|c| matches!(c.state, State::Ready)) {
                continue;
            }
            // Every context still running waits at a barrier: run each
            // barrier once with the lanes that reached it, in the registers
            // of the first context there (for its flags), and go on.
            let mut released: Vec<(&'k Inst, Mask, usize)> = Vec::new();
            for (i, c) in ctxs.iter().enumerate() {
                if let State::Waiting(inst, mask) = c.state {
                    match released.iter_mut().find(|(b, _, _)| std::ptr::eq(*b, inst)) {
                        Some((_, m, _)) => *m = m.or(&mask),
                        None => released.push((inst, mask, i)),
                    }
                }
            }
            for (inst, mask, first) in released {
                self.swap_context(&mut ctxs[first]);
                if self.spend(inst) {
                    self.exec_simple(inst, &mask);
                }
                self.swap_context(&mut ctxs[first]);
            }
            for c in &mut ctxs {
                if matches!(c.state, State::Waiting(..)) {
                    c.state = State::Ready;
                }
            }
        }
        self.waits_at_barriers = false;
        self.preempting = false;
    }

    /// A seeded shuffle of the context order.
    fn shuffle(&mut self, order: &mut [usize]) {
        for i in (1..order.len()).rev() {
            let mut x = self.rng.max(1);
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            self.rng = x;
            order.swap(i, (x % (i as u64 + 1)) as usize);
        }
    }
}

/// Dispatches larger than this many threads are not explored (each other
/// schedule costs a whole run).
pub const MAX_EXPLORED_THREADS: u64 = 1 << 24;

/// Whether a dispatch of `kernel` should keep its initial buffers for
/// exploring other schedules (it has atomics, and the run checks races).
pub(crate) fn worth_exploring(kernel: &crate::Kernel, d: &crate::Dispatch, opts: &crate::RunOptions) -> bool {
    let threads: u64 = match d.mode {
        crate::DispatchMode::Threads => d.grid.iter().map(|&x| x as u64).product(),
        crate::DispatchMode::Threadgroups => d.grid.iter().chain(&d.threadgroup).map(|&x| x as u64).fold(1u64, |a, b| a.saturating_mul(b)),
    };
    opts.check == crate::CheckLevel::All
        && opts.schedules > 0
        && opts.schedule.is_none()
        && threads <= MAX_EXPLORED_THREADS
        && !crate::ir::atomic_sites(kernel).is_empty()
}

/// The threadgroups of `range` in the order `schedule` runs them.
pub(crate) fn threadgroup_order(schedule: Option<&Schedule>, range: std::ops::Range<u64>) -> Box<dyn Iterator<Item = u64>> {
    match schedule {
        None => Box::new(range),
        Some(s) if s.order == Order::Random && range.end - range.start <= 1 << 20 => {
            let mut v: Vec<u64> = range.collect();
            let mut x = s.seed.max(1);
            for i in (1..v.len()).rev() {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                v.swap(i, (x % (i as u64 + 1)) as usize);
            }
            Box::new(v.into_iter())
        }
        Some(s) if s.reverse_threadgroups || s.order == Order::Random => Box::new(range.rev()),
        Some(_) => Box::new(range),
    }
}

/// The first element of a writable buffer where two runs differ by more
/// than rounding: (buffer parameter, element, value in `a`, value in `b`).
fn first_difference(
    kernel: &crate::Kernel,
    a: &std::collections::BTreeMap<u32, Vec<u8>>,
    b: &std::collections::BTreeMap<u32, Vec<u8>>,
    (rtol, atol): (f64, f64),
) -> Option<Difference> {
    use msl::types::Type;
    for p in &kernel.params {
        let crate::ir::ParamKind::Buffer { index, pointee, writable: true, .. } = &p.kind else { continue };
        let (Some(x), Some(y)) = (a.get(index), b.get(index)) else { continue };
        if x == y {
            continue;
        }
        let scalar = match pointee {
            Type::Scalar(s) | Type::Atomic(s) => Some(*s),
            Type::Vector { elem, .. } => Some(*elem),
            _ => None,
        };
        let size = scalar.map_or(1, |s| s.size() as usize).max(1);
        for (i, (u, v)) in x.chunks(size).zip(y.chunks(size)).enumerate() {
            if u == v {
                continue;
            }
            let bits = |c: &[u8]| c.iter().rev().fold(0u64, |acc, &byte| acc << 8 | byte as u64);
            let value = |c: &[u8]| -> (String, Option<f64>) {
                let raw = bits(c);
                match scalar {
                    Some(s) if s.is_float() => {
                        let f = f32::from_bits(crate::ops::from_memory(s, raw) as u32) as f64;
                        (format!("{f}"), Some(f))
                    }
                    Some(s) if s.is_signed() => {
                        let shift = 64 - 8 * size as u32;
                        (format!("{}", ((raw << shift) as i64) >> shift), None)
                    }
                    _ => (format!("{raw}"), None),
                }
            };
            let ((ta, fa), (tb, fb)) = (value(u), value(v));
            if let (Some(fa), Some(fb)) = (fa, fb) {
                if (fa - fb).abs() <= atol + rtol * fb.abs() || (fa.is_nan() && fb.is_nan()) {
                    continue;
                }
            }
            let elem = if scalar.is_some() { i } else { i / size.max(1) };
            return Some(Difference { index: *index, buffer: p.name.clone(), element: elem, main: ta, other: tb });
        }
    }
    None
}

/// After the default run of a dispatch whose atomics may be order-sensitive
/// (`report.order_pairs`): run it again, from `initial`, under
/// `opts.schedules` other legal schedules, and report the first output
/// element that differs from `main` by more than rounding.
pub(crate) fn explore(
    kernel: &crate::Kernel,
    d: &crate::Dispatch,
    initial: std::collections::BTreeMap<u32, Vec<u8>>,
    main: &std::collections::BTreeMap<u32, Vec<u8>>,
    opts: &crate::RunOptions,
    report: &mut crate::RunReport,
) {
    use crate::FindingKind;
    if report.order_pairs.is_empty()
        || report.cancelled
        || report.findings.iter().any(|f| matches!(f.kind, FindingKind::RunawayKernel | FindingKind::InvalidDispatch))
    {
        return;
    }
    for k in 0..opts.schedules {
        let schedule = Schedule::nth(k, opts.atomics_last_lane_first);
        let o = crate::RunOptions {
            check: crate::CheckLevel::None,
            budget: opts.budget,
            threadgroup_buffers: opts.threadgroup_buffers.clone(),
            threads: 1,
            cancel: opts.cancel.clone(),
            atomics_last_lane_first: schedule.atomics_last_lane_first,
            schedules: 0,
            schedule: Some(schedule),
            ..Default::default()
        };
        let mut buffers = initial.clone();
        let r = crate::run_lockstep(kernel, d, &mut buffers, &o, &mut |_, _| {});
        if r.cancelled {
            return;
        }
        report.schedules_explored += 1;
        // (A schedule under which the kernel never finishes, such as a
        // spin-wait on a later threadgroup, has no result to compare.)
        if r.findings.iter().any(|f| f.kind == FindingKind::RunawayKernel) {
            continue;
        }
        if let Some(diff) = first_difference(kernel, main, &buffers, opts.schedule_tolerance) {
            report.findings.push(order_finding(kernel, d, &report.order_pairs, &schedule, diff));
            return;
        }
    }
}

/// The first element of a writable buffer two schedules disagree on.
struct Difference {
    /// Its `[[buffer(index)]]` and parameter name.
    index: u32,
    buffer: String,
    element: usize,
    /// Its value in the lockstep run and in the other schedule.
    main: String,
    other: String,
}

/// The finding for a result that depends on the schedule. The atomics
/// blamed are those on the differing buffer when some are (otherwise those
/// on threadgroup memory that fed it). When every such pair is two
/// read-modify-writes, each update still happens exactly once and only
/// which thread got which value back differs (a ticket, a slot, the last
/// exchanger): a warning, since a consumer may not depend on that order.
/// When a plain atomic load or store is among them, an update is lost or
/// a value is read half-way: an error.
fn order_finding(
    kernel: &crate::Kernel,
    d: &crate::Dispatch,
    pairs: &[crate::sanitizer::OrderPair],
    schedule: &Schedule,
    diff: Difference,
) -> crate::Finding {
    use crate::ir::AtomicOp;
    let Difference { index, buffer, element, main, other } = diff;
    let on_buffer: Vec<crate::sanitizer::OrderPair> =
        pairs.iter().copied().filter(|p| p.kind == crate::memory::AllocKind::Buffer(index)).collect();
    let blamed: &[crate::sanitizer::OrderPair] = if on_buffer.is_empty() { pairs } else { &on_buffer };
    let sites = crate::ir::atomic_sites(kernel);
    let plain = |at: u32| sites.get(&at).is_some_and(|(op, _)| matches!(op, AtomicOp::Load | AtomicOp::Store));
    let lost_update = blamed.iter().find(|p| plain(p.first_at) || plain(p.second_at));
    let is_error = lost_update.is_some();
    let p = *lost_update.unwrap_or(&blamed[0]);
    let span_of = |at: u32| kernel.accesses.get(at as usize).map(|a| a.span).unwrap_or(kernel.span);
    let what = |at: u32| kernel.accesses.get(at as usize).map(|a| a.what.clone()).unwrap_or_default();
    let tg = d.threadgroup;
    let (groups, grid_threads) = match d.mode {
        crate::DispatchMode::Threads => ([0, 1, 2].map(|i| d.grid[i].div_ceil(tg[i].max(1))), d.grid),
        crate::DispatchMode::Threadgroups => (d.grid, [0, 1, 2].map(|i| d.grid[i].saturating_mul(tg[i]))),
    };
    let geo = crate::exec::Geometry { grid_threads, groups, requested_tg: tg, ..Default::default() };
    let (thread, threadgroup) = geo.thread_of(p.second_tid);
    let (first_thread, first_tg) = geo.thread_of(p.first_tid);
    let same_site = p.first_at == p.second_at;
    let message = format!(
        "the result depends on the order the GPU runs unordered atomic operations on `{}` in: `{buffer}[{element}]` is {main} when the threads run in lockstep (threadgroups in order) but {other} in another order the hardware may pick ({})",
        what(p.second_at),
        schedule.describe()
    );
    let secondary = (!same_site).then(|| {
        let name = crate::findings::thread_name(first_thread, crate::findings::local_of(first_thread, first_tg, tg), first_tg);
        (span_of(p.first_at), format!("unordered with this atomic operation (by {name})"))
    });
    let note = if !is_error {
        "every update is applied exactly once; only which thread gets which value back depends on the order (a ticket, a slot, the last exchange). That is fine if nothing downstream depends on the order; if it does, derive the position from the thread's index instead (e.g. a prefix sum)"
    } else if threadgroup != first_tg {
        "threadgroups run in no defined order and no barrier orders them: make the result independent of the order (e.g. only commutative updates such as `atomic_fetch_add` whose return value is not used), or split the work into two dispatches"
    } else if same_site {
        "the lanes' atomic operations on one location are applied in no defined order: a thread that uses the value it gets back (a ticket, an index, a flag) sees a different one under another order"
    } else {
        "atomic operations are indivisible but not ordered: put a `threadgroup_barrier` (with `mem_flags::mem_threadgroup` for threadgroup memory, `mem_device` for device memory) between the two, so that every thread finishes the first before any starts the second"
    };
    crate::Finding {
        kind: crate::FindingKind::DataRace,
        is_error,
        message,
        span: span_of(p.second_at),
        secondary,
        thread,
        local: crate::findings::local_of(thread, threadgroup, tg),
        threadgroup,
        count: 1,
        examples: Vec::new(),
        notes: vec![note.to_string()],
    }
}
