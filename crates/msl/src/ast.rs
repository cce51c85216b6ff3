//! The syntax tree the parser produces: C++-shaped, every node with a span,
//! no meaning attached yet (the checker resolves names and types).

use crate::source::Span;
use std::rc::Rc;

#[derive(Clone, Debug, PartialEq)]
pub struct Ident {
    pub name: Rc<str>,
    pub span: Span,
}

/// `[[name(args)]]`; also `kernel`/`vertex` keywords are turned into attributes.
#[derive(Clone, Debug, PartialEq)]
pub struct Attribute {
    pub name: Ident,
    pub args: Vec<Expr>,
    pub span: Span,
}

/// One segment of a qualified name, with optional template arguments:
/// `numeric_limits<float>` in `metal::numeric_limits<float>::max`.
#[derive(Clone, Debug, PartialEq)]
pub struct PathSegment {
    pub ident: Ident,
    pub template_args: Option<Vec<TemplateArg>>,
}

/// A possibly qualified name. `global` is a leading `::`.
#[derive(Clone, Debug, PartialEq)]
pub struct Path {
    pub global: bool,
    pub segments: Vec<PathSegment>,
    pub span: Span,
}

impl Path {
    pub fn last(&self) -> &PathSegment {
        self.segments.last().expect("paths have at least one segment")
    }

    /// `a::b::c` without template arguments (for messages).
    pub fn plain_name(&self) -> String {
        let mut s = String::new();
        if self.global {
            s.push_str("::");
        }
        for (i, seg) in self.segments.iter().enumerate() {
            if i > 0 {
                s.push_str("::");
            }
            s.push_str(&seg.ident.name);
        }
        s
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum TemplateArg {
    Type(TypeExpr),
    Expr(Expr),
    /// `Ts...`: a pack expansion; one argument per element of the packs the
    /// pattern names.
    Pack(Box<TemplateArg>),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AddressSpace {
    Device,
    Constant,
    Threadgroup,
    Thread,
    /// `threadgroup_imageblock` and `ray_data` exist in MSL but not in compute
    /// kernels we run; the parser accepts them so the checker can explain.
    Other,
}

impl AddressSpace {
    pub fn keyword(self) -> &'static str {
        match self {
            AddressSpace::Device => "device",
            AddressSpace::Constant => "constant",
            AddressSpace::Threadgroup => "threadgroup",
            AddressSpace::Thread => "thread",
            AddressSpace::Other => "threadgroup_imageblock",
        }
    }
}

/// A type as written. Qualifiers on the base (`const device float`) apply
/// to the base; `Pointer { is_const }` is a `* const`.
#[derive(Clone, Debug, PartialEq)]
pub struct TypeExpr {
    pub kind: TypeExprKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum TypeExprKind {
    /// A named type: builtin (`float`, `uint3`), user (`Body`), template
    /// (`vec<float, 4>`, `atomic<int>`, `Pair<T>`), qualified (`metal::float4`).
    Named {
        path: Path,
        is_const: bool,
        is_volatile: bool,
        addr_space: Option<AddressSpace>,
    },
    /// `decltype(expr)` (MLX writes `decltype(kernel<T>)` in instantiations).
    Decltype {
        expr: Box<Expr>,
        is_const: bool,
        addr_space: Option<AddressSpace>,
    },
    Pointer {
        pointee: Box<TypeExpr>,
        is_const: bool,
    },
    Reference {
        referee: Box<TypeExpr>,
    },
    /// Array declarator: `float x[4]` has type `Array(float, 4)`. `size` is
    /// `None` for `T x[]` (only legal with an initializer).
    Array {
        elem: Box<TypeExpr>,
        size: Option<Box<Expr>>,
    },
    /// A function type `R(P1, P2)`, written under a pointer declarator:
    /// `R (*)(P1, P2)`, `R (*name)(P1, P2)` (parameter names are dropped).
    Function {
        ret: Box<TypeExpr>,
        params: Vec<TypeExpr>,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnaryOp {
    Neg,
    Plus,
    Not,
    BitNot,
    Deref,
    AddrOf,
    PreInc,
    PreDec,
    PostInc,
    PostDec,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinaryOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Shl,
    Shr,
    BitAnd,
    BitOr,
    BitXor,
    LogAnd,
    LogOr,
    Eq,
    Ne,
    Lt,
    Gt,
    Le,
    Ge,
}

impl BinaryOp {
    pub fn as_str(self) -> &'static str {
        use BinaryOp::*;
        match self {
            Add => "+",
            Sub => "-",
            Mul => "*",
            Div => "/",
            Rem => "%",
            Shl => "<<",
            Shr => ">>",
            BitAnd => "&",
            BitOr => "|",
            BitXor => "^",
            LogAnd => "&&",
            LogOr => "||",
            Eq => "==",
            Ne => "!=",
            Lt => "<",
            Gt => ">",
            Le => "<=",
            Ge => ">=",
        }
    }

    pub fn is_comparison(self) -> bool {
        use BinaryOp::*;
        matches!(self, Eq | Ne | Lt | Gt | Le | Ge)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CastKind {
    /// `(T)x`
    CStyle,
    /// `T(x)`, `T(a, b)`, `T{...}`: construction or conversion.
    Functional,
    Static,
    Reinterpret,
    Const,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    IntLit {
        value: u64,
        unsigned: bool,
        long: bool,
        decimal: bool,
    },
    FloatLit {
        value: f64,
        suffix: crate::token::FloatSuffix,
    },
    BoolLit(bool),
    CharLit(u32),
    StrLit(Rc<str>),
    /// `nullptr`
    Null,
    /// `this` inside a member function.
    This,
    /// A name: variable, function, enumerator, `metal::fast::exp`, `f<T>`.
    Name(Path),
    Unary {
        op: UnaryOp,
        operand: Box<Expr>,
    },
    Binary {
        op: BinaryOp,
        lhs: Box<Expr>,
        rhs: Box<Expr>,
    },
    /// `a = b` (`op` is None) or `a op= b`.
    Assign {
        op: Option<BinaryOp>,
        lhs: Box<Expr>,
        rhs: Box<Expr>,
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
    Call {
        callee: Box<Expr>,
        args: Vec<Expr>,
    },
    Index {
        base: Box<Expr>,
        index: Box<Expr>,
    },
    /// `base.name` or `base->name` (`arrow`); swizzles are members too.
    /// `targs` holds explicit template arguments of a member function
    /// template (`op.template reduce<4>(…)`).
    Member {
        base: Box<Expr>,
        name: Ident,
        arrow: bool,
        targs: Option<Vec<TemplateArg>>,
    },
    /// Casts and constructions. For `Functional` with several arguments or
    /// braces, `args` holds them all; for other kinds `args` has one element.
    Cast {
        kind: CastKind,
        ty: TypeExpr,
        args: Vec<Expr>,
        braces: bool,
    },
    SizeofType(TypeExpr),
    SizeofExpr(Box<Expr>),
    AlignofType(TypeExpr),
    /// `{a, b, c}` in an initializer or argument.
    InitList(Vec<Expr>),
    /// An item of an initializer list that names its place: `[2] = v`,
    /// GNU's `[0 ... 3] = v` (both ends included), or `.field = v`.
    Designated {
        designator: Designator,
        value: Box<Expr>,
    },
    /// `pattern...` in an argument or initializer list: the pattern once per
    /// element of the parameter packs it names.
    PackExpansion(Box<Expr>),
    /// `decltype(x)::name`: a static member of a type that is not a plain
    /// name (a `decltype`).
    TypeMember {
        ty: TypeExpr,
        name: Ident,
    },
    /// `sizeof...(Ts)`: the number of elements of a parameter pack.
    SizeofPack(Ident),
    /// A fold expression: `(pack op ...)` (right fold), `(... op pack)`
    /// (left fold), with an optional initial value `init` (`(pack op ... op
    /// init)`, `(init op ... op pack)`; the parser cannot tell which operand
    /// is the pack, so `pack` is the first operand and `left` is false, and
    /// the checker swaps them when only `init` names a pack). `op` is `None`
    /// for the comma operator.
    Fold {
        op: Option<BinaryOp>,
        pack: Box<Expr>,
        init: Option<Box<Expr>>,
        left: bool,
    },
}

/// Where a designated initializer puts its value.
#[derive(Clone, Debug, PartialEq)]
pub enum Designator {
    Index(Box<Expr>),
    Range(Box<Expr>, Box<Expr>),
    Field(Ident),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Stmt {
    pub kind: StmtKind,
    pub span: Span,
}

/// One declarator of a declaration statement: `float a = 1, b[4];` has two.
#[derive(Clone, Debug, PartialEq)]
pub struct VarDecl {
    pub name: Ident,
    /// Full type including array/pointer parts of this declarator.
    pub ty: TypeExpr,
    pub init: Option<Init>,
    pub attrs: Vec<Attribute>,
    pub is_constexpr: bool,
    pub is_static: bool,
    /// `template <class T> constexpr bool v<S<T>> = ...;`: the arguments of
    /// a (partial) specialization of a variable template.
    pub specialization: Option<Vec<TemplateArg>>,
    /// `T S<…>::x;` at program scope: the class whose static data member
    /// this out-of-class definition names.
    pub owner: Option<Path>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Init {
    /// `= expr` (including `= {..}` as an `InitList` expression).
    Assign(Expr),
    /// `T x(args)`.
    Paren(Vec<Expr>, Span),
    /// `T x{args}`.
    Brace(Vec<Expr>, Span),
}

#[derive(Clone, Debug, PartialEq)]
pub enum StmtKind {
    Decl(Vec<VarDecl>),
    Expr(Expr),
    Block(Block),
    /// `if constexpr` (`is_constexpr`) checks only the branch its constant
    /// condition selects, so the other may be invalid for this instance.
    If {
        cond: Box<Expr>,
        then: Box<Stmt>,
        els: Option<Box<Stmt>>,
        is_constexpr: bool,
    },
    /// `init` is a declaration or expression statement (or none).
    For {
        init: Option<Box<Stmt>>,
        cond: Option<Expr>,
        step: Option<Expr>,
        body: Box<Stmt>,
    },
    /// `for (decl : range) body`: `var` has no initializer (the checker
    /// gives it each element in turn).
    RangeFor {
        var: Box<VarDecl>,
        range: Expr,
        body: Box<Stmt>,
    },
    While {
        cond: Box<Expr>,
        body: Box<Stmt>,
    },
    DoWhile {
        body: Box<Stmt>,
        cond: Box<Expr>,
    },
    Switch {
        cond: Box<Expr>,
        body: Box<Stmt>,
    },
    Case(Expr),
    Default,
    Break,
    Continue,
    Return(Option<Expr>),
    /// A local `typedef`/`using` alias.
    Alias(TypeAlias),
    /// A struct, union or enum declared inside a function (`typedef struct
    /// { … } name;` or `struct P { … };`): visible to the rest of the body.
    /// The variables declared with it follow (`union { … } v;`).
    LocalType(Box<Item>, Vec<VarDecl>),
    /// `static_assert(cond, "msg");`
    StaticAssert {
        cond: Expr,
        message: Option<Rc<str>>,
    },
    Empty,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Block {
    pub stmts: Vec<Stmt>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    pub ty: TypeExpr,
    /// `Ts... args`: a function parameter pack.
    pub is_pack: bool,
    pub name: Option<Ident>,
    pub attrs: Vec<Attribute>,
    pub default: Option<Expr>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Function {
    pub attrs: Vec<Attribute>,
    /// Written `kernel` or `[[kernel]]`.
    pub is_kernel: bool,
    pub is_inline: bool,
    pub is_static: bool,
    pub is_constexpr: bool,
    pub ret: TypeExpr,
    /// Plain for free functions and methods; qualified for out-of-line
    /// definitions (`Pair<T>::sum`), which the checker may reject.
    pub name: Path,
    pub params: Vec<Param>,
    /// Member function declared `const`.
    pub is_const_method: bool,
    /// `void f() device`: a member function for objects in that address
    /// space only (`None`: unqualified or `thread`).
    pub object_space: Option<AddressSpace>,
    /// `None` for a declaration without a body.
    pub body: Option<Block>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum MemberKind {
    Field(VarDecl),
    Method(Function),
    /// `Point(float x, float y) : x(x), y(y) {}` — the name is the struct's.
    Constructor {
        func: Function,
        inits: Vec<(Ident, Vec<Expr>)>,
    },
    Alias(TypeAlias),
    /// A nested `static constexpr` or `constant` data member.
    StaticConst(VarDecl),
    /// A nested struct, enum or template (member function template, nested
    /// struct template), declared in the struct's scope.
    Nested(Box<Item>),
    /// `S() = default;`: the implicit default constructor, declared.
    DefaultedConstructor,
    /// An anonymous union or struct member (`union { half2 dm; struct {
    /// half d, m; }; };`): its members are members of the enclosing struct.
    Anonymous(Box<Struct>),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Member {
    pub kind: MemberKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Struct {
    pub name: Ident,
    /// `union U {...}`: every member starts at offset 0.
    pub is_union: bool,
    pub members: Vec<Member>,
    /// `struct S;` forward declaration.
    pub is_forward: bool,
    /// The arguments of an explicit specialization: `template <> struct
    /// Limits<float> {...}` has `Some([float])`.
    pub specialization: Option<Vec<TemplateArg>>,
    /// Base classes in declaration order: `struct D : B, private C<T>`.
    pub bases: Vec<BaseSpec>,
    pub attrs: Vec<Attribute>,
    pub span: Span,
}

/// One base class of a struct.
#[derive(Clone, Debug, PartialEq)]
pub struct BaseSpec {
    pub ty: TypeExpr,
    /// `private` or `protected` (access is not checked: every base is
    /// treated as public, which accepts all valid code).
    pub access: Option<Ident>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Enumerator {
    pub name: Ident,
    pub value: Option<Expr>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Enum {
    pub name: Option<Ident>,
    /// `enum class` / `enum struct`
    pub scoped: bool,
    pub underlying: Option<TypeExpr>,
    pub enumerators: Vec<Enumerator>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct TypeAlias {
    pub name: Ident,
    pub ty: TypeExpr,
    /// A function type (`typedef void (k_t)(device float*);`, `using F =
    /// void(int);`): its parameters, with `ty` the return type.
    pub fn_params: Option<Vec<Param>>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum TemplateParamKind {
    /// `typename T` / `class T`
    Type { default: Option<TypeExpr> },
    /// `int N`, `bool B`, `uint K = 4`
    Value { ty: TypeExpr, default: Option<Expr> },
    /// `template <typename> class Op = Plus`: a class or alias template.
    /// `params` is the parameter list the argument template must accept;
    /// `default` names a template (`Plus`, `ns::Plus`).
    Template { params: Vec<TemplateParam>, default: Option<Path> },
}

#[derive(Clone, Debug, PartialEq)]
pub struct TemplateParam {
    pub name: Ident,
    /// `typename... Ts` / `int... Ns`: a template parameter pack.
    pub is_pack: bool,
    pub kind: TemplateParamKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Item {
    pub kind: ItemKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ItemKind {
    Function(Function),
    Struct(Struct),
    Enum(Enum),
    /// Program-scope variables (`constant float k = 1;`), possibly several.
    Vars(Vec<VarDecl>),
    Alias(TypeAlias),
    Namespace {
        name: Option<Ident>,
        items: Vec<Item>,
    },
    /// `using namespace metal;`
    UsingNamespace(Path),
    /// `using metal::fast::exp;`
    UsingDecl(Path),
    /// `template <...> item`; `params` is empty for `template <>`
    /// (explicit specialization).
    Template {
        params: Vec<TemplateParam>,
        item: Box<Item>,
    },
    /// `template [[host_name("k")]] [[kernel]] decltype(k<float>) k<float>;`
    /// and `template void f<int>(int);`.
    ExplicitInstantiation {
        attrs: Vec<Attribute>,
        ty: TypeExpr,
        name: Path,
        /// The parameter list when written (`template void f(int);`): the
        /// template arguments are then deduced from it.
        params: Option<Vec<Param>>,
    },
    StaticAssert {
        cond: Expr,
        message: Option<Rc<str>>,
    },
    /// A stray `;`.
    Empty,
}

/// A parsed translation unit.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct TranslationUnit {
    pub items: Vec<Item>,
}

/// A constructor's body with its member initializers run first, as
/// assignments through `this` (in `S(float x) : x(x)` the parameter hides
/// the member).
pub fn with_member_inits(f: &Function, inits: &[(Ident, Vec<Expr>)]) -> Function {
    let mut out = f.clone();
    if let Some(body) = out.body.as_mut() {
        let mut pre = Vec::new();
        for (member, args) in inits {
            let span = member.span;
            let this = Expr { kind: ExprKind::This, span };
            let lhs = Expr { kind: ExprKind::Member { base: Box::new(this), name: member.clone(), arrow: true, targs: None }, span };
            let rhs = if args.len() == 1 { args[0].clone() } else { Expr { kind: ExprKind::InitList(args.clone()), span } };
            let assign = Expr { kind: ExprKind::Assign { op: None, lhs: Box::new(lhs), rhs: Box::new(rhs) }, span };
            pre.push(Stmt { kind: StmtKind::Expr(assign), span });
        }
        pre.append(&mut body.stmts);
        body.stmts = pre;
    }
    out
}
