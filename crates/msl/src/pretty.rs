//! Printing the AST back as MSL source. Binary and unary subexpressions are
//! fully parenthesised, so the output re-parses to the same tree. Also
//! [`erase_unit_spans`]/[`erase_expr_spans`] for comparing trees.

use crate::ast::*;
use crate::source::Span;
use crate::token::FloatSuffix;
use std::fmt::Write;

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

fn path(s: &mut String, p: &Path) {
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

fn template_arg(s: &mut String, a: &TemplateArg) {
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

fn is_atomic(e: &Expr) -> bool {
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

fn ty(s: &mut String, t: &TypeExpr) {
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

fn args(s: &mut String, list: &[Expr]) {
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

fn expr(s: &mut String, e: &Expr) {
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

struct Printer {
    out: String,
    indent: usize,
}

impl Printer {
    fn line(&mut self, text: &str) {
        for _ in 0..self.indent {
            self.out.push_str("    ");
        }
        self.out.push_str(text);
        self.out.push('\n');
    }

    fn item(&mut self, it: &Item) {
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

    fn function(&mut self, f: &Function, ctor_inits: Option<&[(Ident, Vec<Expr>)]>) {
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

fn attr(a: &Attribute) -> String {
    let mut s = format!("[[{}", a.name.name);
    if !a.args.is_empty() {
        s.push('(');
        args(&mut s, &a.args);
        s.push(')');
    }
    s.push_str("]]");
    s
}

fn param(p: &Param) -> String {
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
fn var_decls(vars: &[VarDecl]) -> String {
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

/// The base (named/decltype) type under pointers, references and arrays.
fn base_of(t: &TypeExpr) -> &TypeExpr {
    match &t.kind {
        TypeExprKind::Pointer { pointee: x, .. } | TypeExprKind::Reference { referee: x } => base_of(x),
        TypeExprKind::Array { elem, .. } => base_of(elem),
        TypeExprKind::Function { ret, .. } => base_of(ret),
        _ => t,
    }
}

/// Whether a function type is part of this declarator (it is then printed
/// inside out: `R (*name)(P)`).
fn has_function(t: &TypeExpr) -> bool {
    match &t.kind {
        TypeExprKind::Pointer { pointee: x, .. } | TypeExprKind::Reference { referee: x } => has_function(x),
        TypeExprKind::Array { elem, .. } => has_function(elem),
        TypeExprKind::Function { .. } => true,
        _ => false,
    }
}

/// `*const* p[4]` part of a declarator (everything but the base type).
fn declarator_suffix(t: &TypeExpr, name: &str) -> String {
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

fn alias(a: &TypeAlias) -> String {
    let params = match &a.fn_params {
        Some(ps) => format!("({})", ps.iter().map(param).collect::<Vec<_>>().join(", ")),
        None => String::new(),
    };
    format!("using {} = {}{params};", a.name.name, type_to_string(&a.ty))
}

fn static_assert(cond: &Expr, message: Option<&str>) -> String {
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
fn item_head(it: &Item, p: &mut Printer) -> Option<String> {
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

// ----- span erasure -----

/// Set every span in the unit to `Span::default()` (for comparing trees).
pub fn erase_unit_spans(u: &mut TranslationUnit) {
    for i in &mut u.items {
        erase_item(i);
    }
}

pub fn erase_expr_spans(e: &mut Expr) {
    e.span = Span::default();
    match &mut e.kind {
        ExprKind::Name(p) => erase_path(p),
        ExprKind::Unary { operand, .. } => erase_expr_spans(operand),
        ExprKind::Binary { lhs, rhs, .. } | ExprKind::Assign { lhs, rhs, .. } | ExprKind::Comma { lhs, rhs } => {
            erase_expr_spans(lhs);
            erase_expr_spans(rhs);
        }
        ExprKind::Conditional { cond, then, els } => {
            erase_expr_spans(cond);
            erase_expr_spans(then);
            erase_expr_spans(els);
        }
        ExprKind::Call { callee, args } => {
            erase_expr_spans(callee);
            args.iter_mut().for_each(erase_expr_spans);
        }
        ExprKind::Index { base, index } => {
            erase_expr_spans(base);
            erase_expr_spans(index);
        }
        ExprKind::Member { base, name, targs, .. } => {
            erase_expr_spans(base);
            name.span = Span::default();
            targs.iter_mut().flatten().for_each(erase_targ);
        }
        ExprKind::Cast { ty, args, .. } => {
            erase_type_spans(ty);
            args.iter_mut().for_each(erase_expr_spans);
        }
        ExprKind::SizeofType(t) | ExprKind::AlignofType(t) => erase_type_spans(t),
        ExprKind::SizeofExpr(x) => erase_expr_spans(x),
        ExprKind::InitList(a) => a.iter_mut().for_each(erase_expr_spans),
        ExprKind::Designated { designator, value } => {
            match designator {
                Designator::Index(i) => erase_expr_spans(i),
                Designator::Range(a, b) => {
                    erase_expr_spans(a);
                    erase_expr_spans(b);
                }
                Designator::Field(f) => f.span = Span::default(),
            }
            erase_expr_spans(value);
        }
        ExprKind::PackExpansion(x) => erase_expr_spans(x),
        ExprKind::SizeofPack(n) => n.span = Span::default(),
        ExprKind::TypeMember { ty, name } => {
            erase_type_spans(ty);
            name.span = Span::default();
        }
        ExprKind::Fold { pack, init, .. } => {
            erase_expr_spans(pack);
            if let Some(i) = init {
                erase_expr_spans(i);
            }
        }
        ExprKind::IntLit { .. }
        | ExprKind::FloatLit { .. }
        | ExprKind::BoolLit(_)
        | ExprKind::CharLit(_)
        | ExprKind::StrLit(_)
        | ExprKind::Null
        | ExprKind::This => {}
    }
}

pub fn erase_type_spans(t: &mut TypeExpr) {
    t.span = Span::default();
    match &mut t.kind {
        TypeExprKind::Named { path, .. } => erase_path(path),
        TypeExprKind::Decltype { expr, .. } => erase_expr_spans(expr),
        TypeExprKind::Pointer { pointee: x, .. } | TypeExprKind::Reference { referee: x } => erase_type_spans(x),
        TypeExprKind::Array { elem, size } => {
            erase_type_spans(elem);
            if let Some(s) = size {
                erase_expr_spans(s);
            }
        }
        TypeExprKind::Function { ret, params } => {
            erase_type_spans(ret);
            params.iter_mut().for_each(erase_type_spans);
        }
    }
}

fn erase_targ(a: &mut TemplateArg) {
    match a {
        TemplateArg::Type(t) => erase_type_spans(t),
        TemplateArg::Expr(e) => erase_expr_spans(e),
        TemplateArg::Pack(a) => erase_targ(a),
    }
}

fn erase_template_params(params: &mut [TemplateParam]) {
    for p in params.iter_mut() {
        p.span = Span::default();
        p.name.span = Span::default();
        match &mut p.kind {
            TemplateParamKind::Type { default } => {
                if let Some(d) = default {
                    erase_type_spans(d);
                }
            }
            TemplateParamKind::Value { ty, default } => {
                erase_type_spans(ty);
                if let Some(d) = default {
                    erase_expr_spans(d);
                }
            }
            TemplateParamKind::Template { params: inner, default } => {
                erase_template_params(inner);
                if let Some(d) = default {
                    erase_path(d);
                }
            }
        }
    }
}

fn erase_path(p: &mut Path) {
    p.span = Span::default();
    for seg in &mut p.segments {
        seg.ident.span = Span::default();
        if let Some(args) = &mut seg.template_args {
            args.iter_mut().for_each(erase_targ);
        }
    }
}

fn erase_attr(a: &mut Attribute) {
    a.span = Span::default();
    a.name.span = Span::default();
    a.args.iter_mut().for_each(erase_expr_spans);
}

fn erase_var(v: &mut VarDecl) {
    v.span = Span::default();
    v.name.span = Span::default();
    if let Some(p) = &mut v.owner {
        erase_path(p);
    }
    erase_type_spans(&mut v.ty);
    v.attrs.iter_mut().for_each(erase_attr);
    match &mut v.init {
        Some(Init::Assign(e)) => erase_expr_spans(e),
        Some(Init::Paren(a, sp)) | Some(Init::Brace(a, sp)) => {
            *sp = Span::default();
            a.iter_mut().for_each(erase_expr_spans);
        }
        None => {}
    }
}

fn erase_alias(a: &mut TypeAlias) {
    a.span = Span::default();
    a.name.span = Span::default();
    erase_type_spans(&mut a.ty);
    a.fn_params.iter_mut().flatten().for_each(erase_param);
}

pub fn erase_stmt_spans(s: &mut Stmt) {
    s.span = Span::default();
    match &mut s.kind {
        StmtKind::Decl(v) => v.iter_mut().for_each(erase_var),
        StmtKind::Expr(e) | StmtKind::Case(e) => erase_expr_spans(e),
        StmtKind::Block(b) => erase_block(b),
        StmtKind::If { cond, then, els, .. } => {
            erase_expr_spans(cond);
            erase_stmt_spans(then);
            if let Some(e) = els {
                erase_stmt_spans(e);
            }
        }
        StmtKind::For { init, cond, step, body } => {
            if let Some(i) = init {
                erase_stmt_spans(i);
            }
            if let Some(c) = cond {
                erase_expr_spans(c);
            }
            if let Some(c) = step {
                erase_expr_spans(c);
            }
            erase_stmt_spans(body);
        }
        StmtKind::RangeFor { var, range, body } => {
            erase_var(var);
            erase_expr_spans(range);
            erase_stmt_spans(body);
        }
        StmtKind::While { cond, body } | StmtKind::DoWhile { body, cond } | StmtKind::Switch { cond, body } => {
            erase_expr_spans(cond);
            erase_stmt_spans(body);
        }
        StmtKind::Return(e) => {
            if let Some(e) = e {
                erase_expr_spans(e);
            }
        }
        StmtKind::Alias(a) => erase_alias(a),
        StmtKind::LocalType(item, vars) => {
            erase_item(item);
            vars.iter_mut().for_each(erase_var);
        }
        StmtKind::StaticAssert { cond, .. } => erase_expr_spans(cond),
        StmtKind::Default | StmtKind::Break | StmtKind::Continue | StmtKind::Empty => {}
    }
}

fn erase_block(b: &mut Block) {
    b.span = Span::default();
    b.stmts.iter_mut().for_each(erase_stmt_spans);
}

fn erase_function(f: &mut Function) {
    f.span = Span::default();
    f.attrs.iter_mut().for_each(erase_attr);
    erase_type_spans(&mut f.ret);
    erase_path(&mut f.name);
    f.params.iter_mut().for_each(erase_param);
    if let Some(b) = &mut f.body {
        erase_block(b);
    }
}

fn erase_param(p: &mut Param) {
    p.span = Span::default();
    erase_type_spans(&mut p.ty);
    if let Some(n) = &mut p.name {
        n.span = Span::default();
    }
    p.attrs.iter_mut().for_each(erase_attr);
    if let Some(d) = &mut p.default {
        erase_expr_spans(d);
    }
}

fn erase_item(i: &mut Item) {
    i.span = Span::default();
    match &mut i.kind {
        ItemKind::Function(f) => erase_function(f),
        ItemKind::Struct(s) => {
            s.span = Span::default();
            s.name.span = Span::default();
            s.attrs.iter_mut().for_each(erase_attr);
            s.specialization.iter_mut().flatten().for_each(erase_targ);
            for b in &mut s.bases {
                b.span = Span::default();
                erase_type_spans(&mut b.ty);
                if let Some(a) = &mut b.access {
                    a.span = Span::default();
                }
            }
            for m in &mut s.members {
                m.span = Span::default();
                match &mut m.kind {
                    MemberKind::Field(v) | MemberKind::StaticConst(v) => erase_var(v),
                    MemberKind::Method(f) => erase_function(f),
                    MemberKind::Constructor { func, inits } => {
                        erase_function(func);
                        for (n, a) in inits {
                            n.span = Span::default();
                            a.iter_mut().for_each(erase_expr_spans);
                        }
                    }
                    MemberKind::Alias(a) => erase_alias(a),
                    MemberKind::Nested(item) => erase_item(item),
                    MemberKind::DefaultedConstructor => {}
                    MemberKind::Anonymous(inner) => {
                        let mut item = Item { kind: ItemKind::Struct((**inner).clone()), span: Span::default() };
                        erase_item(&mut item);
                        if let ItemKind::Struct(s) = item.kind {
                            **inner = s;
                        }
                    }
                }
            }
        }
        ItemKind::Enum(e) => {
            e.span = Span::default();
            if let Some(n) = &mut e.name {
                n.span = Span::default();
            }
            if let Some(u) = &mut e.underlying {
                erase_type_spans(u);
            }
            for en in &mut e.enumerators {
                en.name.span = Span::default();
                if let Some(v) = &mut en.value {
                    erase_expr_spans(v);
                }
            }
        }
        ItemKind::Vars(v) => v.iter_mut().for_each(erase_var),
        ItemKind::Alias(a) => erase_alias(a),
        ItemKind::Namespace { name, items } => {
            if let Some(n) = name {
                n.span = Span::default();
            }
            items.iter_mut().for_each(erase_item);
        }
        ItemKind::UsingNamespace(p) | ItemKind::UsingDecl(p) => erase_path(p),
        ItemKind::Template { params, item } => {
            erase_template_params(params);
            erase_item(item);
        }
        ItemKind::ExplicitInstantiation { attrs, ty, name, params } => {
            attrs.iter_mut().for_each(erase_attr);
            erase_type_spans(ty);
            erase_path(name);
            params.iter_mut().flatten().for_each(erase_param);
        }
        ItemKind::StaticAssert { cond, .. } => erase_expr_spans(cond),
        ItemKind::Empty => {}
    }
}
