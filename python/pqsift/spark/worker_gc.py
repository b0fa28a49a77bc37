"""Python's cycle collector in Spark's Python workers.

A reused Python worker (``spark.python.worker.reuse``, Spark's default) runs a full
``gc.collect()`` after every task (PySpark's daemon), and a full collection visits every
object the worker holds: with pyspark, pyarrow and pandas imported, tens of thousands,
milliseconds each time, between a worker's task and its next one. The workers that plan a
Python data source's reads (its schema, its reader's partitions) are such workers too,
outside any task, and their collection runs while Spark goes on planning the query. So a
pqsift reader starting in a worker whose oldest generation holds :data:`REFREEZE_OBJECTS`
objects or more (its first task; a task after modules were imported), and the data
source's planning likewise, collects once and freezes what the worker holds (``gc.freeze``:
the objects stay, reference counting still frees them, later collections skip them). The
collections after each task then visit only what later tasks made.

The cost: objects alive at that moment that later become garbage *in reference cycles*
are never freed. Environment variable :data:`OPT_OUT` set to ``0`` in the workers
(``spark.executorEnv`` on a cluster) leaves the collector as it is. Outside Spark's Python
workers (a read on the driver, or a reader function called directly) nothing is frozen.
"""

from __future__ import annotations

import gc
import os
import sys

__all__ = ["OPT_OUT", "REFREEZE_OBJECTS", "freeze_worker_objects", "in_a_spark_worker"]

#: The environment variable that, set to ``0``, keeps the workers' objects unfrozen.
OPT_OUT = "PQSIFT_FREEZE_WORKER_GC"

#: Objects in the collector's oldest generation from which a worker's objects are frozen:
#: below it a full collection takes a fraction of a millisecond.
REFREEZE_OBJECTS = 10_000


def freeze_worker_objects() -> bool:
    """In a Spark task or another worker of PySpark's daemon, freezes the worker's objects
    if its oldest generation holds :data:`REFREEZE_OBJECTS` or more. True in such a worker
    (frozen now or before), False elsewhere or when :data:`OPT_OUT` is ``0`` (nothing
    frozen)."""
    if os.environ.get(OPT_OUT) == "0" or not in_a_spark_worker():
        return False
    if len(gc.get_objects(generation=2)) >= REFREEZE_OBJECTS:
        gc.collect()  # cycles that are garbage now are freed, not frozen
        gc.freeze()
    return True


def in_a_spark_worker() -> bool:
    """True in a Spark task's process, or in a Python worker PySpark's daemon forked (where
    a data source's planning runs, with no task); False elsewhere (a driver, a notebook)."""
    main_module = sys.modules.get("__main__")
    spec = getattr(main_module, "__spec__", None)
    if spec is not None and spec.name == "pyspark.daemon":
        return True
    from pyspark import TaskContext

    return TaskContext.get() is not None
