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
}

/// `Result` with [`PqsiftError`].
pub type Result<T, E = PqsiftError> = std::result::Result<T, E>;

impl PqsiftError {
    /// Shorthand for [`PqsiftError::InvalidSelection`].
    pub(crate) fn selection(message: impl Into<String>) -> Self {
        Self::InvalidSelection(message.into())
    }
}
