//! Small blocks — those below [`LARGE_FROM`](super::large_blocks::LARGE_FROM) — from
//! jemalloc on Linux, with one arena shared by every thread; the system allocator elsewhere.
//!
//! A scan starts reader threads of its own, and a thread's first small block decides where
//! its freed memory goes back to. With glibc each thread allocates from a heap of its own,
//! trimmed (`madvise(MADV_DONTNEED)`) whenever a free leaves more than a few hundred KiB
//! unused at its top: the next scan's buffers of 64–256 KiB (a page's selected values, a
//! chunk's short strings, a page read from the file) fault their memory in page by page
//! again — 1,700–3,300 faults a scan of the `peers` ~25% shape, against ~420 for Polars
//! (jemalloc). jemalloc with its default of eight arenas spreads new threads over arenas
//! and so kept ~2,000; with one arena the memory one scan's threads freed serves the next
//! scan's: ~100 faults a scan with nothing given back, ~760 with the 1 s below (thread
//! caches still serve the smallest blocks without a lock). Freed pages are given back after [`DECAY_MS`] — when jemalloc next
//! allocates, or when [`give_back_unused`] runs (the background thread of
//! [`retained`](super::retained) runs it), as for large blocks.
//!
//! ```
//! use pqsift::allocator::small_blocks;
//! // On Linux the configuration below is the one jemalloc started with.
//! if cfg!(target_os = "linux") {
//!     assert_eq!(small_blocks::arenas(), Some(1));
//! }
//! small_blocks::give_back_unused();
//! ```

/// How long a freed page stays with jemalloc for reuse before it is given back, in ms (the
/// 1 s measured above; the large blocks' [`retain_for`](super::retained::retain_for) is
/// longer, for outputs that a scan takes seconds to allocate again).
pub const DECAY_MS: u64 = 1000;

#[cfg(target_os = "linux")]
mod jemalloc {
    use std::ffi::c_char;

    /// The allocator of small blocks.
    pub use tikv_jemallocator::Jemalloc as Allocator;

    /// jemalloc's compile-time options, read at its first allocation (the `MALLOC_CONF`
    /// variable, `_RJEM_MALLOC_CONF` for this build, still overrides them): one arena (see
    /// the module's documentation), freed dirty pages given back after `DECAY_MS`, and no
    /// second, "muzzy" stage of keeping them.
    #[allow(non_upper_case_globals)]
    #[unsafe(export_name = "_rjem_malloc_conf")]
    pub static malloc_conf: Option<&'static c_char> =
        // SAFETY: a pointer to the first byte of a 'static, NUL-terminated string.
        Some(unsafe { &*c"narenas:1,dirty_decay_ms:1000,muzzy_decay_ms:0".as_ptr() });

    /// Reads the jemalloc control `name`, of type `T`.
    pub fn read<T: Copy + Default>(name: &std::ffi::CStr) -> Option<T> {
        // Referenced, so that every binary linking this crate carries the configuration.
        std::hint::black_box(&malloc_conf);
        let mut value = T::default();
        let mut len = std::mem::size_of::<T>();
        // SAFETY: `value` and `len` describe a writable `T`; nothing is written in. jemalloc
        // checks `len` against the control's type and fails on a mismatch.
        let status = unsafe {
            tikv_jemalloc_sys::mallctl(name.as_ptr(), (&raw mut value).cast(), &mut len, std::ptr::null_mut(), 0)
        };
        (status == 0).then_some(value)
    }

    /// Runs the jemalloc control `name`, which takes and returns nothing.
    pub fn run(name: &std::ffi::CStr) {
        // SAFETY: a control without input or output; an unknown name returns an error code.
        unsafe {
            tikv_jemalloc_sys::mallctl(
                name.as_ptr(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                0,
            );
        }
    }
}

#[cfg(target_os = "linux")]
pub use jemalloc::Allocator;
#[cfg(not(target_os = "linux"))]
pub use std::alloc::System as Allocator;

/// The number of arenas jemalloc was configured with (`opt.narenas`); `None` off Linux.
pub fn arenas() -> Option<usize> {
    #[cfg(target_os = "linux")]
    // `opt.narenas` is an `unsigned`.
    return jemalloc::read::<u32>(c"opt.narenas").map(|n| n as usize);
    #[cfg(not(target_os = "linux"))]
    None
}

/// Gives the system back the small blocks' pages freed longer than [`DECAY_MS`] ago, in
/// every arena, without waiting for jemalloc's next allocation. Nothing off Linux.
pub fn give_back_unused() {
    #[cfg(target_os = "linux")]
    // 4096 is `MALLCTL_ARENAS_ALL`.
    jemalloc::run(c"arena.4096.decay");
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn jemalloc_runs_with_the_configuration() {
        assert_eq!(arenas(), Some(1));
        assert_eq!(jemalloc::read::<isize>(c"opt.dirty_decay_ms"), Some(DECAY_MS as isize));
        assert_eq!(jemalloc::read::<isize>(c"opt.muzzy_decay_ms"), Some(0));
        // A small block allocated and freed through it, then the freed pages given back.
        // SAFETY: a layout of a non-zero size; the block is freed with the same layout.
        unsafe {
            use std::alloc::{GlobalAlloc, Layout};
            let layout = Layout::from_size_align(200 << 10, 8).unwrap();
            let block = Allocator.alloc(layout);
            assert!(!block.is_null());
            block.write_bytes(7, layout.size());
            Allocator.dealloc(block, layout);
        }
        give_back_unused();
    }
}
