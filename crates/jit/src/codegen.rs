//! `gpu::Kernel` IR to one Cranelift function that runs every thread of a
//! threadgroup in turn, each from where it stands (the start, or a
//! barrier) to its next barrier or the end: `f(ctx) -> status`. The runner
//! calls it once per round (`lib.rs`). Kernels without barriers may also
//! get a loop that runs four threads at a time first (`wide.rs`).
//!
//! The IR's registers become SSA variables; its structured control flow
//! becomes ordinary branches (an `if` is a branch, not two masked runs).
//! At a barrier the registers live across it are stored in the thread's
//! spill slots, its state becomes `BARRIER + k`, and the next thread runs;
//! in the next round the thread reloads them and carries on after barrier
//! `k`.
//!
//! Everything that could make the interpreter report something — a fault,
//! a runaway loop, a call through a bad pointer — makes the function
//! return `GIVE_UP`, and the dispatch is rerun by the interpreter, which
//! reports it. Arithmetic the code does not spell out natively is done by
//! the interpreter's own code, one thread at a time (`runtime::h_eval`).

use crate::analysis::{Spills, Unsupported};
use crate::runtime as rt;
use cranelift_codegen::cursor::{Cursor, FuncCursor};
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{types, AbiParam, Block, InstBuilder, MemFlags, SigRef, Signature, StackSlotData, StackSlotKind, Value};
use cranelift_codegen::isa::CallConv;
use cranelift_frontend::{FunctionBuilder, Switch, Variable};
use gpu::ir::{AtomicOp, Inst, Reg, UnOp};
use msl::ast::BinaryOp;
use msl::hir::{BuiltinId, ThreadAttr};
use msl::types::Scalar;

/// Loads of what stays put for a whole call of the code (table entries'
/// place, size and shadow; the threadgroup's geometry and epochs): pure
/// to Cranelift, so it shares and hoists them out of loops. Every buffer
/// the code may write is the worker's own before the call, so no helper
/// moves one while the code runs.
const FIXED: MemFlags = MemFlags::trusted().with_readonly().with_can_move();
use std::collections::{HashMap, HashSet};

mod wide;

const I8: types::Type = types::I8;
const I32: types::Type = types::I32;
const I64: types::Type = types::I64;
const F32: types::Type = types::F32;

/// Most SSA values in a compiled function: compile time and memory grow
/// faster than the size (`crate::Effort`), so larger kernels are left to
/// the interpreter.
pub const MOST_VALUES: usize = 150_000;

/// Most variables times blocks, the size of the SSA builder's tables.
pub const MOST_VAR_BLOCKS: usize = 40_000_000;

/// Why a function past [`MOST_VALUES`] or [`MOST_VAR_BLOCKS`] is not compiled.
pub fn too_large(values: usize, vars: usize, blocks: usize) -> Unsupported {
    Unsupported(if values > MOST_VALUES {
        format!("the kernel is too large to compile quickly: its native code passed {MOST_VALUES} values")
    } else {
        format!("the kernel is too large to compile quickly: its native code has {vars} variables over {blocks} blocks (at most {MOST_VAR_BLOCKS} variable-blocks compile)")
    })
}

/// The round ran (the function's result).
pub const OK: u64 = 0;
/// The result cannot be promised: rerun interpreted (the function's result).
pub const GIVE_UP: u64 = 1;
/// A thread's state: it starts the kernel.
pub const START: u64 = 0;
/// A thread's state `BARRIER + k`: it waits at barrier `k`.
pub const BARRIER: u64 = 2;
/// A thread's state: it finished the kernel. (The states are dense, so
/// that a thread's resumption is one jump table.)
pub const FINISHED: u64 = 1;

/// Most trips of a loop unrolled (`Gen::unroll_trips`), and most
/// instructions its copies may add up to.
const UNROLL_TRIPS: u64 = 16;
const UNROLL_INSTS: u64 = 512;

/// Most barriers (resume points) a compiled kernel may have.
const MAX_BARRIERS: usize = 4096;

/// Where a pointer register is known to point: allocation id, the offset
/// (as a 64-bit sum; equal to the pointer's 40-bit offset whenever it is
/// inside the allocation), and a power of two the offset is a multiple of.
#[derive(Clone, Copy)]
struct Known {
    id: u32,
    off: Value,
    align: i64,
}

/// The largest power of two (at most 2^20) dividing `x` (2^20 for 0).
fn align_of(x: i64) -> i64 {
    if x == 0 {
        1 << 20
    } else {
        (1i64 << x.trailing_zeros().min(20)).min(1 << 20)
    }
}

enum Target {
    /// `id`: the loop's number (`analysis::LockstepBound`), `trips` its counter.
    Loop {
        brk: Block,
        cont: Block,
        id: usize,
        trips: Variable,
    },
    Switch {
        brk: Block,
    },
    Scope {
        ret: Block,
    },
}

/// The integer comparison `op` is, signed or not.
fn int_cc(op: BinaryOp, signed: bool) -> Option<IntCC> {
    Some(match op {
        BinaryOp::Eq => IntCC::Equal,
        BinaryOp::Ne => IntCC::NotEqual,
        BinaryOp::Lt if signed => IntCC::SignedLessThan,
        BinaryOp::Gt if signed => IntCC::SignedGreaterThan,
        BinaryOp::Le if signed => IntCC::SignedLessThanOrEqual,
        BinaryOp::Ge if signed => IntCC::SignedGreaterThanOrEqual,
        BinaryOp::Lt => IntCC::UnsignedLessThan,
        BinaryOp::Gt => IntCC::UnsignedGreaterThan,
        BinaryOp::Le => IntCC::UnsignedLessThanOrEqual,
        BinaryOp::Ge => IntCC::UnsignedGreaterThanOrEqual,
        _ => return None,
    })
}

/// The float comparison `op` is. (These helpers serve the one-thread
/// code and the four-threads code alike: Cranelift's instructions take
/// scalars and vectors.)
fn float_cc(op: BinaryOp) -> Option<FloatCC> {
    Some(match op {
        BinaryOp::Eq => FloatCC::Equal,
        BinaryOp::Ne => FloatCC::NotEqual,
        BinaryOp::Lt => FloatCC::LessThan,
        BinaryOp::Gt => FloatCC::GreaterThan,
        BinaryOp::Le => FloatCC::LessThanOrEqual,
        BinaryOp::Ge => FloatCC::GreaterThanOrEqual,
        _ => return None,
    })
}

/// `x op y` for float `op` `+ - * /`.
fn float_arith(b: &mut FunctionBuilder<'_>, op: BinaryOp, x: Value, y: Value) -> Option<Value> {
    Some(match op {
        BinaryOp::Add => b.ins().fadd(x, y),
        BinaryOp::Sub => b.ins().fsub(x, y),
        BinaryOp::Mul => b.ins().fmul(x, y),
        BinaryOp::Div => b.ins().fdiv(x, y),
        _ => return None,
    })
}

/// `x op y` for integer `op` `+ - * & | ^` (wrapping).
fn int_arith(b: &mut FunctionBuilder<'_>, op: BinaryOp, x: Value, y: Value) -> Option<Value> {
    Some(match op {
        BinaryOp::Add => b.ins().iadd(x, y),
        BinaryOp::Sub => b.ins().isub(x, y),
        BinaryOp::Mul => b.ins().imul(x, y),
        BinaryOp::BitAnd => b.ins().band(x, y),
        BinaryOp::BitOr => b.ins().bor(x, y),
        BinaryOp::BitXor => b.ins().bxor(x, y),
        _ => return None,
    })
}

/// Integer `min` or `max` (`func`), signed or not.
fn min_max(b: &mut FunctionBuilder<'_>, func: BuiltinId, signed: bool, x: Value, y: Value) -> Value {
    match (func, signed) {
        (BuiltinId::Min, true) => b.ins().smin(x, y),
        (BuiltinId::Min, false) => b.ins().umin(x, y),
        (_, true) => b.ins().smax(x, y),
        (_, false) => b.ins().umax(x, y),
    }
}

/// A loop's header: on to `body` while `go` is nonzero, else to `exit`.
/// Cranelift (0.124) moves what a loop computes from values made before it
/// (table entries, geometry) out of the loop only until it has placed a
/// block outside the loop that the header dominates, and it places the
/// header's successors in the order opposite to the branch's: so the
/// branch names the exit first, and the body is placed first.
fn loop_branch(b: &mut FunctionBuilder<'_>, go: Value, body: Block, exit: Block) {
    let done = b.ins().icmp_imm(IntCC::Equal, go, 0);
    b.ins().brif(done, exit, &[], body, &[]);
}

/// What is known on entering a block: where pointer registers point, and
/// which registers hold what their spill slots do (`Gen::clean`).
type Bases = (HashMap<Reg, Known>, HashSet<Reg>);

/// A call of an `f32` math function: the C-ABI trampoline, the function
/// it calls, how many arguments it takes, and the call's signature (its
/// result an `f32`, or a `u32` for a predicate).
struct MathCall {
    tramp: usize,
    g: usize,
    n: usize,
    sig: SigRef,
}

/// The helpers' signatures.
struct Sigs {
    eval: SigRef,
    attr: SigRef,
    conv: SigRef,
    memcopy: SigRef,
    atomic: SigRef,
    shadow: SigRef,
    /// `(fn, f32 × n) -> f32` for n = 1, 2, 3, then `-> u32` for n = 1, 2.
    math: [SigRef; 5],
}

pub struct Gen<'a, 'b> {
    b: &'a mut FunctionBuilder<'b>,
    /// Instructions the helpers get, by index.
    pub insts: &'a mut Vec<*const Inst>,
    ctx: Value,
    lane: Value,
    table: Value,
    spill_base: Value,
    counts_addr: Value,
    state_addr: Value,
    initial: Value,
    lane_head: Block,
    vars: HashMap<Reg, Variable>,
    /// 32-bit registers the kernel does float arithmetic on: their
    /// variables are `f32`, so values stay in vector registers instead of
    /// moving to and from integer ones around every operation.
    floats: HashSet<Reg>,
    cnt: Variable,
    /// Instructions executed since the count was last brought up to date.
    pending: i64,
    /// The current block has ended (break, continue, return, give-up).
    dead: bool,
    give_up: Block,
    targets: Vec<Target>,
    spills: &'a Spills,
    /// Resume points: (block that reloads the registers).
    resumes: Vec<Block>,
    sigs: Sigs,
    ptr: types::Type,
    /// Registers that hold one pointer for the whole kernel (parameters,
    /// program-scope addresses): allocation id and offset.
    statics: &'a HashMap<Reg, (u32, i64)>,
    /// Registers known, in the current straight run, to point into a
    /// known allocation at an offset (see `Known`).
    prov: HashMap<Reg, Known>,
    /// Loads from `constant` memory at a fixed place, made once per call.
    invariant: HashMap<(u32, i64, Scalar), Value>,
    /// Sizes of the allocations whose size the kernel fixes.
    lens: &'a HashMap<u32, u64>,
    /// Attributes with one value per threadgroup, by their index in `ctx.uniform_attrs`.
    uniform_attrs: &'a [(ThreadAttr, u8)],
    /// Compiled with checks on (see `Plan::shadowed`).
    checks: bool,
    /// With checks on: the trip counters of the loops around the current
    /// instruction that hold a barrier (kept in spill slots `trip_slot..`
    /// across barriers).
    trips: Vec<Variable>,
    trip_slot: usize,
    /// With checks on: loads that need no read record (`Plan::read_only`),
    /// and whether the access being compiled is one.
    read_only: &'a HashSet<usize>,
    reading_only: bool,
    shadowed: &'a HashMap<u32, Option<u32>>,
    /// Registers with one value for the whole kernel.
    fixed: &'a HashMap<Reg, crate::analysis::Remake>,
    /// The jump from the function's first blocks into the threads' loop:
    /// values made before it are there for every thread
    /// (`Gen::entry_field`), and `entry_vals` keeps them by (entry
    /// offset, field).
    prelude: cranelift_codegen::ir::Inst,
    entry_vals: HashMap<(i32, i32), Value>,
    /// Registers whose spill slot holds their value here (reloaded at the
    /// last resume and not assigned since): a stop need not store them.
    clean: HashSet<Reg>,
    /// The kernel has stops: threads keep their states in `ctx.state`
    /// (without, every thread runs to the end in one call, and the runner
    /// reads no state).
    stateful: bool,
    /// One per barrier, as `resumes`.
    stops: Vec<Stop>,
    /// On to the next thread, leaving this one as it is.
    skip: Block,
    /// Each loop's number, by the instruction's address.
    loops: &'a HashMap<usize, usize>,
    /// The kernel has SIMD-group functions or barriers (threads at
    /// threadgroup barriers may be held).
    lane_stops: bool,
    /// Record loops' most trips (`Plan::bound_trips`).
    bound_trips: bool,
    /// `Plan::keep_counts`.
    keep_counts: bool,
    /// `Plan::keep_trips`.
    keep_trips: bool,
    /// `Plan::count`.
    counting: bool,
    /// The four-threads code's state (`wide.rs`).
    wide: wide::Wide,
}

/// What the runner checks when the threads stop at barrier `k` (the
/// `k`th of `Gen::resumes`), with checks on.
#[derive(Clone, Copy, Debug, Default)]
pub struct Stop {
    /// The barrier's `mem_flags`, when one constant (else the code ANDs
    /// each thread's into `ctx.round_flags`).
    pub flags: Option<u32>,
    /// Loops around it that count their trips (spill slots from
    /// `Native::trip_slot`): every thread must be at the same trips.
    pub trips: usize,
    /// A SIMD-group function (its instruction's index in `Native::insts`),
    /// not a barrier.
    pub lane: Option<usize>,
}

fn sig(call_conv: CallConv, params: usize, ret: bool) -> Signature {
    let mut s = Signature::new(call_conv);
    for _ in 0..params {
        s.params.push(AbiParam::new(I64));
    }
    if ret {
        s.returns.push(AbiParam::new(I64));
    }
    s
}

/// What the code generator is told about a kernel (`analysis.rs`).
pub struct Plan<'a> {
    pub body: &'a [Inst],
    /// Registers that start with the values in `ctx.initial`.
    pub preset: &'a [Reg],
    pub spills: &'a Spills,
    pub statics: &'a HashMap<Reg, (u32, i64)>,
    pub lens: &'a HashMap<u32, u64>,
    pub uniform_attrs: &'a [(ThreadAttr, u8)],
    /// Checks on: give up wherever the interpreter might report something
    /// (`gpu::conflicts`), telling the shadow about every access to the
    /// allocations in `shadowed` (with the log2 of their cells' size;
    /// `None`: bytes, kept by the runtime) and to any reached through an
    /// unknown pointer.
    pub checks: bool,
    pub shadowed: &'a HashMap<u32, Option<u32>>,
    /// Spill slots per thread: the registers' (`spills.slot`), then, with
    /// checks on, one per loop around a barrier.
    pub spill_slots: usize,
    /// With checks on: loads (by address) of threadgroup memory nobody
    /// writes in their interval (`analysis::read_only_loads`).
    pub read_only: &'a HashSet<usize>,
    pub fixed: &'a HashMap<Reg, crate::analysis::Remake>,
    /// Each loop's number (`analysis::LockstepBound::loops`).
    pub loops: &'a HashMap<usize, usize>,
    /// Record every loop's most trips in `ctx.loop_most` (for threads that
    /// take different paths, when the loops' trips are not bounded). When
    /// the code counts and does not record them, every thread takes the
    /// same path: each one's count is the interpreter's, and is checked
    /// against the budget as the thread stops (`Gen::exit`).
    pub bound_trips: bool,
    /// Keep the trips of loops around stops across them
    /// (`Native::trip_depth`).
    pub keep_trips: bool,
    /// Count instructions at all (not when the loops' trips are bounded
    /// whatever the values: `analysis::LockstepBound::static_bound`).
    pub count: bool,
    /// Leave each thread's instruction count in `ctx.counts` as it stops
    /// (`Native::counts_kept`).
    pub keep_counts: bool,
    /// Also make the four-threads loop (`wide.rs`), if [`wide_candidate`].
    pub wide: bool,
}

/// Whether a kernel compiled with `checks` off or on, with or without
/// stops, may get the four-threads loop: checks off, no stops, and made of
/// what it handles (`wide.rs`; its only loops are short ones, so the
/// runner compares its count with the budget before it runs, and the code
/// counts nothing).
pub fn wide_candidate(body: &[Inst], checks: bool, stateful: bool) -> bool {
    !checks && !stateful && wide::candidate(body)
}

/// Compile `plan.body` into the builder's function (signature `(ctx) ->
/// status`).
pub fn compile_body(
    b: &mut FunctionBuilder<'_>,
    insts: &mut Vec<*const Inst>,
    call_conv: CallConv,
    plan: &Plan,
) -> Result<Vec<Stop>, Unsupported> {
    let Plan {
        body,
        preset,
        spills,
        statics,
        lens,
        uniform_attrs,
        checks,
        shadowed,
        spill_slots,
        read_only,
        fixed,
        loops,
        bound_trips,
        keep_counts,
        keep_trips,
        count,
        wide,
    } = *plan;
    let entry = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.switch_to_block(entry);
    let ctx = b.block_params(entry)[0];
    let fl = MemFlags::trusted();
    let table = b.ins().load(I64, fl, ctx, rt::OFF_TABLE);
    let spill = b.ins().load(I64, fl, ctx, rt::OFF_SPILL);
    let counts = b.ins().load(I64, fl, ctx, rt::OFF_COUNTS);
    let states = b.ins().load(I64, fl, ctx, rt::OFF_STATE);
    let n = b.ins().load(I64, fl, ctx, rt::OFF_N);
    let initial = b.ins().load(I64, fl, ctx, rt::OFF_INITIAL);
    let give_up = b.create_block();
    // (Placed after the rest, with the jumps to it: the threads' loop stays
    // in as few cache lines as it can.)
    b.set_cold_block(give_up);
    // Loads from `constant` memory at fixed places, once per call.
    let mut invariant = HashMap::new();
    let mut wanted = Vec::new();
    gpu::ir::walk(body, &mut |i| {
        if let Inst::Load { ty, ptr, space: msl::ast::AddressSpace::Constant, dst, .. } = i {
            if let (Some(&(id, off)), Reg::W32(_)) = (statics.get(ptr), dst) {
                if matches!(ty, Scalar::Int | Scalar::UInt | Scalar::Float) {
                    wanted.push((id, off, *ty));
                }
            }
        }
    });
    for (id, off, ty) in wanted {
        if invariant.contains_key(&(id, off, ty)) {
            continue;
        }
        let e = At { base: table, off: rt::slot_of(id) as i32 * rt::ENTRY_BYTES as i32, known: false };
        let len = e.load(b, FIXED, rt::E_LEN);
        let fits = b.ins().icmp_imm(IntCC::UnsignedGreaterThanOrEqual, len, off + 4);
        let ok = if off >= 0 && off % 4 == 0 { fits } else { b.ins().iconst(types::I8, 0) };
        let next = b.create_block();
        b.ins().brif(ok, next, &[], give_up, &[]);
        b.switch_to_block(next);
        let base = e.load(b, FIXED, rt::E_BASE);
        let v = b.ins().load(I32, fl, base, off as i32);
        invariant.insert((id, off, ty), v);
    }
    // for lane in 0..n (with the four-threads loop, first in chunks when
    // the threadgroup is one row: `wide.rs`; its loops are short, so the
    // runner compared its count with the budget)
    let lane_head = b.create_block();
    b.append_block_param(lane_head, I64);
    let wide_head = wide.then(|| b.create_block());
    let zero = b.ins().iconst(I64, 0);
    let prelude = if let Some(head) = wide_head {
        b.append_block_param(head, I64);
        let rows = b.ins().load(I32, FIXED, ctx, rt::OFF_TG_SIZE + 4);
        let layers = b.ins().load(I32, FIXED, ctx, rt::OFF_TG_SIZE + 8);
        let rows = b.ins().icmp_imm(IntCC::Equal, rows, 1);
        let layers = b.ins().icmp_imm(IntCC::Equal, layers, 1);
        let flat = b.ins().band(rows, layers);
        b.ins().brif(flat, head, &[zero.into()], lane_head, &[zero.into()])
    } else {
        b.ins().jump(lane_head, &[zero.into()])
    };
    b.switch_to_block(lane_head);
    let lane = b.block_params(lane_head)[0];
    let (lane_body, finish, dispatch) = (b.create_block(), b.create_block(), b.create_block());
    let more = b.ins().icmp(IntCC::UnsignedLessThan, lane, n);
    loop_branch(b, more, lane_body, finish);
    b.switch_to_block(finish);
    let ok = b.ins().iconst(I64, OK as i64);
    b.ins().return_(&[ok]);
    b.switch_to_block(lane_body);
    // A kernel without stops runs each thread from the start to the end in
    // one call: no state to read or keep, and the count starts at 0.
    let (mut stops, mut lane_stops) = (false, false);
    gpu::ir::walk(body, &mut |i| {
        stops |= crate::analysis::is_stop(i);
        lane_stops |= matches!(i, Inst::Lane { .. } | Inst::Barrier { simdgroup: true, .. });
    });
    let so = b.ins().ishl_imm(lane, 3);
    let state_addr = b.ins().iadd(states, so);
    let state = if stops { b.ins().load(I64, fl, state_addr, 0) } else { b.ins().iconst(I64, START as i64) };
    let per_lane = b.ins().imul_imm(lane, spill_slots as i64 * 8);
    let spill_base = b.ins().iadd(spill, per_lane);
    let counts_addr = b.ins().iadd(counts, so);
    let cnt = b.declare_var(I64);
    let c0 = if stops && keep_counts { b.ins().load(I64, fl, counts_addr, 0) } else { b.ins().iconst(I64, 0) };
    b.def_var(cnt, c0);
    b.ins().jump(dispatch, &[]);
    let sigs = Sigs {
        eval: b.import_signature(sig(call_conv, 4, false)),
        attr: b.import_signature(sig(call_conv, 3, true)),
        conv: b.import_signature(sig(call_conv, 1, true)),
        memcopy: b.import_signature(sig(call_conv, 5, true)),
        atomic: b.import_signature(sig(call_conv, 7, true)),
        shadow: b.import_signature(sig(call_conv, 5, true)),
        math: [(1, F32), (2, F32), (3, F32), (1, I32), (2, I32)].map(|(n, ret)| {
            let mut s = Signature::new(call_conv);
            s.params.push(AbiParam::new(I64));
            s.params.extend((0..n).map(|_| AbiParam::new(F32)));
            s.returns.push(AbiParam::new(ret));
            b.import_signature(s)
        }),
    };
    let start = b.create_block();
    let skip = b.create_block();
    let mut g = Gen {
        b,
        insts,
        ctx,
        lane,
        table,
        spill_base,
        counts_addr,
        state_addr,
        initial,
        lane_head,
        vars: HashMap::new(),
        floats: float_registers(body),
        cnt,
        pending: 0,
        dead: false,
        give_up,
        targets: Vec::new(),
        spills,
        resumes: Vec::new(),
        sigs,
        ptr: I64,
        statics,
        prov: HashMap::new(),
        invariant,
        lens,
        uniform_attrs,
        checks,
        shadowed,
        trips: Vec::new(),
        trip_slot: spills.slot.len(),
        read_only,
        reading_only: false,
        fixed,
        prelude,
        entry_vals: HashMap::new(),
        stateful: stops,
        lane_stops,
        clean: HashSet::new(),
        stops: Vec::new(),
        skip,
        loops,
        bound_trips,
        keep_counts,
        keep_trips,
        counting: count,
        wide: wide::Wide::default(),
    };
    // The kernel from the start.
    g.b.switch_to_block(start);
    g.load_presets(preset);
    g.block(body)?;
    if !g.dead {
        g.flush();
        g.exit(FINISHED);
    }
    if let Some(head) = wide_head {
        g.wide_loop(body, preset, head, n)?;
    }
    // Giving up.
    g.b.switch_to_block(g.give_up);
    let s = g.b.ins().iconst(I64, GIVE_UP as i64);
    g.b.ins().return_(&[s]);
    // Where the thread goes on: the start, or after the barrier it waits
    // at; a finished thread is skipped.
    g.b.switch_to_block(dispatch);
    let skip = g.skip;
    if !stops {
        // (Every thread starts here: Cranelift keeps a branch on a constant.)
        g.b.ins().jump(start, &[]);
        g.b.switch_to_block(skip);
        g.b.ins().jump(g.give_up, &[]);
        g.b.seal_all_blocks();
        return Ok(g.stops);
    }
    let mut sw = Switch::new();
    sw.set_entry(START as u128, start);
    sw.set_entry(FINISHED as u128, skip);
    for (k, &blk) in g.resumes.iter().enumerate() {
        sw.set_entry(BARRIER as u128 + k as u128, blk);
    }
    let _ = g.ptr;
    sw.emit(g.b, state, g.give_up);
    g.b.switch_to_block(skip);
    let next = g.b.ins().iadd_imm(lane, 1);
    g.b.ins().jump(lane_head, &[next.into()]);
    g.b.seal_all_blocks();
    Ok(g.stops)
}

impl Gen<'_, '_> {
    fn var(&mut self, r: Reg) -> Variable {
        if let Some(v) = self.vars.get(&r) {
            return *v;
        }
        let ty = self.var_type(r);
        let v = self.b.declare_var(ty);
        self.vars.insert(r, v);
        v
    }

    /// The type of a register's variable.
    fn var_type(&self, r: Reg) -> types::Type {
        match r {
            Reg::W32(_) if self.floats.contains(&r) => F32,
            Reg::W32(_) => I32,
            Reg::W64(_) => I64,
        }
    }

    /// A register's value in its variable's own type (`f32` for the
    /// registers in `floats`).
    fn val(&mut self, r: Reg) -> Value {
        let v = self.var(r);
        self.b.use_var(v)
    }

    /// A register's bits (`i32` or `i64`).
    fn get(&mut self, r: Reg) -> Value {
        let v = self.val(r);
        if self.floats.contains(&r) {
            return self.b.ins().bitcast(I32, MemFlags::new(), v);
        }
        v
    }

    /// Set a register from a value of its width (bits or an `f32`).
    fn set(&mut self, r: Reg, v: Value) {
        self.clean.remove(&r);
        let var = self.var(r);
        let want = self.var_type(r);
        let v = if self.b.func.dfg.value_type(v) == want { v } else { self.b.ins().bitcast(want, MemFlags::new(), v) };
        self.b.def_var(var, v);
    }

    /// An i64 narrowed to the register's width.
    fn narrow(&mut self, r: Reg, v: Value) -> Value {
        match r {
            Reg::W32(_) => self.b.ins().ireduce(I32, v),
            Reg::W64(_) => v,
        }
    }

    /// A register's value widened to i64 (zero-extended).
    fn wide(&mut self, r: Reg) -> Value {
        let v = self.get(r);
        match r {
            Reg::W32(_) => self.b.ins().uextend(I64, v),
            Reg::W64(_) => v,
        }
    }

    /// Set the registers `preset` from `ctx.initial` (which does not change
    /// during a call: unused loads go).
    fn load_presets(&mut self, preset: &[Reg]) {
        for (i, &r) in preset.iter().enumerate() {
            let v = self.b.ins().load(I64, FIXED, self.initial, i as i32 * 8);
            let v = self.narrow(r, v);
            self.set(r, v);
        }
    }

    fn index(&mut self, inst: &Inst) -> i64 {
        self.insts.push(inst as *const Inst);
        self.insts.len() as i64 - 1
    }

    /// Bring the instruction count up to date.
    fn flush(&mut self) {
        if !self.counting {
            // (Nothing reads the count: no arithmetic for Cranelift to
            // keep alive through the threads' loop.)
            self.pending = 0;
            return;
        }
        if self.pending != 0 {
            let c = self.b.use_var(self.cnt);
            let c = self.b.ins().iadd_imm(c, self.pending);
            self.b.def_var(self.cnt, c);
            self.pending = 0;
        }
    }

    /// Store the count and the thread's new state; on to the next thread.
    /// When the code counts and does not record loops' most trips, every
    /// thread takes the same path and its count is the interpreter's: it
    /// is checked here. Whether it is kept (for the thread's next call, or
    /// for the runner to add up) is `Plan::keep_counts`.
    fn exit(&mut self, state: u64) {
        let c = self.b.use_var(self.cnt);
        if self.counting && !self.bound_trips {
            let over = self.over_budget(c);
            let next = self.b.create_block();
            self.b.ins().brif(over, self.give_up, &[], next, &[]);
            self.b.switch_to_block(next);
        }
        if self.keep_counts {
            self.b.ins().store(MemFlags::trusted(), c, self.counts_addr, 0);
        }
        if self.stateful {
            let s = self.b.ins().iconst(I64, state as i64);
            self.b.ins().store(MemFlags::trusted(), s, self.state_addr, 0);
        }
        let next = self.b.ins().iadd_imm(self.lane, 1);
        self.b.ins().jump(self.lane_head, &[next.into()]);
    }

    /// Continue in a fresh block when `ok` is nonzero, else give up.
    /// Continue in block `blk` (a resume point: nothing known about
    /// pointers before it holds).
    fn to(&mut self, blk: Block) {
        self.b.switch_to_block(blk);
        self.prov.clear();
    }

    /// Continue in block `blk`, knowing `known` about pointers
    /// and that the registers in `clean` hold what their spill slots do.
    fn enter_with(&mut self, blk: Block, (known, clean): &Bases) {
        self.b.switch_to_block(blk);
        self.prov = known.clone();
        self.clean = clean.clone();
    }

    /// What is known about pointers on entering the parts of construct
    /// `inst` (its branches, cases or body) and after it (and at a loop's
    /// head): what was known before it, less the registers it may assign
    /// — nothing if it holds a barrier, since code after a barrier is also
    /// reached from the barrier's resume point.
    fn bases(&self, inst: &Inst) -> (Bases, Bases) {
        let kill: HashSet<Reg> = assigned(std::slice::from_ref(inst)).into_iter().collect();
        let mut barrier = false;
        gpu::ir::walk(std::slice::from_ref(inst), &mut |i| barrier |= matches!(i, Inst::Barrier { .. }));
        // A register the construct does not assign keeps what its spill
        // slot holds, if it did before: a stop inside stores the same
        // value, and one resuming there reloads it (were it not live
        // there, it is not live after the construct either).
        let mut clean = self.clean.clone();
        clean.retain(|r| !kill.contains(r));
        if barrier {
            return ((HashMap::new(), clean.clone()), (HashMap::new(), clean));
        }
        let before = self.prov.clone();
        let mut after = before.clone();
        after.retain(|r, _| !kill.contains(r));
        ((before, clean.clone()), (after, clean))
    }

    /// The allocation and offset register `r` points at, if known here.
    fn provenance(&mut self, r: Reg) -> Option<Known> {
        if let Some(p) = self.prov.get(&r) {
            return Some(*p);
        }
        let &(id, off) = self.statics.get(&r)?;
        let v = self.b.ins().iconst(I64, off);
        Some(Known { id, off: v, align: align_of(off) })
    }

    /// Whether the count `c` passed the budget. (Loaded where compared, so
    /// that the load goes into the comparison: the budget takes no
    /// register through the threads' loop.)
    fn over_budget(&mut self, c: Value) -> Value {
        let budget = self.b.ins().load(I64, MemFlags::trusted().with_readonly(), self.ctx, rt::OFF_BUDGET);
        self.b.ins().icmp(IntCC::UnsignedGreaterThan, c, budget)
    }

    fn guard(&mut self, ok: Value) {
        let next = self.b.create_block();
        self.b.ins().brif(ok, next, &[], self.give_up, &[]);
        self.b.switch_to_block(next);
    }

    fn jump_to(&mut self, target: Block) {
        self.flush();
        self.b.ins().jump(target, &[]);
        self.dead = true;
    }

    fn call(&mut self, sig: SigRef, f: usize, args: &[Value]) -> Option<Value> {
        let fp = self.b.ins().iconst(I64, f as i64);
        let c = self.b.ins().call_indirect(sig, fp, args);
        self.b.inst_results(c).first().copied()
    }

    pub fn block(&mut self, insts: &[Inst]) -> Result<(), Unsupported> {
        // Nesting (blocks, inlined calls) is bounded only by the kernel's size.
        stacker::maybe_grow(crate::WALK_RED_ZONE, crate::WALK_STACK, || {
            for inst in insts {
                if self.dead {
                    break;
                }
                self.within_size()?;
                self.pending += 1;
                self.inst(inst)?;
            }
            Ok(())
        })
    }

    /// Refuses a function grown past [`MOST_VALUES`] (variables live
    /// across many joins add a block parameter at each) or
    /// [`MOST_VAR_BLOCKS`] (Cranelift's SSA builder keeps a table per
    /// variable as long as the blocks that use it).
    pub fn within_size(&self) -> Result<(), Unsupported> {
        let dfg = &self.b.func.dfg;
        let vars = self.vars.len() + self.wide.vars.len();
        if dfg.num_values() > MOST_VALUES || dfg.num_blocks().saturating_mul(vars) > MOST_VAR_BLOCKS {
            return Err(too_large(dfg.num_values(), vars, dfg.num_blocks()));
        }
        Ok(())
    }

    fn inst(&mut self, inst: &Inst) -> Result<(), Unsupported> {
        match inst {
            Inst::If { cond, then, els, .. } => {
                let c = self.get(*cond);
                let (t, e, join) = (self.b.create_block(), self.b.create_block(), self.b.create_block());
                self.flush();
                self.b.ins().brif(c, t, &[], e, &[]);
                let (base, after) = self.bases(inst);
                for (blk, body) in [(t, then), (e, els)] {
                    self.enter_with(blk, &base);
                    self.dead = false;
                    self.block(body)?;
                    if !self.dead {
                        self.jump_to(join);
                    }
                }
                self.enter_with(join, &after);
                self.dead = false;
            }
            Inst::Loop { cond_block, cond, body, step, check_first, .. } => {
                let (head, trip, step_b, exit) =
                    (self.b.create_block(), self.b.create_block(), self.b.create_block(), self.b.create_block());
                let body_b = self.b.create_block();
                let (_, base) = self.bases(inst);
                // Every loop counts its trips (for the most any thread
                // makes, `ctx.loop_most`); one around a stop keeps the
                // count across it (`self.trips`).
                let mut stops = false;
                gpu::ir::walk(std::slice::from_ref(inst), &mut |i| stops |= crate::analysis::is_stop(i));
                let counter = self.b.declare_var(I64);
                let zero = self.b.ins().iconst(I64, 0);
                self.b.def_var(counter, zero);
                let id = self
                    .loops
                    .get(&(inst as *const Inst as usize))
                    .copied()
                    .ok_or_else(|| Unsupported("internal: a loop without a number".into()))?;
                let shape = crate::analysis::loop_shape(inst, self.fixed);
                if !stops {
                    if let Some(n) = self.unroll_trips(inst, shape) {
                        return self.unrolled(inst, n, counter, id, exit);
                    }
                }
                if stops && self.keep_trips {
                    self.trips.push(counter);
                }
                self.jump_to(if *check_first { head } else { trip });
                self.enter_with(head, &base);
                self.dead = false;
                self.targets.push(Target::Loop { brk: exit, cont: step_b, id, trips: counter });
                self.block(cond_block)?;
                if !self.dead {
                    match cond {
                        Some(c) => {
                            let c = self.get(*c);
                            self.flush();
                            loop_branch(self.b, c, trip, exit);
                            self.dead = true;
                        }
                        None => self.jump_to(trip),
                    }
                }
                // Each trip costs one instruction (as in the interpreter),
                // and is where the budget is checked (unless the loop makes
                // a bounded number of trips: `analysis::loop_shape`).
                self.enter_with(trip, &base);
                self.dead = false;
                self.count_trip(counter);
                self.flush();
                if shape.is_some() {
                    self.b.ins().jump(body_b, &[]);
                } else {
                    let c = self.b.use_var(self.cnt);
                    let over = self.over_budget(c);
                    self.b.ins().brif(over, self.give_up, &[], body_b, &[]);
                }
                self.enter_with(body_b, &base);
                self.block(body)?;
                if !self.dead {
                    self.jump_to(step_b);
                }
                self.enter_with(step_b, &base);
                self.dead = false;
                self.block(step)?;
                if !self.dead {
                    self.jump_to(head);
                }
                self.targets.pop();
                if stops && self.keep_trips {
                    self.trips.pop();
                }
                self.enter_with(exit, &base);
                self.dead = false;
                self.most_trips(id, counter);
            }
            Inst::Switch { value, ty, cases } => {
                let wm = gpu::exec::width_mask(*ty);
                let v = self.wide(*value);
                let v = self.b.ins().band_imm(v, wm as i64);
                let blocks: Vec<Block> = cases.iter().map(|_| self.b.create_block()).collect();
                let exit = self.b.create_block();
                let (_, base) = self.bases(inst);
                let default = cases.iter().position(|c| c.1).map_or(exit, |i| blocks[i]);
                self.flush();
                // (A jump table or a search tree: a chain of compares, one
                // block a case, made the SSA builder walk the chain back
                // for each case's variables, quadratic in the cases.)
                let mut table = Switch::new();
                let mut seen = std::collections::HashSet::new();
                for (i, (vals, _, _)) in cases.iter().enumerate() {
                    for &c in vals {
                        if seen.insert(c & wm) {
                            table.set_entry((c & wm) as u128, blocks[i]);
                        }
                    }
                }
                table.emit(self.b, v, default);
                self.targets.push(Target::Switch { brk: exit });
                for (i, (_, _, body)) in cases.iter().enumerate() {
                    self.enter_with(blocks[i], &base);
                    self.dead = false;
                    self.block(body)?;
                    if !self.dead {
                        self.jump_to(blocks.get(i + 1).copied().unwrap_or(exit));
                    }
                }
                self.targets.pop();
                self.enter_with(exit, &base);
                self.dead = false;
            }
            Inst::Scope { body } => {
                let end = self.b.create_block();
                let (_, base) = self.bases(inst);
                self.targets.push(Target::Scope { ret: end });
                self.block(body)?;
                if !self.dead {
                    self.jump_to(end);
                }
                self.targets.pop();
                self.enter_with(end, &base);
                self.dead = false;
            }
            Inst::Break | Inst::Continue => {
                let brk = matches!(inst, Inst::Break);
                let mut target = None;
                for t in self.targets.iter().rev() {
                    match t {
                        Target::Loop { brk: b, cont, .. } => {
                            target = Some(if brk { *b } else { *cont });
                            break;
                        }
                        Target::Switch { brk: b } if brk => {
                            target = Some(*b);
                            break;
                        }
                        Target::Switch { .. } => {}
                        Target::Scope { .. } => break,
                    }
                }
                let t = target.ok_or_else(|| Unsupported("a break or continue outside a loop".into()))?;
                self.jump_to(t);
            }
            Inst::Return { .. } => {
                let ret = self.targets.iter().rev().find_map(|t| match t {
                    Target::Scope { ret } => Some(*ret),
                    _ => None,
                });
                let t = ret.ok_or_else(|| Unsupported("a return outside a function".into()))?;
                // The loops it leaves have their most trips too.
                let left: Vec<(usize, Variable)> = self
                    .targets
                    .iter()
                    .rev()
                    .take_while(|t| !matches!(t, Target::Scope { .. }))
                    .filter_map(|t| match t {
                        Target::Loop { id, trips, .. } => Some((*id, *trips)),
                        _ => None,
                    })
                    .collect();
                for (id, trips) in left {
                    self.most_trips(id, trips);
                }
                self.jump_to(t);
            }
            Inst::Barrier { simdgroup: false, .. } => self.barrier(inst)?,
            Inst::Lane { .. } => self.lane_function(inst)?,
            Inst::Barrier { simdgroup: true, .. } => {
                // The SIMD-group's threads all get here before any goes on
                // (the runner has nothing to apply: `Threadgroup::lane_function`).
                let stop = Stop { flags: None, trips: self.trips.len(), lane: Some(self.index(inst) as usize) };
                self.stop(inst, stop, None)?
            }
            Inst::RecursionTooDeep { .. } | Inst::BadCall { .. } => {
                // The interpreter reports these: let it run the dispatch.
                self.b.ins().jump(self.give_up, &[]);
                self.pending = 0;
                self.dead = true;
            }
            _ => self.simple(inst)?,
        }
        Ok(())
    }

    fn barrier(&mut self, inst: &Inst) -> Result<(), Unsupported> {
        // (The runner checks that every thread stopped at this barrier, at
        // the same trips of the loops around it: `Stop`.)
        let mut stop = Stop::default();
        if let (true, Inst::Barrier { flags, .. }) = (self.checks, inst) {
            // The memory the round's barrier orders: what every thread's flags name.
            match self.fixed.get(flags) {
                Some(&crate::analysis::Remake::Const(bits)) => stop.flags = Some(bits as u32),
                _ => {
                    let fl = MemFlags::trusted();
                    let f = self.wide(*flags);
                    let all = self.b.ins().load(I64, fl, self.ctx, rt::OFF_ROUND_FLAGS);
                    let all = self.b.ins().band(all, f);
                    self.b.ins().store(fl, all, self.ctx, rt::OFF_ROUND_FLAGS);
                }
            }
            stop.trips = self.trips.len();
        }
        self.stop(inst, stop, None)
    }

    /// A SIMD-group function: the thread leaves its operands in
    /// `ctx.lane_args` and stops; the runner applies the function to the
    /// threads of each SIMD-group that stopped there together (the
    /// interpreter's code, `Threadgroup::lane_function`) and leaves each
    /// thread's result in its first slot.
    fn lane_function(&mut self, inst: &Inst) -> Result<(), Unsupported> {
        let Inst::Lane { dst, a, arg, fill, .. } = inst else { return Err(Unsupported("internal: not a SIMD-group function".into())) };
        let fl = MemFlags::trusted();
        let at = self.lane_args();
        for (k, r) in [*a, *arg, *fill].into_iter().enumerate() {
            let v = self.wide(r);
            self.b.ins().store(fl, v, at, k as i32 * 8);
        }
        let stop = Stop { flags: None, trips: self.trips.len(), lane: Some(self.index(inst) as usize) };
        self.stop(inst, stop, Some(*dst))?;
        // (In the resume block: the address is made again there.)
        let at = self.lane_args();
        let v = self.b.ins().load(I64, fl, at, 0);
        let v = self.narrow(*dst, v);
        self.set(*dst, v);
        Ok(())
    }

    /// Where this thread's three `ctx.lane_args` slots are.
    fn lane_args(&mut self) -> Value {
        let args = self.b.ins().load(I64, FIXED, self.ctx, rt::OFF_LANE_ARGS);
        let o = self.b.ins().imul_imm(self.lane, 24);
        self.b.ins().iadd(args, o)
    }

    /// The thread stops at `inst` (a barrier, or a SIMD-group function
    /// whose result goes to `result`), keeping what is live after it in its
    /// spill slots; code after it continues at a new resume point.
    fn stop(&mut self, inst: &Inst, stop: Stop, result: Option<Reg>) -> Result<(), Unsupported> {
        if self.resumes.len() >= MAX_BARRIERS {
            return Err(Unsupported("the kernel has too many barriers and SIMD-group functions to compile".into()));
        }
        let mut live = self.spills.at.get(&(inst as *const Inst as usize)).cloned().unwrap_or_default();
        live.retain(|r| Some(*r) != result);
        self.flush();
        let dirty: Vec<Reg> = live.iter().copied().filter(|r| !self.clean.contains(r)).collect();
        for r in dirty {
            let v = self.wide(r);
            let slot = self.spills.slot[&r] as i32;
            self.b.ins().store(MemFlags::trusted(), v, self.spill_base, slot * 8);
        }
        for (j, &v) in self.trips.clone().iter().enumerate() {
            let t = self.b.use_var(v);
            self.b.ins().store(MemFlags::trusted(), t, self.spill_base, (self.trip_slot + j) as i32 * 8);
        }
        let barrier = stop.lane.is_none();
        if barrier && self.checks && stop.trips > 0 {
            // Every thread must be at the trips of the first (which ran
            // first this round; were it elsewhere, the runner gives up on
            // the mix of stops anyway): in lockstep the others would arrive
            // alone.
            let first = self.b.ins().load(I64, FIXED, self.ctx, rt::OFF_SPILL);
            let mut differ = self.b.ins().iconst(I64, 0);
            for (j, &v) in self.trips.clone().iter().take(stop.trips).enumerate() {
                let t = self.b.use_var(v);
                let f = self.b.ins().load(I64, MemFlags::trusted(), first, (self.trip_slot + j) as i32 * 8);
                let x = self.b.ins().bxor(t, f);
                differ = self.b.ins().bor(differ, x);
            }
            let same = self.b.ins().icmp_imm(IntCC::Equal, differ, 0);
            self.guard(same);
        }
        let k = self.resumes.len() as u64;
        self.stops.push(stop);
        self.exit(BARRIER + k);
        let resume = self.b.create_block();
        self.resumes.push(resume);
        self.to(resume);
        if barrier && self.lane_stops {
            // While SIMD-group functions are being done, threads waiting
            // at a barrier stay there.
            let hold = self.b.ins().load(I64, FIXED, self.ctx, rt::OFF_HOLD);
            let go = self.b.create_block();
            self.b.ins().brif(hold, self.skip, &[], go, &[]);
            self.b.switch_to_block(go);
        }
        for &r in &live {
            let slot = self.spills.slot[&r] as i32;
            let v = self.b.ins().load(I64, MemFlags::trusted(), self.spill_base, slot * 8);
            let v = self.narrow(r, v);
            self.set(r, v);
        }
        self.clean = live.iter().copied().collect();
        for (j, &v) in self.trips.clone().iter().enumerate() {
            let t = self.b.ins().load(I64, MemFlags::trusted(), self.spill_base, (self.trip_slot + j) as i32 * 8);
            self.b.def_var(v, t);
        }
        let remade = self.spills.remade.get(&(inst as *const Inst as usize)).cloned().unwrap_or_default();
        for (r, how) in remade {
            let v = match how {
                crate::analysis::Remake::Const(bits) => self.b.ins().iconst(I64, bits as i64),
                crate::analysis::Remake::Preset(i) => self.b.ins().load(I64, FIXED, self.initial, i as i32 * 8),
            };
            let v = self.narrow(r, v);
            self.set(r, v);
        }
        Ok(())
    }

    // ---- instructions without control flow -----------------------------

    fn simple(&mut self, inst: &Inst) -> Result<(), Unsupported> {
        for r in gpu::ir::reg_uses(inst).0 {
            self.prov.remove(&r);
        }
        if let (true, Inst::Binary { op: BinaryOp::Div | BinaryOp::Rem, ty, b, .. }) = (self.checks, inst) {
            if !ty.is_float() {
                // The interpreter reports an integer division by zero.
                let d = self.wide(*b);
                let d = self.b.ins().band_imm(d, gpu::exec::width_mask(*ty) as i64);
                let nonzero = self.b.ins().icmp_imm(IntCC::NotEqual, d, 0);
                self.guard(nonzero);
            }
        }
        if self.native(inst)? {
            return Ok(());
        }
        // By the interpreter's code, one thread at a time.
        match inst {
            _ if crate::analysis::register_only(inst) => self.eval(inst),
            Inst::Load { .. } | Inst::Store { .. } => {
                Err(Unsupported(format!("a memory access the compiled tier does not handle: {inst:?}")))
            }
            _ => Err(Unsupported(format!("an instruction the compiled tier does not handle: {inst:?}"))),
        }
    }

    fn eval(&mut self, inst: &Inst) -> Result<(), Unsupported> {
        let (defs, uses, _) = gpu::ir::reg_uses(inst);
        let bytes = ((uses.len() + defs.len()).max(1) * 8) as u32;
        let ss = self.b.create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, bytes, 3));
        for (i, &r) in uses.iter().enumerate() {
            let v = self.wide(r);
            self.b.ins().stack_store(v, ss, i as i32 * 8);
        }
        let ins = self.b.ins().stack_addr(I64, ss, 0);
        let outs = self.b.ins().stack_addr(I64, ss, uses.len() as i32 * 8);
        let idx = self.index(inst);
        let i = self.b.ins().iconst(I64, idx);
        self.call(self.sigs.eval, rt::h_eval as *const () as usize, &[self.ctx, i, ins, outs]);
        for (k, &r) in defs.iter().enumerate() {
            let v = self.b.ins().stack_load(I64, ss, (uses.len() + k) as i32 * 8);
            let v = self.narrow(r, v);
            self.set(r, v);
        }
        Ok(())
    }

    /// `ctx.loop_most[id] = max(it, trips)`: the most trips of loop `id`
    /// in one entry, over the threadgroup's threads.
    /// The trips of loop `inst` (of shape `shape`) if it is to be
    /// unrolled: a short counted `for` loop (`analysis::Bounded::CountsUp`,
    /// no stop inside) whose counter is a constant where it starts. Its
    /// counter is then a constant in every trip, as are the tests, which
    /// Cranelift folds.
    fn unroll_trips(&mut self, inst: &Inst, shape: Option<crate::analysis::Bounded>) -> Option<u64> {
        let Some(shape @ crate::analysis::Bounded::CountsUp { k, .. }) = shape else { return None };
        let v = self.get(k);
        self.unroll_trips_from(inst, shape, self.constant(v)?)
    }

    /// [`Self::unroll_trips`] for a loop of shape `shape` whose counter
    /// starts at `start`.
    fn unroll_trips_from(&self, inst: &Inst, shape: crate::analysis::Bounded, start: i64) -> Option<u64> {
        let Inst::Loop { check_first: true, cond_block, body, step, .. } = inst else { return None };
        let crate::analysis::Bounded::CountsUp { limit, inclusive, .. } = shape else { return None };
        let start = start as u32 as u64;
        let n = (limit + inclusive as u64).saturating_sub(start);
        let mut size = 0u64;
        for b in [cond_block, body, step] {
            gpu::ir::walk(b, &mut |_| size += 1);
        }
        (n <= UNROLL_TRIPS && n * size <= UNROLL_INSTS).then_some(n)
    }

    /// The constant `v` is, if it is one (narrowed or not: a register
    /// remade after a stop is made wide, then narrowed).
    fn constant(&self, v: Value) -> Option<i64> {
        use cranelift_codegen::ir::{InstructionData, Opcode};
        let dfg = &self.b.func.dfg;
        match dfg.insts[dfg.value_def(v).inst()?] {
            InstructionData::UnaryImm { opcode: Opcode::Iconst, imm } => Some(imm.bits()),
            InstructionData::Unary { opcode: Opcode::Ireduce, arg } => self.constant(arg),
            _ => None,
        }
    }

    /// Loop `inst` as `n` copies of its trip, one after another, counting
    /// the instructions and trips the loop's code would (its test too, the
    /// last, failing one included).
    fn unrolled(&mut self, inst: &Inst, n: u64, counter: Variable, id: usize, exit: Block) -> Result<(), Unsupported> {
        let Inst::Loop { cond_block, body, step, .. } = inst else { return Err(Unsupported("internal: not a loop".into())) };
        let (_, base) = self.bases(inst);
        let next = self.b.create_block();
        self.jump_to(next);
        self.enter_with(next, &base);
        self.dead = false;
        for _ in 0..n {
            // (The test holds: the counter is below the limit.)
            self.block(cond_block)?;
            self.count_trip(counter);
            let step_b = self.b.create_block();
            self.targets.push(Target::Loop { brk: exit, cont: step_b, id, trips: counter });
            self.block(body)?;
            if !self.dead {
                self.jump_to(step_b);
            }
            self.targets.pop();
            self.enter_with(step_b, &base);
            self.dead = false;
            self.block(step)?;
        }
        self.block(cond_block)?;
        self.jump_to(exit);
        self.enter_with(exit, &base);
        self.dead = false;
        self.most_trips(id, counter);
        Ok(())
    }

    /// A loop's trip: one more on its counter `trips`, and one instruction
    /// (as in the interpreter).
    fn count_trip(&mut self, trips: Variable) {
        // (A loop's trips are read by the checks, the SIMD-group functions
        // and the most trips; without them the counter would only live on
        // through the threads' loop.)
        if self.checks || self.keep_trips || self.bound_trips {
            let t = self.b.use_var(trips);
            let t = self.b.ins().iadd_imm(t, 1);
            self.b.def_var(trips, t);
        }
        self.pending += 1;
    }

    fn most_trips(&mut self, id: usize, trips: Variable) {
        if !self.bound_trips {
            return; // (its counter is then dead code, unless kept across stops)
        }
        let fl = MemFlags::trusted();
        let most = self.b.ins().load(I64, FIXED, self.ctx, rt::OFF_LOOP_MOST);
        let t = self.b.use_var(trips);
        let m = self.b.ins().load(I64, fl, most, id as i32 * 8);
        let m = self.b.ins().umax(m, t);
        self.b.ins().store(fl, m, most, id as i32 * 8);
    }

    /// A 32-bit integer register value wrapped to integer type `ty`'s
    /// width and extended back (sign or zero, as the type).
    fn wrap_to(&mut self, ty: Scalar, x: Value) -> Value {
        let (narrow, signed) = match ty {
            Scalar::Char => (types::I8, true),
            Scalar::UChar => (types::I8, false),
            Scalar::Short => (types::I16, true),
            Scalar::UShort => (types::I16, false),
            _ => return x,
        };
        let n = self.b.ins().ireduce(narrow, x);
        if signed {
            self.b.ins().sextend(I32, n)
        } else {
            self.b.ins().uextend(I32, n)
        }
    }

    /// A 32-bit register as an `f32`.
    fn fbits(&mut self, r: Reg) -> Value {
        let v = self.val(r);
        if self.floats.contains(&r) {
            return v;
        }
        self.b.ins().bitcast(F32, MemFlags::new(), v)
    }

    fn bool32(&mut self, c: Value) -> Value {
        self.b.ins().uextend(I32, c)
    }

    /// Emit `inst` natively if it has a native form; false if not.
    fn native(&mut self, inst: &Inst) -> Result<bool, Unsupported> {
        use Scalar::*;
        let w32 = |r: &Reg| matches!(r, Reg::W32(_));
        let w64 = |r: &Reg| matches!(r, Reg::W64(_));
        match inst {
            Inst::Nop => {}
            // With checks off the end of a function without `return`
            // reports nothing; with them on the interpreter reports it.
            Inst::NoReturn { .. } if !self.checks => {}
            Inst::NoReturn { .. } => {
                let no = self.b.ins().iconst(I8, 0);
                self.guard(no);
            }
            Inst::Const { dst, bits } => {
                let v = match dst {
                    Reg::W32(_) => self.b.ins().iconst(I32, *bits as u32 as i64),
                    Reg::W64(_) => self.b.ins().iconst(I64, *bits as i64),
                };
                self.set(*dst, v);
            }
            Inst::Copy { dst, src } | Inst::Assign { dst, src } if w32(dst) == w32(src) => {
                let v = self.val(*src);
                self.set(*dst, v);
                if let Some(p) = self.prov.get(src).copied() {
                    self.prov.insert(*dst, p);
                }
            }
            Inst::Unary { op, ty, dst, a } if w32(dst) && w32(a) => {
                let x = self.get(*a);
                let v = match (op, ty) {
                    (UnOp::Neg, Float | Half | BFloat) => self.b.ins().bxor_imm(x, 0x8000_0000u32 as i32 as i64),
                    (UnOp::Neg, Int | UInt) => self.b.ins().ineg(x),
                    (UnOp::Not, _) => {
                        let c = self.b.ins().icmp_imm(IntCC::Equal, x, 0);
                        self.bool32(c)
                    }
                    (UnOp::BitNot, Int | UInt) => self.b.ins().bnot(x),
                    _ => return Ok(false),
                };
                self.set(*dst, v);
            }
            Inst::Binary { op, ty: Float, dst, a, b, .. } if w32(dst) && w32(a) && w32(b) => {
                let (x, y) = (self.fbits(*a), self.fbits(*b));
                let Some(r) = float_arith(self.b, *op, x, y) else { return Ok(false) };
                self.set(*dst, r);
            }
            Inst::Binary { op, ty: ty @ (Int | UInt | Long | ULong), dst, a, b, .. }
                if (matches!(ty, Int | UInt) && w32(dst) && w32(a) && w32(b))
                    || (matches!(ty, Long | ULong) && w64(dst) && w64(a) && w64(b)) =>
            {
                let (x, y) = (self.get(*a), self.get(*b));
                let signed = matches!(ty, Int | Long);
                let v = match op {
                    BinaryOp::Shl => self.b.ins().ishl(x, y),
                    BinaryOp::Shr if signed => self.b.ins().sshr(x, y),
                    BinaryOp::Shr => self.b.ins().ushr(x, y),
                    BinaryOp::Div | BinaryOp::Rem => self.int_div(*op == BinaryOp::Div, signed, x, y),
                    _ => match int_arith(self.b, *op, x, y) {
                        Some(v) => v,
                        None => return Ok(false),
                    },
                };
                self.set(*dst, v);
            }
            Inst::Binary { op, ty: Bool, dst, a, b, .. } if w32(dst) && w32(a) && w32(b) => {
                let (x, y) = (self.get(*a), self.get(*b));
                let v = match op {
                    BinaryOp::BitAnd | BinaryOp::LogAnd => self.b.ins().band(x, y),
                    BinaryOp::BitOr | BinaryOp::LogOr => self.b.ins().bor(x, y),
                    BinaryOp::BitXor => self.b.ins().bxor(x, y),
                    _ => return Ok(false),
                };
                let v = self.b.ins().band_imm(v, 1);
                self.set(*dst, v);
            }
            Inst::Compare { op, ty, dst, a, b } if w32(dst) && w32(a) && w32(b) && !matches!(ty, Long | ULong) => {
                let c = if ty.is_float() {
                    let Some(cc) = float_cc(*op) else { return Ok(false) };
                    let (x, y) = (self.fbits(*a), self.fbits(*b));
                    self.b.ins().fcmp(cc, x, y)
                } else {
                    let Some(cc) = int_cc(*op, ty.is_signed()) else { return Ok(false) };
                    let (x, y) = (self.get(*a), self.get(*b));
                    self.b.ins().icmp(cc, x, y)
                };
                let v = self.bool32(c);
                self.set(*dst, v);
            }
            Inst::Compare { op, ty: ty @ (Long | ULong), dst, a, b } if w32(dst) && w64(a) && w64(b) => {
                let Some(cc) = int_cc(*op, *ty == Long) else { return Ok(false) };
                let (x, y) = (self.get(*a), self.get(*b));
                let c = self.b.ins().icmp(cc, x, y);
                let v = self.bool32(c);
                self.set(*dst, v);
            }
            Inst::Convert { from, to, dst, src } if w32(dst) && w32(src) => {
                let x = self.get(*src);
                let v = match (from, to) {
                    _ if from == to => x,
                    (Int, UInt) | (UInt, Int) => x,
                    (Int, Float) => {
                        let f = self.b.ins().fcvt_from_sint(F32, x);
                        self.set(*dst, f);
                        return Ok(true);
                    }
                    (UInt, Float) => {
                        let f = self.b.ins().fcvt_from_uint(F32, x);
                        self.set(*dst, f);
                        return Ok(true);
                    }
                    (Float, Int) => {
                        let f = self.fbits(*src);
                        self.b.ins().fcvt_to_sint_sat(I32, f)
                    }
                    (Float, UInt) => {
                        let f = self.fbits(*src);
                        self.b.ins().fcvt_to_uint_sat(I32, f)
                    }
                    // Integers wrap: to the source's width, then the target's
                    // (as `gpu_math::scalar::convert` on normalized values).
                    (Char | UChar | Short | UShort | Int | UInt, Char | UChar | Short | UShort | Int | UInt) => {
                        let x = self.wrap_to(*from, x);
                        self.wrap_to(*to, x)
                    }
                    (Bool, Char | UChar | Short | UShort | Int | UInt) => self.b.ins().band_imm(x, 1),
                    // Half and bfloat registers hold their value as an f32.
                    (Half | BFloat, Float) => x,
                    // Exact in an f32.
                    (Char | UChar | Short | UShort, Float) => {
                        let n = self.wrap_to(*from, x);
                        let f = if matches!(from, Char | Short) {
                            self.b.ins().fcvt_from_sint(F32, n)
                        } else {
                            self.b.ins().fcvt_from_uint(F32, n)
                        };
                        self.set(*dst, f);
                        return Ok(true);
                    }
                    _ => return Ok(false),
                };
                self.set(*dst, v);
            }
            Inst::Convert { from: from @ (Int | UInt), to: Long | ULong, dst, src } if w64(dst) && w32(src) => {
                let x = self.get(*src);
                let v = if *from == Int { self.b.ins().sextend(I64, x) } else { self.b.ins().uextend(I64, x) };
                self.set(*dst, v);
            }
            Inst::Convert { from: Long | ULong, to: Int | UInt, dst, src } if w32(dst) && w64(src) => {
                let x = self.get(*src);
                let v = self.b.ins().ireduce(I32, x);
                self.set(*dst, v);
            }
            Inst::Select { dst, cond, a, b } if w32(cond) && w32(dst) == w32(a) && w32(dst) == w32(b) => {
                let (c, x, y) = (self.get(*cond), self.get(*a), self.get(*b));
                let v = self.b.ins().select(c, x, y);
                self.set(*dst, v);
            }
            Inst::PtrIndex { dst, ptr, index, index_ty, scale } if w64(dst) && w64(ptr) => {
                let i = self.get(*index);
                let i = match index {
                    Reg::W32(_) if index_ty.is_signed() => self.b.ins().sextend(I64, i),
                    Reg::W32(_) => self.b.ins().uextend(I64, i),
                    Reg::W64(_) => i,
                };
                let delta = self.b.ins().imul_imm(i, *scale);
                self.offset_by(*dst, *ptr, delta, *scale);
            }
            Inst::PtrAdd { dst, ptr, bytes } if w64(dst) && w64(ptr) => {
                let d = self.b.ins().iconst(I64, *bytes);
                self.offset_by(*dst, *ptr, d, *bytes);
            }
            Inst::Attr { attr, component, dst } if w32(dst) => {
                let v = self.attr(inst, *attr, *component);
                self.set(*dst, v);
            }
            Inst::Load { dst, ty, ptr, .. } if w64(ptr) => {
                let size = ty.size();
                let ok = match dst {
                    Reg::W32(_) => matches!(ty, Bool | Char | UChar | Short | UShort | Int | UInt | Float | Half | BFloat),
                    Reg::W64(_) => matches!(ty, Long | ULong),
                };
                if !ok {
                    return Ok(false);
                }
                if let Some(&v) = self.statics.get(ptr).and_then(|&(id, off)| self.invariant.get(&(id, off, *ty))) {
                    self.set(*dst, v);
                    return Ok(true);
                }
                self.reading_only = self.read_only.contains(&(inst as *const Inst as usize));
                let a = self.address(*ptr, size as i64, false, false);
                self.reading_only = false;
                let fl = MemFlags::trusted();
                let v = match ty {
                    Bool => {
                        let x = self.b.ins().uload8(I32, fl, a, 0);
                        let c = self.b.ins().icmp_imm(IntCC::NotEqual, x, 0);
                        self.bool32(c)
                    }
                    Char => self.b.ins().sload8(I32, fl, a, 0),
                    UChar => self.b.ins().uload8(I32, fl, a, 0),
                    Short => self.b.ins().sload16(I32, fl, a, 0),
                    UShort => self.b.ins().uload16(I32, fl, a, 0),
                    Half => {
                        let x = self.b.ins().uload16(I64, fl, a, 0);
                        let r = self.call(self.sigs.conv, rt::h_half_to_f32 as *const () as usize, &[x]).expect("result");
                        self.b.ins().ireduce(I32, r)
                    }
                    BFloat => {
                        let x = self.b.ins().uload16(I32, fl, a, 0);
                        self.b.ins().ishl_imm(x, 16)
                    }
                    Long | ULong => self.b.ins().load(I64, fl, a, 0),
                    _ if self.floats.contains(dst) => self.b.ins().load(F32, fl, a, 0),
                    _ => self.b.ins().load(I32, fl, a, 0),
                };
                self.set(*dst, v);
            }
            Inst::Store { src, ty, ptr, .. } if w64(ptr) => {
                let ok = match src {
                    Reg::W32(_) => matches!(ty, Bool | Char | UChar | Short | UShort | Int | UInt | Float | Half | BFloat),
                    Reg::W64(_) => matches!(ty, Long | ULong),
                };
                if !ok {
                    return Ok(false);
                }
                let x = match ty {
                    // Four bytes go to memory as they are (an f32 from a vector register).
                    Float | Int | UInt => self.val(*src),
                    Half | BFloat => {
                        let x = self.get(*src);
                        let w = self.b.ins().uextend(I64, x);
                        let f = if *ty == Half { rt::h_f32_to_half as *const () as usize } else { rt::h_f32_to_bf16 as *const () as usize };
                        let r = self.call(self.sigs.conv, f, &[w]).expect("result");
                        self.b.ins().ireduce(I32, r)
                    }
                    _ => self.get(*src),
                };
                let size = ty.size() as i64;
                let a = self.address(*ptr, size, true, false);
                let fl = MemFlags::trusted();
                match size {
                    1 => {
                        self.b.ins().istore8(fl, x, a, 0);
                    }
                    2 => {
                        self.b.ins().istore16(fl, x, a, 0);
                    }
                    _ => {
                        self.b.ins().store(fl, x, a, 0);
                    }
                }
            }
            Inst::Atomic { op, ty: ty @ (Int | UInt), dst, ptr, a, .. }
                if w32(dst) && w64(ptr) && w32(a) && !matches!(op, AtomicOp::CompareExchange) =>
            {
                let addr = self.address(*ptr, 4, *op != AtomicOp::Load, true);
                let fl = MemFlags::trusted();
                let old = self.b.ins().load(I32, fl, addr, 0);
                let x = self.get(*a);
                let s = *ty == Int;
                let new = match op {
                    AtomicOp::Load => None,
                    AtomicOp::Store | AtomicOp::Exchange => Some(x),
                    AtomicOp::Add => Some(self.b.ins().iadd(old, x)),
                    AtomicOp::Sub => Some(self.b.ins().isub(old, x)),
                    AtomicOp::And => Some(self.b.ins().band(old, x)),
                    AtomicOp::Or => Some(self.b.ins().bor(old, x)),
                    AtomicOp::Xor => Some(self.b.ins().bxor(old, x)),
                    AtomicOp::Min if s => Some(self.b.ins().smin(old, x)),
                    AtomicOp::Max if s => Some(self.b.ins().smax(old, x)),
                    AtomicOp::Min => Some(self.b.ins().umin(old, x)),
                    AtomicOp::Max => Some(self.b.ins().umax(old, x)),
                    AtomicOp::CompareExchange => None,
                };
                if let Some(n) = new {
                    self.b.ins().store(fl, n, addr, 0);
                }
                let result = if *op == AtomicOp::Store { self.b.ins().iconst(I32, 0) } else { old };
                self.set(*dst, result);
            }
            Inst::Atomic { dst, ptr, a, b, .. } if w64(ptr) => {
                let idx = self.index(inst);
                let i = self.b.ins().iconst(I64, idx);
                let p = self.get(*ptr);
                let (x, y) = (self.wide(*a), self.wide(*b));
                let ss = self.b.create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, 8, 3));
                let out = self.b.ins().stack_addr(I64, ss, 0);
                let ok = self
                    .call(self.sigs.atomic, rt::h_atomic as *const () as usize, &[self.ctx, i, self.lane, p, x, y, out])
                    .expect("result");
                self.guard(ok);
                let v = self.b.ins().stack_load(I64, ss, 0);
                let v = self.narrow(*dst, v);
                self.set(*dst, v);
            }
            // `min` and `max` of 32-bit integers.
            Inst::Math { ty: ty @ (Int | UInt), dst: dst @ Reg::W32(_), args, func: func @ (BuiltinId::Min | BuiltinId::Max), .. }
                if args.len() == 2 && args.iter().all(w32) =>
            {
                let (a, b) = (self.get(args[0]), self.get(args[1]));
                let v = min_max(self.b, *func, *ty == Int, a, b);
                self.set(*dst, v);
            }
            // The math library's `f32` functions: the interpreter's own, called
            // through C-ABI trampolines (`Scalar::Float` needs no rounding).
            Inst::Math { f, ty: Scalar::Float, dst: dst @ Reg::W32(_), args, .. } => {
                let Some(MathCall { tramp, g, n, sig }) = self.math_call(*f) else { return Ok(false) };
                if args.len() != n || args.iter().any(|a| !w32(a)) {
                    return Ok(false);
                }
                let mut vals = vec![self.b.ins().iconst(I64, g as i64)];
                for a in args {
                    vals.push(self.fbits(*a));
                }
                let r = self.call(sig, tramp, &vals).expect("result");
                self.set(*dst, r);
            }
            // A small copy (a struct, a vector) inline, all loads before the
            // stores (the interpreter copies through a buffer too).
            Inst::MemCopy { dst, src, bytes, align, .. } if w64(dst) && w64(src) && (1..=128).contains(bytes) && !self.checks => {
                let (bytes, align) = (*bytes as i64, (*align as i64).max(1));
                let from = self.address_aligned(*src, bytes, align, false, false);
                let to = self.address_aligned(*dst, bytes, align, true, false);
                let fl = MemFlags::new().with_notrap();
                let mut parts = Vec::new();
                let mut at = 0i64;
                while at < bytes {
                    let ty = match bytes - at {
                        n if n >= 8 => I64,
                        n if n >= 4 => I32,
                        n if n >= 2 => types::I16,
                        _ => I8,
                    };
                    parts.push((at, self.b.ins().load(ty, fl, from, at as i32)));
                    at += ty.bytes() as i64;
                }
                for (at, v) in parts {
                    self.b.ins().store(fl, v, to, at as i32);
                }
            }
            Inst::MemCopy { dst, src, .. } if w64(dst) && w64(src) => {
                let idx = self.index(inst);
                let i = self.b.ins().iconst(I64, idx);
                let (d, s) = (self.get(*dst), self.get(*src));
                let ok =
                    self.call(self.sigs.memcopy, rt::h_memcopy as *const () as usize, &[self.ctx, i, self.lane, d, s]).expect("result");
                self.guard(ok);
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// `x / y` (`div`) or `x % y` of two 32- or 64-bit integers: `x / 0`
    /// and `x % 0` are 0, and `INT_MIN / -1` wraps (divided by 1 instead).
    fn int_div(&mut self, div: bool, signed: bool, x: Value, y: Value) -> Value {
        let int = self.b.func.dfg.value_type(x);
        let min = if int == I32 { i32::MIN as i64 } else { i64::MIN };
        let zero = self.b.ins().icmp_imm(IntCC::Equal, y, 0);
        let one = self.b.ins().iconst(int, 1);
        let mut unsafe_div = zero;
        if signed {
            let min = self.b.ins().icmp_imm(IntCC::Equal, x, min);
            let m1 = self.b.ins().icmp_imm(IntCC::Equal, y, -1);
            let ovf = self.b.ins().band(min, m1);
            unsafe_div = self.b.ins().bor(zero, ovf);
        }
        let d = self.b.ins().select(unsafe_div, one, y);
        let r = match (div, signed) {
            (true, true) => self.b.ins().sdiv(x, d),
            (true, false) => self.b.ins().udiv(x, d),
            (false, true) => self.b.ins().srem(x, d),
            (false, false) => self.b.ins().urem(x, d),
        };
        let z = self.b.ins().iconst(int, 0);
        self.b.ins().select(zero, z, r)
    }

    /// How the code calls `f32` math function `f`, if it is one.
    fn math_call(&self, f: gpu::ir::MathFn) -> Option<MathCall> {
        use gpu::ir::MathFn;
        let (tramp, g, n, pred) = match f {
            MathFn::F1(g) => (rt::h_math_f1 as *const () as usize, g as usize, 1, false),
            MathFn::F2(g) => (rt::h_math_f2 as *const () as usize, g as usize, 2, false),
            MathFn::F3(g) => (rt::h_math_f3 as *const () as usize, g as usize, 3, false),
            MathFn::FPred(g) => (rt::h_math_pred as *const () as usize, g as usize, 1, true),
            MathFn::FRel(g) => (rt::h_math_rel as *const () as usize, g as usize, 2, true),
            _ => return None,
        };
        Some(MathCall { tramp, g, n, sig: self.sigs.math[n - 1 + 3 * pred as usize] })
    }

    /// `dst = ptr + delta` bytes (`delta` a multiple of `step`), keeping
    /// what is known of where it points.
    fn offset_by(&mut self, dst: Reg, ptr: Reg, delta: Value, step: i64) {
        let known = self.provenance(ptr);
        let p = self.get(ptr);
        let v = self.ptr_add(p, delta);
        self.set(dst, v);
        if let Some(k) = known {
            // The offset is kept unwrapped: where the interpreter's 40-bit
            // offset differs from it, it lies outside the allocation, and
            // the bounds check gives up either way.
            let off = self.b.ins().iadd(k.off, delta);
            self.prov.insert(dst, Known { id: k.id, off, align: k.align.min(align_of(step)) });
        }
    }

    /// `p + delta` bytes, in the same allocation (`memory::ptr_add`).
    fn ptr_add(&mut self, p: Value, delta: Value) -> Value {
        const MASK: i64 = (1 << 40) - 1;
        let hi = self.b.ins().band_imm(p, !MASK);
        let s = self.b.ins().iadd(p, delta);
        let lo = self.b.ins().band_imm(s, MASK);
        self.b.ins().bor(hi, lo)
    }

    fn attr(&mut self, inst: &Inst, attr: ThreadAttr, c: u8) -> Value {
        let local = |g: &mut Self| -> Value {
            let locals = g.b.ins().load(I64, FIXED, g.ctx, rt::OFF_LOCAL);
            let o = g.b.ins().imul_imm(g.lane, 12);
            let a = g.b.ins().iadd(locals, o);
            g.b.ins().load(I32, FIXED, a, 4 * c as i32)
        };
        match attr {
            ThreadAttr::ThreadPositionInThreadgroup if c < 3 => local(self),
            ThreadAttr::ThreadPositionInGrid if c < 3 => {
                let loc = local(self);
                let pos = self.b.ins().load(I32, FIXED, self.ctx, rt::OFF_TG_POS + 4 * c as i32);
                let req = self.b.ins().load(I32, FIXED, self.ctx, rt::OFF_REQUESTED + 4 * c as i32);
                let base = self.b.ins().imul(pos, req);
                self.b.ins().iadd(base, loc)
            }
            ThreadAttr::ThreadIndexInThreadgroup => self.b.ins().ireduce(I32, self.lane),
            _ if self.uniform_attrs.contains(&(attr, c)) => {
                let i = self.uniform_attrs.iter().position(|&u| u == (attr, c)).unwrap_or(0);
                let a = self.b.ins().load(I64, FIXED, self.ctx, rt::OFF_UNIFORM_ATTRS);
                self.b.ins().load(I32, FIXED, a, 4 * i as i32)
            }
            _ => {
                let idx = self.index(inst);
                let i = self.b.ins().iconst(I64, idx);
                let r = self.call(self.sigs.attr, rt::h_attr as *const () as usize, &[self.ctx, i, self.lane]).expect("result");
                self.b.ins().ireduce(I32, r)
            }
        }
    }

    /// The host address of a `size`-byte access through pointer `p`, or
    /// give up where the interpreter would fault (null, out of bounds,
    /// misaligned, a write to read-only memory). With checks on, the
    /// access (an atomic one when `atomic`) is told to the shadow.
    fn address(&mut self, ptr: Reg, size: i64, write: bool, atomic: bool) -> Value {
        let align = if size > 0 && (size as u64).is_power_of_two() { size.min(16) } else { 1 };
        self.address_aligned(ptr, size, align, write, atomic)
    }

    /// [`Self::address`] for an access that must be aligned to `align`.
    fn address_aligned(&mut self, ptr: Reg, size: i64, align: i64, write: bool, atomic: bool) -> Value {
        if let Some(known) = self.provenance(ptr) {
            return self.address_known(known, size, align, write, atomic);
        }
        let p = self.get(ptr);
        let id = self.b.ins().ushr_imm(p, 40);
        let lo = self.b.ins().band_imm(id, 127);
        let c = self.b.ins().ushr_imm(id, 10);
        let c = self.b.ins().band_imm(c, 1);
        let c = self.b.ins().ishl_imm(c, 7);
        let t = self.b.ins().ushr_imm(id, 20);
        let t = self.b.ins().band_imm(t, 3);
        let t = self.b.ins().ishl_imm(t, 8);
        let slot = self.b.ins().bor(lo, c);
        let slot = self.b.ins().bor(slot, t);
        // Private variables have entries of their own (`runtime::slot_of`).
        let kind = self.b.ins().ushr_imm(id, 20);
        let kind = self.b.ins().band_imm(kind, 3);
        let private = self.b.ins().icmp_imm(IntCC::Equal, kind, 2);
        let p_slot = self.b.ins().band_imm(id, rt::PRIVATE_SLOTS as i64 - 1);
        let p_slot = self.b.ins().iadd_imm(p_slot, rt::PRIVATE_SLOT_BASE as i64);
        let slot = self.b.ins().select(private, p_slot, slot);
        let off = self.b.ins().imul_imm(slot, rt::ENTRY_BYTES);
        let e = self.b.ins().iadd(self.table, off);
        let e = At { base: e, off: 0, known: false };
        let eid = e.load(self.b, FIXED, rt::E_ID);
        let len = e.load(self.b, FIXED, rt::E_LEN);
        // The 40-bit signed offset; negative ones are huge unsigned.
        let sh = self.b.ins().ishl_imm(p, 24);
        let off = self.b.ins().sshr_imm(sh, 24);
        let same = self.b.ins().icmp(IntCC::Equal, eid, id);
        let below = self.b.ins().icmp(IntCC::UnsignedLessThan, off, len);
        let end = self.b.ins().iadd_imm(off, size);
        let fits = self.b.ins().icmp(IntCC::UnsignedLessThanOrEqual, end, len);
        let mut ok = self.b.ins().band(same, below);
        ok = self.b.ins().band(ok, fits);
        if align > 1 {
            let m = self.b.ins().band_imm(off, align - 1);
            let aligned = self.b.ins().icmp_imm(IntCC::Equal, m, 0);
            ok = self.b.ins().band(ok, aligned);
        }
        self.guard(ok);
        self.shadow(id, off, size, write, atomic);
        self.locate(e, off, write, true)
    }

    /// [`Self::address_aligned`] for a pointer known to point into
    /// allocation `id` at offset `off`.
    fn address_known(&mut self, Known { id, off, align: known_align }: Known, size: i64, align: i64, write: bool, atomic: bool) -> Value {
        // The allocation is known: its entry is at a fixed place, and the
        // offset must be at most `len - size`.
        // (An offset in the loads, not an added constant: Cranelift
        // remakes `table + constant` where it is used, which would keep
        // the loads through it from leaving loops.)
        let e = At { base: self.table, off: rt::slot_of(id) as i32 * rt::ENTRY_BYTES as i32, known: true };
        let kind = gpu::memory::AllocId(id).kind();
        // Only bound buffers may be shared with other workers (or
        // read-only, program constants): the rest is always writable.
        let mut check_writable = write && matches!(kind, gpu::memory::AllocKind::Buffer(_) | gpu::memory::AllocKind::Constant(_));
        let mut ok = match self.lens.get(&id) {
            Some(&n) if n as i64 >= size => self.b.ins().icmp_imm(IntCC::UnsignedLessThanOrEqual, off, n as i64 - size),
            Some(_) => self.b.ins().iconst(I8, 0),
            None => {
                // `off < len - size + 1`, that bound 0 when `len <
                // size` (or, for a store, when the entry is not
                // writable): one comparison per access, the bound made
                // from the entry once (it stays put for the call).
                let bound = self.entry_bound(e, size, check_writable);
                check_writable = false;
                self.b.ins().icmp(IntCC::UnsignedLessThan, off, bound)
            }
        };
        if align > 1 && known_align % align != 0 {
            let m = self.b.ins().band_imm(off, align - 1);
            let aligned = self.b.ins().icmp_imm(IntCC::Equal, m, 0);
            ok = self.b.ins().band(ok, aligned);
        }
        self.guard(ok);
        let private = matches!(kind, gpu::memory::AllocKind::Private(_));
        let threadgroup = matches!(kind, gpu::memory::AllocKind::Threadgroup(_) | gpu::memory::AllocKind::ThreadgroupBuffer(_));
        match self.shadowed.get(&id) {
            // Nobody writes it in this interval: only "was it written in this threadgroup".
            Some(&Some(shift)) if self.reading_only && threadgroup && !write && !atomic => self.shadow_written(e, off, shift, size),
            // One cell (the access is aligned to its power-of-two size): inline.
            Some(&Some(shift)) if size > 0 && size <= 16 && (size as u64).is_power_of_two() && size <= 1 << shift => {
                self.shadow_cell(e, kind, off, shift, gpu::conflicts::Op { write, atomic })
            }
            Some(_) => {
                let idv = self.b.ins().iconst(I64, id as i64);
                self.shadow(idv, off, size, write, atomic)
            }
            None => {}
        }
        self.locate(e, off, check_writable, private)
    }

    /// With checks on, an access (in bounds) within one shadow cell of the
    /// allocation of kind `kind` whose table entry is at `e`: the rules of
    /// `gpu::conflicts::Shadows::access`, inline; give up on a hit.
    fn shadow_cell(&mut self, e: At, kind: gpu::memory::AllocKind, off: Value, shift: u32, op: gpu::conflicts::Op) {
        use gpu::conflicts as cf;
        let (atomic, write) = (op.atomic, op.write || op.atomic);
        let reads = !op.write || op.atomic;
        let fl = MemFlags::trusted();
        let device = matches!(kind, gpu::memory::AllocKind::Buffer(_));
        let cells = self.entry_field(e, rt::E_SHADOW);
        let idx = self.b.ins().ushr_imm(off, shift as i64);
        if device {
            // The cells touched, for the merge of workers' shadows.
            let lo = e.load(self.b, fl, rt::E_LO);
            let lo = self.b.ins().umin(lo, idx);
            self.b.ins().store(fl, lo, e.base, e.off + rt::E_LO);
            let hi = e.load(self.b, fl, rt::E_HI);
            let hi = self.b.ins().umax(hi, idx);
            self.b.ins().store(fl, hi, e.base, e.off + rt::E_HI);
        }
        let co = self.b.ins().imul_imm(idx, cf::CELL_BYTES);
        let c = self.b.ins().iadd(cells, co);
        let base = self.b.ins().load(I32, FIXED, self.ctx, rt::OFF_THREAD_BASE);
        let lane = self.b.ins().ireduce(I32, self.lane);
        let tid = self.b.ins().iadd(base, lane);
        let ep = rt::OFF_EPOCHS + if device { 0 } else { 8 };
        let now = self.b.ins().load(I32, FIXED, self.ctx, ep);
        let start = self.b.ins().load(I32, FIXED, self.ctx, ep + 4);
        let w_tid = self.b.ins().load(I32, fl, c, cf::W_TID);
        let w_raw = self.b.ins().load(I32, fl, c, cf::W_EPOCH);
        let w_epoch = self.b.ins().band_imm(w_raw, cf::EPOCH_MASK as i64);
        // Another thread's write, unordered with this access.
        let someone = self.b.ins().icmp_imm(IntCC::NotEqual, w_tid, 0);
        let other = self.b.ins().icmp(IntCC::NotEqual, w_tid, tid);
        let other = self.b.ins().band(someone, other);
        let mut unordered = self.b.ins().icmp(IntCC::Equal, w_epoch, now);
        let earlier_group = self.b.ins().icmp(IntCC::UnsignedLessThan, w_epoch, start);
        if device {
            unordered = self.b.ins().bor(unordered, earlier_group);
        }
        let mut bad = self.b.ins().band(other, unordered);
        if atomic {
            // Two atomic operations never race.
            let w_atomic = self.b.ins().band_imm(w_raw, cf::ATOMIC as i64);
            let plain = self.b.ins().icmp_imm(IntCC::Equal, w_atomic, 0);
            bad = self.b.ins().band(bad, plain);
        }
        if reads && !device {
            // Threadgroup memory no thread of this threadgroup wrote.
            bad = self.b.ins().bor(bad, earlier_group);
        }
        let r_tid = self.b.ins().load(I32, fl, c, cf::R_TID);
        let r_max = self.b.ins().load(I32, fl, c, cf::R_MAX);
        let r_min = if device { Some(self.b.ins().load(I32, fl, c, cf::R_MIN)) } else { None };
        if write {
            // Another thread's read in this interval, or one of another threadgroup.
            let read = self.b.ins().icmp_imm(IntCC::NotEqual, r_tid, 0);
            let same = self.b.ins().icmp(IntCC::Equal, r_max, now);
            let other = self.b.ins().icmp(IntCC::NotEqual, r_tid, tid);
            let mut hit = self.b.ins().band(same, other);
            if let Some(r_min) = r_min {
                let before = self.b.ins().icmp(IntCC::UnsignedLessThan, r_min, start);
                hit = self.b.ins().bor(hit, before);
            }
            let hit = self.b.ins().band(read, hit);
            bad = self.b.ins().bor(bad, hit);
        }
        let ok = self.b.ins().icmp_imm(IntCC::Equal, bad, 0);
        self.guard(ok);
        if write {
            self.b.ins().store(fl, tid, c, cf::W_TID);
            let stamp = if atomic { self.b.ins().bor_imm(now, cf::ATOMIC as i64) } else { now };
            self.b.ins().store(fl, stamp, c, cf::W_EPOCH);
            return;
        }
        let zero = self.b.ins().iconst(I32, 0);
        let r_tid = if device {
            r_tid
        } else {
            // A read of an earlier threadgroup's memory is forgotten.
            let stale = self.b.ins().icmp(IntCC::UnsignedLessThan, r_max, start);
            self.b.ins().select(stale, zero, r_tid)
        };
        let none = self.b.ins().icmp_imm(IntCC::Equal, r_tid, 0);
        if let Some(r_min) = r_min {
            let m = self.b.ins().select(none, now, r_min);
            self.b.ins().store(fl, m, c, cf::R_MIN);
        }
        let mine = self.b.ins().icmp(IntCC::Equal, r_tid, tid);
        let older = self.b.ins().icmp(IntCC::NotEqual, r_max, now);
        let alone = self.b.ins().bor(none, mine);
        let alone = self.b.ins().bor(alone, older);
        let multi = self.b.ins().iconst(I32, cf::MULTI as i64);
        let reader = self.b.ins().select(alone, tid, multi);
        self.b.ins().store(fl, reader, c, cf::R_TID);
        self.b.ins().store(fl, now, c, cf::R_MAX);
    }

    /// With checks on, a read of `size` bytes at `off` of threadgroup memory
    /// (table entry `e`) that no thread writes in this interval: give up
    /// unless each cell it covers was written in this threadgroup.
    fn shadow_written(&mut self, e: At, off: Value, shift: u32, size: i64) {
        // (Skipped once every cell was: `runtime::mark_written`.)
        let (check, done) = (self.b.create_block(), self.b.create_block());
        let all = self.entry_field(e, rt::E_WRITTEN);
        self.b.ins().brif(all, done, &[], check, &[]);
        self.b.switch_to_block(check);
        self.cells_written(e, off, shift, size);
        self.b.ins().jump(done, &[]);
        self.b.switch_to_block(done);
    }

    fn cells_written(&mut self, e: At, off: Value, shift: u32, size: i64) {
        use gpu::conflicts as cf;
        let fl = MemFlags::trusted();
        let cells = self.entry_field(e, rt::E_SHADOW);
        let start = self.b.ins().load(I32, FIXED, self.ctx, rt::OFF_EPOCHS + 12);
        let first = self.b.ins().ushr_imm(off, shift as i64);
        if size > 0 && size <= 16 && (size as u64).is_power_of_two() && size <= 1 << shift {
            // One cell (the access is aligned to its size).
            let co = self.b.ins().imul_imm(first, cf::CELL_BYTES);
            let c = self.b.ins().iadd(cells, co);
            let w = self.b.ins().load(I32, fl, c, cf::W_EPOCH);
            let w = self.b.ins().band_imm(w, cf::EPOCH_MASK as i64);
            let written = self.b.ins().icmp(IntCC::UnsignedGreaterThanOrEqual, w, start);
            self.guard(written);
            return;
        }
        let end = self.b.ins().iadd_imm(off, size.max(1) - 1);
        let last = self.b.ins().ushr_imm(end, shift as i64);
        let cells_of = (((size.max(1) - 1) >> shift) + 2) as usize;
        let mut ok = self.b.ins().iconst(I8, 1);
        // (At most a few cells: an access is at most 16 bytes.)
        for k in 0..cells_of.min(17) {
            let idx = self.b.ins().iadd_imm(first, k as i64);
            let inside = self.b.ins().icmp(IntCC::UnsignedLessThanOrEqual, idx, last);
            let safe = self.b.ins().select(inside, idx, first);
            let co = self.b.ins().imul_imm(safe, cf::CELL_BYTES);
            let c = self.b.ins().iadd(cells, co);
            let w = self.b.ins().load(I32, fl, c, cf::W_EPOCH);
            let w = self.b.ins().band_imm(w, cf::EPOCH_MASK as i64);
            let written = self.b.ins().icmp(IntCC::UnsignedGreaterThanOrEqual, w, start);
            ok = self.b.ins().band(ok, written);
        }
        self.guard(ok);
    }

    /// With checks on, tell the shadow about an access (in bounds) of
    /// `size` bytes at offset `off` of allocation `id`; give up on a hit.
    fn shadow(&mut self, id: Value, off: Value, size: i64, write: bool, atomic: bool) {
        if !self.checks {
            return;
        }
        let what = self.b.ins().iconst(I64, size | (write as i64) << 32 | (atomic as i64) << 33);
        let ok = self.call(self.sigs.shadow, rt::h_shadow as *const () as usize, &[self.ctx, id, off, self.lane, what]).expect("result");
        self.guard(ok);
    }

    /// Field `field` of entry `e`. Of a known entry, it is loaded once per
    /// call, before the threads run (it stays put meanwhile): Cranelift
    /// leaves such loads in the loops that use them.
    fn entry_field(&mut self, e: At, field: i32) -> Value {
        if !e.known {
            return e.load(self.b, FIXED, field);
        }
        if let Some(&v) = self.entry_vals.get(&(e.off, field)) {
            return v;
        }
        let mut cur = FuncCursor::new(self.b.func).at_inst(self.prelude);
        let v = cur.ins().load(I64, FIXED, e.base, e.off + field);
        self.entry_vals.insert((e.off, field), v);
        v
    }

    /// One past the greatest offset at which `size` bytes fit in the
    /// allocation of entry `e` (`len - size + 1`, 0 when `len < size`, or
    /// when `store` and the entry is not writable), so that an access is in
    /// bounds when its offset is below it: one comparison per access.
    fn entry_bound(&mut self, e: At, size: i64, store: bool) -> Value {
        // (An empty access still needs its offset inside: `off < len`.)
        let size = size.max(1);
        let len = self.entry_field(e, if store { rt::E_STORE_LEN } else { rt::E_LEN });
        if !e.known {
            let roomy = self.b.ins().icmp_imm(IntCC::UnsignedGreaterThanOrEqual, len, size);
            let room = self.b.ins().iadd_imm(len, 1 - size);
            let zero = self.b.ins().iconst(I64, 0);
            return self.b.ins().select(roomy, room, zero);
        }
        // (Keyed apart from the fields, whose offsets are non-negative;
        // stores' bounds apart from loads'.)
        let key = (e.off, -1 - size as i32 - if store { 1 << 20 } else { 0 });
        if let Some(&v) = self.entry_vals.get(&key) {
            return v;
        }
        let mut cur = FuncCursor::new(self.b.func).at_inst(self.prelude);
        let roomy = cur.ins().icmp_imm(IntCC::UnsignedGreaterThanOrEqual, len, size);
        let room = cur.ins().iadd_imm(len, 1 - size);
        let zero = cur.ins().iconst(I64, 0);
        let v = cur.ins().select(roomy, room, zero);
        self.entry_vals.insert(key, v);
        v
    }

    /// The host address of offset `off` of the allocation whose table entry
    /// is at `e`; a store gives up unless the entry is writable (every
    /// buffer the kernel may write was made the worker's own before the
    /// code ran: `analysis::written_buffers`).
    fn locate(&mut self, e: At, off: Value, write: bool, per_lane: bool) -> Value {
        if write {
            let w = self.entry_field(e, rt::E_WRITABLE);
            self.guard(w);
        }
        let base = self.entry_field(e, rt::E_BASE);
        let a = if per_lane {
            let stride = self.entry_field(e, rt::E_STRIDE);
            let own = self.b.ins().imul(stride, self.lane);
            self.b.ins().iadd(base, own)
        } else {
            base
        };
        self.b.ins().iadd(a, off)
    }
}

/// A table entry: at `base + off`; `known`: `base` is the table's start
/// (the entry of an allocation known when compiling).
#[derive(Clone, Copy)]
struct At {
    base: Value,
    off: i32,
    known: bool,
}

impl At {
    /// The entry's 64-bit field at `field` (an `E_*` offset).
    fn load(self, b: &mut FunctionBuilder<'_>, flags: MemFlags, field: i32) -> Value {
        b.ins().load(I64, flags, self.base, self.off + field)
    }
}

/// The registers `insts` (and the blocks within) assign, each once, in
/// the order they first do (so that code made from the list is the same
/// from one compile to the next).
fn assigned(insts: &[Inst]) -> Vec<Reg> {
    let (mut seen, mut out) = (HashSet::new(), Vec::new());
    gpu::ir::walk(insts, &mut |i| out.extend(gpu::ir::reg_uses(i).0.into_iter().filter(|r| seen.insert(*r))));
    out
}

/// The 32-bit registers a float operation reads or writes.
fn float_registers(body: &[Inst]) -> HashSet<Reg> {
    let mut floats = HashSet::new();
    gpu::ir::walk(body, &mut |inst| {
        let regs: &[Reg] = match inst {
            Inst::Binary { ty: Scalar::Float, dst, a, b, .. } => &[*dst, *a, *b],
            Inst::Unary { ty: Scalar::Float, dst, a, .. } => &[*dst, *a],
            Inst::Compare { ty: Scalar::Float, a, b, .. } => &[*a, *b],
            Inst::Convert { from: Scalar::Float, src, .. } => &[*src],
            Inst::Convert { to: Scalar::Float, dst, .. } => &[*dst],
            _ => &[],
        };
        floats.extend(regs.iter().filter(|r| matches!(r, Reg::W32(_))));
    });
    floats
}
