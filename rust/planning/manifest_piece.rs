//! A stripe of an Iceberg snapshot's data manifests as it travels to a Spark task that
//! reads them itself (distributed planning): a table with many manifests is planned by
//! its tasks, not by the driver alone. The driver reads the metadata file and the manifest
//! list and skips manifests on their partition summaries
//! ([`ManifestSelection::DeferAbove`]); each task opens the same snapshot from the same
//! metadata file, reads its manifests (and the snapshot's delete manifests) and keeps its
//! stripe of their live data files ([`ManifestSelection::Stripe`]) — a large manifest is
//! shared by several tasks, each reading every `count`-th file — then prunes and reads
//! those files as any scan does.
//!
//! The bytes are checked on load as a [`TaskPlan`](super::task_plan::TaskPlan)'s are (a
//! tag, the format version, a CRC-32); no storage option travels in them.
//!
//! ```
//! use pqsift::planning::manifest_piece::{ManifestPiece, is_manifest_piece};
//! use pqsift::storage::Storage;
//! use pqsift::table::iceberg::table::ManifestSelection;
//! let piece = ManifestPiece {
//!     metadata_file: std::path::Path::new("/warehouse/t/metadata/v3.metadata.json").into(),
//!     snapshot_id: Some(42),
//!     selection: ManifestSelection::Stripe { manifests: vec!["/warehouse/t/metadata/m0.avro".into()], index: 0, count: 2 },
//! };
//! let bytes = piece.to_bytes().unwrap();
//! assert!(is_manifest_piece(&bytes));
//! assert_eq!(ManifestPiece::from_bytes(&bytes, &Storage::default()).unwrap(), piece);
//! ```

use serde::{Deserialize, Serialize};

use super::task_plan::{WireLocation, seal, unseal};
use crate::error::{PqsiftError, Result};
use crate::storage::{Location, Storage};
use crate::table::iceberg::table::{IcebergTable, ManifestSelection};

/// The tag of a manifest piece's bytes.
const TAG: &[u8; 8] = b"PQSFMANI";

/// What a task reads of an Iceberg snapshot: see the module documentation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManifestPiece {
    /// The metadata file the driver read (the task reads the same).
    pub metadata_file: Location,
    /// The snapshot the driver read.
    pub snapshot_id: Option<i64>,
    /// The task's manifests and stripe ([`ManifestSelection::Stripe`]).
    pub selection: ManifestSelection,
}

#[derive(Serialize, Deserialize)]
struct Wire {
    metadata_file: WireLocation,
    snapshot_id: Option<i64>,
    manifests: Vec<String>,
    index: u32,
    count: u32,
}

/// Whether `bytes` are a manifest piece's (else they may be a table piece's).
pub fn is_manifest_piece(bytes: &[u8]) -> bool {
    bytes.starts_with(TAG)
}

impl ManifestPiece {
    /// The piece's bytes, sealed.
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        let ManifestSelection::Stripe { manifests, index, count } = &self.selection else {
            return Err(PqsiftError::TaskPlan("a manifest piece names a stripe of manifests".into()));
        };
        let wire = Wire {
            metadata_file: WireLocation::of(&self.metadata_file),
            snapshot_id: self.snapshot_id,
            manifests: manifests.clone(),
            index: *index,
            count: *count,
        };
        seal(TAG, &wire, &[])
    }

    /// The piece [`ManifestPiece::to_bytes`] wrote, its store clients built with
    /// `storage`'s options.
    pub fn from_bytes(bytes: &[u8], storage: &Storage) -> Result<Self> {
        let (wire, rest): (Wire, &[u8]) = unseal(TAG, "manifest piece", bytes)?;
        if !rest.is_empty() || wire.index >= wire.count {
            return Err(PqsiftError::TaskPlan(format!(
                "a manifest piece with stripe {} of {} and {} bytes after it",
                wire.index,
                wire.count,
                rest.len()
            )));
        }
        Ok(Self {
            metadata_file: wire.metadata_file.into_location(storage)?,
            snapshot_id: wire.snapshot_id,
            selection: ManifestSelection::Stripe { manifests: wire.manifests, index: wire.index, count: wire.count },
        })
    }
}

impl ManifestPiece {
    /// Per `(positions in the table's deferred manifests, stripe index, stripe count)`,
    /// the bytes of a piece of `table`'s snapshot.
    pub fn stripes(table: &IcebergTable, stripes: &[(Vec<usize>, u32, u32)]) -> Result<Vec<Vec<u8>>> {
        stripes
            .iter()
            .map(|(positions, index, count)| {
                let manifests = positions
                    .iter()
                    .map(|&p| table.deferred.manifests.get(p).map(|m| m.path.clone()))
                    .collect::<Option<Vec<String>>>()
                    .ok_or_else(|| {
                        let deferred = table.deferred.manifests.len();
                        PqsiftError::TaskPlan(format!("a manifest position past the {deferred} deferred"))
                    })?;
                let piece = Self {
                    metadata_file: table.metadata_file.clone(),
                    snapshot_id: table.snapshot_id,
                    selection: ManifestSelection::Stripe { manifests, index: *index, count: *count },
                };
                piece.to_bytes()
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn damaged_or_foreign_bytes_are_refused() {
        let storage = Storage::default();
        let piece = ManifestPiece {
            metadata_file: std::path::Path::new("/t/metadata/v1.metadata.json").into(),
            snapshot_id: None,
            selection: ManifestSelection::Stripe { manifests: vec!["m".into()], index: 2, count: 2 },
        };
        let bytes = piece.to_bytes().unwrap();
        assert!(ManifestPiece::from_bytes(&bytes, &storage).unwrap_err().to_string().contains("stripe 2 of 2"));
        let mut flipped = bytes.clone();
        *flipped.last_mut().unwrap() ^= 1;
        assert!(ManifestPiece::from_bytes(&flipped, &storage).is_err());
        assert!(
            ManifestPiece::from_bytes(b"PQSFPIEC other", &storage).unwrap_err().to_string().contains("manifest piece")
        );
        let all = ManifestPiece { selection: ManifestSelection::All, ..piece };
        assert!(all.to_bytes().is_err());
    }
}
