//! Apple's compiler intrinsics `__metal_NAME(...)`, which Metal's own headers
//! use to implement the standard library and which libraries call directly
//! (MLX's `bf16_math.h` builds its `bfloat` overloads from them).
//!
//! Each is the standard-library function `NAME` with the same arguments; the
//! math ones take one more, trailing `bool`: `true` asks for the fast-math
//! variant (`__METAL_FAST_MATH__`), `false` for the precise one
//! (`__METAL_PRECISE_MATH__`). `__metal_get_simdgroup_size(T())` is the
//! SIMD-group width, which is 32 on this GPU as on every Apple GPU.

use super::expr::mk;
use super::Checker;
use crate::builtins::{self, Namespace};
use crate::hir::{self, ConstValue, ExprKind as H};
use crate::source::Span;
use crate::types::Type;

/// The prefix of the intrinsics' names.
pub(crate) const PREFIX: &str = "__metal_";

impl Checker<'_, '_> {
    /// A call of `__metal_NAME` (`name` without the prefix), or `None` with
    /// an error when there is no such intrinsic.
    pub(crate) fn metal_intrinsic(&mut self, name: &str, mut args: Vec<hir::Expr>, span: Span, name_span: Span) -> Option<hir::Expr> {
        if name == "get_simdgroup_size" {
            let ty = args.first().map(|a| a.ty.clone()).filter(|t| t.elem_scalar().is_some()).unwrap_or(Type::UINT);
            return Some(mk(H::Const(ConstValue::UInt(32)), ty, span));
        }
        let name = if name == "fabs" { "abs" } else { name };
        if builtins::lookup(name).is_none() {
            self.error(name_span, format!("`{PREFIX}{name}` is a compiler intrinsic this simulator does not provide"))
                .note("Apple's headers implement the standard library with `__metal_*` intrinsics; the simulator knows those that map onto a standard-library function")
                .help(format!("call the standard-library function instead, e.g. `metal::{name}(...)`"));
            return None;
        }
        // A trailing constant `bool` selects fast or precise math.
        let mut ns = Some(Namespace::Metal);
        if args.len() >= 2 && args.last().is_some_and(|a| a.ty == Type::BOOL) {
            if let Some(ConstValue::Bool(fast)) = args.last().and_then(|a| self.const_value(a)) {
                let fits_without = builtins::resolve(name, ns, &self.arg_infos(&args[..args.len() - 1])).is_ok();
                if fits_without {
                    args.pop();
                    ns = Some(if fast { Namespace::Fast } else { Namespace::Precise });
                    if builtins::resolve(name, ns, &self.arg_infos(&args)).is_err() {
                        ns = Some(Namespace::Metal);
                    }
                }
            }
        }
        self.builtin_call(name, ns, None, args, span, name_span)
    }
}
