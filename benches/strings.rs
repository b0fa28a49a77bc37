//! Benchmarks for decoding a string column to plain Arrow strings (`Utf8`), three ways:
//!
//! * `crate_utf8`: the parquet crate decodes straight to `Utf8` (what pqsift did before
//!   [`pqsift::reading::string_gather`]);
//! * `gather`: the crate decodes to a dictionary (a chunk all dictionary-encoded) or to
//!   views (otherwise), then [`to_plain`] copies each value out once;
//! * `arrow_cast`: the same decode, then Arrow's `cast` to `Utf8`.
//!
//! Three columns of 1,000,000 rows, in memory, uncompressed (so the decode, not the
//! decompression, is timed): `dictionary` (16 values of 4-10 bytes, all
//! dictionary-encoded), `short` (unique values of 6-12 bytes, plain), `long` (unique values
//! of 60-140 bytes, plain). Every route is checked once, outside the timing loop, to give
//! the same array.
//!
//! This runs with the system allocator: the huge-page advice of the Python extension's
//! allocator ([`pqsift::allocator`]), which removes most of the page faults of writing
//! fresh buffers, is not in these figures.
//!
//! Run with `cargo bench --bench strings`.

use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

use arrow::array::{ArrayRef, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema};
use bytes::Bytes;
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_reader::{ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReaderBuilder};
use parquet::file::properties::WriterProperties;
use pqsift::reading::string_gather::to_plain;

const ROWS: usize = 1_000_000;

/// A deterministic generator (xorshift), so runs compare.
struct Random(u64);

impl Random {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn text(&mut self, low: usize, high: usize) -> String {
        let length = low + (self.next() as usize) % (high - low + 1);
        (0..length).map(|_| (b'a' + (self.next() % 26) as u8) as char).collect()
    }
}

/// One column `s` of `values` written as Parquet in memory, dictionary-encoded or plain.
fn file(values: Vec<String>, dictionary: bool) -> Bytes {
    let schema = Arc::new(Schema::new(vec![Field::new("s", DataType::Utf8, true)]));
    let batch = RecordBatch::try_new(schema.clone(), vec![Arc::new(StringArray::from(values)) as ArrayRef]).unwrap();
    let properties = WriterProperties::builder()
        .set_dictionary_enabled(dictionary)
        .set_dictionary_page_size_limit(1 << 30)
        .set_max_row_group_row_count(Some(ROWS))
        .build();
    let mut out = Vec::new();
    let mut writer = ArrowWriter::try_new(&mut out, schema, Some(properties)).unwrap();
    writer.write(&batch).unwrap();
    writer.close().unwrap();
    Bytes::from(out)
}

/// The file's one column decoded as `as_type` (`None`: the file's `Utf8`), in one batch.
fn decode(file: &Bytes, as_type: Option<DataType>) -> ArrayRef {
    let mut options = ArrowReaderOptions::new();
    if let Some(data_type) = as_type {
        options = options.with_schema(Arc::new(Schema::new(vec![Field::new("s", data_type, true)])));
    }
    let metadata = ArrowReaderMetadata::load(file, options).unwrap();
    let reader = ParquetRecordBatchReaderBuilder::new_with_metadata(file.clone(), metadata)
        .with_batch_size(ROWS)
        .build()
        .unwrap();
    let batches: Vec<RecordBatch> = reader.collect::<Result<_, _>>().unwrap();
    assert_eq!(batches.len(), 1);
    batches[0].column(0).clone()
}

fn strings(c: &mut Criterion) {
    let mut random = Random(0x9e37_79b9_7f4a_7c15);
    let words: Vec<String> = (0..16).map(|_| random.text(4, 10)).collect();
    let dictionary_type = DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8));
    let columns = [
        (
            "dictionary",
            file((0..ROWS).map(|_| words[random.next() as usize % 16].clone()).collect(), true),
            dictionary_type,
        ),
        ("short", file((0..ROWS).map(|_| random.text(6, 12)).collect(), false), DataType::Utf8View),
        ("long", file((0..ROWS).map(|_| random.text(60, 140)).collect(), false), DataType::Utf8View),
    ];
    let mut group = c.benchmark_group("strings");
    group.measurement_time(Duration::from_secs(5));
    for (name, file, hinted) in &columns {
        let direct = decode(file, None);
        assert_eq!(to_plain(&decode(file, Some(hinted.clone())), &DataType::Utf8).unwrap().to_data(), direct.to_data());
        group.bench_with_input(BenchmarkId::new("crate_utf8", name), file, |b, file| {
            b.iter(|| black_box(decode(file, None)))
        });
        group.bench_with_input(BenchmarkId::new("gather", name), file, |b, file| {
            b.iter(|| black_box(to_plain(&decode(file, Some(hinted.clone())), &DataType::Utf8).unwrap()))
        });
        group.bench_with_input(BenchmarkId::new("arrow_cast", name), file, |b, file| {
            b.iter(|| black_box(arrow::compute::cast(&decode(file, Some(hinted.clone())), &DataType::Utf8).unwrap()))
        });
    }
    group.finish();
}

criterion_group!(benches, strings);
criterion_main!(benches);
