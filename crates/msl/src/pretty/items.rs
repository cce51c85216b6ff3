//! Top-level declarations: variables, aliases, templates, structs,
//! namespaces and the rest.

use super::exprs::{args, expr, is_atomic};
use super::stmts::Printer;
use super::types::{base_of, declarator_suffix, path, ty};
use super::{declarator_to_string, expr_to_string, type_to_string};
use crate::ast::*;
use crate::source::Span;
use std::fmt::Write;

pub(super) fn attr(a: &Attribute) -> String {
    let mut s = format!("[[{}", a.name.name);
    if !a.args.is_empty() {
        s.push('(');
        args(&mut s, &a.args);
        s.push(')');
    }
    s.push_str("]]");
    s
}

pub(super) fn param(p: &Param) -> String {
    let name = p.name.as_ref().map(|n| &*n.name).unwrap_or("");
    let mut s = if p.is_pack { format!("{}... {name}", type_to_string(&p.ty)) } else { declarator_to_string(&p.ty, name) };
    for a in &p.attrs {
        s.push(' ');
        s.push_str(&attr(a));
    }
    if let Some(d) = &p.default {
        s.push_str(" = ");
        expr(&mut s, d);
    }
    s
}

/// One declaration: the first declarator's base type, then each declarator
/// (`*p`, `a[4]`) with its attributes and initialiser.
pub(super) fn var_decls(vars: &[VarDecl]) -> String {
    let mut s = String::new();
    let Some(first) = vars.first() else {
        return s;
    };
    if first.is_static {
        s.push_str("static ");
    }
    if first.is_constexpr {
        s.push_str("constexpr ");
    }
    let base = base_of(&first.ty);
    let mut base_s = String::new();
    ty(&mut base_s, base);
    s.push_str(&base_s);
    for (i, v) in vars.iter().enumerate() {
        s.push_str(if i == 0 { " " } else { ", " });
        let mut name = String::new();
        if let Some(owner) = &v.owner {
            path(&mut name, owner);
            name.push_str("::");
        }
        name.push_str(&v.name.name);
        s.push_str(&declarator_suffix(&v.ty, &name));
        for a in &v.attrs {
            s.push(' ');
            s.push_str(&attr(a));
        }
        match &v.init {
            Some(Init::Assign(e)) => {
                s.push_str(" = ");
                expr(&mut s, e);
            }
            Some(Init::Paren(a, _)) => {
                s.push('(');
                args(&mut s, a);
                s.push(')');
            }
            Some(Init::Brace(a, _)) => {
                s.push('{');
                args(&mut s, a);
                s.push('}');
            }
            None => {}
        }
    }
    s
}

pub(super) fn alias(a: &TypeAlias) -> String {
    let params = match &a.fn_params {
        Some(ps) => format!("({})", ps.iter().map(param).collect::<Vec<_>>().join(", ")),
        None => String::new(),
    };
    format!("using {} = {}{params};", a.name.name, type_to_string(&a.ty))
}

pub(super) fn static_assert(cond: &Expr, message: Option<&str>) -> String {
    let mut s = String::from("static_assert(");
    expr(&mut s, cond);
    if let Some(m) = message {
        s.push_str(", ");
        expr(&mut s, &Expr { kind: ExprKind::StrLit(m.into()), span: Span::default() });
    }
    s.push_str(");");
    s
}

fn template_params(params: &[TemplateParam]) -> String {
    let mut s = String::from("template <");
    for (i, p) in params.iter().enumerate() {
        if i > 0 {
            s.push_str(", ");
        }
        // Unnamed parameters (`template <typename> class`) get hidden names.
        let name = if p.name.name.starts_with('$') { String::new() } else { format!(" {}", p.name.name) };
        let dots = if p.is_pack { "..." } else { "" };
        match &p.kind {
            TemplateParamKind::Type { default } => {
                let _ = write!(s, "typename{dots}{name}");
                if let Some(d) = default {
                    let _ = write!(s, " = {}", type_to_string(d));
                }
            }
            TemplateParamKind::Value { ty: t, default } => {
                if p.is_pack {
                    let _ = write!(s, "{}...{name}", type_to_string(t));
                } else {
                    s.push_str(declarator_to_string(t, name.trim_start()).trim_end());
                }
                if let Some(d) = default {
                    s.push_str(" = ");
                    if is_atomic(d) {
                        expr(&mut s, d);
                    } else {
                        let _ = write!(s, "({})", expr_to_string(d));
                    }
                }
            }
            TemplateParamKind::Template { params: inner, default } => {
                let _ = write!(s, "{} class{dots}{name}", template_params(inner));
                if let Some(d) = default {
                    s.push_str(" = ");
                    path(&mut s, d);
                }
            }
        }
    }
    s.push('>');
    s
}

/// Print an item; returns a line to print for simple items.
pub(super) fn item_head(it: &Item, p: &mut Printer) -> Option<String> {
    match &it.kind {
        ItemKind::Function(f) => {
            p.function(f, None);
            None
        }
        ItemKind::Struct(s) => {
            let mut head = String::from(if s.is_union { "union " } else { "struct " });
            for a in &s.attrs {
                head.push_str(&attr(a));
                head.push(' ');
            }
            let name_path = Path {
                global: false,
                segments: vec![PathSegment { ident: s.name.clone(), template_args: s.specialization.clone() }],
                span: s.name.span,
            };
            // Anonymous unions and structs get a name no one can write.
            if !s.name.name.starts_with('(') {
                path(&mut head, &name_path);
            } else {
                head.pop();
            }
            if s.is_forward {
                return Some(format!("{head};"));
            }
            for (i, b) in s.bases.iter().enumerate() {
                head.push_str(if i == 0 { " : " } else { ", " });
                if let Some(a) = &b.access {
                    head.push_str(&a.name);
                    head.push(' ');
                }
                ty(&mut head, &b.ty);
            }
            p.line(&format!("{head} {{"));
            p.indent += 1;
            for m in &s.members {
                match &m.kind {
                    MemberKind::Field(v) => p.line(&format!("{};", var_decls(std::slice::from_ref(v)))),
                    MemberKind::StaticConst(v) => p.line(&format!("{};", var_decls(std::slice::from_ref(v)))),
                    MemberKind::Method(f) => p.function(f, None),
                    MemberKind::Constructor { func, inits } => p.function(func, Some(inits)),
                    MemberKind::Alias(a) => p.line(&alias(a)),
                    MemberKind::Nested(item) => p.item(item),
                    MemberKind::DefaultedConstructor => p.line(&format!("{}() = default;", s.name.name)),
                    MemberKind::Anonymous(inner) => p.item(&Item { kind: ItemKind::Struct((**inner).clone()), span: m.span }),
                }
            }
            p.indent -= 1;
            Some("};".to_string())
        }
        ItemKind::Enum(e) => {
            let mut s = String::from("enum ");
            if e.scoped {
                s.push_str("class ");
            }
            if let Some(n) = &e.name {
                s.push_str(&n.name);
                s.push(' ');
            }
            if let Some(u) = &e.underlying {
                let _ = write!(s, ": {} ", type_to_string(u));
            }
            s.push('{');
            for (i, en) in e.enumerators.iter().enumerate() {
                s.push_str(if i > 0 { ", " } else { " " });
                s.push_str(&en.name.name);
                if let Some(v) = &en.value {
                    s.push_str(" = ");
                    expr(&mut s, v);
                }
            }
            s.push_str(" };");
            Some(s)
        }
        ItemKind::Vars(v) => Some(format!("{};", var_decls(v))),
        ItemKind::Alias(a) => Some(alias(a)),
        ItemKind::Namespace { name, items } => {
            match name {
                Some(n) => p.line(&format!("namespace {} {{", n.name)),
                None => p.line("namespace {"),
            }
            p.indent += 1;
            for i in items {
                p.item(i);
            }
            p.indent -= 1;
            Some("}".to_string())
        }
        ItemKind::UsingNamespace(path_) => {
            let mut s = String::from("using namespace ");
            path(&mut s, path_);
            s.push(';');
            Some(s)
        }
        ItemKind::UsingDecl(path_) => {
            let mut s = String::from("using ");
            path(&mut s, path_);
            s.push(';');
            Some(s)
        }
        ItemKind::Template { params, item } => {
            p.line(&template_params(params));
            p.item(item);
            None
        }
        ItemKind::ExplicitInstantiation { attrs, ty: t, name, params } => {
            let mut s = String::from("template ");
            for a in attrs {
                s.push_str(&attr(a));
                s.push(' ');
            }
            ty(&mut s, t);
            s.push(' ');
            path(&mut s, name);
            if let Some(ps) = params {
                let shown: Vec<String> = ps.iter().map(param).collect();
                s.push('(');
                s.push_str(&shown.join(", "));
                s.push(')');
            }
            s.push(';');
            Some(s)
        }
        ItemKind::StaticAssert { cond, message } => Some(static_assert(cond, message.as_deref())),
        ItemKind::Empty => Some(";".to_string()),
    }
}
