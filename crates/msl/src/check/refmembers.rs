//! Reference members (`constant const uint &rank;` in a struct).
//!
//! A reference member is stored as a pointer-sized slot holding the address
//! of its referent, so the struct's layout (and every copy of it) carries
//! the binding. The checker binds the slot where the struct is made
//! (aggregate or brace initialization, a constructor's member initializer)
//! and turns every use of the member into a dereference of the slot, so
//! reading it reads the referent and assigning to it writes the referent.

use super::Checker;
use crate::ast::{self, AddressSpace};
use crate::hir::{self, ExprKind as H};
use crate::source::Span;
use crate::types::{StructId, Type};

impl<'a> Checker<'a, '_> {
    /// Whether field `idx` of `sid` is a reference member.
    pub(crate) fn is_ref_field(&self, sid: StructId, idx: usize) -> bool {
        self.structs[sid.0 as usize].ref_fields.contains(&(idx as u32))
    }

    /// Field `idx` of the struct `base`: for a reference member, the
    /// referent (the slot dereferenced).
    pub(crate) fn field_expr(&self, base: hir::Expr, sid: StructId, idx: usize, span: Span) -> hir::Expr {
        let fty = self.tables.struct_def(sid).fields[idx].ty.clone();
        let slot = hir::Expr { kind: H::Field { base: Box::new(base), field: idx as u32 }, ty: fty.clone(), span };
        match fty {
            Type::Pointer { pointee, .. } if self.is_ref_field(sid, idx) => {
                hir::Expr { kind: H::Deref(Box::new(slot)), ty: *pointee, span }
            }
            _ => slot,
        }
    }

    /// The value stored in reference member `idx` of `sid` when it is bound
    /// to `e`: `e`'s address, after checking that `e` is a variable of the
    /// referenced type in the member's address space.
    pub(crate) fn bind_ref_field(&mut self, sid: StructId, idx: usize, e: &ast::Expr) -> Option<hir::Expr> {
        let Type::Pointer { pointee, space, is_const } = self.tables.struct_def(sid).fields[idx].ty.clone() else {
            return None;
        };
        if let ast::ExprKind::InitList(_) = e.kind {
            let name = self.tables.struct_def(sid).fields[idx].name.clone();
            self.error(e.span, format!("the reference member `{name}` must be bound to a variable, not to a braced list"));
            return None;
        }
        self.bind_reference(e, &pointee, space, is_const)
    }

    /// `e`'s address for a `space T&` (`const` when `is_const`) bound to it.
    pub(crate) fn bind_reference(&mut self, e: &ast::Expr, referee: &Type, space: AddressSpace, is_const: bool) -> Option<hir::Expr> {
        let h = self.expr(e)?;
        let h = if h.is_place() { self.upcast(h, referee).unwrap_or_else(|h| h) } else { h };
        if !h.is_place() || h.ty != *referee {
            let n = self.ty_name(referee);
            self.error(e.span, format!("a `{n}&` reference must refer to a variable of type `{n}`"));
            return None;
        }
        let (pspace, pconst) = self.place_info(&h);
        if pspace != space {
            self.error(
                e.span,
                format!("this reference is to `{}` memory but the variable is in `{}` memory", space.keyword(), pspace.keyword()),
            );
            return None;
        }
        // `constant` memory is read-only: a `constant T&` is const whether
        // or not it says so.
        let is_const = is_const || space == AddressSpace::Constant;
        if pconst && !is_const {
            self.error(e.span, "a non-const reference cannot refer to a const variable").help("declare the reference `const`");
            return None;
        }
        let ty = Type::Pointer { pointee: Box::new(referee.clone()), space, is_const };
        Some(hir::Expr { kind: H::AddrOf(Box::new(h)), ty, span: e.span })
    }

    /// Reports a reference member of `sid` at or after field `from` left
    /// unbound where an `S` is made with only `from` values.
    pub(crate) fn check_refs_bound(&mut self, sid: StructId, from: usize, span: Span) -> Option<()> {
        let unbound = self.structs[sid.0 as usize].ref_fields.iter().copied().find(|&i| i as usize >= from)?;
        let def = self.tables.struct_def(sid);
        let (sname, fname) = (def.name.clone(), def.fields[unbound as usize].name.clone());
        self.error(span, format!("`{sname}` has a reference member `{fname}`, which must be bound where the `{sname}` is made"))
            .help(format!("give `{fname}` a variable in the braces, e.g. `{sname}{{…, x}}`"));
        Some(())
    }

    /// Whether a value of `ty` holds a reference member (which must be
    /// bound where the value is made).
    pub(crate) fn has_ref_member(&self, ty: &Type) -> Option<StructId> {
        match ty {
            Type::Struct(sid) if !self.structs[sid.0 as usize].ref_fields.is_empty() => Some(*sid),
            Type::Array { elem, .. } => self.has_ref_member(elem),
            _ => None,
        }
    }
}
