//! The file format and I/O layer: reading a Parquet file's bytes and metadata, before any
//! decision about what to read.
//!
//! * [`metadata`] — footers and page indexes in as few reads as the hint allows
//!   (step 1 of DataFusion's `ParquetOpener`), with hostile metadata checked before it is trusted.
//! * [`metadata_cache`] — the process-wide metadata cache (path, size, mtime; bounded).
//! * [`opener`] — a file opened for planning: its metadata and Arrow schema.
//! * [`arrow_schema`] — the Arrow schema a file is read as.
//! * [`footer_parts`] — a wide footer decoded in parts, one per core.
//! * [`footer_repair`] — footers with a column metadata field of another type than the
//!   format's, that field dropped (as Thrift decoders skip it).
//! * [`page_headers`] — page headers read without decoding pages.
//! * [`header_page_index`] — a page index built from data page headers' statistics, for
//!   files written without one.
//! * [`delta_binary_packed`] — DELTA_BINARY_PACKED integers (Parquet v2 writers).
//! * [`rle_hybrid`] — the RLE / bit-packing hybrid encoding (levels, dictionary indices).
//! * [`uleb128`] — the variable-length integers of Thrift and of those encodings.
//! * [`zstd_prefix`] — a zstd page decompressed only as far as a selective read needs.
//! * [`inspect`] — a summary of a file's metadata for people (`pqsift inspect`).

pub mod arrow_schema;
pub mod delta_binary_packed;
pub mod footer_parts;
pub mod footer_repair;
pub mod header_page_index;
pub mod inspect;
pub mod metadata;
pub mod metadata_cache;
pub mod opener;
pub mod page_headers;
pub mod rle_hybrid;
pub(crate) mod thrift_walk;
pub mod uleb128;
pub mod zstd_prefix;

/// The Apache parquet-testing corpus, for tests that walk every footer in it.
#[cfg(test)]
pub(crate) mod test_corpus {
    use std::path::{Path, PathBuf};

    /// Every `.parquet` file of the corpus (broken ones too), in no particular order.
    pub(crate) fn files() -> Vec<PathBuf> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/parquet-testing");
        let mut files = Vec::new();
        let mut pending = vec![root];
        while let Some(dir) = pending.pop() {
            for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
                let path = entry.path();
                if path.is_dir() {
                    pending.push(path);
                } else if path.extension().is_some_and(|e| e == "parquet") {
                    files.push(path);
                }
            }
        }
        assert!(files.len() > 200, "the corpus is missing: {} files", files.len());
        files
    }

    /// The serialized `FileMetaData` of a file's bytes; `None` where the tail does not hold one.
    pub(crate) fn footer(bytes: &[u8]) -> Option<&[u8]> {
        let tail = bytes.len().checked_sub(8)?;
        let footer_len = u32::from_le_bytes(bytes[tail..tail + 4].try_into().ok()?) as usize;
        (&bytes[tail + 4..] == b"PAR1" && footer_len <= tail).then(|| &bytes[tail - footer_len..tail])
    }
}
