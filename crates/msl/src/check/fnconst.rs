//! Function constants: `constant T name [[function_constant(i)]];` takes its
//! value from the pipeline (here: the compile options, by name or index),
//! `is_function_constant_defined(name)` tells whether one was given, and a
//! kernel parameter marked `[[function_constant(c)]]` exists only when `c`.

use super::expr::mk;
use super::{Checker, DeclKind};
use crate::ast;
use crate::hir::{self, ConstValue, ExprKind as H};
use crate::source::Span;
use crate::types::{Scalar, Type};

impl Checker<'_, '_> {
    /// The `[[function_constant(i)]]` attribute of a declaration, if any.
    pub(crate) fn function_constant_attr(v: &ast::VarDecl) -> Option<&ast::Attribute> {
        v.attrs.iter().find(|a| &*a.name.name == "function_constant")
    }

    /// Declare a program-scope function constant.
    pub(crate) fn function_constant(&mut self, v: &ast::VarDecl, ty: Type, attr: &ast::Attribute) {
        let name = v.name.name.to_string();
        let Some(index_expr) = attr.args.first() else {
            self.error(attr.span, "`[[function_constant(i)]]` needs an index").help("write e.g. `[[function_constant(0)]]`");
            return;
        };
        let Some(index) = self.const_int(index_expr, "a function constant index") else { return };
        if !(0..=65535).contains(&index) {
            self.error(index_expr.span, format!("function constant index {index} is out of range (0 to 65535)"));
            return;
        }
        if v.init.is_some() {
            self.error(v.span, format!("function constant `{name}` cannot have an initializer: its value comes from the pipeline"))
                .help("remove `= ...`; give the value when running, e.g. `--constant NAME=VALUE`");
            return;
        }
        let Type::Scalar(scalar) = ty else {
            self.error(v.ty.span, format!("function constant `{name}` must be a scalar (bool, an integer, half or float)"));
            return;
        };
        if let Some(prev) = self.function_constants.iter().find(|c| c.index == index as u32) {
            let prev_name = prev.name.clone();
            self.error(attr.span, format!("function constant index {index} is already used by `{prev_name}`"));
            return;
        }
        let given =
            self.fc_given.iter().find(|(k, _)| *k == name).or_else(|| self.fc_given.iter().find(|(k, _)| k.parse::<i64>() == Ok(index)));
        let value = match given {
            Some((_, text)) => {
                let parsed = parse_value(text, scalar);
                if parsed.is_none() {
                    // Reported; the constant is still declared (no cascade).
                    let t = self.ty_name(&ty);
                    self.error(v.name.span, format!("function constant `{name}` is a `{t}`, but the value given for it is `{text}`"))
                        .help(format!("give a {t} value, e.g. `--constant {name}={}`", example(scalar)));
                }
                parsed
            }
            None => None,
        };
        let init = match value {
            Some(c) => mk(H::Const(c), ty.clone(), v.name.span),
            None => mk(H::Zero, ty.clone(), v.name.span),
        };
        let gid = hir::GlobalId(self.globals.len() as u32);
        self.globals.push(hir::Global { name: name.clone(), ty, init, span: v.name.span });
        self.function_constants.push(hir::FunctionConstant {
            name,
            index: index as u32,
            global: gid,
            defined: value.is_some(),
            optional: false,
        });
        self.add_decl(v.name.name.clone(), DeclKind::Global(gid), v.name.span);
    }

    /// `is_function_constant_defined(name)`: a compile-time bool. Naming a
    /// constant here makes it optional.
    pub(crate) fn is_function_constant_defined(&mut self, args: &[ast::Expr], span: Span) -> Option<hir::Expr> {
        let [arg] = args else {
            self.error(span, "`is_function_constant_defined` takes one function constant");
            return None;
        };
        let h = self.expr(arg)?;
        let found = match h.kind {
            H::Global(g) => self.function_constants.iter_mut().find(|c| c.global == g),
            _ => None,
        };
        let Some(fc) = found else {
            self.error(arg.span, "`is_function_constant_defined` needs the name of a function constant")
                .help("declare one as `constant bool name [[function_constant(0)]];`");
            return None;
        };
        fc.optional = true;
        let defined = fc.defined;
        Some(mk(H::Const(ConstValue::Bool(defined)), Type::BOOL, span))
    }

    /// Whether an expression names a function constant that has no value.
    pub(crate) fn mentions_undefined_function_constant(&mut self, e: &ast::Expr) -> bool {
        if self.function_constants.iter().all(|c| c.defined) {
            return false;
        }
        let trial = self.trial();
        let h = self.expr(e);
        drop(trial);
        h.is_some_and(|h| self.hir_mentions_undefined(&h))
    }

    fn hir_mentions_undefined(&self, h: &hir::Expr) -> bool {
        match &h.kind {
            H::Global(g) => self.function_constants.iter().any(|c| c.global == *g && !c.defined),
            H::Unary { operand: x, .. } | H::Convert(x) => self.hir_mentions_undefined(x),
            H::Binary { lhs, rhs, .. } | H::Logical { lhs, rhs, .. } => {
                self.hir_mentions_undefined(lhs) || self.hir_mentions_undefined(rhs)
            }
            H::Conditional { cond, then, els } => [cond, then, els].iter().any(|x| self.hir_mentions_undefined(x)),
            H::Call { args, .. } | H::Builtin { args, .. } => args.iter().any(|x| self.hir_mentions_undefined(x)),
            _ => false,
        }
    }

    /// Whether a kernel parameter's `[[function_constant(c)]]` condition
    /// holds (true when it has none).
    pub(crate) fn param_present(&mut self, p: &ast::Param) -> bool {
        let Some(a) = p.attrs.iter().find(|a| &*a.name.name == "function_constant") else { return true };
        let Some(e) = a.args.first() else {
            self.error(a.span, "`[[function_constant(c)]]` needs a boolean function constant");
            return true;
        };
        let Some(h) = self.expr(e) else { return true };
        match self.const_value(&h) {
            Some(v) => v.as_i64() != 0,
            None => {
                self.not_constant(e.span, "the condition of `[[function_constant(c)]]` must be a constant", &h);
                true
            }
        }
    }
}

/// Parse a function constant's value as text.
fn parse_value(text: &str, s: Scalar) -> Option<ConstValue> {
    let t = text.trim();
    match s {
        Scalar::Bool => match t {
            "true" | "1" => Some(ConstValue::Bool(true)),
            "false" | "0" => Some(ConstValue::Bool(false)),
            _ => None,
        },
        Scalar::Float | Scalar::Half | Scalar::BFloat => {
            t.trim_end_matches(['f', 'h']).parse::<f64>().ok().filter(|v| v.is_finite()).map(ConstValue::Float)
        }
        _ => {
            let (neg, digits) = match t.strip_prefix('-') {
                Some(d) => (true, d),
                None => (false, t),
            };
            let v = match digits.strip_prefix("0x").or_else(|| digits.strip_prefix("0X")) {
                Some(h) => i128::from_str_radix(h, 16).ok()?,
                None => digits.parse::<i128>().ok()?,
            };
            let v = if neg { -v } else { v };
            let bits = s.size() * 8;
            let fits = if s.is_signed() { v >= -(1i128 << (bits - 1)) && v < (1i128 << (bits - 1)) } else { v >= 0 && v < (1i128 << bits) };
            if !fits {
                return None;
            }
            Some(if s.is_signed() { ConstValue::Int(v as i64) } else { ConstValue::UInt(v as u64) })
        }
    }
}

fn example(s: Scalar) -> &'static str {
    match s {
        Scalar::Bool => "true",
        Scalar::Float | Scalar::Half | Scalar::BFloat => "1.5",
        _ => "4",
    }
}
