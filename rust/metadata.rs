//! Reading a file's footer and page index (ParquetOpener step 1, seed 000).
//!
//! Only metadata is read here: the footer (schema, row groups, column chunk statistics)
//! and, when the file has one, the page index (column index and offset index). Errors name
//! the file and the reason.

use std::fs::File;
use std::ops::Range;
use std::path::Path;
use std::sync::Arc;

use parquet::file::metadata::{PageIndexPolicy, ParquetMetaData, ParquetMetaDataReader};

use crate::error::{PqsiftError, Result};
use crate::selection::PageLocation;

/// Reads the footer and, when present, the page index of the Parquet file at `path`.
///
/// ```no_run
/// let metadata = pqsift::metadata::load(std::path::Path::new("data/events.parquet")).unwrap();
/// println!("{} row groups", metadata.num_row_groups());
/// ```
pub fn load(path: &Path) -> Result<Arc<ParquetMetaData>> {
    let file = File::open(path).map_err(|e| PqsiftError::io(path, e))?;
    let metadata = ParquetMetaDataReader::new()
        .with_page_index_policy(PageIndexPolicy::Optional)
        .parse_and_finish(&file)
        .map_err(|e| PqsiftError::corrupt(path, e))?;
    Ok(Arc::new(metadata))
}

/// The data pages of one column chunk, from the offset index; `None` when the file has no
/// offset index for it.
pub fn page_locations(metadata: &ParquetMetaData, row_group: usize, column: usize) -> Option<Vec<PageLocation>> {
    let index = metadata.page_index_for_row_group(row_group);
    let locations = index.page_locations(column)?;
    Some(
        locations
            .iter()
            .map(|p| PageLocation {
                // The offset index is validated by the parquet crate; negative values would be
                // corrupt and are clamped to 0 rather than wrapped.
                offset: u64::try_from(p.offset).unwrap_or(0),
                compressed_size: u64::try_from(p.compressed_page_size).unwrap_or(0),
                first_row_index: u64::try_from(p.first_row_index).unwrap_or(0),
            })
            .collect(),
    )
}

/// The byte range of a column chunk's dictionary page (from the chunk's start to its first
/// data page), if it has one.
pub fn dictionary_page_range(metadata: &ParquetMetaData, row_group: usize, column: usize) -> Option<Range<u64>> {
    let chunk = metadata.row_group(row_group).column(column);
    let start = u64::try_from(chunk.dictionary_page_offset()?).ok()?;
    let first_data_page = u64::try_from(chunk.data_page_offset()).ok()?;
    (start < first_data_page).then_some(start..first_data_page)
}
