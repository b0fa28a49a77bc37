"""Hostile metadata: files whose footer, page headers, bloom filter headers or page index
claim sizes, counts and offsets far beyond the file. Each must fail fast with a pqsift
exception naming the file, and never allocate what it claims: every case runs in its own
subprocess whose peak RSS (``VmHWM``, read by the subprocess itself) must stay under 256 MiB."""

from __future__ import annotations

import struct
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import parquet_surgery as ps

PEAK_RSS_LIMIT = 256 << 20
ROWS = 20_000

_CHILD = r"""
import resource, sys, pqsift
# A read that believed an impossible claim fails here, fast, rather than exhausting the
# machine (the peak asserted below is far lower).
resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))
path, text = sys.argv[1], sys.argv[2] or None
try:
    table = pqsift.scan(path, filter=text).to_table()
    print("ok", table.num_rows)
except pqsift.PqsiftError as error:
    print(type(error).__name__, "|", error)
# This process's own peak: rusage from the parent would count the parent's pages shared
# with the child between fork and exec (Linux carries that peak across execve).
status = open("/proc/self/status").read()
print("VmHWM", next(line.split()[1] for line in status.splitlines() if line.startswith("VmHWM:")))
"""


def peak_rss_of(argv: list[str], env: dict[str, str] | None = None) -> tuple[int, str, bytes, int]:
    """Runs ``argv`` (in ``env``, else this process's environment): (exit code, stdout
    without the peak line, stderr, peak RSS in bytes as the child measured it, ``VmHWM``)."""
    done = subprocess.run(argv, capture_output=True, timeout=120, env=env)
    lines = done.stdout.decode().strip().splitlines()
    peak = next((int(line.split()[1]) * 1024 for line in lines if line.startswith("VmHWM")), 1 << 62)
    return done.returncode, "\n".join(line for line in lines if not line.startswith("VmHWM")), done.stderr, peak


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One int64 column in one row group: snappy pages, statistics, page index, bloom filter."""
    path = tmp_path_factory.mktemp("hostile") / "base.parquet"
    table = pa.table({"x": pa.array(np.arange(ROWS, dtype=np.int64))})
    pq.write_table(
        table,
        path,
        compression="snappy",
        use_dictionary=False,
        write_page_index=True,
        data_page_size=1 << 20,
        bloom_filter_options={"x": {"ndv": ROWS, "fpp": 0.01}},
    )
    return path


def set_chunk(fid: int, value: int) -> Callable[[ps.Struct], None]:
    def edit(footer: ps.Struct) -> None:
        _, meta = ps.chunks(footer)[0]
        meta.set(fid, ps.I64, value)

    return edit


def set_column_chunk(fid: int, type: int, value: int) -> Callable[[ps.Struct], None]:  # noqa: A002 - the Thrift field's name
    def edit(footer: ps.Struct) -> None:
        cc, _ = ps.chunks(footer)[0]
        cc.set(fid, type, value)

    return edit


def rows_and_values(rows: int, values: int) -> Callable[[ps.Struct], None]:
    """The row group's row count and its chunk's value count raised together (so they
    agree that the chunk holds every row), the file's own count left alone."""

    def edit(footer: ps.Struct) -> None:
        footer.get(ps.FILE_ROW_GROUPS).items[0].set(ps.RG_NUM_ROWS, ps.I64, rows)
        _, meta = ps.chunks(footer)[0]
        meta.set(ps.CM_NUM_VALUES, ps.I64, values)

    return edit


def billions_of_rows(footer: ps.Struct) -> None:
    """5 billion rows and values, the file's own count too."""
    footer.set(ps.FILE_NUM_ROWS, ps.I64, 5_000_000_000)
    rows_and_values(5_000_000_000, 5_000_000_000)(footer)


def page_header(fid: int, value: int) -> Callable[[ps.Struct], None]:
    def edit(header: ps.Struct) -> None:
        header.set(fid, ps.I32, value)

    return edit


def page_num_values(value: int) -> Callable[[ps.Struct], None]:
    def edit(header: ps.Struct) -> None:
        for fid in (ps.PH_DATA, ps.PH_DATA_V2, ps.PH_DICT):
            inner = header.get(fid)
            if inner is not None:
                inner.set(1, ps.I32, value)

    return edit


def bloom_num_bytes(value: int) -> Callable[[ps.Struct], None]:
    def edit(header: ps.Struct) -> None:
        header.set(1, ps.I32, value)

    return edit


HUGE = 1 << 40
I32_MAX = (1 << 31) - 1

# name -> (mutation of the file bytes, filter)
CASES: dict[str, tuple[Callable[[bytes], bytes], str | None]] = {
    "footer length 4 GiB": (lambda d: d[:-8] + struct.pack("<I", 0xFFFFFFF0) + b"PAR1", None),
    "footer length = file size": (lambda d: d[:-8] + struct.pack("<I", len(d) - 4) + b"PAR1", None),
    "chunk compressed size 1 TiB": (lambda d: ps.edit_footer(d, set_chunk(ps.CM_COMPRESSED, HUGE)), None),
    "chunk data page offset 1 TiB": (lambda d: ps.edit_footer(d, set_chunk(ps.CM_DATA_PAGE, HUGE)), None),
    "chunk negative offset": (lambda d: ps.edit_footer(d, set_chunk(ps.CM_DATA_PAGE, -5)), None),
    "5 billion rows and values": (lambda d: ps.edit_footer(d, billions_of_rows), None),
    # Decode-size estimates from these claims once cut a window (a task) or an output part
    # per row: 2^31 of them.
    "2^31 rows, 2^63 values": (lambda d: ps.edit_footer(d, rows_and_values(I32_MAX, (1 << 63) - 1)), None),
    "2^31 rows, 2^63 values, constant filter": (lambda d: ps.edit_footer(d, rows_and_values(I32_MAX, (1 << 63) - 1)), "1 = 1"),
    "page compressed size 2 GiB": (lambda d: ps.edit_first_page_header(d, page_header(ps.PH_COMPRESSED, I32_MAX)), None),
    "page uncompressed size 2 GiB": (lambda d: ps.edit_first_page_header(d, page_header(ps.PH_UNCOMPRESSED, I32_MAX)), None),
    "page negative size": (lambda d: ps.edit_first_page_header(d, page_header(ps.PH_COMPRESSED, -100)), None),
    "page 2 billion values": (lambda d: ps.edit_first_page_header(d, page_num_values(I32_MAX)), None),
    "bloom filter 2 GiB": (lambda d: ps.edit_bloom_header(d, bloom_num_bytes(I32_MAX), 0), "x = 5"),
    "bloom filter empty": (lambda d: ps.edit_bloom_header(d, bloom_num_bytes(0), 0), "x = 5"),
    "bloom filter offset 1 TiB": (lambda d: ps.edit_footer(d, set_chunk(ps.CM_BLOOM_OFFSET, HUGE)), "x = 5"),
    "column index offset 1 TiB": (lambda d: ps.edit_footer(d, set_column_chunk(ps.CC_CI_OFFSET, ps.I64, HUGE)), "x > 5"),
    "column index length 2 GiB": (lambda d: ps.edit_footer(d, set_column_chunk(ps.CC_CI_LENGTH, ps.I32, I32_MAX)), "x > 5"),
    "offset index offset 1 TiB": (lambda d: ps.edit_footer(d, set_column_chunk(ps.CC_OI_OFFSET, ps.I64, HUGE)), "x > 5"),
    "offset index length 2 GiB": (lambda d: ps.edit_footer(d, set_column_chunk(ps.CC_OI_LENGTH, ps.I32, I32_MAX)), "x > 5"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_hostile_metadata_fails_fast_in_bounded_memory(base: Path, tmp_path: Path, name: str) -> None:
    mutate, filter_text = CASES[name]
    path = tmp_path / (name.replace(" ", "_") + ".parquet")
    path.write_bytes(mutate(base.read_bytes()))
    code, out, err, peak = peak_rss_of([sys.executable, "-c", _CHILD, str(path), filter_text or ""])
    assert code == 0, f"{name}: the scan crashed (exit {code}): {err.decode()[-2000:]}"
    outcome, _, message = out.partition(" ")
    assert outcome in ("CorruptFileError", "UnsupportedError"), f"{name}: {out}"
    assert path.name in message, message
    assert peak < PEAK_RSS_LIMIT, f"{name}: peak RSS {peak >> 20} MiB"
    print(f"{name}: {outcome}, peak RSS {peak / 2**20:.0f} MiB")


@pytest.fixture(scope="module")
def zstd_base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same column in zstd pages: pqsift reads them still compressed and decompresses
    each only as far as the selected rows need, sized by its header (flat_decode)."""
    path = tmp_path_factory.mktemp("hostile_zstd") / "base.parquet"
    table = pa.table({"x": pa.array(np.arange(ROWS, dtype=np.int64))})
    pq.write_table(table, path, compression="zstd", use_dictionary=False, write_page_index=True, data_page_size=1 << 20)
    return path


# A zstd page is decompressed into a buffer of the size its frames declare (pyarrow's do)
# or else its header's: a wrong header size either goes unused (the rows come out right)
# or fails cleanly, and neither way allocates what the header claims.
ZSTD_CASES: dict[str, tuple[Callable[[bytes], bytes], str | None]] = {
    "zstd page uncompressed size 2 GiB": (lambda d: ps.edit_first_page_header(d, page_header(ps.PH_UNCOMPRESSED, I32_MAX)), "x = 5"),
    "zstd page uncompressed size 100 bytes": (lambda d: ps.edit_first_page_header(d, page_header(ps.PH_UNCOMPRESSED, 100)), "x = 5"),
    "zstd page uncompressed size 100 bytes, whole page": (lambda d: ps.edit_first_page_header(d, page_header(ps.PH_UNCOMPRESSED, 100)), None),
    "zstd page negative size": (lambda d: ps.edit_first_page_header(d, page_header(ps.PH_UNCOMPRESSED, -100)), "x = 5"),
}


@pytest.mark.parametrize("name", list(ZSTD_CASES))
def test_hostile_zstd_page_sizes_read_right_or_fail_in_bounded_memory(zstd_base: Path, tmp_path: Path, name: str) -> None:
    mutate, filter_text = ZSTD_CASES[name]
    path = tmp_path / (name.replace(" ", "_").replace(",", "") + ".parquet")
    path.write_bytes(mutate(zstd_base.read_bytes()))
    code, out, err, peak = peak_rss_of([sys.executable, "-c", _CHILD, str(path), filter_text or ""])
    assert code == 0, f"{name}: the scan crashed (exit {code}): {err.decode()[-2000:]}"
    outcome, _, message = out.partition(" ")
    if outcome == "ok":
        assert int(message) == (1 if filter_text else ROWS), f"{name}: {out}"
    else:
        assert outcome in ("CorruptFileError", "UnsupportedError"), f"{name}: {out}"
        assert path.name in message, message
    assert peak < PEAK_RSS_LIMIT, f"{name}: peak RSS {peak >> 20} MiB"


def test_the_unmodified_file_reads(base: Path) -> None:
    """The base of every case is fine: the failures above come from the edits."""
    import pqsift

    assert pqsift.scan(base, filter="x = 5").to_table().num_rows == 1
    assert pqsift.scan(base).to_table().num_rows == ROWS


def test_a_map_whose_footer_makes_its_key_optional_fails_cleanly(tmp_path: Path) -> None:
    """The footer's map key made OPTIONAL: the key's levels then decode nulls, which an
    Arrow map cannot hold (pyarrow aborts the process importing one, as it did before the
    decoded maps were checked). The scan, in a subprocess, must fail with a pqsift error
    naming the file and the column, with and without a filter."""
    path = tmp_path / "optional_map_key.parquet"
    table = pa.table(
        {
            "k": pa.array(np.arange(500, dtype=np.int32)),
            "m": pa.array([[("k", i)] for i in range(500)], pa.map_(pa.string(), pa.int64())),
        }
    )
    pq.write_table(table, path)

    def key_optional(footer: ps.Struct) -> None:
        keys = [element for element in footer.get(2).items if element.get(4) == b"key"]
        assert len(keys) == 1
        keys[0].set(3, ps.I32, 1)  # SchemaElement.repetition_type: OPTIONAL

    path.write_bytes(ps.edit_footer(path.read_bytes(), key_optional))
    for filter_text in (None, "k > 3"):
        code, out, err, _ = peak_rss_of([sys.executable, "-c", _CHILD, str(path), filter_text or ""])
        assert code == 0, f"the scan crashed (exit {code}): {err.decode()[-2000:]}"
        outcome, _, message = out.partition(" ")
        assert outcome == "CorruptFileError", out
        assert path.name in message and "column m: a map key is null" in message, message


_COUNT_CHILD = r"""
import resource, sys, pqsift
# A read that believed the footer would make a batch (or a bit) per claimed row: bounded,
# as in _CHILD.
resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))
path = sys.argv[1]
for options in ({"columns": []}, {"filter": "1 = 1"}, {"filter": "1 = 1", "pushdown_filters": False}, {}):
    try:
        print("ok", pqsift.scan(path, **options).to_table().num_rows)
    except pqsift.PqsiftError as error:
        print(type(error).__name__, "|", error)
"""


def test_a_row_group_claiming_more_rows_than_its_values_fails_at_open(base: Path, tmp_path: Path) -> None:
    """A row group's row count raised far past its chunk's values (the file's own count
    left alone): a read of no column, or with a filter of no column (`1 = 1`), trusts the
    count alone. Each read must fail as corrupt at open, naming the claim — not evaluate a
    constant over 10^18 rows (an allocation abort) or cut that many empty batches."""

    def huge_row_group(footer: ps.Struct) -> None:
        footer.get(ps.FILE_ROW_GROUPS).items[0].set(ps.RG_NUM_ROWS, ps.I64, 10**18)

    path = tmp_path / "huge_row_group.parquet"
    path.write_bytes(ps.edit_footer(base.read_bytes(), huge_row_group))
    done = subprocess.run([sys.executable, "-c", _COUNT_CHILD, str(path)], capture_output=True, timeout=120)
    assert done.returncode == 0, f"the scan crashed (exit {done.returncode}): {done.stderr.decode()[-2000:]}"
    lines = done.stdout.decode().strip().splitlines()
    assert len(lines) == 4, lines
    for line in lines:
        outcome, _, message = line.partition(" | ")
        assert outcome == "CorruptFileError", line
        assert path.name in message and f"claims {10**18} rows, but its column chunks hold at most {ROWS} values" in message


def test_claims_on_a_list_column_cut_bounded_parts(tmp_path: Path) -> None:
    """A list column's row group is not read in windows, so with a filter of no column
    (`1 = 1`) every claimed row is selected and the output is cut in parts by the
    footer's estimate: bounded in number, the first part's decode finds the rows
    missing."""
    path = tmp_path / "list_claims.parquet"
    table = pa.table({"xs": pa.array([[i, i + 1] for i in range(1000)], pa.list_(pa.int64()))})
    pq.write_table(table, path)
    path.write_bytes(ps.edit_footer(path.read_bytes(), rows_and_values(I32_MAX, (1 << 63) - 1)))
    code, out, err, peak = peak_rss_of([sys.executable, "-c", _CHILD, str(path), "1 = 1"])
    assert code == 0, f"the scan crashed (exit {code}): {err.decode()[-2000:]}"
    outcome, _, message = out.partition(" ")
    assert outcome == "CorruptFileError" and path.name in message, out
    assert peak < PEAK_RSS_LIMIT, f"peak RSS {peak >> 20} MiB"


def test_a_column_name_with_a_nul_byte_is_refused_by_name(base: Path, tmp_path: Path) -> None:
    """Parquet allows a NUL byte in a name (a damaged footer has one); Arrow's C data
    interface, through which batches reach Python, does not. Reading that column is an
    UnsupportedError naming the file and the column, not a ValueError of the export."""
    import pqsift

    def nul_in_name(footer: ps.Struct) -> None:
        footer.get(2).items[1].set(4, ps.BINARY, b"x\x00y")  # FileMetaData.schema[1].name
        footer.remove(5)  # the key-value metadata: its Arrow schema names the column "x"

    path = tmp_path / "nul_name.parquet"
    path.write_bytes(ps.edit_footer(base.read_bytes(), nul_in_name))
    with pytest.raises(pqsift.UnsupportedError) as raised:
        pqsift.scan(path).to_table()
    assert raised.value.path == str(path) and raised.value.column == "`x\x00y`", raised.value
    assert "holds a NUL byte" in str(raised.value)


@pytest.mark.parametrize("nested", [False, True], ids=["flat", "list"])
@pytest.mark.parametrize("compression", ["zstd", "snappy", "none"])
def test_a_dictionary_page_claiming_more_values_than_bytes_fails_cleanly(tmp_path: Path, nested: bool, compression: str) -> None:
    """A dictionary page's value count raised to 2^31 in a page of a few hundred bytes:
    the crate reserves room for every value it claims before reading one (8 GiB for a
    list of strings). Each string value takes at least its 4-byte length, so the claim is
    refused first, with and without a filter."""
    values = [f"v{i % 50}" for i in range(2000)]
    column = pa.array([[v] for v in values]) if nested else pa.array(values)
    path = tmp_path / "dictionary_claim.parquet"
    pq.write_table(pa.table({"s": column, "k": pa.array(range(2000))}), path, compression=compression)
    path.write_bytes(ps.edit_first_page_header(path.read_bytes(), page_num_values(I32_MAX)))
    for filter_text in (None, "k > 5"):
        code, out, err, peak = peak_rss_of([sys.executable, "-c", _CHILD, str(path), filter_text or ""])
        assert code == 0, f"the scan crashed (exit {code}): {err.decode()[-2000:]}"
        outcome, _, message = out.partition(" ")
        assert outcome == "CorruptFileError" and path.name in message, out
        assert f"a dictionary page of {I32_MAX} values" in message, message
        assert peak < PEAK_RSS_LIMIT, f"peak RSS {peak >> 20} MiB"


def test_a_schema_element_claiming_more_children_than_the_schema_holds_fails_cleanly(base: Path, tmp_path: Path) -> None:
    """The root's child count raised to 2^31: the crate reserves room for that many
    children (16 GiB) before it finds them missing. Refused from the footer's bytes first."""

    def many_children(footer: ps.Struct) -> None:
        footer.get(2).items[0].set(5, ps.I32, I32_MAX)  # FileMetaData.schema[0].num_children

    path = tmp_path / "children_claim.parquet"
    path.write_bytes(ps.edit_footer(base.read_bytes(), many_children))
    code, out, err, peak = peak_rss_of([sys.executable, "-c", _CHILD, str(path), ""])
    assert code == 0, f"the scan crashed (exit {code}): {err.decode()[-2000:]}"
    outcome, _, message = out.partition(" ")
    assert outcome == "CorruptFileError" and path.name in message, out
    assert peak < PEAK_RSS_LIMIT, f"peak RSS {peak >> 20} MiB"
    assert f"schema element 0 claims {I32_MAX} children, but the schema has 1 elements after it" in message, message


def test_a_data_page_claiming_plain_strings_it_does_not_hold_fails_cleanly(tmp_path: Path) -> None:
    """A dictionary-encoded v2 data page whose header says PLAIN (one byte of the fuzz
    harness's v2 seed): the crate reads its dictionary indices as length-prefixed strings,
    skips past the page's end and then took the bytes left as the end minus that position
    — wrapped, a reservation of petabytes, an abort. With the crate's overflow checks on,
    the subtraction fails instead, and the scan with it, as a CorruptFileError."""
    import fuzz_harness

    (seed,) = [path for path in fuzz_harness.generated_seeds(tmp_path) if path.name == "flat_v2_encodings.parquet"]
    data = seed.read_bytes()
    _, footer = ps.split(data)
    (kind,) = [meta for _, meta in ps.chunks(footer)[:6] if meta.get(3).items == [b"kind"]]  # ColumnMetaData.path_in_schema

    def plain(header: ps.Struct) -> None:
        header.get(ps.PH_DATA_V2).set(4, ps.I32, 0)  # DataPageHeaderV2.encoding: PLAIN

    path = tmp_path / "plain_claim.parquet"
    path.write_bytes(ps.rewrite_struct_at(data, kind.get(ps.CM_DATA_PAGE), plain))
    for filter_text in (None, "id > 3 OR id IS NULL"):
        code, out, err, _ = peak_rss_of([sys.executable, "-c", _CHILD, str(path), filter_text or ""])
        assert code == 0, f"the scan crashed (exit {code}): {err.decode()[-2000:]}"
        outcome, _, message = out.partition(" ")
        assert outcome == "CorruptFileError" and path.name in message, out


def _locations(index: ps.Struct) -> list[ps.Struct]:
    return index.get(ps.OI_LOCATIONS).items


def _no_pages(index: ps.Struct) -> None:
    _locations(index).clear()


def _rows_backwards(index: ps.Struct) -> None:
    _locations(index)[2].set(ps.PL_FIRST_ROW, ps.I64, 1)  # below page 1's first row


def _page_before_its_chunk(index: ps.Struct) -> None:
    _locations(index)[-1].set(ps.PL_OFFSET, ps.I64, 4)


def _page_missing(index: ps.Struct) -> None:
    del _locations(index)[1]  # one page fewer than the column index describes


OFFSET_INDEX_EDITS = {
    "no pages": _no_pages,
    "first rows going backwards": _rows_backwards,
    "a page before its chunk": _page_before_its_chunk,
    "fewer pages than the column index": _page_missing,
}


@pytest.mark.parametrize("name", list(OFFSET_INDEX_EDITS))
def test_an_offset_index_that_does_not_fit_its_chunk_is_ignored(tmp_path: Path, name: str) -> None:
    """An offset index that decodes but cannot describe its chunk's pages (found by the
    fuzz harness's page index edits: an empty one made the crate's page statistics unwrap
    a missing last page, a panic). The page index is then ignored, as one that does not
    decode is: filtered scans, which would prune pages by it, return pyarrow's rows."""
    import pyarrow.compute as pc

    path = tmp_path / "offset_index.parquet"
    table = pa.table({"x": pa.array(np.arange(ROWS, dtype=np.int64)), "y": pa.array(np.arange(ROWS, dtype=np.int64) % 7)})
    pq.write_table(table, path, write_page_index=True, max_rows_per_page=1000, row_group_size=ROWS // 2)
    edited = tmp_path / "edited.parquet"
    edited.write_bytes(ps.edit_page_index(path.read_bytes(), OFFSET_INDEX_EDITS[name], chunk=0))
    x, y = pc.field("x"), pc.field("y")
    for filter_text, expression in (("x > 15000", x > 15000), ("x < 1500 AND y = 3", (x < 1500) & (y == 3)), ("x = 2500", x == 2500)):
        code, out, err, _ = peak_rss_of([sys.executable, "-c", _CHILD, str(edited), filter_text])
        assert code == 0, f"the scan crashed (exit {code}): {err.decode()[-2000:]}"
        assert out == f"ok {table.filter(expression).num_rows}", f"{filter_text}: {out}"


def test_a_list_page_whose_repetition_levels_run_out_fails_instead_of_spinning(tmp_path: Path) -> None:
    """A map's key page (v1, snappy) whose repetition levels are one run of zero length
    (one bit of the fuzz harness's nested seed): they run out before the page's 64 values.
    Reading through them, the crate reports the levels missing; skipping into the page, it
    looped forever, counting no level and no row. A filter on another column made that
    skip. Now the repetition levels of the pages such a skip can enter are walked first:
    both scans fail as corrupt, naming the column and the page."""
    import fuzz_harness

    (seed,) = [path for path in fuzz_harness.generated_seeds(tmp_path) if path.name == "nested.parquet"]
    data = seed.read_bytes()
    _, footer = ps.split(data)
    (key,) = [i for i, (_, meta) in enumerate(ps.chunks(footer)[:6]) if meta.get(3).items == [b"m", b"key_value", b"key"]]
    pages = ps.pages(data, ps.chunks(footer)[key][1])
    data_page = next(i for i, (_, header, _, _) in enumerate(pages) if header.get(ps.PH_DATA) is not None)

    def no_repetition_levels(page: bytes) -> bytes:
        (length,) = struct.unpack_from("<I", page)
        assert page[4 : 4 + length] == bytes([0x80, 0x01, 0x00]), page[: 4 + length].hex()  # 64 zeros, run-length
        return page[:4] + bytes([0x80, 0x00, 0x00]) + page[4 + length :]  # a run of none

    path = tmp_path / "levels_run_out.parquet"
    path.write_bytes(ps.edit_page_bytes(data, key, data_page, no_repetition_levels))
    for filter_text in (None, "k > 3"):
        code, out, err, _ = peak_rss_of([sys.executable, "-c", _CHILD, str(path), filter_text or ""])
        assert code == 0, f"the scan crashed (exit {code}): {err.decode()[-2000:]}"
        outcome, _, message = out.partition(" ")
        assert outcome == "CorruptFileError" and path.name in message, out
        assert "column m.key_value.key: data page 0: repetition levels" in message, message
