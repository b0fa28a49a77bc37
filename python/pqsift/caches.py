"""The process-wide metadata cache: its bound, set by a function or the environment.

A process keeps the parsed footers (and page indexes) of the files it has read, so that a
second scan of them, or a Spark worker's next task, reads no footer. The cache is bounded
in bytes (their estimated memory), least recently used first out: 256 MiB unless set. A
scan's own footer reads evict only footers it has not used since its planning began, so a
scan of more footers than fit finds the first ones it planned still cached when it reads.
Each Spark Python worker is a process with its own cache, so a host holds at most its
workers' count times the bound; to lower it on executors, set the environment variable
there (``spark.executorEnv.PQSIFT_METADATA_CACHE_BYTES``)::

    >>> import pqsift
    >>> previous = pqsift.set_metadata_cache_bytes(64 << 20)  # 64 MiB from now on
    >>> pqsift.metadata_cache_usage()[1]
    67108864
    >>> _ = pqsift.set_metadata_cache_bytes(previous)
"""

from __future__ import annotations

import os

from pqsift import _core

#: Read when pqsift is imported: the metadata cache's bound in bytes (0: keep nothing).
ENVIRONMENT_VARIABLE = "PQSIFT_METADATA_CACHE_BYTES"


def set_metadata_cache_bytes(capacity: int) -> int:
    """Bounds this process's metadata cache to ``capacity`` bytes from now on (``0``: it
    keeps nothing, every scan reads its footers), evicting the least recently used
    footers until what it holds fits. Returns the bound before. A scan holds the footers
    of the files it reads whatever the bound; the cache is what outlives it."""
    if isinstance(capacity, bool) or not isinstance(capacity, int):
        raise TypeError(f"the metadata cache's bound is a number of bytes, got {capacity!r}")
    if capacity < 0:
        raise ValueError(f"the metadata cache's bound cannot be negative, got {capacity}")
    return _core.set_metadata_cache_bytes(capacity)


def metadata_cache_usage() -> tuple[int, int]:
    """``(bytes held, bound)`` of this process's metadata cache (estimated memory)."""
    return _core.metadata_cache_usage()


def apply_environment() -> None:
    """Sets the bound from :data:`ENVIRONMENT_VARIABLE` when it is set (pqsift's import
    calls this); a value that is not a whole number of bytes raises ``ValueError``."""
    value = os.environ.get(ENVIRONMENT_VARIABLE)
    if value is None:
        return
    try:
        capacity = int(value.strip())
    except ValueError:
        raise ValueError(f"{ENVIRONMENT_VARIABLE}={value!r} is not a number of bytes") from None
    if capacity < 0:
        raise ValueError(f"{ENVIRONMENT_VARIABLE}={value!r}: the bound cannot be negative")
    set_metadata_cache_bytes(capacity)
