"""Broken and hostile Delta tables: every one raises a pqsift exception naming the table or
the file and the reason — never wrong rows, a panic or a huge allocation — and damage that
only costs pruning (unreadable statistics, a corrupt ``_last_checkpoint`` hint) still reads
the right rows.

Each case starts from a copy of delta-kernel-rs's ``table-with-dv-small`` (10 rows, values
0–9, 0 and 9 deleted by an on-disk deletion vector) and breaks one thing.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

import pqsift

SOURCE = (Path(__file__).resolve().parents[1] / ".." / "shared" / "delta-testing" / "tables" / "table-with-dv-small").resolve()
DV_FILE = "deletion_vector_61d16c75-6994-46b7-a15b-8b538852e50e.bin"
DATA_FILE = "part-00000-fae5310a-a37d-4e51-827b-c3d5516560ca-c000.snappy.parquet"
FIRST, SECOND = "_delta_log/00000000000000000000.json", "_delta_log/00000000000000000001.json"


def _rewrite(path: Path, change: Callable[[dict], None], action: str) -> None:
    """Applies ``change`` to the ``action`` of each line of the commit ``path`` holding one."""
    lines = []
    for line in path.read_text().splitlines():
        value = json.loads(line)
        if action in value:
            change(value[action])
        lines.append(json.dumps(value))
    path.write_text("\n".join(lines) + "\n")


def _deletion_vector(field: str, value: object) -> Callable[[Path], None]:
    return lambda t: _rewrite(t / SECOND, lambda add: add["deletionVector"].__setitem__(field, value), "add")


def _schema(schema_string: str) -> Callable[[Path], None]:
    return lambda t: _rewrite(t / FIRST, lambda meta: meta.__setitem__("schemaString", schema_string), "metaData")


def _truncate(name: str, size: int) -> Callable[[Path], None]:
    def apply(t: Path) -> None:
        with open(t / name, "r+b") as f:
            f.truncate(size)

    return apply


def _overwrite(name: str, offset: int, data: bytes) -> Callable[[Path], None]:
    def apply(t: Path) -> None:
        with open(t / name, "r+b") as f:
            f.seek(offset)
            f.write(data)

    return apply


DEEP = '{"type":"struct","fields":[{"name":"a","type":' + '{"type":"array","elementType":' * 200 + '"long"' + "}" * 200 + "}]}"

# (case, damage, exception, text the message must hold besides the path)
FAILING: list[tuple[str, Callable[[Path], None], type[Exception], str]] = [
    ("garbage line", lambda t: (t / SECOND).open("a").write("{not json\n"), pqsift.CorruptFileError, "corrupt Delta log: line 4 is not a Delta action"),
    ("deletion vector larger than its file", _deletion_vector("sizeInBytes", 8000), pqsift.CorruptFileError, "does not fit in the file's 45 bytes"),
    ("deletion vector larger than its data file's rows allow", _deletion_vector("sizeInBytes", 2**31 - 1), pqsift.CorruptFileError, "more than a vector over the file's 10 rows takes"),
    ("deletion vector deleting more rows than the file has", _deletion_vector("cardinality", 11), pqsift.CorruptFileError, "it deletes 11 rows of a file of 10"),
    ("negative deletion vector offset", _deletion_vector("offset", -5), pqsift.CorruptFileError, "negative deletion vector offset"),
    ("cardinality disagrees", _deletion_vector("cardinality", 3), pqsift.CorruptFileError, "holds 2 rows but its descriptor says 3"),
    ("unknown deletion vector storage", _deletion_vector("storageType", "x"), pqsift.UnsupportedError, "deletion vector storage type"),
    ("deletion vector file missing", lambda t: (t / DV_FILE).unlink(), pqsift.PqsiftIOError, DV_FILE),
    ("deletion vector file truncated", _truncate(DV_FILE, 20), pqsift.CorruptFileError, "does not fit in the file's 20 bytes"),
    ("deletion vector bytes flipped", _overwrite(DV_FILE, 5, b"\xff\xff"), pqsift.CorruptFileError, "deletion vector CRC"),
    ("data file missing", lambda t: (t / DATA_FILE).unlink(), pqsift.PqsiftIOError, DATA_FILE),
    ("unknown column type", _schema('{"type":"struct","fields":[{"name":"value","type":"interval"}]}'), pqsift.UnsupportedError, 'Delta type "interval"'),
    ("schema nested 200 deep", _schema(DEEP), pqsift.TableError, "schemaString is not JSON: recursion limit"),
    ("partition column not in the schema", lambda t: _rewrite(t / FIRST, lambda m: m.__setitem__("partitionColumns", ["nope"]), "metaData"), pqsift.TableError, 'partition column "nope" is not in the schema'),
    ("no protocol", lambda t: _rewrite(t / FIRST, lambda p: p.clear(), "protocol"), pqsift.PqsiftError, ""),
    ("unknown reader feature", lambda t: _rewrite(t / FIRST, lambda p: p["readerFeatures"].append("fancyNewThing"), "protocol"), pqsift.UnsupportedError, "fancyNewThing"),
    ("commit 0 missing", lambda t: (t / FIRST).unlink(), pqsift.TableError, ""),
]

# Damage that costs pruning only: the rows are still the 7 of `value > 1`.
HARMLESS: list[tuple[str, Callable[[Path], None]]] = [
    ("statistics that do not parse", lambda t: _rewrite(t / SECOND, lambda add: add.__setitem__("stats", '{"numRecords": "x", "minValues": 7'), "add")),
    ("statistics of the wrong types", lambda t: _rewrite(t / SECOND, lambda add: add.__setitem__("stats", '{"numRecords": 10, "minValues": {"value": "abc"}, "maxValues": {"value": [1]}}'), "add")),
    ("_last_checkpoint garbage", lambda t: (t / "_delta_log" / "_last_checkpoint").write_text('{"version": 99, "size": 1')),
    ("_last_checkpoint pointing nowhere", lambda t: (t / "_delta_log" / "_last_checkpoint").write_text('{"version": 1, "size": 3}')),
]


def _copy(tmp_path: Path) -> Path:
    table = tmp_path / "t"
    shutil.copytree(SOURCE, table)
    return table


@pytest.mark.parametrize(("case", "damage", "error", "text"), FAILING, ids=[c[0] for c in FAILING])
def test_broken_tables_raise_named_errors(tmp_path: Path, case: str, damage: Callable[[Path], None], error: type[Exception], text: str) -> None:
    table = _copy(tmp_path)
    damage(table)
    with pytest.raises(error) as raised:
        pqsift.scan(table, filter="value > 1").to_table()
    message = str(raised.value)
    assert str(table) in message, message
    assert text in message, message
    assert "panicked" not in message


@pytest.mark.parametrize(("case", "damage"), HARMLESS, ids=[c[0] for c in HARMLESS])
def test_damage_to_hints_keeps_the_rows(tmp_path: Path, case: str, damage: Callable[[Path], None]) -> None:
    table = _copy(tmp_path)
    damage(table)
    rows = pqsift.scan(table, filter="value > 1").to_table().column("value").to_pylist()
    assert sorted(rows) == list(range(2, 9))
