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
    /// A filter expression could not be parsed, bound to a schema or evaluated: a syntax
    /// error, an unsupported construct, an unknown or ambiguous column, incomparable types,
    /// or a runtime error Spark's ANSI mode raises (overflow, division by zero, a string that
    /// does not cast). The message names the offending column or token. Maps to Python
    /// `pqsift.FilterError` (a `ValueError`).
    #[error("{0}")]
    Filter(String),
}

/// `Result` with [`PqsiftError`].
pub type Result<T, E = PqsiftError> = std::result::Result<T, E>;

impl PqsiftError {
    /// Shorthand for [`PqsiftError::InvalidSelection`].
    pub(crate) fn selection(message: impl Into<String>) -> Self {
        Self::InvalidSelection(message.into())
    }

    /// Shorthand for [`PqsiftError::Filter`].
    pub(crate) fn filter(message: impl Into<String>) -> Self {
        Self::Filter(message.into())
    }
}
