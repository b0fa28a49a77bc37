//! A large block shrunk, or served by a longer kept block, keeps the rest of its pages for
//! the next allocation instead of giving them back to the kernel
//! (`rust/allocator/large_blocks.rs`, `remap`). Its own test binary: one thread, so the
//! kept blocks are this test's alone.

#![cfg(target_os = "linux")]

use pqsift::allocator::large_blocks::{allocate, free, mapping_len, resize};

#[test]
fn a_shrunk_blocks_tail_serves_the_next_allocation_with_its_pages() {
    let (big, small) = (8 << 20, 1 << 20);
    let block = allocate(big, false);
    assert!(!block.is_null());
    // SAFETY: each block is used within its size and freed once; the tail is read only once
    // it is allocated again.
    unsafe {
        std::ptr::write_bytes(block, 0xAB, big);
        let shrunk = resize(block, big, small);
        assert_eq!(shrunk, block, "shrunk where it is");
        // The tail is kept: the next allocation of its length is it, its pages as they were
        // (a fresh mapping, even at the same address, would read as zeros).
        let tail_len = mapping_len(big) - mapping_len(small);
        let next = allocate(tail_len, false);
        assert_eq!(next as usize, block as usize + mapping_len(small));
        assert!(std::slice::from_raw_parts(next, tail_len).iter().all(|&b| b == 0xAB));
        // A kept block longer than a request serves it, and keeps its own tail in turn.
        free(next, tail_len);
        let part = allocate(3 << 20, false);
        assert_eq!(part, next);
        let rest = allocate(tail_len - (3 << 20), false);
        assert_eq!(rest as usize, next as usize + (3 << 20));
        assert_eq!(*rest, 0xAB);
        free(rest, tail_len - (3 << 20));
        free(part, 3 << 20);
        free(shrunk, small);
    }
}
