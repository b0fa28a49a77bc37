"""Peak memory of scans whose data is far larger than the bound.

Each measurement runs in a fresh subprocess that reads its own ``VmRSS`` after importing
pyarrow and pqsift (the baseline) and its own ``VmHWM`` at the end (the peak): see
``tests/test_hostile.py`` for why not ``ru_maxrss``. Run with ``pytest -s`` to see the
figures; every assertion message has them too.

- A file of 2 row groups of ~1 GiB decoded each (4.3 M rows: int64 ``id``, float64
  ``value``, a ~230-byte ``text`` of random words, plain-encoded; ~120 MiB on disk with
  zstd), streamed batch by batch with the default options, 1 thread, 2 threads, and a
  filter keeping half the rows projecting ``text``: peak RSS above the baseline
  < 256 MiB, i.e. far less than one decoded row group.
- ``data/large_string_map.brotli.parquet`` (2 GiB of strings in one column chunk, 4 KiB
  on disk) is rejected with ``UnsupportedError`` before it is decompressed: < 256 MiB.
- No file of the parquet-testing corpus takes a full scan past 1 GiB of RSS (one
  subprocess; the high-water mark reset between files through ``/proc/self/clear_refs``).
- 800 files of a 1,000-column table pruned to one by the filter: the footers of the
  pruned files are let go once planned, peak < 384 MiB (the metadata cache's 256 MiB and
  working memory) where holding every parsed footer took ~800 MiB; < 96 MiB with the
  cache bounded to 16 MiB by ``PQSIFT_METADATA_CACHE_BYTES``. Every one of them read, with
  that cache: < 160 MiB, the footers of one group of files at a time.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from test_corpus import FILES, ROOT
from test_hostile import PEAK_RSS_LIMIT, peak_rss_of

MiB = 1 << 20
CORPUS_PEAK_LIMIT = 1 << 30

# The wide file: ROWS_PER_GROUP x (8 + 8 + 4 + 230) bytes = 1.0 GiB of Arrow per row group.
ROWS_PER_GROUP = 4_300_000
ROW_GROUPS = 2
TEXT_LENGTHS = (200, 260)  # inclusive: 230 bytes on average
# Text rows are slices of a 16 KiB run of random words (1,000 of 2-10 letters): every
# row is ~unique (no dictionary would help) yet zstd compresses a page ~20x.
WORD_POOL, TEXT_BUFFER = 1_000, 16 << 10
# Half of the rows: the second half of row group 0 and the first half of row group 1.
FILTER_LOW, FILTER_HIGH = ROWS_PER_GROUP // 2, ROWS_PER_GROUP + ROWS_PER_GROUP // 2
FILTER = f"id >= {FILTER_LOW} AND id < {FILTER_HIGH}"


def write_wide_row_groups(path: Path) -> dict[str, Any]:
    """Writes the wide file (row group by row group, each built in pieces of 512 Ki rows
    with numpy) and returns what a scan of it must count."""
    import numpy as np
    import pyarrow as pa

    started = time.perf_counter()
    rng = np.random.default_rng(20240601)
    letters = np.frombuffer(b"abcdefghijklmnopqrstuvwxyz", np.uint8)
    words = [rng.choice(letters, rng.integers(2, 11)).tobytes() for _ in range(WORD_POOL)]
    run = b" ".join(rng.choice(np.array(words, dtype=object), TEXT_BUFFER // 4))[:TEXT_BUFFER]
    low, high = TEXT_LENGTHS
    # Every window of `high` bytes of the run, as rows of a (no-copy) 2-D view.
    windows = np.lib.stride_tricks.sliding_window_view(np.frombuffer(run, np.uint8), high)
    schema = pa.schema([("id", pa.int64()), ("value", pa.float64()), ("text", pa.string())])
    lengths_of_all = np.empty(ROWS_PER_GROUP * ROW_GROUPS, np.int64)
    decoded = []
    piece = 1 << 19
    with pq.ParquetWriter(
        path, schema, compression="zstd", use_dictionary=["id", "value"], write_page_index=True
    ) as writer:
        for group in range(ROW_GROUPS):
            batches = []
            for start in range(0, ROWS_PER_GROUP, piece):
                n = min(piece, ROWS_PER_GROUP - start)
                first = group * ROWS_PER_GROUP + start
                ids = np.arange(first, first + n, dtype=np.int64)
                lengths = rng.integers(low, high + 1, n)
                lengths_of_all[first : first + n] = lengths
                # Row i: the first lengths[i] bytes of a random window.
                rows = windows[rng.integers(0, len(windows), n)]
                data = rows[np.arange(high)[None, :] < lengths[:, None]]
                offsets = np.zeros(n + 1, np.int32)
                np.cumsum(lengths, out=offsets[1:])
                text = pa.StringArray.from_buffers(n, pa.py_buffer(offsets), pa.py_buffer(data))
                batches.append(pa.record_batch([pa.array(ids), pa.array((ids % 1000) * 0.25), text], schema=schema))
            table = pa.Table.from_batches(batches, schema=schema)
            decoded.append(table.nbytes)
            writer.write_table(table, row_group_size=ROWS_PER_GROUP)
            del table, batches
    rows = ROWS_PER_GROUP * ROW_GROUPS
    metadata = pq.ParquetFile(path).metadata
    assert metadata.num_row_groups == ROW_GROUPS and metadata.num_rows == rows
    return {
        "rows": rows,
        "id_sum": rows * (rows - 1) // 2,
        "text_bytes": int(lengths_of_all.sum()),
        "filtered_rows": FILTER_HIGH - FILTER_LOW,
        "filtered_text_bytes": int(lengths_of_all[FILTER_LOW:FILTER_HIGH].sum()),
        "decoded_per_group": decoded,
        "file_bytes": path.stat().st_size,
        "seconds": time.perf_counter() - started,
    }


@pytest.fixture(scope="module")
def wide_file(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """The wide file, written by a subprocess (the writer peaks at ~2.5 GiB: kept out of
    the pytest process and the subprocesses it starts)."""
    path = tmp_path_factory.mktemp("memory_bounds") / "wide_row_groups.parquet"
    done = subprocess.run([sys.executable, __file__, "--write", str(path)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    facts = json.loads(done.stdout.strip().splitlines()[-1])
    print(
        f"\nwide file: {facts['rows']:,} rows in {ROW_GROUPS} row groups of "
        f"{', '.join(f'{d / MiB:,.0f}' for d in facts['decoded_per_group'])} MiB decoded; "
        f"{facts['file_bytes'] / MiB:,.0f} MiB on disk; written in {facts['seconds']:.1f} s"
    )
    return path, facts


# ----- streaming the wide file -----------------------------------------------------------

# The start of every child script: the imports a scan loads (so the baseline includes
# them) and `status(field)`, a field of /proc/self/status in bytes.
_CHILD_PRELUDE = r"""
import json, sys, time
import pyarrow as pa
import pyarrow.compute as pc
import pqsift

def status(field):
    for line in open("/proc/self/status"):
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    raise LookupError(field)
"""


def run_child(script: str, *args: str, failed: str, env: dict[str, str] | None = None) -> tuple[dict[str, Any], int, int]:
    """Runs one of the child scripts below with ``args`` (in ``env``): its JSON line, its
    peak RSS and the peak above its baseline. A child that exits with an error fails the
    test, the message starting with ``failed``."""
    code, out, err, peak = peak_rss_of([sys.executable, "-c", script, *args], env=env)
    assert code == 0, f"{failed} (exit {code}): {err.decode()[-3000:]}"
    got = json.loads(out.splitlines()[-1])
    return got, peak, peak - got["baseline"]

# Prints the counts as JSON, then the peak in test_hostile's format ("VmHWM <kB>").
_STREAM = _CHILD_PRELUDE + r"""
path, arguments = sys.argv[1], json.loads(sys.argv[2])
baseline = status("VmRSS")
started = time.perf_counter()
rows = batches = id_sum = text_bytes = 0
for batch in pqsift.scan(path, **arguments):
    rows += batch.num_rows
    batches += 1
    if "id" in batch.schema.names:
        id_sum += pc.sum(batch.column("id")).as_py() or 0
    if "text" in batch.schema.names:
        text_bytes += pc.sum(pc.binary_length(batch.column("text"))).as_py() or 0
    del batch
seconds = time.perf_counter() - started
print(json.dumps({"baseline": baseline, "rows": rows, "batches": batches, "id_sum": id_sum,
                  "text_bytes": text_bytes, "seconds": seconds}))
print("VmHWM", status("VmHWM") // 1024)
"""

STREAM_CASES: dict[str, dict[str, Any]] = {
    "default options": {},
    "threads=1": {"threads": 1},
    "threads=2": {"threads": 2},
    "filter keeping half, text projected": {"columns": ["text"], "filter": FILTER},
}


@pytest.mark.parametrize("case", list(STREAM_CASES))
def test_streaming_one_gib_row_groups_stays_under_256_mib(wide_file: tuple[Path, dict[str, Any]], case: str) -> None:
    path, facts = wide_file
    arguments = STREAM_CASES[case]
    got, peak, rise = run_child(_STREAM, str(path), json.dumps(arguments), failed=f"{case}: the scan failed")
    figures = (
        f"{case}: {got['rows']:,} rows in {got['batches']:,} batches, {got['seconds']:.1f} s; "
        f"baseline {got['baseline'] / MiB:.0f} MiB, peak {peak / MiB:,.0f} MiB, "
        f"peak above baseline {rise / MiB:,.0f} MiB (bound {PEAK_RSS_LIMIT / MiB:.0f} MiB; "
        f"a row group is {facts['decoded_per_group'][0] / MiB:,.0f} MiB decoded)"
    )
    print(figures)
    if "filter" in arguments:
        assert got["rows"] == facts["filtered_rows"], figures
        assert got["text_bytes"] == facts["filtered_text_bytes"], figures
    else:
        assert got["rows"] == pq.ParquetFile(path).metadata.num_rows == facts["rows"], figures
        assert got["id_sum"] == facts["id_sum"], figures
        assert got["text_bytes"] == facts["text_bytes"], figures
    assert rise < PEAK_RSS_LIMIT, figures


# ----- a 2 GiB string column chunk, 4 KiB on disk ----------------------------------------

_REJECT = _CHILD_PRELUDE + r"""
baseline = status("VmRSS")
started = time.perf_counter()
try:
    table = pqsift.scan(sys.argv[1]).to_table()
    outcome, message = "ok", f"{table.num_rows} rows"
except pqsift.PqsiftError as error:
    outcome, message = type(error).__name__, str(error)
print(json.dumps({"baseline": baseline, "outcome": outcome, "message": message,
                  "seconds": time.perf_counter() - started}))
print("VmHWM", status("VmHWM") // 1024)
"""


def test_two_gib_of_strings_in_one_chunk_is_rejected_before_decompressing() -> None:
    path = ROOT / "data" / "large_string_map.brotli.parquet"
    got, peak, rise = run_child(_REJECT, str(path), failed="the scan crashed")
    figures = (
        f"{path.name} ({path.stat().st_size:,} bytes): {got['outcome']} in {got['seconds']:.1f} s; "
        f"baseline {got['baseline'] / MiB:.0f} MiB, peak {peak / MiB:,.0f} MiB, "
        f"peak above baseline {rise / MiB:,.0f} MiB (bound {PEAK_RSS_LIMIT / MiB:.0f} MiB): {got['message']}"
    )
    print(figures)
    assert got["outcome"] == "UnsupportedError", figures
    assert path.name in got["message"], figures
    assert rise < PEAK_RSS_LIMIT, figures


# ----- many wide footers, pruned -----------------------------------------------------------

# Files of a wide table (1,000 int64 columns, one row): a footer parses to about a megabyte.
WIDE_COLUMNS, WIDE_FILES = 1_000, 800
# The metadata cache's bound (rust/format/metadata_cache.rs) and room for the scan's own work.
FOOTERS_PEAK_LIMIT = 384 * MiB
# With the cache bounded to 16 MiB: what the scan itself holds, and the extension's code
# pages it touches (file-backed; more of them where the installed library sits in the page
# cache in larger folios, as a fresh pip install leaves it).
SMALL_CACHE_PEAK_LIMIT = 104 * MiB

_PRUNED_FOOTERS = _CHILD_PRELUDE + r"""
baseline = status("VmRSS")
started = time.perf_counter()
table = pqsift.scan(sys.argv[1], columns=["k"], filter="k = 1").to_table()
print(json.dumps({"baseline": baseline, "rows": table.num_rows, "seconds": time.perf_counter() - started,
                  "cache_bound": pqsift.metadata_cache_usage()[1]}))
print("VmHWM", status("VmHWM") // 1024)
"""


@pytest.fixture(scope="module")
def wide_footers(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int]:
    """WIDE_FILES files of a WIDE_COLUMNS-column table, one row each; only the last holds
    ``k = 1``. Returns the directory and the size of a footer (serialized)."""
    import shutil

    import pyarrow as pa

    root = tmp_path_factory.mktemp("wide_footers")
    columns = {f"c{i}": pa.array([i], pa.int64()) for i in range(WIDE_COLUMNS)}
    miss, hit = root / "miss.parquet", root / "hit.parquet"
    pq.write_table(pa.table({"k": pa.array([0], pa.int64()), **columns}), miss)
    pq.write_table(pa.table({"k": pa.array([1], pa.int64()), **columns}), hit)
    table = root / "table"
    table.mkdir()
    for number in range(WIDE_FILES - 1):
        shutil.copyfile(miss, table / f"part-{number:05d}.parquet")
    shutil.copyfile(hit, table / f"part-{WIDE_FILES - 1:05d}.parquet")
    return table, pq.read_metadata(miss).serialized_size


def run_over_wide_footers(
    script: str, wide_footers: tuple[Path, int], cache_bytes: int | None, limit: int
) -> tuple[dict[str, Any], int, str]:
    """Runs `script` over the wide footers' table with the metadata cache bounded to
    `cache_bytes` (None: the default): its JSON line, its peak above its baseline, and the
    figures to print and fail with (`limit`: the bound the peak is held to)."""
    import os

    table, footer = wide_footers
    env = dict(os.environ)
    env.pop("PQSIFT_METADATA_CACHE_BYTES", None)
    if cache_bytes is not None:
        env["PQSIFT_METADATA_CACHE_BYTES"] = str(cache_bytes)
    got, _, rise = run_child(script, str(table), failed="the scan failed", env=env)
    figures = (
        f"{WIDE_FILES} files of {WIDE_COLUMNS + 1} columns (footers of {footer / 1024:,.0f} KiB serialized), "
        f"cache bound {'default' if cache_bytes is None else f'{cache_bytes / MiB:.0f} MiB'}: "
        f"{got['seconds']:.1f} s; baseline {got['baseline'] / MiB:.0f} MiB, "
        f"peak above baseline {rise / MiB:,.0f} MiB (bound {limit / MiB:.0f} MiB)"
    )
    return got, rise, figures


@pytest.mark.parametrize(
    ("cache_bytes", "limit"),
    [(None, FOOTERS_PEAK_LIMIT), (16 * MiB, SMALL_CACHE_PEAK_LIMIT)],
    ids=["default cache", "16 MiB cache"],
)
def test_footers_of_files_the_filter_prunes_are_not_all_held(
    wide_footers: tuple[Path, int], cache_bytes: int | None, limit: int
) -> None:
    """800 files of a 1,000-column table, one of which holds the row the filter wants:
    planning lets each pruned file's footer go once planned (the metadata cache keeps
    what its bound allows), so the peak stays under the cache's bound plus working memory,
    not the ~800 MiB that every parsed footer together takes; with the cache bounded
    through ``PQSIFT_METADATA_CACHE_BYTES`` (as Spark's executors would set it), lower."""
    got, rise, figures = run_over_wide_footers(_PRUNED_FOOTERS, wide_footers, cache_bytes, limit)
    figures = f"{got['rows']} row: {figures}"
    print(figures)
    assert got["rows"] == 1, figures
    assert got["cache_bound"] == (256 * MiB if cache_bytes is None else cache_bytes), figures
    assert rise < limit, figures


# With the cache bounded to 16 MiB, a read of every file: the footers of one group of files
# read together (the option footer_bytes_read_together, 32 MiB) and working memory, where
# holding every parsed footer took ~800 MiB.
EVERY_FILE_PEAK_LIMIT = 160 * MiB

_EVERY_FILE = _CHILD_PRELUDE + r"""
baseline = status("VmRSS")
started = time.perf_counter()
keys = [value for batch in pqsift.scan(sys.argv[1], columns=["k"], filter="k >= 0") for value in batch.column(0).to_pylist()]
print(json.dumps({"baseline": baseline, "keys": keys, "seconds": time.perf_counter() - started}))
print("VmHWM", status("VmHWM") // 1024)
"""


def test_a_read_of_every_file_holds_the_footers_of_one_group_at_a_time(wide_footers: tuple[Path, int]) -> None:
    """800 files of a 1,000-column table, every one read: the plan holds the footers of the
    first group of files read together and lets the others go; the read opens the next
    group (reading its footers again) once the last is done. With the metadata cache
    bounded to 16 MiB, the peak is one group's footers and working memory, not the
    ~800 MiB that every parsed footer together takes; every row comes, in file order."""
    got, rise, figures = run_over_wide_footers(_EVERY_FILE, wide_footers, 16 * MiB, EVERY_FILE_PEAK_LIMIT)
    figures = f"every one read, {len(got['keys'])} rows: {figures}"
    print(figures)
    # File order: every file but the last holds k = 0.
    assert got["keys"] == [0] * (WIDE_FILES - 1) + [1], figures
    assert rise < EVERY_FILE_PEAK_LIMIT, figures


# ----- every corpus file ------------------------------------------------------------------

# One line of JSON per file: [name, outcome, RSS before, peak]. Writing "5" to clear_refs
# resets VmHWM to the current RSS (Linux >= 4.0), so each peak is that file's.
_CORPUS_WALK = _CHILD_PRELUDE + r"""
root = sys.argv[1]
for name in sys.argv[2:]:
    with open("/proc/self/clear_refs", "w") as clear:
        clear.write("5")
    before = status("VmRSS")
    started = time.perf_counter()
    try:
        pqsift.scan(root + "/" + name).to_table()
        outcome = "ok"
    except pqsift.PqsiftError as error:
        outcome = type(error).__name__
    print(json.dumps([name, outcome, before, status("VmHWM"), time.perf_counter() - started]), flush=True)
"""


def test_the_high_water_mark_resets() -> None:
    """The corpus walk's premise: on this kernel, clear_refs "5" brings VmHWM back down."""
    code = r"""
import numpy as np
def hwm():
    return next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM:"))
a = np.ones(64 << 17); del a  # 64 MiB touched, then freed
high = hwm()
open("/proc/self/clear_refs", "w").write("5")
print(high, hwm())
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    high, after = map(int, done.stdout.split())
    assert high - after > 48 * 1024, done.stdout


def test_no_corpus_file_takes_a_scan_past_one_gib() -> None:
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", _CORPUS_WALK, str(ROOT), *FILES], capture_output=True, text=True, timeout=600
    )
    seconds = time.perf_counter() - started
    peaks = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("[")]
    assert done.returncode == 0, f"the walk died after {len(peaks)} files (exit {done.returncode}): {done.stderr[-3000:]}"
    assert [name for name, *_ in peaks] == FILES

    def line(name: str, outcome: str, before: int, peak: int, took: float) -> str:
        return f"{name}: {outcome}, peak {peak / MiB:,.0f} MiB ({(peak - before) / MiB:+,.0f} MiB over {before / MiB:.0f}), {took:.2f} s"

    largest = sorted(peaks, key=lambda p: p[3] - p[2], reverse=True)
    report = f"{len(peaks)} files in {seconds:.1f} s; largest:\n  " + "\n  ".join(line(*p) for p in largest[:5])
    print(report)
    over = [line(*p) for p in peaks if p[3] >= CORPUS_PEAK_LIMIT]
    assert not over, "peak RSS of 1 GiB or more:\n  " + "\n  ".join(over) + "\n" + report


if __name__ == "__main__":
    # `python tests/test_memory_bounds.py --write PATH`: the wide file's writer (the fixture's subprocess).
    if sys.argv[1:2] == ["--write"] and len(sys.argv) == 3:
        print(json.dumps(write_wide_row_groups(Path(sys.argv[2]))))
    else:
        sys.exit("usage: test_memory_bounds.py --write PATH")


@pytest.mark.slow
def test_two_gib_of_strings_decoded_in_one_batch_is_unsupported_not_corrupt() -> None:
    """Allowed past the page bound, the two 1 GiB strings decode — but not into one batch:
    the crate fails on the whole row group, each half decodes, and their 2 GiB of strings
    (measured) is what Arrow's 32-bit offsets cannot address. UnsupportedError, not a
    corrupt file."""
    path = ROOT / "data" / "large_string_map.brotli.parquet"
    code = _CHILD_PRELUDE + r"""
try:
    pqsift.scan(sys.argv[1], max_page_bytes=3 << 30, threads=1).to_table()
    print(json.dumps(["ok", ""]))
except pqsift.PqsiftError as error:
    print(json.dumps([type(error).__name__, str(error)]))
"""
    exit_code, out, err, _ = peak_rss_of([sys.executable, "-c", code, str(path)])
    assert exit_code == 0, err.decode()[-3000:]
    outcome, message = json.loads(out.splitlines()[-1])
    assert outcome == "UnsupportedError", message
    assert "32-bit offsets" in message and "bytes of strings" in message, message
