//! Where files live: local paths and object stores (S3, GCS, Azure), behind one
//! [`Location`] type, and the I/O a scan needs from either.
//!
//! A remote request costs tens of milliseconds whatever its size, so everything here is
//! built to make few of them and to make them at once:
//!
//! - [`local_file`]: local files opened only when regular, read with counted positioned
//!   reads.
//! - [`location`]: a path or URL, parsed with the scan's [`Storage`] (its options and
//!   metrics); the store is resolved once and carried along.
//! - [`options`]: a store client's options, never shown in messages.
//! - [`registry`]: one store client (connection pool, retries with backoff) per scheme,
//!   bucket and options, on one I/O runtime; every HTTP attempt is counted.
//! - [`store_metrics`]: requests, retries, bytes and time waiting, per scan.
//! - [`remote_file`]: ranged reads of one object, coalesced and concurrent
//!   ([`remote_file::RemoteFile::fetch`]), and [`remote_file::FetchedRanges`], the
//!   fetched bytes served to the parquet crate as a `ChunkReader`.
//! - [`source`]: [`FileSource`], a local file or a remote object, as the reader opens it;
//!   listing, stat and whole-object reads for tables and Delta logs.
//!
//! ```
//! use pqsift::storage::{Location, Storage};
//! let storage = Storage::default();
//! let local = Location::parse("data/events.parquet", &storage).unwrap();
//! assert!(!local.is_remote());
//! let remote = Location::parse("s3://bucket/events/", &storage).unwrap();
//! assert_eq!(remote.join("day=1/part-0.parquet").to_string(), "s3://bucket/events/day=1/part-0.parquet");
//! ```

pub mod local_file;
pub mod location;
pub mod options;
pub mod registry;
pub mod remote_file;
pub mod source;
pub mod store_metrics;

pub use location::{Location, Storage};
pub use options::StorageOptions;
pub use source::FileSource;
pub use store_metrics::StoreMetrics;
