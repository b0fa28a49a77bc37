//! What a scan keeps of an Iceberg snapshot besides its files: per data file its manifest
//! entry (record count, column statistics, sequence number), for planning, and what
//! reading the metadata cost, for metrics and explain.

use std::sync::Arc;

use roaring::RoaringTreemap;

use super::manifest::DataFile;
use super::metadata::PartitionSpec;
use crate::error::{PqsiftError, Result};
use crate::selection::RowSelection;
use crate::storage::Location;
use crate::table::deleted_rows::kept_by_row_group;

/// What reading an Iceberg table's metadata did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IcebergReadMetrics {
    /// Manifests the snapshot's manifest list names.
    pub manifests_total: u64,
    /// Of those, manifests read.
    pub manifests_read: u64,
    /// Of the manifests read, those an earlier scan in the process had decoded (see
    /// [`super::manifest_cache`]): no request, no decoding.
    pub manifests_cached: u64,
    /// Data manifests not read: their partition summaries ruled the filter out.
    pub manifests_pruned: u64,
    /// Live data files in the manifests read.
    pub data_files: u64,
    /// Live delete files in the manifests read.
    pub delete_files: u64,
}

/// Which of a snapshot's data manifests a scan reads (its delete manifests are always
/// read). Spark tasks read the manifests of a table with many (distributed planning, as
/// Iceberg's own Spark reader can): the driver reads the manifest list alone, and each
/// task a stripe of the data files of some manifests.
///
/// ```
/// use pqsift::table::iceberg::table::ManifestSelection;
/// let stripe = ManifestSelection::Stripe { manifests: vec!["m0.avro".into()], index: 1, count: 3 };
/// // Of the manifest's live data files, in order, the task keeps the 2nd, 5th, 8th...
/// assert!(!stripe.keeps(0) && stripe.keeps(1) && stripe.keeps(4));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum ManifestSelection {
    /// Every data manifest the filter does not rule out.
    #[default]
    All,
    /// None when more than this many are left after the partition summaries: the table's
    /// [`IcebergTable::deferred`] lists them for tasks to read.
    DeferAbove(usize),
    /// The data files of the data manifests at these recorded paths, taken in order, whose
    /// index is `index` modulo `count`.
    Stripe {
        /// Recorded paths of data manifests.
        manifests: Vec<String>,
        /// Which stripe.
        index: u32,
        /// How many stripes.
        count: u32,
    },
}

impl ManifestSelection {
    /// Whether a stripe keeps the data file at `position` of its manifests' live files.
    pub fn keeps(&self, position: usize) -> bool {
        match self {
            Self::Stripe { index, count, .. } => position % (*count).max(1) as usize == *index as usize,
            _ => true,
        }
    }
}

/// The data manifests left for tasks to read ([`ManifestSelection::DeferAbove`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeferredManifests {
    /// The manifests, in the manifest list's order.
    pub manifests: Vec<DeferredManifest>,
    /// The mean size in bytes of the data files of the first (read to learn it; `None`:
    /// it lists none): what sizes the tasks, as the manifest list counts files, not bytes.
    pub mean_file_bytes: Option<u64>,
}

/// A data manifest left for tasks to read ([`ManifestSelection::DeferAbove`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeferredManifest {
    /// Its location as recorded.
    pub path: String,
    /// Its live files, as the manifest list says (`None`: not said).
    pub live_files: Option<u64>,
}

/// What a scan keeps of an Iceberg snapshot besides its files.
#[derive(Debug, Clone)]
pub struct IcebergTable {
    /// The table's root directory.
    pub table_root: Location,
    /// The metadata file read.
    pub metadata_file: Location,
    /// The table's format version.
    pub format_version: u8,
    /// The snapshot read (`None`: the table has none yet).
    pub snapshot_id: Option<i64>,
    /// The table's partition specs (a file's entry names the one it was written with).
    pub specs: Arc<[PartitionSpec]>,
    /// Per file of the table (same order): its manifest entry.
    pub files: Vec<DataFile>,
    /// Per file: the positions its position deletes and deletion vectors delete.
    pub deleted_positions: Vec<Option<Arc<RoaringTreemap>>>,
    /// What reading the metadata did.
    pub read: IcebergReadMetrics,
    /// Data manifests left unread for tasks to read ([`ManifestSelection::DeferAbove`]):
    /// the table then lists no file.
    pub deferred: DeferredManifests,
}

impl IcebergTable {
    /// What reading the metadata did, as `(name, value)` pairs for a scan's metrics.
    pub fn metrics(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("iceberg_format_version", u64::from(self.format_version)),
            ("iceberg_manifests_total", self.read.manifests_total),
            ("iceberg_manifests_read", self.read.manifests_read),
            ("iceberg_manifests_cached", self.read.manifests_cached),
            ("iceberg_manifests_pruned", self.read.manifests_pruned),
            ("iceberg_data_files", self.read.data_files),
            ("iceberg_delete_files", self.read.delete_files),
            ("iceberg_manifests_deferred", self.deferred.manifests.len() as u64),
        ]
    }

    /// The metadata read, in words, for a scan's explain.
    pub fn explain(&self) -> String {
        let snapshot = self.snapshot_id.map_or_else(|| "no snapshot".to_string(), |id| format!("snapshot {id}"));
        format!(
            "iceberg table {} (format {}, {}, metadata {}): {} of {} manifest(s) read ({} skipped on their partition summaries, {} cached), {} data file(s), {} delete file(s){}\n",
            self.table_root,
            self.format_version,
            snapshot,
            self.metadata_file.file_name().unwrap_or_default(),
            self.read.manifests_read,
            self.read.manifests_total,
            self.read.manifests_pruned,
            self.read.manifests_cached,
            self.read.data_files,
            self.read.delete_files,
            match (self.deleted_rows(), self.deferred.manifests.len()) {
                (0, 0) => String::new(),
                (0, deferred) => format!("; {deferred} data manifest(s) left for the tasks to read"),
                (rows, _) => format!("; position deletes delete {rows} row(s)"),
            }
        )
    }

    /// Rows position deletes delete from the table's files.
    pub fn deleted_rows(&self) -> u64 {
        self.deleted_positions.iter().flatten().map(|d| d.len()).sum()
    }

    /// The rows of file `position` its position deletes keep, per row group of
    /// `row_group_rows` rows (`None`: it has none).
    pub fn kept_rows(&self, position: usize, row_group_rows: &[usize]) -> Result<Option<Vec<RowSelection>>> {
        let Some(deleted) = self.deleted_positions.get(position).and_then(Option::as_ref) else { return Ok(None) };
        kept_by_row_group(deleted, row_group_rows).map(Some).map_err(|e| {
            let path = self.files.get(position).map_or("a data file", |f| f.path.as_str());
            PqsiftError::table(&self.table_root, format!("the position deletes of {path}: {e}"))
        })
    }

    /// Files of a table whose metadata another process read and pruned on (a Spark task
    /// planning the files the driver left it, see
    /// [`table_piece`](crate::planning::table_piece)): per file the positions its deletes
    /// delete, and no manifest entry — the files were kept on them already.
    pub fn planned_elsewhere(table_root: Location, deleted_positions: Vec<Option<Arc<RoaringTreemap>>>) -> Self {
        Self {
            metadata_file: table_root.clone(),
            table_root,
            format_version: 0,
            snapshot_id: None,
            specs: Arc::from(Vec::new()),
            files: Vec::new(),
            deleted_positions,
            read: IcebergReadMetrics::default(),
            deferred: DeferredManifests::default(),
        }
    }

    /// Whether the manifest entries of the table's files are here, one per file (not for a
    /// file [planned elsewhere](Self::planned_elsewhere)).
    pub fn has_entries(&self) -> bool {
        self.files.len() == self.deleted_positions.len()
    }

    /// The entries of the files at `positions`.
    pub fn select(&self, positions: &[usize]) -> Self {
        Self {
            files: positions.iter().filter_map(|&p| self.files.get(p).cloned()).collect(),
            deleted_positions: positions.iter().map(|&p| self.deleted_positions[p].clone()).collect(),
            ..self.clone()
        }
    }
}
