//! Types declared inside function bodies (`typedef struct { … } vec_w;` in
//! MLX's quantized kernels). The checker keeps references into the parsed
//! unit for every struct it declares, so a local type is looked up by its
//! span among the unit's own statements, collected once.

use super::Checker;
use crate::ast::{self, ItemKind, MemberKind, StmtKind};
use crate::source::Span;
use rustc_hash::FxHashMap as HashMap;

impl<'a> Checker<'a, '_> {
    /// The local type declaration at `span` in the unit being checked.
    pub(crate) fn unit_local_type(&mut self, span: Span) -> Option<&'a ast::Item> {
        if self.local_types.is_none() {
            let mut found = HashMap::default();
            if let Some(unit) = self.unit {
                unit.items.iter().for_each(|i| collect_item(i, &mut found));
            }
            self.local_types = Some(found);
        }
        self.local_types.as_ref()?.get(&span).copied()
    }
}

fn collect_item<'a>(item: &'a ast::Item, out: &mut HashMap<Span, &'a ast::Item>) {
    match &item.kind {
        ItemKind::Function(f) => collect_function(f, out),
        ItemKind::Struct(s) => collect_struct(s, out),
        ItemKind::Namespace { items, .. } => items.iter().for_each(|i| collect_item(i, out)),
        ItemKind::Template { item, .. } => collect_item(item, out),
        _ => {}
    }
}

fn collect_struct<'a>(s: &'a ast::Struct, out: &mut HashMap<Span, &'a ast::Item>) {
    for m in &s.members {
        match &m.kind {
            MemberKind::Method(f) | MemberKind::Constructor { func: f, .. } => collect_function(f, out),
            MemberKind::Nested(item) => collect_item(item, out),
            MemberKind::Anonymous(inner) => collect_struct(inner, out),
            _ => {}
        }
    }
}

fn collect_function<'a>(f: &'a ast::Function, out: &mut HashMap<Span, &'a ast::Item>) {
    if let Some(body) = &f.body {
        body.stmts.iter().for_each(|s| collect_stmt(s, out));
    }
}

fn collect_stmt<'a>(s: &'a ast::Stmt, out: &mut HashMap<Span, &'a ast::Item>) {
    match &s.kind {
        StmtKind::LocalType(item, _) => {
            out.insert(item.span, item);
            collect_item(item, out);
        }
        StmtKind::Block(b) => b.stmts.iter().for_each(|s| collect_stmt(s, out)),
        StmtKind::If { then, els, .. } => {
            collect_stmt(then, out);
            if let Some(e) = els {
                collect_stmt(e, out);
            }
        }
        StmtKind::For { init, body, .. } => {
            if let Some(i) = init {
                collect_stmt(i, out);
            }
            collect_stmt(body, out);
        }
        StmtKind::RangeFor { body, .. } | StmtKind::While { body, .. } | StmtKind::DoWhile { body, .. } | StmtKind::Switch { body, .. } => {
            collect_stmt(body, out)
        }
        _ => {}
    }
}
