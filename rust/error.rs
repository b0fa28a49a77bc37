//! Errors of the pqsift core.
//!
//! Every fallible operation returns [`Result`]; nothing in the core panics on bad input.
//! The Python layer maps each variant to a Python exception class (see `python/`), so the
//! message must make sense to a Python user on its own.

use thiserror::Error;

/// The error type of the pqsift core.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum PqsiftError {
    /// A row selection operation was given inconsistent input: mismatched lengths,
    /// out-of-order ranges, counts that overflow. Maps to Python `ValueError`.
    #[error("invalid row selection: {0}")]
    InvalidSelection(String),

    /// A file could not be opened or read. Maps to Python `OSError` (`pqsift.PqsiftIOError`;
    /// `pqsift.PathNotFoundError`, a `FileNotFoundError`, when `not_found`).
    #[error("{path}: {reason}")]
    Io {
        /// The file.
        path: String,
        /// What the operating system said.
        reason: String,
        /// Nothing exists at `path`.
        not_found: bool,
    },

    /// Statistics or a page index could not be interpreted for a column. The caller adds
    /// the file and turns it into [`PqsiftError::Corrupt`] where that is what it means.
    #[error("unreadable statistics: {0}")]
    Statistics(String),

    /// A file is not valid Parquet, or its metadata is inconsistent. Maps to
    /// `pqsift.CorruptFileError`.
    #[error("{path}: corrupt {what}: {reason}")]
    Corrupt {
        /// The file.
        path: String,
        /// What kind of file: `Parquet file`, or `Delta log` for a table's log, checkpoint
        /// or deletion vector.
        what: &'static str,
        /// What is wrong with it.
        reason: String,
        /// The column whose data or metadata is wrong, when one is (as Spark's `select`
        /// names it).
        column: Option<String>,
    },

    /// A file uses a feature pqsift cannot read or output: encryption, column chunks
    /// stored in other files, values too large for Arrow's 32-bit offsets, a type with no
    /// equivalent in the requested output (Spark's types). Maps to
    /// `pqsift.UnsupportedError`.
    #[error("{path}: unsupported: {reason}")]
    Unsupported {
        /// The file.
        path: String,
        /// The feature, and why it cannot be read.
        reason: String,
        /// The column that uses it, when one does (as Spark's `select` names it).
        column: Option<String>,
    },

    /// A filter expression could not be parsed, bound to a schema or evaluated: a syntax
    /// error, an unsupported construct, an unknown or ambiguous column, incomparable types,
    /// or a runtime error Spark's ANSI mode raises (overflow, division by zero, a string that
    /// does not cast). The message names the offending column or token. Maps to Python
    /// `pqsift.FilterError` (a `ValueError`).
    #[error("{}{reason}", prefixed(path))]
    Filter {
        /// What is wrong, naming the column or token.
        reason: String,
        /// The column it is about, as the filter names it, when there is one.
        column: Option<String>,
        /// The file being read, when the filter failed on one file's data or schema.
        path: Option<String>,
    },

    /// A table (a Hive-partitioned directory or a Delta table) cannot be read as one: its
    /// partition directories disagree, its Delta log is incomplete or inconsistent, a
    /// requested version does not exist. The message names the table. Maps to
    /// `pqsift.TableError`.
    #[error("{table}: {reason}")]
    Table {
        /// The table's root directory or URL.
        table: String,
        /// What is wrong, in words.
        reason: String,
    },

    /// An object store request failed: the object does not exist, access was denied, the
    /// store could not be reached after retries, or the URL or storage options are invalid.
    /// The message names the URL; option values that could be credentials never appear in
    /// it. Maps to `pqsift.StorageError` (`pqsift.ObjectNotFoundError` when `not_found`).
    #[error("{url}: {reason}")]
    Storage {
        /// The object's (or prefix's) URL.
        url: String,
        /// What went wrong.
        reason: String,
        /// The object does not exist.
        not_found: bool,
    },

    /// The files of one scan have columns of types it cannot read into one schema: a
    /// column narrower or of another kind than the scan schema's (Spark's default), or of
    /// different types when merging schemas. The message names both files, the column and
    /// both types. Maps to `pqsift.SchemaMismatchError`.
    #[error("{reason}")]
    SchemaMismatch {
        /// The column and the types that disagree, in words (naming the files).
        reason: String,
        /// The column.
        column: String,
        /// The file whose column does not fit, when known.
        path: Option<String>,
    },

    /// A task plan (a scan's plan for some of its files, made on a Spark driver and read
    /// by a task: see `planning::task_plan`) cannot be read: damaged in transit, written by
    /// another pqsift version, or inconsistent with its own footers. Maps to
    /// `pqsift.TaskPlanError` (a `ValueError`).
    #[error("invalid task plan: {0}")]
    TaskPlan(String),

    /// An Arrow compute kernel failed while assembling results (inconsistent data). Maps to
    /// `pqsift.PqsiftError`.
    #[error("arrow: {0}")]
    Compute(String),

    /// pqsift itself failed: code that must not panic did (caught where Python calls in,
    /// so that it is an exception an `except Exception` sees, not a `PanicException`). A
    /// bug, whatever the input. Maps to `pqsift.PqsiftError`.
    #[error("internal error (a bug in pqsift, please report it): {0}")]
    Internal(String),

    /// The caller asked to stop (see the `interrupt` module): Ctrl-C in Python, which raises
    /// its `KeyboardInterrupt`.
    #[error("interrupted")]
    Interrupted,

    /// A read stopped once it had read more bytes than its `max_bytes_read` option allows
    /// (checked as batches come out, and between the waves of a top-k's first pass). Maps
    /// to `pqsift.ReadBudgetError`.
    #[error("{0}")]
    ReadBudget(String),
}

impl From<arrow::error::ArrowError> for PqsiftError {
    fn from(error: arrow::error::ArrowError) -> Self {
        Self::Compute(error.to_string())
    }
}

/// What an error is about, field by field (the Python exceptions' attributes): each `None`
/// where it does not apply.
///
/// ```
/// use pqsift::error::PqsiftError;
/// let error = PqsiftError::Table { table: "/t".into(), reason: "no _delta_log".into() };
/// let fields = error.fields();
/// assert_eq!((fields.table, fields.reason, fields.path), (Some("/t"), "no _delta_log", None));
/// ```
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct ErrorFields<'a> {
    /// The local file (or a store's object, for errors about a file's content).
    pub path: Option<&'a str>,
    /// The object store URL a request was for.
    pub url: Option<&'a str>,
    /// The table's root.
    pub table: Option<&'a str>,
    /// The column, as the filter or the schema names it.
    pub column: Option<&'a str>,
    /// What is wrong, without the subject the message starts with.
    pub reason: &'a str,
}

impl PqsiftError {
    /// The fields of this error (see [`ErrorFields`]).
    pub fn fields(&self) -> ErrorFields<'_> {
        let reason = match self {
            Self::InvalidSelection(reason) | Self::Statistics(reason) | Self::Compute(reason) => reason,
            Self::TaskPlan(reason) | Self::ReadBudget(reason) => reason,
            Self::Internal(reason) => reason,
            Self::Io { reason, .. } | Self::Corrupt { reason, .. } | Self::Unsupported { reason, .. } => reason,
            Self::Filter { reason, .. } | Self::Table { reason, .. } | Self::Storage { reason, .. } => reason,
            Self::SchemaMismatch { reason, .. } => reason,
            Self::Interrupted => "interrupted",
        };
        let mut fields = ErrorFields { reason, ..Default::default() };
        match self {
            Self::Io { path, .. } => fields.path = Some(path),
            Self::Corrupt { path, column, .. } | Self::Unsupported { path, column, .. } => {
                (fields.path, fields.column) = (Some(path.as_str()), column.as_deref())
            }
            Self::Filter { column, path, .. } => (fields.column, fields.path) = (column.as_deref(), path.as_deref()),
            Self::SchemaMismatch { column, path, .. } => {
                (fields.column, fields.path) = (Some(column.as_str()), path.as_deref())
            }
            Self::Table { table, .. } => fields.table = Some(table),
            Self::Storage { url, .. } => fields.url = Some(url),
            _ => {}
        }
        fields
    }
}

/// `path` and a colon before a message, when there is a path.
fn prefixed(path: &Option<String>) -> String {
    path.as_ref().map(|path| format!("{path}: ")).unwrap_or_default()
}

/// `Result` with [`PqsiftError`].
pub type Result<T, E = PqsiftError> = std::result::Result<T, E>;

/// The most characters of a whole message: one quoting more than this is cut (see
/// [`bounded_message`]).
pub const MAX_MESSAGE_CHARS: usize = 4096;

/// `message` cut to about [`MAX_MESSAGE_CHARS`], as [`quoted`] cuts a value: the last line
/// of defence for messages that quote more than one value, or a value not yet quoted.
///
/// ```
/// let message = pqsift::error::bounded_message(format!("cannot parse {}", "x".repeat(1 << 20)));
/// assert!(message.len() < 4200 && message.starts_with("cannot parse xx"));
/// ```
pub fn bounded_message(message: String) -> String {
    if message.len() <= MAX_MESSAGE_CHARS {
        return message;
    }
    cut(&message, MAX_MESSAGE_CHARS * 3 / 4, MAX_MESSAGE_CHARS / 4)
}

/// `text` (longer than `head + tail` bytes) as its first `head` and last `tail` bytes
/// (moved to character boundaries) around the count of bytes left out.
fn cut(text: &str, head: usize, tail: usize) -> String {
    let head_end = floor_char_boundary(text, head);
    let tail_start = ceil_char_boundary(text, text.len() - tail);
    format!("{}…[{} bytes left out]…{}", &text[..head_end], tail_start - head_end, &text[tail_start..])
}

/// The text of a caught panic.
pub(crate) fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "unknown panic".to_string())
}

/// `work()` on the file at `path`, a panic inside it returned as a [`PqsiftError::Corrupt`]
/// naming the file and `context`: the parquet crate asserts and unwraps on metadata and
/// pages it does not expect, and a malformed file must fail as its own error, not as an
/// internal one (or take the process down).
pub(crate) fn panics_as_corrupt<T>(
    path: &(impl Subject + ?Sized),
    context: impl std::fmt::Display,
    work: impl FnOnce() -> Result<T>,
) -> Result<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(work)).unwrap_or_else(|panic| {
        Err(PqsiftError::corrupt(path, format!("{context} failed: {}", panic_message(panic.as_ref()))))
    })
}

/// The most characters a message quotes of one value: a path, a URL, a filter, a token.
pub const MAX_QUOTED_CHARS: usize = 512;

/// `text` as a message quotes it: whole when at most [`MAX_QUOTED_CHARS`] characters,
/// else its start and its end around the count of bytes left out. Values come from files
/// and users (a 200 MB `add.path` in a Delta log, a 1 MB filter): a message stays short
/// whatever they hold.
///
/// ```
/// use pqsift::error::quoted;
/// assert_eq!(quoted("/t/part-0.parquet"), "/t/part-0.parquet");
/// let long = format!("/t/{}/part-0.parquet", "x".repeat(100_000));
/// let short = quoted(&long);
/// assert!(short.len() < 600 && short.starts_with("/t/xx") && short.ends_with("x/part-0.parquet"));
/// assert!(short.contains(&format!("[{} bytes left out]", long.len() - 341 - 170)), "{short}");
/// ```
pub fn quoted(text: &str) -> std::borrow::Cow<'_, str> {
    if text.len() <= MAX_QUOTED_CHARS {
        return text.into();
    }
    // The start tells which value it is, the end a path's file name.
    cut(text, MAX_QUOTED_CHARS * 2 / 3, MAX_QUOTED_CHARS / 3).into()
}

fn floor_char_boundary(text: &str, mut index: usize) -> usize {
    while !text.is_char_boundary(index) {
        index -= 1;
    }
    index
}

fn ceil_char_boundary(text: &str, mut index: usize) -> usize {
    while !text.is_char_boundary(index) {
        index += 1;
    }
    index
}

/// What an error is about: a path, a location or a name, shown as text (see [`quoted`]).
pub trait Subject {
    /// The subject as it appears in messages.
    fn subject(&self) -> String;
}

impl Subject for std::path::Path {
    fn subject(&self) -> String {
        quoted(&self.display().to_string()).into_owned()
    }
}

impl Subject for std::path::PathBuf {
    fn subject(&self) -> String {
        self.as_path().subject()
    }
}

impl Subject for str {
    fn subject(&self) -> String {
        quoted(self).into_owned()
    }
}

impl Subject for String {
    fn subject(&self) -> String {
        self.as_str().subject()
    }
}

impl PqsiftError {
    /// Shorthand for [`PqsiftError::InvalidSelection`].
    pub(crate) fn selection(message: impl Into<String>) -> Self {
        Self::InvalidSelection(message.into())
    }

    /// A read that has read `bytes_read` bytes, more than its `max_bytes_read` of `budget`.
    pub(crate) fn read_budget(bytes_read: u64, budget: u64) -> Self {
        Self::ReadBudget(format!(
            "the read stopped after {bytes_read} bytes read, more than its max_bytes_read of {budget}"
        ))
    }

    /// An I/O error on `path`.
    pub(crate) fn io(path: &(impl Subject + ?Sized), error: impl std::fmt::Display) -> Self {
        Self::Io { path: path.subject(), reason: error.to_string(), not_found: false }
    }

    /// The operating system's `error` on `path`, a [`PqsiftError::Io`] that knows whether
    /// nothing was there.
    pub(crate) fn os(path: &(impl Subject + ?Sized), error: &std::io::Error) -> Self {
        Self::Io {
            path: path.subject(),
            reason: error.to_string(),
            not_found: error.kind() == std::io::ErrorKind::NotFound,
        }
    }

    /// A corrupt-file error on `path`.
    pub(crate) fn corrupt(path: &(impl Subject + ?Sized), error: impl std::fmt::Display) -> Self {
        Self::Corrupt { path: path.subject(), what: "Parquet file", reason: error.to_string(), column: None }
    }

    /// A corrupt-file error on `path`, a file of a Delta table's log (a commit, a
    /// checkpoint's actions, a deletion vector).
    pub(crate) fn corrupt_delta(path: &(impl Subject + ?Sized), error: impl std::fmt::Display) -> Self {
        Self::Corrupt { path: path.subject(), what: "Delta log", reason: error.to_string(), column: None }
    }

    /// An unsupported-feature error on `path`.
    pub(crate) fn unsupported(path: &(impl Subject + ?Sized), reason: impl std::fmt::Display) -> Self {
        Self::Unsupported { path: path.subject(), reason: reason.to_string(), column: None }
    }

    /// This error as about `column` (as Spark's `select` names it: see
    /// `filter::ColumnPath::name`): a corrupt or unsupported column, when the error names
    /// no column yet. Other errors are returned as they are.
    ///
    /// ```
    /// use pqsift::error::PqsiftError;
    /// let error = PqsiftError::Corrupt { path: "f.parquet".into(), what: "Parquet file", reason: "bad page".into(), column: None };
    /// assert_eq!(error.about_column("`a.b`").fields().column, Some("`a.b`"));
    /// ```
    pub fn about_column(self, column: impl Into<String>) -> Self {
        match self {
            Self::Corrupt { path, what, reason, column: None } => {
                Self::Corrupt { path, what, reason, column: Some(column.into()) }
            }
            Self::Unsupported { path, reason, column: None } => {
                Self::Unsupported { path, reason, column: Some(column.into()) }
            }
            other => other,
        }
    }

    /// This error as met while working on `path`: statistics and Arrow compute errors
    /// come from inconsistent data in that file, so they become [`PqsiftError::Corrupt`]
    /// naming it (and `context`); every other error is already precise.
    pub(crate) fn in_file(self, path: &(impl Subject + ?Sized), context: impl std::fmt::Display) -> Self {
        match self {
            Self::Statistics(reason) | Self::Compute(reason) => Self::corrupt(path, format!("{context}: {reason}")),
            other => other,
        }
    }

    /// A table-level error on the table at `table`.
    pub(crate) fn table(table: &(impl Subject + ?Sized), reason: impl std::fmt::Display) -> Self {
        Self::Table { table: table.subject(), reason: reason.to_string() }
    }

    /// Shorthand for [`PqsiftError::Filter`], the message bounded: filters echo the text
    /// they could not use.
    pub(crate) fn filter(message: impl Into<String>) -> Self {
        Self::Filter { reason: bounded_message(message.into()), column: None, path: None }
    }

    /// [`PqsiftError::filter`] about `column` (as the filter names it).
    pub(crate) fn filter_on(column: &str, message: impl Into<String>) -> Self {
        Self::Filter { reason: bounded_message(message.into()), column: Some(quoted(column).into_owned()), path: None }
    }

    /// A [`PqsiftError::SchemaMismatch`] of `column`.
    pub(crate) fn schema_mismatch(column: &str, reason: impl Into<String>) -> Self {
        Self::SchemaMismatch { reason: bounded_message(reason.into()), column: quoted(column).into_owned(), path: None }
    }

    /// A [`PqsiftError::SchemaMismatch`] of `column` in the file at `path`, which `reason`
    /// already names.
    pub(crate) fn schema_mismatch_in(path: &(impl Subject + ?Sized), column: &str, reason: impl Into<String>) -> Self {
        Self::SchemaMismatch {
            reason: bounded_message(reason.into()),
            column: quoted(column).into_owned(),
            path: Some(path.subject()),
        }
    }

    /// This error as met in the file at `path`: a filter or schema error that names no file
    /// yet now names it; any other error is returned as it is (it names its file already).
    pub(crate) fn in_file_named(self, path: &(impl Subject + ?Sized)) -> Self {
        match self {
            Self::Filter { reason, column, path: None } => Self::Filter { reason, column, path: Some(path.subject()) },
            Self::SchemaMismatch { reason, column, path: None } => Self::SchemaMismatch {
                reason: format!("{}: {reason}", path.subject()),
                column,
                path: Some(path.subject()),
            },
            other => other,
        }
    }

    /// A panic caught where Python calls in, as [`PqsiftError::Internal`].
    pub fn from_panic(panic: &(dyn std::any::Any + Send)) -> Self {
        Self::Internal(bounded_message(panic_message(panic)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_in_work_on_a_file_is_that_file_corrupt() {
        let path = std::path::Path::new("/data/x.parquet");
        let failed = panics_as_corrupt(path, "planning", || -> Result<()> { panic!("index out of bounds") });
        let message = failed.unwrap_err().to_string();
        assert!(
            message.contains("/data/x.parquet") && message.contains("planning failed: index out of bounds"),
            "{message}"
        );
        assert_eq!(panics_as_corrupt(path, "planning", || Ok(7)).unwrap(), 7);
    }
}
