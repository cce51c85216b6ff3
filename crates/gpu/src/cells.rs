//! Zeroed arrays of shadow cells (the sanitizer's and the compiled tier's),
//! reused from one dispatch to the next: benchmarks and the puzzle book
//! run many dispatches of one size, and fresh memory costs a page fault
//! (and a clear) per 4 KiB, which dominates small kernels. A finished
//! shadow is kept with the range of cells its dispatch touched, and only
//! that range is cleared when it is taken again, so a run that never
//! reuses one (one CLI dispatch) does not pay for it.

use std::mem::MaybeUninit;
use std::ops::Range;
use std::sync::Mutex;

/// Cells whose all-zero bit pattern is their default value, made of
/// 4-byte words (size a multiple of 4, alignment 4).
///
/// # Safety
/// Implementors must be plain data with exactly that layout, and zero
/// bytes must be a valid (the default) value.
pub(crate) unsafe trait Cell: Copy {}

/// Spare arrays as words (cells may have padding: never read as numbers),
/// with their dirty cells as a word range.
type Words = Vec<MaybeUninit<u32>>;
static SPARES: Mutex<Vec<(Words, Range<usize>)>> = Mutex::new(Vec::new());
/// Arrays smaller than this many bytes are not worth keeping.
const MIN_BYTES: usize = 64 << 10;
/// At most this many bytes of spares are kept.
const MAX_BYTES: usize = 1 << 30;

fn words<T: Cell>() -> usize {
    const { assert!(std::mem::size_of::<T>().is_multiple_of(4) && std::mem::align_of::<T>() == 4) };
    std::mem::size_of::<T>() / 4
}

/// `n` default cells: a spare array of that size (its dirty range
/// cleared), or zeroed memory (large ones then cost nothing until
/// touched: the OS hands out zero pages lazily).
pub(crate) fn zeroed<T: Cell>(n: usize) -> Vec<T> {
    let k = words::<T>();
    if n == 0 || k == 0 {
        return Vec::new();
    }
    if n * k * 4 >= MIN_BYTES {
        let taken = SPARES.lock().ok().and_then(|mut s| {
            let i = s.iter().position(|v| v.0.len() == n * k)?;
            Some(s.swap_remove(i))
        });
        if let Some((mut w, dirty)) = taken {
            if let Some(d) = w.get_mut(dirty) {
                d.fill(MaybeUninit::new(0));
            }
            let mut w = std::mem::ManuallyDrop::new(w);
            // SAFETY: the words came from a `Vec<T>` of `n` cells (see
            // `keep`), so pointer, length and capacity in cells and the
            // allocation's layout (size, alignment 4) are `Vec<T>`'s; all
            // zero words are default cells (`Cell`).
            return unsafe { Vec::from_raw_parts(w.as_mut_ptr() as *mut T, n, w.capacity() / k) };
        }
    }
    let Ok(layout) = std::alloc::Layout::array::<T>(n) else { return Vec::new() };
    // SAFETY: zero bytes are default cells (`Cell`); the pointer comes from
    // the global allocator with `T`'s layout for `n` cells.
    unsafe {
        let p = std::alloc::alloc_zeroed(layout) as *mut T;
        if p.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        Vec::from_raw_parts(p, n, n)
    }
}

/// Keep `cells` for a later [`zeroed`] of the same size; `dirty` holds
/// every cell that may not be zero.
pub(crate) fn keep<T: Cell>(cells: Vec<T>, dirty: Range<usize>) {
    let k = words::<T>();
    let bytes = cells.capacity() * k * 4;
    if bytes < MIN_BYTES || cells.len() != cells.capacity() {
        return;
    }
    let Ok(mut spares) = SPARES.lock() else { return };
    let held: usize = spares.iter().map(|v| v.0.len() * 4).sum();
    if held + bytes > MAX_BYTES {
        return;
    }
    let dirty = dirty.start.min(cells.len()) * k..dirty.end.min(cells.len()) * k;
    let mut cells = std::mem::ManuallyDrop::new(cells);
    // SAFETY: `T` is 4-byte words with alignment 4 (`Cell`), so the
    // allocation of `len == capacity` cells is one of `len * k` words
    // with the same layout.
    let w = unsafe { Vec::from_raw_parts(cells.as_mut_ptr() as *mut MaybeUninit<u32>, cells.len() * k, cells.capacity() * k) };
    spares.push((w, dirty));
}
