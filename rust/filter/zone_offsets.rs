//! Session time zones: their names, their offsets from UTC, and the range of those offsets
//! for bounds on wall clocks.
//!
//! In a zone whose offset changes (daylight saving, a zone's own history), an instant's wall
//! clock does not keep the instants' order: at the autumn change 01:59 EDT is followed by
//! 01:00 EST, and in zones that changed at midnight the date itself steps back. But every
//! wall clock is its instant plus one of the zone's offsets, so the wall clocks of instants
//! in `[lo, hi]` lie in `[lo + least, hi + greatest]`. Pruning uses that: a date, a wall
//! clock or a truncation of instants is bounded without knowing where the transitions fall.
//!
//! ```text
//! America/New_York: offsets -04:56:02 (until 1883), -05:00, -04:00
//!   instants 2026-01-20 10:00Z ..= 2026-01-21 02:00Z
//!   → wall clocks within 2026-01-20 05:00 ..= 2026-01-20 22:00
//!   → CAST(ts AS DATE) within 2026-01-20 ..= 2026-01-20
//! ```

use std::cell::Cell;

use arrow::array::timezone::Tz;
use chrono::{NaiveDateTime, Offset, TimeZone};

use super::zone_offset_ranges::{SHORTEST_OFFSET_SPAN_SECONDS, ZONE_OFFSET_RANGES};

/// Parses a session or literal time zone: a tz database name or a `±hh:mm` offset.
pub(crate) fn parse_time_zone(name: &str) -> crate::Result<Tz> {
    name.parse::<Tz>().map_err(|_| crate::PqsiftError::filter(format!("unknown time zone \"{name}\"")))
}

/// The offset of a session time zone that never changes (UTC or `±hh:mm`), in seconds.
pub(crate) fn fixed_offset_seconds(time_zone: &str) -> Option<i32> {
    if ["UTC", "Etc/UTC", "GMT", "Etc/GMT", "UCT", "Zulu", "Z"].contains(&time_zone) {
        return Some(0);
    }
    if !time_zone.starts_with(['+', '-']) {
        return None;
    }
    let tz = parse_time_zone(time_zone).ok()?;
    let epoch = chrono::DateTime::from_timestamp(0, 0)?.naive_utc();
    Some(tz.offset_from_utc_datetime(&epoch).fix().local_minus_utc())
}

/// The microseconds since 1970 chrono's date-times reach (about ±262,000 years).
pub(crate) const CHRONO_MICROS: std::ops::RangeInclusive<i64> =
    NaiveDateTime::MIN.and_utc().timestamp_micros()..=NaiveDateTime::MAX.and_utc().timestamp_micros();

/// The least and greatest offset from UTC, in microseconds, that wall clocks of
/// `session_time_zone` have had (the same for a fixed offset); `None` for a name pqsift
/// does not know.
pub(crate) fn offset_range_micros(session_time_zone: &str) -> Option<(i64, i64)> {
    let (least, greatest) = match fixed_offset_seconds(session_time_zone) {
        Some(seconds) => (seconds, seconds),
        None => {
            // The zone's own name, as chrono-tz spells it (the name parsed may be a link).
            let name = parse_time_zone(session_time_zone).ok()?.to_string();
            let at = ZONE_OFFSET_RANGES.binary_search_by(|(zone, ..)| (*zone).cmp(name.as_str())).ok()?;
            let (_, least, greatest) = ZONE_OFFSET_RANGES[at];
            (least, greatest)
        }
    };
    Some((i64::from(least) * 1_000_000, i64::from(greatest) * 1_000_000))
}

/// Instants grouped in spans of 2^38 µs (about 3.2 days): shorter than the shortest time
/// between two changes of offset in any zone, so a span holds at most one change.
const SPAN_BITS: u32 = 38;
const _: () = assert!((1i64 << SPAN_BITS) < SHORTEST_OFFSET_SPAN_SECONDS * 1_000_000);
// A wall clock's possible instants (within a zone's range of offsets, at most Apia's 25.5
// hours) hold at most one change too.
const _: () = assert!(greatest_range_seconds() < SHORTEST_OFFSET_SPAN_SECONDS);

const fn greatest_range_seconds() -> i64 {
    let mut widest = 0;
    let mut i = 0;
    while i < ZONE_OFFSET_RANGES.len() {
        let (_, least, greatest) = ZONE_OFFSET_RANGES[i];
        if (greatest - least) as i64 > widest {
            widest = (greatest - least) as i64;
        }
        i += 1;
    }
    widest
}

/// Spans remembered at once (a column's instants over a few weeks, in any order).
const SLOTS: usize = 16;

/// A zone's offset at each instant, looked up in chrono-tz once per span of instants
/// rather than per instant (a binary search of the zone's transitions each). A span whose
/// ends have the same offset has it throughout, since it holds at most one change; one
/// whose ends differ has its change found by bisection, once.
///
/// ```text
/// America/New_York, the span 2024-03-09 20:17Z ..= 2024-03-13 00:38Z (index 6221):
///   ends -05:00 and -04:00 → the change at 2024-03-10 07:00Z (40 lookups, once)
///   2024-03-10 06:59:59Z → -05:00; 2024-03-10 07:00:00Z → -04:00 (no lookup)
/// ```
pub(crate) struct ZoneClock {
    tz: Tz,
    /// The zone's least and greatest offset (µs), if known.
    range: Option<(i64, i64)>,
    slots: [Cell<Span>; SLOTS],
}

/// A span's offsets: `before` until `change`, `after` from it (µs).
#[derive(Clone, Copy)]
struct Span {
    index: i64,
    change: i64,
    before: i64,
    after: i64,
}

impl ZoneClock {
    pub(crate) fn new(tz: Tz) -> Self {
        // No instant's span index is i64::MIN (it is the instant shifted right).
        let empty = Span { index: i64::MIN, change: 0, before: 0, after: 0 };
        let range = offset_range_micros(&tz.to_string());
        Self { tz, range, slots: std::array::from_fn(|_| Cell::new(empty)) }
    }

    pub(crate) fn tz(&self) -> &Tz {
        &self.tz
    }

    /// The instant whose wall clock is `wall`, where one offset holds over every instant
    /// that could have it (those within the zone's range of offsets of it): that span is
    /// shorter than the time between two changes, so equal offsets at its ends mean no
    /// change within. `None` near a change.
    #[inline]
    pub(crate) fn unique_instant(&self, wall: i64) -> Option<i64> {
        let (least, greatest) = self.range?;
        let offset = self.offset_micros(wall.checked_sub(greatest)?)?;
        (self.offset_micros(wall.checked_sub(least)?)? == offset).then(|| wall - offset)
    }

    /// The zone's offset at `instant`, in microseconds; `None` outside chrono's range.
    #[inline]
    pub(crate) fn offset_micros(&self, instant: i64) -> Option<i64> {
        let index = instant >> SPAN_BITS;
        let slot = &self.slots[(index as usize) % SLOTS];
        let mut span = slot.get();
        if span.index != index {
            // A span reaching past chrono's range: each instant on its own.
            let Some(found) = self.span(index) else { return self.look_up(instant) };
            span = found;
            slot.set(span);
        }
        Some(if instant < span.change { span.before } else { span.after })
    }

    fn span(&self, index: i64) -> Option<Span> {
        let first = index << SPAN_BITS;
        let last = first + ((1i64 << SPAN_BITS) - 1);
        let (before, after) = (self.look_up(first)?, self.look_up(last)?);
        if before == after {
            return Some(Span { index, change: i64::MAX, before, after });
        }
        // The first instant with the later offset: `low` has the earlier, `high` the later.
        let (mut low, mut high) = (first, last);
        while high - low > 1 {
            let middle = low + (high - low) / 2;
            if self.look_up(middle)? == before {
                low = middle;
            } else {
                high = middle;
            }
        }
        Some(Span { index, change: high, before, after })
    }

    fn look_up(&self, instant: i64) -> Option<i64> {
        if !CHRONO_MICROS.contains(&instant) {
            return None;
        }
        let utc = chrono::DateTime::from_timestamp_micros(instant)?.naive_utc();
        Some(i64::from(self.tz.offset_from_utc_datetime(&utc).fix().local_minus_utc()) * 1_000_000)
    }
}

#[cfg(test)]
mod tests {
    use chrono::DateTime;
    use proptest::prelude::*;

    use super::super::zone_offset_ranges::TZDB_VERSION;
    use super::*;

    /// The table was read from the tz database this build links: regenerate it with
    /// `python tools/zone_offset_ranges.py` when chrono-tz moves.
    #[test]
    fn the_table_is_read_from_the_linked_tz_database() {
        assert_eq!(TZDB_VERSION, chrono_tz::IANA_TZDB_VERSION);
        assert_eq!(ZONE_OFFSET_RANGES.len(), chrono_tz::TZ_VARIANTS.len());
        assert!(ZONE_OFFSET_RANGES.is_sorted_by(|a, b| a.0 < b.0));
    }

    /// Every zone's offset, sampled every ten days or so from 1800 to 2100, lies within the
    /// zone's range, and the range is what the zone's name finds.
    #[test]
    fn every_zone_keeps_within_its_range() {
        for zone in chrono_tz::TZ_VARIANTS {
            let (least, greatest) = offset_range_micros(zone.name()).unwrap_or_else(|| panic!("{zone}"));
            let first = DateTime::parse_from_rfc3339("1800-01-01T00:00:00Z").unwrap().timestamp();
            let last = DateTime::parse_from_rfc3339("2100-01-01T00:00:00Z").unwrap().timestamp();
            for seconds in (first..last).step_by(10 * 86_400 + 3_607) {
                let utc = DateTime::from_timestamp(seconds, 0).unwrap().naive_utc();
                let offset = i64::from(zone.offset_from_utc_datetime(&utc).fix().local_minus_utc()) * 1_000_000;
                assert!((least..=greatest).contains(&offset), "{zone} at {utc}: {offset}");
            }
        }
    }

    #[test]
    fn fixed_zones_and_unknown_names() {
        assert_eq!(offset_range_micros("UTC"), Some((0, 0)));
        assert_eq!(offset_range_micros("+05:30"), Some((19_800_000_000, 19_800_000_000)));
        assert_eq!(offset_range_micros("Etc/GMT+5"), Some((-18_000_000_000, -18_000_000_000)));
        assert_eq!(offset_range_micros("America/New_York"), Some((-18_000_000_000, -14_400_000_000)));
        // A link has the range of its own entry.
        assert_eq!(offset_range_micros("US/Eastern"), offset_range_micros("America/New_York"));
        assert_eq!(offset_range_micros("Mars/Olympus_Mons"), None);
    }

    proptest! {
        /// A clock's offsets, one instant after another (its spans remembered, pushed
        /// out, found again), equal chrono-tz's for each instant.
        #[test]
        fn remembered_spans_give_each_instants_offset(
            zone in drawn::zones(),
            mut instants in prop::collection::vec(drawn::micros(), 1..200),
            sorted in any::<bool>(),
        ) {
            if sorted {
                instants.sort();
            }
            let clock = ZoneClock::new(parse_time_zone(zone).unwrap());
            for instant in instants {
                prop_assert_eq!(clock.offset_micros(instant), clock.look_up(instant), "{} at {}", zone, instant);
            }
        }
    }

    /// The changes of offset of every fifth zone (and of Sao Paulo, Lord Howe and Apia)
    /// are found where chrono-tz has them, over 1960-2040.
    #[test]
    fn changes_of_offset_are_found() {
        let first = DateTime::parse_from_rfc3339("1960-01-01T00:00:00Z").unwrap().timestamp_micros();
        let last = DateTime::parse_from_rfc3339("2040-01-01T00:00:00Z").unwrap().timestamp_micros();
        let named = [chrono_tz::America::Sao_Paulo, chrono_tz::Australia::Lord_Howe, chrono_tz::Pacific::Apia];
        for zone in chrono_tz::TZ_VARIANTS.iter().step_by(5).chain(&named) {
            let clock = ZoneClock::new(parse_time_zone(zone.name()).unwrap());
            for index in (first >> SPAN_BITS)..=(last >> SPAN_BITS) {
                let span = clock.span(index).unwrap();
                if span.change != i64::MAX {
                    assert_eq!(clock.look_up(span.change - 1), Some(span.before), "{zone}");
                    assert_eq!(clock.look_up(span.change), Some(span.after), "{zone}");
                }
                let middle = (index << SPAN_BITS) + (1 << (SPAN_BITS - 1));
                assert_eq!(clock.offset_micros(middle), clock.look_up(middle), "{zone}");
            }
        }
    }
}

/// Strategies the zone tests share.
#[cfg(test)]
pub(crate) mod drawn {
    use proptest::prelude::*;

    use super::CHRONO_MICROS;

    /// Changes of offset (UTC seconds): New York's spring and autumn of 2024, Sao Paulo's
    /// at midnight (2018 forward, 2019 back), Lord Howe's half hour, Apia's skipped day.
    const CHANGES: [i64; 6] =
        [1_710_054_000, 1_730_613_600, 1_541_300_400, 1_550_368_800, 1_712_415_600, 1_325_239_200];
    /// Wall clocks (read as UTC seconds) in or next to those changes' gaps and overlaps.
    const CHANGES_ON_THE_WALL: [i64; 6] =
        [1_710_036_000, 1_730_595_600, 1_541_289_600, 1_550_361_600, 1_712_455_200, 1_325_282_400];

    /// Microseconds (instants or wall clocks) near changes of offset, anywhere at all, and
    /// at the ends of chrono's range.
    pub(crate) fn micros() -> impl Strategy<Value = i64> {
        let near = |at: [i64; 6], by: i64| {
            (prop::sample::select(at.to_vec()), -by..by).prop_map(|(at, by)| at * 1_000_000 + by)
        };
        prop_oneof![
            near(CHANGES, 400_000_000_000),
            near(CHANGES, 2_000),
            near(CHANGES_ON_THE_WALL, 4_000_000_000),
            any::<i64>(),
            -20_000_000_000_000_000i64..20_000_000_000_000_000,
            (-200_000_000_000i64..200_000_000_000).prop_map(|d| *CHRONO_MICROS.start() + d),
            (-200_000_000_000i64..200_000_000_000).prop_map(|d| *CHRONO_MICROS.end() + d),
        ]
    }

    /// The zones of those changes, UTC and a fixed offset, or any zone chrono-tz knows.
    pub(crate) fn zones() -> impl Strategy<Value = &'static str> {
        prop_oneof![
            prop::sample::select(vec![
                "America/New_York",
                "America/Sao_Paulo",
                "Australia/Lord_Howe",
                "Pacific/Apia",
                "UTC",
                "+05:30"
            ]),
            prop::sample::select(chrono_tz::TZ_VARIANTS.map(|zone| zone.name()).to_vec()),
        ]
    }
}
