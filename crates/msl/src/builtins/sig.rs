//! The signature language of the builtin table, and its parser.
//!
//! A signature is one C++-like declaration, optionally followed by a
//! `where` clause constraining its variables:
//!
//! ```text
//! Tn clamp(Tn x, Tn minval, Tn maxval) where T: num
//! T atomic_fetch_add_explicit(volatile S atomic<T>* object, T operand, memory_order order) where T: int|uint, S: device|threadgroup
//! void simdgroup_load(thread simdgroup_matrix<T,8,8>& d, const S T* src, ulong elements_per_row = 8) where T: floating, S: device|threadgroup
//! ```
//!
//! * `$` stands for the function's own name (so one text can serve many
//!   functions: `Tn $(Tn x) where T: floating`).
//! * `T` is a scalar type variable. `where T: ...` lists what it may be,
//!   separated by `|`: scalar names (`int`, `half`, ...) or the classes
//!   `floating` (half, float, bfloat), `integer` (char ... ulong), `num`
//!   (integer and floating) and `any` (num and bool). Without a clause `T`
//!   may be `any`.
//! * A suffix on `T` or on a scalar name gives the shape: none = scalar,
//!   `n` = scalar or vector of the same length `n` (1..=4) everywhere in the
//!   signature, `v` = like `n` but a vector (2..=4), a digit = that vector
//!   length (`T3`, `ulong2`). `booln` is a bool vector of the same `n`.
//! * `Tu` / `Tun` is the unsigned counterpart of `T`.
//! * `atomic<T>` and `simdgroup_matrix<T,8,8>` are the atomic and SIMD-group
//!   matrix types; `mem_flags`, `memory_order`, `thread_scope` the enums.
//! * Pointers and references take `const`, `volatile` (accepted, ignored:
//!   the type model has no volatile) and an address space: `device`,
//!   `constant`, `threadgroup`, `thread`, or the variable `S`, constrained
//!   with `where S: device|threadgroup`. A non-const reference parameter
//!   binds only an lvalue of exactly that type (an out parameter).
//! * Parameter names are optional; `= value` makes a parameter optional
//!   (every later one must be optional too). The value is for display.

use crate::ast::AddressSpace;
use crate::types::{BuiltinEnum, Scalar, Type};

/// The element of a scalar/vector/atomic/matrix pattern.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Elem {
    /// `T`
    Var,
    /// `Tu`: the unsigned type of the same size as `T`.
    Unsigned,
    Fixed(Scalar),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Width {
    Fixed(u8),
    /// The signature's shared `n`.
    N,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Space {
    Fixed(AddressSpace),
    Var,
}

/// A parameter or return type pattern.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Pat {
    Void,
    Num { elem: Elem, width: Width },
    Enum(BuiltinEnum),
    Atomic(Elem),
    SimdMatrix(Elem),
    Ptr { space: Space, is_const: bool, pointee: Box<Pat> },
    Ref { space: Space, is_const: bool, referee: Box<Pat> },
}

impl Pat {
    pub(crate) fn uses_t(&self) -> bool {
        match self {
            Pat::Num { elem, .. } | Pat::Atomic(elem) | Pat::SimdMatrix(elem) => !matches!(elem, Elem::Fixed(_)),
            Pat::Ptr { pointee: p, .. } | Pat::Ref { referee: p, .. } => p.uses_t(),
            Pat::Void | Pat::Enum(_) => false,
        }
    }

    pub(crate) fn uses_n(&self) -> bool {
        match self {
            Pat::Num { width, .. } => *width == Width::N,
            Pat::Ptr { pointee: p, .. } | Pat::Ref { referee: p, .. } => p.uses_n(),
            _ => false,
        }
    }

    pub(crate) fn uses_s(&self) -> bool {
        match self {
            Pat::Ptr { space, pointee: p, .. } | Pat::Ref { space, referee: p, .. } => *space == Space::Var || p.uses_s(),
            _ => false,
        }
    }

    /// The concrete type for the given choice of variables.
    pub(crate) fn instantiate(&self, t: Scalar, n: u8, s: AddressSpace) -> Type {
        let elem = |e: &Elem| match e {
            Elem::Var => t,
            Elem::Unsigned => t.to_unsigned(),
            Elem::Fixed(x) => *x,
        };
        let space = |sp: &Space| match sp {
            Space::Fixed(a) => *a,
            Space::Var => s,
        };
        match self {
            Pat::Void => Type::Void,
            Pat::Num { elem: e, width } => {
                let len = match width {
                    Width::Fixed(k) => *k,
                    Width::N => n,
                };
                Type::vector(elem(e), len)
            }
            Pat::Enum(e) => Type::BuiltinEnum(*e),
            Pat::Atomic(e) => Type::Atomic(elem(e)),
            Pat::SimdMatrix(e) => Type::SimdMatrix { elem: elem(e), rows: 8, cols: 8 },
            Pat::Ptr { space: sp, is_const, pointee } => Type::pointer(pointee.instantiate(t, n, s), space(sp), *is_const),
            Pat::Ref { space: sp, is_const, referee } => {
                Type::Reference { referee: Box::new(referee.instantiate(t, n, s)), space: space(sp), is_const: *is_const }
            }
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Param {
    pub(crate) pat: Pat,
    pub(crate) name: Option<String>,
    pub(crate) default: Option<String>,
}

/// One concrete overload: parameter types (out parameters are references)
/// and the return type.
#[derive(Clone, Debug, PartialEq)]
pub struct Overload {
    pub params: Vec<Type>,
    pub ret: Type,
}

/// One parsed declaration of a builtin.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Signature {
    /// The declaration as written in the table (with `$` replaced).
    pub text: String,
    pub(crate) ret: Pat,
    pub(crate) params: Vec<Param>,
    /// Arguments required (parameters without a default).
    pub min_args: usize,
    /// What `T` may be (empty when the signature has no `T`).
    pub(crate) t_allowed: Vec<Scalar>,
    /// What `S` may be.
    pub(crate) s_allowed: Vec<AddressSpace>,
    /// Smallest `n` (2 when written `Tv`).
    pub(crate) n_min: u8,
    /// Callable as `metal::fast::` / `metal::precise::`.
    pub(crate) fast: bool,
}

impl Signature {
    pub fn max_args(&self) -> usize {
        self.params.len()
    }

    pub fn accepts_count(&self, n: usize) -> bool {
        n >= self.min_args && n <= self.params.len()
    }

    /// Every concrete overload this declaration stands for, with all its
    /// parameters: one per choice of `T`, `n` and `S` (for tests that call
    /// each one).
    pub fn overloads(&self) -> Vec<Overload> {
        let uses = |f: fn(&Pat) -> bool| f(&self.ret) || self.params.iter().any(|p| f(&p.pat));
        let ts = if uses(Pat::uses_t) { self.t_allowed.clone() } else { vec![Scalar::Float] };
        let ns: Vec<u8> = if uses(Pat::uses_n) { (self.n_min..=4).collect() } else { vec![1] };
        let ss = if uses(Pat::uses_s) { self.s_allowed.clone() } else { vec![AddressSpace::Thread] };
        let mut out = Vec::new();
        for &t in &ts {
            for &n in &ns {
                for &s in &ss {
                    let params = self.params.iter().map(|p| p.pat.instantiate(t, n, s)).collect();
                    out.push(Overload { params, ret: self.ret.instantiate(t, n, s) });
                }
            }
        }
        out
    }

    /// For messages: the declaration, then what its variables stand for,
    /// e.g. `Tn exp(Tn x) where T is half, bfloat or float (or a vector of them: n is 1, 2, 3 or 4, ...)`.
    pub fn display(&self) -> String {
        let decl = self.text.split(" where ").next().unwrap_or(&self.text).trim();
        let mut parts = Vec::new();
        let uses_t = self.ret.uses_t() || self.params.iter().any(|p| p.pat.uses_t());
        if uses_t {
            let names: Vec<&str> = self.t_allowed.iter().map(|s| s.name()).collect();
            parts.push(format!("T is {}", or_list(&names)));
        }
        let uses_s = self.params.iter().any(|p| p.pat.uses_s());
        if uses_s {
            let names: Vec<&str> = self.s_allowed.iter().map(|s| s.keyword()).collect();
            parts.push(format!("S is {}", or_list(&names)));
        }
        let mut out = decl.to_string();
        if !parts.is_empty() {
            out.push_str(" where ");
            out.push_str(&parts.join(", "));
        }
        let uses_n = self.ret.uses_n() || self.params.iter().any(|p| p.pat.uses_n());
        if uses_n {
            out.push_str(if self.n_min >= 2 {
                " (n is 2, 3 or 4)"
            } else {
                " (or a vector of them: n is 1, 2, 3 or 4, the same for every parameter)"
            });
        }
        out
    }
}

fn or_list(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [a] => a.to_string(),
        [init @ .., last] => format!("{} or {}", init.join(", "), last),
    }
}

fn scalar_named(s: &str) -> Option<Scalar> {
    Scalar::ALL.iter().copied().find(|x| x.name() == s)
}

/// Scalar classes and names usable after `T:`.
fn class(name: &str) -> Option<Vec<Scalar>> {
    let all = Scalar::ALL.iter().copied();
    Some(match name {
        "floating" => all.filter(|s| s.is_float()).collect(),
        "integer" => all.filter(|s| s.is_integer()).collect(),
        "num" => all.filter(|s| *s != Scalar::Bool).collect(),
        "any" => all.collect(),
        _ => vec![scalar_named(name)?],
    })
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Tok {
    Ident(String),
    Punct(char),
}

fn tokenize(s: &str) -> Result<Vec<Tok>, String> {
    let mut out = Vec::new();
    let mut chars = s.chars().peekable();
    while let Some(&c) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
        } else if c.is_ascii_alphanumeric() || c == '_' || c == '$' || c == '.' || c == '-' {
            let mut id = String::new();
            while let Some(&c) = chars.peek() {
                if c.is_ascii_alphanumeric() || c == '_' || c == '$' || c == '.' || c == '-' {
                    id.push(c);
                    chars.next();
                } else {
                    break;
                }
            }
            out.push(Tok::Ident(id));
        } else if "(),<>*&:=|".contains(c) {
            out.push(Tok::Punct(c));
            chars.next();
        } else {
            return Err(format!("unexpected character `{c}`"));
        }
    }
    Ok(out)
}

struct Parser {
    toks: Vec<Tok>,
    pos: usize,
    n_min: u8,
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos)
    }

    fn next(&mut self) -> Option<Tok> {
        let t = self.toks.get(self.pos).cloned();
        self.pos += 1;
        t
    }

    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(&Tok::Punct(c)) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, c: char) -> Result<(), String> {
        if self.eat(c) {
            Ok(())
        } else {
            Err(format!("expected `{c}`, found {:?}", self.peek()))
        }
    }

    fn ident(&mut self) -> Result<String, String> {
        match self.next() {
            Some(Tok::Ident(s)) => Ok(s),
            t => Err(format!("expected a name, found {t:?}")),
        }
    }

    fn peek_ident(&self) -> Option<&str> {
        match self.peek() {
            Some(Tok::Ident(s)) => Some(s),
            _ => None,
        }
    }

    /// `T`, `Tn`, `Tv`, `T3`, `Tu`, `Tun`, `float`, `booln`, `ulong2`.
    fn shaped(&mut self, word: &str) -> Option<(Elem, Width)> {
        let (base, width) = match word.as_bytes().last() {
            Some(b'n') if word.len() > 1 => (&word[..word.len() - 1], Width::N),
            Some(b'v') if word.len() > 1 => {
                self.n_min = 2;
                (&word[..word.len() - 1], Width::N)
            }
            Some(d @ b'2'..=b'4') if word.len() > 1 => (&word[..word.len() - 1], Width::Fixed(d - b'0')),
            _ => (word, Width::Fixed(1)),
        };
        let elem = match base {
            "T" => Elem::Var,
            "Tu" => Elem::Unsigned,
            s => Elem::Fixed(scalar_named(s)?),
        };
        Some((elem, width))
    }

    fn elem(&mut self) -> Result<Elem, String> {
        let w = self.ident()?;
        match self.shaped(&w) {
            Some((e, Width::Fixed(1))) => Ok(e),
            _ => Err(format!("`{w}` is not a scalar pattern")),
        }
    }

    fn base(&mut self) -> Result<Pat, String> {
        let w = self.ident()?;
        Ok(match w.as_str() {
            "void" => Pat::Void,
            "mem_flags" => Pat::Enum(BuiltinEnum::MemFlags),
            "memory_order" => Pat::Enum(BuiltinEnum::MemoryOrder),
            "thread_scope" => Pat::Enum(BuiltinEnum::ThreadScope),
            "atomic" => {
                self.expect('<')?;
                let e = self.elem()?;
                self.expect('>')?;
                Pat::Atomic(e)
            }
            "simdgroup_matrix" => {
                self.expect('<')?;
                let e = self.elem()?;
                for _ in 0..2 {
                    self.expect(',')?;
                    if self.ident()? != "8" {
                        return Err("only 8x8 SIMD-group matrices exist".into());
                    }
                }
                self.expect('>')?;
                Pat::SimdMatrix(e)
            }
            _ => match self.shaped(&w) {
                Some((elem, width)) => Pat::Num { elem, width },
                None => return Err(format!("unknown type `{w}`")),
            },
        })
    }

    /// Qualifiers, base type, then `*` or `&`.
    fn ty(&mut self) -> Result<Pat, String> {
        let (mut is_const, mut space) = (false, None);
        loop {
            let sp = match self.peek_ident() {
                Some("const") => {
                    is_const = true;
                    self.pos += 1;
                    continue;
                }
                Some("volatile") => {
                    self.pos += 1;
                    continue;
                }
                Some("device") => Space::Fixed(AddressSpace::Device),
                Some("constant") => Space::Fixed(AddressSpace::Constant),
                Some("threadgroup") => Space::Fixed(AddressSpace::Threadgroup),
                Some("thread") => Space::Fixed(AddressSpace::Thread),
                Some("S") => Space::Var,
                _ => break,
            };
            space = Some(sp);
            self.pos += 1;
        }
        let base = self.base()?;
        if self.eat('*') {
            let space = space.ok_or("a pointer needs an address space")?;
            Ok(Pat::Ptr { space, is_const, pointee: Box::new(base) })
        } else if self.eat('&') {
            let space = space.unwrap_or(Space::Fixed(AddressSpace::Thread));
            Ok(Pat::Ref { space, is_const, referee: Box::new(base) })
        } else if space.is_some() {
            Err("address space on a value type".into())
        } else {
            Ok(base)
        }
    }

    fn param(&mut self) -> Result<Param, String> {
        let pat = self.ty()?;
        let name = match self.peek() {
            Some(Tok::Ident(_)) => Some(self.ident()?),
            _ => None,
        };
        let default = if self.eat('=') { Some(self.ident()?) } else { None };
        Ok(Param { pat, name, default })
    }
}

/// Parse one declaration; `name` replaces `$` and must match the declared name.
pub(crate) fn parse(name: &str, text: &str, fast: bool) -> Result<Signature, String> {
    let text = text.replace('$', name);
    let (decl, constraints) = match text.split_once(" where ") {
        Some((d, c)) => (d, Some(c)),
        None => (text.as_str(), None),
    };
    let mut p = Parser { toks: tokenize(decl)?, pos: 0, n_min: 1 };
    let ret = p.ty()?;
    let declared = p.ident()?;
    if declared != name {
        return Err(format!("declares `{declared}` in the entry of `{name}`"));
    }
    p.expect('(')?;
    let mut params = Vec::new();
    if !p.eat(')') {
        loop {
            params.push(p.param()?);
            if p.eat(')') {
                break;
            }
            p.expect(',')?;
        }
    }
    if p.pos != p.toks.len() {
        return Err(format!("trailing text after the parameter list: {:?}", &p.toks[p.pos..]));
    }
    let min_args = params.iter().take_while(|q| q.default.is_none()).count();
    if params[min_args..].iter().any(|q| q.default.is_none()) {
        return Err("a parameter without a default follows one with a default".into());
    }
    let mut t_allowed = class("any").unwrap_or_default();
    let mut s_allowed = vec![AddressSpace::Device, AddressSpace::Constant, AddressSpace::Threadgroup, AddressSpace::Thread];
    if let Some(c) = constraints {
        for clause in c.split(',') {
            let (var, list) = clause.split_once(':').ok_or_else(|| format!("bad constraint `{clause}`"))?;
            let items = list.split('|').map(str::trim);
            match var.trim() {
                "T" => {
                    t_allowed.clear();
                    for item in items {
                        for s in class(item).ok_or_else(|| format!("unknown scalar class `{item}`"))? {
                            if !t_allowed.contains(&s) {
                                t_allowed.push(s);
                            }
                        }
                    }
                }
                "S" => {
                    s_allowed.clear();
                    for item in items {
                        s_allowed.push(match item {
                            "device" => AddressSpace::Device,
                            "constant" => AddressSpace::Constant,
                            "threadgroup" => AddressSpace::Threadgroup,
                            "thread" => AddressSpace::Thread,
                            _ => return Err(format!("unknown address space `{item}`")),
                        });
                    }
                }
                v => return Err(format!("unknown variable `{v}` in constraint")),
            }
        }
    }
    let uses_t = ret.uses_t() || params.iter().any(|q| q.pat.uses_t());
    if !uses_t {
        t_allowed.clear();
    }
    Ok(Signature { text, ret, params, min_args, t_allowed, s_allowed, n_min: p.n_min, fast })
}
