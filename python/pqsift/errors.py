"""Exception classes raised by pqsift.

Every error pqsift raises derives from :class:`PqsiftError`, and also from the built-in
exception a Python user would expect (``ValueError`` for bad arguments), so
``except ValueError`` keeps working.
"""

from __future__ import annotations

__all__ = ["PqsiftError", "SelectionError"]


class PqsiftError(Exception):
    """Base class of every pqsift error."""


class SelectionError(PqsiftError, ValueError):
    """An invalid row-selection operation: mismatched lengths in ``and_then``,
    out-of-order ranges, counts that overflow, an unknown policy name."""
