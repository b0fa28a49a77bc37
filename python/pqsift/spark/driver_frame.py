"""A result read on the driver of a classic session, made a DataFrame of one partition
with few calls into the JVM.

Each Py4J call is a round trip to the driver's JVM, slower while the JVM is busy, and
PySpark's ``createDataFrame(arrow_table)`` makes ~35 of them before its JVM work begins:
its eight configurations go over as a Java list built one element per call and come back
one element per call, and its JVM classes are looked up by reflection on every use. With
the two settings changed around it, a bloom-filter point lookup's read on the driver spent
about as long in those calls as in reading.

So :func:`arrow_frame` does what that path does with ~6 calls: writes the rows as one
Arrow stream to a file in Spark's temporary directory, and hands it to the two JVM
functions PySpark's own path calls (``PythonSQLUtils.readArrowStreamFromFile`` and
``toDataFrame``), under the local-relation threshold ``0`` so that the batch is
parallelized as it is rather than made a local relation of JVM rows (Spark's choice below
the threshold, which makes and ships the rows one by one: slower for a range's rows with
text, no faster for one row). A JVM without those functions (another Spark version), or a
session that encrypts what it sends its JVM (``spark.io.encryption.enabled``: PySpark then
sends it through a socket), gets ``createDataFrame`` with the same settings.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pyarrow as pa

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.types import StructType

__all__ = ["arrow_frame"]

#: Spark's threshold under which ``createDataFrame`` of Arrow data builds a local relation.
LOCAL_RELATION_THRESHOLD = "spark.sql.execution.arrow.localRelationThreshold"
#: Spark's rows per Arrow batch; ``createDataFrame`` of Arrow data makes a partition of each.
ARROW_RECORDS_PER_BATCH = "spark.sql.execution.arrow.maxRecordsPerBatch"
#: Whether Spark's Arrow strings and binaries are the 64-bit-offset (large) kinds.
ARROW_LARGE_VAR_TYPES = "spark.sql.execution.arrow.useLargeVarTypes"

#: The JVMs (by their Py4J gateway) whose ``PythonSQLUtils`` functions were looked up (each
#: look-up a round trip): the two functions, or None where the session cannot take the
#: stream this way.
_UTILS: dict[int, Any] = {}


def arrow_frame(spark: SparkSession, rows: pa.Table, struct: StructType) -> DataFrame:
    """A DataFrame of ``rows`` (Spark's Arrow types for ``struct``) in one partition, for
    ``spark``, a classic session (see the module's documentation).

    >>> arrow_frame(spark, pa.table({"id": [1, 2]}), StructType([StructField("id", LongType())]))  # doctest: +SKIP
    DataFrame[id: bigint]
    """
    from py4j.protocol import Py4JError, Py4JJavaError  # type: ignore[import-untyped]

    try:
        utils = _sql_utils(spark)
        if utils is not None:
            return _stream_frame(spark, utils, rows, struct)
    except Py4JJavaError:
        raise
    except Py4JError:  # a JVM without the functions, or whose take other arguments
        _UTILS[id(spark.sparkContext._gateway)] = None
    return _created_frame(spark, rows, struct)


def _sql_utils(spark: SparkSession) -> Any:
    """The JVM's ``PythonSQLUtils.readArrowStreamFromFile`` and ``toDataFrame``, None if the
    stream cannot go to them as a file."""
    context: Any = spark.sparkContext
    key = id(context._gateway)
    if key not in _UTILS:
        usable = not context._encryption_enabled and getattr(context, "_temp_dir", None) is not None
        utils = context._jvm.org.apache.spark.sql.api.python.PythonSQLUtils
        _UTILS[key] = (utils.readArrowStreamFromFile, utils.toDataFrame) if usable else None
    return _UTILS[key]


def _stream_frame(spark: SparkSession, utils: Any, rows: pa.Table, struct: StructType) -> DataFrame:
    from pyspark.sql import DataFrame
    from pyspark.sql.pandas.types import to_arrow_schema

    read_stream, to_data_frame = utils
    conf = spark.conf
    large = (conf.get(ARROW_LARGE_VAR_TYPES, None) or "false").lower() == "true"
    # The layout the JVM loads the batch's buffers into (it reads them by the schema it
    # derives from `struct`, not by the stream's).
    expected = to_arrow_schema(
        struct, error_on_duplicated_field_names_in_struct=True, timezone="UTC", prefers_large_types=large
    )
    if not rows.schema.equals(expected):
        rows = rows.cast(expected)
    with tempfile.NamedTemporaryFile(dir=spark.sparkContext._temp_dir, delete=False) as file:
        try:
            with pa.ipc.new_stream(file, expected) as writer:
                # One batch, one partition (an empty one for no rows, as PySpark sends).
                batches = rows.combine_chunks().to_batches() or [
                    pa.RecordBatch.from_arrays([pa.array([], field.type) for field in expected], schema=expected)
                ]
                for batch in batches:
                    writer.write_batch(batch)
            file.close()
            in_jvm = read_stream(file.name)
        finally:
            os.unlink(file.name)
    with _settings_changed(spark, {LOCAL_RELATION_THRESHOLD: "0"}):
        return DataFrame(to_data_frame(in_jvm, struct.json(), spark._jsparkSession), spark)


def _created_frame(spark: SparkSession, rows: pa.Table, struct: StructType) -> DataFrame:
    """``spark.createDataFrame(rows, struct)`` with the threshold at 0 and a batch of all
    the rows."""
    with _settings_changed(spark, {LOCAL_RELATION_THRESHOLD: "0", ARROW_RECORDS_PER_BATCH: str(max(rows.num_rows, 1))}):
        return spark.createDataFrame(rows, struct)


@contextlib.contextmanager
def _settings_changed(spark: SparkSession, settings: dict[str, str]) -> Iterator[None]:
    """The session's ``settings`` changed for what runs inside (Spark reads them when the
    DataFrame is made), then put back as they were (unset if they were). A setting the
    platform will not change keeps its value."""
    previous = {name: spark.conf.get(name, None) for name in settings}
    changed = []
    try:
        for name, value in settings.items():
            try:
                spark.conf.set(name, value)
            except Exception:  # noqa: BLE001, S112 - a platform that fixes the setting: its value then
                continue
            changed.append(name)
        yield
    finally:
        for name in changed:
            earlier = previous[name]
            if earlier is None:
                spark.conf.unset(name)
            else:
                spark.conf.set(name, earlier)
