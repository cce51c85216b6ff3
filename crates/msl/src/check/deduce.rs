//! Template argument deduction: a function template's parameters unified
//! with the argument types of a call (or a function pointer type), alias
//! templates looked through, packs gathered.

use super::{Checker, DeclKind, TArg};
use crate::ast::{self, AddressSpace, ExprKind as A};
use crate::hir::{self, ConstValue};
use crate::types::Type;

/// Alias templates deduction looks through inside one another at most.
const MAX_ALIAS_DEPTH: u32 = 32;

impl<'a> Checker<'a, '_> {
    /// `deduce` for function template `d`, looking names up (alias
    /// templates in its parameter types) where the template was declared.
    pub(crate) fn deduce_for(&mut self, d: super::DeclId, args: &[hir::Expr], explicit: Vec<TArg>) -> Option<Vec<TArg>> {
        let arg_tys: Vec<Type> = args.iter().map(|a| a.ty.clone()).collect();
        // An array decays to a pointer into the array's own address space
        // (a string literal to `constant const char*`).
        let decays: Vec<Type> = args.iter().map(|a| self.decay(a.clone()).ty).collect();
        self.deduce_in_env(d, &arg_tys, &decays, explicit)
    }

    /// Deduce template `d`'s arguments from a whole function type (its
    /// parameter types and, when given, its return type), as taking the
    /// address of a template for a known pointer type does.
    pub(crate) fn deduce_for_fn_type(
        &mut self,
        d: super::DeclId,
        params: &[Type],
        ret: Option<&Type>,
        explicit: Vec<TArg>,
    ) -> Option<Vec<TArg>> {
        let DeclKind::FunctionTemplate { ast, params: tparams } = self.decls[d].kind.clone() else { return None };
        // A parameter list of another length cannot be this function's.
        if ast.params.len() != params.len() && !ast.params.iter().any(|p| p.is_pack) {
            return None;
        }
        let ret = ret.filter(|_| !super::templates::is_auto(&ast.ret));
        let mut env = self.decls[d].env.clone();
        env.visible = env.visible.max(d + 1);
        self.with_env(env).deduce_from(tparams, ast, params, &[], ret, explicit)
    }

    /// [`Self::deduce`] for template `d`, seen from where it was declared.
    pub(crate) fn deduce_in_env(&mut self, d: super::DeclId, arg_tys: &[Type], decays: &[Type], explicit: Vec<TArg>) -> Option<Vec<TArg>> {
        let DeclKind::FunctionTemplate { ast, params } = self.decls[d].kind.clone() else { return None };
        let mut env = self.decls[d].env.clone();
        env.visible = env.visible.max(d + 1);
        self.with_env(env).deduce(params, ast, arg_tys, decays, explicit)
    }

    /// Unify a function template's parameters with argument types.
    /// `decays[i]` is what argument `i` decays to when it is an array (a
    /// missing entry: a `thread` pointer).
    pub(crate) fn deduce(
        &self,
        params: &[ast::TemplateParam],
        f: &ast::Function,
        arg_tys: &[Type],
        decays: &[Type],
        explicit: Vec<TArg>,
    ) -> Option<Vec<TArg>> {
        self.deduce_from(params, f, arg_tys, decays, None, explicit)
    }

    /// [`Self::deduce`], also from the return type `ret` when given: an
    /// explicit specialization names the template by its whole function
    /// type (`template <> half2 to_float(bool)` of `template <class T> T
    /// to_float(bool)`).
    pub(crate) fn deduce_from(
        &self,
        params: &[ast::TemplateParam],
        f: &ast::Function,
        arg_tys: &[Type],
        decays: &[Type],
        ret: Option<&Type>,
        explicit: Vec<TArg>,
    ) -> Option<Vec<TArg>> {
        let explicit = super::packs::gather_pack(params, explicit);
        if explicit.len() > params.len() {
            return None;
        }
        let given = explicit.len();
        let mut map: Vec<Option<TArg>> = params.iter().map(|_| None).collect();
        for (i, a) in explicit.into_iter().enumerate() {
            map[i] = Some(a);
        }
        if let Some(ret) = ret {
            if !self.unify(params, &f.ret, ret, &mut map) {
                return None;
            }
        }
        // By-value parameters see decayed arguments, except those that take
        // an array whole.
        let decays_here = |p: &ast::Param| !is_reference(p) && !super::decls::takes_array_whole(&p.ty);
        let decayed = |p: &ast::Param, i: usize| match &arg_tys[i] {
            Type::Array { .. } if matches!(decays.get(i), Some(Type::Pointer { .. })) && decays_here(p) => decays[i].clone(),
            Type::Array { elem, .. } if decays_here(p) => {
                Type::Pointer { pointee: elem.clone(), space: AddressSpace::Thread, is_const: false }
            }
            t => t.clone(),
        };
        let mut next = 0;
        for p in &f.params {
            if p.is_pack {
                // A function parameter pack takes the remaining arguments (it
                // is last in a deducible position): each one deduces the
                // next element of the template packs its type names.
                let rest: Vec<Type> = (next..arg_tys.len()).map(|i| decayed(p, i)).collect();
                if !self.deduce_pack(params, p, &rest, &mut map) {
                    return None;
                }
                next = arg_tys.len();
                continue;
            }
            if next >= arg_tys.len() {
                break;
            }
            next += 1;
            // A parameter whose type is a template parameter given
            // explicitly deduces nothing: the argument converts to it
            // (`f<constant A&>(args)` binds a reference, `f<float>(1)`
            // converts an int).
            if bare_param(params, &p.ty).is_some_and(|i| i < given) {
                continue;
            }
            if !self.unify(params, &p.ty, &decayed(p, next - 1), &mut map) {
                return None;
            }
        }
        // Leave unbound parameters for defaults (complete_targs); only a
        // contiguous prefix can be passed on.
        let mut out = Vec::new();
        for m in map {
            match m {
                Some(a) => out.push(a),
                None => break,
            }
        }
        Some(out)
    }

    /// Deduce template parameter packs from the arguments a function
    /// parameter pack receives (explicitly given elements come first).
    pub(crate) fn deduce_pack(&self, params: &[ast::TemplateParam], p: &ast::Param, args: &[Type], map: &mut [Option<TArg>]) -> bool {
        let packs: Vec<usize> = (0..params.len()).filter(|&i| params[i].is_pack).collect();
        let mut elems: Vec<Vec<TArg>> = packs
            .iter()
            .map(|&k| match &map[k] {
                Some(TArg::Pack(given)) => given.clone(),
                _ => Vec::new(),
            })
            .collect();
        for (j, t) in args.iter().enumerate() {
            let mut sub = map.to_vec();
            for (n, &k) in packs.iter().enumerate() {
                sub[k] = elems[n].get(j).cloned();
            }
            if !self.unify(params, &p.ty, t, &mut sub) {
                return false;
            }
            for (n, &k) in packs.iter().enumerate() {
                match sub[k].take() {
                    Some(v) if j >= elems[n].len() => elems[n].push(v),
                    _ => {}
                }
            }
            // Other parameters deduced on the way keep their values.
            for (i, v) in sub.into_iter().enumerate() {
                if !packs.contains(&i) && map[i].is_none() {
                    map[i] = v;
                }
            }
        }
        for (n, &k) in packs.iter().enumerate() {
            map[k] = Some(TArg::Pack(std::mem::take(&mut elems[n])));
        }
        true
    }

    pub(crate) fn unify(&self, params: &[ast::TemplateParam], te: &ast::TypeExpr, ty: &Type, map: &mut [Option<TArg>]) -> bool {
        let find = |name: &str| params.iter().position(|p| *p.name.name == *name);
        let bind = |map: &mut [Option<TArg>], i: usize, v: TArg| -> bool {
            match &map[i] {
                // A value deduced from an array bound (an `int`) agrees with
                // the same value given explicitly as the parameter's own type
                // (`short N`): template values compare by value.
                Some(TArg::Value(a, _)) if matches!(&v, TArg::Value(..)) => {
                    let TArg::Value(b, _) = &v else { return false };
                    match (a, b) {
                        (ConstValue::Float(_), _) | (_, ConstValue::Float(_)) => a == b,
                        _ => a.as_i64() == b.as_i64(),
                    }
                }
                Some(existing) => *existing == v,
                None => {
                    map[i] = Some(v);
                    true
                }
            }
        };
        match &te.kind {
            ast::TypeExprKind::Named { path, .. } => {
                // `metal::vec<T, N>` is `vec<T, N>`.
                let segs = match path.segments.as_slice() {
                    [m, rest @ ..] if !rest.is_empty() && &*m.ident.name == "metal" => rest,
                    all => all,
                };
                // `metal::array<T, N>` names Metal's own type, never a
                // program's alias of the same name (c10's `array`).
                let metal_qualified = segs.len() != path.segments.len();
                let [seg] = segs else { return true };
                match &seg.template_args {
                    None => {
                        if let Some(i) = find(&seg.ident.name) {
                            if matches!(params[i].kind, ast::TemplateParamKind::Type { .. }) {
                                return bind(map, i, TArg::Type(ty.clone()));
                            }
                        }
                        true
                    }
                    Some(targs) => {
                        let name = &*seg.ident.name;
                        // `P<T>` with `P` a template template parameter.
                        if let Some(i) = find(name).filter(|&i| matches!(params[i].kind, ast::TemplateParamKind::Template { .. })) {
                            return self.unify_template_param(params, i, targs, ty, map);
                        }
                        let int = |n: u8| TArg::Value(ConstValue::Int(n as i64), Type::INT);
                        let int_arg = |n: u32| TArg::Value(ConstValue::Int(n as i64), Type::INT);
                        let pairs: Vec<(&ast::TemplateArg, TArg)> = match (name, ty) {
                            ("vec", Type::Vector { elem, len, .. }) if targs.len() == 2 => {
                                vec![(&targs[0], TArg::Type(Type::Scalar(*elem))), (&targs[1], int(*len))]
                            }
                            // `metal::array<T, N>` is an array type here.
                            ("array", Type::Array { elem, len })
                                if targs.len() == 2 && (metal_qualified || self.alias_template_named(name).is_none()) =>
                            {
                                vec![(&targs[0], TArg::Type((**elem).clone())), (&targs[1], int_arg(*len))]
                            }
                            ("atomic", Type::Atomic(elem)) if targs.len() == 1 => vec![(&targs[0], TArg::Type(Type::Scalar(*elem)))],
                            ("simdgroup_matrix", Type::SimdMatrix { elem, rows, cols }) if targs.len() == 3 => {
                                vec![(&targs[0], TArg::Type(Type::Scalar(*elem))), (&targs[1], int(*rows)), (&targs[2], int(*cols))]
                            }
                            // An alias template is transparent: deduce
                            // through the type it names.
                            _ if !metal_qualified
                                && self.alias_unify_depth.get() < MAX_ALIAS_DEPTH
                                && self.alias_template_named(name).is_some() =>
                            {
                                let Some((aparams, aliased)) = self.alias_template_named(name) else { return true };
                                let mut inner: Vec<Option<TArg>> = vec![None; aparams.len()];
                                self.alias_unify_depth.set(self.alias_unify_depth.get() + 1);
                                let fits = self.unify(aparams, aliased, ty, &mut inner);
                                self.alias_unify_depth.set(self.alias_unify_depth.get() - 1);
                                if !fits {
                                    return false;
                                }
                                targs.iter().zip(inner).filter_map(|(ta, v)| Some((ta, v?))).collect()
                            }
                            _ => match ty {
                                // A class derived from an instance deduces from that base.
                                Type::Struct(sid) => match self.instance_or_base_of(*sid, name) {
                                    Some(args) => targs.iter().zip(args).collect(),
                                    None => return true,
                                },
                                _ => return true,
                            },
                        };
                        pairs.into_iter().all(|(ta, v)| self.unify_targ(params, ta, v, map))
                    }
                }
            }
            ast::TypeExprKind::Pointer { pointee, .. } => match (&pointee.kind, ty) {
                // `T (*op)(T, T)` deduces from the function pointer's type.
                (ast::TypeExprKind::Function { ret, params: ps }, Type::FnPtr { ret: tr, params: tps }) => {
                    ps.len() == tps.len()
                        && self.unify(params, ret, tr, map)
                        && ps.iter().zip(tps).all(|(p, t)| self.unify(params, p, t, map))
                }
                (_, Type::Pointer { pointee: tp, .. }) => self.unify(params, pointee, tp, map),
                _ => true,
            },
            ast::TypeExprKind::Function { .. } => true,
            ast::TypeExprKind::Reference { referee } => self.unify(params, referee, ty.strip_ref(), map),
            ast::TypeExprKind::Array { elem, size } => match ty {
                Type::Array { elem: te2, len } => {
                    // `T (&a)[N]` deduces N from the argument's length.
                    if let Some(ast::Expr { kind: A::Name(p), .. }) = size.as_deref() {
                        if let Some(i) = p.segments.first().filter(|_| p.segments.len() == 1).and_then(|s| find(&s.ident.name)) {
                            if let ast::TemplateParamKind::Value { .. } = params[i].kind {
                                if !bind(map, i, TArg::Value(ConstValue::Int(*len as i64), Type::INT)) {
                                    return false;
                                }
                            }
                        }
                    }
                    self.unify(params, elem, te2, map)
                }
                Type::Pointer { pointee: te2, .. } => self.unify(params, elem, te2, map),
                _ => true,
            },
            ast::TypeExprKind::Decltype { .. } => true,
        }
    }

    /// Deduce from one template argument of a pattern (`T`, `N`, or a
    /// type built from parameters such as `vec<T, 2>`) given its value.
    pub(crate) fn unify_targ(&self, params: &[ast::TemplateParam], ta: &ast::TemplateArg, v: TArg, map: &mut [Option<TArg>]) -> bool {
        let pname = match ta {
            ast::TemplateArg::Type(t) => match &t.kind {
                ast::TypeExprKind::Named { path, .. } if path.segments.len() == 1 && path.segments[0].template_args.is_none() => {
                    Some(&path.segments[0].ident.name)
                }
                _ => None,
            },
            ast::TemplateArg::Expr(ast::Expr { kind: A::Name(p), .. }) if p.segments.len() == 1 => Some(&p.segments[0].ident.name),
            _ => None,
        };
        if let Some(i) = pname.and_then(|n| params.iter().position(|p| p.name.name == *n)) {
            let v = match (&params[i].kind, v) {
                (ast::TemplateParamKind::Value { .. }, v @ (TArg::Value(..) | TArg::Func(..)))
                | (ast::TemplateParamKind::Type { .. }, v @ TArg::Type(_))
                | (ast::TemplateParamKind::Template { .. }, v @ TArg::Template(_)) => v,
                _ => return false,
            };
            return match &map[i] {
                Some(existing) => *existing == v,
                None => {
                    map[i] = Some(v);
                    true
                }
            };
        }
        match (ta, v) {
            (ast::TemplateArg::Type(te), TArg::Type(t)) => self.unify(params, te, &t, map),
            _ => true,
        }
    }

    /// The parameters and aliased type of the alias template `name` seen
    /// from here (also as a member of the struct whose code this is).
    pub(crate) fn alias_template_named(&self, name: &str) -> Option<(&'a [ast::TemplateParam], &'a ast::TypeExpr)> {
        let mut decls = self.lookup_global(name);
        if decls.is_empty() {
            if let Some(sid) = self.env.this_struct {
                decls = self.lookup_member_decls(sid, name);
            }
        }
        match self.decls[*decls.last()?].kind {
            DeclKind::AliasTemplate { ast, params } => Some((params, &ast.ty)),
            _ => None,
        }
    }
}

/// A parameter declared as a reference (`T (&a)[N]`, `thread T&`): arrays
/// bind to it without decaying.
pub(crate) fn is_reference(p: &ast::Param) -> bool {
    matches!(p.ty.kind, ast::TypeExprKind::Reference { .. })
}

/// The template parameter a parameter's type is, alone (`T`, `const T`,
/// `T&`): its index.
fn bare_param(params: &[ast::TemplateParam], te: &ast::TypeExpr) -> Option<usize> {
    match &te.kind {
        ast::TypeExprKind::Reference { referee } => bare_param(params, referee),
        ast::TypeExprKind::Named { path, addr_space: None, .. } => match path.segments.as_slice() {
            [seg] if seg.template_args.is_none() => params.iter().position(|p| *p.name.name == *seg.ident.name && !p.is_pack),
            _ => None,
        },
        _ => None,
    }
}
