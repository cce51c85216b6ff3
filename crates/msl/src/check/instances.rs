//! What the checker remembers per template instance, in one store: each
//! (template, arguments) pair is interned once as an [`InstKey`], and every
//! memo (the function or struct made, a specialization's body, completed
//! arguments, SFINAE results...) is keyed by it. Lookups borrow the
//! arguments instead of cloning them into a key.

use super::{DeclId, Env, TArg};
use crate::ast;
use crate::hir::{self, FuncId};
use crate::types::{StructId, Type};
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

/// One (template, arguments) pair.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct InstKey(u32);

#[derive(Default)]
pub(crate) struct Instances<'a> {
    keys: HashMap<DeclId, HashMap<Vec<TArg>, InstKey>>,
    /// Function template instances, by their key (a member template's
    /// arguments end with the address space of `this`).
    pub fns: HashMap<InstKey, FuncId>,
    /// A function instance's template and arguments.
    pub fn_origin: HashMap<FuncId, InstKey>,
    pub structs: HashMap<InstKey, StructId>,
    /// Explicit specializations of struct and function templates: the
    /// declaration that replaces the primary template's, and its scope.
    pub struct_specs: HashMap<InstKey, (&'a ast::Struct, Env)>,
    pub fn_specs: HashMap<InstKey, (&'a ast::Function, Env)>,
    /// Values of variable template instances.
    pub vars: HashMap<InstKey, hir::Expr>,
    /// Types alias templates named for complete arguments. Only successes
    /// are kept: a failure may have been reported inside a rolled-back
    /// probe and must be reported again where it matters.
    pub aliases: HashMap<InstKey, Type>,
    /// Template arguments completed with their defaults, by the arguments
    /// given; and those whose completion failed when tried quietly (the
    /// SFINAE probes of overload resolution, repeated by every instance).
    pub completed: HashMap<InstKey, Vec<TArg>>,
    pub failed: HashSet<InstKey>,
    /// A function template's parameter types for complete arguments, as
    /// overload resolution computes them (`None`: SFINAE drops it).
    pub candidate_params: HashMap<InstKey, Option<Vec<Type>>>,
    /// Every key's template and arguments, by key.
    of: Vec<(DeclId, Vec<TArg>)>,
}

impl Instances<'_> {
    /// The key of `d` with `args`, made on first use.
    pub fn key(&mut self, d: DeclId, args: &[TArg]) -> InstKey {
        if let Some(k) = self.find(d, args) {
            return k;
        }
        let k = InstKey(self.of.len() as u32);
        self.of.push((d, args.to_vec()));
        self.keys.entry(d).or_default().insert(args.to_vec(), k);
        k
    }

    /// The key of `d` with `args`, if either was ever used.
    pub fn find(&self, d: DeclId, args: &[TArg]) -> Option<InstKey> {
        self.keys.get(&d)?.get(args).copied()
    }

    /// The template and arguments of key `k`.
    pub fn of(&self, k: InstKey) -> (DeclId, &[TArg]) {
        let (d, args) = &self.of[k.0 as usize];
        (*d, args)
    }
}
