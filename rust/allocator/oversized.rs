//! The large blocks in use whose mapping is longer than their size's class: a kept block
//! handed whole to a shorter request ([`large_blocks::allocate`](super::large_blocks::allocate)).
//!
//! A block's size says its mapping's length ([`mapping_len`](super::large_blocks::mapping_len))
//! unless it is listed here. Handing a longer kept block out whole, rather than shrinking it
//! with `mremap`, keeps its pages: shrunk, a block moved down a class, the next request of
//! its old class found none kept and grew a shorter one onto fresh pages that the kernel
//! zeroes. Reads settled into that cycle — the `events` projection of two 8 MB columns
//! shrank two 8 MiB blocks to 1.1 MiB a scan and grew two back (~15 MB zeroed a scan; every
//! benchmark shape shrank 4–55 blocks a scan) — because a class's kept blocks never grew
//! back to what its requests needed at once. Whole blocks return to their own class when
//! freed, so the kept blocks come to match the read's peak in every class: after a scan's
//! first run nothing is shrunk or grown (CPU −1 to −6% on most shapes, A/B).
//!
//! A fixed table without a lock, as the allocator needs (no allocation, no waiting: a
//! process forked while another thread held a lock would wait for ever): a block is
//! listed in one of [`PROBES`] slots after the one its address hashes to, and only its
//! holder looks it up or removes it. A block that finds no free slot is not listed (its
//! caller shrinks it as before).
//!
//! ```
//! use pqsift::allocator::oversized;
//! let block = 0x7f00_0040_0000;
//! assert_eq!(oversized::mapping_len(block), None);
//! assert!(oversized::list(block, 8 << 20));
//! assert_eq!(oversized::mapping_len(block), Some(8 << 20));
//! assert_eq!(oversized::unlist(block), Some(8 << 20));
//! assert_eq!(oversized::mapping_len(block), None);
//! ```

use std::sync::atomic::{AtomicUsize, Ordering};

/// Slots in the table: a listed block costs two words.
const SLOTS: usize = 4096;

/// Slots a block may take, from the one its address hashes to.
pub const PROBES: usize = 16;

/// Blocks listed: while none is, a lookup returns at once.
static LISTED: AtomicUsize = AtomicUsize::new(0);

#[allow(clippy::declare_interior_mutable_const)]
const EMPTY: AtomicUsize = AtomicUsize::new(0);

/// Each slot: a listed block's start (0: free) and its mapping's length.
static STARTS: [AtomicUsize; SLOTS] = [EMPTY; SLOTS];
static LENGTHS: [AtomicUsize; SLOTS] = [EMPTY; SLOTS];

/// The slots block `start` may take, in order.
fn slots(start: usize) -> impl Iterator<Item = usize> {
    // Blocks start on pages: the page number, spread by a multiplicative hash.
    let first = ((start >> 12).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40) % SLOTS;
    (0..PROBES).map(move |i| (first + i) % SLOTS)
}

/// Lists the block at `start` (not 0, not listed) as mapping `len` bytes; false when its
/// slots are all taken (it is then not listed).
pub fn list(start: usize, len: usize) -> bool {
    debug_assert_ne!(start, 0);
    for slot in slots(start) {
        if STARTS[slot].compare_exchange(0, start, Ordering::AcqRel, Ordering::Relaxed).is_ok() {
            LENGTHS[slot].store(len, Ordering::Release);
            LISTED.fetch_add(1, Ordering::AcqRel);
            return true;
        }
    }
    false
}

/// The slot listing the block at `start`, if it is listed.
fn slot_of(start: usize) -> Option<usize> {
    if LISTED.load(Ordering::Acquire) == 0 {
        return None;
    }
    slots(start).find(|&slot| STARTS[slot].load(Ordering::Acquire) == start)
}

/// The length of the mapping at `start` if it is listed.
pub fn mapping_len(start: usize) -> Option<usize> {
    slot_of(start).map(|slot| LENGTHS[slot].load(Ordering::Acquire))
}

/// Removes the block at `start` from the table; its mapping's length if it was listed.
pub fn unlist(start: usize) -> Option<usize> {
    let slot = slot_of(start)?;
    let len = LENGTHS[slot].load(Ordering::Acquire);
    STARTS[slot].store(0, Ordering::Release);
    LISTED.fetch_sub(1, Ordering::AcqRel);
    Some(len)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Addresses no real block has (above the 47-bit user space), distinct per test.
    fn address(test: usize, i: usize) -> usize {
        (1 << 60) + (test << 40) + (i << 12)
    }

    #[test]
    fn a_block_whose_slots_are_all_taken_is_not_listed() {
        // PROBES + 1 addresses that hash to one slot: one of them at least finds no room
        // (fewer fit when real blocks of this test binary hold some of those slots).
        let base = address(1, 0);
        let first = slots(base).next();
        let same: Vec<usize> =
            (0..1 << 24).map(|i| base + (i << 12)).filter(|&a| slots(a).next() == first).take(PROBES + 1).collect();
        assert_eq!(same.len(), PROBES + 1);
        let listed: Vec<bool> = same.iter().map(|&a| list(a, 1 << 20)).collect();
        assert!(listed.iter().any(|&l| !l));
        for (&a, &l) in same.iter().zip(&listed) {
            assert_eq!(mapping_len(a), l.then_some(1 << 20));
            assert_eq!(unlist(a), l.then_some(1 << 20));
        }
    }

    proptest! {
        /// Whatever blocks are listed and unlisted, each listed one says its length until
        /// it is unlisted, and an unlisted one is not found.
        #[test]
        fn listed_blocks_are_found_until_unlisted(ops in proptest::collection::vec((any::<bool>(), 0usize..64, 1usize..1 << 30), 1..200)) {
            let mut model: std::collections::HashMap<usize, usize> = Default::default();
            for (add, i, len) in ops {
                let start = address(2, i);
                match add {
                    true if !model.contains_key(&start) => {
                        if list(start, len) {
                            model.insert(start, len);
                        }
                    }
                    _ => prop_assert_eq!(unlist(start), model.remove(&start)),
                }
                for (&start, &len) in &model {
                    prop_assert_eq!(mapping_len(start), Some(len));
                }
            }
            for start in model.keys() {
                unlist(*start);
            }
        }
    }
}
