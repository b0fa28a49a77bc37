//! The two-tier cache of decoded columns: with late materialization, a column decoded for
//! the filter is not decoded again for the output.
//!
//! Late materialization decodes a predicate column before the projection step; when the
//! same column is also projected, decoding it again would pay twice. Decoded columns are
//! kept in two tiers:
//!
//! * a **shared** cache ([`SharedArrayCache`]) for all readers and threads, bounded in bytes
//!   (option `cache_bytes`), evicting the least recently used entry;
//! * a **local** cache ([`CachedArrayReader`]) private to the reader of one row group, which
//!   pins what it uses so that shared-cache eviction cannot take it away mid-row-group.
//!
//! Lookup order: local, then shared (promoted to local), then the caller decodes and
//! inserts into both.
//!
//! An entry is a column's values for the rows of a [`RowSelection`] (in row group
//! coordinates). Selections only shrink as predicates run, so a later request is served by
//! filtering the cached values down to the rows still selected.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use arrow::array::{Array, ArrayRef};

use crate::error::{PqsiftError, Result};
use crate::lru::ByteLru;
use crate::reading::select_rows::select_rows;
use crate::selection::{RowSelection, mask};

/// Identifies a decoded column: file, row group, root column index.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CacheKey {
    /// The file (path and identity, e.g. size and modification time).
    pub file: Arc<str>,
    /// Row group index.
    pub row_group: usize,
    /// Root (top-level) column index in the file schema.
    pub column: usize,
}

/// A column's values for the rows `selection` selects.
#[derive(Debug, Clone)]
pub struct CachedColumn {
    /// One value per selected row.
    pub values: ArrayRef,
    /// The rows the values are for, in row group coordinates.
    pub selection: RowSelection,
}

impl CachedColumn {
    /// The values for the rows of `wanted`, which must be a subset of the cached selection.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use arrow::array::{Array, Int32Array};
    /// use pqsift::reading::cached_reader::CachedColumn;
    /// use pqsift::selection::RowSelection;
    /// // Rows 1, 2 and 4 were decoded; only 2 and 4 are still wanted.
    /// let cached = CachedColumn {
    ///     values: Arc::new(Int32Array::from(vec![10, 20, 40])),
    ///     selection: RowSelection::from_bools(&[false, true, true, false, true]),
    /// };
    /// let wanted = RowSelection::from_bools(&[false, false, true, false, true]);
    /// let values = cached.restrict(&wanted).unwrap();
    /// assert_eq!(values.as_any().downcast_ref::<Int32Array>().unwrap().values(), &[20, 40]);
    /// ```
    pub fn restrict(&self, wanted: &RowSelection) -> Result<ArrayRef> {
        if wanted.row_count() != self.selection.row_count() {
            return Err(PqsiftError::selection("cached column and request cover different row counts"));
        }
        if *wanted == self.selection {
            return Ok(self.values.clone());
        }
        // `wanted` seen through the cached selection: one bit per cached value.
        let relative = match self.selection.selected_count() == self.selection.row_count() {
            true => wanted.to_mask(),
            false => mask::compress(&wanted.to_mask(), &self.selection.to_mask()),
        };
        // A wanted row the cache does not hold would be silently lost: refuse instead.
        if crate::selection::count_set_bits(&relative) != wanted.selected_count() {
            return Err(PqsiftError::selection("the request selects rows the cached column does not hold"));
        }
        select_rows(&self.values, &relative).map_err(|e| PqsiftError::selection(e.to_string()))
    }

    fn memory_size(&self) -> usize {
        self.values.get_array_memory_size()
    }
}

/// The shared tier: decoded columns for every reader, bounded in bytes, LRU eviction
/// ([`ByteLru`]).
#[derive(Debug)]
pub struct SharedArrayCache {
    state: Mutex<ByteLru<CacheKey, CachedColumn>>,
}

impl SharedArrayCache {
    /// A cache holding at most `capacity_bytes` of decoded arrays (0 disables it).
    pub fn new(capacity_bytes: usize) -> Self {
        Self { state: Mutex::new(ByteLru::new(capacity_bytes)) }
    }

    /// The configured capacity.
    pub fn capacity_bytes(&self) -> usize {
        self.lock().capacity()
    }

    /// Bytes held now.
    pub fn bytes(&self) -> usize {
        self.lock().bytes()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, ByteLru<CacheKey, CachedColumn>> {
        // A panic while holding the lock leaves consistent data (every update is one
        // statement), so a poisoned lock is still usable.
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The entry for `key`, marking it recently used.
    pub fn get(&self, key: &CacheKey) -> Option<CachedColumn> {
        self.lock().get(key).cloned()
    }

    /// Inserts `column`, evicting least recently used entries to stay within capacity.
    /// An entry larger than the whole capacity is not kept.
    pub fn insert(&self, key: CacheKey, column: CachedColumn) {
        let size = column.memory_size();
        self.lock().insert(key, column, size);
    }
}

/// Where a cached column was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheTier {
    /// Pinned by this reader.
    Local,
    /// In the shared cache (now pinned locally too).
    Shared,
}

/// The local tier for one row group: pins the columns its reader uses, in front of the
/// shared cache.
#[derive(Debug)]
pub struct CachedArrayReader<'a> {
    shared: &'a SharedArrayCache,
    file: Arc<str>,
    row_group: usize,
    local: HashMap<usize, CachedColumn>,
}

impl<'a> CachedArrayReader<'a> {
    /// A reader for row group `row_group` of `file`.
    pub fn new(shared: &'a SharedArrayCache, file: Arc<str>, row_group: usize) -> Self {
        Self { shared, file, row_group, local: HashMap::new() }
    }

    fn key(&self, column: usize) -> CacheKey {
        CacheKey { file: self.file.clone(), row_group: self.row_group, column }
    }

    /// The cached values of root column `column` for the rows of `wanted`, if a tier holds
    /// them for a superset of those rows.
    pub fn get(&mut self, column: usize, wanted: &RowSelection) -> Result<Option<(ArrayRef, CacheTier)>> {
        if let Some(cached) = self.local.get(&column)
            && covers(&cached.selection, wanted)?
        {
            return Ok(Some((cached.restrict(wanted)?, CacheTier::Local)));
        }
        if let Some(cached) = self.shared.get(&self.key(column))
            && covers(&cached.selection, wanted)?
        {
            let values = cached.restrict(wanted)?;
            self.local.insert(column, cached);
            return Ok(Some((values, CacheTier::Shared)));
        }
        Ok(None)
    }

    /// Whether a tier holds the values of root column `column` for a superset of the rows
    /// of `wanted` ([`get`](Self::get) would find them).
    pub fn holds(&self, column: usize, wanted: &RowSelection) -> Result<bool> {
        if let Some(cached) = self.local.get(&column)
            && covers(&cached.selection, wanted)?
        {
            return Ok(true);
        }
        match self.shared.get(&self.key(column)) {
            Some(cached) => covers(&cached.selection, wanted),
            None => Ok(false),
        }
    }

    /// Caches freshly decoded values of `column` for the rows of `selection` in both tiers.
    pub fn insert(&mut self, column: usize, values: ArrayRef, selection: RowSelection) {
        let cached = CachedColumn { values, selection };
        self.shared.insert(self.key(column), cached.clone());
        self.local.insert(column, cached);
    }
}

/// `true` when every row `wanted` selects is selected by `cached`.
fn covers(cached: &RowSelection, wanted: &RowSelection) -> Result<bool> {
    if cached.row_count() != wanted.row_count() {
        return Ok(false);
    }
    Ok(wanted.intersection(cached)?.selected_count() == wanted.selected_count())
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::Int64Array;

    fn column(n: i64) -> CachedColumn {
        CachedColumn {
            values: Arc::new(Int64Array::from_iter_values(0..n)),
            selection: RowSelection::select_all(n as usize),
        }
    }

    fn key(column: usize) -> CacheKey {
        CacheKey { file: Arc::from("f"), row_group: 0, column }
    }

    #[test]
    fn shared_cache_evicts_least_recently_used_within_capacity() {
        let one = column(1000).memory_size();
        let cache = SharedArrayCache::new(one * 2 + one / 2);
        cache.insert(key(0), column(1000));
        cache.insert(key(1), column(1000));
        assert!(cache.get(&key(0)).is_some()); // 0 is now more recent than 1
        cache.insert(key(2), column(1000));
        assert!(cache.get(&key(1)).is_none(), "the least recently used entry is evicted");
        assert!(cache.get(&key(0)).is_some() && cache.get(&key(2)).is_some());
        assert!(cache.bytes() <= cache.capacity_bytes());
        // Too large to ever fit: not kept, nothing evicted for it.
        cache.insert(key(3), column(100_000));
        assert!(cache.get(&key(3)).is_none());
        assert!(cache.get(&key(0)).is_some());
    }

    #[test]
    fn local_tier_pins_what_shared_evicts() {
        let shared = SharedArrayCache::new(column(100).memory_size());
        let mut reader = CachedArrayReader::new(&shared, Arc::from("f"), 0);
        let all = RowSelection::select_all(100);
        reader.insert(0, column(100).values, all.clone());
        // Another reader fills the shared cache, evicting column 0 there.
        shared.insert(CacheKey { file: Arc::from("g"), row_group: 0, column: 0 }, column(100));
        assert!(shared.get(&key(0)).is_none());
        let (values, tier) = reader.get(0, &all).unwrap().unwrap();
        assert_eq!((values.len(), tier), (100, CacheTier::Local));

        // A fresh reader finds the other entry in the shared tier and promotes it.
        let mut other = CachedArrayReader::new(&shared, Arc::from("g"), 0);
        let (_, tier) = other.get(0, &all).unwrap().unwrap();
        assert_eq!(tier, CacheTier::Shared);
        assert_eq!(other.get(0, &all).unwrap().unwrap().1, CacheTier::Local);
    }

    #[test]
    fn a_request_outside_the_cached_rows_misses() {
        let shared = SharedArrayCache::new(1 << 20);
        let mut reader = CachedArrayReader::new(&shared, Arc::from("f"), 0);
        let values: ArrayRef = Arc::new(Int64Array::from(vec![1, 3]));
        reader.insert(0, values, RowSelection::from_bools(&[false, true, false, true]));
        let wider = RowSelection::from_bools(&[true, true, false, true]);
        assert!(reader.get(0, &wider).unwrap().is_none());
        let narrower = RowSelection::from_bools(&[false, false, false, true]);
        let (values, _) = reader.get(0, &narrower).unwrap().unwrap();
        assert_eq!(values.as_any().downcast_ref::<Int64Array>().unwrap().values(), &[3]);
    }
}
