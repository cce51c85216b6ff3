//! Inheritance: base classes as subobjects.
//!
//! A base class is laid out as a hidden member at the front of the derived
//! struct (bases first, in declaration order; an empty base takes no bytes).
//! Everything else is lookup: a member, static member, nested type or member
//! function not declared in a struct is looked for in its bases (C++'s
//! rules: the derived class hides its bases; a name found in two different
//! base subobjects is ambiguous), and a derived object converts to a base
//! (value, reference or pointer) by naming the base subobject. There are no
//! virtual functions, so a call of a base's member function is an ordinary
//! call with `this` pointing at the base subobject.

use super::expr::mk;
use super::Checker;
use crate::ast;
use crate::hir::{self, ExprKind as H};
use crate::source::Span;
use crate::types::{StructId, Type};
use std::rc::Rc;

/// The hidden member that holds base number `i`.
pub(crate) fn base_field_name(i: usize) -> String {
    format!("$base{i}")
}

/// The hidden member that holds the anonymous union or struct declared as
/// member number `i`.
pub(crate) fn anonymous_field_name(i: usize) -> String {
    format!("$anon{i}")
}

/// Whether a member name is one of the hidden base members.
pub(crate) fn is_hidden_member(name: &str) -> bool {
    super::is_made_up(name)
}

/// Where a name was found among the bases of a struct.
pub(crate) enum Found {
    None,
    /// Field indices from the derived object down to the base subobject
    /// that declares the name, and that base.
    At(Vec<u32>, StructId),
    /// Found in more than one base subobject: the bases, for the message.
    Ambiguous(Vec<StructId>),
}

impl<'a> Checker<'a, '_> {
    /// The bases of struct `sid`: (base struct, index of its hidden member).
    pub(crate) fn bases_of(&self, sid: StructId) -> &[(StructId, u32)] {
        &self.structs[sid.0 as usize].bases
    }

    /// Resolve the base classes of a struct being declared. Returns the
    /// hidden members to lay out first; records the bases.
    pub(crate) fn declare_bases(&mut self, sid: StructId, bases: &'a [ast::BaseSpec]) -> Vec<(String, Type)> {
        let mut fields = Vec::new();
        for b in bases {
            let Some(q) = self.resolve_type(&b.ty) else { continue };
            let Type::Struct(bsid) = q.ty else {
                let n = self.ty_name(&q.ty);
                self.error(b.ty.span, format!("`{n}` is not a struct, so it cannot be a base class"))
                    .help("a base class must be a struct (or class) type");
                continue;
            };
            if bsid == sid || self.is_base_of(sid, bsid) {
                self.error(b.ty.span, "a struct cannot inherit from itself");
                continue;
            }
            if self.structs[sid.0 as usize].bases.iter().any(|&(x, _)| x == bsid) {
                let n = self.tables.struct_def(bsid).name.clone();
                self.error(b.ty.span, format!("`{n}` is named twice as a base class"));
                continue;
            }
            let idx = fields.len() as u32;
            fields.push((base_field_name(idx as usize), Type::Struct(bsid)));
            self.structs[sid.0 as usize].bases.push((bsid, idx));
        }
        if !fields.is_empty() {
            self.base_scopes.insert(self.structs[sid.0 as usize].scope.clone(), sid);
        }
        fields
    }

    /// Whether `base` is a (direct or indirect) base class of `derived`.
    pub(crate) fn is_base_of(&self, base: StructId, derived: StructId) -> bool {
        self.bases_of(derived).iter().any(|&(b, _)| b == base || self.is_base_of(base, b))
    }

    /// The path of hidden members from `derived` to its base `base`: `None`
    /// when it is not a base, or is one several times over (ambiguous).
    pub(crate) fn base_path(&self, derived: StructId, base: StructId) -> Option<Vec<u32>> {
        let mut paths = Vec::new();
        self.collect_base_paths(derived, base, &mut Vec::new(), &mut paths);
        match paths.len() {
            1 => paths.pop(),
            _ => None,
        }
    }

    fn collect_base_paths(&self, from: StructId, base: StructId, prefix: &mut Vec<u32>, out: &mut Vec<Vec<u32>>) {
        for &(b, idx) in self.bases_of(from) {
            prefix.push(idx);
            if b == base {
                out.push(prefix.clone());
            } else {
                self.collect_base_paths(b, base, prefix, out);
            }
            prefix.pop();
        }
    }

    /// Search the bases of `sid` for the first struct (nearest in each
    /// branch) where `has` holds. A struct where it holds hides its own bases.
    pub(crate) fn find_in_bases(&self, sid: StructId, has: &dyn Fn(&Self, StructId) -> bool) -> Found {
        let mut hits: Vec<(Vec<u32>, StructId)> = Vec::new();
        for &(b, idx) in self.bases_of(sid) {
            if has(self, b) {
                hits.push((vec![idx], b));
                continue;
            }
            match self.find_in_bases(b, has) {
                Found::None => {}
                Found::At(mut path, at) => {
                    path.insert(0, idx);
                    hits.push((path, at));
                }
                Found::Ambiguous(list) => return Found::Ambiguous(list),
            }
        }
        match hits.len() {
            0 => Found::None,
            1 => {
                let (path, at) = hits.pop().expect("one hit");
                Found::At(path, at)
            }
            _ => Found::Ambiguous(hits.into_iter().map(|(_, s)| s).collect()),
        }
    }

    /// The base subobject of `obj` reached through `path`.
    pub(crate) fn subobject(&self, mut obj: hir::Expr, path: &[u32]) -> hir::Expr {
        let span = obj.span;
        for &idx in path {
            let Type::Struct(sid) = obj.ty else { break };
            obj = self.field_expr(obj, sid, idx as usize, span);
        }
        obj
    }

    /// `obj` as its base class `to`, when `obj` is a struct derived from
    /// `to` (a place stays a place, so references can bind to it).
    pub(crate) fn upcast(&self, obj: hir::Expr, to: &Type) -> Result<hir::Expr, hir::Expr> {
        let (Type::Struct(from), Type::Struct(to)) = (&obj.ty, to) else { return Err(obj) };
        if from == to {
            return Err(obj);
        }
        match self.base_path(*from, *to) {
            Some(path) => Ok(self.subobject(obj, &path)),
            None => Err(obj),
        }
    }

    /// Whether a value of type `from` converts to `to` by derived-to-base
    /// (struct to base struct, pointer to pointer to a base).
    pub(crate) fn derived_to_base(&self, from: &Type, to: &Type) -> bool {
        match (from, to) {
            (Type::Struct(d), Type::Struct(b)) => d != b && self.base_path(*d, *b).is_some(),
            (Type::Pointer { pointee: p, space: s1, is_const: c1 }, Type::Pointer { pointee: q, space: s2, is_const: c2 }) => {
                s1 == s2 && (!c1 || *c2) && self.derived_to_base(p, q)
            }
            _ => false,
        }
    }

    /// Convert a derived struct or pointer to a base one (see
    /// [`Self::derived_to_base`]); `None` if it does not apply.
    pub(crate) fn convert_to_base(&self, h: &hir::Expr, to: &Type) -> Option<hir::Expr> {
        if !self.derived_to_base(&h.ty, to) {
            return None;
        }
        match (&h.ty, to) {
            (Type::Struct(_), _) => self.upcast(h.clone(), to).ok(),
            (Type::Pointer { pointee, .. }, Type::Pointer { pointee: base, .. }) => {
                let span = h.span;
                let obj = mk(H::Deref(Box::new(h.clone())), (**pointee).clone(), span);
                let sub = self.upcast(obj, base).ok()?;
                Some(mk(H::AddrOf(Box::new(sub)), to.clone(), span))
            }
            _ => None,
        }
    }

    /// `obj.name` where `name` is declared in a base of `obj`'s struct:
    /// `Some(result)` when found (or reported ambiguous), `None` if no base
    /// has it.
    pub(crate) fn member_in_bases(&mut self, obj: hir::Expr, sid: StructId, name: &ast::Ident, span: Span) -> Option<Option<hir::Expr>> {
        let n: Rc<str> = name.name.clone();
        let has = move |c: &Self, s: StructId| {
            c.tables.struct_def(s).fields.iter().any(|f| *f.name == *n) || c.structs[s.0 as usize].statics.iter().any(|(x, _, _)| *x == n)
        };
        match self.find_in_bases(sid, &has) {
            Found::None => None,
            Found::At(path, _) => {
                let sub = self.subobject(obj, &path);
                Some(self.member(sub, name, false, span))
            }
            Found::Ambiguous(list) => {
                self.ambiguous_member(sid, &name.name, name.span, &list);
                Some(None)
            }
        }
    }

    pub(crate) fn ambiguous_member(&self, sid: StructId, name: &str, span: Span, bases: &[StructId]) {
        let sname = self.tables.struct_def(sid).name.clone();
        let shown: Vec<String> = bases.iter().map(|b| format!("`{}`", self.tables.struct_def(*b).name)).collect();
        self.error(span, format!("member `{name}` of `{sname}` is ambiguous: it is found in several base classes"))
            .note(format!("found in {}", shown.join(" and ")))
            .help(format!("name the base you mean: `Base::{name}`, or declare `{name}` in `{sname}`"));
    }

    /// The fields of `sid` a user can name: its own, then its bases'.
    pub(crate) fn visible_field_names(&self, sid: StructId) -> Vec<String> {
        let mut out: Vec<String> =
            self.tables.struct_def(sid).fields.iter().filter(|f| !is_hidden_member(&f.name)).map(|f| f.name.clone()).collect();
        for &(b, _) in self.bases_of(sid) {
            out.extend(self.visible_field_names(b));
        }
        out
    }

    /// A static data member of `sid` or of one of its bases.
    pub(crate) fn find_static(&self, sid: StructId, name: &str) -> Option<hir::Expr> {
        if let Some((_, _, h)) = self.structs[sid.0 as usize].statics.iter().find(|(n, _, _)| **n == *name) {
            return Some(h.clone());
        }
        let has = |c: &Self, s: StructId| c.structs[s.0 as usize].statics.iter().any(|(n, _, _)| **n == *name);
        match self.find_in_bases(sid, &has) {
            Found::At(_, at) => self.structs[at.0 as usize].statics.iter().find(|(n, _, _)| **n == *name).map(|x| x.2.clone()),
            // Static members are shared: the same one reached twice is fine.
            Found::Ambiguous(list) if list.windows(2).all(|w| w[0] == w[1]) => {
                self.structs[list[0].0 as usize].statics.iter().find(|(n, _, _)| **n == *name).map(|x| x.2.clone())
            }
            _ => None,
        }
    }

    /// The field of `this` (or of a base subobject of it) called `name`:
    /// the path of field indices and the field's type.
    pub(crate) fn this_member_path(&self, sid: StructId, name: &str) -> Option<(Vec<u32>, Type)> {
        let def = self.tables.struct_def(sid);
        if let Some(i) = def.fields.iter().position(|f| f.name == name) {
            return Some((vec![i as u32], def.fields[i].ty.clone()));
        }
        let has = |c: &Self, s: StructId| c.tables.struct_def(s).fields.iter().any(|f| f.name == name);
        let Found::At(mut path, at) = self.find_in_bases(sid, &has) else { return None };
        let def = self.tables.struct_def(at);
        let i = def.fields.iter().position(|f| f.name == name)?;
        path.push(i as u32);
        Some((path, def.fields[i].ty.clone()))
    }

    /// Declarations named `name` in the scope of a base of `sid` (nested
    /// types, aliases, static and template member functions). Constructors
    /// (hidden names) are not inherited.
    pub(crate) fn member_decls_in_bases(&self, sid: StructId, name: &str) -> Vec<usize> {
        if is_hidden_member(name) || self.bases_of(sid).is_empty() {
            return Vec::new();
        }
        let has = |c: &Self, s: StructId| !c.own_member_decls(s, name).is_empty();
        match self.find_in_bases(sid, &has) {
            Found::At(_, at) => self.own_member_decls(at, name),
            Found::Ambiguous(list) => self.own_member_decls(list[0], name),
            Found::None => Vec::new(),
        }
    }

    /// The base of `sid` through which a member function `name` is reached
    /// (`obj` converted to it), when `sid` itself declares none.
    pub(crate) fn method_base(&mut self, obj: hir::Expr, sid: StructId, name: &ast::Ident) -> Option<Option<hir::Expr>> {
        let n: Rc<str> = name.name.clone();
        let has = move |c: &Self, s: StructId| c.own_method(s, &n);
        match self.find_in_bases(sid, &has) {
            Found::None => None,
            Found::At(path, _) => Some(Some(self.subobject(obj, &path))),
            Found::Ambiguous(list) => {
                self.ambiguous_member(sid, &name.name, name.span, &list);
                Some(None)
            }
        }
    }

    /// Whether struct `s` itself declares a member function `name`.
    pub(crate) fn own_method(&self, s: StructId, name: &str) -> bool {
        self.structs[s.0 as usize].methods.iter().any(|(f, _)| *f.name.last().ident.name == *name)
            || self.own_member_decls(s, name).iter().any(|&d| self.is_function_decl(d))
    }

    /// Scope lookup for unqualified names inside a derived struct's member
    /// functions: the bases' scopes of the struct whose scope is `scope`.
    pub(crate) fn lookup_in_base_scopes(&self, scope: &[Rc<str>], name: &str) -> Vec<usize> {
        match self.base_scopes.get(scope) {
            Some(&sid) => self.member_decls_in_bases(sid, name),
            None => Vec::new(),
        }
    }

    /// `*this` seen as struct `to` (the struct whose member function this
    /// is, or one of its bases).
    pub(crate) fn this_as(&self, to: StructId, span: Span) -> Option<hir::Expr> {
        let this = self.fs.as_ref()?.this_local?;
        let this_ty = self.fs.as_ref()?.locals[this.0 as usize].ty.clone();
        let Type::Pointer { pointee, .. } = &this_ty else { return None };
        let obj = mk(H::Deref(Box::new(mk(H::Local(this), this_ty.clone(), span))), (**pointee).clone(), span);
        match self.upcast(obj, &Type::Struct(to)) {
            Ok(sub) => Some(sub),
            Err(same) => (same.ty == Type::Struct(to)).then_some(same),
        }
    }

    /// A constructor's member initializers with base classes first: an
    /// initializer naming a base (`Base(x)`, `Base<T>{x}`) initializes the
    /// hidden member that holds it, as if by `Base{x}`; a base left out
    /// whose struct declares a default constructor gets it run.
    pub(crate) fn with_base_inits(
        &mut self,
        sid: StructId,
        inits: &[(ast::Ident, Vec<ast::Expr>)],
        ctor_span: Span,
    ) -> Vec<(ast::Ident, Vec<ast::Expr>)> {
        if self.bases_of(sid).is_empty() {
            return inits.to_vec();
        }
        let mut bases: Vec<(u32, ast::Ident, Vec<ast::Expr>)> = Vec::new();
        let mut members = Vec::new();
        for (name, args) in inits {
            match self.base_named(sid, name) {
                Some((_, idx)) => {
                    let span = name.span;
                    let hidden = ast::Ident { name: Rc::from(base_field_name(idx as usize)), span };
                    let list = ast::Expr { kind: ast::ExprKind::InitList(args.clone()), span };
                    bases.push((idx, hidden, vec![list]));
                }
                None => members.push((name.clone(), args.clone())),
            }
        }
        for (bsid, idx) in self.bases_of(sid).to_vec() {
            if bases.iter().any(|b| b.0 == idx) {
                continue;
            }
            if self.has_constructors(bsid) && !self.structs[bsid.0 as usize].defaulted_ctor {
                let span = ctor_span;
                let hidden = ast::Ident { name: Rc::from(base_field_name(idx as usize)), span };
                bases.push((idx, hidden, vec![ast::Expr { kind: ast::ExprKind::InitList(Vec::new()), span }]));
            }
        }
        bases.sort_by_key(|b| b.0);
        bases.into_iter().map(|(_, n, a)| (n, a)).chain(members).collect()
    }

    /// The template arguments of `sid` if it is an instance of a template
    /// called `name`, else of its unique base that is one (deduction of
    /// `f(B<T>)` from a class derived from `B<int>`).
    pub(crate) fn instance_or_base_of(&self, sid: StructId, name: &str) -> Option<Vec<super::TArg>> {
        let is_inst = |c: &Self, s: StructId| c.struct_instance_of.get(&s).is_some_and(|(d, _)| *c.decls[*d].name == *name);
        let at = if is_inst(self, sid) {
            sid
        } else {
            match self.find_in_bases(sid, &is_inst) {
                Found::At(_, at) => at,
                _ => return None,
            }
        };
        self.struct_instance_of.get(&at).map(|(_, args)| args.clone())
    }

    /// `__is_empty(T)`: whether `T` is a struct with no data (its bases
    /// empty too), as a `bool` constant.
    pub(crate) fn is_empty_intrinsic(&mut self, args: &[ast::Expr], span: Span) -> Option<hir::Expr> {
        let [arg] = args else {
            self.error(span, "`__is_empty` takes one type");
            return None;
        };
        let ast::ExprKind::Name(path) = &arg.kind else {
            self.error(arg.span, "`__is_empty` takes a type");
            return None;
        };
        let te = ast::TypeExpr {
            kind: ast::TypeExprKind::Named { path: path.clone(), is_const: false, is_volatile: false, addr_space: None },
            span: arg.span,
        };
        let q = self.resolve_type(&te)?;
        let empty = matches!(q.ty, Type::Struct(s) if self.tables.struct_def(s).size == 0);
        Some(mk(H::Const(hir::ConstValue::Bool(empty)), Type::BOOL, span))
    }

    /// Bases whose constructor a member initializer `name(...)` names:
    /// the base struct and its hidden member, if `name` is a base's name.
    pub(crate) fn base_named(&mut self, sid: StructId, name: &ast::Ident) -> Option<(StructId, u32)> {
        let bases = self.bases_of(sid).to_vec();
        if bases.is_empty() || self.tables.struct_def(sid).fields.iter().any(|f| *f.name == *name.name) {
            return None;
        }
        // `Base` may be the base's own name, the name of the template it
        // is an instance of, or an alias for it.
        let by_name: Vec<(StructId, u32)> = bases
            .iter()
            .copied()
            .filter(|&(b, _)| {
                let plain = self.tables.struct_def(b).name.split('<').next().unwrap_or("").to_string();
                plain == *name.name || self.struct_instance_of.get(&b).is_some_and(|(d, _)| *self.decls[*d].name == *name.name)
            })
            .collect();
        if by_name.len() == 1 {
            return Some(by_name[0]);
        }
        let path =
            ast::Path { global: false, segments: vec![ast::PathSegment { ident: name.clone(), template_args: None }], span: name.span };
        if let Some(Type::Struct(t)) = self.resolve_named_type_quiet(&path) {
            return bases.iter().copied().find(|&(b, _)| b == t);
        }
        None
    }
}
