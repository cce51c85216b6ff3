//! Runtime statistics per source site (Xcode's per-line counters): how
//! often each statement ran and with how many lanes of its SIMD-groups,
//! and the memory traffic, atomics and barrier waits of each access.
//!
//! The profiler is an observer the machine only has when profiling was
//! asked for; the statement markers it counts (`Inst::Mark`) are only
//! emitted by the lowering when asked for too, so a normal run pays nothing.
//! Counts are kept per `AccessId` (plain numbers); the caller maps the
//! sites' spans to lines of the user's files.
//!
//! Besides the counts, a simple cost model of an Apple GPU ranks the
//! lines (`SiteStats::cost`, the assumptions in the README's "Profile"
//! section): a SIMD-group's device access costs one transaction per
//! aligned 32-byte segment its lanes touch (so a coalesced load of 32
//! floats is 4 and a strided one up to 32); a threadgroup access costs one
//! pass per lane that must wait for its bank (32 banks of 4 bytes; lanes
//! reading the same word share it); `constant` reads are counted apart
//! (one per distinct address per SIMD-group: a uniform read is one).

use crate::exec::Mask;
use crate::ir::{AccessId, Inst};
use msl::ast::AddressSpace;
use msl::source::Span;

/// What happened at one site (a statement or a memory access).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SiteStats {
    /// Thread executions of the statement (one per active lane).
    pub executions: u64,
    /// SIMD-group executions: one per SIMD-group with an active lane.
    pub simd_executions: u64,
    /// Lanes those SIMD-groups had (the threads they hold), for utilisation.
    pub simd_lanes: u64,
    pub device_reads: u64,
    pub device_writes: u64,
    pub threadgroup_reads: u64,
    pub threadgroup_writes: u64,
    pub device_bytes: u64,
    pub threadgroup_bytes: u64,
    pub atomics: u64,
    /// Threads that waited at a barrier here.
    pub barrier_waits: u64,
    /// Reads of `constant` memory (by threads) and their distinct
    /// addresses per SIMD-group (what the cost model charges).
    pub constant_reads: u64,
    pub constant_bytes: u64,
    pub constant_transactions: u64,
    /// Device memory transactions: aligned 32-byte segments touched, per
    /// SIMD-group access.
    pub device_transactions: u64,
    /// Threadgroup memory passes per SIMD-group access (1 without bank
    /// conflicts), and the extra passes conflicts cost.
    pub threadgroup_wavefronts: u64,
    pub bank_conflicts: u64,
    /// SIMD-groups that waited at a barrier here.
    pub simd_barrier_waits: u64,
}

/// Bytes of one device memory transaction (segment) in the cost model.
pub const SEGMENT_BYTES: u64 = 32;
/// Threadgroup memory banks and the bytes of one bank word.
pub const BANKS: u64 = 32;
pub const BANK_BYTES: u64 = 4;
/// The cost model's weights (in issue cycles of one SIMD-group): a
/// statement issued, a device transaction, a threadgroup pass, a
/// constant read, an atomic lane, a SIMD-group waiting at a barrier.
pub const COST_ISSUE: u64 = 1;
pub const COST_DEVICE_SEGMENT: u64 = 8;
pub const COST_THREADGROUP_PASS: u64 = 2;
pub const COST_CONSTANT: u64 = 1;
pub const COST_ATOMIC: u64 = 8;
pub const COST_BARRIER: u64 = 4;

impl SiteStats {
    pub fn add(&mut self, o: &SiteStats) {
        self.executions += o.executions;
        self.simd_executions += o.simd_executions;
        self.simd_lanes += o.simd_lanes;
        self.device_reads += o.device_reads;
        self.device_writes += o.device_writes;
        self.threadgroup_reads += o.threadgroup_reads;
        self.threadgroup_writes += o.threadgroup_writes;
        self.device_bytes += o.device_bytes;
        self.threadgroup_bytes += o.threadgroup_bytes;
        self.atomics += o.atomics;
        self.barrier_waits += o.barrier_waits;
        self.constant_reads += o.constant_reads;
        self.constant_bytes += o.constant_bytes;
        self.constant_transactions += o.constant_transactions;
        self.device_transactions += o.device_transactions;
        self.threadgroup_wavefronts += o.threadgroup_wavefronts;
        self.bank_conflicts += o.bank_conflicts;
        self.simd_barrier_waits += o.simd_barrier_waits;
    }

    /// The cost model's estimate for the site (see the module comment).
    pub fn cost(&self) -> u64 {
        self.simd_executions * COST_ISSUE
            + self.device_transactions * COST_DEVICE_SEGMENT
            + self.threadgroup_wavefronts * COST_THREADGROUP_PASS
            + self.constant_transactions * COST_CONSTANT
            + self.atomics * COST_ATOMIC
            + self.simd_barrier_waits * COST_BARRIER
    }

    /// Memory operations of any kind (the "heat" of a site).
    pub fn memory_ops(&self) -> u64 {
        self.device_reads + self.device_writes + self.threadgroup_reads + self.threadgroup_writes + self.atomics
    }
}

/// Per-site statistics of one dispatch.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Profile {
    /// One entry per site, indexed by `AccessId`, with the site's span.
    pub sites: Vec<(Span, SiteStats)>,
    /// Threadgroup memory of one threadgroup (bytes) and its threads.
    pub threadgroup_memory: u64,
    pub threads_per_threadgroup: u64,
}

/// Threadgroup memory one GPU core holds (Apple's 32 KiB).
pub const CORE_THREADGROUP_MEMORY: u64 = 32 * 1024;
/// Threads one GPU core keeps resident in the cost model (an assumption:
/// Apple does not publish it; 1024 is the largest threadgroup).
pub const CORE_THREADS: u64 = 1024;

impl Profile {
    /// Threadgroups resident on one core, and what limits it: threadgroup
    /// memory or threads.
    pub fn occupancy(&self) -> (u64, &'static str) {
        let by_threads = CORE_THREADS / self.threads_per_threadgroup.max(1);
        let by_memory = CORE_THREADGROUP_MEMORY.checked_div(self.threadgroup_memory).unwrap_or(u64::MAX);
        if by_memory < by_threads {
            (by_memory, "threadgroup memory")
        } else {
            (by_threads, "threads per threadgroup")
        }
    }
}

/// The observer attached to a machine while profiling.
#[derive(Debug, Default)]
pub struct Profiler {
    stats: Vec<SiteStats>,
}

impl Profiler {
    pub fn new(sites: usize) -> Profiler {
        Profiler { stats: vec![SiteStats::default(); sites] }
    }

    fn site(&mut self, at: AccessId) -> &mut SiteStats {
        let i = at as usize;
        if i >= self.stats.len() {
            self.stats.resize(i + 1, SiteStats::default());
        }
        &mut self.stats[i]
    }

    /// A statement started by the lanes in `mask` of a threadgroup of `lanes` threads.
    pub fn statement(&mut self, at: AccessId, mask: &Mask, lanes: usize) {
        let s = self.site(at);
        let mut active = 0u64;
        for g in 0..lanes.div_ceil(32) {
            let word = mask.w[g / 2] >> (32 * (g % 2)) & 0xffff_ffff;
            let n = word.count_ones() as u64;
            if n > 0 {
                s.simd_executions += 1;
                s.simd_lanes += (lanes - g * 32).min(32) as u64;
                active += n;
            }
        }
        s.executions += active;
    }

    /// A memory, atomic or barrier instruction run by the lanes in `mask`.
    pub fn instruction(&mut self, inst: &Inst, mask: &Mask) {
        let n = mask.count() as u64;
        match inst {
            Inst::Load { ty, space, at, .. } => self.access(*at, *space, false, n, ty.size() as u64),
            Inst::Store { ty, space, at, .. } => self.access(*at, *space, true, n, ty.size() as u64),
            Inst::MemCopy { bytes, dst_space, src_space, at, .. } => {
                self.access(*at, *src_space, false, n, *bytes as u64);
                self.access(*at, *dst_space, true, n, *bytes as u64);
            }
            Inst::Atomic { at, ty, space, .. } => {
                let s = self.site(*at);
                s.atomics += n;
                match space {
                    AddressSpace::Threadgroup => s.threadgroup_bytes += n * ty.size() as u64,
                    _ => s.device_bytes += n * ty.size() as u64,
                }
            }
            Inst::Barrier { simdgroup: false, at, .. } => {
                let groups = (0..mask.w.len() * 2).filter(|&g| (mask.w[g / 2] >> (32 * (g % 2))) & 0xffff_ffff != 0).count();
                let s = self.site(*at);
                s.barrier_waits += n;
                s.simd_barrier_waits += groups as u64;
            }
            _ => {}
        }
    }

    /// The addresses (lane, pointer) of a load or store of `size` bytes by
    /// the lanes of a threadgroup: transactions per SIMD-group.
    pub fn addresses(&mut self, at: AccessId, space: AddressSpace, size: u64, lanes: &[(usize, u64)]) {
        let size = size.max(1);
        let mut start = 0;
        while start < lanes.len() {
            let group = lanes[start].0 / 32;
            let end = lanes[start..].iter().position(|l| l.0 / 32 != group).map_or(lanes.len(), |n| start + n);
            let g = &lanes[start..end];
            start = end;
            let s = self.site(at);
            match space {
                AddressSpace::Device => s.device_transactions += segments(g, size),
                AddressSpace::Constant => {
                    let mut a: Vec<u64> = g.iter().map(|l| l.1).collect();
                    a.sort_unstable();
                    a.dedup();
                    s.constant_transactions += a.len() as u64;
                }
                AddressSpace::Threadgroup => {
                    let passes = bank_passes(g, size);
                    s.threadgroup_wavefronts += passes;
                    s.bank_conflicts += passes.saturating_sub(1);
                }
                _ => {}
            }
        }
    }

    fn access(&mut self, at: AccessId, space: AddressSpace, write: bool, lanes: u64, bytes: u64) {
        let s = self.site(at);
        match (space, write) {
            // Uniform/constant data is cached apart: not device traffic.
            (AddressSpace::Constant, false) => {
                s.constant_reads += lanes;
                s.constant_bytes += lanes * bytes;
            }
            (AddressSpace::Device, false) => {
                s.device_reads += lanes;
                s.device_bytes += lanes * bytes;
            }
            (AddressSpace::Device | AddressSpace::Constant, true) => {
                s.device_writes += lanes;
                s.device_bytes += lanes * bytes;
            }
            (AddressSpace::Threadgroup, false) => {
                s.threadgroup_reads += lanes;
                s.threadgroup_bytes += lanes * bytes;
            }
            (AddressSpace::Threadgroup, true) => {
                s.threadgroup_writes += lanes;
                s.threadgroup_bytes += lanes * bytes;
            }
            // Thread-private memory is registers on a GPU: not traffic.
            _ => {}
        }
    }

    /// The statistics with each site's span.
    pub fn finish(mut self, kernel: &crate::Kernel, threadgroup_memory: u64, threads_per_threadgroup: u64) -> Profile {
        self.stats.resize(kernel.accesses.len().max(self.stats.len()), SiteStats::default());
        let sites =
            self.stats.into_iter().enumerate().map(|(i, s)| (kernel.accesses.get(i).map(|a| a.span).unwrap_or(kernel.span), s)).collect();
        Profile { sites, threadgroup_memory, threads_per_threadgroup }
    }
}

/// Distinct aligned `SEGMENT_BYTES` segments the accesses of one
/// SIMD-group (`size` bytes at each pointer) touch.
pub fn segments(lanes: &[(usize, u64)], size: u64) -> u64 {
    let mut segs: Vec<u64> = Vec::with_capacity(lanes.len() * 2);
    for &(_, p) in lanes {
        let (first, last) = (p / SEGMENT_BYTES, (p + size - 1) / SEGMENT_BYTES);
        segs.extend(first..=last.min(first + 64));
    }
    segs.sort_unstable();
    segs.dedup();
    segs.len() as u64
}

/// Passes one SIMD-group's threadgroup access takes: the most distinct
/// words any one bank must serve (the same word read by several lanes is
/// one broadcast).
pub fn bank_passes(lanes: &[(usize, u64)], size: u64) -> u64 {
    let mut words: Vec<u64> = Vec::with_capacity(lanes.len() * 2);
    for &(_, p) in lanes {
        let off = crate::memory::ptr_offset(p).max(0) as u64;
        let (first, last) = (off / BANK_BYTES, (off + size - 1) / BANK_BYTES);
        words.extend(first..=last.min(first + 64));
    }
    words.sort_unstable();
    words.dedup();
    let mut per_bank = [0u64; BANKS as usize];
    for w in words {
        per_bank[(w % BANKS) as usize] += 1;
    }
    per_bank.iter().copied().max().unwrap_or(0).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lanes(addr: impl Fn(u64) -> u64) -> Vec<(usize, u64)> {
        (0..32).map(|l| (l as usize, addr(l))).collect()
    }

    #[test]
    fn coalesced_loads_touch_4_segments_strided_ones_32() {
        assert_eq!(segments(&lanes(|l| l * 4), 4), 4);
        assert_eq!(segments(&lanes(|l| l * 128), 4), 32);
        assert_eq!(segments(&lanes(|_| 64), 4), 1, "one address for all lanes");
        assert_eq!(segments(&lanes(|l| l * 16), 16), 16, "float4 per lane: 512 bytes");
    }

    #[test]
    fn bank_conflicts_count_distinct_words_per_bank() {
        assert_eq!(bank_passes(&lanes(|l| l * 4), 4), 1, "consecutive words: one per bank");
        assert_eq!(bank_passes(&lanes(|_| 8), 4), 1, "a broadcast");
        assert_eq!(bank_passes(&lanes(|l| l * 8), 4), 2, "stride 2: two lanes per bank");
        assert_eq!(bank_passes(&lanes(|l| l * 128), 4), 32, "a column of a 32-wide tile: all in one bank");
        assert_eq!(bank_passes(&lanes(|l| l * 132), 4), 1, "the padded tile (33 wide)");
    }
}
