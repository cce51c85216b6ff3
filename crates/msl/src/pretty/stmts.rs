//! The indenting printer: statements, blocks and function definitions.

use super::exprs::args;
use super::items::{alias, attr, item_head, param, static_assert, var_decls};
use super::types::path;
use super::{expr_to_string, top, type_to_string};
use crate::ast::*;

pub(super) struct Printer {
    pub(super) out: String,
    pub(super) indent: usize,
}

impl Printer {
    pub(super) fn line(&mut self, text: &str) {
        for _ in 0..self.indent {
            self.out.push_str("    ");
        }
        self.out.push_str(text);
        self.out.push('\n');
    }

    pub(super) fn item(&mut self, it: &Item) {
        let text = item_head(it, self);
        if let Some(t) = text {
            self.line(&t);
        }
    }

    fn block(&mut self, head: &str, b: &Block) {
        self.line(&format!("{head}{{"));
        self.indent += 1;
        for st in &b.stmts {
            self.stmt(st);
        }
        self.indent -= 1;
        self.line("}");
    }

    fn stmt(&mut self, st: &Stmt) {
        match &st.kind {
            StmtKind::Decl(vars) => {
                let t = var_decls(vars);
                self.line(&format!("{t};"));
            }
            StmtKind::Expr(e) => {
                let t = top(e);
                // `{...};` would be a block: parenthesise.
                if t.starts_with('{') {
                    self.line(&format!("({t});"));
                } else {
                    self.line(&format!("{t};"));
                }
            }
            StmtKind::Block(b) => self.block("", b),
            StmtKind::If { cond, then, els, is_constexpr } => {
                self.line(&format!("if {}({})", if *is_constexpr { "constexpr " } else { "" }, top(cond)));
                self.sub(then);
                if let Some(e) = els {
                    self.line("else");
                    self.sub(e);
                }
            }
            StmtKind::For { init, cond, step, body } => {
                let init = match init.as_deref().map(|s| &s.kind) {
                    Some(StmtKind::Decl(v)) => var_decls(v),
                    Some(StmtKind::Expr(e)) => top(e),
                    _ => String::new(),
                };
                let cond = cond.as_ref().map(top).unwrap_or_default();
                let step = step.as_ref().map(top).unwrap_or_default();
                self.line(&format!("for ({init}; {cond}; {step})"));
                self.sub(body);
            }
            StmtKind::RangeFor { var, range, body } => {
                self.line(&format!("for ({} : {})", var_decls(std::slice::from_ref(&**var)), top(range)));
                self.sub(body);
            }
            StmtKind::While { cond, body } => {
                self.line(&format!("while ({})", top(cond)));
                self.sub(body);
            }
            StmtKind::DoWhile { body, cond } => {
                self.line("do");
                self.sub(body);
                self.line(&format!("while ({});", top(cond)));
            }
            StmtKind::Switch { cond, body } => {
                self.line(&format!("switch ({})", top(cond)));
                self.sub(body);
            }
            StmtKind::Case(e) => self.line(&format!("case {}:", expr_to_string(e))),
            StmtKind::Default => self.line("default:"),
            StmtKind::Break => self.line("break;"),
            StmtKind::Continue => self.line("continue;"),
            StmtKind::Return(e) => match e {
                Some(e) => self.line(&format!("return {};", top(e))),
                None => self.line("return;"),
            },
            StmtKind::Alias(a) => self.line(&alias(a)),
            StmtKind::LocalType(item, vars) => {
                self.item(item);
                if !vars.is_empty() {
                    let t = var_decls(vars);
                    self.line(&format!("{t};"));
                }
            }
            StmtKind::StaticAssert { cond, message } => self.line(&static_assert(cond, message.as_deref())),
            StmtKind::Empty => self.line(";"),
        }
    }

    /// A nested statement: blocks as is, others wrapped in braces-free form.
    fn sub(&mut self, st: &Stmt) {
        if let StmtKind::Block(b) = &st.kind {
            self.block("", b);
        } else {
            self.indent += 1;
            self.stmt(st);
            self.indent -= 1;
        }
    }

    pub(super) fn function(&mut self, f: &Function, ctor_inits: Option<&[(Ident, Vec<Expr>)]>) {
        let mut head = String::new();
        for a in &f.attrs {
            head.push_str(&attr(a));
            head.push(' ');
        }
        if f.is_static {
            head.push_str("static ");
        }
        if f.is_inline {
            head.push_str("inline ");
        }
        if f.is_constexpr {
            head.push_str("constexpr ");
        }
        if ctor_inits.is_none() {
            head.push_str(&type_to_string(&f.ret));
            head.push(' ');
        }
        path(&mut head, &f.name);
        head.push('(');
        for (i, p) in f.params.iter().enumerate() {
            if i > 0 {
                head.push_str(", ");
            }
            head.push_str(&param(p));
        }
        head.push(')');
        if f.is_const_method {
            head.push_str(" const");
        }
        if let Some(space) = f.object_space {
            head.push(' ');
            head.push_str(space.keyword());
        }
        if let Some(inits) = ctor_inits {
            if !inits.is_empty() {
                head.push_str(" : ");
                for (i, (n, a)) in inits.iter().enumerate() {
                    if i > 0 {
                        head.push_str(", ");
                    }
                    head.push_str(&n.name);
                    head.push('(');
                    args(&mut head, a);
                    head.push(')');
                }
            }
        }
        match &f.body {
            Some(b) => {
                head.push(' ');
                self.block(&head, b);
            }
            None => self.line(&format!("{head};")),
        }
    }
}
