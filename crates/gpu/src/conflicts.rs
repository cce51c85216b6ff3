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
use crate::memory::AllocKind;
use crate::sanitizer::{MEM_DEVICE, MEM_THREADGROUP};
use crate::Kernel;

/// Two or more readers in the latest read epoch.
const MULTI: u32 = u32::MAX;

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
    fn new(bytes: usize, grain: u32) -> Shadow {
        let grain = grain.max(1).next_power_of_two();
        Shadow { cells: zeroed(bytes.div_ceil(grain as usize)), shift: grain.trailing_zeros(), lo: usize::MAX, hi: 0 }
    }
}

/// `n` default cells from zeroed memory: a large buffer's shadow costs
/// nothing where no thread of this worker touches it (the OS hands out
/// zero pages lazily).
fn zeroed(n: usize) -> Vec<Cell> {
    if n == 0 {
        return Vec::new();
    }
    let Ok(layout) = std::alloc::Layout::array::<Cell>(n) else { return vec![Cell::default(); n] };
    // SAFETY: `Cell` is five `u32`s, whose all-zero bit pattern is
    // `Cell::default()`; the pointer comes from the global allocator with
    // `Cell`'s layout for `n` cells, which the `Vec` takes over.
    unsafe {
        let p = std::alloc::alloc_zeroed(layout) as *mut Cell;
        if p.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        Vec::from_raw_parts(p, n, n)
    }
}

/// One worker's shadow of the memory the sanitizer watches.
///
/// Races are looked for under `--check memory` too, where the sanitizer
/// does not report them: a racy kernel run one thread at a time may take
/// other paths than in lockstep (and fault elsewhere), so the interpreter
/// must run it for its findings and buffers to be the interpreter's.
#[derive(Debug, Default)]
pub struct Shadows {
    /// Writable device buffers by index (the sanitizer watches those only).
    device: Vec<Option<Shadow>>,
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
const LAST_EPOCH: u32 = u32::MAX - 2;

impl Shadows {
    /// Shadows for `kernel` with these buffers (`buffer_len(i)` bytes) and
    /// `[[threadgroup(n)]]` buffer sizes, with the sanitizer's grains.
    pub fn new(kernel: &Kernel, buffer_len: &dyn Fn(u32) -> usize, tg_buffers: &[usize]) -> Shadows {
        let mut device: Vec<Option<Shadow>> = Vec::new();
        for p in &kernel.params {
            if let ParamKind::Buffer { index, writable: true, pointee, .. } = &p.kind {
                let i = *index as usize;
                if device.len() <= i {
                    device.resize_with(i + 1, || None);
                }
                device[i] = Some(Shadow::new(buffer_len(*index), crate::element_size(pointee)));
            }
        }
        Shadows {
            device,
            threadgroup: kernel.threadgroup_vars.iter().map(|v| Shadow::new(v.size as usize, v.grain)).collect(),
            tg_buffers: tg_buffers.iter().map(|&b| Shadow::new(b, 1)).collect(),
            ..Default::default()
        }
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

    /// Thread `tid` (global number + 1) accesses `size` bytes at byte
    /// offset `off` of an allocation of kind `kind` (already known to be in
    /// bounds). False when the sanitizer might report it.
    pub fn access(&mut self, kind: AllocKind, off: u64, size: u64, tid: u32, write: bool) -> bool {
        let (shadow, device) = match kind {
            AllocKind::Buffer(i) => match self.device.get_mut(i as usize) {
                Some(Some(s)) => (s, true),
                _ => return true,
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
        let (now, start) = if device { (self.dev_epoch, self.dev_start) } else { (self.tg_epoch, self.tg_start) };
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
            if !write && !device && c.w_epoch < start {
                return false; // threadgroup memory nobody here wrote
            }
            if c.w_tid != 0 && c.w_tid != tid && unordered(c.w_epoch) {
                return false;
            }
            // (Reads of an earlier threadgroup are another thread's.)
            if write && c.r_tid != 0 && ((c.r_max == now && c.r_tid != tid) || (device && c.r_min < start)) {
                return false;
            }
            if write {
                c.w_tid = tid;
                c.w_epoch = now;
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
