//! Decoded manifests kept in the process, as the metadata cache keeps footers: a table
//! queried again (a notebook, a dashboard, a Spark driver planning query after query)
//! reads its metadata file and manifest list again — they change with every commit — but
//! not the manifests it read before. Iceberg never rewrites a manifest in place (a commit
//! writes new ones under new names), so a manifest is known by its location and the
//! length its manifest list records; a local one also by its modification time, which a
//! stat gives for nothing like a request's cost.
//!
//! Bounded to [`MANIFEST_CACHE_BYTES`] (the entries' sizes estimated), least recently used
//! first out; emptied with the metadata cache (`pqsift._core.clear_metadata_cache()`).
//!
//! ```
//! use std::sync::Arc;
//! use pqsift::storage::Location;
//! use pqsift::table::iceberg::manifest::{FileContent, ManifestFile};
//! use pqsift::table::iceberg::manifest_cache::{ManifestCache, ManifestKey};
//! let cache = ManifestCache::new(1 << 20);
//! let manifest = ManifestFile {
//!     path: "s3://b/t/metadata/m0.avro".into(), length: Some(4_000), spec_id: 0,
//!     content: FileContent::Data, sequence_number: 1, partitions: vec![], live_files: Some(20),
//! };
//! let location = Location::parse("s3://b/t/metadata/m0.avro", &Default::default()).unwrap();
//! let key = ManifestKey::of(&location, &manifest, Some(0)).unwrap();
//! assert!(cache.get(&key).is_none());
//! cache.insert(key.clone(), Arc::new(vec![]));
//! assert!(cache.get(&key).is_some());
//! // Another length is another manifest.
//! let rewritten = ManifestFile { length: Some(4_001), ..manifest };
//! assert!(cache.get(&ManifestKey::of(&location, &rewritten, Some(0)).unwrap()).is_none());
//! ```

use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use super::manifest::{DataFile, ManifestFile};
use crate::lru::ByteLru;
use crate::storage::Location;

/// The bound of the process-wide cache of decoded manifests.
pub const MANIFEST_CACHE_BYTES: usize = 64 << 20;

/// What a decoded manifest is known by: it also depends on what the manifest list says of
/// it (the spec its entries were written with, the sequence number they inherit).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ManifestKey {
    location: String,
    length: i64,
    modified_ns: Option<u128>,
    spec_id: Option<i32>,
    sequence_number: i64,
}

/// Decoded manifests, by location and length (see the module documentation).
#[derive(Debug)]
pub struct ManifestCache {
    entries: Mutex<ByteLru<ManifestKey, Arc<Vec<DataFile>>>>,
}

impl ManifestCache {
    /// A cache of at most `capacity_bytes` (estimated).
    pub fn new(capacity_bytes: usize) -> Self {
        Self { entries: Mutex::new(ByteLru::new(capacity_bytes)) }
    }

    /// The process's cache.
    pub fn global() -> &'static ManifestCache {
        static GLOBAL: OnceLock<ManifestCache> = OnceLock::new();
        GLOBAL.get_or_init(|| ManifestCache::new(MANIFEST_CACHE_BYTES))
    }

    /// The files of the manifest `key` names, when decoded before.
    pub fn get(&self, key: &ManifestKey) -> Option<Arc<Vec<DataFile>>> {
        self.lock().get(key).cloned()
    }

    /// Keeps the files decoded from the manifest `key` names.
    pub fn insert(&self, key: ManifestKey, files: Arc<Vec<DataFile>>) {
        let bytes = files.iter().map(approximate_bytes).sum::<usize>() + key.location.len() + 64;
        self.lock().insert(key, files, bytes);
    }

    /// Empties the cache.
    pub fn clear(&self) {
        let mut entries = self.lock();
        let capacity = entries.capacity();
        *entries = ByteLru::new(capacity);
    }

    fn lock(&self) -> MutexGuard<'_, ByteLru<ManifestKey, Arc<Vec<DataFile>>>> {
        self.entries.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl ManifestKey {
    /// The key of `manifest` at `location`, decoded with `spec_id`; `None` when its length
    /// is not known (nothing is cached then). A local manifest is stat'ed for its
    /// modification time.
    pub fn of(location: &Location, manifest: &ManifestFile, spec_id: Option<i32>) -> Option<Self> {
        let length = manifest.length?;
        let modified_ns = match location {
            Location::Local(path) => {
                let modified = std::fs::metadata(path).ok()?.modified().ok()?;
                Some(modified.duration_since(std::time::UNIX_EPOCH).ok()?.as_nanos())
            }
            _ => None,
        };
        Some(Self {
            location: location.to_string(),
            length,
            modified_ns,
            spec_id,
            sequence_number: manifest.sequence_number,
        })
    }
}

/// About how many bytes a decoded entry holds.
fn approximate_bytes(file: &DataFile) -> usize {
    let bounds: usize = file.lower_bounds.values().chain(file.upper_bounds.values()).map(|b| b.len() + 32).sum();
    std::mem::size_of::<DataFile>()
        + file.path.len()
        + file.format.len()
        + file.partition.len() * 48
        + (file.null_counts.len() + file.nan_counts.len()) * 24
        + bounds
        + file.equality_ids.len() * 4
        + file.referenced_data_file.as_ref().map_or(0, String::len)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::iceberg::manifest::FileContent;

    #[test]
    fn a_local_manifest_rewritten_in_place_is_read_again() {
        let dir = std::env::temp_dir().join("pqsift_manifest_cache_test");
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("m0.avro");
        std::fs::write(&path, b"one").unwrap();
        let location = Location::Local(path.clone());
        let manifest = ManifestFile {
            path: path.to_string_lossy().into_owned(),
            length: Some(3),
            spec_id: 0,
            content: FileContent::Data,
            sequence_number: 1,
            partitions: vec![],
            live_files: None,
        };
        let cache = ManifestCache::new(1 << 20);
        let key = |spec_id: Option<i32>| ManifestKey::of(&location, &manifest, spec_id).unwrap();
        cache.insert(key(None), Arc::new(vec![]));
        assert!(cache.get(&key(None)).is_some());
        assert!(cache.get(&key(Some(1))).is_none(), "another spec decodes otherwise");
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::write(&path, b"two").unwrap();
        assert!(cache.get(&key(None)).is_none(), "same length, newer file");
        cache.clear();
        assert_eq!(cache.lock().len(), 0);
    }
}
