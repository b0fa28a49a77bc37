//! Which tables this reader can read: the `protocol` action's reader version and, at reader
//! version 3, every one of its `readerFeatures` must be understood. Anything else is
//! [`PqsiftError::Unsupported`] naming the table and the feature — never wrong rows.
//!
//! Supported: reader version 1; 2 (column mapping); 3 with the features `columnMapping`,
//! `deletionVectors`, `timestampNtz`, `v2Checkpoint`, `vacuumProtocolCheck`, `typeWidening`
//! and `typeWidening-preview` (flagged in [`ReaderFeatures::type_widening`]: the reader must
//! cast narrower file types to the schema's). Writer-only features listed as reader features
//! by mistake are ignored (they do not change what a reader sees).
//!
//! ```
//! use pqsift::table::delta::actions::Protocol;
//! use pqsift::table::delta::protocol::check_protocol;
//! let p = Protocol { min_reader_version: 3, min_writer_version: 7,
//!     reader_features: Some(vec!["deletionVectors".into()]), writer_features: None };
//! assert!(check_protocol("/t", &p).unwrap().deletion_vectors);
//! let p = Protocol { reader_features: Some(vec!["variantType".into()]), ..p };
//! let error = check_protocol("/t", &p).unwrap_err().to_string();
//! assert!(error.contains("variantType") && error.contains("/t"), "{error}");
//! ```

use super::actions::Protocol;
use crate::error::{PqsiftError, Result};

/// The highest reader version understood.
pub const MAX_READER_VERSION: i32 = 3;

/// Reader features this reader implements.
pub const SUPPORTED_READER_FEATURES: &[&str] = &[
    "columnMapping",
    "deletionVectors",
    "timestampNtz",
    "timestampWithoutTimezone",
    "v2Checkpoint",
    "vacuumProtocolCheck",
    "typeWidening",
    "typeWidening-preview",
];

/// Writer-only features: harmless where a writer listed them as reader features too.
const WRITER_ONLY_FEATURES: &[&str] = &[
    "appendOnly",
    "invariants",
    "checkConstraints",
    "changeDataFeed",
    "generatedColumns",
    "identityColumns",
    "inCommitTimestamp",
    "rowTracking",
    "domainMetadata",
    "icebergCompatV1",
    "icebergCompatV2",
    "icebergCompatV3",
    "clustering",
    "materializePartitionColumns",
    "allowColumnDefaults",
    "checkpointProtection",
];

/// What the table's protocol asks of a reader, once checked.
///
/// ```
/// use pqsift::table::delta::{actions::Protocol, protocol::check_protocol};
/// let p = Protocol { min_reader_version: 2, min_writer_version: 5, reader_features: None, writer_features: None };
/// let features = check_protocol("/t", &p).unwrap();
/// assert!(features.column_mapping && !features.deletion_vectors);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReaderFeatures {
    /// Column mapping may be on (its mode is in the metadata's configuration).
    pub column_mapping: bool,
    /// Files may carry deletion vectors.
    pub deletion_vectors: bool,
    /// `timestamp_ntz` columns may exist.
    pub timestamp_ntz: bool,
    /// Checkpoints may be v2 (UUID-named, with sidecars).
    pub v2_checkpoint: bool,
    /// Columns may have been widened: older files hold narrower types than the schema.
    pub type_widening: bool,
}

/// Checks `protocol` of the table at `table`: an error names the table and what is missing.
pub fn check_protocol(table: &str, protocol: &Protocol) -> Result<ReaderFeatures> {
    let version = protocol.min_reader_version;
    if !(1..=MAX_READER_VERSION).contains(&version) {
        return Err(PqsiftError::unsupported(
            table,
            format!("Delta reader version {version} (this reader supports versions 1 to {MAX_READER_VERSION})"),
        ));
    }
    let mut features = ReaderFeatures { column_mapping: version >= 2, ..ReaderFeatures::default() };
    if version < 3 {
        return Ok(features);
    }
    for feature in protocol.reader_features.iter().flatten() {
        match feature.as_str() {
            "columnMapping" => features.column_mapping = true,
            "deletionVectors" => features.deletion_vectors = true,
            "timestampNtz" | "timestampWithoutTimezone" => features.timestamp_ntz = true,
            "v2Checkpoint" => features.v2_checkpoint = true,
            "typeWidening" | "typeWidening-preview" => features.type_widening = true,
            "vacuumProtocolCheck" => {}
            other if WRITER_ONLY_FEATURES.contains(&other) => {}
            other => {
                return Err(PqsiftError::unsupported(
                    table,
                    format!("Delta reader feature {other:?} is not supported"),
                ));
            }
        }
    }
    Ok(features)
}
