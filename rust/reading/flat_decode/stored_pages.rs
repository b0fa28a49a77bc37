//! Pages handed over still compressed, decompressed by pqsift into a buffer reused from
//! page to page: zstd pages whole, or a PLAIN page only as far as its last selected value
//! ([`ZstdPrefix`]); snappy pages whole.
//!
//! The crate's reader decompresses each page into a buffer of its own, zero-filled first
//! and faulted in fresh from the kernel, then freed once its values are copied out: two
//! passes over the page's memory before the decompressor writes it.

use super::*;

/// Where a page is in its column chunk: the chunk's dictionary page, or its `n`-th data
/// page (counting those skipped).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PageAt {
    Dictionary,
    Data(usize),
}

/// Pages handed over still compressed (a reader over the chunk's metadata with its codec
/// set to none), the codec's state, and a buffer the pages are decompressed into in turn.
///
/// ```
/// use std::sync::Arc;
/// use arrow::array::{Array, Int64Array, RecordBatch};
/// use parquet::arrow::ArrowWriter;
/// use parquet::basic::Compression;
/// use parquet::file::properties::WriterProperties;
/// use parquet::file::reader::{FileReader, SerializedFileReader};
/// use parquet::file::serialized_reader::SerializedPageReader;
/// use pqsift::reading::flat_decode::{StoredPages, decode_selected};
/// use pqsift::selection::{RowSelection, RowSelector};
///
/// let values = Int64Array::from_iter_values(0..1000);
/// let batch = RecordBatch::try_from_iter([("v", Arc::new(values) as _)]).unwrap();
/// let properties = WriterProperties::builder().set_compression(Compression::SNAPPY).build();
/// let mut file = Vec::new();
/// let mut writer = ArrowWriter::try_new(&mut file, batch.schema(), Some(properties)).unwrap();
/// writer.write(&batch).unwrap();
/// writer.close().unwrap();
///
/// let file = bytes::Bytes::from(file);
/// let chunk = SerializedFileReader::new(file.clone()).unwrap().metadata().row_group(0).column(0).clone();
/// // The pages as stored: the codec is taken off the chunk's metadata.
/// let stored = chunk.clone().into_builder().set_compression(Compression::UNCOMPRESSED).build().unwrap();
/// let mut pages = SerializedPageReader::new(Arc::new(file), &stored, 1000, None).unwrap();
/// let selection = RowSelection::from_runs([RowSelector::skip(990), RowSelector::select(10)]).unwrap();
/// let mut snappy = StoredPages::snappy(1 << 20);
/// let read = decode_selected(&mut pages, chunk.column_descr(), &arrow::datatypes::DataType::Int64, &selection, Some(&mut snappy))
///     .unwrap()
///     .unwrap();
/// assert_eq!(read.as_any().downcast_ref::<Int64Array>().unwrap().value(0), 990);
/// ```
pub struct StoredPages<'s> {
    codec: Codec<'s>,
    /// The buffer pages are decompressed into, handed from page to page: taken from, and
    /// given back to, the thread's [`BUFFER`]. Its length is how much of it is initialised
    /// (a snappy page is decompressed into an initialised slice); a zstd page uses its
    /// capacity.
    buffer: Vec<u8>,
    /// The most a page may take uncompressed (`max_page_bytes`).
    max_size: usize,
}

enum Codec<'s> {
    /// A decompression context, and each page's uncompressed size: as its frames declare
    /// it (one-shot writers: Arrow C++, DuckDB), else from its header (streaming writers:
    /// parquet-mr, arrow-rs), which the crate's reader does not pass on.
    Zstd {
        /// Taken from, and given back to, the thread's [`CONTEXT`].
        context: Option<zstd_safe::DCtx<'static>>,
        sizes: Box<dyn FnMut(PageAt) -> Result<usize, DecodeError> + 's>,
        /// Whether sizes the frames declare are used (off in tests of the header path: the
        /// crate's writer, like Arrow C++, declares them).
        declared: bool,
    },
    /// Raw snappy blocks, which begin with their uncompressed length.
    Snappy,
}

thread_local! {
    /// A decompression context per thread, kept from chunk to chunk: making one (and its
    /// buffers) costs more than a small page's decompression.
    static CONTEXT: std::cell::RefCell<Option<zstd_safe::DCtx<'static>>> = const { std::cell::RefCell::new(None) };
    /// A page buffer per thread, kept from chunk to chunk: at most the largest page the
    /// thread decompressed (`max_page_bytes`), freed with the thread (a scan's reader).
    static BUFFER: std::cell::Cell<Vec<u8>> = const { std::cell::Cell::new(Vec::new()) };
}

impl<'s> StoredPages<'s> {
    /// zstd pages of at most `max_size` bytes uncompressed; `sizes` gives the size of a
    /// page whose frames do not declare it (a frame declaring more is refused).
    pub fn zstd(max_size: usize, sizes: impl FnMut(PageAt) -> Result<usize, DecodeError> + 's) -> Self {
        let context = CONTEXT.with(|kept| kept.borrow_mut().take()).unwrap_or_else(zstd_safe::DCtx::create);
        Self {
            codec: Codec::Zstd { context: Some(context), sizes: Box::new(sizes), declared: true },
            buffer: BUFFER.take(),
            max_size,
        }
    }

    /// snappy pages of at most `max_size` bytes uncompressed (a page declaring more is
    /// refused).
    pub fn snappy(max_size: usize) -> Self {
        Self { codec: Codec::Snappy, buffer: BUFFER.take(), max_size }
    }

    #[cfg(test)]
    pub(super) fn with_headers_only(mut self) -> Self {
        if let Codec::Zstd { declared, .. } = &mut self.codec {
            *declared = false;
        }
        self
    }

    /// The values of the page at `at`, stored as `compressed` (after `skipped` bytes that
    /// are not: a v2 page's levels), decompressed whole, or (`lazy`, a zstd page) on
    /// demand.
    pub(super) fn values(
        &mut self,
        at: PageAt,
        compressed: bytes::Bytes,
        skipped: usize,
        lazy: bool,
    ) -> Result<PageValues<'_>, DecodeError> {
        let max_size = self.max_size;
        match &mut self.codec {
            Codec::Zstd { context, sizes, declared } => {
                // The frames' declared sizes summed (their block headers walked, no byte
                // decoded): no read of the page's header.
                let declared = match declared {
                    true => zstd_safe::find_decompressed_size(&compressed),
                    false => Ok(None),
                };
                let size = match declared {
                    Ok(Some(size)) => usize::try_from(size).ok().filter(|&size| size <= max_size).ok_or_else(|| {
                        DecodeError::Corrupt(format!("a zstd page declares {size} bytes, more than {max_size}"))
                    })?,
                    _ => sizes(at)?.checked_sub(skipped).ok_or_else(|| {
                        DecodeError::Corrupt(format!("a page's levels ({skipped} bytes) exceed its uncompressed size"))
                    })?,
                };
                let context = context.as_mut().expect("given back on drop only");
                let mut frame = ZstdPrefix::reusing(context, compressed, size, &mut self.buffer);
                if !lazy {
                    frame.whole().map_err(DecodeError::Corrupt)?;
                }
                Ok(PageValues::Zstd { frame, start: 0 })
            }
            // A v2 page of no values may store none of their bytes, not even a block's
            // length (some writers do, as the crate's reader allows): nothing to decompress.
            Codec::Snappy if compressed.is_empty() => Ok(PageValues::Ready(compressed)),
            Codec::Snappy => {
                let corrupt = |e: snap::Error| DecodeError::Corrupt(format!("a snappy page: {e}"));
                let size = snap::raw::decompress_len(&compressed).map_err(corrupt)?;
                if size > max_size {
                    return Err(DecodeError::Corrupt(format!(
                        "a snappy page declares {size} bytes, more than {max_size}"
                    )));
                }
                if self.buffer.len() < size {
                    // Zero-filled only as far as no page before reached.
                    self.buffer.resize(size, 0);
                }
                // An error unless the page decompresses to exactly the length it declares.
                snap::raw::Decoder::new().decompress(&compressed, &mut self.buffer[..size]).map_err(corrupt)?;
                Ok(PageValues::Reused { buffer: &mut self.buffer, len: size, start: 0 })
            }
        }
    }
}

impl Drop for StoredPages<'_> {
    fn drop(&mut self) {
        if let Codec::Zstd { context, .. } = &mut self.codec
            && let Some(context) = context.take()
        {
            CONTEXT.with(|kept| *kept.borrow_mut() = Some(context));
        }
        BUFFER.set(std::mem::take(&mut self.buffer));
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn snappy(page: &[u8]) -> bytes::Bytes {
        snap::raw::Encoder::new().compress_vec(page).unwrap().into()
    }

    /// The page's values, whole.
    fn whole(values: PageValues<'_>) -> Vec<u8> {
        let mut values = values;
        values.prefix(usize::MAX).unwrap().to_vec()
    }

    #[test]
    fn snappy_pages_share_one_buffer_and_each_reads_as_itself() {
        let long: Vec<u8> = (0..5000u32).map(|i| (i * 7 % 251) as u8).collect();
        let short = b"a shorter page after a longer one".to_vec();
        let mut pages = StoredPages::snappy(1 << 20);
        assert_eq!(whole(pages.values(PageAt::Data(0), snappy(&long), 0, false).unwrap()), long);
        let mut values = pages.values(PageAt::Data(1), snappy(&short), 0, true).unwrap();
        assert_eq!(values.len(), short.len());
        values.advance(2);
        assert_eq!(values.prefix(3).unwrap(), &short[2..], "the whole rest, never the longer page's tail");
        // Copied out: the buffer stays.
        assert_eq!(values.into_owned().unwrap(), &short[2..]);
        assert!(pages.buffer.capacity() >= long.len());
        // A page filling the buffer takes it: the next page has a new one.
        let owned = pages.values(PageAt::Data(2), snappy(&long), 0, false).unwrap().into_owned().unwrap();
        assert_eq!(owned, long);
        assert_eq!(pages.buffer.capacity(), 0);
        assert_eq!(whole(pages.values(PageAt::Data(3), snappy(&short), 0, false).unwrap()), short);
    }

    #[test]
    fn an_empty_snappy_page_is_empty() {
        let mut pages = StoredPages::snappy(100);
        let values = pages.values(PageAt::Data(0), bytes::Bytes::new(), 7, false).unwrap();
        assert_eq!(values.len(), 0);
    }

    #[test]
    fn a_snappy_page_declaring_more_than_the_limit_is_refused() {
        let error = StoredPages::snappy(100).values(PageAt::Dictionary, snappy(&[7; 1000]), 0, false).err().unwrap();
        assert!(error.to_string().contains("a snappy page declares 1000 bytes, more than 100"), "{error}");
    }

    proptest! {
        /// Bytes that are not a snappy block, or one cut short, are an error, never a panic
        /// or a read past the page.
        #[test]
        fn bad_snappy_pages_fail(noise in prop::collection::vec(any::<u8>(), 0..300), cut in any::<prop::sample::Index>()) {
            let mut pages = StoredPages::snappy(1 << 16);
            if let Ok(values) = pages.values(PageAt::Data(0), noise.into(), 0, false) {
                prop_assert!(values.len() <= 1 << 16);
            }
            let page: Vec<u8> = (0..2000u32).map(|i| (i % 13) as u8).collect();
            let compressed = snappy(&page);
            // (No bytes at all is a page of no values.)
            let cut = 1 + cut.index(compressed.len() - 1);
            prop_assert!(pages.values(PageAt::Data(1), compressed.slice(..cut), 0, false).is_err());
        }
    }
}
