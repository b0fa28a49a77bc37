"""Iceberg tables written by pyiceberg (a SQLite catalog in a temporary warehouse), read
with pqsift and compared with pyiceberg's own reads and with DuckDB over all the rows:
every partition transform, appends, copy-on-write deletes, schema evolution, time travel,
and a property test that pruning on and off give the same rows.
"""

from __future__ import annotations

import datetime
import json
import math
import struct
import uuid
import zlib
from pathlib import Path
from typing import Any

import duckdb
import fastavro
import pyarrow as pa
import pyarrow.parquet as pq
import pyroaring
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
    StructType,
    TimestampType,
    UUIDType,
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


# Per transform, a query its partition values alone rule files out for.
PINNED = {
    "kind identity": "kind = 'sale'",
    "qty identity": "qty = -3",
    "ts day": "ts >= TIMESTAMP '2026-01-03 00:00:00' AND ts < TIMESTAMP '2026-01-04 06:00:00'",
    "ts hour": "ts >= TIMESTAMP '2026-01-03 00:00:00' AND ts < TIMESTAMP '2026-01-04 06:00:00'",
    "day month": "day BETWEEN DATE '2024-03-01' AND DATE '2024-04-15'",
    "day year": "day BETWEEN DATE '2024-03-01' AND DATE '2024-04-15'",
    "id bucket[4]": "id IN (7, 130)",
    "kind bucket[3]": "kind = 'sale'",
    "kind truncate[2]": "kind LIKE 're%' AND qty > 0",
    "qty truncate[10]": "qty = -3",
}


@pytest.mark.parametrize(("column", "source_id", "transform"), TRANSFORMS, ids=lambda v: str(v))
def test_partition_values_prune_through_their_transforms(tmp_path: Path, column: str, source_id: int, transform: Any) -> None:
    """Without column statistics in the manifests (metrics mode none), only the partition
    values, read back through the transform, can rule a file (or a manifest) out."""
    spec = PartitionSpec(PartitionField(source_id, 1000, transform, f"{column}_part"))
    table = catalog(tmp_path).create_table(
        "db.events", schema=SCHEMA, partition_spec=spec, properties={"write.metadata.metrics.default": "none"}
    )
    for start in (0, 60, 120):
        table.append(batch(start, 60))
    root = root_of(table)
    assert not pqsift.scan(root).metrics.get("files_pruned_manifest"), "no file is pruned without a filter"
    everything = table.scan().to_arrow()
    for condition in [*QUERIES, "id = 7", "id IN (7, 130)"]:
        scan = pqsift.scan(root, filter=condition)
        got = scan.to_table()
        assert same(got, oracle(everything, condition.replace("'NaN'", "'NaN'::DOUBLE"))), condition
        if condition == PINNED[f"{column} {transform}"]:
            assert scan.metrics["files_pruned_manifest"] > 0, (condition, scan.metrics)
    # Each append wrote one manifest; the time range falls in the first append's rows.
    if isinstance(transform, (DayTransform, HourTransform)):
        scan = pqsift.scan(root, filter=PINNED[f"{column} {transform}"])
        assert scan.metrics["iceberg_manifests_pruned"] == 2, scan.metrics


@pytest.mark.parametrize("transform", [IdentityTransform(), BucketTransform(4)], ids=str)
def test_uuid_partitions_prune_on_the_text_spark_reads(tmp_path: Path, transform: Any) -> None:
    """A uuid column reads as its text (as Spark reads it); its partition values and the
    filter's text meet through the 16 bytes Iceberg stores and buckets."""
    schema = Schema(NestedField(1, "id", LongType()), NestedField(2, "u", UUIDType()))
    spec = PartitionSpec(PartitionField(2, 1000, transform, "u_part"))
    table = catalog(tmp_path).create_table(
        "db.t", schema=schema, partition_spec=spec, properties={"write.metadata.metrics.default": "none"}
    )
    values = [uuid.UUID(int=(i * 0x9E3779B97F4A7C15 << 64 | i) % 2**128) for i in range(24)]
    # pyiceberg groups identity partitions by the column, which it cannot do for arrow.uuid.
    arrow_type = pa.binary(16) if isinstance(transform, IdentityTransform) else pa.uuid()
    table.append(pa.table({"id": pa.array(range(24), pa.int64()), "u": pa.array([u.bytes for u in values], arrow_type)}))
    root = root_of(table)
    everything = pqsift.scan(root).to_table()
    assert everything.schema.field("u").type == pa.string()
    assert sorted(everything.column("u").to_pylist()) == sorted(map(str, values))
    files = len(list(table.scan().plan_files()))
    pinned = [str(values[3]), str(values[17])]
    buckets = {uuid_bucket(values[3], 4), uuid_bucket(values[17], 4)}
    for condition, kept_files in [
        (f"u = '{pinned[0]}'", 1),
        (f"u IN ('{pinned[0]}', '{pinned[1]}')", 2 if isinstance(transform, IdentityTransform) else len(buckets)),
        (f"u = '{pinned[0].upper()}'", None),  # no row: not the text Spark reads
        (f"u >= '{pinned[0]}'", None),
        ("u LIKE '9%'", None),
    ]:
        scan = pqsift.scan(root, filter=condition)
        assert same(scan.to_table(), oracle(everything, condition)), condition
        if kept_files is not None:
            assert files - scan.metrics["files_pruned_manifest"] == kept_files, (condition, scan.metrics)


def uuid_bucket(value: uuid.UUID, count: int) -> int:
    """Iceberg's bucket of a uuid: Murmur3 (32-bit, seed 0) of its 16 bytes, as pyiceberg
    computes it."""
    return BucketTransform(count).transform(UUIDType())(value)  # type: ignore[no-any-return]


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


# ----- position deletes and deletion vectors, added to a pyiceberg table by hand -----------
# pyiceberg writes neither (its deletes are copy-on-write): these helpers add a snapshot whose
# delete manifest names a position delete file (format 2) or a deletion vector blob in a
# Puffin file (format 3), written as the Iceberg spec lays them out.


def _avro(path: Path) -> tuple[dict[str, Any], dict[str, bytes], list[dict[str, Any]]]:
    with path.open("rb") as f:
        reader = fastavro.reader(f)
        return reader.writer_schema, dict(reader.metadata), list(reader)  # type: ignore[arg-type]


def _write_avro(path: Path, schema: dict[str, Any], metadata: dict[str, Any], records: list[dict[str, Any]]) -> None:
    user = {k: v.decode() if isinstance(v, bytes) else v for k, v in metadata.items() if not k.startswith("avro.")}
    with path.open("wb") as f:
        fastavro.writer(f, fastavro.parse_schema(schema), records, metadata=user, codec="deflate")


def _deletion_vector_blob(positions: list[int]) -> bytes:
    """A `deletion-vector-v1` blob: length, magic, the portable 64-bit Roaring bitmap (one
    32-bit bitmap, key 0), CRC-32 — big-endian length and CRC."""
    bitmap = struct.pack("<I", 1681511377) + struct.pack("<Q", 1) + struct.pack("<I", 0)
    bitmap += pyroaring.BitMap(positions).serialize()
    return struct.pack(">I", len(bitmap)) + bitmap + struct.pack(">I", zlib.crc32(bitmap))


def add_delete_snapshot(table: Any, deletes: dict[str, list[int]], *, vectors: bool) -> None:
    """A new snapshot of `table` adding a delete manifest: `deletes` maps a data file's
    recorded path to the positions deleted in it."""
    metadata_path = Path(str(table.metadata_location).removeprefix("file://"))
    snapshot_id = json.loads(metadata_path.read_text())["current-snapshot-id"] + 1
    data_dir = metadata_path.parent.parent / "data"
    entries = []
    if vectors:
        puffin = data_dir / f"deletes-{snapshot_id}.puffin"
        content, blobs = b"PFA1", []
        for path, positions in deletes.items():
            blob = _deletion_vector_blob(positions)
            blobs.append({"referenced_data_file": path, "content_offset": len(content), "content_size_in_bytes": len(blob)})
            content += blob
        puffin.write_bytes(content + b"PFA1")
        entries = [_delete_entry(puffin, len(positions), file_format="PUFFIN", **blob) for positions, blob in zip(deletes.values(), blobs, strict=True)]
    else:
        for k, (path, positions) in enumerate(deletes.items()):
            delete_file = data_dir / f"pos-deletes-{snapshot_id}-{k}.parquet"
            schema = pa.schema(
                [
                    pa.field("file_path", pa.string(), False, {"PARQUET:field_id": "2147483546"}),
                    pa.field("pos", pa.int64(), False, {"PARQUET:field_id": "2147483545"}),
                ]
            )
            pq.write_table(pa.table({"file_path": [path] * len(positions), "pos": positions}, schema=schema), delete_file)
            entries.append(_delete_entry(delete_file, len(positions)))
    commit_delete_manifest(table, entries, format_version=3 if vectors else 2)


def _delete_entry(path: Path, records: int, *, content: int = 1, file_format: str = "PARQUET", **fields: Any) -> dict[str, Any]:
    """A delete file's `data_file` record: `content` 1 for positions, 2 for equality."""
    return {
        "content": content,
        "file_path": str(path),
        "file_format": file_format,
        "partition": {},
        "record_count": records,
        "file_size_in_bytes": path.stat().st_size,
        **fields,
    }


def commit_delete_manifest(table: Any, data_files: list[dict[str, Any]], *, format_version: int) -> None:
    """A new snapshot of `table` (its current metadata rewritten by hand) whose manifest
    list adds a delete manifest of `data_files`."""
    metadata_path = Path(str(table.metadata_location).removeprefix("file://"))
    metadata = json.loads(metadata_path.read_text())
    parent = next(s for s in metadata["snapshots"] if s["snapshot-id"] == metadata["current-snapshot-id"])
    sequence = metadata["last-sequence-number"] + 1
    snapshot_id = parent["snapshot-id"] + 1
    meta_dir = metadata_path.parent
    list_schema, list_meta, manifests = _avro(Path(parent["manifest-list"].removeprefix("file://")))
    data_manifest = Path(manifests[0]["manifest_path"].removeprefix("file://"))
    entry_schema, entry_meta, _ = _avro(data_manifest)
    data_file = next(f for f in entry_schema["fields"] if f["name"] == "data_file")["type"]
    names = {f["name"] for f in data_file["fields"]}
    for field_id, name, kind in [
        (135, "equality_ids", {"type": "array", "items": "int", "element-id": 136}),
        (143, "referenced_data_file", "string"),
        (144, "content_offset", "long"),
        (145, "content_size_in_bytes", "long"),
    ]:
        if name not in names:
            data_file["fields"].append({"field-id": field_id, "name": name, "type": ["null", kind], "default": None})
    records = [
        {"status": 1, "snapshot_id": snapshot_id, "sequence_number": None, "file_sequence_number": None, "data_file": f}
        for f in data_files
    ]
    delete_manifest = meta_dir / f"deletes-{snapshot_id}-m0.avro"
    _write_avro(delete_manifest, entry_schema, {**entry_meta, "content": "deletes"}, records)
    new_list = meta_dir / f"snap-{snapshot_id}.avro"
    listed = {
        **manifests[0],
        "manifest_path": str(delete_manifest),
        "manifest_length": delete_manifest.stat().st_size,
        "content": 1,
        "sequence_number": sequence,
        "min_sequence_number": sequence,
        "added_snapshot_id": snapshot_id,
        "added_files_count": len(records),
        "existing_files_count": 0,
        "deleted_files_count": 0,
        "added_rows_count": sum(f["record_count"] for f in data_files),
        "existing_rows_count": 0,
        "deleted_rows_count": 0,
        "partitions": [],
    }
    _write_avro(new_list, list_schema, list_meta, [*manifests, listed])
    metadata["snapshots"].append(
        {**parent, "snapshot-id": snapshot_id, "parent-snapshot-id": parent["snapshot-id"], "sequence-number": sequence,
         "timestamp-ms": parent["timestamp-ms"] + 1, "manifest-list": str(new_list), "summary": {"operation": "delete"}}
    )
    metadata["current-snapshot-id"] = snapshot_id
    metadata["last-sequence-number"] = sequence
    metadata["snapshot-log"].append({"snapshot-id": snapshot_id, "timestamp-ms": parent["timestamp-ms"] + 1})
    if format_version == 3:
        metadata["format-version"] = 3
        metadata.setdefault("next-row-id", 0)
    next_version = meta_dir / f"{int(metadata_path.name.split('-')[0]) + 1:05d}-deletes.metadata.json"
    next_version.write_text(json.dumps(metadata))


@pytest.mark.parametrize("vectors", [False, True], ids=["position-delete-files", "deletion-vectors"])
def test_position_deletes_and_deletion_vectors_leave_their_rows_out(tmp_path: Path, vectors: bool) -> None:
    schema = Schema(NestedField(1, "id", LongType()), NestedField(2, "kind", StringType()))
    table = catalog(tmp_path).create_table("db.t", schema=schema)
    arrow_schema = pa.schema([("id", pa.int64()), ("kind", pa.string())])
    for start in (0, 1000):
        table.append(pa.table({"id": range(start, start + 1000), "kind": ["a", "b"] * 500}, schema=arrow_schema))
    files = sorted(task.file.file_path for task in table.scan().plan_files())
    deleted = {files[0]: [1, 3, 999], files[1]: list(range(0, 1000, 2))}
    add_delete_snapshot(table, deleted, vectors=vectors)
    root = root_of(table)
    scan = pqsift.scan(root)
    got = sorted(scan.to_table().column("id").to_pylist())
    first, second = (pq.read_table(f.removeprefix("file://")).column("id").to_pylist() for f in files)
    expected = sorted(
        [v for i, v in enumerate(first) if i not in deleted[files[0]]]
        + [v for i, v in enumerate(second) if i not in deleted[files[1]]]
    )
    assert got == expected and len(got) == 2000 - 503
    assert scan.metrics["rows_deleted"] == 503
    assert "position deletes delete 503 row(s)" in scan.explain()
    # With a filter, and the earlier snapshot without the deletes.
    filtered = pqsift.scan(root, filter="kind = 'b' AND id < 1010", columns=["id"]).to_table().column("id").to_pylist()
    assert sorted(filtered) == [v for v in expected if v % 2 == 1 and v < 1010]
    earlier = pqsift.scan(root, snapshot_id=table.current_snapshot().snapshot_id)  # type: ignore[union-attr]
    assert earlier.to_table().num_rows == 2000


def test_manifests_are_skipped_on_their_partition_summaries(tmp_path: Path) -> None:
    table = catalog(tmp_path).create_table(
        "db.t", schema=SCHEMA, partition_spec=PartitionSpec(PartitionField(6, 1000, IdentityTransform(), "qty"))
    )
    for start in range(0, 400, 50):  # one manifest per append, each of its own qty values
        rows = batch(start, 50).set_column(5, "qty", pa.array([start // 50] * 50, pa.int32()))
        table.append(rows)
    root = root_of(table)
    scan = pqsift.scan(root, filter="qty = 3 AND id >= 160")
    got = scan.to_table()
    assert sorted(got.column("id").to_pylist()) == list(range(160, 200))
    assert scan.metrics["iceberg_manifests_total"] == 8
    assert scan.metrics["iceberg_manifests_pruned"] == 7, scan.metrics
    assert "(7 skipped on their partition summaries, " in scan.explain()
    unpruned = pqsift.scan(root, filter="qty = 3 AND id >= 160", **NO_PRUNING)
    assert same(unpruned.to_table(), got) and unpruned.metrics["iceberg_manifests_pruned"] == 0
    assert pqsift.scan(root, filter="qty IS NULL").metrics["iceberg_manifests_pruned"] == 8


def test_manifests_decoded_once_serve_later_scans(tmp_path: Path) -> None:
    """A table scanned again reads its metadata file and manifest list again, but takes the
    manifests an earlier scan decoded from the process's cache; a commit's new manifests
    are read, and the cache emptied reads all again."""
    table = catalog(tmp_path).create_table("db.t", schema=SCHEMA)
    for start in (0, 50, 100):
        table.append(batch(start, 50))
    root = root_of(table)
    pqsift._core.clear_metadata_cache()
    first = pqsift.scan(root, filter="qty > 20")
    expected = first.to_table()
    assert first.metrics["iceberg_manifests_read"] == 3 and first.metrics["iceberg_manifests_cached"] == 0
    again = pqsift.scan(root, filter="qty > 20")
    assert same(again.to_table(), expected)
    assert again.metrics["iceberg_manifests_cached"] == 3 and "3 cached" in again.explain()
    table.append(batch(150, 50))
    after = pqsift.scan(root, filter="qty > 20")
    assert after.metrics["iceberg_manifests_read"] == 4 and after.metrics["iceberg_manifests_cached"] == 3
    assert same(after.to_table(), oracle(pqsift.scan(root).to_table(), "qty > 20"))
    pqsift._core.clear_metadata_cache()
    assert pqsift.scan(root, filter="qty > 20").metrics["iceberg_manifests_cached"] == 0
    # The manifest the driver samples for distributed planning (the data files' mean size)
    # is cached as any other: the tasks' scan of it does not read it again.
    pqsift._core.clear_metadata_cache()
    deferred = pqsift._core.Scan([root], defer_manifests_above=0)
    manifests, mean_bytes = deferred.deferred_manifests
    assert len(manifests) == 4 and mean_bytes is not None and mean_bytes > 0
    first_only = deferred.manifest_pieces([([0], 0, 1)])
    task = pqsift._core.Scan([deferred.manifest_piece_source], table_pieces=first_only)
    assert task.metrics()["iceberg_manifests_cached"] == 1


def test_manifests_are_skipped_on_their_bucket_summaries(tmp_path: Path) -> None:
    table = catalog(tmp_path).create_table(
        "db.t", schema=SCHEMA, partition_spec=PartitionSpec(PartitionField(1, 1000, BucketTransform(4), "id_bucket"))
    )
    bucket = BucketTransform(4).transform(LongType())
    everything = batch(0, 400)
    for b in range(4):  # one manifest per append, each of one bucket
        table.append(everything.filter(pa.array([bucket(i) == b for i in range(400)])))
    scan = pqsift.scan(root_of(table), filter="id = 123")
    assert scan.to_table().column("id").to_pylist() == [123]
    assert scan.metrics["iceberg_manifests_pruned"] == 3, scan.metrics
    scan = pqsift.scan(root_of(table), filter="id IN (1, 2, 3, 4, 5, 6, 7, 8)")
    assert sorted(scan.to_table().column("id").to_pylist()) == list(range(1, 9))
    assert scan.metrics["iceberg_manifests_pruned"] == sum(b not in {bucket(i) for i in range(1, 9)} for b in range(4))


def test_equality_deletes_on_nested_fields(tmp_path: Path) -> None:
    """An equality delete file on a struct's field (and a top-level column beside it)
    deletes the rows whose values equal a deleted row's, NULL equal to NULL — a row whose
    struct is NULL has a NULL field. The delete file holds the struct with that field alone,
    as Iceberg writers project it."""
    point = StructType(NestedField(4, "x", IntegerType(), required=False), NestedField(5, "label", StringType(), required=False))
    schema = Schema(NestedField(1, "id", LongType()), NestedField(2, "kind", StringType()), NestedField(3, "p", point, required=False))
    table = catalog(tmp_path).create_table("db.t", schema=schema)
    arrow_schema = table.schema().as_arrow()
    points = [None if i % 7 == 0 else {"x": None if i % 5 == 0 else i % 4, "label": f"l{i}"} for i in range(200)]
    rows = pa.table({"id": range(200), "kind": ["a", "b"] * 100, "p": points}, schema=arrow_schema)
    table.append(rows)
    data_dir = Path(root_of(table)) / "data"
    kind_id, p_id, x_id = (table.schema().find_field(name).field_id for name in ("kind", "p", "p.x"))
    with_id = lambda field_id: {"PARQUET:field_id": str(field_id)}  # noqa: E731
    p_x = pa.field("p", pa.struct([pa.field("x", pa.int32(), True, with_id(x_id))]), True, with_id(p_id))
    deleted = {
        "on-x": (pa.table({"p": [{"x": 1}, {"x": None}]}, schema=pa.schema([p_x])), [x_id]),
        "on-kind-and-x": (
            pa.table({"kind": ["a"], "p": [{"x": 2}]}, schema=pa.schema([pa.field("kind", pa.string(), True, with_id(kind_id)), p_x])),
            [kind_id, x_id],
        ),
    }
    entries = []
    for name, (delete_rows, ids) in deleted.items():
        pq.write_table(delete_rows, data_dir / f"{name}.parquet")
        entries.append(_delete_entry(data_dir / f"{name}.parquet", delete_rows.num_rows, content=2, equality_ids=ids))
    commit_delete_manifest(table, entries, format_version=2)

    def kept(row: dict[str, Any]) -> bool:
        x = (row["p"] or {}).get("x")
        return x not in (1, None) and not (row["kind"] == "a" and x == 2)

    expected = [r for r in rows.to_pylist() if kept(r)]
    scan = pqsift.scan(root_of(table))
    got = scan.to_table()
    assert sorted(got.to_pylist(), key=lambda r: r["id"]) == expected
    assert 0 < len(expected) < 200
    # Projected without the struct, and filtered: the deleted rows stay out.
    ids = pqsift.scan(root_of(table), columns=["id"], filter="id < 100").to_table().column("id").to_pylist()
    assert sorted(ids) == [r["id"] for r in expected if r["id"] < 100]
    unpruned = pqsift.scan(root_of(table), columns=["id"], filter="id < 100", **NO_PRUNING).to_table()
    assert sorted(unpruned.column("id").to_pylist()) == sorted(ids)


def test_fields_a_reader_does_not_know_are_skipped_whatever_they_hold(tmp_path: Path) -> None:
    """A manifest whose entries carry fields the spec does not name (a writer's own, or a
    later spec's) — a record, an array of records, an enum — reads as before."""
    table = catalog(tmp_path).create_table("db.t", schema=SCHEMA)
    table.append(batch(0, 100))
    expected = pqsift.scan(root_of(table), filter="qty > 20").to_table()
    list_file = Path(str(table.current_snapshot().manifest_list).removeprefix("file://"))  # type: ignore[union-attr]
    manifest = Path(_avro(list_file)[2][0]["manifest_path"].removeprefix("file://"))
    schema, metadata, records = _avro(manifest)
    stats = {"type": "record", "name": "writer_stats", "fields": [{"name": "n", "type": "long"}, {"name": "note", "type": ["null", "string"]}]}
    kind = {"type": "enum", "name": "writer_kind", "symbols": ["A", "B"]}
    data_file = next(f for f in schema["fields"] if f["name"] == "data_file")["type"]
    data_file["fields"].insert(1, {"name": "writer_stats", "type": ["null", stats], "default": None})
    data_file["fields"].append({"name": "more_stats", "type": {"type": "array", "items": "writer_stats"}, "default": []})
    schema["fields"].insert(0, {"name": "writer_kind", "type": kind, "default": "A"})
    for record in records:
        record["writer_kind"] = "B"
        record["data_file"]["writer_stats"] = {"n": 3, "note": "x"}
        record["data_file"]["more_stats"] = [{"n": 1, "note": None}, {"n": 2, "note": "y"}]
    _write_avro(manifest, schema, metadata, records)
    list_schema, list_metadata, listed = _avro(list_file)
    listed[0]["manifest_length"] = manifest.stat().st_size
    _write_avro(list_file, list_schema, list_metadata, listed)
    pqsift._core.clear_metadata_cache()
    got = pqsift.scan(root_of(table), filter="qty > 20").to_table()
    assert expected.num_rows > 0 and same(got, expected)
