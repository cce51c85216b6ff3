//! Construction: `T(args)`, vector constructors, initializer lists
//! (with designators and narrowing checks) and struct constructors.

use super::{bx, mk};
use crate::ast::{self, AddressSpace, CastKind, ExprKind as A};
use crate::check::Checker;
use crate::hir::{self, BuiltinId, ConstValue, ExprKind as H};
use crate::source::Span;
use crate::types::{Scalar, Type};

impl<'a> Checker<'a, '_> {
    /// `T(args)`: conversion, vector/matrix constructor, struct constructor.
    pub(crate) fn construct(&mut self, ty: &Type, args: &[ast::Expr], span: Span, _functional: bool) -> Option<hir::Expr> {
        if args.is_empty() {
            if let Type::Struct(sid) = ty {
                if self.has_constructors(*sid) && !self.structs[sid.0 as usize].defaulted_ctor {
                    return self.ctor_call(*sid, Vec::new(), span);
                }
            }
            return Some(self.value_init(ty, span));
        }
        match ty {
            Type::Vector { elem, len, .. } => {
                let mut parts = Vec::new();
                for a in args {
                    parts.push(self.expr(a)?);
                }
                self.vector_construct(*elem, *len, ty, parts, span)
            }
            // `simdgroup_matrix<T, 8, 8>(d)`: a diagonal matrix of d.
            Type::SimdMatrix { elem, .. } if args.len() == 1 => {
                let x = self.expr(&args[0])?;
                if !x.ty.is_scalar() {
                    return self.explicit_convert(CastKind::Functional, x, ty, span);
                }
                let x = self.coerce(x, &Type::Scalar(*elem), "the diagonal value")?;
                let param_types = vec![Type::Scalar(*elem)];
                Some(mk(H::Builtin { id: BuiltinId::SimdgroupDiagonal, fast: false, args: vec![x], param_types }, ty.clone(), span))
            }
            Type::Matrix { elem, cols, rows } => {
                let mut parts = Vec::new();
                for a in args {
                    parts.push(self.expr(a)?);
                }
                let col_ty = Type::vector(*elem, *rows);
                if parts.len() == *cols as usize && parts.iter().all(|p| p.ty.vector_len() == Some(*rows) && p.ty.is_vector()) {
                    let parts = parts.into_iter().map(|p| self.convert(p, col_ty.clone())).collect();
                    return Some(mk(H::Construct(parts), ty.clone(), span));
                }
                if parts.len() == (*cols as usize) * (*rows as usize) && parts.iter().all(|p| p.ty.is_scalar()) {
                    let parts = parts.into_iter().map(|p| self.convert(p, Type::Scalar(*elem))).collect();
                    return Some(mk(H::Construct(parts), ty.clone(), span));
                }
                if parts.len() == 1 && parts[0].ty.is_scalar() {
                    return self.matrix_diagonal(parts.pop()?, ty, span);
                }
                if parts.len() == 1 && parts[0].ty == *ty {
                    return parts.pop();
                }
                if parts.len() == 1 && matches!(parts[0].ty, Type::Matrix { cols: c, rows: r, .. } if c == *cols && r == *rows) {
                    return self.matrix_convert(parts.pop()?, ty, span);
                }
                self.error(span, format!("cannot build a `{}` from these values", self.ty_name(ty))).help(format!(
                    "give {cols} column vectors of {rows} components, {} scalars, or one scalar for the diagonal",
                    cols * rows
                ));
                None
            }
            Type::Struct(sid) if self.has_constructors(*sid) => {
                let mut hs = Vec::new();
                for a in args {
                    hs.push(self.expr(a)?);
                }
                self.ctor_call(*sid, hs, span)
            }
            _ => {
                if args.len() != 1 {
                    let n = self.ty_name(ty);
                    if let Type::Struct(_) = ty {
                        self.error(span, format!("`{n}` has no constructor taking {} arguments", args.len()))
                            .help(format!("initialize it with braces: `{n}{{...}}`"));
                    } else {
                        self.error(span, format!("`{n}(...)` takes one value"));
                    }
                    return None;
                }
                let h = self.expr(&args[0])?;
                self.explicit_convert(CastKind::Functional, h, ty, span)
            }
        }
    }

    fn vector_construct(&mut self, elem: Scalar, len: u8, ty: &Type, parts: Vec<hir::Expr>, span: Span) -> Option<hir::Expr> {
        if parts.len() == 1 {
            let p = parts.into_iter().next()?;
            return match &p.ty {
                Type::Scalar(_) => Some(hir::Expr { span, ..self.convert(p, ty.clone()) }),
                Type::Vector { len: l, .. } if *l == len => Some(hir::Expr { span, ..self.convert(p, ty.clone()) }),
                t => {
                    let (tn, n) = (self.ty_name(t), self.ty_name(ty));
                    let mut d = self.error(span, format!("cannot build a `{n}` from a `{tn}`"));
                    if let Type::Vector { len: l, .. } = t {
                        if *l > len {
                            d = d.help(format!("select {len} components with a swizzle, e.g. `.{}`", &"xyzw"[..len as usize]));
                        } else {
                            d = d.help(format!("add the missing components: `{n}(v, ...)`"));
                        }
                    }
                    drop(d);
                    None
                }
            };
        }
        let mut count = 0u32;
        let mut out = Vec::with_capacity(parts.len());
        for p in parts {
            match p.ty.clone() {
                Type::Scalar(_) => {
                    count += 1;
                    out.push(self.convert(p, Type::Scalar(elem)));
                }
                Type::Vector { len: l, .. } => {
                    count += l as u32;
                    out.push(self.convert(p, Type::vector(elem, l)));
                }
                t => {
                    let n = self.ty_name(&t);
                    self.error(p.span, format!("a `{n}` cannot be a component of a vector"));
                    return None;
                }
            }
        }
        if count != len as u32 {
            let n = self.ty_name(ty);
            self.error(span, format!("`{n}` needs {len} components, but {count} were given"));
            return None;
        }
        Some(mk(H::Construct(out), ty.clone(), span))
    }

    /// Braced initialization of `ty` (with C++'s narrowing rules).
    pub(crate) fn list_init(&mut self, items: &[ast::Expr], ty: &Type, span: Span) -> Option<hir::Expr> {
        let items = self.expand_exprs(items)?;
        let items = &*items;
        if let Some(d) = items.iter().find(|i| matches!(i.kind, A::Designated { .. })) {
            return match (ty, &d.kind) {
                (Type::Array { elem, len }, _) => self.designated_array(items, elem, *len, ty, span),
                (Type::Struct(_), A::Designated { designator: ast::Designator::Field(_), .. }) => {
                    self.error(d.span, "designated initializers of struct fields (`.name = v`) are not supported by this simulator yet")
                        .help("list the values in field order instead");
                    None
                }
                _ => {
                    let n = self.ty_name(ty);
                    self.error(d.span, format!("a `{n}` cannot be initialized with a designator; `[i] = v` initializes array elements"));
                    None
                }
            };
        }
        match ty {
            Type::Array { elem, len } => {
                if items.len() > *len as usize {
                    self.error(span, format!("too many initializers: the array has {len} elements but {} values were given", items.len()));
                    return None;
                }
                let mut out = Vec::with_capacity(items.len());
                for it in items {
                    out.push(self.list_item(it, elem)?);
                }
                // Elements without a value are value-initialized: S's
                // default member initializers apply to each.
                if out.len() < *len as usize && self.needs_member_init(elem) {
                    let rest = Box::new(self.value_init(elem, span));
                    return Some(mk(H::ArrayInit { items: out, rest }, ty.clone(), span));
                }
                Some(mk(H::Aggregate(out), ty.clone(), span))
            }
            Type::Struct(sid) if self.has_constructors(*sid) => {
                let mut hs = Vec::new();
                for it in items {
                    hs.push(self.expr(it)?);
                }
                self.ctor_call(*sid, hs, span)
            }
            Type::Struct(sid) => {
                let def = self.tables.struct_def(*sid);
                // Braces initialize a union's first member.
                let n = if def.is_union { def.fields.len().min(1) } else { def.fields.len() };
                let fields: Vec<Type> = def.fields[..n].iter().map(|f| f.ty.clone()).collect();
                // `S s = {other_s}` copies.
                if items.len() == 1 && !matches!(items[0].kind, A::InitList(_)) {
                    let h = self.expr(&items[0])?;
                    if h.ty == *ty {
                        return Some(h);
                    }
                    if self.is_ref_field(*sid, 0) {
                        return self.struct_list_rest(ty, &fields, Vec::new(), items, span);
                    }
                    // Otherwise it is the first field's value, converted
                    // like any other (an array decays for a pointer field).
                    let h = match fields.first() {
                        Some(f) => {
                            if h.ty.is_scalar() {
                                self.check_narrowing(&h, f);
                            }
                            self.coerce(h, f, "the initializer")?
                        }
                        None => h,
                    };
                    return self.struct_list_rest(ty, &fields, vec![h], &items[1..], span);
                }
                self.struct_list_rest(ty, &fields, Vec::new(), items, span)
            }
            Type::Vector { elem, len, .. } => {
                let mut parts = Vec::new();
                for it in items {
                    let h = self.expr(it)?;
                    if h.ty.is_scalar() {
                        self.check_narrowing(&h, &Type::Scalar(*elem));
                    }
                    parts.push(h);
                }
                if let [h] = &parts[..] {
                    if h.ty.is_vector() {
                        return self.coerce(parts.remove(0), ty, "the initializer");
                    }
                    if !h.ty.is_scalar() {
                        return Some(self.convert(parts.remove(0), ty.clone()));
                    }
                }
                // Braces may leave out trailing components, which are zero
                // (`uint4 k = {a, b, c};`, `float4 v = {1}` is (1, 0, 0, 0)),
                // as for any aggregate; `float4(1)` is the one that splats.
                let given: u32 = parts.iter().map(|p| if let Type::Vector { len, .. } = p.ty { len as u32 } else { 1 }).sum();
                for _ in given..*len as u32 {
                    parts.push(mk(H::Zero, Type::Scalar(*elem), span));
                }
                self.vector_construct(*elem, *len, ty, parts, span)
            }
            _ => match items {
                [] => Some(mk(H::Zero, ty.clone(), span)),
                [one] => {
                    let h = self.expr(one)?;
                    self.check_narrowing(&h, ty);
                    self.coerce(h, ty, "the initializer")
                }
                _ => {
                    let n = self.ty_name(ty);
                    self.error(span, format!("a `{n}` is initialized with one value, not {}", items.len()));
                    None
                }
            },
        }
    }

    /// `{[2] = a, b, [4 ... 7] = c}` for an array: each designator moves the
    /// position (a range fills every element from its first to its last
    /// index), plain values go to the next position, the rest are zero.
    fn designated_array(&mut self, items: &[ast::Expr], elem: &Type, len: u32, ty: &Type, span: Span) -> Option<hir::Expr> {
        /// Past this, a designated array initializer would build a huge HIR.
        const MAX_DESIGNATED: u32 = 1 << 16;
        if len > MAX_DESIGNATED {
            self.error(
                span,
                format!("designated initializers of arrays over {MAX_DESIGNATED} elements are not supported by this simulator yet"),
            );
            return None;
        }
        let mut slots: Vec<Option<hir::Expr>> = vec![None; len as usize];
        let mut next = 0i64;
        for it in items {
            let (first, last, value) = match &it.kind {
                A::Designated { designator: ast::Designator::Index(i), value } => {
                    let k = self.designator_index(i)?;
                    (k, k, &**value)
                }
                A::Designated { designator: ast::Designator::Range(a, b), value } => {
                    let (a, b) = (self.designator_index(a)?, self.designator_index(b)?);
                    if b < a {
                        self.error(it.span, format!("the range `[{a} ... {b}]` is empty: its last index is below its first"));
                        return None;
                    }
                    (a, b, &**value)
                }
                A::Designated { designator: ast::Designator::Field(f), .. } => {
                    self.error(f.span, format!("`.{}` names a struct field, but this initializes an array", f.name));
                    return None;
                }
                _ => (next, next, it),
            };
            if first < 0 || last >= len as i64 {
                self.error(
                    it.span,
                    format!("index {} is outside the array, which has {len} elements", if first < 0 { first } else { last }),
                );
                return None;
            }
            let h = self.list_item(value, elem)?;
            for k in first..=last {
                slots[k as usize] = Some(h.clone());
            }
            next = last + 1;
        }
        let out = slots.into_iter().map(|s| s.unwrap_or_else(|| mk(H::Zero, elem.clone(), span))).collect();
        Some(mk(H::Aggregate(out), ty.clone(), span))
    }

    /// A designator's index: an integer constant expression.
    fn designator_index(&mut self, e: &ast::Expr) -> Option<i64> {
        let h = self.expr(e)?;
        match self.const_value(&h) {
            Some(v) if h.ty.elem_scalar().is_some_and(|s| s.is_integer()) => Some(v.as_i64()),
            _ => {
                self.error(e.span, "an array designator needs a whole-number constant (e.g. `[3]` or `[0 ... N - 1]`)");
                None
            }
        }
    }

    fn struct_list_rest(
        &mut self,
        ty: &Type,
        fields: &[Type],
        mut out: Vec<hir::Expr>,
        items: &[ast::Expr],
        span: Span,
    ) -> Option<hir::Expr> {
        if out.len() + items.len() > fields.len() {
            let n = self.ty_name(ty);
            self.error(
                span,
                format!("too many initializers: `{n}` has {} fields but {} values were given", fields.len(), out.len() + items.len()),
            );
            return None;
        }
        let sid = match ty {
            Type::Struct(sid) => Some(*sid),
            _ => None,
        };
        for it in items {
            let idx = out.len();
            if let Some(sid) = sid.filter(|&s| self.is_ref_field(s, idx)) {
                out.push(self.bind_ref_field(sid, idx, it)?);
                continue;
            }
            let fty = fields[idx].clone();
            out.push(self.list_item(it, &fty)?);
        }
        if let Some(sid) = sid {
            if self.check_refs_bound(sid, out.len(), span).is_some() {
                return None;
            }
            let rest = self.member_values_after(sid, out.len(), span);
            out.extend(rest);
        }
        Some(mk(H::Aggregate(out), ty.clone(), span))
    }

    fn list_item(&mut self, it: &ast::Expr, ty: &Type) -> Option<hir::Expr> {
        if let A::InitList(sub) = &it.kind {
            return self.list_init(sub, ty, it.span);
        }
        let h = self.expr(it)?;
        if h.ty.is_scalar() {
            self.check_narrowing(&h, ty);
        }
        self.coerce(h, ty, "the initializer")
    }

    /// Report a narrowing conversion inside braces (an error in C++11).
    fn check_narrowing(&mut self, h: &hir::Expr, to: &Type) {
        let (Type::Scalar(from), Type::Scalar(to_s)) = (&h.ty, to.elem_scalar().map(Type::Scalar).unwrap_or(Type::Void)) else { return };
        let (from, to_s) = (*from, to_s);
        if from == to_s || to_s == Scalar::Bool && from == Scalar::Bool {
            return;
        }
        let constant = self.const_value(h);
        let narrowing = if from.is_float() && to_s.is_integer() {
            true
        } else if from.is_float() && to_s.is_float() {
            to_s.size() < from.size() && constant.is_none()
        } else if !from.is_float() && to_s.is_float() {
            match constant {
                Some(v) => (v.as_f64() as f32 as f64) != v.as_f64(),
                None => true,
            }
        } else {
            // integer to integer
            match constant {
                Some(v) => v.cast(to_s).as_i64() != v.as_i64() || (matches!(v, ConstValue::Int(x) if x < 0) && !to_s.is_signed()),
                None => {
                    to_s.size() < from.size()
                        || (from.is_signed() != to_s.is_signed() && to_s.size() <= from.size())
                        || (from.is_signed() && !to_s.is_signed())
                }
            }
        };
        if narrowing {
            let (f, t) = (from.name(), to_s.name());
            self.error(h.span, format!("narrowing conversion from `{f}` to `{t}` inside braces"))
                .label(format!("this `{f}` may not fit in a `{t}`"))
                .help(format!("convert explicitly with `{t}(...)` or `static_cast<{t}>(...)`, or use `=` instead of braces"));
        }
    }

    /// Call a struct constructor on a fresh temporary; the value is the temporary.
    pub(crate) fn ctor_call(&mut self, sid: crate::types::StructId, args: Vec<hir::Expr>, span: Span) -> Option<hir::Expr> {
        let n = self.structs[sid.0 as usize].ctors.len();
        let mut sigs = Vec::new();
        for i in 0..n {
            if let Some((id, sig)) = self.ctor_instance(sid, i, span) {
                sigs.push((id, sig.params));
            }
        }
        let sname = self.tables.struct_def(sid).name.clone();
        let (func, args) = self.pick_constructor(sid, &sname, sigs, args, span)?;
        let ty = Type::Struct(sid);
        let tmp = self.temp_local(ty.clone(), span)?;
        let place = mk(H::Local(tmp), ty.clone(), span);
        let this = mk(H::AddrOf(bx(place.clone())), Type::pointer(ty.clone(), AddressSpace::Thread, false), span);
        let mut all = vec![this];
        all.extend(args);
        let call = mk(H::Call { func, args: all }, Type::Void, span);
        Some(mk(H::Comma { lhs: bx(call), rhs: bx(place) }, ty, span))
    }

    /// Whether a struct declares constructors (or constructor templates).
    pub(crate) fn has_constructors(&self, sid: crate::types::StructId) -> bool {
        !self.structs[sid.0 as usize].ctors.is_empty() || !self.lookup_member_decls(sid, crate::check::calls::CTOR_TEMPLATE).is_empty()
    }
}
