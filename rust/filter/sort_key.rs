//! The keys of an `ORDER BY ... LIMIT k` a scan is asked for: columns named as Spark's
//! `select` names them, with Spark's NULL placement.
//!
//! ```
//! use pqsift::filter::sort_key::SortKey;
//! let key = SortKey::parse("`a.b`.c", true, false).unwrap();
//! assert_eq!(key.column.parts(), ["a.b", "c"]);
//! assert!(key.descending && !key.nulls_first);
//! // Spark's default: NULLs first ascending, last descending.
//! assert!(SortKey::new("ts", false).nulls_first);
//! ```

use arrow::compute::SortOptions;

use crate::error::Result;
use crate::filter::ColumnPath;
use crate::filter::projection::split_column_name;

/// One key of an `ORDER BY`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SortKey {
    /// The column (a top-level name or a path into structs).
    pub column: ColumnPath,
    /// `DESC`.
    pub descending: bool,
    /// Where NULLs go: first or last.
    pub nulls_first: bool,
}

impl SortKey {
    /// A key with Spark's default NULL placement: first for `ASC`, last for `DESC`.
    pub fn new(column: &str, descending: bool) -> Self {
        Self::parse(column, descending, !descending).unwrap_or_else(|_| Self {
            column: ColumnPath::new([column]),
            descending,
            nulls_first: !descending,
        })
    }

    /// A key on `column` written as Spark's `select` reads it (dots separate struct
    /// fields, back-quotes quote names).
    pub fn parse(column: &str, descending: bool, nulls_first: bool) -> Result<Self> {
        let parts = split_column_name(column).map_err(crate::PqsiftError::filter)?;
        Ok(Self { column: ColumnPath::new(parts), descending, nulls_first })
    }

    /// Arrow's sort options for this key.
    pub fn options(&self) -> SortOptions {
        SortOptions { descending: self.descending, nulls_first: self.nulls_first }
    }
}

/// `ORDER BY keys LIMIT limit`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopN {
    /// The sort keys, most significant first; pruning uses the first.
    pub keys: Vec<SortKey>,
    /// Rows wanted.
    pub limit: usize,
}
