"""Errors carry what they are about as attributes — ``path``, ``url``, ``table``, ``column``,
``reason`` — so that code handles them without parsing messages; a missing file is a
``FileNotFoundError`` whether it is local or in a store."""

from __future__ import annotations

import errno
import pickle
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import pqsift

FIELDS = ("path", "url", "table", "column", "reason")


def fields(error: pqsift.PqsiftError) -> dict[str, object]:
    return {name: getattr(error, name) for name in FIELDS}


@pytest.fixture
def events(tmp_path: Path) -> Path:
    path = tmp_path / "events.parquet"
    table = pa.table(
        {
            "id": pa.array([1, 2, 3], pa.int64()),
            "day": pa.array([19000, 19001, 19002], pa.date32()),
            "s": pa.array([{"x.y": 1, "x": {"y": 2}}] * 3),
        }
    )
    pq.write_table(table, path)
    return path


@pytest.mark.parametrize("call", ["scan", "inspect"])
def test_a_missing_local_file_is_a_file_not_found_error_naming_it(tmp_path: Path, call: str) -> None:
    missing = tmp_path / "nope.parquet"
    with pytest.raises(FileNotFoundError) as info:
        getattr(pqsift, call)(str(missing))
    error = info.value
    assert isinstance(error, pqsift.PathNotFoundError) and isinstance(error, pqsift.PqsiftIOError)
    assert error.errno == errno.ENOENT
    assert error.path == error.filename == str(missing)
    assert error.url is None and error.table is None and error.column is None
    assert error.reason and error.reason in str(error) and str(missing) in str(error)


def test_an_unknown_column_in_a_filter_is_named(events: Path) -> None:
    with pytest.raises(pqsift.FilterError) as info:
        pqsift.scan(events, filter="idd = 1")
    error = info.value
    assert error.column == "idd", fields(error)
    assert "unknown column" in error.reason and "did you mean" in error.reason
    assert error.path is None and error.table is None and error.url is None


def test_a_struct_field_with_a_dot_is_named_as_spark_selects_it(events: Path) -> None:
    with pytest.raises(pqsift.FilterError) as info:
        pqsift.scan(events, filter="s.`x.z` = 1")
    assert info.value.column == "s.`x.z`", fields(info.value)


def test_incomparable_types_name_the_column(events: Path) -> None:
    with pytest.raises(pqsift.FilterError) as info:
        pqsift.scan(events, filter="day > true")
    assert info.value.column == "day", fields(info.value)
    assert "cannot compare" in info.value.reason


def test_a_syntax_error_has_no_column(events: Path) -> None:
    with pytest.raises(pqsift.FilterError) as info:
        pqsift.scan(events, filter="id >")
    assert info.value.column is None and info.value.reason == str(info.value)


def test_a_corrupt_file_names_its_path(tmp_path: Path) -> None:
    bad = tmp_path / "bad.parquet"
    bad.write_bytes(b"PAR1" + b"\x00" * 64 + b"PAR1")
    with pytest.raises(pqsift.CorruptFileError) as info:
        pqsift.scan(bad).to_table()
    error = info.value
    assert error.path == str(bad), fields(error)
    assert error.reason and str(error) == f"{bad}: corrupt Parquet file: {error.reason}"


def test_a_schema_mismatch_names_the_column_and_the_file(tmp_path: Path) -> None:
    first, second = tmp_path / "a.parquet", tmp_path / "b.parquet"
    pq.write_table(pa.table({"x": pa.array([1], pa.int64())}), first)
    pq.write_table(pa.table({"x": pa.array(["one"])}), second)
    with pytest.raises(pqsift.SchemaMismatchError) as info:
        pqsift.scan(tmp_path).to_table()
    error = info.value
    assert error.column == "x", fields(error)
    assert error.path is not None and error.path.endswith("b.parquet")
    assert error.reason == str(error)


def test_a_delta_version_that_does_not_exist_names_the_table(tmp_path: Path) -> None:
    deltalake = pytest.importorskip("deltalake")
    root = tmp_path / "t"
    deltalake.write_deltalake(str(root), pa.table({"x": [1, 2]}))
    with pytest.raises(pqsift.TableError) as info:
        pqsift.scan(root, version=7)
    error = info.value
    assert error.table == str(root), fields(error)
    assert error.reason and error.reason in str(error)
    assert error.path is None and error.column is None


def test_a_bad_store_option_names_the_url_and_never_the_secret() -> None:
    url = "s3://bucket/key.parquet"
    with pytest.raises(pqsift.StorageError) as info:
        pqsift.scan(url, storage_options={"aws_endpoint": "ht!tp://x", "aws_secret_access_key": "s3cr3t-value"})
    error = info.value
    assert error.url is not None and error.url.startswith("s3://bucket"), fields(error)
    assert error.path is None
    assert all("s3cr3t" not in str(value) for value in (*fields(error).values(), str(error)))


def test_errors_keep_their_fields_through_pickle(tmp_path: Path) -> None:
    """Spark ships a task's exception to the driver pickled."""
    with pytest.raises(pqsift.PathNotFoundError) as info:
        pqsift.scan(tmp_path / "nope.parquet")
    copy = pickle.loads(pickle.dumps(info.value))
    assert type(copy) is pqsift.PathNotFoundError
    assert fields(copy) == fields(info.value) and str(copy) == str(info.value)
    assert copy.errno == errno.ENOENT


def test_a_column_spark_has_no_type_for_is_named(tmp_path: Path) -> None:
    path = tmp_path / "clock.parquet"
    pq.write_table(pa.table({"id": [1], "at time": pa.array([3_600_000_000], pa.time64("us"))}), path)
    with pytest.raises(pqsift.UnsupportedError) as info:
        pqsift.scan(path, spark_output=True).to_table()
    error = info.value
    assert (error.column, error.path) == ("`at time`", str(path)), fields(error)


def test_a_corrupt_column_chunk_is_named() -> None:
    """The corpus file whose int64 chunk has its definition levels cut short: the error
    names the column as well as the file."""
    from test_corpus import ROOT

    path = ROOT / "bad_data" / "ARROW-GH-41321.parquet"
    if not path.exists():
        pytest.skip(f"{path} is not there")
    with pytest.raises(pqsift.CorruptFileError) as info:
        pqsift.scan(path).to_table()
    error = info.value
    assert error.path == str(path) and error.column is not None, fields(error)
    assert error.column.strip("`") in str(error), fields(error)
