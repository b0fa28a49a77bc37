//! Pages handed over still zstd-compressed, decompressed by pqsift: whole, or a PLAIN
//! page only as far as its last selected value ([`ZstdPrefix`]).

use super::*;

/// Where a page is in its column chunk: the chunk's dictionary page, or its `n`-th data
/// page (counting those skipped).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PageAt {
    Dictionary,
    Data(usize),
}

/// Pages handed over still zstd-compressed: a decompression context, reused from page to
/// page, and each page's uncompressed size — as its frames declare it (one-shot writers:
/// Arrow C++, DuckDB), else from its header (streaming writers: parquet-mr, arrow-rs),
/// which the crate's reader does not pass on.
pub struct ZstdPages<'s> {
    /// Taken from, and given back to, the thread's [`CONTEXT`].
    context: Option<zstd_safe::DCtx<'static>>,
    /// The buffer pages are decompressed into, handed from page to page (see
    /// [`ZstdPrefix::reusing`]): taken from, and given back to, the thread's [`BUFFER`].
    buffer: Vec<u8>,
    /// The most a page may take uncompressed (`max_page_bytes`).
    max_size: usize,
    sizes: Box<dyn FnMut(PageAt) -> Result<usize, DecodeError> + 's>,
    /// Whether sizes the frames declare are used (off in tests of the header path: the
    /// crate's writer, like Arrow C++, declares them).
    declared: bool,
}

thread_local! {
    /// A decompression context per thread, kept from chunk to chunk: making one (and its
    /// buffers) costs more than a small page's decompression.
    static CONTEXT: std::cell::RefCell<Option<zstd_safe::DCtx<'static>>> = const { std::cell::RefCell::new(None) };
    /// A page buffer per thread, kept from chunk to chunk: at most the largest page the
    /// thread decompressed (`max_page_bytes`), freed with the thread (a scan's reader).
    static BUFFER: std::cell::Cell<Vec<u8>> = const { std::cell::Cell::new(Vec::new()) };
}

impl<'s> ZstdPages<'s> {
    /// Pages of at most `max_size` bytes uncompressed; `sizes` gives the size of a page
    /// whose frames do not declare it (a frame declaring more is refused).
    pub fn new(max_size: usize, sizes: impl FnMut(PageAt) -> Result<usize, DecodeError> + 's) -> Self {
        let context = CONTEXT.with(|kept| kept.borrow_mut().take()).unwrap_or_else(zstd_safe::DCtx::create);
        Self { context: Some(context), buffer: BUFFER.take(), max_size, sizes: Box::new(sizes), declared: true }
    }

    #[cfg(test)]
    pub(super) fn with_headers_only(mut self) -> Self {
        self.declared = false;
        self
    }

    /// The page at `at`, still compressed as `compressed`, to be decompressed on demand.
    pub(super) fn page(&mut self, at: PageAt, compressed: bytes::Bytes) -> Result<ZstdPrefix<'_>, DecodeError> {
        self.page_after(at, compressed, 0)
    }

    /// The same for a page whose first `skipped` uncompressed bytes (a v2 page's levels)
    /// are not in `compressed`.
    pub(super) fn page_after(
        &mut self,
        at: PageAt,
        compressed: bytes::Bytes,
        skipped: usize,
    ) -> Result<ZstdPrefix<'_>, DecodeError> {
        // The frames' declared sizes summed (their block headers walked, no byte decoded):
        // no read of the page's header.
        let declared = match self.declared {
            true => zstd_safe::find_decompressed_size(&compressed),
            false => Ok(None),
        };
        let size = match declared {
            Ok(Some(size)) => usize::try_from(size).ok().filter(|&size| size <= self.max_size).ok_or_else(|| {
                DecodeError::Corrupt(format!("a zstd page declares {size} bytes, more than {}", self.max_size))
            })?,
            _ => (self.sizes)(at)?.checked_sub(skipped).ok_or_else(|| {
                DecodeError::Corrupt(format!("a page's levels ({skipped} bytes) exceed its uncompressed size"))
            })?,
        };
        Ok(ZstdPrefix::reusing(
            self.context.as_mut().expect("given back on drop only"),
            compressed,
            size,
            &mut self.buffer,
        ))
    }
}

impl Drop for ZstdPages<'_> {
    fn drop(&mut self) {
        if let Some(context) = self.context.take() {
            CONTEXT.with(|kept| *kept.borrow_mut() = Some(context));
        }
        BUFFER.set(std::mem::take(&mut self.buffer));
    }
}
