use super::*;
use arrow::array::{
    Array, BooleanArray, Float32Array, Float64Array, Int32Array, Int64Array, RecordBatch, TimestampMicrosecondArray,
};
use arrow::compute::filter;
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::file::properties::{EnabledStatistics, WriterProperties, WriterVersion};
use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::file::serialized_reader::SerializedPageReader;
use proptest::prelude::*;

/// One column of `kind` from `seeds` (`None`: null), values drawn from `distinct` (a
/// small number makes dictionaries).
fn column(kind: usize, seeds: &[Option<u32>], distinct: u32) -> ArrayRef {
    let v = |s: &Option<u32>| s.map(|s| s % distinct);
    match kind {
        0 => Arc::new(Int32Array::from_iter(seeds.iter().map(|s| v(s).map(|x| x as i32 - 7)))),
        1 => Arc::new(Int64Array::from_iter(seeds.iter().map(|s| v(s).map(|x| i64::from(x) * 1_000_003 - 5)))),
        2 => Arc::new(Float32Array::from_iter(seeds.iter().map(|s| v(s).map(|x| x as f32 / 3.0)))),
        3 => Arc::new(Float64Array::from_iter(seeds.iter().map(|s| v(s).map(|x| f64::from(x) * -0.5)))),
        4 => Arc::new(BooleanArray::from_iter(seeds.iter().map(|s| v(s).map(|x| x % 3 == 1)))),
        5 => Arc::new(
            TimestampMicrosecondArray::from_iter(seeds.iter().map(|s| v(s).map(i64::from))).with_timezone("UTC"),
        ),
        // Converted from the stored INT32 / INT64 (`converted`).
        6 => Arc::new(arrow::array::Int8Array::from_iter(seeds.iter().map(|s| v(s).map(|x| x as i8)))),
        7 => Arc::new(arrow::array::UInt16Array::from_iter(seeds.iter().map(|s| v(s).map(|x| x as u16)))),
        8 => Arc::new(
            arrow::array::Decimal128Array::from_iter(
                seeds.iter().map(|s| v(s).map(|x| i128::from(x % 1_000_000_000) - 5)),
            )
            .with_precision_and_scale(9, 2)
            .unwrap(),
        ),
        9 => Arc::new(
            arrow::array::Decimal128Array::from_iter(seeds.iter().map(|s| v(s).map(|x| i128::from(x) * 100_003 - 9)))
                .with_precision_and_scale(18, 4)
                .unwrap(),
        ),
        _ => Arc::new(arrow::array::Date64Array::from_iter(
            seeds.iter().map(|s| v(s).map(|x| i64::from(x % 100_000) * 86_400_000)),
        )),
    }
}

/// `batch` written with `properties` plus `v2` or v1 pages of at most `page_rows` rows
/// and a page index.
fn written(
    batch: &RecordBatch,
    properties: parquet::file::properties::WriterPropertiesBuilder,
    v2: bool,
    page_rows: usize,
) -> bytes::Bytes {
    let properties = properties
        .set_writer_version(if v2 { WriterVersion::PARQUET_2_0 } else { WriterVersion::PARQUET_1_0 })
        .set_data_page_row_count_limit(page_rows)
        .set_write_batch_size(page_rows.min(1024))
        .set_statistics_enabled(EnabledStatistics::Page)
        .build();
    let mut file = Vec::new();
    let mut writer = ArrowWriter::try_new(&mut file, batch.schema(), Some(properties)).unwrap();
    writer.write(&batch.clone()).unwrap();
    writer.close().unwrap();
    bytes::Bytes::from(file)
}

/// A file's one column: what decoding it here needs, and the crate's decode of its
/// rows picked by `mask` (the oracle).
struct CrateRead {
    descriptor: parquet::schema::types::ColumnDescPtr,
    arrow_type: DataType,
    locations: Option<Vec<parquet::file::page_index::offset_index::PageLocation>>,
    expected: ArrayRef,
}

/// [`crate_read`] of a one-column file as `arrow_type` (a supplied Arrow schema: what a
/// file's embedded one asks for).
fn crate_read_as(
    file: &bytes::Bytes,
    mask: &[bool],
    use_index: bool,
    arrow_type: DataType,
    nullable: bool,
) -> CrateRead {
    let schema =
        Arc::new(arrow::datatypes::Schema::new(vec![arrow::datatypes::Field::new("t", arrow_type.clone(), nullable)]));
    let options = parquet::arrow::arrow_reader::ArrowReaderOptions::new()
        .with_page_index_policy(parquet::file::metadata::PageIndexPolicy::Optional)
        .with_schema(schema);
    let builder = ParquetRecordBatchReaderBuilder::try_new_with_options(file.clone(), options).unwrap();
    let whole = builder.with_batch_size(mask.len()).build().unwrap().next().unwrap().unwrap();
    let expected = filter(whole.column(0), &BooleanArray::from(mask.to_vec())).unwrap();
    CrateRead { arrow_type, expected, ..crate_read(file, mask, use_index) }
}

fn crate_read(file: &bytes::Bytes, mask: &[bool], use_index: bool) -> CrateRead {
    let reader = SerializedFileReader::new(file.clone()).unwrap();
    let descriptor = reader.metadata().file_metadata().schema_descr().column(0);
    let options = parquet::arrow::arrow_reader::ArrowReaderOptions::new()
        .with_page_index_policy(parquet::file::metadata::PageIndexPolicy::Optional);
    let builder = ParquetRecordBatchReaderBuilder::try_new_with_options(file.clone(), options).unwrap();
    let arrow_type = builder.schema().field(0).data_type().clone();
    let locations =
        use_index.then(|| builder.metadata().page_index_for_row_group(0).page_locations(0).cloned()).flatten();
    let whole = builder.with_batch_size(mask.len()).build().unwrap().next().unwrap().unwrap();
    let expected = filter(whole.column(0), &BooleanArray::from(mask.to_vec())).unwrap();
    CrateRead { descriptor, arrow_type, locations, expected }
}

/// The pages of the file's one column chunk.
fn pages(
    file: &bytes::Bytes,
    rows: usize,
    locations: Option<Vec<parquet::file::page_index::offset_index::PageLocation>>,
) -> SerializedPageReader<bytes::Bytes> {
    let reader = SerializedFileReader::new(file.clone()).unwrap();
    SerializedPageReader::new(Arc::new(file.clone()), reader.metadata().row_group(0).column(0), rows, locations)
        .unwrap()
}

/// The same pages handed over still compressed (`None` unless the chunk is zstd or
/// snappy), and their uncompressed sizes (the dictionary page's first, if any), taken
/// from a read that decompresses them.
fn raw_pages(
    file: &bytes::Bytes,
    rows: usize,
    locations: Option<Vec<parquet::file::page_index::offset_index::PageLocation>>,
) -> Option<(SerializedPageReader<bytes::Bytes>, Vec<usize>)> {
    use parquet::column::page::PageReader as _;
    let reader = SerializedFileReader::new(file.clone()).unwrap();
    let chunk = reader.metadata().row_group(0).column(0);
    if !matches!(chunk.compression(), parquet::basic::Compression::ZSTD(_) | parquet::basic::Compression::SNAPPY) {
        return None;
    }
    let mut sizes = Vec::new();
    let mut decompressing = pages(file, rows, None);
    while let Some(page) = decompressing.get_next_page().unwrap() {
        sizes.push(page.buffer().len());
    }
    let raw = chunk.clone().into_builder().set_compression(parquet::basic::Compression::UNCOMPRESSED).build().unwrap();
    Some((SerializedPageReader::new(Arc::new(file.clone()), &raw, rows, locations).unwrap(), sizes))
}

/// One of the flat decoders under test.
type DecodeColumn = fn(
    &mut (dyn PageReader + 'static),
    &ColumnDescriptor,
    &DataType,
    &RowSelection,
    Option<&mut StoredPages<'_>>,
) -> Result<Option<ArrayRef>, DecodeError>;

/// Decodes the rows of `selection` from `file`'s one column with `decode`, from pages
/// decompressed by the crate, and (zstd and snappy chunks) from pages read still
/// compressed, zstd pages sized by their frames and by their headers: all must give the
/// same answer, which is returned.
fn decoded_both_ways(
    file: &bytes::Bytes,
    read: &CrateRead,
    selection: &RowSelection,
    decode: DecodeColumn,
) -> Option<ArrayRef> {
    let data = |array: &Option<ArrayRef>| array.as_ref().map(|a| a.to_data());
    read_both_ways(file, read, selection, data, |pages, stored| {
        decode(pages, &read.descriptor, &read.arrow_type, selection, stored).unwrap()
    })
}

/// What `read` answers for the rows of `selection` from `file`'s one column, read as
/// [`decoded_both_ways`] reads them; `compare` says what must be equal between the ways.
fn read_both_ways<T, C: PartialEq + std::fmt::Debug>(
    file: &bytes::Bytes,
    read_as: &CrateRead,
    selection: &RowSelection,
    compare: impl Fn(&T) -> C,
    mut read: impl FnMut(&mut (dyn PageReader + 'static), Option<&mut StoredPages<'_>>) -> T,
) -> T {
    let rows = selection.row_count();
    let got = read(&mut pages(file, rows, read_as.locations.clone()), None);
    let chunk = SerializedFileReader::new(file.clone()).unwrap().metadata().row_group(0).column(0).clone();
    let has_dictionary = chunk.dictionary_page_offset().is_some();
    for headers_only in [false, true] {
        let Some((mut raw, sizes)) = raw_pages(file, rows, read_as.locations.clone()) else { break };
        let mut stored = match chunk.compression() {
            parquet::basic::Compression::SNAPPY if headers_only => break,
            parquet::basic::Compression::SNAPPY => StoredPages::snappy(usize::MAX),
            _ => {
                let zstd = StoredPages::zstd(usize::MAX, |at| {
                    Ok(match at {
                        PageAt::Dictionary => sizes[0],
                        PageAt::Data(n) => sizes[n + usize::from(has_dictionary)],
                    })
                });
                if headers_only { zstd.with_headers_only() } else { zstd }
            }
        };
        let compressed = read(&mut raw, Some(&mut stored));
        assert_eq!(compare(&compressed), compare(&got), "read still compressed");
    }
    got
}

/// Checks [`evaluate_selected`] on `file`'s one column, read as [`decoded_both_ways`]
/// reads it: `predicate`'s answers on the selected rows, in order, each run of pages
/// handed over whole and none empty, and with `keep` the values of the rows that pass.
fn evaluated_as_decoded(
    file: &bytes::Bytes,
    read: &CrateRead,
    selection: &RowSelection,
    keep: bool,
    predicate: impl Fn(&ArrayRef) -> BooleanBuffer,
) -> Result<(), TestCaseError> {
    let (mut runs, mut sizes) = (0usize, Vec::new());
    let compare = |a: &Option<(BooleanBuffer, Option<ArrayRef>)>| {
        a.as_ref().map(|(answers, passed)| (answers.clone(), passed.as_ref().map(|p| p.to_data())))
    };
    let answers = read_both_ways(file, read, selection, compare, |pages, stored| {
        runs += 1;
        evaluate_selected(pages, &read.descriptor, &read.arrow_type, selection, stored, keep, |values: &ArrayRef| {
            sizes.push(values.len());
            Ok(predicate(values))
        })
        .unwrap()
    });
    let (answers, passed) = answers.expect("evaluated here");
    let want = predicate(&read.expected);
    prop_assert_eq!(&answers, &want);
    let want_passed = filter(&read.expected, &BooleanArray::new(want, None)).unwrap();
    prop_assert_eq!(passed.map(|p| p.to_data()), keep.then(|| want_passed.to_data()));
    prop_assert!(sizes.iter().all(|&rows| rows > 0));
    prop_assert_eq!(sizes.iter().sum::<usize>(), read.expected.len() * runs);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]
    /// The rows a selection picks equal the crate's decode of every row, filtered: every
    /// type, nullable or not, PLAIN or dictionary (with a fallback to PLAIN mid-chunk, or
    /// to the type's other encodings: BYTE_STREAM_SPLIT, DELTA_BINARY_PACKED), v1 and v2
    /// pages, with and without the offset index.
    #[test]
    fn equals_the_crate_filtered(
        kind in 0usize..11,
        seeds in prop::collection::vec(prop::option::weighted(0.85, any::<u32>()), 1..3000),
        distinct in prop::sample::select(vec![1u32, 3, 50, 100_000]),
        nullable in any::<bool>(),
        dictionary in any::<bool>(),
        v2 in any::<bool>(),
        page_rows in prop::sample::select(vec![7usize, 64, 500, 10_000]),
        small_dictionary in any::<bool>(),
        use_index in any::<bool>(),
        picks in prop::collection::vec(any::<bool>(), 3000),
        density in 0u8..5,
        compression in 0u8..3,
        other_encoding in 0u8..3,
    ) {
        let seeds: Vec<Option<u32>> = seeds.into_iter().map(|s| if nullable { s } else { s.or(Some(1)) }).collect();
        let values = column(kind, &seeds, distinct);
        let field = arrow::datatypes::Field::new("v", values.data_type().clone(), nullable);
        let batch = RecordBatch::try_new(Arc::new(arrow::datatypes::Schema::new(vec![field])), vec![values]).unwrap();
        let properties = WriterProperties::builder()
            .set_dictionary_enabled(dictionary)
            .set_dictionary_page_size_limit(if small_dictionary { 64 } else { 1 << 20 })
            .set_compression(codec(compression));
        // Kinds 2 and 3 are floats, 4 booleans; the others are stored as INT32 or INT64.
        let properties = match other_encoding {
            1 if kind != 4 => properties.set_encoding(Encoding::BYTE_STREAM_SPLIT),
            2 if !matches!(kind, 2..=4) => properties.set_encoding(Encoding::DELTA_BINARY_PACKED),
            _ => properties,
        };
        let file = written(&batch, properties, v2, page_rows);

        let rows = seeds.len();
        // Dense, fragmented, sparse, nothing or everything (whole pages).
        let mask: Vec<bool> = (0..rows).map(|i| match density {
            0 => picks[i],
            1 => picks[i] && picks[(i * 7 + 3) % picks.len()],
            2 => i % 97 == 3 || (i > rows / 2 && picks[i]),
            3 => false,
            _ => true,
        }).collect();
        let selection = RowSelection::from_bools(&mask);
        // Run-backed selections are walked, mask-backed ones sliced.
        let selection = if picks[0] { selection.into_representation(crate::selection::Representation::Selectors) } else { selection };

        let read = crate_read(&file, &mask, use_index);
        prop_assert!(decodable(&read.descriptor, &read.arrow_type));
        let got = decoded_both_ways(&file, &read, &selection, decode_selected::<dyn PageReader>);
        // Every encoding these types are written in is decoded here.
        let got = got.expect("decoded here");
        prop_assert_eq!(got.to_data(), read.expected.to_data());
        // Evaluated as decoded where the values are the stored ones (here: an even lowest
        // byte, a null false).
        if evaluable(&read.descriptor, &read.arrow_type) {
            let even = |values: &ArrayRef| -> BooleanBuffer {
                let data = values.to_data();
                let width = values.data_type().primitive_width().expect("fixed-width");
                let bytes = data.buffers()[0].as_slice();
                BooleanBuffer::collect_bool(values.len(), |i| values.is_valid(i) && bytes[(data.offset() + i) * width].is_multiple_of(2))
            };
            evaluated_as_decoded(&file, &read, &selection, picks[1], even)?;
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(100))]
    /// Strings and binaries of an all-dictionary-encoded chunk: the selected rows, as a
    /// dictionary, equal the crate's decode filtered.
    #[test]
    fn dictionary_strings_equal_the_crate_filtered(
        seeds in prop::collection::vec(prop::option::weighted(0.8, 0u32..40), 1..3000),
        binary in any::<bool>(),
        v2 in any::<bool>(),
        page_rows in prop::sample::select(vec![7usize, 500, 10_000]),
        use_index in any::<bool>(),
        picks in prop::collection::vec(any::<bool>(), 3000),
        compression in 0u8..3,
    ) {
        let text = |s: &u32| format!("value {s} ünïcode {}", "x".repeat(*s as usize));
        let values: ArrayRef = match binary {
            true => Arc::new(arrow::array::BinaryArray::from_iter(seeds.iter().map(|s| s.map(|s| text(&s).into_bytes())))),
            false => Arc::new(arrow::array::StringArray::from_iter(seeds.iter().map(|s| s.map(|s| text(&s))))),
        };
        let batch = RecordBatch::try_from_iter([("v", values)]).unwrap();
        let file = written(&batch, WriterProperties::builder().set_compression(codec(compression)), v2, page_rows);
        let rows = seeds.len();
        let mask = &picks[..rows];
        let read = crate_read(&file, mask, use_index);
        let chunk_metadata = SerializedFileReader::new(file.clone()).unwrap().metadata().row_group(0).column(0).clone();
        prop_assert!(dictionary_decodable(&read.descriptor, &read.arrow_type, &chunk_metadata));
        let selection = RowSelection::from_bools(mask);
        let selection = if picks[1] { selection.into_representation(crate::selection::Representation::Selectors) } else { selection };
        let got = decoded_both_ways(&file, &read, &selection, decode_dictionary_selected::<dyn PageReader>).unwrap();
        prop_assert_eq!(got.data_type(), &DataType::Dictionary(Box::new(DataType::Int32), Box::new(read.arrow_type.clone())));
        let got = arrow::compute::cast(&got, &read.arrow_type).unwrap();
        prop_assert_eq!(got.to_data(), read.expected.to_data());
    }
}

/// Which of `rows` rows a selection picks, by `density`: dense (`picks`), fragmented,
/// sparse, only the last row, or every row (each page's values decoded whole, in one pass).
fn selection_mask(density: u8, rows: usize, picks: &[bool]) -> Vec<bool> {
    (0..rows)
        .map(|i| match density {
            0 => picks[i],
            1 => picks[i] && picks[(i * 7 + 3) % picks.len()],
            2 => i % 97 == 3,
            3 => i + 1 == rows,
            _ => true,
        })
        .collect()
}

/// How a proptest writes a column and selects its rows: nulls or not, dictionary or PLAIN,
/// v1 or v2 pages of `page_rows` rows, with or without the offset index, compressed or not ([`codec`]), and
/// the selection (`density` and `picks`, see [`selection_mask`]).
#[derive(Debug, Clone)]
struct Layout {
    nullable: bool,
    dictionary: bool,
    v2: bool,
    page_rows: usize,
    use_index: bool,
    picks: Vec<bool>,
    density: u8,
    /// See [`codec`].
    compression: u8,
}

impl Layout {
    /// The selection of `rows` rows, as a mask.
    fn mask(&self, rows: usize) -> Vec<bool> {
        selection_mask(self.density, rows, &self.picks)
    }
}

prop_compose! {
    /// A [`Layout`] for columns of up to `rows` rows.
    fn layout(rows: usize)(
        nullable in any::<bool>(),
        dictionary in any::<bool>(),
        v2 in any::<bool>(),
        page_rows in prop::sample::select(vec![7usize, 500, 10_000]),
        use_index in any::<bool>(),
        picks in prop::collection::vec(any::<bool>(), rows),
        density in 0u8..5,
        compression in 0u8..3,
    ) -> Layout {
        Layout { nullable, dictionary, v2, page_rows, use_index, picks, density, compression }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(150))]
    /// Strings and binaries of any chunk — PLAIN, DELTA_LENGTH_BYTE_ARRAY or
    /// DELTA_BYTE_ARRAY, dictionary-encoded, or falling back from a dictionary to one of
    /// those — copied out for the selected rows, and as views (PLAIN and dictionaries):
    /// the crate's decode, filtered, whether the pages come decompressed or still
    /// compressed (zstd or snappy).
    #[test]
    fn strings_equal_the_crate_filtered(
        seeds in prop::collection::vec(prop::option::weighted(0.8, 0u32..400), 1..3000),
        binary in any::<bool>(),
        large in any::<bool>(),
        layout in layout(3000),
        encoding in 0u8..3,
    ) {
        let seeds: Vec<Option<u32>> = seeds.into_iter().map(|s| if layout.nullable { s } else { s.or(Some(1)) }).collect();
        // 6 to ~150 bytes: values inline in a view or not, shorter and longer than a move
        // of a whole page's copy, lengths below 128 (ASCII) and above; characters of two
        // and three bytes sharing their first (a DELTA_BYTE_ARRAY prefix may end inside one).
        let text = |s: u32| {
            let character = ["ü", "é", "日"][(s % 3) as usize];
            format!("v{s} {character}{}", "x".repeat((s % 37 * (1 + s % 4)) as usize))
        };
        let values: ArrayRef = match (binary, large) {
            (true, false) => Arc::new(arrow::array::BinaryArray::from_iter(seeds.iter().map(|s| s.map(|s| text(s).into_bytes())))),
            (true, true) => Arc::new(arrow::array::LargeBinaryArray::from_iter(seeds.iter().map(|s| s.map(|s| text(s).into_bytes())))),
            (false, false) => Arc::new(arrow::array::StringArray::from_iter(seeds.iter().map(|s| s.map(text)))),
            (false, true) => Arc::new(arrow::array::LargeStringArray::from_iter(seeds.iter().map(|s| s.map(text)))),
        };
        let field = arrow::datatypes::Field::new("v", values.data_type().clone(), layout.nullable);
        let batch = RecordBatch::try_new(Arc::new(arrow::datatypes::Schema::new(vec![field])), vec![values]).unwrap();
        // A 600-byte dictionary limit: a chunk falls back to PLAIN part way.
        let properties = WriterProperties::builder()
            .set_dictionary_enabled(layout.dictionary)
            .set_dictionary_page_size_limit(600)
            .set_compression(codec(layout.compression));
        let properties = match encoding {
            1 => properties.set_encoding(Encoding::DELTA_LENGTH_BYTE_ARRAY),
            2 => properties.set_encoding(Encoding::DELTA_BYTE_ARRAY),
            _ => properties,
        };
        let file = written(&batch, properties, layout.v2, layout.page_rows);
        // (The writer's v2 pages outside a dictionary are DELTA_BYTE_ARRAY unless told.)
        let delta = SerializedFileReader::new(file.clone()).unwrap().metadata().row_group(0).column(0).encodings()
            .any(|e| matches!(e, Encoding::DELTA_LENGTH_BYTE_ARRAY | Encoding::DELTA_BYTE_ARRAY));
        let mask = layout.mask(seeds.len());
        let read = crate_read(&file, &mask, layout.use_index);
        prop_assert!(decodable(&read.descriptor, &read.arrow_type));
        let selection = RowSelection::from_bools(&mask);
        let selection = if layout.picks[1] { selection.into_representation(crate::selection::Representation::Selectors) } else { selection };
        // Every encoding strings are written in is decoded here.
        let got = decoded_both_ways(&file, &read, &selection, decode_selected::<dyn PageReader>);
        let got = got.expect("decoded here");
        prop_assert_eq!(got.to_data(), read.expected.to_data());
        // As views: PLAIN and dictionary pages (the delta encodings are read as plain strings).
        let view_type = if binary { DataType::BinaryView } else { DataType::Utf8View };
        prop_assert!(decodable(&read.descriptor, &view_type));
        let as_views = CrateRead { arrow_type: view_type.clone(), descriptor: read.descriptor.clone(), locations: read.locations.clone(), expected: read.expected.clone() };
        let views = decoded_both_ways(&file, &as_views, &selection, decode_selected::<dyn PageReader>);
        prop_assert!(views.is_some() || delta);
        if let Some(views) = views {
            prop_assert_eq!(views.data_type(), &view_type);
            let plain = arrow::compute::cast(&views, read.expected.data_type()).unwrap();
            prop_assert_eq!(plain.to_data(), read.expected.to_data());
        }
        // Evaluated as decoded, run by run of pages (here: an even length, a null false).
        let even = |values: &ArrayRef| -> BooleanBuffer {
            let lengths = arrow::compute::kernels::length::length(values).unwrap();
            let lengths = arrow::compute::cast(&lengths, &DataType::Int64).unwrap();
            let lengths = lengths.as_any().downcast_ref::<Int64Array>().unwrap();
            BooleanBuffer::collect_bool(lengths.len(), |i| lengths.is_valid(i) && lengths.value(i) % 2 == 0)
        };
        evaluated_as_decoded(&file, &read, &selection, layout.picks[2], even)?;
    }
}

/// Views of a page few of whose values are selected hold those values only (copied out),
/// not the page; of a page read whole, the page itself (one buffer, no copy). Values of up
/// to 12 bytes are inline: no buffer.
#[test]
fn views_keep_a_page_only_where_most_of_it_is_selected() {
    let rows = 10_000;
    let text: Vec<String> = (0..rows).map(|i| format!("{i:0>100}")).collect();
    let batch =
        RecordBatch::try_from_iter([("v", Arc::new(arrow::array::StringArray::from(text.clone())) as ArrayRef)])
            .unwrap();
    for compression in 0..3 {
        let properties = WriterProperties::builder().set_dictionary_enabled(false).set_compression(codec(compression));
        let file = written(&batch, properties, false, rows);
        let descriptor =
            SerializedFileReader::new(file.clone()).unwrap().metadata().file_metadata().schema_descr().column(0);
        let decode = |selection: &RowSelection| {
            let views = decode_selected::<dyn PageReader>(
                &mut pages(&file, rows, None),
                &descriptor,
                &DataType::Utf8View,
                selection,
                None,
            )
            .unwrap()
            .unwrap();
            views.as_any().downcast_ref::<arrow::array::StringViewArray>().unwrap().clone()
        };
        let few = decode(&RowSelection::from_ranges(&[17..20, 9_000..9_002], rows).unwrap());
        assert_eq!(few.iter().flatten().collect::<Vec<_>>(), [17, 18, 19, 9_000, 9_001].map(|i| text[i].as_str()));
        assert_eq!(few.data_buffers().iter().map(|b| b.len()).sum::<usize>(), 500, "codec {compression}");
        let all = decode(&RowSelection::from_ranges(&[0..rows], rows).unwrap());
        assert_eq!(all.data_buffers().len(), 1);
        assert_eq!(all.data_buffers()[0].len(), rows * 104, "the page's values, lengths and all");
        assert_eq!(all.value(rows - 1), text[rows - 1]);
    }
    let short = RecordBatch::try_from_iter([(
        "v",
        Arc::new(arrow::array::StringArray::from(vec!["twelve bytes"; 50])) as ArrayRef,
    )])
    .unwrap();
    let file = written(&short, WriterProperties::builder().set_dictionary_enabled(false), false, 50);
    let descriptor =
        SerializedFileReader::new(file.clone()).unwrap().metadata().file_metadata().schema_descr().column(0);
    let views = decode_selected::<dyn PageReader>(
        &mut pages(&file, 50, None),
        &descriptor,
        &DataType::Utf8View,
        &RowSelection::from_ranges(&[0..50], 50).unwrap(),
        None,
    )
    .unwrap()
    .unwrap();
    let views = views.as_any().downcast_ref::<arrow::array::StringViewArray>().unwrap();
    assert!(views.data_buffers().is_empty() && views.value(49) == "twelve bytes");
}

/// A PLAIN string column whose values are the byte strings `values`, written as they are
/// (Arrow's writer does not check them), read back as strings for every row.
fn strings_read_back(values: &[&[u8]], compression: u8) -> Result<Option<ArrayRef>, DecodeError> {
    strings_read_back_as(values, compression, &DataType::Utf8)
}

/// The same, read back as `arrow_type`.
fn strings_read_back_as(
    values: &[&[u8]],
    compression: u8,
    arrow_type: &DataType,
) -> Result<Option<ArrayRef>, DecodeError> {
    let offsets: Vec<i32> = std::iter::once(0)
        .chain(values.iter().scan(0, |end, v| {
            *end += v.len() as i32;
            Some(*end)
        }))
        .collect();
    let bytes: Vec<u8> = values.concat();
    // SAFETY (of the test): the array is only written out, never read as strings.
    let strings = unsafe {
        arrow::array::StringArray::new_unchecked(
            OffsetBuffer::new(ScalarBuffer::from(offsets)),
            Buffer::from_vec(bytes),
            None,
        )
    };
    let field = arrow::datatypes::Field::new("v", DataType::Utf8, false);
    let batch =
        RecordBatch::try_new(Arc::new(arrow::datatypes::Schema::new(vec![field])), vec![Arc::new(strings)]).unwrap();
    let properties = WriterProperties::builder().set_dictionary_enabled(false).set_compression(codec(compression));
    let file = written(&batch, properties, false, 10_000);
    let reader = SerializedFileReader::new(file.clone()).unwrap();
    let descriptor = reader.metadata().file_metadata().schema_descr().column(0);
    let selection = RowSelection::from_bools(&vec![true; values.len()]);
    decode_selected::<dyn PageReader>(&mut pages(&file, values.len(), None), &descriptor, arrow_type, &selection, None)
}

/// Strings are checked as UTF-8 as they are copied out: bytes that are not UTF-8, and a
/// value starting inside a character (two values that are valid only together), are
/// errors naming what is wrong, not arrays handed on unchecked.
#[test]
fn strings_that_are_not_utf8_are_refused() {
    let good: &[&[u8]] =
        &["plain".as_bytes(), "ünïcode".as_bytes(), b"", "a longer value of more than thirty-two bytes".as_bytes()];
    for compression in 0..3 {
        let read = strings_read_back(good, compression).unwrap().expect("decoded here");
        let read = read.as_any().downcast_ref::<arrow::array::StringArray>().unwrap();
        assert_eq!(
            read.iter().flatten().collect::<Vec<_>>(),
            ["plain", "ünïcode", "", "a longer value of more than thirty-two bytes"]
        );
        let not_utf8 = strings_read_back(&[b"fine", b"bad \xff byte"], compression).unwrap_err().to_string();
        assert!(not_utf8.contains("not UTF-8") && not_utf8.contains("byte 8"), "{not_utf8}");
        // "é" is 0xC3 0xA9: split over two values, the second starts inside it.
        let split = strings_read_back(&[b"caf\xc3", b"\xa9", b"ok"], compression).unwrap_err().to_string();
        assert!(split.contains("row 1") && split.contains("inside a UTF-8 character"), "{split}");
    }
}

/// The same as views, checked where the values lie (a run of values with lengths below
/// 128 at once): bytes that are not UTF-8, a character split over two values, on either
/// side of a value of 128 bytes or more, are refused.
#[test]
fn strings_that_are_not_utf8_are_refused_as_views() {
    let long = "a value of well over a hundred and twenty-eight bytes, ".repeat(3);
    let good: Vec<&[u8]> =
        vec!["plain".as_bytes(), "ünïcode".as_bytes(), b"", long.as_bytes(), "twelve bytes".as_bytes()];
    let long_then_split = [long.as_bytes(), &b"\xc3"[..]].concat();
    let split_then_long = [&b"\xa9"[..], long.as_bytes()].concat();
    for compression in 0..3 {
        let read = strings_read_back_as(&good, compression, &DataType::Utf8View).unwrap().expect("decoded here");
        let read = read.as_any().downcast_ref::<arrow::array::StringViewArray>().unwrap();
        assert_eq!(read.iter().flatten().collect::<Vec<_>>(), ["plain", "ünïcode", "", long.as_str(), "twelve bytes"]);
        let bad: [&[&[u8]]; 4] = [
            &[b"fine", b"bad \xff byte"],
            &[b"caf\xc3", b"\xa9", b"ok"],
            &[&long_then_split, b"\xa9"],
            &[b"caf\xc3", &split_then_long],
        ];
        for values in bad {
            let error = strings_read_back_as(values, compression, &DataType::Utf8View).unwrap_err().to_string();
            assert!(error.contains("not UTF-8"), "{error}");
        }
        // Binaries are not checked.
        assert!(strings_read_back_as(&[b"caf\xc3", b"\xff"], compression, &DataType::BinaryView).unwrap().is_some());
    }
}

/// A PLAIN page said to hold 20 values whose first length claims the whole page: 200
/// bytes, where 20 values leave 124 (the page less 20 lengths) and that much is reserved.
/// Refused before it is copied, not written past the reservation; as the only value of
/// a page of one, read.
#[test]
fn a_length_longer_than_the_values_is_refused() {
    let mut bytes = Vec::new();
    bytes.extend_from_slice(&200u32.to_le_bytes());
    bytes.extend_from_slice(&[b'x'; 200]);
    let page = bytes::Bytes::from(bytes);
    for stored in [20, 1] {
        let mut output = strings::BytesOutput::<i32>::new(stored, false, &DataType::Utf8);
        let mut data_page =
            DataPage { rows: stored, valid: None, encoding: Encoding::PLAIN, values: PageValues::Ready(page.clone()) };
        let selected = BooleanBuffer::new_set(stored);
        match stored {
            20 => assert!(output.page(&mut data_page, &selected).unwrap_err().to_string().contains("run past its end")),
            _ => {
                assert!(output.page(&mut data_page, &selected).unwrap());
                let strings = output.finish().unwrap();
                assert_eq!(
                    strings.as_any().downcast_ref::<arrow::array::StringArray>().unwrap().value(0),
                    "x".repeat(200)
                );
            }
        }
    }
}

/// `values` as DELTA_BINARY_PACKED: blocks of 128 in 4 miniblocks, every delta in 64 bits
/// (any INT32 values, hostile ones too).
fn delta_stream(values: &[i32]) -> Vec<u8> {
    fn uleb(out: &mut Vec<u8>, mut v: u64) {
        while v >= 0x80 {
            out.push(v as u8 | 0x80);
            v >>= 7;
        }
        out.push(v as u8);
    }
    let zigzag = |v: i64| ((v << 1) ^ (v >> 63)) as u64;
    let mut out = Vec::new();
    uleb(&mut out, 128);
    uleb(&mut out, 4);
    uleb(&mut out, values.len() as u64);
    uleb(&mut out, zigzag(values.first().map_or(0, |&v| i64::from(v))));
    let deltas: Vec<u64> = values.windows(2).map(|w| (i64::from(w[1]) - i64::from(w[0])) as u64).collect();
    for block in deltas.chunks(128) {
        uleb(&mut out, 0);
        out.extend_from_slice(&[64; 4]);
        for miniblock in block.chunks(32) {
            for i in 0..32 {
                out.extend_from_slice(&miniblock.get(i).copied().unwrap_or(0).to_le_bytes());
            }
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]
    /// DELTA_LENGTH_BYTE_ARRAY and DELTA_BYTE_ARRAY pages with hostile lengths — negative,
    /// past the page, prefixes longer than the value before, fewer than the page's values —
    /// are decoded or refused with an error, never a panic; what is decoded is the values
    /// as the lengths say.
    #[test]
    fn hostile_delta_string_pages_fail_cleanly(
        lengths in prop::collection::vec(prop_oneof![0i32..6, Just(-1), Just(i32::MAX), Just(1000)], 0..40),
        prefixes in prop::collection::vec(prop_oneof![0i32..4, Just(-3), Just(i32::MAX)], 0..40),
        data in prop::collection::vec(any::<u8>(), 0..200),
        stored in 1usize..40,
        by_prefix in any::<bool>(),
        picks in prop::collection::vec(any::<bool>(), 40),
    ) {
        let mut page = Vec::new();
        if by_prefix {
            page.extend(delta_stream(&prefixes));
        }
        page.extend(delta_stream(&lengths));
        page.extend_from_slice(&data);
        let encoding = if by_prefix { Encoding::DELTA_BYTE_ARRAY } else { Encoding::DELTA_LENGTH_BYTE_ARRAY };
        let mut output = strings::BytesOutput::<i32>::new(stored, false, &DataType::Binary);
        let mut data_page = DataPage { rows: stored, valid: None, encoding, values: PageValues::Ready(page.into()) };
        let selected = BooleanBuffer::from(picks[..stored].to_vec());
        if output.page(&mut data_page, &selected).is_ok_and(|done| done) {
            let got = output.finish().unwrap();
            let got = got.as_any().downcast_ref::<arrow::array::BinaryArray>().unwrap();
            prop_assert_eq!(got.len(), selected.count_set_bits());
            if !by_prefix {
                // Each selected value: its bytes where the lengths before it put them.
                let starts: Vec<usize> = lengths.iter().scan(0usize, |at, &l| { let s = *at; *at = at.wrapping_add(l as u32 as usize); Some(s) }).collect();
                for (row, value) in selected.set_indices().zip(got.iter()) {
                    let (start, length) = (starts[row], lengths[row] as usize);
                    prop_assert_eq!(value.unwrap(), &data[start..start + length]);
                }
            }
        }
    }
}

/// A file of one INT96 column holding `values`, written the way Spark writes its
/// timestamps (the crate's low-level writer: Arrow's writes timestamps as INT64).
fn int96_written(
    values: &[Option<parquet::data_type::Int96>],
    nullable: bool,
    properties: parquet::file::properties::WriterPropertiesBuilder,
    v2: bool,
    page_rows: usize,
) -> bytes::Bytes {
    let repetition = if nullable { "optional" } else { "required" };
    let schema =
        parquet::schema::parser::parse_message_type(&format!("message spark {{ {repetition} int96 t; }}")).unwrap();
    let properties = properties
        .set_writer_version(if v2 { WriterVersion::PARQUET_2_0 } else { WriterVersion::PARQUET_1_0 })
        .set_data_page_row_count_limit(page_rows)
        .set_write_batch_size(page_rows.min(1024))
        .set_statistics_enabled(EnabledStatistics::Page)
        .build();
    let mut file = Vec::new();
    let mut writer =
        parquet::file::writer::SerializedFileWriter::new(&mut file, Arc::new(schema), Arc::new(properties)).unwrap();
    let mut row_group = writer.next_row_group().unwrap();
    let mut column = row_group.next_column().unwrap().unwrap();
    let present: Vec<parquet::data_type::Int96> = values.iter().flatten().cloned().collect();
    let levels: Vec<i16> = values.iter().map(|v| i16::from(v.is_some())).collect();
    column
        .typed::<parquet::data_type::Int96Type>()
        .write_batch(&present, nullable.then_some(&levels[..]), None)
        .unwrap();
    column.close().unwrap();
    row_group.close().unwrap();
    writer.close().unwrap();
    bytes::Bytes::from(file)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(150))]
    /// INT96 timestamps equal the crate's decode, filtered, in every unit (the file's Arrow
    /// schema may ask for any): PLAIN or dictionary-encoded, v1 or v2 pages, nulls or not,
    /// compressed or not — days near the epoch; days so far from it that the crate wraps
    /// the timestamps are an error instead.
    #[test]
    fn int96_equals_the_crate_filtered(
        seeds in prop::collection::vec(prop::option::weighted(0.85, any::<u32>()), 1..2000),
        distinct in prop::sample::select(vec![1u32, 7, 100_000]),
        layout in layout(2000),
        unit in prop::sample::select(vec![
            arrow::datatypes::TimeUnit::Second,
            arrow::datatypes::TimeUnit::Millisecond,
            arrow::datatypes::TimeUnit::Microsecond,
            arrow::datatypes::TimeUnit::Nanosecond,
        ]),
    ) {
        let timestamp = |seed: u32| {
            let k = u64::from(seed % distinct);
            let day = match k % 13 {
                0 => (k * 104_729 % 5_000_000) as u32,
                _ => (2_440_588 - 20_000 + k * 7_919 % 40_000) as u32,
            };
            let nanos = k * 86_399_999_999_917 % 86_400_000_000_000;
            let mut value = parquet::data_type::Int96::new();
            value.set_data(nanos as u32, (nanos >> 32) as u32, day);
            value
        };
        let values: Vec<_> = seeds.iter().map(|s| match (s, layout.nullable) {
            (None, true) => None,
            (s, _) => Some(timestamp(s.unwrap_or(1))),
        }).collect();
        let properties = WriterProperties::builder().set_dictionary_enabled(layout.dictionary).set_compression(codec(layout.compression));
        let file = int96_written(&values, layout.nullable, properties, layout.v2, layout.page_rows);
        let mask = layout.mask(values.len());
        let mut read = crate_read(&file, &mask, layout.use_index);
        prop_assert_eq!(&read.arrow_type, &DataType::Timestamp(arrow::datatypes::TimeUnit::Nanosecond, None));
        // Another unit: the crate's decode of it, as a file whose Arrow schema asks for it.
        if unit != arrow::datatypes::TimeUnit::Nanosecond {
            read = crate_read_as(&file, &mask, layout.use_index, DataType::Timestamp(unit, Some("UTC".into())), layout.nullable);
        }
        prop_assert!(decodable(&read.descriptor, &read.arrow_type));
        let selection = RowSelection::from_bools(&mask);
        // A selected instant nanoseconds cannot hold: an error, where the crate wraps.
        let wraps = |v: &parquet::data_type::Int96| {
            let nanos = i128::from(u64::from(v.data()[1]) << 32 | u64::from(v.data()[0]));
            let exact = (i128::from(v.data()[2]) - 2_440_588) * 86_400_000_000_000 + nanos;
            unit == arrow::datatypes::TimeUnit::Nanosecond && i64::try_from(exact).is_err()
        };
        if values.iter().zip(&mask).any(|(v, &kept)| kept && v.as_ref().is_some_and(wraps)) {
            let got = decode_selected::<dyn PageReader>(&mut pages(&file, selection.row_count(), read.locations.clone()), &read.descriptor, &read.arrow_type, &selection, None);
            prop_assert!(matches!(got, Err(DecodeError::OutOfRange(_))), "{:?}", got.map(|a| a.map(|a| a.len())));
            return Ok(());
        }
        let got = decoded_both_ways(&file, &read, &selection, decode_selected::<dyn PageReader>);
        prop_assert!(got.is_some());
        prop_assert_eq!(got.unwrap().to_data(), read.expected.to_data());
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(150))]
    /// Decimals of any precision, negative and positive, equal the crate's decode, filtered:
    /// Arrow's writer stores precisions 19 to 38 as FIXED_LEN_BYTE_ARRAY of 9 to 16 bytes (up
    /// to 18 as INT32 / INT64; the narrower fixed widths of Spark's legacy format are read in
    /// `tests/test_delta.py`'s golden tables); PLAIN, dictionary-encoded or BYTE_STREAM_SPLIT,
    /// v1 or v2 pages, nulls or not, compressed or not.
    #[test]
    fn fixed_len_decimals_equal_the_crate_filtered(
        seeds in prop::collection::vec(prop::option::weighted(0.85, any::<u64>()), 1..2000),
        precision in 1u8..=38,
        distinct in prop::sample::select(vec![1u64, 7, u64::MAX]),
        layout in layout(2000),
        split in any::<bool>(),
    ) {
        // Values within the precision, both signs: a seed spread over 10^precision.
        let bound = 10i128.pow(u32::from(precision));
        let value = |seed: u64| {
            let k = i128::from(seed % distinct);
            k.wrapping_mul(0x9E37_79B9_7F4A_7C15).rem_euclid(bound) * if k % 2 == 0 { 1 } else { -1 }
        };
        let values = arrow::array::Decimal128Array::from_iter(seeds.iter().map(|s| match (s, layout.nullable) {
            (None, true) => None,
            (s, _) => Some(value(s.unwrap_or(1))),
        }))
        .with_precision_and_scale(precision, (precision / 3) as i8)
        .unwrap();
        let field = arrow::datatypes::Field::new("v", values.data_type().clone(), layout.nullable);
        let batch = RecordBatch::try_new(Arc::new(arrow::datatypes::Schema::new(vec![field])), vec![Arc::new(values)]).unwrap();
        let properties = WriterProperties::builder().set_dictionary_enabled(layout.dictionary).set_compression(codec(layout.compression));
        let properties = if split { properties.set_encoding(Encoding::BYTE_STREAM_SPLIT) } else { properties };
        let file = written(&batch, properties, layout.v2, layout.page_rows);
        let mask = layout.mask(seeds.len());
        let read = crate_read(&file, &mask, layout.use_index);
        prop_assert!(decodable(&read.descriptor, &read.arrow_type));
        let stored_as = read.descriptor.physical_type();
        let selection = RowSelection::from_bools(&mask);
        let got = decoded_both_ways(&file, &read, &selection, decode_selected::<dyn PageReader>);
        // (Arrow's writer stores precisions up to 18 as INT32 / INT64, and FIXED_LEN_BYTE_ARRAY
        // in v2 pages outside a dictionary as DELTA_BYTE_ARRAY: the crate's.)
        let crate_only = layout.v2 && !split && stored_as == parquet::basic::Type::FIXED_LEN_BYTE_ARRAY;
        prop_assert!(got.is_some() || crate_only, "{stored_as:?}");
        if let Some(got) = got {
            prop_assert_eq!(got.to_data(), read.expected.to_data());
        }
    }
}

/// The codecs whose pages are decompressed here as well as by the crate: 1 zstd, 2
/// snappy; else none.
fn codec(compression: u8) -> parquet::basic::Compression {
    match compression {
        1 => parquet::basic::Compression::ZSTD(parquet::basic::ZstdLevel::try_new(1).unwrap()),
        2 => parquet::basic::Compression::SNAPPY,
        _ => parquet::basic::Compression::UNCOMPRESSED,
    }
}

proptest! {
    /// A row's stored index is the count of valid rows before it, at any offset.
    #[test]
    fn rank_counts_the_valid_rows_before(bits in prop::collection::vec(any::<bool>(), 0..300), offset in 0usize..70) {
        let offset = offset.min(bits.len());
        let valid = BooleanBuffer::from(bits.clone()).slice(offset, bits.len() - offset);
        let rank = Rank::new(&valid);
        let mut before = 0;
        for (row, &is_valid) in bits[offset..].iter().enumerate() {
            prop_assert_eq!(rank.stored_index(row), is_valid.then_some(before));
            before += usize::from(is_valid);
        }
    }
}

/// Integers converted value by value, INT96 timestamps and decimals in FIXED_LEN_BYTE_ARRAY
/// are decoded here; other fixed-length bytes and nested columns are the crate's.
#[test]
fn types_decoded_here_and_left_to_the_crate() {
    let schema = parquet::schema::parser::parse_message_type(
        "message m { optional int32 a (INTEGER(8, true)); optional int32 b (DATE); required int64 c (DECIMAL(18, 2));
         optional group s { optional int32 x; } optional fixed_len_byte_array(16) d (DECIMAL(38, 4)); optional int96 t; }",
    )
    .unwrap();
    let descriptor = parquet::schema::types::SchemaDescriptor::new(Arc::new(schema));
    assert!(decodable(&descriptor.column(0), &DataType::Int8));
    assert!(decodable(&descriptor.column(1), &DataType::Date32));
    assert!(decodable(&descriptor.column(1), &DataType::Date64));
    assert!(decodable(&descriptor.column(2), &DataType::Decimal128(18, 2)));
    assert!(decodable(&descriptor.column(2), &DataType::Int64));
    assert!(!decodable(&descriptor.column(2), &DataType::Int8));
    assert!(!decodable(&descriptor.column(3), &DataType::Int32));
    assert!(decodable(&descriptor.column(4), &DataType::Decimal128(38, 4)));
    assert!(!decodable(&descriptor.column(4), &DataType::FixedSizeBinary(16)));
    assert!(decodable(&descriptor.column(5), &DataType::Timestamp(arrow::datatypes::TimeUnit::Nanosecond, None)));
    assert!(decodable(
        &descriptor.column(5),
        &DataType::Timestamp(arrow::datatypes::TimeUnit::Microsecond, Some("UTC".into()))
    ));
}

/// A chunk of nulls only still has a dictionary page, of no values: read as the crate
/// reads it from every codec (the empty page, copied out of the reused buffer, has no
/// aligned address to be taken as the dictionary).
#[test]
fn a_dictionary_of_no_values_reads_from_every_codec() {
    let columns: [ArrayRef; 3] = [
        Arc::new(arrow::array::Int64Array::from(vec![None; 5])),
        Arc::new(arrow::array::Float64Array::from(vec![None; 5])),
        Arc::new(arrow::array::Int32Array::from(vec![None; 5])),
    ];
    for values in columns {
        let field = arrow::datatypes::Field::new("v", values.data_type().clone(), true);
        let batch = RecordBatch::try_new(Arc::new(arrow::datatypes::Schema::new(vec![field])), vec![values]).unwrap();
        for compression in 0..3 {
            let file = written(&batch, WriterProperties::builder().set_compression(codec(compression)), false, 5);
            let mask = [true, false, true, true, false];
            let read = crate_read(&file, &mask, false);
            let selection = RowSelection::from_bools(&mask);
            let got = decoded_both_ways(&file, &read, &selection, decode_selected::<dyn PageReader>);
            assert_eq!(got.expect("decoded here").to_data(), read.expected.to_data(), "codec {compression}");
        }
    }
}
