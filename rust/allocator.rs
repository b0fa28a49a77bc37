//! The extension's memory: stock jemalloc (the `tikv-jemallocator` crate, as Polars uses it)
//! for every block, configured for a reader whose buffers are large, written once and freed
//! in waves (a row group's batches consumed and dropped):
//!
//! - **one arena** (`narenas:1`): every scan starts reader threads of its own, and with an
//!   arena per thread group the memory one scan's threads freed did not serve the next's;
//! - **freed pages kept 10 s** (`dirty_decay_ms:10000`, no second "muzzy" stage), and given
//!   back by jemalloc's own **background thread** (`background_thread:true`), not by the
//!   allocating threads: the next row group, and the next scan, decode into memory already
//!   mapped instead of having the kernel fault in and zero fresh pages, while an idle process
//!   holds nothing after the decay time. What is kept is at most what the process freed, so
//!   several processes on one host (Spark's Python workers) keep at most their own peaks,
//!   which the scan options bound;
//! - **huge pages as the system decides** (`thp:default`, `metadata_thp:disabled`): jemalloc
//!   does not ask for transparent huge pages itself, so a kernel set to give them to every
//!   process (`enabled` = `always`) does, and one set to `madvise` does not. Asked for
//!   (`thp:always`), they took one fault per 2 MiB instead of 512 and made a scan's first
//!   run into fresh memory quicker where its output was small, but where a hypervisor takes
//!   back the guest's free memory (virtio-balloon free page reporting) a fresh huge page is
//!   carved from the large free blocks it took back and faults on the host too: outputs of
//!   hundreds of MiB to a few GiB then took two to three times as long in their first runs,
//!   at times more (`benches/first_scan.py`); warm runs, into kept pages, were level.
//!
//! Measured against the hand-written large-block allocator it replaces (mapping, `mremap`
//! growth and a retention pool of its own), interleaved on the benchmark shapes:
//! `benches/results/allocator.md` (`make bench-allocator`). `_RJEM_MALLOC_CONF` (this
//! build's `MALLOC_CONF`) in the environment overrides any of these settings, e.g.
//! `thp:always` to ask for huge pages. Every library linking jemalloc through
//! these crates reads that same variable (Polars writes its own settings into it when
//! imported), so the Python package loads the extension with it set to
//! `PQSIFT_MALLOC_CONF`, or unset, and then puts it back (`pqsift/_allocator.py`).
//!
//! ```
//! // On Linux the configuration below is the one jemalloc started with.
//! if cfg!(target_os = "linux") && std::env::var_os("_RJEM_MALLOC_CONF").is_none() {
//!     assert_eq!(pqsift::allocator::setting::<u32>(c"opt.narenas"), Some(1));
//!     assert_eq!(pqsift::allocator::setting::<isize>(c"opt.dirty_decay_ms"), Some(10_000));
//! }
//! ```

/// jemalloc's settings, read at its first allocation (see the module documentation).
pub const MALLOC_CONF: &std::ffi::CStr =
    c"narenas:1,background_thread:true,dirty_decay_ms:10000,muzzy_decay_ms:0,thp:default,metadata_thp:disabled";

#[cfg(target_os = "linux")]
mod jemalloc {
    use std::ffi::c_char;

    /// The configuration jemalloc reads when it starts (`_rjem_` is this build's prefix).
    #[allow(non_upper_case_globals)]
    #[unsafe(export_name = "_rjem_malloc_conf")]
    pub static malloc_conf: Option<&'static c_char> =
        // SAFETY: a pointer to the first byte of a 'static, NUL-terminated string.
        Some(unsafe { &*super::MALLOC_CONF.as_ptr() });
}

#[cfg(not(target_os = "linux"))]
pub use std::alloc::System as Allocator;
/// The allocator of every block: jemalloc on Linux, the system's elsewhere.
#[cfg(target_os = "linux")]
pub use tikv_jemallocator::Jemalloc as Allocator;

/// The settings jemalloc started with: [`MALLOC_CONF`], overridden by the environment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settings {
    /// Arenas (`opt.narenas`).
    pub narenas: u32,
    /// How long freed pages are kept before they are given back (`opt.dirty_decay_ms`).
    pub dirty_decay_ms: isize,
    /// How long given-back pages stay lazily freed (`opt.muzzy_decay_ms`).
    pub muzzy_decay_ms: isize,
    /// Whether jemalloc's own thread gives pages back (`opt.background_thread`).
    pub background_thread: bool,
}

/// The settings jemalloc started with (starting it if nothing has allocated yet); `None`
/// off Linux, where the system's allocator serves.
///
/// ```
/// if let Some(settings) = pqsift::allocator::settings() {
///     assert!(settings.narenas >= 1);
/// }
/// ```
pub fn settings() -> Option<Settings> {
    Some(Settings {
        narenas: setting(c"opt.narenas")?,
        dirty_decay_ms: setting(c"opt.dirty_decay_ms")?,
        muzzy_decay_ms: setting(c"opt.muzzy_decay_ms")?,
        background_thread: setting(c"opt.background_thread")?,
    })
}

/// Reads the jemalloc setting or statistic `name`, of type `T`; `None` off Linux or for a
/// name or type jemalloc does not have.
pub fn setting<T: Copy + Default>(name: &std::ffi::CStr) -> Option<T> {
    #[cfg(target_os = "linux")]
    {
        // Referenced, so that every binary linking this crate carries the configuration.
        std::hint::black_box(&jemalloc::malloc_conf);
        let mut value = T::default();
        let mut len = std::mem::size_of::<T>();
        // SAFETY: `value` and `len` describe a writable `T`; nothing is written in. jemalloc
        // checks `len` against the setting's type and fails on a mismatch.
        let status = unsafe {
            tikv_jemalloc_sys::mallctl(name.as_ptr(), (&raw mut value).cast(), &mut len, std::ptr::null_mut(), 0)
        };
        (status == 0).then_some(value)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = name;
        None
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn jemalloc_runs_with_the_configuration() {
        // The test binary's global allocator is the system's, but jemalloc reads the same
        // configuration when this crate's allocator first allocates.
        unsafe {
            use std::alloc::{GlobalAlloc, Layout};
            let layout = Layout::from_size_align(8 << 20, 64).unwrap();
            let block = Allocator.alloc(layout);
            assert!(!block.is_null());
            block.write_bytes(7, layout.size());
            Allocator.dealloc(block, layout);
        }
        if std::env::var_os("_RJEM_MALLOC_CONF").is_none() {
            assert_eq!(setting::<u32>(c"opt.narenas"), Some(1));
            assert_eq!(setting::<isize>(c"opt.dirty_decay_ms"), Some(10_000));
            assert_eq!(setting::<isize>(c"opt.muzzy_decay_ms"), Some(0));
            assert_eq!(setting::<bool>(c"opt.background_thread"), Some(true));
        }
    }
}
