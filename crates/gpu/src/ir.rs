//! The executor's instruction set: scalar registers, one value per lane,
//! and structured control flow. Vectors are split into one register per
//! component; structs and arrays live in memory.
//!
//! Registers come in two widths. 32-bit registers hold bool, the integer
//! types up to 32 bits (normalized: sign- or zero-extended), and the
//! floating types as `f32` bits (half and bfloat values are kept already
//! rounded to their type). 64-bit registers hold long/ulong and pointers.

use msl::ast::{AddressSpace, BinaryOp};
use msl::hir::{BuiltinId, ThreadAttr};
use msl::source::Span;
use msl::types::Scalar;

/// A register: index into the 32-bit or the 64-bit register file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Reg {
    W32(u32),
    W64(u32),
}

/// Storage width of a scalar type in registers.
pub fn is_wide(s: Scalar) -> bool {
    matches!(s, Scalar::Long | Scalar::ULong)
}

/// Static facts about a memory access, for findings and traces.
#[derive(Clone, Debug, PartialEq)]
pub struct Access {
    pub span: Span,
    /// What is accessed, for messages: `a`, `tile`, `bodies[...].pos`.
    pub what: String,
}

pub type AccessId = u32;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnOp {
    Neg,
    Not,
    BitNot,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AtomicOp {
    Load,
    Store,
    Exchange,
    CompareExchange,
    Add,
    Sub,
    And,
    Or,
    Xor,
    Min,
    Max,
}

/// Cross-lane operations over a SIMD-group (32) or quad (4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LaneOp {
    Sum,
    Product,
    Min,
    Max,
    And,
    Or,
    Xor,
    PrefixInclusiveSum,
    PrefixExclusiveSum,
    PrefixInclusiveProduct,
    PrefixExclusiveProduct,
    /// Value of lane `arg`.
    Broadcast,
    BroadcastFirst,
    Shuffle,
    ShuffleXor,
    ShuffleUp,
    ShuffleDown,
    ShuffleRotateUp,
    ShuffleRotateDown,
    /// `and_fill` variants take the fill value in `arg2`.
    ShuffleAndFillUp,
    ShuffleAndFillDown,
    All,
    Any,
    Ballot,
    ActiveMask,
    IsFirst,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MatrixOp {
    Fill,
    /// `simdgroup_matrix<T, 8, 8>(d)`: d on the diagonal, zero elsewhere.
    Diagonal,
    Load {
        transpose: bool,
    },
    Store {
        transpose: bool,
    },
    Multiply,
    MultiplyAccumulate,
}

/// A compiled standard-library function applied per lane.
#[derive(Clone, Copy, Debug)]
pub enum MathFn {
    F1(fn(f32) -> f32),
    F2(fn(f32, f32) -> f32),
    F3(fn(f32, f32, f32) -> f32),
    FPred(fn(f32) -> bool),
    FRel(fn(f32, f32) -> bool),
    I1(fn(gpu_math::IntKind, u64) -> u64),
    I2(fn(gpu_math::IntKind, u64, u64) -> u64),
    I3(fn(gpu_math::IntKind, u64, u64, u64) -> u64),
    I4(fn(gpu_math::IntKind, u64, u64, u64, u64) -> u64),
}

/// Functions with an integer part or a second result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpecialFn {
    /// `ldexp(x, e)`.
    Ldexp,
    /// `ilogb(x)`: an `int` result.
    Ilogb,
    /// `frexp(x, e)`: mantissa, exponent.
    Frexp,
    /// `modf(x, i)`: fraction, integral part.
    Modf,
    /// `sincos(x, c)`: sine, cosine.
    Sincos,
}

pub type Block = Vec<Inst>;

#[derive(Clone, Debug)]
pub enum Inst {
    /// `dst = value` (raw register bits) for every lane.
    Const {
        dst: Reg,
        bits: u64,
    },
    /// Masked copy: only active lanes are written (assignment to a variable).
    Assign {
        dst: Reg,
        src: Reg,
    },
    /// Unmasked copy (temporaries).
    Copy {
        dst: Reg,
        src: Reg,
    },
    Unary {
        op: UnOp,
        ty: Scalar,
        dst: Reg,
        a: Reg,
    },
    Binary {
        op: BinaryOp,
        ty: Scalar,
        dst: Reg,
        a: Reg,
        b: Reg,
        at: AccessId,
    },
    /// Comparison of two `ty` values into a bool register.
    Compare {
        op: BinaryOp,
        ty: Scalar,
        dst: Reg,
        a: Reg,
        b: Reg,
    },
    /// Numeric conversion between scalar types.
    Convert {
        from: Scalar,
        to: Scalar,
        dst: Reg,
        src: Reg,
    },
    /// `dst = cond ? a : b` per lane (both already evaluated, no side effects).
    Select {
        dst: Reg,
        cond: Reg,
        a: Reg,
        b: Reg,
    },
    /// Reinterpret the bytes of `src` (components of `src_ty`) as `dst_ty`.
    BitCast {
        dst: Vec<Reg>,
        dst_ty: Scalar,
        src: Vec<Reg>,
        src_ty: Scalar,
    },
    /// Per-lane math: `dst = f(args)`; `ty` is the element type (rounding).
    Math {
        f: MathFn,
        ty: Scalar,
        dst: Reg,
        args: Vec<Reg>,
        /// The builtin called, for messages.
        func: BuiltinId,
    },
    /// Geometric functions of whole vectors.
    Geometric {
        op: gpu_math::GeometricFn,
        /// The builtin called, for messages.
        func: BuiltinId,
        ty: Scalar,
        dst: Vec<Reg>,
        args: Vec<Vec<Reg>>,
    },
    /// `ldexp(x, e)`, `frexp`, `modf`, `sincos`-style functions with int or out parts.
    Special {
        op: SpecialFn,
        /// The builtin called, for messages.
        func: BuiltinId,
        ty: Scalar,
        dst: Vec<Reg>,
        args: Vec<Reg>,
    },

    /// Pointer arithmetic: `dst = ptr + index * scale` (index of `index_ty`).
    PtrIndex {
        dst: Reg,
        ptr: Reg,
        index: Reg,
        index_ty: Scalar,
        scale: i64,
    },
    PtrAdd {
        dst: Reg,
        ptr: Reg,
        bytes: i64,
    },
    /// `(a - b) / scale` in elements.
    PtrDiff {
        dst: Reg,
        a: Reg,
        b: Reg,
        scale: i64,
    },
    Load {
        dst: Reg,
        ty: Scalar,
        ptr: Reg,
        space: AddressSpace,
        at: AccessId,
    },
    Store {
        src: Reg,
        ty: Scalar,
        ptr: Reg,
        space: AddressSpace,
        at: AccessId,
    },
    /// Copy `bytes` between two memory locations (struct/array assignment).
    MemCopy {
        dst: Reg,
        src: Reg,
        bytes: u32,
        /// The copied type's alignment (a 16-byte struct declared
        /// `alignas(4)` needs only 4), which the addresses must have.
        align: u32,
        dst_space: AddressSpace,
        src_space: AddressSpace,
        at: AccessId,
    },
    /// `dst = old value`; `a`/`b` operands (b: desired value for
    /// compare-exchange, where `a` points at the expected value).
    Atomic {
        op: AtomicOp,
        ty: Scalar,
        dst: Reg,
        ptr: Reg,
        space: AddressSpace,
        a: Reg,
        b: Reg,
        at: AccessId,
    },
    Barrier {
        simdgroup: bool,
        flags: Reg,
        at: AccessId,
    },
    /// `ty` is the operand type; `fill` is the `and_fill` value (else `a`).
    Lane {
        op: LaneOp,
        quad: bool,
        ty: Scalar,
        dst: Reg,
        a: Reg,
        arg: Reg,
        fill: Reg,
        at: AccessId,
    },
    /// SIMD-group matrix operations; matrices are 2 registers per lane.
    Matrix {
        op: MatrixOp,
        ty: Scalar,
        dst: Vec<Reg>,
        args: Vec<Reg>,
        mats: Vec<Vec<Reg>>,
        space: AddressSpace,
        at: AccessId,
    },
    /// Load a thread-position attribute component.
    Attr {
        attr: ThreadAttr,
        component: u8,
        dst: Reg,
    },

    /// `at` locates the condition (for "these threads went the other way").
    If {
        cond: Reg,
        then: Block,
        els: Block,
        at: AccessId,
    },
    /// `cond_block` computes `cond`; `check_first` false for do/while.
    Loop {
        cond_block: Block,
        cond: Option<Reg>,
        body: Block,
        step: Block,
        check_first: bool,
        at: AccessId,
    },
    Switch {
        value: Reg,
        ty: Scalar,
        cases: Vec<(Vec<u64>, bool, Block)>,
    },
    Break,
    Continue,
    /// Leave the innermost inlined function (`Scope`); `at` is the statement.
    Return {
        at: AccessId,
    },
    /// An inlined function body; `Return` inside ends here.
    Scope {
        body: Block,
    },
    /// Does nothing.
    Nop,
    /// A recursive call deeper than the lowering unrolled (`at` is the
    /// call): reached by any lane, the run stops with a runaway finding.
    RecursionTooDeep {
        at: AccessId,
        limit: u32,
    },
    /// A call through a function pointer that holds no function of the
    /// program (null, never set): reached by any lane, the run stops with
    /// an out-of-bounds finding (the GPU would jump to a bad address).
    BadCall {
        at: AccessId,
    },
    /// The end of an inlined function that returns a value, reached without
    /// a `return` (undefined behaviour in C++: the result is garbage). With
    /// checks on, each lane that gets here is reported; `at` is the
    /// function's closing brace.
    NoReturn {
        at: AccessId,
    },
    /// A statement starts (only in kernels lowered for profiling).
    Mark {
        at: AccessId,
    },
    /// Shader logging: format `format` with `args` for each lane (see `log.rs`).
    Log {
        site: std::sync::Arc<msl::hir::LogFormat>,
        args: Vec<(crate::probe::ProbeKind, Reg)>,
    },
    /// A debugger probe's evaluation: run only when the watched thread is
    /// active, with the checks and observers detached (printing must not
    /// change findings).
    Probing {
        body: Block,
    },
    /// A statement starts (only in kernels lowered for the interactive
    /// debugger): `site` indexes `Kernel::stop_sites` (see `stops.rs`).
    Stop {
        site: u32,
    },
    /// A debugger probe: expression `slot` of probe `probe` (see `probe.rs`).
    Probe {
        probe: u32,
        slot: u32,
        kind: crate::probe::ProbeKind,
        regs: Vec<Reg>,
    },
    /// The value a called function returns (only in kernels lowered for
    /// the interactive debugger): read from `home` by `layout` and kept
    /// with the watched thread's last stop at call depth `depth`.
    Returned {
        depth: u32,
        home: crate::stops::Home,
        layout: Box<crate::stops::Layout>,
    },
    /// A debugger probe of a value in memory (a variable, a field, an
    /// element; a whole struct or array): read at `ptr` by `layout`, so
    /// bytes never written show as `?`.
    ProbeAt {
        probe: u32,
        slot: u32,
        layout: Box<crate::stops::Layout>,
        ptr: Reg,
    },
}

/// A kernel ready to run.
#[derive(Clone, Debug)]
pub struct Kernel {
    pub name: String,
    pub body: Block,
    pub n32: u32,
    pub n64: u32,
    /// Kernel parameters in declaration order.
    pub params: Vec<KernelParam>,
    pub accesses: Vec<Access>,
    /// Threadgroup variables: (name, size, align), allocated per threadgroup.
    pub threadgroup_vars: Vec<MemVar>,
    /// Per-thread memory variables (arrays, structs, address-taken locals).
    pub private_vars: Vec<MemVar>,
    /// Program-scope constants with their bytes.
    pub constants: Vec<(MemVar, Vec<u8>)>,
    /// Whether the kernel uses SIMD-group/quad functions (lane grouping).
    pub uses_lanes: bool,
    /// Whether the kernel has atomics outside threadgroup memory (its
    /// threadgroups then cannot run on separate copies of the buffers).
    pub device_atomics: bool,
    /// Whether the kernel logs (`os_log`): logging then runs its threadgroups in order.
    pub logs: bool,
    /// The (subsystem, category) of the program's declared `os_log`
    /// objects that log calls use, sorted, without repeats.
    pub log_origins: Vec<(String, String)>,
    /// The statements `Inst::Stop` names (empty unless lowered for the debugger).
    pub stop_sites: Vec<crate::stops::StopSite>,
    /// Where the debugger's probes are (`Inst::Probe::probe` indexes it).
    pub probe_sites: Vec<msl::probe::ProbeSite>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct MemVar {
    pub name: String,
    pub size: u32,
    pub align: u32,
    pub span: Span,
    /// Size of the smallest scalar inside (the sanitizer's tracking grain).
    pub grain: u32,
    /// Array dimensions as declared, outermost first (`float t[3][4]` →
    /// [3, 4]); empty when the variable is not an array of scalars.
    pub dims: Vec<u32>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct KernelParam {
    pub name: String,
    pub kind: ParamKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ParamKind {
    /// A buffer: `index` is `[[buffer(n)]]`; `pointee` describes elements.
    Buffer {
        index: u32,
        reg: Reg,
        space: AddressSpace,
        pointee: msl::types::Type,
        pointee_size: u32,
        writable: bool,
        by_reference: bool,
    },
    /// `[[threadgroup(n)]]` pointer: memory sized by the dispatch.
    ThreadgroupBuffer {
        index: u32,
        reg: Reg,
        pointee_size: u32,
    },
    Attr {
        attr: ThreadAttr,
        regs: Vec<Reg>,
        ty: Scalar,
    },
}

impl ParamKind {
    /// The register and allocation of a buffer parameter (`None`: a
    /// thread attribute).
    pub fn memory(&self) -> Option<(Reg, crate::memory::AllocId)> {
        match self {
            ParamKind::Buffer { index, reg, .. } => Some((*reg, crate::memory::AllocId::buffer(*index))),
            ParamKind::ThreadgroupBuffer { index, reg, .. } => Some((*reg, crate::memory::AllocId::tg_buffer(*index))),
            ParamKind::Attr { .. } => None,
        }
    }
}

/// Whether `inst` is control flow: it holds blocks of instructions or
/// leaves its own (the interpreter's frames change which lanes run there).
#[inline]
pub fn is_control(inst: &Inst) -> bool {
    matches!(
        inst,
        Inst::If { .. }
            | Inst::Loop { .. }
            | Inst::Switch { .. }
            | Inst::Scope { .. }
            | Inst::Probing { .. }
            | Inst::Break
            | Inst::Continue
            | Inst::Return { .. }
    )
}

/// The registers an instruction writes and reads, and whether it has an
/// effect beyond its registers (memory, control flow, a record). Blocks of
/// control-flow instructions are not included.
pub fn reg_uses(inst: &Inst) -> (Vec<Reg>, Vec<Reg>, bool) {
    use Inst::*;
    match inst {
        Const { dst, .. } | Attr { dst, .. } => (vec![*dst], vec![], false),
        Copy { dst, src } | Assign { dst, src } | Unary { dst, a: src, .. } | Convert { dst, src, .. } => (vec![*dst], vec![*src], false),
        Binary { dst, a, b, .. } | Compare { dst, a, b, .. } | PtrDiff { dst, a, b, .. } => (vec![*dst], vec![*a, *b], false),
        Select { dst, cond, a, b } => (vec![*dst], vec![*cond, *a, *b], false),
        BitCast { dst, src, .. } => (dst.clone(), src.clone(), false),
        Math { dst, args, .. } => (vec![*dst], args.clone(), false),
        Geometric { dst, args, .. } => (dst.clone(), args.iter().flatten().copied().collect(), false),
        Special { dst, args, .. } => (dst.clone(), args.clone(), false),
        PtrIndex { dst, ptr, index, .. } => (vec![*dst], vec![*ptr, *index], false),
        PtrAdd { dst, ptr, .. } => (vec![*dst], vec![*ptr], false),
        Lane { dst, a, arg, fill, .. } => (vec![*dst], vec![*a, *arg, *fill], false),
        Load { dst, ptr, .. } => (vec![*dst], vec![*ptr], true),
        Store { src, ptr, .. } => (vec![], vec![*src, *ptr], true),
        MemCopy { dst, src, .. } => (vec![], vec![*dst, *src], true),
        Atomic { dst, ptr, a, b, .. } => (vec![*dst], vec![*ptr, *a, *b], true),
        Barrier { flags, .. } => (vec![], vec![*flags], true),
        Matrix { dst, args, mats, .. } => (dst.clone(), args.iter().chain(mats.iter().flatten()).copied().collect(), true),
        If { cond, .. } => (vec![], vec![*cond], true),
        Loop { cond, .. } => (vec![], cond.iter().copied().collect(), true),
        Switch { value, .. } => (vec![], vec![*value], true),
        Log { args, .. } => (vec![], args.iter().map(|a| a.1).collect(), true),
        Probe { regs, .. } => (vec![], regs.clone(), true),
        ProbeAt { ptr, .. } => (vec![], vec![*ptr], true),
        Returned { home, .. } => (
            vec![],
            match home {
                crate::stops::Home::Regs(r) => r.clone(),
                crate::stops::Home::Referee(r) => vec![*r],
                crate::stops::Home::Memory(_) => vec![],
            },
            true,
        ),
        Break
        | Continue
        | Return { .. }
        | Scope { .. }
        | Nop
        | RecursionTooDeep { .. }
        | BadCall { .. }
        | NoReturn { .. }
        | Mark { .. }
        | Probing { .. }
        | Stop { .. } => (vec![], vec![], true),
    }
}

/// Every instruction of `block`, nested blocks included, outermost first.
pub fn walk<'a>(block: &'a [Inst], f: &mut dyn FnMut(&'a Inst)) {
    // Nesting (blocks, inlined calls) is bounded only by the kernel's size.
    stacker::maybe_grow(64 * 1024, 1024 * 1024, || {
        for inst in block {
            f(inst);
            match inst {
                Inst::If { then, els, .. } => {
                    walk(then, f);
                    walk(els, f);
                }
                Inst::Loop { cond_block, body, step, .. } => {
                    walk(cond_block, f);
                    walk(body, f);
                    walk(step, f);
                }
                Inst::Switch { cases, .. } => cases.iter().for_each(|c| walk(&c.2, f)),
                Inst::Scope { body } | Inst::Probing { body } => walk(body, f),
                _ => {}
            }
        }
    })
}

/// The atomic operations of a kernel, by access site: the operation and
/// whether the value it returns is used (flows, through any registers,
/// into memory, an address or a branch). An atomic add whose result nobody
/// uses commutes with another one; one whose result is used may not.
pub fn atomic_sites(k: &Kernel) -> std::collections::HashMap<AccessId, (AtomicOp, bool)> {
    use std::collections::{HashMap, HashSet};
    let mut insts: Vec<&Inst> = Vec::new();
    walk(&k.body, &mut |i| insts.push(i));
    if !insts.iter().any(|i| matches!(i, Inst::Atomic { .. })) {
        return HashMap::new();
    }
    // Registers whose values matter: read by an effect, or by an
    // instruction writing one that matters. A worklist over "who writes
    // this register" keeps it linear in the kernel's size.
    let uses: Vec<(Vec<Reg>, Vec<Reg>, bool)> = insts.iter().map(|i| reg_uses(i)).collect();
    let mut writers: HashMap<Reg, Vec<usize>> = HashMap::new();
    for (n, (dsts, _, effect)) in uses.iter().enumerate() {
        if !*effect {
            for d in dsts {
                writers.entry(*d).or_default().push(n);
            }
        }
    }
    let mut live: HashSet<Reg> = HashSet::new();
    let mut work: Vec<Reg> = Vec::new();
    for (_, srcs, effect) in &uses {
        if *effect {
            work.extend(srcs.iter().copied());
        }
    }
    while let Some(r) = work.pop() {
        if !live.insert(r) {
            continue;
        }
        for &n in writers.get(&r).map(Vec::as_slice).unwrap_or(&[]) {
            work.extend(uses[n].1.iter().copied().filter(|s| !live.contains(s)));
        }
    }
    let mut sites = HashMap::new();
    for inst in insts {
        if let Inst::Atomic { op, dst, at, .. } = inst {
            let used = live.contains(dst) || matches!(op, AtomicOp::Load | AtomicOp::CompareExchange);
            let e = sites.entry(*at).or_insert((*op, used));
            e.1 |= used;
        }
    }
    sites
}
