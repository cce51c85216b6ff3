//! Shader logging (MSL 3.2, `<metal_logging>`): `os_log_default.log(…)`,
//! program-scope `constant os_log name("subsystem", "category");` objects
//! and their `log`, `log_debug`, `log_info`, `log_error`, `log_fault`
//! members with printf-style formats.
//!
//! A call becomes the builtin `__os_log` whose first argument is the index
//! of its format in `Program::log_formats`; the format is checked against
//! the arguments here so the executor only formats.

use super::Checker;
use crate::ast::{self, ExprKind as A, TypeExprKind};
use crate::hir::{self, BuiltinId, ConstValue, ExprKind as H};
use crate::source::Span;
use crate::types::{Scalar, Type};

/// The object every kernel can log to without declaring one.
pub const DEFAULT_LOG: &str = "os_log_default";
const LEVELS: &[&str] = &["log", "log_debug", "log_info", "log_error", "log_fault"];

/// One conversion of a format (`%5.2f` → 'f').
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Conversion {
    Signed,
    Unsigned,
    Float,
    Char,
    Pointer,
}

/// The conversions of a printf-style format, or what is wrong with it.
pub fn conversions(format: &str) -> Result<Vec<Conversion>, String> {
    let mut out = Vec::new();
    let b = format.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'%' {
            i += 1;
            continue;
        }
        i += 1;
        if b.get(i) == Some(&b'%') {
            i += 1;
            continue;
        }
        while i < b.len() && b"-+ #0".contains(&b[i]) {
            i += 1;
        }
        while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'.') {
            i += 1;
        }
        if b.get(i) == Some(&b'*') {
            return Err("`*` widths and precisions are not supported: write the number into the format".into());
        }
        while i < b.len() && b"hlqjzt".contains(&b[i]) {
            i += 1;
        }
        let Some(&c) = b.get(i) else { return Err("the format ends in the middle of a `%` conversion".into()) };
        out.push(match c {
            b'd' | b'i' => Conversion::Signed,
            b'u' | b'o' | b'x' | b'X' => Conversion::Unsigned,
            b'f' | b'F' | b'e' | b'E' | b'g' | b'G' | b'a' | b'A' => Conversion::Float,
            b'c' => Conversion::Char,
            b'p' => Conversion::Pointer,
            b's' => return Err("`%s` is not supported by the simulator: kernels have no strings to print".into()),
            other => return Err(format!("`%{}` is not a conversion printf knows", other as char)),
        });
        i += 1;
    }
    Ok(out)
}

/// A declared `constant os_log name("subsystem", "category");`.
#[derive(Clone, Debug)]
pub struct Logger {
    pub name: String,
    pub subsystem: String,
    pub category: String,
}

impl<'a> Checker<'a, '_> {
    /// `constant os_log name("subsystem", "category");`: remembered as a
    /// logger name (it has no value the program can use otherwise).
    /// Returns false when `v` is not an `os_log` declaration.
    pub(crate) fn os_log_global(&mut self, v: &'a ast::VarDecl) -> bool {
        let TypeExprKind::Named { path, .. } = &v.ty.kind else { return false };
        let name = path.plain_name();
        if name != "os_log" && name != "metal::os_log" {
            return false;
        }
        let strings: Vec<String> = match &v.init {
            Some(ast::Init::Paren(args, _)) | Some(ast::Init::Brace(args, _)) => args
                .iter()
                .filter_map(|a| match &a.kind {
                    A::StrLit(s) => Some(s.to_string()),
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        };
        let (subsystem, category) = match <[String; 2]>::try_from(strings) {
            Ok([s, c]) => (s, c),
            Err(_) => {
                self.error(v.span, format!("`os_log {}` needs a subsystem and a category", v.name.name))
                    .help(format!("write `constant os_log {}(\"com.example.app\", \"kernels\");`", v.name.name));
                (String::new(), String::new())
            }
        };
        self.loggers.push(Logger { name: v.name.name.to_string(), subsystem, category });
        true
    }

    /// `logger.log(format, args…)` and the other levels; `None` when the
    /// call is not a logging call.
    pub(crate) fn log_call(&mut self, callee: &ast::Expr, args: &[ast::Expr], span: Span) -> Option<Option<hir::Expr>> {
        let A::Member { base, name, arrow: false, targs: None } = &callee.kind else { return None };
        let A::Name(path) = &base.kind else { return None };
        let logger = path.plain_name();
        let logger = logger.strip_prefix("metal::").unwrap_or(&logger).to_string();
        let origin = match self.loggers.iter().find(|l| l.name == logger) {
            Some(l) => Some((l.subsystem.clone(), l.category.clone())),
            None if logger == DEFAULT_LOG => None,
            None => return None,
        };
        let Some(&level) = LEVELS.iter().find(|l| **l == &*name.name) else {
            self.error(name.span, format!("`os_log` has no member `{}`", name.name))
                .help("use `log`, `log_debug`, `log_info`, `log_error` or `log_fault`");
            return Some(None);
        };
        let Some(A::StrLit(format)) = args.first().map(|a| &a.kind) else {
            self.error(span, format!("`{logger}.{level}` needs a format string literal first, e.g. `{logger}.{level}(\"x = %d\", x)`"));
            return Some(None);
        };
        let convs = match conversions(format) {
            Ok(c) => c,
            Err(e) => {
                self.error(args[0].span, format!("bad log format: {e}"));
                return Some(None);
            }
        };
        let rest = &args[1..];
        if convs.len() != rest.len() {
            self.error(span, format!("the format has {} conversion(s) but {} value(s) follow it", convs.len(), rest.len()))
                .help("give one value per `%` conversion (write `%%` for a percent sign)");
            return Some(None);
        }
        let mut hargs = vec![mk_uint(self.log_formats.len() as i64, args[0].span)];
        let mut ok = true;
        for (a, conv) in rest.iter().zip(&convs) {
            let Some(h) = self.expr(a) else {
                ok = false;
                continue;
            };
            let h = self.decay(h);
            let fits = match (&h.ty, conv) {
                (Type::Scalar(s), Conversion::Float) => s.is_float(),
                (Type::Scalar(s), Conversion::Signed | Conversion::Unsigned | Conversion::Char) => !s.is_float(),
                (Type::Enum(_) | Type::BuiltinEnum(_), Conversion::Signed | Conversion::Unsigned) => true,
                (Type::Pointer { .. }, Conversion::Pointer) => true,
                _ => false,
            };
            if !fits {
                let what = match conv {
                    Conversion::Float => "a floating-point value (`%f`, `%e`, `%g`)",
                    Conversion::Signed | Conversion::Unsigned => "an integer (`%d`, `%u`, `%x`)",
                    Conversion::Char => "a char (`%c`)",
                    Conversion::Pointer => "a pointer (`%p`)",
                };
                let shown = self.ty_name(&h.ty);
                let mut d = self.error(a.span, format!("this `{shown}` does not match its conversion, which prints {what}"));
                if matches!(h.ty, Type::Vector { .. }) {
                    d = d.help("log the components one by one (`v.x, v.y`)");
                }
                drop(d);
                ok = false;
                continue;
            }
            hargs.push(h);
        }
        if !ok {
            return Some(None);
        }
        self.log_formats.push(hir::LogFormat { text: format.to_string(), logger, origin, level, span: args[0].span });
        let param_types = hargs.iter().map(|h| h.ty.clone()).collect();
        Some(Some(hir::Expr { kind: H::Builtin { id: BuiltinId::OsLog, fast: false, args: hargs, param_types }, ty: Type::Void, span }))
    }
}

fn mk_uint(v: i64, span: Span) -> hir::Expr {
    hir::Expr { kind: H::Const(ConstValue::Int(v)), ty: Type::Scalar(Scalar::UInt), span }
}
