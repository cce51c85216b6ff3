//! Overloaded operators: `a + b`, `a[i]`, `f(x)`, `a += b`, `-a`, `a == b`
//! where an operand is a struct. C++ spells the function `operator+`; the
//! parser names it so, and the call becomes an ordinary member or free
//! function call, chosen by the usual overload resolution.

use super::expr::mk;
use super::{Checker, DeclKind};
use crate::ast;
use crate::hir::{self, ExprKind as H};
use crate::source::Span;
use crate::types::Type;

impl Checker<'_, '_> {
    /// Whether a value of this type makes an operator look for overloads.
    pub(crate) fn is_class(ty: &Type) -> bool {
        matches!(ty, Type::Struct(_))
    }

    /// Call `operator{sym}` with `args` (the object first for members): a
    /// member function of the first operand's struct, else a free function.
    pub(crate) fn overloaded(&mut self, sym: &str, args: Vec<hir::Expr>, span: Span) -> Option<hir::Expr> {
        let name: std::rc::Rc<str> = format!("operator{sym}").into();
        if let Some(Type::Struct(sid)) = args.first().map(|a| a.ty.clone()) {
            if self.has_method(sid, &name) || self.lookup_member_decls(sid, &name).iter().any(|d| self.is_function_decl(*d)) {
                let mut args = args;
                let obj = args.remove(0);
                return self.method_call(obj, &ast::Ident { name, span }, args, span);
            }
        }
        let funcs: Vec<usize> = self
            .lookup_global(&name)
            .into_iter()
            .filter(|&d| matches!(self.decls[d].kind, DeclKind::Function { .. } | DeclKind::FunctionTemplate { .. }))
            .collect();
        if !funcs.is_empty() {
            return self.user_call(&name, &funcs, None, args, span, span);
        }
        let shown: Vec<String> = args.iter().map(|a| format!("`{}`", self.ty_name(&a.ty))).collect();
        self.error(span, format!("no operator `{sym}` for {}", shown.join(" and ")))
            .help(format!("declare `{name}` for these types (as a member function or a free function) before this line"));
        None
    }

    /// A struct value called like a function: its `operator()`.
    pub(crate) fn call_object(&mut self, obj: hir::Expr, args: Vec<hir::Expr>, span: Span) -> Option<hir::Expr> {
        let mut all = vec![obj];
        all.extend(args);
        self.overloaded("()", all, span)
    }

    /// `x++` / `x--` on a struct: C++ passes a dummy `int` to the postfix form.
    pub(crate) fn overloaded_incdec(&mut self, x: hir::Expr, inc: bool, postfix: bool, span: Span) -> Option<hir::Expr> {
        let sym = if inc { "++" } else { "--" };
        let mut args = vec![x];
        if postfix {
            args.push(mk(H::Const(hir::ConstValue::Int(0)), Type::INT, span));
        }
        self.overloaded(sym, args, span)
    }
}

impl Checker<'_, '_> {
    /// Whether a struct type declares the member `name` (e.g. `operator=`).
    pub(crate) fn has_member_operator(&self, ty: &Type, name: &str) -> bool {
        match ty {
            Type::Struct(sid) => self.has_method(*sid, name),
            _ => false,
        }
    }

    pub(crate) fn is_function_decl(&self, d: usize) -> bool {
        matches!(self.decls[d].kind, DeclKind::Function { .. } | DeclKind::FunctionTemplate { .. })
    }

    /// The type of field `name` of the struct whose method we are in.
    pub(crate) fn this_field_type(&self, name: &str) -> Option<Type> {
        let sid = self.env.this_struct?;
        self.tables.struct_def(sid).fields.iter().find(|f| f.name == name).map(|f| f.ty.clone())
    }
}
