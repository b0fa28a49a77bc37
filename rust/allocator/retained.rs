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
//! A freed large block is kept in one of a few thousand slots, up to [`retain_bytes`] bytes in
//! all (the oldest given back first), and handed to the next allocation: one of its mapping
//! length if there is one, else another resized with `mremap`, whose pages stay mapped as
//! far as both lengths go. So every allocation consumes what is kept: mapped memory grows
//! only by what no kept block covers, and keeping blocks does not raise a read's peak. (Blocks kept
//! only for their own size piled up in sizes no later request asked: streaming a filtered
//! text column peaked 513 MiB above baseline, against 172 with glibc and 151 so.) A block
//! not reused within [`retain_for`] (10 s, as jemalloc's decay) is unmapped at the next
//! large allocation or free, or when [`release_stale`] runs (the Python module runs it
//! from a background thread). Both bounds are the reader's to set (see
//! [`configure_from_environment`](super::configure_from_environment)): the Python module
//! keeps up to a quarter of the memory the process may use ([`memory_limit`]).
//!
//! Why that long and that much: a scan's output is freed when its consumer drops it, and the
//! next scan allocates its own over the whole of its run. The `events` text-heavy projection
//! frees 3.4 GB a scan in ~900 blocks and takes 2–3.5 s to allocate as much again: kept for
//! 1 s, at most 512 MiB in 256 slots, nearly all of it was unmapped before the next scan
//! asked, which then had the kernel fault in and zero 1.9 GB (1.3 s of system time a scan).
//! Kept 10 s, up to the quarter, it decodes into the pages the scan before freed: system
//! time 1.3 → 0.55 s a scan. (Marking kept blocks `MADV_FREE`, so that the kernel could take
//! them back under pressure, cost 0.4 s of system time a scan: not done.) Output as string
//! views keeps every decompressed page (~1 MiB each): ~3,200 blocks a scan, so 8,192 slots
//! (2,048 left it unmapping 2,100 blocks a scan: 1.0 s of system time, against 0.16).
//! A lookup walks what is kept: a few microseconds an allocation when every slot is full.
//!
//! The slots are taken with `try_lock` only, a few tries ([`slots`]): a thread that still
//! finds them busy, or a process forked while they were held, maps and unmaps as if nothing
//! were kept. (One try: at 2 threads, output as views — ~3,200 allocations a scan, each
//! walking what is kept — mapped ~900 fresh blocks a scan.)
//!
//! ```
//! use pqsift::allocator::retained::Blocks;
//! use std::time::{Duration, Instant};
//! let now = Instant::now();
//! let keep_for = Duration::from_secs(10);
//! let mut blocks = Blocks::new();
//! // A freed 1 MiB block at 0x10000 is kept (cap 8 MiB) and handed to the next request,
//! // here of 2 MiB (the caller remaps it to that length).
//! assert!(blocks.put(0x10000, 1 << 20, now, 8 << 20).is_empty());
//! assert_eq!(blocks.take(2 << 20), Some((0x10000, 1 << 20)));
//! assert_eq!(blocks.take(2 << 20), None);
//! // A block kept longer than `keep_for` is given back.
//! blocks.put(0x10000, 1 << 20, now, 8 << 20);
//! assert!(blocks.stale(now + keep_for / 2, keep_for).is_empty());
//! assert_eq!(blocks.stale(now + keep_for, keep_for), vec![(0x10000, 1 << 20)]);
//! ```

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use super::unmap;

/// The default of [`retain_for`].
pub const DEFAULT_RETAIN_FOR: Duration = Duration::from_secs(10);

/// The default of [`retain_bytes`] in the Rust library (the Python module sets a quarter of
/// [`memory_limit`]).
pub const DEFAULT_RETAIN_BYTES: usize = 512 << 20;

/// Blocks kept at most at once.
const SLOTS: usize = 8192;

/// Blocks given back at most per [`Released`]: it lives on the stack of whichever thread
/// frees memory, so it stays small; callers with more to give back take it in turns.
const RELEASE_BATCH: usize = 64;

static RETAIN_BYTES: AtomicUsize = AtomicUsize::new(DEFAULT_RETAIN_BYTES);

static RETAIN_FOR_MS: AtomicU64 = AtomicU64::new(DEFAULT_RETAIN_FOR.as_millis() as u64);

/// The most freed bytes kept at once (0: none kept).
pub fn retain_bytes() -> usize {
    RETAIN_BYTES.load(Ordering::Relaxed)
}

/// Sets [`retain_bytes`]; blocks already kept beyond it are unmapped.
pub fn set_retain_bytes(bytes: usize) {
    RETAIN_BYTES.store(bytes, Ordering::Relaxed);
    loop {
        let Ok(mut blocks) = BLOCKS.lock() else { return };
        let over = blocks.over(bytes);
        drop(blocks);
        over.unmap();
        if !over.is_full() {
            return;
        }
    }
}

/// How long a freed block is kept for reuse before it is unmapped.
pub fn retain_for() -> Duration {
    Duration::from_millis(RETAIN_FOR_MS.load(Ordering::Relaxed))
}

/// Sets [`retain_for`] (to the millisecond); kept blocks older than it go at the next
/// allocation, free or [`release_stale`].
pub fn set_retain_for(keep_for: Duration) {
    RETAIN_FOR_MS.store(u64::try_from(keep_for.as_millis()).unwrap_or(u64::MAX), Ordering::Relaxed);
}

/// The memory this process may use, in bytes: the machine's physical memory, or the limit of
/// its control group (v2 `memory.max`, v1 `memory.limit_in_bytes`) where that is lower.
/// `None` where neither is known.
pub fn memory_limit() -> Option<usize> {
    #[cfg(unix)]
    let physical = {
        // SAFETY: `sysconf` only reads configuration.
        let (pages, page) = unsafe { (libc::sysconf(libc::_SC_PHYS_PAGES), libc::sysconf(libc::_SC_PAGESIZE)) };
        (pages > 0 && page > 0).then(|| (pages as usize).saturating_mul(page as usize))
    };
    #[cfg(not(unix))]
    let physical = None;
    // "max" (v2) or a huge number (v1) when the group sets no limit: not a number, or more
    // than the machine has.
    let group = ["/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"]
        .iter()
        .filter_map(|path| std::fs::read_to_string(path).ok()?.trim().parse::<usize>().ok())
        .min();
    match (physical, group) {
        (Some(physical), Some(group)) => Some(physical.min(group)),
        (physical, group) => physical.or(group),
    }
}

/// One kept block: where it starts, its mapping's length, when it was freed.
#[derive(Debug, Clone, Copy)]
struct Block {
    start: usize,
    len: usize,
    freed_at: Instant,
}

/// The kept blocks. A fixed array, the kept ones first: keeping a block must not allocate,
/// and a lookup costs what is kept, not the slots. What is given back is returned to the
/// caller ([`Released`]) to unmap outside the lock.
#[derive(Debug)]
pub struct Blocks {
    slots: [Option<Block>; SLOTS],
    /// Kept blocks: `slots[..kept]`.
    kept: usize,
    bytes: usize,
}

/// Blocks to unmap, as (start, length): at most [`RELEASE_BATCH`], held without
/// allocating.
#[derive(Debug)]
pub struct Released {
    blocks: [(usize, usize); RELEASE_BATCH],
    len: usize,
}

impl Default for Released {
    fn default() -> Self {
        Self { blocks: [(0, 0); RELEASE_BATCH], len: 0 }
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

    /// Whether it holds all it can: there may be more to give back.
    pub fn is_full(&self) -> bool {
        self.len == RELEASE_BATCH
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
        Self { slots: [None; SLOTS], kept: 0, bytes: 0 }
    }

    /// Bytes kept.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// The kept blocks, with their slots.
    fn kept(&self) -> impl Iterator<Item = (usize, Block)> + '_ {
        self.slots[..self.kept].iter().enumerate().map(|(slot, block)| (slot, block.expect("a kept block")))
    }

    /// The kept block to serve a mapping of `len` bytes, removed from the slots, as (start,
    /// its length): one of exactly `len` (the most recently freed: its pages are the
    /// likeliest to be in the caches), else the smallest longer one, else the longest
    /// shorter one. The caller hands a longer block out whole or resizes it with `mremap`
    /// (see [`allocate`](super::large_blocks::allocate)): its pages stay mapped as far as
    /// both lengths go, so an allocation consumes what is kept
    /// whatever its size, and keeping blocks never raises the peak of mapped memory by more
    /// than what was kept when a request found none (see the module's documentation).
    /// (Leaving blocks more than twice as long to requests of their size raised the peak
    /// of streaming a filtered text column from 190 to 325 MiB above baseline.)
    pub fn take(&mut self, len: usize) -> Option<(usize, usize)> {
        let exact = self.kept().filter(|(_, b)| b.len == len).max_by_key(|(_, b)| b.freed_at);
        let longer = || self.kept().filter(|(_, b)| b.len > len).min_by_key(|(_, b)| b.len);
        let shorter = || self.kept().filter(|(_, b)| b.len < len).max_by_key(|(_, b)| b.len);
        let (slot, _) = exact.or_else(longer).or_else(shorter)?;
        Some(self.remove(slot))
    }

    /// A kept block of exactly `len` bytes (the most recently freed), removed from the
    /// slots: for a block growing by more than it holds (see
    /// [`resize`](super::large_blocks::resize)).
    pub fn take_exact(&mut self, len: usize) -> Option<usize> {
        let (slot, _) = self.kept().filter(|(_, b)| b.len == len).max_by_key(|(_, b)| b.freed_at)?;
        Some(self.remove(slot).0)
    }

    /// Keeps the freed block at `start` mapping `len` bytes, giving back the oldest blocks
    /// as needed to stay within `cap` bytes and the slots; returns what to unmap (the block
    /// itself when it is larger than `cap`, or when more blocks than a [`Released`] holds
    /// would have to make room for it).
    pub fn put(&mut self, start: usize, len: usize, now: Instant, cap: usize) -> Released {
        let mut released = Released::default();
        // One place left in `released` for the block itself, should it not fit.
        while len <= cap && self.bytes > cap - len && released.len < RELEASE_BATCH - 1 {
            self.give_back_oldest(&mut released);
        }
        if len > cap || self.bytes > cap - len {
            released.push(start, len);
            return released;
        }
        if self.kept == SLOTS {
            self.give_back_oldest(&mut released);
        }
        self.slots[self.kept] = Some(Block { start, len, freed_at: now });
        self.kept += 1;
        self.bytes += len;
        released
    }

    /// Removes the blocks kept `keep_for` or longer at `now` (at most a [`Released`]'s
    /// worth: [`Released::is_full`] says there may be more).
    pub fn stale(&mut self, now: Instant, keep_for: Duration) -> Released {
        let mut released = Released::default();
        let mut slot = 0;
        while slot < self.kept && !released.is_full() {
            match self.slots[slot].is_some_and(|b| now.saturating_duration_since(b.freed_at) >= keep_for) {
                // The last kept block moves into `slot`: look at it next.
                true => {
                    let (start, len) = self.remove(slot);
                    released.push(start, len);
                }
                false => slot += 1,
            }
        }
        released
    }

    /// Removes the oldest blocks until at most `cap` bytes are kept (at most a
    /// [`Released`]'s worth).
    fn over(&mut self, cap: usize) -> Released {
        let mut released = Released::default();
        while self.bytes > cap && !released.is_full() {
            self.give_back_oldest(&mut released);
        }
        released
    }

    /// Removes the oldest kept block (there is one) into `released` (not full).
    fn give_back_oldest(&mut self, released: &mut Released) {
        let (oldest, _) = self.kept().min_by_key(|(_, b)| b.freed_at).expect("a kept block to give back");
        let (start, len) = self.remove(oldest);
        released.push(start, len);
    }

    /// The slot's block, removed; the last kept block takes its slot.
    fn remove(&mut self, slot: usize) -> (usize, usize) {
        let block = self.slots[slot].take().expect("an occupied slot");
        self.kept -= 1;
        self.slots.swap(slot, self.kept);
        self.bytes -= block.len;
        (block.start, block.len)
    }
}

static BLOCKS: Mutex<Blocks> = Mutex::new(Blocks::new());

/// The slots, unless they stay busy through a few tries: spinning, then yielding (another
/// thread holds them for a walk of what is kept, microseconds). Never a blocking wait: a
/// process forked while they were held would wait for ever.
fn slots() -> Option<std::sync::MutexGuard<'static, Blocks>> {
    const SPINS: usize = 32;
    const YIELDS: usize = 32;
    for attempt in 0..SPINS + YIELDS {
        match BLOCKS.try_lock() {
            Ok(blocks) => return Some(blocks),
            Err(std::sync::TryLockError::Poisoned(_)) => return None,
            Err(std::sync::TryLockError::WouldBlock) if attempt < SPINS => std::hint::spin_loop(),
            Err(std::sync::TryLockError::WouldBlock) => std::thread::yield_now(),
        }
    }
    None
}

/// A kept block to serve a mapping of `len` bytes, as (start, its length), if one is kept
/// and the slots are free to look (see [`Blocks::take`]).
pub(super) fn take(len: usize) -> Option<(*mut u8, usize)> {
    if retain_bytes() == 0 {
        return None;
    }
    let mut blocks = slots()?;
    let stale = blocks.stale(Instant::now(), retain_for());
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
    let mut blocks = slots()?;
    blocks.take_exact(len).map(|start| start as *mut u8)
}

/// Keeps the freed block `block` mapping `len` bytes; false when it is not kept (the caller
/// unmaps it).
pub(super) fn put(block: *mut u8, len: usize) -> bool {
    let cap = retain_bytes();
    if cap == 0 {
        return false;
    }
    let Some(mut blocks) = slots() else { return false };
    let now = Instant::now();
    let stale = blocks.stale(now, retain_for());
    let evicted = blocks.put(block as usize, len, now, cap);
    drop(blocks);
    stale.unmap();
    evicted.unmap();
    true
}

/// Unmaps the blocks kept longer than [`retain_for`]; returns how many.
pub fn release_stale() -> usize {
    let mut count = 0;
    loop {
        let Ok(mut blocks) = BLOCKS.lock() else { return count };
        let stale = blocks.stale(Instant::now(), retain_for());
        drop(blocks);
        stale.unmap();
        count += stale.len;
        if !stale.is_full() {
            return count;
        }
    }
}

/// Starts (once per process) a thread that runs [`release_stale`] (and gives back the
/// small blocks' unused pages, [`give_back_unused`](super::small_blocks::give_back_unused))
/// every quarter second, so that an idle process soon holds no block kept past
/// [`retain_for`].
pub fn release_in_background() {
    static STARTED: std::sync::Once = std::sync::Once::new();
    STARTED.call_once(|| {
        let started = std::thread::Builder::new().name("pqsift-release".into()).spawn(|| {
            loop {
                std::thread::sleep(Duration::from_millis(250));
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
    const KEEP_FOR: Duration = Duration::from_secs(1);

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

    #[test]
    fn stale_blocks_are_given_back_a_batch_at_a_time() {
        let now = Instant::now();
        let mut blocks = Blocks::new();
        for i in 0..200 {
            blocks.put(i + 1, 1, now + Duration::from_millis(i as u64 % 2), usize::MAX);
        }
        // Kept for less than `keep_for`: nothing goes.
        assert!(blocks.stale(now + KEEP_FOR / 2, KEEP_FOR).is_empty());
        let batches: Vec<usize> =
            std::iter::from_fn(|| Some(blocks.stale(now + KEEP_FOR * 2, KEEP_FOR).len)).take(5).collect();
        assert_eq!(batches, [RELEASE_BATCH, RELEASE_BATCH, RELEASE_BATCH, 200 - 3 * RELEASE_BATCH, 0]);
        assert_eq!(blocks.bytes(), 0);
    }

    #[test]
    fn a_block_that_would_give_back_more_than_a_batch_is_not_kept() {
        let now = Instant::now();
        let mut blocks = Blocks::new();
        for i in 0..100 {
            blocks.put(i + 1, 1, now + Duration::from_millis(i as u64), 100);
        }
        // Room for a block of 100 bytes means giving back all 100: the oldest go, up to a
        // batch less one, and the block itself.
        let released = blocks.put(0xffff, 100, now + Duration::from_secs(1), 100);
        let expected: Vec<(usize, usize)> = (1..RELEASE_BATCH).map(|start| (start, 1)).chain([(0xffff, 100)]).collect();
        assert_eq!(released, expected);
        assert_eq!(blocks.bytes(), 100 - (RELEASE_BATCH - 1));
        // A block that fits is kept.
        assert!(blocks.put(0xfff0, RELEASE_BATCH - 1, now, 100).is_empty());
        assert_eq!(blocks.bytes(), 100);
    }

    #[test]
    fn the_memory_limit_is_known_here() {
        let limit = memory_limit();
        if cfg!(target_os = "linux") {
            assert!(limit.is_some_and(|bytes| bytes >= 64 << 20), "{limit:?}");
        }
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
                        let stale = blocks.stale(now, KEEP_FOR);
                        for (released, released_len) in stale.iter() {
                            prop_assert_eq!(kept.remove(released), Some(*released_len));
                        }
                        // All of them, unless a batch's worth came back.
                        prop_assert!(stale.is_full() || blocks.stale(now, KEEP_FOR).is_empty());
                    }
                }
                prop_assert!(blocks.bytes() <= cap);
                prop_assert_eq!(blocks.bytes(), kept.values().sum::<usize>());
            }
        }
    }
}
