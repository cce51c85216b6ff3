//! Lowering a checked kernel (HIR) to the executor's IR: every call inlined,
//! vectors split into component registers, aggregates and address-taken
//! locals placed in per-thread memory, threadgroup variables allocated.

mod builtins;
mod expr;
mod linalg;

use crate::ir::*;
use crate::memory::{ptr_bits, AllocId};
use msl::ast::AddressSpace;
use msl::hir::{self, Binding, ConstValue, ExprKind as H, FuncId, LocalId, LocalOrigin, StmtKind};
use msl::source::Span;
use msl::types::{Scalar, Type, TypeTables};
use std::collections::{HashMap, HashSet};

/// Why a kernel could not be lowered (a limitation, not a user error).
#[derive(Debug, Clone)]
pub struct LowerError {
    pub span: Span,
    pub message: String,
    /// The kernel is fine but the simulator cannot run it (as opposed to a
    /// pipeline Metal itself would refuse, e.g. a missing function constant).
    pub is_limitation: bool,
}

impl LowerError {
    /// The error as a diagnostic, with a note when the simulator is at fault.
    pub fn to_diagnostic(&self) -> msl::diag::Diagnostic {
        let d = msl::diag::Diagnostic::error(self.span, self.message.clone());
        if self.is_limitation {
            d.note("this is a limitation of the simulator, not an error in your kernel")
        } else {
            d
        }
    }
}

type LResult<T> = Result<T, LowerError>;

fn err<T>(span: Span, message: impl Into<String>) -> LResult<T> {
    Err(LowerError { span, message: message.into(), is_limitation: true })
}

/// A value: scalar/vector components in registers, or an aggregate in memory.
#[derive(Clone, Debug)]
enum Val {
    Regs(Vec<Reg>),
    Mem { ptr: Reg, space: AddressSpace },
}

/// Something that can be read and written.
#[derive(Clone, Debug)]
enum Place {
    /// A register-resident scalar/vector variable.
    Regs(Vec<Reg>),
    /// Memory of type `ty` at `ptr`.
    Mem {
        ptr: Reg,
        space: AddressSpace,
        ty: Type,
    },
    Swizzle {
        base: Box<Place>,
        comps: Vec<u8>,
        elem: Scalar,
    },
    /// A vector component chosen at run time.
    DynElem {
        base: Box<Place>,
        index: Reg,
        index_ty: Scalar,
        elem: Scalar,
        len: u8,
    },
}

#[derive(Clone, Debug)]
enum Storage {
    Regs(Vec<Reg>),
    /// Per-thread memory variable.
    Private(u32),
    Threadgroup(u32),
    /// A function pointer: the function it holds, known at compile time
    /// (bound where the local is initialized or the call inlined).
    Func(FuncId),
    Unset,
}

struct Frame {
    func: FuncId,
    locals: Vec<Storage>,
    /// Locals in scope, in declaration order (for the debugger's stops).
    visible: Vec<LocalId>,
    /// Where `return value` goes.
    ret: Option<Place>,
}

pub struct Lowerer<'p> {
    prog: &'p hir::Program,
    tables: &'p TypeTables,
    n32: u32,
    n64: u32,
    accesses: Vec<Access>,
    tg_vars: Vec<MemVar>,
    private_vars: Vec<MemVar>,
    constants: Vec<(MemVar, Vec<u8>)>,
    global_ids: HashMap<u32, u32>,
    frames: Vec<Frame>,
    uses_lanes: bool,
    device_atomics: bool,
    /// Address-taken locals per function (computed once per function).
    addr_taken: HashMap<FuncId, HashSet<LocalId>>,
    /// Per function, the locals it assigns (a function pointer local that
    /// is never assigned is bound to its function at compile time).
    assigned: HashMap<FuncId, HashSet<LocalId>>,
    /// Per function pointer type, the functions whose address the program
    /// takes: what a call through a run-time pointer may reach.
    fn_targets: Option<Vec<(Type, FuncId)>>,
    /// Constants, hoisted to the kernel's prologue (they never change).
    pending_consts: Vec<Inst>,
    /// Cache of constant registers by (bits, wide).
    const_cache: HashMap<(u64, bool), Reg>,
    options: LowerOptions,
    stop_sites: Vec<crate::stops::StopSite>,
    /// How many times a function may be inlined inside itself.
    recursion_depth: u32,
    /// Inlined calls of a function already on the call stack, so far.
    recursive_inlines: u32,
    /// Unrolled recursion hit `MAX_RECURSIVE_INLINES`: the kernel is lowered
    /// again with a smaller `recursion_depth`.
    recursion_overflowed: bool,
    /// Calls inlined so far (every call, recursive or not).
    inlined_calls: u64,
    /// The statement being lowered, for errors found below expressions.
    stmt_span: Span,
}

/// The budget of one lowered kernel, in units of a 32-bit register word (a
/// 64-bit register is two), a memory-access site or an inlined call. Every
/// call is inlined, so a small source whose calls fan out (a template
/// calling two instances of itself per level) would otherwise grow 2^N
/// copies; the executor also keeps every register once per lane, so this
/// bounds its register file too (at most 400 MB for 1,024 lanes).
pub const MAX_LOWERED_SIZE: u64 = 100_000;

/// Recursion depths tried, deepest first: a function that calls itself more
/// than once per level grows exponentially with the depth, so the lowering
/// settles on the deepest one whose unrolled code stays within bounds.
const RECURSION_DEPTHS: [u32; 6] = [16, 10, 7, 5, 3, 1];
/// How many recursive inlinings one kernel may have in all.
pub(crate) const MAX_RECURSIVE_INLINES: u32 = 256;

/// Choices about the instructions the lowering emits.
#[derive(Clone, Copy, Debug, Default)]
pub struct LowerOptions {
    /// Emit `Inst::Mark` at every statement, for the profiler (costs time,
    /// so only kernels run with `--profile` have them).
    pub statement_marks: bool,
    /// Emit `Inst::Stop` at every statement with the locals in scope, for
    /// the interactive debugger (`stops.rs`).
    pub debug_stops: bool,
}

/// Lower kernel `id` of `prog`.
pub fn lower_kernel(prog: &hir::Program, id: FuncId) -> LResult<Kernel> {
    lower_kernel_with(prog, id, LowerOptions::default())
}

/// [`lower_kernel`] with options.
pub fn lower_kernel_with(prog: &hir::Program, id: FuncId, options: LowerOptions) -> LResult<Kernel> {
    required_constants_given(prog, id)?;
    let mut kernel = None;
    for (i, depth) in RECURSION_DEPTHS.into_iter().enumerate() {
        let mut recursed = false;
        let (k, overflowed) = match lower_once(prog, id, options, depth, &mut recursed) {
            // Unrolled recursion may be what made the kernel too large:
            // try again with less of it.
            Err(e) if recursed && i + 1 < RECURSION_DEPTHS.len() => {
                kernel = Some(Err(e));
                continue;
            }
            Err(e) => return Err(e),
            Ok(r) => r,
        };
        kernel = Some(Ok(k));
        if !overflowed {
            break;
        }
    }
    kernel.expect("at least one depth is tried")
}

/// One lowering with recursion unrolled to `recursion_depth`; true when the
/// unrolling ran out of its budget somewhere.
/// `recursed` tells, also on an error, whether any recursion was unrolled.
fn lower_once(
    prog: &hir::Program,
    id: FuncId,
    options: LowerOptions,
    recursion_depth: u32,
    recursed: &mut bool,
) -> LResult<(Kernel, bool)> {
    let mut l = Lowerer {
        prog,
        tables: &prog.types,
        n32: 0,
        n64: 0,
        accesses: Vec::new(),
        tg_vars: Vec::new(),
        private_vars: Vec::new(),
        constants: Vec::new(),
        global_ids: HashMap::new(),
        frames: Vec::new(),
        uses_lanes: false,
        device_atomics: false,
        addr_taken: HashMap::new(),
        assigned: HashMap::new(),
        fn_targets: None,
        pending_consts: Vec::new(),
        const_cache: HashMap::new(),
        options,
        stop_sites: Vec::new(),
        recursion_depth,
        recursive_inlines: 0,
        recursion_overflowed: false,
        inlined_calls: 0,
        stmt_span: Span::default(),
    };
    let f = prog.function(id);
    let mut body = Vec::new();
    let mut params = Vec::new();
    let mut frame = Frame { func: id, locals: vec![Storage::Unset; f.locals.len()], visible: Vec::new(), ret: None };
    let mut next_buffer = 0u32;
    let used: HashSet<u32> = f
        .params
        .iter()
        .filter_map(|p| match p.binding {
            Binding::Buffer(i) if i != u32::MAX => Some(i),
            _ => None,
        })
        .collect();
    for p in &f.params {
        let local = f.local(p.local);
        match &p.binding {
            Binding::Buffer(idx) => {
                let index = if *idx == u32::MAX {
                    while used.contains(&next_buffer) {
                        next_buffer += 1;
                    }
                    next_buffer += 1;
                    next_buffer - 1
                } else {
                    *idx
                };
                let reg = l.reg64();
                let Type::Pointer { pointee, space, is_const } = &local.ty else {
                    return err(local.span, "buffer parameter is not a pointer");
                };
                let by_reference = local.ty != Type::Void && {
                    // `constant T& x` was turned into a pointer local by the checker.
                    !matches!(f.local(p.local).name.as_str(), "") && is_reference_param(prog, id, p.local)
                };
                params.push(KernelParam {
                    name: local.name.clone(),
                    kind: ParamKind::Buffer {
                        index,
                        reg,
                        space: *space,
                        pointee: (**pointee).clone(),
                        pointee_size: l.tables.size_of(pointee) as u32,
                        writable: !*is_const && *space == AddressSpace::Device,
                        by_reference,
                    },
                    span: local.span,
                });
                frame.locals[p.local.0 as usize] = Storage::Regs(vec![reg]);
            }
            Binding::Threadgroup(idx) => {
                let reg = l.reg64();
                let pointee_size = match &local.ty {
                    Type::Pointer { pointee, .. } => l.tables.size_of(pointee) as u32,
                    _ => 1,
                };
                params.push(KernelParam {
                    name: local.name.clone(),
                    kind: ParamKind::ThreadgroupBuffer { index: *idx, reg, pointee_size },
                    span: local.span,
                });
                frame.locals[p.local.0 as usize] = Storage::Regs(vec![reg]);
            }
            Binding::Attr(attr) => {
                let (elem, n) = match &local.ty {
                    Type::Scalar(s) => (*s, 1u8),
                    Type::Vector { elem, len, .. } => (*elem, *len),
                    _ => return err(local.span, "attribute parameter of unexpected type"),
                };
                let regs: Vec<Reg> = (0..n).map(|_| l.reg32()).collect();
                for (c, r) in regs.iter().enumerate() {
                    body.push(Inst::Attr { attr: *attr, component: c as u8, dst: *r });
                }
                params.push(KernelParam {
                    name: local.name.clone(),
                    kind: ParamKind::Attr { attr: *attr, regs: regs.clone(), ty: elem },
                    span: local.span,
                });
                frame.locals[p.local.0 as usize] = Storage::Regs(regs);
            }
            Binding::Absent => {
                // Left out by its function constant: reads as zero / null.
                let Some((s, n)) = components(&local.ty, l.tables) else {
                    return err(local.span, "a parameter left out by `[[function_constant]]` must be a pointer, reference or scalar");
                };
                let regs = (0..n).map(|_| l.const_scalar(ConstValue::Int(0), s)).collect();
                frame.locals[p.local.0 as usize] = Storage::Regs(regs);
            }
            Binding::Argument => return err(local.span, "kernel parameter without a binding"),
        }
    }
    frame.visible = f.params.iter().map(|p| p.local).filter(|p| !matches!(frame.locals[p.0 as usize], Storage::Unset)).collect();
    l.frames.push(frame);
    l.compute_addr_taken(id);
    l.lower_constants()?;
    let stmts = l.stmts(&f.body);
    *recursed = l.recursive_inlines > 0;
    body.extend(stmts?);
    let mut prologue = std::mem::take(&mut l.pending_consts);
    prologue.push(Inst::Scope { body });
    let body = prologue;
    let overflowed = l.recursion_overflowed;
    let kernel = Kernel {
        name: f.host_name.clone().unwrap_or_else(|| f.name.clone()),
        body,
        n32: l.n32,
        n64: l.n64,
        params,
        accesses: l.accesses,
        threadgroup_vars: l.tg_vars,
        private_vars: l.private_vars,
        constants: l.constants,
        uses_lanes: l.uses_lanes,
        device_atomics: l.device_atomics,
        logs: !prog.log_formats.is_empty(),
        log_origins: {
            let mut o: Vec<(String, String)> = prog.log_formats.iter().filter_map(|f| f.origin.clone()).collect();
            o.sort();
            o.dedup();
            o
        },
        stop_sites: l.stop_sites,
        probe_sites: prog.probe_sites.clone(),
        span: f.span,
    };
    Ok((kernel, overflowed))
}

/// Whether a kernel parameter was declared as a reference (`constant T&`):
/// its uses in the body are all dereferences.
fn is_reference_param(prog: &hir::Program, f: FuncId, local: LocalId) -> bool {
    fn uses(e: &hir::Expr, local: LocalId, deref_only: &mut bool, any: &mut bool) {
        match &e.kind {
            H::Deref(inner) if matches!(inner.kind, H::Local(l) if l == local) => {
                *any = true;
            }
            H::Local(l) if *l == local => {
                *any = true;
                *deref_only = false;
            }
            _ => visit_children(e, &mut |c| uses(c, local, deref_only, any)),
        }
    }
    let mut deref_only = true;
    let mut any = false;
    visit_stmts(&prog.function(f).body, &mut |e| uses(e, local, &mut deref_only, &mut any));
    any && deref_only
        && matches!(&prog.function(f).local(local).ty, Type::Pointer { pointee, .. } if pointee.is_scalar() || pointee.is_vector())
}

/// Metal refuses to build a pipeline when a function constant the kernel
/// uses has no value, unless `is_function_constant_defined` names it.
fn required_constants_given(prog: &hir::Program, kernel: FuncId) -> LResult<()> {
    if prog.function_constants.iter().all(|c| c.defined || c.optional) {
        return Ok(());
    }
    let mut globals = HashSet::new();
    let mut seen = HashSet::new();
    let mut todo = vec![kernel];
    while let Some(f) = todo.pop() {
        if !seen.insert(f) {
            continue;
        }
        fn walk(e: &hir::Expr, globals: &mut HashSet<hir::GlobalId>, todo: &mut Vec<FuncId>) {
            match &e.kind {
                H::Global(g) => {
                    globals.insert(*g);
                }
                H::Call { func, .. } | H::FuncRef(func) => todo.push(*func),
                _ => {}
            }
            visit_children(e, &mut |c| walk(c, globals, todo));
        }
        visit_stmts(&prog.function(f).body, &mut |e| walk(e, &mut globals, &mut todo));
    }
    for c in &prog.function_constants {
        if !c.defined && !c.optional && globals.contains(&c.global) {
            let span = prog.globals[c.global.0 as usize].span;
            return Err(LowerError {
                span,
                is_limitation: false,
                message: format!(
                    "function constant `{}` (index {}) has no value, and the kernel uses it: give one with `--constant {}=VALUE` (or check it with `is_function_constant_defined`)",
                    c.name, c.index, c.name
                ),
            });
        }
    }
    Ok(())
}

fn visit_stmts(stmts: &[hir::Stmt], f: &mut dyn FnMut(&hir::Expr)) {
    for s in stmts {
        match &s.kind {
            StmtKind::Expr(e) => f(e),
            StmtKind::Local { init: Some(e), .. } => f(e),
            StmtKind::Block(b) => visit_stmts(b, f),
            StmtKind::If { cond, then, els } => {
                f(cond);
                visit_stmts(then, f);
                visit_stmts(els, f);
            }
            StmtKind::Loop { cond, body, step, .. } => {
                if let Some(c) = cond {
                    f(c);
                }
                visit_stmts(body, f);
                if let Some(s) = step {
                    f(s);
                }
            }
            StmtKind::Switch { cond, cases } => {
                f(cond);
                for c in cases {
                    visit_stmts(&c.body, f);
                }
            }
            StmtKind::Return(Some(e)) => f(e),
            _ => {}
        }
    }
}

fn visit_children(e: &hir::Expr, f: &mut dyn FnMut(&hir::Expr)) {
    match &e.kind {
        H::Const(_) | H::Local(_) | H::Global(_) | H::Zero | H::Uninit | H::FuncRef(_) => {}
        H::CallPtr { callee, args } => {
            f(callee);
            args.iter().for_each(f)
        }
        H::ArrayInit { items, rest } => {
            items.iter().for_each(&mut *f);
            f(rest)
        }
        H::Deref(x)
        | H::Field { base: x, .. }
        | H::Swizzle { base: x, .. }
        | H::AddrOf(x)
        | H::Unary { operand: x, .. }
        | H::Convert(x)
        | H::BitCast(x)
        | H::PtrCast(x) => f(x),
        H::IncDec { place, .. } => f(place),
        H::Index { base, index } => {
            f(base);
            f(index)
        }
        H::PtrOffset { ptr, offset, .. } => {
            f(ptr);
            f(offset)
        }
        H::PtrDiff { lhs, rhs }
        | H::PtrCompare { lhs, rhs, .. }
        | H::Binary { lhs, rhs, .. }
        | H::Logical { lhs, rhs, .. }
        | H::Comma { lhs, rhs } => {
            f(lhs);
            f(rhs)
        }
        H::Assign { place, value } | H::CompoundAssign { place, value, .. } => {
            f(place);
            f(value)
        }
        H::Conditional { cond, then, els } => {
            f(cond);
            f(then);
            f(els)
        }
        H::Construct(xs) | H::Aggregate(xs) => xs.iter().for_each(f),
        H::Call { args, .. } | H::Builtin { args, .. } => args.iter().for_each(f),
    }
}

/// The local a place expression is rooted at (through fields, indexing of
/// arrays and vectors, swizzles).
fn root_local(e: &hir::Expr) -> Option<LocalId> {
    match &e.kind {
        H::Local(l) => Some(*l),
        H::Index { base, .. } | H::Field { base, .. } | H::Swizzle { base, .. } => root_local(base),
        _ => None,
    }
}

fn scalar_of(t: &Type, tables: &TypeTables) -> Option<Scalar> {
    match t {
        Type::Scalar(s) => Some(*s),
        Type::Vector { elem, .. } | Type::Matrix { elem, .. } => Some(*elem),
        Type::Enum(id) => Some(tables.enum_def(*id).underlying),
        Type::BuiltinEnum(_) => Some(Scalar::Int),
        _ => None,
    }
}

/// Number of register components of a value type (None: lives in memory).
/// `T a[3][4]` → [3, 4] when the innermost element is a scalar.
fn array_dims(t: &Type) -> Vec<u32> {
    let mut dims = Vec::new();
    let mut t = t;
    while let Type::Array { elem, len } = t {
        dims.push(*len);
        t = elem;
    }
    if t.is_scalar() {
        dims
    } else {
        Vec::new()
    }
}

fn components(t: &Type, tables: &TypeTables) -> Option<(Scalar, usize)> {
    match t {
        Type::Scalar(s) => Some((*s, 1)),
        Type::Vector { elem, len, .. } => Some((*elem, *len as usize)),
        Type::Matrix { elem, cols, rows } => Some((*elem, (*cols as usize) * (*rows as usize))),
        Type::Enum(id) => Some((tables.enum_def(*id).underlying, 1)),
        Type::BuiltinEnum(_) => Some((Scalar::Int, 1)),
        // A function pointer held at run time: its function's number + 1 (0: null).
        Type::Pointer { .. } | Type::NullPtr | Type::FnPtr { .. } => Some((Scalar::ULong, 1)),
        Type::SimdMatrix { elem, .. } => Some((*elem, 2)),
        _ => None,
    }
}

impl<'p> Lowerer<'p> {
    /// Stop with an error naming the budget once the kernel outgrows
    /// [`MAX_LOWERED_SIZE`]; called wherever the lowering loops or recurses.
    fn check_size(&self, span: Span) -> LResult<()> {
        let size = self.n32 as u64 + 2 * self.n64 as u64 + self.accesses.len() as u64 + self.inlined_calls;
        if size <= MAX_LOWERED_SIZE {
            return Ok(());
        }
        let here = self.frames.last().map(|f| format!(" (while inlining `{}`)", self.prog.function(f.func).name)).unwrap_or_default();
        err(
            span,
            format!(
                "this kernel is too large to simulate: with every call inlined it needs more than {MAX_LOWERED_SIZE} units of code \
                 (registers, memory accesses and calls; {} calls inlined so far){here}; the limit is fixed: a function that calls \
                 two others, each calling two others, doubles the code at every level — call fewer functions per level or split the kernel",
                self.inlined_calls
            ),
        )
    }

    fn reg32(&mut self) -> Reg {
        self.n32 += 1;
        Reg::W32(self.n32 - 1)
    }

    fn reg64(&mut self) -> Reg {
        self.n64 += 1;
        Reg::W64(self.n64 - 1)
    }

    fn reg_for(&mut self, s: Scalar) -> Reg {
        if is_wide(s) {
            self.reg64()
        } else {
            self.reg32()
        }
    }

    fn access(&mut self, span: Span, what: impl Into<String>) -> AccessId {
        self.accesses.push(Access { span, what: what.into() });
        self.accesses.len() as u32 - 1
    }

    fn frame(&self) -> &Frame {
        self.frames.last().expect("frame")
    }

    fn func(&self) -> &'p hir::Function {
        self.prog.function(self.frame().func)
    }

    fn compute_addr_taken(&mut self, f: FuncId) {
        if self.addr_taken.contains_key(&f) {
            return;
        }
        let mut set = HashSet::new();
        let mut assigned = HashSet::new();
        fn walk(e: &hir::Expr, set: &mut HashSet<LocalId>, assigned: &mut HashSet<LocalId>) {
            if let H::AddrOf(x) = &e.kind {
                if let Some(l) = root_local(x) {
                    set.insert(l);
                    assigned.insert(l);
                }
            }
            if let H::Assign { place, .. } | H::CompoundAssign { place, .. } | H::IncDec { place, .. } = &e.kind {
                if let Some(l) = root_local(place) {
                    assigned.insert(l);
                }
            }
            // Indexing an array local needs memory too, and so does taking a
            // column of a matrix local (a column is a place of its own).
            if let H::Index { base, .. } = &e.kind {
                if let Some(l) = root_local(base) {
                    if matches!(base.ty, Type::Array { .. } | Type::Matrix { .. }) {
                        set.insert(l);
                    }
                }
            }
            visit_children(e, &mut |c| walk(c, set, assigned));
        }
        visit_stmts(&self.prog.function(f).body, &mut |e| walk(e, &mut set, &mut assigned));
        self.addr_taken.insert(f, set);
        self.assigned.insert(f, assigned);
    }

    // ----- statements ----------------------------------------------------

    fn stmts(&mut self, stmts: &[hir::Stmt]) -> LResult<Block> {
        let mut out = Vec::new();
        // Locals declared in this block go out of scope at its end.
        let scope = self.frame().visible.len();
        for s in stmts {
            self.stmt(s, &mut out)?;
        }
        if let Some(f) = self.frames.last_mut() {
            f.visible.truncate(scope);
        }
        Ok(out)
    }

    /// A debugger stop before the statement at `span` (see `stops.rs`).
    fn stop_here(&mut self, span: Span, out: &mut Block) {
        let vars = self.frame().visible.iter().filter_map(|&id| self.var_view(id)).collect();
        let site = crate::stops::StopSite { span, depth: self.frames.len() as u32, func: self.func().name.clone(), vars };
        self.stop_sites.push(site);
        out.push(Inst::Stop { site: self.stop_sites.len() as u32 - 1 });
    }

    /// For the debugger's `finish`: the value just stored in `place`, the
    /// function's return slot.
    fn returned(&mut self, place: &Place, out: &mut Block) {
        use crate::stops::Home;
        let ret = &self.func().ret;
        let home = match place {
            Place::Regs(r) => Home::Regs(r.clone()),
            Place::Mem { ptr, .. } => Home::Referee(*ptr),
            _ => return,
        };
        let layout = Box::new(layout_of(ret, self.tables, 0));
        out.push(Inst::Returned { depth: self.frames.len() as u32, home, layout });
    }

    /// Where local `id` lives and how to read it, for the debugger.
    fn var_view(&self, id: LocalId) -> Option<crate::stops::VarView> {
        use crate::stops::{Home, VarView};
        let local = self.func().local(id);
        // The checker's own locals (a range-based `for`'s index and range)
        // are not the user's variables.
        if local.name.is_empty() || local.origin != LocalOrigin::Source {
            return None;
        }
        if let (true, Type::Pointer { pointee, .. }, Storage::Regs(r)) = (local.is_ref, &local.ty, &self.frame().locals[id.0 as usize]) {
            if let [p] = r.as_slice() {
                return Some(VarView { name: local.name.clone(), home: Home::Referee(*p), layout: layout_of(pointee, self.tables, 0) });
            }
        }
        let home = match &self.frame().locals[id.0 as usize] {
            Storage::Regs(r) => Home::Regs(r.clone()),
            Storage::Private(v) => Home::Memory(ptr_bits(AllocId::private(*v), 0)),
            Storage::Threadgroup(v) => Home::Memory(ptr_bits(AllocId::threadgroup(*v), 0)),
            Storage::Func(_) | Storage::Unset => return None,
        };
        Some(VarView { name: local.name.clone(), home, layout: layout_of(&local.ty, self.tables, 0) })
    }

    fn stmt(&mut self, s: &hir::Stmt, out: &mut Block) -> LResult<()> {
        self.check_size(s.span)?;
        self.stmt_span = s.span;
        // Nested blocks recurse: grow the stack on the heap when deep.
        stacker::maybe_grow(64 * 1024, 1024 * 1024, || self.stmt_inner(s, out))
    }

    fn stmt_inner(&mut self, s: &hir::Stmt, out: &mut Block) -> LResult<()> {
        // (A loop counts each test of its condition instead: see below.)
        let is_probe = matches!(&s.kind, StmtKind::Probe { .. });
        if self.options.statement_marks && !is_probe && !matches!(s.kind, StmtKind::Block(_) | StmtKind::Loop { .. }) {
            let at = self.access(s.span, "statement");
            out.push(Inst::Mark { at });
        }
        if self.options.debug_stops && !is_probe && !matches!(s.kind, StmtKind::Block(_) | StmtKind::Loop { .. }) {
            self.stop_here(s.span, out);
        }
        match &s.kind {
            StmtKind::Expr(e) => {
                self.expr(e, out)?;
            }
            StmtKind::Probe { site, exprs } => self.probe(*site, exprs, out)?,
            // A function pointer never changed: its function, known now.
            StmtKind::Local { local, init: Some(init) }
                if matches!(init.ty, Type::FnPtr { .. }) && !self.is_assigned(*local) && self.static_fn(init).is_some() =>
            {
                if let Some(f) = self.static_fn(init) {
                    self.bind_fn(*local, f);
                }
            }
            StmtKind::Local { local, init } => {
                // A variable declared without a value lives in memory so the
                // sanitizer can tell a read before the first write.
                let place = self.declare_local_in(*local, s.span, init.is_none())?;
                if let Some(init) = init {
                    self.store_expr_into(&place, init, out)?;
                }
            }
            StmtKind::Block(b) => {
                let inner = self.stmts(b)?;
                out.extend(inner);
            }
            StmtKind::If { cond, then, els } => {
                let c = self.scalar(cond, out)?;
                let then = self.stmts(then)?;
                let els = self.stmts(els)?;
                let at = self.access(cond.span, "if");
                out.push(Inst::If { cond: c, then, els, at });
            }
            StmtKind::Loop { cond, body, step, check_first } => {
                let mut cond_block = Vec::new();
                if self.options.statement_marks {
                    let at = self.access(s.span, "statement");
                    cond_block.push(Inst::Mark { at });
                }
                if self.options.debug_stops {
                    self.stop_here(s.span, &mut cond_block);
                }
                let c = match cond {
                    Some(c) => Some(self.scalar(c, &mut cond_block)?),
                    None => None,
                };
                let body = self.stmts(body)?;
                let mut step_block = Vec::new();
                if let Some(st) = step {
                    self.expr(st, &mut step_block)?;
                }
                let at = self.access(s.span, "loop");
                out.push(Inst::Loop { cond_block, cond: c, body, step: step_block, check_first: *check_first, at });
            }
            StmtKind::Switch { cond, cases } => {
                let v = self.scalar(cond, out)?;
                let ty = scalar_of(&cond.ty, self.tables).unwrap_or(Scalar::Int);
                let mut lcases = Vec::new();
                for c in cases {
                    let vals = c.values.iter().map(|&v| const_bits(ConstValue::Int(v), ty)).collect();
                    lcases.push((vals, c.is_default, self.stmts(&c.body)?));
                }
                out.push(Inst::Switch { value: v, ty, cases: lcases });
            }
            StmtKind::Break => out.push(Inst::Break),
            StmtKind::Continue => out.push(Inst::Continue),
            StmtKind::Return(v) => {
                if let Some(v) = v {
                    let place = self.frame().ret.clone();
                    if let Some(place) = place {
                        self.store_expr_into(&place, v, out)?;
                        if self.options.debug_stops && self.frames.len() > 1 {
                            self.returned(&place, out);
                        }
                    } else {
                        self.expr(v, out)?;
                    }
                }
                let at = self.access(s.span, "return");
                out.push(Inst::Return { at });
            }
        }
        Ok(())
    }

    /// A debugger probe (see `probe.rs`): record the values of `exprs`.
    fn probe(&mut self, site: u32, exprs: &[hir::Expr], out: &mut Block) -> LResult<()> {
        let mut body = Vec::new();
        for (slot, e) in exprs.iter().enumerate() {
            // Printing must not change what the kernel computes.
            if let Some((at, why)) = crate::probe::side_effect(self.prog, e) {
                return Err(LowerError {
                    span: at,
                    message: format!("a printed expression must not change the kernel: this one {why}"),
                    is_limitation: false,
                });
            }
            // A value in memory is read there, by its layout: bytes never
            // written show as `?`, and a whole struct or array prints.
            if e.is_place() && !matches!(e.ty, Type::Pointer { .. } | Type::NullPtr | Type::SimdMatrix { .. }) {
                let mut addr = Vec::new();
                if let Place::Mem { ptr, ty, .. } = self.place(e, &mut addr)? {
                    body.extend(addr);
                    let layout = Box::new(layout_of(&ty, self.tables, 0));
                    body.push(Inst::ProbeAt { probe: site, slot: slot as u32, layout, ptr });
                    continue;
                }
            }
            let kind = match &e.ty {
                Type::Pointer { .. } | Type::NullPtr => crate::probe::ProbeKind::Pointer,
                Type::SimdMatrix { .. } => return err(e.span, "cannot print a simdgroup_matrix; print single values instead"),
                t => match components(t, self.tables) {
                    Some((sc, _)) => crate::probe::ProbeKind::Value(sc),
                    None => {
                        return err(
                            e.span,
                            format!("cannot print a whole `{}`; print its elements or fields instead", self.tables.display(t)),
                        )
                    }
                },
            };
            let regs = self.regs(e, &mut body)?;
            body.push(Inst::Probe { probe: site, slot: slot as u32, kind, regs });
        }
        out.push(Inst::Probing { body });
        Ok(())
    }

    /// Give a local its storage (registers or memory) and return its place.
    fn declare_local(&mut self, id: LocalId, span: Span) -> LResult<Place> {
        self.declare_local_in(id, span, false)
    }

    fn declare_local_in(&mut self, id: LocalId, span: Span, force_memory: bool) -> LResult<Place> {
        let local = self.func().local(id).clone();
        let in_memory = force_memory && !matches!(local.ty, Type::SimdMatrix { .. })
            || self.addr_taken.get(&self.frame().func).is_some_and(|s| s.contains(&id));
        let storage = if local.space == AddressSpace::Threadgroup {
            let size = self.tables.size_of(&local.ty) as u32;
            let align = self.tables.align_of(&local.ty) as u32;
            let grain = min_scalar_size(&local.ty, self.tables);
            let dims = array_dims(&local.ty);
            self.tg_vars.push(MemVar { name: local.name.clone(), size, align, span: local.span, grain, dims });
            Storage::Threadgroup(self.tg_vars.len() as u32 - 1)
        } else {
            match components(&local.ty, self.tables) {
                Some((s, n)) if !in_memory => Storage::Regs((0..n).map(|_| self.reg_for(s)).collect()),
                _ => {
                    let size = self.tables.size_of(&local.ty).max(1) as u32;
                    let align = self.tables.align_of(&local.ty).max(1) as u32;
                    self.private_vars.push(MemVar { name: local.name.clone(), size, align, span: local.span, grain: 1, dims: Vec::new() });
                    Storage::Private(self.private_vars.len() as u32 - 1)
                }
            }
        };
        let _ = span;
        let frame = self.frames.last_mut().expect("frame");
        frame.locals[id.0 as usize] = storage;
        if !frame.visible.contains(&id) {
            frame.visible.push(id);
        }
        self.local_place(id, span)
    }

    fn local_place(&mut self, id: LocalId, span: Span) -> LResult<Place> {
        let ty = self.func().local(id).ty.clone();
        let storage = self.frame().locals[id.0 as usize].clone();
        match storage {
            Storage::Regs(r) => Ok(Place::Regs(r)),
            Storage::Private(v) => {
                let ptr = self.const_ptr(AllocId::private(v), 0);
                Ok(Place::Mem { ptr, space: AddressSpace::Thread, ty })
            }
            Storage::Threadgroup(v) => {
                let ptr = self.const_ptr(AllocId::threadgroup(v), 0);
                Ok(Place::Mem { ptr, space: AddressSpace::Threadgroup, ty })
            }
            Storage::Unset => {
                // A local used before its declaration ran (e.g. jumped over by
                // a switch): give it storage now.
                self.declare_local(id, span)
            }
            // Bound at compile time and never written: its value, read.
            Storage::Func(f) => Ok(Place::Regs(vec![self.const_reg(f.0 as u64 + 1, true)])),
        }
    }

    fn const_ptr(&mut self, alloc: AllocId, offset: i64) -> Reg {
        self.const_reg(ptr_bits(alloc, offset), true)
    }

    /// A register holding `bits` in every lane (shared, set in the prologue;
    /// never written afterwards).
    pub(crate) fn const_reg(&mut self, bits: u64, wide: bool) -> Reg {
        if let Some(r) = self.const_cache.get(&(bits, wide)) {
            return *r;
        }
        let r = if wide { self.reg64() } else { self.reg32() };
        self.pending_consts.push(Inst::Const { dst: r, bits });
        self.const_cache.insert((bits, wide), r);
        r
    }

    pub(crate) fn const_scalar(&mut self, v: ConstValue, s: Scalar) -> Reg {
        self.const_reg(const_bits(v, s), is_wide(s))
    }
}

/// Register bits of a constant of scalar type `s`: the one arithmetic's
/// value (`ConstValue::to_bits`), with narrow integers kept sign- or
/// zero-extended to 32 bits as registers hold them.
pub(crate) fn const_bits(v: ConstValue, s: Scalar) -> u64 {
    let bits = v.to_bits(s);
    match s {
        Scalar::Long | Scalar::ULong => bits,
        _ => bits as u32 as u64,
    }
}

/// How the debugger reads a value of type `t` (`stops::Layout`); `depth`
/// bounds nesting so a deep type cannot blow the stack.
fn layout_of(t: &Type, tables: &TypeTables, depth: u32) -> crate::stops::Layout {
    use crate::stops::Layout;
    if depth > 8 {
        return Layout::Opaque(tables.display(t));
    }
    match t {
        Type::Scalar(s) | Type::Atomic(s) => Layout::Scalar(*s),
        Type::Enum(id) => Layout::Scalar(tables.enum_def(*id).underlying),
        Type::Pointer { .. } | Type::NullPtr => Layout::Pointer,
        Type::Vector { elem, len, .. } => Layout::Vector { elem: *elem, n: *len as u32, name: tables.display(t) },
        Type::Matrix { elem, cols, rows } => Layout::Vector { elem: *elem, n: (*cols as u32) * (*rows as u32), name: tables.display(t) },
        Type::Array { elem, len } => Layout::Array {
            elem: Box::new(layout_of(elem, tables, depth + 1)),
            len: *len,
            stride: tables.size_of(elem).min(u32::MAX as u64) as u32,
        },
        Type::Struct(id) => Layout::Struct {
            fields: tables.struct_def(*id).fields.iter().map(|f| (f.name.clone(), f.offset, layout_of(&f.ty, tables, depth + 1))).collect(),
        },
        Type::SimdMatrix { elem, rows: 8, cols: 8 } => Layout::SimdMatrix { elem: *elem, name: tables.display(t) },
        _ => Layout::Opaque(tables.display(t)),
    }
}

/// Size of the smallest scalar a type is made of (1 for anything odd).
fn min_scalar_size(t: &Type, tables: &TypeTables) -> u32 {
    match t {
        Type::Scalar(s) | Type::Atomic(s) => s.size(),
        Type::Vector { elem, .. } | Type::Matrix { elem, .. } => elem.size(),
        Type::Array { elem, .. } => min_scalar_size(elem, tables),
        Type::Struct(id) => tables.struct_def(*id).fields.iter().map(|f| min_scalar_size(&f.ty, tables)).min().unwrap_or(1),
        Type::Enum(id) => tables.enum_def(*id).underlying.size(),
        _ => 1,
    }
}
