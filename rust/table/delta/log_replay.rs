//! Log replay: the active files of a log segment, and its newest protocol and metadata.
//!
//! Commits are walked newest first, each commit's actions last to first (so that, as when
//! the log is applied forward, the later action of a commit wins); the first action seen for
//! a file — keyed by its resolved path and its deletion vector's unique id — decides it: an
//! `add` makes it active, a `remove` hides every older action of that key. The checkpoint
//! comes last, its adds kept unless a commit already decided their key; its removes are
//! never read (see [`super::checkpoint`]). Protocol and metadata are the newest ones seen.
//!
//! ```no_run
//! use pqsift::reading::table_reads::ScanReads;
//! use pqsift::table::delta::{log_replay::replay, log_segment::{LogListing, VersionSpec}};
//! let listing = LogListing::list(&std::path::Path::new("/data/t").into()).unwrap();
//! let replayed = replay(&listing.segment(VersionSpec::Latest).unwrap(), &ScanReads).unwrap();
//! println!("{} active files", replayed.files.len());
//! ```

use std::collections::HashSet;

use super::actions::{Action, Add, CommitInfo, Metadata, Protocol};
use super::checkpoint::{CheckpointReadMetrics, read_checkpoint};
use super::log_segment::LogSegment;
use super::paths::resolve_path;
use crate::error::{PqsiftError, Result};
use crate::storage::Location;
use crate::storage::location::ObjectVersion;
use crate::storage::source::read_many;
use crate::table::parquet_reads::ParquetReads;

/// Counts of one replay.
///
/// ```
/// let m = pqsift::table::delta::log_replay::LogReplayMetrics::default();
/// assert_eq!((m.commits_read, m.checkpoint_version), (0, None));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LogReplayMetrics {
    /// JSON commits read.
    pub commits_read: u64,
    /// The checkpoint replay started from, if any.
    pub checkpoint_version: Option<u64>,
    /// Files of that checkpoint (parts; sidecars counted apart).
    pub checkpoint_parts: u64,
    /// Sidecar files read.
    pub sidecars_read: u64,
    /// `_last_checkpoint` named the checkpoint used.
    pub last_checkpoint_hint_used: bool,
    /// `add` actions in the commits read.
    pub commit_adds: u64,
    /// `remove` actions in the commits read.
    pub commit_removes: u64,
    /// `add` actions in the checkpoint.
    pub checkpoint_adds: u64,
    /// Adds superseded by a newer action for the same file (and deletion vector).
    pub adds_superseded: u64,
    /// Active files.
    pub active_files: u64,
    /// What the checkpoint's Parquet reads pruned and decoded (the `add` actions' columns
    /// only, `add.path IS NOT NULL` pushed down).
    pub checkpoint_read: CheckpointReadMetrics,
}

/// An active file: its `add` and its resolved path.
#[derive(Debug, Clone)]
pub struct ActiveFile {
    /// The absolute, decoded location, with the size and time the `add` gives (so that
    /// opening it in a store needs no request).
    pub path: Location,
    /// The `add` action.
    pub add: Add,
}

/// The state of a segment.
#[derive(Debug, Clone)]
pub struct Replayed {
    /// The newest protocol, if any.
    pub protocol: Option<Protocol>,
    /// The newest metadata, if any.
    pub metadata: Option<Metadata>,
    /// The active files: those of the commits newest first, then the checkpoint's.
    pub files: Vec<ActiveFile>,
    /// The newest commit's `commitInfo`, if it has one.
    pub latest_commit_info: Option<CommitInfo>,
    /// Counts.
    pub metrics: LogReplayMetrics,
}

/// Replays `segment`, reading a Parquet checkpoint through `reads`.
#[expect(clippy::mutable_key_type, reason = "a Location hashes by its text; its store client is not part of the key")]
pub fn replay(segment: &LogSegment, reads: &dyn ParquetReads) -> Result<Replayed> {
    let root = &segment.table_root;
    let mut metrics = LogReplayMetrics { last_checkpoint_hint_used: segment.hint_used.is_some(), ..Default::default() };
    let mut seen: HashSet<(Location, Option<String>)> = HashSet::new();
    let mut files = Vec::new();
    let mut protocol = None;
    let mut metadata = None;
    let mut latest_commit_info = None;
    // From a store, the commits are fetched at once.
    let commit_paths: Vec<Location> = segment.commits.iter().rev().map(|c| c.path.clone()).collect();
    let texts = read_many(&commit_paths)?;
    for (index, (commit, bytes)) in segment.commits.iter().rev().zip(texts).enumerate() {
        crate::interrupt::check()?;
        let text = std::str::from_utf8(&bytes)
            .map_err(|e| PqsiftError::corrupt_delta(&commit.path, format!("not UTF-8 text: {e}")))?;
        metrics.commits_read += 1;
        let mut actions = Vec::new();
        for (number, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let action = Action::parse_line(line).map_err(|e| {
                PqsiftError::corrupt_delta(&commit.path, format!("line {} is not a Delta action: {e}", number + 1))
            })?;
            actions.push(action);
        }
        // A commit is a file of actions; one without any (empty, or only whitespace) is damage,
        // not a commit that changes nothing.
        if actions.is_empty() {
            return Err(PqsiftError::corrupt_delta(&commit.path, format!("commit {} holds no action", commit.version)));
        }
        for action in actions.into_iter().rev() {
            if protocol.is_none() && action.protocol.is_some() {
                protocol = action.protocol;
            }
            if metadata.is_none() && action.meta_data.is_some() {
                metadata = action.meta_data;
            }
            if index == 0 && action.commit_info.is_some() {
                latest_commit_info = action.commit_info;
            }
            if let Some(remove) = action.remove {
                metrics.commit_removes += 1;
                let key = (resolve_path(root, &remove.path)?, remove.deletion_vector.as_ref().map(|dv| dv.unique_id()));
                seen.insert(key);
            }
            if let Some(add) = action.add {
                metrics.commit_adds += 1;
                let path = located(root, &add)?;
                let key = (path.clone(), add.deletion_vector.as_ref().map(|dv| dv.unique_id()));
                if seen.insert(key) {
                    files.push(ActiveFile { path, add });
                } else {
                    metrics.adds_superseded += 1;
                }
            }
        }
    }
    if let Some(checkpoint) = &segment.checkpoint {
        let actions = read_checkpoint(root, checkpoint, reads)?;
        metrics.checkpoint_version = Some(checkpoint.version);
        metrics.checkpoint_parts = checkpoint.parts.len() as u64;
        metrics.sidecars_read = actions.sidecars.len() as u64;
        metrics.checkpoint_adds = actions.adds.len() as u64;
        metrics.checkpoint_read = actions.metrics;
        if protocol.is_none() {
            protocol = actions.protocol;
        }
        if metadata.is_none() {
            metadata = actions.metadata;
        }
        for add in actions.adds {
            let path = located(root, &add)?;
            let key = (path.clone(), add.deletion_vector.as_ref().map(|dv| dv.unique_id()));
            if seen.contains(&key) {
                metrics.adds_superseded += 1;
            } else {
                files.push(ActiveFile { path, add });
            }
        }
    }
    metrics.active_files = files.len() as u64;
    Ok(Replayed { protocol, metadata, files, latest_commit_info, metrics })
}

/// The location of `add`'s file, with its size and modification time.
fn located(root: &Location, add: &Add) -> Result<Location> {
    let version = ObjectVersion {
        size: u64::try_from(add.size).unwrap_or(0),
        e_tag: None,
        last_modified_ns: add.modification_time.saturating_mul(1_000_000),
    };
    Ok(resolve_path(root, &add.path)?.with_version(version))
}
