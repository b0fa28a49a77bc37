//! Benchmarks for decoding DELTA_BINARY_PACKED pages
//! ([`pqsift::format::delta_binary_packed::decode`]), the integer and timestamp encoding of
//! writers with Parquet v2 settings.
//!
//! Four columns of 1,000,000 values, written by the parquet crate (blocks of 128 values in
//! 4 miniblocks of 32, as pyarrow and parquet-mr write them too), uncompressed, decoded
//! page by page into one reused buffer: `sorted_ts` (a sorted timestamp, deltas of a few
//! bits), `ids` (random 64-bit ids: 64-bit deltas), `counts` (random values below 10^6:
//! ~21-bit deltas) and `int32_codes` (INT32 values below 500). The decoded values are
//! checked once, outside the timing loop, against the column written.
//!
//! Run with `cargo bench --bench delta`.

use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

use arrow::array::{ArrayRef, Int32Array, Int64Array, RecordBatch};
use bytes::Bytes;
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, Encoding};
use parquet::column::page::Page;
use parquet::file::properties::{WriterProperties, WriterVersion};
use parquet::file::reader::{FileReader, SerializedFileReader};
use pqsift::format::delta_binary_packed::{DeltaValue, decode};
use proptest::prelude::Rng;
use proptest::test_runner::{RngAlgorithm, TestRng};

const ROWS: usize = 1_000_000;

/// The DELTA_BINARY_PACKED value bytes of each data page of `column`'s one-column file,
/// with the page's value count.
fn pages_of(column: ArrayRef) -> Vec<(Bytes, usize)> {
    let batch = RecordBatch::try_from_iter([("v", column)]).unwrap();
    let properties = WriterProperties::builder()
        .set_writer_version(WriterVersion::PARQUET_2_0)
        .set_dictionary_enabled(false)
        .set_encoding(Encoding::DELTA_BINARY_PACKED)
        .set_compression(Compression::UNCOMPRESSED)
        .build();
    let mut file = Vec::new();
    let mut writer = ArrowWriter::try_new(&mut file, batch.schema(), Some(properties)).unwrap();
    writer.write(&batch).unwrap();
    writer.close().unwrap();
    let reader = SerializedFileReader::new(Bytes::from(file)).unwrap();
    let mut pages = Vec::new();
    for row_group in 0..reader.num_row_groups() {
        let mut page_reader = reader.get_row_group(row_group).unwrap().get_column_page_reader(0).unwrap();
        while let Some(page) = page_reader.get_next_page().unwrap() {
            if let Page::DataPageV2 { buf, encoding, def_levels_byte_len, num_values, .. } = page {
                assert_eq!(encoding, Encoding::DELTA_BINARY_PACKED);
                pages.push((buf.slice(def_levels_byte_len as usize..), num_values as usize));
            }
        }
    }
    pages
}

/// Every page decoded, one after another, into `out`.
fn decode_all<T: DeltaValue>(pages: &[(Bytes, usize)], out: &mut Vec<T>) {
    out.clear();
    for (page, values) in pages {
        decode(page, *values, out).unwrap();
    }
}

fn delta(c: &mut Criterion) {
    // A fixed seed, so that runs compare.
    let mut random = TestRng::deterministic_rng(RngAlgorithm::ChaCha);
    let mut ts = 1_767_225_600_000_000i64;
    let sorted_ts: Vec<i64> = (0..ROWS)
        .map(|_| {
            ts += (random.next_u64() % 20_000) as i64;
            ts
        })
        .collect();
    let ids: Vec<i64> = (0..ROWS).map(|_| random.next_u64() as i64).collect();
    let counts: Vec<i64> = (0..ROWS).map(|_| (random.next_u64() % 1_000_000) as i64).collect();
    let codes: Vec<i32> = (0..ROWS).map(|_| (random.next_u64() % 500) as i32).collect();

    let mut group = c.benchmark_group("delta_binary_packed");
    group.measurement_time(Duration::from_secs(5));
    group.throughput(Throughput::Elements(ROWS as u64));
    for (name, values) in [("sorted_ts", sorted_ts), ("ids", ids), ("counts", counts)] {
        let pages = pages_of(Arc::new(Int64Array::from(values.clone())));
        let mut out = Vec::<u64>::with_capacity(ROWS);
        decode_all(&pages, &mut out);
        assert!(out.iter().zip(&values).all(|(&got, &want)| got == want as u64) && out.len() == ROWS);
        group.bench_with_input(BenchmarkId::new("decode", name), &pages, |b, pages| {
            b.iter(|| decode_all(black_box(pages), &mut out))
        });
    }
    let pages = pages_of(Arc::new(Int32Array::from(codes.clone())));
    let mut out = Vec::<u32>::with_capacity(ROWS);
    decode_all(&pages, &mut out);
    assert!(out.iter().zip(&codes).all(|(&got, &want)| got == want as u32) && out.len() == ROWS);
    group.bench_with_input(BenchmarkId::new("decode", "int32_codes"), &pages, |b, pages| {
        b.iter(|| decode_all(black_box(pages), &mut out))
    });
    group.finish();
}

criterion_group!(benches, delta);
criterion_main!(benches);
