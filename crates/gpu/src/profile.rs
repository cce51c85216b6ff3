//! Runtime statistics per source site (Xcode's per-line counters): how
//! often each statement ran and with how many lanes of its SIMD-groups,
//! and the memory traffic, atomics and barrier waits of each access.
//!
//! The profiler is an observer the machine only has when profiling was
//! asked for; the statement markers it counts (`Inst::Mark`) are only
//! emitted by the lowering when asked for too, so a normal run pays nothing.
//! Counts are kept per `AccessId` (plain numbers); the caller maps the
//! sites' spans to lines of the user's files.

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
}

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
            Inst::Barrier { simdgroup: false, at, .. } => self.site(*at).barrier_waits += n,
            _ => {}
        }
    }

    fn access(&mut self, at: AccessId, space: AddressSpace, write: bool, lanes: u64, bytes: u64) {
        let s = self.site(at);
        match (space, write) {
            (AddressSpace::Device | AddressSpace::Constant, false) => {
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
    pub fn finish(mut self, kernel: &crate::Kernel) -> Profile {
        self.stats.resize(kernel.accesses.len().max(self.stats.len()), SiteStats::default());
        let sites =
            self.stats.into_iter().enumerate().map(|(i, s)| (kernel.accesses.get(i).map(|a| a.span).unwrap_or(kernel.span), s)).collect();
        Profile { sites }
    }
}
