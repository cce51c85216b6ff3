//! Threadgroups on several cores, with results that do not depend on timing.
//!
//! The threadgroups are split into contiguous runs, one per worker. Every
//! worker borrows the dispatch's buffers and copies a buffer the first time
//! it writes it, so it sees the initial contents plus its own writes, never
//! another worker's. Afterwards the copies are merged in threadgroup order,
//! a later run's changed bytes over an earlier one's: for a kernel without
//! races between threadgroups this is exactly the sequential result, and
//! for any kernel it is the same on every run. Sanitizer state and findings
//! are merged the same way; an element written by one worker's threads and
//! accessed by another's is a race between threadgroups, as in a sequential
//! run. Kernels with device atomics (whose threadgroups must see each
//! other's updates), traces and uninitialized-output tracking run
//! sequentially.

use crate::exec::{report_race, Geometry, RaceThreads};
use crate::sanitizer::CrossRace;
use crate::{run_part, Kernel, Part, RunOptions, RunReport};
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// At least this many threadgroups per worker (fewer are not worth a thread).
const MIN_GROUPS_PER_WORKER: u64 = 4;
/// At least this many threads in the dispatch.
const MIN_THREADS: u64 = 1 << 12;
/// Workers when not asked for a number. Fixed rather than one per core:
/// a racy kernel's result depends on how the threadgroups are split, and it
/// must not change from one machine to another.
const DEFAULT_WORKERS: usize = 2;
/// Bytes of buffer copies the workers may make together.
const COPY_BUDGET: u64 = 4 << 30;

/// How many workers to run the dispatch on (1: sequentially).
pub(crate) fn workers(kernel: &Kernel, opts: &RunOptions, groups: u64, lanes: usize, buffers: &BTreeMap<u32, Vec<u8>>) -> usize {
    // (WebAssembly in a browser has no threads to give: always sequential.)
    if opts.threads == 1
        || cfg!(target_family = "wasm")
        || kernel.device_atomics
        || opts.trace.is_some()
        || opts.profile
        || opts.nan
        || opts.probe.is_some()
        || opts.stops.is_some()
        || (opts.log.is_some() && kernel.logs)
        || !opts.uninitialized_buffers.is_empty()
    {
        return 1;
    }
    let wanted = match opts.threads {
        0 => {
            if groups.saturating_mul(lanes as u64) < MIN_THREADS {
                return 1;
            }
            DEFAULT_WORKERS.min((groups / MIN_GROUPS_PER_WORKER) as usize)
        }
        // More workers than cores only costs memory (each has its own
        // register file and buffer copies): `--threads 1000000` gets the cores.
        n => n.min(groups.min(usize::MAX as u64) as usize).min(max_workers()),
    };
    let bytes: u64 = buffers.values().map(|b| b.len() as u64).sum::<u64>().max(1);
    let regs = ((kernel.n32 as u64 * 4 + kernel.n64 as u64 * 8) * lanes as u64).max(1);
    wanted.min((COPY_BUDGET / bytes) as usize).min((REGISTER_BUDGET / regs) as usize).max(1)
}

/// The most workers one dispatch uses: the machine's cores (at least 2,
/// so that a split run is exercised everywhere), at most `MAX_WORKERS`.
pub fn max_workers() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get()).clamp(2, MAX_WORKERS)
}

/// A hard cap on workers, whatever the machine.
pub const MAX_WORKERS: usize = 64;
/// Register files of all workers together (each holds every register once
/// per lane of a threadgroup).
const REGISTER_BUDGET: u64 = 1 << 30;

/// Run the dispatch on `workers` threads (see the module comment); `None`
/// (and `buffers` unchanged) when a compiled threadgroup gave up.
pub(crate) fn run(
    kernel: &Kernel,
    dispatch: &Geometry,
    buffers: &mut BTreeMap<u32, Vec<u8>>,
    opts: &RunOptions,
    workers: usize,
    progress: &mut dyn FnMut(u64, u64),
    pristine: Option<&crate::Pristine>,
) -> Option<RunReport> {
    let total = dispatch.groups.iter().map(|&g| g as u64).product::<u64>();
    let mut initial = std::mem::take(buffers);
    let done = AtomicU64::new(0);
    // The first worker that stopped (runaway kernel): later ones are abandoned,
    // as a sequential run would never have started their threadgroups.
    let first_stopped = AtomicUsize::new(usize::MAX);
    let mut slots: Vec<Option<Part>> = (0..workers).map(|_| None).collect();
    let mut shared = SharedOutputs::for_run(opts, dispatch, &mut initial, pristine);
    let initial = initial;
    let work = |w: usize, tick: &mut dyn FnMut(u64) -> bool| {
        let range = total * w as u64 / workers as u64..total * (w as u64 + 1) / workers as u64;
        let borrowed: BTreeMap<u32, Cow<[u8]>> = initial.iter().map(|(&i, b)| (i, Cow::Borrowed(&b[..]))).collect();
        let regions = shared.start_part(&initial, dispatch, &range, w + 1 == workers);
        let part = run_part(kernel, dispatch, borrowed, regions, opts, range, tick);
        if part.stopped || part.gave_up {
            first_stopped.fetch_min(w, Ordering::Relaxed);
        }
        part
    };
    // Worker threads stay alive between dispatches (rayon's pool), so their
    // memory stays warm; the first part runs here and reports progress.
    let (first, rest) = slots.split_first_mut().unwrap_or_else(|| unreachable!("at least one worker"));
    let _warm = KeepWarm::claim(workers - 1);
    rayon::in_place_scope(|s| {
        for (w, slot) in rest.iter_mut().enumerate() {
            let (work, done, first_stopped) = (&work, &done, &first_stopped);
            s.spawn(move |_| {
                let w = w + 1;
                let mut tick = |n: u64| {
                    done.fetch_add(n, Ordering::Relaxed);
                    first_stopped.load(Ordering::Relaxed) > w
                };
                *slot = Some(work(w, &mut tick));
            });
        }
        let mut tick = |n: u64| {
            progress(done.fetch_add(n, Ordering::Relaxed) + n, total);
            true
        };
        *first = Some(work(0, &mut tick));
    });
    progress(done.load(Ordering::Relaxed), total);
    let cut = first_stopped.load(Ordering::Relaxed);
    let parts: Vec<Part> = slots.into_iter().flatten().take(cut.saturating_add(1)).collect();
    // (A cut would leave a later worker's stores in a shared output.)
    let cut_shared = cut != usize::MAX && !shared.0.is_empty();
    if parts.iter().any(|p| p.gave_up) || compiled_conflict(&parts) || cut_shared {
        for p in parts {
            p.buffers.into_iter().flatten().for_each(|b| recycle_copy(b));
        }
        *buffers = initial;
        for o in shared.0 {
            match o.pristine {
                // (Written in place: back to how it began.)
                Some(p) => {
                    let mut bytes = o.bytes;
                    bytes.copy_from_slice(p);
                    buffers.insert(o.index, bytes);
                }
                None => crate::memory::recycle(o.bytes),
            }
        }
        return None;
    }
    let Merged { mut changed, report } = merge(kernel, dispatch, &initial, parts);
    // (No worker copied these: they stayed borrowed, out of the merge.)
    for o in shared.0.drain(..) {
        changed.insert(o.index, o.bytes);
    }
    *buffers = initial;
    for (i, b) in changed {
        if let Some(old) = buffers.insert(i, b) {
            crate::memory::recycle(old);
        }
    }
    Some(report)
}

/// The buffers the dispatch's workers write in one shared copy
/// (`engine::Compiled::shared_outputs`): compiled code that only stores to
/// them, each thread its own element, on a grid of one row. When the
/// caller kept the initial buffers ([`crate::Pristine`]), the copy is the
/// dispatch's own buffer, taken out of the workers' views and written in
/// place. Otherwise each worker first copies into it the initial bytes of
/// its own threads' elements (the first and last worker also those before
/// and after any thread's), then stores there, and the workers' own views
/// keep the buffer borrowed, out of the merge. Either way the copy is the
/// merged result. Without this every worker copied the whole buffer and
/// the merge compared every copy.
struct SharedOutputs<'p>(Vec<SharedOutput<'p>>);

struct SharedOutput<'p> {
    index: u32,
    /// Bytes per element.
    scale: u64,
    bytes: Vec<u8>,
    /// The buffer's initial contents when `bytes` is the dispatch's own
    /// buffer, written in place (the caller kept them: [`crate::Pristine`]);
    /// `None` when `bytes` is a copy the workers fill in first.
    pristine: Option<&'p [u8]>,
    /// Where `bytes` is, for the workers.
    base: SharedBase,
}

/// The start of a shared output's bytes.
#[derive(Clone, Copy)]
struct SharedBase(*mut u8);

// SAFETY: workers write disjoint ranges of the buffer (their threads'
// elements, copied in first), and nothing reads it until all have ended.
unsafe impl Send for SharedBase {}
unsafe impl Sync for SharedBase {}

impl<'p> SharedOutputs<'p> {
    /// The shared outputs of a run: each taken out of `initial` when the
    /// caller kept its contents (`pristine`), else a copy.
    fn for_run(
        opts: &RunOptions,
        dispatch: &Geometry,
        initial: &mut BTreeMap<u32, Vec<u8>>,
        pristine: Option<&crate::Pristine<'p>>,
    ) -> SharedOutputs<'p> {
        let Some(c) = &opts.compiled else { return SharedOutputs(Vec::new()) };
        if dispatch.grid_threads[1..] != [1, 1] {
            return SharedOutputs(Vec::new());
        }
        let outs = c
            .shared_outputs()
            .iter()
            .filter_map(|&(index, scale)| {
                let len = initial.get(&index)?.len();
                let kept = pristine.and_then(|p| p.get(&index)).copied().filter(|p| p.len() == len);
                let mut bytes = match kept {
                    // (Out of `initial`: the workers' views of it never
                    // alias the stores.)
                    Some(_) => initial.remove(&index)?,
                    None => {
                        // (Every byte is copied in by a worker: a spare's
                        // old bytes need no clearing.)
                        let mut bytes = crate::memory::spare(len).unwrap_or_default();
                        bytes.truncate(len);
                        bytes.resize(len, 0);
                        bytes
                    }
                };
                let base = SharedBase(bytes.as_mut_ptr());
                Some(SharedOutput { index, scale: scale.max(1), bytes, pristine: kept, base })
            })
            .collect();
        SharedOutputs(outs)
    }

    /// For the worker running threadgroups `range` (`last`: the last
    /// worker): copy in the initial bytes it owns, and say where each
    /// shared output is.
    fn start_part(
        &self,
        initial: &BTreeMap<u32, Vec<u8>>,
        dispatch: &Geometry,
        range: &std::ops::Range<u64>,
        last: bool,
    ) -> Vec<(u32, crate::engine::Region)> {
        let per_group = dispatch.requested_tg[0] as u64;
        self.0
            .iter()
            .filter_map(|o| {
                let len = o.bytes.len() as u64;
                let region = crate::engine::Region { base: o.base.0, len, lane_stride: 0, writable: true };
                if o.pristine.is_some() {
                    return Some((o.index, region)); // (holds its initial bytes)
                }
                let init = initial.get(&o.index)?;
                let at = |group: u64| group.saturating_mul(per_group).saturating_mul(o.scale).min(len) as usize;
                let from = if range.start == 0 { 0 } else { at(range.start) };
                let to = if last { len as usize } else { at(range.end) };
                if from < to {
                    // SAFETY: `from..to` is within the buffer (both at most
                    // its length), and no other worker's range overlaps it.
                    unsafe { std::ptr::copy_nonoverlapping(init.as_ptr().add(from), o.base.0.add(from), to - from) };
                }
                Some((o.index, region))
            })
            .collect()
    }
}

/// Worker threads kept spinning for a while after a dispatch, so that the
/// next one (a benchmark's repetitions, a test suite's kernels) finds them
/// running: a sleeping thread can take a fraction of a millisecond to
/// wake (on virtual machines, its core's as well), as long as a small
/// dispatch takes. OpenMP runtimes spin before sleeping for the same
/// reason. A dispatch claims them (`claim`: they stop spinning and take its
/// parts) and sets them spinning again when it ends (on drop).
struct KeepWarm(usize);

/// Bumped by every claim: spinning jobs of an older one stop.
static WARM_CLAIMS: AtomicU64 = AtomicU64::new(0);
/// How long a worker spins after a dispatch.
const WARM_FOR: std::time::Duration = std::time::Duration::from_millis(2);

impl KeepWarm {
    fn claim(threads: usize) -> KeepWarm {
        WARM_CLAIMS.fetch_add(1, Ordering::SeqCst);
        KeepWarm(threads)
    }
}

impl Drop for KeepWarm {
    fn drop(&mut self) {
        let claim = WARM_CLAIMS.load(Ordering::SeqCst);
        for _ in 0..self.0 {
            rayon::spawn(move || {
                let since = std::time::Instant::now();
                // (Yielding: a thread with work to do, such as a compile in
                // the background, gets the core.)
                while WARM_CLAIMS.load(Ordering::Relaxed) == claim && since.elapsed() < WARM_FOR {
                    std::thread::yield_now();
                }
            });
        }
    }
}

/// Whether two workers' compiled threadgroups touched one device element,
/// one of them writing (a race between threadgroups: the interpreter
/// reruns the dispatch and reports it).
fn compiled_conflict(parts: &[Part]) -> bool {
    let shadows: Vec<_> = parts.iter().filter_map(|p| p.shadows.as_deref()).collect();
    shadows.iter().enumerate().any(|(i, a)| shadows[i + 1..].iter().any(|b| a.conflict(b)))
}

/// The merged copies of the buffers some worker wrote, and the combined report.
struct Merged {
    changed: BTreeMap<u32, Vec<u8>>,
    report: RunReport,
}

/// Combine the workers' results in threadgroup order (`parts` is not empty).
fn merge(kernel: &Kernel, dispatch: &Geometry, initial: &BTreeMap<u32, Vec<u8>>, parts: Vec<Part>) -> Merged {
    let mut changed: BTreeMap<u32, Vec<u8>> = BTreeMap::new();
    let mut parts = parts.into_iter();
    let Some(first) = parts.next() else { return Merged { changed, report: RunReport::default() } };
    let mut report = first.report;
    let mut findings = first.findings;
    let mut san = first.san;
    let mut cross: Vec<CrossRace> = Vec::new();
    let mut absorb_buffers = |bufs: Vec<Option<Cow<[u8]>>>| {
        for (i, b) in bufs.into_iter().enumerate() {
            let Some(Cow::Owned(copy)) = b else { continue };
            let i = i as u32;
            match changed.get_mut(&i) {
                None => {
                    changed.insert(i, copy);
                }
                Some(out) => {
                    overlay(out, &copy, initial.get(&i).map(|b| &b[..]).unwrap_or(&[]));
                    crate::memory::recycle(copy);
                }
            }
        }
    };
    absorb_buffers(first.buffers);
    let mut parts = parts.peekable();
    while let Some(part) = parts.next() {
        absorb_buffers(part.buffers);
        report.threads += part.report.threads;
        report.threadgroups += part.report.threadgroups;
        for p in part.report.order_pairs {
            if !report.order_pairs.iter().any(|q| q.kind == p.kind && q.first_at == p.first_at && q.second_at == p.second_at) {
                report.order_pairs.push(p);
            }
        }
        findings.absorb(part.findings);
        if let (Some(a), Some(b)) = (san.as_mut(), part.san.as_ref()) {
            a.merge_later(b, &mut cross, parts.peek().is_none());
        }
    }
    for c in cross {
        let (second, second_tg) = dispatch.thread_of(c.second.tid);
        let (first, first_tg) = dispatch.thread_of(c.race.first.tid);
        let threads = RaceThreads { first, first_tg, second, second_tg, tg_size: dispatch.requested_tg };
        report_race(&mut findings, kernel, c.race, threads, c.second.at, c.second_is_write, true).count += c.count - 1;
    }
    report.max_counts = san.as_ref().filter(|s| s.counting).map(|s| s.max_counts);
    report.findings = findings.list;
    Merged { changed, report }
}

/// Keep a worker's copy of a buffer for later dispatches.
fn recycle_copy(b: Cow<[u8]>) {
    if let Cow::Owned(v) = b {
        crate::memory::recycle(v);
    }
}

/// Copy into `out` the bytes where `copy` differs from `base`: a later
/// worker's writes over the merge so far. Page-sized blocks that are equal
/// (the usual case: a worker writes its own part of a buffer) are skipped
/// with one comparison.
fn overlay(out: &mut [u8], copy: &[u8], base: &[u8]) {
    const BLOCK: usize = 4096;
    for ((o, c), b) in out.chunks_mut(BLOCK).zip(copy.chunks(BLOCK)).zip(base.chunks(BLOCK)) {
        if c == b {
            continue;
        }
        for ((o, &new), &old) in o.iter_mut().zip(c).zip(b) {
            *o = if new != old { new } else { *o };
        }
    }
}
