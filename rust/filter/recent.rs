//! The last few results of a costly step over a long filter (parsing 100,000 literals,
//! binding them, sorting them into a set), kept to be shared by later calls on the same
//! input: a scan parses and binds its filter when planned and again per file read, and
//! every Spark task of a query gets the same text. Keys are matched by a predicate, often
//! by address (a clone of a list shares its items), so neither hashing nor ordering a
//! 100,000-item key is needed.

use std::sync::{Mutex, MutexGuard};

use crate::Result;

/// At most `capacity` results, the oldest dropped first.
pub(crate) struct Recent<K, V> {
    capacity: usize,
    kept: Mutex<Vec<(K, V)>>,
}

impl<K, V: Clone> Recent<K, V> {
    pub(crate) const fn new(capacity: usize) -> Self {
        Self { capacity, kept: Mutex::new(Vec::new()) }
    }

    /// The kept result that `matches` (given its key and value), else `make`'s, kept under
    /// `key()` if it is `Ok`.
    pub(crate) fn get_or_make(
        &self,
        matches: impl Fn(&K, &V) -> bool,
        key: impl FnOnce() -> K,
        make: impl FnOnce() -> Result<V>,
    ) -> Result<V> {
        if let Some((_, value)) = self.lock().iter().find(|(k, v)| matches(k, v)) {
            return Ok(value.clone());
        }
        let value = make()?;
        let mut kept = self.lock();
        if kept.len() >= self.capacity {
            kept.remove(0);
        }
        kept.push((key(), value.clone()));
        Ok(value)
    }

    fn lock(&self) -> MutexGuard<'_, Vec<(K, V)>> {
        self.kept.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_last_few_results_and_not_errors() {
        let recent: Recent<u32, u32> = Recent::new(2);
        let made = std::cell::Cell::new(0);
        let get = |key: u32| {
            recent.get_or_make(
                |kept, _| *kept == key,
                || key,
                || {
                    made.set(made.get() + 1);
                    Ok(key * 10)
                },
            )
        };
        assert_eq!((get(1).unwrap(), get(1).unwrap(), made.get()), (10, 10, 1));
        get(2).unwrap();
        get(3).unwrap(); // 1 dropped
        assert_eq!((get(3).unwrap(), made.get()), (30, 3));
        assert_eq!((get(1).unwrap(), made.get()), (10, 4));
        let failing = recent.get_or_make(|kept, _| *kept == 9, || 9, || Err(crate::PqsiftError::filter("no")));
        assert!(failing.is_err());
        assert_eq!((get(1).unwrap(), made.get()), (10, 4)); // the error was not kept
    }
}
