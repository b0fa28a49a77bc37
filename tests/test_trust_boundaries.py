"""Trust boundaries: what a table's metadata may make a scan read, and input that must fail
at once with a bounded, catchable error.

A Delta log is written by whoever can write the table, not by the reader: every location it
names (a data file, a deletion vector) is allowed only below the table's root, unless the
user allows more (``allowed_locations``: prefixes, or ``"any"``). Each escape below would
read rows of another directory or bucket, or a local file of the reading machine; each is
refused with a ``TableError`` naming the table and the location, and read once allowed.

Also here: special files (a FIFO blocks ``open`` forever) in every position, messages that
quote a hostile value, empty commits, an empty directory, and timestamp columns that differ
only in their zone across files (Spark reads them as one TIMESTAMP column).

The Delta cases start from a copy of delta-kernel-rs's ``table-with-dv-small`` (10 rows,
values 0–9, rows 0 and 9 deleted by an on-disk deletion vector).
"""

from __future__ import annotations

import datetime
import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import pqsift

SOURCE = (Path(__file__).resolve().parents[1] / ".." / "shared" / "delta-testing" / "tables" / "table-with-dv-small").resolve()
DATA_FILE = "part-00000-fae5310a-a37d-4e51-827b-c3d5516560ca-c000.snappy.parquet"
DV_FILE = "deletion_vector_61d16c75-6994-46b7-a15b-8b538852e50e.bin"
SECOND = "_delta_log/00000000000000000001.json"
KEPT = list(range(1, 9))  # rows 0 and 9 deleted


def _rewrite_adds(commit: Path, change: Callable[[dict[str, Any]], None]) -> None:
    lines = []
    for line in commit.read_text().splitlines():
        value = json.loads(line)
        if "add" in value:
            change(value["add"])
        lines.append(json.dumps(value))
    commit.write_text("\n".join(lines) + "\n")


def _table(tmp_path: Path) -> Path:
    table = tmp_path / "lake" / "t"
    shutil.copytree(SOURCE, table)
    return table


def _values(scan: pqsift.Scan) -> list[int]:
    return sorted(scan.to_table().column("value").to_pylist())


def _refused(table: str, location: str, **options: Any) -> None:
    with pytest.raises(pqsift.TableError) as raised:
        pqsift.scan(table, **options).to_table()
    message = str(raised.value)
    assert table.rstrip("/") in message and location in message and "outside its root" in message, message
    assert "allowed_locations" in message, message


# ----- a local table -------------------------------------------------------------------


def _data_file_moved(to: Callable[[Path], tuple[Path, str]]) -> Callable[[Path], tuple[str, Path]]:
    """Moves the data file to the place ``to`` gives (the new file, the path the log names)."""

    def apply(table: Path) -> tuple[str, Path]:
        target, named = to(table)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(table / DATA_FILE, target)
        _rewrite_adds(table / SECOND, lambda add: add.__setitem__("path", named))
        return str(target), target.parent

    return apply


ESCAPES: dict[str, Callable[[Path], tuple[str, Path]]] = {
    "relative ../": _data_file_moved(lambda t: (t.parent / "other" / DATA_FILE, f"../other/{DATA_FILE}")),
    "absolute path": _data_file_moved(lambda t: (t.parent / "other" / DATA_FILE, str(t.parent / "other" / DATA_FILE))),
    "file: URI": _data_file_moved(lambda t: (t.parent / "other" / DATA_FILE, f"file://{t.parent / 'other' / DATA_FILE}")),
    "FILE: URI, scheme upper-case": _data_file_moved(lambda t: (t.parent / "other" / DATA_FILE, f"FILE://{t.parent / 'other' / DATA_FILE}")),
    "down then up past the root": _data_file_moved(lambda t: (t.parent / "t2" / DATA_FILE, f"a/../../t2/{DATA_FILE}")),
    "a sibling sharing the root's name as a prefix": _data_file_moved(lambda t: (t.parent / "t-other" / DATA_FILE, str(t.parent / "t-other" / DATA_FILE))),
}


@pytest.mark.parametrize("case", list(ESCAPES), ids=list(ESCAPES))
def test_a_data_file_outside_the_table_is_refused_unless_allowed(tmp_path: Path, case: str) -> None:
    table = _table(tmp_path)
    outside, directory = ESCAPES[case](table)
    _refused(str(table), outside)
    assert _values(pqsift.scan(table, allowed_locations=[str(directory)])) == KEPT
    assert _values(pqsift.scan(table, allowed_locations="any")) == KEPT
    # A prefix that does not cover it allows nothing.
    _refused(str(table), outside, allowed_locations=[str(tmp_path / "elsewhere")])


def test_paths_inside_the_table_written_in_any_form_still_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    table = _table(tmp_path)
    _rewrite_adds(table / SECOND, lambda add: add.__setitem__("path", f"x/../{DATA_FILE}"))
    assert _values(pqsift.scan(table)) == KEPT
    _rewrite_adds(table / SECOND, lambda add: add.__setitem__("path", f"file://{table / DATA_FILE}"))
    assert _values(pqsift.scan(table)) == KEPT
    # A relative table root: the absolute path in the log is still below it.
    monkeypatch.chdir(tmp_path)
    assert _values(pqsift.scan("lake/t")) == KEPT


def _dv(change: Callable[[dict[str, Any]], None]) -> Callable[[Path], None]:
    return lambda table: _rewrite_adds(table / SECOND, lambda add: change(add["deletionVector"]))


def test_a_deletion_vector_outside_the_table_is_refused_unless_allowed(tmp_path: Path) -> None:
    table = _table(tmp_path)
    escape = tmp_path / "escape"
    escape.mkdir()
    shutil.copy(table / DV_FILE, escape / DV_FILE)
    # `u`: a prefix, then the 20-character Z85 UUID; `../..` climbs out of the table.
    _dv(lambda dv: dv.__setitem__("pathOrInlineDv", "../../escape" + dv["pathOrInlineDv"][-20:]))(table)
    (table / DV_FILE).unlink()
    _refused(str(table), str(escape / DV_FILE).replace(str(tmp_path), ""))
    assert _values(pqsift.scan(table, allowed_locations=[str(escape)])) == KEPT
    # `p`: an absolute path.
    _dv(lambda dv: dv.update(storageType="p", pathOrInlineDv=f"file://{escape / DV_FILE}"))(table)
    _refused(str(table), str(escape / DV_FILE))
    assert _values(pqsift.scan(table, allowed_locations="any")) == KEPT


def test_a_sidecar_outside_the_log_is_refused(tmp_path: Path) -> None:
    """The protocol keeps sidecars in ``_delta_log/_sidecars``: no option widens that."""
    root = Path(__file__).resolve().parents[1] / ".." / "shared" / "delta-testing" / "golden" / "v2-checkpoint-json" / "delta"
    if not root.is_dir():
        pytest.skip("no v2 checkpoint table with sidecars in delta-testing")
    table = tmp_path / "t"
    shutil.copytree(root, table)
    checkpoints = [p for p in (table / "_delta_log").glob("*.checkpoint.*.json")]
    if not checkpoints:
        pytest.skip("the v2 checkpoint is not JSON")
    text = checkpoints[0].read_text()
    sidecars = [json.loads(line)["sidecar"]["path"] for line in text.splitlines() if '"sidecar"' in line]
    if not sidecars:
        pytest.skip("the checkpoint names no sidecar")
    shutil.copytree(table / "_delta_log" / "_sidecars", tmp_path / "elsewhere")
    checkpoints[0].write_text(text.replace(f'"{sidecars[0]}"', f'"../../../elsewhere/{sidecars[0]}"'))
    for allowed in (None, "any"):
        with pytest.raises(pqsift.TableError, match="outside _delta_log/_sidecars"):
            pqsift.scan(table, allowed_locations=allowed).to_table()


def test_allowed_locations_is_checked() -> None:
    with pytest.raises(ValueError, match="allowed_locations"):
        pqsift.scan(SOURCE, allowed_locations="everything")
    with pytest.raises(TypeError, match="allowed_locations"):
        pqsift.scan(SOURCE, allowed_locations=3)


# ----- a table in an object store ------------------------------------------------------


@pytest.fixture
def s3_table(s3_emulator: Any, tmp_path: Path) -> Callable[[Callable[[Path, str], None]], str]:
    """Uploads a copy of the table, changed by the given function (given the table and its
    bucket), to a fresh bucket (``lake/t``); returns the table's URL. The data file is also at
    ``lake/t2/`` and in the bucket ``<bucket>-other``, for escapes to reach."""
    pytest.importorskip("moto")

    def upload(change: Callable[[Path, str], None]) -> str:
        bucket = s3_emulator.new_bucket("trust")
        table = _table(tmp_path / bucket)
        change(table, bucket)
        s3_emulator.upload_dir(table, bucket, "lake/t")
        s3_emulator.upload_file(SOURCE / DATA_FILE, bucket, f"lake/t2/{DATA_FILE}")
        s3_emulator.create_bucket(f"{bucket}-other")
        s3_emulator.upload_file(SOURCE / DATA_FILE, f"{bucket}-other", f"lake/t/{DATA_FILE}")
        return f"s3://{bucket}/lake/t"

    return upload


def _named(path: str) -> Callable[[Path, str], None]:
    """A change naming ``path`` (``{bucket}`` filled in) as the data file."""
    return lambda table, bucket: _rewrite_adds(table / SECOND, lambda add: add.__setitem__("path", path.format(bucket=bucket)))


def test_a_table_in_a_store_reads_nothing_outside_its_prefix(s3_emulator: Any, s3_table: Callable[[Callable[[Path, str], None]], str]) -> None:
    options = s3_emulator.storage_options
    # Another bucket, read with this table's credentials.
    url = s3_table(_named("s3://{bucket}-other/lake/t/" + DATA_FILE))
    other = f"s3://{url.split('/')[2]}-other/lake/t/"
    _refused(url, other + DATA_FILE, storage_options=options)
    assert _values(pqsift.scan(url, storage_options=options, allowed_locations=[other])) == KEPT
    # `../` past the table's prefix.
    url = s3_table(_named(f"../t2/{DATA_FILE}"))
    _refused(url, f"{url.rsplit('/', 1)[0]}/t2/{DATA_FILE}", storage_options=options)
    assert _values(pqsift.scan(url, storage_options=options, allowed_locations="any")) == KEPT
    # A local file of the reading machine, whatever the scheme's case.
    for scheme in ("file", "FILE", "File"):
        _refused(s3_table(_named(scheme + ":///etc/passwd")), "/etc/passwd", storage_options=options)


# ----- special files -------------------------------------------------------------------


@pytest.mark.timeout(60, method="thread")
def test_special_files_fail_at_once_in_every_position(tmp_path: Path) -> None:
    """A FIFO blocks ``open`` until a writer comes; pqsift opens non-blocking and refuses
    anything but a regular file. (The thread timeout ends the run if a case hangs.)"""
    fifo = tmp_path / "alone.parquet"
    os.mkfifo(fifo)
    with pytest.raises(pqsift.PqsiftIOError, match=r"not a regular file \(a FIFO\)"):
        pqsift.scan(fifo).to_table()
    directory = tmp_path / "dir"
    directory.mkdir()
    pq.write_table(pa.table({"x": [1, 2]}), directory / "a.parquet")
    os.mkfifo(directory / "b.parquet")
    with pytest.raises(pqsift.PqsiftIOError, match=r"b\.parquet: not a regular file \(a FIFO\)"):
        pqsift.scan(directory).to_table()
    table = _table(tmp_path)
    os.mkfifo(table / "fifo.parquet")
    _rewrite_adds(table / SECOND, lambda add: add.__setitem__("path", "fifo.parquet"))
    with pytest.raises(pqsift.PqsiftIOError, match=r"fifo\.parquet: not a regular file \(a FIFO\)"):
        pqsift.scan(table).to_table()
    # A FIFO named as a commit of the log: the log's listing takes regular files only.
    log_fifo = _table(tmp_path / "log")
    os.mkfifo(log_fifo / "_delta_log" / "00000000000000000002.json")
    scan = pqsift.scan(log_fifo)
    assert _values(scan) == KEPT and scan.table_version == 1
    with pytest.raises(pqsift.PqsiftIOError, match=r"not a regular file \(a character device\)"):
        pqsift.scan("/dev/zero").to_table()


# ----- errors: caught, bounded ---------------------------------------------------------


def test_a_malformed_endpoint_is_a_storage_error_not_a_panic() -> None:
    options = {"aws_endpoint": "ht!tp://x", "aws_access_key_id": "AKIDEXAMPLE", "aws_secret_access_key": "s3cr3t-value", "aws_region": "us-east-1"}
    with pytest.raises(pqsift.StorageError) as raised:
        pqsift.scan("s3://bucket/key.parquet", storage_options=options).to_table()
    assert "s3cr3t-value" not in str(raised.value)


def test_messages_quote_hostile_values_within_a_bound(tmp_path: Path) -> None:
    table = _table(tmp_path)
    long_name = "x" * (1 << 20)
    _rewrite_adds(table / SECOND, lambda add: add.__setitem__("path", long_name + ".parquet"))
    with pytest.raises(pqsift.CorruptFileError) as raised:
        pqsift.scan(table).to_table()
    assert len(str(raised.value)) < 5_000 and "longer than any file system" in str(raised.value)
    _rewrite_adds(table / SECOND, lambda add: add.__setitem__("path", "/" + "y" * 30_000 + ".parquet"))
    with pytest.raises(pqsift.TableError) as raised:
        pqsift.scan(table).to_table()
    assert len(str(raised.value)) < 5_000 and "bytes left out" in str(raised.value), str(raised.value)[:300]
    huge_filter = "value IN (" + ", ".join(["1"] * 300_000) + ") AND"
    with pytest.raises(pqsift.FilterError) as raised:
        pqsift.scan(SOURCE, filter=huge_filter).to_table()
    assert len(str(raised.value)) < 5_000, len(str(raised.value))


def test_a_commit_without_actions_is_corrupt(tmp_path: Path) -> None:
    table = _table(tmp_path)
    (table / "_delta_log" / "00000000000000000002.json").write_text(" \n" * 100_000)
    with pytest.raises(pqsift.CorruptFileError, match="commit 2 holds no action"):
        pqsift.scan(table).to_table()


def test_an_empty_directory_needs_a_schema(tmp_path: Path) -> None:
    """As Spark: no file to infer a schema from is an error, not a table of no columns."""
    with pytest.raises(pqsift.TableError, match="no Parquet file to infer the schema from"):
        pqsift.scan(tmp_path).to_table()
    (tmp_path / "_SUCCESS").write_text("")
    with pytest.raises(pqsift.TableError, match=str(tmp_path)):
        pqsift.scan(tmp_path, filter="x > 1").to_table()
    schema = pa.schema([("x", pa.int64())])
    table = pqsift.scan(tmp_path, schema=schema).to_table()
    assert table.num_rows == 0 and table.schema.equals(schema)


# ----- timestamps whose zones differ across files --------------------------------------

INSTANTS = [datetime.datetime(2026, 1, 1, h, tzinfo=datetime.UTC) for h in (0, 6, 12, 18)]


def _zoned_directory(tmp_path: Path) -> Path:
    directory = tmp_path / "zones"
    directory.mkdir()
    for name, zone, instants in (("a", "UTC", INSTANTS[:2]), ("b", "Europe/Berlin", INSTANTS[2:])):
        values = pa.array(instants, pa.timestamp("us", tz="UTC")).cast(pa.timestamp("us", tz=zone))
        pq.write_table(pa.table({"id": pa.array(range(len(instants)), pa.int64()), "t": values}), directory / f"{name}.parquet")
    return directory


def test_timestamps_in_different_zones_read_as_one_column(tmp_path: Path) -> None:
    directory = _zoned_directory(tmp_path)
    table = pqsift.scan(directory).to_table()
    assert table.schema.field("t").type == pa.timestamp("us", tz="UTC")  # the first file's
    assert table.column("t").to_pylist() == INSTANTS
    selected = pqsift.scan(directory, filter="t >= TIMESTAMP '2026-01-01 06:00:00'").to_table()
    assert selected.column("t").to_pylist() == INSTANTS[1:]
    merged = pqsift.scan(directory, merge_schema=True).to_table()
    assert merged.column("t").to_pylist() == INSTANTS


def test_timestamps_in_different_zones_equal_spark(spark: Any, tmp_path: Path) -> None:
    directory = _zoned_directory(tmp_path)
    where = "t >= TIMESTAMP '2026-01-01 06:00:00'"
    frame = spark.read.parquet(str(directory)).where(where)
    expected = sorted(row.m for row in frame.selectExpr("unix_micros(t) AS m").collect())
    zone = spark.conf.get("spark.sql.session.timeZone")
    got = pqsift.scan(directory, filter=where, session_time_zone=zone).to_table().column("t").cast(pa.int64())
    assert sorted(got.to_pylist()) == expected and expected


def test_a_mismatch_message_tells_the_types_apart(tmp_path: Path) -> None:
    directory = tmp_path / "units"
    directory.mkdir()
    pq.write_table(pa.table({"t": pa.array([0], pa.timestamp("us", tz="UTC"))}), directory / "a.parquet")
    pq.write_table(pa.table({"t": pa.array([0], pa.timestamp("ms", tz="UTC"))}), directory / "b.parquet", coerce_timestamps="ms")
    with pytest.raises(pqsift.SchemaMismatchError) as raised:
        pqsift.scan(directory).to_table()
    message = str(raised.value)
    assert "TIMESTAMP (Timestamp(Millisecond" in message and "TIMESTAMP (Timestamp(Microsecond" in message, message


def test_spark_reads_honour_the_table_root(spark: Any, tmp_path: Path) -> None:
    """The same rules through ``pqsift.spark.read`` and the ``"pqsift"`` data source, whose
    option takes ``any``, a JSON list or prefixes separated by commas."""
    import pqsift.spark

    table = _table(tmp_path)
    _outside, directory = ESCAPES["relative ../"](table)
    with pytest.raises(Exception, match="outside its root"):
        pqsift.spark.read(spark, str(table)).collect()
    assert sorted(r.value for r in pqsift.spark.read(spark, str(table), allowed_locations=[str(directory)]).collect()) == KEPT
    with pytest.raises(Exception, match="outside its root"):
        spark.read.format("pqsift").load(str(table)).collect()
    for allowed in ("any", json.dumps([str(directory)]), f"{tmp_path / 'elsewhere'}, {directory}"):
        rows = spark.read.format("pqsift").option("allowed_locations", allowed).load(str(table)).collect()
        assert sorted(r.value for r in rows) == KEPT, allowed


# ----- INT96 instants beyond nanoseconds ----------------------------------------------

INT96_FILE = Path(__file__).resolve().parents[1] / ".." / "shared" / "parquet-testing" / "data" / "int96_from_spark.parquet"
# From the corpus' int96_from_spark.md: microseconds since the epoch, as Spark wrote them
# (9999-12-31 and year 290,000 among them).
INT96_MICROS = [1704141296123456, 1704070800000000, 253402225200000000, 1735599600000000, None, 9089380393200000000]


def _micros(table: pa.Table) -> list[int | None]:
    return table.column(0).cast(pa.int64()).to_pylist()


def test_int96_beyond_nanoseconds_reads_right_in_microseconds_or_raises() -> None:
    with pytest.raises(pqsift.UnsupportedError, match=r"column a: an INT96 timestamp of 253402225200000000 µs from 1970-01-01 \(as Spark reads it\) is outside the range of timestamp\[ns\]"):
        pqsift.scan(INT96_FILE).to_table()
    table = pqsift.scan(INT96_FILE, coerce_int96_timestamp_unit="us").to_table()
    assert table.schema.field("a").type == pa.timestamp("us") and _micros(table) == INT96_MICROS
    spark_typed = pqsift.scan(INT96_FILE, spark_output=True).to_table()
    assert spark_typed.schema.field("a").type == pa.timestamp("us", tz="UTC") and _micros(spark_typed) == INT96_MICROS
    # Milliseconds hold them too; a filter on the column reads in the same unit.
    millis = pqsift.scan(INT96_FILE, coerce_int96_timestamp_unit="ms", filter="a > TIMESTAMP '9000-01-01 00:00:00'").to_table()
    assert _micros(millis) == [v // 1000 for v in (INT96_MICROS[2], INT96_MICROS[5])]
    with pytest.raises(ValueError, match="coerce_int96_timestamp_unit"):
        pqsift.scan(INT96_FILE, coerce_int96_timestamp_unit="days")


def test_int96_beyond_nanoseconds_equals_spark(spark: Any) -> None:
    import pqsift.spark

    expected = [row.m for row in spark.read.parquet(str(INT96_FILE)).selectExpr("unix_micros(a) AS m").collect()]
    assert expected == INT96_MICROS
    got = pqsift.spark.read(spark, str(INT96_FILE)).selectExpr("unix_micros(a) AS m").collect()
    assert [row.m for row in got] == INT96_MICROS


# ----- Ctrl-C --------------------------------------------------------------------------


def test_a_long_read_stops_at_ctrl_c(tmp_path: Path) -> None:
    """A read whose filter keeps nothing returns to Python only at its end; Ctrl-C (SIGINT)
    must still stop it with Python's KeyboardInterrupt, between row groups, as a Python
    loop would stop."""
    import gc
    import signal
    import threading
    import time

    path = tmp_path / "many_row_groups.parquet"
    pq.write_table(pa.table({"x": pa.array(range(12_000_000), pa.int64())}), path, row_group_size=500)
    where = "pmod(x, 7) = 9"  # never true, and no statistic can prove it

    def scan() -> pqsift.Scan:
        return pqsift.scan(path, filter=where, threads=1, statistics=False, page_index=False)

    whole = scan()
    started = time.perf_counter()
    assert whole.to_table().num_rows == 0
    elapsed = time.perf_counter() - started
    total = whole.metrics["rows_decoded"]
    if elapsed < 0.5:
        pytest.skip(f"the read takes {elapsed:.2f} s here: too short to interrupt in the middle")
    interrupted = scan()
    # Python runs a signal's handler in whatever Python code runs next on the main thread; if
    # that is a gc callback (hypothesis installs one), the KeyboardInterrupt is printed as
    # "unraisable" and lost, whatever the reader does. Other tests' SparkContext replaces the
    # SIGINT handler with one that calls into the JVM first. Neither is what is under test here.
    previous_handler = signal.signal(signal.SIGINT, signal.default_int_handler)
    gc_was_enabled = gc.isenabled()
    gc.disable()
    # Early in the read (a second run may be faster than the first): within it in any case.
    timer = threading.Timer(min(0.1, elapsed / 4), lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            interrupted.to_table()
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, previous_handler)
        if gc_was_enabled:
            gc.enable()
    assert interrupted.metrics.get("rows_decoded", 0) < total, (interrupted.metrics.get("rows_decoded"), total)
