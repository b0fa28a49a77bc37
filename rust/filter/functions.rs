//! The Spark SQL functions a filter may call: their names and aliases, how many arguments
//! each takes, and, for pruning, which of them preserve order.
//!
//! | family | functions | prunes through it |
//! |---|---|---|
//! | string | `lower`/`lcase`, `upper`/`ucase`, `trim`/`ltrim`/`rtrim` (and `TRIM(BOTH\|LEADING\|TRAILING chars FROM s)`), `length`/`char_length`/`character_length`/`len`, `substring`/`substr` (and `SUBSTRING(s FROM p FOR n)`), `concat`, `startswith`, `endswith`, `contains`; the operators `ILIKE` and `RLIKE`/`REGEXP` (also `regexp_like`) | `substring(s, 1, n)` and `startswith(s, 'prefix')` (prefix ranges) |
//! | date and time | `date`/`to_date` (one argument: a cast), `year`, `quarter`, `month`, `day`/`dayofmonth`, `hour`, `minute`, `second`, `date_trunc`, `date_add`, `date_sub`, `datediff`, `current_date` (fixed when the filter is bound) | `date`/`to_date`, `year`, `date_trunc` (of an instant in a zone whose offset changes: through the zone's range of offsets), `hour`/`minute`/`second` (containers within one day/hour/minute), `date_add`, `date_sub`, `datediff` |
//! | conditional and null | `coalesce`/`nvl`/`ifnull`, `nullif`, `nvl2`, `if`, `CASE`, `isnull`, `isnotnull` | — |
//! | math | `abs`, `round`, `floor`, `ceil`/`ceiling`, `%`/`mod`, `pmod`, `isnan` | `round`, and `floor`/`ceil` of integers and decimals |
//!
//! Any other name is an error naming it, before any data is read:
//!
//! ```
//! use pqsift::filter::parse_filter;
//!
//! assert!(parse_filter("lower(city) = 'taipei' AND year(ts) = 2026").is_ok());
//! let error = parse_filter("soundex(name) = 'R163'").unwrap_err();
//! assert!(error.to_string().contains("unsupported function \"soundex\""), "{error}");
//! ```

use std::fmt;

use super::java_regex::JavaRegex;

/// The name of [`ScalarFunction::UuidText`] in a file's filter (explain shows it); not in
/// the catalogue, so a user's filter cannot call it.
pub const UUID_TEXT: &str = "uuid_text";

/// A function's canonical name, its aliases and how many arguments it takes.
struct Entry {
    name: &'static str,
    aliases: &'static [&'static str],
    min_args: usize,
    max_args: usize,
}

const fn entry(name: &'static str, aliases: &'static [&'static str], min_args: usize, max_args: usize) -> Entry {
    Entry { name, aliases, min_args, max_args }
}

/// Every function the parser reads (`date`, `to_date`, `isnull`, `isnotnull`, `if`,
/// `nullif`, `nvl2` and `regexp_like` are rewritten while parsing: casts, `IS NULL`,
/// `CASE` and `RLIKE`).
const CATALOGUE: &[Entry] = &[
    entry("abs", &[], 1, 1),
    entry("lower", &["lcase"], 1, 1),
    entry("upper", &["ucase"], 1, 1),
    entry("trim", &[], 1, 1),
    entry("ltrim", &[], 1, 1),
    entry("rtrim", &[], 1, 1),
    entry("length", &["char_length", "character_length", "len"], 1, 1),
    entry("substring", &["substr"], 2, 3),
    entry("concat", &[], 1, usize::MAX),
    entry("startswith", &[], 2, 2),
    entry("endswith", &[], 2, 2),
    entry("contains", &[], 2, 2),
    entry("rlike", &["regexp", "regexp_like"], 2, 2),
    entry("date", &["to_date"], 1, 1),
    entry("year", &[], 1, 1),
    entry("quarter", &[], 1, 1),
    entry("month", &[], 1, 1),
    entry("day", &["dayofmonth"], 1, 1),
    entry("hour", &[], 1, 1),
    entry("minute", &[], 1, 1),
    entry("second", &[], 1, 1),
    entry("date_trunc", &[], 2, 2),
    entry("date_add", &["dateadd"], 2, 2),
    entry("date_sub", &[], 2, 2),
    entry("datediff", &[], 2, 2),
    entry("current_date", &["curdate"], 0, 0),
    entry("coalesce", &["nvl", "ifnull"], 1, usize::MAX),
    entry("nullif", &[], 2, 2),
    entry("nvl2", &[], 3, 3),
    entry("if", &[], 3, 3),
    entry("isnull", &[], 1, 1),
    entry("isnotnull", &[], 1, 1),
    entry("round", &[], 1, 2),
    entry("floor", &[], 1, 1),
    entry("ceil", &["ceiling"], 1, 1),
    entry("mod", &[], 2, 2),
    entry("pmod", &[], 2, 2),
    entry("isnan", &[], 1, 1),
];

/// The canonical name of a function the parser knows (any case, aliases included), with
/// the numbers of arguments it accepts.
pub(crate) fn lookup(name: &str) -> Option<(&'static str, usize, usize)> {
    let lower = name.to_ascii_lowercase();
    CATALOGUE
        .iter()
        .find(|e| e.name == lower || e.aliases.contains(&lower.as_str()))
        .map(|e| (e.name, e.min_args, e.max_args))
}

/// The canonical names, sorted, for error messages.
pub(crate) fn supported_names() -> String {
    let mut names: Vec<&str> = CATALOGUE.iter().map(|e| e.name).collect();
    names.sort_unstable();
    names.join(", ")
}

/// A unit `date_trunc` truncates to (Spark's `TRUNC_TO_*` levels).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TruncLevel {
    /// Microseconds: unchanged.
    Microsecond,
    /// Milliseconds.
    Millisecond,
    /// Seconds.
    Second,
    /// Minutes, on the session's wall clock.
    Minute,
    /// Hours, on the session's wall clock.
    Hour,
    /// Midnight of the day.
    Day,
    /// Midnight of the week's Monday.
    Week,
    /// The first day of the month.
    Month,
    /// The first day of the quarter.
    Quarter,
    /// The first of January.
    Year,
}

impl TruncLevel {
    /// Spark's names for the level (any case), as `date_trunc` reads its first argument.
    ///
    /// ```
    /// use pqsift::filter::functions::TruncLevel;
    /// assert_eq!(TruncLevel::parse("mm"), Some(TruncLevel::Month));
    /// assert_eq!(TruncLevel::parse("fortnight"), None);
    /// ```
    pub fn parse(text: &str) -> Option<Self> {
        Some(match text.to_ascii_uppercase().as_str() {
            "MICROSECOND" => Self::Microsecond,
            "MILLISECOND" => Self::Millisecond,
            "SECOND" => Self::Second,
            "MINUTE" => Self::Minute,
            "HOUR" => Self::Hour,
            "DAY" | "DD" => Self::Day,
            "WEEK" => Self::Week,
            "MON" | "MONTH" | "MM" => Self::Month,
            "QUARTER" => Self::Quarter,
            "YEAR" | "YYYY" | "YY" => Self::Year,
            _ => return None,
        })
    }
}

/// A function bound to argument types, as [`BoundExpr::Function`](super::BoundExpr)
/// carries it. The arguments' types are the ones Spark casts them to (strings for the
/// string functions, DATE for `year`, ...).
#[derive(Debug, Clone)]
pub enum ScalarFunction {
    /// `lower(s)`: Java's `toLowerCase` (full Unicode case mapping, final sigma).
    Lower,
    /// `upper(s)`.
    Upper,
    /// `trim(s)`, `ltrim(s)`, `rtrim(s)`: spaces only, as Spark; with a second argument,
    /// any of its characters.
    Trim {
        /// Remove from the start.
        leading: bool,
        /// Remove from the end.
        trailing: bool,
    },
    /// `length(s)`: characters (code points), not bytes; of a BINARY, its bytes.
    Length,
    /// `substring(s, pos[, len])`: 1-based, a negative `pos` counts from the end, 0 acts
    /// as 1.
    Substring,
    /// `concat(s, ...)`: NULL if any argument is.
    Concat,
    /// `startswith(s, prefix)`.
    StartsWith,
    /// `endswith(s, suffix)`.
    EndsWith,
    /// `contains(s, part)`.
    Contains,
    /// `s RLIKE pattern`: a Java regular expression found anywhere in `s`; compiled once
    /// when the pattern is a constant.
    RLike(Option<JavaRegex>),
    /// `year(d)` of a DATE.
    Year,
    /// `quarter(d)`, 1..=4.
    Quarter,
    /// `month(d)`, 1..=12.
    Month,
    /// `day(d)`, 1..=31.
    Day,
    /// `hour(ts)` on the session's wall clock.
    Hour,
    /// `minute(ts)`.
    Minute,
    /// `second(ts)`.
    Second,
    /// `date_trunc(level, ts)`: a TIMESTAMP truncated on the session's wall clock.
    DateTrunc(TruncLevel),
    /// `date_add(d, n)`.
    DateAdd,
    /// `date_sub(d, n)`.
    DateSub,
    /// `datediff(end, start)`: days from `start` to `end`.
    DateDiff,
    /// `coalesce(a, b, ...)`: the first non-NULL argument; later arguments are evaluated
    /// only for rows still NULL.
    Coalesce,
    /// `round(x, scale)`, HALF_UP.
    Round {
        /// Digits kept after the point (negative: before it).
        scale: i32,
    },
    /// `floor(x)`: BIGINT of a number (an overflow error for one outside BIGINT, NaN
    /// included), DECIMAL(p - s + 1, 0) of a decimal.
    Floor,
    /// `ceil(x)`.
    Ceil,
    /// `a % b`, the sign of `a` (Java's remainder); a zero divisor is an error (ANSI).
    Mod,
    /// `pmod(a, b)`: the remainder made non-negative for a positive divisor.
    Pmod,
    /// `isnan(x)`: FALSE for NULL.
    IsNan,
    /// The canonical text of a 16-byte uuid (see [`super::uuid_text`]): how a table reads an
    /// Iceberg `uuid` column, which Spark reads as text. Not a Spark function: only a
    /// file's filter calls it, on such a column; it keeps order.
    UuidText,
}

impl ScalarFunction {
    /// The function's name in Spark SQL.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Lower => "lower",
            Self::Upper => "upper",
            Self::Trim { leading: true, trailing: true } => "trim",
            Self::Trim { leading: true, .. } => "ltrim",
            Self::Trim { .. } => "rtrim",
            Self::Length => "length",
            Self::Substring => "substring",
            Self::Concat => "concat",
            Self::StartsWith => "startswith",
            Self::EndsWith => "endswith",
            Self::Contains => "contains",
            Self::RLike(_) => "rlike",
            Self::Year => "year",
            Self::Quarter => "quarter",
            Self::Month => "month",
            Self::Day => "day",
            Self::Hour => "hour",
            Self::Minute => "minute",
            Self::Second => "second",
            Self::DateTrunc(_) => "date_trunc",
            Self::DateAdd => "date_add",
            Self::DateSub => "date_sub",
            Self::DateDiff => "datediff",
            Self::Coalesce => "coalesce",
            Self::Round { .. } => "round",
            Self::Floor => "floor",
            Self::Ceil => "ceil",
            Self::Mod => "mod",
            Self::Pmod => "pmod",
            Self::IsNan => "isnan",
            Self::UuidText => UUID_TEXT,
        }
    }

    /// How the function's value moves with argument `argument` when every other argument
    /// is a constant: `Some(true)` never decreases, `Some(false)` never increases, `None`
    /// neither (or unknown). `float_input`: the argument is FLOAT or DOUBLE, on which
    /// `floor` and `ceil` fail for NaN (Spark's greatest value) and values past BIGINT.
    ///
    /// Constant arguments that matter (`substring`'s position, `date_trunc`'s level) are
    /// checked by the caller, which sees them; see [`Self::monotone_with`].
    pub(crate) fn monotone_in(&self, argument: usize, float_input: bool) -> Option<bool> {
        match (self, argument) {
            (Self::Year | Self::DateTrunc(_) | Self::DateAdd | Self::DateSub, 0) => Some(true),
            (Self::DateDiff, 0) => Some(true),
            (Self::DateDiff, 1) => Some(false),
            (Self::Round { .. }, 0) => Some(true),
            (Self::Floor | Self::Ceil, 0) if !float_input => Some(true),
            (Self::Substring, 0) => Some(true),
            (Self::UuidText, 0) => Some(true),
            _ => None,
        }
    }

    /// The period of wall-clock time within which the function of a timestamp keeps
    /// order, in microseconds: `hour` within a day, `minute` within an hour, `second`
    /// within a minute (each starts again at 0 after).
    pub(crate) fn monotone_within(&self) -> Option<i64> {
        match self {
            Self::Hour => Some(86_400_000_000),
            Self::Minute => Some(3_600_000_000),
            Self::Second => Some(60_000_000),
            _ => None,
        }
    }

    /// Whether the constant arguments keep the function monotone in its first: a
    /// `substring` must start at position 1 (a prefix; any other start is not ordered).
    pub(crate) fn monotone_with(&self, constants: &[Option<i64>]) -> bool {
        match self {
            Self::Substring => constants.get(1) == Some(&Some(1)),
            _ => true,
        }
    }
}

impl fmt::Display for TruncLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Microsecond => "MICROSECOND",
            Self::Millisecond => "MILLISECOND",
            Self::Second => "SECOND",
            Self::Minute => "MINUTE",
            Self::Hour => "HOUR",
            Self::Day => "DAY",
            Self::Week => "WEEK",
            Self::Month => "MONTH",
            Self::Quarter => "QUARTER",
            Self::Year => "YEAR",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aliases_resolve_to_canonical_names() {
        assert_eq!(lookup("LCASE"), Some(("lower", 1, 1)));
        assert_eq!(lookup("substr"), Some(("substring", 2, 3)));
        assert_eq!(lookup("nvl"), Some(("coalesce", 1, usize::MAX)));
        assert_eq!(lookup("soundex"), None);
        assert!(supported_names().starts_with("abs, ceil, coalesce"));
    }
}
