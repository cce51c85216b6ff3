//! The Metal standard library's builtin functions and constants, and the
//! overload resolution the type checker uses for calls to them.
//!
//! The functions are declared as data in [`table`] using the small
//! signature language documented in [`sig`] (type variable `T` with a
//! constraint, shared vector width `n`, address space variable `S`). The
//! table is parsed once, lazily, into [`BuiltinFunction`]s.
//!
//! [`resolve`] follows what Metal's headers do for a call: `T` and `n` are
//! deduced from the arguments, then each argument must implicitly convert
//! ([`implicit_conversion`]) to its instantiated parameter; viable
//! candidates are ranked by their worst conversion, then by the sum.
//!
//! Deduction of `T`: an argument in an exact position (a vector — vectors
//! never convert —, a pointer's pointee, a non-const reference, an atomic,
//! a SIMD-group matrix) fixes `T`, and exact positions must agree. Otherwise
//! non-literal scalar arguments decide (the usual arithmetic conversions
//! between them, so `min(a + b, hi)` works), and literals only when nothing
//! else does (`max(x, 0)` with `x` a `half` is `max(half, half)`). When the
//! deduced `T` is not allowed by the signature (`exp(i)` with `i` an
//! `int`), every allowed `T` is tried and ranked like ordinary overloads,
//! which is ambiguous exactly where C++ overloads would be.

mod id;
mod sig;
mod table;

pub use id::BuiltinId;
pub use sig::{Overload, Signature};

use crate::ast::AddressSpace;
use crate::types::{implicit_conversion, ConvRank, Scalar, Type};
use rustc_hash::FxHashMap as HashMap;
use sig::{Elem, Pat, Space, Width};
use std::sync::OnceLock;

/// `metal::`, `metal::fast::`, `metal::precise::`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Namespace {
    Metal,
    Fast,
    Precise,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BuiltinKind {
    Math,
    Integer,
    Relational,
    Geometric,
    Common,
    Atomic,
    Barrier,
    Simd,
    Quad,
    SimdMatrix,
    Conversion,
    Misc,
}

/// One builtin function with all its overloads.
#[derive(Debug)]
pub struct BuiltinFunction {
    pub id: BuiltinId,
    pub name: &'static str,
    pub kind: BuiltinKind,
    /// Callable as `metal::fast::NAME`.
    pub in_fast: bool,
    /// Callable as `metal::precise::NAME`.
    pub in_precise: bool,
    pub signatures: Vec<Signature>,
}

impl BuiltinFunction {
    /// Whether signature `i` is visible in namespace `ns` (`None`: unqualified
    /// or `metal::`, which see every overload).
    pub fn visible_in(&self, i: usize, ns: Option<Namespace>) -> bool {
        match ns {
            None | Some(Namespace::Metal) => true,
            Some(Namespace::Fast | Namespace::Precise) => self.signatures[i].fast,
        }
    }

    /// The declarations, for "candidates are:" notes.
    pub fn candidates(&self) -> Vec<String> {
        self.signatures.iter().map(Signature::display).collect()
    }
}

struct Registry {
    funcs: Vec<BuiltinFunction>,
    by_name: HashMap<&'static str, usize>,
}

fn registry() -> &'static Registry {
    static REG: OnceLock<Registry> = OnceLock::new();
    REG.get_or_init(|| {
        let mut funcs: Vec<BuiltinFunction> = Vec::new();
        let mut by_name = HashMap::default();
        for &(id, kind, ns, decls) in table::TABLE {
            let name = id.name();
            let fast = ns == table::Ns::Mfp;
            let idx = *by_name.entry(name).or_insert_with(|| {
                funcs.push(BuiltinFunction { id, name, kind, in_fast: false, in_precise: false, signatures: Vec::new() });
                funcs.len() - 1
            });
            let f = &mut funcs[idx];
            f.in_fast |= fast;
            f.in_precise |= fast;
            for d in decls {
                match sig::parse(name, d, fast) {
                    Ok(s) => f.signatures.push(s),
                    // The table is fixed; the test `whole_table_parses` keeps it valid.
                    Err(e) => panic!("builtin table: `{d}` for `{name}`: {e}"),
                }
            }
        }
        Registry { funcs, by_name }
    })
}

/// The builtin function called `name` (unqualified), if any.
pub fn lookup(name: &str) -> Option<&'static BuiltinFunction> {
    let r = registry();
    r.by_name.get(name).map(|&i| &r.funcs[i])
}

/// The table's function for `id` (`None` for the checker's own builtins,
/// which have no declarations).
pub fn function(id: BuiltinId) -> Option<&'static BuiltinFunction> {
    lookup(id.name()).filter(|f| f.id == id)
}

/// Every builtin function name, in table order (for "did you mean").
pub fn names() -> impl Iterator<Item = &'static str> {
    registry().funcs.iter().map(|f| f.name)
}

/// What the checker knows about one argument of a call.
#[derive(Clone, Debug, PartialEq)]
pub struct ArgInfo {
    /// After array-to-pointer decay and reference stripping.
    pub ty: Type,
    pub is_lvalue: bool,
    /// An integer literal (`0`, `1u`), possibly negated.
    pub is_int_literal: bool,
    /// A floating literal (`0.5f`, `1.0h`), possibly negated.
    pub is_float_literal: bool,
}

impl ArgInfo {
    /// An rvalue of type `ty` that is not a literal.
    pub fn value(ty: Type) -> ArgInfo {
        ArgInfo { ty, is_lvalue: false, is_int_literal: false, is_float_literal: false }
    }

    /// A named object (variable, element, member) of type `ty`.
    pub fn lvalue(ty: Type) -> ArgInfo {
        ArgInfo { ty, is_lvalue: true, is_int_literal: false, is_float_literal: false }
    }

    /// An integer literal of type `ty` (`int` for `1`, `uint` for `1u`).
    pub fn int_literal(ty: Type) -> ArgInfo {
        ArgInfo { ty, is_lvalue: false, is_int_literal: true, is_float_literal: false }
    }

    /// A floating literal of type `ty` (`float` for `1.0f`, `half` for `1.0h`).
    pub fn float_literal(ty: Type) -> ArgInfo {
        ArgInfo { ty, is_lvalue: false, is_int_literal: false, is_float_literal: true }
    }

    fn is_literal(&self) -> bool {
        self.is_int_literal || self.is_float_literal
    }
}

/// A call resolved to one overload.
#[derive(Clone, Debug, PartialEq)]
pub struct Resolved {
    pub func: &'static BuiltinFunction,
    /// Index into `func.signatures`.
    pub sig: usize,
    /// The parameter type each argument converts to (one per argument;
    /// out parameters are `Reference`s, pointers keep their address space).
    pub params: Vec<Type>,
    pub ret: Type,
}

impl PartialEq for BuiltinFunction {
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ResolveError {
    /// No builtin of that name (in that namespace).
    NotFound,
    /// No overload takes that many arguments; `expected` lists the counts
    /// that would be accepted, ascending.
    WrongArgCount { expected: Vec<usize> },
    /// No overload accepts the argument types; every declaration.
    NoMatch { candidates: Vec<String> },
    /// Several overloads match equally well; the tied instantiations.
    Ambiguous { candidates: Vec<String> },
}

struct Candidate {
    sig: usize,
    params: Vec<Type>,
    ret: Type,
    key: (ConvRank, u32),
}

/// Resolve a call `name(args...)`, optionally qualified with a namespace.
pub fn resolve(name: &str, ns: Option<Namespace>, args: &[ArgInfo]) -> Result<Resolved, ResolveError> {
    let func = lookup(name).ok_or(ResolveError::NotFound)?;
    let visible: Vec<usize> = (0..func.signatures.len()).filter(|&i| func.visible_in(i, ns)).collect();
    if visible.is_empty() {
        return Err(ResolveError::NotFound);
    }
    let by_count: Vec<usize> = visible.iter().copied().filter(|&i| func.signatures[i].accepts_count(args.len())).collect();
    if by_count.is_empty() {
        let mut expected: Vec<usize> = visible
            .iter()
            .flat_map(|&i| {
                let s = &func.signatures[i];
                s.min_args..=s.max_args()
            })
            .collect();
        expected.sort_unstable();
        expected.dedup();
        return Err(ResolveError::WrongArgCount { expected });
    }
    let mut cands: Vec<Candidate> = Vec::new();
    for &i in &by_count {
        let s = &func.signatures[i];
        for (params, ret) in instantiations(s, args) {
            let mut worst = ConvRank::Exact;
            let mut sum = 0u32;
            let mut ok = true;
            for (a, p) in args.iter().zip(&params) {
                match arg_conversion(a, p) {
                    Some(r) => {
                        worst = worst.max(r);
                        sum += r as u32;
                    }
                    None => {
                        ok = false;
                        break;
                    }
                }
            }
            if ok {
                cands.push(Candidate { sig: i, params, ret, key: (worst, sum) });
            }
        }
    }
    let Some(best) = cands.iter().map(|c| c.key).min() else {
        return Err(ResolveError::NoMatch { candidates: visible.iter().map(|&i| func.signatures[i].display()).collect() });
    };
    let mut tied: Vec<Candidate> = cands.into_iter().filter(|c| c.key == best).collect();
    if tied.len() > 1 {
        let candidates = tied
            .iter()
            .map(|c| {
                let ps: Vec<String> = c.params.iter().map(|p| p.to_string()).collect();
                format!("{} {}({})", c.ret, func.name, ps.join(", "))
            })
            .collect();
        return Err(ResolveError::Ambiguous { candidates });
    }
    let c = tied.pop().expect("one best candidate");
    Ok(Resolved { func, sig: c.sig, params: c.params, ret: c.ret })
}

/// How an argument converts to a concrete parameter type.
fn arg_conversion(arg: &ArgInfo, param: &Type) -> Option<ConvRank> {
    match param {
        // Out parameters bind only an lvalue of exactly the referenced type.
        Type::Reference { referee, is_const: false, .. } => {
            (arg.is_lvalue && same_ignoring_packed(&arg.ty, referee)).then_some(ConvRank::Exact)
        }
        _ => implicit_conversion(&arg.ty, param),
    }
}

fn same_ignoring_packed(a: &Type, b: &Type) -> bool {
    match (a, b) {
        (Type::Vector { elem: x, len: m, .. }, Type::Vector { elem: y, len: k, .. }) => x == y && m == k,
        _ => a == b,
    }
}

/// How firmly an argument determines `T`.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Strength {
    Literal,
    Value,
    Exact,
}

#[derive(Default)]
struct Deduced {
    t: Vec<(Strength, Scalar)>,
    n: Option<u8>,
    s: Option<AddressSpace>,
    failed: bool,
}

impl Deduced {
    fn set_n(&mut self, len: u8) {
        match self.n {
            Some(m) if m != len => self.failed = true,
            _ => self.n = Some(len),
        }
    }

    fn set_s(&mut self, sp: AddressSpace) {
        match self.s {
            Some(x) if x != sp => self.failed = true,
            _ => self.s = Some(sp),
        }
    }

    /// Match pattern `pat` against argument type `ty`. `exact`: the position
    /// admits no conversion (pointee, out reference).
    fn visit(&mut self, pat: &Pat, ty: &Type, exact: bool, literal: bool) {
        match pat {
            Pat::Num { elem, width } => {
                let (Some(s), Some(len)) = (ty.elem_scalar(), ty.vector_len()) else {
                    if exact {
                        self.failed = true;
                    }
                    return;
                };
                if *width == Width::N && (len > 1 || exact) {
                    self.set_n(len);
                }
                if *elem == Elem::Var {
                    let strength = if exact || len > 1 {
                        Strength::Exact
                    } else if literal {
                        Strength::Literal
                    } else {
                        Strength::Value
                    };
                    self.t.push((strength, s));
                }
            }
            Pat::Atomic(e) | Pat::SimdMatrix(e) => {
                let s = match (pat, ty) {
                    (Pat::Atomic(_), Type::Atomic(s)) => *s,
                    (Pat::SimdMatrix(_), Type::SimdMatrix { elem, .. }) => *elem,
                    _ => {
                        self.failed = true;
                        return;
                    }
                };
                if *e == Elem::Var {
                    self.t.push((Strength::Exact, s));
                }
            }
            Pat::Ptr { space, pointee, .. } => match ty {
                Type::Pointer { pointee: p, space: sp, .. } => {
                    if *space == Space::Var {
                        self.set_s(*sp);
                    }
                    self.visit(pointee, p, true, false);
                }
                Type::Array { elem, .. } => self.visit(pointee, elem, true, false),
                _ => self.failed = true,
            },
            Pat::Ref { is_const, referee, .. } => self.visit(referee, ty, !is_const, literal),
            Pat::Void | Pat::Enum(_) => {}
        }
    }
}

/// The concrete (parameters, return type) pairs to try for a signature.
fn instantiations(s: &Signature, args: &[ArgInfo]) -> Vec<(Vec<Type>, Type)> {
    let mut d = Deduced::default();
    for (p, a) in s.params.iter().zip(args) {
        d.visit(&p.pat, &a.ty, false, a.is_literal());
    }
    if d.failed {
        return Vec::new();
    }
    let n = d.n.unwrap_or(1);
    if n < s.n_min {
        return Vec::new();
    }
    let space = match d.s {
        Some(sp) if !s.s_allowed.contains(&sp) => return Vec::new(),
        Some(sp) => sp,
        None => AddressSpace::Thread,
    };
    let ts: Vec<Scalar> = if s.t_allowed.is_empty() {
        vec![Scalar::Float] // unused
    } else {
        let strongest = d.t.iter().map(|x| x.0).max();
        let chosen: Vec<Scalar> = d.t.iter().filter(|x| Some(x.0) == strongest).map(|x| x.1).collect();
        let t = match strongest {
            Some(Strength::Exact) => {
                if chosen.iter().any(|&x| x != chosen[0]) || !s.t_allowed.contains(&chosen[0]) {
                    return Vec::new();
                }
                Some(chosen[0])
            }
            Some(_) => chosen.iter().copied().reduce(|a, b| if a == b { a } else { Scalar::common(a, b) }),
            None => None,
        };
        match t {
            Some(t) if s.t_allowed.contains(&t) => vec![t],
            _ => s.t_allowed.clone(),
        }
    };
    ts.into_iter()
        .map(|t| {
            let params = s.params.iter().take(args.len()).map(|p| p.pat.instantiate(t, n, space)).collect();
            (params, s.ret.instantiate(t, n, space))
        })
        .collect()
}

/// The value of a named constant.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ConstValue {
    Int(i64),
    UInt(u64),
    Float(f64),
}

/// A named constant of the Metal headers (`M_PI_F`, `INT_MAX`, `FLT_MAX`,
/// ...), with its type.
pub fn constant(name: &str) -> Option<(Type, ConstValue)> {
    let (_, ty, v) = table::CONSTANTS.iter().find(|c| c.0 == name)?;
    let ty = crate::types::builtin_type_name(ty)?;
    let v = match v {
        table::CV::I(i) => ConstValue::Int(*i),
        table::CV::U(u) => ConstValue::UInt(*u),
        table::CV::F(f) => ConstValue::Float(*f),
    };
    Some((ty, v))
}

/// Names of every constant [`constant`] knows.
pub fn constant_names() -> impl Iterator<Item = &'static str> {
    table::CONSTANTS.iter().map(|c| c.0)
}

#[cfg(test)]
mod tests;
