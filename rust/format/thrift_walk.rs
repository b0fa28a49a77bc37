//! Walking Thrift compact-protocol bytes (Parquet's footer, page headers) without
//! decoding them: skip values, read integers and byte strings. The parquet crate's own
//! decoder is private; pqsift needs only a few fields — the footer's encryption marker,
//! page header sizes to check before the crate acts on them, the statistics in data page
//! headers — and where a footer's row groups begin and end (to decode it in parts). Every
//! step is bounded by the buffer and a nesting limit, so hostile bytes cannot make it
//! allocate, loop or recurse.

/// A cursor over Thrift compact-protocol bytes that skips values and reads a few kinds.
pub(crate) struct ThriftWalker<'a> {
    bytes: &'a [u8],
    position: usize,
}

impl<'a> ThriftWalker<'a> {
    /// A walker at the start of `bytes`.
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        Self { bytes, position: 0 }
    }

    /// Bytes consumed so far.
    pub(crate) fn position(&self) -> usize {
        self.position
    }

    /// The integer value of the current field (types i8 / i16 / i32 / i64).
    pub(crate) fn integer(&mut self, field_type: u8) -> Option<i64> {
        match field_type {
            3 => self.byte().map(|b| i64::from(b as i8)),
            4..=6 => {
                let zigzag = self.varint()?;
                Some((zigzag >> 1) as i64 ^ -((zigzag & 1) as i64))
            }
            _ => None,
        }
    }

    const MAX_DEPTH: usize = 64;

    fn byte(&mut self) -> Option<u8> {
        let b = *self.bytes.get(self.position)?;
        self.position += 1;
        Some(b)
    }

    fn varint(&mut self) -> Option<u64> {
        super::uleb128::read(self.bytes, &mut self.position, 10).ok()
    }

    fn advance(&mut self, n: u64) -> Option<()> {
        let end = self.position.checked_add(usize::try_from(n).ok()?)?;
        (end <= self.bytes.len()).then(|| self.position = end)
    }

    /// `(type, id)` of the next field, `None` at the end of the struct (or of the bytes).
    pub(crate) fn field_header(&mut self, last_id: i16) -> Option<(u8, i16)> {
        let header = self.byte()?;
        let field_type = header & 0x0f;
        if field_type == 0 {
            return None;
        }
        let delta = header >> 4;
        let id = if delta == 0 {
            let zigzag = self.varint()?;
            ((zigzag >> 1) as i64 ^ -((zigzag & 1) as i64)) as i16
        } else {
            last_id.wrapping_add(i16::from(delta))
        };
        Some((field_type, id))
    }

    /// `(element type, size)` of the list or set header at the cursor.
    pub(crate) fn list_header(&mut self) -> Option<(u8, u64)> {
        let header = self.byte()?;
        let size = match header >> 4 {
            15 => self.varint()?,
            n => u64::from(n),
        };
        Some((header & 0x0f, size))
    }

    /// The bytes of the binary (or string) value at the cursor.
    pub(crate) fn binary(&mut self) -> Option<&'a [u8]> {
        let length = self.varint()?;
        let start = self.position;
        self.advance(length)?;
        Some(&self.bytes[start..self.position])
    }

    /// Bytes left after the cursor.
    pub(crate) fn remaining(&self) -> usize {
        self.bytes.len() - self.position
    }

    /// The bytes between `start` and the cursor.
    pub(crate) fn since(&self, start: usize) -> &'a [u8] {
        &self.bytes[start..self.position]
    }

    /// Past a varint, without its value (at most 10 bytes).
    #[inline]
    fn skip_varint(&mut self) -> Option<()> {
        let rest = self.bytes.get(self.position..)?;
        let length = rest.iter().take(10).position(|b| b & 0x80 == 0)?;
        self.position += length + 1;
        Some(())
    }

    /// Past one value of type `field_type`: the scalar kinds in line, containers by
    /// [`Self::skip_container`] (footers are mostly small scalars, and a wide table's
    /// footer has millions of them).
    #[inline]
    pub(crate) fn skip(&mut self, field_type: u8, depth: usize) -> Option<()> {
        match field_type {
            1 | 2 => Some(()),
            3 => self.advance(1),
            4..=6 => self.skip_varint(),
            7 => self.advance(8),
            8 => {
                let n = self.varint()?;
                self.advance(n)
            }
            13 => self.advance(16),
            9..=12 => self.skip_container(field_type, depth),
            _ => None,
        }
    }

    /// Past a list, set, map or struct, nested at most [`Self::MAX_DEPTH`] deep.
    fn skip_container(&mut self, field_type: u8, depth: usize) -> Option<()> {
        if depth > Self::MAX_DEPTH {
            return None;
        }
        match field_type {
            9 | 10 => {
                let header = self.byte()?;
                let size = match header >> 4 {
                    15 => self.varint()?,
                    n => u64::from(n),
                };
                let element = header & 0x0f;
                // Every element takes at least one byte: a size beyond the buffer is corrupt.
                if size > (self.bytes.len() - self.position) as u64 {
                    return None;
                }
                match element {
                    // Booleans and bytes, a byte each (in a list, a boolean is a byte).
                    1..=3 => self.advance(size),
                    12 => (0..size).try_for_each(|_| self.skip_struct(depth + 1)),
                    _ => (0..size).try_for_each(|_| self.skip(element, depth + 1)),
                }
            }
            11 => {
                let size = self.varint()?;
                if size == 0 {
                    return Some(());
                }
                let types = self.byte()?;
                if size > (self.bytes.len() - self.position) as u64 {
                    return None;
                }
                for _ in 0..size {
                    for t in [types >> 4, types & 0x0f] {
                        match t {
                            1 | 2 => self.advance(1)?,
                            _ => self.skip(t, depth + 1)?,
                        }
                    }
                }
                Some(())
            }
            _ => self.skip_struct(depth),
        }
    }

    /// Past a struct's fields, up to its stop byte (or the end of the bytes). A field's id
    /// does not matter here, only how its header is laid out. The scalar kinds, which are
    /// most of a footer's millions of values, are skipped here without a call.
    fn skip_struct(&mut self, depth: usize) -> Option<()> {
        if depth > Self::MAX_DEPTH {
            return None;
        }
        while let Some(&header) = self.bytes.get(self.position) {
            self.position += 1;
            let field_type = header & 0x0f;
            if field_type == 0 {
                break;
            }
            if header >> 4 == 0 {
                self.skip_varint()?;
            }
            match field_type {
                1 | 2 => {}
                3 => self.advance(1)?,
                4..=6 => self.skip_varint()?,
                7 => self.advance(8)?,
                8 => {
                    let n = self.varint()?;
                    self.advance(n)?;
                }
                _ => self.skip(field_type, depth + 1)?,
            }
        }
        Some(())
    }
}

/// A compact-protocol list header: `count` elements of `element_type`.
pub(crate) fn push_list_header(bytes: &mut Vec<u8>, element_type: u8, count: usize) {
    if count < 15 {
        bytes.push(((count as u8) << 4) | element_type);
        return;
    }
    bytes.push(0xf0 | element_type);
    let mut n = count as u64;
    while n >= 0x80 {
        bytes.push((n as u8) | 0x80);
        n >>= 7;
    }
    bytes.push(n as u8);
}
