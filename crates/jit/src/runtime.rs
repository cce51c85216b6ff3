//! What compiled code runs against: the context block it is handed, the
//! table of allocations it reaches memory through, and the helpers it
//! calls for what it leaves to the interpreter's own code.

use crate::codegen::Stop;
use gpu::engine::{Region, Threadgroup};
use gpu::ir::Inst;
use gpu::memory::{AllocId, AllocKind};
use std::collections::HashSet;

/// Table entries. An allocation id maps to entry
/// `(id & 127) | ((id >> 10) & 1) << 7 | ((id >> 20) & 3) << 8`: buffers and
/// `[[threadgroup(n)]]` buffers 0..128, program constants 128..256,
/// threadgroup variables 256..384; private variables (of which inlined
/// code makes many) `PRIVATE_SLOT_BASE + (index % PRIVATE_SLOTS)`. The
/// entry keeps the id it holds; a pointer whose id differs (null, or two
/// allocations sharing an entry) makes the compiled code give up.
pub const TABLE: usize = PRIVATE_SLOT_BASE + PRIVATE_SLOTS;
pub const PRIVATE_SLOT_BASE: usize = 512;
pub const PRIVATE_SLOTS: usize = 4096;

pub fn slot_of(id: u32) -> usize {
    if (id >> 20) & 3 == 2 {
        return PRIVATE_SLOT_BASE + (id as usize & (PRIVATE_SLOTS - 1));
    }
    ((id & 127) | ((id >> 10) & 1) << 7 | ((id >> 20) & 3) << 8) as usize
}

/// One allocation as compiled code sees it: thread `l`'s bytes start at
/// `base + l * lane_stride`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct Entry {
    pub id: u64,
    pub base: u64,
    pub len: u64,
    pub lane_stride: u64,
    /// Nonzero when stores may go straight in.
    pub writable: u64,
    /// With checks on: the allocation's shadow cells (`gpu::conflicts`),
    /// and the range of them this threadgroup touched (`lo..=hi`, none
    /// while `lo > hi`).
    pub shadow: u64,
    pub lo: u64,
    pub hi: u64,
    /// With checks on, for threadgroup memory: nonzero once every cell was
    /// written in this threadgroup (set by the runner between rounds:
    /// [`mark_written`]); `scan`: the cells before this one were.
    pub written: u64,
    pub scan: u64,
    /// `len` when stores may go straight in, else 0: a store's bound is
    /// made from it as a load's from `len` (one comparison checks both).
    pub store_len: u64,
}

impl Default for Entry {
    fn default() -> Entry {
        Entry {
            id: u64::MAX,
            base: 0,
            len: 0,
            lane_stride: 0,
            writable: 0,
            shadow: 0,
            lo: u64::MAX,
            hi: 0,
            written: 0,
            scan: 0,
            store_len: 0,
        }
    }
}

pub const ENTRY_BYTES: i64 = std::mem::size_of::<Entry>() as i64;
pub const E_ID: i32 = 0;
pub const E_BASE: i32 = 8;
pub const E_LEN: i32 = 16;
pub const E_STRIDE: i32 = 24;
pub const E_WRITABLE: i32 = 32;
pub const E_SHADOW: i32 = 40;
pub const E_LO: i32 = 48;
pub const E_HI: i32 = 56;
pub const E_WRITTEN: i32 = 64;
pub const E_STORE_LEN: i32 = 80;

impl Entry {
    /// The allocation now lives at `r` (a buffer copied on its first
    /// write); its shadow stays.
    fn moved(&mut self, r: Region) {
        (self.base, self.len, self.lane_stride, self.writable) = (r.base as u64, r.len, r.lane_stride, r.writable as u64);
        self.store_len = if r.writable { r.len } else { 0 };
    }

    pub fn of(id: AllocId, r: Region) -> Entry {
        Entry {
            id: id.0 as u64,
            base: r.base as u64,
            len: r.len,
            lane_stride: r.lane_stride,
            writable: r.writable as u64,
            store_len: if r.writable { r.len } else { 0 },
            ..Entry::default()
        }
    }
}

/// The block compiled code gets a pointer to (offsets below are used by
/// the code generator).
#[repr(C)]
pub struct Ctx {
    pub table: *mut Entry,
    /// Registers kept across barriers: thread `l`'s slot `s` at `l * spill_slots + s`.
    pub spill: *mut u64,
    /// Instructions counted so far (per thread, or one total).
    pub counts: *mut u64,
    pub budget: u64,
    /// The values of the registers set before the kernel starts.
    pub initial: *const u64,
    /// Threadgroup size, position and requested size (x, y, z).
    pub tg_size: [u32; 3],
    pub tg_pos: [u32; 3],
    pub requested: [u32; 3],
    pub _pad: u32,
    pub tg: *mut Threadgroup<'static, 'static>,
    pub insts: *const *const Inst,
    /// Each thread's state (`codegen::START`, `BARRIER + k`, `FINISHED`).
    pub state: *mut u64,
    /// Threads in the threadgroup.
    pub n: u64,
    /// Each thread's position in the threadgroup.
    pub local: *const [u32; 3],
    /// The values of `Native::uniform_attrs` for this threadgroup.
    pub uniform_attrs: *const u32,
    /// With checks on: the `mem_flags` bits every thread that stopped at
    /// this round's barrier gave it (for barriers whose flags are not one
    /// constant: `codegen::Stop::flags`).
    pub round_flags: u64,
    /// With checks on: `gpu::conflicts::Shadows::epochs`, and the thread
    /// number of lane 0 (`Threadgroup::thread_base`).
    pub epochs: [u32; 4],
    pub thread_base: u32,
    pub _pad2: u32,
    /// Three slots per thread: a SIMD-group function's operands, and its
    /// result (in the first) when the thread resumes.
    pub lane_args: *mut u64,
    /// Nonzero while the runner resumes only threads that stopped at a
    /// SIMD-group function.
    pub hold: u64,
    /// Per loop (`analysis::LockstepBound`): the most trips a thread made
    /// in one entry of it.
    pub loop_most: *mut u64,
}

pub const OFF_TABLE: i32 = 0;
pub const OFF_SPILL: i32 = 8;
pub const OFF_COUNTS: i32 = 16;
pub const OFF_BUDGET: i32 = 24;
pub const OFF_INITIAL: i32 = 32;
pub const OFF_TG_SIZE: i32 = 40;
pub const OFF_TG_POS: i32 = 52;
pub const OFF_REQUESTED: i32 = 64;
pub const OFF_STATE: i32 = 96;
pub const OFF_N: i32 = 104;
pub const OFF_LOCAL: i32 = 112;
pub const OFF_UNIFORM_ATTRS: i32 = 120;
pub const OFF_ROUND_FLAGS: i32 = 128;
pub const OFF_EPOCHS: i32 = 136;
pub const OFF_THREAD_BASE: i32 = 152;
pub const OFF_LANE_ARGS: i32 = 160;
pub const OFF_HOLD: i32 = 168;
pub const OFF_LOOP_MOST: i32 = 176;

/// Whether the offsets above are the layout's (checked before compiling).
pub fn layout_ok() -> bool {
    std::mem::offset_of!(Ctx, table) == OFF_TABLE as usize
        && std::mem::offset_of!(Ctx, spill) == OFF_SPILL as usize
        && std::mem::offset_of!(Ctx, counts) == OFF_COUNTS as usize
        && std::mem::offset_of!(Ctx, budget) == OFF_BUDGET as usize
        && std::mem::offset_of!(Ctx, initial) == OFF_INITIAL as usize
        && std::mem::offset_of!(Ctx, tg_size) == OFF_TG_SIZE as usize
        && std::mem::offset_of!(Ctx, tg_pos) == OFF_TG_POS as usize
        && std::mem::offset_of!(Ctx, requested) == OFF_REQUESTED as usize
        && std::mem::offset_of!(Ctx, state) == OFF_STATE as usize
        && std::mem::offset_of!(Ctx, n) == OFF_N as usize
        && std::mem::offset_of!(Ctx, local) == OFF_LOCAL as usize
        && std::mem::offset_of!(Ctx, uniform_attrs) == OFF_UNIFORM_ATTRS as usize
        && std::mem::offset_of!(Ctx, round_flags) == OFF_ROUND_FLAGS as usize
        && std::mem::offset_of!(Ctx, epochs) == OFF_EPOCHS as usize
        && std::mem::offset_of!(Ctx, thread_base) == OFF_THREAD_BASE as usize
        && std::mem::offset_of!(Ctx, lane_args) == OFF_LANE_ARGS as usize
        && std::mem::offset_of!(Ctx, hold) == OFF_HOLD as usize
        && std::mem::offset_of!(Ctx, loop_most) == OFF_LOOP_MOST as usize
        && std::mem::offset_of!(Entry, id) == E_ID as usize
        && std::mem::offset_of!(Entry, base) == E_BASE as usize
        && std::mem::offset_of!(Entry, len) == E_LEN as usize
        && std::mem::offset_of!(Entry, lane_stride) == E_STRIDE as usize
        && std::mem::offset_of!(Entry, writable) == E_WRITABLE as usize
        && std::mem::offset_of!(Entry, shadow) == E_SHADOW as usize
        && std::mem::offset_of!(Entry, lo) == E_LO as usize
        && std::mem::offset_of!(Entry, hi) == E_HI as usize
        && std::mem::offset_of!(Entry, written) == E_WRITTEN as usize
        && std::mem::offset_of!(Entry, store_len) == E_STORE_LEN as usize
}

/// The allocations a kernel's table holds, each with its entry and whether
/// the compiled code keeps its shadow (made once per kernel: the table is
/// filled for every threadgroup).
pub fn table_ids(k: &gpu::Kernel, shadowed: &HashSet<u32>) -> Vec<(AllocId, usize, bool)> {
    let mut ids: Vec<AllocId> = k.params.iter().filter_map(|p| p.kind.memory()).map(|(_, id)| id).collect();
    ids.extend((0..k.constants.len() as u32).map(AllocId::constant));
    ids.extend((0..k.threadgroup_vars.len() as u32).map(AllocId::threadgroup));
    ids.extend((0..k.private_vars.len() as u32).map(AllocId::private));
    ids.into_iter().map(|id| (id, slot_of(id.0), shadowed.contains(&id.0))).collect()
}

/// Fill `table` with the threadgroup's allocations `ids` ([`table_ids`]);
/// `used` lists the entries filled (those of the last fill are cleared
/// first).
pub fn fill_table(t: &mut Threadgroup<'_, '_>, table: &mut [Entry], used: &mut Vec<usize>, ids: &[(AllocId, usize, bool)]) {
    for s in used.drain(..) {
        table[s] = Entry::default();
    }
    for &(id, s, shadowed) in ids {
        if table[s].id != u64::MAX {
            continue; // two ids share the entry: the second gives up when used
        }
        if let Some(r) = t.region(id) {
            // (Only the shadows the code keeps: another is made on first use.)
            let shadow = if shadowed { t.shadow_cells(id) as u64 } else { 0 };
            table[s] = Entry { shadow, ..Entry::of(id, r) };
            used.push(s);
        }
    }
}

/// A table [`fill_table`] filled for an earlier threadgroup of the same
/// worker, for the next: what the code learnt of this one is forgotten.
pub fn new_threadgroup(table: &mut [Entry], used: &[usize]) {
    for &s in used {
        let e = &mut table[s];
        (e.lo, e.hi, e.written, e.scan) = (u64::MAX, 0, 0, 0);
    }
}

/// Make each buffer in `written` (indices) the worker's own copy, so
/// compiled stores go straight in; a read-only one stays unwritable and a
/// store to it gives up.
pub fn own_written(t: &mut Threadgroup<'_, '_>, table: &mut [Entry], written: &[u32]) {
    for &n in written {
        let id = AllocId::buffer(n);
        let e = &mut table[slot_of(id.0)];
        // (A buffer the workers write together has its shared copy in the
        // entry already: `Threadgroup::region`.)
        if e.id == id.0 as u64 && e.writable == 0 {
            if let Some(r) = t.writable(n) {
                e.moved(r);
            }
        }
    }
}

/// Where threads stopped at SIMD-group functions (`stops[k].lane`, state
/// `BARRIER + k`), apply them: per SIMD-group, the threads stopped at one
/// together are its active lanes, as in lockstep — which holds only if
/// every thread of the group that stopped at such a function stopped at the
/// same one, at the same trips of the loops around it (`false`: give up;
/// lockstep would have run them apart). `None` when no thread stopped at one.
pub fn lane_functions(
    t: &mut Threadgroup<'_, '_>,
    stops: &[Stop],
    insts: &[*const Inst],
    state: &[u64],
    trips: TripSlots<'_>,
    args: &mut [u64],
) -> Option<bool> {
    let lane_stop =
        |st: u64| st.checked_sub(crate::codegen::BARRIER).and_then(|k| stops.get(k as usize)).filter(|s| s.lane.is_some()).map(|s| (st, s));
    let mut any = false;
    for (g, states) in state.chunks(32).enumerate() {
        let mut first: Option<(usize, u64)> = None;
        for (i, &st) in states.iter().enumerate() {
            let Some((st, stop)) = lane_stop(st) else { continue };
            let l = g * 32 + i;
            any = true;
            match first {
                None => first = Some((l, st)),
                Some((f, at)) if at != st || !trips.same(f, l, stop.trips) => return Some(false),
                Some(_) => {}
            }
        }
    }
    if !any {
        return None;
    }
    let mut done: Vec<u64> = Vec::new();
    for &st in state {
        let Some((st, stop)) = lane_stop(st) else { continue };
        if done.contains(&st) {
            continue;
        }
        done.push(st);
        let lanes: Vec<usize> = (0..state.len()).filter(|&l| state[l] == st).collect();
        let Some(&inst) = stop.lane.and_then(|i| insts.get(i)) else { return Some(false) };
        // SAFETY: `insts` point into the compiled kernel, which outlives the run.
        t.lane_function(unsafe { &*inst }, &lanes, args);
    }
    Some(true)
}

/// The loop trip counters threads keep in their spill slots: `slots` per
/// thread, the counters from slot `from`.
#[derive(Clone, Copy)]
pub struct TripSlots<'a> {
    pub spill: &'a [u64],
    pub slots: usize,
    pub from: usize,
}

impl TripSlots<'_> {
    /// Whether threads `a` and `b` are at the same trips of the `n`
    /// outermost counting loops (those around the stop they are at).
    pub fn same(&self, a: usize, b: usize, n: usize) -> bool {
        // (Element by element: a slice comparison is a `memcmp` call, which
        // for one or two counters costs more than the comparison.)
        let (a, b) = (a * self.slots + self.from, b * self.slots + self.from);
        (0..n).all(|k| self.spill[a + k] == self.spill[b + k])
    }
}

/// Where the threads stand after a round.
#[derive(Debug, PartialEq)]
pub enum RoundEnd {
    /// Every thread finished the kernel.
    Finished,
    /// The threads still running all wait at `state`; `some_finished`:
    /// others finished.
    At { state: u64, some_finished: bool },
    /// Threads wait at different stops.
    Split,
}

/// Where the threads whose states are `state` stand after a round.
pub fn round_end(state: &[u64]) -> RoundEnd {
    use crate::codegen::FINISHED;
    // Usually every thread waits at the first one's stop, or all finished:
    // a fold without branches (vectorised) says so.
    if let Some(&first) = state.first() {
        if state.iter().fold(0, |differ, &s| differ | (s ^ first)) == 0 {
            return if first == FINISHED { RoundEnd::Finished } else { RoundEnd::At { state: first, some_finished: false } };
        }
    }
    let mut some_finished = false;
    let mut rest = state.iter();
    let at = loop {
        match rest.next() {
            None => return RoundEnd::Finished,
            Some(&FINISHED) => some_finished = true,
            Some(&st) => break st,
        }
    };
    for &st in rest {
        if st != at {
            if st != FINISHED {
                return RoundEnd::Split;
            }
            some_finished = true;
        }
    }
    RoundEnd::At { state: at, some_finished }
}

/// After a barrier, with checks on: mark the threadgroup memory every cell
/// of which has now been written in this threadgroup (reads of it need no
/// check that they read written memory; cells stay written until the
/// threadgroup ends).
pub fn mark_written(t: &mut Threadgroup<'_, '_>, table: &mut [Entry], used: &[usize]) {
    for &s in used {
        let e = &mut table[s];
        let tg = matches!(AllocId(e.id as u32).kind(), AllocKind::Threadgroup(_) | AllocKind::ThreadgroupBuffer(_));
        if tg && e.shadow != 0 && e.written == 0 {
            let mut from = e.scan as usize;
            e.written = t.shadow_all_written(AllocId(e.id as u32), &mut from) as u64;
            e.scan = from as u64;
        }
    }
}

/// Tell the shadow which cells the threadgroup's compiled code touched.
pub fn fold_touched(t: &mut Threadgroup<'_, '_>, table: &[Entry], used: &[usize]) {
    for &s in used {
        let e = &table[s];
        if e.shadow != 0 && e.lo <= e.hi {
            t.shadow_touched(AllocId(e.id as u32), e.lo as usize, e.hi as usize + 1);
        }
    }
}

unsafe fn tg<'a>(ctx: *mut Ctx) -> &'a mut Threadgroup<'static, 'static> {
    &mut *(*ctx).tg
}

unsafe fn inst<'a>(ctx: *mut Ctx, i: u64) -> &'a Inst {
    &**(*ctx).insts.add(i as usize)
}

/// Instruction `i` for one thread, by the interpreter's arithmetic:
/// `inputs`/`outputs` hold its registers in `ir::reg_uses` order.
pub(crate) extern "C" fn h_eval(ctx: *mut Ctx, i: u64, inputs: *const u64, outputs: *mut u64) {
    // SAFETY (all helpers): `ctx` is the live context the runner built for
    // this call of the compiled function; indices were made by codegen.
    unsafe {
        let inst = inst(ctx, i);
        let (defs, uses, _) = gpu::ir::reg_uses(inst);
        let ins = std::slice::from_raw_parts(inputs, uses.len());
        let outs = std::slice::from_raw_parts_mut(outputs, defs.len());
        tg(ctx).eval(inst, ins, outs);
    }
}

/// With checks on: thread `lane` accesses `what & 0xffff_ffff` bytes at
/// byte offset `off` of allocation `id`, writing when bit 32 of `what` is
/// set, atomically when bit 33 is; 0 when the sanitizer might report it
/// (the compiled code gives up).
pub(crate) extern "C" fn h_shadow(ctx: *mut Ctx, id: u64, off: u64, lane: u64, what: u64) -> u64 {
    let op = gpu::conflicts::Op { write: what >> 32 & 1 != 0, atomic: what >> 33 & 1 != 0 };
    unsafe { tg(ctx).shadow_access(AllocId(id as u32), off, what & 0xffff_ffff, lane as usize, op) as u64 }
}

/// Attribute instruction `i` for thread `lane`.
pub(crate) extern "C" fn h_attr(ctx: *mut Ctx, i: u64, lane: u64) -> u64 {
    unsafe {
        let Inst::Attr { attr, component, .. } = inst(ctx, i) else { return 0 };
        tg(ctx).attr(*attr, *component, lane as usize) as u64
    }
}

// Trampolines into the math library's functions (`gpu::ir::MathFn`),
// which have Rust's ABI: `g` is the function pointer.
pub(crate) extern "C" fn h_math_f1(g: usize, x: f32) -> f32 {
    // SAFETY (all five): `g` is the `fn` of that type the instruction holds.
    unsafe { std::mem::transmute::<usize, fn(f32) -> f32>(g)(x) }
}

pub(crate) extern "C" fn h_math_f2(g: usize, x: f32, y: f32) -> f32 {
    unsafe { std::mem::transmute::<usize, fn(f32, f32) -> f32>(g)(x, y) }
}

pub(crate) extern "C" fn h_math_f3(g: usize, x: f32, y: f32, z: f32) -> f32 {
    unsafe { std::mem::transmute::<usize, fn(f32, f32, f32) -> f32>(g)(x, y, z) }
}

pub(crate) extern "C" fn h_math_pred(g: usize, x: f32) -> u32 {
    unsafe { std::mem::transmute::<usize, fn(f32) -> bool>(g)(x) as u32 }
}

pub(crate) extern "C" fn h_math_rel(g: usize, x: f32, y: f32) -> u32 {
    unsafe { std::mem::transmute::<usize, fn(f32, f32) -> bool>(g)(x, y) as u32 }
}

pub(crate) extern "C" fn h_half_to_f32(raw: u64) -> u64 {
    half::f16::from_bits(raw as u16).to_f32().to_bits() as u64
}

pub(crate) extern "C" fn h_f32_to_half(bits: u64) -> u64 {
    half::f16::from_f32(f32::from_bits(bits as u32)).to_bits() as u64
}

pub(crate) extern "C" fn h_f32_to_bf16(bits: u64) -> u64 {
    half::bf16::from_f32(f32::from_bits(bits as u32)).to_bits() as u64
}

/// Thread `lane`'s block copy (instruction `i`) from `src` to `dst`; 0 when
/// the interpreter would have refused it (the compiled code gives up).
pub(crate) extern "C" fn h_memcopy(ctx: *mut Ctx, i: u64, lane: u64, dst: u64, src: u64) -> u64 {
    unsafe {
        let Inst::MemCopy { bytes, align, .. } = inst(ctx, i) else { return 0 };
        tg(ctx).copy_lane(lane as usize, dst, src, *bytes as usize, *align as usize) as u64
    }
}

/// Thread `lane`'s atomic (instruction `i`) at `p` with operands `a`, `b`;
/// writes the value it returns to `*out` and returns 1, or 0 when the
/// interpreter would have refused it.
pub(crate) extern "C" fn h_atomic(ctx: *mut Ctx, i: u64, lane: u64, p: u64, a: u64, b: u64, out: *mut u64) -> u64 {
    unsafe {
        match tg(ctx).atomic_lane(inst(ctx, i), lane as usize, p, a, b) {
            Some(v) => {
                *out = v;
                // A shared buffer was copied on the write: the table follows.
                if let AllocKind::Buffer(_) = gpu::memory::ptr_alloc(p).kind() {
                    let id = gpu::memory::ptr_alloc(p);
                    if let Some(r) = tg(ctx).region(id) {
                        let s = slot_of(id.0);
                        if (*(*ctx).table.add(s)).id == id.0 as u64 {
                            (*(*ctx).table.add(s)).moved(r);
                        }
                    }
                }
                1
            }
            None => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codegen::{BARRIER, FINISHED};

    #[test]
    fn round_ends() {
        let b = BARRIER + 3;
        assert_eq!(round_end(&[]), RoundEnd::Finished);
        assert_eq!(round_end(&[FINISHED; 5]), RoundEnd::Finished);
        assert_eq!(round_end(&[b; 7]), RoundEnd::At { state: b, some_finished: false });
        assert_eq!(round_end(&[b, b, FINISHED, b]), RoundEnd::At { state: b, some_finished: true });
        assert_eq!(round_end(&[FINISHED, b, b]), RoundEnd::At { state: b, some_finished: true });
        assert_eq!(round_end(&[b, b, BARRIER, b]), RoundEnd::Split);
        assert_eq!(round_end(&[FINISHED, BARRIER, b]), RoundEnd::Split);
    }
}
