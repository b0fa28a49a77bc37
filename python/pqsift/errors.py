"""Exception classes raised by pqsift.

Every error pqsift raises derives from :class:`PqsiftError`, and also from the built-in
exception a Python user would expect (``ValueError`` for bad arguments,
``FileNotFoundError`` for a missing file or object), so ``except ValueError`` keeps
working. Each carries what it is about as attributes — ``path``, ``url``, ``table``,
``column`` and ``reason`` (``None`` where they do not apply) — so code can handle an error
without parsing its message:

>>> import pqsift
>>> try:
...     pqsift.scan("missing.parquet")
... except FileNotFoundError as error:
...     (error.path, error.reason)
('missing.parquet', 'No such file or directory (os error 2)')
"""

from __future__ import annotations

import errno

__all__ = [
    "CorruptFileError",
    "FilterError",
    "ObjectNotFoundError",
    "PathNotFoundError",
    "PqsiftError",
    "PqsiftIOError",
    "ReadBudgetError",
    "SchemaMismatchError",
    "SelectionError",
    "StorageError",
    "TableError",
    "TaskPlanError",
    "UnsupportedError",
]


class PqsiftError(Exception):
    """Base class of every pqsift error.

    Attributes:
        path: the local file (or the object, for an error about a file's content).
        url: the object store URL a request was for.
        table: the table's root.
        column: the column, as the filter or the schema names it.
        reason: what is wrong, without the subject the message starts with.
    """

    path: str | None
    url: str | None
    table: str | None
    column: str | None
    reason: str

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        url: str | None = None,
        table: str | None = None,
        column: str | None = None,
        reason: str | None = None,
    ) -> None:
        super().__init__(message)
        self.path = path
        self.url = url
        self.table = table
        self.column = column
        self.reason = message if reason is None else reason


class SelectionError(PqsiftError, ValueError):
    """An invalid row-selection operation: mismatched lengths in ``and_then``,
    out-of-order ranges, counts that overflow, an unknown policy name."""


class PqsiftIOError(PqsiftError, OSError):
    """A file could not be opened or read; the message names the file. ``filename`` and
    ``strerror`` are set as on any ``OSError``, and ``errno`` is ``ENOENT`` for the
    ``FileNotFoundError`` subclasses."""

    def __init__(self, message: str, **fields: str | None) -> None:
        super().__init__(message, **fields)
        self.filename = self.path if self.path is not None else self.url
        self.strerror = self.reason
        if isinstance(self, FileNotFoundError):
            self.errno = errno.ENOENT

    def __str__(self) -> str:
        # The message pqsift wrote, not OSError's "[Errno 2] ...: 'path'" layout.
        return str(self.args[0])


class PathNotFoundError(PqsiftIOError, FileNotFoundError):
    """No file or directory at a local path; the message names it. ``errno`` is
    ``ENOENT``."""


class StorageError(PqsiftIOError):
    """An object store request failed: access denied, the store unreachable after
    retries, an invalid URL or storage option. The message names the URL; option values
    that could be credentials never appear in it."""


class ObjectNotFoundError(StorageError, FileNotFoundError):
    """No object (and no prefix with objects below it) at a URL; the message names it.
    ``errno`` is ``ENOENT``."""


class CorruptFileError(PqsiftError):
    """A file is not valid Parquet or its metadata is inconsistent; the message names the
    file and the reason."""


class SchemaMismatchError(PqsiftError):
    """The files of one scan have a column of types that cannot be read into one schema:
    narrower than, or of another kind than, the scan schema's (Spark reads each file into
    the first file's schema, widening only), or different at all when merging schemas
    (``merge_schema``). The message names both files, the column and both types. Raised
    before any row is returned when the footers already show it."""


class FilterError(PqsiftError, ValueError):
    """A filter that cannot be parsed, bound or evaluated: a syntax error, an unsupported
    construct, an unknown column, incomparable types, or an error Spark's ANSI mode raises
    (overflow, division by zero). The message names the column or token."""


class UnsupportedError(PqsiftError):
    """A file or table uses a feature pqsift cannot read or output: encryption (``PARE``
    magic or an encrypted plaintext footer), column chunks stored in other files, more
    string data in one batch than Arrow's 32-bit offsets hold, a column type with no
    equivalent in the requested output (e.g. a time-of-day column read for Spark), a Delta
    reader feature pqsift does not implement. The message names the file or table and the
    feature."""


class TableError(PqsiftError):
    """A table cannot be read as one: Hive partition directories that disagree (different
    column names or depths), a Delta log that is incomplete or inconsistent (no protocol
    or metadata, a gap in the commit versions), a version or timestamp the log does not
    have. The message names the table and the reason."""


class TaskPlanError(PqsiftError, ValueError):
    """A task plan — the part of a scan's plan a Spark driver hands a task, as bytes —
    that cannot be read: damaged in transit, written by another pqsift version than the
    task's (the driver and the workers must run the same), or inconsistent with the
    footers it carries."""


class ReadBudgetError(PqsiftError):
    """A read that stopped once it had read more bytes than its ``max_bytes_read`` option
    allows (see :func:`pqsift.scan`): a guard against a read that would cost more than
    the caller will pay, e.g. a top-k whose running threshold does not cut the read short.
    ``reason`` gives the bytes read and the bound."""
