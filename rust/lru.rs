//! A least-recently-used map bounded in bytes: the one eviction policy behind the
//! decoded-column cache ([`crate::reading::cached_reader::SharedArrayCache`]) and the metadata
//! cache ([`crate::format::metadata_cache::MetadataCache`]). Not synchronised: each cache keeps it
//! behind its own lock.
//!
//! Lookups and inserts are O(log n): entries are indexed by their last use, so the least
//! recently used one is found without a scan.
//!
//! ```
//! use pqsift::lru::ByteLru;
//! let mut cache = ByteLru::new(10);
//! cache.insert("a", 1, 4);
//! cache.insert("b", 2, 4);
//! assert_eq!(cache.get(&"a"), Some(&1));   // "a" is now the most recent
//! cache.insert("c", 3, 4);                 // 12 bytes > 10: the least recent, "b", goes
//! assert_eq!(cache.get(&"b"), None);
//! assert_eq!(cache.bytes(), 8);
//! cache.insert("huge", 4, 11);             // larger than the whole capacity: not kept
//! assert_eq!(cache.get(&"huge"), None);
//! ```

use std::collections::{BTreeMap, HashMap};
use std::hash::Hash;

/// A map of at most `capacity` bytes (as the caller sizes its values) that evicts the
/// least recently used entries first.
#[derive(Debug)]
pub struct ByteLru<K, V> {
    capacity: usize,
    bytes: usize,
    clock: u64,
    /// Key → (value, size, last use).
    entries: HashMap<K, (V, usize, u64)>,
    /// Last use → key: the first entry is the least recently used.
    by_use: BTreeMap<u64, K>,
}

impl<K: Eq + Hash + Clone, V> ByteLru<K, V> {
    /// An empty map holding at most `capacity` bytes (0: holds nothing).
    pub fn new(capacity: usize) -> Self {
        Self { capacity, bytes: 0, clock: 0, entries: HashMap::new(), by_use: BTreeMap::new() }
    }

    /// The bound.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Bytes held now.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// Bounds the map to `capacity` bytes from now on, evicting the least recently used
    /// entries until what it holds fits.
    ///
    /// ```
    /// use pqsift::lru::ByteLru;
    /// let mut cache = ByteLru::new(10);
    /// cache.insert("a", 1, 4);
    /// cache.insert("b", 2, 4);
    /// cache.set_capacity(5); // 8 bytes > 5: "a", the least recent, goes
    /// assert_eq!(cache.get(&"a"), None);
    /// assert_eq!(cache.get(&"b"), Some(&2));
    /// ```
    pub fn set_capacity(&mut self, capacity: usize) {
        self.capacity = capacity;
        while self.bytes > self.capacity {
            let Some((_, oldest)) = self.by_use.pop_first() else { break };
            let (_, evicted, _) = self.entries.remove(&oldest).expect("indexed entries exist");
            self.bytes -= evicted;
        }
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when nothing is held.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    fn tick(&mut self) -> u64 {
        self.clock += 1;
        self.clock
    }

    /// The value of `key`, marking it most recently used.
    pub fn get(&mut self, key: &K) -> Option<&V> {
        let now = self.tick();
        let (_, _, used) = self.entries.get_mut(key)?;
        let before = std::mem::replace(used, now);
        if let Some(indexed) = self.by_use.remove(&before) {
            self.by_use.insert(now, indexed);
        }
        self.entries.get(key).map(|(value, _, _)| value)
    }

    /// Inserts `value` of `size` bytes under `key` (replacing an entry there), evicting the
    /// least recently used entries to stay within capacity. A value larger than the whole
    /// capacity is not kept (and an entry it would replace is removed).
    pub fn insert(&mut self, key: K, value: V, size: usize) {
        self.insert_sparing(key, value, size, u64::MAX);
    }

    /// The map's clock: every entry used from now on is used at a later tick (see
    /// [`ByteLru::insert_sparing`]).
    pub fn clock(&self) -> u64 {
        self.clock
    }

    /// [`ByteLru::insert`], evicting only entries not used after `since` (a reading of
    /// [`ByteLru::clock`]): when that leaves too little room, `value` is not kept. Answers
    /// whether it was.
    ///
    /// Why: a reader that goes through more entries than fit and then through them again in
    /// the same order (a scan planning many files, then reading them) finds none of them
    /// under plain LRU, each insert evicting the entry needed soonest. Sparing the entries
    /// it used itself keeps the first ones for its second pass.
    ///
    /// ```
    /// use pqsift::lru::ByteLru;
    /// let mut cache = ByteLru::new(8);
    /// cache.insert("old", 0, 4);
    /// let since = cache.clock();
    /// for (i, key) in ["a", "b", "c"].into_iter().enumerate() {
    ///     cache.insert_sparing(key, i, 4, since); // "old" goes for "b"; "c" is not kept
    /// }
    /// let kept = ["a", "b", "c"].map(|key| cache.get(&key).copied());
    /// assert_eq!(kept, [Some(0), Some(1), None]);
    /// ```
    pub fn insert_sparing(&mut self, key: K, value: V, size: usize, since: u64) -> bool {
        self.remove(&key);
        if size > self.capacity {
            return false;
        }
        while self.bytes + size > self.capacity {
            match self.by_use.first_key_value() {
                Some((&used, _)) if used <= since => {}
                _ => return false,
            }
            let (_, oldest) = self.by_use.pop_first().expect("just seen");
            let (_, evicted, _) = self.entries.remove(&oldest).expect("indexed entries exist");
            self.bytes -= evicted;
        }
        let now = self.tick();
        self.bytes += size;
        self.by_use.insert(now, key.clone());
        self.entries.insert(key, (value, size, now));
        true
    }

    /// Drops every entry; the clock goes on (so that a reading of it taken before still
    /// spares only what was used after).
    pub fn clear(&mut self) {
        self.entries.clear();
        self.by_use.clear();
        self.bytes = 0;
    }

    /// Removes `key`; its value, if it was there.
    pub fn remove(&mut self, key: &K) -> Option<V> {
        let (value, size, used) = self.entries.remove(key)?;
        self.by_use.remove(&used);
        self.bytes -= size;
        Some(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A model: a list in use order, evicting from the front.
    /// A model: a list in use order, evicting from the front; each entry with the tick of
    /// its last use, the clock advancing on every lookup and every insert kept.
    #[derive(Default)]
    struct Model {
        entries: Vec<(u8, u32, usize, u64)>,
        clock: u64,
    }

    impl Model {
        fn get(&mut self, key: u8) -> Option<u32> {
            self.clock += 1;
            let position = self.entries.iter().position(|e| e.0 == key)?;
            let mut entry = self.entries.remove(position);
            entry.3 = self.clock;
            self.entries.push(entry);
            Some(entry.1)
        }

        fn insert(&mut self, key: u8, value: u32, size: usize, capacity: usize, since: u64) -> bool {
            self.entries.retain(|e| e.0 != key);
            if size > capacity {
                return false;
            }
            while self.entries.iter().map(|e| e.2).sum::<usize>() + size > capacity {
                if self.entries[0].3 > since {
                    return false;
                }
                self.entries.remove(0);
            }
            self.clock += 1;
            self.entries.push((key, value, size, self.clock));
            true
        }

        fn set_capacity(&mut self, capacity: usize) {
            while self.entries.iter().map(|e| e.2).sum::<usize>() > capacity {
                self.entries.remove(0);
            }
        }
    }

    proptest! {
        #[test]
        fn behaves_like_a_use_ordered_list(
            capacity in 0usize..40,
            ops in prop::collection::vec((0u8..8, 0u8..8, any::<u32>(), 0usize..15), 0..200),
        ) {
            let mut lru = ByteLru::new(capacity);
            let mut model = Model::default();
            let mut capacity = capacity;
            for (kind, key, value, size) in ops {
                match kind {
                    0..=2 => prop_assert_eq!(lru.get(&key).copied(), model.get(key)),
                    3..=4 => {
                        lru.insert(key, value, size);
                        model.insert(key, value, size, capacity, u64::MAX);
                    }
                    5 => {
                        // Spares what was used in the last few ticks.
                        let since = lru.clock().saturating_sub(u64::from(value % 6));
                        prop_assert_eq!(
                            lru.insert_sparing(key, value, size, since),
                            model.insert(key, value, size, capacity, since)
                        );
                    }
                    _ => {
                        capacity = size * 3;
                        lru.set_capacity(capacity);
                        model.set_capacity(capacity);
                        prop_assert_eq!(lru.capacity(), capacity);
                    }
                }
                prop_assert_eq!(lru.bytes(), model.entries.iter().map(|e| e.2).sum::<usize>());
                prop_assert!(lru.bytes() <= capacity);
                prop_assert_eq!(lru.len(), model.entries.len());
                prop_assert_eq!(lru.clock(), model.clock);
            }
        }
    }
}
