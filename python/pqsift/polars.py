"""Polars reads through pqsift: :func:`scan` is a ``polars.LazyFrame`` whose projection,
filters and row limit reach pqsift's planning (a Polars IO plugin).

>>> import polars as pl                                              # doctest: +SKIP
>>> import pqsift.polars
>>> frame = pqsift.polars.scan("events/")                            # doctest: +SKIP
>>> frame.filter(pl.col("amount") > 900).select("id", "note").head(5).collect()  # doctest: +SKIP

What Polars hands the source: the columns the query needs, its predicate, and a row limit.
The columns become pqsift's projection. Each conjunct of the predicate that pqsift
evaluates with the same result as Polars — comparisons of a column with a literal of a
matching type, ``is_in``, ``is_between``, ``is_null``, ``is_not_null``, ``&``, ``|``,
``~`` — becomes pqsift's filter, so it prunes row groups and pages and decodes the other
columns for the surviving rows only; Polars then applies its whole predicate to what
pqsift returns, so a conjunct pqsift does not take (a float32 column against a float
literal, where Polars rounds the literal and Spark widens the column; a function pqsift
does not know) still filters, exactly. The limit is pqsift's when the whole predicate was
taken. The predicate is read from Polars' serialized expression (its JSON form), which
Polars marks unstable: what this module cannot read, it leaves to Polars.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from pqsift.expr import Expr, FilterLike, field, filter_sql
from pqsift.scan import ScanOptions
from pqsift.scan import scan as _pqsift_scan

if TYPE_CHECKING:
    from typing import Unpack

    import polars as pl

__all__ = ["scan"]


def scan(
    source: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
    columns: Iterable[str] | None = None,
    filter: FilterLike | None = None,  # noqa: A002 - the public name
    **options: Unpack[ScanOptions],
) -> pl.LazyFrame:
    """A ``polars.LazyFrame`` of ``source`` read by pqsift (arguments as
    :func:`pqsift.scan`'s): Polars' projection, predicate and limit are pushed into each
    read (see the module's documentation). The schema is known without reading rows."""
    import polars
    from polars.io.plugins import register_io_source

    base_filter = filter_sql(filter)
    column_list = None if columns is None else list(columns)
    arrow_schema: pa.Schema = _pqsift_scan(source, column_list, base_filter, **options).schema
    polars_schema = polars.from_arrow(arrow_schema.empty_table()).schema  # type: ignore[union-attr]

    def read(
        with_columns: list[str] | None, predicate: pl.Expr | None, n_rows: int | None, batch_size: int | None
    ) -> Iterator[pl.DataFrame]:
        pushed, complete = (None, True) if predicate is None else pushed_filter(predicate, arrow_schema)
        conjuncts = [f"({text})" for text in (base_filter, pushed) if text is not None]
        read_options: dict[str, Any] = dict(options)
        if n_rows is not None and complete:
            limit = read_options.get("limit")
            read_options["limit"] = n_rows if limit is None else min(n_rows, limit)
        if batch_size is not None and "batch_size" not in read_options:
            read_options["batch_size"] = batch_size
        wanted = column_list if with_columns is None else [_column_name(name) for name in with_columns]
        reading = _pqsift_scan(source, wanted, " AND ".join(conjuncts) or None, **read_options)
        for batch in reading:
            frame = polars.from_arrow(batch)
            assert isinstance(frame, polars.DataFrame)
            yield frame if predicate is None else frame.filter(predicate)

    return register_io_source(read, schema=polars_schema, explain_name="pqsift")


def _column_name(name: str) -> str:
    """A Polars column name as :func:`pqsift.scan`'s ``columns`` reads it (a name with a dot
    back-quoted: Polars' names are whole names)."""
    return field(name).to_sql()


def pushed_filter(predicate: pl.Expr, schema: pa.Schema) -> tuple[str | None, bool]:
    """The Spark SQL of the conjuncts of ``predicate`` pqsift evaluates as Polars does, and
    whether that is all of them.

    >>> import polars as pl
    >>> schema = pa.schema([("id", pa.int64()), ("x", pa.float32())])
    >>> pushed_filter((pl.col("id") > 3) & (pl.col("x") < 1.5), schema)
    ('`id` > 3', False)
    """
    try:
        tree = json.loads(predicate.meta.serialize(format="json"))
    except Exception:  # noqa: BLE001 - a Polars without this form: nothing pushed, Polars filters
        return None, False
    types = {name: schema.field(name).type for name in schema.names}
    conjuncts = list(_conjuncts(tree))
    converted = [_convert(node, types) for node in conjuncts]
    taken = [expr for expr in converted if expr is not None]
    if not taken:
        return None, False
    combined = taken[0]
    for expr in taken[1:]:
        combined = combined & expr
    return combined.to_sql(), len(taken) == len(conjuncts)


def _conjuncts(node: Any) -> Iterator[Any]:
    binary = node.get("BinaryExpr") if isinstance(node, dict) else None
    if binary is not None and binary.get("op") in ("And", "LogicalAnd"):
        yield from _conjuncts(binary["left"])
        yield from _conjuncts(binary["right"])
    else:
        yield node


_COMPARISONS = {"Eq": "__eq__", "NotEq": "__ne__", "Lt": "__lt__", "LtEq": "__le__", "Gt": "__gt__", "GtEq": "__ge__"}
_FLIPPED = {"Eq": "Eq", "NotEq": "NotEq", "Lt": "Gt", "LtEq": "GtEq", "Gt": "Lt", "GtEq": "LtEq"}
_NO_VALUE = object()


def _convert(node: Any, types: dict[str, pa.DataType]) -> Expr | None:
    """``node`` (Polars' JSON form) as a pqsift :class:`Expr` of the same result, or None."""
    if not isinstance(node, dict) or len(node) != 1:
        return None
    ((kind, body),) = node.items()
    if kind == "Column":
        return field(body) if isinstance(body, str) and pa.types.is_boolean(types.get(body, pa.null())) else None
    if kind == "BinaryExpr":
        op = body.get("op")
        if op in ("And", "LogicalAnd", "Or", "LogicalOr"):
            left, right = _convert(body["left"], types), _convert(body["right"], types)
            if left is None or right is None:
                return None
            return left & right if op in ("And", "LogicalAnd") else left | right
        if op in _COMPARISONS:
            column, value = _column(body["left"]), _literal(body["right"])
            if column is None:
                column, value, op = _column(body["right"]), _literal(body["left"]), _FLIPPED[op]
            if column is None or not _comparable(types.get(column), value):
                return None
            compared: Expr = getattr(field(column), _COMPARISONS[op])(value)
            return compared
        return None
    if kind == "Function":
        return _function(body, types)
    return None


def _function(body: dict[str, Any], types: dict[str, pa.DataType]) -> Expr | None:
    function, inputs = body.get("function"), body.get("input") or []
    boolean = function.get("Boolean") if isinstance(function, dict) else None
    if boolean in ("IsNull", "IsNotNull") and len(inputs) == 1:
        column = _column(inputs[0])
        if column is None or column not in types:
            return None
        return field(column).is_null() if boolean == "IsNull" else field(column).is_not_null()
    if boolean == "Not" and len(inputs) == 1:
        inner = _convert(inputs[0], types)
        return None if inner is None else ~inner
    if isinstance(boolean, dict) and "IsIn" in boolean and len(inputs) == 2:
        column, values = _column(inputs[0]), _list_literal(inputs[1])
        if column is None or values is None or boolean["IsIn"].get("nulls_equal"):
            return None
        present = [value for value in values if value is not None]  # a null in the list matches nothing
        if not present or not all(_comparable(types.get(column), value) for value in present):
            return None
        return field(column).isin(present)
    if isinstance(boolean, dict) and "IsBetween" in boolean and len(inputs) == 3:
        column, low, high = _column(inputs[0]), _literal(inputs[1]), _literal(inputs[2])
        kind = types.get(column) if column is not None else None
        if column is None or not (_comparable(kind, low) and _comparable(kind, high)):
            return None
        closed = boolean["IsBetween"].get("closed")
        target = field(column)
        lower: Expr = target >= low if closed in ("Both", "Left") else target > low
        upper: Expr = target <= high if closed in ("Both", "Right") else target < high
        return lower & upper
    return None


def _column(node: Any) -> str | None:
    if isinstance(node, dict) and isinstance(node.get("Column"), str):
        return str(node["Column"])
    return None


def _literal(node: Any) -> Any:
    """A literal's Python value (``_NO_VALUE`` when the node is none, or of a kind not read)."""
    literal = node.get("Literal") if isinstance(node, dict) else None
    if not isinstance(literal, dict) or len(literal) != 1:
        return _NO_VALUE
    ((kind, body),) = literal.items()
    if not isinstance(body, dict) or len(body) != 1:
        return _NO_VALUE
    ((type_name, value),) = body.items()
    if kind == "Dyn" and type_name in ("Int", "Float"):
        return value
    if kind == "Scalar" and (type_name in ("String", "Boolean") or type_name.startswith(("Int", "UInt", "Float"))):
        return value
    return _NO_VALUE


def _list_literal(node: Any) -> list[Any] | None:
    """The values of a list literal (an Arrow IPC stream of one column, in Polars' form)."""
    literal = node.get("Literal") if isinstance(node, dict) else None
    scalar = literal.get("Scalar") if isinstance(literal, dict) else None
    data = scalar.get("List") if isinstance(scalar, dict) else None
    if not isinstance(data, list):
        return None
    try:
        table = pa.ipc.open_stream(bytes(data)).read_all()
    except (pa.ArrowException, ValueError):
        return None
    if table.num_columns != 1:
        return None
    values: list[Any] = table.column(0).to_pylist()
    return values


def _comparable(column_type: pa.DataType | None, value: Any) -> bool:
    """Whether pqsift compares a column of ``column_type`` with ``value`` as Polars does.
    Not a float32 column (Polars rounds the literal to float32, Spark widens the column),
    nor types whose literals pqsift and Polars may read differently (dates, times)."""
    if column_type is None or value is _NO_VALUE or value is None:
        return False
    if isinstance(value, bool):
        return bool(pa.types.is_boolean(column_type))
    if isinstance(value, int):
        return bool(pa.types.is_integer(column_type) or pa.types.is_float64(column_type))
    if isinstance(value, float):
        return bool(pa.types.is_float64(column_type))
    if isinstance(value, str):
        return bool(
            pa.types.is_string(column_type)
            or pa.types.is_large_string(column_type)
            or pa.types.is_string_view(column_type)
        )
    return False
