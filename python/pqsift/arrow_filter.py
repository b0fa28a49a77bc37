r"""``pyarrow.compute`` expressions as pqsift filters, with pyarrow's meaning.

``pqsift.scan(source, filter=pc.field("id") < 10)`` takes the filter a pyarrow dataset
would, and keeps the rows pyarrow would keep. The expression is read through pyarrow's own
serialization (the bytes pickling ships: the expression tree in prefix order, literals as a
one-row record batch) — pyarrow's wheels are built without Substrait — and written as Spark
SQL once the table schema is known, because where the two languages differ the columns'
types decide the rewriting:

- pyarrow compares floats as IEEE 754 does (NaN equals nothing, is neither greater nor
  less), Spark orders NaN above every number and equal to itself: ``x > 1`` on a float
  column becomes ``x > 1 AND NOT isnan(x)``;
- ``is_in`` matches NULL as its ``null_matching_behavior`` says (``isin`` matches a listed
  None; an unlisted NULL is false, not NULL);
- ``is_nan`` and ``is_null(nan_is_null=True)`` keep pyarrow's NULL results.

Functions whose meaning differs in ways a rewrite cannot keep (``divide``: integer
division, division by zero; ``cast``: text formats) are refused with a
:class:`~pqsift.FilterError` naming them; so are the non-Kleene ``and``/``or`` (write
``&``/``|``). Nothing outside the expression is consulted.

>>> import pyarrow as pa, pyarrow.compute as pc
>>> schema = pa.schema([("id", pa.int64()), ("x", pa.float64()), ("s", pa.string())])
>>> print(to_filter(pc.field("x") > 1, schema))
`x` > 1 AND NOT isnan(`x`)
>>> print(to_filter((pc.field("id") < 10) & pc.field("s").isin(["a", None]), schema))
`id` < 10 AND (`s` IS NULL OR `s` IN ('a'))
"""

from __future__ import annotations

import ctypes
import datetime
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from pqsift.expr import _ATOM, Expr, field, is_arrow_expression, lit, when

__all__ = ["filter_for", "is_arrow_expression", "to_filter"]


def filter_for(expression: pc.Expression, also: str | None = None) -> Callable[[Any], str]:
    """The function the core calls with the table schema (an object with
    ``__arrow_c_schema__``) to get ``expression`` as Spark SQL text, ``AND`` the filter
    ``also`` (Spark SQL) when given. The expression is read now, so an expression pqsift
    cannot take fails before any file is opened."""
    tree = _read(expression)

    def for_schema(schema: Any) -> str:
        converted = _Writer(pa.schema(schema)).value(tree).to_sql()
        return converted if also is None else f"({also}) AND ({converted})"

    return for_schema


def to_filter(expression: pc.Expression, schema: pa.Schema) -> Expr:
    """``expression`` as a pqsift :class:`~pqsift.Expr` over a table of ``schema``."""
    return _Writer(schema).value(_read(expression))


# ---------------------------------------------------------------------------- reading


@dataclass(frozen=True)
class _Field:
    path: tuple[str, ...]


@dataclass(frozen=True)
class _Literal:
    value: pa.Scalar


@dataclass(frozen=True)
class _Call:
    function: str
    arguments: tuple[_Node, ...]
    options: pa.StructScalar | None

    def option(self, name: str) -> Any:
        """The function option ``name`` as a Python value (None when absent)."""
        if self.options is None or name not in {f.name for f in self.options.type}:
            return None
        return self.options[name].as_py()


_Node = _Field | _Literal | _Call


def _read(expression: pc.Expression) -> _Node:
    if not isinstance(expression, pc.Expression):
        raise TypeError(f"expected a pyarrow.compute.Expression, got {type(expression).__name__}")
    try:
        reduced = expression.__reduce__()
    except pa.ArrowNotImplementedError as e:
        # pc.field(0): pyarrow serializes fields by name only.
        raise TypeError(f"pqsift takes pyarrow expressions whose fields are named ({e}): {expression}") from None
    buffer = reduced[1][0] if isinstance(reduced, tuple) and len(reduced) == 2 and reduced[1] else None
    if not isinstance(buffer, pa.Buffer):
        raise TypeError(f"this pyarrow version serializes expressions in a form pqsift does not read: {expression}")
    reader = pa.ipc.open_file(buffer)
    literals = reader.get_batch(0) if reader.num_record_batches else None
    entries = _ordered_metadata(reader.schema)
    position = 0

    def take() -> tuple[str, str]:
        nonlocal position
        if position >= len(entries):
            raise TypeError(f"pyarrow's serialization of {expression} ended early")
        position += 1
        return entries[position - 1]

    def literal(index: str) -> pa.Scalar:
        assert literals is not None, "a literal without the literals' batch"
        return literals.column(int(index))[0]

    def node() -> _Node:
        nonlocal position
        key, value = take()
        if key == "literal":
            return _Literal(literal(value))
        if key == "field_ref":
            return _Field((value,))
        if key == "nested_field_ref":
            names = []
            for _ in range(int(value)):
                part_key, part = take()
                if part_key != "field_ref":
                    raise TypeError(f"pyarrow's serialization of {expression}: {part_key!r} inside a nested field")
                names.append(part)
            return _Field(tuple(names))
        if key == "call":
            arguments: list[_Node] = []
            options = None
            while True:
                if position >= len(entries):
                    raise TypeError(f"pyarrow's serialization of {expression} ended inside {value}")
                next_key, next_value = entries[position]
                if next_key == "end":
                    position += 1
                    return _Call(value, tuple(arguments), options)
                if next_key == "options":
                    position += 1
                    options = literal(next_value)
                else:
                    arguments.append(node())
        raise TypeError(f"pyarrow's serialization of {expression}: unexpected {key!r}")

    tree = node()
    if position != len(entries):
        raise TypeError(f"pyarrow's serialization of {expression} has entries after its end")
    return tree


class _CArrowSchema(ctypes.Structure):
    # The Arrow C data interface's ArrowSchema (a stable ABI).
    _fields_ = [
        ("format", ctypes.c_char_p),
        ("name", ctypes.c_char_p),
        ("metadata", ctypes.c_void_p),
        ("flags", ctypes.c_int64),
        ("n_children", ctypes.c_int64),
        ("children", ctypes.c_void_p),
        ("dictionary", ctypes.c_void_p),
        ("release", ctypes.c_void_p),
        ("private_data", ctypes.c_void_p),
    ]


_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = ctypes.c_void_p
_capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


def _ordered_metadata(schema: pa.Schema) -> list[tuple[str, str]]:
    """The schema's key-value metadata in order, repeated keys kept: ``Schema.metadata``
    is a dict, so it is read from the C data interface, whose encoding is an int32 count,
    then per pair an int32 length and the key's bytes, an int32 length and the value's."""
    capsule = schema.__arrow_c_schema__()
    exported = _CArrowSchema.from_address(_capsule_pointer(capsule, b"arrow_schema"))
    if not exported.metadata:
        return []
    base = exported.metadata

    def int32(offset: int) -> int:
        return ctypes.c_int32.from_address(base + offset).value

    def text(offset: int, length: int) -> str:
        return ctypes.string_at(base + offset, length).decode()

    pairs = []
    offset = 4
    for _ in range(int32(0)):
        key_length = int32(offset)
        key = text(offset + 4, key_length)
        offset += 4 + key_length
        value_length = int32(offset)
        value = text(offset + 4, value_length)
        offset += 4 + value_length
        pairs.append((key, value))
    del capsule  # released (and the metadata freed) only now
    return pairs


# ---------------------------------------------------------------------------- writing

_COMPARISONS = {
    "equal": "__eq__",
    "not_equal": "__ne__",
    "less": "__lt__",
    "less_equal": "__le__",
    "greater": "__gt__",
    "greater_equal": "__ge__",
}
_FLIPPED = {
    "equal": "equal",
    "not_equal": "not_equal",
    "less": "greater",
    "less_equal": "greater_equal",
    "greater": "less",
    "greater_equal": "less_equal",
}
_ARITHMETIC: dict[str, Callable[[Expr, Expr], Expr]] = {
    "add": lambda a, b: a + b,
    "subtract": lambda a, b: a - b,
    "multiply": lambda a, b: a * b,
}
_MATCH_SUBSTRING = {"starts_with": "startswith", "ends_with": "endswith", "match_substring": "contains"}
# is_in's null_matching_behavior (SetLookupOptions), by its value.
_MATCH, _SKIP = 0, 1


class _Writer:
    """Writes a read expression as a pqsift :class:`Expr` over ``schema``."""

    def __init__(self, schema: pa.Schema) -> None:
        self.schema = schema

    def value(self, node: _Node) -> Expr:
        if isinstance(node, _Field):
            self.type_of(node)  # a column the table lacks fails here, by its pyarrow name
            return field(*node.path)
        if isinstance(node, _Literal):
            return lit(_python_value(node.value))
        return self.call(node)

    def call(self, node: _Call) -> Expr:
        name = node.function
        base = name.removesuffix("_checked")
        args = node.arguments
        if name in ("and_kleene", "or_kleene"):
            left, right = (self.value(a) for a in args)
            return left & right if name == "and_kleene" else left | right
        if name == "invert":
            return ~self.value(args[0])
        if name in _COMPARISONS:
            return self.comparison(name, args[0], args[1])
        if name == "is_null":
            target = self.value(args[0])
            if node.option("nan_is_null") and self.is_float(args[0]):
                return target.is_null() | _nan_or_null(target)
            return target.is_null()
        if name == "is_valid":
            return self.value(args[0]).is_not_null()
        if name == "is_nan":
            return _nan_or_null(self.value(args[0]))
        if name == "is_in":
            return self.is_in(args[0], node)
        if base in _ARITHMETIC:
            return _ARITHMETIC[base](self.value(args[0]), self.value(args[1]))
        if base == "negate":
            return -self.value(args[0])
        if base == "abs":
            return self.value(args[0]).abs()
        if name in _MATCH_SUBSTRING:
            if node.option("ignore_case"):
                raise ValueError(f"pyarrow's {name} with ignore_case=True has no pqsift equivalent")
            method = getattr(self.value(args[0]), _MATCH_SUBSTRING[name])
            return method(node.option("pattern"))  # type: ignore[no-any-return]
        if name == "if_else":
            return self.if_else(*args)
        hint = {
            "and": " (the non-Kleene and: write & for SQL's AND)",
            "and_": " (the non-Kleene and: write & for SQL's AND)",
            "or": " (the non-Kleene or: write | for SQL's OR)",
            "or_": " (the non-Kleene or: write | for SQL's OR)",
            "divide": " (pyarrow divides integers as integers and fails on zero; write the filter as Spark SQL)",
            "cast": " (pyarrow's casts are not Spark's; write the filter as Spark SQL)",
        }.get(base, "")
        raise ValueError(f"pyarrow function {name!r} is not supported in a pqsift filter{hint}")

    def comparison(self, name: str, left: _Node, right: _Node) -> Expr:
        if isinstance(left, _Literal) and not isinstance(right, _Literal):
            name, left, right = _FLIPPED[name], right, left
        a, b = self.value(left), self.value(right)
        compared: Expr = getattr(a, _COMPARISONS[name])(b)
        literal_nan = [side for side in (left, right) if isinstance(side, _Literal) and _is_nan_scalar(side.value)]
        if literal_nan:
            # IEEE 754: NaN equals nothing and orders with nothing; NULL stays NULL.
            others = [v for side, v in ((left, a), (right, b)) if side not in literal_nan]
            if not others:
                return lit(name == "not_equal")
            other = others[0]
            return other.is_not_null() | lit(None) if name == "not_equal" else other.is_null() & lit(None)
        floats = [v for side, v in ((left, a), (right, b)) if not isinstance(side, _Literal) and self.is_float(side)]
        if not floats:
            return compared
        if isinstance(right, _Literal):
            # Spark orders NaN above every number: only > and >= let it through.
            return compared & ~floats[0].isnan() if name in ("greater", "greater_equal") else compared
        either_null = a.is_null() | b.is_null()
        either_nan = a.isnan() | b.isnan()
        return when(either_null, None).when(either_nan, name == "not_equal").otherwise(compared)

    def if_else(self, condition: _Node, then: _Node, otherwise: _Node) -> Expr:
        # DuckDB writes `x IN (...)` as if_else(is_valid(x), is_in(x, ...), null): with no
        # NULL listed that is Spark's IN itself, which the pruning stages read.
        if (
            isinstance(condition, _Call)
            and condition.function == "is_valid"
            and isinstance(then, _Call)
            and then.function == "is_in"
            and then.arguments[0] == condition.arguments[0]
            and isinstance(otherwise, _Literal)
            and not otherwise.value.is_valid
        ):
            values = self.in_values(then)
            if None not in values and values:
                return self.value(then.arguments[0]).isin(values)
        chosen = self.value(condition)
        # pyarrow's if_else is NULL where the condition is; CASE would take ELSE.
        return when(chosen.is_null(), None).when(chosen, self.value(then)).otherwise(self.value(otherwise))

    def in_values(self, node: _Call) -> list[Any]:
        value_set = node.options["value_set"] if node.options is not None else None
        if not isinstance(value_set, pa.ListScalar) or value_set.values is None:
            raise ValueError("pyarrow's is_in without a value_set")
        kind = value_set.values.type
        if any(is_kind(kind) for is_kind in _AS_PYTHON):
            # Each as _python_value gives it, without a pyarrow scalar per value.
            values: list[Any] = value_set.values.to_pylist()
        else:
            values = [_python_value(v) for v in value_set.values]
        if pa.types.is_floating(kind) and any(v == 0 for v in values if v is not None):
            raise ValueError(
                "pyarrow's is_in tells -0.0 from 0.0 (it matches bits), which Spark SQL's IN cannot; "
                "compare with == instead"
            )
        return values

    def is_in(self, target_node: _Node, node: _Call) -> Expr:
        target = self.value(target_node)
        values = self.in_values(node)
        behavior = node.option("null_matching_behavior")
        if behavior is None:  # pyarrow before null_matching_behavior: skip_nulls
            behavior = _SKIP if node.option("skip_nulls") else _MATCH
        present = [v for v in values if v is not None]
        has_null = len(present) < len(values)
        listed = target.isin(present) if present else None
        if behavior == _MATCH:
            if has_null:
                return target.is_null() | listed if listed is not None else target.is_null()
            return target.is_not_null() & listed if listed is not None else lit(False)
        if behavior == _SKIP:
            return target.is_not_null() & listed if listed is not None else lit(False)
        # EMIT_NULL and INCONCLUSIVE: not settable from pyarrow's Python API.
        raise ValueError(f"pyarrow's is_in: null_matching_behavior {behavior!r} is not supported")

    def is_float(self, node: _Node) -> bool:
        """Whether ``node`` may be NaN: a float column, or arithmetic over one."""
        if isinstance(node, _Literal):
            return bool(pa.types.is_floating(node.value.type))
        if isinstance(node, _Field):
            return bool(pa.types.is_floating(self.type_of(node)))
        return any(self.is_float(a) for a in node.arguments) and node.function.removesuffix("_checked") in (
            *_ARITHMETIC,
            "negate",
            "abs",
        )

    def type_of(self, node: _Field) -> pa.DataType:
        fields: Sequence[pa.Field] = list(self.schema)
        found: pa.Field | None = None
        for part in node.path:
            found = _field_named(fields, part)
            if found is None:
                shown = ".".join(node.path)
                raise ValueError(f"pyarrow field {shown!r}: no such column in the table's schema")
            fields = list(found.type) if pa.types.is_struct(found.type) else []
        assert found is not None
        return found.type


def _field_named(fields: Sequence[pa.Field], name: str) -> pa.Field | None:
    exact = [f for f in fields if f.name == name]
    if exact:
        return exact[0]
    # The table resolves names as Spark does (case-insensitively unless asked otherwise).
    folded = [f for f in fields if f.name.lower() == name.lower()]
    return folded[0] if len(folded) == 1 else None


def _nan_or_null(target: Expr) -> Expr:
    # pyarrow's is_nan(NULL) is NULL, Spark's isnan(NULL) false.
    return target.isnan() | target.is_null() & lit(None)


def _is_nan_scalar(value: pa.Scalar) -> bool:
    if not pa.types.is_floating(value.type) or not value.is_valid:
        return False
    number = value.as_py()
    return isinstance(number, float) and number != number


# Literal types whose Python value (``as_py``) lit() writes with the same meaning.
_AS_PYTHON = (
    pa.types.is_boolean,
    pa.types.is_integer,
    pa.types.is_floating,
    pa.types.is_decimal,
    pa.types.is_date,
    pa.types.is_string,
    pa.types.is_large_string,
    pa.types.is_string_view,
    pa.types.is_binary,
    pa.types.is_large_binary,
    pa.types.is_binary_view,
    pa.types.is_fixed_size_binary,
)


def _python_value(value: pa.Scalar) -> Any:
    """A pyarrow literal as the Python value :func:`pqsift.expr.lit` writes with the same
    meaning."""
    kind = value.type
    if not value.is_valid:
        return None
    if pa.types.is_timestamp(kind):
        micros = _to_micros(value.cast(pa.int64()).as_py(), kind.unit)
        if micros is None:
            raise ValueError(f"pyarrow literal {value}: pqsift compares timestamps to the microsecond")
        if kind.tz is None:
            return _LocalTimestamp(micros)
        return datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC) + datetime.timedelta(microseconds=micros)
    if any(is_kind(kind) for is_kind in _AS_PYTHON):
        return value.as_py()
    if pa.types.is_null(kind):
        return None
    raise ValueError(f"pyarrow literal of type {kind} is not supported in a pqsift filter")


def _to_micros(count: int, unit: str) -> int | None:
    per_second = {"s": 1, "ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}[unit]
    if per_second <= 1_000_000:
        return count * (1_000_000 // per_second)
    whole, rest = divmod(count, 1_000)
    return whole if rest == 0 else None


class _LocalTimestamp(Expr):
    """A timestamp without a time zone: Spark's ``TIMESTAMP_NTZ`` literal, the wall-clock
    time pyarrow compares a naive timestamp column with."""

    def __init__(self, micros: int) -> None:
        moment = datetime.datetime(1970, 1, 1) + datetime.timedelta(microseconds=micros)
        super().__init__(f"TIMESTAMP_NTZ '{moment.isoformat(sep=' ')}'", _ATOM)
