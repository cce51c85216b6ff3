//! Printing the AST back as MSL source. Binary and unary subexpressions are
//! fully parenthesised, so the output re-parses to the same tree. Also
//! [`erase_unit_spans`]/[`erase_expr_spans`] for comparing trees.
//!
//! `types` prints types and declarators, `exprs` expressions, `stmts`
//! statements and function bodies, `items` top-level declarations, `erase`
//! erases spans.

use crate::ast::*;

mod erase;
mod exprs;
mod items;
mod stmts;
mod types;

use exprs::expr;
use stmts::Printer;
use types::{base_of, declarator_suffix, has_function, ty};

pub use erase::{erase_expr_spans, erase_stmt_spans, erase_type_spans, erase_unit_spans};

pub fn unit_to_string(unit: &TranslationUnit) -> String {
    let mut p = Printer { out: String::new(), indent: 0 };
    for item in &unit.items {
        p.item(item);
    }
    p.out
}

pub fn expr_to_string(e: &Expr) -> String {
    let mut s = String::new();
    expr(&mut s, e);
    s
}

/// An expression in a context that needs no parentheses around it
/// (statements, conditions, `return`): the outermost pair is dropped.
fn top(e: &Expr) -> String {
    let t = expr_to_string(e);
    let wrapped = matches!(
        e.kind,
        ExprKind::Binary { .. }
            | ExprKind::Unary { .. }
            | ExprKind::Assign { .. }
            | ExprKind::Conditional { .. }
            | ExprKind::Comma { .. }
            | ExprKind::Cast { kind: CastKind::CStyle, .. }
    );
    if wrapped && t.starts_with('(') && t.ends_with(')') && !t[1..].starts_with('{') {
        t[1..t.len() - 1].to_string()
    } else {
        t
    }
}

pub fn type_to_string(t: &TypeExpr) -> String {
    let mut s = String::new();
    ty(&mut s, t);
    s
}

/// A declaration of `name` with type `t`: `float a[4]`, `device int* p`.
pub fn declarator_to_string(t: &TypeExpr, name: &str) -> String {
    if has_function(t) {
        // `R (*name)(P)`: the name sits inside the declarator.
        let mut s = String::new();
        ty(&mut s, base_of(t));
        s.push(' ');
        s.push_str(&declarator_suffix(t, name));
        return s;
    }
    let mut dims = Vec::new();
    let mut cur = t;
    while let TypeExprKind::Array { elem, size } = &cur.kind {
        dims.push(size.as_deref());
        cur = elem;
    }
    let mut s = String::new();
    ty(&mut s, cur);
    if !name.is_empty() {
        s.push(' ');
        s.push_str(name);
    }
    for d in dims {
        s.push('[');
        if let Some(e) = d {
            expr(&mut s, e);
        }
        s.push(']');
    }
    s
}
