//! Apple's compiler intrinsics `__metal_NAME(...)`, which Metal's own headers
//! use to implement the standard library and which libraries call directly
//! (MLX's `bf16_math.h` builds its `bfloat` overloads from them).
//!
//! Each is the standard-library function `NAME` with the same arguments; the
//! math ones take one more, trailing `bool`: `true` asks for the fast-math
//! variant (`__METAL_FAST_MATH__`), `false` for the precise one
//! (`__METAL_PRECISE_MATH__`); out-parameters are passed by address.
//! `__metal_get_simdgroup_size(T())` is the
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
        // Out-parameters are passed by address (`__metal_frexp(x, &e)`)
        // where the library takes a reference (`frexp(x, e)`).
        if builtins::resolve(name, ns, &self.arg_infos(&args)).is_err() {
            let derefed: Vec<hir::Expr> = args
                .iter()
                .map(|a| match (&a.kind, &a.ty) {
                    (H::AddrOf(place), _) => (**place).clone(),
                    (_, Type::Pointer { pointee, .. }) => mk(H::Deref(Box::new(a.clone())), (**pointee).clone(), a.span),
                    _ => a.clone(),
                })
                .collect();
            if builtins::resolve(name, ns, &self.arg_infos(&derefed)).is_ok() {
                args = derefed;
            }
        }
        // The bitwise SIMD-group reductions on floating-point data work on
        // the bits (an assumption: Apple documents no `simd_xor(float)`;
        // MLX's `bf16_math.h` defines one this way and never calls it).
        if matches!(name, "simd_and" | "simd_or" | "simd_xor") && args.len() == 1 {
            if let Some(bits) =
                args[0].ty.elem_scalar().filter(|s| s.is_float()).and_then(|s| uint_of_size(self.tables.size_of(&Type::Scalar(s))))
            {
                let fty = args[0].ty.clone();
                let ity = match &fty {
                    Type::Vector { len, packed, .. } => Type::Vector { elem: bits, len: *len, packed: *packed },
                    _ => Type::Scalar(bits),
                };
                let x = args.pop()?;
                let cast = mk(H::BitCast(Box::new(x)), ity, span);
                let r = self.builtin_call(name, ns, None, vec![cast], span, name_span)?;
                return Some(mk(H::BitCast(Box::new(r)), fty, span));
            }
        }
        self.builtin_call(name, ns, None, args, span, name_span)
    }
}

/// The unsigned integer type of `bytes` bytes.
fn uint_of_size(bytes: u64) -> Option<crate::types::Scalar> {
    use crate::types::Scalar;
    match bytes {
        2 => Some(Scalar::UShort),
        4 => Some(Scalar::UInt),
        _ => None,
    }
}
