//! A zstd-compressed page decompressed only as far as its reader needs.
//!
//! A selective read decodes a page for its selected rows only, but a compressed page is
//! one zstd frame, and the crate decompresses it whole before a value is read. Values of
//! a PLAIN page lie in row order, so a page whose last selected row is two thirds in needs
//! two thirds of the frame: [`ZstdPrefix`] decompresses block after block until the
//! reader's prefix is there, and never the rest. On the peers benchmark's text column
//! (pages of 10,000 rows, ~5 selected each) 23% of the bytes lie past a page's last
//! selected value; profiled, ~15% of its decompression time is saved (blocks hold up to
//! 128 KiB).
//!
//! The blocks are decoded straight into the page's buffer, allocated once at the size its
//! header gives (zstd's stable output buffer: no copy through the decoder's window, so a
//! whole page costs what a one-shot decompression costs).
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
use zstd_safe::{DCtx, DParameter, InBuffer, OutBuffer, ResetDirective};

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
    /// The page: its capacity is the uncompressed size and never changes (the decoder
    /// writes into it across calls), its length what is decompressed.
    output: Vec<u8>,
    finished: bool,
}

impl<'a> ZstdPrefix<'a> {
    /// Frames `input` of `size` bytes uncompressed (as they declare it, or the page
    /// header says: bounded by the caller), to be decompressed with `context`.
    pub fn new(context: &'a mut DCtx<'static>, input: Bytes, size: usize) -> Self {
        // An empty page has nothing to decompress (writers may leave its frame out).
        Self {
            context,
            input,
            consumed: 0,
            output: Vec::with_capacity(size),
            finished: size == 0,
        }
    }

    /// The page's uncompressed size.
    pub fn size(&self) -> usize {
        self.output.capacity()
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
            self.context
                .reset(ResetDirective::SessionOnly)
                .map_err(error)?;
            self.context
                .set_parameter(DParameter::StableOutBuffer(true))
                .map_err(error)?;
        }
        let capacity = self.output.capacity();
        let target = n.saturating_add(STEP_BYTES).min(capacity);
        while self.output.len() < n.min(capacity) && !self.finished {
            // Input in proportion to the output still wanted (the frame's ratio), with a
            // margin: the decoder keeps a partial block's input for the next call.
            let ratio = self.input.len() as f64 / capacity.max(1) as f64;
            let wanted = ((target - self.output.len()) as f64 * ratio * 1.25) as usize + 1024;
            let end = self.consumed.saturating_add(wanted).min(self.input.len());
            let mut input = InBuffer::around(&self.input[self.consumed..end]);
            let at = self.output.len();
            let mut output = OutBuffer::around_pos(&mut self.output, at);
            let hint = self
                .context
                .decompress_stream(&mut output, &mut input)
                .map_err(error)?;
            let progress = input.pos() > 0 || output.pos() > at;
            self.consumed += input.pos();
            // A frame ended: the page ends with it, or the next frame follows.
            if hint == 0 && self.consumed == self.input.len() {
                self.finished = true;
            } else if !progress && end == self.input.len() {
                return Err(format!(
                    "the zstd frame ends after {} of its {capacity} bytes",
                    self.output.len()
                ));
            }
        }
        Ok(())
    }

    /// The whole page; an error unless it decompresses to exactly its size. Nothing
    /// decompressed yet: in one call, as the crate would (no streaming state).
    pub fn into_page(mut self) -> Result<Bytes, String> {
        if self.consumed == 0 && !self.finished {
            let written = self
                .context
                .decompress(&mut self.output, &self.input)
                .map_err(error)?;
            (self.consumed, self.finished) = (self.input.len(), written == self.output.len());
        }
        self.prefix(usize::MAX)?;
        if !self.finished || self.output.len() != self.output.capacity() {
            return Err(format!(
                "a page decompresses to {} bytes where its header says {}",
                self.output.len(),
                self.output.capacity()
            ));
        }
        Ok(Bytes::from(std::mem::take(&mut self.output)))
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

    #[test]
    fn a_short_header_size_is_an_error() {
        let page = vec![7u8; 10_000];
        let mut context = DCtx::create();
        assert!(
            ZstdPrefix::new(&mut context, compressed(&page, 3), 9_999)
                .into_page()
                .is_err()
        );
        assert!(
            ZstdPrefix::new(&mut context, compressed(&page, 3), 10_001)
                .into_page()
                .is_err()
        );
        // The context is reusable after an error.
        assert_eq!(
            ZstdPrefix::new(&mut context, compressed(&page, 3), 10_000)
                .into_page()
                .unwrap(),
            Bytes::from(page)
        );
    }

    #[test]
    fn a_page_of_two_frames_reads_through_both() {
        let page: Vec<u8> = (0..300_000u64)
            .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8 % 64 + 32)
            .collect();
        let (first, second) = page.split_at(170_000);
        let mut frames = compressed(first, 3).to_vec();
        frames.extend_from_slice(&compressed(second, 3));
        let frames = Bytes::from(frames);
        let mut context = DCtx::create();
        let mut prefix = ZstdPrefix::new(&mut context, frames.clone(), page.len());
        assert_eq!(prefix.prefix(200_000).unwrap(), &page[..200_000]);
        assert_eq!(prefix.into_page().unwrap(), Bytes::from(page.clone()));
        assert_eq!(
            ZstdPrefix::new(&mut context, frames, page.len())
                .into_page()
                .unwrap(),
            Bytes::from(page)
        );
    }

    #[test]
    fn a_prefix_leaves_the_rest_compressed() {
        let page: Vec<u8> = (0..1_600_000u64)
            .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8 % 64 + 32)
            .collect();
        let mut context = DCtx::create();
        let mut prefix = ZstdPrefix::new(&mut context, compressed(&page, 3), page.len());
        prefix.prefix(1000).unwrap();
        assert!(
            prefix.decompressed() < page.len() / 2,
            "{} of {}",
            prefix.decompressed(),
            page.len()
        );
    }
}
