//! Type traits in the checker: template arguments evaluated, then asked of
//! [`crate::traits`]. A trait that fails (`enable_if_t<false>`) reports an
//! error, which overload resolution rolls back to drop the candidate (SFINAE).

use super::expr::mk;
use super::{Checker, TArg};
use crate::ast;
use crate::hir::{self, ExprKind as H};
use crate::source::Span;
use crate::traits::{self, Arg};
use crate::types::Type;

impl Checker<'_, '_> {
    fn trait_args(&mut self, args: &[ast::TemplateArg]) -> Option<Vec<Arg>> {
        let targs = self.template_args(args)?;
        let mut out = Vec::with_capacity(targs.len());
        for a in targs {
            match a {
                TArg::Type(t) => out.push(Arg::Type(t)),
                TArg::Value(v, _) => out.push(Arg::Value(v)),
                // Written lists are expanded; a pack is never a trait's argument.
                TArg::Pack(_) | TArg::Func(..) | TArg::FuncName { .. } | TArg::Template(_) => return None,
            }
        }
        Some(out)
    }

    /// `enable_if_t<...>`, `conditional_t<...>`, ...
    pub(crate) fn type_trait(&mut self, name: &str, args: &[ast::TemplateArg], span: Span) -> Option<Type> {
        let targs = self.trait_args(args)?;
        match traits::type_of(name, &targs)? {
            Ok(t) => Some(t),
            Err(e) => {
                self.error(span, e);
                None
            }
        }
    }

    /// `disjunction<A, B>::value` and friends: each argument is a trait
    /// (or any type with a static `value`), asked for `A::value`.
    fn meta_trait(&mut self, name: &str, args: &[ast::TemplateArg], span: Span) -> Option<hir::Expr> {
        let mut values = Vec::with_capacity(args.len());
        for a in args {
            // `is_same<T, int>` reads as a type or (a trait is no type
            // here) as a name with template arguments.
            let (path, at) = match a {
                ast::TemplateArg::Type(ast::TypeExpr { kind: ast::TypeExprKind::Named { path, .. }, span }) => (path, *span),
                ast::TemplateArg::Expr(ast::Expr { kind: ast::ExprKind::Name(path), span }) => (path, *span),
                _ => {
                    let shown = &name[..name.len() - 2];
                    self.error(span, format!("the arguments of `{shown}` must be traits such as `is_same<T, int>`"));
                    return None;
                }
            };
            let mut p = path.clone();
            p.segments.push(ast::PathSegment { ident: ast::Ident { name: "value".into(), span: at }, template_args: None });
            let e = ast::Expr { kind: ast::ExprKind::Name(p), span: at };
            let h = self.expr(&e)?;
            let Some(v) = self.const_value(&h) else {
                self.error(at, "this trait's `value` is not a compile-time constant");
                return None;
            };
            values.push(v.is_true());
        }
        match traits::meta(name, &values) {
            Ok(v) => Some(mk(H::Const(v), Type::BOOL, span)),
            Err(e) => {
                self.error(span, e);
                None
            }
        }
    }

    /// `Some(result)` when `path` is a value trait (`is_same_v<A, B>` or
    /// `is_same<A, B>::value`) not shadowed by a user declaration.
    pub(crate) fn value_trait_path(&mut self, path: &ast::Path, span: Span) -> Option<Option<hir::Expr>> {
        let segs = &path.segments;
        let segs = if segs.len() > 1 && &*segs[0].ident.name == "metal" { &segs[1..] } else { &segs[..] };
        let (name, seg) = match segs {
            [s] if s.template_args.is_some() => (s.ident.name.to_string(), s),
            [s, v] if s.template_args.is_some() && &*v.ident.name == "value" => (format!("{}_v", s.ident.name), s),
            _ => return None,
        };
        if !traits::VALUE_TRAITS.contains(&name.as_str()) || !self.lookup_global(&seg.ident.name).is_empty() {
            return None;
        }
        let args = seg.template_args.as_ref()?;
        if traits::META_TRAITS.contains(&name.as_str()) {
            return Some(self.meta_trait(&name, args, span));
        }
        let Some(targs) = self.trait_args(args) else { return Some(None) };
        Some(match traits::value(&name, &targs)? {
            Ok(v) => {
                let ty = match v {
                    hir::ConstValue::Bool(_) => Type::BOOL,
                    _ => Type::INT,
                };
                Some(mk(H::Const(v), ty, span))
            }
            Err(e) => {
                self.error(seg.ident.span, e);
                None
            }
        })
    }
}
