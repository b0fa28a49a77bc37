"""Writes ``rust/filter/zone_offset_ranges.rs``: the least and greatest UTC offset each time
zone of chrono-tz has ever had, and the shortest time between two changes of offset in any
zone, read from the crate's own tables (the tz database version the build links).

Pruning bounds a wall clock in a zone whose offset changes by its two offsets; the wall
clocks of a column look a zone's offset up once per span of instants shorter than that
time. chrono-tz does not expose a zone's transitions, so they are read from its source here.
Run it again when Cargo.lock moves chrono-tz; a Rust test fails until then.

    python tools/zone_offset_ranges.py
"""

from __future__ import annotations

import itertools
import json
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "rust/filter/zone_offset_ranges.rs"


def chrono_tz_source() -> tuple[str, Path]:
    metadata = json.loads(
        subprocess.run(
            ["cargo", "metadata", "--format-version", "1", "--locked"],
            cwd=ROOT,
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    )
    for package in metadata["packages"]:
        if package["name"] == "chrono-tz":
            return package["version"], Path(package["manifest_path"]).parent / "src" / "prebuilt"
    raise SystemExit("chrono-tz is not a dependency")


def main() -> None:
    version, prebuilt = chrono_tz_source()
    found = re.search(r'IANA_TZDB_VERSION: &str = "([^"]+)"', (prebuilt / "directory.rs").read_text())
    if found is None:
        raise SystemExit("no IANA_TZDB_VERSION in chrono-tz")
    tzdb = found.group(1)
    source = (prebuilt / "timezones.rs").read_text()
    names = dict(re.findall(r'Tz::(\w+) => "([^"]+)",', source))
    # Each zone's block of spans, up to the next zone's.
    starts = [(m.start(), m.group(1)) for m in re.finditer(r"^\s*Tz::(\w+) => \{$", source, re.M)]
    ranges: dict[str, tuple[int, int]] = {}
    # The shortest time between two changes of offset, in any zone.
    shortest: int | None = None
    for (start, variant), (end, _) in zip(starts, [*starts[1:], (len(source), "")], strict=True):
        block = source[start:end]
        offsets = [int(u) + int(d) for u, d in re.findall(r"utc_offset: (-?\d+),\s*dst_offset: (-?\d+)", block)]
        if not offsets:
            raise SystemExit(f"no spans for {variant}")
        ranges[names[variant]] = (min(offsets), max(offsets))
        changes: list[int] = []
        first = re.search(r"first: FixedTimespan \{\s*utc_offset: (-?\d+),\s*dst_offset: (-?\d+)", block)
        if first is None:
            raise SystemExit(f"no first span for {variant}")
        current = int(first.group(1)) + int(first.group(2))
        for at, utc, dst in re.findall(r"\((-?\d+), FixedTimespan \{ utc_offset: (-?\d+), dst_offset: (-?\d+)", block):
            if int(utc) + int(dst) != current:
                changes.append(int(at))
                current = int(utc) + int(dst)
        gaps = [b - a for a, b in itertools.pairwise(changes)]
        if gaps and (shortest is None or min(gaps) < shortest):
            shortest = min(gaps)
    if len(ranges) != len(names):
        raise SystemExit(f"{len(ranges)} zones with spans, {len(names)} names")
    rows = "\n".join(f'    ("{name}", {low}, {high}),' for name, (low, high) in sorted(ranges.items()))
    OUT.write_text(
        f"""//! The least and greatest UTC offset (seconds) of every zone chrono-tz {version} knows
//! (tz database {tzdb}), sorted by name, and the shortest time between two changes of
//! offset in any of them. Written by `tools/zone_offset_ranges.py`.

/// The tz database the table was read from.
#[cfg(test)]
pub(crate) const TZDB_VERSION: &str = "{tzdb}";

/// The shortest time between two changes of offset in any zone, in seconds.
pub(crate) const SHORTEST_OFFSET_SPAN_SECONDS: i64 = {shortest};

#[rustfmt::skip]
pub(crate) const ZONE_OFFSET_RANGES: &[(&str, i32, i32)] = &[
{rows}
];
"""
    )
    print(
        f"{OUT.relative_to(ROOT)}: {len(ranges)} zones, chrono-tz {version}, tz database {tzdb},"
        f" offsets unchanged for {shortest} s at least"
    )


if __name__ == "__main__":
    main()
