//! Footers with a `ColumnMetaData` field of another Thrift type than the format's: a writer
//! built on a pre-release parquet-format (Dremio 3.2 wrote a list of structs in field 15,
//! `bloom_filter_length`, an i32 today). The crate's decoder rejects the whole footer;
//! pyarrow's, like every Thrift-generated decoder, skips a field whose type is not the one
//! it expects. [`without_mistyped_fields`] does that skip once, as a byte rewrite of the
//! footer the crate then decodes: only `ColumnMetaData` fields whose id the format defines
//! and whose type differs are dropped; every other byte is copied as it is.
//!
//! ```
//! # use pqsift::format::footer_repair::without_mistyped_fields;
//! // FileMetaData { 4: [RowGroup { 1: [ColumnChunk { 3: ColumnMetaData { 5: 7i64, 15: [struct {}] } }] }] }
//! let footer = [0x49, 0x1c, 0x19, 0x1c, 0x3c, 0x56, 0x0e, 0xa9, 0x1c, 0x00, 0x00, 0x00, 0x00, 0x00];
//! let repaired = without_mistyped_fields(&footer).unwrap();
//! assert_eq!(repaired, [0x49, 0x1c, 0x19, 0x1c, 0x3c, 0x56, 0x0e, 0x00, 0x00, 0x00, 0x00]);
//! assert!(without_mistyped_fields(&repaired).is_none()); // nothing left to drop
//! ```

use super::thrift_walk::ThriftWalker;

const I32: u8 = 5;
const I64: u8 = 6;
const LIST: u8 = 9;
const STRUCT: u8 = 12;

/// The structs on the way from `FileMetaData` to `ColumnMetaData`.
#[derive(Clone, Copy, PartialEq)]
enum Struct {
    FileMetaData,
    RowGroup,
    ColumnChunk,
    ColumnMetaData,
}

impl Struct {
    /// The struct a field of this one holds (in a list or directly), when on the way.
    fn child(self, id: i16, field_type: u8) -> Option<Self> {
        match (self, id, field_type) {
            (Self::FileMetaData, 4, LIST) => Some(Self::RowGroup),
            (Self::RowGroup, 1, LIST) => Some(Self::ColumnChunk),
            (Self::ColumnChunk, 3, STRUCT) => Some(Self::ColumnMetaData),
            _ => None,
        }
    }
}

/// The compact type of `ColumnMetaData`'s field `id` in parquet-format 2.11 (`None`:
/// not a field it defines, left to the crate, which skips unknown ids).
fn column_metadata_type(id: i16) -> Option<u8> {
    Some(match id {
        1 | 4 | 15 => I32,
        2 | 3 | 8 | 13 => LIST,
        5 | 6 | 7 | 9 | 10 | 11 | 14 => I64,
        12 | 16 | 17 => STRUCT,
        _ => return None,
    })
}

/// `footer` (a `FileMetaData`) without the `ColumnMetaData` fields of a type the format
/// does not give them; `None` when there is none (or the bytes do not walk: left to the
/// crate's decoder to report).
pub fn without_mistyped_fields(footer: &[u8]) -> Option<Vec<u8>> {
    let mut rewrite = Rewrite { walker: ThriftWalker::new(footer), out: Vec::with_capacity(footer.len()), dropped: 0 };
    rewrite.copy_struct(Struct::FileMetaData)?;
    (rewrite.dropped > 0).then_some(rewrite.out)
}

struct Rewrite<'a> {
    walker: ThriftWalker<'a>,
    out: Vec<u8>,
    dropped: usize,
}

impl Rewrite<'_> {
    fn copy_struct(&mut self, kind: Struct) -> Option<()> {
        let (mut read_id, mut written_id) = (0i16, 0i16);
        loop {
            // The end of the bytes is not a stop byte: a cut footer does not walk.
            if self.walker.remaining() == 0 {
                return None;
            }
            let Some((field_type, id)) = self.walker.field_header(read_id) else { break };
            read_id = id;
            if kind == Struct::ColumnMetaData && column_metadata_type(id).is_some_and(|expected| expected != field_type)
            {
                self.walker.skip(field_type, 1)?;
                self.dropped += 1;
                continue;
            }
            self.field_header(field_type, id, written_id);
            written_id = id;
            match kind.child(id, field_type) {
                Some(child) if field_type == LIST => {
                    let start = self.walker.position();
                    let (element, size) = self.walker.list_header()?;
                    self.out.extend_from_slice(self.walker.since(start));
                    // Every struct takes at least its stop byte: a longer list is damage.
                    if element != STRUCT || size > self.walker.remaining() as u64 {
                        return None;
                    }
                    for _ in 0..size {
                        self.copy_struct(child)?;
                    }
                }
                Some(child) => self.copy_struct(child)?,
                None => {
                    let start = self.walker.position();
                    self.walker.skip(field_type, 1)?;
                    self.out.extend_from_slice(self.walker.since(start));
                }
            }
        }
        self.out.push(0); // the stop byte
        Some(())
    }

    /// Writes a field header for `id` after a field `last` of the same struct.
    fn field_header(&mut self, field_type: u8, id: i16, last: i16) {
        match id.checked_sub(last) {
            Some(delta @ 1..=15) => self.out.push(((delta as u8) << 4) | field_type),
            _ => {
                self.out.push(field_type);
                let mut zigzag = ((i32::from(id) << 1) ^ (i32::from(id) >> 31)) as u32;
                while zigzag >= 0x80 {
                    self.out.push((zigzag as u8) | 0x80);
                    zigzag >>= 7;
                }
                self.out.push(zigzag as u8);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every footer of the corpus walks, and copies byte for byte: the rewrite changes
    /// nothing but the fields it drops (one file has such a field).
    #[test]
    fn corpus_footers_copy_byte_for_byte() {
        let (mut walked, mut repaired) = (0, Vec::new());
        for path in crate::format::test_corpus::files() {
            let bytes = std::fs::read(&path).unwrap();
            let Some(footer) = crate::format::test_corpus::footer(&bytes) else { continue };
            let mut rewrite = Rewrite { walker: ThriftWalker::new(footer), out: Vec::new(), dropped: 0 };
            if rewrite.copy_struct(Struct::FileMetaData).is_none() {
                continue; // damaged on purpose (bad_data/)
            }
            walked += 1;
            if rewrite.dropped > 0 {
                repaired.push(path.file_name().unwrap().to_string_lossy().into_owned());
            } else {
                assert_eq!(rewrite.out, &footer[..rewrite.out.len()], "{}", path.display());
            }
        }
        assert!(walked > 200, "{walked}");
        assert_eq!(repaired, ["dict-page-offset-zero.parquet"]);
    }

    /// Cut or lying footers end the walk (no repair), in bounded work and memory.
    #[test]
    fn damaged_footers_do_not_walk() {
        let footer = [0x49, 0x1c, 0x19, 0x1c, 0x3c, 0x56, 0x0e, 0xa9, 0x1c, 0x00, 0x00, 0x00, 0x00, 0x00];
        for cut in 0..footer.len() {
            assert!(without_mistyped_fields(&footer[..cut]).is_none(), "cut at {cut}");
        }
        // A list of row groups claiming 2^60 elements.
        let lying = [0x49, 0xfc, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x10, 0x00];
        assert!(without_mistyped_fields(&lying).is_none());
    }
}
