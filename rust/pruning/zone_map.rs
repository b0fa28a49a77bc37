//! Zone maps: what the metadata says about one column in each container (row group or
//! page) — min, max, null count, row count — as Arrow arrays, with the Parquet rules that
//! decide when a bound can be trusted applied once, here.
//!
//! The parquet crate's `StatisticsConverter` turns raw statistics into Arrow values of the
//! column's type (decimals stored as INT32/INT64/FLBA, dates, timestamps, unsigned
//! integers). On top of it, this module applies what pruning must respect:
//!
//! * **Unknown is null.** A missing statistic, a missing null count (the converter would
//!   say 0), a missing page index: null in the arrays, so pruning keeps the container.
//! * **Deprecated min/max fields** (files that predate `min_value`/`max_value`) were written
//!   with signed byte comparison. For columns whose sort order is unsigned (strings, binary,
//!   unsigned integers) they are wrong, so they are dropped.
//! * **Exactness.** `is_min_value_exact`/`is_max_value_exact` absent means inexact
//!   (truncated string bounds are still bounds, but no row need equal them). Page index
//!   bounds carry no flag and are treated as exact only for fixed-width types.
//! * **NaN.** Spark orders NaN above every number, while Parquet bounds leave NaN out. A
//!   float container that may hold NaN (its `nan_count` is unknown or positive) gets NaN as
//!   its max; a bound that is itself NaN (old writers) makes both bounds unknown.
//! * **All-null containers** have null bounds and `null_count == row_count`.

use arrow::array::{Array, ArrayRef, AsArray, BooleanArray, Float64Array, Scalar, UInt64Array, new_null_array};
use arrow::compute::cast;
use arrow::compute::kernels::zip::zip;
use arrow::datatypes::{DataType, Field, Float64Type};
use parquet::arrow::arrow_reader::statistics::StatisticsConverter;
use parquet::basic::SortOrder;
use parquet::file::metadata::ParquetMetaData;
use parquet::file::metadata::page_index::PageIndexProvider;

use crate::error::{PqsiftError, Result};

/// Arrow kernels here fail only on inconsistent statistics.
fn arrow_error(error: arrow::error::ArrowError) -> PqsiftError {
    PqsiftError::Statistics(error.to_string())
}

/// Zone maps of one column over a sequence of containers (row groups or pages).
///
/// Every array has one entry per container; null means unknown.
#[derive(Debug, Clone)]
pub struct ZoneMaps {
    /// Lower bounds, in the column's Arrow type.
    pub mins: ArrayRef,
    /// Upper bounds, in the column's Arrow type (NaN when a float container may hold NaN).
    pub maxes: ArrayRef,
    /// Whether each min is a value some row holds (false when unknown).
    pub min_exact: BooleanArray,
    /// Whether each max is a value some row holds (false when unknown).
    pub max_exact: BooleanArray,
    /// Null values per container.
    pub null_counts: UInt64Array,
    /// Rows per container.
    pub row_counts: UInt64Array,
}

impl ZoneMaps {
    /// Number of containers.
    pub fn len(&self) -> usize {
        self.row_counts.len()
    }

    /// `true` when there are no containers.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Zone maps of the leaf column `leaf` (with Arrow field `field`, as the parquet crate
    /// decodes it) for every row group of the file.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use arrow::array::{Int32Array, RecordBatch, AsArray};
    /// # use arrow::datatypes::Int32Type;
    /// # use parquet::arrow::ArrowWriter;
    /// # use parquet::file::properties::WriterProperties;
    /// # use parquet::file::metadata::ParquetMetaDataReader;
    /// # let batch = RecordBatch::try_from_iter([("x", Arc::new(Int32Array::from(vec![Some(3), None, Some(9), Some(4)])) as _)]).unwrap();
    /// # let props = WriterProperties::builder().set_max_row_group_row_count(Some(2)).build();
    /// # let mut bytes = Vec::new();
    /// # let mut writer = ArrowWriter::try_new(&mut bytes, batch.schema(), Some(props)).unwrap();
    /// # writer.write(&batch).unwrap();
    /// # writer.close().unwrap();
    /// # let metadata = ParquetMetaDataReader::new().parse_and_finish(&bytes::Bytes::from(bytes)).unwrap();
    /// use pqsift::pruning::zone_map::ZoneMaps;
    /// // x = [3, null | 9, 4] in two row groups of two rows.
    /// let zones = ZoneMaps::for_row_groups(&metadata, 0, batch.schema().field(0)).unwrap();
    /// assert_eq!(zones.mins.as_primitive::<Int32Type>().values(), &[3, 4]);
    /// assert_eq!(zones.maxes.as_primitive::<Int32Type>().values(), &[3, 9]);
    /// assert_eq!(zones.null_counts.values(), &[1, 0]);
    /// ```
    pub fn for_row_groups(metadata: &ParquetMetaData, leaf: usize, field: &Field) -> Result<Self> {
        Self::row_groups(metadata, leaf, field, false)
    }

    /// [`ZoneMaps::for_row_groups`] as if the writer had recorded that no value is NaN:
    /// what the bounds alone would decide (explain uses it to tell when a possible NaN is
    /// all that kept a row group). Never for pruning.
    pub fn for_row_groups_assuming_no_nan(metadata: &ParquetMetaData, leaf: usize, field: &Field) -> Result<Self> {
        Self::row_groups(metadata, leaf, field, true)
    }

    fn row_groups(metadata: &ParquetMetaData, leaf: usize, field: &Field, assume_no_nan: bool) -> Result<Self> {
        let converter = converter(metadata, leaf, field)?;
        let row_groups = metadata.row_groups();
        let stats_error = |e: parquet::errors::ParquetError| PqsiftError::Statistics(e.to_string());

        let mut mins = converter.row_group_mins(row_groups.iter()).map_err(stats_error)?;
        let mut maxes = converter.row_group_maxes(row_groups.iter()).map_err(stats_error)?;
        let mut min_exact = converter.row_group_is_min_value_exact(row_groups.iter()).map_err(stats_error)?;
        let mut max_exact = converter.row_group_is_max_value_exact(row_groups.iter()).map_err(stats_error)?;
        let null_counts = converter.row_group_null_counts(row_groups.iter()).map_err(stats_error)?;
        let row_counts = UInt64Array::from_iter_values(row_groups.iter().map(|rg| rg.num_rows().max(0) as u64));
        let nan_counts = if assume_no_nan {
            UInt64Array::from(vec![0; row_groups.len()])
        } else {
            converter.row_group_nan_counts(row_groups.iter()).map_err(stats_error)?
        };

        // Deprecated min/max of an unsigned-ordered column were compared as signed bytes.
        let descriptor = metadata.file_metadata().schema_descr().column(leaf);
        if descriptor.sort_order() != SortOrder::SIGNED {
            let deprecated: BooleanArray = row_groups
                .iter()
                .map(|rg| Some(rg.column(leaf).statistics().is_some_and(|s| s.is_min_max_deprecated())))
                .collect();
            if deprecated.true_count() > 0 {
                mins = null_where(&mins, &deprecated)?;
                maxes = null_where(&maxes, &deprecated)?;
            }
        }
        min_exact = false_where_null(&min_exact);
        max_exact = false_where_null(&max_exact);
        let null_counts = plausible_null_counts(&null_counts, &row_counts);
        let mut zones = Self { mins, maxes, min_exact, max_exact, null_counts, row_counts };
        zones.apply_nan_rules(&nan_counts)?;
        Ok(zones)
    }

    /// Zone maps of the leaf column `leaf` for every data page of row group `row_group`,
    /// from the page index; `None` when the file has no column index or offset index for
    /// this column chunk.
    pub fn for_pages(metadata: &ParquetMetaData, row_group: usize, leaf: usize, field: &Field) -> Result<Option<Self>> {
        match metadata.page_index() {
            Some(page_index) => Self::for_pages_in(metadata, page_index.as_ref(), row_group, leaf, field),
            None => Ok(None),
        }
    }

    /// [`ZoneMaps::for_pages`] from `page_index` rather than the file's own (one built from
    /// the page headers, see [`header_page_index`](crate::format::header_page_index)).
    pub fn for_pages_in(
        metadata: &ParquetMetaData,
        page_index: &dyn PageIndexProvider,
        row_group: usize,
        leaf: usize,
        field: &Field,
    ) -> Result<Option<Self>> {
        if page_index.column_index(row_group, leaf).is_none() || page_index.offset_index(row_group, leaf).is_none() {
            return Ok(None);
        }
        let converter = converter(metadata, leaf, field)?;
        let stats_error = |e: parquet::errors::ParquetError| PqsiftError::Statistics(e.to_string());
        let groups = [row_group];
        let mins = converter.data_page_mins(page_index, groups.iter()).map_err(stats_error)?;
        let maxes = converter.data_page_maxes(page_index, groups.iter()).map_err(stats_error)?;
        let null_counts = converter.data_page_null_counts(page_index, groups.iter()).map_err(stats_error)?;
        let nan_counts = converter.data_page_nan_counts(page_index, groups.iter()).map_err(stats_error)?;
        let Some(row_counts) =
            converter.data_page_row_counts(page_index, metadata.row_groups(), groups.iter()).map_err(stats_error)?
        else {
            return Ok(None);
        };
        if mins.len() != row_counts.len() || maxes.len() != row_counts.len() {
            return Err(PqsiftError::Statistics(format!(
                "the column index has {} pages but the offset index {}",
                mins.len(),
                row_counts.len()
            )));
        }
        // The column index carries no exactness flag and may truncate byte arrays.
        let exact = !matches!(
            field.data_type(),
            DataType::Utf8
                | DataType::LargeUtf8
                | DataType::Utf8View
                | DataType::Binary
                | DataType::LargeBinary
                | DataType::BinaryView
                | DataType::FixedSizeBinary(_)
        );
        let known = |values: &ArrayRef| -> BooleanArray {
            (0..values.len()).map(|i| Some(exact && values.is_valid(i))).collect()
        };
        let (min_exact, max_exact) = (known(&mins), known(&maxes));
        let null_counts = plausible_null_counts(&null_counts, &row_counts);
        let mut zones = Self { mins, maxes, min_exact, max_exact, null_counts, row_counts };
        zones.apply_nan_rules(&nan_counts)?;
        Ok(Some(zones))
    }

    /// Spark orders NaN above every number; Parquet bounds leave NaN out.
    fn apply_nan_rules(&mut self, nan_counts: &UInt64Array) -> Result<()> {
        if !matches!(self.mins.data_type(), DataType::Float16 | DataType::Float32 | DataType::Float64) {
            return Ok(());
        }
        // A NaN bound (old writers) says nothing about the other values: both unknown.
        let (nan_min, nan_max) = (is_nan(&self.mins)?, is_nan(&self.maxes)?);
        let nan_bound: BooleanArray = nan_min.iter().zip(&nan_max).map(|(a, b)| Some(*a || *b)).collect();
        if nan_bound.true_count() > 0 {
            self.mins = null_where(&self.mins, &nan_bound)?;
            self.maxes = null_where(&self.maxes, &nan_bound)?;
            self.min_exact = and_not(&self.min_exact, &nan_bound);
            self.max_exact = and_not(&self.max_exact, &nan_bound);
        }
        // May hold NaN: the nan count is unknown or positive, and not every value is null.
        let mut may_hold_nan = Vec::with_capacity(self.len());
        let mut max_exact = Vec::with_capacity(self.len());
        for i in 0..self.len() {
            let all_null = self.null_counts.is_valid(i) && self.null_counts.value(i) == self.row_counts.value(i);
            let nan_known = nan_counts.is_valid(i) && nan_counts.value(i) > 0;
            let nan_possible = (!nan_counts.is_valid(i) || nan_known) && !all_null;
            may_hold_nan.push(Some(nan_possible));
            // NaN is a held value when known present; otherwise only an upper bound.
            max_exact.push(Some(if nan_possible { nan_known } else { self.max_exact.value(i) }));
        }
        let nan = Scalar::new(cast(&Float64Array::from(vec![f64::NAN]), self.maxes.data_type()).map_err(arrow_error)?);
        self.maxes = zip(&BooleanArray::from(may_hold_nan), &nan, &self.maxes).map_err(arrow_error)?;
        self.max_exact = BooleanArray::from(max_exact);
        Ok(())
    }
}

/// Null counts with the impossible ones — more nulls than rows — made unknown. Writers
/// that had no count wrote -1, which the crate reads as 2^64 - 1: taken at face value it
/// says "every value is null" and prunes pages full of values (datapage_v1-*-checksum
/// files in parquet-testing: a required column, every page marked null, counts -1).
fn plausible_null_counts(null_counts: &UInt64Array, row_counts: &UInt64Array) -> UInt64Array {
    null_counts
        .iter()
        .zip(row_counts.iter())
        .map(|(nulls, rows)| match (nulls, rows) {
            (Some(n), Some(r)) if n > r => None,
            (n, _) => n,
        })
        .collect()
}

fn converter<'a>(metadata: &'a ParquetMetaData, leaf: usize, field: &'a Field) -> Result<StatisticsConverter<'a>> {
    let schema = metadata.file_metadata().schema_descr();
    let converter = StatisticsConverter::from_column_index(leaf, field, schema)
        .map_err(|e| PqsiftError::Statistics(e.to_string()))?
        // A missing null count is unknown, not zero.
        .with_missing_null_counts_as_zero(false)
        .with_column_orders(metadata.file_metadata().column_orders().map(|o| o.as_slice()));
    Ok(converter)
}

/// Per entry: a float value that is NaN (null entries are not NaN).
fn is_nan(values: &ArrayRef) -> Result<Vec<bool>> {
    let as_f64 = cast(values, &DataType::Float64).map_err(arrow_error)?;
    Ok(as_f64.as_primitive::<Float64Type>().iter().map(|v| v.is_some_and(f64::is_nan)).collect())
}

/// `values` with the entries where `mask` is true replaced by null.
fn null_where(values: &ArrayRef, mask: &BooleanArray) -> Result<ArrayRef> {
    let null = Scalar::new(new_null_array(values.data_type(), 1));
    zip(mask, &null, values).map_err(arrow_error)
}

fn false_where_null(flags: &BooleanArray) -> BooleanArray {
    flags.iter().map(|v| Some(v == Some(true))).collect()
}

fn and_not(flags: &BooleanArray, mask: &BooleanArray) -> BooleanArray {
    flags.iter().zip(mask.iter()).map(|(f, m)| Some(f == Some(true) && m != Some(true))).collect()
}
