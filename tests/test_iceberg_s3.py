"""Iceberg tables on object stores (moto's S3 behind the counting proxy of
tests/s3_harness.py): a table copied into a bucket reads there as it does locally, its
recorded locations resolved below the URL given; and metadata naming thousands of objects
is planned from its manifests alone — the files a filter rules out are never requested.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.transforms import IdentityTransform
from pyiceberg.types import LongType, NestedField, StringType

import pqsift

SHARED = Path(__file__).resolve().parents[2] / "shared" / "iceberg-testing" / "data" / "persistent"


def sorted_rows(table: pa.Table) -> list[tuple[Any, ...]]:
    return sorted((tuple(r.values()) for r in table.to_pylist()), key=repr)


def test_a_table_copied_into_a_bucket_reads_as_locally(s3_emulator: Any, s3: Any, tmp_path: Path) -> None:
    catalog = SqlCatalog("t", uri=f"sqlite:///{tmp_path}/catalog.db", warehouse=f"file://{tmp_path}/warehouse")
    catalog.create_namespace("db")
    schema = Schema(NestedField(1, "id", LongType()), NestedField(2, "kind", StringType()))
    spec = PartitionSpec(PartitionField(2, 1000, IdentityTransform(), "kind"))
    table = catalog.create_table("db.events", schema=schema, partition_spec=spec)
    for start in (0, 100, 200):
        ids = range(start, start + 100)
        table.append(pa.table({"id": pa.array(ids, pa.int64()), "kind": [("a", "b", "c")[i % 3] for i in ids]}))
    table.delete("kind == 'c'")
    local = str(table.location()).removeprefix("file://")
    bucket = s3_emulator.new_bucket("iceberg")
    s3_emulator.upload_dir(local, bucket, "warehouse/events")
    url = f"s3://{bucket}/warehouse/events"
    options = {"storage_options": s3.storage_options}
    assert sorted_rows(pqsift.scan(url, **options).to_table()) == sorted_rows(pqsift.scan(local).to_table())
    s3.reset()
    scan = pqsift.scan(url, filter="kind = 'b' AND id >= 150", **options)
    got = scan.to_table()
    assert sorted_rows(got) == sorted_rows(pqsift.scan(local, filter="kind = 'b' AND id >= 150").to_table())
    assert scan.table_format == "iceberg" and scan.metrics["files_pruned_manifest"] >= 3
    # Only the files the manifests keep are read: no request names a pruned file.
    pruned = [f for f, plan in zip(scan.files, scan.plan().files, strict=True) if plan.skipped]
    requested = " ".join(record.target for record in s3.log())
    assert pruned and not any(Path(f).name in requested for f in pruned)


@pytest.mark.skipif(not (SHARED / "generated_bounds").exists(), reason="../shared/iceberg-testing is not there")
def test_metadata_naming_thousands_of_objects_plans_without_a_request(s3_emulator: Any, s3: Any) -> None:
    # The table's metadata is local; its data files are s3://fake-bucket/... (not there):
    # a filter the manifests rule out for every file reads none of them.
    s3_emulator.create_bucket("fake-bucket")
    s3.reset()
    options = {"storage_options": s3.storage_options, "allowed_locations": ["s3://fake-bucket/"]}
    scan = pqsift.scan(
        str(SHARED / "generated_bounds"), filter="block_number BETWEEN 5000000 AND 5000100", **options
    )
    assert scan.to_table().num_rows == 0
    assert scan.metrics["files_pruned_manifest"] == scan.metrics["files_total"] > 1000
    assert s3.snapshot()["requests"] == 0
    with pytest.raises(pqsift.TableError, match="allowed_locations"):
        pqsift.scan(str(SHARED / "generated_bounds"), storage_options=s3.storage_options)
