"""Files whose schemas differ (issue 16): read as Spark 4.3 reads them — the first file's
schema by default (other files read into it by name, widened where Spark widens), the
union with ``merge_schema`` (Spark's ``mergeSchema``) — and a ``SchemaMismatchError``
where Spark fails. The oracle is Spark itself on the same directories."""

from __future__ import annotations

import datetime
import decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import pqsift


def i64(*values: Any) -> pa.Array:
    return pa.array(values, pa.int64())


def i32(*values: Any) -> pa.Array:
    return pa.array(values, pa.int32())


def dec(precision: int, scale: int, *values: str) -> pa.Array:
    return pa.array([decimal.Decimal(v) for v in values], pa.decimal128(precision, scale))


#: Two files each, p1 then p2 (Spark takes the first in path order); None: Spark fails.
CASES: dict[str, tuple[pa.Table, pa.Table]] = {
    "added": (pa.table({"id": i64(1, 2), "x": i64(1, 2)}), pa.table({"id": i64(3, 4), "x": i64(3, 4), "y": i64(5, 6)})),
    "added_in_first": (pa.table({"id": i64(1, 2), "x": i64(1, 2), "y": i64(5, 6)}), pa.table({"id": i64(3, 4), "x": i64(3, 4)})),
    "removed_and_added": (pa.table({"id": i64(1), "a": i64(7)}), pa.table({"id": i64(2), "b": pa.array(["b"])})),
    "nullability": (
        pa.table({"id": i64(1)}, schema=pa.schema([pa.field("id", pa.int64(), nullable=False)])),
        pa.table({"id": pa.array([None, 2], pa.int64())}),
    ),
    "reordered": (pa.table({"id": i64(1), "x": i64(1)}), pa.table({"x": i64(3), "id": i64(4)})),
    "case_changed": (pa.table({"id": i64(1), "X": i64(1)}), pa.table({"id": i64(3), "x": i64(4)})),
    "int_then_long": (pa.table({"v": i32(1)}), pa.table({"v": i64(2)})),
    "long_then_int": (pa.table({"v": i64(1)}), pa.table({"v": i32(2)})),
    "double_then_float": (pa.table({"v": pa.array([1.5], pa.float64())}), pa.table({"v": pa.array([2.5], pa.float32())})),
    "float_then_double": (pa.table({"v": pa.array([1.5], pa.float32())}), pa.table({"v": pa.array([2.5], pa.float64())})),
    "double_then_int": (pa.table({"v": pa.array([1.5], pa.float64())}), pa.table({"v": i32(2)})),
    "int_then_string": (pa.table({"v": i32(1)}), pa.table({"v": pa.array(["a"])})),
    "decimal_wider_first": (pa.table({"v": dec(10, 2, "1.5")}), pa.table({"v": dec(5, 1, "2.5")})),
    "decimal_narrower_first": (pa.table({"v": dec(5, 1, "1.5")}), pa.table({"v": dec(10, 2, "2.5")})),
    "decimal_then_int": (pa.table({"v": dec(12, 2, "1.5")}), pa.table({"v": i32(2)})),
    "ntz_then_date": (pa.table({"v": pa.array([datetime.datetime(2026, 1, 1, 12)], pa.timestamp("us"))}), pa.table({"v": pa.array([datetime.date(2026, 1, 2)], pa.date32())})),
    "struct_grows": (
        pa.table({"id": i64(1), "s": pa.array([{"a": 1}], pa.struct([("a", pa.int64())]))}),
        pa.table({"id": i64(2), "s": pa.array([{"a": 2, "b": "x"}], pa.struct([("a", pa.int64()), ("b", pa.string())]))}),
    ),
}


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("evolution")
    paths = {}
    for name, (first, second) in CASES.items():
        (root / name).mkdir()
        pq.write_table(first, root / name / "p1.parquet")
        pq.write_table(second, root / name / "p2.parquet")
        paths[name] = root / name
    return paths


def _spark_rows(spark: Any, path: Path, merge: bool) -> tuple[list[str], list[tuple[Any, ...]]] | None:
    """Spark's column names and rows (sorted), or None where Spark fails."""
    try:
        df = spark.read.option("mergeSchema", str(merge).lower()).parquet(str(path))
        return df.columns, _sorted_rows(df)
    except Exception:  # noqa: BLE001 - Spark's failure is the expectation here
        return None


def _sorted_rows(df: Any) -> list[tuple[Any, ...]]:
    """A DataFrame's rows as tuples (structs as dicts), sorted."""
    return sorted((tuple(row.asDict(recursive=True).values()) for row in df.collect()), key=repr)


def _pqsift_rows(path: Path, merge: bool) -> tuple[list[str], list[tuple[Any, ...]]]:
    table = pqsift.scan(path, merge_schema=merge, spark_output=True).to_table()
    return table.column_names, sorted((tuple(row.values()) for row in table.to_pylist()), key=repr)


@pytest.mark.parametrize("merge", [False, True], ids=["default", "merge_schema"])
@pytest.mark.parametrize("name", list(CASES))
def test_rows_and_failures_are_sparks(spark: Any, tables: dict[str, Path], name: str, merge: bool) -> None:
    expected = _spark_rows(spark, tables[name], merge)
    if expected is None:
        with pytest.raises(pqsift.SchemaMismatchError) as raised:
            _pqsift_rows(tables[name], merge)
        message = str(raised.value)
        # Both files, the column and both types are named.
        assert "p1.parquet" in message and "p2.parquet" in message and "column v" in message, message
        return
    assert _pqsift_rows(tables[name], merge) == expected


def test_a_filter_on_a_column_some_files_lack_prunes_those_files(tables: dict[str, Path]) -> None:
    path = tables["added"]
    scan = pqsift.scan(path, filter="y > 5", merge_schema=True)
    assert scan.to_table().to_pylist() == [{"id": 4, "x": 4, "y": 6}]
    plan = scan.plan()
    assert [rg.decision for file in plan.files for rg in file.row_groups] == ["skip", "scan"]  # p1 has no y: null
    assert plan.files[0].row_groups[0].reason == "the filter cannot be true: the file has no column `y` (NULL in all its rows)"
    assert "p1.parquet: 0 of 1 row groups kept" in scan.explain() and "has no column `y`" in scan.explain()
    assert scan.metrics["rows_decoded"] == 2 + 1 + 1  # p2 only: y for its 2 rows, then id and x for the 1 left
    kept = pqsift.scan(path, columns=["id"], filter="y IS NULL", merge_schema=True)
    assert sorted(kept.to_table().column("id").to_pylist()) == [1, 2]
    with pytest.raises(pqsift.FilterError, match="`y`"):  # not in the first file's schema
        pqsift.scan(path, filter="y > 5")


def test_spark_read_and_data_source_follow_the_same_rules(spark: Any, tables: dict[str, Path]) -> None:
    import pqsift.spark

    pqsift.spark.register(spark)
    for name in ("added", "added_in_first", "long_then_int", "struct_grows"):
        for merge in (False, True):
            expected = _spark_rows(spark, tables[name], merge)
            if expected is None:
                continue
            for lazy in (False, True):
                df = pqsift.spark.read(spark, tables[name], merge_schema=merge, lazy=lazy, driver_read_bytes=0)
                assert (df.columns, _sorted_rows(df)) == expected, (name, merge, lazy)
            schema = pqsift.spark.schema(tables[name], merge_schema=merge)
            assert schema == spark.read.option("mergeSchema", str(merge).lower()).parquet(str(tables[name])).schema
            source = spark.read.format("pqsift").option("mergeSchema", str(merge).lower()).load(str(tables[name]))
            assert (source.columns, _sorted_rows(source)) == expected, (name, merge, "data source")
    with pytest.raises(Exception, match=r"SchemaMismatch|column v"):
        pqsift.spark.read(spark, tables["int_then_long"]).collect()


#: A caller's schema, as Spark DDL and as pyarrow (the same columns).
GIVEN_SCHEMAS = [
    ("id long, y string", pa.schema([("id", pa.int64()), ("y", pa.string())])),
    ("y string, id long", pa.schema([("y", pa.string()), ("id", pa.int64())])),
    ("id long, y string, day int", pa.schema([("id", pa.int64()), ("y", pa.string()), ("day", pa.int32())])),
    ("ID long", pa.schema([("ID", pa.int64())])),
    ("z long", pa.schema([("z", pa.int64())])),
    ("id int", pa.schema([("id", pa.int32())])),
    ("id double", pa.schema([("id", pa.float64())])),
    ("id string", pa.schema([("id", pa.string())])),
]


@pytest.mark.parametrize(("ddl", "given"), GIVEN_SCHEMAS, ids=[ddl for ddl, _ in GIVEN_SCHEMAS])
def test_a_given_schema_wins_as_in_spark(spark: Any, tmp_path: Path, ddl: str, given: pa.Schema) -> None:
    """Spark's ``.schema(ddl)`` on a Hive table whose second partition's file has one more
    column: the given columns in its order, the partition column appended unless given,
    names matched case-insensitively, the same widenings; a narrowing fails."""
    for day, table in ((1, CASES["added"][0]), (2, CASES["added"][1].set_column(2, "y", pa.array(["a", "b"])))):
        (tmp_path / f"day={day}").mkdir()
        pq.write_table(table, tmp_path / f"day={day}" / "p.parquet")
    try:
        native = spark.read.schema(ddl).parquet(str(tmp_path))
        expected = (native.columns, _sorted_rows(native))
    except Exception:  # noqa: BLE001 - Spark's failure is the expectation
        expected = None
    if expected is None:
        with pytest.raises(pqsift.SchemaMismatchError, match=r"column id .* in the given schema"):
            pqsift.scan(tmp_path, schema=given).to_table()
        with pytest.raises(Exception, match=r"column id .* in the given schema"):
            spark.read.format("pqsift").schema(ddl).load(str(tmp_path)).collect()
        return
    table = pqsift.scan(tmp_path, schema=given, spark_output=True).to_table()
    assert (table.column_names, sorted((tuple(r.values()) for r in table.to_pylist()), key=repr)) == expected
    from pqsift import spark as pqsift_spark

    df = pqsift_spark.read(spark, tmp_path, schema=given, driver_read_bytes=0)
    assert (df.columns, _sorted_rows(df)) == expected
    # A Python data source's DataFrame has the given schema exactly (Spark appends no
    # partition column to it): the same rows, projected to the given columns.
    source = spark.read.format("pqsift").schema(ddl).load(str(tmp_path))
    projected = native.select(*given.names)
    assert (source.columns, _sorted_rows(source)) == (projected.columns, _sorted_rows(projected)), "data source"


def test_spark_written_files_that_grew_a_column(spark: Any, tmp_path: Path) -> None:
    """Files Spark wrote (parquet-mr, its own metadata and encodings): an older write of
    (id, amount INT) and a newer one of (id, amount BIGINT, note), in one directory, the
    older file first in path order and then the newer one."""
    import shutil

    from pyspark.sql import functions as F  # noqa: N812 - Spark's usual name

    older, newer = tmp_path / "older", tmp_path / "newer"
    spark.range(0, 50, numPartitions=1).select("id", F.col("id").cast("int").alias("amount")).write.parquet(str(older))
    spark.range(50, 100, numPartitions=1).select("id", F.col("id").alias("amount"), F.concat(F.lit("n"), F.col("id")).alias("note")).write.parquet(
        str(newer)
    )
    for order in ((older, newer), (newer, older)):
        table = tmp_path / f"table-{order[0].name}-first"
        table.mkdir()
        for rank, source in enumerate(order):
            (part,) = source.glob("part-*.parquet")
            shutil.copy(part, table / f"part-{rank}.parquet")
        for merge in (False, True):
            expected = _spark_rows(spark, table, merge)
            if expected is None:  # an INT first, or INT and BIGINT merged: Spark fails
                with pytest.raises(pqsift.SchemaMismatchError, match=r"column amount is (INT|BIGINT) in .*part-\d.parquet but (INT|BIGINT) in .*part-\d.parquet"):
                    _pqsift_rows(table, merge)
                continue
            assert _pqsift_rows(table, merge) == expected, (order[0].name, merge)
            assert pqsift.scan(table, filter="amount >= 98", merge_schema=merge).to_table().num_rows == 2
