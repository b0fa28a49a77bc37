"""Iceberg tables written by Spark, pyiceberg and DuckDB (../shared/iceberg-testing), read
with pqsift and checked against the rows their sqllogictest files expect.

The harness the data's README describes: each ``iceberg_scan(...)`` call in a query is read
with ``pqsift.scan`` (its ``WHERE`` pushed down as pqsift's filter where pqsift takes it),
registered in DuckDB, and the query runs over it there; DuckDB prints the values as the
expected rows do. Blocks that need DuckDB itself (its Iceberg metadata functions, its
logs, tables it writes) are skipped, each with its reason, and a file whose queries are all
skipped is skipped too — never passed without a check.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest

import pqsift

ICEBERG_TESTING = Path(__file__).resolve().parents[2] / "shared" / "iceberg-testing"
TEST_FILES = sorted((ICEBERG_TESTING / "test").glob("*.test")) if ICEBERG_TESTING.exists() else []

SCAN_CALL = re.compile(r"iceberg_scan\s*\(\s*'([^']*)'((?:\s*,\s*[a-z_]+\s*(?:=>|=)\s*(?:'[^']*'|[^,)]+))*)\s*\)", re.I)
OPTION = re.compile(r"([a-z_]+)\s*(?:=>|=)\s*('[^']*'|[^,)]+)", re.I)

# What pqsift does not do yet, by table: the query must fail with this error, never return
# rows (strict: once it reads them, this list must shrink).
NOT_YET: dict[str, tuple[type[Exception], str]] = {}

# Test files whose rows pqsift does not match yet, and why: each fails today (strict), so
# that the list shrinks as the reader learns them.
DIFFERS = {
    "identity_double": "the files and manifest hold a float (3.1415927), the expected rows the double 3.141592653589793",
    "identity_float": "Spark compares a float column with 1.23 as doubles (no row), DuckDB as floats (one row)",
}

# Why a block is not checked here, by a marker in its text.
DUCKDB_ONLY = {
    "iceberg_metadata": "DuckDB's iceberg_metadata() table function",
    "iceberg_snapshots": "DuckDB's iceberg_snapshots() table function",
    "duckdb_logs": "DuckDB's own logs",
    "{test_dir}": "tables DuckDB writes itself (COPY ... FORMAT ICEBERG)",
    "filename": "DuckDB's filename virtual column",
    "file_row_number": "DuckDB's file_row_number virtual column",
    "s3://": "an S3 table (read through the S3 emulator elsewhere)",
    "generated_bounds": "metadata naming s3://fake-bucket: needs the S3 emulator",
    "version_name_format": "DuckDB's version_name_format option",
    "big_query_error": "a table whose expected outcome is DuckDB's own error text",
    "unsafe_enable_version_guessing": "a setting of DuckDB's Iceberg extension",
}


@dataclass
class Block:
    kind: str  # "query" or "statement"
    sql: str
    line: int
    expected: list[str] = field(default_factory=list)
    rowsort: bool = False


def parse(path: Path) -> list[Block]:
    """The `statement ok` and `query` blocks of a sqllogictest file."""
    blocks: list[Block] = []
    lines = path.read_text().splitlines()
    i = 0
    while i < len(lines):
        header = lines[i].strip()
        if header.startswith("statement ok") or header.startswith("query "):
            start = i + 1
            i += 1
            sql: list[str] = []
            while i < len(lines) and lines[i].strip() not in ("", "----"):
                sql.append(lines[i])
                i += 1
            block = Block("query" if header.startswith("query") else "statement", "\n".join(sql), start)
            block.rowsort = "rowsort" in header.split()
            if block.kind == "query" and i < len(lines) and lines[i].strip() == "----":
                i += 1
                while i < len(lines) and lines[i].strip() != "":
                    block.expected.append(lines[i])
                    i += 1
            blocks.append(block)
        i += 1
    return blocks


def substituted(sql: str) -> str:
    root = str(ICEBERG_TESTING)
    sql = sql.replace("{WORKING_DIRECTORY}", root).replace("__WORKING_DIRECTORY__", root)
    # Paths relative to the data's folder (the writer's working directory).
    return re.sub(r"iceberg_scan\s*\(\s*'(data/persistent/)", lambda m: f"iceberg_scan('{root}/{m.group(1)}", sql, flags=re.I)


def pushed_filter(sql: str, call_end: int) -> str | None:
    """The query's WHERE right after the scan call, when it is a plain condition."""
    match = re.match(r"\s*(?:as\s+\w+\s+)?where\s+(.*?)\s*(?:order\s+by|group\s+by|limit|;|$)", sql[call_end:], re.I | re.S)
    if match is None or "(" in match.group(1) or "distinct" in match.group(1).lower():
        return None
    # DuckDB quotes identifiers with double quotes, Spark SQL with backticks (a
    # double-quoted text is a string there).
    return re.sub(r'"([^"]*)"', r"`\1`", match.group(1))


def read_call(match: re.Match[str], sql: str) -> pa.Table:
    path, options_text = match.group(1), match.group(2) or ""
    options = {k.lower(): v.strip().strip("'") for k, v in OPTION.findall(options_text)}
    source = path
    if "version" in options:
        source = f"{path.rstrip('/')}/metadata/{metadata_file_name(Path(path), options['version'])}"
    kwargs: dict[str, object] = {}
    if options.get("allow_moved_paths", "").lower() == "true" or "column_mapping" in path:
        # The table names files beside it in its warehouse.
        kwargs["allowed_locations"] = [str(ICEBERG_TESTING)]
    condition = pushed_filter(sql, match.end())
    if condition is not None:
        try:
            return pqsift.scan(source, filter=condition, **kwargs).to_table()  # type: ignore[arg-type]
        except pqsift.FilterError:
            pass  # DuckDB SQL that is not Spark SQL: DuckDB alone filters
    return pqsift.scan(source, **kwargs).to_table()  # type: ignore[arg-type]


def metadata_file_name(root: Path, version: str) -> str:
    names = [p.name for p in (root / "metadata").iterdir() if ".metadata.json" in p.name]
    for name in names:
        if name.split(".metadata.json")[0] in (version, f"v{version}") or name.startswith(f"{version}."):
            return name
    raise AssertionError(f"no metadata file for version {version!r} in {names}")


def printed(value: object) -> str:
    return "NULL" if value is None else str(value)


def matches(expected: list[str], actual: list[list[str]], rowsort: bool) -> bool:
    if len(expected) == 1 and (hashed := re.fullmatch(r"(\d+) values hashing to ([0-9a-f]{32})", expected[0].strip())):
        values = [v for row in (sorted(actual) if rowsort else actual) for v in row]
        text = "".join(v + "\n" for v in values)
        return len(values) == int(hashed.group(1)) and hashlib.md5(text.encode()).hexdigest() == hashed.group(2)
    want = [line.split("\t") for line in expected]
    got = actual
    if rowsort:
        want, got = sorted(want), sorted(got)
    if len(want) != len(got):
        return False
    booleans = {"true": "1", "false": "0"}
    for want_row, got_row in zip(want, got, strict=True):
        if len(want_row) != len(got_row):
            return False
        for w, g in zip(want_row, got_row, strict=True):
            if w != g and booleans.get(g) != w and booleans.get(w) != g:
                return False
    return True


def reason_to_skip(sql: str) -> str | None:
    lowered = sql.lower()
    for marker, reason in DUCKDB_ONLY.items():
        if marker in lowered:
            return reason
    return None


@pytest.mark.skipif(not TEST_FILES, reason="../shared/iceberg-testing is not there")
@pytest.mark.parametrize(
    "test_file",
    [
        pytest.param(p, marks=pytest.mark.xfail(strict=True, reason=DIFFERS[p.stem])) if p.stem in DIFFERS else p
        for p in TEST_FILES
    ],
    ids=lambda p: p.stem,
)
def test_iceberg_testing_queries(test_file: Path) -> None:
    con = duckdb.connect()
    checked, skipped, failures = 0, [], []
    reads = 0

    def over_pqsift(sql: str) -> str:
        nonlocal reads
        out, last = [], 0
        for match in SCAN_CALL.finditer(sql):
            name = f"pqsift_read_{reads}"
            reads += 1
            con.register(name, read_call(match, sql))
            out.append(sql[last : match.start()] + name)
            last = match.end()
        return "".join(out) + sql[last:]

    for block in parse(test_file):
        sql = substituted(block.sql)
        reason = reason_to_skip(sql)
        expected_error = next((v for k, v in NOT_YET.items() if f"/{k}/" in sql), None)
        if block.kind == "statement":
            if reason is None and not sql.lower().lstrip().startswith(("call ", "pragma")):
                if expected_error is not None and "iceberg_scan" in sql.lower():
                    continue
                con.execute(over_pqsift(sql))
            continue
        if reason is not None:
            skipped.append((block.line, reason))
            continue
        if "iceberg_scan" not in sql.lower() and "my_datalake" not in sql.lower() and not re.search(r"\boracle", sql):
            skipped.append((block.line, "does not read an Iceberg table"))
            continue
        if expected_error is not None:
            error, why = expected_error
            with pytest.raises(error):
                over_pqsift(sql)
            skipped.append((block.line, why))
            continue
        try:
            relation = con.sql(f"SELECT COLUMNS(*)::VARCHAR FROM ({over_pqsift(sql).rstrip().rstrip(';')})")
            actual = [[printed(v) for v in row] for row in relation.fetchall()]
        except duckdb.CatalogException as e:
            skipped.append((block.line, f"needs a relation a skipped block made: {e}"))
            continue
        checked += 1
        if not matches(block.expected, actual, block.rowsort):
            failures.append(f"line {block.line}: {sql}\nexpected {block.expected}\ngot      {actual}")
    assert not failures, "\n\n".join(failures)
    if checked == 0:
        pytest.skip(f"no query checked: {sorted(set(r for _, r in skipped))}")


@pytest.mark.skipif(not TEST_FILES, reason="../shared/iceberg-testing is not there")
@pytest.mark.parametrize(
    "condition",
    [
        "uuid = '1571effb-facd-42a3-90e9-0af522e9b6c2'",
        "uuid = '1571EFFB-FACD-42A3-90E9-0AF522E9B6C2'",  # not the text Spark reads: no row
        "uuid IN ('1571effb-facd-42a3-90e9-0af522e9b6c2', 'f9f28465-51cf-45f1-8985-e01d9a82253c')",
        "uuid < '3ef257b8'",
        "uuid >= 'abd6f939-9b99-4e1d-9cda-0dc8ce60a161'",
        "uuid LIKE '%-4%'",
        "startswith(uuid, '16')",
        "uuid IS NULL",
        "upper(uuid) = '1571EFFB-FACD-42A3-90E9-0AF522E9B6C2'",
    ],
)
def test_a_uuid_column_reads_and_filters_as_its_text(condition: str) -> None:
    # Spark (iceberg-spark) reads a uuid as its canonical text; the files hold 16 bytes.
    import uuid as uuids

    root = ICEBERG_TESTING / "data" / "persistent" / "uuid"
    table = pqsift.scan(str(root)).to_table()
    assert table.schema.field("uuid").type == pa.string()
    # The oracle: the files' bytes read with pyarrow, formatted by Python's uuid module.
    import pyarrow.parquet as pq

    values = [v for f in sorted((root / "data").glob("*.parquet")) for v in pq.read_table(f)["uuid"].to_pylist()]
    stored = [str(v if isinstance(v, uuids.UUID) else uuids.UUID(bytes=v)) for v in values]
    assert sorted(table["uuid"].to_pylist()) == sorted(stored)
    con = duckdb.connect()
    con.register("rows", pa.table({"uuid": stored}))
    in_duckdb = condition.replace("startswith(", "starts_with(")
    expected = sorted(r[0] for r in con.sql(f"SELECT uuid FROM rows WHERE {in_duckdb}").fetchall())
    scan = pqsift.scan(str(root), filter=condition)
    assert sorted(scan.to_table()["uuid"].to_pylist()) == expected
    if condition.startswith("uuid = '1571effb"):
        # The manifest's bounds (bytes) prune as the text does: one of the two files.
        assert scan.metrics["files_pruned_manifest"] == 1
