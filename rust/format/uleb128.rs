//! ULEB128, the variable-length unsigned integers of Thrift's compact protocol and of
//! Parquet's encodings (run headers, DELTA_BINARY_PACKED headers): seven bits a byte, low
//! bits first, the high bit set on every byte but the last.
//!
//! ```
//! use pqsift::format::uleb128::{Uleb128Error, read};
//! let mut pos = 0;
//! assert_eq!(read(&[0xe5, 0x8e, 0x26, 7], &mut pos, 10), Ok(624_485));
//! assert_eq!(pos, 3);
//! assert_eq!(read(&[0x80, 0x80], &mut 0, 10), Err(Uleb128Error::Ended));
//! assert_eq!(read(&[0x80, 0x80, 1], &mut 0, 2), Err(Uleb128Error::TooLong));
//! ```

/// Why no integer was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Uleb128Error {
    /// The bytes end inside the integer.
    Ended,
    /// The integer runs past the bytes allowed.
    TooLong,
}

/// The integer of at most `max_bytes` bytes (10 hold a `u64`) at `*pos` in `bytes`, `*pos`
/// moved past the bytes read.
pub fn read(bytes: &[u8], pos: &mut usize, max_bytes: usize) -> Result<u64, Uleb128Error> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7).take(max_bytes) {
        let &byte = bytes.get(*pos).ok_or(Uleb128Error::Ended)?;
        *pos += 1;
        value |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Ok(value);
        }
    }
    Err(Uleb128Error::TooLong)
}
