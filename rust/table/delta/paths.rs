//! File paths in the log: `add.path`, `remove.path`, sidecar paths and `p` deletion vector
//! paths are URIs — relative to a directory (percent-encoded: a partition value with a
//! space is `a=x%2520y/...` in the log for the directory `a=x%20y`), or absolute (`file:/x`,
//! `file:///x`, or a bare `/x`). All resolve to one absolute, lexically normalised,
//! percent-decoded local path, so that the same file written two ways is one key in log
//! replay.
//!
//! ```
//! use std::path::Path;
//! use pqsift::table::delta::paths::resolve_path;
//! let root = Path::new("/t");
//! assert_eq!(resolve_path(root, "a=x%2520y/p%20q.parquet").unwrap(), Path::new("/t/a=x%20y/p q.parquet"));
//! assert_eq!(resolve_path(root, "file:///x/y%23z").unwrap(), Path::new("/x/y#z"));
//! assert_eq!(resolve_path(root, "file:/x/y").unwrap(), resolve_path(root, "/x/y").unwrap());
//! assert!(resolve_path(root, "s3://bucket/key").is_err());
//! ```

use std::path::{Component, Path, PathBuf};

use crate::error::{PqsiftError, Result};

/// `uri` (from the log) as an absolute local path; relative ones against `base`.
///
/// Errors ([`PqsiftError::Unsupported`]) on a URI scheme other than `file` (object stores are
/// not read here), and on a path that does not decode to UTF-8.
pub fn resolve_path(base: &Path, uri: &str) -> Result<PathBuf> {
    let (is_absolute, rest) = match split_scheme(uri) {
        Some(("file", rest)) => {
            // file:/x, file:///x, file://localhost/x
            let rest = match rest.strip_prefix("//") {
                Some(after) => match after.find('/') {
                    Some(slash) if after[..slash].is_empty() || after[..slash].eq_ignore_ascii_case("localhost") => &after[slash..],
                    _ => return Err(PqsiftError::unsupported(base, format!("file URI with a host: {uri}"))),
                },
                None => rest,
            };
            (true, rest)
        }
        Some((scheme, _)) => {
            return Err(PqsiftError::unsupported(base, format!("{scheme}: URIs (only local files are read): {uri}")));
        }
        None => (uri.starts_with('/'), uri),
    };
    let decoded = percent_encoding::percent_decode_str(rest)
        .decode_utf8()
        .map_err(|e| PqsiftError::corrupt_delta(base, format!("path {uri:?} does not decode to UTF-8: {e}")))?;
    let joined = if is_absolute { PathBuf::from(decoded.as_ref()) } else { base.join(decoded.as_ref()) };
    Ok(normalise(&joined))
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

/// `path` with `.` and `..` components resolved lexically (no file system access).
fn normalise(path: &Path) -> PathBuf {
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
