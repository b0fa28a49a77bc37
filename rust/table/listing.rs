//! Listing a directory's data files the way Spark's `InMemoryFileIndex` does: recursively,
//! leaving out what writers leave behind that is not data.
//!
//! A name is left out when it starts with `.` (hidden files, `.part-0.parquet.crc`), or
//! with `_` unless it holds `=` (`_SUCCESS`, `_temporary/`, `_delta_log/`, but not a
//! partition directory `_col=1/`), or ends with `._COPYING_` (a file being copied) or
//! `.crc` (checksums). Summary files `_metadata` / `_common_metadata` are left out as well:
//! they hold no rows. Every other file is a data file, whatever its extension — Hive and
//! some writers name files `000000_0` — as Spark reads it.
//!
//! ```
//! use pqsift::storage::Location;
//! use pqsift::table::listing::{is_ignored, list_data_files};
//! let dir = std::env::temp_dir().join("pqsift_listing_doc");
//! std::fs::create_dir_all(dir.join("day=1/_temporary")).unwrap();
//! std::fs::write(dir.join("day=1/part-0.parquet"), b"").unwrap();
//! std::fs::write(dir.join("day=1/.part-0.parquet.crc"), b"").unwrap();
//! std::fs::write(dir.join("day=1/_temporary/part-1.parquet"), b"").unwrap();
//! std::fs::write(dir.join("_SUCCESS"), b"").unwrap();
//! let listed = list_data_files(&Location::from(dir.as_path())).unwrap();
//! assert_eq!(listed, [Location::from(dir.join("day=1/part-0.parquet"))]);
//! assert!(!is_ignored("_col=1"));
//! ```

use crate::error::Result;
use crate::storage::Location;
use crate::storage::source::{kept_below, list_recursive};

/// Whether Spark leaves a file or directory of this name out of a table.
///
/// ```
/// use pqsift::table::listing::is_ignored;
/// assert!(is_ignored("_SUCCESS") && is_ignored(".hidden") && is_ignored("x.crc"));
/// assert!(is_ignored("part-0.parquet._COPYING_") && is_ignored("_metadata"));
/// assert!(!is_ignored("part-0.snappy.parquet") && !is_ignored("_p=2"));
/// ```
pub fn is_ignored(name: &str) -> bool {
    (name.starts_with('_') && !name.contains('='))
        || name.starts_with('.')
        || name.ends_with("._COPYING_")
        || name.ends_with(".crc")
}

/// The data files under `dir`, recursively, in location order (see the module
/// documentation for what is left out: a file is, when any part of its path below `dir`
/// is). Symbolic links are followed. A store's prefix is listed in one pass (a request per
/// 1,000 objects), its objects' sizes kept for opening them without another request.
pub fn list_data_files(dir: &Location) -> Result<Vec<Location>> {
    list_recursive(dir, &is_ignored)
}

/// The data files among `listed`, a recursive listing of the store directory `dir` made
/// already (see [`stat_table`](crate::storage::source::stat_table)): what
/// [`list_data_files`] would list, without a request.
pub fn data_files_among(dir: &Location, listed: Vec<Location>) -> Vec<Location> {
    kept_below(dir, listed, &is_ignored)
}
