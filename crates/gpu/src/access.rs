//! The one way the interpreter touches memory.
//!
//! Every load, store, atomic, block copy and `simdgroup_matrix` element
//! goes through two steps here, whatever path then moves the data:
//!
//! 1. `check_lanes` / `check_lane`: null, bounds, alignment and writes to
//!    read-only memory. A lane that fails gets a finding and makes no
//!    access. The batched form first proves, in one branch-free pass, that
//!    no lane can fail; only when that fails does it look lane by lane, with
//!    the same rule (`fault`).
//! 2. `observe_lanes` / `observe_lane`: the counters, uninitialized reads
//!    and the race shadow. Observers see accesses only here.
//!
//! The data movement in between (block copies, gathers, a uniform load done
//! once) is free to specialize because nothing it skips can be a check.

use crate::exec::{Machine, Mask};
use crate::findings::FindingKind;
use crate::ir::{AccessId, AtomicOp, Reg};
use crate::memory::{ptr_alloc, ptr_offset, AllocKind};

/// The offset part of a pointer (`memory.rs`).
const OFFSET_BITS: u64 = (1 << 40) - 1;

/// What an access does to the bytes it touches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemOp {
    Read,
    Write,
    /// An atomic operation: it reads the old value (except a store) and
    /// writes (except a load).
    Atomic(AtomicOp),
}

impl MemOp {
    pub fn reads(self) -> bool {
        !matches!(self, MemOp::Write | MemOp::Atomic(AtomicOp::Store))
    }
    pub fn writes(self) -> bool {
        !matches!(self, MemOp::Read | MemOp::Atomic(AtomicOp::Load))
    }
    pub fn is_atomic(self) -> bool {
        matches!(self, MemOp::Atomic(_))
    }
}

/// What `check_lanes` found.
#[derive(Clone, Copy)]
pub(crate) struct Checked {
    /// The lanes whose access can be made.
    pub ok: Mask,
    /// Every lane can, all in the first lane's allocation: the data can
    /// move without looking at a lane again.
    pub one_allocation: bool,
}

/// Why one lane's access cannot be made.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Fault {
    Null,
    OutOfBounds,
    ReadOnly,
    Misaligned,
}

/// The alignment an access of `size` bytes needs: its size for the
/// power-of-two sizes of scalars, none for block copies of other sizes.
#[inline]
pub fn natural_align(size: usize) -> usize {
    if size.is_power_of_two() {
        size.min(16)
    } else {
        1
    }
}

impl Machine<'_> {
    /// Why an access of `size` bytes at `p` (aligned to `align`) cannot be
    /// made, if it cannot.
    #[inline]
    pub(crate) fn fault(&self, p: u64, size: usize, align: usize, write: bool) -> Option<Fault> {
        let kind = ptr_alloc(p).kind();
        if matches!(kind, AllocKind::Null | AllocKind::Invalid) {
            return Some(Fault::Null);
        }
        let len = self.mem.size_of_alloc(p);
        let off = ptr_offset(p);
        if off < 0 || (off as u64).checked_add(size as u64).is_none_or(|end| end > len) {
            return Some(Fault::OutOfBounds);
        }
        if write && matches!(kind, AllocKind::Constant(_)) {
            return Some(Fault::ReadOnly);
        }
        if align > 1 && !(off as usize).is_multiple_of(align) {
            return Some(Fault::Misaligned);
        }
        None
    }

    /// The lanes of `mask` whose access of `size` bytes through `ptr` can be
    /// made; every other lane gets a finding.
    pub(crate) fn check_lanes(&mut self, ptr: Reg, size: usize, mask: &Mask, at: AccessId, write: bool) -> Checked {
        let Some(first) = mask.lanes().next() else { return Checked { ok: *mask, one_allocation: true } };
        let align = natural_align(size);
        let p0 = self.get_pub(ptr, first);
        if self.fault(p0, size, align, write).is_none() {
            // Every lane in the first lane's allocation, in bounds and aligned:
            // per lane, nonzero bits flag another allocation, an offset past
            // `limit` (offsets are below 2^40, so `limit - offset` is
            // negative exactly then; a negative offset is a huge one) or a
            // misaligned one; OR-ed over the lanes in a pass without
            // branches, which vectorizes.
            let base = crate::memory::ptr_bits(ptr_alloc(p0), 0);
            let limit = self.mem.size_of_alloc(p0) - size as u64;
            let amask = align as u64 - 1;
            let bad = move |p: u64| ((p ^ base) >> 40) | (limit.wrapping_sub(p & OFFSET_BITS) >> 63) | (p & amask);
            let all_good = if self.is_uniform_pub(ptr) {
                true
            } else {
                let flags = match ptr {
                    Reg::W64(r) if first == 0 && mask.count() as usize == self.n => {
                        let start = r as usize * self.stride;
                        self.r64[start..start + self.n].iter().fold(0u64, |acc, &p| acc | bad(p))
                    }
                    _ => mask.lanes().fold(0u64, |acc, l| acc | bad(self.get_pub(ptr, l))),
                };
                flags == 0
            };
            if all_good {
                return Checked { ok: *mask, one_allocation: true };
            }
        }
        let mut ok = Mask::empty();
        for l in mask.lanes() {
            let p = self.get_pub(ptr, l);
            if self.check_lane(p, size, l, at, write) {
                ok.set(l, true);
            }
        }
        Checked { ok, one_allocation: false }
    }

    /// Whether lane `l` may access `size` bytes at `p` (aligned to their
    /// size); if not, a finding says why.
    pub(crate) fn check_lane(&mut self, p: u64, size: usize, l: usize, at: AccessId, write: bool) -> bool {
        self.check_lane_aligned(p, size, natural_align(size), l, at, write)
    }

    /// Like `check_lane` for a value whose type is aligned to `align`
    /// (a struct copied whole: `alignas`, not its size, decides).
    pub(crate) fn check_lane_aligned(&mut self, p: u64, size: usize, align: usize, l: usize, at: AccessId, write: bool) -> bool {
        match self.fault(p, size, align, write) {
            None => true,
            Some(f) => {
                self.report_fault(f, p, size, at, l, write);
                false
            }
        }
    }

    fn report_fault(&mut self, fault: Fault, p: u64, size: usize, at: AccessId, lane: usize, write: bool) {
        if !self.check_memory {
            return;
        }
        // Seen before at this access: count it without writing its
        // message again (a faulting loop repeats it for every thread).
        let kind = if let Fault::Misaligned = fault { FindingKind::MisalignedAccess } else { FindingKind::OutOfBounds };
        let span = self.k.accesses.get(at as usize).map(|a| a.span).unwrap_or(self.k.span);
        if self.stops.is_none() && self.findings.bump(kind, span, self.geo.global(lane)) {
            return;
        }
        let what = self.k.accesses.get(at as usize).map(|a| a.what.clone()).unwrap_or_default();
        let rw = if write { "write" } else { "read" };
        let off = ptr_offset(p);
        match fault {
            Fault::Null => {
                let msg = if ptr_alloc(p).kind() == AllocKind::Null {
                    format!("{rw} through a null pointer")
                } else {
                    format!("{rw} of `{what}` through an invalid pointer")
                };
                self.report_lane(FindingKind::OutOfBounds, at, lane, msg);
            }
            Fault::OutOfBounds => {
                let alloc_size = self.mem.size_of_alloc(p);
                let element = if size > 0 && off >= 0 && (off as u64).is_multiple_of(size as u64) {
                    format!(" (element {} of {})", off / size as i64, alloc_size / size as u64)
                } else {
                    String::new()
                };
                let msg = format!(
                    "out-of-bounds {rw} of `{what}`: {size} byte{} at byte offset {off}, but it is {alloc_size} bytes long{element}",
                    if size == 1 { "" } else { "s" },
                );
                self.report_lane(FindingKind::OutOfBounds, at, lane, msg);
            }
            Fault::ReadOnly => {
                let msg = format!("write to `{what}`, which is in read-only `constant` memory");
                self.report_lane(FindingKind::OutOfBounds, at, lane, msg);
            }
            Fault::Misaligned => {
                let msg = format!("misaligned {size}-byte {rw} of `{what}` at byte offset {off}: it must be a multiple of {size}");
                let f = self.report_lane(FindingKind::MisalignedAccess, at, lane, msg);
                if f.notes.is_empty() {
                    f.notes.push("a pointer cast (e.g. `(device float*)(bytes + 2)`) produced an address that is not aligned to the element type; real GPUs give undefined results, so the simulator skipped this access".into());
                }
            }
        }
    }

    /// Tell the observers about the accesses the lanes of `lanes` made
    /// through `ptr`: batched when they all hit one shared allocation (the
    /// common case), lane by lane otherwise. `one_allocation`: `check_lanes`
    /// found every lane in one allocation.
    pub(crate) fn observe_lanes(&mut self, ptr: Reg, size: usize, at: AccessId, lanes: &Mask, op: MemOp, one_allocation: bool) {
        let Some(san) = self.san.as_ref() else { return };
        let Some(first) = lanes.lanes().next() else { return };
        let p0 = self.get_pub(ptr, first);
        let alloc = ptr_alloc(p0);
        let kind = alloc.kind();
        // (Lanes that `check_lanes` found all in one allocation share its kind.)
        if !san.observes(kind) && (one_allocation || self.is_uniform_pub(ptr)) {
            return;
        }
        let one_allocation = || match ptr {
            _ if self.is_uniform_pub(ptr) => true,
            Reg::W64(r) if first == 0 && lanes.count() as usize == self.n => {
                let start = r as usize * self.stride;
                crate::memory::all_in(&self.r64[start..start + self.n], alloc)
            }
            _ => lanes.lanes().all(|l| ptr_alloc(self.get_pub(ptr, l)) == alloc),
        };
        let batched = !matches!(kind, AllocKind::Private(_))
            && !matches!(kind, AllocKind::Buffer(i) if san.tracks_uninitialized(i))
            && one_allocation();
        if !batched {
            for l in lanes.lanes() {
                let p = self.get_pub(ptr, l);
                self.observe_lane(p, size, at, l, op);
            }
            return;
        }
        let base = self.tid(0);
        let uniform = self.is_uniform_pub(ptr);
        let Machine { r64, san, stride, .. } = self;
        let san = san.as_mut().expect("sanitizer");
        let Reg::W64(pr) = ptr else { return };
        let ptrs = &r64[pr as usize * *stride..];
        let offsets = lanes.lanes().map(|l| (l, ptr_offset(ptrs[if uniform { 0 } else { l }]), base.wrapping_add(l as u32)));
        let b = san.access_many(kind, offsets, size, at, op);
        self.report_batch(b, at, op);
    }

    /// Tell the observers about one lane's access of `size` bytes at `p`.
    pub(crate) fn observe_lane(&mut self, p: u64, size: usize, at: AccessId, l: usize, op: MemOp) {
        let tid = self.tid(l);
        let Some(san) = self.san.as_mut() else { return };
        let kind = ptr_alloc(p).kind();
        if let AllocKind::Private(_) = kind {
            san.count(kind, l, op);
            if !san.uninit {
                return;
            }
            let Some(bits) = crate::exec::private_shadow(&self.mem, p, size, l).and_then(|r| san.private_init.get_mut(r)) else {
                return;
            };
            let unwritten = op.reads() && !bits.iter().all(|&x| x);
            if op.writes() {
                bits.fill(true);
            }
            if unwritten {
                let what = self.k.accesses[at as usize].what.clone();
                let f = self.report_lane(
                    FindingKind::UninitializedRead,
                    at,
                    l,
                    format!("`{what}` is read before this thread wrote it (its value is garbage on a real GPU)"),
                );
                if f.notes.is_empty() {
                    f.notes.push("give the variable a value before reading it (e.g. initialize it where it is declared)".into());
                }
            }
            return;
        }
        let off = ptr_offset(p);
        let b = san.access_many(kind, std::iter::once((l, off, tid)), size, at, op);
        self.report_batch(b, at, op);
    }

    /// Turn what the shadow found for one instruction into findings.
    fn report_batch(&mut self, b: crate::sanitizer::Batch, at: AccessId, op: MemOp) {
        if let Some((l, off, space)) = b.first_uninit {
            let what = self.k.accesses[at as usize].what.clone();
            let (atomic, is_read) = if op.is_atomic() { ("an atomic operation reads ", "") } else { ("", " is read") };
            let f = match space {
                crate::sanitizer::UninitSpace::Threadgroup => {
                    let f = self.report_lane(
                        FindingKind::UninitializedRead,
                        at,
                        l,
                        format!("{atomic}`{what}` (threadgroup memory, byte offset {off}){is_read} before any thread of this threadgroup wrote it"),
                    );
                    if f.notes.is_empty() {
                        f.notes.push("threadgroup memory starts with garbage in every threadgroup (atomics included: nothing zeroes them): have the threads write every element they will read, then call `threadgroup_barrier(mem_flags::mem_threadgroup)` before reading".into());
                        f.notes.push("on a partial (edge) threadgroup, fewer threads exist: elements that only missing threads would write stay unwritten".into());
                    }
                    f
                }
                crate::sanitizer::UninitSpace::Device => {
                    let f = self.report_lane(
                        FindingKind::UninitializedRead,
                        at,
                        l,
                        format!("{atomic}`{what}` (byte offset {off}){is_read} before anything wrote it: this output buffer starts uninitialized"),
                    );
                    if f.notes.is_empty() {
                        f.notes.push("MLX allocates outputs without clearing them; pass `init_value` (e.g. 0) if the kernel accumulates into its output, or write every element before reading it".into());
                    }
                    f
                }
            };
            f.count += b.uninit.saturating_sub(1);
        }
        if let Some((l, r)) = b.first_race {
            let examples: Vec<[u32; 3]> = b.race_lanes.iter().skip(1).map(|&x| self.geo.global(x)).collect();
            let f = self.report_race(r, at, l, op.writes());
            f.count += b.races.saturating_sub(1);
            for t in examples {
                if f.examples.len() < 4 && f.thread != t && !f.examples.contains(&t) {
                    f.examples.push(t);
                }
            }
        }
    }
}
