//! SIMD-group functions (shuffles, reductions, scans, ballots) and
//! `simdgroup_matrix` operations, with Apple's fragment layout.

use super::{convert_bits, f, float_kind, from_memory, from_norm, int_kind, int_max, int_min, to_memory, to_norm};
use crate::access::MemOp;
use crate::exec::{Machine, Mask};
use crate::ir::*;
use crate::memory::{ptr_add, read_le, write_le};
use crate::undefined::{Undefined, POISON};
use msl::types::Scalar;

impl Machine<'_> {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn lane_op(
        &mut self,
        op: LaneOp,
        quad: bool,
        ty: Scalar,
        dst: Reg,
        (a, arg, fill): (Reg, Reg, Reg),
        at: AccessId,
        mask: &Mask,
    ) {
        let g = if quad { 4 } else { 32 };
        let n = self.n;
        let mut result = vec![0u64; n];
        let mut written = Mask::empty();
        // Lanes whose result the specification leaves undefined, and why.
        let mut undefined = Mask::empty();
        let mut first_undefined: Option<(usize, Undefined)> = None;
        let tracing = self.tracing();
        // For the trace: each lane's sources (register, lane).
        let mut provenance: Vec<(usize, Vec<(Reg, usize)>)> = Vec::new();
        for start in (0..n).step_by(g) {
            let end = (start + g).min(n);
            let active: Vec<usize> = (start..end).filter(|&l| mask.get(l)).collect();
            if active.is_empty() {
                continue;
            }
            // (source lane, destination lane) of shuffles, for the trace.
            let mut moves: Vec<(usize, usize)> = Vec::new();
            let mut shuffled: Vec<(usize, Vec<(Reg, usize)>)> = Vec::new();
            let val = |m: &Self, l: usize| m.get_pub(a, l);
            match op {
                LaneOp::Sum | LaneOp::Product | LaneOp::Min | LaneOp::Max | LaneOp::And | LaneOp::Or | LaneOp::Xor => {
                    let mut acc = val(self, active[0]);
                    for &l in &active[1..] {
                        acc = reduce(op, ty, acc, val(self, l));
                    }
                    for &l in &active {
                        result[l] = acc;
                    }
                }
                LaneOp::PrefixInclusiveSum
                | LaneOp::PrefixExclusiveSum
                | LaneOp::PrefixInclusiveProduct
                | LaneOp::PrefixExclusiveProduct => {
                    let (rop, identity) = match op {
                        LaneOp::PrefixInclusiveSum | LaneOp::PrefixExclusiveSum => (LaneOp::Sum, convert_bits(Scalar::Int, ty, 0)),
                        _ => (LaneOp::Product, convert_bits(Scalar::Int, ty, 1)),
                    };
                    let inclusive = matches!(op, LaneOp::PrefixInclusiveSum | LaneOp::PrefixInclusiveProduct);
                    let mut acc = identity;
                    for &l in &active {
                        let v = val(self, l);
                        let next = reduce(rop, ty, acc, v);
                        result[l] = if inclusive { next } else { acc };
                        acc = next;
                    }
                }
                LaneOp::Broadcast
                | LaneOp::Shuffle
                | LaneOp::ShuffleXor
                | LaneOp::ShuffleUp
                | LaneOp::ShuffleDown
                | LaneOp::ShuffleRotateUp
                | LaneOp::ShuffleRotateDown
                | LaneOp::ShuffleAndFillUp
                | LaneOp::ShuffleAndFillDown => {
                    // Metal asks the lane, delta or mask to be the same in
                    // every thread for all but `simd_shuffle`.
                    let d0 = self.get_pub(arg, active[0]);
                    let uniform = op == LaneOp::Shuffle || active.iter().all(|&l| self.get_pub(arg, l) == d0);
                    for &l in &active {
                        let i = l - start;
                        let d = self.get_pub(arg, l) as usize;
                        // Where the value comes from: (lane in the group, from `fill`),
                        // `None` for the caller's own value, or undefined.
                        let from: Result<Option<(usize, bool)>, Undefined> = match op {
                            _ if !uniform => Err(Undefined::NotUniform),
                            LaneOp::Broadcast | LaneOp::Shuffle if d >= g => Err(Undefined::BadLane(d)),
                            LaneOp::Broadcast | LaneOp::Shuffle => Ok(Some((d, false))),
                            LaneOp::ShuffleXor if i ^ d >= g => Err(Undefined::BadLane(i ^ d)),
                            LaneOp::ShuffleXor => Ok(Some((i ^ d, false))),
                            // The lanes shifted in from outside the group keep their own value.
                            LaneOp::ShuffleUp => Ok(i.checked_sub(d).map(|s| (s, false))),
                            LaneOp::ShuffleDown => Ok((i + d < g).then_some((i + d, false))),
                            LaneOp::ShuffleRotateUp => Ok(Some(((i + g - d % g) % g, false))),
                            LaneOp::ShuffleRotateDown => Ok(Some(((i + d) % g, false))),
                            LaneOp::ShuffleAndFillUp if i >= d % g => Ok(Some((i - d % g, false))),
                            LaneOp::ShuffleAndFillUp => Ok(Some(((i + g - d % g) % g, true))),
                            _ if i + d % g < g => Ok(Some((i + d % g, false))),
                            _ => Ok(Some(((i + d) % g, true))),
                        };
                        let from = from.and_then(|f| match f {
                            // A source that is inactive here (or does not exist in a
                            // partial SIMD-group) has no value to give.
                            Some((s, _)) if start + s >= end || !mask.get(start + s) => Err(Undefined::Inactive(start + s)),
                            other => Ok(other),
                        });
                        result[l] = match from {
                            Ok(None) => val(self, l),
                            Ok(Some((s, false))) => val(self, start + s),
                            Ok(Some((s, true))) => self.get_pub(fill, start + s),
                            Err(why) => {
                                undefined.set(l, true);
                                first_undefined.get_or_insert((l, why));
                                POISON
                            }
                        };
                        if let (true, Ok(Some((s, _)))) = (tracing, from) {
                            moves.push((start + s, l));
                        }
                        if tracing {
                            shuffled.push((
                                l,
                                vec![match from {
                                    Ok(Some((s, false))) => (a, start + s),
                                    Ok(Some((s, true))) => (fill, start + s),
                                    _ => (a, l),
                                }],
                            ));
                        }
                    }
                }
                LaneOp::BroadcastFirst => {
                    let v = val(self, active[0]);
                    for &l in &active {
                        result[l] = v;
                        if tracing {
                            moves.push((active[0], l));
                            shuffled.push((l, vec![(a, active[0])]));
                        }
                    }
                }
                LaneOp::All | LaneOp::Any => {
                    let all = active.iter().all(|&l| val(self, l) & 1 != 0);
                    let any = active.iter().any(|&l| val(self, l) & 1 != 0);
                    let v = if op == LaneOp::All { all } else { any } as u64;
                    for &l in &active {
                        result[l] = v;
                    }
                }
                LaneOp::Ballot | LaneOp::ActiveMask => {
                    let mut bits = 0u64;
                    for &l in &active {
                        if op == LaneOp::ActiveMask || val(self, l) & 1 != 0 {
                            bits |= 1 << (l - start);
                        }
                    }
                    for &l in &active {
                        result[l] = bits;
                    }
                }
                LaneOp::IsFirst => {
                    for &l in &active {
                        result[l] = (l == active[0]) as u64;
                    }
                }
            }
            for &l in &active {
                written.set(l, true);
            }
            if tracing {
                // Reductions and scans: the lanes they combined.
                let exclusive = matches!(op, LaneOp::PrefixExclusiveSum | LaneOp::PrefixExclusiveProduct);
                for &l in &active {
                    let from: Vec<(Reg, usize)> = match crate::trace::exchange_kind(op) {
                        Some(crate::trace::ExchangeKind::Reduce) => active.iter().map(|&s| (a, s)).collect(),
                        Some(crate::trace::ExchangeKind::Scan) => {
                            active.iter().filter(|&&s| if exclusive { s < l } else { s <= l }).map(|&s| (a, s)).collect()
                        }
                        Some(_) => continue,
                        None => Vec::new(),
                    };
                    provenance.push((l, from));
                }
                provenance.append(&mut shuffled);
            }
            if let (Some(kind), true) = (crate::trace::exchange_kind(op), tracing) {
                let moves = moves.into_iter().filter(|(a, b)| a != b).map(|(a, b)| (a as u32, b as u32)).collect();
                let lanes = active.iter().map(|&l| l as u32).collect();
                self.trace_exchange(crate::trace::lane_op_name(op, quad), kind, lanes, moves, at);
            }
        }
        if self.is_full(mask) {
            self.mark_varying(dst);
        } else {
            self.expand_pub(dst);
        }
        for l in written.lanes() {
            self.set_lane_pub(dst, l, result[l]);
        }
        if let Some(t) = self.tracer.as_mut() {
            t.lane_provenance(dst, &provenance);
        }
        self.track_lane_result(dst, a, (mask, &undefined), first_undefined, (op, quad), at);
    }

    #[allow(clippy::too_many_arguments)]
    pub(crate) fn matrix(&mut self, op: MatrixOp, ty: Scalar, dst: &[Reg], args: &[Reg], mats: &[Vec<Reg>], at: AccessId, mask: &Mask) {
        let n = self.n;
        let k = float_kind(ty);
        let es = ty.size() as i64;
        for start in (0..n).step_by(32) {
            let end = (start + 32).min(n);
            if !(start..end).any(|l| mask.get(l)) {
                continue;
            }
            // Element e of the 8x8 matrix lives in the lane and slot
            // `matrix_lane_slot` says.
            let read_mat = |m: &Self, regs: &[Reg]| -> [f32; 64] {
                let mut out = [0f32; 64];
                for (e, o) in out.iter_mut().enumerate() {
                    let (lane, slot) = matrix_lane_slot(e);
                    let l = start + lane;
                    if l < end {
                        *o = f(m.get_pub(regs[slot], l) as u32);
                    }
                }
                out
            };
            let mut result: Option<[f32; 64]> = None;
            match op {
                MatrixOp::Fill => {
                    let v = f(self.get_pub(args[0], start) as u32);
                    result = Some([gpu_math::round_to(k, v); 64]);
                }
                MatrixOp::Diagonal => {
                    let v = gpu_math::round_to(k, f(self.get_pub(args[0], start) as u32));
                    let mut d = [0f32; 64];
                    for i in 0..8 {
                        d[i * 8 + i] = v;
                    }
                    result = Some(d);
                }
                MatrixOp::Multiply | MatrixOp::MultiplyAccumulate => {
                    if self.tracing() {
                        let name = if op == MatrixOp::Multiply { "simdgroup_multiply" } else { "simdgroup_multiply_accumulate" };
                        let lanes = (start..end).filter(|&l| mask.get(l)).map(|l| l as u32).collect();
                        self.trace_exchange(name.to_string(), crate::trace::ExchangeKind::Matrix, lanes, Vec::new(), at);
                    }
                    let a = read_mat(self, &mats[0]);
                    let b = read_mat(self, &mats[1]);
                    let c = if op == MatrixOp::MultiplyAccumulate { read_mat(self, &mats[2]) } else { [0f32; 64] };
                    let mut d = [0f32; 64];
                    for r in 0..8 {
                        for col in 0..8 {
                            let mut acc = c[r * 8 + col];
                            for i in 0..8 {
                                acc += a[r * 8 + i] * b[i * 8 + col];
                            }
                            d[r * 8 + col] = gpu_math::round_to(k, acc);
                        }
                    }
                    result = Some(d);
                }
                MatrixOp::Load { transpose } | MatrixOp::Store { transpose } => {
                    let base = self.get_pub(args[0], start);
                    let stride = self.get_pub(args[1], start) as i64;
                    let (ox, oy) = (self.get_pub(args[2], start) as i64, self.get_pub(args[3], start) as i64);
                    let is_load = matches!(op, MatrixOp::Load { .. });
                    let mut d = if is_load { [0f32; 64] } else { read_mat(self, &mats[0]) };
                    for r in 0..8i64 {
                        for c in 0..8i64 {
                            let (row, col) = if transpose { (oy + c, ox + r) } else { (oy + r, ox + c) };
                            let p = ptr_add(base, (row * stride + col) * es);
                            let (lane, slot) = matrix_lane_slot((r * 8 + c) as usize);
                            let lane = start + lane.min(end - start - 1);
                            if !self.check_lane(p, es as usize, lane, at, !is_load) {
                                continue;
                            }
                            if is_load {
                                if let Some(raw) = self.mem.region(p, lane).and_then(|(b, off)| read_le(b, off, es as usize)) {
                                    d[(r * 8 + c) as usize] = f(from_memory(ty, raw) as u32);
                                }
                                self.observe_lane(p, es as usize, at, lane, MemOp::Read);
                                // Element e lands in register slot e % 2 of its lane.
                                if self.tracing() {
                                    self.trace_access(dst.get(slot).copied(), false, p, es as usize, lane, at);
                                }
                            } else {
                                let v = to_memory(ty, d[(r * 8 + c) as usize].to_bits() as u64);
                                if let Some((b, off)) = self.mem.region_mut(p, lane) {
                                    write_le(b, off, es as usize, v);
                                }
                                self.observe_lane(p, es as usize, at, lane, MemOp::Write);
                                if self.tracing() {
                                    let src = mats.first().and_then(|m| m.get(slot)).copied();
                                    self.trace_access(src, true, p, es as usize, lane, at);
                                }
                            }
                        }
                    }
                    if is_load {
                        result = Some(d);
                    }
                    let _ = &mut d;
                }
            }
            if let Some(m) = result {
                for (slot, &reg) in dst.iter().enumerate().take(2) {
                    self.expand_pub(reg);
                    for l in start..end {
                        let e = matrix_element(l - start, slot);
                        self.set_lane_pub(reg, l, m[e].to_bits() as u64);
                    }
                }
            }
        }
    }
}

/// Combine two lane values for a SIMD-group reduction.
fn reduce(op: LaneOp, ty: Scalar, a: u64, b: u64) -> u64 {
    if ty.is_float() {
        let k = float_kind(ty);
        let (x, y) = (f(a as u32), f(b as u32));
        let r = match op {
            LaneOp::Sum => x + y,
            LaneOp::Product => x * y,
            LaneOp::Min => gpu_math::fmin(x, y),
            LaneOp::Max => gpu_math::fmax(x, y),
            _ => x,
        };
        return gpu_math::round_to(k, r).to_bits() as u64;
    }
    if ty == Scalar::Bool {
        return match op {
            LaneOp::And | LaneOp::Min | LaneOp::Product => a & b & 1,
            LaneOp::Or | LaneOp::Max | LaneOp::Sum => (a | b) & 1,
            LaneOp::Xor => (a ^ b) & 1,
            _ => a,
        };
    }
    let k = int_kind(ty);
    let (x, y) = (to_norm(ty, a), to_norm(ty, b));
    let r = match op {
        LaneOp::Sum => gpu_math::int_op(k, gpu_math::IntOp::Add, x, y),
        LaneOp::Product => gpu_math::int_op(k, gpu_math::IntOp::Mul, x, y),
        LaneOp::Min => int_min(k, x, y),
        LaneOp::Max => int_max(k, x, y),
        LaneOp::And => x & y,
        LaneOp::Or => x | y,
        LaneOp::Xor => x ^ y,
        _ => x,
    };
    from_norm(ty, r)
}

/// The lane of a SIMD-group holding element `e` (row-major) of an 8x8
/// SIMD-group matrix, and which of its two slots (`thread_elements()[slot]`).
/// This is Apple GPUs' layout, the one MLX's steel kernels rely on when they
/// fill fragments through `thread_elements()`: lane `l` holds row
/// `(l / 16) * 4 + (l / 2) % 4`, columns `c` and `c + 1` with
/// `c = ((l / 8) % 2) * 4 + (l % 2) * 2`.
pub fn matrix_lane_slot(e: usize) -> (usize, usize) {
    let (r, c) = (e / 8, e % 8);
    ((r / 4) * 16 + (c / 4) * 8 + (r % 4) * 2 + (c % 4) / 2, c % 2)
}

/// The element (row-major index) lane `lane` holds in `slot`: the inverse
/// of `matrix_lane_slot`.
pub fn matrix_element(lane: usize, slot: usize) -> usize {
    let row = (lane / 16) * 4 + (lane / 2) % 4;
    let col = ((lane / 8) % 2) * 4 + (lane % 2) * 2 + slot;
    row * 8 + col
}

#[cfg(test)]
mod matrix_layout_tests {
    use super::{matrix_element, matrix_lane_slot};

    #[test]
    fn layout_is_a_bijection_matching_apples_coordinates() {
        let mut seen = [false; 64];
        for lane in 0..32 {
            // The coordinates MLX computes for a lane (its `get_coord`).
            let qid = lane / 4;
            let fm = (qid & 4) + (lane / 2) % 4;
            let fn_ = (qid & 2) * 2 + (lane % 2) * 2;
            for slot in 0..2 {
                let e = matrix_element(lane, slot);
                assert_eq!(e, fm * 8 + fn_ + slot);
                assert!(!seen[e]);
                seen[e] = true;
                assert_eq!(matrix_lane_slot(e), (lane, slot));
            }
        }
    }
}
