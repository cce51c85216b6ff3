//! Span erasure, for comparing trees that came from different text.

use crate::ast::*;
use crate::source::Span;

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
