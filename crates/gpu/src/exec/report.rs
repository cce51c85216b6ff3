//! Findings, tracing, barrier and race reports, and the sanitizer's
//! private-memory shadow.

use super::{Machine, Mask};
use crate::findings::{xyz, FindingKind, Findings};
use crate::ir::*;
use crate::memory::AllocKind;
use crate::sanitizer::Race;

impl<'k> Machine<'k> {
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
            if let Some(&Some(r)) = self.returned_at.get(l) {
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
    pub(super) fn thread_name(&self, l: usize) -> String {
        crate::findings::thread_name(self.geo.global(l), self.geo.local(l), self.geo.tg_pos)
    }

    /// Count an operation for every lane of `mask` (when counting).
    #[inline]
    pub(super) fn count_lanes(&mut self, mask: &Mask, f: impl Fn(&mut crate::sanitizer::Counts)) {
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
