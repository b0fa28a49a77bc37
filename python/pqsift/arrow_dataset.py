r"""A ``pyarrow.dataset.Dataset`` that reads through pqsift: what DuckDB (and Polars'
``scan_pyarrow_dataset``, and pyarrow code) push a projection and a filter into.

DuckDB scans a pyarrow dataset by calling its ``scanner(columns=..., filter=...)`` with the
query's columns and its filters as a ``pyarrow.compute`` expression; it scans any other
Arrow stream whole. So :func:`pqsift.dataset` returns a dataset whose ``scanner`` plans a
pqsift scan of exactly those columns and rows — the expression written as Spark SQL with
pyarrow's meaning (:mod:`pqsift.arrow_filter`), ``AND`` the dataset's own filter — and
hands its stream back as a ``pyarrow.dataset.Scanner``:

>>> import duckdb, pqsift                                              # doctest: +SKIP
>>> events = pqsift.dataset("events/", filter="kind = 'purchase'")
>>> duckdb.sql("select id, amount from events where amount > 900").fetchall()

The dataset holds no rows itself (it is an empty in-memory dataset of the scan's schema,
the only kind a Python class can extend); the operations that would read those rows
instead of pqsift's — fragments, joins, sorting, a new schema — raise
``NotImplementedError``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds

from pqsift.arrow_filter import filter_for
from pqsift.expr import FilterLike, _quote_identifier
from pqsift.scan import Scan, _scan

__all__ = ["Dataset", "dataset"]

# Scanner arguments that tune pyarrow's own reading; pqsift reads its own way.
_IGNORED_SCANNER_ARGUMENTS = frozenset(
    {"batch_readahead", "fragment_readahead", "use_threads", "cache_metadata", "memory_pool"}
)


def dataset(
    source: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
    columns: Iterable[str] | None = None,
    filter: FilterLike | None = None,  # noqa: A002 - the public name
    **options: Any,
) -> Dataset:
    """A :class:`Dataset` of ``source`` (arguments as :func:`pqsift.scan`'s): its schema is
    known now, nothing is read until it is scanned. ``filter`` (any form :func:`pqsift.scan`
    takes) holds for every scan of it; a scanner's filter narrows it further."""
    return Dataset(source, columns, filter, options)


class Dataset(ds.InMemoryDataset):  # type: ignore[misc]  # pyarrow is untyped
    """See :mod:`pqsift.arrow_dataset`."""

    def __init__(
        self,
        source: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
        columns: Iterable[str] | None,
        filter: FilterLike | Callable[[Any], str] | None,  # noqa: A002 - the public name
        options: dict[str, Any],
    ) -> None:
        self._source = source if isinstance(source, (str, os.PathLike)) else list(source)
        self._columns = None if columns is None else list(columns)
        self._options = dict(options)
        base = _scan(self._source, self._columns, filter, dict(self._options))  # checks it all now
        self._filter: str | None = base.filter
        #: The scan the last scanner (or read) made: its ``filter``, ``columns``,
        #: ``explain()`` and ``metrics`` show what a query pushed down.
        self.last_scan: Scan | None = None
        schema = base.schema
        super().__init__(schema.empty_table())
        # Output column name -> the column as the scan names it (a struct field path comes
        # out under its last name).
        names = self._columns or [_quote_identifier(name) for name in schema.names]
        self._column_of = dict(zip(schema.names, names, strict=True))

    def __reduce__(self) -> tuple[Any, ...]:
        return (Dataset, (self._source, self._columns, self._filter, self._options))

    def __repr__(self) -> str:
        return f"pqsift.Dataset({self._source!r}, filter={self._filter!r})"

    def _scan_of(self, columns: list[str] | None, filter: pc.Expression | None, **options: Any) -> Scan:  # noqa: A002
        """The pqsift scan of the dataset's ``columns`` (output names) and rows matching
        ``filter`` and the dataset's own filter."""
        if isinstance(columns, dict):
            raise NotImplementedError("a pqsift dataset's scanner takes column names, not projection expressions")
        if columns is None:
            wanted = self._columns
        else:
            unknown = [name for name in columns if name not in self._column_of]
            if unknown:
                raise ValueError(f"no column {unknown[0]!r} in the dataset (its columns: {list(self._column_of)})")
            wanted = [self._column_of[name] for name in columns]
        if filter is None:
            condition: Any = self._filter
        elif isinstance(filter, pc.Expression):
            condition = filter_for(filter, also=self._filter)
        else:
            raise TypeError(f"a scanner's filter is a pyarrow.compute.Expression, not {type(filter).__name__}")
        self.last_scan = _scan(self._source, wanted, condition, {**self._options, **options})
        return self.last_scan

    def scanner(
        self,
        columns: list[str] | None = None,
        filter: pc.Expression | None = None,  # noqa: A002 - pyarrow's name
        batch_size: int | None = None,
        **ignored: Any,
    ) -> ds.Scanner:
        """A ``pyarrow.dataset.Scanner`` of ``columns`` (names of the dataset's columns) of
        the rows matching ``filter`` and the dataset's own filter, read by pqsift."""
        unexpected = sorted(set(ignored) - _IGNORED_SCANNER_ARGUMENTS)
        if unexpected:
            raise TypeError(f"a pqsift dataset's scanner does not take {', '.join(unexpected)}")
        scan = self._scan_of(columns, filter, **({} if batch_size is None else {"batch_size": batch_size}))
        return ds.Scanner.from_batches(pa.RecordBatchReader.from_stream(scan))

    def to_table(
        self,
        columns: list[str] | None = None,
        filter: pc.Expression | None = None,  # noqa: A002 - pyarrow's name
        **kwargs: Any,
    ) -> pa.Table:
        """The rows as a ``pyarrow.Table`` (arguments as :meth:`scanner`'s)."""
        return self.scanner(columns, filter, **kwargs).to_table()

    def to_batches(
        self,
        columns: list[str] | None = None,
        filter: pc.Expression | None = None,  # noqa: A002 - pyarrow's name
        **kwargs: Any,
    ) -> Iterator[pa.RecordBatch]:
        """The rows as ``pyarrow.RecordBatch`` es (arguments as :meth:`scanner`'s)."""
        return self.scanner(columns, filter, **kwargs).to_batches()  # type: ignore[no-any-return]

    def head(
        self,
        num_rows: int,
        columns: list[str] | None = None,
        filter: pc.Expression | None = None,  # noqa: A002 - pyarrow's name
        **kwargs: Any,
    ) -> pa.Table:
        """The first ``num_rows`` rows: reading stops once they are found."""
        del kwargs
        return self._scan_of(columns, filter).head(num_rows)

    def count_rows(
        self,
        filter: pc.Expression | None = None,  # noqa: A002 - pyarrow's name
        **kwargs: Any,
    ) -> int:
        """The number of rows; without a filter the plan answers from the footers."""
        del kwargs
        return self._scan_of(None, filter).count_rows()

    def filter(self, expression: pc.Expression) -> Dataset:
        """This dataset with ``expression`` (a ``pyarrow.compute.Expression``) as well."""
        if not isinstance(expression, pc.Expression):
            raise TypeError(f"filter() takes a pyarrow.compute.Expression, not {type(expression).__name__}")
        # The dataset's own scan writes the expression against the schema: one scan, not two.
        return Dataset(self._source, self._columns, filter_for(expression, also=self._filter), self._options)

    def _not_read_through_pqsift(self, *_: Any, **__: Any) -> Any:
        raise NotImplementedError(
            "a pqsift dataset reads through scanner(), to_table(), to_batches(), head() and count_rows(); "
            "read it into a table first (to_table()) for this"
        )

    get_fragments = _not_read_through_pqsift
    join = _not_read_through_pqsift
    join_asof = _not_read_through_pqsift
    replace_schema = _not_read_through_pqsift
    sort_by = _not_read_through_pqsift
    take = _not_read_through_pqsift
