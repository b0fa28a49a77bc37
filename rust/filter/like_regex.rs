//! LIKE patterns that need a regular expression, compiled once, when the filter is bound.
//!
//! Arrow's `like` kernel turns a pattern with `_`, or with `%` between literal runs, into a
//! regular expression and compiles it on every call. A predicate evaluated a few pages at
//! a time (see `reading::flat_decode`) calls it hundreds of times a row group, each call
//! compiling the expression again. The expression is built here once, as
//! Arrow builds it (the same translation, anchors and `.` matching a line break), and run
//! on the rows directly. Patterns Arrow runs without one — an equality, a prefix, a
//! suffix, a substring — are left to Arrow (and to the affix kernels before it).
//!
//! ```text
//! url LIKE 'https://m.%/p_%'   →   ^https://m\..*/p.    compiled once
//! url LIKE '%shop%'            →   (none: Arrow's substring search)
//! ```

use arrow::array::{Array, ArrayRef, AsArray, BooleanArray};
use arrow::datatypes::DataType;
use regex::{Regex, RegexBuilder};

/// The regular expression Arrow's `like` would compile for `pattern` (with `\` escapes),
/// compiled; `None` where Arrow runs the pattern without one, or it does not compile (Arrow
/// then raises its own error when the filter runs, as before).
///
/// ```ignore
/// assert_eq!(compile("a_c%").unwrap().as_str(), "^a.c");
/// assert!(compile("abc%").is_none()); // a prefix
/// ```
pub(super) fn compile(pattern: &str) -> Option<Regex> {
    if !needs_regex(pattern) {
        return None;
    }
    RegexBuilder::new(&translate(pattern)).dot_matches_new_line(true).build().ok()
}

/// Whether Arrow runs `pattern` as a regular expression: it has a wildcard or an escape
/// other than one `%` at either end or at both.
fn needs_regex(pattern: &str) -> bool {
    let special = |text: &str| text.bytes().any(|b| matches!(b, b'%' | b'_' | b'\\'));
    // (The order is Arrow's: a lone `%` is a prefix, and never reaches the last slice.)
    let plain = !special(pattern)
        || pattern.ends_with('%') && !special(&pattern[..pattern.len() - 1])
        || pattern.starts_with('%') && !special(&pattern[1..])
        || pattern.starts_with('%') && pattern.ends_with('%') && !special(&pattern[1..pattern.len() - 1]);
    !plain
}

/// Arrow's translation of a LIKE pattern (`arrow-string`'s `regex_like`): `%` is `.*`, `_`
/// is `.`, `\` escapes the next character (a dangling one is a literal `\`), other regex
/// metacharacters are escaped; anchored at both ends, except that a leading or trailing
/// `%` leaves that end open.
fn translate(pattern: &str) -> String {
    let mut result = String::with_capacity(pattern.len() * 2);
    let mut chars = pattern.chars().peekable();
    match chars.peek() {
        Some('%') => {
            chars.next();
        }
        _ => result.push('^'),
    }
    let mut one = [0u8; 4];
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some(next) => result.push_str(&regex::escape(next.encode_utf8(&mut one))),
                None => result.push_str(r"\\"),
            },
            '%' => result.push_str(".*"),
            '_' => result.push('.'),
            c => result.push_str(&regex::escape(c.encode_utf8(&mut one))),
        }
    }
    if result.ends_with(".*") {
        result.truncate(result.len() - 2);
    } else {
        result.push('$');
    }
    result
}

/// `values [NOT] LIKE` the pattern `regex` was compiled from, for string arrays (NULL
/// where the value is); `None` for any other type.
pub(super) fn matches(values: &ArrayRef, regex: &Regex, negated: bool) -> Option<BooleanArray> {
    let test = |text: &str| regex.is_match(text) != negated;
    Some(match values.data_type() {
        DataType::Utf8 => BooleanArray::from_unary(values.as_string::<i32>(), test),
        DataType::LargeUtf8 => BooleanArray::from_unary(values.as_string::<i64>(), test),
        DataType::Utf8View => BooleanArray::from_unary(values.as_string_view(), test),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow::array::{Datum, Scalar, StringArray, StringViewArray};
    use arrow::compute::{like, nlike};
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn patterns_arrow_runs_without_a_regex_are_left_to_it() {
        for pattern in ["abc", "abc%", "%abc", "%abc%", "%", "%%", ""] {
            assert!(compile(pattern).is_none(), "{pattern}");
        }
        assert_eq!(compile("a_c%").unwrap().as_str(), "^a.c");
        assert_eq!(compile("%a%b").unwrap().as_str(), "a.*b$");
        assert_eq!(compile(r"a\%b.").unwrap().as_str(), r"^a%b\.$");
        assert_eq!(compile(r"a_\").unwrap().as_str(), r"^a.\\$");
    }

    proptest! {
        // (A drawn pattern that needs no expression is drawn again.)
        #![proptest_config(ProptestConfig { max_global_rejects: 20_000, ..ProptestConfig::with_cases(2000) })]
        /// Every pattern compiled here matches what Arrow's `like` and `nlike` answer, on
        /// plain strings and views: wildcards, escapes (a dangling one too), regex
        /// metacharacters, line breaks and characters of several bytes.
        #[test]
        fn matches_what_arrow_answers(
            pattern in prop::collection::vec(prop::sample::select(vec!["a", "b", "%", "_", "\\", ".", "*", "é", "\n", "(", "$"]), 0..8),
            rows in prop::collection::vec(prop::option::weighted(0.9, prop::collection::vec(prop::sample::select(vec!["a", "b", ".", "*", "é", "\n", "(", "$", "%", "\\"]), 0..7)), 0..40),
        ) {
            let pattern = pattern.concat();
            let regex = compile(&pattern);
            prop_assume!(regex.is_some());
            let regex = regex.expect("assumed");
            let rows: Vec<Option<String>> = rows.into_iter().map(|r| r.map(|r| r.concat())).collect();
            let plain: ArrayRef = Arc::new(StringArray::from(rows.clone()));
            let views: ArrayRef = Arc::new(StringViewArray::from(rows));
            let scalar = Scalar::new(StringArray::from(vec![pattern.as_str()]));
            for negated in [false, true] {
                let want = match negated {
                    false => like(&plain as &dyn Datum, &scalar).unwrap(),
                    true => nlike(&plain as &dyn Datum, &scalar).unwrap(),
                };
                prop_assert_eq!(&matches(&plain, &regex, negated).unwrap(), &want, "{}", pattern);
                prop_assert_eq!(&matches(&views, &regex, negated).unwrap(), &want, "{}", pattern);
            }
        }
    }
}
