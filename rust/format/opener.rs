//! An opened file: its footer (and page index), its Arrow schema, and the mapping from a
//! bound filter column to the Parquet leaf column that holds its statistics (ParquetOpener
//! step 1 of DataFusion's `ParquetOpener`).
//!
//! ```
//! # let dir = std::env::temp_dir().join("pqsift_opener_doc");
//! # std::fs::create_dir_all(&dir).unwrap();
//! # let path = dir.join("t.parquet");
//! # let batch = arrow::array::RecordBatch::try_from_iter([("x", std::sync::Arc::new(arrow::array::Int32Array::from(vec![1, 2])) as _)]).unwrap();
//! # let mut w = parquet::arrow::ArrowWriter::try_new(std::fs::File::create(&path).unwrap(), batch.schema(), None).unwrap();
//! # w.write(&batch).unwrap(); w.close().unwrap();
//! use pqsift::format::opener::OpenedFile;
//! let file = OpenedFile::open(&path.into()).unwrap();
//! assert_eq!(file.metadata.num_row_groups(), 1);
//! assert_eq!(file.schema.field(0).name(), "x");
//! ```

use std::sync::Arc;

use arrow::array::Array;
use arrow::datatypes::{DataType, FieldRef, Schema, SchemaRef, TimeUnit};
use arrow::util::display::{ArrayFormatter, FormatOptions};
use parquet::basic::Type as PhysicalType;
use parquet::file::metadata::{FileMetaData, ParquetMetaData};

use crate::error::{PqsiftError, Result};
use crate::filter::BoundColumn;
pub use crate::format::arrow_schema::readable_arrow_schema;
use crate::format::metadata_cache::{CacheEpoch, Loaded, Measured, MetadataCache};
use crate::pruning::zone_map::ZoneMaps;
use crate::storage::Location;

/// `schema`, a file's Arrow schema (its roots in order), as filters bind to it: its INT96
/// timestamps, at the top level or inside structs, lists and maps, labelled UTC; the same
/// `Arc` when the file has none.
///
/// Spark reads INT96 as TIMESTAMP, an instant. Arrow reads it as a timestamp without a time
/// zone, which pqsift's output keeps (as pyarrow does) but which a filter takes for Spark's
/// TIMESTAMP_NTZ, a wall clock: bound to that, `ts >= TIMESTAMP '2026-01-08 09:00:00'`
/// would compare wall clocks in the session time zone — other rows than Spark's outside
/// UTC, and a time zone conversion per value in any zone. The values need no change: they
/// are instants already, only the label differs.
///
/// ```
/// use std::sync::Arc;
/// use arrow::datatypes::{DataType, TimeUnit};
/// use parquet::file::metadata::FileMetaData;
/// use parquet::schema::{parser::parse_message_type, types::SchemaDescriptor};
/// use pqsift::format::opener::{filter_schema, readable_arrow_schema};
///
/// let message = "message spark { optional int96 ts; optional int64 id; optional group s { optional int96 at; } }";
/// let parquet = parse_message_type(message).unwrap();
/// let metadata = FileMetaData::new(1, 0, None, None, Arc::new(SchemaDescriptor::new(Arc::new(parquet))), None);
/// let schema = Arc::new(readable_arrow_schema(&metadata).unwrap());
/// assert_eq!(schema.field(0).data_type(), &DataType::Timestamp(TimeUnit::Nanosecond, None));
/// let bound_to = filter_schema(&schema, &metadata);
/// let instant = DataType::Timestamp(TimeUnit::Nanosecond, Some("UTC".into()));
/// assert_eq!(bound_to.field(0).data_type(), &instant);
/// assert_eq!(bound_to.field(1), schema.field(1));
/// let DataType::Struct(fields) = bound_to.field(2).data_type() else { panic!() };
/// assert_eq!(fields[0].data_type(), &instant);
/// ```
pub fn filter_schema(schema: &SchemaRef, file_metadata: &FileMetaData) -> SchemaRef {
    let instant = |unit: TimeUnit, zone: &Option<Arc<str>>| match zone {
        None => DataType::Timestamp(unit, Some("UTC".into())),
        Some(_) => DataType::Timestamp(unit, zone.clone()),
    };
    with_int96_leaves(schema, file_metadata, &instant).map_or_else(|| Arc::clone(schema), Arc::new)
}

/// `schema`, a file's Arrow schema (its roots in order), with its INT96 timestamps, at the
/// top level or inside structs, lists and maps, in `unit` (their zone kept); `None` when
/// the file has none. The crate then decodes them in that unit: in microseconds an
/// instant after 2262 reads as written, where nanoseconds would wrap it.
///
/// ```
/// use std::sync::Arc;
/// use arrow::datatypes::{DataType, TimeUnit};
/// use parquet::file::metadata::FileMetaData;
/// use parquet::schema::{parser::parse_message_type, types::SchemaDescriptor};
/// use pqsift::format::opener::{int96_in_unit, readable_arrow_schema};
///
/// let message = "message spark { optional int96 ts; optional group s { optional int96 at; } }";
/// let parquet = parse_message_type(message).unwrap();
/// let metadata = FileMetaData::new(1, 0, None, None, Arc::new(SchemaDescriptor::new(Arc::new(parquet))), None);
/// let schema = readable_arrow_schema(&metadata).unwrap();
/// let micros = int96_in_unit(&schema, &metadata, TimeUnit::Microsecond).unwrap();
/// assert_eq!(micros.field(0).data_type(), &DataType::Timestamp(TimeUnit::Microsecond, None));
/// let DataType::Struct(fields) = micros.field(1).data_type() else { panic!() };
/// assert_eq!(fields[0].data_type(), &DataType::Timestamp(TimeUnit::Microsecond, None));
/// ```
pub fn int96_in_unit(schema: &Schema, file_metadata: &FileMetaData, unit: TimeUnit) -> Option<Schema> {
    with_int96_leaves(schema, file_metadata, &|_, zone| DataType::Timestamp(unit, zone.clone()))
}

/// `schema` (a file's Arrow schema) with the timestamp type of each of its INT96 leaves, at
/// any depth, given by `retyped` (from its unit and zone); `None` when the file has none,
/// or the schema's leaves are not the file's (never from [`readable_arrow_schema`]).
fn with_int96_leaves(
    schema: &Schema,
    file_metadata: &FileMetaData,
    retyped: &dyn Fn(TimeUnit, &Option<Arc<str>>) -> DataType,
) -> Option<Schema> {
    let descriptor = file_metadata.schema_descr();
    let int96: Vec<bool> = descriptor.columns().iter().map(|c| c.physical_type() == PhysicalType::INT96).collect();
    let leaves: usize = schema.fields().iter().map(|f| leaf_count(f.data_type())).sum();
    if !int96.contains(&true) || leaves != int96.len() {
        return None;
    }
    let mut leaf = 0;
    let fields: Vec<FieldRef> = schema
        .fields()
        .iter()
        .map(|field| {
            let retyped = int96_retyped(field.data_type(), &int96, &mut leaf, retyped);
            Arc::new(field.as_ref().clone().with_data_type(retyped))
        })
        .collect();
    Some(Schema::new_with_metadata(fields, schema.metadata().clone()))
}

/// `data_type`, whose first Parquet leaf is `*leaf`, with the timestamps of its INT96
/// leaves (per `int96`, by leaf index) typed by `retyped`; `*leaf` moved past its leaves.
fn int96_retyped(
    data_type: &DataType,
    int96: &[bool],
    leaf: &mut usize,
    retyped: &dyn Fn(TimeUnit, &Option<Arc<str>>) -> DataType,
) -> DataType {
    let field = |f: &FieldRef, leaf: &mut usize| -> FieldRef {
        Arc::new(f.as_ref().clone().with_data_type(int96_retyped(f.data_type(), int96, leaf, retyped)))
    };
    match data_type {
        DataType::Struct(children) => DataType::Struct(children.iter().map(|c| field(c, leaf)).collect()),
        DataType::List(item) => DataType::List(field(item, leaf)),
        DataType::LargeList(item) => DataType::LargeList(field(item, leaf)),
        DataType::FixedSizeList(item, n) => DataType::FixedSizeList(field(item, leaf), *n),
        DataType::ListView(item) => DataType::ListView(field(item, leaf)),
        DataType::LargeListView(item) => DataType::LargeListView(field(item, leaf)),
        DataType::Map(entries, sorted) => DataType::Map(field(entries, leaf), *sorted),
        other => {
            let is_int96 = int96.get(*leaf).copied().unwrap_or(false);
            *leaf += 1;
            match other {
                DataType::Timestamp(unit, zone) if is_int96 => retyped(*unit, zone),
                _ => other.clone(),
            }
        }
    }
}

/// `projected` (a projection of a file's field, struct fields perhaps pruned) with its
/// timestamps labelled as `full` (the same field in [`filter_schema`]) labels them: nested
/// INT96 timestamps found by field name, whatever the projection kept.
pub fn instants_like(projected: &DataType, full: &DataType) -> DataType {
    let field = |f: &FieldRef, like: &FieldRef| -> FieldRef {
        Arc::new(f.as_ref().clone().with_data_type(instants_like(f.data_type(), like.data_type())))
    };
    match (projected, full) {
        (DataType::Timestamp(unit, None), DataType::Timestamp(_, Some(zone))) => {
            DataType::Timestamp(*unit, Some(Arc::clone(zone)))
        }
        (DataType::Struct(children), DataType::Struct(like)) => DataType::Struct(
            children
                .iter()
                .map(|c| match like.iter().find(|l| l.name() == c.name()) {
                    Some(l) => field(c, l),
                    None => Arc::clone(c),
                })
                .collect(),
        ),
        (DataType::List(item), DataType::List(like)) => DataType::List(field(item, like)),
        (DataType::LargeList(item), DataType::LargeList(like)) => DataType::LargeList(field(item, like)),
        (DataType::Map(entries, sorted), DataType::Map(like, _)) => DataType::Map(field(entries, like), *sorted),
        _ => projected.clone(),
    }
}

/// The index in its file of the row group at `index` of a footer holding the row groups
/// `numbers` (`None`: all of them, `index` itself).
///
/// ```
/// use pqsift::format::opener::row_group_number;
/// assert_eq!(row_group_number(None, 3), 3);
/// assert_eq!(row_group_number(Some(&[4, 7, 9]), 1), 7);
/// ```
pub fn row_group_number(numbers: Option<&[usize]>, index: usize) -> usize {
    numbers.and_then(|numbers| numbers.get(index).copied()).unwrap_or(index)
}

/// A Parquet file with its metadata read.
#[derive(Debug, Clone)]
pub struct OpenedFile {
    /// The file.
    pub location: Location,
    /// Footer, with the page index when the file has one.
    pub metadata: Arc<ParquetMetaData>,
    /// The Arrow schema the parquet crate decodes the file to.
    pub schema: SchemaRef,
    /// How many bytes at the file's end hold its footer and page index, when the footer was
    /// read from a part of the file (see [`FooterRead`](crate::format::metadata::FooterRead)):
    /// a read of the footer again asks for just these.
    pub tail_bytes: Option<u64>,
    /// The metadata's estimated size in memory ([`ParquetMetaData::memory_size`]), measured
    /// once when the footer was read.
    pub footer_bytes: usize,
    /// The fingerprint of the file's row group layout
    /// ([`layout_fingerprint`](crate::format::metadata::layout_fingerprint)), taken when
    /// the footer was read.
    pub layout: u64,
    /// When [`OpenedFile::metadata`] holds only some of the file's row groups (a task
    /// plan's footer carries those the task reads), their indices in the file, in order;
    /// `None`: it holds them all. What messages name a row group by.
    pub row_group_numbers: Option<Arc<[usize]>>,
}

impl OpenedFile {
    /// Reads the footer and page index of `path` (no column data), through the
    /// process-wide metadata cache, which reading then shares.
    pub fn open(location: &Location) -> Result<Self> {
        Self::open_with_hint(location, crate::format::metadata::DEFAULT_METADATA_SIZE_HINT)
    }

    /// [`OpenedFile::open`], reading the last `metadata_size_hint` bytes first on a cache miss.
    pub fn open_with_hint(location: &Location, metadata_size_hint: usize) -> Result<Self> {
        Self::open_sparing(location, metadata_size_hint, 1, None)
    }

    /// [`OpenedFile::open_with_hint`], the footer read kept in the metadata cache only where
    /// that evicts no entry used since `spared`, and a wide one decoded on up to
    /// `decode_threads` threads (see [`MetadataCache::load_sparing`]).
    pub fn open_sparing(
        location: &Location,
        metadata_size_hint: usize,
        decode_threads: usize,
        spared: Option<CacheEpoch>,
    ) -> Result<Self> {
        let Loaded { metadata, measured: Measured { schema, footer_bytes, layout }, location, tail_bytes } =
            MetadataCache::global().load_sparing(location, metadata_size_hint, decode_threads, spared)?;
        let schema = schema.map_err(|e| PqsiftError::corrupt(&location, e))?;
        Ok(Self { location, metadata, schema, tail_bytes, footer_bytes, layout, row_group_numbers: None })
    }

    /// The file as a display string.
    pub fn name(&self) -> String {
        self.location.to_string()
    }

    /// The index in the file of the row group at `index` of [`OpenedFile::metadata`] (see
    /// [`OpenedFile::row_group_numbers`]).
    pub fn row_group_number(&self, index: usize) -> usize {
        row_group_number(self.row_group_numbers.as_deref(), index)
    }

    /// Rows per row group.
    pub fn row_group_rows(&self) -> Vec<usize> {
        self.metadata.row_groups().iter().map(|rg| usize::try_from(rg.num_rows()).unwrap_or(0)).collect()
    }

    /// The Parquet leaf index and Arrow field of a bound column, when it is a primitive
    /// column outside any list (the only ones with usable statistics).
    pub fn leaf(&self, column: &BoundColumn) -> Option<(usize, FieldRef)> {
        let mut fields = self.schema.fields().clone();
        let mut leaf = 0usize;
        let mut found: Option<FieldRef> = None;
        for (depth, &index) in column.indices.iter().enumerate() {
            let field = fields.get(index)?.clone();
            leaf += fields.iter().take(index).map(|f| leaf_count(f.data_type())).sum::<usize>();
            if depth + 1 == column.indices.len() {
                found = Some(field);
            } else {
                let DataType::Struct(children) = field.data_type() else {
                    return None;
                };
                fields = children.clone();
            }
        }
        let field = found?;
        if leaf_count(field.data_type()) != 1
            || matches!(
                field.data_type(),
                DataType::Struct(_)
                    | DataType::List(_)
                    | DataType::LargeList(_)
                    | DataType::Map(..)
                    | DataType::FixedSizeList(..)
            )
        {
            return None;
        }
        (leaf < self.metadata.file_metadata().schema_descr().num_columns()).then_some((leaf, field))
    }

    /// Row group zone maps of `column`, `None` where the column has no usable statistics.
    pub fn row_group_zone_maps(&self, column: &BoundColumn) -> Result<Option<ZoneMaps>> {
        let Some((leaf, field)) = self.leaf(column) else {
            return Ok(None);
        };
        match ZoneMaps::for_row_groups(&self.metadata, leaf, &field) {
            Ok(zones) => Ok(in_type(zones, &column.data_type)),
            Err(PqsiftError::Statistics(reason)) => {
                Err(PqsiftError::corrupt(&self.location, reason).about_column(column.path.name()))
            }
            Err(other) => Err(other),
        }
    }
}

/// Zone maps in the bound column's type: as they are, or cast to the dictionary type of a
/// dictionary-encoded column (statistics hold the values); `None` when they do not match.
///
/// ```
/// use std::sync::Arc;
/// use arrow::array::{Array, BooleanArray, StringArray, UInt64Array};
/// use arrow::datatypes::DataType;
/// use pqsift::format::opener::in_type;
/// use pqsift::pruning::zone_map::ZoneMaps;
/// let zones = ZoneMaps {
///     mins: Arc::new(StringArray::from(vec!["a"])),
///     maxes: Arc::new(StringArray::from(vec!["d"])),
///     min_exact: BooleanArray::from(vec![true]),
///     max_exact: BooleanArray::from(vec![true]),
///     null_counts: UInt64Array::from(vec![0]),
///     row_counts: UInt64Array::from(vec![4]),
/// };
/// let dictionary = DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8));
/// assert_eq!(in_type(zones.clone(), &dictionary).unwrap().mins.data_type(), &dictionary);
/// assert!(in_type(zones, &DataType::Int32).is_none());
/// ```
pub fn in_type(zones: ZoneMaps, data_type: &DataType) -> Option<ZoneMaps> {
    if zones.mins.data_type() == data_type {
        return Some(zones);
    }
    match data_type {
        DataType::Dictionary(_, values) if zones.mins.data_type() == values.as_ref() => {
            let mins = arrow::compute::cast(&zones.mins, data_type).ok()?;
            let maxes = arrow::compute::cast(&zones.maxes, data_type).ok()?;
            Some(ZoneMaps { mins, maxes, ..zones })
        }
        _ => None,
    }
}

/// Parquet leaf columns under an Arrow type.
fn leaf_count(data_type: &DataType) -> usize {
    match data_type {
        DataType::Struct(children) => children.iter().map(|f| leaf_count(f.data_type())).sum(),
        DataType::List(child)
        | DataType::LargeList(child)
        | DataType::FixedSizeList(child, _)
        | DataType::ListView(child)
        | DataType::LargeListView(child)
        | DataType::Map(child, _) => leaf_count(child.data_type()),
        DataType::Dictionary(_, _) => 1,
        _ => 1,
    }
}

/// `column: min=…, max=…, nulls=n of m` for container `i`, for explanations.
pub fn describe_zone(column: &str, zones: &ZoneMaps, i: usize) -> String {
    let options = FormatOptions::default().with_null("unknown");
    let value = |array: &dyn Array| -> String {
        ArrayFormatter::try_new(array, &options).map(|f| f.value(i).to_string()).unwrap_or_else(|_| "?".to_string())
    };
    let nulls =
        if zones.null_counts.is_valid(i) { zones.null_counts.value(i).to_string() } else { "unknown".to_string() };
    format!(
        "{column}: min={}, max={}, nulls={} of {}",
        value(zones.mins.as_ref()),
        value(zones.maxes.as_ref()),
        nulls,
        zones.row_counts.value(i)
    )
}

/// The schema a filter binds to for this file.
pub fn schema_of(file: &OpenedFile) -> &Schema {
    file.schema.as_ref()
}
