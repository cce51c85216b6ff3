//! The type checker: AST to [`hir::Program`].
//!
//! One pass over the items in source order (C++ sees only what is declared
//! above), checking each function body as it is met. Templates are checked
//! when instantiated, with the names visible at their definition. Names are
//! looked up innermost first: block scopes, template parameters, the members
//! of the struct whose method we are in, the enclosing namespaces, and last
//! the Metal standard library (always visible, with or without
//! `using namespace metal;`).

mod calls;
mod consteval;
mod decls;
pub use decls::stmt_always_returns;
mod deduce;
mod expr;
mod fnconst;
mod fnptr;
mod fold;
mod inherit;
mod instances;
mod instantiate;
mod intrinsics;
mod kernel_args;
mod limits;
mod localtypes;
pub mod logging;
mod matrix;
mod members;
mod meminit;
mod operators;
mod ordering;
mod packs;
mod probe;
mod rangefor;
mod refmembers;
mod scopes;
mod stdcalls;
mod stmt;
mod structs;
mod templates;
mod templatetemplate;
mod traitcalls;
mod typeexpr;

use crate::ast;
use crate::diag::{Diagnostic, Diagnostics};
use crate::hir::{self, ConstValue, FuncId, LocalId};
use crate::source::Span;
use crate::types::{EnumId, StructId, Type, TypeTables};
use rustc_hash::FxHashMap as HashMap;
use std::rc::Rc;

/// Check a parsed unit. Returns the program when there were no errors.
pub fn check(unit: &ast::TranslationUnit, constants: &[(String, String)], diags: &mut Diagnostics) -> Option<hir::Program> {
    check_with(unit, constants, true, diags)
}

/// Like [`check`]; without `keep_bodies` the program's functions have empty
/// bodies (the diagnostics are the same): for `lint`, which needs no code.
pub fn check_with(
    unit: &ast::TranslationUnit,
    constants: &[(String, String)],
    keep_bodies: bool,
    diags: &mut Diagnostics,
) -> Option<hir::Program> {
    check_probed(unit, constants, keep_bodies, None, diags)
}

/// Like [`check_with`], placing the debugger probes of `plan`.
pub(crate) fn check_probed(
    unit: &ast::TranslationUnit,
    constants: &[(String, String)],
    keep_bodies: bool,
    plan: Option<crate::probe::Plan>,
    diags: &mut Diagnostics,
) -> Option<hir::Program> {
    let mut c = Checker::new(diags);
    c.fc_given = constants.to_vec();
    c.keep_bodies = keep_bodies;
    c.probes = plan;
    c.run(unit);
    if let Some(d) = c.budget_error.take() {
        c.sink.push(d);
    }
    for d in merge_repeats(c.sink.take()) {
        c.diags.push(d);
    }
    if c.diags.has_errors() {
        return None;
    }
    let functions = c.functions.into_iter().flatten().collect();
    Some(hir::Program {
        types: c.tables,
        functions,
        globals: c.globals,
        function_constants: c.function_constants,
        log_formats: c.log_formats,
        probe_sites: c.probes.map(|p| p.sites).unwrap_or_default(),
    })
}

/// One diagnostic per problem: the same message at the same place, reported
/// once for each instance of a template, is shown once with a count.
fn merge_repeats(all: Vec<Diagnostic>) -> Vec<Diagnostic> {
    let mut first: HashMap<(bool, Span, String), usize> = HashMap::default();
    let mut out: Vec<Diagnostic> = Vec::with_capacity(all.len());
    let mut repeats: Vec<usize> = Vec::new();
    for d in all {
        match first.entry((d.is_error(), d.span, d.message.clone())) {
            std::collections::hash_map::Entry::Occupied(seen) => repeats[*seen.get()] += 1,
            std::collections::hash_map::Entry::Vacant(slot) => {
                slot.insert(out.len());
                out.push(d);
                repeats.push(0);
            }
        }
    }
    for (d, n) in out.iter_mut().zip(repeats) {
        if n > 0 {
            let s = if n == 1 { "" } else { "s" };
            d.notes.push(format!("the same problem arises in {n} more instantiation{s}"));
        }
    }
    out
}

/// A template argument value: a type or an integral/bool constant.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum TArg {
    Type(Type),
    Value(ConstValue, Type),
    /// The elements a template parameter pack is bound to.
    Pack(Vec<TArg>),
    /// A function, given to a value parameter of function pointer type.
    Func(FuncId, Type),
    /// Functions named by an overloaded name (or a template whose
    /// arguments are not all written): resolved by the type of the value
    /// parameter it is given to (`fnptr.rs`).
    FuncName {
        decls: Vec<DeclId>,
        explicit: Option<Vec<TArg>>,
        name: Rc<str>,
        span: Span,
    },
    /// A class or alias template, given to a template template parameter
    /// (`template <typename> class Op`) by its name (`Plus`).
    Template(DeclId),
}

impl Eq for TArg {}

impl std::hash::Hash for TArg {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        match self {
            TArg::Type(t) => {
                0u8.hash(state);
                t.hash(state)
            }
            TArg::Value(v, t) => {
                1u8.hash(state);
                match v {
                    ConstValue::Float(f) => f.to_bits().hash(state),
                    other => other.as_i64().hash(state),
                }
                t.hash(state)
            }
            TArg::Pack(elems) => {
                2u8.hash(state);
                elems.hash(state)
            }
            TArg::Func(f, t) => {
                3u8.hash(state);
                f.hash(state);
                t.hash(state)
            }
            TArg::FuncName { decls, explicit, .. } => {
                4u8.hash(state);
                decls.hash(state);
                explicit.hash(state)
            }
            TArg::Template(d) => {
                5u8.hash(state);
                d.hash(state)
            }
        }
    }
}

/// Identifies a declaration in `Checker::decls`.
pub(crate) type DeclId = usize;

/// What a program-scope name means.
#[derive(Clone, Debug)]
pub(crate) enum DeclKind<'a> {
    /// A non-template function (declared or defined); its id.
    Function {
        ast: &'a ast::Function,
        id: FuncId,
        params: Vec<Type>,
        defined: bool,
    },
    FunctionTemplate {
        ast: &'a ast::Function,
        params: &'a [ast::TemplateParam],
    },
    Struct(StructId),
    StructTemplate {
        ast: &'a ast::Struct,
        params: &'a [ast::TemplateParam],
    },
    Enum(EnumId),
    /// `template <class T> using vec4_t = vec<T, 4>;`
    AliasTemplate {
        ast: &'a ast::TypeAlias,
        params: &'a [ast::TemplateParam],
    },
    /// `template <class T> constexpr constant bool is_f_v = ...;`
    VarTemplate {
        ast: &'a ast::VarDecl,
        params: &'a [ast::TemplateParam],
    },
    Enumerator {
        ty: Type,
        value: i64,
    },
    Alias(Type),
    /// `typedef void (k_t)(device float*);`: a function type, which only
    /// an explicit instantiation may use.
    FunctionType(decls::Signature),
    Global(hir::GlobalId),
    /// A struct's `static constexpr` member, by value.
    Constant(hir::Expr),
    Namespace,
}

#[derive(Clone, Debug)]
pub(crate) struct Decl<'a> {
    pub name: Rc<str>,
    /// Namespace path the declaration lives in (`["util", "detail"]`); for
    /// struct members, the struct's scope name.
    pub scope: Vec<Rc<str>>,
    pub kind: DeclKind<'a>,
    pub span: Span,
    /// The environment the declaration was made in (for templates).
    pub env: Env,
}

/// Where a piece of code is: what it can see.
#[derive(Clone, Debug, Default)]
pub(crate) struct Env {
    /// Enclosing namespace path.
    pub scope: Vec<Rc<str>>,
    /// Declarations with an index below this are visible.
    pub visible: usize,
    /// Template parameter values in force.
    pub targs: Rc<HashMap<Rc<str>, TArg>>,
    /// The struct whose member function body we are in.
    pub this_struct: Option<StructId>,
    /// `using namespace` directives in force (see `UsingDirective`).
    pub usings: Rc<Vec<UsingDirective>>,
}

/// `using namespace target;` written in namespace `written_in`: while code
/// is inside `written_in`, unqualified lookup sees `target`'s names as if
/// they were declared in `common` (the innermost namespace enclosing both),
/// as C++ specifies.
#[derive(Clone, Debug)]
pub(crate) struct UsingDirective {
    pub written_in: Vec<Rc<str>>,
    pub common: Vec<Rc<str>>,
    pub target: Vec<Rc<str>>,
}

/// A specialization of a variable template: its own template parameters,
/// the declaration (with the specialized arguments), where it was declared.
pub(crate) type VarSpec<'a> = (&'a [ast::TemplateParam], &'a ast::VarDecl, Env);

/// A partial specialization of a struct template: its own template
/// parameters, the declaration (with the argument pattern), where it was declared.
pub(crate) type StructSpec<'a> = (&'a [ast::TemplateParam], &'a ast::Struct, Env);

/// A constructor: its function, member initializers, and where it was declared.
pub(crate) type Ctor<'a> = (&'a ast::Function, Vec<(ast::Ident, Vec<ast::Expr>)>, Env);

/// Information the checker keeps about a struct beyond its layout.
#[derive(Clone, Debug, Default)]
pub(crate) struct StructInfo<'a> {
    pub methods: Vec<(&'a ast::Function, Env)>,
    pub ctors: Vec<Ctor<'a>>,
    /// `static constexpr` members: name → (type, value expression).
    pub statics: Vec<(Rc<str>, Type, hir::Expr)>,
    pub aliases: Vec<(Rc<str>, Type)>,
    /// Instantiated methods: (method index, this space, const this) → function.
    pub method_ids: HashMap<(usize, ast::AddressSpace), FuncId>,
    pub ctor_ids: HashMap<usize, FuncId>,
    /// The scope nested declarations live in (enclosing namespaces, then the
    /// struct's display name).
    pub scope: Vec<Rc<str>>,
    /// `S() = default;` was declared: `S()` needs no user constructor.
    pub defaulted_ctor: bool,
    /// Conversion operator templates (`template <class U> operator U()`).
    pub conversion_templates: Vec<DeclId>,
    /// Base classes in declaration order: (base, index of the hidden
    /// member holding it).
    pub bases: Vec<(StructId, u32)>,
    /// Default member initializers, in declaration order.
    pub member_defaults: Vec<meminit::MemberDefault<'a>>,
    /// Some member (at any depth) has a default initializer or a user
    /// default constructor: building an S without values runs code.
    pub needs_init: bool,
    /// The environment default member initializers are checked in.
    pub init_env: Option<Env>,
    /// Indices of reference members (stored as pointers; see refmembers.rs).
    pub ref_fields: Vec<u32>,
}

/// One block scope: its locals in declaration order, plus an index so that
/// lookup stays O(1) in functions with very many locals.
#[derive(Default)]
pub(crate) struct Scope {
    names: Vec<(Rc<str>, LocalId)>,
    index: HashMap<Rc<str>, LocalId>,
}

impl Scope {
    pub fn push(&mut self, name: Rc<str>, id: LocalId) {
        self.index.insert(name.clone(), id);
        self.names.push((name, id));
    }

    /// The latest local of this name declared in this scope.
    pub fn find(&self, name: &str) -> Option<LocalId> {
        self.index.get(name).copied()
    }

    pub fn iter(&self) -> impl Iterator<Item = &(Rc<str>, LocalId)> {
        self.names.iter()
    }
}

/// Per-function state while checking a body.
pub(crate) struct FnState {
    pub locals: Vec<hir::Local>,
    /// Block scopes: name → local.
    pub scopes: Vec<Scope>,
    pub ret: Type,
    /// The function returns `auto` and no `return` has fixed `ret` yet:
    /// the first `return` deduces it.
    pub ret_undeduced: bool,
    pub loop_depth: u32,
    pub switch_depth: u32,
    /// The implicit `this` pointer parameter of a method.
    pub this_local: Option<LocalId>,
    pub is_kernel: bool,
    /// Locals that are references: stored as pointers, dereferenced on use.
    pub ref_locals: rustc_hash::FxHashSet<LocalId>,
    /// `const`/`constexpr` locals with constant values (usable in array
    /// sizes, template arguments, `case` labels).
    pub const_locals: HashMap<LocalId, ConstValue>,
    /// Const locals whose value is the stand-in of a function constant
    /// given no value (see `fold::fold_known`).
    pub stand_in_locals: std::collections::HashSet<LocalId>,
    /// Locals whose declaration failed: uses stay silent (no cascades).
    pub poisoned: rustc_hash::FxHashSet<LocalId>,
    /// Function parameter packs: name → number of elements.
    pub packs: HashMap<Rc<str>, usize>,
    /// A local type was declared: the body pushed a scope of its own onto
    /// the environment (popped when the body ends), named here with the
    /// first declaration id made in it.
    pub type_scope: Option<(Rc<str>, DeclId)>,
    /// The enclosing function's unqualified name, the value of `__func__`
    /// (`None` in scratch states that check no body).
    pub func_name: Option<Rc<str>>,
}

impl FnState {
    /// The state at the start of a function body: one empty scope.
    pub fn new(ret: Type, is_kernel: bool) -> FnState {
        FnState {
            locals: Vec::new(),
            scopes: vec![Scope::default()],
            ret,
            ret_undeduced: false,
            loop_depth: 0,
            switch_depth: 0,
            this_local: None,
            is_kernel,
            ref_locals: Default::default(),
            const_locals: Default::default(),
            stand_in_locals: Default::default(),
            poisoned: Default::default(),
            packs: Default::default(),
            type_scope: None,
            func_name: None,
        }
    }
}

pub(crate) struct Checker<'a, 'd> {
    pub diags: &'d mut Diagnostics,
    /// Diagnostics of this run (reporting needs only `&self`; see
    /// `Self::trial` for probing without reporting).
    pub sink: Rc<scopes::DiagSink>,
    /// Alias templates being looked through by deduction (`unify`), so an
    /// alias that names itself cannot recurse without end.
    pub alias_unify_depth: std::cell::Cell<u32>,
    pub tables: TypeTables,
    pub functions: Vec<Option<hir::Function>>,
    pub globals: Vec<hir::Global>,
    pub decls: Vec<Decl<'a>>,
    /// name → declarations with that name (any scope), in order.
    pub by_name: HashMap<Rc<str>, Vec<DeclId>>,
    pub structs: Vec<StructInfo<'a>>,
    /// Everything remembered per template instance (see `instances.rs`).
    pub inst: instances::Instances<'a>,
    /// Kernel host names seen (for the "kernels cannot be overloaded" rule).
    pub kernel_names: HashMap<String, Span>,
    /// Nesting of template instantiation (bounded; see `Self::instantiating`).
    pub inst_depth: u32,
    /// Nesting of the expressions being checked in the current body,
    /// apart from instantiation depth (bounded by `MAX_EXPR_DEPTH`).
    pub expr_depth: u32,
    /// Nesting of the expressions being checked in all bodies at once
    /// (bounded by `MAX_EXPR_FRAMES`).
    pub expr_frames: u32,
    /// Template instances made so far, of every kind (bounded by
    /// `MAX_INSTANTIATIONS`), and the error reported when the budget ran out
    /// (kept aside: a probe's rollback must not hide it).
    pub instantiations: u32,
    pub budget_error: Option<Diagnostic>,
    /// The function template instances being checked, outermost first:
    /// name with arguments, and where each was instantiated.
    pub inst_stack: Vec<(String, Span)>,
    /// Default member initializers being checked (struct, member), inner
    /// last: one that needs itself again would expand without end.
    pub(crate) defaults_stack: Vec<(StructId, u32)>,
    pub env: Env,
    pub fs: Option<FnState>,
    /// Functions called but declared without a body: reported at the end.
    pub undefined_calls: Vec<(FuncId, Span)>,
    /// Parameter types of every function, by id (references kept).
    pub instance_sigs: HashMap<FuncId, Vec<Type>>,
    /// Which template and arguments a struct instance came from.
    pub struct_instance_of: HashMap<StructId, (DeclId, Vec<TArg>)>,
    /// Partial specializations of struct templates, in declaration order.
    pub struct_partial_specs: HashMap<DeclId, Vec<StructSpec<'a>>>,
    /// Hidden temporaries count (for names).
    pub temp_count: u32,
    /// Functions declared `constexpr` (callable at compile time).
    pub constexpr_fns: rustc_hash::FxHashSet<FuncId>,
    /// Functions returning a reference: their HIR return type is a pointer
    /// and every call is dereferenced, so the call is an lvalue.
    pub ref_returns: rustc_hash::FxHashSet<FuncId>,
    /// Out-of-class member definitions of struct templates (`template
    /// <class T> R S<T>::f(…) {…}`), by template.
    pub template_member_defs: HashMap<DeclId, Vec<members::TemplateMemberDef<'a>>>,
    /// Member function templates (not static): declaration → its struct.
    pub method_templates: HashMap<DeclId, StructId>,
    /// Function constant values given for this compilation (name or index → text).
    pub fc_given: Vec<(String, String)>,
    /// Specializations of variable templates (partial and explicit), in
    /// declaration order: template → (its parameters, declaration, env).
    pub var_specs: HashMap<DeclId, Vec<VarSpec<'a>>>,
    pub function_constants: Vec<hir::FunctionConstant>,
    /// Shader logging: declared `os_log` objects and the formats of log calls.
    pub loggers: Vec<logging::Logger>,
    /// Whether checked function bodies are kept (see `check_with`).
    pub keep_bodies: bool,
    /// String literals used as values: each text once, as a program-scope
    /// `constant char[N]` (see `string_literal`).
    pub string_globals: HashMap<Rc<str>, hir::GlobalId>,
    pub log_formats: Vec<hir::LogFormat>,
    /// Debugger probes to place, and the span of the statement checked just
    /// before in the same block (see `probe.rs`).
    pub probes: Option<crate::probe::Plan>,
    pub probe_prev: Option<Span>,
    /// Scopes of structs with base classes → the struct (unqualified names
    /// in member functions are looked up in the bases too).
    pub base_scopes: HashMap<Vec<Rc<str>>, StructId>,
    /// Depth of operands whose value is never computed (`decltype(…)`),
    /// where `declval<T>()` may stand for a value of type `T`.
    pub unevaluated: u32,
    /// The unit being checked, and its types declared inside function
    /// bodies by span (collected at the first one met).
    pub unit: Option<&'a ast::TranslationUnit>,
    pub local_types: Option<HashMap<Span, &'a ast::Item>>,
    /// While a struct's static member functions are declared, their bodies
    /// wait here so each body sees all of them (C++'s complete-class context).
    pub deferred_bodies: Option<Vec<DeferredBody<'a>>>,
    /// Static member functions of template instances, checked on their
    /// first call (C++ instantiates a member of a class template only when
    /// it is used: `Max<indexed<T>>::simd_op` is never called).
    pub lazy_bodies: HashMap<FuncId, (DeferredBody<'a>, Env)>,
    /// The spans of the template arguments written in the template-id at
    /// the given span, for `complete_targs` to point at the argument that
    /// does not fit (set just before a class or alias template is
    /// instantiated from a written name).
    pub written_targs: Option<(Span, Vec<Span>)>,
}

/// A function body to check once its siblings are declared.
pub(crate) type DeferredBody<'a> = (&'a ast::Function, FuncId, decls::Signature);

/// Instantiation depth beyond which we assume runaway template recursion.
pub(crate) const MAX_INSTANTIATION_DEPTH: u32 = 64;
/// Template instances (functions, classes, members, variables) one program
/// may make in all. Depth alone does not bound the work: a template that
/// instantiates two others per level makes 2^depth instances.
pub const MAX_INSTANTIATIONS: u32 = 20_000;
/// Template arguments one instance may have, pack elements counted one by
/// one (a pack that doubles per level would otherwise grow 2^depth).
pub const MAX_TEMPLATE_ARGS: usize = 1_024;

impl<'a, 'd> Checker<'a, 'd> {
    fn new(diags: &'d mut Diagnostics) -> Self {
        Checker {
            diags,
            sink: Default::default(),
            alias_unify_depth: Default::default(),
            tables: TypeTables::default(),
            functions: Vec::new(),
            globals: Vec::new(),
            decls: Vec::new(),
            by_name: HashMap::default(),
            structs: Vec::new(),
            inst: Default::default(),
            kernel_names: HashMap::default(),
            inst_depth: 0,
            expr_depth: 0,
            expr_frames: 0,
            instantiations: 0,
            budget_error: None,
            inst_stack: Vec::new(),
            defaults_stack: Vec::new(),
            deferred_bodies: None,
            lazy_bodies: HashMap::default(),
            env: Env::default(),
            fs: None,
            undefined_calls: Vec::new(),
            instance_sigs: HashMap::default(),
            struct_instance_of: HashMap::default(),
            template_member_defs: HashMap::default(),
            temp_count: 0,
            struct_partial_specs: HashMap::default(),
            constexpr_fns: Default::default(),
            ref_returns: Default::default(),
            method_templates: Default::default(),
            fc_given: Vec::new(),
            var_specs: HashMap::default(),
            function_constants: Vec::new(),
            loggers: Vec::new(),
            keep_bodies: true,
            string_globals: HashMap::default(),
            log_formats: Vec::new(),
            probes: None,
            probe_prev: None,
            base_scopes: HashMap::default(),
            unevaluated: 0,
            unit: None,
            local_types: None,
            written_targs: None,
        }
    }

    fn run(&mut self, unit: &'a ast::TranslationUnit) {
        self.unit = Some(unit);
        for item in &unit.items {
            self.item(item);
        }
        for (id, span) in std::mem::take(&mut self.undefined_calls) {
            if self.functions[id.0 as usize].as_ref().is_some_and(|f| f.body.is_empty() && f.span == Span::default()) {
                self.error(span, "this function is declared but never defined")
                    .help("give the function a body; the simulator needs every function it calls");
            }
        }
    }

    // ----- diagnostics helpers -------------------------------------------

    /// Push an error; returns a handle to add notes/help.
    pub fn error(&self, span: Span, msg: impl Into<String>) -> DiagBuilder<'_> {
        DiagBuilder { sink: &self.sink, diag: Some(Diagnostic::error(span, msg)), context: self.instantiation_context(span) }
    }

    pub fn warn(&self, span: Span, msg: impl Into<String>) -> DiagBuilder<'_> {
        DiagBuilder { sink: &self.sink, diag: Some(Diagnostic::warning(span, msg)), context: self.instantiation_context(span) }
    }

    /// Labels naming the template instance whose body is being checked
    /// and, when instances nest, the outermost one the program asked for.
    fn instantiation_context(&self, span: Span) -> Vec<crate::diag::Label> {
        let mut out = Vec::new();
        if let Some((name, at)) = self.inst_stack.last() {
            if *at != span {
                out.push(crate::diag::Label { span: *at, message: format!("in `{name}`, instantiated here") });
            }
        }
        if self.inst_stack.len() > 1 {
            let (name, at) = &self.inst_stack[0];
            if *at != span {
                out.push(crate::diag::Label { span: *at, message: format!("which `{name}` needs, instantiated here") });
            }
        }
        out
    }

    /// Count one new template instance; false (with an error that survives
    /// rollbacks) once the program has made `MAX_INSTANTIATIONS`.
    pub(crate) fn count_instantiation(&mut self, span: Span, what: &str) -> bool {
        if self.instantiations < MAX_INSTANTIATIONS {
            self.instantiations += 1;
            return true;
        }
        let d = Diagnostic::error(span, format!("too many template instantiations: this program needs more than {MAX_INSTANTIATIONS}"))
            .label(format!("instantiating {what} here"))
            .note("a template that instantiates two others per level makes 2^N instances; the limit is fixed")
            .help("instantiate fewer templates per level (recursion through one instance per level is fine)");
        if self.budget_error.is_none() {
            self.budget_error = Some(d.clone());
        }
        self.sink.push(d);
        false
    }

    /// False (with an error) when `targs` has more than `MAX_TEMPLATE_ARGS`
    /// arguments, the elements of packs counted one by one.
    pub(crate) fn targs_within_limit(&mut self, targs: &[TArg], span: Span) -> bool {
        fn count(targs: &[TArg]) -> usize {
            targs.iter().map(|t| if let TArg::Pack(e) = t { count(e) } else { 1 }).sum()
        }
        let n = count(targs);
        if n <= MAX_TEMPLATE_ARGS {
            return true;
        }
        let d = Diagnostic::error(span, format!("too many template arguments: {n}, the limit is {MAX_TEMPLATE_ARGS}"))
            .note("parameter packs are counted element by element; a pack that doubles at each level grows 2^N")
            .help("pass fewer arguments (the limit is fixed)");
        if self.budget_error.is_none() {
            self.budget_error = Some(d.clone());
        }
        self.sink.push(d);
        false
    }

    pub fn ty_name(&self, ty: &Type) -> String {
        self.tables.display(ty)
    }

    // ----- declarations ----------------------------------------------------

    pub fn add_decl(&mut self, name: Rc<str>, kind: DeclKind<'a>, span: Span) -> DeclId {
        let id = self.decls.len();
        let env = Env { visible: id, ..self.env.clone() };
        self.decls.push(Decl { name: name.clone(), scope: self.env.scope.clone(), kind, span, env });
        self.by_name.entry(name).or_default().push(id);
        self.env.visible = self.decls.len();
        id
    }

    /// Declarations named `name` visible from the current environment,
    /// searching the enclosing namespaces from innermost outwards. Returns
    /// those of the innermost scope that has any.
    pub fn lookup_global(&self, name: &str) -> Vec<DeclId> {
        // A template template parameter names the template it is bound to.
        if let Some(TArg::Template(d)) = self.env.targs.get(name) {
            return vec![*d];
        }
        let Some(all) = self.by_name.get(name) else { return Vec::new() };
        let scope = &self.env.scope;
        let usings: Vec<&UsingDirective> = self.env.usings.iter().filter(|u| scope.starts_with(&u.written_in)).collect();
        for depth in (0..=scope.len()).rev() {
            let prefix = &scope[..depth];
            let found: Vec<DeclId> = all
                .iter()
                .copied()
                .filter(|&d| {
                    d < self.env.visible && {
                        let ds = self.decls[d].scope.as_slice();
                        ds == prefix || usings.iter().any(|u| u.common.as_slice() == prefix && u.target.as_slice() == ds)
                    }
                })
                .collect();
            if !found.is_empty() {
                return found;
            }
            if depth > 0 && !self.base_scopes.is_empty() {
                let inherited = self.lookup_in_base_scopes(prefix, name);
                if !inherited.is_empty() {
                    return inherited;
                }
            }
        }
        // Namespace `metal` is always visible (as if by `using namespace
        // metal;`): its C++ declarations and any the program adds to it.
        let in_metal: Vec<DeclId> = all
            .iter()
            .copied()
            .filter(|&d| d < self.env.visible && self.decls[d].scope.len() == 1 && &*self.decls[d].scope[0] == "metal")
            .collect();
        in_metal
    }

    /// Declarations named `name` in the scope of struct `sid` (visible from
    /// anywhere: a template instance's members are declared when it is
    /// instantiated, after the code that names them).
    /// Members of base classes are found when `sid` declares none.
    pub fn lookup_member_decls(&self, sid: StructId, name: &str) -> Vec<DeclId> {
        let own = self.own_member_decls(sid, name);
        if own.is_empty() {
            return self.member_decls_in_bases(sid, name);
        }
        own
    }

    /// Declarations named `name` in struct `sid`'s own scope.
    pub fn own_member_decls(&self, sid: StructId, name: &str) -> Vec<DeclId> {
        let Some(all) = self.by_name.get(name) else { return Vec::new() };
        let scope = &self.structs[sid.0 as usize].scope;
        all.iter().copied().filter(|&d| self.decls[d].scope == *scope).collect()
    }

    /// Declarations named `name` directly in namespace `scope`.
    pub fn lookup_in(&self, scope: &[Rc<str>], name: &str) -> Vec<DeclId> {
        let Some(all) = self.by_name.get(name) else { return Vec::new() };
        all.iter().copied().filter(|&d| d < self.env.visible && self.decls[d].scope.as_slice() == scope).collect()
    }

    /// A later declaration of `name` (for "declared later" notes).
    pub fn later_decl(&self, name: &str) -> Option<Span> {
        let all = self.by_name.get(name)?;
        all.iter().copied().find(|&d| d >= self.env.visible).map(|d| self.decls[d].span)
    }

    /// Every name visible now, for "did you mean" suggestions.
    pub fn visible_names(&self) -> Vec<Rc<str>> {
        let mut out: Vec<Rc<str>> = Vec::new();
        if let Some(fs) = &self.fs {
            for scope in &fs.scopes {
                out.extend(scope.iter().map(|(n, _)| n.clone()));
            }
        }
        out.extend(self.env.targs.keys().cloned());
        // Names in namespace `metal` are the library's, not suggestions.
        for d in &self.decls[..self.env.visible.min(self.decls.len())] {
            if d.scope.first().is_none_or(|s| &**s != "metal") {
                out.push(d.name.clone());
            }
        }
        // Hidden names (pack elements `args#0`, `$ctor`) are never suggested.
        out.retain(|n| n.chars().all(|c| c.is_alphanumeric() || c == '_'));
        out
    }

    pub fn ref_locals_insert(&mut self, id: LocalId) {
        if let Some(fs) = self.fs.as_mut() {
            fs.ref_locals.insert(id);
            if let Some(l) = fs.locals.get_mut(id.0 as usize) {
                l.is_ref = true;
            }
        }
    }

    pub fn new_function_slot(&mut self) -> FuncId {
        self.functions.push(None);
        FuncId(self.functions.len() as u32 - 1)
    }
}

/// Whether the checker made this name up (for a temporary, a desugaring, an
/// unnamed parameter, a hidden member): such names start with `$`, which no
/// identifier in the source can.
pub(crate) fn is_made_up(name: &str) -> bool {
    name.starts_with('$')
}

/// The origin of a local the checker declares under `name`.
pub(crate) fn origin_of(name: &str) -> hir::LocalOrigin {
    if is_made_up(name) {
        hir::LocalOrigin::Compiler
    } else {
        hir::LocalOrigin::Source
    }
}

/// Adds notes/help to a diagnostic and pushes it when dropped.
pub(crate) struct DiagBuilder<'x> {
    sink: &'x scopes::DiagSink,
    diag: Option<Diagnostic>,
    /// Where the template holding the problem was instantiated; shown
    /// after the diagnostic's own labels.
    context: Vec<crate::diag::Label>,
}

impl DiagBuilder<'_> {
    pub fn code(mut self, code: &'static str) -> Self {
        if let Some(d) = self.diag.as_mut() {
            d.code = Some(code);
        }
        self
    }
    pub fn subject(mut self, name: impl Into<String>) -> Self {
        if let Some(d) = self.diag.as_mut() {
            d.subject = Some(name.into());
        }
        self
    }
    pub fn label(mut self, text: impl Into<String>) -> Self {
        if let Some(d) = self.diag.as_mut() {
            d.label = text.into();
        }
        self
    }
    pub fn note(mut self, text: impl Into<String>) -> Self {
        if let Some(d) = self.diag.as_mut() {
            d.notes.push(text.into());
        }
        self
    }
    pub fn help(mut self, text: impl Into<String>) -> Self {
        if let Some(d) = self.diag.as_mut() {
            d.help.push(text.into());
        }
        self
    }
    pub fn secondary(mut self, span: Span, text: impl Into<String>) -> Self {
        if let Some(d) = self.diag.as_mut() {
            d.secondary.push(crate::diag::Label { span, message: text.into() });
        }
        self
    }
}

impl Drop for DiagBuilder<'_> {
    fn drop(&mut self) {
        if let Some(mut d) = self.diag.take() {
            d.secondary.append(&mut self.context);
            self.sink.push(d);
        }
    }
}
