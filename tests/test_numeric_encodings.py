"""Numbers in the encodings of Parquet v2 writers — DELTA_BINARY_PACKED integers,
dates and timestamps; BYTE_STREAM_SPLIT floats, integers and fixed-width decimals — in v1
and v2 data pages, read as pyarrow reads them: every row, a filter on another column (the
values picked after decoding, with the row filter off and with the mask policy), a filter
on the values themselves, and their NULLs. Values: NULLs, extremes whose deltas overflow,
runs of one value, NaN, -0.0 and infinities."""

from __future__ import annotations

import datetime
import decimal
import math
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

import pqsift

ROWS = 7_000


def _with_nulls(values: list[Any], rng: np.random.Generator) -> list[Any]:
    return [None if rng.random() < 0.15 else v for v in values]


def _integers(rng: np.random.Generator, bits: int) -> list[int]:
    low, high = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
    out = []
    for i in range(ROWS):
        match (i // 500) % 4:
            case 0:  # sorted, small steps
                out.append(i * 3 - 1000)
            case 1:  # one value repeated
                out.append(42)
            case 2:  # extremes: deltas overflow
                out.append(high if i % 2 else low)
            case _:
                out.append(int(rng.integers(low, high, endpoint=True)))
    return out


def _table(rng: np.random.Generator) -> pa.Table:
    doubles = [float(x) for x in rng.normal(0, 1e6, ROWS)]
    for i, special in enumerate([math.nan, -0.0, 0.0, math.inf, -math.inf]):
        doubles[i * 997] = special
    epoch = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
    return pa.table(
        {
            "n": pa.array(np.arange(ROWS), pa.int64()),
            "i32": pa.array(_with_nulls(_integers(rng, 32), rng), pa.int32()),
            "i64": pa.array(_with_nulls(_integers(rng, 64), rng), pa.int64()),
            "ts": pa.array(
                _with_nulls([epoch + datetime.timedelta(seconds=i * 7) for i in range(ROWS)], rng),
                pa.timestamp("us", tz="UTC"),
            ),
            "day": pa.array(
                _with_nulls([datetime.date(2020, 1, 1) + datetime.timedelta(days=i % 3000) for i in range(ROWS)], rng)
            ),
            "f64": pa.array(_with_nulls(doubles, rng), pa.float64()),
            "f32": pa.array(_with_nulls([float(np.float32(d)) for d in doubles], rng), pa.float32()),
            "dec": pa.array(
                _with_nulls(
                    [decimal.Decimal(int(v) % 10**20 - 10**19).scaleb(-4) for v in rng.integers(0, 2**62, ROWS)], rng
                ),
                pa.decimal128(24, 4),
            ),
        }
    )


ENCODINGS = {
    "DELTA_BINARY_PACKED": ["i32", "i64", "ts", "day"],
    "BYTE_STREAM_SPLIT": ["i32", "i64", "f64", "f32", "dec"],
}


@pytest.mark.parametrize("page_version", ["1.0", "2.0"])
@pytest.mark.parametrize("encoding", sorted(ENCODINGS))
def test_numbers_in_v2_encodings_read_as_pyarrow_reads_them(tmp_path: Path, encoding: str, page_version: str) -> None:
    rng = np.random.default_rng(5)
    table = _table(rng)
    columns = ENCODINGS[encoding]
    path = tmp_path / "numbers.parquet"
    pq.write_table(
        table,
        path,
        row_group_size=ROWS // 2,
        data_page_version=page_version,
        write_page_index=True,
        data_page_size=4096,
        use_dictionary=False,
        column_encoding={name: encoding for name in columns} | {"n": "PLAIN"},
        compression="zstd",
    )
    metadata = pq.ParquetFile(path).metadata
    for name in columns:
        at = table.column_names.index(name)
        written = metadata.row_group(0).column(at).encodings
        assert encoding in written, (name, written)

    def check(got: pa.Table, want: pa.Table) -> None:
        assert got.num_rows == want.num_rows
        for name in ["n", *columns]:
            # NaN compared as NaN: to_pylist's NaN != NaN, so compare the repr of each.
            assert [repr(v) for v in got.column(name).to_pylist()] == [
                repr(v) for v in want.column(name).to_pylist()
            ], name

    select = ["n", *columns]
    check(pqsift.scan(path, columns=select).to_table(), table.select(select))
    every_fourth = table.select(select).filter(pc.equal(pc.bit_wise_and(table["n"], 3), 0))
    for options in ({}, {"pushdown_filters": False}, {"selection_policy": "mask"}, {"selection_policy": "selectors"}):
        check(pqsift.scan(path, columns=select, filter="n % 4 = 0", **options).to_table(), every_fourth)
    # A sparse selection: a page's values needed only up to its last selected row.
    picked = [3, 1001, 1002, 3333, 6999]
    sparse = table.select(select).filter(pc.is_in(table["n"], pa.array(picked, pa.int64())))
    check(pqsift.scan(path, columns=select, filter=f"n IN ({', '.join(map(str, picked))})").to_table(), sparse)
    for name in columns:
        check(
            pqsift.scan(path, columns=select, filter=f"`{name}` IS NULL").to_table(),
            table.select(select).filter(pc.is_null(table[name])),
        )
    if "i64" in columns:
        want = table.select(select).filter(pc.fill_null(pc.greater(table["i64"], 0), False))
        check(pqsift.scan(path, columns=select, filter="i64 > 0").to_table(), want)
    # A column only the filter reads, alone and after another predicate (evaluated as it
    # is decoded, nothing of it kept): the rows of `n` that pass.
    for name in columns:
        has_value = pc.is_valid(table[name])
        for where, want in (
            (f"`{name}` IS NOT NULL", has_value),
            (f"n % 4 = 0 AND `{name}` IS NOT NULL", pc.and_(pc.equal(pc.bit_wise_and(table["n"], 3), 0), has_value)),
        ):
            got = pqsift.scan(path, columns=["n"], filter=where).to_table()
            assert got.column("n").to_pylist() == table.filter(want).column("n").to_pylist(), where
    if "f64" in columns:
        # Spark's order: NaN above every number, -0.0 equal to 0.0.
        got = pqsift.scan(path, columns=select, filter="f64 >= 0.0").to_table()
        values = table["f64"].to_pylist()
        keep = [v is not None and (math.isnan(v) or v >= 0.0) for v in values]
        check(got, table.select(select).filter(pa.array(keep)))
