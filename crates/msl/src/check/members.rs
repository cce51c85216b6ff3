//! Out-of-class member function definitions: `R S::f(…) {…}` for a struct,
//! `template <> R S<float>::f(…) {…}` for one instance of a struct template
//! (an explicit specialization of a member: it replaces the in-class body),
//! and `template <class T> R S<T>::f(…) {…}` for every instance. The
//! definition gives the body of a member declared in the struct; that body
//! sees the struct's members and what is declared above the definition.

use super::{Checker, DeclId, DeclKind, Env, TArg};
use crate::ast;
use crate::hir::FuncId;
use crate::types::{StructId, Type};
use std::rc::Rc;

/// `template <…> R S<…>::f(…) {…}`, kept for the instances of struct
/// template `S` (those made before it and those made after).
#[derive(Clone)]
pub(crate) struct TemplateMemberDef<'a> {
    pub def: &'a ast::Function,
    pub params: &'a [ast::TemplateParam],
    /// Declarations visible where the definition is written.
    pub visible: usize,
}

impl<'a> Checker<'a, '_> {
    /// A function named `Owner::f`. `params` are those of an enclosing
    /// `template <…>` (empty for `template <>`). Returns false when `Owner`
    /// is not a struct (nor a struct template), e.g. a namespace.
    pub(crate) fn member_definition(&mut self, f: &'a ast::Function, params: Option<&'a [ast::TemplateParam]>) -> bool {
        let Some((_, prefix)) = f.name.segments.split_last() else { return false };
        if let Some(ps) = params.filter(|ps| !ps.is_empty()) {
            let Some(d) = self.struct_template_named(f.name.global, prefix) else { return false };
            let def = TemplateMemberDef { def: f, params: ps, visible: self.decls.len() };
            self.template_member_defs.entry(d).or_default().push(def.clone());
            // Instances made before the definition get it too.
            let mut made: Vec<(StructId, Vec<TArg>)> =
                self.struct_instance_of.iter().filter(|(_, (t, _))| *t == d).map(|(s, (_, a))| (*s, a.clone())).collect();
            made.sort_by_key(|(s, _)| s.0);
            for (sid, targs) in made {
                if self.is_primary_instance(sid, d) {
                    self.apply_template_member_def(sid, &targs, &def);
                }
            }
            return true;
        }
        let prefix_path = ast::Path { global: f.name.global, segments: prefix.to_vec(), span: f.name.span };
        let Some(Type::Struct(sid)) = self.resolve_named_type_quiet(&prefix_path) else { return false };
        let Some(env) = self.structs[sid.0 as usize].methods.first().map(|m| m.1.clone()) else {
            self.no_such_member(f, sid);
            return true;
        };
        let env = Env { visible: self.decls.len().max(env.visible), ..env };
        match self.declared_method(sid, f, &env) {
            Some(i) => self.define_method(sid, i, f, env),
            None => self.no_such_member(f, sid),
        }
        true
    }

    /// The out-of-class definitions of struct template `d`'s members,
    /// given to its new instance `sid`.
    pub(crate) fn apply_template_member_defs(&mut self, sid: StructId) {
        let Some((d, targs)) = self.struct_instance_of.get(&sid).cloned() else { return };
        let Some(defs) = self.template_member_defs.get(&d).cloned() else { return };
        if !self.is_primary_instance(sid, d) {
            return;
        }
        for def in &defs {
            self.apply_template_member_def(sid, &targs, def);
        }
    }

    /// Is `sid` built from template `d`'s primary definition (not from an
    /// explicit or partial specialization, whose members are their own)?
    fn is_primary_instance(&mut self, sid: StructId, d: DeclId) -> bool {
        let Some((_, targs)) = self.struct_instance_of.get(&sid).cloned() else { return false };
        if self.inst.find(d, &targs).is_some_and(|k| self.inst.struct_specs.contains_key(&k)) {
            return false;
        }
        let _trial = self.trial();
        self.matching_partial_spec(d, &targs).is_none()
    }

    fn apply_template_member_def(&mut self, sid: StructId, targs: &[TArg], def: &TemplateMemberDef<'a>) {
        let Some(base) = self.structs[sid.0 as usize].methods.first().map(|m| m.1.clone()) else {
            self.no_such_member(def.def, sid);
            return;
        };
        // The definition names the struct's parameters its own way
        // (`template <class U> U S<U>::f()`): bind its names to the instance's
        // arguments, in order.
        let mut map = (*base.targs).clone();
        for (p, a) in def.params.iter().zip(targs) {
            super::packs::bind_targ(&mut map, &p.name.name, a.clone());
        }
        let env = Env { targs: Rc::new(map), visible: base.visible.max(def.visible), ..base };
        match self.declared_method(sid, def.def, &env) {
            Some(i) => self.define_method(sid, i, def.def, env),
            None => self.no_such_member(def.def, sid),
        }
    }

    fn struct_template_named(&self, global: bool, prefix: &[ast::PathSegment]) -> Option<DeclId> {
        let (owner, scope) = prefix.split_last()?;
        let name = &owner.ident.name;
        let is_template = |c: &Self, d: DeclId| matches!(c.decls[d].kind, DeclKind::StructTemplate { .. });
        if scope.is_empty() && !global {
            return self.lookup_global(name).into_iter().rev().find(|&d| is_template(self, d));
        }
        let scope: Vec<Rc<str>> = scope.iter().map(|s| s.ident.name.clone()).collect();
        self.lookup_qualified(&scope, name).filter(|&d| is_template(self, d))
    }

    /// The member function of `sid` that definition `f` defines: the one of
    /// that name with the same parameter types (and `const`-ness); the only
    /// one of that name and arity when the types cannot be compared.
    fn declared_method(&mut self, sid: StructId, f: &'a ast::Function, env: &Env) -> Option<usize> {
        let name = &f.name.last().ident.name;
        let same_name: Vec<usize> = self.structs[sid.0 as usize]
            .methods
            .iter()
            .enumerate()
            .filter(|(_, (m, _))| m.name.last().ident.name == *name && m.params.len() == f.params.len())
            .map(|(i, _)| i)
            .collect();
        if same_name.len() <= 1 {
            return same_name.first().copied();
        }
        let mut there = self.elsewhere(env.clone());
        let _trial = there.trial();
        let own = there.signature(f, Some(sid));
        let mut found = None;
        for i in same_name {
            let (m, menv) = there.structs[sid.0 as usize].methods[i].clone();
            there.env = menv;
            let theirs = there.signature(m, Some(sid));
            if own.as_ref().zip(theirs.as_ref()).is_some_and(|(a, b)| a.params == b.params) && m.is_const_method == f.is_const_method {
                found = Some(i);
                break;
            }
        }
        found
    }

    /// Give method `i` of `sid` the body of `f`; member functions already
    /// made from its declaration get the body too.
    fn define_method(&mut self, sid: StructId, i: usize, f: &'a ast::Function, env: Env) {
        self.structs[sid.0 as usize].methods[i] = (f, env.clone());
        let mut made: Vec<(ast::AddressSpace, FuncId)> =
            self.structs[sid.0 as usize].method_ids.iter().filter(|((j, _), _)| *j == i).map(|((_, s), id)| (*s, *id)).collect();
        made.sort_by_key(|(_, id)| id.0);
        for (space, id) in made {
            let mut there = self.elsewhere(env.clone());
            if let Some(sig) = there.signature(f, Some(sid)) {
                let name = there.functions[id.0 as usize].as_ref().map(|g| g.name.clone()).unwrap_or_default();
                there.instance_sigs.insert(id, sig.params.clone());
                there.function_body(f, id, &sig, name, None, Some((sid, space, false)));
            }
        }
    }

    fn no_such_member(&mut self, f: &ast::Function, sid: StructId) {
        let owner = self.tables.struct_def(sid).name.clone();
        let name = &f.name.last().ident.name;
        let scope = self.structs[sid.0 as usize].scope.clone();
        let is_static = self
            .lookup_in(&scope, name)
            .into_iter()
            .any(|d| matches!(self.decls[d].kind, DeclKind::Function { .. } | DeclKind::FunctionTemplate { .. }));
        if is_static {
            self.error(
                f.name.span,
                format!("out-of-class definitions of static member functions (`{owner}::{name}`) are not supported by this simulator yet"),
            )
            .help("define the static member function inside its struct");
            return;
        }
        self.error(f.name.span, format!("`{owner}` declares no member function `{name}` with these parameters"))
            .help(format!("declare it inside `{owner}` first (`R {name}(…);`), with the same parameter types"));
    }
}
