"""benches/spark_ceiling.py's readers that read nothing: each hands Spark exactly the rows
it was given, so that their times are the cost of the hand-over alone."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import Any

import pyarrow as pa
import pytest

from bench_modules import load_bench


@pytest.fixture(scope="module")
def ceiling() -> ModuleType:
    return load_bench("spark_ceiling")


ROWS = pa.table({"id": pa.array(range(10), pa.int64()), "text": [f"row {i}" for i in range(10)]})


@pytest.mark.parametrize("shares", [1, 3, 4, 12])
def test_shares_hold_every_row_once_in_order(ceiling: ModuleType, tmp_path: Path, shares: int) -> None:
    files = ceiling.write_shares(ROWS, shares, tmp_path, "rows")
    assert len(files) == shares
    parts = [pa.ipc.open_file(pa.memory_map(path)).read_all() for path in files]
    assert pa.concat_tables(parts).equals(ROWS)


def test_no_rows_make_one_empty_share_each(ceiling: ModuleType, tmp_path: Path) -> None:
    files = ceiling.write_shares(ROWS.slice(0, 0), 2, tmp_path, "empty")
    assert [pa.ipc.open_file(pa.memory_map(path)).read_all().num_rows for path in files] == [0, 0]


def test_a_task_yields_the_share_of_its_id(ceiling: ModuleType, tmp_path: Path) -> None:
    files = ceiling.write_shares(ROWS, 3, tmp_path, "rows")
    read = ceiling.task_reader(files)
    ids = pa.record_batch({"id": pa.array([2], pa.int64())})
    assert pa.Table.from_batches(list(read(iter([ids])))).equals(ROWS.slice(8))


def test_spark_gets_the_rows_from_tasks_and_from_the_data_source(
    ceiling: ModuleType, tmp_path: Path, spark: Any
) -> None:
    from pyspark.sql.types import LongType, StringType, StructField, StructType

    struct = StructType([StructField("id", LongType()), StructField("text", StringType())])
    files = ceiling.write_shares(ROWS, 2, tmp_path, "rows")
    spark.dataSource.register(ceiling.NoReadSource)
    expected = sorted((row["id"], row["text"]) for row in ROWS.to_pylist())
    by_tasks = spark.range(0, 2, 1, numPartitions=2).mapInArrow(ceiling.task_reader(files), struct)
    by_source = spark.read.format(ceiling.NO_READ_SOURCE).schema(struct).option("files", "\n".join(files)).load()
    assert by_source.rdd.getNumPartitions() == 2
    for frame in (by_tasks, by_source):
        assert sorted((row.id, row.text) for row in frame.collect()) == expected
