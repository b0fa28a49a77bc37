"""Loads the native extension with its own allocator settings.

The extension's allocator is jemalloc (``rust/allocator.rs``: freed pages kept 10 s, so the
next row group and the next scan decode into memory already mapped). jemalloc reads one
environment variable once, when it starts, ``_RJEM_MALLOC_CONF``, and every library that
links it through the same Rust crates reads that same variable: Polars writes its own
settings into it when imported (``dirty_decay_ms:500,muzzy_decay_ms:1000``). In a process
that had imported Polars first, pqsift's allocator took those, gave freed pages back after
half a second, and each scan faulted in fresh memory (measured with
``benches/engine_order.py``; the figures are in the reading design page).

So the extension is loaded with that variable set to ``PQSIFT_MALLOC_CONF`` (pqsift's own:
jemalloc options that override the built-in ones, e.g. ``dirty_decay_ms:1000`` or
``thp:always``), or unset, and the variable is put back as it was once jemalloc has
started; whatever Polars or the user wrote there reaches only the other libraries.
"""

from __future__ import annotations

import os

__all__ = ["OWN_VARIABLE", "SHARED_VARIABLE", "STARTED_WITH"]

#: jemalloc's variable, shared by every library built with the ``tikv-jemalloc`` crates.
SHARED_VARIABLE = "_RJEM_MALLOC_CONF"
#: pqsift's own overrides of its allocator's settings.
OWN_VARIABLE = "PQSIFT_MALLOC_CONF"


def _load() -> dict[str, int | bool] | None:
    shared = os.environ.get(SHARED_VARIABLE)
    own = os.environ.get(OWN_VARIABLE)
    if own is None:
        os.environ.pop(SHARED_VARIABLE, None)
    else:
        os.environ[SHARED_VARIABLE] = own
    try:
        from pqsift import _core

        # jemalloc has started by the end of this call at the latest (reading the variable).
        return _core.allocator_settings()
    finally:
        if shared is None:
            os.environ.pop(SHARED_VARIABLE, None)
        else:
            os.environ[SHARED_VARIABLE] = shared


#: The settings the extension's jemalloc started with (``narenas``, ``dirty_decay_ms``,
#: ``muzzy_decay_ms``, ``background_thread``); ``None`` where the system's allocator serves.
STARTED_WITH = _load()
