//! The sanitizer's shadow state: who last wrote and read each element of
//! threadgroup and writable device memory, in which barrier interval, and
//! whether threadgroup/private memory was ever written. Also per-thread
//! access counters (the puzzle book's scores).
//!
//! Time is counted in *intervals*, for device and threadgroup memory apart:
//! a new one starts at each threadgroup and at each barrier whose
//! `mem_flags` name that memory (`mem_none` orders nothing). Two accesses
//! by different threads race when at least one writes, not both are
//! atomic, and they are in the same interval of the same threadgroup — or,
//! for device memory, in different threadgroups (threadgroups are
//! unordered within a dispatch).

use crate::access::MemOp;
use crate::memory::AllocKind;
use std::collections::HashMap;

/// What one access did to an element, for the race rules (16 bytes: the
/// shadow holds three per element, so its size is the sanitizer's cost).
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub struct Stamp {
    /// Global thread number + 1 (0: nobody).
    pub tid: u32,
    pub interval: u32,
    pub at: u32,
    /// `simdgroup_barrier`s passed so far, modulo 2^16 (orders threads of
    /// one SIMD-group only; 65,536 of them between two accesses in one
    /// barrier interval would hide a race).
    pub simd: u16,
    pub atomic: bool,
}

/// The last write of an element and up to two concurrent reads of it by
/// different threads: with two, any later writer differs from one of them,
/// so a read-then-write by one thread cannot hide another thread's read.
#[derive(Clone, Copy, Default, Debug)]
pub struct Cell {
    pub write: Stamp,
    pub read: Stamp,
    pub read2: Stamp,
}

/// A race found by the shadow check.
#[derive(Clone, Copy, Debug)]
pub struct Race {
    /// The earlier access.
    pub first: Stamp,
    pub first_is_write: bool,
    pub second_is_write: bool,
    /// Byte offset of the element in its allocation.
    pub offset: i64,
    pub alloc: AllocKind,
}

/// A race between threadgroups run by different workers, found when their
/// device shadows are merged; grouped by the two accesses' locations.
#[derive(Clone, Debug)]
pub struct CrossRace {
    pub race: Race,
    pub second: Stamp,
    pub second_is_write: bool,
    pub count: u64,
}

/// Shadow of one allocation: one cell per `grain` bytes.
#[derive(Default, Debug)]
struct Shadow {
    /// log2 of the bytes per cell (element sizes are powers of two).
    shift: u32,
    cells: Vec<Cell>,
    /// Cells touched so far are within `touched` (empty when `start >= end`):
    /// merging workers' shadows only looks there.
    touched: std::ops::Range<usize>,
    /// Threadgroup memory: cells not written since the threadgroup started,
    /// the last interval with a write, and reads not yet applied.
    unwritten: usize,
    last_write: u32,
    deferred: Deferred,
    defer_reads: bool,
}

/// Reads of threadgroup memory in a barrier interval with no write yet,
/// when every cell has been written: they can neither race (no write in
/// their interval) nor read garbage, and they only matter if a write comes
/// later in the same interval. So they are kept as a list and applied, in
/// order, just before such a write; a barrier drops them unapplied. Loops
/// that only read a tile between barriers (tiled matmul) skip most of the
/// shadow work this way, with exactly the same findings.
#[derive(Default, Debug)]
struct Deferred {
    interval: u32,
    /// (access, SIMD epoch, size, end of its lanes in `lanes`).
    batches: Vec<(u32, u16, usize, usize)>,
    /// (byte offset, thread number) of each lane.
    lanes: Vec<(i64, u32)>,
}

/// Deferred lanes kept before they are applied anyway (bounds the memory).
const MAX_DEFERRED: usize = 1 << 16;

impl Deferred {
    fn clear(&mut self, interval: u32) {
        self.interval = interval;
        self.batches.clear();
        self.lanes.clear();
    }

    fn push(&mut self, at: u32, simd: u16, size: usize, lanes: impl Iterator<Item = (usize, i64, u32)>) {
        self.lanes.reserve(lanes.size_hint().0);
        self.lanes.extend(lanes.map(|(_, off, tid)| (off, tid)));
        self.batches.push((at, simd, size, self.lanes.len()));
    }
}

impl Shadow {
    fn new(bytes: usize, grain: u32) -> Shadow {
        let grain = grain.max(1).next_power_of_two();
        let cells = crate::cells::zeroed(bytes.div_ceil(grain as usize));
        Shadow {
            shift: grain.trailing_zeros(),
            unwritten: cells.len(),
            cells,
            touched: 0..0,
            last_write: 0,
            deferred: Deferred::default(),
            defer_reads: true,
        }
    }

    /// Apply the deferred reads (see `Deferred`) with the rules of this
    /// interval; they cannot find anything.
    fn apply_deferred(&mut self, rules: &Rules) {
        if self.deferred.batches.is_empty() {
            return;
        }
        let d = std::mem::take(&mut self.deferred);
        let mut start = 0;
        let mut ignored = Batch::default();
        for &(at, simd, size, end) in &d.batches {
            let r = Rules { simd, write: false, reads: true, atomic: false, ..*rules };
            let lanes = d.lanes[start..end].iter().map(|&(off, tid)| (0usize, off, tid));
            self.apply(lanes, size, at, &r, true, AllocKind::Null, &mut ignored);
            start = end;
        }
        self.deferred = d;
        self.deferred.clear(rules.interval);
    }

    /// Record accesses of many lanes: (lane, byte offset, thread number).
    #[allow(clippy::too_many_arguments)]
    #[inline]
    fn apply(
        &mut self,
        lanes: impl Iterator<Item = (usize, i64, u32)>,
        size: usize,
        at: u32,
        rules: &Rules,
        races: bool,
        kind: AllocKind,
        out: &mut Batch,
    ) {
        let shift = self.shift;
        let grain = 1i64 << shift;
        let n_cells = self.cells.len();
        let write = rules.write;
        let (mut lo, mut hi) = (usize::MAX, 0usize);
        let mut newly_written = 0usize;
        let end = size.max(1) as i64 - 1;
        for (lane, off, tid) in lanes {
            if off < 0 {
                continue;
            }
            let first = (off >> shift) as usize;
            let last = ((off + end) >> shift) as usize;
            let now = Stamp { tid, interval: rules.interval, simd: rules.simd, at, atomic: rules.atomic };
            // The usual case: the access covers one cell.
            if first == last && last < n_cells {
                lo = lo.min(first);
                hi = hi.max(last + 1);
                let c = &mut self.cells[first];
                newly_written += (write && c.write.tid == 0) as usize;
                let (hit, unset) = rules.apply(c, now, races);
                if hit.is_some() || unset {
                    out.note(lane, off, hit.map(|h| (h, first as i64 * grain)), unset, write, kind);
                }
                continue;
            }
            let last = last.min(n_cells.saturating_sub(1));
            if first > last {
                continue;
            }
            lo = lo.min(first);
            hi = hi.max(last + 1);
            let mut raced = false;
            let mut unwritten = false;
            for (e, c) in self.cells[first..=last].iter_mut().enumerate() {
                newly_written += (write && c.write.tid == 0) as usize;
                let (hit, unset) = rules.apply(c, now, races && !raced);
                unwritten |= unset;
                if hit.is_some() {
                    raced = true;
                    out.note(lane, off, hit.map(|h| (h, (first + e) as i64 * grain)), false, write, kind);
                }
            }
            if unwritten {
                out.note(lane, off, None, true, write, kind);
            }
        }
        self.unwritten = self.unwritten.saturating_sub(newly_written);
        if lo < hi {
            let t = &mut self.touched;
            *t = if t.start < t.end { t.start.min(lo)..t.end.max(hi) } else { lo..hi };
        }
    }

    /// Back to "nobody accessed anything" (only the touched cells need it).
    fn clear(&mut self) {
        let t = self.touched.start..self.touched.end.min(self.cells.len());
        if t.start < t.end {
            // SAFETY: in bounds (clamped above); all-zero bytes are
            // `Cell::default()` (see `zeroed_cells`).
            unsafe { std::ptr::write_bytes(self.cells.as_mut_ptr().add(t.start), 0, t.end - t.start) };
        }
        self.touched = 0..0;
        self.unwritten = self.cells.len();
        self.last_write = 0;
        self.deferred.clear(0);
        self.defer_reads = true;
    }
}

impl Drop for Shadow {
    fn drop(&mut self) {
        crate::cells::keep(std::mem::take(&mut self.cells), self.touched.clone());
    }
}

// SAFETY: stamps are integers and a bool (4-byte aligned, 16 bytes), and
// all-zero bytes are `Cell::default()`.
unsafe impl crate::cells::Cell for Cell {}

/// Per-thread counts of memory operations, and of the operations that
/// synchronize or exchange between threads. An atomic counts as an atomic
/// only (not also as a read or write).
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub struct Counts {
    pub device_reads: u64,
    pub device_writes: u64,
    pub threadgroup_reads: u64,
    pub threadgroup_writes: u64,
    pub device_atomics: u64,
    pub threadgroup_atomics: u64,
    /// `threadgroup_barrier`s reached (not `simdgroup_barrier`s).
    pub barriers: u64,
    /// SIMD-group (and quad-group) functions: reductions, scans, shuffles,
    /// votes, `simdgroup_matrix` loads, stores and multiplies.
    pub simd_ops: u64,
    /// Device atomics of one whole threadgroup, all its threads together
    /// (set in the maxima at the end of each threadgroup; a lane's own
    /// count is `device_atomics`).
    pub threadgroup_device_atomics: u64,
}

impl Counts {
    /// Count one memory access of kind `kind` (an atomic when `atomic`).
    #[inline]
    pub fn access(&mut self, kind: crate::memory::AllocKind, write: bool, atomic: bool) {
        use crate::memory::AllocKind;
        match (kind, write, atomic) {
            (AllocKind::Buffer(_), _, true) => self.device_atomics += 1,
            (AllocKind::Threadgroup(_) | AllocKind::ThreadgroupBuffer(_), _, true) => self.threadgroup_atomics += 1,
            (AllocKind::Buffer(_), false, _) => self.device_reads += 1,
            (AllocKind::Buffer(_), true, _) => self.device_writes += 1,
            (AllocKind::Threadgroup(_) | AllocKind::ThreadgroupBuffer(_), false, _) => self.threadgroup_reads += 1,
            (AllocKind::Threadgroup(_) | AllocKind::ThreadgroupBuffer(_), true, _) => self.threadgroup_writes += 1,
            _ => {}
        }
    }

    pub fn max(self, o: Counts) -> Counts {
        Counts {
            device_reads: self.device_reads.max(o.device_reads),
            device_writes: self.device_writes.max(o.device_writes),
            threadgroup_reads: self.threadgroup_reads.max(o.threadgroup_reads),
            threadgroup_writes: self.threadgroup_writes.max(o.threadgroup_writes),
            device_atomics: self.device_atomics.max(o.device_atomics),
            threadgroup_atomics: self.threadgroup_atomics.max(o.threadgroup_atomics),
            barriers: self.barriers.max(o.barriers),
            simd_ops: self.simd_ops.max(o.simd_ops),
            threadgroup_device_atomics: self.threadgroup_device_atomics.max(o.threadgroup_device_atomics),
        }
    }
}

#[derive(Debug, Default)]
pub struct Sanitizer {
    pub races: bool,
    pub uninit: bool,
    pub counting: bool,
    /// Device buffers (by index) that need shadow: the writable ones.
    device: Vec<Option<Shadow>>,
    /// Written bits of device buffers that start uninitialized (MLX outputs
    /// without `init_value`).
    pub device_written: HashMap<u32, Vec<bool>>,
    threadgroup: Vec<Shadow>,
    tg_buffers: Vec<Shadow>,
    /// Private memory written bits, per lane byte.
    pub private_init: Vec<bool>,
    /// Barrier time of device memory and of threadgroup memory, apart: a
    /// barrier orders only the memory its flags name.
    pub device_clock: Clock,
    pub threadgroup_clock: Clock,
    /// Lanes per (requested) threadgroup, to find a thread's SIMD-group from
    /// its number; 0 treats every thread as one SIMD-group.
    pub lanes_per_threadgroup: u32,
    /// First device interval of the current threadgroup.
    pub tg_start: u32,
    /// Barriers of the current threadgroup that left one kind of memory
    /// unordered (for the advice of a race they did not prevent).
    pub weak_barriers: Vec<WeakBarrier>,
    /// The kernel's atomic operations by access site: (operation, whether
    /// its result is used) — see `ir::atomic_sites`.
    pub atomic_sites: HashMap<u32, (crate::ir::AtomicOp, bool)>,
    /// Order-sensitive pairs of unordered atomics seen so far (a few).
    pub order_pairs: Vec<OrderPair>,
    /// Atomic operations seen per allocation and site (for `order_pairs`).
    atomics_seen: Vec<AtomicSeen>,
    /// Reused: the element offsets of one instruction's atomics.
    offsets: Vec<i64>,
    /// Counters of the current threadgroup's lanes, and the maximum so far.
    pub lane_counts: Vec<Counts>,
    pub max_counts: Counts,
    /// Buffer indices whose reads are not counted (MLX shape metadata).
    pub uncounted: Vec<u32>,
}

/// `mem_flags` bits (as Metal defines them).
pub const MEM_DEVICE: u32 = 1;
pub const MEM_THREADGROUP: u32 = 2;

/// The barrier time of one kind of memory.
#[derive(Clone, Copy, Debug, Default)]
pub struct Clock {
    /// Barrier intervals: a new one starts at each threadgroup and at each
    /// `threadgroup_barrier` whose flags name this memory.
    pub interval: u32,
    /// `simdgroup_barrier`s naming this memory so far: they order the
    /// accesses of threads of the same SIMD-group only.
    pub simd: u32,
}

/// A barrier whose flags left one kind of memory unordered.
#[derive(Clone, Copy, Debug)]
pub struct WeakBarrier {
    /// The memory it did not order (device or threadgroup) and that memory's
    /// interval when it ran.
    pub device: bool,
    pub interval: u32,
    pub at: u32,
    pub flags: u32,
    pub simdgroup: bool,
}

/// Whether two thread numbers (global number + 1) are in one SIMD-group.
fn same_simdgroup(n: u32, a: u32, b: u32) -> bool {
    if n == 0 {
        return true;
    }
    let (a, b) = (a.wrapping_sub(1), b.wrapping_sub(1));
    a / n == b / n && (a % n) / 32 == (b % n) / 32
}

/// The race rules for one batch of accesses (all by one instruction).
#[derive(Clone, Copy)]
struct Rules {
    interval: u32,
    tg_start: u32,
    simd: u16,
    lanes_per_tg: u32,
    device: bool,
    write: bool,
    /// The access reads the old value (a plain read or an atomic that is not a store).
    reads: bool,
    atomic: bool,
}

impl Rules {
    /// Whether an earlier access `o` by another thread is unordered with one
    /// by `tid` now: in this barrier interval (and, within one SIMD-group,
    /// the same simdgroup_barrier epoch) or, for device memory, in another
    /// threadgroup.
    #[inline(always)]
    fn concurrent(&self, o: Stamp, tid: u32) -> bool {
        o.tid != 0
            && o.tid != tid
            && (o.interval == self.interval && (o.simd == self.simd || !same_simdgroup(self.lanes_per_tg, o.tid, tid))
                || self.device && o.interval < self.tg_start)
    }

    /// Record the access `now` in cell `c`. Returns the earlier access it
    /// races with (and whether that was a write) when `check` is set, and
    /// whether it read threadgroup memory nobody wrote.
    #[inline(always)]
    fn apply(&self, c: &mut Cell, now: Stamp, check: bool) -> (Option<(Stamp, bool)>, bool) {
        let mut hit = None;
        if check {
            if self.concurrent(c.write, now.tid) && !(self.atomic && c.write.atomic) {
                hit = Some((c.write, true));
            } else if self.write && self.concurrent(c.read, now.tid) && !(self.atomic && c.read.atomic) {
                hit = Some((c.read, false));
            } else if self.write && self.concurrent(c.read2, now.tid) && !(self.atomic && c.read2.atomic) {
                hit = Some((c.read2, false));
            }
        }
        let unwritten = self.reads && !self.device && c.write.tid == 0;
        if self.write {
            c.write = now;
            return (hit, unwritten);
        }
        // Keep readers that could still race with a later write: this
        // thread's latest read, or a slot whose read no longer can.
        if c.read.tid == now.tid {
            c.read = now;
        } else if c.read2.tid == now.tid {
            c.read2 = now;
        } else if !self.concurrent(c.read, now.tid) {
            c.read = now;
        } else if !self.concurrent(c.read2, now.tid) {
            c.read2 = now;
        }
        (hit, unwritten)
    }
}

/// What a batch of accesses found.
#[derive(Default, Debug)]
pub struct Batch {
    pub first_race: Option<(usize, Race)>,
    /// A few more lanes that raced (examples for the report).
    pub race_lanes: Vec<usize>,
    pub races: u64,
    /// The first read of memory nobody wrote: (lane, byte offset, where).
    pub first_uninit: Option<(usize, i64, UninitSpace)>,
    pub uninit: u64,
}

/// Atomic operations of one site on one allocation in one interval.
#[derive(Clone, Copy, Debug)]
struct AtomicSeen {
    kind: AllocKind,
    at: u32,
    interval: u32,
    /// The SIMD-groups (of the threadgroup) that ran it, one bit each.
    groups: u32,
    /// A thread that ran it (global number + 1).
    tid: u32,
}

/// The SIMD-groups of a batch of lanes (one bit per SIMD-group of the
/// threadgroup), how many lanes, and one thread.
#[derive(Clone, Copy, Debug, Default)]
struct Groups {
    bits: u32,
    lanes: u32,
    tid: u32,
    /// Two of the lanes accessed the same element.
    shared: bool,
}

/// Two unordered atomic operations on one location whose order can change
/// the result: their access sites and threads (global number + 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OrderPair {
    /// The allocation both operate on.
    pub kind: AllocKind,
    pub first_at: u32,
    pub first_tid: u32,
    pub second_at: u32,
    pub second_tid: u32,
}

/// Whether two of `kernel`'s atomic operations (or one with itself) could
/// give results that depend on their order: only then can a run note
/// order-sensitive pairs (and explore other schedules).
pub fn atomics_order_sensitive(kernel: &crate::Kernel) -> bool {
    let sites: Vec<(crate::ir::AtomicOp, bool)> = crate::ir::atomic_sites(kernel).into_values().collect();
    sites.iter().any(|&a| sites.iter().any(|&b| order_sensitive(a, b)))
}

/// Whether two atomic operations (with whether each one's returned value
/// is used) may give a different result in the other order: only
/// operations of one commutative kind whose results nobody reads commute
/// (float additions up to rounding).
pub fn order_sensitive(a: (crate::ir::AtomicOp, bool), b: (crate::ir::AtomicOp, bool)) -> bool {
    use crate::ir::AtomicOp::*;
    let kind = |op| match op {
        Add | Sub => Some(0),
        And => Some(1),
        Or => Some(2),
        Xor => Some(3),
        Min => Some(4),
        Max => Some(5),
        _ => None,
    };
    a.1 || b.1 || kind(a.0).is_none() || kind(a.0) != kind(b.0)
}

/// Which memory a read of unwritten bytes was in (the advice differs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UninitSpace {
    /// Threadgroup memory, unwritten since the threadgroup started.
    Threadgroup,
    /// A device buffer that starts uninitialized (an MLX output without `init_value`).
    Device,
}

impl Batch {
    /// Record what an access by `lane` found: a race with an earlier access
    /// (and the racing element's byte offset) and/or an unwritten read.
    #[cold]
    #[inline(never)]
    fn note(&mut self, lane: usize, off: i64, race: Option<((Stamp, bool), i64)>, unwritten: bool, write: bool, alloc: AllocKind) {
        if let Some(((first, first_is_write), offset)) = race {
            self.races += 1;
            if self.race_lanes.len() < 5 {
                self.race_lanes.push(lane);
            }
            if self.first_race.is_none() {
                self.first_race = Some((lane, Race { first, first_is_write, second_is_write: write, offset, alloc }));
            }
        }
        if unwritten {
            self.uninit += 1;
            if self.first_uninit.is_none() {
                self.first_uninit = Some((lane, off, UninitSpace::Threadgroup));
            }
        }
    }
}

/// Apply the accesses of a batch of lanes to an allocation's shadow (none:
/// nothing to record), deferring reads that cannot find anything (see
/// `Deferred`).
fn apply_shadow(
    shadow: Option<&mut Shadow>,
    rules: &Rules,
    races: bool,
    lanes: impl Iterator<Item = (usize, i64, u32)>,
    size: usize,
    at: u32,
    kind: AllocKind,
) -> Batch {
    let mut out = Batch::default();
    let (write, atomic, interval, simd) = (rules.write, rules.atomic, rules.interval, rules.simd);
    match shadow {
        None => lanes.for_each(drop),
        Some(shadow) if !rules.device => {
            if shadow.deferred.interval != interval {
                // Reads of an earlier interval can no longer race with anything.
                shadow.deferred.clear(interval);
            }
            if !write && !atomic && shadow.defer_reads && shadow.unwritten == 0 && shadow.last_write != interval {
                // Nothing can be found now (see `Deferred`); without race
                // checks the read need not even be remembered.
                if races {
                    shadow.deferred.push(at, simd, size, lanes);
                    if shadow.deferred.lanes.len() > MAX_DEFERRED {
                        shadow.apply_deferred(rules);
                    }
                } else {
                    lanes.for_each(drop);
                }
            } else {
                if write || atomic {
                    shadow.last_write = interval;
                    // Reads followed by writes in one interval (`s[i] += s[j]`):
                    // deferring would only add work in this threadgroup.
                    shadow.defer_reads &= shadow.deferred.batches.is_empty();
                }
                shadow.apply_deferred(rules);
                shadow.apply(lanes, size, at, rules, races, kind, &mut out);
            }
        }
        Some(shadow) => shadow.apply(lanes, size, at, rules, races, kind, &mut out),
    }
    out
}

impl Sanitizer {
    pub fn new(races: bool, uninit: bool, counting: bool) -> Sanitizer {
        let clock = Clock { interval: 1, simd: 0 };
        Sanitizer { races, uninit, counting, device_clock: clock, threadgroup_clock: clock, ..Default::default() }
    }

    /// Track races on device buffer `index` of `bytes` bytes, `grain` bytes per element.
    pub fn track_device(&mut self, index: u32, bytes: usize, grain: u32) {
        if self.device.len() <= index as usize {
            self.device.resize_with(index as usize + 1, || None);
        }
        self.device[index as usize] = Some(Shadow::new(bytes, grain));
    }

    /// Treat buffer `index` as uninitialized until written.
    pub fn track_uninitialized(&mut self, index: u32, bytes: usize) {
        self.device_written.insert(index, vec![false; bytes]);
    }

    /// Whether device buffer `index` starts uninitialized (its bytes are
    /// tracked one by one, so its accesses are observed lane by lane).
    #[inline]
    pub fn tracks_uninitialized(&self, index: u32) -> bool {
        self.uninit && self.device_written.contains_key(&index)
    }

    /// Whether an access to allocation `kind` concerns the sanitizer at all
    /// (it counts, or keeps shadow state for that memory): most reads of
    /// inputs and constants do not, and are then not looked at lane by lane.
    #[inline]
    pub fn observes(&self, kind: AllocKind) -> bool {
        self.counting
            || match kind {
                AllocKind::Buffer(i) => self.device.get(i as usize).is_some_and(|s| s.is_some()) || self.tracks_uninitialized(i),
                AllocKind::Threadgroup(_) | AllocKind::ThreadgroupBuffer(_) | AllocKind::Private(_) => true,
                _ => false,
            }
    }

    /// Count one access by `lane` (private memory is not counted as traffic).
    pub fn count(&mut self, kind: AllocKind, lane: usize, op: MemOp) {
        let counted = self.counting && !matches!(kind, AllocKind::Buffer(i) if !op.writes() && self.uncounted.contains(&i));
        if let (true, Some(c)) = (counted, self.lane_counts.get_mut(lane)) {
            c.access(kind, op.writes(), op.is_atomic());
        }
    }

    /// Threadgroup variables as (bytes, grain) and `[[threadgroup(n)]]` buffer sizes.
    pub fn set_threadgroup_sizes(&mut self, vars: &[(usize, u32)], tg_buffers: &[usize]) {
        self.threadgroup = vars.iter().map(|&(b, g)| Shadow::new(b, g)).collect();
        self.tg_buffers = tg_buffers.iter().map(|&b| Shadow::new(b, 1)).collect();
    }

    /// A new threadgroup: fresh threadgroup shadow, a new interval.
    pub fn start_threadgroup(&mut self, lanes: usize, private_bytes: usize) {
        self.device_clock.interval += 1;
        self.threadgroup_clock.interval += 1;
        self.tg_start = self.device_clock.interval;
        self.weak_barriers.clear();
        self.atomics_seen.retain(|e| matches!(e.kind, AllocKind::Buffer(_)));
        for s in self.threadgroup.iter_mut().chain(self.tg_buffers.iter_mut()) {
            s.clear();
        }
        if self.uninit {
            self.private_init.clear();
            self.private_init.resize(private_bytes, false);
        }
        if self.counting {
            self.lane_counts.clear();
            self.lane_counts.resize(lanes, Counts::default());
        }
    }

    pub fn end_threadgroup(&mut self) {
        for c in &self.lane_counts {
            self.max_counts = self.max_counts.max(*c);
        }
        let group: u64 = self.lane_counts.iter().map(|c| c.device_atomics).sum();
        self.max_counts.threadgroup_device_atomics = self.max_counts.threadgroup_device_atomics.max(group);
    }

    /// A `threadgroup_barrier` (or, with `simdgroup`, a `simdgroup_barrier`,
    /// which orders accesses within each SIMD-group only) with `mem_flags`
    /// `flags`, at access site `at`: it orders the memory its flags name and
    /// nothing else (`mem_none` is an execution barrier only).
    pub fn barrier(&mut self, flags: u32, simdgroup: bool, at: u32) {
        let whole_group = self.lanes_per_threadgroup == 0;
        for (device, bit) in [(true, MEM_DEVICE), (false, MEM_THREADGROUP)] {
            let clock = if device { &mut self.device_clock } else { &mut self.threadgroup_clock };
            if flags & bit == 0 {
                let interval = clock.interval;
                if self.weak_barriers.len() < 64 {
                    self.weak_barriers.push(WeakBarrier { device, interval, at, flags, simdgroup });
                }
            } else if simdgroup && !whole_group {
                clock.simd += 1;
            } else {
                clock.interval += 1;
            }
        }
    }

    /// The last barrier in the current interval of `device` (or threadgroup)
    /// memory, `interval`, that did not order that memory.
    /// Whether the `size` bytes at `off` of allocation `kind` (not
    /// private memory) hold written values; `true` where nothing is
    /// tracked. For the debugger, which shows unwritten memory as unknown.
    pub fn written(&self, kind: AllocKind, off: i64, size: usize) -> bool {
        let Ok(off) = usize::try_from(off) else { return true };
        let shadow = match kind {
            AllocKind::Buffer(i) => {
                let bits = self.device_written.get(&i).filter(|_| self.uninit);
                return bits.and_then(|b| b.get(off..off.checked_add(size)?)).is_none_or(|r| r.iter().all(|&b| b));
            }
            AllocKind::Threadgroup(i) => self.threadgroup.get(i as usize),
            AllocKind::ThreadgroupBuffer(i) => self.tg_buffers.get(i as usize),
            _ => None,
        };
        let Some(sh) = shadow.filter(|_| self.uninit) else { return true };
        let (lo, hi) = (off >> sh.shift, (off + size.max(1) - 1) >> sh.shift);
        (lo..=hi).all(|c| sh.cells.get(c).is_none_or(|c| c.write.tid != 0))
    }

    pub fn weak_barrier(&self, device: bool, interval: u32) -> Option<WeakBarrier> {
        self.weak_barriers.iter().rev().find(|w| w.device == device && w.interval == interval).copied()
    }

    /// Record the accesses of many lanes to one (non-private) allocation:
    /// (lane, byte offset, thread number). Counts them, checks and marks
    /// the written bytes of uninitialized buffers, and applies the race and
    /// uninitialized-threadgroup-memory rules; the shadow is looked up once.
    /// This is the hot path.
    pub fn access_many(
        &mut self,
        kind: AllocKind,
        lanes: impl Iterator<Item = (usize, i64, u32)>,
        size: usize,
        at: u32,
        op: MemOp,
    ) -> Batch {
        let device_memory = matches!(kind, AllocKind::Buffer(_));
        let clock = if device_memory { self.device_clock } else { self.threadgroup_clock };
        let (interval, tg_start, races) = (clock.interval, self.tg_start, self.races);
        let (simd, lanes_per_tg) = (clock.simd as u16, self.lanes_per_threadgroup);
        let Sanitizer { counting, uninit, lane_counts, uncounted, device_written, device, threadgroup, tg_buffers, .. } = self;
        let counted = *counting && !matches!(kind, AllocKind::Buffer(i) if !op.writes() && uncounted.contains(&i));
        let mut bits = match kind {
            AllocKind::Buffer(i) if *uninit => device_written.get_mut(&i),
            _ => None,
        };
        let (mut dev_first, mut dev_count) = (None, 0u64);
        let track_order = self.races && op.is_atomic() && !self.atomic_sites.is_empty();
        // Whether two lanes of this instruction hit one element matters only
        // when the order of its own lanes could.
        let own_order = track_order && self.atomic_sites.get(&at).is_some_and(|&c| order_sensitive(c, c));
        let per_tg = self.lanes_per_threadgroup.max(1);
        let mut groups: Option<Groups> = None;
        let mut offsets = std::mem::take(&mut self.offsets);
        offsets.clear();
        let shadow = match kind {
            AllocKind::Buffer(i) => device.get_mut(i as usize).and_then(|s| s.as_mut()),
            AllocKind::Threadgroup(i) => threadgroup.get_mut(i as usize),
            AllocKind::ThreadgroupBuffer(i) => tg_buffers.get_mut(i as usize),
            _ => None,
        };
        let (write, atomic) = (op.writes(), op.is_atomic());
        let rules = Rules { interval, tg_start, simd, lanes_per_tg, device: device_memory, write, reads: op.reads(), atomic };
        // The common case (no counters, no uninitialized buffer, no atomics
        // to order) takes the lanes as they come: nothing per lane besides
        // the shadow.
        let mut out = if !counted && bits.is_none() && !track_order {
            apply_shadow(shadow, &rules, races, lanes, size, at, kind)
        } else {
            let lanes = lanes.inspect(|&(l, off, tid)| {
                if track_order {
                    let g = groups.get_or_insert(Groups { tid, ..Default::default() });
                    g.bits |= 1u32 << ((tid.wrapping_sub(1) % per_tg) / 32).min(31);
                    g.lanes += 1;
                    if own_order {
                        offsets.push(off);
                    }
                }
                if counted {
                    if let Some(c) = lane_counts.get_mut(l) {
                        c.access(kind, op.writes(), op.is_atomic());
                    }
                }
                let Some(bits) = bits.as_deref_mut() else { return };
                let Some(range) = usize::try_from(off).ok().and_then(|o| bits.get_mut(o..o.checked_add(size)?)) else { return };
                if op.reads() && !range.iter().all(|&b| b) {
                    dev_count += 1;
                    dev_first.get_or_insert((l, off, UninitSpace::Device));
                }
                if op.writes() {
                    range.fill(true);
                }
            });
            apply_shadow(shadow, &rules, races, lanes, size, at, kind)
        };
        if dev_count > 0 {
            out.uninit += dev_count;
            if out.first_uninit.is_none() {
                out.first_uninit = dev_first;
            }
        }
        if let Some(mut sg) = groups {
            offsets.sort_unstable();
            sg.shared = offsets.windows(2).any(|w| w[0] == w[1]);
            self.note_atomic_batch(kind, at, sg);
        }
        self.offsets = offsets;
        out
    }

    /// After the atomic operations of one instruction (site `at`) on
    /// allocation `kind` by the SIMD-groups `sg` (see `Groups`): look for an
    /// unordered atomic operation on the same allocation, of this interval
    /// (threadgroup memory) or of any other threadgroup (device memory),
    /// whose order with these may change the result, and remember it as a
    /// reason to explore other schedules. Coarse on purpose (the allocation,
    /// not the element): exploration decides whether the order matters.
    fn note_atomic_batch(&mut self, kind: AllocKind, at: u32, sg: Groups) {
        let Some(&mine) = self.atomic_sites.get(&at) else { return };
        let device = matches!(kind, AllocKind::Buffer(_));
        let interval = if device { self.device_clock.interval } else { self.threadgroup_clock.interval };
        let tg_start = self.tg_start;
        // The lanes of one instruction on one element run in no defined order either.
        if sg.shared && order_sensitive(mine, mine) {
            self.add_order_pair(OrderPair { kind, first_at: at, first_tid: sg.tid, second_at: at, second_tid: sg.tid });
        }
        let mut found = None;
        for e in self.atomics_seen.iter().filter(|e| e.kind == kind) {
            let other_threadgroup = device && e.interval < tg_start;
            let same_interval = e.interval == interval && (e.groups | sg.bits).count_ones() > 1;
            let Some(&theirs) = self.atomic_sites.get(&e.at) else { continue };
            if (other_threadgroup || same_interval) && order_sensitive(theirs, mine) {
                found = Some(OrderPair { kind, first_at: e.at, first_tid: e.tid, second_at: at, second_tid: sg.tid });
                break;
            }
        }
        if let Some(p) = found {
            self.add_order_pair(p);
        }
        match self.atomics_seen.iter().position(|e| e.kind == kind && e.at == at && (device || e.interval == interval)) {
            // (For device memory the first threadgroup's entry stays: any
            // later threadgroup is unordered with it.)
            Some(i) if !device || self.atomics_seen[i].interval >= tg_start => {
                let e = &mut self.atomics_seen[i];
                e.groups |= sg.bits;
                e.interval = interval;
            }
            Some(_) => {}
            None if self.atomics_seen.len() < 256 => {
                self.atomics_seen.push(AtomicSeen { kind, at, interval, groups: sg.bits, tid: sg.tid });
            }
            None => {}
        }
    }

    fn add_order_pair(&mut self, p: OrderPair) {
        let known = self.order_pairs.iter().any(|q| q.kind == p.kind && q.first_at == p.first_at && q.second_at == p.second_at);
        if !known && self.order_pairs.len() < 64 {
            self.order_pairs.push(p);
        }
    }

    /// Fold in the state of a worker that ran *later* threadgroups of the
    /// same dispatch: counters, and device shadows, where an element one
    /// side wrote and the other accessed is a race between threadgroups
    /// (added to `races`, grouped by access pair). With `last`, no other
    /// worker follows, so only the races are looked for.
    pub fn merge_later(&mut self, later: &Sanitizer, races: &mut Vec<CrossRace>, last: bool) {
        self.max_counts = self.max_counts.max(later.max_counts);
        for (i, (mine, theirs)) in self.device.iter_mut().zip(&later.device).enumerate() {
            let (Some(a), Some(b)) = (mine.as_mut(), theirs.as_ref()) else { continue };
            if self.races {
                let both = a.touched.start.max(b.touched.start)..a.touched.end.min(b.touched.end);
                if both.start < both.end {
                    find_cross_races(&a.cells[both.clone()], &b.cells[both.clone()], both.start, a.shift, i as u32, races);
                }
            }
            if !last && b.touched.start < b.touched.end {
                for (ca, cb) in a.cells[b.touched.clone()].iter_mut().zip(&b.cells[b.touched.clone()]) {
                    if cb.write.tid != 0 {
                        ca.write = cb.write;
                    }
                    if cb.read.tid != 0 {
                        ca.read = cb.read;
                        ca.read2 = cb.read2;
                    }
                }
                let t = &mut a.touched;
                *t = if t.start < t.end { t.start.min(b.touched.start)..t.end.max(b.touched.end) } else { b.touched.clone() };
            }
        }
    }
}

/// Races between two workers' accesses to the same device cells (`a` ran
/// the earlier threadgroups); `first` is the number of the first cell.
fn find_cross_races(a: &[Cell], b: &[Cell], first: usize, shift: u32, buffer: u32, races: &mut Vec<CrossRace>) {
    for (e, (ca, cb)) in a.iter().zip(b).enumerate() {
        let (b_wrote, b_read) = (cb.write.tid != 0, cb.read.tid != 0);
        if !b_wrote && !b_read {
            continue;
        }
        let second = if b_wrote { (cb.write, true) } else { (cb.read, false) };
        let hit = if ca.write.tid != 0 && !(ca.write.atomic && second.0.atomic) {
            Some((ca.write, true, second))
        } else if ca.read.tid != 0 && b_wrote && !(ca.read.atomic && cb.write.atomic) {
            Some((ca.read, false, (cb.write, true)))
        } else if ca.read2.tid != 0 && b_wrote && !(ca.read2.atomic && cb.write.atomic) {
            Some((ca.read2, false, (cb.write, true)))
        } else {
            None
        };
        let Some((first_stamp, first_is_write, (second, second_is_write))) = hit else { continue };
        let same = |r: &CrossRace| {
            r.race.first.at == first_stamp.at
                && r.second.at == second.at
                && r.race.first_is_write == first_is_write
                && r.second_is_write == second_is_write
        };
        match races.iter_mut().find(|r| same(r)) {
            Some(r) => r.count += 1,
            None => races.push(CrossRace {
                race: Race {
                    first: first_stamp,
                    first_is_write,
                    second_is_write,
                    offset: ((first + e) as i64) << shift,
                    alloc: AllocKind::Buffer(buffer),
                },
                second,
                second_is_write,
                count: 1,
            }),
        }
    }
}
