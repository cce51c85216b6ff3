//! `numeric_limits<T>`'s static data members (`digits`, `radix`,
//! `is_signed`, …): compile-time constants of the scalar type. Its member
//! functions (`max()`, `epsilon()`, …) are calls, handled in `calls.rs`.

use super::Checker;
use crate::ast;
use crate::hir::{self, ConstValue};
use crate::source::Span;
use crate::types::{Scalar, Type};

/// Significand bits (with the implicit one), like C++'s `digits` for the
/// floating types; value bits for the integers.
fn digits(s: Scalar) -> i64 {
    match s {
        Scalar::Float => 24,
        Scalar::Half => 11,
        Scalar::BFloat => 8,
        Scalar::Bool => 1,
        s => s.size() as i64 * 8 - i64::from(s.is_signed()),
    }
}

/// Decimal digits that survive a round trip through the type (C++'s
/// `digits10`): floor((digits - 1) * log10(2)) for floats, floor(digits *
/// log10(2)) for integers.
fn digits10(s: Scalar) -> i64 {
    let bits = if s.is_float() { digits(s) - 1 } else { digits(s) };
    (bits as f64 * std::f64::consts::LOG10_2).floor() as i64
}

/// Exponent range of a floating type: (min_exponent, max_exponent,
/// min_exponent10, max_exponent10).
fn exponents(s: Scalar) -> (i64, i64, i64, i64) {
    match s {
        Scalar::Half => (-13, 16, -4, 4),
        Scalar::Float | Scalar::BFloat => (-125, 128, -37, 38),
        _ => (0, 0, 0, 0),
    }
}

impl Checker<'_, '_> {
    /// `numeric_limits<T>::member` written without a call.
    pub(crate) fn numeric_limits_constant(&mut self, targs: &[ast::TemplateArg], member: &ast::Ident, span: Span) -> Option<hir::Expr> {
        let t = self.template_args(targs)?;
        let [super::TArg::Type(Type::Scalar(s) | Type::Vector { elem: s, .. })] = t.as_slice() else {
            self.error(span, "`numeric_limits<T>` needs one scalar type");
            return None;
        };
        let s = *s;
        let (min_e, max_e, min_e10, max_e10) = exponents(s);
        let int = |v: i64| Some(ConstValue::Int(v));
        let flag = |b: bool| Some(ConstValue::Bool(b));
        let v = match &*member.name {
            "digits" => int(digits(s)),
            "digits10" => int(digits10(s)),
            // Decimal digits needed to tell every value apart (floats only).
            "max_digits10" => int(if s.is_float() { (digits(s) as f64 * std::f64::consts::LOG10_2).ceil() as i64 + 1 } else { 0 }),
            "radix" => int(2),
            "min_exponent" => int(min_e),
            "max_exponent" => int(max_e),
            "min_exponent10" => int(min_e10),
            "max_exponent10" => int(max_e10),
            "is_specialized" => flag(true),
            "is_signed" => flag(s.is_float() || s.is_signed()),
            "is_integer" => flag(!s.is_float()),
            "is_exact" => flag(!s.is_float()),
            "has_infinity" | "has_quiet_NaN" | "has_signaling_NaN" | "is_iec559" => flag(s.is_float()),
            "is_bounded" => flag(true),
            "is_modulo" => flag(!s.is_float() && !s.is_signed() && s != Scalar::Bool),
            _ => None,
        };
        let Some(v) = v else {
            let n = &member.name;
            let e = self.error(member.span, format!("`numeric_limits<{}>` has no constant `{n}` the simulator knows", s.name()));
            if matches!(&**n, "max" | "min" | "lowest" | "epsilon" | "infinity" | "quiet_NaN" | "signaling_NaN" | "denorm_min") {
                e.help(format!("`{n}` is a function: write `numeric_limits<{}>::{n}()`", s.name()));
            } else {
                e.help("use digits, digits10, max_digits10, radix, min_exponent, max_exponent, is_signed, is_integer, is_exact, has_infinity or has_quiet_NaN");
            }
            return None;
        };
        let ty = if matches!(v, ConstValue::Bool(_)) { Type::BOOL } else { Type::INT };
        Some(hir::Expr { kind: hir::ExprKind::Const(v), ty, span })
    }
}
