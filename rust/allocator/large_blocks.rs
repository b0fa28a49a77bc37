//! Large blocks, mapped by the extension: `mmap` in size classes, grown with `mremap`, kept a
//! moment when freed ([`retained`](super::retained)), then `munmap`ped.
//!
//! A block's mapping is its request rounded up to a size class: eight classes per power of
//! two (at most 12.5% more address space; the pages past the request are touched only by a
//! later, larger request of the same class). Equal row groups ask equal sizes, so a freed
//! block is mostly found again in its own class, and the class of a layout's size says how
//! long the mapping is when it is freed — unless it was a longer kept block handed out whole,
//! listed in [`oversized`](super::oversized); a shorter kept block is remapped to the new
//! request's length before it is handed out. Off Linux no block is large: the system allocator
//! serves all.
//!
//! ```
//! use pqsift::allocator::large_blocks::{mapping_len, LARGE_FROM};
//! // 8,000,000 bytes (a million int64 values) map 8 MiB; a request one byte over 8 MiB,
//! // the next class, 9 MiB.
//! assert_eq!(mapping_len(8_000_000), 8 << 20);
//! assert_eq!(mapping_len((8 << 20) + 1), 9 << 20);
//! assert_eq!(mapping_len(LARGE_FROM), LARGE_FROM);
//! ```

use std::alloc::Layout;

use super::{advise_huge_pages, oversized, retained, unmap};

/// Blocks from this size on are large blocks.
pub const LARGE_FROM: usize = 256 << 10;

const PAGE: usize = 4096;

/// Whether a block of `layout` is a large block: on Linux, from [`LARGE_FROM`] bytes, at
/// most page-aligned (a mapping starts on a page).
pub fn is_large(layout: Layout) -> bool {
    cfg!(target_os = "linux") && layout.size() >= LARGE_FROM && layout.align() <= PAGE
}

/// The length of the mapping serving `size` bytes: `size` rounded up to a multiple of an
/// eighth of the largest power of two not above it (and of the page).
pub fn mapping_len(size: usize) -> usize {
    let power = 1usize << (usize::BITS - 1 - size.max(1).leading_zeros());
    let step = (power / 8).max(PAGE);
    size.div_ceil(step).saturating_mul(step)
}

/// A kept block at most this many times longer than a request is handed out whole
/// ([`oversized`]); a longer one is shrunk to the request.
pub const WHOLE_UP_TO: usize = 8;

/// A large block of `size` bytes, zeroed if `zeroed` (a fresh mapping is; a kept one is
/// cleared); null when the system has no memory for it.
///
/// A kept block of the request's class is taken first, else the shortest longer one —
/// handed out whole if at most [`WHOLE_UP_TO`] times the request's class (listed as
/// [`oversized`]: its pages stay for the next request of its own class), else shrunk —
/// else the longest shorter one, grown.
pub fn allocate(size: usize, zeroed: bool) -> *mut u8 {
    let len = mapping_len(size);
    let Some((kept, kept_len)) = retained::take(len) else { return map(len) };
    let whole = kept_len > len && kept_len / WHOLE_UP_TO <= len && oversized::list(kept as usize, kept_len);
    // SAFETY: the kept block maps `kept_len` bytes and is ours alone.
    let block = if whole { kept } else { unsafe { remap(kept, kept_len, len) } };
    let block = match block.is_null() {
        // Refused: the kept block goes back to the system, a fresh one is mapped.
        true => {
            // SAFETY: `remap` left the kept block as it was.
            unsafe { unmap(kept as usize, kept_len) };
            return map(len);
        }
        false => block,
    };
    if zeroed {
        // SAFETY: the block maps `len >= size` bytes and is ours alone.
        unsafe { std::ptr::write_bytes(block, 0, size) };
    }
    block
}

/// Frees the large block `block` allocated for `size` bytes: kept for reuse, or unmapped.
///
/// # Safety
/// `block` came from [`allocate`] or [`resize`] for `size` bytes and is no longer used.
pub unsafe fn free(block: *mut u8, size: usize) {
    let len = oversized::unlist(block as usize).unwrap_or_else(|| mapping_len(size));
    if !retained::put(block, len) {
        // SAFETY: the caller's guarantee.
        unsafe { unmap(block as usize, len) };
    }
}

/// The large block `block` (allocated for `size` bytes) resized to `new_size` bytes: the
/// same block when both sizes share a class, else its pages moved by `mremap` (no byte
/// copied). Null, with `block` untouched, when the system refuses. Not a kept block of the
/// new class with the bytes copied: the parquet crate grows dictionary keys a page at a
/// time, and copying at every step cost 17% of a read that mremap makes free.
///
/// A grown block has its new pages populated at once ([`populate`], in [`remap`]): the
/// grower writes them next, and they faulted in one by one (the `events` ~25% read took
/// 15,000 faults a read, most in the dictionary keys of two string columns; 3,000 so; the
/// CPU time it saves is within this machine's noise).
///
/// # Safety
/// `block` came from [`allocate`] or [`resize`] for `size` bytes.
pub unsafe fn resize(block: *mut u8, size: usize, new_size: usize) -> *mut u8 {
    // The mapping's length: its class's, unless the block was handed out whole.
    let listed = oversized::mapping_len(block as usize);
    let (len, new_len) = (listed.unwrap_or_else(|| mapping_len(size)), mapping_len(new_size));
    // A block handed out whole that still holds the new size stays as it is (listed while
    // its mapping is longer than the new size's class).
    if listed.is_some() && new_len <= len && new_size >= size {
        if new_len == len {
            oversized::unlist(block as usize);
        }
        return block;
    }
    // Growing by more than the bytes held: copying them into a kept block of the new class
    // costs less than the fresh pages a remap adds (the crate reserves a row group's values
    // after a first small buffer: 1.1 -> 8 MiB, 7 MiB zeroed, five times a read of the
    // `events` projection). Smaller steps (page-at-a-time growth) remap.
    if new_len > len
        && size <= new_len - len
        && let Some(kept) = retained::take_exact(new_len)
    {
        // SAFETY: the kept block maps `new_len >= size` bytes and is ours alone; `block`
        // holds `size` bytes and is freed once copied.
        unsafe {
            std::ptr::copy_nonoverlapping(block, kept, size);
            free(block, size);
        }
        return kept;
    }
    // Remapped (or shrunk: the caller gives memory back), the block is its class's length:
    // unlisted first, as its address may be mapped afresh once it moves.
    let unlisted = listed.is_some() && len != new_len && oversized::unlist(block as usize).is_some();
    // SAFETY: the caller's guarantee; `remap` leaves a block of an unchanged length alone.
    let resized = unsafe { remap(block, len, new_len) };
    if resized.is_null() && unlisted {
        // Refused, the block is as it was: listed again (with no slot left, its tail past
        // its class would stay mapped when it is freed: only when memory ran out).
        oversized::list(block as usize, len);
    }
    resized
}

/// Asks the kernel to back the `len` bytes at `start` with zeroed pages now, in one call,
/// rather than one fault per page as they are first written (`MADV_POPULATE_WRITE`, Linux
/// 5.14; advice only: on an older kernel, or when refused, the pages fault in as before).
///
/// # Safety
/// `start` maps `len` bytes that are the caller's alone.
unsafe fn populate(start: *mut u8, len: usize) {
    #[cfg(target_os = "linux")]
    // SAFETY: the caller's guarantee; populating never changes what the pages hold.
    unsafe {
        libc::madvise(start.cast(), len, libc::MADV_POPULATE_WRITE);
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (start, len);
}

/// The mapping of `len` bytes at `block` made `new_len` bytes long with `mremap` (moved
/// if need be: pages move, bytes are not copied; pages past `len` are fresh, populated
/// at once); null, with the mapping untouched, when the system refuses.
///
/// # Safety
/// `block` maps `len` bytes and is the caller's alone.
unsafe fn remap(block: *mut u8, len: usize, new_len: usize) -> *mut u8 {
    if len == new_len {
        return block;
    }
    #[cfg(target_os = "linux")]
    {
        // SAFETY: the caller's guarantee; MREMAP_MAYMOVE keeps the contents and unmaps the
        // old range only on success.
        let moved = unsafe { libc::mremap(block.cast(), len, new_len, libc::MREMAP_MAYMOVE) };
        if moved == libc::MAP_FAILED {
            return std::ptr::null_mut();
        }
        let moved = moved.cast::<u8>();
        if new_len > len {
            advise_huge_pages(moved, new_len);
            // SAFETY: the block now maps `new_len` bytes.
            unsafe { populate(moved.add(len), new_len - len) };
        }
        moved
    }
    #[cfg(not(target_os = "linux"))]
    unreachable!("no block is large off Linux")
}

/// A fresh anonymous mapping of `len` bytes (zero-filled by the kernel), advised to huge
/// pages when large enough; null on failure.
fn map(len: usize) -> *mut u8 {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: a new private anonymous mapping; nothing else refers to it.
        let block = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if block == libc::MAP_FAILED {
            return std::ptr::null_mut();
        }
        advise_huge_pages(block.cast(), len);
        block.cast()
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = len;
        unreachable!("no block is large off Linux")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_block_grows_and_shrinks_keeping_its_bytes() {
        let size = 300 << 10;
        let block = allocate(size, true);
        assert!(!block.is_null());
        // SAFETY: the block maps at least each size used below; freed once at the end.
        unsafe {
            assert!(std::slice::from_raw_parts(block, size).iter().all(|&b| b == 0));
            for i in 0..size {
                *block.add(i) = (i % 251) as u8;
            }
            let grown = resize(block, size, 5 << 20);
            assert!(!grown.is_null());
            assert!((0..size).all(|i| *grown.add(i) == (i % 251) as u8));
            let shrunk = resize(grown, 5 << 20, LARGE_FROM);
            assert!((0..LARGE_FROM).all(|i| *shrunk.add(i) == (i % 251) as u8));
            free(shrunk, LARGE_FROM);
        }
    }

    #[test]
    fn a_block_grown_into_a_kept_block_keeps_its_bytes() {
        let (small, large) = (300 << 10, 6 << 20);
        // SAFETY: each block is used within its size and freed once.
        unsafe {
            // A freed block of the large class is kept (unless another test's free took the
            // slots at that moment: then the growth remaps, which must keep the bytes too).
            free(allocate(large, false), large);
            let block = allocate(small, false);
            for i in 0..small {
                *block.add(i) = (i % 253) as u8;
            }
            let grown = resize(block, small, large);
            assert!(!grown.is_null());
            assert!((0..small).all(|i| *grown.add(i) == (i % 253) as u8));
            std::ptr::write_bytes(grown, 7, large);
            free(grown, large);
        }
    }

    #[test]
    fn a_longer_kept_block_is_handed_out_whole_and_freed_whole() {
        let (short, long) = (600 << 10, 3 << 20);
        // SAFETY: each block is used within its size and freed once.
        unsafe {
            free(allocate(long, false), long);
            let block = allocate(short, true);
            assert!(!block.is_null());
            // Taken whole (unless another test took the kept block first): listed with its
            // length, the whole mapping ours.
            let whole = oversized::mapping_len(block as usize);
            if let Some(len) = whole {
                assert_eq!(len, mapping_len(long));
                std::ptr::write_bytes(block, 1, len);
            }
            assert!(std::slice::from_raw_parts(block, short).iter().all(|&b| b <= 1));
            // Grown within its mapping: the same block, listed until it reaches its length.
            let grown = resize(block, short, 2 << 20);
            assert!(!grown.is_null());
            if whole.is_some() {
                assert_eq!(grown, block);
                assert_eq!(oversized::mapping_len(grown as usize), whole);
            }
            // Shrunk: given back to its class's length, no longer listed.
            let shrunk = resize(grown, 2 << 20, LARGE_FROM);
            assert_eq!(oversized::mapping_len(shrunk as usize), None);
            *shrunk.add(LARGE_FROM - 1) = 9;
            free(shrunk, LARGE_FROM);
        }
    }

    proptest! {
        /// A class holds its request, wastes at most an eighth (or a page), and is a whole
        /// number of pages.
        #[test]
        fn mapping_len_bounds(size in LARGE_FROM..(1usize << 40)) {
            let len = mapping_len(size);
            prop_assert!(len >= size);
            prop_assert!(len - size <= (size / 8).max(PAGE));
            prop_assert_eq!(len % PAGE, 0);
            prop_assert_eq!(mapping_len(len), len);
        }
    }
}
