//! A file's location: a local path, or an object in a store named by a URL.
//!
//! Sources are parsed with a [`Storage`]: the scan's storage options (credentials,
//! endpoint, retries) and its [`StoreMetrics`]. A remote location carries its store client
//! from then on, so that a directory listed, a file joined onto a Delta table's root or a
//! path handed to a Spark task opens with the same options and counts into the same
//! metrics, without the options travelling through every function.
//!
//! ```
//! use pqsift::storage::{Location, Storage, StorageOptions};
//! let storage = Storage::new(StorageOptions::from_pairs([("aws_region", "eu-west-1")]));
//! let table = Location::parse("s3a://bucket/warehouse/events", &storage).unwrap();
//! let file = table.join("day=2026-01-01/part 0.parquet");
//! assert_eq!(file.to_string(), "s3://bucket/warehouse/events/day=2026-01-01/part 0.parquet");
//! assert_eq!(file.components_below(&table).unwrap(), ["day=2026-01-01", "part 0.parquet"]);
//! assert_eq!(file.parent().unwrap().file_name().unwrap(), "day=2026-01-01");
//! assert!(Location::parse("ftp://host/x", &storage).is_err());
//! // A key with `%` (Spark's escaped partition values) prints as a URL that parses back to it.
//! let escaped = table.join("kind=a%2Fb/x#1.parquet");
//! assert_eq!(escaped.to_string(), "s3://bucket/warehouse/events/kind=a%252Fb/x%231.parquet");
//! assert_eq!(Location::parse(&escaped.to_string(), &storage).unwrap(), escaped);
//! ```

use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use object_store::path::{Path as ObjectPath, PathPart};
use object_store::{ObjectStore, ObjectStoreScheme};
use url::Url;

use super::options::StorageOptions;
use super::registry;
use super::store_metrics::StoreMetrics;
use crate::error::{PqsiftError, Result};

/// The storage context of a scan: the options its object store clients are built with,
/// and the metrics its requests count into. Cloning shares the metrics.
#[derive(Debug, Clone, Default)]
pub struct Storage {
    options: Arc<StorageOptions>,
    metrics: Arc<StoreMetrics>,
}

impl Storage {
    /// A context with `options` and fresh metrics.
    pub fn new(options: StorageOptions) -> Self {
        Self { options: Arc::new(options), metrics: Arc::default() }
    }

    /// The options.
    pub fn options(&self) -> &StorageOptions {
        &self.options
    }

    /// The metrics every request made through this context counts into.
    pub fn metrics(&self) -> &Arc<StoreMetrics> {
        &self.metrics
    }
}

/// What a listing or a request told about an object: enough to open it without asking
/// again, and to tell a rewritten object from the one cached.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ObjectVersion {
    /// Size in bytes.
    pub size: u64,
    /// The entity tag, when the store gives one.
    pub e_tag: Option<String>,
    /// Last modification, nanoseconds since the epoch.
    pub last_modified_ns: i64,
}

impl From<&object_store::ObjectMeta> for ObjectVersion {
    fn from(meta: &object_store::ObjectMeta) -> Self {
        Self {
            size: meta.size,
            e_tag: meta.e_tag.clone(),
            last_modified_ns: meta.last_modified.timestamp_nanos_opt().unwrap_or_default(),
        }
    }
}

/// Characters of a key written percent-encoded in its URL.
const URL_RESERVED: &percent_encoding::AsciiSet = &percent_encoding::CONTROLS.add(b'%').add(b'#').add(b'?');

/// An object in a store: the store's root URL (`s3://bucket`), the object's key, and the
/// client and context to reach it with.
#[derive(Clone)]
pub struct ObjectLocation {
    root: Arc<str>,
    key: ObjectPath,
    store: Arc<dyn ObjectStore>,
    storage: Storage,
    version: Option<ObjectVersion>,
    /// Written with a trailing `/`: a prefix, not an object (saves asking the store).
    prefix: bool,
}

impl ObjectLocation {
    /// Whether the URL was written as a prefix (`s3://bucket/events/`).
    pub fn is_prefix(&self) -> bool {
        self.prefix
    }

    /// The object's key in its store.
    pub fn key(&self) -> &ObjectPath {
        &self.key
    }

    /// The store client.
    pub fn store(&self) -> &Arc<dyn ObjectStore> {
        &self.store
    }

    /// The scan's storage context.
    pub fn storage(&self) -> &Storage {
        &self.storage
    }

    /// Size and version, when a listing or an earlier request gave them.
    pub fn version(&self) -> Option<&ObjectVersion> {
        self.version.as_ref()
    }

    /// The object at `key` in the same store.
    pub(crate) fn with_key(&self, key: ObjectPath, version: Option<ObjectVersion>) -> Self {
        Self { key, version, prefix: false, ..self.clone() }
    }

    /// `root/key`, with the characters a URL reads otherwise (`%`, `#`, `?`, controls)
    /// percent-encoded, so that [`Location::parse`] of the text is this object again.
    fn url(&self) -> String {
        if self.key.as_ref().is_empty() {
            return format!("{}/", self.root);
        }
        let key = percent_encoding::utf8_percent_encode(self.key.as_ref(), URL_RESERVED);
        format!("{}/{key}", self.root)
    }
}

/// A local path or an object store URL (see the module documentation).
#[derive(Clone)]
pub enum Location {
    /// A path on the local file system.
    Local(PathBuf),
    /// An object in a store.
    Object(ObjectLocation),
}

impl crate::error::Subject for Location {
    fn subject(&self) -> String {
        crate::error::quoted(&self.to_string()).into_owned()
    }
}

impl Location {
    /// An I/O error on this location: a local file's, or a store's.
    pub(crate) fn io_error(&self, error: impl std::fmt::Display) -> PqsiftError {
        match self {
            Self::Local(path) => PqsiftError::io(path, error),
            remote => PqsiftError::Storage { url: remote.to_string(), reason: error.to_string(), not_found: false },
        }
    }

    /// Nothing at this location: for a store [`PqsiftError::Storage`] (not found) with
    /// `remote_reason`, for a local path the operating system's words.
    pub(crate) fn not_found(&self, remote_reason: &str) -> PqsiftError {
        match self {
            // The operating system's words ("No such file or directory"), as opening it says.
            Self::Local(path) => PqsiftError::os(path, &not_found_error()),
            remote => {
                PqsiftError::Storage { url: remote.to_string(), reason: remote_reason.to_string(), not_found: true }
            }
        }
    }

    /// Parses `text`: a URL with a scheme the stores know (`s3://`, `s3a://`, `gs://`,
    /// `az://`, `abfs(s)://`, `azure://`, `file://`) or a local path. A URL's path is
    /// percent-decoded into the object key (`s3://b/a%20b` is the key `a b`), as the
    /// `object_store` crate, Polars and delta-rs read URLs. The store client is built (or
    /// reused) with `storage`'s options now, so a bad option fails here, naming it.
    pub fn parse(text: &str, storage: &Storage) -> Result<Self> {
        let Some((scheme, _)) = text.split_once("://") else {
            return Ok(Self::Local(PathBuf::from(text)));
        };
        let bad = |reason: String| PqsiftError::Storage { url: text.to_string(), reason, not_found: false };
        if !scheme.chars().all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c)) {
            return Ok(Self::Local(PathBuf::from(text)));
        }
        let url = Url::parse(text).map_err(|e| bad(format!("not a valid URL ({e})")))?;
        let (kind, key) = ObjectStoreScheme::parse(&url)
            .map_err(|_| bad(format!("unknown scheme {scheme:?}: use s3://, gs://, az://, abfss:// or file://")))?;
        match kind {
            ObjectStoreScheme::Local => {
                let path = url.to_file_path().map_err(|_| bad("not a local file URL".into()))?;
                Ok(Self::Local(path))
            }
            ObjectStoreScheme::AmazonS3 | ObjectStoreScheme::GoogleCloudStorage | ObjectStoreScheme::MicrosoftAzure => {
                let root = store_root(&url, &key);
                let store = registry::store_for(&url, kind, storage.options())
                    .map_err(|e| bad(storage.options().redact(&e)))?;
                // `s3a://` (Hadoop's name) is the same store as `s3://`.
                let root = root.strip_prefix("s3a://").map(|rest| format!("s3://{rest}")).unwrap_or(root);
                let prefix = url.path().ends_with('/');
                Ok(Self::Object(ObjectLocation {
                    root: root.into(),
                    key,
                    store,
                    storage: storage.clone(),
                    version: None,
                    prefix,
                }))
            }
            _ => Err(bad(format!("unknown scheme {scheme:?}: use s3://, gs://, az://, abfss:// or file://"))),
        }
    }

    /// `path` as a user gave it: a URL when it has a scheme (see [`Location::parse`]), else
    /// a local path, kept as it is (non-UTF-8 names included).
    pub fn from_user(path: &Path, storage: &Storage) -> Result<Self> {
        match path.to_str() {
            Some(text) if text.contains("://") => Self::parse(text, storage),
            _ => Ok(Self::Local(path.to_path_buf())),
        }
    }

    /// Whether the location is in an object store.
    pub fn is_remote(&self) -> bool {
        matches!(self, Self::Object(_))
    }

    /// The local path, for a local location.
    pub fn as_local(&self) -> Option<&Path> {
        match self {
            Self::Local(path) => Some(path),
            Self::Object(_) => None,
        }
    }

    /// The object, for a remote location.
    pub fn as_object(&self) -> Option<&ObjectLocation> {
        match self {
            Self::Local(_) => None,
            Self::Object(object) => Some(object),
        }
    }

    /// `relative` (parts separated by `/`) below this location.
    pub fn join(&self, relative: &str) -> Location {
        match self {
            Self::Local(path) => Self::Local(path.join(relative)),
            Self::Object(object) => {
                let mut key = object.key.clone();
                for part in relative.split('/').filter(|p| !p.is_empty()) {
                    // Kept as it is (`%` included): a key is not a URL. Only parts the
                    // crate cannot hold raw (control characters, `.`, `..`) are encoded.
                    key = match PathPart::parse(part) {
                        Ok(raw) => key.join(raw),
                        Err(_) => key.join(part),
                    };
                }
                Self::Object(object.with_key(key, None))
            }
        }
    }

    /// The directory (or prefix) holding this location.
    pub fn parent(&self) -> Option<Location> {
        match self {
            Self::Local(path) => path.parent().map(|p| Self::Local(p.to_path_buf())),
            Self::Object(object) => {
                let parts: Vec<_> = object.key.parts().collect();
                let (_, above) = parts.split_last()?;
                Some(Self::Object(object.with_key(ObjectPath::from_iter(above.iter().cloned()), None)))
            }
        }
    }

    /// The last part of the path or key.
    pub fn file_name(&self) -> Option<String> {
        match self {
            Self::Local(path) => path.file_name().map(|n| n.to_string_lossy().into_owned()),
            Self::Object(object) => object.key.filename().map(str::to_string),
        }
    }

    /// The parts of this location below `base`, `None` when `base` is not above it.
    pub fn components_below(&self, base: &Location) -> Option<Vec<String>> {
        match (self, base) {
            (Self::Local(path), Self::Local(base)) => Some(
                path.strip_prefix(base)
                    .ok()?
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect(),
            ),
            (Self::Object(object), Self::Object(base)) if object.root == base.root => {
                Some(object.key.prefix_match(&base.key)?.map(|p| p.as_ref().to_string()).collect())
            }
            _ => None,
        }
    }

    /// Whether `base` is this location or above it.
    pub fn starts_with(&self, base: &Location) -> bool {
        self.components_below(base).is_some()
    }

    /// The size and version of the object, when known without a request.
    pub fn known_version(&self) -> Option<&ObjectVersion> {
        self.as_object().and_then(ObjectLocation::version)
    }

    /// This location with its object's size and version known (a listing gave them).
    pub fn with_version(self, version: ObjectVersion) -> Location {
        match self {
            Self::Object(object) => Self::Object(ObjectLocation { version: Some(version), ..object }),
            local => local,
        }
    }

    /// This location with its requests counted into `storage`'s metrics (same object, same
    /// store client): a read counted apart from the planning that found the file. `storage`
    /// must have this location's options.
    pub fn counted_in(&self, storage: &Storage) -> Location {
        match self {
            Self::Object(object) => Self::Object(ObjectLocation { storage: storage.clone(), ..object.clone() }),
            local => local.clone(),
        }
    }
}

/// `scheme://authority` (and, for Azure URLs that name the container in the path, the
/// container): the part of `url` before the object key `key`.
fn store_root(url: &Url, key: &ObjectPath) -> String {
    let before_path = &url[..url::Position::BeforePath];
    let segments: Vec<&str> = url.path().split('/').filter(|s| !s.is_empty()).collect();
    let in_root = segments.len().saturating_sub(key.parts_count());
    let mut root = before_path.to_string();
    for segment in &segments[..in_root] {
        root.push('/');
        root.push_str(segment);
    }
    root
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Local(path) => write!(f, "{}", path.display()),
            Self::Object(object) => f.write_str(&object.url()),
        }
    }
}

impl fmt::Debug for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Location({self})")
    }
}

impl PartialEq for Location {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Location {}

impl Hash for Location {
    fn hash<H: Hasher>(&self, state: &mut H) {
        match self {
            Self::Local(path) => path.hash(state),
            Self::Object(object) => object.url().hash(state),
        }
    }
}

impl PartialOrd for Location {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Local paths first (in path order), then URLs in text order.
impl Ord for Location {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self, other) {
            (Self::Local(a), Self::Local(b)) => a.cmp(b),
            (Self::Local(_), Self::Object(_)) => Ordering::Less,
            (Self::Object(_), Self::Local(_)) => Ordering::Greater,
            (Self::Object(a), Self::Object(b)) => a.url().cmp(&b.url()),
        }
    }
}

impl From<PathBuf> for Location {
    fn from(path: PathBuf) -> Self {
        Self::Local(path)
    }
}

impl From<&Path> for Location {
    fn from(path: &Path) -> Self {
        Self::Local(path.to_path_buf())
    }
}

/// The error opening a missing file gives: ENOENT's text where there is one.
fn not_found_error() -> std::io::Error {
    #[cfg(unix)]
    return std::io::Error::from_raw_os_error(2); // ENOENT
    #[cfg(not(unix))]
    return std::io::Error::from(std::io::ErrorKind::NotFound);
}
