//! The compiled tier's checks (`--check memory|all` on compiled code): a
//! lean shadow that only *detects* what the sanitizer (`sanitizer.rs`)
//! would report about memory — a race, or a read of threadgroup memory no
//! thread of the threadgroup wrote. It reports nothing itself: on any hit
//! the compiled run gives up and the interpreter reruns the dispatch with
//! the full sanitizer, which writes the findings. So it may flag more than
//! the sanitizer does (a rerun costs time), never less (a missed finding
//! would be a false clean).
//!
//! Why running threads one after another finds every race lockstep would:
//! while no two threads touch one element unordered, no thread sees
//! another's writes of the same interval, so each thread does exactly what
//! it does in lockstep; the first unordered pair is therefore one lockstep
//! has too, and it is flagged here when its second access runs.
//!
//! Time is counted as in the sanitizer, in intervals per kind of memory,
//! but numbered across the worker's threadgroups (*epochs*), so that a
//! threadgroup's first epoch tells its accesses from earlier threadgroups'
//! without clearing anything. Per element (the sanitizer's grain) a cell
//! keeps the last write and a summary of the reads: the latest read epoch
//! with its reader (or `MULTI` readers), and the earliest read epoch, which
//! is all the cross-threadgroup rule needs.

use crate::ir::ParamKind;
use crate::memory::{AllocId, AllocKind};
use crate::sanitizer::{MEM_DEVICE, MEM_THREADGROUP};
use crate::Kernel;

/// Two or more readers in the latest read epoch.
pub const MULTI: u32 = u32::MAX;
/// A write's epoch with this bit set was an atomic operation's; epochs
/// themselves stay below it.
pub const ATOMIC: u32 = 1 << 31;
pub const EPOCH_MASK: u32 = ATOMIC - 1;

/// One access as the rules see it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Op {
    pub write: bool,
    /// An atomic operation: it counts as a write (it may change the
    /// element), as a read of unwritten memory, and races only with
    /// accesses that are not atomic. (An atomic load counts as a write
    /// too, which may flag a plain read after it that the sanitizer lets
    /// pass: a rerun, not a missed finding.)
    pub atomic: bool,
}

/// The layout of a cell, for compiled code that updates cells itself:
/// its size and the byte offsets of its fields (five `u32`s).
pub const CELL_BYTES: i64 = 20;
pub const W_TID: i32 = 0;
pub const W_EPOCH: i32 = 4;
pub const R_TID: i32 = 8;
pub const R_MIN: i32 = 12;
pub const R_MAX: i32 = 16;

const _: () = assert!(
    std::mem::size_of::<Cell>() == CELL_BYTES as usize
        && std::mem::offset_of!(Cell, w_tid) == W_TID as usize
        && std::mem::offset_of!(Cell, w_epoch) == W_EPOCH as usize
        && std::mem::offset_of!(Cell, r_tid) == R_TID as usize
        && std::mem::offset_of!(Cell, r_min) == R_MIN as usize
        && std::mem::offset_of!(Cell, r_max) == R_MAX as usize
);

#[derive(Clone, Copy, Default, Debug)]
#[repr(C)]
struct Cell {
    /// Last write: thread number + 1 (0: none) and epoch.
    w_tid: u32,
    w_epoch: u32,
    /// The reader of epoch `r_max` (`MULTI`: several); `r_min`: the first
    /// read's epoch (0: never read).
    r_tid: u32,
    r_min: u32,
    r_max: u32,
}

#[derive(Debug, Default)]
struct Shadow {
    cells: Vec<Cell>,
    /// log2 of the bytes per cell.
    shift: u32,
    /// Cells touched so far lie in `lo..hi` (none when `lo >= hi`).
    lo: usize,
    hi: usize,
}

impl Shadow {
    fn new(bytes: usize, shift: u32) -> Shadow {
        Shadow { cells: crate::cells::zeroed(bytes.div_ceil(1 << shift)), shift, lo: usize::MAX, hi: 0 }
    }

    /// A shadow whose every cell counts as touched: compiled code updates
    /// threadgroup memory's cells without reporting which (they are few),
    /// so all of them are cleared when the array is reused.
    fn whole(bytes: usize, shift: u32) -> Shadow {
        let mut s = Shadow::new(bytes, shift);
        (s.lo, s.hi) = (0, s.cells.len());
        s
    }
}

/// log2 of the bytes per cell of the shadow allocation `id` of `kernel`
/// has (the sanitizer's grain), if it has one: threadgroup variables,
/// `[[threadgroup(n)]]` buffers and writable device buffers.
pub fn cell_shift(kernel: &Kernel, id: AllocId) -> Option<u32> {
    let shift = |grain: u32| grain.max(1).next_power_of_two().trailing_zeros();
    match id.kind() {
        AllocKind::Threadgroup(i) => kernel.threadgroup_vars.get(i as usize).map(|v| shift(v.grain)),
        AllocKind::ThreadgroupBuffer(_) => Some(0),
        AllocKind::Buffer(i) => kernel.params.iter().find_map(|p| match &p.kind {
            ParamKind::Buffer { index, writable: true, pointee, .. } if *index == i => Some(shift(crate::element_size(pointee))),
            _ => None,
        }),
        _ => None,
    }
}

impl Drop for Shadow {
    fn drop(&mut self) {
        crate::cells::keep(std::mem::take(&mut self.cells), self.lo..self.hi);
    }
}

// SAFETY: five `u32`s; all-zero bytes are `Cell::default()`.
unsafe impl crate::cells::Cell for Cell {}

/// One worker's shadow of the memory the sanitizer watches.
///
/// Races are looked for under `--check memory` too, where the sanitizer
/// does not report them: a racy kernel run one thread at a time may take
/// other paths than in lockstep (and fault elsewhere), so the interpreter
/// must run it for its findings and buffers to be the interpreter's.
#[derive(Debug, Default)]
pub struct Shadows {
    /// Writable device buffers by index (the sanitizer watches those only),
    /// made on first use (`device_shadow`): compiled code leaves some
    /// unwatched (`jit::analysis::race_free_buffers`), and a large buffer's
    /// cells are megabytes to zero.
    device: Vec<Option<Shadow>>,
    /// Each watched buffer's bytes and log2 cell size.
    device_sizes: Vec<Option<(usize, u32)>>,
    threadgroup: Vec<Shadow>,
    tg_buffers: Vec<Shadow>,
    /// Which bytes of the threads' private memory the current threadgroup
    /// wrote (as the sanitizer's `private_init`).
    private: Vec<bool>,
    dev_epoch: u32,
    tg_epoch: u32,
    /// The current threadgroup's first epoch of each kind of memory.
    dev_start: u32,
    tg_start: u32,
}

/// Epochs stop here: a worker that would go past gives up (the
/// interpreter has no such limit).
const LAST_EPOCH: u32 = EPOCH_MASK - 2;

impl Shadows {
    /// Shadows for `kernel` with these buffers (`buffer_len(i)` bytes) and
    /// `[[threadgroup(n)]]` buffer sizes, with the sanitizer's grains.
    pub fn new(kernel: &Kernel, buffer_len: &dyn Fn(u32) -> usize, tg_buffers: &[usize]) -> Shadows {
        let mut device_sizes: Vec<Option<(usize, u32)>> = Vec::new();
        for p in &kernel.params {
            if let ParamKind::Buffer { index, .. } = &p.kind {
                let Some(shift) = cell_shift(kernel, AllocId::buffer(*index)) else { continue };
                let i = *index as usize;
                if device_sizes.len() <= i {
                    device_sizes.resize(i + 1, None);
                }
                device_sizes[i] = Some((buffer_len(*index), shift));
            }
        }
        let device = device_sizes.iter().map(|_| None).collect();
        let threadgroup = (0..kernel.threadgroup_vars.len() as u32)
            .map(|i| {
                Shadow::whole(kernel.threadgroup_vars[i as usize].size as usize, cell_shift(kernel, AllocId::threadgroup(i)).unwrap_or(0))
            })
            .collect();
        Shadows {
            device,
            device_sizes,
            threadgroup,
            tg_buffers: tg_buffers.iter().map(|&b| Shadow::whole(b, 0)).collect(),
            ..Default::default()
        }
    }

    /// The shadow of watched device buffer `i`, made now if it is not yet.
    fn device_shadow(&mut self, i: usize) -> Option<&mut Shadow> {
        let &(bytes, shift) = self.device_sizes.get(i)?.as_ref()?;
        let slot = self.device.get_mut(i)?;
        Some(slot.get_or_insert_with(|| Shadow::new(bytes, shift)))
    }

    /// A new threadgroup starts (a new epoch of each kind of memory, and
    /// `private_bytes` of private memory nobody wrote); false when the
    /// epochs ran out.
    pub fn start_threadgroup(&mut self, private_bytes: usize) -> bool {
        if self.dev_epoch >= LAST_EPOCH || self.tg_epoch >= LAST_EPOCH {
            return false;
        }
        self.private.clear();
        self.private.resize(private_bytes, false);
        self.dev_epoch += 1;
        self.tg_epoch += 1;
        self.dev_start = self.dev_epoch;
        self.tg_start = self.tg_epoch;
        true
    }

    /// Every thread passed a `threadgroup_barrier` whose `mem_flags` are
    /// (at least) `flags`; false when the epochs ran out.
    pub fn barrier(&mut self, flags: u32) -> bool {
        if self.dev_epoch >= LAST_EPOCH || self.tg_epoch >= LAST_EPOCH {
            return false;
        }
        if flags & MEM_DEVICE != 0 {
            self.dev_epoch += 1;
        }
        if flags & MEM_THREADGROUP != 0 {
            self.tg_epoch += 1;
        }
        true
    }

    /// Thread `tid` (global number + 1) makes access `op` of `size` bytes
    /// at byte offset `off` of an allocation of kind `kind` (already known
    /// to be in bounds). False when the sanitizer might report it.
    pub fn access(&mut self, kind: AllocKind, off: u64, size: u64, tid: u32, op: Op) -> bool {
        let (atomic, write) = (op.atomic, op.write || op.atomic);
        let reads = !op.write || op.atomic;
        let epochs = [(self.tg_epoch, self.tg_start), (self.dev_epoch, self.dev_start)];
        let (shadow, device) = match kind {
            AllocKind::Buffer(i) => match self.device_shadow(i as usize) {
                Some(s) => (s, true),
                None => return true,
            },
            AllocKind::Threadgroup(i) => match self.threadgroup.get_mut(i as usize) {
                Some(s) => (s, false),
                None => return false,
            },
            AllocKind::ThreadgroupBuffer(i) => match self.tg_buffers.get_mut(i as usize) {
                Some(s) => (s, false),
                None => return false,
            },
            _ => return true,
        };
        let (now, start) = epochs[device as usize];
        let first = (off >> shadow.shift) as usize;
        let last = ((off + size.max(1) - 1) >> shadow.shift) as usize;
        if last >= shadow.cells.len() {
            return false;
        }
        shadow.lo = shadow.lo.min(first);
        shadow.hi = shadow.hi.max(last + 1);
        // An earlier access by another thread at `epoch` is unordered with
        // this one: same interval, or (device memory) another threadgroup.
        let unordered = |epoch: u32| epoch == now || (device && epoch < start);
        for c in &mut shadow.cells[first..=last] {
            let w_epoch = c.w_epoch & EPOCH_MASK;
            if reads && !device && w_epoch < start {
                return false; // threadgroup memory nobody here wrote
            }
            let both_atomic = atomic && c.w_epoch & ATOMIC != 0;
            if c.w_tid != 0 && c.w_tid != tid && unordered(w_epoch) && !both_atomic {
                return false;
            }
            // (Reads of an earlier threadgroup are another thread's.)
            if write && c.r_tid != 0 && ((c.r_max == now && c.r_tid != tid) || (device && c.r_min < start)) {
                return false;
            }
            if write {
                c.w_tid = tid;
                c.w_epoch = if atomic { now | ATOMIC } else { now };
            } else {
                if c.r_tid == 0 {
                    c.r_min = now;
                } else if !device && c.r_max < start {
                    c.r_tid = 0; // a read of an earlier threadgroup's memory
                }
                c.r_tid = if c.r_tid == 0 || c.r_tid == tid || c.r_max != now { tid } else { MULTI };
                c.r_max = now;
            }
        }
        true
    }

    fn shadow_mut(&mut self, id: AllocId) -> Option<&mut Shadow> {
        match id.kind() {
            AllocKind::Buffer(i) => self.device_shadow(i as usize),
            AllocKind::Threadgroup(i) => self.threadgroup.get_mut(i as usize),
            AllocKind::ThreadgroupBuffer(i) => self.tg_buffers.get_mut(i as usize),
            _ => None,
        }
    }

    /// Where the cells of allocation `id` start (`CELL_BYTES` each, one
    /// per `1 << cell_shift` bytes), for compiled code that updates them
    /// itself with the rules of [`Shadows::access`]; it then reports the
    /// cells it touched with [`Shadows::touched`].
    pub fn cells(&mut self, id: AllocId) -> Option<*mut u8> {
        self.shadow_mut(id).map(|s| s.cells.as_mut_ptr() as *mut u8)
    }

    /// Whether every cell of threadgroup memory `id` was written in this
    /// threadgroup (a read of it is then of written memory: compiled code
    /// stops checking that). Cells before `*from` were, and stay so until
    /// the threadgroup ends; `*from` moves past the cells found written,
    /// so asking at every barrier costs one pass over the cells in all.
    pub fn all_written(&mut self, id: AllocId, from: &mut usize) -> bool {
        let start = self.tg_start;
        let Some(s) = (match id.kind() {
            AllocKind::Threadgroup(i) => self.threadgroup.get(i as usize),
            AllocKind::ThreadgroupBuffer(i) => self.tg_buffers.get(i as usize),
            _ => None,
        }) else {
            return false;
        };
        let rest = s.cells.get(*from..).unwrap_or_default();
        *from += rest.iter().take_while(|c| c.w_epoch & EPOCH_MASK >= start).count();
        *from >= s.cells.len()
    }

    /// Compiled code touched cells `lo..hi` of allocation `id`.
    pub fn touched(&mut self, id: AllocId, lo: usize, hi: usize) {
        if let Some(s) = self.shadow_mut(id) {
            if lo < hi {
                s.lo = s.lo.min(lo);
                s.hi = s.hi.max(hi);
            }
        }
    }

    /// Count every cell as touched: compiled code that gave up may not
    /// have reported the cells it wrote, and an array is cleared for reuse
    /// only where it was touched (`cells::keep`).
    pub fn all_touched(&mut self) {
        for s in self.device.iter_mut().flatten().chain(&mut self.threadgroup).chain(&mut self.tg_buffers) {
            (s.lo, s.hi) = (0, s.cells.len());
        }
    }

    /// The current epoch and the threadgroup's first epoch of device
    /// memory, then of threadgroup memory.
    pub fn epochs(&self) -> [u32; 4] {
        [self.dev_epoch, self.dev_start, self.tg_epoch, self.tg_start]
    }

    /// A thread reads or writes the private bytes `range` (its own, see
    /// `exec::private_shadow`). False when it reads one it never wrote.
    pub fn private_access(&mut self, range: std::ops::Range<usize>, write: bool) -> bool {
        let Some(bytes) = self.private.get_mut(range) else { return false };
        if write {
            bytes.fill(true);
            true
        } else {
            bytes.iter().all(|&b| b)
        }
    }

    /// Whether the device accesses of `self` (threadgroups run before
    /// `later`'s, by another worker) and of `later` touch one element with
    /// at least one write: a race between threadgroups.
    pub fn conflict(&self, later: &Shadows) -> bool {
        for (a, b) in self.device.iter().zip(&later.device) {
            let (Some(a), Some(b)) = (a, b) else { continue };
            let (lo, hi) = (a.lo.max(b.lo), a.hi.min(b.hi).min(a.cells.len()).min(b.cells.len()));
            if lo >= hi {
                continue;
            }
            let touched = |c: &Cell| c.w_tid != 0 || c.r_tid != 0;
            if a.cells[lo..hi].iter().zip(&b.cells[lo..hi]).any(|(x, y)| touched(x) && touched(y) && (x.w_tid != 0 || y.w_tid != 0)) {
                return true;
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::access::MemOp;
    use crate::sanitizer::Sanitizer;
    use proptest::prelude::*;

    const LANES: u32 = 4;
    const BYTES: usize = 16;

    /// One writable device buffer and one threadgroup variable of 16
    /// bytes, 4-byte cells.
    fn shadows() -> Shadows {
        Shadows { device: vec![None], device_sizes: vec![Some((BYTES, 2))], threadgroup: vec![Shadow::new(BYTES, 2)], ..Default::default() }
    }

    fn tid(tg: u32, lane: u32) -> u32 {
        tg * LANES + lane + 1
    }

    const R: Op = Op { write: false, atomic: false };
    const W: Op = Op { write: true, atomic: false };
    const A: Op = Op { write: true, atomic: true };
    const DEV: AllocKind = AllocKind::Buffer(0);
    const TG: AllocKind = AllocKind::Threadgroup(0);

    #[test]
    fn two_threads_writing_one_element_between_barriers_conflict() {
        let mut s = shadows();
        assert!(s.start_threadgroup(0));
        assert!(s.access(TG, 0, 4, tid(0, 0), W));
        assert!(!s.access(TG, 0, 4, tid(0, 1), W));
    }

    #[test]
    fn a_barrier_naming_the_memory_orders_it_and_only_it() {
        let mut s = shadows();
        s.start_threadgroup(0);
        assert!(s.access(TG, 0, 4, tid(0, 0), W) && s.access(DEV, 0, 4, tid(0, 0), W));
        assert!(s.barrier(MEM_THREADGROUP));
        assert!(s.access(TG, 0, 4, tid(0, 1), R), "ordered by the barrier");
        assert!(!s.access(DEV, 0, 4, tid(0, 1), R), "mem_threadgroup does not order device memory");
    }

    #[test]
    fn threadgroup_memory_another_threadgroup_wrote_is_unwritten() {
        let mut s = shadows();
        s.start_threadgroup(0);
        assert!(s.access(TG, 4, 4, tid(0, 0), W));
        s.barrier(MEM_THREADGROUP);
        assert!(s.access(TG, 4, 4, tid(0, 2), R));
        assert!(!s.access(TG, 8, 4, tid(0, 2), R), "never written");
        s.start_threadgroup(0);
        assert!(!s.access(TG, 4, 4, tid(1, 2), R), "written by the last threadgroup only");
    }

    #[test]
    fn device_elements_touched_by_two_threadgroups_with_a_write_conflict() {
        let mut s = shadows();
        s.start_threadgroup(0);
        assert!(s.access(DEV, 0, 4, tid(0, 0), R));
        assert!(s.access(DEV, 4, 4, tid(0, 1), W));
        s.start_threadgroup(0);
        assert!(s.access(DEV, 0, 4, tid(1, 3), R), "two reads never race");
        assert!(s.access(DEV, 8, 4, tid(1, 3), W), "an element of its own");
        assert!(!s.access(DEV, 0, 4, tid(1, 0), W), "read by the first threadgroup");
        assert!(!s.access(DEV, 4, 4, tid(1, 0), R), "written by the first threadgroup");
    }

    #[test]
    fn threadgroup_cells_compiled_code_wrote_are_cleared_when_reused() {
        // 64 KiB of 1-byte cells: large enough to be kept for reuse.
        let fresh = || Shadows { tg_buffers: vec![Shadow::whole(64 << 10, 0)], ..Default::default() };
        let id = AllocId::tg_buffer(0);
        let mut s = fresh();
        s.start_threadgroup(0);
        // As compiled code does: straight into the cell, reporting nothing.
        let c = s.cells(id).expect("cells") as *mut Cell;
        // SAFETY: cell 100 of 65,536.
        unsafe { *c.add(100) = Cell { w_tid: 2, w_epoch: 1, ..Cell::default() } };
        drop(s);
        for _ in 0..4 {
            let mut s = fresh();
            s.start_threadgroup(0);
            assert!(!s.access(AllocKind::ThreadgroupBuffer(0), 100, 1, 2, R), "a reused cell still says written");
        }
    }

    #[test]
    fn atomics_race_only_with_accesses_that_are_not_atomic() {
        let mut s = shadows();
        s.start_threadgroup(0);
        assert!(s.access(TG, 0, 4, tid(0, 0), W));
        s.barrier(MEM_THREADGROUP);
        assert!(s.access(TG, 0, 4, tid(0, 1), A) && s.access(TG, 0, 4, tid(0, 2), A));
        assert!(!s.access(TG, 0, 4, tid(0, 3), R), "a plain read beside atomics");
        let mut s = shadows();
        s.start_threadgroup(0);
        assert!(!s.access(TG, 0, 4, tid(0, 1), A), "an atomic add reads threadgroup memory nobody wrote");
    }

    #[test]
    fn a_threads_own_accesses_never_conflict_and_reads_by_several_threads_do_with_a_write() {
        let mut s = shadows();
        s.start_threadgroup(0);
        assert!(s.access(TG, 0, 4, tid(0, 1), W));
        assert!(s.access(TG, 0, 4, tid(0, 1), R) && s.access(TG, 0, 4, tid(0, 1), W));
        s.barrier(MEM_THREADGROUP);
        assert!(s.access(TG, 0, 4, tid(0, 2), R) && s.access(TG, 0, 4, tid(0, 3), R));
        assert!(!s.access(TG, 0, 4, tid(0, 2), W), "thread 3 read it in this interval");
    }

    #[test]
    fn workers_conflict_only_where_both_touched_an_element_and_one_wrote() {
        let (mut a, mut b) = (shadows(), shadows());
        a.start_threadgroup(0);
        b.start_threadgroup(0);
        assert!(a.access(DEV, 0, 4, tid(0, 0), W) && a.access(DEV, 4, 4, tid(0, 0), R));
        assert!(b.access(DEV, 4, 4, tid(5, 0), R) && b.access(DEV, 8, 4, tid(5, 0), W));
        assert!(!a.conflict(&b), "shared reads, separate writes");
        assert!(b.access(DEV, 0, 4, tid(5, 1), R));
        assert!(a.conflict(&b), "a wrote what b read");
    }

    #[derive(Clone, Debug)]
    enum Step {
        Threadgroup,
        Barrier(u32),
        Access { lane: u32, cell: u64, write: bool, atomic: bool, device: bool },
    }

    fn step() -> impl Strategy<Value = Step> {
        prop_oneof![
            1 => Just(Step::Threadgroup),
            2 => (0u32..4).prop_map(Step::Barrier),
            12 => (0..LANES, 0u64..4, any::<bool>(), 0..4, any::<bool>())
                .prop_map(|(lane, cell, write, atomic, device)| Step::Access { lane, cell, write, atomic: atomic == 0, device }),
        ]
    }

    proptest! {
        /// The sanitizer against this shadow on one sequence of accesses:
        /// whatever the sanitizer reports, the shadow has flagged by then
        /// (it may flag more, never less or later).
        #[test]
        fn flags_whatever_the_sanitizer_reports(ops in proptest::collection::vec(step(), 1..60)) {
            let mut san = Sanitizer::new(true, true, false);
            san.track_device(0, BYTES, 4);
            san.set_threadgroup_sizes(&[(BYTES, 4)], &[]);
            san.lanes_per_threadgroup = LANES;
            san.start_threadgroup(LANES as usize, 0);
            let mut s = shadows();
            s.start_threadgroup(0);
            let mut tg = 0u32;
            let mut flagged = false;
            for op in ops {
                match op {
                    Step::Threadgroup => {
                        tg += 1;
                        san.start_threadgroup(LANES as usize, 0);
                        flagged |= !s.start_threadgroup(0);
                    }
                    Step::Barrier(flags) => {
                        san.barrier(flags, false, 0);
                        flagged |= !s.barrier(flags);
                    }
                    Step::Access { lane, cell, write, atomic, device } => {
                        let kind = if device { DEV } else { TG };
                        let mem_op = match (atomic, write) {
                            (true, _) => MemOp::Atomic(crate::ir::AtomicOp::Add),
                            (false, true) => MemOp::Write,
                            (false, false) => MemOp::Read,
                        };
                        let t = tid(tg, lane);
                        let b = san.access_many(kind, std::iter::once((lane as usize, cell as i64 * 4, t)), 4, 0, mem_op);
                        flagged |= !s.access(kind, cell * 4, 4, t, super::Op { write, atomic });
                        let reported = b.first_race.is_some() || b.first_uninit.is_some();
                        prop_assert!(!reported || flagged, "the sanitizer reports an access the shadow let through");
                    }
                }
            }
        }
    }
}
