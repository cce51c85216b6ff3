//! Memory of the simulated GPU: allocations and pointer encoding.
//!
//! A pointer is 64 bits: the allocation id in the top 24 bits and a signed
//! 40-bit byte offset below. The address space is known statically from the
//! pointer's type, so it is not stored. Each thread-private variable is its
//! own allocation whose bytes exist once per lane; a private pointer means
//! "this variable, in the memory of the lane that dereferences it".

use std::borrow::Cow;

const OFFSET_BITS: u32 = 40;
const OFFSET_MASK: u64 = (1 << OFFSET_BITS) - 1;

/// Identifies an allocation. Ranges: buffers by `[[buffer(n)]]` index,
/// `[[threadgroup(n)]]` buffers, program constants, threadgroup variables,
/// private variables.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct AllocId(pub u32);

const BUFFER_BASE: u32 = 1;
const TG_BUFFER_BASE: u32 = 64;
const CONSTANT_BASE: u32 = 1 << 10;
const THREADGROUP_BASE: u32 = 1 << 20;
const PRIVATE_BASE: u32 = 1 << 21;
const PRIVATE_END: u32 = 1 << 23;

/// What an allocation id refers to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AllocKind {
    Null,
    Buffer(u32),
    ThreadgroupBuffer(u32),
    Constant(u32),
    Threadgroup(u32),
    Private(u32),
    Invalid,
}

impl AllocId {
    pub fn buffer(index: u32) -> AllocId {
        AllocId(BUFFER_BASE + index)
    }
    pub fn tg_buffer(index: u32) -> AllocId {
        AllocId(TG_BUFFER_BASE + index)
    }
    pub fn constant(i: u32) -> AllocId {
        AllocId(CONSTANT_BASE + i)
    }
    pub fn threadgroup(i: u32) -> AllocId {
        AllocId(THREADGROUP_BASE + i)
    }
    pub fn private(i: u32) -> AllocId {
        AllocId(PRIVATE_BASE + i)
    }

    pub fn kind(self) -> AllocKind {
        let id = self.0;
        match id {
            0 => AllocKind::Null,
            _ if id < TG_BUFFER_BASE => AllocKind::Buffer(id - BUFFER_BASE),
            _ if id < TG_BUFFER_BASE + 64 => AllocKind::ThreadgroupBuffer(id - TG_BUFFER_BASE),
            _ if (CONSTANT_BASE..THREADGROUP_BASE).contains(&id) => AllocKind::Constant(id - CONSTANT_BASE),
            _ if (THREADGROUP_BASE..PRIVATE_BASE).contains(&id) => AllocKind::Threadgroup(id - THREADGROUP_BASE),
            _ if (PRIVATE_BASE..PRIVATE_END).contains(&id) => AllocKind::Private(id - PRIVATE_BASE),
            _ => AllocKind::Invalid,
        }
    }
}

pub fn ptr_bits(alloc: AllocId, offset: i64) -> u64 {
    ((alloc.0 as u64) << OFFSET_BITS) | (offset as u64 & OFFSET_MASK)
}

#[inline]
pub fn ptr_alloc(p: u64) -> AllocId {
    AllocId((p >> OFFSET_BITS) as u32)
}

/// The signed byte offset of a pointer.
#[inline]
pub fn ptr_offset(p: u64) -> i64 {
    ((p << (64 - OFFSET_BITS)) as i64) >> (64 - OFFSET_BITS)
}

/// Whether every pointer is into allocation `alloc` (one pass without early
/// exits, which vectorizes).
#[inline]
pub fn all_in(ptrs: &[u64], alloc: AllocId) -> bool {
    ptrs.iter().fold(0u32, |acc, &p| acc | (ptr_alloc(p).0 ^ alloc.0)) == 0
}

/// `p + delta` bytes, staying in the same allocation.
#[inline]
pub fn ptr_add(p: u64, delta: i64) -> u64 {
    (p & !OFFSET_MASK) | ((p as i64).wrapping_add(delta) as u64 & OFFSET_MASK)
}

/// A worker's first write to a borrowed buffer makes it its own copy.
/// Large copies reuse the allocations of earlier dispatches' copies
/// (`recycle`): fresh pages cost the kernel a zero fill on first touch,
/// which for an element-wise kernel takes longer than the kernel.
pub fn own<'c>(b: &'c mut Cow<'_, [u8]>) -> &'c mut Vec<u8> {
    if let Cow::Borrowed(s) = *b {
        let mut v = spare(s.len()).unwrap_or_default();
        v.clear();
        v.extend_from_slice(s);
        *b = Cow::Owned(v);
    }
    b.to_mut()
}

/// Copies smaller than this are left to the allocator.
const SPARE_MIN: usize = 1 << 20;
/// Bytes of spare allocations kept for later dispatches, and how many.
const SPARE_BYTES: usize = 512 << 20;
const SPARE_COUNT: usize = 4;

fn spares() -> std::sync::MutexGuard<'static, Vec<Vec<u8>>> {
    static SPARES: std::sync::Mutex<Vec<Vec<u8>>> = std::sync::Mutex::new(Vec::new());
    SPARES.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A spare allocation of at least `len` bytes (the smallest that fits).
pub(crate) fn spare(len: usize) -> Option<Vec<u8>> {
    if len < SPARE_MIN {
        return None;
    }
    let mut s = spares();
    let i = (0..s.len()).filter(|&i| s[i].capacity() >= len).min_by_key(|&i| s[i].capacity())?;
    Some(s.swap_remove(i))
}

/// Keep a buffer copy's allocation for a later dispatch (within the
/// bounds above; the oldest spares go first).
pub fn recycle(v: Vec<u8>) {
    if v.capacity() < SPARE_MIN || v.capacity() > SPARE_BYTES {
        return;
    }
    let mut s = spares();
    s.push(v);
    while s.len() > SPARE_COUNT || s.iter().map(Vec::capacity).sum::<usize>() > SPARE_BYTES {
        s.remove(0);
    }
}

/// All memory of one dispatch (as one worker sees it).
#[derive(Debug, Default)]
pub struct Memory<'a> {
    /// Bound buffers by `[[buffer(n)]]` index. Workers running threadgroups
    /// in parallel borrow the dispatch's buffers and copy one on its first
    /// write, so no worker sees another's writes (see `parallel`).
    pub buffers: Vec<Option<Cow<'a, [u8]>>>,
    /// Whether a buffer is in the constant address space (read-only).
    pub buffer_readonly: Vec<bool>,
    /// `[[threadgroup(n)]]` buffers (per threadgroup).
    pub tg_buffers: Vec<Vec<u8>>,
    pub constants: Vec<Vec<u8>>,
    /// Threadgroup variables (reset for each threadgroup).
    pub threadgroup: Vec<Vec<u8>>,
    /// Per-lane private memory: lane `l`'s frame starts at `l * frame`.
    pub private: Vec<u8>,
    pub private_offsets: Vec<u32>,
    pub private_sizes: Vec<u32>,
    pub frame: usize,
}

/// Where an access landed, or why it did not.
pub enum Resolved<'m> {
    Ok(&'m [u8]),
    OutOfBounds { size: u64 },
    Null,
    Invalid,
}

impl Memory<'_> {
    /// The bytes of the allocation a pointer refers to, as seen by `lane`,
    /// and the access's start within them.
    #[inline]
    pub fn region(&self, p: u64, lane: usize) -> Option<(&[u8], i64)> {
        let off = ptr_offset(p);
        let bytes: &[u8] = match ptr_alloc(p).kind() {
            AllocKind::Buffer(i) => self.buffers.get(i as usize)?.as_deref()?,
            AllocKind::ThreadgroupBuffer(i) => self.tg_buffers.get(i as usize)?,
            AllocKind::Constant(i) => self.constants.get(i as usize)?,
            AllocKind::Threadgroup(i) => self.threadgroup.get(i as usize)?,
            AllocKind::Private(i) => {
                let start = lane * self.frame + *self.private_offsets.get(i as usize)? as usize;
                let size = self.private_sizes[i as usize] as usize;
                self.private.get(start..start + size)?
            }
            AllocKind::Null | AllocKind::Invalid => return None,
        };
        Some((bytes, off))
    }

    #[inline]
    pub fn region_mut(&mut self, p: u64, lane: usize) -> Option<(&mut [u8], i64)> {
        let off = ptr_offset(p);
        let bytes: &mut [u8] = match ptr_alloc(p).kind() {
            AllocKind::Buffer(i) => own(self.buffers.get_mut(i as usize)?.as_mut()?),
            AllocKind::ThreadgroupBuffer(i) => self.tg_buffers.get_mut(i as usize)?,
            AllocKind::Constant(_) => return None,
            AllocKind::Threadgroup(i) => self.threadgroup.get_mut(i as usize)?,
            AllocKind::Private(i) => {
                let start = lane * self.frame + *self.private_offsets.get(i as usize)? as usize;
                let size = *self.private_sizes.get(i as usize)? as usize;
                self.private.get_mut(start..start + size)?
            }
            AllocKind::Null | AllocKind::Invalid => return None,
        };
        Some((bytes, off))
    }

    /// Size in bytes of the allocation `p` points into (0 if none).
    pub fn size_of_alloc(&self, p: u64) -> u64 {
        match ptr_alloc(p).kind() {
            AllocKind::Buffer(i) => self.buffers.get(i as usize).and_then(|b| b.as_ref()).map(|b| b.len() as u64).unwrap_or(0),
            AllocKind::ThreadgroupBuffer(i) => self.tg_buffers.get(i as usize).map(|b| b.len() as u64).unwrap_or(0),
            AllocKind::Constant(i) => self.constants.get(i as usize).map(|b| b.len() as u64).unwrap_or(0),
            AllocKind::Threadgroup(i) => self.threadgroup.get(i as usize).map(|b| b.len() as u64).unwrap_or(0),
            AllocKind::Private(i) => self.private_sizes.get(i as usize).copied().unwrap_or(0) as u64,
            _ => 0,
        }
    }
}

/// Read `n` bytes (at most 8) at `off` of `bytes` as a little-endian
/// integer, if in bounds. The usual sizes are spelled out: a copy of a
/// run-time length would be a `memcpy` call per lane.
#[inline]
pub fn read_le(bytes: &[u8], off: i64, n: usize) -> Option<u64> {
    if off < 0 {
        return None;
    }
    let off = off as usize;
    let s = bytes.get(off..off.checked_add(n)?)?;
    Some(match *s {
        [a] => a as u64,
        [a, b] => u16::from_le_bytes([a, b]) as u64,
        [a, b, c, d] => u32::from_le_bytes([a, b, c, d]) as u64,
        [a, b, c, d, e, f, g, h] => u64::from_le_bytes([a, b, c, d, e, f, g, h]),
        _ => {
            let mut v = [0u8; 8];
            let k = n.min(8);
            v[..k].copy_from_slice(&s[..k]);
            u64::from_le_bytes(v)
        }
    })
}

/// Write the low `n` bytes (at most 8) of `value` at `off`, little-endian;
/// false if out of bounds.
#[inline]
pub fn write_le(bytes: &mut [u8], off: i64, n: usize, value: u64) -> bool {
    if off < 0 {
        return false;
    }
    let off = off as usize;
    let Some(end) = off.checked_add(n) else { return false };
    let Some(s) = bytes.get_mut(off..end) else { return false };
    let v = value.to_le_bytes();
    match n {
        1 => s[0] = v[0],
        2 => s.copy_from_slice(&v[..2]),
        4 => s.copy_from_slice(&v[..4]),
        8 => s.copy_from_slice(&v),
        _ => {
            let k = n.min(8);
            s[..k].copy_from_slice(&v[..k]);
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pointer_round_trip() {
        for (id, off) in [(AllocId::buffer(3), 12i64), (AllocId::private(7), 0), (AllocId::threadgroup(2), -4)] {
            let p = ptr_bits(id, off);
            assert_eq!(ptr_alloc(p), id);
            assert_eq!(ptr_offset(p), off);
            assert_eq!(ptr_offset(ptr_add(p, 8)), off + 8);
            assert_eq!(ptr_alloc(ptr_add(p, -100)), id);
        }
        assert_eq!(AllocId::buffer(30).kind(), AllocKind::Buffer(30));
        assert_eq!(AllocId::private(5).kind(), AllocKind::Private(5));
    }
}
