"""Spark's automatic registration of the ``"pqsift"`` data source.

Spark 4 registers, on a session's first use of a Python data source, the ``DefaultSource``
of every installed top-level package whose name starts with ``pyspark_``: with pqsift
installed, ``spark.read.format("pqsift").load(path)`` works without
:func:`pqsift.spark.register`.

This source evaluates Spark's filters after reading unless they are given as the option
``filter``: pushing them into pqsift needs ``spark.sql.python.filterPushdown.enabled``,
which :func:`pqsift.spark.register` sets (a source that takes filters fails where the
setting is off). Its ``sessionTimeZone`` defaults to the driver host's zone (``TZ``, else
``/etc/localtime``), which is Spark's default session time zone; give the option (or call
``register``) when the session sets ``spark.sql.session.timeZone``.
"""

from __future__ import annotations

from pqsift.spark.datasource import data_source_class, local_time_zone

__all__ = ["DefaultSource"]

DefaultSource = data_source_class(filter_pushdown=False, session_time_zone=local_time_zone())
