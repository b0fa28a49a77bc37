//! Which locations a table may make a scan read.
//!
//! A table's metadata — a Delta log's `add.path`, a deletion vector's path — is written by
//! whoever can write the table, not by the reader. A path that leaves the table's root would
//! make the scan read another table's rows with this table's credentials, or a local file
//! of every machine that runs it (a Spark executor). So every location a table names is
//! resolved (scheme, `..`, percent-encoding) and then allowed only below the table's root,
//! below a prefix the user allowed, or anywhere when the user says so: the Delta protocol
//! allows absolute paths (shallow clones name another table's files), so refusing them all
//! would be wrong too.
//!
//! ```
//! use std::path::Path;
//! use pqsift::storage::Location;
//! use pqsift::table::allowed_locations::AllowedLocations;
//! let root = Location::from(Path::new("/data/t"));
//! let below = AllowedLocations::default();
//! assert!(below.check(&root, &Location::from(Path::new("/data/t/a=1/f.parquet")), "data file").is_ok());
//! assert!(below.check(&root, &Location::from(Path::new("/data/t/../u/f.parquet")), "data file").is_err());
//! assert!(below.check(&root, &Location::from(Path::new("/data/t2/f.parquet")), "data file").is_err());
//! let shared = AllowedLocations::Below(vec![Location::from(Path::new("/data/shared"))]);
//! assert!(shared.check(&root, &Location::from(Path::new("/data/shared/f.parquet")), "data file").is_ok());
//! assert!(AllowedLocations::Any.check(&root, &Location::from(Path::new("/etc/passwd")), "data file").is_ok());
//! ```

use std::path::{Component, Path, PathBuf};

use crate::error::{PqsiftError, Result, quoted};
use crate::storage::Location;

/// Where a table's metadata may point, besides below the table's root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AllowedLocations {
    /// Below the table's root, or below one of these prefixes (empty: the root only).
    Below(Vec<Location>),
    /// Anywhere the scan's storage options reach.
    Any,
}

impl Default for AllowedLocations {
    fn default() -> Self {
        Self::Below(Vec::new())
    }
}

impl AllowedLocations {
    /// `Ok` when the table at `table_root` may read `location` (a `what`: "data file",
    /// "deletion vector", ...); otherwise a [`PqsiftError::Table`] naming the table and
    /// the location (quoted within a bounded length), and how to allow it.
    pub fn check(&self, table_root: &Location, location: &Location, what: &str) -> Result<()> {
        self.for_table(table_root).check(location, what)
    }

    /// The check of every location a table at `table_root` names, with the root and the
    /// allowed prefixes resolved once (a table names thousands of files).
    pub fn for_table(&self, table_root: &Location) -> LocationCheck {
        LocationCheck {
            table_root: table_root.clone(),
            bases: match self {
                Self::Any => None,
                Self::Below(prefixes) => Some(std::iter::once(table_root).chain(prefixes).map(Base::of).collect()),
            },
        }
    }
}

/// [`AllowedLocations`] for one table (see [`AllowedLocations::for_table`]).
#[derive(Debug, Clone)]
pub struct LocationCheck {
    table_root: Location,
    /// The root and the allowed prefixes, resolved (`None`: anywhere).
    bases: Option<Vec<Base>>,
}

/// A location others may be below, `.` and `..` resolved (local paths made absolute
/// against the working directory; no link is followed).
#[derive(Debug, Clone)]
enum Base {
    Local(PathBuf),
    Object(Location),
}

impl Base {
    fn of(location: &Location) -> Self {
        match location {
            Location::Local(path) => Self::Local(lexically_absolute(path)),
            other => Self::Object(other.clone()),
        }
    }

    /// Whether `location` is this base or below it; `local` is its path resolved (see
    /// [`resolved_path`]).
    fn holds(&self, location: &Location, local: Option<&Path>) -> bool {
        match (self, local) {
            (Self::Local(base), Some(path)) => path.starts_with(base),
            // Keys hold no `..`: `Location::join` stores such a part escaped, as a name.
            (Self::Object(base), None) => location.starts_with(base),
            _ => false,
        }
    }
}

/// A local location's path with `.` and `..` resolved and made absolute (as it is when it
/// already is); `None` for an object.
fn resolved_path(location: &Location) -> Option<std::borrow::Cow<'_, Path>> {
    match location {
        Location::Local(path) if is_normal_absolute(path) => Some(std::borrow::Cow::Borrowed(path.as_path())),
        Location::Local(path) => Some(std::borrow::Cow::Owned(lexically_absolute(path))),
        Location::Object(_) => None,
    }
}

impl LocationCheck {
    /// As [`AllowedLocations::check`].
    pub fn check(&self, location: &Location, what: &str) -> Result<()> {
        let Some(bases) = &self.bases else { return Ok(()) };
        let local = resolved_path(location);
        if bases.iter().any(|base| base.holds(location, local.as_deref())) {
            return Ok(());
        }
        Err(PqsiftError::table(
            &self.table_root,
            format!(
                "the table names the {what} {}, outside its root; a table may only read below its root unless \
                 the location is allowed (option allowed_locations: a list of path or URL prefixes, or \"any\")",
                quoted(&location.to_string())
            ),
        ))
    }
}

/// Whether `location` is `base` or below it, after `.` and `..` are resolved in both (local
/// paths made absolute against the working directory; no link is followed).
pub(crate) fn is_below(location: &Location, base: &Location) -> bool {
    Base::of(base).holds(location, resolved_path(location).as_deref())
}

/// Whether `path` is absolute and already lexically normal: no `.` or `..` component, no
/// empty one (cheap to ask of thousands of paths; a name starting with a dot is taken
/// for a `.` and normalised, which is only slower).
fn is_normal_absolute(path: &Path) -> bool {
    let bytes = path.as_os_str().as_encoded_bytes();
    bytes.first() == Some(&b'/') && !bytes.windows(2).any(|pair| pair == b"/." || pair == b"//")
}

/// `path` made absolute against the working directory, with `.` and `..` resolved lexically.
fn lexically_absolute(path: &Path) -> PathBuf {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    lexically_normal(&absolute)
}

/// `path` with `.` and `..` components resolved lexically (no file system access); a `..`
/// above a relative path's start is kept.
pub(crate) fn lexically_normal(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::Storage;

    fn s3(url: &str) -> Location {
        Location::parse(url, &Storage::default()).unwrap()
    }

    #[test]
    fn object_locations_are_allowed_below_the_root_in_the_same_bucket_only() {
        let root = s3("s3://bucket/tables/t");
        let below = AllowedLocations::default();
        assert!(below.check(&root, &s3("s3://bucket/tables/t/part-0.parquet"), "data file").is_ok());
        for outside in ["s3://bucket/tables/t2/part-0.parquet", "s3://other/tables/t/part-0.parquet", "s3://bucket/x"] {
            let error = below.check(&root, &s3(outside), "data file").unwrap_err();
            assert!(
                matches!(&error, PqsiftError::Table { table, reason } if table == "s3://bucket/tables/t" && reason.contains(outside)),
                "{error}"
            );
        }
        let allowed = AllowedLocations::Below(vec![s3("s3://other/shared")]);
        assert!(allowed.check(&root, &s3("s3://other/shared/f.parquet"), "data file").is_ok());
        assert!(allowed.check(&root, &s3("s3://other/sharedx/f.parquet"), "data file").is_err());
        // A local file is never below a table in a store, unless any location is allowed.
        assert!(below.check(&root, &Location::from(Path::new("/etc/passwd")), "data file").is_err());
        assert!(AllowedLocations::Any.check(&root, &Location::from(Path::new("/etc/passwd")), "data file").is_ok());
    }

    #[test]
    fn only_normal_absolute_paths_skip_normalising() {
        for normal in ["/a/b.parquet", "/", "/a/b/"] {
            assert!(is_normal_absolute(Path::new(normal)), "{normal}");
        }
        for other in ["a/b", "/a/../b", "/a/./b", "/a//b", "/a/.hidden", "/a/.."] {
            assert!(!is_normal_absolute(Path::new(other)), "{other}");
        }
        let check = AllowedLocations::default().for_table(&Location::from(Path::new("/data/t")));
        assert!(check.check(&Location::from(Path::new("/data/t/x/f.parquet")), "data file").is_ok());
        assert!(check.check(&Location::from(Path::new("/data/t/../u/f.parquet")), "data file").is_err());
        assert!(check.check(&Location::from(Path::new("/data/tx/f.parquet")), "data file").is_err());
    }

    #[test]
    fn relative_and_absolute_local_paths_compare_resolved() {
        let cwd = std::env::current_dir().unwrap();
        let root = Location::from(Path::new("t"));
        let below = AllowedLocations::default();
        assert!(below.check(&root, &Location::from(cwd.join("t/f.parquet")), "data file").is_ok());
        assert!(below.check(&root, &Location::from(Path::new("./t/./a/../f.parquet")), "data file").is_ok());
        assert!(below.check(&root, &Location::from(Path::new("t/../f.parquet")), "data file").is_err());
        assert!(below.check(&root, &Location::from(Path::new("t/a/../../t2/f.parquet")), "data file").is_err());
    }

    #[test]
    fn a_long_location_is_quoted_within_a_bound() {
        let root = Location::from(Path::new("/t"));
        let long = Location::from(PathBuf::from(format!("/x/{}", "y".repeat(1_000_000))));
        let error = AllowedLocations::default().check(&root, &long, "data file").unwrap_err();
        assert!(error.to_string().len() < 2_000, "{}", error.to_string().len());
    }
}
