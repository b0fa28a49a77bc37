r"""Build pqsift filters in Python; they render to Spark SQL text.

The builder is pure Python: an :class:`Expr` only knows its Spark SQL text, which the
native reader parses (``pqsift`` filters are Spark SQL, with Spark's semantics). The text
is exactly what you would write in a Spark ``WHERE`` clause, so ``str(expr)`` can be pasted
into Spark to cross-check results.

>>> import datetime
>>> from pqsift.expr import col, lit
>>> f = (col("price") * 2 >= 10) & col("name").startswith("a_") & ~col("deleted")
>>> print(f)
`price` * 2 >= 10 AND `name` LIKE 'a\\_%' AND NOT `deleted`
>>> print(col("event.day").between(datetime.date(2024, 1, 1), "2024-01-31"))
`event`.`day` BETWEEN DATE '2024-01-01' AND '2024-01-31'

Python's ``and`` / ``or`` / ``not`` and chained comparisons (``a < b < c``) would silently
drop parts of a filter, so converting an :class:`Expr` to ``bool`` raises ``TypeError``:
use ``&``, ``|``, ``~`` and parenthesise comparisons (``(a > 1) & (b < 2)``).
"""

from __future__ import annotations

import datetime
import decimal
import math
import re
import sys
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, TypeAlias, cast

import pyarrow as pa

if TYPE_CHECKING:
    # pyarrow.compute is slow to import: a process that reads without a pyarrow
    # expression (a Spark task, the command line) does without it.
    import pyarrow.compute as pc

__all__ = ["Expr", "FilterLike", "LiteralValue", "col", "field", "filter_sql", "fn", "from_dnf", "lit", "when"]

#: Python values :func:`lit` accepts (and operators accept in place of an :class:`Expr`).
LiteralValue = (
    None
    | bool
    | int
    | float
    | decimal.Decimal
    | str
    | bytes
    | bytearray
    | memoryview
    | datetime.date
    | datetime.datetime
)

# Binding strength of the outermost operator, as pqsift's Rust Display uses it: an operand
# is parenthesised unless it binds at least as tightly as its position needs.
_OR = 1
_AND = 2
_NOT = 3
_PREDICATE = 4  # comparisons, IN, BETWEEN, LIKE, IS NULL: they do not chain
_ADDITIVE = 5
_MULTIPLICATIVE = 6
_UNARY = 7
_ATOM = 8

_INT_MIN, _INT_MAX = -(2**31), 2**31 - 1
_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1
_MAX_DECIMAL_DIGITS = 38

_TYPE_NAME = re.compile(r"^[A-Za-z_]+(\(\s*\d+\s*(,\s*\d+\s*)?\))?$")


class Expr:
    """A filter expression: a column, a literal, or an operator applied to expressions.

    Build one with :func:`col` and :func:`lit` and Python operators; ``str(expr)`` or
    :meth:`to_sql` gives its Spark SQL text.

    >>> e = (col("a") + 1 > col("b")) | col("c").is_null()
    >>> e.to_sql()
    '`a` + 1 > `b` OR `c` IS NULL'
    """

    __slots__ = ("_precedence", "_sql")

    # Comparisons build expressions, so an Expr cannot be a dict key or a set member.
    __hash__ = None  # type: ignore[assignment]

    def __init__(self, sql: str, precedence: int) -> None:
        """Wrap already-rendered SQL text; use :func:`col` and :func:`lit` instead."""
        self._sql = sql
        self._precedence = precedence

    def to_sql(self) -> str:
        """The Spark SQL text of the expression.

        >>> col("x").is_not_null().to_sql()
        '`x` IS NOT NULL'
        """
        return self._sql

    def __str__(self) -> str:
        return self._sql

    def __repr__(self) -> str:
        return f"Expr({self._sql!r})"

    def __bool__(self) -> bool:
        raise TypeError(
            "a pqsift Expr has no truth value: combine filters with & | ~ instead of "
            "and / or / not, and write a < b < c as (a < b) & (b < c)"
        )

    # ------------------------------------------------------------------ rendering help

    def _operand(self, min_precedence: int) -> str:
        """This expression's text as an operand needing ``min_precedence``."""
        if self._precedence >= min_precedence:
            return self._sql
        return f"({self._sql})"

    def _predicate(self, text: str) -> Expr:
        return Expr(text, _PREDICATE)

    def _compare(self, op: str, other: object) -> Expr:
        right = _to_expr(other)
        return self._predicate(f"{self._operand(_PREDICATE + 1)} {op} {right._operand(_PREDICATE + 1)}")

    def _arithmetic(self, op: str, other: object, reflected: bool = False) -> Expr:
        left, right = (_to_expr(other), self) if reflected else (self, _to_expr(other))
        level = _ADDITIVE if op in ("+", "-") else _MULTIPLICATIVE
        # Left-associative: the right operand needs one level more.
        return Expr(f"{left._operand(level)} {op} {right._operand(level + 1)}", level)

    # ------------------------------------------------------------------ comparisons

    def __eq__(self, other: object) -> Expr:  # type: ignore[override]
        """``=``: NULL when either side is NULL."""
        return self._compare("=", other)

    def __ne__(self, other: object) -> Expr:  # type: ignore[override]
        """``!=``: NULL when either side is NULL."""
        return self._compare("!=", other)

    def __lt__(self, other: object) -> Expr:
        return self._compare("<", other)

    def __le__(self, other: object) -> Expr:
        return self._compare("<=", other)

    def __gt__(self, other: object) -> Expr:
        return self._compare(">", other)

    def __ge__(self, other: object) -> Expr:
        return self._compare(">=", other)

    def eq_null_safe(self, other: object) -> Expr:
        """``<=>``: equality where NULL equals NULL; never NULL itself.

        >>> col("a").eq_null_safe(None).to_sql()
        '`a` <=> NULL'
        """
        return self._compare("<=>", other)

    # ------------------------------------------------------------------ boolean logic

    def __and__(self, other: object) -> Expr:
        """``AND`` (three-valued)."""
        right = _to_expr(other)
        return Expr(f"{self._operand(_AND)} AND {right._operand(_AND + 1)}", _AND)

    def __rand__(self, other: object) -> Expr:
        return _to_expr(other).__and__(self)

    def __or__(self, other: object) -> Expr:
        """``OR`` (three-valued)."""
        right = _to_expr(other)
        return Expr(f"{self._operand(_OR)} OR {right._operand(_OR + 1)}", _OR)

    def __ror__(self, other: object) -> Expr:
        return _to_expr(other).__or__(self)

    def __invert__(self) -> Expr:
        """``NOT`` (three-valued)."""
        return Expr(f"NOT {self._operand(_NOT)}", _NOT)

    # ------------------------------------------------------------------ predicates

    def isin(self, *values: object) -> Expr:
        """``IN``: ``col("a").isin([1, 2])`` or ``col("a").isin(1, 2)``; the values may
        also be a pyarrow array (the semi-join's ids from another table) or a numpy array
        of booleans, numbers or strings.

        >>> col("a").isin([1, 2, None]).to_sql()
        '`a` IN (1, 2, NULL)'
        >>> import pyarrow as pa
        >>> col("a").isin(pa.array([3, 4], pa.int64())).to_sql()
        '`a` IN (3, 4)'
        """
        items: list[object]
        if len(values) == 1 and isinstance(values[0], (list, tuple, set, frozenset)):
            items = list(values[0])
        elif len(values) == 1 and _is_array(values[0]):
            items = _array_items(values[0])
        else:
            items = list(values)
        if not items:
            raise ValueError("isin() needs at least one value: SQL has no empty IN list")
        # A semi-join's keys, all strings or all integers: written at once, without an Expr
        # per item (integers that are all INTs as Python writes a list of them).
        kinds = set(map(type, items))
        if kinds == {str}:
            rendered = ", ".join(map(_string_literal, cast("list[str]", items)))
        elif kinds == {int}:
            integers = cast("list[int]", items)
            if min(integers) >= _INT_MIN and max(integers) <= _INT_MAX:
                rendered = repr(integers)[1:-1]
            else:
                rendered = ", ".join(map(_int_sql, integers))
        else:
            rendered = ", ".join(_to_expr(item).to_sql() for item in items)
        return self._predicate(f"{self._operand(_PREDICATE + 1)} IN ({rendered})")

    def is_null(self) -> Expr:
        """``IS NULL`` (NaN is not NULL).

        >>> col("a").is_null().to_sql()
        '`a` IS NULL'
        """
        return self._predicate(f"{self._operand(_PREDICATE + 1)} IS NULL")

    def is_not_null(self) -> Expr:
        """``IS NOT NULL``."""
        return self._predicate(f"{self._operand(_PREDICATE + 1)} IS NOT NULL")

    def between(self, low: object, high: object) -> Expr:
        """``BETWEEN low AND high``, inclusive on both ends.

        >>> col("a").between(1, 10).to_sql()
        '`a` BETWEEN 1 AND 10'
        """
        low_sql = _to_expr(low)._operand(_PREDICATE + 1)
        high_sql = _to_expr(high)._operand(_PREDICATE + 1)
        return self._predicate(f"{self._operand(_PREDICATE + 1)} BETWEEN {low_sql} AND {high_sql}")

    def like(self, pattern: str) -> Expr:
        r"""``LIKE pattern``: ``%`` any run, ``_`` one character, ``\\`` escapes them.

        >>> col("s").like("a%").to_sql()
        "`s` LIKE 'a%'"
        """
        if not isinstance(pattern, str):
            raise TypeError(f"like() needs a str pattern, got {type(pattern).__name__}")
        return self._predicate(f"{self._operand(_PREDICATE + 1)} LIKE {_string_literal(pattern)}")

    def startswith(self, prefix: str) -> Expr:
        r"""Whether a string starts with ``prefix`` (a LIKE with the prefix escaped).

        >>> print(col("s").startswith("50%"))
        `s` LIKE '50\\%%'
        """
        if not isinstance(prefix, str):
            raise TypeError(f"startswith() needs a str prefix, got {type(prefix).__name__}")
        escaped = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        return self.like(escaped + "%")

    def cast(self, type_name: str) -> Expr:
        """``CAST(expr AS type_name)`` with a Spark type name such as ``"BIGINT"`` or
        ``"DECIMAL(10,2)"``.

        >>> col("a").cast("bigint").to_sql()
        'CAST(`a` AS BIGINT)'
        """
        return Expr(f"CAST({self._sql} AS {_type_name(type_name)})", _ATOM)

    def try_cast(self, type_name: str) -> Expr:
        """``TRY_CAST(expr AS type_name)``: the cast, NULL for a value it would raise for.

        >>> col("code").try_cast("int").to_sql()
        'TRY_CAST(`code` AS INT)'
        """
        return Expr(f"TRY_CAST({self._sql} AS {_type_name(type_name)})", _ATOM)

    # ------------------------------------------------------------------ arithmetic

    def __add__(self, other: object) -> Expr:
        return self._arithmetic("+", other)

    def __radd__(self, other: object) -> Expr:
        return self._arithmetic("+", other, reflected=True)

    def __sub__(self, other: object) -> Expr:
        return self._arithmetic("-", other)

    def __rsub__(self, other: object) -> Expr:
        return self._arithmetic("-", other, reflected=True)

    def __mul__(self, other: object) -> Expr:
        return self._arithmetic("*", other)

    def __rmul__(self, other: object) -> Expr:
        return self._arithmetic("*", other, reflected=True)

    def __truediv__(self, other: object) -> Expr:
        """``/``: always fractional in Spark (integers divide as DOUBLE)."""
        return self._arithmetic("/", other)

    def __rtruediv__(self, other: object) -> Expr:
        return self._arithmetic("/", other, reflected=True)

    def __mod__(self, other: object) -> Expr:
        """``%``: the remainder with the dividend's sign; a zero divisor is an error (ANSI)."""
        return self._arithmetic("%", other)

    def __rmod__(self, other: object) -> Expr:
        return self._arithmetic("%", other, reflected=True)

    def __neg__(self) -> Expr:
        """Unary minus, ``-(expr)`` (the parentheses keep ``- -x`` from reading as a
        comment)."""
        return Expr(f"-({self._sql})", _UNARY)

    def __pos__(self) -> Expr:
        return self

    def __abs__(self) -> Expr:
        """``abs(expr)``: ``abs(col("x"))``."""
        return Expr(f"abs({self._sql})", _ATOM)

    def abs(self) -> Expr:
        """``abs(expr)``, as a method.

        >>> col("x").abs().to_sql()
        'abs(`x`)'
        """
        return self.__abs__()

    # ------------------------------------------------------------------ functions

    def lower(self) -> Expr:
        """``lower(expr)``.

        >>> col("city").lower().isin(["taipei", "kyoto"]).to_sql()
        "lower(`city`) IN ('taipei', 'kyoto')"
        """
        return fn("lower", self)

    def upper(self) -> Expr:
        """``upper(expr)``."""
        return fn("upper", self)

    def trim(self) -> Expr:
        """``trim(expr)``: leading and trailing spaces (only ``' '``, as Spark)."""
        return fn("trim", self)

    def length(self) -> Expr:
        """``length(expr)``: characters, not bytes."""
        return fn("length", self)

    def substring(self, pos: object, length: object = None) -> Expr:
        """``substring(expr, pos[, length])``, 1-based; a negative ``pos`` counts from the end.

        >>> col("code").substring(1, 3).to_sql()
        'substring(`code`, 1, 3)'
        """
        return fn("substring", self, pos) if length is None else fn("substring", self, pos, length)

    def contains(self, part: object) -> Expr:
        """``contains(expr, part)``."""
        return fn("contains", self, part)

    def endswith(self, suffix: object) -> Expr:
        """``endswith(expr, suffix)``."""
        return fn("endswith", self, suffix)

    def rlike(self, pattern: str) -> Expr:
        """``expr RLIKE pattern``: a Java regular expression found anywhere in the string,
        read as Java reads it (``(?i)`` folds ASCII letters only, ``$`` also matches before
        a final line break; the filters guide lists what differs and is refused).

        >>> col("url").rlike(r"^https://").to_sql()
        "regexp_like(`url`, '^https://')"
        """
        return fn("regexp_like", self, pattern)

    def year(self) -> Expr:
        """``year(expr)`` of a date or timestamp (in the session time zone)."""
        return fn("year", self)

    def month(self) -> Expr:
        """``month(expr)``."""
        return fn("month", self)

    def day(self) -> Expr:
        """``day(expr)``."""
        return fn("day", self)

    def hour(self) -> Expr:
        """``hour(expr)`` on the session time zone's clock."""
        return fn("hour", self)

    def date(self) -> Expr:
        """``date(expr)``, the date of a timestamp in the session time zone (a cast).

        >>> (col("ts").date() == datetime.date(2026, 1, 2)).to_sql()
        "date(`ts`) = DATE '2026-01-02'"
        """
        return fn("date", self)

    def isnan(self) -> Expr:
        """``isnan(expr)``: FALSE for NULL."""
        return fn("isnan", self)

    def round(self, scale: int = 0) -> Expr:
        """``round(expr, scale)``, half away from zero."""
        return fn("round", self, scale)


def fn(name: str, *args: object) -> Expr:
    """A call of a Spark SQL function pqsift evaluates (see the README's list), with
    expressions or Python values as arguments.

    >>> fn("date_trunc", "HOUR", col("ts")).to_sql()
    "date_trunc('HOUR', `ts`)"
    >>> fn("coalesce", col("a"), col("b"), 0).to_sql()
    'coalesce(`a`, `b`, 0)'
    """
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        raise ValueError(f"not a function name: {name!r}")
    return Expr(f"{name}({', '.join(_to_expr(arg).to_sql() for arg in args)})", _ATOM)


class _Case:
    """A ``CASE`` being built by :func:`when`; finish it with :meth:`otherwise` or :meth:`end`."""

    __slots__ = ("_branches",)

    def __init__(self, branches: list[tuple[Expr, Expr]]) -> None:
        self._branches = branches

    def when(self, condition: Expr, value: object) -> _Case:
        """Another ``WHEN condition THEN value`` branch."""
        return _Case([*self._branches, (condition, _to_expr(value))])

    def otherwise(self, value: object) -> Expr:
        """``ELSE value END``."""
        return self._finish(f" ELSE {_to_expr(value).to_sql()}")

    def end(self) -> Expr:
        """``END`` with no ``ELSE`` (NULL where no branch holds)."""
        return self._finish("")

    def _finish(self, otherwise: str) -> Expr:
        branches = " ".join(f"WHEN {c.to_sql()} THEN {v.to_sql()}" for c, v in self._branches)
        return Expr(f"CASE {branches}{otherwise} END", _ATOM)


def when(condition: Expr, value: object) -> _Case:
    """``CASE WHEN condition THEN value ...``, as Spark's ``when``:

    >>> (when(col("kind") == "refund", -col("amount")).otherwise(col("amount")) > 100).to_sql()
    "CASE WHEN `kind` = 'refund' THEN -(`amount`) ELSE `amount` END > 100"
    """
    if not isinstance(condition, Expr):
        raise TypeError(f"when() needs an Expr condition, got {type(condition).__name__}")
    return _Case([(condition, _to_expr(value))])


def col(name: str) -> Expr:
    """A column reference, read like Spark's ``col()``: dots separate nested struct fields
    (``"a.b"`` is field ``b`` of struct ``a``) and back-quotes make a name with dots one
    name (``"`a.b`"``).

    >>> col("a.b").to_sql()
    '`a`.`b`'
    >>> col("`a.b`").to_sql()
    '`a.b`'
    """
    if not isinstance(name, str):
        raise TypeError(f"col() needs a str name, got {type(name).__name__}")
    return Expr(".".join(_quote_identifier(part) for part in _split_column_name(name)), _ATOM)


def field(*names: str) -> Expr:
    """A column by its field names, each taken as it is, as ``pyarrow.compute.field``
    names columns: ``field("a.b")`` is the top-level column named ``a.b``,
    ``field("a", "b")`` field ``b`` of struct ``a``.

    >>> field("a.b").to_sql()
    '`a.b`'
    >>> field("a", "b").to_sql()
    '`a`.`b`'
    """
    if not names or not all(isinstance(name, str) for name in names):
        raise TypeError(f"field() needs one or more str names, got {names!r}")
    return Expr(".".join(_quote_identifier(name) for name in names), _ATOM)


#: pyarrow's DNF comparison operators and the :class:`Expr` method of each.
_DNF_COMPARISONS = {
    "=": "__eq__",
    "==": "__eq__",
    "!=": "__ne__",
    "<": "__lt__",
    "<=": "__le__",
    ">": "__gt__",
    ">=": "__ge__",
}


def from_dnf(filters: Sequence[Sequence[object]] | Sequence[Sequence[Sequence[object]]]) -> Expr:
    """A filter given in disjunctive normal form, as ``pyarrow.parquet.read_table(filters=)``
    and ``deltalake`` take it: a list of ``(column, op, value)`` predicates, all of which
    hold, or a list of such lists, one of which holds. ``column`` is a name (taken as it is,
    dots included) or a tuple of names (a struct field); ``op`` is ``=``, ``==``, ``!=``,
    ``<``, ``<=``, ``>``, ``>=``, ``in`` or ``not in``. The meaning is pyarrow's: ``in``
    matches NULL when the values hold ``None``, and ``not in`` keeps NULL unless they do
    (pyarrow's ``is_in`` matches nulls); comparisons are false on NULL.

    >>> from_dnf([("id", ">", 10), ("kind", "in", ["a", "b"])]).to_sql()
    "`id` > 10 AND `kind` IN ('a', 'b')"
    >>> from_dnf([[("a.b", "=", 1)], [("s", "not in", [None, "x"])]]).to_sql()
    "`a.b` = 1 OR `s` IS NOT NULL AND NOT `s` IN ('x')"
    """
    if isinstance(filters, (str, bytes)) or not isinstance(filters, Sequence) or not filters:
        raise ValueError(
            f"a DNF filter is a non-empty list of (column, op, value) tuples, or of lists of them; not {filters!r:.200}"
        )
    if all(_is_predicate(item) for item in filters):
        return _conjunction(filters)  # type: ignore[arg-type]
    disjuncts: list[Expr] = []
    for conjunction in filters:
        if isinstance(conjunction, (str, bytes)) or not isinstance(conjunction, Sequence) or not conjunction:
            raise ValueError(
                f"a DNF filter's disjunct is a non-empty list of (column, op, value) tuples; not {conjunction!r:.200}"
            )
        disjuncts.append(_conjunction(conjunction))  # type: ignore[arg-type]
    result = disjuncts[0]
    for disjunct in disjuncts[1:]:
        result = result | disjunct
    return result


#: What a filter may be given as: Spark SQL text, an :class:`Expr`, DNF tuples
#: (:func:`from_dnf`), or (to :func:`pqsift.scan`) a ``pyarrow.compute.Expression``.
def _type_name(type_name: str) -> str:
    """A Spark type name as SQL text (``"decimal(10,2)"`` → ``"DECIMAL(10,2)"``)."""
    if not isinstance(type_name, str) or not _TYPE_NAME.match(type_name.strip()):
        raise ValueError(f"not a Spark type name: {type_name!r}")
    return type_name.strip().upper()


FilterLike: TypeAlias = "str | Expr | Sequence[Sequence[object]] | Sequence[Sequence[Sequence[object]]] | pc.Expression"


def is_arrow_expression(value: object) -> bool:
    """Whether ``value`` is a ``pyarrow.compute.Expression``, without importing
    ``pyarrow.compute``: an expression's class is in ``pyarrow._compute``, so without that
    module loaded there is none."""
    compute = sys.modules.get("pyarrow._compute")
    return compute is not None and isinstance(value, compute.Expression)


def filter_sql(filter: FilterLike | None) -> str | None:  # noqa: A002 - the public name
    """A filter as the Spark SQL text the core parses: text as it is, an :class:`Expr`
    rendered, DNF tuples through :func:`from_dnf`; None for no filter."""
    if filter is None or isinstance(filter, str):
        return filter
    if isinstance(filter, Expr):
        return filter.to_sql()
    if isinstance(filter, list):
        return from_dnf(filter).to_sql()
    if is_arrow_expression(filter):
        raise TypeError(
            "a pyarrow expression is written as Spark SQL against the table's schema: give it to pqsift.scan "
            "(or a pqsift dataset's scanner); here give Spark SQL text, a pqsift.Expr or DNF tuples"
        )
    raise TypeError(
        "filter must be Spark SQL text, a pqsift.Expr or a list of (column, op, value) tuples (DNF), "
        f"not {type(filter).__name__}"
    )


def _is_predicate(item: object) -> bool:
    return isinstance(item, tuple) and len(item) == 3 and isinstance(item[1], str)


def _conjunction(predicates: Sequence[tuple[object, str, object]]) -> Expr:
    result: Expr | None = None
    for predicate in predicates:
        if not _is_predicate(predicate):
            raise ValueError(f"a DNF predicate is a (column, op, value) tuple; not {predicate!r:.200}")
        term = _dnf_predicate(*predicate)
        result = term if result is None else result & term
    assert result is not None
    return result


def _dnf_predicate(column: object, op: str, value: object) -> Expr:
    if isinstance(column, str):
        target = field(column)
    elif isinstance(column, tuple) and column and all(isinstance(name, str) for name in column):
        target = field(*column)
    else:
        raise ValueError(f"a DNF predicate's column is a name or a tuple of names; not {column!r:.200}")
    op = op.lower()
    if op in _DNF_COMPARISONS:
        compared: Expr = getattr(target, _DNF_COMPARISONS[op])(value)
        return compared
    if op not in ("in", "not in"):
        raise ValueError(f"a DNF predicate's op is one of =, ==, !=, <, <=, >, >=, in, not in; not {op!r}")
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise ValueError(f"the value of {op!r} is a list of values; not {value!r:.200}")
    values = list(value)
    present = [v for v in values if v is not None]
    matches_null = len(present) < len(values)
    listed = target.isin(present) if present else lit(False)
    if op == "in":
        return listed | target.is_null() if matches_null else listed
    # pyarrow's is_in is false on NULL (unless None is listed): `not in` keeps NULL.
    return target.is_not_null() & ~listed if matches_null else target.is_null() | ~listed


def lit(value: LiteralValue | Expr) -> Expr:
    r"""A literal with the Spark type Python's value suggests.

    ``None`` is NULL; ``bool`` BOOLEAN; ``int`` INT, BIGINT (``5L``) or DECIMAL as its size
    needs; ``float`` DOUBLE (NaN and infinities as ``CAST('NaN' AS DOUBLE)``); ``Decimal``
    DECIMAL with its own scale; ``str`` STRING; ``bytes`` BINARY (``X'..'``);
    ``datetime.date`` DATE; ``datetime.datetime`` TIMESTAMP (a naive one is read in the
    session time zone, an aware one keeps its offset).

    >>> print(*(lit(v) for v in (None, True, 7, 2**40, 1.5, float("nan"), "it's")), sep=" | ")
    NULL | true | 7 | 1099511627776L | 1.5D | CAST('NaN' AS DOUBLE) | 'it\'s'
    """
    if isinstance(value, Expr):
        return value
    return Expr(_literal_sql(value), _ATOM)


def _to_expr(value: object) -> Expr:
    if isinstance(value, Expr):
        return value
    return lit(value)  # type: ignore[arg-type]  # lit() raises TypeError on other types


def _split_column_name(name: str) -> list[str]:
    """Spark's ``parseAttributeName``: split on dots outside back-quotes; inside them a
    doubled back-quote is one back-quote."""
    parts: list[str] = []
    current: list[str] = []
    in_quotes = False
    i = 0
    while i < len(name):
        char = name[i]
        if in_quotes:
            if char == "`":
                if i + 1 < len(name) and name[i + 1] == "`":
                    current.append("`")
                    i += 1
                else:
                    in_quotes = False
                    if i + 1 < len(name) and name[i + 1] != ".":
                        raise ValueError(f"invalid column name {name!r}: text after a closing back-quote")
            else:
                current.append(char)
        elif char == "`":
            if current:
                raise ValueError(f"invalid column name {name!r}: back-quote inside a name")
            in_quotes = True
        elif char == ".":
            if not current:
                raise ValueError(f"invalid column name {name!r}: empty part")
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
        i += 1
    if in_quotes:
        raise ValueError(f"invalid column name {name!r}: unclosed back-quote")
    if not current:
        raise ValueError(f"invalid column name {name!r}: empty part")
    parts.append("".join(current))
    return parts


def _quote_identifier(part: str) -> str:
    return "`" + part.replace("`", "``") + "`"


def _string_literal(text: str) -> str:
    """``'text'`` with backslash and quote escaped by a backslash, as Spark reads them."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _literal_sql(value: object) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, bool):  # before int: bool is an int subclass
        return "true" if value else "false"
    if isinstance(value, int):
        return _int_sql(value)
    if isinstance(value, float):
        return _float_sql(value)
    if isinstance(value, decimal.Decimal):
        return _decimal_sql(value)
    if isinstance(value, str):
        return _string_literal(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return "X'" + bytes(value).hex().upper() + "'"
    if isinstance(value, datetime.datetime):  # before date: datetime is a date subclass
        return f"TIMESTAMP '{_datetime_text(value)}'"
    if isinstance(value, datetime.date):
        return f"DATE '{_date_text(value)}'"
    raise TypeError(f"cannot make a Spark SQL literal from {type(value).__name__}: {value!r}")


def _is_array(value: object) -> bool:
    return isinstance(value, (pa.Array, pa.ChunkedArray)) or (
        type(value).__module__ == "numpy" and type(value).__name__ == "ndarray"
    )


def _array_items(values: Any) -> list[object]:
    """The Python values of a pyarrow array or a one-dimensional numpy array, as
    :func:`lit` takes them."""
    if isinstance(values, (pa.Array, pa.ChunkedArray)):
        return list(values.to_pylist())
    if values.ndim != 1 or values.dtype.kind not in ("b", "i", "u", "f", "U"):
        # datetime64 and the like: their tolist() gives integers or objects of another meaning.
        raise TypeError(
            f"isin() takes one-dimensional numpy arrays of booleans, numbers or strings, not {values.ndim}-dimensional"
            f" ones of dtype {values.dtype}"
        )
    return list(values.tolist())


def _int_sql(value: int) -> str:
    if _INT_MIN <= value <= _INT_MAX:
        return str(value)
    if _LONG_MIN <= value <= _LONG_MAX:
        return f"{value}L"
    if len(str(abs(value))) <= _MAX_DECIMAL_DIGITS:
        return f"{value}BD"
    raise ValueError(f"integer {value} has more than {_MAX_DECIMAL_DIGITS} digits")


def _float_sql(value: float) -> str:
    if math.isnan(value):
        return "CAST('NaN' AS DOUBLE)"
    if math.isinf(value):
        return "CAST('Infinity' AS DOUBLE)" if value > 0 else "CAST('-Infinity' AS DOUBLE)"
    # repr is the shortest text that reads back to the same double.
    return f"{value!r}D"


def _decimal_sql(value: decimal.Decimal) -> str:
    if not value.is_finite():
        raise ValueError(f"Spark DECIMAL has no {value}")
    _sign, digits, exponent = value.as_tuple()
    assert isinstance(exponent, int)  # finite
    scale = max(0, -exponent)
    significant = len(digits) + max(0, exponent)
    if max(significant, scale) > _MAX_DECIMAL_DIGITS:
        raise ValueError(f"decimal {value} has more than {_MAX_DECIMAL_DIGITS} digits")
    text = format(value, "f")
    # Without a point the text would be an integer literal.
    return text if "." in text else f"{text}BD"


def _date_text(value: datetime.date) -> str:
    return f"{value.year:04d}-{value.month:02d}-{value.day:02d}"


def _datetime_text(value: datetime.datetime) -> str:
    text = f"{_date_text(value)} {value.hour:02d}:{value.minute:02d}:{value.second:02d}"
    if value.microsecond:
        text += f".{value.microsecond:06d}".rstrip("0")
    offset = value.utcoffset()
    if offset is not None:
        if offset.microseconds:
            raise ValueError(f"UTC offset {offset} has sub-second precision")
        total = int(offset.total_seconds())
        sign = "-" if total < 0 else "+"
        hours, rest = divmod(abs(total), 3600)
        minutes, seconds = divmod(rest, 60)
        text += f"{sign}{hours:02d}:{minutes:02d}"
        if seconds:
            text += f":{seconds:02d}"
    return text
