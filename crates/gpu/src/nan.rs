//! Where was this NaN born? (`--check nan`, the debugger's `break nan`.)
//!
//! An observer like the tracer, attached only when asked for: after each
//! instruction it looks at the float results of the lanes that ran it. A
//! non-finite result from finite operands is a *birth* (`exp(121.3)
//! overflows float`, `0 / 0 is NaN`), remembered with its line and thread;
//! a non-finite result from a non-finite operand carries the operand's
//! chain on. Memory keeps chains too: a store of a non-finite value into
//! threadgroup or device memory adds a step ("stored into `tile[3]`"), and
//! a load of that cell picks the chain up, so a NaN that crossed threads
//! through a reduction is still traced to its birth. A store into a device
//! buffer is an output: the report lists each output cell group with the
//! chain that reached it.
//!
//! Registers carry no types, so births are only judged at instructions
//! whose result type is a float (arithmetic, math functions, conversions,
//! SIMD-group functions, loads); copies and selects only carry chains.

use crate::exec::{Machine, Mask};
use crate::ir::{AccessId, Inst, Reg};
use crate::memory::{ptr_alloc, ptr_offset};
use msl::source::Span;
use msl::types::Scalar;
use std::collections::HashMap;

/// Chain steps kept per run (later ones reuse the step before).
const MAX_STEPS: usize = 100_000;
/// Output groups reported (by buffer, store and chain).
const MAX_OUTPUTS: usize = 32;
/// Register and memory entries tracked (a kernel full of NaNs stops growing).
const MAX_ENTRIES: usize = 1 << 20;

/// One step of a chain: the birth (no `prev`) or a store into memory.
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    pub prev: Option<u32>,
    pub span: Span,
    pub thread: [u32; 3],
    /// `exp(121.3) overflows float`, or `stored into tile[3]`.
    pub what: String,
}

/// Output cells that received a non-finite value from one store site and chain.
#[derive(Clone, Debug, PartialEq)]
pub struct NanOutput {
    /// The buffer (parameter name) and the first cell's element index.
    pub buffer: String,
    pub index: i64,
    /// `nan`, `inf` or `-inf`.
    pub value: String,
    /// The store, and the thread that made the first one.
    pub span: Span,
    pub thread: [u32; 3],
    /// The chain's last step (`None`: no birth seen, e.g. a NaN input).
    pub chain: Option<u32>,
    pub count: u64,
}

/// What `--check nan` found.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NanReport {
    pub steps: Vec<Step>,
    pub outputs: Vec<NanOutput>,
    /// Output groups left out over `MAX_OUTPUTS`.
    pub more_outputs: u64,
}

impl NanReport {
    /// The chain ending at `step`, birth first.
    pub fn chain(&self, step: u32) -> Vec<&Step> {
        let mut out = Vec::new();
        let mut at = Some(step);
        while let Some(i) = at {
            let Some(s) = self.steps.get(i as usize) else { break };
            out.push(s);
            at = s.prev.filter(|&p| p < i);
            if out.len() > 64 {
                break;
            }
        }
        out.reverse();
        out
    }
}

/// The observer.
#[derive(Debug, Default)]
pub struct NanTracker {
    /// (register, lane) → chain, for registers holding a non-finite value.
    regs: HashMap<(Reg, usize), u32>,
    /// (pointer of the cell) → chain, for memory holding one.
    cells: HashMap<u64, u32>,
    /// The statement being run (from the lowering's statement marks).
    current: Option<Span>,
    pub report: NanReport,
}

impl NanTracker {
    pub fn new() -> NanTracker {
        NanTracker::default()
    }

    /// A new threadgroup: registers and threadgroup memory start over.
    pub fn start_threadgroup(&mut self) {
        self.regs.clear();
        self.cells.retain(|&p, _| matches!(ptr_alloc(p).kind(), crate::memory::AllocKind::Buffer(_)));
    }

    fn step(&mut self, prev: Option<u32>, span: Span, thread: [u32; 3], what: String) -> Option<u32> {
        if self.report.steps.len() >= MAX_STEPS {
            return prev;
        }
        self.report.steps.push(Step { prev, span, thread, what });
        Some(self.report.steps.len() as u32 - 1)
    }
}

/// `nan`, `inf`, `-inf` (or the number).
fn text(v: f32) -> String {
    if v.is_nan() {
        "nan".into()
    } else if v.is_infinite() {
        if v > 0.0 { "inf" } else { "-inf" }.into()
    } else {
        format!("{v}")
    }
}

fn f(bits: u64) -> f32 {
    f32::from_bits(bits as u32)
}

/// What a birth is: `exp(121.3) overflows float`, `0 / 0 is NaN`.
fn birth_text(op: &str, infix: bool, args: &[f32], result: f32, ty: Scalar) -> String {
    let shown: Vec<String> = args.iter().map(|&a| text(a)).collect();
    let call = if infix && shown.len() == 2 { format!("{} {op} {}", shown[0], shown[1]) } else { format!("{op}({})", shown.join(", ")) };
    let how = if result.is_nan() {
        "is NaN".to_string()
    } else if op == "/" && args.get(1) == Some(&0.0) {
        format!("divides by zero ({})", text(result))
    } else if args.contains(&0.0) && !matches!(op, "*" | "+" | "-") {
        format!("is {}", text(result))
    } else {
        format!("overflows {} ({})", ty.name(), text(result))
    };
    format!("{call} {how}")
}

/// Operand bits of the lanes of `mask`, before an instruction runs (its
/// destination may be one of them).
pub(crate) type Before = Vec<Vec<u64>>;

impl Machine<'_> {
    /// The sources of `inst` in every lane of `mask`, before it runs.
    pub(crate) fn nan_before(&self, inst: &Inst, mask: &Mask) -> Before {
        let (_, srcs) = crate::trace::regs_of(inst);
        if srcs.is_empty() {
            return Vec::new();
        }
        mask.lanes().map(|l| srcs.iter().map(|&r| self.get_pub(r, l)).collect()).collect()
    }

    /// After `inst` ran for the lanes of `mask`: births, chains, stores.
    pub(crate) fn nan_after(&mut self, inst: &Inst, mask: &Mask, before: Before) {
        let Some(mut t) = self.nan.take() else { return };
        if let Inst::Mark { at } = inst {
            t.current = self.k.accesses.get(*at as usize).map(|a| a.span);
        }
        let span_of =
            |m: &Self, at: AccessId, cur: Option<Span>| cur.or_else(|| m.k.accesses.get(at as usize).map(|a| a.span)).unwrap_or(m.k.span);
        match inst {
            Inst::Load { dst, ty, ptr, .. } if ty.is_float() => {
                for l in mask.lanes() {
                    t.regs.remove(&(*dst, l));
                    if !f(self.get_pub(*dst, l)).is_finite() {
                        if let Some(&c) = t.cells.get(&self.get_pub(*ptr, l)) {
                            t.regs.insert((*dst, l), c);
                        }
                    }
                }
            }
            Inst::Store { src, ty, ptr, at, .. } if ty.is_float() => {
                let span = self.k.accesses.get(*at as usize).map(|a| a.span).unwrap_or(self.k.span);
                for l in mask.lanes() {
                    let p = self.get_pub(*ptr, l);
                    let v = f(self.get_pub(*src, l));
                    if v.is_finite() {
                        t.cells.remove(&p);
                        continue;
                    }
                    let chain = t.regs.get(&(*src, l)).copied();
                    let name = crate::stops::alloc_name(self.k, p).unwrap_or_else(|| "memory".into());
                    let index = ptr_offset(p).div_euclid(ty.size().max(1) as i64);
                    let thread = self.geo.global(l);
                    let device = matches!(ptr_alloc(p).kind(), crate::memory::AllocKind::Buffer(_));
                    if device {
                        record_output(&mut t.report, &name, index, text(v), span, thread, chain);
                    }
                    let what =
                        format!("stored into `{name}{}`", crate::stops::index_text(index, &crate::stops::alloc_dims(self.k, p, ty.size())));
                    let step = t.step(chain, span, thread, what);
                    if let Some(s) = step.filter(|_| t.cells.len() < MAX_ENTRIES) {
                        t.cells.insert(p, s);
                    }
                }
            }
            _ => {
                let (dsts, srcs) = crate::trace::regs_of(inst);
                let birth: Option<(String, bool, Scalar)> = match inst {
                    Inst::Binary { op, ty, .. } if ty.is_float() => Some((op.as_str().to_string(), true, *ty)),
                    Inst::Unary { ty, .. } if ty.is_float() => Some(("-".into(), false, *ty)),
                    Inst::Math { func, ty, .. } | Inst::Geometric { func, ty, .. } | Inst::Special { func, ty, .. } if ty.is_float() => {
                        Some((func.name().to_string(), false, *ty))
                    }
                    Inst::Convert { to, .. } if to.is_float() => Some(("convert".into(), false, *to)),
                    Inst::Lane { op, ty, .. } if ty.is_float() => Some((format!("{op:?}").to_lowercase(), false, *ty)),
                    _ => None,
                };
                let lanes: Vec<usize> = mask.lanes().collect();
                for (i, &l) in lanes.iter().enumerate() {
                    for &d in &dsts {
                        t.regs.remove(&(d, l));
                        let v = self.get_pub(d, l);
                        // Only float results can be judged; copies carry chains as they are.
                        let float = birth.is_some();
                        if float && f(v).is_finite() {
                            continue;
                        }
                        // A non-finite operand's chain (the lane's own, else for
                        // SIMD-group functions any lane's of the group).
                        let mut chain = srcs.iter().find_map(|&r| t.regs.get(&(r, l)).copied());
                        if chain.is_none() && matches!(inst, Inst::Lane { .. }) {
                            chain = lanes.iter().find_map(|&q| srcs.iter().find_map(|&r| t.regs.get(&(r, q)).copied()));
                        }
                        let ops: Vec<f32> = before.get(i).map(|b| b.iter().map(|&x| f(x)).collect()).unwrap_or_default();
                        let operands_finite = !ops.is_empty() && ops.iter().all(|x| x.is_finite());
                        let chain = match (&birth, chain) {
                            (_, Some(c)) => Some(c),
                            (Some((op, infix, ty)), None) if operands_finite || matches!(inst, Inst::Lane { .. }) => {
                                let args: Vec<f32> = match inst {
                                    Inst::Lane { .. } => ops.first().copied().into_iter().collect(),
                                    _ => ops.clone(),
                                };
                                let what = birth_text(op, *infix, &args, f(v), *ty);
                                let at = match inst {
                                    Inst::Binary { at, .. } | Inst::Lane { at, .. } => *at,
                                    _ => 0,
                                };
                                let span = span_of(self, at, t.current);
                                let thread = self.geo.global(l);
                                if let Some(st) = self.stops.as_mut() {
                                    st.fault(l, "nan", &format!("{what} (a non-finite value is born here)"));
                                }
                                t.step(None, span, thread, what)
                            }
                            _ => None,
                        };
                        if let Some(c) = chain.filter(|_| t.regs.len() < MAX_ENTRIES) {
                            t.regs.insert((d, l), c);
                        }
                    }
                }
            }
        }
        self.nan = Some(t);
    }
}

/// The birth a chain starts from.
fn root(r: &NanReport, chain: Option<u32>) -> Option<u32> {
    let mut at = chain?;
    for _ in 0..64 {
        match r.steps.get(at as usize).and_then(|s| s.prev).filter(|&p| p < at) {
            Some(p) => at = p,
            None => break,
        }
    }
    Some(at)
}

/// One more non-finite output cell, grouped by buffer, store and birth.
fn record_output(r: &mut NanReport, buffer: &str, index: i64, value: String, span: Span, thread: [u32; 3], chain: Option<u32>) {
    let born = root(r, chain);
    let roots: Vec<Option<u32>> = r.outputs.iter().map(|o| root(r, o.chain)).collect();
    if let Some(i) = (0..r.outputs.len()).find(|&i| r.outputs[i].buffer == buffer && r.outputs[i].span == span && roots[i] == born) {
        r.outputs[i].count += 1;
        return;
    }
    if r.outputs.len() >= MAX_OUTPUTS {
        r.more_outputs += 1;
        return;
    }
    r.outputs.push(NanOutput { buffer: buffer.to_string(), index, value, span, thread, chain, count: 1 });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn births_say_what_went_wrong() {
        assert_eq!(birth_text("exp", false, &[121.3], f32::INFINITY, Scalar::Float), "exp(121.3) overflows float (inf)");
        assert_eq!(birth_text("/", true, &[0.0, 0.0], f32::NAN, Scalar::Float), "0 / 0 is NaN");
        assert_eq!(birth_text("/", true, &[1.0, 0.0], f32::INFINITY, Scalar::Float), "1 / 0 divides by zero (inf)");
        assert_eq!(birth_text("log", false, &[0.0], f32::NEG_INFINITY, Scalar::Float), "log(0) is -inf");
        assert_eq!(birth_text("sqrt", false, &[-1.0], f32::NAN, Scalar::Float), "sqrt(-1) is NaN");
    }
}
