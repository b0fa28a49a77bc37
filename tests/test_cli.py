"""The ``pqsift`` command line: ``inspect`` and ``scan`` run as ``python -m pqsift`` in a
subprocess and in-process through ``pqsift.cli.main``, on corpus and generated files, with
outputs checked against pyarrow and the Python API."""

from __future__ import annotations

import datetime as dt
import decimal
import json
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest

import pqsift
from pqsift._core import column_pages
from pqsift.cli import format_table, main


def run(*args: str | Path) -> subprocess.CompletedProcess[str]:
    """``python -m pqsift ARGS`` in a subprocess."""
    return subprocess.run(
        [sys.executable, "-m", "pqsift", *map(str, args)], capture_output=True, text=True, timeout=120, check=False
    )


def assert_one_line_error(stderr: str, *fragments: str) -> None:
    assert "Traceback" not in stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith("pqsift: error: "), stderr
    for fragment in fragments:
        assert fragment in lines[0], (fragment, stderr)


@pytest.fixture
def tiny_pages(corpus: Path) -> Path:
    return corpus / "data" / "alltypes_tiny_pages.parquet"


@pytest.fixture(scope="module")
def typed_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Logical types, nulls, two row groups, small pages, page index on."""
    n = 3000
    path = tmp_path_factory.mktemp("cli") / "typed.parquet"
    table = pa.table(
        {
            "id": pa.array(range(n), pa.int64()),
            "amount": pa.array([None if i % 10 == 0 else i / 4 for i in range(n)], pa.float64()),
            "price": pa.array([decimal.Decimal(i) / 100 for i in range(n)], pa.decimal128(9, 2)),
            "day": pa.array([dt.date(2024, 1, 1) + dt.timedelta(days=i % 366) for i in range(n)], pa.date32()),
            "ts": pa.array(
                [dt.datetime(2026, 1, 1, tzinfo=dt.UTC) + dt.timedelta(minutes=i) for i in range(n)],
                pa.timestamp("us", tz="UTC"),
            ),
            "kind": pa.array(["refund" if i % 7 == 0 else "sale" for i in range(n)]),
            "flag": pa.array([i % 3 == 0 for i in range(n)]),
        }
    )
    pq.write_table(
        table,
        path,
        row_group_size=1500,
        data_page_size=2048,
        write_batch_size=128,
        write_page_index=True,
        compression="zstd",
        bloom_filter_options={"kind": {"ndv": 10, "fpp": 0.01}},
    )
    return path


# ----- inspect -------------------------------------------------------------------------


def test_inspect_json_matches_pyarrow_metadata(tiny_pages: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["inspect", str(tiny_pages), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    meta = pq.ParquetFile(tiny_pages).metadata

    assert info["num_rows"] == meta.num_rows == 7300
    assert info["file_size"] == tiny_pages.stat().st_size
    assert info["has_page_index"] is True
    assert [c["path"] for c in info["columns"]] == [meta.schema.column(i).path for i in range(meta.num_columns)]
    assert [c["physical_type"] for c in info["columns"]] == [meta.schema.column(i).physical_type for i in range(meta.num_columns)]
    arrow = pq.read_schema(tiny_pages)
    assert [f["name"] for f in info["arrow_schema"]] == arrow.names
    by_name = {c["path"]: c for c in info["columns"]}
    assert by_name["timestamp_col"]["physical_type"] == "INT96"
    assert by_name["timestamp_col"]["arrow_type"].startswith("Timestamp")
    assert by_name["string_col"]["arrow_type"] == "Utf8"

    assert len(info["row_groups"]) == meta.num_row_groups
    for rg_index, rg in enumerate(info["row_groups"]):
        expected = meta.row_group(rg_index)
        assert rg["num_rows"] == expected.num_rows
        for i, chunk in enumerate(rg["columns"]):
            c = expected.column(i)
            assert chunk["column"] == c.path_in_schema
            assert chunk["compressed_bytes"] == c.total_compressed_size
            assert chunk["uncompressed_bytes"] == c.total_uncompressed_size
            assert chunk["num_values"] == c.num_values
            assert chunk["compression"] == c.compression
            assert set(chunk["encodings"]) == set(c.encodings)
            assert chunk["bloom_filter"] is False
            assert chunk["statistics"]["null_count"] == c.statistics.null_count
            assert chunk["offset_index"] == c.has_offset_index
            assert chunk["column_index"] == c.has_column_index
            assert chunk["pages"] == len(column_pages(str(tiny_pages), c.path_in_schema)[rg_index][1])
            assert chunk["pages"] > 1
        ids = rg["columns"][0]["statistics"]
        assert (ids["min"], ids["max"]) == ("0", "7299")


def test_inspect_text_shows_schema_sizes_statistics_page_index(tiny_pages: Path) -> None:
    result = run("inspect", tiny_pages)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "rows        7,300 in 1 row group" in out
    assert "page index  yes" in out
    for heading in ("schema (13 leaf columns)", "column sizes (all row groups)", "row group 0: 7,300 rows"):
        assert heading in out
    id_chunk = next(line for line in out.splitlines() if line.startswith("  id ") and "UNCOMPRESSED" in line)
    assert "7,299" not in id_chunk and "7299" in id_chunk  # the max, as the file stores it
    pages = len(column_pages(str(tiny_pages), "id")[0][1])
    assert f"column+offset  {pages}" in id_chunk


def test_inspect_logical_types_and_bloom_filters(typed_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["inspect", str(typed_file), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    columns = {c["path"]: c for c in info["columns"]}
    assert columns["price"]["logical_type"] == "DECIMAL(9,2)"
    assert columns["day"]["logical_type"] == "DATE"
    assert columns["ts"]["logical_type"] == "TIMESTAMP(MICROS,utc=true)"
    assert columns["kind"]["logical_type"] == "STRING"
    assert columns["id"]["logical_type"] is None
    assert columns["ts"]["arrow_type"] == 'Timestamp(µs, "UTC")'

    first, second = info["row_groups"]
    chunks = {c["column"]: c for c in first["columns"]}
    assert chunks["price"]["statistics"]["min"] == "0.00"
    assert chunks["price"]["statistics"]["max"] == "14.99"
    assert chunks["day"]["statistics"]["min"] == "2024-01-01"
    assert chunks["ts"]["statistics"]["min"] == "2026-01-01T00:00:00Z"
    assert chunks["amount"]["statistics"]["null_count"] == 150
    assert chunks["kind"]["statistics"]["min"] == "refund"
    assert chunks["flag"]["statistics"]["max"] == "true"
    assert chunks["id"]["compression"].startswith("ZSTD")
    assert {c["column"] for c in first["columns"] if c["bloom_filter"]} == {"kind"}
    assert {c["column"]: c["statistics"]["min"] for c in second["columns"]}["id"] == "1500"


@pytest.mark.parametrize("name", ["data_index_bloom_encoding_stats.parquet", "data_index_bloom_encoding_with_length.parquet"])
def test_inspect_corpus_bloom_filter_files(corpus: Path, name: str) -> None:
    path = corpus / "data" / name
    result = run("inspect", path, "--json")
    assert result.returncode == 0, result.stderr
    chunk = json.loads(result.stdout)["row_groups"][0]["columns"][0]
    assert chunk["column"] == "String"
    assert chunk["bloom_filter"] is True
    assert (chunk["bloom_filter_bytes"] is not None) == ("with_length" in name)
    assert chunk["statistics"]["min"] == "Hello" and chunk["statistics"]["max"] == "today"
    text = run("inspect", path).stdout
    assert "yes" in text.splitlines()[-1]  # the bloom filter column of the only chunk


def test_inspect_truncated_statistics_are_inexact(corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = corpus / "data" / "binary_truncated_min_max.parquet"
    assert main(["inspect", str(path), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    flags = [
        (chunk["statistics"]["min_exact"], chunk["statistics"]["max_exact"])
        for rg in info["row_groups"]
        for chunk in rg["columns"]
        if chunk["statistics"] is not None
    ]
    assert flags and any(not min_exact or not max_exact for min_exact, max_exact in flags)


def test_inspect_nested_columns(corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = corpus / "data" / "nested_structs.rust.parquet"
    assert main(["inspect", str(path)]) == 0
    out = capsys.readouterr().out
    assert "nested Arrow fields:" in out
    assert main(["inspect", str(path), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert any("." in c["path"] and c["arrow_type"] is None for c in info["columns"])


def test_inspect_python_api(typed_file: Path) -> None:
    info = pqsift.inspect(typed_file)
    assert info["num_rows"] == 3000 and len(info["row_groups"]) == 2


def test_inspect_errors_name_the_file(tmp_path: Path) -> None:
    missing = tmp_path / "missing.parquet"
    result = run("inspect", missing)
    assert result.returncode == 1
    assert_one_line_error(result.stderr, str(missing))

    corrupt = tmp_path / "corrupt.parquet"
    corrupt.write_bytes(b"PAR1" + b"\x00" * 100 + b"not a footer")
    result = run("inspect", corrupt)
    assert result.returncode == 1
    assert_one_line_error(result.stderr, str(corrupt), "corrupt")
    assert result.stdout == ""
    with pytest.raises(pqsift.CorruptFileError, match=r"corrupt\.parquet"):
        pqsift.inspect(corrupt)
    # A directory is summarised file by file: its corrupt file is named.
    result = run("inspect", tmp_path)
    assert result.returncode == 1
    assert_one_line_error(result.stderr, str(corrupt), "corrupt")
    with pytest.raises(pqsift.PqsiftIOError, match="is a directory"):
        pqsift.inspect(tmp_path)


# ----- scan: printing ------------------------------------------------------------------


def test_scan_prints_a_table(tiny_pages: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["scan", str(tiny_pages), "--filter", "id < 5 AND bool_col", "--columns", "id, string_col"]) == 0
    lines = capsys.readouterr().out.splitlines()
    expected = pqsift.scan(tiny_pages, columns=["id", "string_col"], filter="id < 5 AND bool_col").to_table()
    assert lines[0].split() == ["id", "string_col"]
    assert set(lines[1]) <= {"-", " "}
    body = [line.split() for line in lines[2:-1]]
    assert body == [[str(i), s] for i, s in zip(expected["id"].to_pylist(), expected["string_col"].to_pylist(), strict=True)]
    assert lines[-1] == f"({expected.num_rows} rows)"


def test_scan_truncates_long_output_with_a_count(tiny_pages: Path) -> None:
    result = run("scan", tiny_pages, "--columns", "id", "--max-rows", "3")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    first_ids = pq.read_table(tiny_pages, columns=["id"])["id"][:3].to_pylist()
    assert [line.strip() for line in lines[2:5]] == [str(i) for i in first_ids]
    assert lines[-1] == "(3 of 7,300 rows)"
    default = run("scan", tiny_pages, "--columns", "id,bool_col")
    assert default.stdout.splitlines()[-1] == "(20 of 7,300 rows)"
    assert len(default.stdout.splitlines()) == 2 + 20 + 1


def test_scan_limit_and_options_give_the_same_rows(typed_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["scan", str(typed_file), "--filter", "kind = 'refund' AND amount > 100", "--max-rows", "1000"]
    assert main(args) == 0
    baseline = capsys.readouterr().out
    table = pq.read_table(typed_file)
    expected = sum(k == "refund" and a is not None and a > 100 for k, a in zip(table["kind"].to_pylist(), table["amount"].to_pylist(), strict=True))
    assert baseline.splitlines()[-1] == f"({expected} rows)"
    for extra in (
        ["--no-pushdown"],
        ["--threads", "1", "--batch-size", "7"],
        ["--no-page-index", "--no-statistics", "--no-bloom-filter"],
        ["--selection-policy", "mask", "--selection-threshold", "4", "--no-reorder", "--cache-bytes", "0"],
    ):
        assert main(args + extra) == 0
        assert capsys.readouterr().out == baseline, extra
    assert main([*args, "--limit", "10"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "(10 rows)"


def test_format_table_aligns_and_shows_nulls() -> None:
    table = pa.table({"id": [1, 22], "name": ["a", None], "blob": [b"\x01", None], "long": ["x" * 100, "y"]})
    lines = format_table(table).splitlines()
    assert lines[0].startswith("id  name  blob")
    assert lines[2].startswith(" 1  a     [01]")
    assert lines[3].startswith("22  null  null")
    assert lines[2].endswith("…") and len(lines[2].split()[-1]) == 40


# ----- scan: explain, metrics ----------------------------------------------------------


def test_scan_explain_prints_the_plan(tiny_pages: Path) -> None:
    result = run("scan", tiny_pages, "--filter", "id = 42", "--explain")
    assert result.returncode == 0, result.stderr
    expected = pqsift.scan(tiny_pages, filter="id = 42").explain()
    assert result.stdout.rstrip("\n") == expected.rstrip("\n")
    assert "row group 0" in result.stdout.lower()
    without = run("scan", tiny_pages, "--filter", "id = 42", "--explain", "--no-page-index")
    assert without.stdout.rstrip("\n") == pqsift.scan(tiny_pages, filter="id = 42", page_index=False).explain().rstrip("\n")
    assert without.stdout != result.stdout


def test_scan_metrics_go_to_stderr(typed_file: Path) -> None:
    result = run("scan", typed_file, "--filter", "id BETWEEN 10 AND 19", "--columns", "id", "--metrics")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1] == "(10 rows)"
    assert result.stderr.startswith("metrics:")
    metrics = dict(line.split(None, 1) for line in result.stderr.splitlines()[1:])
    assert metrics["rows_out"] == "10"
    assert int(metrics["row_groups_pruned_statistics"].replace(",", "")) == 1
    assert "bytes_read" in metrics and "pages_pruned" in metrics


# ----- scan: output files --------------------------------------------------------------


def test_scan_output_parquet_equals_the_api(typed_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.parquet"
    result = run("scan", typed_file, "--filter", "kind = 'refund'", "--columns", "id,price,ts,kind", "--output", out, "--batch-size", "100")
    assert result.returncode == 0, result.stderr
    expected = pqsift.scan(typed_file, columns=["id", "price", "ts", "kind"], filter="kind = 'refund'").to_table()
    assert f"wrote {expected.num_rows:,} rows to {out} (parquet)" in result.stderr
    assert result.stdout == ""
    written = pq.read_table(out)
    assert written.equals(expected)
    # Streamed: one row group per batch pushed through the writer, not one big table.
    assert pq.ParquetFile(out).metadata.num_row_groups >= 1


def test_scan_output_csv_equals_the_api(typed_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    # The output is written batch by batch: reading everything into one table is not used.
    def no_to_table(self: pqsift.Scan) -> pa.Table:
        raise AssertionError("the CLI must stream, not call to_table")

    out = tmp_path / "out.csv"
    with monkeypatch.context() as patch:
        patch.setattr(pqsift.Scan, "to_table", no_to_table)
        assert main(["scan", str(typed_file), "--filter", "amount > 700", "--output", str(out), "--batch-size", "64"]) == 0
    expected = pqsift.scan(typed_file, filter="amount > 700").to_table()
    assert f"wrote {expected.num_rows:,} rows" in capsys.readouterr().err
    read_back = pacsv.read_csv(out, convert_options=pacsv.ConvertOptions(column_types=expected.schema))
    assert read_back.equals(expected)

    # --format overrides the extension; an empty result still writes the header.
    other = tmp_path / "rows.txt"
    assert main(["scan", str(typed_file), "--filter", "id < 0", "--output", str(other), "--format", "csv"]) == 0
    assert other.read_text().splitlines() == [",".join(f'"{n}"' for n in expected.column_names)]


def test_scan_output_errors(typed_file: Path, tmp_path: Path, corpus: Path) -> None:
    result = run("scan", typed_file, "--output", tmp_path / "no" / "such" / "dir" / "out.csv")
    assert result.returncode == 1
    assert_one_line_error(result.stderr, "cannot write")
    nested = corpus / "data" / "nested_structs.rust.parquet"
    result = run("scan", nested, "--output", tmp_path / "nested.csv")
    assert result.returncode == 1
    assert_one_line_error(result.stderr, "cannot write", "CSV")


# ----- errors and exit codes -----------------------------------------------------------


def test_bad_filters_name_the_token(tiny_pages: Path) -> None:
    result = run("scan", tiny_pages, "--filter", "idd > 3")
    assert result.returncode == 1
    assert_one_line_error(result.stderr, "idd")
    result = run("scan", tiny_pages, "--filter", "id > 'abc'")
    assert result.returncode == 1
    assert_one_line_error(result.stderr, "abc")
    result = run("scan", tiny_pages, "--filter", "id >")
    assert result.returncode == 1
    assert_one_line_error(result.stderr)
    assert result.stdout == ""


def test_scan_missing_and_corrupt_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    corrupt = tmp_path / "bad.parquet"
    corrupt.write_bytes(b"this is not parquet at all")
    assert main(["scan", str(corrupt)]) == 1
    assert_one_line_error(capsys.readouterr().err, str(corrupt))
    missing = tmp_path / "nothing.parquet"
    assert main(["scan", str(missing), "--explain"]) == 1
    assert_one_line_error(capsys.readouterr().err, "nothing.parquet")


def test_scan_corrupt_data_pages_name_the_file(tmp_path: Path) -> None:
    # A valid footer, but snappy pages overwritten: the error comes while reading.
    path = tmp_path / "pages.parquet"
    pq.write_table(pa.table({"x": range(100_000), "s": [f"row {i}" for i in range(100_000)]}), path, compression="snappy", use_dictionary=False)
    data = bytearray(path.read_bytes())
    for i in range(5_000, len(data) // 2, 7):
        data[i] = 0xFF
    path.write_bytes(bytes(data))
    for extra in ([], ["--output", str(tmp_path / "out.csv")], ["--output", str(tmp_path / "out.parquet")]):
        result = run("scan", path, *extra)
        assert result.returncode == 1, extra
        assert_one_line_error(result.stderr, str(path), "corrupt")
        assert "External error" not in result.stderr


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["frobnicate"],
        ["scan"],
        ["inspect"],
        ["scan", "x.parquet", "--threads", "0"],
        ["scan", "x.parquet", "--limit", "-1"],
        ["scan", "x.parquet", "--batch-size", "many"],
        ["scan", "x.parquet", "--columns", "a,,b"],
        ["scan", "x.parquet", "--output", "out.txt"],
        ["scan", "x.parquet", "--format", "parquet"],
        ["scan", "x.parquet", "--explain", "--output", "out.csv"],
        ["scan", "x.parquet", "--selection-policy", "sometimes"],
        ["inspect", "x.parquet", "--no-such-flag"],
    ],
)
def test_usage_errors_exit_with_2(args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(args)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "usage: pqsift" in err and "Traceback" not in err


def test_usage_error_in_a_subprocess_and_help(tiny_pages: Path) -> None:
    result = run("scan", tiny_pages, "--threads", "0")
    assert result.returncode == 2
    assert "--threads: must be at least 1" in result.stderr
    help_text = run("scan", "--help")
    assert help_text.returncode == 0
    for flag in ("--filter", "--columns", "--limit", "--explain", "--output", "--metrics", "--threads", "--batch-size", "--no-pushdown", "--no-page-index"):
        assert flag in help_text.stdout
    version = run("--version")
    assert version.stdout.strip() == f"pqsift {pqsift.__version__}"


def test_console_script_is_installed(tiny_pages: Path) -> None:
    script = Path(sys.executable).parent / "pqsift"
    if not script.exists():
        pytest.skip("the pqsift script is not installed beside this interpreter")
    result = subprocess.run([str(script), "scan", str(tiny_pages), "--columns", "id", "--limit", "2"], capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1] == "(2 rows)"


DV_TABLE = Path(__file__).resolve().parents[1].parent / "shared" / "delta-testing" / "tables" / "table-with-dv-small"


def test_scan_reads_a_delta_table_and_its_versions(tmp_path: Path) -> None:
    """The CLI reads a Delta table as pqsift.scan does: deleted rows left out, and an
    earlier version with --version-as-of."""
    out = tmp_path / "latest.csv"
    result = run("scan", DV_TABLE, "--output", out)
    assert result.returncode == 0, result.stderr
    assert sorted(pacsv.read_csv(out).column("value").to_pylist()) == list(range(1, 9))
    first = tmp_path / "first.csv"
    assert run("scan", DV_TABLE, "--version-as-of", "0", "--output", first).returncode == 0
    assert sorted(pacsv.read_csv(first).column("value").to_pylist()) == list(range(10))
    explained = run("scan", DV_TABLE, "--explain")
    assert "deletion vectors delete 2 row(s)" in explained.stdout
    missing = run("scan", DV_TABLE, "--version-as-of", "7")
    assert missing.returncode == 1
    assert_one_line_error(missing.stderr, str(DV_TABLE))


ICEBERG_TABLE = Path(__file__).resolve().parents[1].parent / "shared" / "iceberg-testing" / "data" / "persistent" / "is_null_is_not_null"


@pytest.mark.skipif(not ICEBERG_TABLE.exists(), reason="../shared/iceberg-testing is not there")
def test_scan_reads_an_iceberg_table_and_its_snapshots(tmp_path: Path) -> None:
    """The CLI reads an Iceberg table as pqsift.scan does, an earlier snapshot with
    --snapshot-id, and explains the manifests' pruning."""
    out = tmp_path / "current.csv"
    assert run("scan", ICEBERG_TABLE, "--output", out).returncode == 0
    assert sorted(pacsv.read_csv(out).column("id").to_pylist()) == list(range(1, 9))
    current = json.loads(sorted(ICEBERG_TABLE.glob("metadata/*.metadata.json"))[-1].read_text())
    earliest = min(current["snapshots"], key=lambda snapshot: snapshot["timestamp-ms"])["snapshot-id"]
    first = tmp_path / "first.csv"
    result = run("scan", ICEBERG_TABLE, "--snapshot-id", str(earliest), "--output", first)
    assert result.returncode == 0, result.stderr
    assert sorted(pacsv.read_csv(first).column("id").to_pylist()) == sorted(
        pqsift.scan(ICEBERG_TABLE, snapshot_id=earliest).to_table().column("id").to_pylist()
    )
    explained = run("scan", ICEBERG_TABLE, "--filter", "value IS NULL", "--explain")
    assert "skipped on the manifests' statistics" in explained.stdout
    missing = run("scan", ICEBERG_TABLE, "--snapshot-id", "7")
    assert missing.returncode == 1
    assert_one_line_error(missing.stderr, str(ICEBERG_TABLE))


# ----- output formats, progress, Spark's printing, directories ---------------------------


@pytest.mark.parametrize("output_format", ["json", "ndjson", "csv"])
def test_scan_prints_every_row_as_json_ndjson_or_csv(typed_file: Path, output_format: str, capsys: pytest.CaptureFixture[str]) -> None:
    where = "kind = 'refund' AND id < 400"
    expected = pqsift.scan(typed_file, ["id", "amount", "price", "day", "kind"], where).to_table()
    assert main(["scan", str(typed_file), "--filter", where, "--columns", "id,amount,price,day,kind", "--format", output_format]) == 0
    out = capsys.readouterr().out
    if output_format == "csv":
        got = pacsv.read_csv(pa.py_buffer(out.encode()))
        assert got.column("id").to_pylist() == expected.column("id").to_pylist()
        assert got.num_rows == expected.num_rows
        return
    rows = json.loads(out) if output_format == "json" else [json.loads(line) for line in out.splitlines()]
    assert [row["id"] for row in rows] == expected.column("id").to_pylist()
    assert [row["amount"] for row in rows] == expected.column("amount").to_pylist()
    assert [decimal.Decimal(str(row["price"])) for row in rows] == expected.column("price").to_pylist()
    assert [row["day"] for row in rows] == [d.isoformat() for d in expected.column("day").to_pylist()]


def test_scan_writes_json_and_ndjson_files(typed_file: Path, tmp_path: Path) -> None:
    for name in ("rows.json", "rows.ndjson"):
        assert main(["scan", str(typed_file), "--filter", "id < 5", "--columns", "id,kind", "--output", str(tmp_path / name)]) == 0
        text = (tmp_path / name).read_text()
        rows = json.loads(text) if name.endswith(".json") else [json.loads(line) for line in text.splitlines()]
        assert rows == [{"id": i, "kind": "refund" if i % 7 == 0 else "sale"} for i in range(5)]


def test_scan_format_usage_errors(typed_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["scan", str(typed_file), "--format", "parquet"])
    with pytest.raises(SystemExit):
        main(["scan", str(typed_file), "--format", "table", "--output", "x.csv"])
    assert "give --output" in capsys.readouterr().err


def test_values_print_as_spark_shows_them(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "values.parquet"
    table = pa.table(
        {
            "f32": pa.array([1.1, 3.4028234663852886e38, None], pa.float32()),
            "f64": pa.array([1e10, 0.0001, float("nan")], pa.float64()),
            "name": pa.array([b"impala", b"\xff\x00", b""], pa.binary()),
        }
    )
    pq.write_table(table, path)
    assert main(["scan", str(path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[2].split() == ["1.1", "1.0E10", "impala"]
    assert lines[3].split() == ["3.4028235E38", "1.0E-4", "[FF", "00]"]
    assert lines[4].split()[:2] == ["null", "NaN"]


def test_progress_shows_on_stderr_when_asked(typed_file: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    import pqsift.cli

    monkeypatch.setattr(pqsift.cli, "PROGRESS_AFTER_SECONDS", 0.0)
    assert main(["scan", str(typed_file), "--format", "ndjson", "--batch-size", "100", "--progress"]) == 0
    captured = capsys.readouterr()
    assert len(captured.out.splitlines()) == 3000
    assert " rows, " in captured.err and " read, " in captured.err and captured.err.endswith("\r")
    assert main(["scan", str(typed_file), "--format", "ndjson", "--no-progress"]) == 0
    assert capsys.readouterr().err == ""


def test_inspect_a_directory_lists_every_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for day in (1, 2):
        (tmp_path / f"day={day}").mkdir()
        pq.write_table(pa.table({"id": list(range(day * 100))}), tmp_path / f"day={day}" / "part-0.parquet", row_group_size=50)
    assert main(["inspect", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == f"{tmp_path}: 2 files, 300 rows in 6 row groups, " + out.splitlines()[0].split(", ")[-1]
    assert "day=1/part-0.parquet" in out and "day=2/part-0.parquet" in out
    assert main(["inspect", str(tmp_path), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["total"]["num_rows"] == 300 and [f["row_groups"] for f in summary["files"]] == [2, 4]


def test_json_keeps_decimals_exact_and_spark_values(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "values.parquet"
    table = pa.table(
        {
            "price": pa.array([decimal.Decimal("12345678901234567890.12")], pa.decimal128(38, 2)),
            "x": pa.array([float("-inf")]),
            "blob": pa.array([b"\x00\xff"]),
            "tags": pa.array([["a", None]]),
            "point": pa.array([{"x": 1, "y": None}]),
        }
    )
    pq.write_table(table, path)
    assert main(["scan", str(path), "--format", "ndjson"]) == 0
    line = capsys.readouterr().out.strip()
    assert line == '{"price": 12345678901234567890.12, "x": "-Infinity", "blob": "AP8=", "tags": ["a", null], "point": {"x": 1, "y": null}}'
    assert json.loads(line, parse_float=decimal.Decimal)["price"] == decimal.Decimal("12345678901234567890.12")
