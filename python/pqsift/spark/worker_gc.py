"""Python's cycle collector in Spark's Python workers.

A reused Python worker (``spark.python.worker.reuse``, Spark's default) runs a full
``gc.collect()`` after every task (PySpark's daemon), and a full collection visits every
object the worker holds: with pyspark, pyarrow and pandas imported, tens of thousands,
milliseconds each time, between a worker's task and its next one. So a pqsift reader
starting in a worker whose oldest generation holds :data:`REFREEZE_OBJECTS` objects or more
(its first task; a task after modules were imported) collects once and freezes what the
worker holds (``gc.freeze``: the objects stay, reference counting still frees them, later
collections skip them). The collections after each task then visit only what later tasks
made.

The cost: objects alive at that moment that later become garbage *in reference cycles*
are never freed. Environment variable :data:`OPT_OUT` set to ``0`` in the workers
(``spark.executorEnv`` on a cluster) leaves the collector as it is. Outside a Spark task (a
read on the driver, or a reader function called directly) nothing is frozen.
"""

from __future__ import annotations

import gc
import os

__all__ = ["OPT_OUT", "REFREEZE_OBJECTS", "freeze_worker_objects"]

#: The environment variable that, set to ``0``, keeps the workers' objects unfrozen.
OPT_OUT = "PQSIFT_FREEZE_WORKER_GC"

#: Objects in the collector's oldest generation from which a worker's objects are frozen:
#: below it a full collection takes a fraction of a millisecond.
REFREEZE_OBJECTS = 10_000


def freeze_worker_objects() -> bool:
    """In a Spark task, freezes the worker's objects if its oldest generation holds
    :data:`REFREEZE_OBJECTS` or more. True in a Spark task (frozen now or before), False
    outside one or when :data:`OPT_OUT` is ``0`` (nothing frozen)."""
    if os.environ.get(OPT_OUT) == "0":
        return False
    from pyspark import TaskContext

    if TaskContext.get() is None:
        return False
    if len(gc.get_objects(generation=2)) >= REFREEZE_OBJECTS:
        gc.collect()  # cycles that are garbage now are freed, not frozen
        gc.freeze()
    return True
