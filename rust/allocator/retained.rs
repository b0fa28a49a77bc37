//! Large blocks kept a moment after they are freed, for the next large allocations.
//!
//! A read allocates its large buffers (decoded values, decompressed pages, string bytes)
//! afresh for every row group, and frees them once the consumer is done with the batch.
//! Unmapped at once, the next row group's buffers would fault in and be zeroed by the kernel
//! page by page: on the ten numeric columns of the `events` benchmark (8M rows) that was
//! ~24% of the read, as much as decompression. Allocators made for this (jemalloc's decay,
//! mimalloc's purge delay) keep freed memory a while; this does the same for the
//! extension's [large blocks](super::large_blocks) only, so Python's and pyarrow's memory
//! keep the system's behaviour.
//!
//! A freed large block is kept in one of a few hundred slots, up to [`retain_bytes`] bytes in
//! all (the oldest given back first), and handed to the next allocation: one of its mapping
//! length if there is one, else another resized with `mremap`, whose pages stay mapped as
//! far as both lengths go. So every allocation consumes what is kept: mapped memory grows
//! only by what no kept block covers, and keeping blocks does not raise a read's peak. (Blocks kept
//! only for their own size piled up in sizes no later request asked: streaming a filtered
//! text column peaked 513 MiB above baseline, against 172 with glibc and 151 so.) A block
//! not reused within [`RETAIN_FOR`] is unmapped at the next large allocation or free, or
//! when [`release_stale`] runs (the Python module runs it from a background
//! thread). The slots are taken with `try_lock` only: a thread that finds them busy, or a
//! process forked while they were held, maps and unmaps as if nothing were kept.
//!
//! ```
//! use pqsift::allocator::retained::{Blocks, RETAIN_FOR};
//! use std::time::Instant;
//! let now = Instant::now();
//! let mut blocks = Blocks::new();
//! // A freed 1 MiB block at 0x10000 is kept (cap 8 MiB) and handed to the next request,
//! // here of 2 MiB (the caller remaps it to that length).
//! assert!(blocks.put(0x10000, 1 << 20, now, 8 << 20).is_empty());
//! assert_eq!(blocks.take(2 << 20), Some((0x10000, 1 << 20)));
//! assert_eq!(blocks.take(2 << 20), None);
//! // A block kept longer than RETAIN_FOR is given back.
//! blocks.put(0x10000, 1 << 20, now, 8 << 20);
//! assert_eq!(blocks.stale(now + RETAIN_FOR * 2), vec![(0x10000, 1 << 20)]);
//! ```

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use super::large_blocks::unmap;

/// How long a freed block is kept before it is unmapped.
pub const RETAIN_FOR: Duration = Duration::from_secs(1);

/// The default of [`retain_bytes`].
pub const DEFAULT_RETAIN_BYTES: usize = 512 << 20;

/// Blocks kept at most at once.
const SLOTS: usize = 256;

static RETAIN_BYTES: AtomicUsize = AtomicUsize::new(DEFAULT_RETAIN_BYTES);

/// The most freed bytes kept at once (0: none kept).
pub fn retain_bytes() -> usize {
    RETAIN_BYTES.load(Ordering::Relaxed)
}

/// Sets [`retain_bytes`]; blocks already kept beyond it are unmapped.
pub fn set_retain_bytes(bytes: usize) {
    RETAIN_BYTES.store(bytes, Ordering::Relaxed);
    if let Ok(mut blocks) = BLOCKS.lock() {
        let over = blocks.over(bytes);
        drop(blocks);
        over.unmap();
    }
}

/// One kept block: where it starts, its mapping's length, when it was freed.
#[derive(Debug, Clone, Copy)]
struct Block {
    start: usize,
    len: usize,
    freed_at: Instant,
}

/// The kept blocks. A fixed array: keeping a block must not allocate. What is given back
/// is returned to the caller ([`Released`]) to unmap outside the lock.
#[derive(Debug)]
pub struct Blocks {
    slots: [Option<Block>; SLOTS],
    bytes: usize,
}

/// Blocks to unmap, as (start, length): at most [`SLOTS`] + 1, held without allocating.
#[derive(Debug)]
pub struct Released {
    blocks: [(usize, usize); SLOTS + 1],
    len: usize,
}

impl Default for Released {
    fn default() -> Self {
        Self { blocks: [(0, 0); SLOTS + 1], len: 0 }
    }
}

impl Released {
    fn push(&mut self, start: usize, len: usize) {
        self.blocks[self.len] = (start, len);
        self.len += 1;
    }

    /// The blocks, as (start, length).
    pub fn iter(&self) -> impl Iterator<Item = &(usize, usize)> {
        self.blocks[..self.len].iter()
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn unmap(&self) {
        for &(start, len) in self.iter() {
            // SAFETY: a block removed from the slots, which held it alone.
            unsafe { unmap(start, len) };
        }
    }
}

impl PartialEq<Vec<(usize, usize)>> for Released {
    fn eq(&self, other: &Vec<(usize, usize)>) -> bool {
        self.blocks[..self.len] == other[..]
    }
}

impl Default for Blocks {
    fn default() -> Self {
        Self::new()
    }
}

impl Blocks {
    /// No block kept.
    pub const fn new() -> Self {
        Self { slots: [None; SLOTS], bytes: 0 }
    }

    /// Bytes kept.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// The kept block to serve a mapping of `len` bytes, removed from the slots, as (start,
    /// its length): one of exactly `len` (the most recently freed: its pages are the
    /// likeliest to be in the caches), else the smallest longer one, else the longest
    /// shorter one. The caller resizes a block of another length with `mremap`: its pages
    /// stay mapped as far as both lengths go, so an allocation consumes what is kept
    /// whatever its size, and keeping blocks never raises the peak of mapped memory by more
    /// than what was kept when a request found none (see the module's documentation).
    /// (Leaving blocks more than twice as long to requests of their size raised the peak
    /// of streaming a filtered text column from 190 to 325 MiB above baseline.)
    pub fn take(&mut self, len: usize) -> Option<(usize, usize)> {
        let kept = || self.slots.iter().enumerate().filter_map(|(slot, block)| block.map(|b| (slot, b)));
        let exact = kept().filter(|(_, b)| b.len == len).max_by_key(|(_, b)| b.freed_at);
        let longer = || kept().filter(|(_, b)| b.len > len).min_by_key(|(_, b)| b.len);
        let shorter = || kept().filter(|(_, b)| b.len < len).max_by_key(|(_, b)| b.len);
        let (slot, _) = exact.or_else(longer).or_else(shorter)?;
        Some(self.remove(slot))
    }

    /// A kept block of exactly `len` bytes (the most recently freed), removed from the
    /// slots: for a block growing by more than it holds (see
    /// [`resize`](super::large_blocks::resize)).
    pub fn take_exact(&mut self, len: usize) -> Option<usize> {
        let kept = self.slots.iter().enumerate().filter_map(|(slot, block)| block.map(|b| (slot, b)));
        let (slot, _) = kept.filter(|(_, b)| b.len == len).max_by_key(|(_, b)| b.freed_at)?;
        Some(self.remove(slot).0)
    }

    /// Keeps the freed block at `start` mapping `len` bytes, giving back the oldest blocks
    /// as needed to stay within `cap` bytes and the slots; returns what to unmap (the block
    /// itself when it is larger than `cap`).
    pub fn put(&mut self, start: usize, len: usize, now: Instant, cap: usize) -> Released {
        if len > cap {
            let mut released = Released::default();
            released.push(start, len);
            return released;
        }
        let mut released = self.over(cap - len);
        if self.slots.iter().all(Option::is_some) {
            self.give_back_oldest(&mut released);
        }
        let free = self.slots.iter().position(Option::is_none).expect("a free slot");
        self.slots[free] = Some(Block { start, len, freed_at: now });
        self.bytes += len;
        released
    }

    /// Removes the blocks kept longer than [`RETAIN_FOR`] at `now`.
    pub fn stale(&mut self, now: Instant) -> Released {
        let mut released = Released::default();
        for slot in 0..SLOTS {
            if self.slots[slot].is_some_and(|b| now.saturating_duration_since(b.freed_at) >= RETAIN_FOR) {
                let (start, len) = self.remove(slot);
                released.push(start, len);
            }
        }
        released
    }

    /// Removes the oldest blocks until at most `cap` bytes are kept.
    fn over(&mut self, cap: usize) -> Released {
        let mut released = Released::default();
        while self.bytes > cap {
            self.give_back_oldest(&mut released);
        }
        released
    }

    /// Removes the oldest kept block (there is one) into `released`.
    fn give_back_oldest(&mut self, released: &mut Released) {
        let kept = self.slots.iter().enumerate().filter_map(|(slot, block)| block.map(|b| (slot, b)));
        let (oldest, _) = kept.min_by_key(|(_, b)| b.freed_at).expect("a kept block to give back");
        let (start, len) = self.remove(oldest);
        released.push(start, len);
    }

    fn remove(&mut self, slot: usize) -> (usize, usize) {
        let block = self.slots[slot].take().expect("an occupied slot");
        self.bytes -= block.len;
        (block.start, block.len)
    }
}

static BLOCKS: Mutex<Blocks> = Mutex::new(Blocks::new());

/// A kept block to serve a mapping of `len` bytes, as (start, its length), if one is kept
/// and the slots are free to look (see [`Blocks::take`]).
pub(super) fn take(len: usize) -> Option<(*mut u8, usize)> {
    if retain_bytes() == 0 {
        return None;
    }
    let mut blocks = BLOCKS.try_lock().ok()?;
    let stale = blocks.stale(Instant::now());
    let taken = blocks.take(len);
    drop(blocks);
    stale.unmap();
    taken.map(|(start, len)| (start as *mut u8, len))
}

/// A kept block mapping exactly `len` bytes, if one is kept and the slots are free to look.
pub(super) fn take_exact(len: usize) -> Option<*mut u8> {
    if retain_bytes() == 0 {
        return None;
    }
    let mut blocks = BLOCKS.try_lock().ok()?;
    blocks.take_exact(len).map(|start| start as *mut u8)
}

/// Keeps the freed block `block` mapping `len` bytes; false when it is not kept (the caller
/// unmaps it).
pub(super) fn put(block: *mut u8, len: usize) -> bool {
    let cap = retain_bytes();
    if cap == 0 {
        return false;
    }
    let Ok(mut blocks) = BLOCKS.try_lock() else { return false };
    let now = Instant::now();
    let stale = blocks.stale(now);
    let evicted = blocks.put(block as usize, len, now, cap);
    drop(blocks);
    stale.unmap();
    evicted.unmap();
    true
}

/// Unmaps the blocks kept longer than [`RETAIN_FOR`]; returns how many.
pub fn release_stale() -> usize {
    let Ok(mut blocks) = BLOCKS.lock() else { return 0 };
    let stale = blocks.stale(Instant::now());
    drop(blocks);
    stale.unmap();
    stale.len
}

/// Starts (once per process) a thread that runs [`release_stale`] (and gives back the
/// small blocks' unused pages, [`give_back_unused`](super::small_blocks::give_back_unused))
/// every quarter of [`RETAIN_FOR`], so that an idle process soon holds no kept block.
pub fn release_in_background() {
    static STARTED: std::sync::Once = std::sync::Once::new();
    STARTED.call_once(|| {
        let started = std::thread::Builder::new().name("pqsift-release".into()).spawn(|| {
            loop {
                std::thread::sleep(RETAIN_FOR / 4);
                release_stale();
                super::small_blocks::give_back_unused();
            }
        });
        // Without the thread an idle process would hold what it kept: keep nothing.
        if started.is_err() {
            set_retain_bytes(0);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const MIB: usize = 1 << 20;

    #[test]
    fn the_block_of_the_length_is_taken_first_else_the_nearest() {
        let now = Instant::now();
        let mut blocks = Blocks::new();
        for (i, (start, len)) in [(0x1000, 4 * MIB), (0x2000, 2 * MIB), (0x3000, 2 * MIB)].into_iter().enumerate() {
            assert!(blocks.put(start, len, now + Duration::from_millis(i as u64), 64 * MIB).is_empty());
        }
        assert_eq!(blocks.take(2 * MIB), Some((0x3000, 2 * MIB)));
        // No 2 MiB block left: the smallest longer one, then the longest shorter one.
        assert_eq!(blocks.take(MIB), Some((0x2000, 2 * MIB)));
        assert_eq!(blocks.bytes(), 4 * MIB);
        assert!(blocks.put(0x2000, 2 * MIB, now, 64 * MIB).is_empty());
        assert!(blocks.put(0x5000, MIB, now, 64 * MIB).is_empty());
        assert_eq!(blocks.take(8 * MIB), Some((0x1000, 4 * MIB)));
        assert_eq!(blocks.take(8 * MIB), Some((0x2000, 2 * MIB)));
        assert_eq!(blocks.take(8 * MIB), Some((0x5000, MIB)));
        assert_eq!(blocks.take(8 * MIB), None);
        assert_eq!(blocks.bytes(), 0);
    }

    #[test]
    fn the_oldest_blocks_make_room() {
        let now = Instant::now();
        let mut blocks = Blocks::new();
        blocks.put(0x1000, 4 * MIB, now, 8 * MIB);
        blocks.put(0x2000, 3 * MIB, now + Duration::from_millis(1), 8 * MIB);
        assert_eq!(blocks.put(0x3000, 2 * MIB, now + Duration::from_millis(2), 8 * MIB), vec![(0x1000, 4 * MIB)]);
        assert_eq!(blocks.put(0x4000, 9 * MIB, now, 8 * MIB), vec![(0x4000, 9 * MIB)]);
        assert_eq!(blocks.bytes(), 5 * MIB);
        assert_eq!(blocks.over(2 * MIB), vec![(0x2000, 3 * MIB)]);
        let mut blocks = Blocks::new();
        for i in 0..SLOTS {
            assert!(blocks.put(i + 1, 1, now + Duration::from_micros(i as u64), usize::MAX).is_empty());
        }
        assert_eq!(blocks.put(0xffff, 1, now + Duration::from_secs(1), usize::MAX), vec![(1, 1)]);
    }

    proptest! {
        /// Whatever the sequence of frees, takes and clocks: the kept bytes are the sum of
        /// the kept blocks and never over the cap, every block put is taken, given back or
        /// still kept (exactly once), a block of the length asked is taken when there is
        /// one, and nothing is taken only when nothing is kept.
        #[test]
        fn blocks_are_accounted_for(ops in proptest::collection::vec((0u8..3, 1usize..8, 0u64..3000), 1..300), cap in 1usize..64) {
            let start = Instant::now();
            let mut blocks = Blocks::new();
            let mut kept: std::collections::BTreeMap<usize, usize> = Default::default();
            let mut next = 1usize;
            for (op, len, millis) in ops {
                let now = start + Duration::from_millis(millis);
                match op {
                    0 => {
                        kept.insert(next, len);
                        for (released, released_len) in blocks.put(next, len, now, cap).iter() {
                            prop_assert_eq!(kept.remove(released), Some(*released_len));
                        }
                        next += 1;
                    }
                    1 => {
                        let had_exact = kept.values().any(|&l| l == len);
                        match blocks.take(len) {
                            Some((address, got)) => {
                                prop_assert_eq!(kept.remove(&address), Some(got));
                                prop_assert!(!had_exact || got == len);
                            }
                            None => prop_assert!(kept.is_empty()),
                        }
                    }
                    _ => {
                        for (released, released_len) in blocks.stale(now).iter() {
                            prop_assert_eq!(kept.remove(released), Some(*released_len));
                        }
                    }
                }
                prop_assert!(blocks.bytes() <= cap);
                prop_assert_eq!(blocks.bytes(), kept.values().sum::<usize>());
            }
        }
    }
}
