//! A process-wide cache of parsed file metadata (footer and page index).
//!
//! Spark reuses Python workers, and a scan's planning and its reading both need a file's
//! metadata: parsing it once per process matters. Entries are keyed by path, size and
//! modification time — a rewritten file is a new entry — and the cache is bounded by the
//! metadata's estimated memory size, evicting the least recently used.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::SystemTime;

use parquet::file::metadata::ParquetMetaData;

use crate::error::{PqsiftError, Result};
use crate::format::metadata;
use crate::lru::ByteLru;

/// Default bound of the process-wide metadata cache.
pub const DEFAULT_CAPACITY_BYTES: usize = 256 << 20;

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Key {
    path: PathBuf,
    size: u64,
    modified: Option<SystemTime>,
}

#[derive(Debug)]
struct State {
    entries: ByteLru<Key, Arc<ParquetMetaData>>,
    hits: u64,
    misses: u64,
}

/// The metadata cache. [`MetadataCache::global`] is the process-wide one.
#[derive(Debug)]
pub struct MetadataCache {
    state: Mutex<State>,
}

impl MetadataCache {
    /// A cache bounded to `capacity_bytes`.
    pub fn new(capacity_bytes: usize) -> Self {
        Self { state: Mutex::new(State { entries: ByteLru::new(capacity_bytes), hits: 0, misses: 0 }) }
    }

    /// The process-wide cache.
    pub fn global() -> &'static MetadataCache {
        static GLOBAL: OnceLock<MetadataCache> = OnceLock::new();
        GLOBAL.get_or_init(|| MetadataCache::new(DEFAULT_CAPACITY_BYTES))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// `(hits, misses)` so far.
    pub fn stats(&self) -> (u64, u64) {
        let state = self.lock();
        (state.hits, state.misses)
    }

    /// The metadata of `path`, from the cache when the file is unchanged.
    ///
    /// ```no_run
    /// use pqsift::format::metadata_cache::MetadataCache;
    /// let path = std::path::Path::new("data/events.parquet");
    /// let first = MetadataCache::global().load(path).unwrap();
    /// let again = MetadataCache::global().load(path).unwrap(); // no I/O
    /// assert!(std::sync::Arc::ptr_eq(&first, &again));
    /// ```
    pub fn load(&self, path: &Path) -> Result<Arc<ParquetMetaData>> {
        self.load_with_hint(path, metadata::DEFAULT_METADATA_SIZE_HINT)
    }

    /// [`MetadataCache::load`], reading the last `size_hint` bytes of the file first on a
    /// miss (see [`metadata::read_metadata`]). The hint changes the I/O, never the result.
    pub fn load_with_hint(&self, path: &Path, size_hint: usize) -> Result<Arc<ParquetMetaData>> {
        let stat = std::fs::metadata(path).map_err(|e| PqsiftError::io(path, e))?;
        let key = Key { path: path.to_path_buf(), size: stat.len(), modified: stat.modified().ok() };
        {
            let mut state = self.lock();
            if let Some(metadata) = state.entries.get(&key).cloned() {
                state.hits += 1;
                return Ok(metadata);
            }
            state.misses += 1;
        }
        let metadata = metadata::load_with_hint(path, size_hint)?;
        let size = metadata.memory_size();
        let mut state = self.lock();
        // A stale entry for an older version of the file goes first.
        state.entries.remove_where(|k| k.path == key.path);
        state.entries.insert(key, Arc::clone(&metadata), size);
        Ok(metadata)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn corpus(name: &str) -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/parquet-testing/data").join(name)
    }

    #[test]
    fn second_load_is_a_hit_and_capacity_evicts() {
        let cache = MetadataCache::new(1 << 30);
        let a = cache.load(&corpus("alltypes_plain.parquet")).unwrap();
        let b = cache.load(&corpus("alltypes_plain.parquet")).unwrap();
        assert!(Arc::ptr_eq(&a, &b));
        assert_eq!(cache.stats(), (1, 1));

        let tiny = MetadataCache::new(a.memory_size());
        tiny.load(&corpus("alltypes_plain.parquet")).unwrap();
        tiny.load(&corpus("alltypes_tiny_pages.parquet")).unwrap(); // larger than the capacity: not kept
        tiny.load(&corpus("alltypes_plain.parquet")).unwrap();
        assert_eq!(tiny.stats(), (1, 2));
    }

    #[test]
    fn a_rewritten_file_is_reloaded() {
        let dir = std::env::temp_dir().join(format!("pqsift-mc-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("f.parquet");
        std::fs::copy(corpus("alltypes_plain.parquet"), &path).unwrap();
        let cache = MetadataCache::new(1 << 30);
        let first = cache.load(&path).unwrap();
        std::fs::copy(corpus("alltypes_tiny_pages.parquet"), &path).unwrap();
        let second = cache.load(&path).unwrap();
        assert_ne!(first.file_metadata().num_rows(), second.file_metadata().num_rows());
        assert_eq!(cache.stats(), (0, 2));
    }
}
