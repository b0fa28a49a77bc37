//! Metadata reading: the footer and page index in as few I/Os as `metadata_size_hint`
//! allows, the same metadata whatever the hint, and hostile footers rejected before
//! anything they claim is read.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow::array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use parquet::arrow::ArrowWriter;
use parquet::file::metadata::ParquetMetaData;
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use pqsift::error::PqsiftError;
use pqsift::format::metadata::{page_locations, read_metadata};
use pqsift::storage::FileSource;
use pqsift::storage::local_file::CountingFile;

/// `file` as the reader opens it; the clone shares `file`'s counters.
fn source(file: &CountingFile) -> FileSource {
    FileSource::Local(file.clone())
}

/// 4 row groups × 2 columns, many small pages: a footer and a page index of a few KiB.
fn write_sample(dir: &Path) -> PathBuf {
    let rows = 20_000;
    let batch = RecordBatch::try_from_iter([
        ("id", Arc::new(Int64Array::from_iter_values(0..rows)) as ArrayRef),
        ("name", Arc::new(StringArray::from_iter_values((0..rows).map(|i| format!("n{}", i % 300)))) as ArrayRef),
    ])
    .unwrap();
    let props = WriterProperties::builder()
        .set_max_row_group_row_count(Some(5_000))
        .set_data_page_row_count_limit(100)
        .set_write_batch_size(100)
        .set_statistics_enabled(EnabledStatistics::Page)
        .build();
    let path = dir.join("sample.parquet");
    let mut writer = ArrowWriter::try_new(std::fs::File::create(&path).unwrap(), batch.schema(), Some(props)).unwrap();
    writer.write(&batch).unwrap();
    writer.close().unwrap();
    path
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("pqsift-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The footer's metadata length, and where the page index starts (file offsets).
fn layout(path: &Path) -> (u64, u64, u64) {
    let bytes = std::fs::read(path).unwrap();
    let len = bytes.len() as u64;
    let metadata_len = u32::from_le_bytes(bytes[bytes.len() - 8..bytes.len() - 4].try_into().unwrap()) as u64;
    let metadata = read_metadata(&source(&CountingFile::open(path).unwrap()), 1 << 20).unwrap();
    let index_start = metadata
        .row_groups()
        .iter()
        .flat_map(|rg| rg.columns())
        .flat_map(|c| [c.column_index_offset(), c.offset_index_offset()])
        .flatten()
        .min()
        .unwrap() as u64;
    (len, metadata_len, index_start)
}

fn summary(metadata: &ParquetMetaData) -> (i64, usize, Vec<Option<usize>>, usize) {
    let pages = (0..metadata.num_row_groups())
        .flat_map(|rg| (0..2).map(move |c| (rg, c)))
        .map(|(rg, c)| page_locations(metadata, rg, c).map(|p| p.len()))
        .collect();
    (metadata.file_metadata().num_rows(), metadata.num_row_groups(), pages, metadata.memory_size())
}

#[test]
fn one_read_when_footer_and_page_index_fit_the_hint() {
    let path = write_sample(&temp_dir("hint"));
    let (len, metadata_len, index_start) = layout(&path);
    let whole_tail = (len - index_start) as usize;
    let footer_only = (metadata_len + 8) as usize;
    let expected = summary(&read_metadata(&source(&CountingFile::open(&path).unwrap()), usize::MAX).unwrap());
    assert!(expected.2.iter().all(|p| p.is_some_and(|n| n >= 50)), "the page index was read");

    // (hint, reads): larger than the file, exactly footer + page index, one byte less,
    // exactly the footer (the page index needs a second read), the 8-byte tail only.
    for (hint, reads) in
        [(usize::MAX, 1), (whole_tail, 1), (whole_tail - 1, 2), (footer_only, 2), (footer_only - 1, 3), (0, 3)]
    {
        let file = CountingFile::open(&path).unwrap();
        let metadata = read_metadata(&source(&file), hint).unwrap();
        assert_eq!(summary(&metadata), expected, "hint {hint}");
        assert_eq!(file.reads(), reads, "hint {hint}");
    }
}

#[test]
fn hostile_footers_are_rejected_before_reading_what_they_claim() {
    let dir = temp_dir("hostile-footer");
    let good = std::fs::read(write_sample(&dir)).unwrap();
    let write = |name: &str, bytes: &[u8]| {
        let path = dir.join(name);
        std::fs::write(&path, bytes).unwrap();
        path
    };
    let mut huge = good.clone();
    let n = huge.len();
    huge[n - 8..n - 4].copy_from_slice(&u32::MAX.to_le_bytes());
    let path = write("huge.parquet", &huge);
    let file = CountingFile::open(&path).unwrap();
    let error = read_metadata(&source(&file), 16).unwrap_err();
    assert!(matches!(error, PqsiftError::Corrupt { .. }), "{error}");
    assert!(error.to_string().contains("huge.parquet") && error.to_string().contains("4294967295"), "{error}");
    assert_eq!(file.bytes_read(), 16, "nothing read beyond the tail");

    let mut encrypted = good.clone();
    encrypted[n - 4..].copy_from_slice(b"PARE");
    let error =
        read_metadata(&source(&CountingFile::open(&write("e.parquet", &encrypted)).unwrap()), 1 << 20).unwrap_err();
    assert!(matches!(error, PqsiftError::Unsupported { .. }), "{error}");

    let error = read_metadata(&source(&CountingFile::open(&write("short.parquet", b"PAR1PAR1")).unwrap()), 1 << 20)
        .unwrap_err();
    assert!(error.to_string().contains("too small"), "{error}");
    let error =
        read_metadata(&source(&CountingFile::open(&write("junk.parquet", &[7u8; 100])).unwrap()), 1 << 20).unwrap_err();
    assert!(error.to_string().contains("PAR1"), "{error}");
}

#[test]
fn encrypted_corpus_files_are_unsupported() {
    let data = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/parquet-testing/data");
    for name in ["uniform_encryption.parquet.encrypted", "encrypt_columns_plaintext_footer.parquet.encrypted"] {
        let error = read_metadata(&source(&CountingFile::open(&data.join(name)).unwrap()), 1 << 20).unwrap_err();
        assert!(matches!(error, PqsiftError::Unsupported { .. }), "{name}: {error}");
        assert!(error.to_string().contains(name), "{error}");
    }
}
