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

/// Clang's bit-counting builtins (`__builtin_ctz(radix)` in MLX's FFT):
/// `unsigned` (`l`/`ll`: `unsigned long`) argument, `int` result, as
/// Metal's `ctz`, `clz`, `popcount`.
pub(crate) fn clang_bit_builtin(name: &str) -> Option<(&'static str, crate::types::Scalar)> {
    use crate::types::Scalar;
    let (base, arg) = match name.strip_suffix("ll").or_else(|| name.strip_suffix('l')) {
        Some(b) => (b, Scalar::ULong),
        None => (name, Scalar::UInt),
    };
    let f = match base {
        "__builtin_ctz" => "ctz",
        "__builtin_clz" => "clz",
        "__builtin_popcount" => "popcount",
        _ => return None,
    };
    Some((f, arg))
}

impl Checker<'_, '_> {
    /// A call of one of `clang_bit_builtin`'s functions: folded when the
    /// argument is constant (it sizes `constexpr` values), else the library call.
    pub(crate) fn clang_builtin_call(&mut self, name: &str, args: Vec<hir::Expr>, span: Span, name_span: Span) -> Option<hir::Expr> {
        let (f, arg_ty) = clang_bit_builtin(name)?;
        let [x] = <[hir::Expr; 1]>::try_from(args).ok().or_else(|| {
            self.error(span, format!("`{name}` takes one argument"));
            None
        })?;
        let x = self.coerce(x, &Type::Scalar(arg_ty), "the argument")?;
        if let Some(v) = self.const_value(&x) {
            let bits = if arg_ty == crate::types::Scalar::ULong { 64 } else { 32 };
            let v = v.as_i64() as u64 & if bits == 64 { u64::MAX } else { u32::MAX as u64 };
            let r = match f {
                "ctz" => v.trailing_zeros().min(bits),
                "clz" => v.leading_zeros() - (64 - bits),
                _ => v.count_ones(),
            };
            return Some(mk(H::Const(ConstValue::Int(r as i64)), Type::INT, span));
        }
        let r = self.builtin_call(f, Some(Namespace::Metal), None, vec![x], span, name_span)?;
        Some(self.convert(r, Type::INT))
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
