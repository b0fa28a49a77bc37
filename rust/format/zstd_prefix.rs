//! A zstd-compressed page decompressed only as far as its reader needs.
//!
//! A selective read decodes a page for its selected rows only, but a compressed page is
//! one zstd frame, and the crate decompresses it whole before a value is read. Values of
//! a PLAIN page lie in row order, so a page whose last selected row is two thirds in needs
//! two thirds of the frame: [`ZstdPrefix`] decompresses block after block until the
//! reader's prefix is there, and never the rest (blocks hold up to 128 KiB). A selective
//! filter over a text column leaves a good part of each page past its last selected value.
//!
//! The blocks are decoded straight into the page's buffer, allocated once at the size its
//! header gives (zstd's stable output buffer: no copy through the decoder's window, so a
//! whole page costs what a one-shot decompression costs), or the buffer of the page before
//! it, handed on ([`ZstdPrefix::reusing`]): a page, whole or a prefix, is dropped once its
//! values are copied out, and a fresh buffer for each faulted its memory in again — on the
//! `events` text-heavy projection (pages read whole) a third of the read's page faults, the
//! large blocks a freed page leaves being taken by the longer-lived output buffers
//! allocated meanwhile. ([`ZstdPrefix::into_page`] hands the buffer over: the reader keeps
//! pages in [`ZstdPrefix::whole`] instead.)
//!
//! ```
//! use pqsift::format::zstd_prefix::ZstdPrefix;
//! // Text-like bytes (6 bits of noise each): a frame of many blocks.
//! let page: Vec<u8> = (0..800_000u64).map(|i| (i.wrapping_mul(2654435761) >> 13) as u8 % 64 + 32).collect();
//! let mut compressed = Vec::with_capacity(zstd_safe::compress_bound(page.len()));
//! zstd_safe::compress(&mut compressed, &page, 3).unwrap();
//!
//! let mut context = zstd_safe::DCtx::create();
//! let mut prefix = ZstdPrefix::new(&mut context, compressed.into(), page.len());
//! assert_eq!(prefix.prefix(8).unwrap(), &page[..8]);
//! assert!(prefix.decompressed() < page.len()); // the rest is still compressed
//! assert_eq!(prefix.prefix(usize::MAX).unwrap(), &page[..]);
//! ```

use bytes::Bytes;
use zstd_safe::{DCtx, DParameter, InBuffer, OutBuffer, ResetDirective, WriteBuf};

/// Output decompressed per step beyond what was asked for: a step's fixed cost is small
/// against 64 KiB of output, and readers ask a value at a time.
const STEP_BYTES: usize = 64 << 10;

/// A page's compressed bytes (a zstd frame, or several one after another), decompressed on
/// demand into a buffer of its uncompressed size.
pub struct ZstdPrefix<'a> {
    context: &'a mut DCtx<'static>,
    input: Bytes,
    /// Input bytes handed to the decoder so far.
    consumed: usize,
    /// The page: its length is what is decompressed; its capacity, at least `size`, never
    /// changes (the decoder writes into it across calls).
    output: Vec<u8>,
    /// The page's uncompressed size.
    size: usize,
    finished: bool,
    /// Where the buffer goes back to when the page is dropped ([`Self::reusing`]).
    home: Option<&'a mut Vec<u8>>,
}

impl<'a> ZstdPrefix<'a> {
    /// Frames `input` of `size` bytes uncompressed (as they declare it, or the page
    /// header says: bounded by the caller), to be decompressed with `context`.
    pub fn new(context: &'a mut DCtx<'static>, input: Bytes, size: usize) -> Self {
        // An empty page has nothing to decompress (writers may leave its frame out).
        Self { context, input, consumed: 0, output: Vec::with_capacity(size), size, finished: size == 0, home: None }
    }

    /// The same, decompressed into the buffer `home` holds (allocated anew if it holds
    /// less than `size`), which goes back to `home` when the page is dropped — unless
    /// [`into_page`](Self::into_page) hands it over.
    ///
    /// ```
    /// use pqsift::format::zstd_prefix::ZstdPrefix;
    /// let page = vec![b'x'; 100_000];
    /// let mut compressed = Vec::with_capacity(zstd_safe::compress_bound(page.len()));
    /// zstd_safe::compress(&mut compressed, &page, 3).unwrap();
    /// let compressed = bytes::Bytes::from(compressed);
    ///
    /// let (mut context, mut buffer) = (zstd_safe::DCtx::create(), Vec::new());
    /// for _ in 0..2 {
    ///     let mut prefix = ZstdPrefix::reusing(&mut context, compressed.clone(), page.len(), &mut buffer);
    ///     assert_eq!(prefix.prefix(10).unwrap(), &page[..10]);
    /// }
    /// // The first page's buffer served the second and is back.
    /// assert!(buffer.capacity() >= page.len());
    /// ```
    pub fn reusing(context: &'a mut DCtx<'static>, input: Bytes, size: usize, home: &'a mut Vec<u8>) -> Self {
        let mut output = std::mem::take(home);
        output.clear();
        if output.capacity() < size {
            // Not `reserve`: the bytes it holds need no copy.
            output = Vec::with_capacity(size);
        }
        Self { context, input, consumed: 0, output, size, finished: size == 0, home: Some(home) }
    }

    /// The page's uncompressed size.
    pub fn size(&self) -> usize {
        self.size
    }

    /// Bytes decompressed so far.
    pub fn decompressed(&self) -> usize {
        self.output.len()
    }

    /// The first `n` bytes of the page (all of it, if shorter: `usize::MAX` asks for the
    /// whole page), decompressing as far as needed.
    pub fn prefix(&mut self, n: usize) -> Result<&[u8], String> {
        if self.output.len() < n && !self.finished {
            self.decompress_to(n)?;
        }
        Ok(&self.output[..n.min(self.output.len())])
    }

    fn decompress_to(&mut self, n: usize) -> Result<(), String> {
        if self.consumed == 0 {
            self.context.reset(ResetDirective::SessionOnly).map_err(error)?;
            self.context.set_parameter(DParameter::StableOutBuffer(true)).map_err(error)?;
        }
        let capacity = self.size;
        let target = n.saturating_add(STEP_BYTES).min(capacity);
        while self.output.len() < n.min(capacity) && !self.finished {
            // Input in proportion to the output still wanted (the frame's ratio), with a
            // margin: the decoder keeps a partial block's input for the next call.
            let ratio = self.input.len() as f64 / capacity.max(1) as f64;
            let wanted = ((target - self.output.len()) as f64 * ratio * 1.25) as usize + 1024;
            let end = self.consumed.saturating_add(wanted).min(self.input.len());
            let mut input = InBuffer::around(&self.input[self.consumed..end]);
            let at = self.output.len();
            let mut page = PageBuffer::new(&mut self.output, capacity);
            let mut output = OutBuffer::around_pos(&mut page, at);
            let hint = self.context.decompress_stream(&mut output, &mut input).map_err(error)?;
            let progress = input.pos() > 0 || output.pos() > at;
            self.consumed += input.pos();
            // A frame ended: the page ends with it, or the next frame follows.
            if hint == 0 && self.consumed == self.input.len() {
                self.finished = true;
            } else if !progress && end == self.input.len() {
                return Err(format!("the zstd frame ends after {} of its {capacity} bytes", self.output.len()));
            }
        }
        Ok(())
    }

    /// The whole page, owned; an error unless it decompresses to exactly its size.
    pub fn into_page(mut self) -> Result<Bytes, String> {
        self.whole()?;
        Ok(Bytes::from(std::mem::take(&mut self.output)))
    }

    /// The whole page; an error unless it decompresses to exactly its size. Nothing
    /// decompressed yet: in one call, as the crate would (no streaming state).
    pub fn whole(&mut self) -> Result<&[u8], String> {
        if self.consumed == 0 && !self.finished {
            let written = self
                .context
                .decompress(&mut PageBuffer::new(&mut self.output, self.size), &self.input)
                .map_err(error)?;
            (self.consumed, self.finished) = (self.input.len(), written == self.output.len());
        }
        self.prefix(usize::MAX)?;
        if !self.finished || self.output.len() != self.size {
            return Err(format!(
                "a page decompresses to {} bytes where its header says {}",
                self.output.len(),
                self.size
            ));
        }
        Ok(&self.output)
    }
}

impl Drop for ZstdPrefix<'_> {
    fn drop(&mut self) {
        if let Some(home) = self.home.take() {
            *home = std::mem::take(&mut self.output);
        }
    }
}

/// The first `size` bytes of a buffer's capacity as zstd's output: a reused buffer may be
/// longer than the page, and nothing may be decompressed past the page.
struct PageBuffer<'v> {
    buffer: &'v mut Vec<u8>,
    size: usize,
}

impl<'v> PageBuffer<'v> {
    fn new(buffer: &'v mut Vec<u8>, size: usize) -> Self {
        assert!(size <= buffer.capacity(), "a page buffer holds its page");
        Self { buffer, size }
    }
}

// SAFETY: the buffer's first `len` bytes are initialised (a `Vec`'s), `capacity` is within
// the `Vec`'s capacity (checked in `new`), and zstd marks as filled only bytes it wrote.
unsafe impl WriteBuf for PageBuffer<'_> {
    fn as_slice(&self) -> &[u8] {
        self.buffer
    }

    fn capacity(&self) -> usize {
        self.size
    }

    fn as_mut_ptr(&mut self) -> *mut u8 {
        self.buffer.as_mut_ptr()
    }

    unsafe fn filled_until(&mut self, n: usize) {
        // SAFETY: the caller's guarantee; `n <= size <= capacity`.
        unsafe { self.buffer.set_len(n) }
    }
}

fn error(code: usize) -> String {
    format!("zstd: {}", zstd_safe::get_error_name(code))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn compressed(page: &[u8], level: i32) -> Bytes {
        let mut out = Vec::with_capacity(zstd_safe::compress_bound(page.len()));
        zstd_safe::compress(&mut out, page, level).unwrap();
        out.into()
    }

    proptest! {
        /// Every prefix asked for, in any order of growing sizes, is the page's.
        #[test]
        fn prefixes_are_the_page(
            words in prop::collection::vec(0u32..50, 0..60_000),
            asks in prop::collection::vec(0usize..300_000, 1..6),
            level in 1i32..6,
        ) {
            let page: Vec<u8> = words.iter().flat_map(|w| format!("w{w} ").into_bytes()).collect();
            let mut context = DCtx::create();
            let mut prefix = ZstdPrefix::new(&mut context, compressed(&page, level), page.len());
            let mut asks = asks;
            asks.sort_unstable();
            for n in asks {
                let got = prefix.prefix(n).unwrap().to_vec();
                prop_assert_eq!(&got[..], &page[..n.min(page.len())]);
            }
            prop_assert_eq!(prefix.into_page().unwrap(), Bytes::from(page));
        }

        /// Arbitrary bytes or a wrong size fail cleanly, never past the buffer.
        #[test]
        fn bad_frames_fail(noise in prop::collection::vec(any::<u8>(), 0..400), size in 0usize..5000) {
            let mut context = DCtx::create();
            let mut prefix = ZstdPrefix::new(&mut context, noise.into(), size);
            if let Ok(got) = prefix.prefix(usize::MAX) {
                prop_assert!(got.len() <= size);
            }
        }
    }

    proptest! {
        /// Pages of any sizes, one after another through one reused buffer: each prefix
        /// and each whole page is that page's, whatever the buffer held before.
        #[test]
        fn a_reused_buffer_holds_each_page(
            pages in prop::collection::vec((0usize..200_000, 0u64..1000, any::<bool>()), 1..6),
        ) {
            let mut context = DCtx::create();
            let mut buffer = Vec::new();
            for (len, seed, whole) in pages {
                let page: Vec<u8> = (0..len as u64)
                    .map(|i| ((i ^ seed).wrapping_mul(2654435761) >> 13) as u8 % 16 + 65)
                    .collect();
                let mut prefix = ZstdPrefix::reusing(&mut context, compressed(&page, 3), len, &mut buffer);
                match whole {
                    true => prop_assert_eq!(prefix.into_page().unwrap(), Bytes::from(page)),
                    false => {
                        let got = prefix.prefix(len / 3).unwrap().to_vec();
                        prop_assert_eq!(&got[..], &page[..len / 3]);
                    }
                }
            }
        }
    }

    #[test]
    fn a_reused_buffer_longer_than_the_page_is_not_written_past_it() {
        let page = vec![7u8; 10_000];
        let mut context = DCtx::create();
        let mut buffer = Vec::with_capacity(1 << 20);
        // Its header says one byte less than the frame holds: refused, in one call or in steps.
        let short = ZstdPrefix::reusing(&mut context, compressed(&page, 3), 9_999, &mut buffer);
        assert!(short.into_page().is_err());
        let mut short = ZstdPrefix::reusing(&mut context, compressed(&page, 3), 9_999, &mut buffer);
        if let Ok(got) = short.prefix(usize::MAX) {
            assert!(got.len() <= 9_999);
        }
        drop(short);
        assert!(buffer.capacity() >= 1 << 20, "the buffer came back");
    }

    #[test]
    fn a_short_header_size_is_an_error() {
        let page = vec![7u8; 10_000];
        let mut context = DCtx::create();
        assert!(ZstdPrefix::new(&mut context, compressed(&page, 3), 9_999).into_page().is_err());
        assert!(ZstdPrefix::new(&mut context, compressed(&page, 3), 10_001).into_page().is_err());
        // The context is reusable after an error.
        assert_eq!(ZstdPrefix::new(&mut context, compressed(&page, 3), 10_000).into_page().unwrap(), Bytes::from(page));
    }

    #[test]
    fn a_page_of_two_frames_reads_through_both() {
        let page: Vec<u8> = (0..300_000u64).map(|i| (i.wrapping_mul(2654435761) >> 13) as u8 % 64 + 32).collect();
        let (first, second) = page.split_at(170_000);
        let mut frames = compressed(first, 3).to_vec();
        frames.extend_from_slice(&compressed(second, 3));
        let frames = Bytes::from(frames);
        let mut context = DCtx::create();
        let mut prefix = ZstdPrefix::new(&mut context, frames.clone(), page.len());
        assert_eq!(prefix.prefix(200_000).unwrap(), &page[..200_000]);
        assert_eq!(prefix.into_page().unwrap(), Bytes::from(page.clone()));
        assert_eq!(ZstdPrefix::new(&mut context, frames, page.len()).into_page().unwrap(), Bytes::from(page));
    }

    #[test]
    fn a_prefix_leaves_the_rest_compressed() {
        let page: Vec<u8> = (0..1_600_000u64).map(|i| (i.wrapping_mul(2654435761) >> 13) as u8 % 64 + 32).collect();
        let mut context = DCtx::create();
        let mut prefix = ZstdPrefix::new(&mut context, compressed(&page, 3), page.len());
        prefix.prefix(1000).unwrap();
        assert!(prefix.decompressed() < page.len() / 2, "{} of {}", prefix.decompressed(), page.len());
    }
}
