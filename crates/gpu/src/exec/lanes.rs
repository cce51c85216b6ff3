//! Lane masks and the geometry of the threadgroup being run.

use msl::hir::ThreadAttr;

pub const MAX_LANES: usize = 1024;
const WORDS: usize = MAX_LANES / 64;

/// A set of lanes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Mask {
    pub(crate) w: [u64; WORDS],
}

impl Mask {
    pub fn empty() -> Mask {
        Mask { w: [0; WORDS] }
    }
    #[inline]
    pub fn first(n: usize) -> Mask {
        let mut m = Mask::empty();
        for i in 0..WORDS {
            let lo = i * 64;
            if n >= lo + 64 {
                m.w[i] = !0;
            } else if n > lo {
                m.w[i] = (1u64 << (n - lo)) - 1;
            }
        }
        m
    }
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.w.iter().all(|&x| x == 0)
    }
    #[inline]
    pub fn get(&self, l: usize) -> bool {
        self.w[l >> 6] >> (l & 63) & 1 == 1
    }
    #[inline]
    pub fn set(&mut self, l: usize, v: bool) {
        if v {
            self.w[l >> 6] |= 1 << (l & 63);
        } else {
            self.w[l >> 6] &= !(1 << (l & 63));
        }
    }
    pub fn and(&self, o: &Mask) -> Mask {
        let mut m = *self;
        for i in 0..WORDS {
            m.w[i] &= o.w[i];
        }
        m
    }
    pub fn and_not(&self, o: &Mask) -> Mask {
        let mut m = *self;
        for i in 0..WORDS {
            m.w[i] &= !o.w[i];
        }
        m
    }
    pub fn or(&self, o: &Mask) -> Mask {
        let mut m = *self;
        for i in 0..WORDS {
            m.w[i] |= o.w[i];
        }
        m
    }
    pub fn count(&self) -> u32 {
        self.w.iter().map(|x| x.count_ones()).sum()
    }
    /// Iterate over set lanes in increasing order.
    #[inline]
    pub fn lanes(&self) -> LaneIter<'_> {
        LaneIter { words: &self.w, index: 0, bits: self.w[0] }
    }
}

/// The set lanes of a mask, lowest first.
pub struct LaneIter<'m> {
    words: &'m [u64; WORDS],
    index: usize,
    bits: u64,
}

impl Iterator for LaneIter<'_> {
    type Item = usize;

    #[inline]
    fn next(&mut self) -> Option<usize> {
        while self.bits == 0 {
            self.index += 1;
            if self.index >= WORDS {
                return None;
            }
            self.bits = self.words[self.index];
        }
        let t = self.bits.trailing_zeros() as usize;
        self.bits &= self.bits - 1;
        Some(self.index * 64 + t)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let rest: u32 = self.words.get(self.index + 1..).unwrap_or(&[]).iter().map(|w| w.count_ones()).sum();
        let n = (self.bits.count_ones() + rest) as usize;
        (n, Some(n))
    }
}

/// Geometry of the threadgroup being run.
#[derive(Clone, Copy, Debug, Default)]
pub struct Geometry {
    pub grid_threads: [u32; 3],
    pub groups: [u32; 3],
    pub requested_tg: [u32; 3],
    pub tg_pos: [u32; 3],
    pub tg_size: [u32; 3],
}

impl Geometry {
    /// Where global thread `t` sits in this threadgroup: its position in
    /// the threadgroup and its lane (linear index), or None if it is not here.
    pub fn local_lane(&self, t: [u32; 3]) -> Option<([u32; 3], usize)> {
        let inside = (0..3).all(|d| {
            let lo = self.tg_pos[d] as u64 * self.requested_tg[d] as u64;
            (t[d] as u64) >= lo && (t[d] as u64) < lo + self.tg_size[d] as u64
        });
        inside.then(|| {
            let local = [0, 1, 2].map(|d| t[d] - self.tg_pos[d] * self.requested_tg[d]);
            (local, (local[0] + self.tg_size[0] * (local[1] + self.tg_size[1] * local[2])) as usize)
        })
    }

    /// The threadgroup numbered `linear` (x fastest) of this dispatch;
    /// edge threadgroups of `dispatchThreads` are partial.
    pub fn for_group(&self, linear: u64) -> Geometry {
        let [gx, gy, _] = self.groups.map(|g| g.max(1) as u64);
        // (No division where there is nothing to divide: one row of
        // threadgroups, or one layer, divides nothing; a dispatch runs
        // this once per threadgroup.)
        let split = |v: u64, n: u64| if v < n { (v, 0) } else { (v % n, v / n) };
        let (x, rest) = split(linear, gx);
        let (y, z) = split(rest, gy);
        let pos = [x, y, z].map(|v| v as u32);
        let size = [0, 1, 2].map(|d| self.requested_tg[d].min(self.grid_threads[d].saturating_sub(pos[d] * self.requested_tg[d])));
        Geometry { tg_pos: pos, tg_size: size, ..*self }
    }

    /// Global position of the thread numbered `tid` (threadgroup number
    /// times the threads of a full threadgroup, plus lane, plus one), and
    /// of its threadgroup.
    pub fn thread_of(&self, tid: u32) -> ([u32; 3], [u32; 3]) {
        let t = tid.saturating_sub(1) as u64;
        let stride = self.lanes_requested().max(1) as u64;
        let g = self.for_group(t / stride);
        (g.global((t % stride) as usize), g.tg_pos)
    }

    /// Threads of a full threadgroup.
    pub fn lanes_requested(&self) -> usize {
        self.requested_tg.iter().map(|&x| x as usize).product()
    }

    pub fn lanes(&self) -> usize {
        (self.tg_size[0] * self.tg_size[1] * self.tg_size[2]) as usize
    }

    /// Position of lane `l` within its threadgroup.
    pub fn local(&self, l: usize) -> [u32; 3] {
        let l = l as u32;
        let (x, y) = (self.tg_size[0], self.tg_size[1]);
        [l % x, (l / x) % y, l / (x * y)]
    }

    pub fn global(&self, l: usize) -> [u32; 3] {
        let loc = self.local(l);
        [0, 1, 2].map(|d| self.tg_pos[d] * self.requested_tg[d] + loc[d])
    }

    pub(crate) fn attr(&self, attr: ThreadAttr, comp: u8, l: usize) -> u32 {
        use ThreadAttr::*;
        let c = comp as usize;
        let n = self.lanes() as u32;
        let req = self.requested_tg[0] * self.requested_tg[1] * self.requested_tg[2];
        match attr {
            ThreadPositionInGrid => self.global(l)[c],
            ThreadPositionInThreadgroup => self.local(l)[c],
            ThreadgroupPositionInGrid => self.tg_pos[c],
            ThreadsPerThreadgroup => self.tg_size[c],
            DispatchThreadsPerThreadgroup => self.requested_tg[c],
            ThreadsPerGrid | GridSize => self.grid_threads[c],
            ThreadgroupsPerGrid => self.groups[c],
            GridOrigin => 0,
            ThreadIndexInThreadgroup => l as u32,
            ThreadIndexInSimdgroup => l as u32 % 32,
            ThreadIndexInQuadgroup => l as u32 % 4,
            SimdgroupIndexInThreadgroup => l as u32 / 32,
            SimdgroupsPerThreadgroup => n.div_ceil(32),
            DispatchSimdgroupsPerThreadgroup => req.div_ceil(32),
            QuadgroupIndexInThreadgroup => l as u32 / 4,
            QuadgroupsPerThreadgroup => n.div_ceil(4),
            DispatchQuadgroupsPerThreadgroup => req.div_ceil(4),
            ThreadExecutionWidth | ThreadsPerSimdgroup => 32,
        }
    }
}

/// Whether attribute `a` has one value for the whole threadgroup (the
/// interpreter keeps it in one uniform register; the compiled tier reads it
/// once per threadgroup).
pub fn uniform_attr(a: ThreadAttr) -> bool {
    use ThreadAttr::*;
    matches!(
        a,
        ThreadgroupPositionInGrid
            | ThreadsPerThreadgroup
            | DispatchThreadsPerThreadgroup
            | ThreadsPerGrid
            | GridSize
            | ThreadgroupsPerGrid
            | GridOrigin
            | SimdgroupsPerThreadgroup
            | DispatchSimdgroupsPerThreadgroup
            | QuadgroupsPerThreadgroup
            | DispatchQuadgroupsPerThreadgroup
            | ThreadExecutionWidth
            | ThreadsPerSimdgroup
    )
}

#[cfg(test)]
mod tests {
    use super::Geometry;

    /// Threadgroup positions from the linear number, x fastest, for grids
    /// of one row, one layer and three dimensions.
    #[test]
    fn threadgroups_in_order() {
        for groups in [[7, 1, 1], [3, 4, 1], [2, 3, 5], [1, 1, 6], [1, 5, 2]] {
            let g = Geometry { grid_threads: groups.map(|n| n * 2), groups, requested_tg: [2; 3], tg_pos: [0; 3], tg_size: [2; 3] };
            let mut linear = 0;
            for z in 0..groups[2] {
                for y in 0..groups[1] {
                    for x in 0..groups[0] {
                        assert_eq!(g.for_group(linear).tg_pos, [x, y, z], "{groups:?}, {linear}");
                        linear += 1;
                    }
                }
            }
        }
    }
}
