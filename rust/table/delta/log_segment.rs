//! The log segment of a version: the files of `_delta_log/` that together give the table's
//! state at that version — the newest complete checkpoint at or before it, then every commit
//! after the checkpoint up to the version, contiguous.
//!
//! File names: commits `NNNNNNNNNNNNNNNNNNNN.json` (20 digits); classic checkpoints
//! `N.checkpoint.parquet`; multi-part `N.checkpoint.PPPPPPPPPP.TTTTTTTTTT.parquet` (complete
//! when parts 1..=T all exist); v2 `N.checkpoint.<uuid>.json|parquet` (with sidecars in
//! `_delta_log/_sidecars/`). Log compactions (`N.M.compacted.json`), `.crc` files and
//! anything else are ignored. Empty checkpoint files do not count.
//!
//! `_last_checkpoint` is read as a hint only: the directory is always listed (one
//! `read_dir`), so a stale, corrupt or dangling hint changes nothing; whether it agreed with
//! the listing is reported.
//!
//! ```no_run
//! use pqsift::table::delta::log_segment::{LogListing, VersionSpec};
//! let listing = LogListing::list(&std::path::Path::new("/data/events").into()).unwrap();
//! let segment = listing.segment(VersionSpec::Latest).unwrap();
//! println!("version {} from checkpoint {:?} and {} commits",
//!     segment.version, segment.checkpoint.as_ref().map(|c| c.version), segment.commits.len());
//! ```

use std::collections::BTreeMap;

use serde_json::Value;

use crate::error::{PqsiftError, Result};
use crate::storage::Location;
use crate::storage::source::{list_files, read_all};

/// What a file of `_delta_log/` is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LogFileKind {
    /// `N.json`: the actions of version N.
    Commit,
    /// `N.checkpoint.parquet`.
    ClassicCheckpoint,
    /// `N.checkpoint.P.T.parquet`: part `part` of `parts`.
    MultiPartCheckpoint {
        /// 1-based part number.
        part: u32,
        /// Number of parts.
        parts: u32,
    },
    /// `N.checkpoint.<uuid>.json|parquet`: a v2 checkpoint's top-level file.
    V2Checkpoint {
        /// The UUID of the name.
        uuid: String,
    },
}

/// One file of the log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogFile {
    /// Its path.
    pub path: Location,
    /// The version of its name.
    pub version: u64,
    /// What it is.
    pub kind: LogFileKind,
    /// Its size in bytes.
    pub size: u64,
    /// Its modification time (ms since the epoch).
    pub modified_ms: i64,
}

impl LogFile {
    /// `true` for a JSON file (commits, JSON v2 checkpoints).
    pub fn is_json(&self) -> bool {
        self.path.file_name().is_some_and(|name| name.ends_with(".json"))
    }
}

/// A complete checkpoint: all its files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checkpoint {
    /// Its version.
    pub version: u64,
    /// Its files (the parts, in order; one file otherwise).
    pub parts: Vec<LogFile>,
}

impl Checkpoint {
    /// `true` for a v2 (UUID-named) checkpoint.
    pub fn is_v2(&self) -> bool {
        self.parts.iter().any(|p| matches!(p.kind, LogFileKind::V2Checkpoint { .. }))
    }
}

/// What `_last_checkpoint` said (when it parsed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LastCheckpointHint {
    /// The checkpoint's version.
    pub version: u64,
    /// Its number of parts, for a multi-part checkpoint.
    pub parts: Option<u64>,
}

/// The version asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VersionSpec {
    /// The newest.
    Latest,
    /// Exactly this one.
    Version(u64),
}

/// Every relevant file of a table's `_delta_log/`.
#[derive(Debug, Clone)]
pub struct LogListing {
    /// The table root.
    pub table_root: Location,
    /// `table_root/_delta_log`.
    pub log_dir: Location,
    /// Commits by version.
    pub commits: BTreeMap<u64, LogFile>,
    /// Complete checkpoints by version (one per version: v2, else multi-part, else classic).
    pub checkpoints: BTreeMap<u64, Checkpoint>,
    /// `_last_checkpoint`, when present and parsable.
    pub hint: Option<LastCheckpointHint>,
}

/// The files that give the state at one version.
#[derive(Debug, Clone)]
pub struct LogSegment {
    /// The table root.
    pub table_root: Location,
    /// The version.
    pub version: u64,
    /// The newest complete checkpoint at or before it, if any.
    pub checkpoint: Option<Checkpoint>,
    /// The commits after the checkpoint up to `version`, ascending and contiguous.
    pub commits: Vec<LogFile>,
    /// `_last_checkpoint`'s version when it named this segment's checkpoint (it was used),
    /// `None` when absent, stale, corrupt or pointing elsewhere.
    pub hint_used: Option<u64>,
}

impl LogListing {
    /// Lists `table_root/_delta_log`. Errors when it is not a directory (not a Delta table).
    pub fn list(table_root: &Location) -> Result<Self> {
        let log_dir = table_root.join("_delta_log");
        if log_dir.as_local().is_some_and(|dir| !dir.is_dir()) {
            return Err(PqsiftError::table(table_root, "no _delta_log directory: not a Delta table"));
        }
        let entries = list_files(&log_dir)?;
        if entries.is_empty() && log_dir.is_remote() {
            return Err(PqsiftError::table(table_root, "no _delta_log directory: not a Delta table"));
        }
        let mut commits = BTreeMap::new();
        let mut checkpoint_files: BTreeMap<u64, Vec<LogFile>> = BTreeMap::new();
        let mut hint_file = None;
        for (path, version_info) in entries {
            let Some(name) = path.file_name() else { continue };
            if name == "_last_checkpoint" {
                hint_file = Some(path.clone());
            }
            let Some((version, kind)) = parse_name(&name) else { continue };
            let modified_ms = version_info.last_modified_ns / 1_000_000;
            let file = LogFile { path, version, kind, size: version_info.size, modified_ms };
            match file.kind {
                LogFileKind::Commit => {
                    commits.insert(version, file);
                }
                _ if file.size == 0 => {}
                _ => checkpoint_files.entry(version).or_default().push(file),
            }
        }
        let checkpoints = checkpoint_files
            .into_iter()
            .filter_map(|(version, files)| complete_checkpoint(version, files).map(|c| (version, c)))
            .collect();
        // Read only when listed: a store answers a missing object with an error after retries.
        let hint = hint_file.as_ref().and_then(read_hint);
        Ok(Self { table_root: table_root.clone(), log_dir, commits, checkpoints, hint })
    }

    /// The newest version the log holds (a commit's or a checkpoint's).
    pub fn latest_version(&self) -> Option<u64> {
        let commit = self.commits.keys().next_back().copied();
        let checkpoint = self.checkpoints.keys().next_back().copied();
        commit.max(checkpoint)
    }

    /// The segment of `spec`: errors on a version that does not exist or cannot be rebuilt
    /// (commits missing between the checkpoint and it).
    pub fn segment(&self, spec: VersionSpec) -> Result<LogSegment> {
        let root = &self.table_root;
        let latest = self
            .latest_version()
            .ok_or_else(|| PqsiftError::table(root, "the _delta_log directory holds no commit and no checkpoint"))?;
        let version = match spec {
            VersionSpec::Latest => latest,
            VersionSpec::Version(v) if v > latest => {
                return Err(PqsiftError::table(
                    root,
                    format!("version {v} does not exist (the latest version is {latest})"),
                ));
            }
            VersionSpec::Version(v) => v,
        };
        let checkpoint = self.checkpoints.range(..=version).next_back().map(|(_, c)| c.clone());
        let first = checkpoint.as_ref().map_or(0, |c| c.version + 1);
        let mut commits = Vec::new();
        for v in first..=version {
            match self.commits.get(&v) {
                Some(file) => commits.push(file.clone()),
                None => {
                    let around = match &checkpoint {
                        Some(c) => format!("after the checkpoint at version {}", c.version),
                        None => "with no checkpoint before it".to_string(),
                    };
                    let reason = if self.commits.range(v..).next().is_some() || v == version {
                        format!(
                            "versions are not contiguous: commit {v} is missing {around}, so version {version} cannot be reconstructed"
                        )
                    } else {
                        format!("version {version} cannot be reconstructed: commit {v} is missing {around}")
                    };
                    return Err(PqsiftError::table(root, reason));
                }
            }
        }
        let hint_used = match (&self.hint, &checkpoint) {
            (Some(hint), Some(c)) if hint.version == c.version => Some(hint.version),
            _ => None,
        };
        Ok(LogSegment { table_root: root.clone(), version, checkpoint, commits, hint_used })
    }
}

/// `(version, kind)` of a log file name, `None` for files replay ignores.
///
/// ```
/// use pqsift::table::delta::log_segment::{parse_name, LogFileKind};
/// assert_eq!(parse_name("00000000000000000010.json"), Some((10, LogFileKind::Commit)));
/// assert_eq!(parse_name("00000000000000000010.checkpoint.parquet"), Some((10, LogFileKind::ClassicCheckpoint)));
/// assert_eq!(parse_name("00000000000000000001.checkpoint.0000000002.0000000003.parquet"),
///     Some((1, LogFileKind::MultiPartCheckpoint { part: 2, parts: 3 })));
/// assert!(matches!(parse_name("00000000000000000002.checkpoint.6374b053-df23-479b-b2cf-c9c550132b49.json"),
///     Some((2, LogFileKind::V2Checkpoint { .. }))));
/// assert_eq!(parse_name("00000000000000000000.00000000000000000005.compacted.json"), None);
/// assert_eq!(parse_name(".00000000000000000000.json.crc"), None);
/// assert_eq!(parse_name("00000000000000000000.crc"), None);
/// ```
pub fn parse_name(name: &str) -> Option<(u64, LogFileKind)> {
    let digits = name.get(..20)?;
    if !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let version: u64 = digits.parse().ok()?;
    let rest = name.get(20..)?;
    if rest == ".json" {
        return Some((version, LogFileKind::Commit));
    }
    let rest = rest.strip_prefix(".checkpoint.")?;
    if rest == "parquet" {
        return Some((version, LogFileKind::ClassicCheckpoint));
    }
    let parts: Vec<&str> = rest.split('.').collect();
    match parts.as_slice() {
        [part, total, "parquet"] if part.len() == 10 && total.len() == 10 => {
            let part: u32 = part.parse().ok()?;
            let parts: u32 = total.parse().ok()?;
            (part >= 1 && part <= parts).then_some((version, LogFileKind::MultiPartCheckpoint { part, parts }))
        }
        [uuid, "json" | "parquet"] if is_uuid(uuid) => {
            Some((version, LogFileKind::V2Checkpoint { uuid: uuid.to_string() }))
        }
        _ => None,
    }
}

fn is_uuid(text: &str) -> bool {
    text.len() == 36
        && text
            .char_indices()
            .all(|(i, c)| if matches!(i, 8 | 13 | 18 | 23) { c == '-' } else { c.is_ascii_hexdigit() })
}

/// The complete checkpoint among `files` (all of `version`), if any: a v2 one first, then
/// the multi-part one with the most parts, then a classic one.
fn complete_checkpoint(version: u64, mut files: Vec<LogFile>) -> Option<Checkpoint> {
    files.sort_by(|a, b| a.path.cmp(&b.path));
    if let Some(v2) = files.iter().find(|f| matches!(f.kind, LogFileKind::V2Checkpoint { .. })) {
        return Some(Checkpoint { version, parts: vec![v2.clone()] });
    }
    let mut multi: BTreeMap<u32, BTreeMap<u32, LogFile>> = BTreeMap::new();
    for file in &files {
        if let LogFileKind::MultiPartCheckpoint { part, parts } = file.kind {
            multi.entry(parts).or_default().insert(part, file.clone());
        }
    }
    for (parts, found) in multi.into_iter().rev() {
        if found.len() == parts as usize && (1..=parts).all(|p| found.contains_key(&p)) {
            return Some(Checkpoint { version, parts: found.into_values().collect() });
        }
    }
    files
        .into_iter()
        .find(|f| f.kind == LogFileKind::ClassicCheckpoint)
        .map(|file| Checkpoint { version, parts: vec![file] })
}

/// `_last_checkpoint`, leniently: anything unreadable is no hint.
fn read_hint(path: &Location) -> Option<LastCheckpointHint> {
    let bytes = read_all(path).ok()?;
    let text = std::str::from_utf8(&bytes).ok()?;
    let value: Value = serde_json::from_str(text.trim()).ok()?;
    let version = value.get("version")?.as_u64()?;
    let parts = value.get("parts").and_then(Value::as_u64);
    Some(LastCheckpointHint { version, parts })
}
