//! Kernel parameters: where each one's value comes from (`[[buffer(n)]]`,
//! `[[threadgroup(n)]]`, a thread-position attribute) and the rules the Metal
//! Shading Language Specification sets between them (indices used once,
//! attributes used once, matching types for related attributes). See the
//! README's "Rules the checker enforces" for the list.

use super::Checker;
use crate::ast::{self, AddressSpace};
use crate::hir::{Binding, ThreadAttr};
use crate::source::Span;
use crate::types::{Scalar, Type};

impl Checker<'_, '_> {
    /// Validate a kernel parameter's attribute and type.
    pub(crate) fn kernel_binding(&mut self, p: &ast::Param, ty: &Type) -> Option<Binding> {
        let pname = p.name.as_ref().map(|n| n.name.to_string()).unwrap_or_default();
        if self.refuse_stored_fn_ptr(ty, p.ty.span, "a kernel parameter") {
            return None;
        }
        let mut binding = None;
        for a in &p.attrs {
            let an = &*a.name.name;
            if an == "buffer" || an == "threadgroup" {
                let idx = match a.args.first() {
                    Some(e) => self.const_int(e, "a buffer index")?,
                    None => {
                        self.error(a.span, format!("`[[{an}(n)]]` needs an index"));
                        return None;
                    }
                };
                if !(0..31).contains(&idx) {
                    self.error(a.span, format!("{an} index {idx} is out of range (0 to 30)"));
                    return None;
                }
                if an == "buffer" {
                    match ty {
                        Type::Pointer { space: AddressSpace::Device | AddressSpace::Constant, .. }
                        | Type::Reference { space: AddressSpace::Device | AddressSpace::Constant, .. } => {}
                        Type::Pointer { space, .. } | Type::Reference { space, .. } => {
                            self.error(
                                p.ty.span,
                                format!(
                                    "a `[[buffer(n)]]` parameter must point to `device` or `constant` memory, not `{}`",
                                    space.keyword()
                                ),
                            )
                            .help(format!(
                                "declare it as `device {}` (or use `[[threadgroup(n)]]` for threadgroup memory)",
                                pointee_display(self, ty)
                            ));
                            return None;
                        }
                        _ => {
                            self.error(
                                p.ty.span,
                                format!("a `[[buffer(n)]]` parameter must be a pointer or reference, not `{}`", self.ty_name(ty)),
                            )
                            .help(format!("write `constant {}& {pname}` for a single value", self.ty_name(ty)));
                            return None;
                        }
                    }
                    binding = Some(Binding::Buffer(idx as u32));
                } else {
                    if !matches!(
                        ty,
                        Type::Pointer { space: AddressSpace::Threadgroup, .. } | Type::Reference { space: AddressSpace::Threadgroup, .. }
                    ) {
                        self.error(p.ty.span, "a `[[threadgroup(n)]]` parameter must be a `threadgroup` pointer or reference");
                        return None;
                    }
                    binding = Some(Binding::Threadgroup(idx as u32));
                }
            } else if let Some(attr) = ThreadAttr::from_name(an) {
                let ok = match ty {
                    Type::Scalar(Scalar::UInt | Scalar::UShort) => true,
                    Type::Vector { elem: Scalar::UInt | Scalar::UShort, len: 2 | 3, packed: false } => attr.is_vector(),
                    _ => false,
                };
                if !ok {
                    let allowed =
                        if attr.is_vector() { "`uint`, `ushort`, `uint2`, `uint3`, `ushort2` or `ushort3`" } else { "`uint` or `ushort`" };
                    self.error(p.ty.span, format!("`[[{an}]]` cannot have type `{}`", self.ty_name(ty)))
                        .label("wrong type for this attribute")
                        .help(format!("declare it with type {allowed}"));
                    return None;
                }
                binding = Some(Binding::Attr(attr));
            } else if matches!(an, "stage_in" | "vertex_id" | "instance_id" | "position" | "color" | "sample_id") {
                self.error(a.span, format!("`[[{an}]]` belongs to render functions; compute kernels cannot use it"));
                return None;
            } else if an == "function_constant" {
                if !self.param_present(p) {
                    return Some(Binding::Absent);
                }
            } else if an == "texture" || an == "sampler" {
                self.error(a.span, format!("`[[{an}]]` is not supported by the simulator"));
                return None;
            } else {
                let known = ThreadAttr::ALL.iter().map(|(n, _)| *n).chain(["buffer", "threadgroup"]);
                let near = crate::diag::suggest(an, known);
                let w = self.warn(a.span, format!("unknown attribute `[[{an}]]` ignored"));
                if let Some(s) = near {
                    w.help(format!("did you mean `[[{s}]]`?"));
                }
            }
        }
        match binding {
            Some(b) => Some(b),
            None => match ty {
                // Metal assigns buffer indices to unattributed buffer params in order.
                Type::Pointer { space: AddressSpace::Device | AddressSpace::Constant, .. }
                | Type::Reference { space: AddressSpace::Device | AddressSpace::Constant, .. } => Some(Binding::Buffer(u32::MAX)),
                Type::Pointer { space: AddressSpace::Thread, .. } | Type::Reference { space: AddressSpace::Thread, .. } => {
                    self.error(p.ty.span, format!("kernel parameter `{pname}` cannot point into `thread` memory"))
                        .label("each thread's own memory; the host cannot pass it")
                        .help(format!(
                            "pass the data in a buffer: `device {}` (or `constant` for read-only data) with `[[buffer(n)]]`",
                            pointee_display(self, ty)
                        ));
                    None
                }
                _ => {
                    self.error(p.span, format!("kernel parameter `{pname}` needs an attribute saying where its value comes from"))
                        .help("use `[[buffer(n)]]` for a buffer or a thread-position attribute such as `[[thread_position_in_grid]]`");
                    None
                }
            },
        }
    }

    /// The rules between a kernel's parameters, given each parameter with
    /// its binding (parameters whose own check failed are `Argument`) and
    /// type.
    pub(crate) fn kernel_param_rules(&mut self, params: &[(&ast::Param, Binding)], tys: &[&Type]) {
        // Each buffer index and threadgroup index names one argument slot.
        let mut seen: Vec<(&str, u32, Span)> = Vec::new();
        for (p, b) in params {
            let (what, idx) = match b {
                Binding::Buffer(i) if *i != u32::MAX => ("buffer", *i),
                Binding::Threadgroup(i) => ("threadgroup", *i),
                _ => continue,
            };
            let at = attr_span(p, what).unwrap_or(p.span);
            if let Some((_, _, first)) = seen.iter().find(|(w, i, _)| *w == what && *i == idx) {
                self.error(at, format!("`[[{what}({idx})]]` is already used by another parameter of this kernel"))
                    .secondary(*first, "first used here")
                    .note(format!("each `{what}` index binds one argument; two parameters cannot share it"))
                    .help(format!("give this parameter an unused index, e.g. `[[{what}({})]]`", next_free(&seen, what)));
                continue;
            }
            seen.push((what, idx, at));
        }
        // Each thread-position attribute describes one value; a kernel takes
        // it at most once.
        let mut attrs: Vec<(ThreadAttr, Span, &Type)> = Vec::new();
        for ((p, b), ty) in params.iter().zip(tys) {
            let Binding::Attr(a) = b else { continue };
            let at = attr_span(p, a.name()).unwrap_or(p.span);
            if let Some((_, first, _)) = attrs.iter().find(|(x, _, _)| x == a) {
                self.error(at, format!("`[[{}]]` is already given to another parameter of this kernel", a.name()))
                    .secondary(*first, "first given here")
                    .help("use the first parameter, or remove this one");
                continue;
            }
            attrs.push((*a, at, ty));
        }
        // `thread_execution_width` is the old name of `threads_per_simdgroup`.
        let find = |a: ThreadAttr| attrs.iter().find(|(x, _, _)| *x == a).copied();
        if let (Some((_, old, _)), Some((_, new, _))) = (find(ThreadAttr::ThreadExecutionWidth), find(ThreadAttr::ThreadsPerSimdgroup)) {
            self.error(old, "a kernel cannot take both `[[thread_execution_width]]` and `[[threads_per_simdgroup]]`")
                .secondary(new, "the same value, under its newer name")
                .help("keep only `[[threads_per_simdgroup]]`");
        }
        let mut sizes_differ = false;
        // The grid-shaped attributes agree on their number of components
        // when they are vectors.
        let grid: Vec<(ThreadAttr, Span, &Type)> = attrs.iter().filter(|(a, _, _)| a.is_vector()).copied().collect();
        let vectors: Vec<&(ThreadAttr, Span, &Type)> = grid.iter().filter(|(_, _, t)| matches!(t, Type::Vector { .. })).collect();
        if let Some(first) = vectors.first() {
            if let Some(other) = vectors.iter().find(|(_, _, t)| t.vector_len() != first.2.vector_len()) {
                sizes_differ = true;
                let (n1, n2) = (first.2.vector_len().unwrap_or(1), other.2.vector_len().unwrap_or(1));
                self.error(other.1, format!("`[[{}]]` has {n2} components but `[[{}]]` has {n1}", other.0.name(), first.0.name()))
                    .secondary(first.1, format!("{n1} components here"))
                    .note("the grid and threadgroup attributes of one kernel must be vectors of the same size (or scalars)")
                    .help(format!("declare both as `{}`-component vectors", n1.max(n2)));
            }
        }
        // Related attributes have the same type.
        use ThreadAttr as A;
        let groups: [&[ThreadAttr]; 3] = [
            &[A::ThreadPositionInGrid, A::ThreadsPerGrid],
            &[A::ThreadPositionInThreadgroup, A::ThreadsPerThreadgroup, A::DispatchThreadsPerThreadgroup],
            &[A::ThreadgroupPositionInGrid, A::ThreadgroupsPerGrid],
        ];
        for group in groups.iter().filter(|_| !sizes_differ) {
            let present: Vec<(ThreadAttr, Span, &Type)> = group.iter().filter_map(|a| find(*a)).collect();
            let Some(first) = present.first() else { continue };
            if let Some(other) = present.iter().find(|(_, _, t)| t != &first.2) {
                let (t1, t2) = (self.ty_name(first.2), self.ty_name(other.2));
                self.error(other.1, format!("`[[{}]]` has type `{t2}` but `[[{}]]` has type `{t1}`", other.0.name(), first.0.name()))
                    .secondary(first.1, format!("`{t1}` here"))
                    .note("Metal requires these related attributes to be declared with the same type")
                    .help(format!("declare both as `{t1}`"));
            }
        }
    }

    /// A call of the kernel `name` is an error: kernels are entry points
    /// that only the host dispatches.
    pub(crate) fn kernel_called(&self, name: &str, span: Span) {
        self.error(span, format!("`{name}` is a kernel function and cannot be called"))
            .note("a kernel is an entry point that the host dispatches; other functions cannot call it")
            .help("move the shared code into an ordinary function and call that from both kernels");
    }
}

/// The span of the attribute named `name` on `p`.
fn attr_span(p: &ast::Param, name: &str) -> Option<Span> {
    p.attrs.iter().find(|a| &*a.name.name == name).map(|a| a.span)
}

/// The smallest index of kind `what` not in `seen`.
fn next_free(seen: &[(&str, u32, Span)], what: &str) -> u32 {
    (0..).find(|i| !seen.iter().any(|(w, x, _)| *w == what && x == i)).unwrap_or(0)
}

fn pointee_display(c: &Checker, ty: &Type) -> String {
    match ty {
        Type::Pointer { pointee, .. } => format!("{}*", c.ty_name(pointee)),
        Type::Reference { referee, .. } => format!("{}&", c.ty_name(referee)),
        t => c.ty_name(t),
    }
}
