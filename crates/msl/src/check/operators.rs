//! Overloaded operators: `a + b`, `a[i]`, `f(x)`, `a += b`, `-a`, `a == b`
//! where an operand is a struct. C++ spells the function `operator+`; the
//! parser names it so, and the call becomes an ordinary member or free
//! function call, chosen by the usual overload resolution.

use super::expr::mk;
use super::{Checker, DeclKind, TArg};
use crate::ast;
use crate::ast::AddressSpace;
use crate::hir::{self, ExprKind as H};
use crate::source::Span;
use crate::types::{StructId, Type};

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
        let funcs = self.free_operator_candidates(&name, &args);
        if !funcs.is_empty() {
            return self.user_call(&name, &funcs, None, args, span, span);
        }
        let shown: Vec<String> = args.iter().map(|a| format!("`{}`", self.ty_name(&a.ty))).collect();
        self.error(span, format!("no operator `{sym}` for {}", shown.join(" and ")))
            .help(format!("declare `{name}` for these types (as a member function or a free function) before this line"));
        None
    }

    /// `a @ b` where an operand is a struct. C++ puts the built-in
    /// operators in the overload set too: when no user `operator@` fits,
    /// struct operands convert through their conversion operators to
    /// scalars and the built-in operator applies (`short * Int<2>{}` with
    /// `Int`'s `operator int()` and an `operator*` only for two `Int`s).
    pub(crate) fn binary_on_class(&mut self, op: ast::BinaryOp, l: hir::Expr, r: hir::Expr, span: Span) -> Option<hir::Expr> {
        let args = vec![l, r];
        if !self.user_operator_fits(op.as_str(), &args) {
            if let Some([l, r]) = self.operands_as_scalars(&args).as_deref() {
                return self.binary(op, l.clone(), r.clone(), span);
            }
        }
        self.overloaded(op.as_str(), args, span)
    }

    /// Whether a user `operator{sym}` (member or free) could take `args`.
    /// A member operator is taken as fitting (it is called as before).
    pub(crate) fn user_operator_fits(&mut self, sym: &str, args: &[hir::Expr]) -> bool {
        let name = format!("operator{sym}");
        if let Some(Type::Struct(sid)) = args.first().map(|a| a.ty.clone()) {
            if self.has_method(sid, &name) || self.lookup_member_decls(sid, &name).iter().any(|d| self.is_function_decl(*d)) {
                return true;
            }
        }
        let funcs = self.free_operator_candidates(&name, args);
        !funcs.is_empty() && self.has_viable_overload(&funcs, args)
    }

    /// The free functions `name` (e.g. `operator*`) an operator call may
    /// use: those visible here, and, as C++'s argument-dependent lookup
    /// adds, those declared where a struct operand's type was declared
    /// (`complex_t`'s `operator*` from inside namespace `mlx::steel`,
    /// whose own `operator*` hides the global one).
    fn free_operator_candidates(&self, name: &str, args: &[hir::Expr]) -> Vec<usize> {
        let mut funcs: Vec<usize> = self.lookup_global(name);
        for d in self.argument_dependent(name, args.iter().map(|a| &a.ty)) {
            if !funcs.contains(&d) {
                funcs.push(d);
            }
        }
        funcs.retain(|&d| self.is_function_decl(d));
        funcs.sort_unstable();
        funcs
    }

    /// Functions `name` that C++'s argument-dependent lookup adds for
    /// arguments of these types: those in the namespace where a struct
    /// argument's type was declared, including ones declared after a
    /// template's definition but before this point of instantiation
    /// (candle's `simd_shuffle_down(RMS<T>, ushort)`, declared after the
    /// reducer template that calls it).
    pub(crate) fn argument_dependent<'t>(&self, name: &str, tys: impl Iterator<Item = &'t Type>) -> Vec<usize> {
        let Some(all) = self.by_name.get(name) else { return Vec::new() };
        let mut out = Vec::new();
        for t in tys {
            let Type::Struct(sid) = t.strip_ref() else { continue };
            let scope = &self.structs[sid.0 as usize].scope;
            let home = &scope[..scope.len().saturating_sub(1)];
            for &d in all {
                if self.decls[d].scope.as_slice() == home && self.is_function_decl(d) && !out.contains(&d) {
                    out.push(d);
                }
            }
        }
        out
    }

    /// Each struct operand through its conversion operator to a scalar
    /// (others unchanged); None (quietly) if one has none.
    pub(crate) fn operands_as_scalars(&mut self, args: &[hir::Expr]) -> Option<Vec<hir::Expr>> {
        let trial = self.trial();
        let out: Option<Vec<hir::Expr>> =
            args.iter().map(|a| if Self::is_class(&a.ty) { self.conversion_to_scalar(a.clone()) } else { Some(a.clone()) }).collect();
        if out.is_some() {
            trial.commit();
        }
        out
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
    /// A user-defined conversion of `h` to `to`, if one exists (quiet
    /// otherwise): the source struct's `operator T()` (or a conversion
    /// operator template giving `T`), else a constructor of the target
    /// struct taking `h`.
    pub(crate) fn user_conversion(&mut self, h: hir::Expr, to: &Type) -> Option<hir::Expr> {
        let span = h.span;
        if let Type::Struct(sid) = h.ty.clone() {
            if let Some(name) = self.conversion_operator(sid, span, |r| r == to) {
                return self.method_call(h, &ast::Ident { name, span }, Vec::new(), span);
            }
            for d in self.structs[sid.0 as usize].conversion_templates.clone() {
                let DeclKind::FunctionTemplate { ast: f, params } = self.decls[d].kind.clone() else { continue };
                // `template <class U> operator U()`: U is the target type.
                let ast::TypeExprKind::Named { path, .. } = &f.ret.kind else { continue };
                let Some(i) = params.iter().position(|p| path.segments.len() == 1 && p.name.name == path.segments[0].ident.name) else {
                    continue;
                };
                if i != 0 {
                    continue;
                }
                let trial = self.trial();
                let Some(targs) = self.complete_targs(d, vec![TArg::Type(to.clone())], span) else { continue };
                // Its error is this call's, not a substitution failure.
                let Some((this_ptr, space)) = self.this_pointer(h.clone(), span) else {
                    trial.commit();
                    return None;
                };
                let Some((func, _)) = self.instantiate_function(d, targs, span, None, Some((sid, space))) else { continue };
                trial.commit();
                return self.call_expr(func, vec![this_ptr], span);
            }
        }
        if let Type::Struct(sid) = to {
            // (Bounded: a constructor's parameter may convert through another.)
            if self.has_constructors(*sid) && self.inst_depth < super::MAX_INSTANTIATION_DEPTH {
                let trial = self.trial();
                let r = self.deeper().ctor_call(*sid, vec![h], span);
                if r.is_some() {
                    trial.commit();
                }
                return r;
            }
        }
        None
    }

    /// `h` (a struct) through its first conversion operator to a scalar
    /// type, if it has one (quiet otherwise).
    pub(crate) fn conversion_to_scalar(&mut self, h: hir::Expr) -> Option<hir::Expr> {
        let Type::Struct(sid) = h.ty.clone() else { return None };
        let span = h.span;
        let name = self.conversion_operator(sid, span, Type::is_scalar)?;
        self.method_call(h, &ast::Ident { name, span }, Vec::new(), span)
    }

    /// The first (non-template) conversion operator of struct `sid` whose
    /// result type satisfies `wanted` (quiet: failed instantiations leave
    /// no diagnostics).
    fn conversion_operator(&mut self, sid: StructId, span: Span, wanted: impl Fn(&Type) -> bool) -> Option<std::rc::Rc<str>> {
        let named: Vec<(usize, std::rc::Rc<str>)> = self.structs[sid.0 as usize]
            .methods
            .iter()
            .enumerate()
            .map(|(i, (f, _))| (i, f.name.last().ident.name.clone()))
            .filter(|(_, n)| is_conversion_name(n))
            .collect();
        for (i, name) in named {
            let trial = self.trial();
            let ret = self.method_instance(sid, i, AddressSpace::Thread, span).map(|(_, sig)| sig.ret);
            drop(trial);
            if ret.is_some_and(|r| wanted(&r)) {
                return Some(name);
            }
        }
        None
    }

    /// Whether `name` (e.g. `operator!`) is declared for a value of type
    /// `ty`: as a member (function or template) or as a free function.
    pub(crate) fn declares_operator(&self, ty: &Type, name: &str) -> bool {
        if let Type::Struct(sid) = ty {
            if self.has_method(*sid, name) || self.lookup_member_decls(*sid, name).iter().any(|d| self.is_function_decl(*d)) {
                return true;
            }
        }
        self.lookup_global(name).into_iter().any(|d| self.is_function_decl(d))
    }

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

/// `operator float`, `operator vec<T, 2>`, `operator U`: a conversion
/// operator's name (as opposed to `operator+`).
pub(crate) fn is_conversion_name(name: &str) -> bool {
    name.strip_prefix("operator ").is_some_and(|rest| rest.starts_with(|c: char| c.is_alphabetic() || c == '_'))
}
