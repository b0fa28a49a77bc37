//! File paths in the log: `add.path`, `remove.path`, sidecar paths and `p` deletion vector
//! paths are URIs — relative to a directory (percent-encoded: a partition value with a
//! space is `a=x%2520y/...` in the log for the directory `a=x%20y`), or absolute (`file:/x`,
//! `file:///x`, or a bare `/x`; in a table in an object store, `s3://bucket/x`). All
//! resolve to one absolute, lexically normalised, percent-decoded location, so that the
//! same file written two ways is one key in log replay. Whether the table may read it is
//! [`AllowedLocations`](crate::table::allowed_locations::AllowedLocations)' decision.
//!
//! ```
//! use std::path::Path;
//! use pqsift::storage::{Location, Storage};
//! use pqsift::table::delta::paths::resolve_path;
//! let root = Location::from(Path::new("/t"));
//! assert_eq!(resolve_path(&root, "a=x%2520y/p%20q.parquet").unwrap(), Location::from(Path::new("/t/a=x%20y/p q.parquet")));
//! assert_eq!(resolve_path(&root, "file:///x/y%23z").unwrap(), Location::from(Path::new("/x/y#z")));
//! assert_eq!(resolve_path(&root, "file:/x/y").unwrap(), resolve_path(&root, "/x/y").unwrap());
//! assert!(resolve_path(&root, "s3://bucket/key").is_err()); // a local table's files are local
//! assert_eq!(resolve_path(&root, "FILE:///x/y").unwrap(), Location::from(Path::new("/x/y")));
//! let remote = Location::parse("s3://bucket/t", &Storage::default()).unwrap();
//! assert_eq!(resolve_path(&remote, "a=1/../b%20c.parquet").unwrap().to_string(), "s3://bucket/t/b c.parquet");
//! assert_eq!(resolve_path(&remote, "s3://bucket/other/f.parquet").unwrap().to_string(), "s3://bucket/other/f.parquet");
//! assert!(!resolve_path(&remote, "FILE:///etc/passwd").unwrap().is_remote()); // for AllowedLocations to refuse
//! ```

use std::path::PathBuf;

use crate::error::{PqsiftError, Result, quoted};
use crate::storage::Location;
use crate::table::allowed_locations::lexically_normal;

/// The longest path the log may name: longer than any file system or store takes (Linux's
/// `PATH_MAX` is 4 KiB, an S3 key 1 KiB), so longer is damage, refused before it is copied.
const MAX_PATH_BYTES: usize = 64 << 10;

/// `uri` (from the log) as an absolute location; relative ones against `base`.
///
/// Errors: [`PqsiftError::Unsupported`] on a URI scheme other than `file` in a local
/// table; [`PqsiftError::Corrupt`] on a path that does not decode to UTF-8 or is longer than
/// any file system allows.
pub fn resolve_path(base: &Location, uri: &str) -> Result<Location> {
    if uri.len() > MAX_PATH_BYTES {
        return Err(PqsiftError::corrupt_delta(
            base,
            format!("a path of {} bytes, longer than any file system or store allows: {}", uri.len(), quoted(uri)),
        ));
    }
    let (is_absolute, rest) = match split_scheme(uri) {
        // Schemes are case-insensitive (RFC 3986): `FILE:` is `file:`.
        Some((scheme, rest)) if scheme.eq_ignore_ascii_case("file") => {
            // file:/x, file:///x, file://localhost/x
            let rest = match rest.strip_prefix("//") {
                Some(after) => match after.find('/') {
                    Some(slash) if after[..slash].is_empty() || after[..slash].eq_ignore_ascii_case("localhost") => {
                        &after[slash..]
                    }
                    _ => return Err(PqsiftError::unsupported(base, format!("file URI with a host: {}", quoted(uri)))),
                },
                None => rest,
            };
            (true, rest)
        }
        Some((scheme, _)) => {
            return match base {
                Location::Object(object) => Location::parse(uri, object.storage()),
                Location::Local(_) => Err(PqsiftError::unsupported(
                    base,
                    format!("{scheme}: URIs in a local table (its files are local): {}", quoted(uri)),
                )),
            };
        }
        None => (uri.starts_with('/'), uri),
    };
    let decoded = percent_encoding::percent_decode_str(rest).decode_utf8().map_err(|e| {
        PqsiftError::corrupt_delta(base, format!("path {:?} does not decode to UTF-8: {e}", quoted(uri)))
    })?;
    match base {
        Location::Local(base) => {
            let joined = if is_absolute { PathBuf::from(decoded.as_ref()) } else { base.join(decoded.as_ref()) };
            Ok(Location::Local(lexically_normal(&joined)))
        }
        // A local file named by a table in a store: resolved, for the table's allowed
        // locations to refuse (unless the user allowed it).
        Location::Object(_) if is_absolute => {
            Ok(Location::Local(lexically_normal(std::path::Path::new(decoded.as_ref()))))
        }
        Location::Object(_) => {
            let mut out = base.clone();
            for part in decoded.split('/') {
                match part {
                    "" | "." => {}
                    ".." => out = out.parent().unwrap_or(out),
                    part => out = out.join(part),
                }
            }
            Ok(out)
        }
    }
}

/// `scheme:rest` when `uri` starts with a URI scheme (two or more characters, so that a
/// Windows drive letter is not one).
fn split_scheme(uri: &str) -> Option<(&str, &str)> {
    let colon = uri.find(':')?;
    let scheme = &uri[..colon];
    let valid = scheme.len() >= 2
        && scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    valid.then(|| (scheme, &uri[colon + 1..]))
}
