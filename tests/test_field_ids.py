"""Columns matched by Parquet field id (issue 16): a caller's schema whose fields carry
``PARQUET:field_id`` (Spark: ``parquet.field.id`` metadata) finds each file's column by
that id when ``match_field_ids`` (Spark's ``spark.sql.parquet.fieldId.read.enabled``) is
on — a renamed column is found, a dropped column whose name was reused is not. The oracle
is Spark 4.3 itself, on files pyarrow and Spark wrote with ids."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import pqsift


def field(name: str, data_type: pa.DataType, field_id: int | None = None) -> pa.Field:
    metadata = None if field_id is None else {b"PARQUET:field_id": str(field_id).encode()}
    return pa.field(name, data_type, metadata=metadata)


def table(columns: dict[str, list[Any]], *fields: pa.Field) -> pa.Table:
    return pa.table(columns, schema=pa.schema(list(fields)))


_XY = pa.struct([field("x", pa.int64(), 11), field("y", pa.string(), 12)])
_X_YY = pa.struct([field("x", pa.int64(), 11), field("yy", pa.string(), 12)])

#: Directories of files (p1, p2, ... in path order), as pyarrow writes them.
DIRECTORIES: dict[str, list[pa.Table]] = {
    # p2 renamed `a` (id 1) to `alpha` and added `c`.
    "renamed": [
        table({"a": [1, 2], "b": ["x", "y"]}, field("a", pa.int64(), 1), field("b", pa.string(), 2)),
        table({"alpha": [3, 4], "b": ["z", "w"], "c": [5, 6]}, field("alpha", pa.int64(), 1), field("b", pa.string(), 2), field("c", pa.int64(), 3)),
    ],
    # p2 dropped `a` (id 1) and added another column named `a` (id 5).
    "reused": [
        table({"a": [1, 2], "b": ["x", "y"]}, field("a", pa.int64(), 1), field("b", pa.string(), 2)),
        table({"a": [30, 40], "b": ["z", "w"]}, field("a", pa.int64(), 5), field("b", pa.string(), 2)),
    ],
    "no_ids": [table({"a": [1, 2], "b": ["x", "y"]}, field("a", pa.int64()), field("b", pa.string()))],
    "duplicate_ids": [table({"a": [1, 2], "b": [3, 4]}, field("a", pa.int64(), 1), field("b", pa.int64(), 1))],
    # A field without an id, matched by name (case-insensitively).
    "mixed": [table({"a": [1, 2], "B": ["x", "y"]}, field("a", pa.int64(), 1), field("B", pa.string()))],
    # A struct renamed, and a field inside it renamed.
    "nested": [
        table({"s": [{"x": 1, "y": "a"}]}, field("s", _XY, 10)),
        table({"t": [{"x": 2, "yy": "b"}]}, field("t", _X_YY, 10)),
    ],
}


def _spark_schema(schema: pa.Schema) -> Any:
    """``schema`` as a Spark StructType, each ``PARQUET:field_id`` as ``parquet.field.id``."""
    from pyspark.sql.types import LongType, StringType, StructField, StructType

    def convert(data_type: pa.DataType) -> Any:
        if pa.types.is_struct(data_type):
            return StructType([to_field(data_type.field(i)) for i in range(data_type.num_fields)])
        return {pa.int64(): LongType(), pa.string(): StringType()}[data_type]

    def to_field(f: pa.Field) -> Any:
        field_id = (f.metadata or {}).get(b"PARQUET:field_id")
        return StructField(f.name, convert(f.type), True, {} if field_id is None else {"parquet.field.id": int(field_id)})

    return StructType([to_field(f) for f in schema])


_AB = pa.schema([field("a", pa.int64(), 1), field("b", pa.string(), 2)])
_A_NAMED_B = pa.schema([field("a", pa.int64(), 1), field("b", pa.string())])
_NESTED = pa.schema([field("s", _XY, 10)])

#: (directory, given schema, columns read or None).
CASES = [
    ("renamed", _AB, None),
    ("renamed", _AB, ["b"]),
    ("reused", _AB, None),
    ("no_ids", _AB, None),
    ("no_ids", _AB, ["b"]),  # Spark checks only the columns it reads
    ("no_ids", _A_NAMED_B, ["b"]),
    ("duplicate_ids", _AB, None),
    ("duplicate_ids", pa.schema([field("a", pa.int64(), 1)]), None),
    ("mixed", _A_NAMED_B, None),
    ("nested", _NESTED, None),
]

#: Spark's two settings: (fieldId.read.enabled, fieldId.read.ignoreMissing).
SETTINGS = [(True, False), (True, True), (False, False)]


@pytest.fixture(scope="module")
def directories(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("field_ids")
    for name, files in DIRECTORIES.items():
        (root / name).mkdir()
        for i, written in enumerate(files, 1):
            pq.write_table(written, root / name / f"p{i}.parquet")
    return {name: root / name for name in DIRECTORIES}


def _rows(rows: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return sorted((tuple(row.values()) for row in rows), key=repr)


def _spark_rows(spark: Any, path: Path, given: pa.Schema, columns: list[str] | None, settings: tuple[bool, bool]) -> list[tuple[Any, ...]] | None:
    """Spark's rows, or None where Spark fails."""
    spark.conf.set("spark.sql.parquet.fieldId.read.enabled", str(settings[0]).lower())
    spark.conf.set("spark.sql.parquet.fieldId.read.ignoreMissing", str(settings[1]).lower())
    try:
        df = spark.read.schema(_spark_schema(given)).parquet(str(path))
        if columns is not None:
            df = df.select(*columns)
        return _rows([row.asDict(recursive=True) for row in df.collect()])
    except Exception:  # noqa: BLE001 - Spark's failure is the expectation
        return None
    finally:
        spark.conf.unset("spark.sql.parquet.fieldId.read.enabled")
        spark.conf.unset("spark.sql.parquet.fieldId.read.ignoreMissing")


@pytest.mark.parametrize("settings", SETTINGS, ids=lambda s: f"enabled={s[0]},ignore_missing={s[1]}")
@pytest.mark.parametrize(("name", "given", "columns"), CASES, ids=[f"{n}-{'+'.join(c or ['all'])}-{i}" for i, (n, _, c) in enumerate(CASES)])
def test_rows_and_failures_are_sparks(
    spark: Any, directories: dict[str, Path], name: str, given: pa.Schema, columns: list[str] | None, settings: tuple[bool, bool]
) -> None:
    expected = _spark_rows(spark, directories[name], given, columns, settings)
    options = {"schema": given, "columns": columns, "match_field_ids": settings[0], "ignore_missing_field_ids": settings[1]}
    if expected is None and not settings[0] and name == "no_ids":
        # Spark fails whenever the schema read has ids and the file none unless missing
        # ids are ignored, even with id matching off; pqsift matches by name, as the
        # setting says.
        by_name = pq.read_table(directories[name], columns=columns or given.names)
        assert _rows(pqsift.scan(directories[name], **options).to_table().to_pylist()) == _rows(by_name.to_pylist())
        return
    if expected is None:
        with pytest.raises(pqsift.SchemaMismatchError) as raised:
            pqsift.scan(directories[name], **options).to_table()
        message = str(raised.value)
        assert "p1.parquet" in message and ("field id" in message or not settings[0]), message
        return
    assert _rows(pqsift.scan(directories[name], **options).to_table().to_pylist()) == expected


def test_a_filter_on_a_renamed_column_prunes_by_its_statistics(directories: dict[str, Path]) -> None:
    scan = pqsift.scan(directories["renamed"], filter="a >= 3", schema=_AB, match_field_ids=True)
    assert scan.to_table().to_pylist() == [{"a": 3, "b": "z"}, {"a": 4, "b": "w"}]
    plan = scan.plan()
    # p1's a (1..2) cannot match; p2's alpha (3..4), found by id, can.
    assert [rg.decision for file in plan.files for rg in file.row_groups] == ["skip", "scan"]
    by_name = pqsift.scan(directories["renamed"], filter="a >= 3", schema=_AB)
    assert by_name.to_table().num_rows == 0  # p2 has no column named a: null there
    nested = pqsift.scan(directories["nested"], columns=["s.y"], filter="s.y = 'b'", schema=_NESTED, match_field_ids=True)
    assert nested.to_table().to_pylist() == [{"y": "b"}]


def test_spark_written_ids_through_every_spark_path(spark: Any, tmp_path: Path) -> None:
    """Files Spark wrote with field ids (its schema's ``parquet.field.id``): one before
    and one after a rename, read through ``pqsift.scan``, ``pqsift.spark.read`` (the
    session's settings, a StructType schema) and the data source (``.schema(...)``)."""
    from pyspark.sql.types import LongType, StringType, StructField, StructType

    import pqsift.spark

    def ids(*fields: tuple[str, Any, int]) -> Any:
        return StructType([StructField(name, data_type, True, {"parquet.field.id": field_id}) for name, data_type, field_id in fields])

    before = ids(("id", LongType(), 1), ("name", StringType(), 2))
    after = ids(("id", LongType(), 1), ("full_name", StringType(), 2))
    table = tmp_path / "people"
    spark.createDataFrame([(1, "ann"), (2, "bob")], before).coalesce(1).write.parquet(str(table / "part=1"))
    spark.createDataFrame([(3, "cy"), (4, "di")], after).coalesce(1).write.parquet(str(table / "part=2"))
    ((table / "part=1" / "_SUCCESS").unlink(), (table / "part=2" / "_SUCCESS").unlink())
    for written in table.glob("part=*/*.parquet"):
        assert pq.read_schema(written).field(1).metadata == {b"PARQUET:field_id": b"2"}
    spark.conf.set("spark.sql.parquet.fieldId.read.enabled", "true")
    try:
        native = spark.read.schema(before).parquet(str(table)).filter("id > 1")
        expected = sorted(tuple(row) for row in native.collect())
        assert expected == [(2, "bob", 1), (3, "cy", 2), (4, "di", 2)]
        by_pqsift = pqsift.scan(table, filter="id > 1", schema=scan_schema(before), match_field_ids=True, spark_output=True)
        assert sorted(tuple(row.values()) for row in by_pqsift.to_table().to_pylist()) == expected
        for lazy in (False, True):
            df = pqsift.spark.read(spark, table, filter="id > 1", schema=before, lazy=lazy, driver_read_bytes=0)
            assert sorted(tuple(row) for row in df.collect()) == expected, lazy
        pqsift.spark.register(spark)
        source = spark.read.format("pqsift").schema(before).load(str(table)).filter("id > 1")
        assert sorted(tuple(row) for row in source.collect()) == [row[:2] for row in expected]
    finally:
        spark.conf.unset("spark.sql.parquet.fieldId.read.enabled")
        pqsift.spark.register(spark)
    # Without the setting the renamed column is null, in Spark and in pqsift alike.
    native = sorted(tuple(row) for row in spark.read.schema(before).parquet(str(table)).collect())
    assert (3, None, 2) in native
    df = pqsift.spark.read(spark, table, schema=before, driver_read_bytes=0)
    assert sorted(tuple(row) for row in df.collect()) == native


def scan_schema(struct: Any) -> pa.Schema:
    from pqsift.spark.datasource import scan_schema_of

    return scan_schema_of(struct)
