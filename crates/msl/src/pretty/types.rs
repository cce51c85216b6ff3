//! Types, template arguments, qualified names and declarators.

use super::exprs::{expr, is_atomic};
use super::{declarator_to_string, type_to_string};
use crate::ast::*;

pub(super) fn path(s: &mut String, p: &Path) {
    if p.global {
        s.push_str("::");
    }
    for (i, seg) in p.segments.iter().enumerate() {
        if i > 0 {
            s.push_str("::");
        }
        s.push_str(&seg.ident.name);
        if let Some(args) = &seg.template_args {
            s.push('<');
            for (j, a) in args.iter().enumerate() {
                if j > 0 {
                    s.push_str(", ");
                }
                template_arg(s, a);
            }
            // A space keeps `> >` apart from a following `>`/`=`.
            s.push_str(" >");
        }
    }
}

pub(super) fn template_arg(s: &mut String, a: &TemplateArg) {
    match a {
        TemplateArg::Type(t) => ty(s, t),
        TemplateArg::Expr(e) => {
            // Parenthesise so `>` inside cannot close the list.
            let needs = !is_atomic(e);
            if needs {
                s.push('(');
            }
            expr(s, e);
            if needs {
                s.push(')');
            }
        }
        TemplateArg::Pack(a) => {
            template_arg(s, a);
            s.push_str("...");
        }
    }
}

pub(super) fn ty(s: &mut String, t: &TypeExpr) {
    match &t.kind {
        TypeExprKind::Named { path: p, is_const, is_volatile, addr_space } => {
            if *is_const {
                s.push_str("const ");
            }
            if *is_volatile {
                s.push_str("volatile ");
            }
            if let Some(a) = addr_space {
                s.push_str(a.keyword());
                s.push(' ');
            }
            path(s, p);
        }
        TypeExprKind::Decltype { expr: e, is_const, addr_space } => {
            if *is_const {
                s.push_str("const ");
            }
            if let Some(a) = addr_space {
                s.push_str(a.keyword());
                s.push(' ');
            }
            s.push_str("decltype(");
            expr(s, e);
            s.push(')');
        }
        TypeExprKind::Pointer { pointee, .. } if has_function(pointee) => s.push_str(&declarator_to_string(t, "")),
        TypeExprKind::Function { .. } => s.push_str(&declarator_to_string(t, "")),
        TypeExprKind::Pointer { pointee, is_const } => {
            ty(s, pointee);
            s.push('*');
            if *is_const {
                s.push_str(" const");
            }
        }
        TypeExprKind::Reference { referee } => {
            ty(s, referee);
            s.push('&');
        }
        TypeExprKind::Array { elem, size } => {
            ty(s, elem);
            s.push('[');
            if let Some(e) = size {
                expr(s, e);
            }
            s.push(']');
        }
    }
}

/// The base (named/decltype) type under pointers, references and arrays.
pub(super) fn base_of(t: &TypeExpr) -> &TypeExpr {
    match &t.kind {
        TypeExprKind::Pointer { pointee: x, .. } | TypeExprKind::Reference { referee: x } => base_of(x),
        TypeExprKind::Array { elem, .. } => base_of(elem),
        TypeExprKind::Function { ret, .. } => base_of(ret),
        _ => t,
    }
}

/// Whether a function type is part of this declarator (it is then printed
/// inside out: `R (*name)(P)`).
pub(super) fn has_function(t: &TypeExpr) -> bool {
    match &t.kind {
        TypeExprKind::Pointer { pointee: x, .. } | TypeExprKind::Reference { referee: x } => has_function(x),
        TypeExprKind::Array { elem, .. } => has_function(elem),
        TypeExprKind::Function { .. } => true,
        _ => false,
    }
}

/// `*const* p[4]` part of a declarator (everything but the base type).
pub(super) fn declarator_suffix(t: &TypeExpr, name: &str) -> String {
    let mut dims = Vec::new();
    let mut cur = t;
    while let TypeExprKind::Array { elem, size } = &cur.kind {
        dims.push(size.as_deref());
        cur = elem;
    }
    let mut ops = Vec::new();
    loop {
        match &cur.kind {
            TypeExprKind::Pointer { pointee, is_const } => {
                ops.push(if *is_const { "* const " } else { "*" });
                cur = pointee;
            }
            TypeExprKind::Reference { referee } => {
                ops.push("&");
                cur = referee;
            }
            _ => break,
        }
    }
    let mut s = String::new();
    for o in ops.iter().rev() {
        s.push_str(o);
    }
    s.push_str(name);
    for d in dims {
        s.push('[');
        if let Some(e) = d {
            expr(&mut s, e);
        }
        s.push(']');
    }
    if let TypeExprKind::Function { ret, params } = &cur.kind {
        let shown: Vec<String> = params.iter().map(type_to_string).collect();
        return declarator_suffix(ret, &format!("({s})({})", shown.join(", ")));
    }
    s
}
