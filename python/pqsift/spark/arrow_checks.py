"""Arrow Java's per-value checks, turned off in the driver's JVM unless configured.

Spark makes rows of the Arrow batches pqsift hands it — a task's output (``mapInArrow``),
a Python data source's, a result read on the driver (``createDataFrame`` of an Arrow
table) — through Arrow Java's vectors. Each value read there checks its index against its
buffer's bounds and that its slot is not null, unless two settings of Arrow Java say not
to: with projections of millions of rows that checking is a large share of a task's
hand-over (the numbers: ``benches/results/spark_handoff_arrow_checks.md``), and Spark,
which asks whether a value is null before reading it, does not need them.

So, as Apache Iceberg's Spark reader does in its executors, :func:`uncheck_driver_arrow`
sets them in the driver's JVM when neither its system property nor its environment
variable was given: a local session's tasks run in that JVM. A cluster's executors are
JVMs of their own that the driver cannot reach: give them :data:`EXECUTOR_SETTINGS`
when the session starts. Setting either variable or property (to any value, the checked
one included) keeps Arrow's own; the settings take effect only if nothing in the JVM read
Arrow vectors before.

The cost of turning them off: a defect in Arrow Java, or in data given to it, reads
memory it should not (a crash of the JVM) instead of raising an exception. The batches
pqsift hands over are built by arrow-rs and pyarrow from validated pages.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

__all__ = ["EXECUTOR_SETTINGS", "UNCHECKED", "settings_to_make", "uncheck_driver_arrow"]

_LOG = logging.getLogger(__name__)

#: Arrow Java's two checks: the system property, the environment variable it reads when
#: the property is not set, and the value that turns the check off.
UNCHECKED = (
    ("arrow.enable_unsafe_memory_access", "ARROW_ENABLE_UNSAFE_MEMORY_ACCESS", "true"),
    ("arrow.enable_null_check_for_get", "ARROW_ENABLE_NULL_CHECK_FOR_GET", "false"),
)

#: Spark settings that turn the checks off in every executor, for a cluster whose executors
#: are not the driver's JVM: ``SparkSession.builder.config(map=EXECUTOR_SETTINGS)``.
EXECUTOR_SETTINGS = {f"spark.executorEnv.{variable}": value for _, variable, value in UNCHECKED}

#: The JVMs (by their Py4J gateway) whose settings were already looked at.
_DONE: set[int] = set()


def settings_to_make(
    system_property: Callable[[str], str | None], environment: Callable[[str], str | None]
) -> list[tuple[str, str]]:
    """The system properties to set, and their values: those of :data:`UNCHECKED` given
    neither as a property nor as an environment variable.

    >>> settings_to_make(lambda name: None, lambda name: None)
    [('arrow.enable_unsafe_memory_access', 'true'), ('arrow.enable_null_check_for_get', 'false')]
    >>> given = {"ARROW_ENABLE_NULL_CHECK_FOR_GET": "true"}
    >>> settings_to_make(lambda name: None, given.get)
    [('arrow.enable_unsafe_memory_access', 'true')]
    """
    return [
        (name, value)
        for name, variable, value in UNCHECKED
        if system_property(name) is None and environment(variable) is None
    ]


def uncheck_driver_arrow(spark: Any) -> None:
    """Turns Arrow Java's checks off in the JVM of ``spark``, a classic session, where not
    configured (see the module's documentation); once per JVM. A session whose JVM cannot
    be asked is left as it is."""
    gateway = getattr(spark.sparkContext, "_gateway", None)
    if gateway is None or id(gateway) in _DONE:
        return
    try:
        system = spark.sparkContext._jvm.java.lang.System
        for name, value in settings_to_make(system.getProperty, system.getenv):
            system.setProperty(name, value)
            _LOG.info("set the JVM's %s=%s", name, value)
    except Exception as error:  # noqa: BLE001 - only speed depends on it
        _LOG.warning("could not set Arrow Java's settings in the driver's JVM: %s", error)
    _DONE.add(id(gateway))
