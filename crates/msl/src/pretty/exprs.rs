//! Expressions and literals.

use super::types::{path, template_arg, ty};
use crate::ast::*;
use crate::token::FloatSuffix;
use std::fmt::Write;

pub(super) fn is_atomic(e: &Expr) -> bool {
    matches!(
        e.kind,
        ExprKind::IntLit { .. }
            | ExprKind::FloatLit { .. }
            | ExprKind::BoolLit(_)
            | ExprKind::CharLit(_)
            | ExprKind::StrLit(_)
            | ExprKind::Name(_)
            | ExprKind::Null
            | ExprKind::This
    )
}

fn float_lit(s: &mut String, value: f64, suffix: FloatSuffix) {
    let mut t = format!("{value:?}");
    if !t.contains(['.', 'e', 'E']) {
        t.push_str(".0");
    }
    s.push_str(&t);
    s.push_str(match suffix {
        FloatSuffix::None => "",
        FloatSuffix::F => "f",
        FloatSuffix::H => "h",
        FloatSuffix::Bf => "bf",
    });
}

fn char_escape(s: &mut String, c: u32, quote: char) {
    match char::from_u32(c) {
        Some('\n') => s.push_str("\\n"),
        Some('\t') => s.push_str("\\t"),
        Some('\r') => s.push_str("\\r"),
        Some('\\') => s.push_str("\\\\"),
        Some(ch) if ch == quote => {
            s.push('\\');
            s.push(ch);
        }
        Some(ch) if (' '..='~').contains(&ch) => s.push(ch),
        Some(ch) if !ch.is_control() && c > 0x7f && quote == '"' => s.push(ch),
        _ => {
            let _ = write!(s, "\\x{c:x}");
        }
    }
}

pub(super) fn args(s: &mut String, list: &[Expr]) {
    for (i, a) in list.iter().enumerate() {
        if i > 0 {
            s.push_str(", ");
        }
        expr(s, a);
    }
}

/// Print a postfix base; literals get parentheses (`(1).x`, not `1.x`).
fn postfix_base(s: &mut String, e: &Expr) {
    let needs = matches!(
        e.kind,
        ExprKind::IntLit { .. }
            | ExprKind::FloatLit { .. }
            | ExprKind::InitList(_)
            | ExprKind::CharLit(_)
            | ExprKind::SizeofType(_)
            | ExprKind::SizeofExpr(_)
            | ExprKind::AlignofType(_)
    );
    if needs {
        s.push('(');
    }
    expr(s, e);
    if needs {
        s.push(')');
    }
}

pub(super) fn expr(s: &mut String, e: &Expr) {
    // A chain of 10,000 operators is a tree as deep (see `parse::MAX_CHAIN`).
    stacker::maybe_grow(64 * 1024, 1024 * 1024, || expr_inner(s, e))
}

fn expr_inner(s: &mut String, e: &Expr) {
    match &e.kind {
        ExprKind::IntLit { value, unsigned, long, decimal } => {
            if *decimal {
                let _ = write!(s, "{value}");
            } else {
                let _ = write!(s, "0x{value:x}");
            }
            if *unsigned {
                s.push('u');
            }
            if *long {
                s.push('l');
            }
        }
        ExprKind::FloatLit { value, suffix } => float_lit(s, *value, *suffix),
        ExprKind::BoolLit(b) => s.push_str(if *b { "true" } else { "false" }),
        ExprKind::CharLit(c) => {
            s.push('\'');
            char_escape(s, *c, '\'');
            s.push('\'');
        }
        ExprKind::StrLit(text) => {
            s.push('"');
            let mut prev_hex = false;
            for ch in text.chars() {
                // A hex escape followed by a hex digit would merge; split the literal.
                if prev_hex && ch.is_ascii_hexdigit() {
                    s.push_str("\" \"");
                }
                let before = s.len();
                char_escape(s, ch as u32, '"');
                prev_hex = s[before..].starts_with("\\x");
            }
            s.push('"');
        }
        ExprKind::Null => s.push_str("nullptr"),
        ExprKind::This => s.push_str("this"),
        ExprKind::Name(p) => path(s, p),
        ExprKind::Unary { op, operand } => {
            s.push('(');
            match op {
                UnaryOp::PostInc | UnaryOp::PostDec => {
                    postfix_base(s, operand);
                    s.push_str(if *op == UnaryOp::PostInc { "++" } else { "--" });
                }
                _ => {
                    s.push_str(match op {
                        UnaryOp::Neg => "-",
                        UnaryOp::Plus => "+",
                        UnaryOp::Not => "!",
                        UnaryOp::BitNot => "~",
                        UnaryOp::Deref => "*",
                        UnaryOp::AddrOf => "&",
                        UnaryOp::PreInc => "++",
                        _ => "--",
                    });
                    expr(s, operand);
                }
            }
            s.push(')');
        }
        ExprKind::Binary { op, lhs, rhs } => {
            s.push('(');
            expr(s, lhs);
            let _ = write!(s, " {} ", op.as_str());
            expr(s, rhs);
            s.push(')');
        }
        ExprKind::Assign { op, lhs, rhs } => {
            s.push('(');
            expr(s, lhs);
            match op {
                Some(op) => {
                    let _ = write!(s, " {}= ", op.as_str());
                }
                None => s.push_str(" = "),
            }
            expr(s, rhs);
            s.push(')');
        }
        ExprKind::Conditional { cond, then, els } => {
            s.push('(');
            expr(s, cond);
            s.push_str(" ? ");
            expr(s, then);
            s.push_str(" : ");
            expr(s, els);
            s.push(')');
        }
        ExprKind::Comma { lhs, rhs } => {
            s.push('(');
            expr(s, lhs);
            s.push_str(", ");
            expr(s, rhs);
            s.push(')');
        }
        ExprKind::Call { callee, args: a } => {
            postfix_base(s, callee);
            s.push('(');
            args(s, a);
            s.push(')');
        }
        ExprKind::Index { base, index } => {
            postfix_base(s, base);
            s.push('[');
            expr(s, index);
            s.push(']');
        }
        ExprKind::Member { base, name, arrow, targs } => {
            postfix_base(s, base);
            s.push_str(if *arrow { "->" } else { "." });
            if let Some(targs) = targs {
                s.push_str("template ");
                s.push_str(&name.name);
                s.push('<');
                for (j, a) in targs.iter().enumerate() {
                    if j > 0 {
                        s.push_str(", ");
                    }
                    template_arg(s, a);
                }
                s.push_str(" >");
            } else {
                s.push_str(&name.name);
            }
        }
        ExprKind::Cast { kind, ty: t, args: a, braces } => match kind {
            CastKind::CStyle => {
                s.push_str("((");
                ty(s, t);
                s.push(')');
                match a.first() {
                    Some(x) => expr(s, x),
                    None => s.push('0'),
                }
                s.push(')');
            }
            CastKind::Functional => {
                ty(s, t);
                s.push(if *braces { '{' } else { '(' });
                args(s, a);
                s.push(if *braces { '}' } else { ')' });
            }
            CastKind::Static | CastKind::Reinterpret | CastKind::Const => {
                s.push_str(match kind {
                    CastKind::Static => "static_cast<",
                    CastKind::Reinterpret => "reinterpret_cast<",
                    _ => "const_cast<",
                });
                ty(s, t);
                s.push_str(" >(");
                args(s, a);
                s.push(')');
            }
        },
        ExprKind::SizeofType(t) => {
            s.push_str("sizeof(");
            ty(s, t);
            s.push(')');
        }
        ExprKind::SizeofExpr(x) => {
            s.push_str("sizeof(");
            expr(s, x);
            s.push(')');
        }
        ExprKind::AlignofType(t) => {
            s.push_str("alignof(");
            ty(s, t);
            s.push(')');
        }
        ExprKind::InitList(a) => {
            s.push('{');
            args(s, a);
            s.push('}');
        }
        ExprKind::Designated { designator, value } => {
            match designator {
                Designator::Index(i) => {
                    s.push('[');
                    expr(s, i);
                    s.push(']');
                }
                Designator::Range(a, b) => {
                    s.push('[');
                    expr(s, a);
                    s.push_str(" ... ");
                    expr(s, b);
                    s.push(']');
                }
                Designator::Field(f) => {
                    let _ = write!(s, ".{}", f.name);
                }
            }
            s.push_str(" = ");
            expr(s, value);
        }
        ExprKind::PackExpansion(x) => {
            postfix_base(s, x);
            s.push_str("...");
        }
        ExprKind::SizeofPack(n) => {
            let _ = write!(s, "sizeof...({})", n.name);
        }
        ExprKind::TypeMember { ty: t, name } => {
            ty(s, t);
            let _ = write!(s, "::{}", name.name);
        }
        ExprKind::Fold { op, pack, init, left } => {
            let op = op.map(|o| o.as_str()).unwrap_or(",");
            s.push('(');
            match (left, init) {
                (true, None) => {
                    let _ = write!(s, "... {op} ");
                    postfix_base(s, pack);
                }
                (true, Some(i)) => {
                    postfix_base(s, i);
                    let _ = write!(s, " {op} ... {op} ");
                    postfix_base(s, pack);
                }
                (false, None) => {
                    postfix_base(s, pack);
                    let _ = write!(s, " {op} ...");
                }
                (false, Some(i)) => {
                    postfix_base(s, pack);
                    let _ = write!(s, " {op} ... {op} ");
                    postfix_base(s, i);
                }
            }
            s.push(')');
        }
    }
}
