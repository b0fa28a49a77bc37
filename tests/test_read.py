"""Reading through the public API: same rows as an independent oracle (pyarrow, with Spark's
null and NaN rules written out), for every reading option; late materialization visible
in the metrics; Arrow interop; errors."""

from __future__ import annotations

from pathlib import Path

import duckdb
import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pqsift
from pqsift import col

ROWS = 40_000


@pytest.fixture(scope="module")
def events(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two files: sorted id, kind (5 values), amount with nulls and NaN, long text."""
    root = tmp_path_factory.mktemp("events")
    rng = np.random.default_rng(3)
    for f in range(2):
        n = ROWS // 2
        amount = np.round(rng.uniform(0, 1000, n), 1)
        amount[rng.random(n) < 0.02] = np.nan
        table = pa.table(
            {
                "id": pa.array(np.arange(f * n, (f + 1) * n), pa.int64()),
                "kind": pa.array(np.array(["a", "b", "c", "d", "e"])[rng.integers(0, 5, n)]),
                "amount": pa.array(amount, mask=rng.random(n) < 0.03),
                "text": pa.array([f"row {i} " + "x" * (i % 50) for i in range(f * n, (f + 1) * n)]),
            }
        )
        pq.write_table(
            table,
            root / f"part-{f}.parquet",
            row_group_size=5_000,
            write_page_index=True,
            max_rows_per_page=700,
            use_dictionary=["kind"],
        )
    return root


def full(root: Path) -> pa.Table:
    return pq.read_table(root)


def same(a: pa.Table, b: pa.Table) -> bool:
    """Tables equal in schema and values, NaN equal to NaN (``Table.equals`` says NaN != NaN)."""
    if a.schema != b.schema:
        return False

    def normal(table: pa.Table) -> dict[str, list[object]]:
        return {k: ["NaN" if isinstance(v, float) and v != v else v for v in vs] for k, vs in table.to_pydict().items()}

    return normal(a) == normal(b)


def spark_gt(values: pa.ChunkedArray, bound: float) -> pa.ChunkedArray:
    """Spark's `x > bound` as a selection: NaN is greater than every number; null is
    unknown, so not selected."""
    return pc.fill_null(pc.or_(pc.greater(values, bound), pc.is_nan(values)), False)


CASES = [
    ("kind = 'c' AND amount > 500", lambda t: pc.and_(pc.equal(t["kind"], "c"), spark_gt(t["amount"], 500))),
    ("amount > 999", lambda t: spark_gt(t["amount"], 999)),
    ("id >= 12000 AND id < 12100", lambda t: pc.and_(pc.greater_equal(t["id"], 12000), pc.less(t["id"], 12100))),
    ("kind IN ('a', 'e') OR amount IS NULL", lambda t: pc.or_(pc.is_in(t["kind"], pa.array(["a", "e"])), pc.is_null(t["amount"]))),
    ("NOT (amount <= 100)", lambda t: pc.fill_null(pc.or_(pc.invert(pc.less_equal(t["amount"], 100)), pc.is_nan(t["amount"])), False)),
    ("text LIKE 'row 3%'", lambda t: pc.starts_with(t["text"], "row 3")),
]


@pytest.mark.parametrize("text, oracle", CASES, ids=[c[0] for c in CASES])
def test_same_rows_as_the_oracle(events: Path, text: str, oracle) -> None:
    table = full(events)
    expected = table.filter(oracle(table)).select(["id", "text", "amount"])
    got = pqsift.scan(events, columns=["id", "text", "amount"], filter=text).to_table()
    assert same(got, expected), text


@pytest.mark.parametrize("pushdown_filters", [True, False])
@pytest.mark.parametrize("selection_policy", ["auto", "mask", "selectors"])
@pytest.mark.parametrize("threads, batch_size", [(1, 333), (3, 8192)])
@pytest.mark.parametrize("page_index", [True, False])
def test_every_option_gives_the_same_rows(
    events: Path, pushdown_filters: bool, selection_policy: str, threads: int, batch_size: int, page_index: bool
) -> None:
    text, oracle = CASES[0]
    table = full(events)
    expected = table.filter(oracle(table)).select(["id", "amount"])
    scan = pqsift.scan(
        events,
        columns=["id", "amount"],
        filter=text,
        pushdown_filters=pushdown_filters,
        selection_policy=selection_policy,
        threads=threads,
        batch_size=batch_size,
        page_index=page_index,
        cache_bytes=0 if threads == 3 else 1 << 20,
    )
    batches = list(scan)
    assert all(b.num_rows <= batch_size for b in batches)
    assert same(pa.Table.from_batches(batches, schema=expected.schema), expected)


CONSTANT_CASES = [
    ("1 = 1", lambda t: pc.equal(t["id"], t["id"])),
    ("1 = 0", lambda t: pc.not_equal(t["id"], t["id"])),
    ("CAST(NULL AS BOOLEAN)", lambda t: pc.not_equal(t["id"], t["id"])),
    ("1 = 1 AND amount > 999", lambda t: spark_gt(t["amount"], 999)),
    ("amount > 999 AND 2 > 3", lambda t: pc.not_equal(t["id"], t["id"])),
    ("id < 7 OR 1 = 0", lambda t: pc.less(t["id"], 7)),
]


@pytest.mark.parametrize("pushdown_filters", [True, False])
@pytest.mark.parametrize("text, oracle", CONSTANT_CASES, ids=[c[0] for c in CONSTANT_CASES])
def test_conjuncts_of_no_column_are_answered_once(events: Path, text: str, oracle, pushdown_filters: bool) -> None:
    """A conjunct reading no column has one answer for every row (NULL: none pass), alone
    or beside a column's, with and without pushdown. (The reader answers it once a row
    group; test_hostile shows a claimed 10^18 rows no longer makes it allocate.)"""
    table = full(events)
    expected = table.filter(oracle(table)).select(["id", "amount"])
    got = pqsift.scan(events, columns=["id", "amount"], filter=text, pushdown_filters=pushdown_filters).to_table()
    assert same(got, expected), text


def test_late_materialization_shows_in_the_metrics(events: Path) -> None:
    scan = pqsift.scan(
        events, columns=["id", "text", "amount"], filter="kind = 'c' AND amount > 900", selection_policy="selectors", reorder_filters=False
    )
    out = scan.to_table()
    metrics = scan.metrics
    decoded = metrics["rows_decoded_by_column"]
    table = full(events)
    kind_c = pc.sum(pc.equal(table["kind"], "c")).as_py()
    assert decoded["kind"] == ROWS  # the first predicate: every candidate row
    assert decoded["amount"] == kind_c  # the second: only rows the first kept, and only once
    assert decoded["text"] == decoded["id"] == out.num_rows == metrics["rows_out"]  # survivors only
    assert metrics["cache_hits"] >= 1
    assert metrics["bytes_read"] > 0
    baseline = pqsift.scan(events, columns=["id", "text", "amount"], filter="kind = 'c' AND amount > 900", pushdown_filters=False)
    assert same(baseline.to_table(), out)
    assert baseline.metrics["rows_decoded_by_column"]["text"] == ROWS
    assert baseline.metrics["bytes_read"] > metrics["bytes_read"]


def test_pruned_scans_read_less(events: Path) -> None:
    narrow = pqsift.scan(events, columns=["id", "text"], filter="id >= 12000 AND id < 12100")
    assert narrow.to_table().num_rows == 100
    everything = pqsift.scan(events, columns=["id", "text"])
    assert everything.to_table().num_rows == ROWS
    assert narrow.metrics["bytes_read"] * 20 < everything.metrics["bytes_read"]
    assert narrow.metrics["row_groups_pruned_statistics"] >= 6


def test_a_fully_pruned_scan_keeps_the_schema(events: Path) -> None:
    table = pqsift.scan(events, columns=["id", "kind"], filter="id < 0").to_table()
    assert table.num_rows == 0
    assert table.schema.names == ["id", "kind"]


@pytest.mark.parametrize("text, oracle", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("page_index", [True, False])
def test_row_groups_read_in_windows_give_the_same_rows(events: Path, text: str, oracle, page_index: bool) -> None:
    """With ``decode_bytes`` far below a row group's size, each is read as windows of rows
    (the streaming of row groups larger than memory should hold), with the same rows."""
    table = full(events)
    expected = table.filter(oracle(table)).select(["id", "text", "amount"])
    scan = pqsift.scan(events, columns=["id", "text", "amount"], filter=text, decode_bytes=16 << 10, page_index=page_index, threads=2)
    assert same(scan.to_table(), expected), text
    whole = pqsift.scan(events, columns=["id", "text", "amount"], filter=text, page_index=page_index)
    whole.to_table()
    assert whole.metrics["row_group_windows"] == whole.metrics["projection_parts"] == 0
    # Windows planned on the predicates' columns, the projection of what passes in parts;
    # the id range the page index narrows to one page of each column fits the budget whole.
    if not (page_index and text.startswith("id >=")):
        assert scan.metrics["row_group_windows"] + scan.metrics["projection_parts"] > 0, scan.metrics


@pytest.mark.parametrize("text, oracle", [*CASES, ("", None)], ids=[c[0] or "no filter" for c in [*CASES, ("", None)]])
@pytest.mark.parametrize("selection_policy", ["auto", "mask"])
def test_string_view_output(events: Path, text: str, oracle, selection_policy: str) -> None:
    """``string_view=True``: strings out as views (decoded as views, or cast from a
    predicate's cached strings), the same values."""
    table = full(events)
    expected = (table.filter(oracle(table)) if oracle else table).select(["id", "text", "kind"])
    scan = pqsift.scan(
        events, columns=["id", "text", "kind"], filter=text or None, string_view=True, selection_policy=selection_policy
    )
    got = scan.to_table()
    assert [f.type for f in got.schema] == [pa.int64(), pa.string_view(), pa.string_view()]
    assert same(got.cast(expected.schema), expected), text
    assert pl.from_arrow(got).height == expected.num_rows
    assert duckdb.sql("SELECT count(*), count(DISTINCT kind) FROM got").fetchall()[0][0] == expected.num_rows


def test_string_view_output_with_partitions_and_paths(tmp_path: Path) -> None:
    """Partition columns and struct fields by path reshape the decoded batches: the views
    are made at the end there."""
    for day in ("2026-01-01", "2026-01-02"):
        (tmp_path / f"day={day}").mkdir()
        pq.write_table(
            pa.table({"s": ["a", None, "a string longer than twelve bytes"], "attrs": [{"t": "x"}, {"t": None}, None]}),
            tmp_path / f"day={day}" / "part-0.parquet",
        )
    got = pqsift.scan(tmp_path, columns=["s", "attrs.t", "day"], filter="s IS NOT NULL", string_view=True).to_table()
    assert [f.type for f in got.schema] == [pa.string_view(), pa.string_view(), pa.date32()]
    assert got.column("s").to_pylist() == ["a", "a string longer than twelve bytes"] * 2
    assert got.column("t").to_pylist() == ["x", None] * 2
    with pytest.raises(TypeError, match="string_view"):
        pqsift.scan(tmp_path, string_view="yes")


DICTIONARY_CASES = [
    ("c = 'b'", lambda t: pc.fill_null(pc.equal(t["c"], "b"), False)),
    ("c <> 'b'", lambda t: pc.fill_null(pc.not_equal(t["c"], "b"), False)),
    ("c IS NULL", lambda t: pc.is_null(t["c"])),
    ("NOT (c = 'b') OR c IS NULL", lambda t: pc.fill_null(pc.or_kleene(pc.invert(pc.equal(t["c"], "b")), pc.is_null(t["c"])), False)),
    ("c IN ('a', 'dd')", lambda t: pc.fill_null(pc.is_in(t["c"], pa.array(["a", "dd"])), False)),
    ("c LIKE 'd%'", lambda t: pc.fill_null(pc.starts_with(t["c"], "d"), False)),
    ("c > 'b' AND v < 500", lambda t: pc.fill_null(pc.and_(pc.greater(t["c"], "b"), pc.less(t["v"], 500)), False)),
]


@pytest.mark.parametrize("text, oracle", DICTIONARY_CASES, ids=[c[0] for c in DICTIONARY_CASES])
@pytest.mark.parametrize("string_view", [False, True])
def test_predicates_on_dictionary_encoded_strings(tmp_path: Path, text: str, oracle, string_view: bool) -> None:
    """A predicate on one all-dictionary-encoded string column is evaluated once per
    dictionary entry (and once for null) and spread over the rows by key: the same rows as
    the oracle and as the same data written without dictionaries, the column projected too."""
    rng = np.random.default_rng(5)
    n = 30_000
    values = np.array(["a", "b", "c", "dd", "a string longer than twelve bytes"])[rng.integers(0, 5, n)]
    table = pa.table({"c": pa.array(values, mask=rng.random(n) < 0.2), "v": pa.array(rng.integers(0, 1000, n))})
    pq.write_table(table, tmp_path / "dictionary.parquet", row_group_size=7_000, write_page_index=True, data_page_size=4096)
    pq.write_table(table, tmp_path / "plain.parquet", row_group_size=7_000, use_dictionary=False)
    chunk = pq.ParquetFile(tmp_path / "dictionary.parquet").metadata.row_group(0).column(0)
    assert "RLE_DICTIONARY" in chunk.encodings
    expected = table.filter(oracle(table))
    # The column's Arrow type a dictionary in the file itself: evaluated as such.
    typed = table.set_column(0, "c", table.column("c").dictionary_encode())
    pq.write_table(typed, tmp_path / "typed.parquet", row_group_size=7_000)
    for name in ("dictionary.parquet", "plain.parquet", "typed.parquet"):
        got = pqsift.scan(tmp_path / name, columns=["c", "v"], filter=text, string_view=string_view).to_table()
        assert same(got.cast(expected.schema), expected), (name, text)


def test_limit(events: Path) -> None:
    scan = pqsift.scan(events, columns=["id"], limit=7, threads=3)
    assert scan.to_table().column("id").to_pylist() == list(range(7))
    assert scan.metrics["rows_out"] == 7  # row groups read ahead are not output
    filtered = pqsift.scan(events, columns=["id"], filter="kind = 'e'", limit=1234).to_table()
    assert filtered.num_rows == 1234
    assert pqsift.scan(events, limit=0).to_table().num_rows == 0


def test_a_filtered_limit_stops_when_it_has_its_rows(tmp_path: Path) -> None:
    """One row group of 400,000 rows, 1 in 64 a purchase, a wide note: LIMIT 10 decodes the
    filter's column for a small window of the row group and the note for 10 rows, and gives
    the first 10 matching rows in file order — as the full read does."""
    n = 400_000
    table = pa.table(
        {
            "id": pa.array(range(n), pa.int64()),
            "kind": pa.array(["purchase" if i % 64 == 5 else "view" for i in range(n)]),
            "note": pa.array([f"note {i} " * 8 for i in range(n)]),
        }
    )
    path = tmp_path / "one_row_group.parquet"
    pq.write_table(table, path, row_group_size=n, write_page_index=True, data_page_size=64 << 10)
    full = pqsift.scan(path, columns=["id", "note"], filter="kind = 'purchase'").to_table()
    for threads in (1, 2):
        scan = pqsift.scan(
            path, columns=["id", "note"], filter="kind = 'purchase'", limit=10, threads=threads, decode_bytes=8 << 20
        )
        assert same(scan.to_table(), full.slice(0, 10))
        decoded = scan.metrics["rows_decoded_by_column"]
        # Each window decodes its first 10 matches at most; the stream reads ahead 2 windows a thread.
        assert decoded["note"] <= 10 * 2 * threads, decoded
        assert decoded["kind"] < n // 2, decoded  # the first windows, not the whole row group
    # A limit past the matches reads everything and gives every match.
    assert same(pqsift.scan(path, columns=["id", "note"], filter="kind = 'purchase'", limit=n).to_table(), full)


def test_arrow_stream_interop(events: Path) -> None:
    scan = pqsift.scan(events, columns=["id", "amount"], filter=col("amount") > 990)
    reader = pa.RecordBatchReader.from_stream(scan)
    via_stream = reader.read_all()
    assert same(via_stream, scan.to_table())
    assert scan.metrics["rows_out"] == via_stream.num_rows
    duckdb = pytest.importorskip("duckdb")
    con = duckdb.connect()
    scan_table = pqsift.scan(events, columns=["id"], filter="amount > 990")  # noqa: F841 - DuckDB finds it by name
    assert con.execute("SELECT count(*) FROM scan_table").fetchone()[0] == via_stream.num_rows


def test_polars_reads_the_stream(events: Path) -> None:
    pl = pytest.importorskip("polars")
    frame = pl.from_arrow(pa.RecordBatchReader.from_stream(pqsift.scan(events, columns=["id"], filter="id < 10")))
    assert frame["id"].to_list() == list(range(10))


def test_bad_options_and_columns(events: Path) -> None:
    with pytest.raises(TypeError, match="nope"):
        pqsift.scan(events, nope=1)
    with pytest.raises(ValueError, match="selection_policy"):
        pqsift.scan(events, selection_policy="fastest")
    with pytest.raises(ValueError, match="batch_size"):
        pqsift.scan(events, batch_size=0)
    with pytest.raises(pqsift.FilterError, match="missing"):
        pqsift.scan(events, columns=["id", "missing"]).to_table()
    with pytest.raises(pqsift.FilterError, match="nope"):
        pqsift.scan(events, filter="nope > 1")


@pytest.mark.parametrize("name", ["ARROW-GH-41321.parquet", "ARROW-RS-GH-6229-LEVELS.parquet", "ARROW-GH-45185.parquet"])
def test_corrupt_data_raises_with_the_file_name(corpus: Path, name: str) -> None:
    with pytest.raises((pqsift.CorruptFileError, pqsift.FilterError)) as info:
        pqsift.scan(corpus / "bad_data" / name).to_table()
    assert name in str(info.value)


def test_auto_policy_is_per_column_type(tmp_path: Path) -> None:
    """Runs of 10 rows: below the threshold 32, so a fixed-width column the crate decodes
    (a 40-digit decimal, 17 bytes of FIXED_LEN_BYTE_ARRAY) goes through a mask (every row
    of the span), but above 32 / 8 = 4, so a string column the crate decodes (a string
    inside a struct) goes through runs (only the selected rows): the crossover for
    strings is far lower (benches/results/selection.md). Flat columns pqsift decodes
    itself (int64, int16 converted from INT32, 38-digit decimals, PLAIN and
    DELTA_BYTE_ARRAY strings) read only the selected rows whatever the policy."""
    rows = 20_000
    flag = (np.arange(rows) // 10) % 2 == 0
    path = tmp_path / "runs.parquet"
    pq.write_table(
        pa.table(
            {
                "flag": flag,
                "n": np.arange(rows),
                "n16": (np.arange(rows) % 30_000).astype(np.int16),
                "d": pa.array(np.arange(rows), pa.int64()).cast(pa.decimal256(40, 2)),
                "d38": pa.array(np.arange(rows), pa.int64()).cast(pa.decimal128(38, 2)),
                "s": pa.StructArray.from_arrays([pa.array([f"value {i}" for i in range(rows)])], ["v"]),
                "p": [f"value {i}" for i in range(rows)],
                "delta": [f"value {i}" for i in range(rows)],
            }
        ),
        path,
        write_page_index=True,
        use_dictionary=False,
        column_encoding={"delta": "DELTA_BYTE_ARRAY"},
    )
    # The mask spans the first to the last selected row: the trailing run of 10 is skipped.
    flat = ("n", "n16", "d38", "p", "delta")
    for column, decoded in (("d", rows - 10), ("s", rows // 2), *((c, rows // 2) for c in flat)):
        scan = pqsift.scan(path, columns=[column], filter="flag")
        assert scan.to_table().num_rows == rows // 2
        assert scan.metrics["rows_decoded_by_column"][column] == decoded, column
    for column, decoded in (("s", rows - 10), *((c, rows // 2) for c in flat)):
        scan = pqsift.scan(path, columns=[column], filter="flag", selection_policy="mask")
        scan.to_table()
        assert scan.metrics["rows_decoded_by_column"][column] == decoded, column


def test_v2_boolean_pages_are_decoded_for_the_selected_rows(tmp_path: Path) -> None:
    """Booleans in v2 data pages are RLE-encoded (pyarrow's writer): pqsift decodes them
    itself, for the selected rows only — through a mask policy the crate would decode the
    whole span of runs of 10 — the same values as pyarrow's, nulls included."""
    rows = 20_000
    rng = np.random.default_rng(7)
    flag = (np.arange(rows) // 10) % 2 == 0
    table = pa.table({"flag": flag, "b": pa.array(rng.random(rows) < 0.3, mask=rng.random(rows) < 0.1)})
    path = tmp_path / "v2.parquet"
    pq.write_table(table, path, data_page_version="2.0", write_page_index=True, compression="zstd", data_page_size=4096)
    assert pq.ParquetFile(path).metadata.row_group(0).column(1).encodings == ("RLE",)
    scan = pqsift.scan(path, columns=["b"], filter="flag", selection_policy="mask")
    assert scan.to_table().column("b").to_pylist() == table.filter(pa.array(flag)).column("b").to_pylist()
    assert scan.metrics["rows_decoded_by_column"]["b"] == rows // 2


def test_one_row_group_decodes_columns_in_parallel(tmp_path: Path) -> None:
    """One surviving row group and four threads: the row group's columns are decoded on
    several threads; rows, order and metrics are those of a one-thread read."""
    rows = 50_000
    rng = np.random.default_rng(3)
    path = tmp_path / "one.parquet"
    table = pa.table(
        {
            "k": np.arange(rows),
            "a": rng.random(rows),
            "b": pa.array([f"text {i}" * 3 for i in range(rows)]),
            "c": pa.array(np.where(rng.random(rows) < 0.2, None, rng.integers(0, 9, rows)), pa.int64()),
            "d": pa.array([None if i % 7 == 0 else f"d{i % 13}" for i in range(rows)]),
        }
    )
    pq.write_table(table, path, write_page_index=True, row_group_size=rows)
    results = []
    for threads in (1, 4):
        scan = pqsift.scan(path, columns=["d", "a", "k", "b", "c"], filter="a < 0.3 OR c > 6", threads=threads)
        results.append((scan.to_table(), scan.metrics["rows_decoded_by_column"]))
    assert results[0][0].equals(results[1][0])
    assert results[0][1] == results[1][1]
    expected = table.filter(pc.or_kleene(pc.less(table["a"], 0.3), pc.greater(table["c"], 6)))
    assert results[1][0].equals(expected.select(["d", "a", "k", "b", "c"]))


@pytest.mark.parametrize(
    "columns",
    [
        ["attrs.b"],
        ["id", "attrs.inner.v", "attrs.a"],
        ["attrs.inner", "attrs"],
        ["`dotted.name`", "attrs.inner.u"],
    ],
)
@pytest.mark.parametrize("filter_text", [None, "attrs.a > 3 OR `dotted.name` IS NULL"])
def test_nested_fields_project_by_path(tmp_path: Path, columns: list[str], filter_text: str | None) -> None:
    """A path names a struct field, as Spark's ``select("attrs.b")``: the output column is
    that field, named by its last part, null where any struct above it is null. Oracle:
    the rows walked in Python."""
    rng = np.random.default_rng(5)
    rows = 3000

    def maybe(value: object) -> object:
        return None if rng.random() < 0.1 else value

    inner = pa.struct([("u", pa.int32()), ("v", pa.string())])
    attrs = pa.array(
        [
            maybe({"a": int(rng.integers(0, 9)), "b": maybe("x" * int(rng.integers(0, 4))), "inner": maybe({"u": maybe(i), "v": maybe(str(i))})})
            for i in range(rows)
        ],
        pa.struct([("a", pa.int64()), ("b", pa.string()), ("inner", inner)]),
    )
    table = pa.table({"id": np.arange(rows), "attrs": attrs, "dotted.name": pa.array([maybe(i) for i in range(rows)], pa.int32())})
    path = tmp_path / "nested.parquet"
    pq.write_table(table, path, row_group_size=700, write_page_index=True)
    got = pqsift.scan(path, columns=columns, filter=filter_text, threads=2).to_table()

    def walk(row: dict, column: str) -> object:
        if column.startswith("`"):
            return row[column.strip("`")]
        value: object = row
        for part in column.split("."):
            if value is None:
                return None
            value = value[part]  # type: ignore[index]
        return value

    expected = []
    for row in table.to_pylist():
        if filter_text and not ((row["attrs"] is not None and row["attrs"]["a"] > 3) or row["dotted.name"] is None):
            continue
        expected.append([walk(row, c) for c in columns])
    assert got.column_names == [c.strip("`").split(".")[-1] if not c.startswith("`") else c.strip("`") for c in columns]
    assert [list(r.values()) for r in got.to_pylist()] == expected


def test_a_path_reads_only_its_leaves(tmp_path: Path) -> None:
    """Projecting ``attrs.a`` decodes the Parquet leaf ``attrs.a`` only, not the wide
    ``attrs.text`` beside it; when a predicate already decoded ``attrs`` whole, the
    projection reuses it."""
    rows = 20_000
    attrs = pa.array(
        [{"a": i % 10, "text": f"{i} " + "lorem ipsum " * 20} for i in range(rows)],
        pa.struct([("a", pa.int64()), ("text", pa.string())]),
    )
    path = tmp_path / "wide_struct.parquet"
    pq.write_table(pa.table({"id": np.arange(rows), "attrs": attrs}), path, compression="none")
    narrow = pqsift.scan(path, columns=["attrs.a"])
    assert narrow.to_table().column("a").to_pylist() == [i % 10 for i in range(rows)]
    whole = pqsift.scan(path, columns=["attrs"])
    whole.to_table()
    assert narrow.metrics["bytes_read"] * 10 < whole.metrics["bytes_read"]
    filtered = pqsift.scan(path, columns=["attrs.a", "id"], filter="attrs.text LIKE '1 %'")
    table = filtered.to_table()
    assert table.column("id").to_pylist() == [1] and table.column("a").to_pylist() == [1]
    assert filtered.metrics["cache_hits"] >= 1  # attrs, decoded whole for the predicate


_LONG_FIRST = r"""
import sys, numpy as np, pyarrow as pa, pyarrow.parquet as pq, pqsift
path, rows = sys.argv[1], 300_001
values = ["x" * (8 << 20)] + [f"v{i}" for i in range(1, rows)]
pq.write_table(pa.table({"id": np.arange(rows), "s": values}), path, write_page_index=True, use_dictionary=False)
table = pqsift.scan(path, columns=["s"]).to_table()
assert table.num_rows == rows and table.column("s")[0].as_py() == values[0] and table.column("s")[-1].as_py() == values[-1]
picked = pqsift.scan(path, columns=["s"], filter="id = 0 OR id >= 299990").to_table()
assert picked.column("s").to_pylist() == [values[0], *values[299_990:]]
status = open("/proc/self/status").read()
print(next(line.split()[1] for line in status.splitlines() if line.startswith("VmHWM:")))
"""


def test_one_long_string_does_not_size_the_output_of_the_rest(tmp_path: Path) -> None:
    """pqsift sizes a string column's output from its first page's average value for every
    row to come, but never more than 64 MiB ahead: a first page holding one 8 MiB value
    followed by 300,000 short ones reads right, with and without a filter, in a process
    whose peak RSS stays under 1 GiB (unbounded, the estimate was 2.4 TB and the peak
    2.8 GB)."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", _LONG_FIRST, str(tmp_path / "long_first.parquet")], capture_output=True, timeout=300)
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    peak_kib = int(done.stdout.decode().split()[-1])
    assert peak_kib < (1 << 20), f"peak RSS {peak_kib >> 10} MiB"


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    rows=st.integers(1, 3_000),
    row_group=st.integers(50, 3_000),
    every=st.integers(1, 40),
    limit=st.integers(0, 200),
    threads=st.integers(1, 3),
    decode_kib=st.sampled_from([1, 4, 64, 32 << 10]),
)
def test_a_filtered_limit_gives_the_first_matching_rows(
    tmp_path: Path, rows: int, row_group: int, every: int, limit: int, threads: int, decode_kib: int
) -> None:
    """Windows that grow, a cap of `limit` rows per window, reading ahead: the rows are the
    first `limit` matches in file order, whatever the layout."""
    table = pa.table({"id": pa.array(range(rows), pa.int64()), "note": pa.array([f"n{i}" * 5 for i in range(rows)])})
    path = tmp_path / "limit.parquet"
    pq.write_table(table, path, row_group_size=row_group, write_page_index=True, data_page_size=1 << 10)
    where = f"id % {every} = 0"
    full = pqsift.scan(path, filter=where).to_table()
    got = pqsift.scan(path, filter=where, limit=limit, threads=threads, decode_bytes=decode_kib << 10).to_table()
    assert same(got, full.slice(0, limit))


def test_a_scan_of_many_files_holds_few_open(tmp_path: Path) -> None:
    """A local file is opened when its row groups are read and closed after its last: a
    scan of more files than the process may hold open reads them all (it opened two
    descriptors per file up front before)."""
    import subprocess
    import sys

    for k in range(300):
        pq.write_table(pa.table({"id": pa.array(range(k * 10, k * 10 + 10), pa.int64())}), tmp_path / f"part-{k:03d}.parquet")
    script = (
        "import resource, pqsift, sys\n"
        "resource.setrlimit(resource.RLIMIT_NOFILE, (128, 128))\n"
        f"table = pqsift.scan({str(tmp_path)!r}, threads=2).to_table()\n"
        "assert sorted(table.column('id').to_pylist()) == list(range(3000)), table.num_rows\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr[-2000:]
