//! A summary of a Parquet file's metadata for people (`pqsift inspect`): schema, row
//! groups, and per column chunk its sizes, encodings, compression, statistics, page index
//! and bloom filter.
//!
//! Only the footer and the page index are read ([`metadata::load`]), no column data. The
//! summary is plain Rust data (no serialisation crate): the Python layer turns it into
//! dicts, the CLI into text or JSON.
//!
//! Statistics are shown as the file stores them (no pruning rules applied, unlike
//! [`crate::pruning::zone_map`]); values are rendered in the column's Arrow type when the leaf is a
//! top-level column (dates, decimals, timestamps read as such), and from the physical
//! value otherwise (UTF-8 text where the bytes are valid UTF-8, hex otherwise).
//!
//! ```
//! # use std::sync::Arc;
//! # use arrow::array::{Int32Array, RecordBatch, StringArray};
//! # use parquet::arrow::ArrowWriter;
//! # use parquet::file::properties::WriterProperties;
//! # let dir = std::env::temp_dir().join(format!("pqsift-inspect-doc-{}", std::process::id()));
//! # std::fs::create_dir_all(&dir).unwrap();
//! # let path = dir.join("t.parquet");
//! # let batch = RecordBatch::try_from_iter([
//! #     ("x", Arc::new(Int32Array::from(vec![Some(3), None, Some(9), Some(4)])) as _),
//! #     ("s", Arc::new(StringArray::from(vec!["b", "a", "d", "c"])) as _),
//! # ]).unwrap();
//! # let props = WriterProperties::builder().set_max_row_group_row_count(Some(2)).build();
//! # let mut writer = ArrowWriter::try_new(std::fs::File::create(&path).unwrap(), batch.schema(), Some(props)).unwrap();
//! # writer.write(&batch).unwrap();
//! # writer.close().unwrap();
//! use pqsift::format::inspect::inspect;
//! // x = [3, null | 9, 4], s = ["b", "a" | "d", "c"] in two row groups of two rows.
//! let summary = inspect(&path.as_path().into()).unwrap();
//! assert_eq!(summary.num_rows, 4);
//! assert_eq!(summary.columns[0].physical_type, "INT32");
//! assert_eq!(summary.columns[1].logical_type.as_deref(), Some("STRING"));
//! let x = &summary.row_groups[1].columns[0];
//! let stats = x.statistics.as_ref().unwrap();
//! assert_eq!((stats.min.as_deref(), stats.max.as_deref(), stats.null_count), (Some("4"), Some("9"), Some(0)));
//! assert_eq!(summary.row_groups[0].columns[1].statistics.as_ref().unwrap().min.as_deref(), Some("a"));
//! assert!(x.offset_index && x.pages == Some(1)); // the parquet crate writes a page index by default
//! assert!(!x.bloom_filter);
//! # std::fs::remove_dir_all(&dir).unwrap();
//! ```

use arrow::array::{Array, ArrayRef};
use arrow::datatypes::{DataType, Field, Schema};
use arrow::util::display::{ArrayFormatter, FormatOptions};
use parquet::arrow::arrow_reader::statistics::StatisticsConverter;
use parquet::basic::{LogicalType, Type as PhysicalType};
use parquet::file::metadata::ParquetMetaData;
use parquet::file::statistics::Statistics;
use parquet::schema::types::SchemaDescriptor;

use crate::error::{PqsiftError, Result};
use crate::format::metadata;
use crate::storage::Location;
use crate::storage::source::{Entry, stat};

/// The metadata of one Parquet file, summarised.
#[derive(Debug, Clone, PartialEq)]
pub struct FileSummary {
    /// The file.
    pub path: String,
    /// File size in bytes.
    pub file_size: u64,
    /// Rows in the file.
    pub num_rows: i64,
    /// The format version the footer declares.
    pub version: i32,
    /// The writer, when the footer names it.
    pub created_by: Option<String>,
    /// Key-value metadata of the footer (the Arrow schema, pandas metadata, ...).
    pub key_value_metadata: Vec<(String, Option<String>)>,
    /// The top-level fields of the Arrow schema the file is read as.
    pub arrow_schema: Vec<ArrowFieldSummary>,
    /// The leaf columns, in file order.
    pub columns: Vec<ColumnSummary>,
    /// The row groups, in file order.
    pub row_groups: Vec<RowGroupSummary>,
    /// Whether the footer's page index (column index or offset index) was found for any
    /// column chunk.
    pub has_page_index: bool,
}

/// A top-level field of the Arrow schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArrowFieldSummary {
    /// Field name.
    pub name: String,
    /// The Arrow type, as Arrow displays it (`Int64`, `Timestamp(µs, "UTC")`, ...).
    pub data_type: String,
    /// Whether the field may hold nulls.
    pub nullable: bool,
}

/// A leaf column of the Parquet schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ColumnSummary {
    /// The dotted path of the leaf (`a.b.list.element` for nested fields).
    pub path: String,
    /// The physical type (`INT32`, `BYTE_ARRAY`, `FIXED_LEN_BYTE_ARRAY(16)`, ...).
    pub physical_type: String,
    /// The logical type annotation (`STRING`, `DECIMAL(9,2)`,
    /// `TIMESTAMP(MICROS,utc=true)`, ...), if any.
    pub logical_type: Option<String>,
    /// The legacy converted type (`UTF8`, `DECIMAL`, ...), if any.
    pub converted_type: Option<String>,
    /// `REQUIRED`, `OPTIONAL` or `REPEATED`.
    pub repetition: String,
    /// Maximum definition and repetition levels.
    pub max_def_level: i16,
    /// Maximum repetition level.
    pub max_rep_level: i16,
    /// The Arrow type of the leaf when it is a top-level column; for nested leaves the type
    /// of the top-level field it belongs to is in [`FileSummary::arrow_schema`].
    pub arrow_type: Option<String>,
}

/// One row group.
#[derive(Debug, Clone, PartialEq)]
pub struct RowGroupSummary {
    /// Position in the file.
    pub index: usize,
    /// Rows.
    pub num_rows: i64,
    /// Compressed bytes of its column chunks.
    pub compressed_bytes: i64,
    /// Uncompressed bytes of its column chunks.
    pub uncompressed_bytes: i64,
    /// One per leaf column, in [`FileSummary::columns`] order.
    pub columns: Vec<ColumnChunkSummary>,
}

/// One column chunk (a leaf column in a row group).
#[derive(Debug, Clone, PartialEq)]
pub struct ColumnChunkSummary {
    /// The leaf column's dotted path.
    pub column: String,
    /// Compression codec (`SNAPPY`, `ZSTD(ZstdLevel(1))`, ...).
    pub compression: String,
    /// Encodings used by its pages (`PLAIN`, `RLE_DICTIONARY`, ...).
    pub encodings: Vec<String>,
    /// Values, nulls included.
    pub num_values: i64,
    /// Compressed bytes.
    pub compressed_bytes: i64,
    /// Uncompressed bytes.
    pub uncompressed_bytes: i64,
    /// Whether it starts with a dictionary page.
    pub dictionary_page: bool,
    /// The chunk's statistics, if written.
    pub statistics: Option<StatisticsSummary>,
    /// Whether the page index has a column index (per page min/max) for it.
    pub column_index: bool,
    /// Whether the page index has an offset index (page locations) for it.
    pub offset_index: bool,
    /// Data pages, from the offset index (`None` without one).
    pub pages: Option<usize>,
    /// Whether it has a bloom filter.
    pub bloom_filter: bool,
    /// The bloom filter's length in bytes, when the footer records it (newer writers).
    pub bloom_filter_bytes: Option<i64>,
}

/// Column chunk statistics as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatisticsSummary {
    /// Lower bound, rendered as text; `None` when not written.
    pub min: Option<String>,
    /// Upper bound, rendered as text; `None` when not written.
    pub max: Option<String>,
    /// Whether the min is a value some row holds (not truncated). As the parquet crate
    /// reads it: bounds of BOOLEAN, INT32, INT64 and INT96 columns cannot be truncated and
    /// are exact; other types need the file's `is_min_value_exact` flag.
    pub min_exact: bool,
    /// Whether the max is a value some row holds (not truncated).
    pub max_exact: bool,
    /// Null values; `None` when not written.
    pub null_count: Option<u64>,
    /// Distinct values; `None` when not written (most writers do not).
    pub distinct_count: Option<u64>,
    /// Whether min/max come from the deprecated signed-order fields.
    pub deprecated_min_max: bool,
}

/// Reads the footer and page index of `path` and summarises them; see the module
/// documentation for an example.
pub fn inspect(location: &Location) -> Result<FileSummary> {
    let version = match stat(location)? {
        Some(Entry::File(version)) => version,
        Some(Entry::Directory) => return Err(location.io_error("is a directory, not a Parquet file")),
        None => return Err(location.not_found("no such object")),
    };
    let size = version.size;
    let meta = metadata::load(&location.clone().with_version(version))?;
    summarise(&location.to_string(), &meta, size)
}

/// Summarises already loaded metadata of the file `path` of `file_size` bytes.
pub fn summarise(path: &str, meta: &ParquetMetaData, file_size: u64) -> Result<FileSummary> {
    let file = meta.file_metadata();
    let schema = file.schema_descr();
    let arrow = crate::format::opener::readable_arrow_schema(file).map_err(|e| PqsiftError::corrupt(path, e))?;
    let leaves: Vec<Option<&Field>> = (0..schema.num_columns()).map(|i| top_level_field(schema, &arrow, i)).collect();

    let columns = (0..schema.num_columns())
        .map(|i| {
            let c = schema.column(i);
            let physical = match c.physical_type() {
                PhysicalType::FIXED_LEN_BYTE_ARRAY => format!("FIXED_LEN_BYTE_ARRAY({})", c.type_length()),
                other => other.to_string(),
            };
            let converted = c.converted_type();
            ColumnSummary {
                path: c.path().string(),
                physical_type: physical,
                logical_type: c.logical_type_ref().map(logical_type_name),
                converted_type: (converted != parquet::basic::ConvertedType::NONE).then(|| converted.to_string()),
                repetition: {
                    let info = c.self_type().get_basic_info();
                    if info.has_repetition() { info.repetition().to_string() } else { "REQUIRED".to_string() }
                },
                max_def_level: c.max_def_level(),
                max_rep_level: c.max_rep_level(),
                arrow_type: leaves[i].map(|f| f.data_type().to_string()),
            }
        })
        .collect();

    // Per leaf, per row group: min and max rendered in the Arrow type, where that works.
    let typed: Vec<Option<RenderedBounds>> =
        leaves.iter().enumerate().map(|(i, field)| field.and_then(|f| typed_bounds(meta, schema, i, f))).collect();

    let page_index = meta.page_index();
    let mut has_page_index = false;
    let row_groups = meta
        .row_groups()
        .iter()
        .enumerate()
        .map(|(rg, group)| {
            let chunks = group
                .columns()
                .iter()
                .enumerate()
                .map(|(i, chunk)| {
                    let column_index = chunk.column_index_offset().is_some()
                        || page_index.is_some_and(|p| p.column_index(rg, i).is_some());
                    let offset_index = chunk.offset_index_offset().is_some()
                        || page_index.is_some_and(|p| p.offset_index(rg, i).is_some());
                    has_page_index |= column_index || offset_index;
                    let statistics = chunk.statistics().map(|s| {
                        let (min, max) = match &typed[i] {
                            Some((mins, maxes)) => (mins[rg].clone(), maxes[rg].clone()),
                            None => (None, None),
                        };
                        StatisticsSummary {
                            // The typed rendering is null where the converter cannot read a
                            // bound (or there is none): fall back to the physical value.
                            min: min.or_else(|| physical_value(s, s.min_bytes_opt())),
                            max: max.or_else(|| physical_value(s, s.max_bytes_opt())),
                            min_exact: s.min_bytes_opt().is_some() && s.min_is_exact(),
                            max_exact: s.max_bytes_opt().is_some() && s.max_is_exact(),
                            null_count: s.null_count_opt(),
                            distinct_count: s.distinct_count_opt(),
                            deprecated_min_max: s.is_min_max_deprecated(),
                        }
                    });
                    ColumnChunkSummary {
                        column: chunk.column_path().string(),
                        compression: chunk.compression().to_string(),
                        encodings: chunk.encodings().map(|e| e.to_string()).collect(),
                        num_values: chunk.num_values(),
                        compressed_bytes: chunk.compressed_size(),
                        uncompressed_bytes: chunk.uncompressed_size(),
                        dictionary_page: metadata::dictionary_page_range(meta, rg, i).is_some(),
                        statistics,
                        column_index,
                        offset_index,
                        pages: metadata::page_locations(meta, rg, i).map(|p| p.len()),
                        bloom_filter: chunk.bloom_filter_offset().is_some(),
                        bloom_filter_bytes: chunk.bloom_filter_length().map(i64::from),
                    }
                })
                .collect();
            RowGroupSummary {
                index: rg,
                num_rows: group.num_rows(),
                compressed_bytes: group.compressed_size(),
                uncompressed_bytes: group.total_byte_size(),
                columns: chunks,
            }
        })
        .collect();

    Ok(FileSummary {
        path: path.to_string(),
        file_size,
        num_rows: file.num_rows(),
        version: file.version(),
        created_by: file.created_by().map(str::to_string),
        key_value_metadata: file
            .key_value_metadata()
            .map(|kv| kv.iter().map(|e| (e.key.clone(), e.value.clone())).collect())
            .unwrap_or_default(),
        arrow_schema: arrow
            .fields()
            .iter()
            .map(|f| ArrowFieldSummary {
                name: f.name().clone(),
                data_type: f.data_type().to_string(),
                nullable: f.is_nullable(),
            })
            .collect(),
        columns,
        row_groups,
        has_page_index,
    })
}

/// A logical type as text: `STRING`, `DECIMAL(9,2)`, `INTEGER(8,signed)`,
/// `TIMESTAMP(MICROS,utc=true)`, ...
pub fn logical_type_name(logical: &LogicalType) -> String {
    match logical {
        LogicalType::Decimal(d) => format!("DECIMAL({},{})", d.precision, d.scale),
        LogicalType::Integer(i) => {
            format!("INTEGER({},{})", i.bit_width, if i.is_signed { "signed" } else { "unsigned" })
        }
        LogicalType::Timestamp(t) => format!("TIMESTAMP({:?},utc={})", t.unit, t.is_adjusted_to_u_t_c),
        LogicalType::Time(t) => format!("TIME({:?},utc={})", t.unit, t.is_adjusted_to_u_t_c),
        LogicalType::_Unknown { field_id } => format!("UNKNOWN_LOGICAL_TYPE({field_id})"),
        other => {
            // Unit variants (and the rarer ones): their name, upper case.
            let debug = format!("{other:?}");
            let name = debug.split(['(', ' ', '{']).next().unwrap_or(&debug);
            name.to_ascii_uppercase()
        }
    }
}

/// The Arrow field of leaf `leaf` when the leaf is a whole top-level primitive column.
fn top_level_field<'a>(schema: &SchemaDescriptor, arrow: &'a Schema, leaf: usize) -> Option<&'a Field> {
    let column = schema.column(leaf);
    let parts = column.path().parts();
    if parts.len() != 1 {
        return None;
    }
    let field = arrow.field_with_name(&parts[0]).ok()?;
    (!field.data_type().is_nested()).then_some(field)
}

/// Per row group, a column's minimum and maximum rendered as text (`None`: not known).
type RenderedBounds = (Vec<Option<String>>, Vec<Option<String>>);

/// Row group mins and maxes of leaf `leaf`, rendered in the Arrow type of `field`; `None`
/// when the statistics converter cannot read them.
fn typed_bounds(
    meta: &ParquetMetaData,
    schema: &SchemaDescriptor,
    leaf: usize,
    field: &Field,
) -> Option<RenderedBounds> {
    let converter = StatisticsConverter::from_column_index(leaf, field, schema)
        .ok()?
        .with_column_orders(meta.file_metadata().column_orders().map(|o| o.as_slice()));
    let mins = converter.row_group_mins(meta.row_groups().iter()).ok()?;
    let maxes = converter.row_group_maxes(meta.row_groups().iter()).ok()?;
    Some((render(&mins)?, render(&maxes)?))
}

/// Each entry of `values` as text (`None` for nulls).
fn render(values: &ArrayRef) -> Option<Vec<Option<String>>> {
    // Binary bounds read better as text when they are UTF-8 (the physical fallback does
    // that); Arrow would print them as hex.
    if matches!(
        values.data_type(),
        DataType::Binary | DataType::LargeBinary | DataType::BinaryView | DataType::FixedSizeBinary(_)
    ) {
        return None;
    }
    let options = FormatOptions::default();
    let formatter = ArrayFormatter::try_new(values.as_ref(), &options).ok()?;
    Some((0..values.len()).map(|i| values.is_valid(i).then(|| formatter.value(i).to_string())).collect())
}

/// A bound from its PLAIN-encoded bytes and the physical type.
fn physical_value(statistics: &Statistics, bytes: Option<&[u8]>) -> Option<String> {
    let bytes = bytes?;
    let text = match statistics {
        Statistics::Boolean(_) => (bytes.first()? != &0).to_string(),
        Statistics::Int32(_) => i32::from_le_bytes(bytes.try_into().ok()?).to_string(),
        Statistics::Int64(_) => i64::from_le_bytes(bytes.try_into().ok()?).to_string(),
        Statistics::Float(_) => f32::from_le_bytes(bytes.try_into().ok()?).to_string(),
        Statistics::Double(_) => f64::from_le_bytes(bytes.try_into().ok()?).to_string(),
        Statistics::ByteArray(_) => match std::str::from_utf8(bytes) {
            Ok(text) => text.to_string(),
            Err(_) => hex(bytes),
        },
        Statistics::Int96(_) | Statistics::FixedLenByteArray(_) => hex(bytes),
    };
    Some(text)
}

fn hex(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(2 + 2 * bytes.len());
    out.push_str("0x");
    for b in bytes {
        out.push_str(&format!("{b:02x}"));
    }
    out
}
