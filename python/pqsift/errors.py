"""Exception classes raised by pqsift.

Every error pqsift raises derives from :class:`PqsiftError`, and also from the built-in
exception a Python user would expect (``ValueError`` for bad arguments), so
``except ValueError`` keeps working.
"""

from __future__ import annotations

__all__ = [
    "CorruptFileError",
    "FilterError",
    "ObjectNotFoundError",
    "PqsiftError",
    "PqsiftIOError",
    "SchemaMismatchError",
    "SelectionError",
    "StorageError",
    "TableError",
    "UnsupportedError",
]


class PqsiftError(Exception):
    """Base class of every pqsift error."""


class SelectionError(PqsiftError, ValueError):
    """An invalid row-selection operation: mismatched lengths in ``and_then``,
    out-of-order ranges, counts that overflow, an unknown policy name."""


class PqsiftIOError(PqsiftError, OSError):
    """A file could not be opened or read; the message names the file."""


class StorageError(PqsiftIOError):
    """An object store request failed: access denied, the store unreachable after
    retries, an invalid URL or storage option. The message names the URL; option values
    that could be credentials never appear in it."""


class ObjectNotFoundError(StorageError, FileNotFoundError):
    """No object (and no prefix with objects below it) at a URL; the message names it."""


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
