"""pqsift — a selective Parquet reader with late materialization.

pqsift reads only what survives a filter: files and row groups pruned by their
statistics and bloom filters, pages pruned by the page index, and rows filtered column by
column, decoding the projected columns only for the rows that pass.

    scan = pqsift.scan("data/", columns=["id", "text"], filter="kind = 'refund' AND amount > 900")
    scan.plan()          # metadata only: per row group skip / scan / select, and why
    table = scan.to_table()   # or iterate for RecordBatches, or pa.RecordBatchReader.from_stream(scan)
    scan.metrics         # pruning and reading counts
    pqsift.inspect("data/part-0.parquet")   # a file's metadata summary (``pqsift inspect``)

The row-selection core the reader is built on:

>>> from pqsift import RowSelection
>>> pages = RowSelection.from_runs([("skip", 100), ("select", 50), ("skip", 50)])
>>> predicate = RowSelection.from_runs([("select", 10), ("skip", 40)])
>>> pages.and_then(predicate).runs()
[('skip', 100), ('select', 10), ('skip', 90)]
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

# First: loads the extension with pqsift's own allocator settings (see the module).
from pqsift import _allocator  # noqa: F401
from pqsift._core import RowSelection, __version__, inspect, parse_filter
from pqsift.caches import apply_environment as _apply_cache_environment
from pqsift.caches import metadata_cache_usage, set_metadata_cache_bytes
from pqsift.errors import (
    CorruptFileError,
    FilterError,
    ObjectNotFoundError,
    PathNotFoundError,
    PqsiftError,
    PqsiftIOError,
    ReadBudgetError,
    SchemaMismatchError,
    SelectionError,
    StorageError,
    TableError,
    TaskPlanError,
    UnsupportedError,
)
from pqsift.expr import Expr, col, field, fn, from_dnf, lit, when
from pqsift.scan import PLANNING_OPTIONS, READ_OPTIONS, FilePlan, Plan, RowGroupPlan, Scan, ScanOptions, scan

__all__ = [
    "PLANNING_OPTIONS",
    "READ_OPTIONS",
    "CorruptFileError",
    "Dataset",
    "Expr",
    "FilePlan",
    "FilterError",
    "ObjectNotFoundError",
    "PathNotFoundError",
    "Plan",
    "PqsiftError",
    "PqsiftIOError",
    "ReadBudgetError",
    "RowGroupPlan",
    "RowSelection",
    "Scan",
    "ScanOptions",
    "SchemaMismatchError",
    "SelectionError",
    "StorageError",
    "TableError",
    "TaskPlanError",
    "UnsupportedError",
    "__version__",
    "col",
    "dataset",
    "field",
    "fn",
    "from_dnf",
    "inspect",
    "lit",
    "metadata_cache_usage",
    "parse_filter",
    "scan",
    "set_metadata_cache_bytes",
    "when",
]

_apply_cache_environment()

if TYPE_CHECKING:
    from pqsift.arrow_dataset import Dataset, dataset


def __getattr__(name: str) -> Any:
    # pyarrow.dataset is slow to import: only a dataset's user should pay for it.
    if name in ("Dataset", "dataset"):
        from pqsift import arrow_dataset

        return getattr(arrow_dataset, name)
    raise AttributeError(f"module 'pqsift' has no attribute {name!r}")
