//! A file opened for reading wherever it lives, and the few other operations tables need:
//! whether a location is a file or a directory, listing, whole-object reads.
//!
//! ```
//! # let dir = std::env::temp_dir().join("pqsift_source_doc");
//! # std::fs::create_dir_all(dir.join("sub")).unwrap();
//! # std::fs::write(dir.join("sub/a.txt"), b"hello").unwrap();
//! use pqsift::storage::{source, FileSource, Location, Storage};
//! let dir = Location::parse(dir.to_str().unwrap(), &Storage::default()).unwrap();
//! assert_eq!(source::stat(&dir).unwrap(), Some(source::Entry::Directory));
//! let file = dir.join("sub/a.txt");
//! assert_eq!(&source::read_all(&file).unwrap()[..], b"hello");
//! assert_eq!(source::list_recursive(&dir, &|_| false).unwrap(), [file.clone()]);
//! use parquet::file::reader::ChunkReader;
//! assert_eq!(&FileSource::open(&file).unwrap().get_bytes(1, 3).unwrap()[..], b"ell");
//! ```

use std::io::Read;
use std::ops::Range;
use std::sync::Arc;

use bytes::Bytes;
use futures_util::{StreamExt, TryStreamExt};
use object_store::{ObjectStore, ObjectStoreExt};
use parquet::file::reader::{ChunkReader, Length};

use super::location::{Location, ObjectLocation, ObjectVersion};
use super::registry;
use super::remote_file::{FetchedRanges, RemoteFile, run, store_error};
use crate::error::{PqsiftError, Result};
use crate::storage::local_file::{CountingFile, PositionedReader};

/// A file opened for reading: a local file (positioned reads), a remote object (one
/// request per read), or a remote object's fetched ranges (see
/// [`RemoteFile::fetch`](super::remote_file::RemoteFile::fetch)).
#[derive(Debug, Clone)]
pub enum FileSource {
    /// A local file.
    Local(CountingFile),
    /// An object in a store.
    Remote(RemoteFile),
    /// Ranges of an object, fetched ahead of the reads.
    Fetched(FetchedRanges),
    /// A whole (small) file already in memory.
    Memory(MemoryFile),
}

/// A whole file in memory (read with its footer: see
/// [`MetadataCache::small_file`](crate::format::metadata_cache::MetadataCache::small_file)),
/// counting the bytes read from it as a local file does.
#[derive(Debug, Clone)]
pub struct MemoryFile {
    name: Arc<str>,
    bytes: Bytes,
    bytes_read: Arc<std::sync::atomic::AtomicU64>,
}

impl MemoryFile {
    /// The file named `name` (its path or URL, for messages) holding `bytes`.
    pub fn new(name: &str, bytes: Bytes) -> Self {
        Self { name: Arc::from(name), bytes, bytes_read: Arc::default() }
    }

    /// Bytes `start..start + length`, counted as read when `counted` (a page header read
    /// through [`ChunkReader::get_read`] takes the rest of the file but reads a few bytes).
    fn slice(&self, start: u64, length: usize, counted: bool) -> parquet::errors::Result<Bytes> {
        let start = usize::try_from(start).unwrap_or(usize::MAX);
        let end = start.checked_add(length).filter(|&end| end <= self.bytes.len()).ok_or_else(|| {
            parquet::errors::ParquetError::EOF(format!(
                "{}: read of {length} bytes at offset {start} passes the end of the file ({} bytes)",
                self.name,
                self.bytes.len()
            ))
        })?;
        if counted {
            self.bytes_read.fetch_add(length as u64, std::sync::atomic::Ordering::Relaxed);
        }
        Ok(self.bytes.slice(start..end))
    }
}

impl FileSource {
    /// Opens `location` (for a remote object: no request when its size is known).
    pub fn open(location: &Location) -> Result<Self> {
        match location {
            Location::Local(path) => Ok(Self::Local(CountingFile::open(path)?)),
            Location::Object(object) => Ok(Self::Remote(RemoteFile::open(object)?)),
        }
    }

    /// The path or URL, for messages.
    pub fn name(&self) -> String {
        match self {
            Self::Local(file) => file.path().display().to_string(),
            Self::Remote(file) => file.url().to_string(),
            Self::Fetched(fetched) => fetched.url().to_string(),
            Self::Memory(file) => file.name.to_string(),
        }
    }

    /// Bytes read (local) or fetched (remote) through this file and its clones.
    pub fn bytes_read(&self) -> u64 {
        match self {
            Self::Local(file) => file.bytes_read(),
            Self::Remote(file) => file.bytes_fetched(),
            Self::Fetched(fetched) => fetched.bytes_fetched(),
            Self::Memory(file) => file.bytes_read.load(std::sync::atomic::Ordering::Relaxed),
        }
    }

    /// A source whose reads of `ranges` need no further request: for a remote object, the
    /// ranges fetched now (coalesced across gaps below `gap`, concurrently); a local file
    /// reads as fast on demand, and is returned as it is.
    pub fn prefetch(&self, ranges: &[Range<u64>], gap: u64) -> Result<Self> {
        match self {
            Self::Local(_) | Self::Fetched(_) | Self::Memory(_) => Ok(self.clone()),
            Self::Remote(file) => Ok(Self::Fetched(file.fetch(ranges, gap)?)),
        }
    }

    /// Bytes `range`, checked against the file's length; errors name the file (a store's
    /// error as the store reported it).
    pub fn read(&self, range: Range<u64>) -> Result<Bytes> {
        if range.start > range.end || range.end > self.len() {
            let reason =
                format!("bytes {}..{} pass the end of the file ({} bytes)", range.start, range.end, self.len());
            return Err(match self {
                Self::Local(_) | Self::Memory(_) => PqsiftError::io(&self.name(), reason),
                _ => PqsiftError::Storage { url: self.name(), reason, not_found: false },
            });
        }
        self.get_bytes(range.start, (range.end - range.start) as usize)
            .map_err(|e| self.take_error().unwrap_or_else(|| read_error(&self.name(), e)))
    }

    /// The store error a read met, when the parquet crate reported it as text.
    pub fn take_error(&self) -> Option<PqsiftError> {
        match self {
            Self::Fetched(fetched) => fetched.take_error(),
            _ => None,
        }
    }
}

impl Length for FileSource {
    fn len(&self) -> u64 {
        match self {
            Self::Local(file) => file.len(),
            Self::Remote(file) => file.len(),
            Self::Fetched(fetched) => fetched.len(),
            Self::Memory(file) => file.bytes.len() as u64,
        }
    }
}

/// The reader [`FileSource::get_read`] returns.
pub enum SourceRead {
    /// Positioned reads of a local file.
    Local(std::io::BufReader<PositionedReader>),
    /// Bytes in memory.
    Bytes(bytes::buf::Reader<Bytes>),
}

impl Read for SourceRead {
    fn read(&mut self, buffer: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Self::Local(reader) => reader.read(buffer),
            Self::Bytes(reader) => reader.read(buffer),
        }
    }
}

impl ChunkReader for FileSource {
    type T = SourceRead;

    fn get_read(&self, start: u64) -> parquet::errors::Result<Self::T> {
        match self {
            Self::Local(file) => file.get_read(start).map(SourceRead::Local),
            Self::Remote(file) => {
                use bytes::Buf;
                let end = (start + super::remote_file::DEFAULT_REMOTE_COALESCE_GAP).min(file.len());
                let bytes = file
                    .get_range(start..end.max(start))
                    .map_err(|e| parquet::errors::ParquetError::External(Box::new(e)))?;
                Ok(SourceRead::Bytes(bytes.reader()))
            }
            Self::Fetched(fetched) => fetched.get_read(start).map(SourceRead::Bytes),
            Self::Memory(file) => {
                use bytes::Buf;
                let rest = file.bytes.len().saturating_sub(usize::try_from(start).unwrap_or(usize::MAX));
                Ok(SourceRead::Bytes(file.slice(start, rest, false)?.reader()))
            }
        }
    }

    fn get_bytes(&self, start: u64, length: usize) -> parquet::errors::Result<Bytes> {
        match self {
            Self::Local(file) => file.get_bytes(start, length),
            Self::Remote(file) => file
                .get_range(start..start + length as u64)
                .map_err(|e| parquet::errors::ParquetError::External(Box::new(e))),
            Self::Fetched(fetched) => fetched.get_bytes(start, length),
            Self::Memory(file) => file.slice(start, length, true),
        }
    }
}

/// What is at a location.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    /// A file (object) of this size and version (local files: size only).
    File(ObjectVersion),
    /// A directory (for a store: a prefix with objects below it).
    Directory,
}

/// What is at `location`, `None` when nothing is. For a store, a `HEAD`, then (nothing
/// there) a listing to tell a prefix from nothing.
pub fn stat(location: &Location) -> Result<Option<Entry>> {
    Ok(stat_table(location, None)?.entry)
}

/// What [`stat_table`] found at a table's location.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableProbe {
    /// What is there; `None` when nothing is.
    pub entry: Option<Entry>,
    /// Whether the directory `child` asked about is below it (a Delta table's `_delta_log`).
    pub has_child: bool,
    /// For a store's directory without `child`: every object below it, with its size and
    /// version — the recursive listing that told whether `child` is there, so that listing
    /// the table costs no round trip of its own. `None` for a local directory, a file, or
    /// nothing.
    pub listed: Option<Vec<Location>>,
}

/// [`stat`], whether the directory `child` below `location` exists (a Delta table's
/// `_delta_log`) and, for a store's directory, what is below it. From a store: the
/// recursive listing, watched for keys below `child` (`watched_listing`), one request for
/// a small table: when `child` is there, the listing is dropped unfinished (a table with a
/// log is not listed); when it is not, that listing is the table's. Whether the URL is an
/// object is asked by a `HEAD` — first and alone for a name with an extension (`part-0.parquet`: one request),
/// with the listings for any other name (`s3://bucket/events`, a table written without its
/// slash: one round trip), not at all for a URL written as a prefix (`s3://bucket/events/`).
pub fn stat_table(location: &Location, child: Option<&str>) -> Result<TableProbe> {
    match location {
        Location::Local(path) => {
            let entry = match std::fs::metadata(path) {
                Ok(metadata) if metadata.is_dir() => Some(Entry::Directory),
                Ok(metadata) => {
                    Some(Entry::File(ObjectVersion { size: metadata.len(), e_tag: None, last_modified_ns: 0 }))
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
                Err(e) => return Err(PqsiftError::io(path, e)),
            };
            let has_child = entry == Some(Entry::Directory) && child.is_some_and(|c| path.join(c).is_dir());
            Ok(TableProbe { entry, has_child, listed: None })
        }
        Location::Object(object) => {
            let url = location.to_string();
            let store = Arc::clone(object.store());
            let key = object.key().clone();
            let child_key = child.map(|c| location.join(c)).and_then(|l| l.as_object().map(|o| o.key().clone()));
            let may_be_object = !key.as_ref().is_empty() && !object.is_prefix();
            // A name with an extension is most likely an object: asked alone, one request.
            // Any other (a table's directory written without its slash) is asked with the
            // listings, all in one round trip, and the listings dropped if it is an object.
            let head_with_listings = may_be_object && !key.filename().is_some_and(|name| name.contains('.'));
            if may_be_object && !head_with_listings {
                match super::remote_file::head(object, &url) {
                    Ok(version) => {
                        return Ok(TableProbe { entry: Some(Entry::File(version)), has_child: false, listed: None });
                    }
                    Err(PqsiftError::Storage { not_found: true, .. }) => {}
                    Err(other) => return Err(other),
                }
            }
            let attempts = listing_attempts(object);
            let head_key = head_with_listings.then(|| key.clone());
            let prefix = (!key.as_ref().is_empty()).then_some(key);
            let head_store = Arc::clone(&store);
            let future = async move {
                // `None`: the child is there, and what is below does not matter.
                let listed = async {
                    match &child_key {
                        Some(child) => retried(attempts, || watched_listing(&store, prefix.as_ref(), child)).await,
                        None => {
                            retried(attempts, || store.list(prefix.as_ref()).try_collect::<Vec<_>>()).await.map(Some)
                        }
                    }
                };
                let head = async {
                    match &head_key {
                        Some(key) => match head_store.head(key).await {
                            Ok(meta) => Ok(Some(meta)),
                            Err(object_store::Error::NotFound { .. }) => Ok(None),
                            Err(other) => Err(other),
                        },
                        None => Ok(None),
                    }
                };
                futures_util::pin_mut!(head, listed);
                // An object there is the answer, whatever the listings would say.
                match futures_util::future::select(head, listed).await {
                    futures_util::future::Either::Left((head, listed)) => match head? {
                        Some(meta) => Ok(Probed::Object(meta)),
                        None => Ok(Probed::Listed(listed.await?)),
                    },
                    futures_util::future::Either::Right((listed, head)) => match head.await? {
                        Some(meta) => Ok(Probed::Object(meta)),
                        None => Ok(Probed::Listed(listed?)),
                    },
                }
            };
            Ok(match run(object, &url, future)? {
                Probed::Object(meta) => {
                    TableProbe { entry: Some(Entry::File(ObjectVersion::from(&meta))), has_child: false, listed: None }
                }
                Probed::Listed(None) => TableProbe { entry: Some(Entry::Directory), has_child: true, listed: None },
                Probed::Listed(Some(below)) if below.is_empty() => {
                    TableProbe { entry: None, has_child: false, listed: None }
                }
                Probed::Listed(Some(below)) => TableProbe {
                    entry: Some(Entry::Directory),
                    has_child: false,
                    listed: Some(below.iter().map(|meta| remote(object, meta)).collect()),
                },
            })
        }
    }
}

/// What probing a store's location found (see [`stat_table`]).
enum Probed {
    /// An object.
    Object(object_store::ObjectMeta),
    /// The listings: `None` when the child is there, else what is below.
    Listed(Option<Vec<object_store::ObjectMeta>>),
}

/// Keys a store's listing answers in one request (S3's and GCS's page).
const LISTING_PAGE: usize = 1000;

/// The recursive listing of `prefix`, watched for keys below `child`: `None` as soon as
/// one comes (the listing dropped unfinished), else everything below `prefix`. A small
/// table's first page settles it, so probing for a Delta log costs no request of its own;
/// when a page of keys has come without settling it (a large table, or one whose files
/// sort before the child), the child is asked about directly while the rest comes, so a
/// large Delta table is not listed to its end. No listing order is assumed.
async fn watched_listing(
    store: &Arc<dyn ObjectStore>,
    prefix: Option<&object_store::path::Path>,
    child: &object_store::path::Path,
) -> object_store::Result<Option<Vec<object_store::ObjectMeta>>> {
    let below_child = |meta: &object_store::ObjectMeta| {
        meta.location.prefix_match(child).is_some_and(|mut rest| rest.next().is_some())
    };
    let mut stream = store.list(prefix);
    let mut below = Vec::new();
    while below.len() < LISTING_PAGE {
        match stream.try_next().await? {
            None => return Ok(Some(below)),
            Some(meta) if below_child(&meta) => return Ok(None),
            Some(meta) => below.push(meta),
        }
    }
    let rest = async move {
        while let Some(meta) = stream.try_next().await? {
            if below_child(&meta) {
                return Ok(None);
            }
            below.push(meta);
        }
        Ok::<_, object_store::Error>(Some(below))
    };
    let has_child = async {
        let listed = store.list_with_delimiter(Some(child)).await?;
        Ok::<_, object_store::Error>(!listed.objects.is_empty() || !listed.common_prefixes.is_empty())
    };
    futures_util::pin_mut!(rest, has_child);
    match futures_util::future::select(has_child, rest).await {
        futures_util::future::Either::Left((has_child, rest)) => match has_child? {
            true => Ok(None),
            false => rest.await,
        },
        futures_util::future::Either::Right((rest, has_child)) => match rest? {
            None => Ok(None),
            Some(below) => Ok((!has_child.await?).then_some(below)),
        },
    }
}

/// Every file below the directory `dir`, recursively, in location order (remote ones with
/// their sizes and versions, so that opening them needs no request), leaving out those
/// with a part of their path below `dir` that `left_out` says to (a local walk does not
/// enter such directories). Symbolic links are followed.
pub fn list_recursive(dir: &Location, left_out: &dyn Fn(&str) -> bool) -> Result<Vec<Location>> {
    let mut found = Vec::new();
    match dir {
        Location::Local(path) => {
            let mut pending = vec![path.clone()];
            while let Some(next) = pending.pop() {
                crate::interrupt::check()?;
                for entry in std::fs::read_dir(&next).map_err(|e| PqsiftError::os(&next, &e))? {
                    let entry = entry.map_err(|e| PqsiftError::os(&next, &e))?;
                    if left_out(&entry.file_name().to_string_lossy()) {
                        continue;
                    }
                    let path = entry.path();
                    let metadata = std::fs::metadata(&path).map_err(|e| PqsiftError::os(&path, &e))?;
                    if metadata.is_dir() {
                        pending.push(path);
                    } else {
                        found.push(Location::Local(path));
                    }
                }
            }
        }
        Location::Object(object) => {
            let store = Arc::clone(object.store());
            let key = object.key().clone();
            let prefix = (!key.as_ref().is_empty()).then_some(key);
            let attempts = listing_attempts(object);
            let metas = run(object, &dir.to_string(), async move {
                retried(attempts, || store.list(prefix.as_ref()).try_collect::<Vec<_>>()).await
            })?;
            return Ok(kept_below(dir, metas.iter().map(|meta| remote(object, meta)).collect(), left_out));
        }
    }
    found.sort();
    Ok(found)
}

/// Of the objects `listed` below the directory `dir` (a recursive listing), those with no
/// part of their path below `dir` that `left_out` says to leave out, in location order.
pub fn kept_below(dir: &Location, listed: Vec<Location>, left_out: &dyn Fn(&str) -> bool) -> Vec<Location> {
    let mut kept: Vec<Location> = listed
        .into_iter()
        .filter(|file| file.components_below(dir).is_some_and(|parts| !parts.iter().any(|part| left_out(part))))
        .collect();
    kept.sort();
    kept
}

/// The files directly in the directory `dir` (one level), with their sizes and
/// modification times, in location order. A missing local directory is an error; a
/// prefix with nothing below it, an empty list.
pub fn list_files(dir: &Location) -> Result<Vec<(Location, ObjectVersion)>> {
    let mut found = Vec::new();
    match dir {
        Location::Local(path) => {
            for entry in std::fs::read_dir(path).map_err(|e| PqsiftError::os(path, &e))? {
                let entry = entry.map_err(|e| PqsiftError::os(path, &e))?;
                let metadata = std::fs::metadata(entry.path()).map_err(|e| PqsiftError::os(&entry.path(), &e))?;
                if metadata.is_file() {
                    let modified = metadata.modified().ok().and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok());
                    let last_modified_ns = modified.map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX));
                    found.push((
                        Location::Local(entry.path()),
                        ObjectVersion { size: metadata.len(), e_tag: None, last_modified_ns },
                    ));
                }
            }
        }
        Location::Object(object) => {
            let store = Arc::clone(object.store());
            let key = object.key().clone();
            let attempts = listing_attempts(object);
            let listing = run(object, &dir.to_string(), async move {
                retried(attempts, || store.list_with_delimiter(Some(&key))).await
            })?;
            found.extend(listing.objects.iter().map(|meta| (remote(object, meta), ObjectVersion::from(meta))));
        }
    }
    found.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(found)
}

/// The names of the files directly in `dir`, sorted — a listing that needs no size nor
/// time (a local directory's entries are not each stat'ed; symbolic links are followed).
pub fn list_file_names(dir: &Location) -> Result<Vec<String>> {
    match dir {
        Location::Local(path) => {
            let mut names = Vec::new();
            for entry in std::fs::read_dir(path).map_err(|e| PqsiftError::os(path, &e))? {
                let entry = entry.map_err(|e| PqsiftError::os(path, &e))?;
                let file_type = entry.file_type().map_err(|e| PqsiftError::os(&entry.path(), &e))?;
                let is_file = match file_type.is_symlink() {
                    true => std::fs::metadata(entry.path()).is_ok_and(|m| m.is_file()),
                    false => file_type.is_file(),
                };
                if is_file && let Some(name) = entry.file_name().to_str() {
                    names.push(name.to_string());
                }
            }
            names.sort();
            Ok(names)
        }
        Location::Object(_) => Ok(list_files(dir)?.into_iter().filter_map(|(file, _)| file.file_name()).collect()),
    }
}

/// The whole file at `location`.
pub fn read_all(location: &Location) -> Result<Bytes> {
    match location {
        Location::Local(path) => {
            let (mut file, len) = crate::storage::local_file::open_regular_file(path)?;
            let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
            file.read_to_end(&mut bytes).map_err(|e| PqsiftError::os(path, &e))?;
            Ok(Bytes::from(bytes))
        }
        Location::Object(object) => {
            let store = Arc::clone(object.store());
            let key = object.key().clone();
            let bytes = run(object, &location.to_string(), async move { store.get(&key).await?.bytes().await })?;
            object.storage().metrics().add_bytes_requested(bytes.len() as u64);
            Ok(bytes)
        }
    }
}

/// Several whole files, read concurrently from a store (in order).
pub fn read_many(locations: &[Location]) -> Result<Vec<Bytes>> {
    let Some(object) = locations.iter().find_map(Location::as_object) else {
        return locations.iter().map(read_all).collect();
    };
    let futures = locations.iter().map(|location| {
        let location = location.clone();
        async move {
            match &location {
                Location::Object(object) => {
                    let result = async { object.store().get(object.key()).await?.bytes().await }.await;
                    result.map_err(|e| store_error(&location.to_string(), object.storage().options(), e))
                }
                Location::Local(_) => read_all(&location),
            }
        }
    });
    let stream =
        futures_util::stream::iter(futures).buffered(super::remote_file::MAX_IN_FLIGHT).try_collect::<Vec<Bytes>>();
    let bytes = registry::block_on(object.storage().metrics(), stream).map_err(|reason| PqsiftError::Storage {
        url: locations[0].to_string(),
        reason,
        not_found: false,
    })??;
    object.storage().metrics().add_bytes_requested(bytes.iter().map(|b| b.len() as u64).sum());
    Ok(bytes)
}

/// How many times a listing is tried: the store's `max_retries`, and once.
fn listing_attempts(object: &ObjectLocation) -> u32 {
    // The store was built with these options: they parse.
    let retries = registry::max_retries(object.storage().options()).unwrap_or_default();
    u32::try_from(retries).unwrap_or(u32::MAX).saturating_add(1)
}

/// `list()` run to completion, again (after a backoff from 50 ms, doubling, at most 2 s)
/// while its response broke off, up to `attempts` times in all. The object store crate
/// retries a LIST whose request fails (5xx, a reset before the response) but not one whose
/// body is cut short after a `200`; a listing is idempotent, so it is asked again whole.
async fn retried<T, F, Fut>(attempts: u32, mut list: F) -> object_store::Result<T>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = object_store::Result<T>>,
{
    let mut backoff = std::time::Duration::from_millis(50);
    let mut attempt = 1;
    loop {
        match list().await {
            Err(error) if attempt < attempts && cut_short(&error) => {
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(std::time::Duration::from_secs(2));
                attempt += 1;
            }
            result => return result,
        }
    }
}

/// Whether `error` is a response that broke off: an HTTP error of the kinds the crate
/// retries on an idempotent request (the connection closed or reset mid-body, a timeout).
fn cut_short(error: &object_store::Error) -> bool {
    use object_store::client::{HttpError, HttpErrorKind};
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(current) = source {
        if let Some(http) = current.downcast_ref::<HttpError>() {
            return matches!(http.kind(), HttpErrorKind::Request | HttpErrorKind::Interrupted | HttpErrorKind::Timeout);
        }
        source = current.source();
    }
    false
}

/// A read error of [`FileSource`] as the [`PqsiftError`] it carries (a store's), or as an
/// I/O error on `name`.
fn read_error(name: &str, error: parquet::errors::ParquetError) -> PqsiftError {
    match error {
        parquet::errors::ParquetError::External(inner) => match inner.downcast::<PqsiftError>() {
            Ok(error) => *error,
            Err(other) => PqsiftError::io(name, other),
        },
        other => PqsiftError::io(name, other),
    }
}

fn remote(object: &ObjectLocation, meta: &object_store::ObjectMeta) -> Location {
    Location::Object(object.with_key(meta.location.clone(), Some(ObjectVersion::from(meta))))
}
