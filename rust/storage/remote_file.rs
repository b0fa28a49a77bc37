//! Ranged reads of one object in a store.
//!
//! [`RemoteFile::fetch`] is the read path for column data: the byte ranges a row group's
//! decode needs (the pages holding selected rows, their dictionary pages) are coalesced
//! across pages and columns when the gap between them is below `gap` — a request costs
//! tens of milliseconds, reading 1 MiB more costs a few — ranges above
//! [`MAX_REQUEST_BYTES`] are split so that one large chunk still downloads on several
//! connections, and the requests run [`MAX_IN_FLIGHT`] at a time. The result,
//! [`FetchedRanges`], serves the parquet crate's page reads from memory, without copies.
//!
//! ```
//! use pqsift::storage::remote_file::plan_requests;
//! // Two pages 100 bytes apart are one request; a page 4 MiB further away is another.
//! let requests = plan_requests(&[0..1000, 1100..2000, (4 << 20)..(4 << 20) + 10], 1 << 20);
//! assert_eq!(requests, [0..2000, (4 << 20)..(4 << 20) + 10]);
//! ```
//!
//! Late materialization reads a row group in stages (each predicate's columns, then the
//! projection); from a store, the first stage fetches the pages of every predicate column
//! at once, so that the later predicates find them fetched (see
//! `FileReader::read_late_materialized`).

use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use bytes::{Bytes, BytesMut};
use futures_util::{StreamExt, TryStreamExt};
use object_store::{GetOptions, GetRange, ObjectStore, ObjectStoreExt};
use parquet::errors::ParquetError;
use parquet::file::reader::{ChunkReader, Length};

use super::location::{ObjectLocation, ObjectVersion};
use super::registry;
use crate::error::{PqsiftError, Result};
use crate::selection::scan_ranges::coalesce_ranges;

/// Default gap below which neighbouring ranges are fetched as one request. 1 MiB, as the
/// `object_store` crate's `get_ranges`: at ~50 MB/s per connection and ~20–50 ms per
/// request, skipping less than ~1 MiB saves less time than the extra request costs.
pub const DEFAULT_REMOTE_COALESCE_GAP: u64 = 1 << 20;
/// Requests larger than this are split, so that a large column chunk downloads on several
/// connections at once.
pub const MAX_REQUEST_BYTES: u64 = 8 << 20;
/// Requests in flight per fetch.
pub const MAX_IN_FLIGHT: usize = 16;

/// The requests for `ranges`: sorted, coalesced across gaps below `gap`, and split into
/// pieces of at most [`MAX_REQUEST_BYTES`].
pub fn plan_requests(ranges: &[Range<u64>], gap: u64) -> Vec<Range<u64>> {
    let mut out = Vec::new();
    for range in coalesce_ranges(ranges, gap) {
        let mut start = range.start;
        while start < range.end {
            let end = range.end.min(start + MAX_REQUEST_BYTES);
            out.push(start..end);
            start = end;
        }
    }
    out
}

/// One object of a store, opened: its size known (from a listing, or one `HEAD`).
#[derive(Clone)]
pub struct RemoteFile {
    object: ObjectLocation,
    url: Arc<str>,
    size: u64,
    /// Bytes fetched through this file and its clones.
    fetched: Arc<AtomicU64>,
}

impl std::fmt::Debug for RemoteFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "RemoteFile({}, {} bytes)", self.url, self.size)
    }
}

impl RemoteFile {
    /// Opens `object`: no request when its size is known, else a `HEAD`.
    pub fn open(object: &ObjectLocation) -> Result<Self> {
        let url: Arc<str> = super::Location::Object(object.clone()).to_string().into();
        if let Some(version) = object.version() {
            return Ok(Self { object: object.clone(), url, size: version.size, fetched: Arc::default() });
        }
        let version = head(object, &url)?;
        Ok(Self {
            size: version.size,
            object: object.with_key(object.key().clone(), Some(version)),
            url,
            fetched: Arc::default(),
        })
    }

    /// The object's URL.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Size and version.
    pub fn version(&self) -> Option<&ObjectVersion> {
        self.object.version()
    }

    /// Bytes fetched through this file and its clones so far.
    pub fn bytes_fetched(&self) -> u64 {
        self.fetched.load(Ordering::Relaxed)
    }

    /// Bytes `range`, in one request.
    pub fn get_range(&self, range: Range<u64>) -> Result<Bytes> {
        self.check_range(&range)?;
        let metrics = self.object.storage().metrics();
        metrics.add_bytes_requested(range.end - range.start);
        self.fetched.fetch_add(range.end - range.start, Ordering::Relaxed);
        let future = self.object.store().get_range(self.object.key(), range);
        run(&self.object, &self.url, future)
    }

    /// Bytes `ranges` (any order, overlaps allowed), fetched with [`plan_requests`] and
    /// up to [`MAX_IN_FLIGHT`] requests at once.
    pub fn fetch(&self, ranges: &[Range<u64>], gap: u64) -> Result<FetchedRanges> {
        for range in ranges {
            self.check_range(range)?;
        }
        let requests = plan_requests(ranges, gap);
        let metrics = self.object.storage().metrics();
        let total: u64 = requests.iter().map(|r| r.end - r.start).sum();
        metrics.add_bytes_requested(total);
        self.fetched.fetch_add(total, Ordering::Relaxed);
        let store = Arc::clone(self.object.store());
        let key = self.object.key().clone();
        let future = futures_util::stream::iter(requests.clone())
            .map(move |range| {
                let (store, key) = (Arc::clone(&store), key.clone());
                async move { store.get_range(&key, range).await }
            })
            .buffered(MAX_IN_FLIGHT)
            .try_collect::<Vec<Bytes>>();
        let pieces = run(&self.object, &self.url, future)?;
        let buffers = requests.into_iter().map(|r| r.start).zip(pieces).collect();
        Ok(FetchedRanges { file: self.clone(), buffers: Arc::new(buffers), error: Arc::default() })
    }

    /// The last `length` bytes of the object in one request, with the object's version;
    /// the object need not have been opened (its size comes with the answer).
    pub fn tail(object: &ObjectLocation, length: u64) -> Result<(RemoteFile, Range<u64>, Bytes)> {
        let url: Arc<str> = super::Location::Object(object.clone()).to_string().into();
        let store = Arc::clone(object.store());
        let key = object.key().clone();
        object.storage().metrics().add_bytes_requested(length);
        let future = async move {
            let options = GetOptions { range: Some(GetRange::Suffix(length)), ..Default::default() };
            let result = store.get_opts(&key, options).await?;
            let (meta, range) = (result.meta.clone(), result.range.clone());
            Ok::<_, object_store::Error>((meta, range, result.bytes().await?))
        };
        let (meta, range, bytes) = run(object, &url, future)?;
        let version = ObjectVersion::from(&meta);
        let file = RemoteFile {
            size: version.size,
            object: object.with_key(object.key().clone(), Some(version)),
            url,
            fetched: Arc::default(),
        };
        file.fetched.fetch_add(bytes.len() as u64, Ordering::Relaxed);
        Ok((file, range, bytes))
    }

    /// Already-fetched `bytes` at `start` of this object, served as [`FetchedRanges`].
    pub fn fetched_from(&self, start: u64, bytes: Bytes) -> FetchedRanges {
        FetchedRanges { file: self.clone(), buffers: Arc::new(vec![(start, bytes)]), error: Arc::default() }
    }

    fn check_range(&self, range: &Range<u64>) -> Result<()> {
        if range.start > range.end || range.end > self.size {
            return Err(PqsiftError::Storage {
                url: self.url.to_string(),
                reason: format!(
                    "read of bytes {}..{} passes the end of the object ({} bytes)",
                    range.start, range.end, self.size
                ),
                not_found: false,
            });
        }
        Ok(())
    }
}

/// Runs a store request on the I/O runtime, its errors named by `url`.
pub(crate) fn run<T>(
    object: &ObjectLocation,
    url: &str,
    future: impl Future<Output = object_store::Result<T>>,
) -> Result<T> {
    let storage = object.storage();
    registry::block_on(storage.metrics(), future)
        .map_err(|reason| PqsiftError::Storage { url: url.to_string(), reason, not_found: false })?
        .map_err(|e| store_error(url, storage.options(), e))
}

/// `HEAD` of an object: its size and version.
pub(crate) fn head(object: &ObjectLocation, url: &str) -> Result<ObjectVersion> {
    let store = Arc::clone(object.store());
    let key = object.key().clone();
    let meta = run(object, url, async move { store.head(&key).await })?;
    Ok(ObjectVersion::from(&meta))
}

/// An `object_store` error as a [`PqsiftError::Storage`] naming `url`, with every option
/// value that could be a credential blanked out.
pub(crate) fn store_error(url: &str, options: &super::StorageOptions, error: object_store::Error) -> PqsiftError {
    let (reason, not_found) = match &error {
        object_store::Error::NotFound { .. } => ("no such object".to_string(), true),
        object_store::Error::PermissionDenied { source, .. } => (format!("access denied ({source})"), false),
        object_store::Error::Unauthenticated { source, .. } => (format!("not authenticated ({source})"), false),
        other => (other.to_string(), false),
    };
    PqsiftError::Storage { url: url.to_string(), reason: options.redact(&reason), not_found }
}

/// Byte ranges of one object, fetched: the parquet crate's reads inside them are served
/// from memory (slices, no copy); a read outside them is one more request.
#[derive(Clone)]
pub struct FetchedRanges {
    file: RemoteFile,
    /// `(start, bytes)`, sorted, not overlapping.
    buffers: Arc<Vec<(u64, Bytes)>>,
    /// The first store error met by a read (the crate turns errors into text; the reader
    /// asks for the original with [`FetchedRanges::take_error`]).
    error: Arc<Mutex<Option<PqsiftError>>>,
}

impl std::fmt::Debug for FetchedRanges {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "FetchedRanges({}, {} buffers)", self.file.url, self.buffers.len())
    }
}

impl FetchedRanges {
    /// The bytes `start .. start + length`, from the buffers when they hold them
    /// (copied only when the range spans two requests' pieces).
    fn read(&self, start: u64, length: usize) -> Result<Bytes> {
        let end = start + length as u64;
        let first = self.buffers.partition_point(|(s, b)| s + b.len() as u64 <= start);
        if let Some((s, bytes)) = self.buffers.get(first)
            && *s <= start
        {
            if end <= s + bytes.len() as u64 {
                return Ok(bytes.slice((start - s) as usize..(end - s) as usize));
            }
            // Across contiguous pieces of a split request.
            let mut out = BytesMut::with_capacity(length);
            let mut position = start;
            for (s, bytes) in &self.buffers[first..] {
                if *s > position {
                    break; // a gap: not fetched
                }
                let from = (position - s) as usize;
                let to = ((end - s) as usize).min(bytes.len());
                out.extend_from_slice(&bytes[from..to]);
                position = s + to as u64;
                if position == end {
                    return Ok(out.freeze());
                }
            }
        }
        self.file.get_range(start..end)
    }

    /// The object's URL.
    pub fn url(&self) -> &str {
        &self.file.url
    }

    /// Bytes fetched through the object's file and its clones so far.
    pub fn bytes_fetched(&self) -> u64 {
        self.file.bytes_fetched()
    }

    /// Whether every one of `ranges` lies in the fetched bytes (reads of them need no
    /// request).
    pub fn covers(&self, ranges: &[Range<u64>]) -> bool {
        ranges.iter().all(|range| {
            let mut position = range.start;
            let first = self.buffers.partition_point(|(s, b)| s + b.len() as u64 <= position);
            for (s, bytes) in &self.buffers[first..] {
                if *s > position || position >= range.end {
                    break;
                }
                position = s + bytes.len() as u64;
            }
            position >= range.end
        })
    }

    /// The store error a failed read met, if any.
    pub fn take_error(&self) -> Option<PqsiftError> {
        self.error.lock().unwrap_or_else(|p| p.into_inner()).take()
    }

    fn record(&self, error: PqsiftError) -> ParquetError {
        let message = error.to_string();
        self.error.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert(error);
        ParquetError::General(message)
    }
}

impl Length for RemoteFile {
    fn len(&self) -> u64 {
        self.size
    }
}

impl Length for FetchedRanges {
    fn len(&self) -> u64 {
        self.file.size
    }
}

impl ChunkReader for FetchedRanges {
    type T = bytes::buf::Reader<Bytes>;

    /// A reader from `start` to the end of the fetched piece holding it (the crate reads a
    /// page header through it); one request up to the end of the chunk when no piece does.
    fn get_read(&self, start: u64) -> parquet::errors::Result<Self::T> {
        use bytes::Buf;
        let index = self.buffers.partition_point(|(s, b)| s + b.len() as u64 <= start);
        let bytes = match self.buffers.get(index) {
            Some((s, bytes)) if *s <= start => bytes.slice((start - s) as usize..),
            _ => {
                let end = (start + DEFAULT_REMOTE_COALESCE_GAP).min(self.file.size);
                self.file.get_range(start..end).map_err(|e| self.record(e))?
            }
        };
        Ok(bytes.reader())
    }

    fn get_bytes(&self, start: u64, length: usize) -> parquet::errors::Result<Bytes> {
        self.read(start, length).map_err(|e| self.record(e))
    }
}
