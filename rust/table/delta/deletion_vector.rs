//! Deletion vectors: which rows of a data file are deleted, as the Delta protocol stores them
//! ("Deletion Vector Format"): inline in the log (`i`, Z85-encoded), in a file named after a
//! UUID beside the data (`u`: an optional prefix then the Z85-encoded UUID, giving
//! `<prefix>/deletion_vector_<uuid>.bin`), or at an absolute path (`p`).
//!
//! A file holds a format version byte (1), then at the descriptor's `offset`: the size of
//! the bitmap (4 bytes, big-endian), the bitmap — the magic `1681511377` (little-endian)
//! and a `RoaringTreemap` in the "64-bit portable" format — and a CRC-32 of the bitmap
//! (big-endian). Sizes are checked against the file before anything is allocated, the CRC
//! and the cardinality against the descriptor.
//!
//! ```
//! use pqsift::table::delta::deletion_vector::{DeletionVectorDescriptor, encode_inline};
//! let inline = encode_inline(&[3, 5]);
//! let dv = DeletionVectorDescriptor {
//!     storage_type: "i".into(), path_or_inline_dv: inline, offset: None, size_in_bytes: 0, cardinality: 2,
//! };
//! assert_eq!(dv.load(&std::path::Path::new("/table").into()).unwrap(), vec![3, 5]);
//! ```

use parquet::file::reader::Length;
use roaring::RoaringTreemap;
use serde::{Deserialize, Serialize};

use crate::error::{PqsiftError, Result};
use crate::storage::{FileSource, Location};

/// The magic number of the portable RoaringBitmap serialization.
const PORTABLE_MAGIC: u32 = 1_681_511_377;
/// The magic number of the native serialization (not written by any known writer).
const NATIVE_MAGIC: u32 = 1_681_511_376;
/// Length of a Z85-encoded UUID.
const ENCODED_UUID_LEN: usize = 20;

/// The `deletionVector` field of an `add` or `remove` action.
///
/// ```
/// let dv: pqsift::table::delta::deletion_vector::DeletionVectorDescriptor = serde_json::from_str(
///     r#"{"storageType":"u","pathOrInlineDv":"ab^-aqEH.-t@S}K{vb[*k^","offset":1,"sizeInBytes":36,"cardinality":2}"#).unwrap();
/// assert_eq!(dv.unique_id(), "uab^-aqEH.-t@S}K{vb[*k^@1");
/// assert_eq!(
///     dv.absolute_path(&std::path::Path::new("/t").into()).unwrap().unwrap().to_string(),
///     "/t/ab/deletion_vector_d2c639aa-8816-431a-aaf6-d3fe2512ff61.bin",
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DeletionVectorDescriptor {
    /// `u` (relative, UUID-named), `i` (inline) or `p` (absolute path).
    pub storage_type: String,
    /// The encoded UUID (with its prefix), the Z85 bitmap, or the path.
    pub path_or_inline_dv: String,
    /// Where the DV starts in its file (`None`: 1, after the version byte).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<i32>,
    /// Size of the serialized bitmap.
    #[serde(default)]
    pub size_in_bytes: i32,
    /// Rows it deletes.
    #[serde(default)]
    pub cardinality: i64,
}

impl DeletionVectorDescriptor {
    /// The id that, with the file path, identifies an `add` in log replay.
    pub fn unique_id(&self) -> String {
        match self.offset {
            Some(offset) => format!("{}{}@{offset}", self.storage_type, self.path_or_inline_dv),
            None => format!("{}{}", self.storage_type, self.path_or_inline_dv),
        }
    }

    /// The file holding this DV (`None` for an inline one). A `p` path is a `file:` URI or
    /// a plain absolute path; other schemes are not readable here.
    pub fn absolute_path(&self, table_root: &Location) -> Result<Option<Location>> {
        match self.storage_type.as_str() {
            "i" => Ok(None),
            "u" => {
                let bytes = self.path_or_inline_dv.as_bytes();
                if bytes.len() < ENCODED_UUID_LEN
                    || !self.path_or_inline_dv.is_char_boundary(bytes.len() - ENCODED_UUID_LEN)
                {
                    return Err(self
                        .corrupt(table_root, "a relative deletion vector path is shorter than its 20-character UUID"));
                }
                let (prefix, encoded) = self.path_or_inline_dv.split_at(bytes.len() - ENCODED_UUID_LEN);
                let uuid = z85::decode(encoded)
                    .map_err(|e| self.corrupt(table_root, format!("its UUID is not Z85: {e:?}")))?;
                let uuid: [u8; 16] =
                    uuid.try_into().map_err(|_| self.corrupt(table_root, "its UUID does not decode to 16 bytes"))?;
                let name = format!("deletion_vector_{}.bin", format_uuid(&uuid));
                let relative = if prefix.is_empty() { name } else { format!("{prefix}/{name}") };
                Ok(Some(table_root.join(&relative)))
            }
            "p" => super::paths::resolve_path(table_root, &self.path_or_inline_dv).map(Some),
            other => Err(PqsiftError::unsupported(table_root, format!("deletion vector storage type {other:?}"))),
        }
    }

    /// The deleted row indexes, ascending, checked against [`Self::cardinality`].
    pub fn load(&self, table_root: &Location) -> Result<Vec<u64>> {
        Ok(self.load_treemap(table_root, u64::MAX)?.into_iter().collect())
    }

    /// The deleted row indexes of a data file of `file_rows` rows as a treemap, checked
    /// against [`Self::cardinality`]. The descriptor's size and cardinality are checked
    /// against what a vector over that many rows can be before anything is read.
    pub fn load_treemap(&self, table_root: &Location, file_rows: u64) -> Result<RoaringTreemap> {
        if u64::try_from(self.cardinality).is_ok_and(|deleted| deleted > file_rows) {
            return Err(
                self.corrupt(table_root, format!("it deletes {} rows of a file of {file_rows}", self.cardinality))
            );
        }
        let most = max_serialized_bytes(file_rows);
        if u64::try_from(self.size_in_bytes).is_ok_and(|size| size > most) {
            return Err(self.corrupt(
                table_root,
                format!(
                    "its {} bytes are more than a vector over the file's {file_rows} rows takes (at most {most})",
                    self.size_in_bytes
                ),
            ));
        }
        let treemap = match self.absolute_path(table_root)? {
            None => {
                let bytes = z85::decode(&self.path_or_inline_dv)
                    .map_err(|e| self.corrupt(table_root, format!("an inline deletion vector is not Z85: {e:?}")))?;
                let declared = usize::try_from(self.size_in_bytes).unwrap_or(0);
                let bytes = if declared > 0 && declared <= bytes.len() { &bytes[..declared] } else { &bytes[..] };
                parse_bitmap(bytes).map_err(|e| self.corrupt(table_root, e))?
            }
            Some(path) => read_from_file(&path, self.offset, self.size_in_bytes)?,
        };
        if treemap.len() != u64::try_from(self.cardinality).unwrap_or(u64::MAX) {
            return Err(self.corrupt(
                table_root,
                format!(
                    "the deletion vector holds {} rows but its descriptor says {}",
                    treemap.len(),
                    self.cardinality
                ),
            ));
        }
        Ok(treemap)
    }

    fn corrupt(&self, table_root: &Location, reason: impl std::fmt::Display) -> PqsiftError {
        PqsiftError::corrupt_delta(table_root, format!("deletion vector {}: {reason}", self.unique_id()))
    }
}

/// The most bytes a serialized vector (magic number and portable treemap) over `rows` rows
/// takes: per 2^32 rows a bitmap's key and header, per 2^16 rows a container of at most
/// 8 KiB (an array of 4,096 values, a bitmap, or 2,048 runs) with its descriptors.
fn max_serialized_bytes(rows: u64) -> u64 {
    let bitmaps = rows.div_ceil(1 << 32).max(1);
    let containers = rows.div_ceil(1 << 16).max(1);
    let per_bitmap = 4 + 8; // key, cookie and container count
    let per_container = 8 + 8 + 8192; // key and cardinality, offset and run flag (rounded up), payload
    (4 + 8 + 64u64)
        .saturating_add(bitmaps.saturating_mul(per_bitmap))
        .saturating_add(containers.saturating_mul(per_container))
}

/// A bitmap: the magic number, then a portable `RoaringTreemap`.
fn parse_bitmap(bytes: &[u8]) -> std::result::Result<RoaringTreemap, String> {
    let magic = bytes.get(..4).ok_or("shorter than its magic number")?;
    match u32::from_le_bytes([magic[0], magic[1], magic[2], magic[3]]) {
        PORTABLE_MAGIC => RoaringTreemap::deserialize_from(&bytes[4..]).map_err(|e| format!("bad bitmap: {e}")),
        NATIVE_MAGIC => Err("the native RoaringBitmap serialization is not supported".into()),
        other => Err(format!("bad magic number {other}")),
    }
}

/// Reads the DV at `offset` of `path`: size, bitmap, CRC.
fn read_from_file(path: &Location, offset: Option<i32>, size_in_bytes: i32) -> Result<RoaringTreemap> {
    // Opened once: from a store, its size (one `HEAD`) serves both reads.
    let file = FileSource::open(path)?;
    let length = file.len();
    let offset = u64::try_from(offset.unwrap_or(1))
        .map_err(|_| PqsiftError::corrupt_delta(path, "negative deletion vector offset"))?;
    let size =
        u64::try_from(size_in_bytes).map_err(|_| PqsiftError::corrupt_delta(path, "negative deletion vector size"))?;
    // 4 bytes of size, the bitmap, 4 bytes of CRC, after the format version byte.
    if length == 0 || offset.checked_add(size).and_then(|end| end.checked_add(8)).is_none_or(|end| end > length) {
        return Err(PqsiftError::corrupt_delta(
            path,
            format!("a deletion vector of {size} bytes at offset {offset} does not fit in the file's {length} bytes"),
        ));
    }
    let version = file.read(0..1)?;
    if version[0] != 1 {
        return Err(PqsiftError::corrupt_delta(
            path,
            format!("deletion vector file format version {} (1 expected)", version[0]),
        ));
    }
    let buffer = file.read(offset..offset + size + 8)?;
    stored_vector(&buffer).map_err(|e| PqsiftError::corrupt_delta(path, format!("deletion vector {e}")))
}

/// A stored deletion vector: its size (4 bytes, big-endian), the bitmap (magic number and
/// portable `RoaringTreemap`), a CRC-32 of the bitmap (4 bytes, big-endian). Delta's files
/// hold these after a version byte; an Iceberg (format 3) Puffin file's
/// `deletion-vector-v1` blob is one.
pub fn stored_vector(bytes: &[u8]) -> std::result::Result<RoaringTreemap, String> {
    let size_bytes = bytes.get(..4).ok_or("shorter than its size")?;
    let size = u32::from_be_bytes([size_bytes[0], size_bytes[1], size_bytes[2], size_bytes[3]]) as usize;
    if bytes.len() != size.saturating_add(8) {
        return Err(format!("a vector of {size} bytes in a record of {} bytes", bytes.len()));
    }
    let bitmap = &bytes[4..4 + size];
    let crc_bytes = &bytes[4 + size..];
    let stored_crc = u32::from_be_bytes([crc_bytes[0], crc_bytes[1], crc_bytes[2], crc_bytes[3]]);
    let crc = crc32fast::hash(bitmap);
    if crc != stored_crc {
        return Err(format!("CRC {crc:#010x}, {stored_crc:#010x} stored"));
    }
    parse_bitmap(bitmap)
}

/// A UUID in its canonical text form.
fn format_uuid(bytes: &[u8; 16]) -> String {
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!("{}-{}-{}-{}-{}", &hex[0..8], &hex[8..12], &hex[12..16], &hex[16..20], &hex[20..32])
}

/// `rows` as an inline deletion vector (`pathOrInlineDv` of storage type `i`): the magic
/// number and the portable treemap, Z85-encoded (padded to a multiple of 4 bytes). For tests
/// and examples.
///
/// ```
/// let text = pqsift::table::delta::deletion_vector::encode_inline(&[1]);
/// assert_eq!(text.len() % 5, 0);
/// ```
pub fn encode_inline(rows: &[u64]) -> String {
    let treemap: RoaringTreemap = rows.iter().copied().collect();
    let mut bytes = PORTABLE_MAGIC.to_le_bytes().to_vec();
    // Serializing into a Vec cannot fail.
    let _ = treemap.serialize_into(&mut bytes);
    while !bytes.len().is_multiple_of(4) {
        bytes.push(0);
    }
    z85::encode(&bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Every vector over a file's rows, sparse or dense, fits the bound its size is
        /// checked against: the check refuses damage, never a real vector.
        #[test]
        fn a_vector_over_a_file_fits_the_size_bound(rows in 1u64..400_000, picks in proptest::collection::vec(any::<u64>(), 0..3000), every in 0u64..4) {
            let deleted: RoaringTreemap = match every {
                0 => picks.iter().map(|p| p % rows).collect(),
                step => (0..rows).filter(|r| r % (step + 1) != 0).collect(),
            };
            let mut bytes = PORTABLE_MAGIC.to_le_bytes().to_vec();
            deleted.serialize_into(&mut bytes).unwrap();
            prop_assert!(bytes.len() as u64 <= max_serialized_bytes(rows), "{} bytes for {} rows", bytes.len(), rows);
        }
    }
}
