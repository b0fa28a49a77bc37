//! Memory for large buffers: blocks of [`large_blocks::LARGE_FROM`] bytes or more mapped by
//! the extension itself, offered transparent huge pages and kept a moment after they are
//! freed; smaller blocks from jemalloc with one arena ([`small_blocks`]).
//!
//! Reading a column writes each of its decoded buffers — values, offsets, string bytes,
//! decompressed pages — once, from start to end, into fresh memory. With 4 KiB pages the
//! kernel takes a fault and zeroes a page for every 4 KiB written: profiled on a 200-byte
//! text column, a quarter of the read, and more system time than user time on an 8-byte
//! integer column. Three things answer it:
//! - Linux's default mode (`madvise`) serves 2 MiB pages only where asked, so blocks of at
//!   least [`HUGE_PAGES_FROM`] bytes are advised so (`MADV_HUGEPAGE`): one fault per 2 MiB.
//! - A freed large block is kept a while ([`retained`]) and handed to the next allocation
//!   (one of its size class, else a longer one whole, else the nearest remapped), so a
//!   stream of row groups whose batches are consumed and freed decodes into memory already
//!   mapped (the ten numeric columns of the `events` benchmark: page faults were ~24% of
//!   the read). glibc gives such blocks back to the kernel at once; small blocks are kept
//!   by jemalloc the same moment ([`small_blocks`]).
//! - A large block grows with `mremap` ([`large_blocks`]): pages move, bytes are not
//!   copied (the parquet crate grows dictionary keys and string bytes a page at a time).
//!
//! ```
//! use pqsift::allocator::advise_huge_pages;
//! let buffer: Vec<u8> = Vec::with_capacity(8 << 20);
//! // Advice only: the buffer's contents and ownership are unchanged.
//! advise_huge_pages(buffer.as_ptr(), buffer.capacity());
//! ```

pub mod large_blocks;
pub mod oversized;
pub mod retained;
pub mod small_blocks;

use small_blocks::Allocator as Small;

use std::alloc::{GlobalAlloc, Layout};
use std::sync::atomic::{AtomicBool, Ordering};

static ADVISE: AtomicBool = AtomicBool::new(true);

/// Turns the advice on or off for blocks allocated from now on.
pub fn set_huge_pages(on: bool) {
    ADVISE.store(on, Ordering::Relaxed);
}

/// Configures memory from the environment, then starts the thread that gives kept blocks
/// back ([`retained::release_in_background`]); the Python module runs this when imported.
///
/// - `PQSIFT_HUGE_PAGES=0`: no huge-page advice ([`set_huge_pages`]).
/// - `PQSIFT_RETAIN_MIB`: the most freed memory kept for reuse, in MiB (0: none); by
///   default a quarter of what the process may use ([`retained::memory_limit`]), or
///   [`retained::DEFAULT_RETAIN_BYTES`] where that is not known.
/// - `PQSIFT_RETAIN_MS`: how long a freed block is kept, in ms (default 10 s).
///
/// A value that is not a whole number is ignored.
pub fn configure_from_environment() {
    let number = |name: &str| std::env::var(name).ok().and_then(|v| v.trim().parse::<u64>().ok());
    if std::env::var_os("PQSIFT_HUGE_PAGES").is_some_and(|v| v == "0") {
        set_huge_pages(false);
    }
    let retain_bytes = match number("PQSIFT_RETAIN_MIB") {
        Some(mib) => usize::try_from(mib).unwrap_or(usize::MAX).saturating_mul(1 << 20),
        None => retained::memory_limit().map_or(retained::DEFAULT_RETAIN_BYTES, |limit| limit / 4),
    };
    retained::set_retain_bytes(retain_bytes);
    if let Some(ms) = number("PQSIFT_RETAIN_MS") {
        retained::set_retain_for(std::time::Duration::from_millis(ms));
    }
    retained::release_in_background();
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

/// Unmaps the `len` bytes mapped at `start`.
///
/// # Safety
/// `start` maps `len` bytes that nothing uses any more.
pub(crate) unsafe fn unmap(start: usize, len: usize) {
    #[cfg(target_os = "linux")]
    // SAFETY: the caller's guarantee.
    unsafe {
        libc::munmap(start as *mut libc::c_void, len);
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (start, len);
}

/// The Python extension's global allocator: blocks a [`large_blocks::is_large`] layout
/// asks for are mapped by [`large_blocks`] (and kept by [`retained`] when freed), the
/// others come from [`small_blocks`] (see the module's documentation).
pub struct BufferAllocator;

// SAFETY: whether a layout's block is a large block or the system's depends on the layout
// alone, and `realloc` keeps the alignment, so every block is freed or resized by the side
// that allocated it; `large_blocks` upholds the `GlobalAlloc` contract for its own blocks.
unsafe impl GlobalAlloc for BufferAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if large_blocks::is_large(layout) {
            return large_blocks::allocate(layout.size(), false);
        }
        unsafe { Small.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if large_blocks::is_large(layout) {
            return large_blocks::allocate(layout.size(), true);
        }
        unsafe { Small.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, block: *mut u8, layout: Layout) {
        if large_blocks::is_large(layout) {
            // SAFETY: a large block of this size, freed by its owner.
            return unsafe { large_blocks::free(block, layout.size()) };
        }
        unsafe { Small.dealloc(block, layout) }
    }

    unsafe fn realloc(&self, block: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY (all arms): `block` is the caller's, allocated with `layout`.
        let new_layout = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
        match (large_blocks::is_large(layout), large_blocks::is_large(new_layout)) {
            (true, true) => unsafe { large_blocks::resize(block, layout.size(), new_size) },
            (false, false) => unsafe { Small.realloc(block, layout, new_size) },
            // Across the threshold: a new block, the bytes both hold copied, the old freed.
            _ => unsafe {
                let moved = self.alloc(new_layout);
                if !moved.is_null() {
                    std::ptr::copy_nonoverlapping(block, moved, layout.size().min(new_size));
                    self.dealloc(block, layout);
                }
                moved
            },
        }
    }
}
