//! Memory: loads, stores, block copies, atomics and barriers. Every access
//! is checked and observed through `access.rs`; the code here only moves
//! the data, fast when the lanes allow it.

use super::{f, from_memory, from_norm, int_kind, int_max, int_min, to_memory, to_norm};
use crate::access::MemOp;
use crate::exec::{Machine, Mask};
use crate::ir::*;
use crate::memory::{ptr_offset, read_le, write_le, AllocKind};
use msl::types::Scalar;

/// The offset part of a pointer (`memory.rs`).
const OFFSET_BITS: u64 = (1 << 40) - 1;

impl Machine<'_> {
    pub(crate) fn load(&mut self, dst: Reg, ty: Scalar, ptr: Reg, at: AccessId, mask: &Mask) {
        let size = ty.size() as usize;
        let checked = self.check_lanes(ptr, size, mask, at, false);
        let ok = checked.ok;
        let full = self.is_full(mask);
        let Some(first) = ok.lanes().next() else {
            // Every lane faulted: its value is 0 (after the finding).
            self.write_zero(dst, mask, full);
            return;
        };
        let p0 = self.get_pub(ptr, first);
        let shared = !matches!(crate::memory::ptr_alloc(p0).kind(), AllocKind::Private(_));
        let fast = checked.one_allocation && shared && !self.tracing();
        // One shared location read by every lane: load once.
        if fast && full && self.is_uniform_pub(ptr) {
            let raw = self.mem.region(p0, first).and_then(|(b, off)| read_le(b, off, size)).unwrap_or(0);
            self.observe_lanes(ptr, size, at, mask, MemOp::Read, true);
            self.set_uniform_pub(dst, from_memory(ty, raw));
            return;
        }
        if full {
            self.mark_varying(dst);
        } else {
            self.expand_pub(dst);
        }
        for l in mask.and_not(&ok).lanes() {
            self.set_lane_pub(dst, l, 0);
        }
        // 32-bit values, every lane checked and in one allocation: a block
        // copy when the lanes read consecutive words (`a[i]`), else a gather.
        if let (Reg::W32(d), Reg::W64(pr), 4, true) = (dst, ptr, size, fast) {
            if let Some((bytes, _)) = self.mem.region(p0, first) {
                let (s, d, pr, n) = (self.stride, d as usize, pr as usize, self.n);
                let pu = self.u64f[pr];
                let all = first == 0 && ok.count() as usize == n;
                let off0 = ptr_offset(p0) as usize;
                let word = |p: u64| {
                    let o = (p & OFFSET_BITS) as usize;
                    bytes.get(o..o + 4).map_or(0, |w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
                };
                if all && !pu && consecutive(&self.r64[pr * s..pr * s + n], p0, 4) {
                    if let Some(src) = bytes.get(off0..off0 + 4 * n) {
                        words_from_bytes(&mut self.r32[d * s..d * s + n], src);
                    }
                } else if all && !pu {
                    let (ptrs, outs) = (&self.r64[pr * s..pr * s + n], &mut self.r32[d * s..d * s + n]);
                    for (o, &p) in outs.iter_mut().zip(ptrs) {
                        *o = word(p);
                    }
                } else {
                    for l in ok.lanes() {
                        self.r32[d * s + l] = word(if pu { p0 } else { self.r64[pr * s + l] });
                    }
                }
                self.observe_lanes(ptr, size, at, &ok, MemOp::Read, checked.one_allocation);
                return;
            }
        }
        for l in ok.lanes() {
            self.load_lane(dst, ty, ptr, at, l);
        }
        self.observe_lanes(ptr, size, at, &ok, MemOp::Read, checked.one_allocation);
    }

    /// `dst = 0` in the lanes of `mask` (faulted loads).
    fn write_zero(&mut self, dst: Reg, mask: &Mask, full: bool) {
        if full {
            self.set_uniform_pub(dst, 0);
        } else {
            self.expand_pub(dst);
            for l in mask.lanes() {
                self.set_lane_pub(dst, l, 0);
            }
        }
    }

    /// One lane's load, already checked.
    fn load_lane(&mut self, dst: Reg, ty: Scalar, ptr: Reg, at: AccessId, l: usize) {
        let size = ty.size() as usize;
        let p = self.get_pub(ptr, l);
        let raw = self.mem.region(p, l).and_then(|(b, off)| read_le(b, off, size)).unwrap_or(0);
        self.set_lane_pub(dst, l, from_memory(ty, raw));
        if self.tracing() {
            self.trace_access(Some(dst), false, p, size, l, at);
        }
    }

    pub(crate) fn store(&mut self, src: Reg, ty: Scalar, ptr: Reg, at: AccessId, mask: &Mask) {
        // Every lane storing one value to one place: one store, and a warning.
        if let Some((first, rest)) = self.agreeing_store(src, ptr, mask) {
            let mut one = Mask::empty();
            one.set(first, true);
            self.store(src, ty, ptr, at, &one);
            self.note_agreeing_store(ptr, at, first, &rest);
            return;
        }
        let size = ty.size() as usize;
        let checked = self.check_lanes(ptr, size, mask, at, true);
        let ok = checked.ok;
        let Some(first) = ok.lanes().next() else { return };
        let p0 = self.get_pub(ptr, first);
        let shared = !matches!(crate::memory::ptr_alloc(p0).kind(), AllocKind::Private(_));
        // 32-bit values, every lane checked and in one allocation: a block
        // copy when the lanes write consecutive words, else a scatter.
        if let (Reg::W32(sr), Reg::W64(pr), 4, true) = (src, ptr, size, checked.one_allocation && shared && !self.tracing()) {
            let (s, sr, pr, n) = (self.stride, sr as usize, pr as usize, self.n);
            let (su, pu) = (self.u32f[sr], self.u64f[pr]);
            let all = first == 0 && ok.count() as usize == n;
            let Machine { mem, r32, r64, .. } = self;
            if let Some((bytes, _)) = mem.region_mut(p0, first) {
                let off0 = ptr_offset(p0) as usize;
                let value = |l: usize| r32[sr * s + if su { 0 } else { l }];
                let block = all && !pu && consecutive(&r64[pr * s..pr * s + n], p0, 4) && off0 + 4 * n <= bytes.len();
                let mut put = |p: u64, v: u32| {
                    let o = (p & OFFSET_BITS) as usize;
                    if let Some(w) = bytes.get_mut(o..o + 4) {
                        w.copy_from_slice(&v.to_le_bytes());
                    }
                };
                if block {
                    let dst = &mut bytes[off0..off0 + 4 * n];
                    if su {
                        let v = r32[sr * s].to_le_bytes();
                        for c in dst.chunks_exact_mut(4) {
                            c.copy_from_slice(&v);
                        }
                    } else {
                        bytes_from_words(dst, &r32[sr * s..sr * s + n]);
                    }
                } else if all && !pu {
                    for (l, &p) in r64[pr * s..pr * s + n].iter().enumerate() {
                        put(p, value(l));
                    }
                } else {
                    for l in ok.lanes() {
                        put(if pu { p0 } else { r64[pr * s + l] }, value(l));
                    }
                }
                self.observe_lanes(ptr, size, at, &ok, MemOp::Write, checked.one_allocation);
                return;
            }
        }
        for l in ok.lanes() {
            self.store_lane(src, ty, ptr, at, l);
        }
        self.observe_lanes(ptr, size, at, &ok, MemOp::Write, checked.one_allocation);
    }

    /// One lane's store, already checked.
    fn store_lane(&mut self, src: Reg, ty: Scalar, ptr: Reg, at: AccessId, l: usize) {
        let size = ty.size() as usize;
        let p = self.get_pub(ptr, l);
        let bits = self.get_pub(src, l);
        if let Some((b, off)) = self.mem.region_mut(p, l) {
            write_le(b, off, size, to_memory(ty, bits));
        }
        if self.tracing() {
            self.trace_access_value(Some(src), Some((ty, bits)), true, p, size, l, at);
        }
    }

    /// Copy a `bytes`-byte value whose type is aligned to `align`.
    pub(crate) fn memcopy(&mut self, dst: Reg, src: Reg, bytes: u32, align: u32, at: AccessId, mask: &Mask) {
        let n = bytes as usize;
        let align = align as usize;
        let mut buf = vec![0u8; n];
        for l in mask.lanes() {
            let (s, d) = (self.get_pub(src, l), self.get_pub(dst, l));
            if !self.check_lane_aligned(s, n, align, l, at, false) || !self.check_lane_aligned(d, n, align, l, at, true) {
                continue;
            }
            if let Some((b, off)) = self.mem.region(s, l) {
                buf.copy_from_slice(&b[off as usize..off as usize + n]);
            }
            if let Some((b, off)) = self.mem.region_mut(d, l) {
                b[off as usize..off as usize + n].copy_from_slice(&buf);
            }
            // A copy carries its source's initialization state (a struct's
            // padding, never written, is copied, not read).
            let src_init = self.private_init_bits(s, n, l);
            if src_init.is_some() {
                self.set_private_init_bits(s, l, &vec![true; n]);
            }
            self.observe_lane(s, n, at, l, MemOp::Read);
            self.observe_lane(d, n, at, l, MemOp::Write);
            if let Some(bits) = src_init {
                self.set_private_init_bits(s, l, &bits);
                self.set_private_init_bits(d, l, &bits);
            }
            if self.tracing() {
                self.trace_access(None, true, d, n, l, at);
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    pub(crate) fn atomic(&mut self, op: AtomicOp, ty: Scalar, dst: Reg, ptr: Reg, a: Reg, b: Reg, at: AccessId, mask: &Mask) {
        let size = ty.size() as usize;
        let checked = self.check_lanes(ptr, size, mask, at, op != AtomicOp::Load);
        let ok = checked.ok;
        if !self.is_full(mask) {
            self.expand_pub(dst);
        } else {
            self.mark_varying(dst);
        }
        for l in mask.and_not(&ok).lanes() {
            self.set_lane_pub(dst, l, 0);
        }
        if ok.is_empty() {
            return;
        }
        // Lanes in order: atomics are applied one thread at a time,
        // deterministically.
        if op != AtomicOp::CompareExchange && !self.tracing() && self.atomic_block(op, ty, dst, ptr, a, &ok) {
            self.observe_lanes(ptr, size, at, &ok, MemOp::Atomic(op), checked.one_allocation);
            return;
        }
        if let Some(t) = self.tracer.as_mut() {
            t.atomic = true;
        }
        for l in self.atomic_lanes(&ok) {
            let p = self.get_pub(ptr, l);
            let old = self.mem.region(p, l).and_then(|(bts, off)| read_le(bts, off, size)).map(|raw| from_memory(ty, raw)).unwrap_or(0);
            let x = self.get_pub(a, l);
            let (new, result) = match op {
                AtomicOp::CompareExchange => {
                    // `a` points at the expected value in thread memory.
                    let exp_ptr = x;
                    let expected =
                        self.mem.region(exp_ptr, l).and_then(|(bts, off)| read_le(bts, off, size)).map(|r| from_memory(ty, r)).unwrap_or(0);
                    let desired = self.get_pub(b, l);
                    if expected == old {
                        (Some(desired), 1)
                    } else {
                        if let Some((bts, off)) = self.mem.region_mut(exp_ptr, l) {
                            write_le(bts, off, size, to_memory(ty, old));
                        }
                        (None, 0)
                    }
                }
                _ => atomic_update(op, ty, old, x),
            };
            if let Some(v) = new {
                if let Some((bts, off)) = self.mem.region_mut(p, l) {
                    write_le(bts, off, size, to_memory(ty, v));
                }
            }
            self.set_lane_pub(dst, l, result);
            if self.tracing() {
                self.trace_access(Some(dst), false, p, size, l, at);
                if new.is_some() {
                    self.trace_access(Some(a), true, p, size, l, at);
                }
            }
        }
        if let Some(t) = self.tracer.as_mut() {
            t.atomic = false;
        }
        // Atomics never race with each other, so recording them after the
        // loop, in lane order, finds exactly what recording each in turn would.
        self.observe_lanes(ptr, size, at, &ok, MemOp::Atomic(op), checked.one_allocation);
    }

    /// The lanes of `mask` in the order their atomics are applied.
    fn atomic_lanes(&self, mask: &Mask) -> Vec<usize> {
        let mut lanes: Vec<usize> = mask.lanes().collect();
        if self.atomics_last_lane_first {
            lanes.reverse();
        }
        lanes
    }

    /// Atomics of all lanes (already checked) on one shared allocation: the
    /// allocation is looked up once. Returns false (nothing done) when the
    /// lanes' pointers are not all in one such allocation.
    #[allow(clippy::too_many_arguments)]
    fn atomic_block(&mut self, op: AtomicOp, ty: Scalar, dst: Reg, ptr: Reg, a: Reg, mask: &Mask) -> bool {
        let size = ty.size() as usize;
        let Some(first) = mask.lanes().next() else { return true };
        let p0 = self.get_pub(ptr, first);
        let alloc = crate::memory::ptr_alloc(p0);
        if matches!(alloc.kind(), AllocKind::Private(_)) {
            return false;
        }
        let (s, n) = (self.stride, self.n);
        let lanes = self.atomic_lanes(mask);
        let Machine { mem, r32, r64, u32f, u64f, .. } = self;
        // Register `r` of lane `l`, from the register file borrowed apart from memory.
        let get = |r: Reg, l: usize| -> u64 {
            match r {
                Reg::W32(i) => r32[i as usize * s + if u32f[i as usize] { 0 } else { l }] as u64,
                Reg::W64(i) => r64[i as usize * s + if u64f[i as usize] { 0 } else { l }],
            }
        };
        let all_lanes = first == 0 && mask.count() as usize == n;
        let same = match ptr {
            Reg::W64(pr) if all_lanes && !u64f[pr as usize] => crate::memory::all_in(&r64[pr as usize * s..pr as usize * s + n], alloc),
            _ => mask.lanes().all(|l| crate::memory::ptr_alloc(get(ptr, l)) == alloc),
        };
        if !same {
            return false;
        }
        let mut results = Vec::with_capacity(mask.count() as usize);
        let Some((bytes, _)) = mem.region_mut(p0, first) else { return false };
        // 32-bit integer read-modify-writes (counters, histograms): the
        // operation picked once, the word read and written in place.
        let int32: Option<fn(u32, u32) -> u32> = match (op, ty) {
            (_, Scalar::UInt | Scalar::Int) if size == 4 => match op {
                AtomicOp::Add => Some(u32::wrapping_add),
                AtomicOp::Sub => Some(u32::wrapping_sub),
                AtomicOp::And => Some(|a, b| a & b),
                AtomicOp::Or => Some(|a, b| a | b),
                AtomicOp::Xor => Some(|a, b| a ^ b),
                AtomicOp::Min if ty == Scalar::UInt => Some(u32::min),
                AtomicOp::Max if ty == Scalar::UInt => Some(u32::max),
                AtomicOp::Min => Some(|a, b| (a as i32).min(b as i32) as u32),
                AtomicOp::Max => Some(|a, b| (a as i32).max(b as i32) as u32),
                _ => None,
            },
            _ => None,
        };
        for l in lanes {
            let (p, x) = (get(ptr, l), get(a, l));
            let off = ptr_offset(p);
            if let Some(f) = int32 {
                let Some(w) = usize::try_from(off).ok().and_then(|o| bytes.get_mut(o..o.checked_add(4)?)) else { continue };
                let old = u32::from_le_bytes([w[0], w[1], w[2], w[3]]);
                w.copy_from_slice(&f(old, x as u32).to_le_bytes());
                results.push((l, old as u64));
                continue;
            }
            let Some(raw) = read_le(bytes, off, size) else { continue };
            let (new, result) = atomic_update(op, ty, from_memory(ty, raw), x);
            if let Some(v) = new {
                write_le(bytes, off, size, to_memory(ty, v));
            }
            results.push((l, result));
        }
        for (l, r) in results {
            self.set_lane_pub(dst, l, r);
        }
        true
    }

    pub(crate) fn barrier(&mut self, simdgroup: bool, flags: u32, at: AccessId, mask: &Mask) {
        let all = Mask::first(self.n);
        if simdgroup {
            // Every thread of each SIMD-group that has an arriving thread.
            for g in 0..self.n.div_ceil(32) {
                let group = Mask::first((g + 1) * 32).and_not(&Mask::first(g * 32)).and(&all);
                let arrived = mask.and(&group);
                if !arrived.is_empty() && arrived != group {
                    self.divergence(at, &arrived, &group, true);
                    break;
                }
            }
        } else if *mask != all {
            self.divergence(at, mask, &all, false);
        }
        self.on_barrier(simdgroup, flags, at);
    }
}

/// The value an atomic leaves in memory (if it writes) and the one it
/// returns, for every operation but compare-exchange.
#[inline]
fn atomic_update(op: AtomicOp, ty: Scalar, old: u64, x: u64) -> (Option<u64>, u64) {
    match op {
        AtomicOp::Load => (None, old),
        AtomicOp::Store => (Some(x), 0),
        AtomicOp::Exchange => (Some(x), old),
        _ => (Some(atomic_arith(op, ty, old, x)), old),
    }
}

#[inline]
fn atomic_arith(op: AtomicOp, ty: Scalar, old: u64, x: u64) -> u64 {
    if ty.is_float() {
        let (a, b) = (f(old as u32), f(x as u32));
        let r = match op {
            AtomicOp::Add => a + b,
            AtomicOp::Sub => a - b,
            AtomicOp::Min => a.min(b),
            AtomicOp::Max => a.max(b),
            _ => a,
        };
        return r.to_bits() as u64;
    }
    let k = int_kind(ty);
    let (a, b) = (to_norm(ty, old), to_norm(ty, x));
    let r = match op {
        AtomicOp::Add => gpu_math::int_op(k, gpu_math::IntOp::Add, a, b),
        AtomicOp::Sub => gpu_math::int_op(k, gpu_math::IntOp::Sub, a, b),
        AtomicOp::And => a & b,
        AtomicOp::Or => a | b,
        AtomicOp::Xor => a ^ b,
        AtomicOp::Min => int_min(k, a, b),
        AtomicOp::Max => int_max(k, a, b),
        _ => a,
    };
    from_norm(ty, r)
}

/// Whether `ptrs[l] == p0 + step * l` for every lane: consecutive lanes
/// touching consecutive elements. The caller has checked that the whole
/// range lies in the allocation, so plain addition cannot leave it. Checked
/// a SIMD-group at a time without early exits inside, which vectorizes.
#[inline]
fn consecutive(ptrs: &[u64], p0: u64, step: u64) -> bool {
    let mut expect = p0;
    for chunk in ptrs.chunks(32) {
        let mut diff = 0u64;
        for (i, &p) in chunk.iter().enumerate() {
            diff |= p ^ expect.wrapping_add(step * i as u64);
        }
        if diff != 0 {
            return false;
        }
        expect = expect.wrapping_add(step * chunk.len() as u64);
    }
    true
}

/// Little-endian 32-bit words from bytes (`src.len() == 4 * out.len()`).
#[inline]
fn words_from_bytes(out: &mut [u32], src: &[u8]) {
    for (i, o) in out.iter_mut().enumerate() {
        let b: [u8; 4] = src[4 * i..4 * i + 4].try_into().unwrap_or([0; 4]);
        *o = u32::from_le_bytes(b);
    }
}

/// Bytes of little-endian 32-bit words (`dst.len() == 4 * words.len()`).
#[inline]
fn bytes_from_words(dst: &mut [u8], words: &[u32]) {
    for (i, w) in words.iter().enumerate() {
        dst[4 * i..4 * i + 4].copy_from_slice(&w.to_le_bytes());
    }
}
