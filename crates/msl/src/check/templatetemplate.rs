//! Template template parameters: `template <template <typename> class Op,
//! typename T> struct Acc { ... Op<T>::combine(a, b) ... }`.
//!
//! A class or alias template given to such a parameter is the argument
//! `TArg::Template(decl)`. Inside the template, the parameter's name is
//! looked up as that declaration (`lookup_global` answers it first), so
//! `Op<T>`, `Op<T>::member`, `typename Op<T>::type` and `struct D : Op<T>`
//! all instantiate the argument like a name written directly. Arguments are
//! checked against the parameter's own parameter list the way C++17 does
//! (P0522): an argument template may have more parameters when they have
//! defaults, a pack on either side absorbs the rest.

use super::instantiate::has_default;
use super::{Checker, DeclId, DeclKind, TArg};
use crate::ast::{self, TemplateParamKind};
use crate::source::Span;
use crate::types::Type;

impl<'a> Checker<'a, '_> {
    /// The class or alias template `path` names by itself (no arguments on
    /// its last segment): `Plus`, `ns::Plus`, or a template template
    /// parameter in scope. `None` for anything else.
    pub(crate) fn template_named(&self, path: &ast::Path) -> Option<DeclId> {
        let segs = &path.segments;
        let (segs, in_metal) = if segs.len() > 1 && &*segs[0].ident.name == "metal" { (&segs[1..], true) } else { (&segs[..], false) };
        let (last, prefix) = segs.split_last()?;
        if last.template_args.is_some() || prefix.iter().any(|s| s.template_args.is_some()) {
            return None;
        }
        let name = &*last.ident.name;
        let decls = if prefix.is_empty() && !in_metal {
            if let Some(t) = self.env.targs.get(name) {
                return match t {
                    TArg::Template(d) => Some(*d),
                    _ => None,
                };
            }
            self.lookup_global(name)
        } else {
            let mut scope: Vec<std::rc::Rc<str>> = prefix.iter().map(|s| s.ident.name.clone()).collect();
            if in_metal {
                scope.insert(0, std::rc::Rc::from("metal"));
            }
            if path.global || in_metal {
                self.lookup_in(&scope, name)
            } else {
                self.lookup_qualified_all(&scope, name)
            }
        };
        let d = *decls.last()?;
        matches!(self.decls[d].kind, DeclKind::StructTemplate { .. } | DeclKind::AliasTemplate { .. }).then_some(d)
    }

    /// The default of a template template parameter (`= Plus`).
    pub(crate) fn template_default(&mut self, path: &ast::Path) -> Option<TArg> {
        match self.template_named(path) {
            Some(d) => Some(TArg::Template(d)),
            None => {
                self.error(path.span, format!("`{}` is not a class template", path.plain_name()))
                    .label("a template template parameter's default must name a class or alias template");
                None
            }
        }
    }

    /// Check argument `a` against template parameter `p` when either of
    /// them is about templates: `None` when neither is (the caller checks
    /// types and values), else whether it fits (errors reported). The
    /// injected class name (`S` inside `S<T>`) is the template when a
    /// template is wanted.
    pub(crate) fn fit_template_targ(&mut self, p: &ast::TemplateParam, a: &mut TArg, span: Span) -> Option<bool> {
        let TemplateParamKind::Template { params: wanted, .. } = &p.kind else {
            let elems: &[TArg] = match a {
                TArg::Pack(elems) if p.is_pack => elems,
                other => std::slice::from_ref(other),
            };
            let Some(TArg::Template(d)) = elems.iter().find(|e| matches!(e, TArg::Template(_))) else { return None };
            let name = self.decls[*d].name.clone();
            let what = if matches!(p.kind, TemplateParamKind::Type { .. }) { "a type" } else { "a value" };
            self.error(span, format!("template parameter `{}` takes {what}, but `{name}` is a class template", p.name.name))
                .label(format!("`{name}` is given without its arguments"))
                .secondary(p.span, "template parameter declared here")
                .help(format!("give the template its arguments, e.g. `{name}<float>`"));
            return Some(false);
        };
        if p.is_pack {
            let TArg::Pack(elems) = a else { return None };
            let mut elems = std::mem::take(elems);
            let ok = elems.iter_mut().all(|e| self.fit_one_template(p, wanted, e, span));
            *a = TArg::Pack(elems);
            return Some(ok);
        }
        if matches!(a, TArg::Pack(_)) {
            return None;
        }
        Some(self.fit_one_template(p, wanted, a, span))
    }

    fn fit_one_template(&mut self, p: &ast::TemplateParam, wanted: &[ast::TemplateParam], a: &mut TArg, span: Span) -> bool {
        // The injected class name: `S` inside an instance of `S`.
        if let TArg::Type(Type::Struct(sid)) = a {
            if self.env.this_struct == Some(*sid) {
                if let Some((d, _)) = self.struct_instance_of.get(sid) {
                    *a = TArg::Template(*d);
                }
            }
        }
        let d = match a {
            TArg::Template(d) => *d,
            other => {
                let given = match other {
                    TArg::Type(t) => format!("the type `{}`", self.ty_name(t)),
                    TArg::Value(..) => "a value".to_string(),
                    _ => "a function".to_string(),
                };
                let mut e = self
                    .error(span, format!("template template parameter `{}` takes a class template, but was given {given}", p.name.name))
                    .label("not a template")
                    .secondary(p.span, "template parameter declared here");
                if let TArg::Type(Type::Struct(sid)) = other {
                    if let Some((d, _)) = self.struct_instance_of.get(sid) {
                        e = e.help(format!("pass the template itself, without arguments: `{}`", self.decls[*d].name));
                    }
                }
                drop(e);
                return false;
            }
        };
        let given: &[ast::TemplateParam] = match self.decls[d].kind {
            DeclKind::StructTemplate { params, .. } | DeclKind::AliasTemplate { params, .. } => params,
            _ => return false,
        };
        if let Err(why) = params_accept(wanted, given) {
            let name = self.decls[d].name.clone();
            self.error(
                span,
                format!(
                    "`{name}` does not fit template template parameter `{}`: it takes `{}`, the parameter expects `{}`",
                    p.name.name,
                    params_shape(given),
                    params_shape(wanted)
                ),
            )
            .label(why)
            .secondary(p.span, "template template parameter declared here")
            .secondary(self.decls[d].span, format!("`{name}` declared here"));
            return false;
        }
        true
    }
}

impl Checker<'_, '_> {
    /// Deduce from `P<args>` (`P` template template parameter `i` of
    /// `params`) given the type `ty`: an instance of a class template binds
    /// `P` to that template and deduces from its arguments.
    pub(crate) fn unify_template_param(
        &self,
        params: &[ast::TemplateParam],
        i: usize,
        targs: &[ast::TemplateArg],
        ty: &Type,
        map: &mut [Option<TArg>],
    ) -> bool {
        let instance = match ty {
            Type::Struct(sid) => self.struct_instance_of.get(sid).cloned(),
            _ => None,
        };
        let Some((d, args)) = instance else {
            // An alias template given explicitly may name any type.
            return matches!(&map[i], Some(TArg::Template(e)) if matches!(self.decls[*e].kind, DeclKind::AliasTemplate { .. }));
        };
        match &map[i] {
            Some(TArg::Template(e)) if *e != d => return matches!(self.decls[*e].kind, DeclKind::AliasTemplate { .. }),
            Some(TArg::Template(_)) => {}
            Some(_) => return false,
            None => map[i] = Some(TArg::Template(d)),
        }
        targs.iter().zip(args).all(|(ta, v)| self.unify_targ(params, ta, v, map))
    }
}

/// Which of type / value / template a parameter is.
fn kind_of(p: &ast::TemplateParam) -> u8 {
    match p.kind {
        TemplateParamKind::Type { .. } => 0,
        TemplateParamKind::Value { .. } => 1,
        TemplateParamKind::Template { .. } => 2,
    }
}

fn kind_word(p: &ast::TemplateParam) -> &'static str {
    ["a type", "a value", "a template"][kind_of(p) as usize]
}

/// Do two parameters at the same position agree (kinds, and the inner
/// lists of template template parameters)?
fn same_kind(w: &ast::TemplateParam, g: &ast::TemplateParam) -> bool {
    match (&w.kind, &g.kind) {
        (TemplateParamKind::Template { params: a, .. }, TemplateParamKind::Template { params: b, .. }) => params_accept(a, b).is_ok(),
        _ => kind_of(w) == kind_of(g),
    }
}

/// Can a template with parameters `given` be passed where a template with
/// parameters `wanted` is expected (C++17 rules, simplified)? The reason
/// when not.
pub(crate) fn params_accept(wanted: &[ast::TemplateParam], given: &[ast::TemplateParam]) -> Result<(), String> {
    let mut i = 0;
    loop {
        match (wanted.get(i), given.get(i)) {
            (None, None) => return Ok(()),
            (Some(w), Some(g)) => {
                if g.is_pack {
                    // The argument's pack takes every remaining parameter.
                    return match wanted[i..].iter().position(|w| !same_kind(w, g)) {
                        None => Ok(()),
                        Some(k) => {
                            Err(format!("parameter {} is {}, but its pack takes {}", i + k + 1, kind_word(&wanted[i + k]), kind_word(g)))
                        }
                    };
                }
                if w.is_pack {
                    // A pack of the parameter: any number of arguments of its kind.
                    return match given[i..].iter().position(|g| !(same_kind(w, g) || has_default(g))) {
                        None => Ok(()),
                        Some(k) => Err(format!(
                            "its parameter {} is {}, but only {} are passed",
                            i + k + 1,
                            kind_word(&given[i + k]),
                            kind_word(w)
                        )),
                    };
                }
                if !same_kind(w, g) {
                    return Err(format!("its parameter {} is {}, but {} is passed there", i + 1, kind_word(g), kind_word(w)));
                }
            }
            (Some(w), None) => {
                if w.is_pack {
                    return Ok(());
                }
                return Err(format!(
                    "it takes {} template parameter{}, {} would be passed",
                    given.len(),
                    plural(given.len()),
                    count(wanted)
                ));
            }
            (None, Some(g)) => {
                if !(g.is_pack || has_default(g)) {
                    return Err(format!(
                        "it takes {} template parameter{} without defaults, only {} would be passed",
                        given.iter().filter(|g| !g.is_pack && !has_default(g)).count(),
                        plural(given.iter().filter(|g| !g.is_pack && !has_default(g)).count()),
                        wanted.len()
                    ));
                }
            }
        }
        i += 1;
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

fn count(ps: &[ast::TemplateParam]) -> String {
    if ps.iter().any(|p| p.is_pack) {
        format!("{} or more", ps.iter().filter(|p| !p.is_pack).count())
    } else {
        ps.len().to_string()
    }
}

/// `template <typename, int>`: the shape of a template parameter list.
pub(crate) fn params_shape(ps: &[ast::TemplateParam]) -> String {
    let parts: Vec<String> = ps
        .iter()
        .map(|p| {
            let dots = if p.is_pack { "..." } else { "" };
            match &p.kind {
                TemplateParamKind::Type { .. } => format!("typename{dots}"),
                TemplateParamKind::Value { ty, .. } => format!("{}{dots}", crate::pretty::type_to_string(ty)),
                TemplateParamKind::Template { params, .. } => format!("{} class{dots}", params_shape(params)),
            }
        })
        .collect();
    format!("template <{}>", parts.join(", "))
}
