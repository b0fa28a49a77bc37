"""What users of pyarrow, pandas and Polars expect of a scan, compared with those libraries'
own readers: ``schema`` / ``__arrow_c_schema__``, ``count_rows`` (answered by the plan
without a filter), ``head``, ``to_pandas``, ``to_polars``, a notebook view, and filters
given as pyarrow's DNF tuples."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

import pqsift

DELTA = (Path(__file__).resolve().parents[1] / ".." / "shared" / "delta-testing").resolve()


@pytest.fixture(scope="module")
def events(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two files of 1,000 rows (100-row row groups) with nulls, a struct, and a column
    whose name holds a dot."""
    root = tmp_path_factory.mktemp("events")
    for part in range(2):
        ids = list(range(part * 1000, part * 1000 + 1000))
        table = pa.table(
            {
                "id": pa.array(ids, pa.int64()),
                "kind": pa.array([None if i % 11 == 0 else "abc"[i % 3] for i in ids]),
                "amount": pa.array([None if i % 13 == 0 else i * 0.5 for i in ids]),
                "a.b": pa.array([i % 5 for i in ids], pa.int32()),
                "s": pa.array([{"x": i % 7} for i in ids]),
            }
        )
        pq.write_table(table, root / f"part-{part}.parquet", row_group_size=100)
    return root


def test_the_schema_is_known_without_reading(events: Path) -> None:
    scan = pqsift.scan(events, ["id", "kind", "s.x"], "amount > 10")
    assert scan.schema == pa.schema(scan) == scan.to_table().schema
    assert scan.schema.names == ["id", "kind", "x"]
    viewed = pqsift.scan(events, ["kind"], string_view=True)
    assert viewed.schema == viewed.to_table().schema and viewed.schema.field("kind").type == pa.string_view()


@pytest.mark.parametrize(
    "where",
    [None, "amount > 100", "kind = 'a' AND id > 1500", "id < 0", "kind IS NULL OR `a.b` = 2"],
)
def test_count_rows_is_pyarrows(events: Path, where: str | None) -> None:
    dataset = ds.dataset(str(events), format="parquet")
    expected = dataset.to_table(filter=None if where is None else _arrow_filter(where)).num_rows
    assert pqsift.scan(events, filter=where).count_rows() == expected
    assert pqsift.scan(events, filter=where, limit=7).count_rows() == min(expected, 7)


def _arrow_filter(where: str) -> Any:
    field = ds.field
    return {
        "amount > 100": field("amount") > 100,
        "kind = 'a' AND id > 1500": (field("kind") == "a") & (field("id") > 1500),
        "id < 0": field("id") < 0,
        "kind IS NULL OR `a.b` = 2": field("kind").is_null() | (field("a.b") == 2),
    }[where]


def test_count_rows_without_a_filter_reads_no_column(events: Path, tmp_path: Path) -> None:
    """The plan answers: the file's data pages overwritten with zeros, its footer intact,
    count_rows still counts every row — and a read fails."""
    source = events / "part-0.parquet"
    broken = tmp_path / "broken.parquet"
    data = bytearray(source.read_bytes())
    footer_start = len(data) - 8 - int.from_bytes(data[-8:-4], "little")
    data[4:footer_start] = bytes(footer_start - 4)
    broken.write_bytes(bytes(data))
    assert pqsift.scan(broken).count_rows() == 1000
    with pytest.raises(pqsift.CorruptFileError):
        pqsift.scan(broken).to_table()


def test_count_rows_leaves_out_deleted_rows() -> None:
    table = DELTA / "tables" / "table-with-dv-small"
    if not table.exists():
        pytest.skip(f"{table} is not there")
    assert pqsift.scan(table).count_rows() == 8  # 10 rows, 2 deleted by a deletion vector
    assert pqsift.scan(table, filter="value > 4").count_rows() == pqsift.scan(table, filter="value > 4").to_table().num_rows


def test_head_is_pyarrows(events: Path) -> None:
    dataset = ds.dataset(str(events), format="parquet")
    assert pqsift.scan(events, ["id", "kind"]).head(150).equals(dataset.head(150, columns=["id", "kind"]))
    assert pqsift.scan(events, ["id"], "kind = 'b'").head(3).column("id").to_pylist() == [1, 4, 7]
    assert pqsift.scan(events, ["id"], order_by=("id", "desc")).head(2).column("id").to_pylist() == [1999, 1998]
    assert pqsift.scan(events, limit=4).head(10).num_rows == 4
    with pytest.raises(ValueError, match="head"):
        pqsift.scan(events).head(-1)


def test_to_pandas_and_to_polars_are_their_readers(events: Path) -> None:
    polars = pytest.importorskip("polars")
    scan = pqsift.scan(events, ["id", "kind", "amount"], "id >= 1500")
    expected = pq.read_table(events / "part-1.parquet", columns=["id", "kind", "amount"]).slice(500)
    assert scan.to_pandas().equals(expected.to_pandas())
    frame = scan.to_polars()
    assert isinstance(frame, polars.DataFrame)
    assert frame.equals(polars.read_parquet(events / "part-1.parquet", columns=["id", "kind", "amount"]).slice(500))


def test_the_notebook_view_shows_the_plan(events: Path) -> None:
    view = pqsift.scan(events, ["id"], "id BETWEEN 120 AND 180")._repr_html_()
    assert "<table>" in view and "pqsift.Scan" in view
    assert "1 of 20 kept" in view  # row groups: one holds 120..180
    assert "id" in view and "BETWEEN" in view


# ----- pyarrow's DNF filters ---------------------------------------------------------------

DNF_CASES: list[Any] = [
    [("id", ">", 1990)],
    [("id", ">=", 10), ("id", "<", 14), ("kind", "!=", "a")],
    [("kind", "in", ["a", "c"])],
    [("kind", "in", ["a", None])],
    [("kind", "not in", ["a"])],
    [("kind", "not in", ["a", None])],
    [("id", "in", [])],
    [("id", "not in", [])],
    [("kind", "=", None)],
    [("a.b", "==", 3), ("amount", "<=", 20.0)],
    [[("id", "<", 3)], [("id", ">", 1997)], [("kind", "in", ["b"]), ("id", "<", 20)]],
]


@pytest.mark.parametrize("filters", DNF_CASES, ids=[str(i) for i in range(len(DNF_CASES))])
def test_dnf_filters_select_pyarrows_rows(events: Path, filters: Any) -> None:
    path = events / "part-0.parquet"
    expected = pq.read_table(path, columns=["id"], filters=filters).column("id").to_pylist()
    got = pqsift.scan(path, ["id"], filters).to_table().column("id").to_pylist()
    assert got == expected, pqsift.from_dnf(filters)


def test_dnf_on_a_struct_field_and_malformed_dnf(events: Path) -> None:
    path = events / "part-0.parquet"
    got = pqsift.scan(path, ["id"], [(("s", "x"), "=", 3), ("id", "<", 30)]).to_table().column("id").to_pylist()
    assert got == [3, 10, 17, 24]
    for bad in ([], [("id", "~", 1)], [("id", ">")], [[("id", "<", 1)], []], [("id", "in", 5)]):
        with pytest.raises(ValueError, match=r"DNF|op|value"):
            pqsift.scan(path, filter=bad)
    with pytest.raises(TypeError, match="DNF"):
        pqsift.scan(path, filter=42)  # type: ignore[arg-type]
