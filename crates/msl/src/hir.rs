//! The checked program: every name resolved, every expression typed, every
//! implicit conversion explicit, templates instantiated. This is what the
//! executor lowers; it never needs to look at the AST again.
//!
//! Expressions that denote memory (locals, dereferences, indexing, fields,
//! swizzles) are *places*; `Expr::is_place` says so. A place used as a value
//! is read; used on the left of an assignment or under `&` it is written or
//! addressed. There is no separate load node.

use crate::ast::{AddressSpace, BinaryOp};
pub use crate::builtins::BuiltinId;
use crate::source::Span;
use crate::types::{Scalar, Type, TypeTables};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FuncId(pub u32);

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LocalId(pub u32);

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GlobalId(pub u32);

/// A compile-time scalar value, stored widened.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ConstValue {
    Bool(bool),
    Int(i64),
    UInt(u64),
    Float(f64),
}

impl ConstValue {
    pub fn as_i64(self) -> i64 {
        match self {
            ConstValue::Bool(b) => b as i64,
            ConstValue::Int(v) => v,
            ConstValue::UInt(v) => v as i64,
            ConstValue::Float(f) => f as i64,
        }
    }

    pub fn as_f64(self) -> f64 {
        match self {
            ConstValue::Bool(b) => b as i64 as f64,
            ConstValue::Int(v) => v as f64,
            ConstValue::UInt(v) => v as f64,
            ConstValue::Float(f) => f,
        }
    }

    pub fn is_true(self) -> bool {
        match self {
            ConstValue::Float(f) => f != 0.0,
            v => v.as_i64() != 0,
        }
    }

    /// Convert to scalar type `s` with the executor's arithmetic
    /// (`gpu_math::scalar`): integers wrap, floats round once to the kind,
    /// floats truncate into integers saturating (see [`Self::cast_checked`]).
    pub fn cast(self, s: Scalar) -> ConstValue {
        self.cast_checked(s).0
    }

    /// [`Self::cast`], also saying when C++ leaves the conversion undefined
    /// (a floating value outside the integer type's range).
    pub fn cast_checked(self, s: Scalar) -> (ConstValue, Option<gpu_math::scalar::Undefined>) {
        use gpu_math::scalar::{self as arith, ScalarType};
        let (from, bits) = match self {
            ConstValue::Bool(b) => (ScalarType::Bool, b as u64),
            ConstValue::Int(v) => (Scalar::Long.arith(), v as u64),
            ConstValue::UInt(v) => (Scalar::ULong.arith(), v),
            ConstValue::Float(f) if s.is_float() => {
                // A literal's f64 rounds once, straight to the kind.
                return (ConstValue::Float(gpu_math::round_f64_to(s.float_kind(), f) as f64), None);
            }
            // Floating constants hold values of their own kind, all exact in f32.
            ConstValue::Float(f) => (Scalar::Float.arith(), (f as f32).to_bits() as u64),
        };
        let (bits, undefined) = arith::convert_checked(from, s.arith(), bits);
        (ConstValue::from_bits(s, bits), undefined)
    }

    /// The lane bits (`gpu_math::scalar`'s form) of this value as type `s`.
    pub fn to_bits(self, s: Scalar) -> u64 {
        match self.cast(s) {
            ConstValue::Bool(b) => b as u64,
            ConstValue::Int(v) => v as u64,
            ConstValue::UInt(v) => v,
            ConstValue::Float(f) => (f as f32).to_bits() as u64,
        }
    }

    /// The value of type `s` whose lane bits are `bits`.
    pub fn from_bits(s: Scalar, bits: u64) -> ConstValue {
        match s {
            Scalar::Bool => ConstValue::Bool(bits & 1 != 0),
            _ if s.is_float() => ConstValue::Float(f32::from_bits(bits as u32) as f64),
            _ if s.is_signed() => ConstValue::Int(bits as i64),
            _ => ConstValue::UInt(bits),
        }
    }
}

/// The thread-position attributes a kernel parameter can carry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ThreadAttr {
    ThreadPositionInGrid,
    ThreadPositionInThreadgroup,
    ThreadgroupPositionInGrid,
    ThreadsPerThreadgroup,
    ThreadsPerGrid,
    ThreadgroupsPerGrid,
    DispatchThreadsPerThreadgroup,
    GridOrigin,
    GridSize,
    ThreadIndexInThreadgroup,
    ThreadIndexInSimdgroup,
    ThreadIndexInQuadgroup,
    SimdgroupIndexInThreadgroup,
    SimdgroupsPerThreadgroup,
    DispatchSimdgroupsPerThreadgroup,
    QuadgroupIndexInThreadgroup,
    QuadgroupsPerThreadgroup,
    DispatchQuadgroupsPerThreadgroup,
    ThreadExecutionWidth,
    ThreadsPerSimdgroup,
}

impl ThreadAttr {
    pub const ALL: [(&'static str, ThreadAttr); 20] = [
        ("thread_position_in_grid", ThreadAttr::ThreadPositionInGrid),
        ("thread_position_in_threadgroup", ThreadAttr::ThreadPositionInThreadgroup),
        ("threadgroup_position_in_grid", ThreadAttr::ThreadgroupPositionInGrid),
        ("threads_per_threadgroup", ThreadAttr::ThreadsPerThreadgroup),
        ("threads_per_grid", ThreadAttr::ThreadsPerGrid),
        ("threadgroups_per_grid", ThreadAttr::ThreadgroupsPerGrid),
        ("dispatch_threads_per_threadgroup", ThreadAttr::DispatchThreadsPerThreadgroup),
        ("grid_origin", ThreadAttr::GridOrigin),
        ("grid_size", ThreadAttr::GridSize),
        ("thread_index_in_threadgroup", ThreadAttr::ThreadIndexInThreadgroup),
        ("thread_index_in_simdgroup", ThreadAttr::ThreadIndexInSimdgroup),
        ("thread_index_in_quadgroup", ThreadAttr::ThreadIndexInQuadgroup),
        ("simdgroup_index_in_threadgroup", ThreadAttr::SimdgroupIndexInThreadgroup),
        ("simdgroups_per_threadgroup", ThreadAttr::SimdgroupsPerThreadgroup),
        ("dispatch_simdgroups_per_threadgroup", ThreadAttr::DispatchSimdgroupsPerThreadgroup),
        ("quadgroup_index_in_threadgroup", ThreadAttr::QuadgroupIndexInThreadgroup),
        ("quadgroups_per_threadgroup", ThreadAttr::QuadgroupsPerThreadgroup),
        ("dispatch_quadgroups_per_threadgroup", ThreadAttr::DispatchQuadgroupsPerThreadgroup),
        ("thread_execution_width", ThreadAttr::ThreadExecutionWidth),
        ("threads_per_simdgroup", ThreadAttr::ThreadsPerSimdgroup),
    ];

    pub fn from_name(name: &str) -> Option<ThreadAttr> {
        Self::ALL.iter().find(|(n, _)| *n == name).map(|(_, a)| *a)
    }

    pub fn name(self) -> &'static str {
        Self::ALL.iter().find(|(_, a)| *a == self).map(|(n, _)| *n).unwrap_or("?")
    }

    /// Vector-valued attributes (the others are a single `uint`/`ushort`).
    pub fn is_vector(self) -> bool {
        use ThreadAttr::*;
        matches!(
            self,
            ThreadPositionInGrid
                | ThreadPositionInThreadgroup
                | ThreadgroupPositionInGrid
                | ThreadsPerThreadgroup
                | ThreadsPerGrid
                | ThreadgroupsPerGrid
                | DispatchThreadsPerThreadgroup
                | GridOrigin
                | GridSize
        )
    }
}

/// How a kernel parameter gets its value.
#[derive(Clone, Debug, PartialEq)]
pub enum Binding {
    /// `[[buffer(n)]]` (pointer or `constant T&`).
    Buffer(u32),
    /// `[[threadgroup(n)]]`: a threadgroup pointer sized at dispatch.
    Threadgroup(u32),
    Attr(ThreadAttr),
    /// A parameter of an ordinary (non-kernel) function.
    Argument,
    /// A kernel parameter whose `[[function_constant(c)]]` is false: not
    /// part of the kernel's interface; it reads as zero (a null pointer).
    Absent,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Local {
    pub name: String,
    pub ty: Type,
    /// `Thread` for ordinary locals, `Threadgroup` for `threadgroup T x[N];`.
    pub space: AddressSpace,
    pub is_const: bool,
    pub span: Span,
    pub origin: LocalOrigin,
    /// A reference (`constant P& p`, `thread float& x`): `ty` is the
    /// pointer it holds, and uses of the name are its referee.
    pub is_ref: bool,
}

/// Who made a local: the program, or the checker (a temporary, the range
/// and index of a range-based `for`, an unnamed parameter), whose locals
/// are not the user's variables (a debugger does not show them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LocalOrigin {
    Source,
    Compiler,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    pub local: LocalId,
    pub binding: Binding,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Function {
    /// Display name, with template arguments for instances (`power<float, 3>`).
    pub name: String,
    /// Kernel entry name (`[[host_name]]` or the function name).
    pub host_name: Option<String>,
    pub is_kernel: bool,
    pub params: Vec<Param>,
    pub ret: Type,
    pub locals: Vec<Local>,
    pub body: Vec<Stmt>,
    pub span: Span,
}

impl Function {
    pub fn local(&self, id: LocalId) -> &Local {
        &self.locals[id.0 as usize]
    }
}

/// A program-scope `constant` variable with its (constant) initializer.
#[derive(Clone, Debug, PartialEq)]
pub struct Global {
    pub name: String,
    pub ty: Type,
    pub init: Expr,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Program {
    pub types: TypeTables,
    pub functions: Vec<Function>,
    pub globals: Vec<Global>,
    pub function_constants: Vec<FunctionConstant>,
    /// Formats of shader log calls (`__os_log` builtins name them by index).
    pub log_formats: Vec<LogFormat>,
    /// Where the debugger's probes were placed (`StmtKind::Probe::site`).
    pub probe_sites: Vec<crate::probe::ProbeSite>,
}

/// One `logger.log…("format", …)` call's format.
#[derive(Clone, Debug, PartialEq)]
pub struct LogFormat {
    pub text: String,
    /// `os_log_default` or the declared object's name.
    pub logger: String,
    /// The declared object's subsystem and category (`None` for
    /// `os_log_default`, which has neither).
    pub origin: Option<(String, String)>,
    /// `log`, `log_debug`, `log_info`, `log_error` or `log_fault`.
    pub level: &'static str,
    pub span: Span,
}

/// A `constant T name [[function_constant(index)]];` declaration.
#[derive(Clone, Debug, PartialEq)]
pub struct FunctionConstant {
    pub name: String,
    pub index: u32,
    pub global: GlobalId,
    /// A value was given for it.
    pub defined: bool,
    /// Named in `is_function_constant_defined`: it may stay undefined.
    pub optional: bool,
}

impl Program {
    pub fn function(&self, id: FuncId) -> &Function {
        &self.functions[id.0 as usize]
    }

    /// Kernels by their host (entry) name: instances of kernel templates
    /// only named, never explicitly instantiated, have none and are not here.
    pub fn kernels(&self) -> impl Iterator<Item = (FuncId, &Function)> {
        self.functions.iter().enumerate().filter(|(_, f)| f.is_kernel && f.host_name.is_some()).map(|(i, f)| (FuncId(i as u32), f))
    }

    /// The kernels' host names, in declaration order.
    pub fn kernel_names(&self) -> Vec<String> {
        self.kernels().filter_map(|(_, f)| f.host_name.clone()).collect()
    }

    pub fn kernel(&self, name: &str) -> Option<(FuncId, &Function)> {
        self.kernels().find(|(_, f)| f.host_name.as_deref() == Some(name))
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Stmt {
    pub kind: StmtKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct SwitchCase {
    /// Case values; empty with `is_default` for `default:`.
    pub values: Vec<i64>,
    pub is_default: bool,
    /// Statements from this label to the next; control falls through.
    pub body: Vec<Stmt>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum StmtKind {
    Expr(Expr),
    /// Declaration of a local, with its initializer (already converted to the
    /// local's type; `Init` node for aggregates). Threadgroup locals have no
    /// initializer and are allocated once per threadgroup.
    Local {
        local: LocalId,
        init: Option<Expr>,
    },
    Block(Vec<Stmt>),
    If {
        cond: Expr,
        then: Vec<Stmt>,
        els: Vec<Stmt>,
    },
    /// All loops. `for`: init goes before (in an enclosing Block), `cond`
    /// checked before each iteration, `step` after the body and after
    /// `continue`. `do/while`: `check_first` false.
    Loop {
        cond: Option<Expr>,
        body: Vec<Stmt>,
        step: Option<Expr>,
        check_first: bool,
    },
    Switch {
        cond: Expr,
        cases: Vec<SwitchCase>,
    },
    Break,
    Continue,
    Return(Option<Expr>),
    /// A debugger probe (see `probe.rs`): record these values for the
    /// watched thread; `site` indexes `Program::probe_sites`. The
    /// expressions only read (the lowering refuses any that writes).
    Probe {
        site: u32,
        exprs: Vec<Expr>,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    pub ty: Type,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnaryOp {
    Neg,
    Not,
    BitNot,
}

/// Scalar/vector arithmetic operators after the usual conversions: both
/// operands have the same type (shifts: lhs type, rhs converted to it).
pub type BinOp = BinaryOp;

#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    Const(ConstValue),
    /// Places.
    Local(LocalId),
    Global(GlobalId),
    /// `*p`, `p[i]`, `p->f` all become `Deref` of a pointer value.
    Deref(Box<Expr>),
    /// Element of an array place or value (`a[i]`), or of a vector (`v[i]`),
    /// or column of a matrix.
    Index {
        base: Box<Expr>,
        index: Box<Expr>,
    },
    /// Field of a struct place or value.
    Field {
        base: Box<Expr>,
        field: u32,
    },
    /// Vector components, e.g. `.xzy` = [0, 2, 1]. A place when the base is a
    /// place and the components are distinct.
    Swizzle {
        base: Box<Expr>,
        comps: Vec<u8>,
    },

    /// Address of a place. The type is the pointer type.
    AddrOf(Box<Expr>),
    /// Pointer plus/minus an integer count of elements.
    PtrOffset {
        ptr: Box<Expr>,
        offset: Box<Expr>,
        negate: bool,
    },
    /// Difference of two pointers in elements (a `long`).
    PtrDiff {
        lhs: Box<Expr>,
        rhs: Box<Expr>,
    },
    /// Pointer comparison (==, !=, <, ...) yielding bool.
    PtrCompare {
        op: BinOp,
        lhs: Box<Expr>,
        rhs: Box<Expr>,
    },

    Unary {
        op: UnaryOp,
        operand: Box<Expr>,
    },
    /// Arithmetic, bitwise, shifts and comparisons on scalars/vectors.
    /// Comparisons of vectors yield bool vectors.
    Binary {
        op: BinOp,
        lhs: Box<Expr>,
        rhs: Box<Expr>,
    },
    /// Short-circuit `&&` / `||` on scalar bools.
    Logical {
        and: bool,
        lhs: Box<Expr>,
        rhs: Box<Expr>,
    },
    /// `place = value` (value already converted). Yields the place.
    Assign {
        place: Box<Expr>,
        value: Box<Expr>,
    },
    /// `place op= value`: computed as `convert<place.ty>(convert<op_ty>(place) op value)`.
    /// `value` is already converted to `op_ty` (or to the shift type).
    CompoundAssign {
        op: BinOp,
        place: Box<Expr>,
        value: Box<Expr>,
        op_ty: Type,
    },
    /// `++x`, `x--`, ... on a scalar or pointer place.
    IncDec {
        place: Box<Expr>,
        increment: bool,
        prefix: bool,
    },
    Conditional {
        cond: Box<Expr>,
        then: Box<Expr>,
        els: Box<Expr>,
    },
    Comma {
        lhs: Box<Expr>,
        rhs: Box<Expr>,
    },

    /// Numeric conversion of a scalar or vector to `ty` (element-wise; a
    /// scalar to a vector splats). Float→int truncates toward zero.
    Convert(Box<Expr>),
    /// `as_type<T>(x)`: same size, reinterpret bits.
    BitCast(Box<Expr>),
    /// Reinterpret a pointer as another pointer type (same address space),
    /// e.g. `(device atomic_float*)&o[k]`, or enum <-> integer.
    PtrCast(Box<Expr>),
    /// Vector/matrix constructor from scalars and smaller vectors, flattened
    /// in order (`float4(v.xy, 0, 1)`); each part already of the element
    /// type (scalars) or a vector of it.
    Construct(Vec<Expr>),
    /// Aggregate (struct fields / array elements) in order; missing trailing
    /// members are zero (`Zero`).
    Aggregate(Vec<Expr>),
    /// The zero value of `ty` (`T{}`, missing aggregate members).
    Zero,
    /// No value: the memory keeps what it had. Only an item of `Aggregate`
    /// or `ArrayInit` (a member a default-initialized struct leaves unset, so
    /// the sanitizer still reports reading it before a write).
    Uninit,
    /// An array whose first elements are `items` and every later element is
    /// `rest` (evaluated once per element): `S a[8];` or `S a[8] = {x}` when
    /// S has default member initializers.
    ArrayInit {
        items: Vec<Expr>,
        rest: Box<Expr>,
    },

    /// Call of a user function; argument `k` is converted to parameter `k`'s
    /// type, or is a place for a reference parameter.
    Call {
        func: FuncId,
        args: Vec<Expr>,
    },
    /// The address of function `0`: a value of a `Type::FnPtr` type, known
    /// at compile time.
    FuncRef(FuncId),
    /// A call through a function pointer whose target the checker could not
    /// name (a function parameter): the lowering binds the pointer at each
    /// inlined call site and calls that function. Arguments are bound as
    /// for `Call`.
    CallPtr {
        callee: Box<Expr>,
        args: Vec<Expr>,
    },
    /// Call of a standard-library function, resolved to one overload.
    /// `param_types` are the concrete parameter types (reference/out params
    /// are passed as places).
    Builtin {
        id: BuiltinId,
        fast: bool,
        args: Vec<Expr>,
        param_types: Vec<Type>,
    },
}

impl Expr {
    /// Call `f` on this expression and every expression inside it.
    pub fn visit(&self, f: &mut dyn FnMut(&Expr)) {
        f(self);
        self.for_each_child(&mut |x| x.visit(f));
    }

    /// Call `f` on each expression directly inside this one, in order.
    pub fn for_each_child<'a>(&'a self, f: &mut dyn FnMut(&'a Expr)) {
        match &self.kind {
            ExprKind::Const(_) | ExprKind::Local(_) | ExprKind::Global(_) | ExprKind::Zero | ExprKind::Uninit | ExprKind::FuncRef(_) => {}
            ExprKind::CallPtr { callee, args } => {
                f(callee);
                args.iter().for_each(f)
            }
            ExprKind::ArrayInit { items, rest } => {
                items.iter().for_each(&mut *f);
                f(rest);
            }
            ExprKind::Deref(x)
            | ExprKind::AddrOf(x)
            | ExprKind::Convert(x)
            | ExprKind::BitCast(x)
            | ExprKind::PtrCast(x)
            | ExprKind::Field { base: x, .. }
            | ExprKind::Swizzle { base: x, .. }
            | ExprKind::Unary { operand: x, .. }
            | ExprKind::IncDec { place: x, .. } => f(x),
            ExprKind::Index { base: a, index: b }
            | ExprKind::PtrOffset { ptr: a, offset: b, .. }
            | ExprKind::PtrDiff { lhs: a, rhs: b }
            | ExprKind::PtrCompare { lhs: a, rhs: b, .. }
            | ExprKind::Binary { lhs: a, rhs: b, .. }
            | ExprKind::Logical { lhs: a, rhs: b, .. }
            | ExprKind::Assign { place: a, value: b }
            | ExprKind::CompoundAssign { place: a, value: b, .. }
            | ExprKind::Comma { lhs: a, rhs: b } => {
                f(a);
                f(b);
            }
            ExprKind::Conditional { cond, then, els } => {
                f(cond);
                f(then);
                f(els);
            }
            ExprKind::Construct(xs) | ExprKind::Aggregate(xs) | ExprKind::Call { args: xs, .. } | ExprKind::Builtin { args: xs, .. } => {
                xs.iter().for_each(f)
            }
        }
    }

    /// Whether this expression denotes memory (can be assigned or addressed).
    pub fn is_place(&self) -> bool {
        match &self.kind {
            ExprKind::Local(_) | ExprKind::Global(_) | ExprKind::Deref(_) => true,
            ExprKind::Index { base, .. } | ExprKind::Field { base, .. } => base.is_place(),
            ExprKind::Swizzle { base, .. } => base.is_place(),
            ExprKind::Assign { .. } | ExprKind::CompoundAssign { .. } => true,
            ExprKind::IncDec { prefix, .. } => *prefix,
            _ => false,
        }
    }
}
