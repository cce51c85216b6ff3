//! Partial ordering of function templates: when two templates match a call
//! equally well, C++ picks the *more specialised* one — the one whose
//! parameter types the other could accept, but not the other way round
//! (`f(T*)` over `f(T)`, `f(vec<T, N>)` over `f(T)`, `sum(T)` over
//! `sum(T, Us...)` for one argument).
//!
//! "Could accept" is decided on the parameter types as written: template
//! `G`'s parameter patterns are matched against `F`'s, binding `G`'s template
//! parameters to whole sub-types of `F`'s (which stand for F's own,
//! otherwise unknown, template parameters). Reference, `const` and address
//! space qualifiers at the top of a parameter are ignored, as C++ does.

use super::{Checker, DeclId, DeclKind};
use crate::ast::{self, TemplateArg, TypeExprKind};
use crate::pretty::{expr_to_string, type_to_string};
use rustc_hash::FxHashMap as HashMap;

impl Checker<'_, '_> {
    /// Is template `f` more specialised than template `g` for a call with
    /// `nargs` arguments?
    pub(crate) fn more_specialized(&self, f: DeclId, g: DeclId, nargs: usize) -> bool {
        let (Some((fa, fp)), Some((ga, gp))) = (self.template_fn(f), self.template_fn(g)) else { return false };
        let f_ge = at_least_as_specialized(fa, ga, gp, nargs);
        let g_ge = at_least_as_specialized(ga, fa, fp, nargs);
        if f_ge && !g_ge {
            return true;
        }
        // Equally specialised: one without a trailing parameter pack beats
        // one that has a pack.
        f_ge && g_ge && !has_pack(fa) && has_pack(ga)
    }

    fn template_fn(&self, d: DeclId) -> Option<(&ast::Function, &[ast::TemplateParam])> {
        match &self.decls[d].kind {
            DeclKind::FunctionTemplate { ast, params } => Some((ast, params)),
            _ => None,
        }
    }
}

fn has_pack(f: &ast::Function) -> bool {
    f.params.iter().any(|p| p.is_pack)
}

/// The parameter of `f` that receives argument `i` (a pack receives the rest).
fn param_for(f: &ast::Function, i: usize) -> Option<&ast::Param> {
    match f.params.get(i) {
        Some(p) if !p.is_pack => Some(p),
        _ => f.params.iter().take(i + 1).find(|p| p.is_pack),
    }
}

/// Can `g`'s parameters (templated by `gparams`) accept every argument
/// position of `f` that a call of `nargs` arguments uses?
fn at_least_as_specialized(f: &ast::Function, g: &ast::Function, gparams: &[ast::TemplateParam], nargs: usize) -> bool {
    let mut bound: HashMap<&str, String> = HashMap::default();
    for i in 0..nargs {
        let (Some(pf), Some(pg)) = (param_for(f, i), param_for(g, i)) else { return false };
        // A pack in `f` against a single parameter in `g`: `g` is narrower.
        if pf.is_pack && !pg.is_pack {
            return false;
        }
        if !matches(&pg.ty, &pf.ty, gparams, &mut bound, true) {
            return false;
        }
    }
    true
}

/// Does pattern `p` (from the template with parameters `params`) match type
/// `t`, binding parameters in `bound`? `top` strips top-level qualifiers.
fn matches<'p>(
    p: &'p ast::TypeExpr,
    t: &ast::TypeExpr,
    params: &'p [ast::TemplateParam],
    bound: &mut HashMap<&'p str, String>,
    top: bool,
) -> bool {
    let (p, t) = if top { (strip(p), strip(t)) } else { (p, t) };
    match (&p.kind, &t.kind) {
        (TypeExprKind::Named { path, .. }, _) if path.segments.len() == 1 && path.segments[0].template_args.is_none() => {
            let name = &*path.segments[0].ident.name;
            match params.iter().find(|q| &*q.name.name == name) {
                Some(q) if matches!(q.kind, ast::TemplateParamKind::Type { .. }) => bind(bound, &q.name.name, type_key(t)),
                _ => type_key(p) == type_key(t),
            }
        }
        (TypeExprKind::Named { path: pp, .. }, TypeExprKind::Named { path: tp, .. }) => {
            if pp.segments.len() != tp.segments.len() {
                return false;
            }
            for (ps, ts) in pp.segments.iter().zip(&tp.segments) {
                if ps.ident.name != ts.ident.name {
                    return false;
                }
                match (&ps.template_args, &ts.template_args) {
                    (None, None) => {}
                    (Some(pa), Some(ta)) if pa.len() == ta.len() => {
                        for (x, y) in pa.iter().zip(ta) {
                            if !matches_arg(x, y, params, bound) {
                                return false;
                            }
                        }
                    }
                    _ => return false,
                }
            }
            true
        }
        (TypeExprKind::Pointer { pointee: a, .. }, TypeExprKind::Pointer { pointee: b, .. }) => matches(a, b, params, bound, false),
        (TypeExprKind::Reference { referee: a }, TypeExprKind::Reference { referee: b }) => matches(a, b, params, bound, false),
        (TypeExprKind::Array { elem: a, .. }, TypeExprKind::Array { elem: b, .. }) => matches(a, b, params, bound, false),
        _ => type_key(p) == type_key(t),
    }
}

fn matches_arg<'p>(p: &'p TemplateArg, t: &TemplateArg, params: &'p [ast::TemplateParam], bound: &mut HashMap<&'p str, String>) -> bool {
    if let Some(name) = value_param(p, params) {
        return bind(bound, name, targ_key(t));
    }
    match (p, t) {
        (TemplateArg::Type(a), TemplateArg::Type(b)) => matches(a, b, params, bound, false),
        _ => targ_key(p) == targ_key(t),
    }
}

/// The name of the value template parameter a template argument names.
fn value_param<'p>(a: &'p TemplateArg, params: &'p [ast::TemplateParam]) -> Option<&'p str> {
    let name: &str = match a {
        TemplateArg::Expr(ast::Expr { kind: ast::ExprKind::Name(p), .. }) if p.segments.len() == 1 => &p.segments[0].ident.name,
        TemplateArg::Type(ast::TypeExpr { kind: TypeExprKind::Named { path, .. }, .. }) if path.segments.len() == 1 => {
            &path.segments[0].ident.name
        }
        _ => return None,
    };
    params.iter().find(|q| &*q.name.name == name && matches!(q.kind, ast::TemplateParamKind::Value { .. })).map(|q| &*q.name.name)
}

fn bind<'p>(bound: &mut HashMap<&'p str, String>, name: &'p str, value: String) -> bool {
    match bound.get(name) {
        Some(v) => *v == value,
        None => {
            bound.insert(name, value);
            true
        }
    }
}

/// A parameter type without its top-level reference, `const` and address space.
fn strip(t: &ast::TypeExpr) -> &ast::TypeExpr {
    match &t.kind {
        TypeExprKind::Reference { referee } => referee,
        _ => t,
    }
}

/// A comparable spelling of a type, without top-level qualifiers.
fn type_key(t: &ast::TypeExpr) -> String {
    match &t.kind {
        TypeExprKind::Named { path, .. } => {
            let plain = ast::TypeExpr {
                kind: TypeExprKind::Named { path: path.clone(), is_const: false, is_volatile: false, addr_space: None },
                span: t.span,
            };
            type_to_string(&plain)
        }
        _ => type_to_string(t),
    }
}

fn targ_key(a: &TemplateArg) -> String {
    match a {
        TemplateArg::Type(t) => type_key(t),
        TemplateArg::Expr(e) => expr_to_string(e),
        TemplateArg::Pack(a) => format!("{}...", targ_key(a)),
    }
}

/// Does each pattern argument in `general` (templated by `params`) match
/// the corresponding argument of `special`, with consistent bindings?
pub(crate) fn template_args_match(general: &[TemplateArg], special: &[TemplateArg], params: &[ast::TemplateParam]) -> bool {
    let mut bound: HashMap<&str, String> = HashMap::default();
    general.iter().zip(special).all(|(g, s)| matches_arg(g, s, params, &mut bound))
}
