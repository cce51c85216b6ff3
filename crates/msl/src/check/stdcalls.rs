//! Calls of the Metal standard library: overload resolution against the
//! builtin table, and the library's templates the checker builds itself
//! (`as_type`, `declval`, `make_filled_simdgroup_matrix`, `numeric_limits`).

use super::expr::mk;
use super::{Checker, TArg};
use crate::ast::{self, AddressSpace};
use crate::builtins::{self, ArgInfo, Namespace, ResolveError};
use crate::hir::{self, BuiltinId, ConstValue, ExprKind as H};
use crate::source::Span;
use crate::types::{Scalar, Type};

impl<'a> Checker<'a, '_> {
    /// What overload resolution of the standard library needs to know
    /// about each argument.
    pub(crate) fn arg_infos(&self, args: &[hir::Expr]) -> Vec<ArgInfo> {
        args.iter()
            .map(|a| {
                let ty = match &a.ty {
                    Type::Array { elem, .. } => {
                        let (space, is_const) = if a.is_place() { self.place_info(a) } else { (AddressSpace::Thread, false) };
                        Type::Pointer { pointee: elem.clone(), space, is_const }
                    }
                    t => t.clone(),
                };
                let lit = matches!(a.kind, H::Const(_));
                ArgInfo {
                    is_int_literal: lit && ty.elem_scalar().is_some_and(|s| s.is_integer()),
                    is_float_literal: lit && ty.elem_scalar().is_some_and(|s| s.is_float()),
                    ty,
                    is_lvalue: a.is_place(),
                }
            })
            .collect()
    }

    pub(crate) fn builtin_call(
        &mut self,
        name: &str,
        ns: Option<Namespace>,
        targs: Option<&[ast::TemplateArg]>,
        args: Vec<hir::Expr>,
        span: Span,
        name_span: Span,
    ) -> Option<hir::Expr> {
        match name {
            "as_type" => return self.as_type(targs, args, span),
            "declval" => return self.declval(targs, args, span),
            "make_filled_simdgroup_matrix" => return self.make_filled(targs, args, span),
            "determinant" | "transpose" if targs.is_none() => return self.matrix_function(name, args, span, name_span),
            _ => {}
        }
        if targs.is_some() {
            self.error(name_span, format!("`{name}` does not take template arguments"));
            return None;
        }
        // `frexp(x, &e)` / `modf(x, &i)`: Metal also accepts the out
        // parameter as a `thread` pointer (C's form); it is the place it
        // points to.
        let mut args = args;
        if matches!(name, "frexp" | "modf") && args.len() == 2 {
            if let Type::Pointer { pointee, space: AddressSpace::Thread, is_const: false } = args[1].ty.clone() {
                let p = args.pop().expect("two arguments");
                let sp = p.span;
                args.push(mk(H::Deref(Box::new(p)), *pointee, sp));
            }
        }
        let infos = self.arg_infos(&args);
        let qualified = match ns {
            Some(Namespace::Fast) => format!("metal::fast::{name}"),
            Some(Namespace::Precise) => format!("metal::precise::{name}"),
            _ => name.to_string(),
        };
        if let Some(call) = self.mixed_precision_simdgroup_product(name, &args, span) {
            return Some(call);
        }
        match builtins::resolve(name, ns, &infos) {
            Ok(r) => {
                let mut hargs = Vec::with_capacity(args.len());
                for (a, p) in args.into_iter().zip(&r.params) {
                    match p {
                        Type::Reference { referee, space, .. } => {
                            if !a.is_place() {
                                self.error(a.span, format!("`{name}` writes its result into this argument, so it must be a variable"));
                                return None;
                            }
                            let (s, c) = self.place_info(&a);
                            if c || s == AddressSpace::Constant {
                                self.error(a.span, format!("`{name}` writes into this argument, but it is read-only"));
                                return None;
                            }
                            if s != *space && *space != AddressSpace::Thread {
                                self.error(a.span, format!("this argument must be in `{}` memory", space.keyword()));
                                return None;
                            }
                            let _ = referee;
                            hargs.push(a);
                        }
                        _ => hargs.push(self.coerce(a, p, "the argument")?),
                    }
                }
                let fast = ns == Some(Namespace::Fast);
                Some(mk(H::Builtin { id: r.func.id, fast, args: hargs, param_types: r.params.clone() }, r.ret, span))
            }
            Err(ResolveError::NotFound) => {
                let mut d = self.error(name_span, format!("`{qualified}` is not a function of the Metal standard library"));
                if ns.is_some() {
                    d = d.help(format!("`metal::fast::` and `metal::precise::` only hold floating-point math; call `{name}` without them"));
                }
                drop(d);
                None
            }
            Err(ResolveError::WrongArgCount { expected }) => {
                let exp: Vec<String> = expected.iter().map(|n| n.to_string()).collect();
                let n = args.len();
                self.error(
                    span,
                    format!(
                        "`{qualified}` takes {} argument{} but {n} {} given",
                        exp.join(" or "),
                        if expected == [1] { "" } else { "s" },
                        if n == 1 { "was" } else { "were" }
                    ),
                )
                .label("wrong number of arguments");
                None
            }
            Err(ResolveError::NoMatch { candidates }) => {
                let shown: Vec<String> = args.iter().map(|a| self.ty_name(&a.ty)).collect();
                let mut d = self
                    .error(name_span, format!("no overload of `{qualified}` takes ({})", shown.join(", ")))
                    .label("no matching overload");
                for c in candidates.iter().take(6) {
                    d = d.note(format!("candidate: {c}"));
                }
                if candidates.len() > 6 {
                    d = d.note(format!("... and {} more", candidates.len() - 6));
                }
                if name.starts_with("atomic_") {
                    if let Some(Type::Pointer { pointee, space, .. }) = args.first().map(|a| &a.ty) {
                        if !matches!(**pointee, Type::Atomic(_)) {
                            let s = pointee.elem_scalar().unwrap_or(Scalar::UInt);
                            d = d.help(format!(
                                "atomic functions need a pointer to an atomic type: declare the buffer as `{} atomic_{}*`, or cast: `({} atomic_{}*)&...`",
                                space.keyword(),
                                s.name(),
                                space.keyword(),
                                s.name()
                            ));
                        }
                    }
                } else if args.iter().any(|a| a.ty.is_vector()) {
                    d = d.help("vector arguments must agree in length and element type; convert explicitly if needed");
                }
                drop(d);
                None
            }
            Err(ResolveError::Ambiguous { candidates }) => {
                let shown: Vec<String> = args.iter().map(|a| self.ty_name(&a.ty)).collect();
                let mut d = self.error(name_span, format!("call to `{qualified}({})` is ambiguous", shown.join(", ")));
                for c in candidates.iter().take(6) {
                    d = d.note(format!("candidate: {c}"));
                }
                drop(d.help("convert the arguments to the type you mean, e.g. `float(x)`"));
                None
            }
        }
    }

    pub(crate) fn single_type_arg(&mut self, targs: Option<&[ast::TemplateArg]>, what: &str, span: Span) -> Option<Vec<TArg>> {
        let Some(t) = targs else {
            self.error(span, format!("`{what}` needs template arguments, e.g. `{what}<float>(...)`"));
            return None;
        };
        self.template_args(t)
    }

    pub(crate) fn as_type(&mut self, targs: Option<&[ast::TemplateArg]>, args: Vec<hir::Expr>, span: Span) -> Option<hir::Expr> {
        let t = self.single_type_arg(targs, "as_type", span)?;
        let [TArg::Type(to)] = t.as_slice() else {
            self.error(span, "`as_type` takes one type argument");
            return None;
        };
        let [x] = <[hir::Expr; 1]>::try_from(args).ok()?;
        let ok_kind = |t: &Type| matches!(t, Type::Scalar(_) | Type::Vector { .. });
        if !ok_kind(to) || !ok_kind(&x.ty) {
            self.error(span, "`as_type` reinterprets scalars and vectors only");
            return None;
        }
        let (a, b) = (self.tables.size_of(&x.ty), self.tables.size_of(to));
        if a != b {
            let (fx, ft) = (self.ty_name(&x.ty), self.ty_name(to));
            self.error(span, format!("`as_type<{ft}>` needs a value of the same size, but `{fx}` is {a} bytes and `{ft}` is {b}"))
                .help("reinterpreting bits needs equal sizes; to convert the value instead, write `".to_string() + &ft + "(...)`");
            return None;
        }
        Some(mk(H::BitCast(Box::new(x)), to.clone(), span))
    }

    /// `declval<T>()`: a value of type `T` that is never computed, only
    /// allowed inside `decltype(…)` (as in C++, where using it elsewhere
    /// fails to link).
    pub(crate) fn declval(&mut self, targs: Option<&[ast::TemplateArg]>, args: Vec<hir::Expr>, span: Span) -> Option<hir::Expr> {
        let t = self.single_type_arg(targs, "declval", span)?;
        let [TArg::Type(ty)] = t.as_slice() else {
            self.error(span, "`declval` takes one type argument: `declval<T>()`");
            return None;
        };
        if !args.is_empty() {
            self.error(span, "`declval<T>()` takes no arguments");
            return None;
        }
        if self.unevaluated == 0 {
            self.error(span, "`declval<T>()` can only be used where its value is never computed")
                .help("use it inside `decltype(…)` to name the type of an expression");
            return None;
        }
        let ty = match ty {
            Type::Reference { referee, .. } => (**referee).clone(),
            t => t.clone(),
        };
        Some(mk(H::Zero, ty, span))
    }

    pub(crate) fn make_filled(&mut self, targs: Option<&[ast::TemplateArg]>, args: Vec<hir::Expr>, span: Span) -> Option<hir::Expr> {
        let t = self.single_type_arg(targs, "make_filled_simdgroup_matrix", span)?;
        let elem = match t.as_slice() {
            // The row count defaults to the column count (`<float, 8>`).
            [TArg::Type(Type::Scalar(s)), TArg::Value(r, _), TArg::Value(c, _)] if r.as_i64() == 8 && c.as_i64() == 8 && s.is_float() => *s,
            [TArg::Type(Type::Scalar(s)), TArg::Value(c, _)] if c.as_i64() == 8 && s.is_float() => *s,
            _ => {
                self.error(span, "use `make_filled_simdgroup_matrix<T, 8, 8>(value)` with T = float, half or bfloat");
                return None;
            }
        };
        let [x] = <[hir::Expr; 1]>::try_from(args).ok()?;
        let x = self.coerce(x, &Type::Scalar(elem), "the fill value")?;
        let ty = Type::SimdMatrix { elem, rows: 8, cols: 8 };
        Some(mk(
            H::Builtin { id: BuiltinId::MakeFilledSimdgroupMatrix, fast: false, args: vec![x], param_types: vec![Type::Scalar(elem)] },
            ty,
            span,
        ))
    }

    pub(crate) fn numeric_limits(&mut self, targs: &[TArg], member: &str, span: Span) -> Option<hir::Expr> {
        // Metal defines the limits of a vector type too: its scalar's, in every lane.
        let (s, vector) = match targs {
            [TArg::Type(Type::Scalar(s))] => (*s, None),
            [TArg::Type(v @ Type::Vector { elem, .. })] => (*elem, Some(v.clone())),
            [TArg::Type(t)] => {
                let n = self.ty_name(t);
                self.error(span, format!("`numeric_limits<{n}>` is not defined: `{n}` is not a scalar or vector type"))
                    .help("specialize `_numeric_limits_impl` for it, as `<metal_limits>` does for the scalar types");
                return None;
            }
            _ => {
                self.error(span, "`numeric_limits<T>` needs one scalar or vector type");
                return None;
            }
        };
        let v = match (member, s) {
            ("max", Scalar::Float) => ConstValue::Float(f32::MAX as f64),
            ("max", Scalar::Half) => ConstValue::Float(65504.0),
            ("max", Scalar::BFloat) => ConstValue::Float(f32::from_bits(0x7f7f_0000) as f64),
            ("min", Scalar::Float) | ("min", Scalar::BFloat) => ConstValue::Float(f32::MIN_POSITIVE as f64),
            ("min", Scalar::Half) => ConstValue::Float(6.103_515_625e-5),
            ("lowest", Scalar::Float) => ConstValue::Float(f32::MIN as f64),
            ("lowest", Scalar::Half) => ConstValue::Float(-65504.0),
            ("lowest", Scalar::BFloat) => ConstValue::Float(-(f32::from_bits(0x7f7f_0000) as f64)),
            ("epsilon", Scalar::Float) => ConstValue::Float(f32::EPSILON as f64),
            ("epsilon", Scalar::Half) => ConstValue::Float(0.000_976_562_5),
            ("epsilon", Scalar::BFloat) => ConstValue::Float(0.007_812_5),
            ("infinity", _) if s.is_float() => ConstValue::Float(f64::INFINITY),
            ("quiet_NaN" | "signaling_NaN", _) if s.is_float() => ConstValue::Float(f64::NAN),
            ("denorm_min", Scalar::Float) => ConstValue::Float(f32::from_bits(1) as f64),
            ("denorm_min", Scalar::Half) => ConstValue::Float(5.960_464_477_539_063e-8),
            ("denorm_min", Scalar::BFloat) => ConstValue::Float(f32::from_bits(0x0001_0000) as f64),
            ("max", _) => int_limit(s, true),
            ("min" | "lowest", _) => int_limit(s, false),
            // Integers have no infinity or NaN: C++ gives 0 for them.
            ("epsilon" | "denorm_min" | "infinity" | "quiet_NaN" | "signaling_NaN", _) => ConstValue::Int(0),
            _ => {
                self.error(span, format!("`numeric_limits<{}>` has no member `{member}` the simulator knows", s.name()))
                    .help("use max, min, lowest, epsilon, infinity, quiet_NaN or denorm_min");
                return None;
            }
        };
        let scalar = mk(H::Const(v.cast(s)), Type::Scalar(s), span);
        match vector {
            Some(v) => Some(self.convert(scalar, v)),
            None => Some(scalar),
        }
    }
}

pub(crate) fn int_limit(s: Scalar, max: bool) -> ConstValue {
    let bits = s.size() * 8;
    if s == Scalar::Bool {
        return ConstValue::Bool(max);
    }
    if s.is_signed() {
        let m = (1i128 << (bits - 1)) - 1;
        ConstValue::Int(if max { m as i64 } else { (-m - 1) as i64 })
    } else {
        ConstValue::UInt(if max { ((1u128 << bits) - 1) as u64 } else { 0 })
    }
}
