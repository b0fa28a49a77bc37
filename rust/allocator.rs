//! Memory for large buffers: the system allocator, with large blocks offered transparent
//! huge pages.
//!
//! Reading a column writes each of its decoded buffers — values, offsets, string bytes,
//! decompressed pages — once, from start to end, into fresh memory. With 4 KiB pages the
//! kernel takes a fault and zeroes a page for every 4 KiB written: profiled on a 200-byte
//! text column, a quarter of the read, and more system time than user time on an 8-byte
//! integer column. Linux's default mode (`madvise`) serves 2 MiB pages only where asked, so
//! [`HugePageAllocator`], the Python extension's global allocator, asks for blocks of at
//! least [`HUGE_PAGES_FROM`] bytes (`MADV_HUGEPAGE`): one fault per 2 MiB. Smaller blocks,
//! and every block's placement and reuse, are the system allocator's as before; a block
//! grown by `realloc` (glibc moves a large one with `mremap`) is advised again.
//!
//! ```
//! use pqsift::allocator::advise_huge_pages;
//! let buffer: Vec<u8> = Vec::with_capacity(8 << 20);
//! // Advice only: the buffer's contents and ownership are unchanged.
//! advise_huge_pages(buffer.as_ptr(), buffer.capacity());
//! ```

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, Ordering};

static ADVISE: AtomicBool = AtomicBool::new(true);

/// Turns the advice on or off for blocks allocated from now on.
pub fn set_huge_pages(on: bool) {
    ADVISE.store(on, Ordering::Relaxed);
}

/// Blocks from this size on are offered huge pages.
pub const HUGE_PAGES_FROM: usize = 4 << 20;

/// Advises the kernel that the whole pages inside `len` bytes from `start` may be backed by
/// transparent huge pages. Advice only: contents are unchanged, errors are ignored, and
/// nothing happens off Linux or for blocks below [`HUGE_PAGES_FROM`].
pub fn advise_huge_pages(start: *const u8, len: usize) {
    #[cfg(target_os = "linux")]
    if len >= HUGE_PAGES_FROM && ADVISE.load(Ordering::Relaxed) {
        const PAGE: usize = 4096;
        // Only pages wholly inside the block: the advice never reaches a neighbour's memory.
        let first = (start as usize).next_multiple_of(PAGE);
        let end = (start as usize + len) / PAGE * PAGE;
        if end > first {
            // SAFETY: the range lies inside memory the caller holds; `MADV_HUGEPAGE` changes
            // how its pages are backed, never what they hold.
            unsafe { libc::madvise(first as *mut libc::c_void, end - first, libc::MADV_HUGEPAGE) };
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (start, len);
}

/// The system allocator, with blocks of [`HUGE_PAGES_FROM`] bytes or more advised to huge
/// pages (see the module's documentation).
pub struct HugePageAllocator;

// SAFETY: every call is forwarded to `System` unchanged; the advice after it touches no
// byte of the block.
unsafe impl GlobalAlloc for HugePageAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let block = unsafe { System.alloc(layout) };
        if !block.is_null() {
            advise_huge_pages(block, layout.size());
        }
        block
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let block = unsafe { System.alloc_zeroed(layout) };
        if !block.is_null() {
            advise_huge_pages(block, layout.size());
        }
        block
    }

    unsafe fn dealloc(&self, block: *mut u8, layout: Layout) {
        unsafe { System.dealloc(block, layout) }
    }

    unsafe fn realloc(&self, block: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let moved = unsafe { System.realloc(block, layout, new_size) };
        if !moved.is_null() && new_size > layout.size() {
            advise_huge_pages(moved, new_size);
        }
        moved
    }
}
