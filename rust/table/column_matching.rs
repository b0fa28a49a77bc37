//! How a scan schema's fields find their columns in one file: by name (with the scan's
//! case sensitivity), by a Delta table's physical name, or by Parquet field id.
//!
//! Field ids are the `field_id` of a Parquet schema element, which the parquet crate puts
//! in an Arrow field's metadata as `PARQUET:field_id` (pyarrow reads and writes the same
//! key). Iceberg writes them, Spark writes them for a schema that has them, and a Delta
//! table in column mapping mode `id` keeps its columns' ids there. Matching by id lets a
//! renamed column still be found and a dropped-then-re-added name not be confused with
//! the old column.
//!
//! The rules are Spark 4.3's (`spark.sql.parquet.fieldId.read.enabled`, checked against
//! Spark itself): only a scan field that carries an id is matched by id — the others by
//! name — and then only by id, never falling back to its name; a file holding no field id
//! at all is an error unless missing ids are ignored
//! (`spark.sql.parquet.fieldId.read.ignoreMissing`), when such fields read as nulls — and
//! only for fields the query reads, as Spark checks only its requested schema (see
//! [`DeclaredSchema::requested`](super::schema_adapter::DeclaredSchema::requested)); two
//! file fields with the id wanted are an error. Struct fields match the same way, level
//! by level. A Delta table in `id` mode matches by id where its files have ids and by
//! physical name in a file that has none.
//!
//! ```
//! use std::collections::HashMap;
//! use arrow::datatypes::{DataType, Field, Fields};
//! use pqsift::table::column_matching::{ColumnMatcher, FieldIds};
//!
//! let with_id = |name: &str, id: i32| Field::new(name, DataType::Int64, true)
//!     .with_metadata(HashMap::from([("PARQUET:field_id".to_string(), id.to_string())]));
//! // The file renamed `a` to `alpha`; the scan schema still says `a`, id 1.
//! let file = Fields::from(vec![with_id("alpha", 1), with_id("c", 3)]);
//! let by_id = ColumnMatcher { field_ids: FieldIds::Match, ..ColumnMatcher::default() };
//! assert_eq!(by_id.find(&file, &with_id("a", 1), true).unwrap(), Some(0));
//! assert_eq!(ColumnMatcher::default().find(&file, &with_id("a", 1), true).unwrap(), None);
//! // A field without an id is matched by name.
//! assert_eq!(by_id.find(&file, &Field::new("C", DataType::Float64, true), true).unwrap(), Some(1));
//! ```

use std::fmt;

use arrow::datatypes::{DataType, Field, Fields};
use parquet::arrow::PARQUET_FIELD_ID_META_KEY;

use super::delta::schema::{ColumnMappingMode, physical_name};
use crate::error::{PqsiftError, Result};

/// Whether fields are matched by Parquet field id (Spark's
/// `spark.sql.parquet.fieldId.read.enabled` and `...ignoreMissing`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FieldIds {
    /// By name only (Spark's default).
    #[default]
    Off,
    /// A field with an id by its id; a file without any id is an error.
    Match,
    /// As `Match`, but a file without any id reads those fields as nulls.
    MatchIgnoringMissing,
}

impl FieldIds {
    /// The setting from Spark's two flags.
    pub fn from_flags(enabled: bool, ignore_missing: bool) -> Self {
        match (enabled, ignore_missing) {
            (false, _) => Self::Off,
            (true, false) => Self::Match,
            (true, true) => Self::MatchIgnoringMissing,
        }
    }

    /// The setting's name in [`FieldIds::parse`]'s words.
    pub fn name(self) -> &'static str {
        match self {
            Self::Off => "off",
            Self::Match => "match",
            Self::MatchIgnoringMissing => "match-ignoring-missing",
        }
    }

    /// The setting [`FieldIds::name`] names.
    pub fn parse(text: &str) -> Option<Self> {
        [Self::Off, Self::Match, Self::MatchIgnoringMissing].into_iter().find(|s| s.name() == text)
    }
}

/// How the fields of a scan schema find the columns of a file (see the module
/// documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ColumnMatcher {
    /// Names as a Delta table's column mapping gives them.
    pub mode: ColumnMappingMode,
    /// Matching by Parquet field id.
    pub field_ids: FieldIds,
    /// Names compared exactly; otherwise an exact match first, then ignoring ASCII case.
    pub case_sensitive: bool,
}

impl ColumnMatcher {
    /// The index among `fields` (a file's, at one level) of the column for the scan's
    /// `field`; `None`: the file lacks it. `file_has_ids`: whether the file holds any
    /// field id ([`has_field_ids`] of its schema).
    pub fn find(&self, fields: &Fields, field: &Field, file_has_ids: bool) -> Result<Option<usize>> {
        if let Some(id) = self.wanted_id(field) {
            if file_has_ids {
                return self.find_id(fields, field, id);
            }
            match self.field_ids {
                FieldIds::Match => {
                    return Err(PqsiftError::schema_mismatch(
                        field.name(),
                        format!(
                            "column {} is matched by its field id {id}, but the file holds no field ids (set \
                             ignore_missing_field_ids, Spark's spark.sql.parquet.fieldId.read.ignoreMissing, to read \
                             such columns as nulls)",
                            field.name()
                        ),
                    ));
                }
                FieldIds::MatchIgnoringMissing => return Ok(None),
                // A Delta table in id mode over a file without ids: its physical names.
                FieldIds::Off => {}
            }
        }
        Ok(find_field(fields, physical_name(field, self.mode), self.case_sensitive))
    }

    /// The id `field` is to be matched by, if any.
    fn wanted_id(&self, field: &Field) -> Option<i32> {
        let by_id = self.field_ids != FieldIds::Off || self.mode == ColumnMappingMode::Id;
        by_id.then(|| field_id(field)).flatten()
    }

    fn find_id(&self, fields: &Fields, field: &Field, id: i32) -> Result<Option<usize>> {
        let mut found = fields.iter().enumerate().filter(|(_, f)| field_id(f) == Some(id));
        let Some((first, _)) = found.next() else { return Ok(None) };
        let others: Vec<&str> = found.map(|(_, f)| f.name().as_str()).collect();
        if !others.is_empty() {
            return Err(PqsiftError::schema_mismatch(
                field.name(),
                format!(
                    "column {} is matched by its field id {id}, which the file gives to several fields: {}, {}",
                    field.name(),
                    fields[first].name(),
                    others.join(", ")
                ),
            ));
        }
        Ok(Some(first))
    }

    /// The file's names along the scan's path `logical` below the scan field `scan` and
    /// the file field `file` it matched: the struct fields each name matches in the file,
    /// as far as the file has them.
    pub fn file_path(&self, scan: &Field, file: &Field, logical: &[String], file_has_ids: bool) -> Result<Vec<String>> {
        let (mut scan, mut file) = (scan, file);
        let mut names = Vec::with_capacity(logical.len());
        for name in logical {
            let (DataType::Struct(scan_children), DataType::Struct(file_children)) =
                (scan.data_type(), file.data_type())
            else {
                break;
            };
            let Some(scan_child) = find_field(scan_children, name, true).map(|i| scan_children[i].as_ref()) else {
                break;
            };
            let Some(i) = self.find(file_children, scan_child, file_has_ids)? else { break };
            names.push(file_children[i].name().clone());
            (scan, file) = (scan_child, file_children[i].as_ref());
        }
        Ok(names)
    }
}

/// The Parquet field id of `field` (its `PARQUET:field_id`), if it has one.
pub fn field_id(field: &Field) -> Option<i32> {
    field.metadata().get(PARQUET_FIELD_ID_META_KEY)?.trim().parse().ok()
}

/// Whether any field of `fields`, at any depth, has a Parquet field id.
pub fn has_field_ids(fields: &Fields) -> bool {
    fields.iter().any(|f| field_id(f).is_some() || children(f.data_type()).is_some_and(has_field_ids))
}

fn children(data_type: &DataType) -> Option<&Fields> {
    match data_type {
        DataType::Struct(fields) => Some(fields),
        DataType::List(f) | DataType::LargeList(f) | DataType::FixedSizeList(f, _) | DataType::Map(f, _) => {
            match f.data_type() {
                DataType::Struct(fields) => Some(fields),
                _ => None,
            }
        }
        _ => None,
    }
}

/// The field named `name` (exactly, else case-insensitively unless `case_sensitive`).
pub(crate) fn find_field(fields: &Fields, name: &str, case_sensitive: bool) -> Option<usize> {
    fields
        .iter()
        .position(|f| f.name() == name)
        .or_else(|| if case_sensitive { None } else { fields.iter().position(|f| f.name().eq_ignore_ascii_case(name)) })
}

impl fmt::Display for FieldIds {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    fn with_id(name: &str, id: i32) -> Field {
        Field::new(name, DataType::Int64, true)
            .with_metadata(HashMap::from([(PARQUET_FIELD_ID_META_KEY.to_string(), id.to_string())]))
    }

    #[test]
    fn an_id_never_falls_back_to_the_name() {
        let file = Fields::from(vec![with_id("a", 1), with_id("b", 2)]);
        let matcher = ColumnMatcher { field_ids: FieldIds::Match, ..Default::default() };
        assert_eq!(matcher.find(&file, &with_id("a", 7), true).unwrap(), None);
        assert_eq!(matcher.find(&file, &with_id("zzz", 2), true).unwrap(), Some(1));
    }

    #[test]
    fn a_file_without_ids_fails_or_reads_nulls() {
        let file = Fields::from(vec![Field::new("a", DataType::Int64, true)]);
        assert!(!has_field_ids(&file));
        let strict = ColumnMatcher { field_ids: FieldIds::Match, ..Default::default() };
        let error = strict.find(&file, &with_id("a", 1), false).unwrap_err().to_string();
        assert!(error.contains("column a is matched by its field id 1, but the file holds no field ids"), "{error}");
        let lenient = ColumnMatcher { field_ids: FieldIds::MatchIgnoringMissing, ..Default::default() };
        assert_eq!(lenient.find(&file, &with_id("a", 1), false).unwrap(), None);
        // Delta's id mode falls back to physical names there.
        let delta = ColumnMatcher { mode: ColumnMappingMode::Id, ..Default::default() };
        assert_eq!(delta.find(&file, &with_id("a", 1), false).unwrap(), Some(0));
    }

    #[test]
    fn duplicate_ids_are_an_error() {
        let file = Fields::from(vec![with_id("a", 1), with_id("b", 1)]);
        let matcher = ColumnMatcher { field_ids: FieldIds::Match, ..Default::default() };
        let error = matcher.find(&file, &with_id("x", 1), true).unwrap_err().to_string();
        assert!(error.contains("field id 1, which the file gives to several fields: a, b"), "{error}");
    }

    #[test]
    fn nested_ids_are_found_in_structs() {
        let file_struct =
            Field::new("s", DataType::Struct(Fields::from(vec![with_id("x", 11), with_id("y", 12)])), true);
        let scan_struct = Field::new("renamed", DataType::Struct(Fields::from(vec![with_id("yy", 12)])), true);
        assert!(has_field_ids(&Fields::from(vec![file_struct.clone()])));
        let matcher = ColumnMatcher { field_ids: FieldIds::Match, ..Default::default() };
        assert_eq!(matcher.file_path(&scan_struct, &file_struct, &["yy".to_string()], true).unwrap(), ["y"]);
        for setting in [FieldIds::Off, FieldIds::Match, FieldIds::MatchIgnoringMissing] {
            assert_eq!(FieldIds::parse(setting.name()), Some(setting));
        }
    }
}
