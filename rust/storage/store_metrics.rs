//! What a scan asked of its object stores: HTTP requests (retries included), failed
//! attempts that were retried, bytes asked for and received, time spent waiting.
//!
//! The requests are counted where they are sent — in the HTTP client under the store
//! (see [`super::registry`]) — so a retry made inside the `object_store` crate counts as
//! the request it is; the client finds the scan's metrics in a task-local set by
//! [`super::registry::block_on`].
//!
//! ```
//! use pqsift::storage::StoreMetrics;
//! let metrics = StoreMetrics::default();
//! metrics.add_bytes_requested(100);
//! assert!(metrics.as_pairs().contains(&("bytes_requested", 100)));
//! ```

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Counters of one scan's object store traffic (shared by its threads).
#[derive(Debug, Default)]
pub struct StoreMetrics {
    requests: AtomicU64,
    retries: AtomicU64,
    bytes_requested: AtomicU64,
    bytes_received: AtomicU64,
    wait_nanos: AtomicU64,
    in_flight: AtomicU64,
    max_in_flight: AtomicU64,
}

impl StoreMetrics {
    /// An HTTP request is being sent.
    pub(crate) fn request_started(&self) {
        self.requests.fetch_add(1, Ordering::Relaxed);
        let now = self.in_flight.fetch_add(1, Ordering::Relaxed) + 1;
        self.max_in_flight.fetch_max(now, Ordering::Relaxed);
    }

    /// Its response (headers) came, or it failed.
    pub(crate) fn request_finished(&self) {
        self.in_flight.fetch_sub(1, Ordering::Relaxed);
    }

    /// An attempt failed in a way the client retries (a 5xx or 429 status, a connection
    /// error, a body cut short).
    pub(crate) fn attempt_failed(&self) {
        self.retries.fetch_add(1, Ordering::Relaxed);
    }

    /// Bytes of a range (or whole object) about to be requested.
    pub fn add_bytes_requested(&self, bytes: u64) {
        self.bytes_requested.fetch_add(bytes, Ordering::Relaxed);
    }

    /// Bytes of response bodies received.
    pub(crate) fn add_bytes_received(&self, bytes: u64) {
        self.bytes_received.fetch_add(bytes, Ordering::Relaxed);
    }

    /// Time a reading thread was blocked on the store.
    pub(crate) fn add_wait(&self, waited: Duration) {
        self.wait_nanos.fetch_add(u64::try_from(waited.as_nanos()).unwrap_or(u64::MAX), Ordering::Relaxed);
    }

    /// HTTP requests sent, retries included.
    pub fn requests(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }

    /// Failed attempts that the client retried (or gave up after).
    pub fn retries(&self) -> u64 {
        self.retries.load(Ordering::Relaxed)
    }

    /// Time blocked on the store, summed over threads.
    pub fn wait_time(&self) -> Duration {
        Duration::from_nanos(self.wait_nanos.load(Ordering::Relaxed))
    }

    /// The counters as `(name, value)` pairs: `requests`, `retries`, `bytes_requested`,
    /// `bytes_received`, `max_requests_in_flight`.
    pub fn as_pairs(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("requests", self.requests()),
            ("retries", self.retries()),
            ("bytes_requested", self.bytes_requested.load(Ordering::Relaxed)),
            ("bytes_received", self.bytes_received.load(Ordering::Relaxed)),
            ("max_requests_in_flight", self.max_in_flight.load(Ordering::Relaxed)),
        ]
    }
}
