//! A LIKE pattern that Arrow runs as a regular expression — one with `_`, or with `%`
//! between literal runs — searched first for its longest literal run.
//!
//! A row can only match where that run occurs, and finding it is one `memmem` pass (Arrow's
//! `contains`), several times faster than the regular expression. The expression then runs
//! on the rows that hold the run only, and the rest are false (NULL where the value is).
//! Where most rows hold the run (most of the first thousand, or of all), the expression
//! runs on every row, as before.
//!
//! ```text
//! url LIKE '%utm_campaign=21%'     runs: "utm", "campaign=21"
//!   contains(url, 'campaign=21')   → the rows that hold the run
//!   the pattern on those rows only
//! ```

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, BooleanArray, BooleanBufferBuilder, Datum, LargeStringArray, Scalar, StringArray};
use arrow::compute::kernels::comparison::contains;
use arrow::compute::{filter, like, prep_null_mask_filter};
use arrow::datatypes::DataType;
use arrow::error::ArrowError;
use regex::Regex;

/// Runs of fewer bytes are not searched for: too many rows hold them.
const MIN_RUN: usize = 3;

/// The rows first searched, to tell a run most rows hold.
const SAMPLE_ROWS: usize = 1024;

/// The pattern (with `\` escapes) searched for first: its longest literal run, where the
/// pattern needs a regular expression (it has `_`, or more than one literal run). `None`
/// otherwise, or for a run shorter than [`MIN_RUN`] bytes, or a dangling escape.
pub(super) fn longest_literal(pattern: &str) -> Option<String> {
    let mut runs = vec![String::new()];
    let mut one_character = false;
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => runs.last_mut().expect("a run").push(chars.next()?),
            '%' | '_' => {
                one_character |= c == '_';
                runs.push(String::new());
            }
            c => runs.last_mut().expect("a run").push(c),
        }
    }
    runs.retain(|run| !run.is_empty());
    if !one_character && runs.len() < 2 {
        return None;
    }
    runs.into_iter().max_by_key(String::len).filter(|run| run.len() >= MIN_RUN)
}

/// `values LIKE pattern` for strings, the rows without the pattern's longest literal run
/// (see [`longest_literal`]) left out of the regular expression. `None` where the pattern
/// has no such run, or the values are not strings.
pub(super) fn like_prefiltered(
    values: &ArrayRef,
    pattern: &str,
    regex: Option<&Regex>,
) -> Result<Option<BooleanArray>, ArrowError> {
    let Some(run) = longest_literal(pattern) else { return Ok(None) };
    let constant = |text: &str| -> Option<Scalar<ArrayRef>> {
        let array: ArrayRef = match values.data_type() {
            DataType::Utf8 => Arc::new(StringArray::from(vec![text])),
            DataType::LargeUtf8 => Arc::new(LargeStringArray::from(vec![text])),
            DataType::Utf8View => Arc::new(arrow::array::StringViewArray::from(vec![text])),
            _ => return None,
        };
        Some(Scalar::new(array))
    };
    let (Some(run), Some(pattern)) = (constant(&run), constant(pattern)) else { return Ok(None) };
    // The pattern's expression compiled once (see `like_regex`), else Arrow's kernel.
    let like = |values: &ArrayRef| match regex.and_then(|regex| super::like_regex::matches(values, regex, false)) {
        Some(matched) => Ok(matched),
        None => like(values as &dyn Datum, &pattern),
    };
    let rows = values.len();
    // Most rows hold the run (judged on the first few): the expression on every row costs
    // no more than the search and then the expression.
    let sample = values.slice(0, rows.min(SAMPLE_ROWS));
    if contains(&sample as &dyn Datum, &run)?.true_count() * 2 > sample.len() {
        return Ok(Some(like(values)?));
    }
    let candidates = contains(values as &dyn Datum, &run)?;
    // NULL rows are no candidates (`prep_null_mask_filter` expects nulls).
    let candidates = match candidates.null_count() {
        0 => candidates,
        _ => prep_null_mask_filter(&candidates),
    };
    if candidates.true_count() * 2 > rows {
        return Ok(Some(like(values)?));
    }
    let matched = like(&filter(values.as_ref(), &candidates)?)?;
    let mut bits = BooleanBufferBuilder::new(rows);
    bits.append_n(rows, false);
    for (candidate, row) in candidates.values().set_indices().enumerate() {
        if matched.value(candidate) {
            bits.set_bit(row, true);
        }
    }
    Ok(Some(BooleanArray::new(bits.finish(), values.logical_nulls())))
}

#[cfg(test)]
mod tests {
    use arrow::array::StringViewArray;
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn the_longest_run_of_patterns_that_need_an_expression() {
        assert_eq!(longest_literal("%utm_campaign=21%").as_deref(), Some("campaign=21"));
        assert_eq!(longest_literal("abc%defgh").as_deref(), Some("defgh"));
        assert_eq!(longest_literal("%a\\_bcd_e%").as_deref(), Some("a_bcd"));
        // Arrow's own fast paths: one run, `%` only at the ends.
        for simple in ["abc", "abc%", "%abc", "%abc%", "%a\\%bc%"] {
            assert_eq!(longest_literal(simple), None, "{simple}");
        }
        // Runs too short, and a dangling escape.
        assert_eq!(longest_literal("a_b%cd"), None);
        assert_eq!(longest_literal("abc_\\"), None);
    }

    #[test]
    fn rows_without_the_run_are_false_and_null_rows_null() {
        let values: ArrayRef = Arc::new(StringArray::from(vec![
            Some("https://a/?utm_campaign=21"),
            Some("https://a/?utm-campaign=21"),
            Some("https://a/?utm_campaign=3"),
            None,
            Some("utmXcampaign=21x"),
        ]));
        let pattern = "%utm_campaign=21%";
        for regex in [None, crate::filter::like_regex::compile(pattern)] {
            let got = like_prefiltered(&values, pattern, regex.as_ref()).unwrap().unwrap();
            assert_eq!(got.iter().collect::<Vec<_>>(), [Some(true), Some(true), Some(false), None, Some(true)]);
        }
    }

    fn text() -> impl Strategy<Value = String> {
        proptest::string::string_regex("[abc_%é]{0,12}").unwrap()
    }

    proptest! {
        /// The prefiltered LIKE answers as Arrow's LIKE on every row, for each string type.
        #[test]
        fn prefiltered_like_answers_as_arrow(
            rows in proptest::collection::vec(proptest::option::weighted(0.9, text()), 0..60),
            pattern in proptest::string::string_regex("[abc_%\\\\é]{0,10}").unwrap(),
        ) {
            let arrays: Vec<ArrayRef> = vec![
                Arc::new(StringArray::from(rows.clone())),
                Arc::new(LargeStringArray::from(rows.clone())),
                Arc::new(StringViewArray::from(rows.clone())),
            ];
            // With Arrow's kernel on the candidates, and with the expression compiled once.
            let regex = crate::filter::like_regex::compile(&pattern);
            for values in &arrays {
                for compiled in [None, regex.as_ref()] {
                    let Ok(Some(got)) = like_prefiltered(values, &pattern, compiled) else { continue };
                    let pattern = Scalar::new(Arc::new(StringArray::from(vec![pattern.as_str()])) as ArrayRef);
                    let pattern = Scalar::new(arrow::compute::cast(&pattern.into_inner(), values.data_type()).unwrap());
                    let expected = like(values as &dyn Datum, &pattern).unwrap();
                    prop_assert_eq!(&got, &expected, "{:?} {}", rows, values.data_type());
                }
            }
        }
    }
}
