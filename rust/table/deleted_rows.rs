//! Rows a table's metadata deletes from a data file — a Delta deletion vector, Iceberg
//! position deletes or deletion vectors — as the row selections a plan intersects with
//! its own: deleted rows are never decoded.
//!
//! ```
//! use roaring::RoaringTreemap;
//! use pqsift::table::deleted_rows::kept_by_row_group;
//! let deleted: RoaringTreemap = [0u64, 4, 5, 9].into_iter().collect();
//! let kept = kept_by_row_group(&deleted, &[5, 5]).unwrap();
//! assert_eq!(kept[0].to_bools(), [false, true, true, true, false]);
//! assert_eq!(kept[1].to_bools(), [false, true, true, true, false]);
//! assert!(kept_by_row_group(&deleted, &[5, 4]).is_err()); // row 9 is past the file's end
//! ```

use roaring::RoaringTreemap;

use crate::selection::RowSelection;

/// Per row group of `row_group_rows` rows, the rows `deleted` (positions in the file)
/// keeps; an error when a deleted position is past the file's rows.
pub fn kept_by_row_group(deleted: &RoaringTreemap, row_group_rows: &[usize]) -> Result<Vec<RowSelection>, String> {
    let total: u64 = row_group_rows.iter().map(|&r| r as u64).sum();
    if let Some(max) = deleted.max()
        && max >= total
    {
        return Err(format!("row {max} is deleted, but the file has {total} rows"));
    }
    let mut selections = Vec::with_capacity(row_group_rows.len());
    let mut deleted = deleted.iter().peekable();
    let mut start = 0u64;
    for &rows in row_group_rows {
        let end = start + rows as u64;
        let mut kept = Vec::new();
        let mut next = start;
        while let Some(row) = deleted.next_if(|&row| row < end) {
            if row > next {
                kept.push((next - start) as usize..(row - start) as usize);
            }
            next = row + 1;
        }
        if next < end {
            kept.push((next - start) as usize..rows);
        }
        selections.push(RowSelection::from_ranges(&kept, rows).map_err(|e| e.to_string())?);
        start = end;
    }
    Ok(selections)
}
