//! Register access: per-lane and uniform values, maps over the active
//! lanes, address computation.

use super::{Machine, Mask};
use crate::findings::FindingKind;
use crate::ir::*;
use crate::memory::{ptr_add, AllocKind};
use msl::types::Scalar;

impl<'k> Machine<'k> {
    #[inline]
    pub(super) fn get(&self, r: Reg, l: usize) -> u64 {
        match r {
            Reg::W32(i) => {
                let i = i as usize;
                let l = if self.u32f[i] { 0 } else { l };
                self.r32[i * self.stride + l] as u64
            }
            Reg::W64(i) => {
                let i = i as usize;
                let l = if self.u64f[i] { 0 } else { l };
                self.r64[i * self.stride + l]
            }
        }
    }

    #[inline]
    pub(super) fn is_uniform(&self, r: Reg) -> bool {
        match r {
            Reg::W32(i) => self.u32f[i as usize],
            Reg::W64(i) => self.u64f[i as usize],
        }
    }

    /// Make a register per-lane (copy its uniform value into every lane).
    pub(super) fn expand(&mut self, r: Reg) {
        let n = self.n;
        match r {
            Reg::W32(i) => {
                let i = i as usize;
                if self.u32f[i] {
                    let base = i * self.stride;
                    let v = self.r32[base];
                    self.r32[base..base + n].fill(v);
                    self.u32f[i] = false;
                }
            }
            Reg::W64(i) => {
                let i = i as usize;
                if self.u64f[i] {
                    let base = i * self.stride;
                    let v = self.r64[base];
                    self.r64[base..base + n].fill(v);
                    self.u64f[i] = false;
                }
            }
        }
    }

    #[inline]
    fn set_lane(&mut self, r: Reg, l: usize, v: u64) {
        match r {
            Reg::W32(i) => self.r32[i as usize * self.stride + l] = v as u32,
            Reg::W64(i) => self.r64[i as usize * self.stride + l] = v,
        }
    }

    pub(super) fn set_uniform(&mut self, r: Reg, v: u64) {
        match r {
            Reg::W32(i) => {
                self.r32[i as usize * self.stride] = v as u32;
                self.u32f[i as usize] = true;
            }
            Reg::W64(i) => {
                self.r64[i as usize * self.stride] = v;
                self.u64f[i as usize] = true;
            }
        }
    }

    /// Write `f(lane)` to `dst` for the lanes in `mask` (others keep their value).
    pub(super) fn write_masked(&mut self, dst: Reg, mask: &Mask, full: bool, f: impl Fn(&Self, usize) -> u64) {
        if full {
            // Every live lane is written: no need to keep old values.
            match dst {
                Reg::W32(i) => self.u32f[i as usize] = false,
                Reg::W64(i) => self.u64f[i as usize] = false,
            }
            for l in 0..self.n {
                let v = f(self, l);
                self.set_lane(dst, l, v);
            }
        } else {
            self.expand(dst);
            for l in mask.lanes() {
                let v = f(self, l);
                self.set_lane(dst, l, v);
            }
        }
    }

    /// Dense unary op on 32-bit registers (computes every lane, or once if uniform).
    #[inline]
    pub(crate) fn map1_32(&mut self, d: u32, a: Reg, f: impl Fn(u32) -> u32) {
        let Reg::W32(a) = a else { return self.map_generic(Reg::W32(d), &[a], |v| f(v[0] as u32) as u64) };
        let (d, a) = (d as usize, a as usize);
        let s = self.stride;
        if self.u32f[a] {
            self.r32[d * s] = f(self.r32[a * s]);
            self.u32f[d] = true;
            return;
        }
        self.u32f[d] = false;
        let n = self.n;
        if d == a {
            for l in 0..n {
                self.r32[d * s + l] = f(self.r32[a * s + l]);
            }
            return;
        }
        let (src, dst) = if a < d {
            let (lo, hi) = self.r32.split_at_mut(d * s);
            (&lo[a * s..a * s + n], &mut hi[..n])
        } else {
            let (lo, hi) = self.r32.split_at_mut(a * s);
            (&hi[..n], &mut lo[d * s..d * s + n])
        };
        for (o, &x) in dst.iter_mut().zip(src) {
            *o = f(x);
        }
    }

    /// Dense binary op on 32-bit registers.
    #[inline]
    pub(crate) fn map2_32(&mut self, d: u32, a: Reg, b: Reg, f: impl Fn(u32, u32) -> u32) {
        let (Reg::W32(a), Reg::W32(b)) = (a, b) else {
            return self.map_generic(Reg::W32(d), &[a, b], |v| f(v[0] as u32, v[1] as u32) as u64);
        };
        let (d, a, b) = (d as usize, a as usize, b as usize);
        let s = self.stride;
        let n = self.n;
        let (ua, ub) = (self.u32f[a], self.u32f[b]);
        if ua && ub {
            self.r32[d * s] = f(self.r32[a * s], self.r32[b * s]);
            self.u32f[d] = true;
            return;
        }
        self.u32f[d] = false;
        // Gather inputs into fixed buffers to keep borrows simple and loops tight.
        let mut out = std::mem::take(&mut self.scratch32());
        out.clear();
        {
            let ra = &self.r32[a * s..a * s + n];
            let rb = &self.r32[b * s..b * s + n];
            match (ua, ub) {
                (true, false) => {
                    let x = ra[0];
                    out.extend(rb.iter().map(|&y| f(x, y)));
                }
                (false, true) => {
                    let y = rb[0];
                    out.extend(ra.iter().map(|&x| f(x, y)));
                }
                _ => out.extend(ra.iter().zip(rb).map(|(&x, &y)| f(x, y))),
            }
        }
        self.r32[d * s..d * s + n].copy_from_slice(&out);
        self.put_scratch32(out);
    }

    // Crate-visible register helpers for `ops`.
    #[inline]
    pub(crate) fn get_pub(&self, r: Reg, l: usize) -> u64 {
        self.get(r, l)
    }
    #[inline]
    pub(crate) fn is_uniform_pub(&self, r: Reg) -> bool {
        self.is_uniform(r)
    }
    pub(crate) fn set_uniform_pub(&mut self, r: Reg, v: u64) {
        self.set_uniform(r, v)
    }
    #[inline]
    pub(crate) fn set_lane_pub(&mut self, r: Reg, l: usize, v: u64) {
        self.set_lane(r, l, v)
    }
    pub(crate) fn expand_pub(&mut self, r: Reg) {
        self.expand(r)
    }
    /// Declare that every lane of `r` is about to be written.
    pub(crate) fn mark_varying(&mut self, r: Reg) {
        match r {
            Reg::W32(i) => self.u32f[i as usize] = false,
            Reg::W64(i) => self.u64f[i as usize] = false,
        }
    }
    pub(crate) fn is_full(&self, mask: &Mask) -> bool {
        self.full(mask)
    }

    /// When the race checker is on and every lane of `mask` (two or more)
    /// stores the same value to the same shared address: the first lane and
    /// the others. Their stores race only formally (the memory ends up the
    /// same whichever lands last), so `store` performs them as one store
    /// and reports a warning instead of a write-write race.
    pub(crate) fn agreeing_store(&self, src: Reg, ptr: Reg, mask: &Mask) -> Option<(usize, Mask)> {
        self.san.as_ref().filter(|s| s.races)?;
        let mut lanes = mask.lanes();
        let first = lanes.next()?;
        let (p0, v0) = (self.get(ptr, first), self.get(src, first));
        if matches!(crate::memory::ptr_alloc(p0).kind(), AllocKind::Private(_) | AllocKind::Constant(_)) {
            return None;
        }
        let uniform = self.is_uniform(ptr) && self.is_uniform(src);
        let mut rest = Mask::empty();
        for l in lanes {
            if !uniform && (self.get(ptr, l) != p0 || self.get(src, l) != v0) {
                return None;
            }
            rest.set(l, true);
        }
        (!rest.is_empty()).then_some((first, rest))
    }

    /// The other lanes of an agreeing store (see [`Self::agreeing_store`]):
    /// counted as writes, and reported once as a warning-level race.
    pub(crate) fn note_agreeing_store(&mut self, ptr: Reg, at: AccessId, first: usize, rest: &Mask) {
        let p = self.get(ptr, first);
        let kind = crate::memory::ptr_alloc(p).kind();
        self.count_lanes(rest, |c| c.access(kind, true, false));
        if !self.san.as_ref().is_some_and(|s| s.observes(kind)) {
            return;
        }
        let Some(second) = rest.lanes().next() else { return };
        let what = self.k.accesses.get(at as usize).map(|a| a.what.clone()).unwrap_or_default();
        let (n, first_t) = (rest.count() + 1, self.geo.global(first));
        let f = self.report_lane(
            FindingKind::DataRace,
            at,
            second,
            format!(
                "formal data race whose stores agree: {n} threads (the first {}) store the same value to `{what}` (byte offset {}) at once",
                crate::findings::xyz(first_t),
                crate::memory::ptr_offset(p)
            ),
        );
        f.is_error = false;
        if f.notes.is_empty() {
            f.notes.push("the value stored is the same whichever thread lands last, so the result is well defined in practice; Metal's memory model still calls unordered stores a race: to be strictly correct, let one thread store (e.g. `if (thread_index_in_simdgroup == 0)`)".into());
        }
    }

    /// `dst = ptr + index * scale`, the address computation of every array
    /// access: kept as a tight loop over lanes.
    pub(super) fn ptr_index(&mut self, dst: Reg, ptr: Reg, index: Reg, ity: Scalar, scale: i64) {
        let (Reg::W64(d), Reg::W64(p)) = (dst, ptr) else { return };
        let (d, p, s, n) = (d as usize, p as usize, self.stride, self.n);
        let pu = self.u64f[p];
        let Reg::W32(i) = index else {
            return self.map_generic(dst, &[ptr, index], |v| ptr_add(v[0], index_value(ity, v[1]).wrapping_mul(scale)));
        };
        let i = i as usize;
        let iu = self.u32f[i];
        let signed = ity.is_signed();
        let idx = move |v: u32| if signed { v as i32 as i64 } else { v as i64 };
        if pu && iu {
            self.r64[d * s] = ptr_add(self.r64[p * s], idx(self.r32[i * s]).wrapping_mul(scale));
            self.u64f[d] = true;
            return;
        }
        self.u64f[d] = false;
        let indices = &self.r32[i * s..i * s + n];
        if pu {
            let p0 = self.r64[p * s];
            let out = &mut self.r64[d * s..d * s + n];
            for (o, &iv) in out.iter_mut().zip(indices) {
                *o = ptr_add(p0, idx(iv).wrapping_mul(scale));
            }
        } else if d != p {
            let (src, out) = if p < d {
                let (lo, hi) = self.r64.split_at_mut(d * s);
                (&lo[p * s..p * s + n], &mut hi[..n])
            } else {
                let (lo, hi) = self.r64.split_at_mut(p * s);
                (&hi[..n], &mut lo[d * s..d * s + n])
            };
            if iu {
                let delta = idx(indices[0]).wrapping_mul(scale);
                for (o, &pv) in out.iter_mut().zip(src) {
                    *o = ptr_add(pv, delta);
                }
            } else {
                for ((o, &pv), &iv) in out.iter_mut().zip(src).zip(indices) {
                    *o = ptr_add(pv, idx(iv).wrapping_mul(scale));
                }
            }
        } else {
            for l in 0..n {
                let iv = if iu { self.r32[i * s] } else { self.r32[i * s + l] };
                self.r64[d * s + l] = ptr_add(self.r64[p * s + l], idx(iv).wrapping_mul(scale));
            }
        }
    }

    fn scratch32(&mut self) -> Vec<u32> {
        std::mem::take(&mut self.scratch)
    }

    fn put_scratch32(&mut self, v: Vec<u32>) {
        self.scratch = v;
    }

    /// Slow path for ops mixing register widths: lane by lane.
    pub(crate) fn map_generic(&mut self, dst: Reg, srcs: &[Reg], f: impl Fn(&[u64]) -> u64) {
        let mut vals = [0u64; 4];
        if srcs.iter().all(|&r| self.is_uniform(r)) {
            for (i, &r) in srcs.iter().enumerate() {
                vals[i] = self.get(r, 0);
            }
            let v = f(&vals[..srcs.len()]);
            self.set_uniform(dst, v);
            return;
        }
        let mut out = Vec::with_capacity(self.n);
        for l in 0..self.n {
            for (i, &r) in srcs.iter().enumerate() {
                vals[i] = self.get(r, l);
            }
            out.push(f(&vals[..srcs.len()]));
        }
        match dst {
            Reg::W32(i) => self.u32f[i as usize] = false,
            Reg::W64(i) => self.u64f[i as usize] = false,
        }
        for (l, v) in out.into_iter().enumerate() {
            self.set_lane(dst, l, v);
        }
    }
}

/// Mask for comparing values of a type's width (switch cases).
pub fn width_mask(s: Scalar) -> u64 {
    match s.size() {
        8 => u64::MAX,
        n => (1u64 << (n * 8)) - 1,
    }
}

/// An index register value as a signed 64-bit count.
#[inline]
pub fn index_value(ty: Scalar, bits: u64) -> i64 {
    match ty {
        Scalar::Long | Scalar::ULong => bits as i64,
        s if s.is_signed() => bits as u32 as i32 as i64,
        _ => bits as u32 as i64,
    }
}
