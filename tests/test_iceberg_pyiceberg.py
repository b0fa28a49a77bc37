"""Iceberg tables written by pyiceberg (a SQLite catalog in a temporary warehouse), read
with pqsift and compared with pyiceberg's own reads and with DuckDB over all the rows:
every partition transform, appends, copy-on-write deletes, schema evolution, time travel,
and a property test that pruning on and off give the same rows.
"""

from __future__ import annotations

import datetime
import json
import math
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.transforms import (
    BucketTransform,
    DayTransform,
    HourTransform,
    IdentityTransform,
    MonthTransform,
    Transform,
    TruncateTransform,
    YearTransform,
)
from pyiceberg.types import (
    DateType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    NestedField,
    StringType,
    TimestampType,
)

import pqsift

SCHEMA = Schema(
    NestedField(1, "id", LongType()),
    NestedField(2, "kind", StringType()),
    NestedField(3, "amount", DoubleType()),
    NestedField(4, "ts", TimestampType()),
    NestedField(5, "day", DateType()),
    NestedField(6, "qty", IntegerType()),
)

NO_PRUNING: dict[str, Any] = {"statistics": False, "bloom_filter": False, "page_index": False}


def catalog(tmp: Path) -> SqlCatalog:
    cat = SqlCatalog("test", uri=f"sqlite:///{tmp}/catalog.db", warehouse=f"file://{tmp}/warehouse")
    cat.create_namespace("db")
    return cat


def batch(start: int, rows: int, *, kinds: tuple[str, ...] = ("sale", "refund", "view", "")) -> pa.Table:
    ids = range(start, start + rows)
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "kind": pa.array([None if i % 11 == 0 else kinds[i % len(kinds)] for i in ids], pa.string()),
            "amount": pa.array([math.nan if i % 13 == 0 else None if i % 7 == 0 else i * 0.5 for i in ids]),
            "ts": pa.array([datetime.datetime(2025, 12, 30) + datetime.timedelta(hours=5 * i) for i in ids]),
            "day": pa.array([datetime.date(2024, 1, 1) + datetime.timedelta(days=3 * i) for i in ids]),
            "qty": pa.array([i % 50 - 10 for i in ids], pa.int32()),
        }
    )


def root_of(table: Any) -> str:
    return str(table.location()).removeprefix("file://")


def sorted_rows(table: pa.Table) -> list[tuple[Any, ...]]:
    rows = [tuple(row.values()) for row in table.to_pylist()]
    key = [tuple((v is None, str(v)) for v in row) for row in rows]
    return [row for _, row in sorted(zip(key, rows, strict=True))]


def same(a: pa.Table, b: pa.Table) -> bool:
    def norm(v: Any) -> Any:
        return "NaN" if isinstance(v, float) and math.isnan(v) else v

    return [tuple(map(norm, r)) for r in sorted_rows(a)] == [tuple(map(norm, r)) for r in sorted_rows(b)]


def oracle(everything: pa.Table, condition: str) -> pa.Table:
    """DuckDB's rows of `everything` where `condition` holds (Spark's semantics for these
    comparisons: NULL never matches, NaN the greatest double and equal to itself)."""
    con = duckdb.connect()
    con.register("t", everything)
    return con.sql(f"SELECT * FROM t WHERE {condition}").to_arrow_table()


TRANSFORMS: list[tuple[str, int, Transform[Any, Any]]] = [
    ("kind", 2, IdentityTransform()),
    ("qty", 6, IdentityTransform()),
    ("ts", 4, DayTransform()),
    ("ts", 4, HourTransform()),
    ("day", 5, MonthTransform()),
    ("day", 5, YearTransform()),
    ("id", 1, BucketTransform(4)),
    ("kind", 2, BucketTransform(3)),
    ("kind", 2, TruncateTransform(2)),
    ("qty", 6, TruncateTransform(10)),
]

QUERIES = [
    "id >= 40 AND id < 60",
    "kind = 'sale'",
    "kind IS NULL",
    "kind = ''",
    "qty = -3",
    "qty IN (1, 2, 30)",
    "ts >= TIMESTAMP '2026-01-03 00:00:00' AND ts < TIMESTAMP '2026-01-04 06:00:00'",
    "day BETWEEN DATE '2024-03-01' AND DATE '2024-04-15'",
    "amount > 30.0",
    "amount = 'NaN'",
    "amount IS NULL OR amount < 2",
    "kind LIKE 're%' AND qty > 0",
]


@pytest.mark.parametrize(("column", "source_id", "transform"), TRANSFORMS, ids=lambda v: str(v))
def test_every_transform_prunes_soundly(tmp_path: Path, column: str, source_id: int, transform: Any) -> None:
    spec = PartitionSpec(PartitionField(source_id, 1000, transform, f"{column}_part"))
    table = catalog(tmp_path).create_table("db.events", schema=SCHEMA, partition_spec=spec)
    for start in (0, 60, 120):
        table.append(batch(start, 60))
    everything = table.scan().to_arrow()
    assert pqsift.scan(root_of(table)).table_format == "iceberg"
    assert same(pqsift.scan(root_of(table)).to_table(), everything)
    pruned_any = False
    for condition in QUERIES:
        scan = pqsift.scan(root_of(table), filter=condition)
        got = scan.to_table()
        assert same(got, oracle(everything, condition.replace("'NaN'", "'NaN'::DOUBLE"))), condition
        assert same(got, pqsift.scan(root_of(table), filter=condition, **NO_PRUNING).to_table()), condition
        pruned_any |= scan.metrics["files_pruned_manifest"] > 0
    assert pruned_any, "the manifests pruned no file for any query"


def test_deletes_schema_evolution_and_time_travel(tmp_path: Path) -> None:
    table = catalog(tmp_path).create_table(
        "db.events", schema=SCHEMA, partition_spec=PartitionSpec(PartitionField(2, 1000, IdentityTransform(), "kind"))
    )
    table.append(batch(0, 50))
    first = table.current_snapshot()
    assert first is not None
    table.append(batch(50, 50))
    table.delete("kind == 'view'")  # copy-on-write: files rewritten or dropped
    with table.update_schema() as update:
        update.rename_column("amount", "value")
        update.add_column("note", StringType())
        update.update_column("qty", LongType())  # int widened to long
    table.append(
        batch(100, 20)
        .rename_columns(["id", "kind", "value", "ts", "day", "qty"])
        .set_column(5, "qty", pa.array(range(20), pa.int64()))
        .append_column("note", pa.array(["n"] * 20))
    )
    root = root_of(table)
    current = pqsift.scan(root)
    assert current.snapshot_id == table.current_snapshot().snapshot_id  # type: ignore[union-attr]
    got = current.to_table()
    assert got.schema.names == ["id", "kind", "value", "ts", "day", "qty", "note"]
    assert got.schema.field("qty").type == pa.int64()
    assert same(got, table.scan().to_arrow())
    deleted = [i for i, k in zip(got.column("id").to_pylist(), got.column("kind").to_pylist(), strict=True) if k == "view"]
    assert deleted and min(deleted) >= 100, "the rows deleted before the last append are gone"
    # A renamed column is found by its field id in files written before the rename.
    renamed = pqsift.scan(root, filter="value > 40", columns=["id", "value", "note"]).to_table()
    # (pyiceberg's filter leaves NaN out; Spark's, and DuckDB's, order it above 40.)
    assert same(renamed, oracle(table.scan().to_arrow(), "value > 40").select(["id", "value", "note"]))
    # The first snapshot, by id, has the schema it was written with.
    old = pqsift.scan(root, snapshot_id=first.snapshot_id)
    assert old.snapshot_id == first.snapshot_id
    assert same(old.to_table(), table.scan(snapshot_id=first.snapshot_id).to_arrow())
    with pytest.raises(pqsift.TableError, match="no snapshot 12345"):
        pqsift.scan(root, snapshot_id=12345)
    # A metadata file given as the source reads that metadata version.
    metadata_files = sorted((Path(root) / "metadata").glob("*.metadata.json"))
    assert pqsift.scan(str(metadata_files[1])).to_table().num_rows == 50


COLUMN_VALUES = {
    "id": st.integers(-(2**40), 2**40),
    "kind": st.sampled_from(["a", "b", "ab", "", "z\u00e9", "\U0001f600"]),
    "amount": st.sampled_from([0.0, -0.0, 1.5, -2.25, math.nan, math.inf, -math.inf]),
}


@st.composite
def random_table(draw: st.DrawFn) -> tuple[list[list[dict[str, Any]]], str]:
    appends = draw(
        st.lists(
            st.lists(
                st.fixed_dictionaries({k: st.one_of(st.none(), v) for k, v in COLUMN_VALUES.items()}),
                min_size=1,
                max_size=12,
            ),
            min_size=1,
            max_size=4,
        )
    )
    column = draw(st.sampled_from(list(COLUMN_VALUES)))
    op = draw(st.sampled_from(["=", "<", "<=", ">", ">=", "<>"]))
    value = draw(COLUMN_VALUES[column])
    literal = (
        f"'{value}'"
        if isinstance(value, str)
        else f"CAST('{value}' AS DOUBLE)"
        if isinstance(value, float)
        else str(value)
    )
    condition = draw(st.sampled_from([f"{column} {op} {literal}", f"{column} IS NULL", f"NOT ({column} {op} {literal})"]))
    return appends, condition


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=random_table(), partitioned=st.booleans())
def test_pruning_on_and_off_give_the_same_rows(tmp_path_factory: pytest.TempPathFactory, case: Any, partitioned: bool) -> None:
    appends, condition = case
    tmp = tmp_path_factory.mktemp("iceberg")
    schema = Schema(
        NestedField(1, "id", LongType()), NestedField(2, "kind", StringType()), NestedField(3, "amount", DoubleType())
    )
    spec = PartitionSpec(PartitionField(2, 1000, IdentityTransform(), "kind")) if partitioned else PartitionSpec()
    table = catalog(tmp).create_table("db.t", schema=schema, partition_spec=spec)
    arrow_schema = pa.schema([("id", pa.int64()), ("kind", pa.string()), ("amount", pa.float64())])
    for rows in appends:
        table.append(pa.Table.from_pylist(rows, schema=arrow_schema))
    root = root_of(table)
    pruned = pqsift.scan(root, filter=condition).to_table()
    unpruned = pqsift.scan(root, filter=condition, **NO_PRUNING).to_table()
    assert same(pruned, unpruned), condition
    everything = pa.Table.from_pylist([r for rows in appends for r in rows], schema=arrow_schema)
    assert same(pruned, oracle(everything, condition)), condition


def test_float_columns_read_as_declared(tmp_path: Path) -> None:
    schema = Schema(NestedField(1, "x", FloatType()))
    table = catalog(tmp_path).create_table("db.f", schema=schema)
    table.append(pa.table({"x": pa.array([1.5, None, math.nan], pa.float32())}))
    with table.update_schema() as update:
        update.update_column("x", DoubleType())
    got = pqsift.scan(root_of(table), filter="x > 1").to_table()
    assert got.schema.field("x").type == pa.float64()
    assert sorted(str(v) for v in got.column("x").to_pylist()) == ["1.5", "nan"]


def test_bad_metadata_raises_table_errors_naming_the_file(tmp_path: Path) -> None:
    table = catalog(tmp_path).create_table("db.t", schema=SCHEMA)
    table.append(batch(0, 10))
    root = Path(root_of(table))
    manifest = next((root / "metadata").glob("*-m0.avro"))
    manifest.write_bytes(manifest.read_bytes()[:40])
    with pytest.raises(pqsift.TableError) as error:
        pqsift.scan(str(root))
    assert manifest.name in str(error.value) and error.value.table == str(root)
    manifest.unlink()
    with pytest.raises(pqsift.TableError, match="manifest"):
        pqsift.scan(str(root))
    current = sorted((root / "metadata").glob("*.metadata.json"))[-1]
    metadata = json.loads(current.read_text())
    current.write_text(json.dumps({**metadata, "format-version": 9}))
    with pytest.raises(pqsift.TableError, match="format version 9"):
        pqsift.scan(str(root))
