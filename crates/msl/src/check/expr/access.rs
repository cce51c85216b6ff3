//! Indexing, member access and swizzles.

use super::{bx, mk};
use crate::ast;
use crate::check::Checker;
use crate::diag::suggest;
use crate::hir::{self, ExprKind as H};
use crate::source::Span;
use crate::types::{Scalar, Type};

impl<'a> Checker<'a, '_> {
    pub(super) fn index(&mut self, b: hir::Expr, i: hir::Expr, span: Span) -> Option<hir::Expr> {
        let index_ok = matches!(&i.ty, Type::Scalar(s) if s.is_integer() || *s == Scalar::Bool)
            || matches!(&i.ty, Type::Enum(id) if !self.tables.enum_def(*id).scoped);
        if !index_ok {
            // `ptr[i]` with the operands swapped (`i[ptr]`) is legal C but nobody writes it.
            let n = self.ty_name(&i.ty);
            self.error(i.span, format!("an index must be an integer, not `{n}`")).help("convert it, e.g. `uint(x)`");
            return None;
        }
        match b.ty.clone() {
            Type::Array { elem, .. } => Some(mk(H::Index { base: bx(b), index: bx(i) }, *elem, span)),
            Type::Pointer { pointee, .. } => {
                let pty = b.ty.clone();
                let p = mk(H::PtrOffset { ptr: bx(b), offset: bx(i), negate: false }, pty, span);
                Some(mk(H::Deref(bx(p)), *pointee, span))
            }
            Type::Vector { elem, .. } => Some(mk(H::Index { base: bx(b), index: bx(i) }, Type::Scalar(elem), span)),
            Type::Matrix { elem, rows, .. } => Some(mk(H::Index { base: bx(b), index: bx(i) }, Type::vector(elem, rows), span)),
            t => {
                let n = self.ty_name(&t);
                self.error(b.span, format!("cannot index a value of type `{n}`")).label("not an array, pointer or vector");
                None
            }
        }
    }

    pub(crate) fn member(&mut self, b: hir::Expr, name: &ast::Ident, arrow: bool, span: Span) -> Option<hir::Expr> {
        let b = if arrow {
            match b.ty.clone() {
                Type::Pointer { pointee, .. } => {
                    let s = b.span;
                    mk(H::Deref(bx(b)), *pointee, s)
                }
                t => {
                    let n = self.ty_name(&t);
                    self.error(span, format!("`->` needs a pointer, but this is a `{n}`")).help("use `.` for a value");
                    return None;
                }
            }
        } else {
            if b.ty.is_pointer() {
                self.error(span, "this is a pointer: use `->` to reach its members").help(format!("write `->{}`", name.name));
                return None;
            }
            b
        };
        match b.ty.clone() {
            Type::Struct(sid) => {
                let def = self.tables.struct_def(sid);
                if let Some(idx) = def.fields.iter().position(|f| *f.name == *name.name) {
                    return Some(self.field_expr(b, sid, idx, span));
                }
                if let Some((_, _, h)) = self.structs[sid.0 as usize].statics.iter().find(|(n, _, _)| **n == *name.name) {
                    let mut h = h.clone();
                    h.span = span;
                    return Some(h);
                }
                if let Some(found) = self.member_in_bases(b.clone(), sid, name, span) {
                    return found;
                }
                let def = self.tables.struct_def(sid);
                let sname = def.name.clone();
                let mut names = self.visible_field_names(sid);
                names.extend(self.structs[sid.0 as usize].methods.iter().map(|(f, _)| f.name.last().ident.name.to_string()));
                let has_method = self.structs[sid.0 as usize].methods.iter().any(|(f, _)| *f.name.last().ident.name == *name.name);
                let mut d = if has_method {
                    self.error(name.span, format!("`{}` is a member function of `{sname}`: call it with `{}()`", name.name, name.name))
                } else {
                    self.error(name.span, format!("no member named `{}` in `{sname}`", name.name)).label("unknown member")
                };
                if !has_method {
                    if let Some(s) = suggest(&name.name, names.iter().map(|s| s.as_str())) {
                        d = d.help(format!("did you mean `{s}`?"));
                    } else if !names.is_empty() {
                        d = d.note(format!("`{sname}` has: {}", names.join(", ")));
                    }
                }
                drop(d);
                None
            }
            Type::Vector { elem, len, .. } => {
                let comps = self.swizzle(&name.name, len, name.span)?;
                let ty = Type::vector(elem, comps.len() as u8);
                Some(mk(H::Swizzle { base: bx(b), comps }, ty, span))
            }
            Type::Scalar(_) => {
                let n = self.ty_name(&b.ty);
                self.error(name.span, format!("`{n}` is a scalar and has no member `{}`", name.name));
                None
            }
            t => {
                let n = self.ty_name(&t);
                self.error(name.span, format!("`{n}` has no member `{}`", name.name));
                None
            }
        }
    }

    /// Parse a swizzle like `xzy` / `rgba` for a vector of `len` components.
    fn swizzle(&mut self, s: &str, len: u8, span: Span) -> Option<Vec<u8>> {
        const XYZW: &str = "xyzw";
        const RGBA: &str = "rgba";
        if s.is_empty() || s.len() > 4 {
            self.error(span, format!("invalid vector component selection `.{s}`"))
                .note("a swizzle names 1 to 4 of the components x, y, z, w (or r, g, b, a)");
            return None;
        }
        let mut comps = Vec::with_capacity(s.len());
        let mut set: Option<&str> = None;
        for ch in s.chars() {
            let (which, idx) = match (XYZW.find(ch), RGBA.find(ch)) {
                (Some(i), _) => (XYZW, i),
                (_, Some(i)) => (RGBA, i),
                _ => {
                    self.error(span, format!("`{ch}` is not a vector component in `.{s}`")).help("components are x, y, z, w or r, g, b, a");
                    return None;
                }
            };
            if let Some(prev) = set {
                if prev != which {
                    self.error(span, format!("the swizzle `.{s}` mixes the `xyzw` and `rgba` component names"))
                        .help("use one set of names, e.g. `.xy` or `.rg`");
                    return None;
                }
            }
            set = Some(which);
            if idx as u8 >= len {
                self.error(span, format!("component `{ch}` is out of range for a vector of {len} components")).help(format!(
                    "a {len}-component vector has {}",
                    &which[..len as usize].chars().map(|c| format!("`{c}`")).collect::<Vec<_>>().join(", ")
                ));
                return None;
            }
            comps.push(idx as u8);
        }
        Some(comps)
    }
}
