//! Struct declarations: members, bases, nested items and layout
//! (`packed`, `alignas`).

use super::{Checker, DeclId, DeclKind, StructInfo, TArg};
use crate::ast::{self, AddressSpace, ItemKind};
use crate::source::Span;
use crate::types::{StructDef, StructId, Type};
use std::rc::Rc;

impl<'a> Checker<'a, '_> {
    /// Declare and lay out a struct (or a template instance with `targs`).
    pub(crate) fn struct_item(&mut self, s: &'a ast::Struct, instance: Option<(DeclId, Vec<TArg>)>) -> Option<StructId> {
        let sid = StructId(self.tables.structs.len() as u32);
        let display = match &instance {
            Some((_, targs)) => format!("{}{}", s.name.name, self.targs_display(targs)),
            None => s.name.name.to_string(),
        };
        self.tables.structs.push(StructDef { name: display.clone(), fields: Vec::new(), size: 0, align: 1, is_union: s.is_union });
        self.structs.push(StructInfo::default());
        match instance {
            Some(key) => {
                let k = self.inst.key(key.0, &key.1);
                self.inst.structs.insert(k, sid);
                self.struct_instance_of.insert(sid, key);
            }
            None => {
                self.add_decl(s.name.name.clone(), DeclKind::Struct(sid), s.name.span);
            }
        }
        let old_this = self.env.this_struct.replace(sid);
        // Nested types, static member functions and member templates live in
        // the struct's own scope, named after the struct (instances included).
        self.env.scope.push(Rc::from(display.as_str()));
        self.structs[sid.0 as usize].scope = self.env.scope.clone();
        let first_member_decl = self.decls.len();
        let mut other_space_ctors: Vec<super::Ctor> = Vec::new();
        let mut statics_fns = Vec::new();
        // Base classes come first in the layout, as hidden members.
        let mut fields: Vec<(String, Type)> = self.declare_bases(sid, &s.bases);
        let mut field_spans: Vec<Span> = s.bases.iter().map(|b| b.span).take(fields.len()).collect();
        for m in &s.members {
            match &m.kind {
                ast::MemberKind::Field(v) => {
                    let Some(q) = self.resolve_type(&v.ty) else { continue };
                    if let Some(i) = fields.iter().position(|(n, _)| **n == *v.name.name) {
                        self.error(v.name.span, format!("duplicate member `{}`", v.name.name))
                            .secondary(field_spans[i], "first declared here");
                        continue;
                    }
                    if contains_struct(&q.ty, sid) {
                        self.error(v.name.span, "a struct cannot contain itself (nor an array of itself)")
                            .help("hold it through a pointer, or move the member out of the struct");
                        continue;
                    }
                    if q.space.is_some() {
                        self.error(v.ty.span, "struct members cannot have an address space (only pointer members can point into one)");
                    }
                    let q = match q.ty {
                        Type::Reference { referee, space, is_const } => {
                            if s.is_union {
                                self.error(v.ty.span, "a union cannot have a reference member");
                                continue;
                            }
                            if v.init.is_some() {
                                self.error(v.ty.span, "default values of reference members are not supported by this simulator yet")
                                    .help("bind the reference where the struct is made (`S{…, x}`) instead");
                                continue;
                            }
                            self.structs[sid.0 as usize].ref_fields.push(fields.len() as u32);
                            super::typeexpr::QualType { ty: Type::Pointer { pointee: referee, space, is_const }, ..q }
                        }
                        _ => q,
                    };
                    if let Some(init) = &v.init {
                        let field = fields.len() as u32;
                        self.structs[sid.0 as usize].member_defaults.push(super::meminit::MemberDefault { field, init, reported: false });
                    }
                    fields.push((v.name.name.to_string(), q.ty));
                    field_spans.push(v.name.span);
                }
                ast::MemberKind::StaticConst(v) => {
                    let Some(q) = self.resolve_type(&v.ty) else { continue };
                    let Some(init) = &v.init else {
                        self.error(v.span, "a static data member needs an initializer here");
                        continue;
                    };
                    let mut ty = q.ty.clone();
                    if let Some(h) = self.constant_initializer(init, &mut ty, v.span) {
                        // Visible unqualified in nested structs too.
                        self.add_decl(v.name.name.clone(), DeclKind::Constant(h.clone()), v.name.span);
                        self.structs[sid.0 as usize].statics.push((v.name.name.clone(), q.ty, h));
                    }
                }
                ast::MemberKind::Alias(a) if a.fn_params.is_some() => self.refuse_function_type(a),
                ast::MemberKind::Alias(a) => {
                    if let Some(q) = self.resolve_type(&a.ty) {
                        self.add_decl(a.name.name.clone(), DeclKind::Alias(q.ty.clone()), a.name.span);
                        self.structs[sid.0 as usize].aliases.push((a.name.name.clone(), q.ty));
                    }
                }
                ast::MemberKind::Method(f) if f.is_static => statics_fns.push(f),
                ast::MemberKind::Method(f) => {
                    let env = self.env.clone();
                    self.structs[sid.0 as usize].methods.push((f, env));
                }
                ast::MemberKind::Nested(item) => self.nested_item(sid, item),
                ast::MemberKind::DefaultedConstructor => self.structs[sid.0 as usize].defaulted_ctor = true,
                ast::MemberKind::Anonymous(inner) => {
                    // Laid out as a hidden member; its members are found
                    // through it, as the members of a base are.
                    if let Some(isid) = self.struct_item(inner, None) {
                        let idx = fields.len() as u32;
                        fields.push((super::inherit::anonymous_field_name(idx as usize), Type::Struct(isid)));
                        field_spans.push(inner.span);
                        self.structs[sid.0 as usize].bases.push((isid, idx));
                    }
                }
                ast::MemberKind::Constructor { func, inits } if func.object_space.is_some() => {
                    other_space_ctors.push((func, inits.clone(), self.env.clone()));
                }
                ast::MemberKind::Constructor { func, inits } => {
                    let env = self.env.clone();
                    self.structs[sid.0 as usize].ctors.push((func, inits.clone(), env));
                }
            }
        }
        // Objects are built in thread memory and copied where they live: a
        // struct whose constructors are all for another address space
        // (`S(…) constant`, for program-scope constants) is built with those
        // of one space (the first declared).
        let info = &mut self.structs[sid.0 as usize];
        if info.ctors.is_empty() && !info.defaulted_ctor {
            if let Some(space) = other_space_ctors.first().and_then(|c| c.0.object_space) {
                info.ctors.extend(other_space_ctors.into_iter().filter(|c| c.0.object_space == Some(space)));
            }
        }
        let has_defaults = !self.structs[sid.0 as usize].member_defaults.is_empty();
        self.structs[sid.0 as usize].needs_init = self.struct_needs_init(&fields, has_defaults);
        let attrs = self.layout_attrs(s, &fields);
        let (laid, size, align) = self.tables.layout(fields, s.is_union, &attrs);
        if attrs.packed {
            self.refuse_under_aligned(s, &laid, size);
        }
        let def = &mut self.tables.structs[sid.0 as usize];
        def.fields = laid;
        def.size = size;
        def.align = align;
        // Static member functions are ordinary functions in the struct's
        // scope; checked once the layout is known.
        // All are declared before any body is checked, so one may call
        // another declared after it.
        let outer = self.deferred_bodies.replace(Vec::new());
        for f in statics_fns {
            self.function_item(f);
        }
        let waiting = std::mem::replace(&mut self.deferred_bodies, outer).unwrap_or_default();
        let instance = self.struct_instance_of.contains_key(&sid);
        for (f, id, sig) in waiting {
            if instance {
                self.lazy_bodies.insert(id, ((f, id, sig), self.env.clone()));
            } else {
                self.function_body(f, id, &sig, f.name.last().ident.name.to_string(), None, None);
            }
        }
        // Member function bodies see every member, whatever its order:
        // member function templates included (C++'s complete-class context).
        let end = self.decls.len();
        for d in first_member_decl..end {
            if matches!(self.decls[d].kind, DeclKind::FunctionTemplate { .. }) && self.decls[d].scope == self.env.scope {
                self.decls[d].env.visible = end;
            }
        }
        let env = self.env.clone();
        let info = &mut self.structs[sid.0 as usize];
        info.methods.iter_mut().for_each(|m| m.1 = env.clone());
        info.ctors.iter_mut().for_each(|c| c.2 = env.clone());
        info.init_env = Some(env.clone());
        self.apply_template_member_defs(sid);
        // Check the methods of ordinary structs now, so their errors show even
        // if nothing calls them.
        let n_methods = self.structs[sid.0 as usize].methods.len();
        if !self.struct_instance_of.contains_key(&sid) {
            for i in 0..n_methods {
                self.method_instance(sid, i, AddressSpace::Thread, s.name.span);
            }
        }
        self.env.this_struct = old_this;
        self.env.scope.pop();
        Some(sid)
    }

    /// A struct, enum or template declared inside struct `sid`. A member
    /// function template that is not `static` takes `this` when called.
    fn nested_item(&mut self, sid: StructId, item: &'a ast::Item) {
        self.item(item);
        if let ItemKind::Template { params, item: inner } = &item.kind {
            if let (false, ItemKind::Function(f)) = (params.is_empty(), &inner.kind) {
                if !f.is_static {
                    let d = self.decls.len() - 1;
                    self.method_templates.insert(d, sid);
                    if super::operators::is_conversion_name(&f.name.last().ident.name) {
                        self.structs[sid.0 as usize].conversion_templates.push(d);
                    }
                }
            }
        }
    }

    /// The layout attributes of `s` (`packed`, `alignas`/`aligned` on it and
    /// on its members), for `fields` as laid out (bases first).
    fn layout_attrs(&mut self, s: &'a ast::Struct, fields: &[(String, Type)]) -> crate::types::LayoutAttrs {
        let packed = s.attrs.iter().any(|a| &*a.name.name == "packed");
        let align = self.alignment_of_attrs(&s.attrs);
        let mut field_align = vec![0; fields.len()];
        for m in &s.members {
            let ast::MemberKind::Field(v) = &m.kind else { continue };
            let a = self.alignment_of_attrs(&v.attrs);
            if let (true, Some(i)) = (a > 0, fields.iter().position(|(n, _)| **n == *v.name.name)) {
                field_align[i] = a;
            }
        }
        crate::types::LayoutAttrs { packed, align, field_align }
    }

    /// A packed layout that leaves a member (or the next element of an
    /// array of the struct) under-aligned is refused: the simulator's loads
    /// need natural alignment, and a misaligned-access finding on this
    /// valid code, or a silent wrong value, would both be wrong.
    fn refuse_under_aligned(&mut self, s: &ast::Struct, laid: &[crate::types::StructField], size: u32) {
        let mut natural = 1u64;
        for f in laid {
            let a = self.tables.align_of(&f.ty).max(1);
            natural = natural.max(a);
            if !(f.offset as u64).is_multiple_of(a) {
                let ty = self.ty_name(&f.ty);
                self.error(s.name.span, format!("`packed` puts member `{}` (`{ty}`, alignment {a}) at byte offset {}", f.name, f.offset))
                    .note("reading under-aligned members is not supported by this simulator yet")
                    .help("reorder the members so each sits at a multiple of its alignment, or drop `packed`");
                return;
            }
        }
        if !(size as u64).is_multiple_of(natural) {
            self.error(
                s.name.span,
                format!("`packed` makes `{}` {size} bytes, so elements of an array of it are under-aligned", s.name.name),
            )
            .note("reading under-aligned members is not supported by this simulator yet")
            .help(format!("pad the struct to a multiple of {natural} bytes, or drop `packed`"));
        }
    }

    /// The largest alignment `alignas(N)` / `aligned(N)` among `attrs` (0: none).
    fn alignment_of_attrs(&mut self, attrs: &[ast::Attribute]) -> u64 {
        let mut align = 0u64;
        for a in attrs.iter().filter(|a| matches!(&*a.name.name, "alignas" | "aligned")) {
            let [arg] = a.args.as_slice() else {
                self.error(a.span, format!("`{}` needs one alignment in bytes, e.g. `{}(16)`", a.name.name, a.name.name));
                continue;
            };
            let Some(n) = self.const_int(arg, "an alignment") else { continue };
            // `alignas(0)` is allowed and changes nothing.
            if n == 0 {
                continue;
            }
            if n < 0 || !(n as u64).is_power_of_two() || n > 1 << 16 {
                self.error(arg.span, format!("the alignment must be a power of two from 1 to 65536, not {n}"));
                continue;
            }
            align = align.max(n as u64);
        }
        align
    }
}

/// Whether a value of type `t` holds a `sid` inside (directly or in arrays).
fn contains_struct(t: &Type, sid: StructId) -> bool {
    match t {
        Type::Struct(s) => *s == sid,
        Type::Array { elem, .. } => contains_struct(elem, sid),
        _ => false,
    }
}
