//! Repetition levels checked before the parquet crate skips rows of a list or map column.
//!
//! To skip rows inside a page of a column with repetition levels, the crate counts the
//! page's levels until it has passed enough row starts. Where the levels end before the
//! page's value count (a damaged page), its count finds no level and no row and tries
//! again, forever; its reads of the same levels report them missing instead. So the pages
//! such a skip can enter have their repetition levels walked first — run headers only (see
//! [`check_holds`]), on the page decompressed — and a page whose levels end early is
//! refused as corrupt.
//!
//! ```
//! use bytes::Bytes;
//! use parquet::basic::Encoding;
//! use parquet::column::page::Page;
//! use pqsift::reading::repetition_levels::check_page;
//!
//! // A v1 page of 64 values: repetition levels of 3 bytes (one run of 64 zeros), then
//! // the rest of the page.
//! let page = |levels: &[u8]| Page::DataPage {
//!     buf: Bytes::from([&3u32.to_le_bytes()[..], levels, &[0x02, 0x80, 0x01, 0x00]].concat()),
//!     num_values: 64,
//!     encoding: Encoding::RLE_DICTIONARY,
//!     def_level_encoding: Encoding::RLE,
//!     rep_level_encoding: Encoding::RLE,
//!     statistics: None,
//! };
//! assert!(check_page(&page(&[0x80, 0x01, 0x00]), 1).is_ok());
//! // The run's header made a run of no value: the levels end before the first.
//! assert!(check_page(&page(&[0x80, 0x00, 0x00]), 1).is_err());
//! ```

use parquet::basic::Encoding;
use parquet::column::page::{Page, PageReader};

use crate::format::rle_hybrid::check_holds;

/// Fails where `page` (decompressed) holds fewer repetition levels than values, for a
/// leaf whose repetition levels go up to `max_rep_level` (at least 1).
pub fn check_page(page: &Page, max_rep_level: i16) -> Result<(), String> {
    let bit_width = (i16::BITS - max_rep_level.max(1).leading_zeros()) as u8;
    let (levels, values) = match page {
        Page::DictionaryPage { .. } => return Ok(()),
        Page::DataPage { buf, num_values, rep_level_encoding, .. } => {
            let values = *num_values as usize;
            match rep_level_encoding {
                // A v1 page's levels open with their length.
                Encoding::RLE => {
                    let length = buf.get(..4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize);
                    let levels = length.and_then(|length| buf.get(4..4usize.saturating_add(length)));
                    (levels.ok_or("the page ends inside its repetition levels")?, values)
                }
                // Deprecated (old writers'): bit-packed levels without a length, as many
                // as values.
                #[allow(deprecated)]
                Encoding::BIT_PACKED => {
                    let needed = values.saturating_mul(usize::from(bit_width)).div_ceil(8);
                    return match buf.len() >= needed {
                        true => Ok(()),
                        false => {
                            Err(format!("{} bytes hold fewer than {values} bit-packed repetition levels", buf.len()))
                        }
                    };
                }
                // The crate refuses the page itself.
                _ => return Ok(()),
            }
        }
        Page::DataPageV2 { buf, num_values, rep_levels_byte_len, .. } => {
            let levels = buf.get(..*rep_levels_byte_len as usize);
            (levels.ok_or("the page ends inside its repetition levels")?, *num_values as usize)
        }
    };
    check_holds(levels, bit_width, values).map_err(|e| format!("repetition levels: {e}"))
}

/// Checks the data pages of `pages` (one chunk of a leaf with repetition levels up to
/// `max_rep_level`) for which `wanted(page)` holds (data pages counted from 0), passing
/// over the others unread; returns the pages checked.
pub(crate) fn check_pages(
    pages: &mut dyn PageReader,
    max_rep_level: i16,
    mut wanted: impl FnMut(usize) -> bool,
) -> Result<Vec<usize>, String> {
    let mut checked = Vec::new();
    let mut page = 0;
    while let Some(next) = pages.peek_next_page().map_err(|e| e.to_string())? {
        if next.is_dict {
            pages.skip_next_page().map_err(|e| e.to_string())?;
            continue;
        }
        if !wanted(page) {
            pages.skip_next_page().map_err(|e| e.to_string())?;
        } else if let Some(data) = pages.get_next_page().map_err(|e| e.to_string())? {
            check_page(&data, max_rep_level).map_err(|e| format!("data page {page}: {e}"))?;
            checked.push(page);
        }
        page += 1;
    }
    Ok(checked)
}
