//! A process-wide cache of parsed file metadata (footer and page index).
//!
//! Spark reuses Python workers, and a scan's planning and its reading both need a file's
//! metadata: parsing it once per process matters. Entries are keyed by path (or URL) and
//! hold the size and modification time (and, for objects, entity tag) they were read at —
//! a rewritten file is read again and replaces its entry — and the cache is bounded by the metadata's estimated memory size, evicting the least
//! recently used.
//!
//! A scan loads its files' footers through [`MetadataCache::load_sparing`] with the cache's
//! [`CacheEpoch`] taken when it started planning: its loads evict only entries nobody has
//! used since. A scan of more footers than fit, which reads them again in the order it
//! planned them, then finds the first ones still cached instead of none (see
//! [`ByteLru::insert_sparing`]).
//!
//! For an object whose size and version a listing gave, a hit costs no request. Otherwise
//! the first request asks for the object's last `size_hint` bytes, and its answer carries
//! the version: on a hit they are dropped, on a miss they are the footer's first read.

use std::sync::{Arc, Mutex, OnceLock};

use arrow::datatypes::SchemaRef;
use bytes::Bytes;
use parquet::file::metadata::ParquetMetaData;

use crate::error::{PqsiftError, Result};
use crate::format::arrow_schema::readable_arrow_schema;
use crate::format::metadata::{self, layout_fingerprint};
use crate::lru::ByteLru;
use crate::storage::location::ObjectVersion;
use crate::storage::remote_file::RemoteFile;
use crate::storage::{FileSource, Location};

/// Default bound of the process-wide metadata cache.
pub const DEFAULT_CAPACITY_BYTES: usize = 256 << 20;

/// Files up to this size (local or in a store), read whole with their footer, are kept with their metadata
/// (the cache's bound counts them): reading one then needs no I/O (see
/// [`MetadataCache::small_file`]).
pub const SMALL_FILE_BYTES: usize = 64 << 10;

/// A reading of the cache's clock (see [`MetadataCache::load_sparing`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheEpoch(u64);

impl From<CacheEpoch> for u64 {
    fn from(CacheEpoch(tick): CacheEpoch) -> Self {
        tick
    }
}

impl From<u64> for CacheEpoch {
    fn from(tick: u64) -> Self {
        Self(tick)
    }
}

/// Which version of a file an entry holds: a rewritten file has another.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Version {
    size: u64,
    modified: Option<std::time::SystemTime>,
    e_tag: Option<String>,
    modified_ns: i64,
}

impl Version {
    fn remote(version: &ObjectVersion) -> Self {
        Self { size: version.size, modified: None, e_tag: version.e_tag.clone(), modified_ns: version.last_modified_ns }
    }
}

/// A file's cached metadata.
#[derive(Debug)]
struct Entry {
    version: Version,
    /// What a load answers (its location the versioned one of the load that read it).
    loaded: Loaded,
    /// The whole file, when small (see [`SMALL_FILE_BYTES`]).
    whole_file: Option<Bytes>,
}

/// What is measured of a footer when it is read — each a walk of every column (chunk),
/// taken once and kept with the footer rather than on every open of a cached file.
#[derive(Debug, Clone)]
pub struct Measured {
    /// The Arrow schema the file reads as ([`readable_arrow_schema`]), or why it has none
    /// (the metadata stays usable).
    pub schema: std::result::Result<SchemaRef, String>,
    /// The metadata's estimated size in memory ([`ParquetMetaData::memory_size`]).
    pub footer_bytes: usize,
    /// The row group layout's fingerprint ([`layout_fingerprint`]).
    pub layout: u64,
}

impl Measured {
    /// Measures `metadata`.
    pub fn of(metadata: &ParquetMetaData) -> Self {
        Self {
            schema: readable_arrow_schema(metadata.file_metadata()).map(Arc::new).map_err(|e| e.to_string()),
            footer_bytes: metadata.memory_size(),
            layout: layout_fingerprint(metadata),
        }
    }

    /// What the footer and its Arrow schema take in memory.
    fn bytes(&self) -> usize {
        let schema = self.schema.as_ref().map_or(0, |schema| {
            schema.fields().size() + schema.metadata().iter().map(|(k, v)| k.len() + v.len()).sum::<usize>()
        });
        self.footer_bytes + schema
    }
}

/// A file's metadata, from the cache or read.
#[derive(Debug, Clone)]
pub struct Loaded {
    /// The footer, with the page index when the file has one.
    pub metadata: Arc<ParquetMetaData>,
    /// What was measured of it when it was read.
    pub measured: Measured,
    /// The file, with the size and version of the object the metadata is of (so that
    /// reading it needs no `HEAD`).
    pub location: Location,
    /// The bytes at the file's end that hold its footer and page index (see
    /// [`FooterRead::tail_bytes`](metadata::FooterRead::tail_bytes)): the size hint that
    /// reads them again in one request once the cache has let them go.
    pub tail_bytes: Option<u64>,
}

#[derive(Debug)]
struct State {
    /// One entry per file, of the version last loaded: loading another version replaces
    /// it in O(1) (a scan of the entries for stale versions made planning many files
    /// quadratic in their number).
    entries: ByteLru<Location, Entry>,
    hits: u64,
    misses: u64,
}

/// The metadata cache. [`MetadataCache::global`] is the process-wide one. Its bound counts
/// each entry's footer, Arrow schema and small file.
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

    /// `(bytes held, bound)`: the entries' estimated memory, and the most it may reach.
    pub fn usage(&self) -> (usize, usize) {
        let state = self.lock();
        (state.entries.bytes(), state.entries.capacity())
    }

    /// Bounds the cache to `capacity_bytes` from now on (0: it keeps nothing), evicting
    /// the least recently used entries until what it holds fits; answers the bound before.
    /// Python workers on one host each have their own cache: this bounds each.
    pub fn set_capacity(&self, capacity_bytes: usize) -> usize {
        let mut state = self.lock();
        let before = state.entries.capacity();
        state.entries.set_capacity(capacity_bytes);
        before
    }

    /// Drops every entry (the hit and miss counts stay): the next load of each file reads
    /// its footer again — what a benchmark of cold reads, or a process done with a table,
    /// wants.
    pub fn clear(&self) {
        self.lock().entries.clear();
    }

    /// The cache's clock now: loads sparing it ([`MetadataCache::load_sparing`]) evict no
    /// entry used from now on.
    pub fn epoch(&self) -> CacheEpoch {
        CacheEpoch(self.lock().entries.clock())
    }

    /// The metadata of the file at `location`, from the cache when the file is unchanged.
    ///
    /// ```no_run
    /// use pqsift::format::metadata_cache::MetadataCache;
    /// use pqsift::storage::Location;
    /// let file = Location::from(std::path::Path::new("data/events.parquet"));
    /// let first = MetadataCache::global().load(&file).unwrap();
    /// let again = MetadataCache::global().load(&file).unwrap(); // no I/O
    /// assert!(std::sync::Arc::ptr_eq(&first, &again));
    /// ```
    pub fn load(&self, location: &Location) -> Result<Arc<ParquetMetaData>> {
        self.load_with_hint(location, metadata::DEFAULT_METADATA_SIZE_HINT)
    }

    /// [`MetadataCache::load`], reading the last `size_hint` bytes of the file first on a
    /// miss (see [`metadata::read_metadata`]). The hint changes the I/O, never the result.
    pub fn load_with_hint(&self, location: &Location, size_hint: usize) -> Result<Arc<ParquetMetaData>> {
        self.load_sparing(location, size_hint, 1, None).map(|loaded| loaded.metadata)
    }

    /// [`MetadataCache::load_with_hint`], keeping what it reads only where that evicts no
    /// entry used since `spared` (a scan's [`MetadataCache::epoch`]; `None`: any entry may
    /// go, least recently used first); a wide footer is decoded on up to `decode_threads`
    /// threads (see [`metadata::read_metadata_and_file`]).
    pub fn load_sparing(
        &self,
        location: &Location,
        size_hint: usize,
        decode_threads: usize,
        spared: Option<CacheEpoch>,
    ) -> Result<Loaded> {
        let (version, source) = match location {
            Location::Local(path) => {
                let stat = std::fs::metadata(path).map_err(|e| PqsiftError::os(path, &e))?;
                (Version { size: stat.len(), modified: stat.modified().ok(), e_tag: None, modified_ns: 0 }, None)
            }
            Location::Object(object) => match object.version() {
                Some(version) => (Version::remote(version), None),
                None => {
                    let (file, range, tail) = RemoteFile::tail(object, (size_hint as u64).max(8))?;
                    let version = Version::remote(file.version().expect("a tail read knows the version"));
                    (version, Some(FileSource::Fetched(file.fetched_from(range.start, tail))))
                }
            },
        };
        let versioned = match location {
            Location::Object(_) => location.clone().with_version(ObjectVersion {
                size: version.size,
                e_tag: version.e_tag.clone(),
                last_modified_ns: version.modified_ns,
            }),
            _ => location.clone(),
        };
        if let Some(mut loaded) = self.lookup(location, &version) {
            loaded.location = versioned;
            return Ok(loaded);
        }
        let source = match source {
            Some(source) => source,
            None => FileSource::open(&versioned)?,
        };
        let read = metadata::read_metadata_and_file(&source, size_hint, decode_threads)?;
        let measured = Measured::of(&read.metadata);
        let whole_file = read.whole_file.filter(|bytes| bytes.len() <= SMALL_FILE_BYTES);
        let size = measured.bytes() + whole_file.as_ref().map_or(0, Bytes::len);
        let loaded =
            Loaded { metadata: Arc::new(read.metadata), measured, location: versioned, tail_bytes: read.tail_bytes };
        let entry = Entry { version, loaded: loaded.clone(), whole_file };
        // Replaces the entry of an older version of the file, if any.
        let since = spared.map_or(u64::MAX, |CacheEpoch(tick)| tick);
        self.lock().entries.insert_sparing(location.clone(), entry, size, since);
        Ok(loaded)
    }

    /// The bytes of the small file at `location` (see [`SMALL_FILE_BYTES`]) when they are
    /// held with `metadata` — the very metadata a reader holds, so that bytes and footer
    /// are of one version of the file.
    pub fn small_file(&self, location: &Location, metadata: &Arc<ParquetMetaData>) -> Option<Bytes> {
        let mut state = self.lock();
        let entry = state.entries.get(location)?;
        Arc::ptr_eq(&entry.loaded.metadata, metadata).then(|| entry.whole_file.clone()).flatten()
    }

    /// What is cached for this `version` of the file.
    fn lookup(&self, location: &Location, version: &Version) -> Option<Loaded> {
        let mut state = self.lock();
        let found =
            state.entries.get(location).filter(|entry| entry.version == *version).map(|entry| entry.loaded.clone());
        match found {
            Some(_) => state.hits += 1,
            None => state.misses += 1,
        }
        found
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    fn corpus(name: &str) -> Location {
        Location::Local(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/parquet-testing/data").join(name))
    }

    #[test]
    fn second_load_is_a_hit_and_capacity_evicts() {
        let cache = MetadataCache::new(1 << 30);
        let a = cache.load(&corpus("alltypes_plain.parquet")).unwrap();
        let b = cache.load(&corpus("alltypes_plain.parquet")).unwrap();
        assert!(Arc::ptr_eq(&a, &b));
        assert_eq!(cache.stats(), (1, 1));

        // The entry holds the metadata, the Arrow schema and, the file being small, its bytes.
        let file_bytes = std::fs::metadata(corpus("alltypes_plain.parquet").as_local().unwrap()).unwrap().len();
        let entry = cache.usage().0;
        assert!(entry > a.memory_size() + file_bytes as usize, "{entry}");
        let tiny = MetadataCache::new(entry);
        tiny.load(&corpus("alltypes_plain.parquet")).unwrap();
        tiny.load(&corpus("alltypes_tiny_pages.parquet")).unwrap(); // larger than the capacity: not kept
        tiny.load(&corpus("alltypes_plain.parquet")).unwrap();
        assert_eq!(tiny.stats(), (1, 2));
    }

    /// What a footer read measures (its Arrow schema, size and layout) comes back with each
    /// hit as the miss measured it — the same values a fresh measure gives.
    #[test]
    fn a_hit_carries_what_the_miss_measured() {
        let cache = MetadataCache::new(1 << 30);
        for name in ["alltypes_plain.parquet", "alltypes_tiny_pages.parquet", "nested_structs.rust.parquet"] {
            let miss = cache.load_sparing(&corpus(name), 1 << 10, 1, None).unwrap();
            let hit = cache.load_sparing(&corpus(name), 1 << 10, 1, None).unwrap();
            assert!(Arc::ptr_eq(&miss.metadata, &hit.metadata), "{name}");
            let fresh = readable_arrow_schema(miss.metadata.file_metadata()).unwrap();
            for Loaded { measured, .. } in [&miss, &hit] {
                assert_eq!(measured.schema.as_deref().unwrap(), &fresh, "{name}");
                assert_eq!(measured.footer_bytes, miss.metadata.memory_size(), "{name}");
                assert_eq!(measured.layout, layout_fingerprint(&miss.metadata), "{name}");
            }
        }
        assert_eq!(cache.stats(), (3, 3));
    }

    #[test]
    fn a_lowered_bound_evicts_and_holds() {
        let cache = MetadataCache::new(1 << 30);
        cache.load(&corpus("alltypes_plain.parquet")).unwrap();
        cache.load(&corpus("alltypes_tiny_pages.parquet")).unwrap();
        let (held, bound) = cache.usage();
        assert!(held > 0 && bound == 1 << 30);
        assert_eq!(cache.set_capacity(0), 1 << 30);
        assert_eq!(cache.usage(), (0, 0));
        // Nothing is kept now: every load reads the footer again.
        cache.load(&corpus("alltypes_plain.parquet")).unwrap();
        cache.load(&corpus("alltypes_plain.parquet")).unwrap();
        assert_eq!(cache.stats(), (0, 4));
        assert_eq!(cache.usage(), (0, 0));
    }

    #[test]
    fn small_files_are_kept_whole_with_their_metadata() {
        let cache = MetadataCache::new(1 << 30);
        let small = corpus("alltypes_plain.parquet");
        let metadata = cache.load(&small).unwrap();
        let bytes = cache.small_file(&small, &metadata).expect("a small file's bytes");
        assert_eq!(bytes, std::fs::read(small.as_local().unwrap()).unwrap());
        let other = Arc::new((*metadata).clone());
        assert!(cache.small_file(&small, &other).is_none(), "only with the metadata read with them");
        let large = corpus("alltypes_tiny_pages.parquet"); // over SMALL_FILE_BYTES
        let metadata = cache.load(&large).unwrap();
        assert!(cache.small_file(&large, &metadata).is_none());
        let memory = FileSource::Memory(crate::storage::source::MemoryFile::new("m", bytes.clone()));
        use parquet::file::reader::ChunkReader;
        assert_eq!(memory.get_bytes(0, 4).unwrap(), &b"PAR1"[..]);
        assert!(memory.get_bytes(bytes.len() as u64 - 2, 4).is_err(), "past the end");
        assert_eq!(memory.bytes_read(), 4);
    }

    /// Six copies of one small file, of which the cache holds four: loaded in order twice,
    /// as a scan plans and then reads them. Plain LRU finds none the second time (each load
    /// evicts the one needed next); loads sparing the pass's epoch keep the first four.
    #[test]
    fn loads_sparing_an_epoch_keep_the_first_entries_of_a_pass_larger_than_the_cache() {
        let dir = std::env::temp_dir().join(format!("pqsift-mc-sparing-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let files: Vec<Location> = (0..6)
            .map(|i| {
                let path = dir.join(format!("f{i}.parquet"));
                std::fs::copy(corpus("alltypes_plain.parquet").as_local().unwrap(), &path).unwrap();
                Location::Local(path)
            })
            .collect();
        let entry = {
            let cache = MetadataCache::new(1 << 30);
            cache.load(&files[0]).unwrap();
            cache.usage().0
        };
        // Which files the second pass found cached.
        let second_pass_hits = |spare: bool| {
            let cache = MetadataCache::new(4 * entry + entry / 2);
            cache.load(&corpus("alltypes_plain.parquet")).unwrap(); // another scan's entry: may go
            let epoch = spare.then(|| cache.epoch());
            let load = |file: &Location| {
                let hits = cache.stats().0;
                cache.load_sparing(file, metadata::DEFAULT_METADATA_SIZE_HINT, 1, epoch).unwrap();
                cache.stats().0 > hits
            };
            files.iter().for_each(|file| assert!(!load(file)));
            files.iter().map(load).collect::<Vec<bool>>()
        };
        assert_eq!(second_pass_hits(false), [false; 6], "plain LRU: each entry evicted before its second load");
        assert_eq!(second_pass_hits(true), [true, true, true, true, false, false], "the first four kept");
    }

    #[test]
    fn a_rewritten_file_is_reloaded() {
        let dir = std::env::temp_dir().join(format!("pqsift-mc-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("f.parquet");
        let source = |name: &str| corpus(name).as_local().unwrap().to_path_buf();
        std::fs::copy(source("alltypes_plain.parquet"), &path).unwrap();
        let cache = MetadataCache::new(1 << 30);
        let first = cache.load(&Location::Local(path.clone())).unwrap();
        std::fs::copy(source("alltypes_tiny_pages.parquet"), &path).unwrap();
        let second = cache.load(&Location::Local(path.clone())).unwrap();
        assert_ne!(first.file_metadata().num_rows(), second.file_metadata().num_rows());
        assert_eq!(cache.stats(), (0, 2));
    }
}
