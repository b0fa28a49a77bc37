"""A mutation fuzzer for pqsift's public API.

Mutants of real Parquet files — truncations (anywhere, and inside the footer), bit flips
(anywhere, and in the footer), a rewritten footer length, a footer integer field set to an
extreme or nearby value (sizes, counts, offsets, types, lengths), an integer field of any
page header or of a bloom filter header likewise, a column or offset index edited, a
page's decompressed bytes edited (compressed again, sizes kept true) — are scanned three
ways (without a filter, with one, with one and options drawn per case) in worker
subprocesses, many cases per worker. A worker that dies (abort, segfault) or hangs is not
fatal: its unfinished cases are re-run one per subprocess to find the culprit.

An outcome is ``ok``, the name of the pqsift exception raised, or a failure: ``crash``
(the process died), ``hang``, or ``unexpected:<class>`` (an exception that is not a
pqsift error, such as a Rust panic surfacing as ``PanicException``).

``tests/test_fuzz.py`` runs a short deterministic campaign; ``benches/fuzz.py`` a long one.
"""

from __future__ import annotations

import json
import random
import struct
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import parquet_surgery as ps

CORPUS_SEEDS = [
    "data/alltypes_plain.parquet",
    "data/alltypes_dictionary.parquet",
    "data/alltypes_tiny_pages_plain.parquet",
    "data/data_index_bloom_encoding_stats.parquet",
    "data/datapage_v2.snappy.parquet",
    "data/nested_structs.rust.parquet",
    "data/nested_lists.snappy.parquet",
    "data/delta_byte_array.parquet",
    "data/delta_binary_packed.parquet",
    "data/byte_stream_split.zstd.parquet",
    "data/nulls.snappy.parquet",
    "data/int32_with_null_pages.parquet",
    "data/rle_boolean_encoding.parquet",
    "data/fixed_length_decimal.parquet",
    "data/list_columns.parquet",
    "data/dict-page-offset-zero.parquet",
    "data/plain-dict-uncompressed-checksum.parquet",
    "data/lz4_raw_compressed.parquet",
    # Read since the trust and tolerance work: chunks padded for an old parquet-mr writer,
    # INT96 instants beyond nanoseconds.
    "data/nation.dict-malformed.parquet",
    "data/int96_from_spark.parquet",
]

FAILURES = ("crash", "hang", "unexpected")
# pqsift's base class: raised for internal (Arrow compute) errors, whose messages do not
# name the file. A corrupt file should say CorruptFileError: kept for a look.
SUSPICIOUS = ("PqsiftError",)

_WORKER = r"""
import json, resource, sys
import pqsift
# A case that allocates what a claim says rather than what the file holds fails here (an
# abort, a MemoryError), where the campaign sees it, rather than exhausting the machine.
resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))
job = json.load(sys.stdin)
common, cases = job["options"], job["cases"]
for case_id, path, text, variant in cases:
    print("START", case_id, flush=True)
    outcomes = []
    if "order_by" in variant:
        variant["order_by"] = [tuple(key) for key in variant["order_by"]]
    for filter_text, options in ((None, {}), (text, {}), (text, variant)):
        try:
            pqsift.scan(path, filter=filter_text, threads=2, **common, **options).to_table()
            outcomes.append("ok")
        except pqsift.PqsiftError as error:
            named = path in str(error) or type(error).__name__ in ("FilterError", "SelectionError")
            outcomes.append(type(error).__name__ + ("" if named else ":unnamed"))
        except BaseException as error:
            outcomes.append("unexpected:" + type(error).__name__ + ":" + str(error)[:200].replace(" ", "_"))
    print("RESULT", case_id, *outcomes, flush=True)
"""
SCANS_PER_CASE = 3


def scan_variant(column: str | None, rng: random.Random) -> dict[str, object]:
    """The options of a case's third scan (with the filter): a path the plain scans do not
    take — top-k and limits, the baseline without pushdown, string views and small batches
    under a mask, Spark's output types — drawn per case."""
    variants: list[dict[str, object]] = [
        {"limit": 5},
        {"pushdown_filters": False},
        {"string_view": True, "batch_size": 100, "selection_policy": "mask"},
        {"spark_output": True, "reorder_filters": False, "selection_policy": "selectors"},
    ]
    if column is not None:
        variants += [{"order_by": [(column, rng.choice(["asc", "desc"]))], "limit": 7}, {"columns": [column]}]
    return rng.choice(variants)


@dataclass
class Store:
    """An object store mutants are scanned from, instead of local files: ``put`` uploads
    one (a name, its bytes) and returns its URL; ``options`` are the scans' storage options."""

    put: Callable[[str, bytes], str]
    options: dict[str, str]


@dataclass
class Seed:
    path: Path
    data: bytes
    filter: str
    column: str | None  # the filter's column, a key for top-k


@dataclass
class Report:
    cases: int = 0
    scans: int = 0
    outcomes: Counter = field(default_factory=Counter)
    mutations: Counter = field(default_factory=Counter)
    failures: list[tuple[str, str, str]] = field(default_factory=list)  # (case, mutation, outcome)
    suspicious: list[tuple[str, str, str]] = field(default_factory=list)

    def summary(self) -> str:
        lines = [f"{self.cases} cases, {self.scans} scans; failures (crash / hang / unexpected): {len(self.failures)}"]
        lines += [f"  {outcome}: {n}" for outcome, n in sorted(self.outcomes.items(), key=lambda kv: -kv[1])]
        lines += ["mutations: " + ", ".join(f"{m} {n}" for m, n in sorted(self.mutations.items()))]
        lines += [f"  FAILURE {case} ({mutation}): {outcome}" for case, mutation, outcome in self.failures[:50]]
        lines += [f"  suspicious {case} ({mutation}): {outcome}" for case, mutation, outcome in self.suspicious[:20]]
        return "\n".join(lines)


def seed_filter(path: Path) -> tuple[str, str | None]:
    """A filter on the file's first top-level primitive column, from its statistics-free
    schema alone: a comparison and a null test, so that pruning and late materialization
    run; and that column's name."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pq.read_schema(path)
    for f in schema:
        t = f.type
        name = "`" + f.name.replace("`", "``") + "`"
        if pa.types.is_integer(t) or pa.types.is_floating(t):
            return f"{name} > 3 OR {name} IS NULL", f.name
        if pa.types.is_string(t) or pa.types.is_large_string(t):
            return f"{name} >= 'b' AND {name} IS NOT NULL", f.name
        if pa.types.is_boolean(t):
            return f"{name} OR {name} IS NULL", f.name
    return "1 = 1", None


def generated_seeds(directory: Path) -> list[Path]:
    """Small files with every structure a mutation can hit: several row groups, dictionary
    and plain pages, NaN and nulls, nested columns, page index and bloom filters."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(7)
    n = 3000
    amount = rng.uniform(0, 100, n)
    amount[rng.random(n) < 0.05] = np.nan
    flat = pa.table(
        {
            "id": pa.array(np.arange(n, dtype=np.int64)),
            "kind": pa.array(np.array(["a", "b", "c"])[rng.integers(0, 3, n)]),
            "amount": pa.array(amount, mask=rng.random(n) < 0.05),
            "text": pa.array([f"t{i}" * (i % 5) for i in range(n)]),
        }
    )
    paths = []
    for name, options in {
        "flat_snappy.parquet": {"compression": "snappy", "use_dictionary": ["kind"]},
        "flat_zstd_v2.parquet": {"compression": "zstd", "data_page_version": "2.0"},
        "flat_plain.parquet": {"compression": "none", "use_dictionary": False},
    }.items():
        path = directory / name
        pq.write_table(
            flat,
            path,
            row_group_size=1000,
            write_page_index=True,
            max_rows_per_page=250,
            bloom_filter_options={"id": {"ndv": n, "fpp": 0.05}, "kind": {"ndv": 3, "fpp": 0.05}},
            **options,
        )
        paths.append(path)
    nested = pa.table(
        {
            "k": pa.array(np.arange(500, dtype=np.int32)),
            "xs": pa.array([[i, None, i + 1][: i % 4] if i % 7 else None for i in range(500)], pa.list_(pa.int32())),
            "s": pa.array([{"a": i, "b": str(i)} if i % 5 else None for i in range(500)]),
            "m": pa.array([[("k", i)] for i in range(500)], pa.map_(pa.string(), pa.int64())),
        }
    )
    for name, options in {"nested.parquet": {}, "nested_v2.parquet": {"compression": "zstd", "data_page_version": "2.0"}}.items():
        path = directory / name
        pq.write_table(nested, path, row_group_size=200, write_page_index=True, max_rows_per_page=64, **options)
        paths.append(path)
    # Deeper nesting, repetition levels up to 2: lists of structs holding lists, maps of lists.
    item = pa.struct([("a", pa.list_(pa.int64())), ("b", pa.string())])
    deep = pa.table(
        {
            "k": pa.array(np.arange(600, dtype=np.int64)),
            "items": pa.array(
                [[{"a": list(range(i % 4)), "b": f"b{i}"}] * (i % 3) if i % 11 else None for i in range(600)],
                pa.list_(item),
            ),
            "groups": pa.array([[(f"g{i % 5}", [i, None][: i % 3])] for i in range(600)], pa.map_(pa.string(), pa.list_(pa.int32()))),
        }
    )
    path = directory / "deep_nested.parquet"
    pq.write_table(deep, path, row_group_size=250, write_page_index=True, max_rows_per_page=50, compression="snappy")
    paths.append(path)
    # Lists in the encodings of Parquet v2 settings: the crate decodes (and skips) them.
    lists = pa.table(
        {
            "k": pa.array(np.arange(600, dtype=np.int64)),
            "xs": pa.array([[i * 7919 % 1009, i][: i % 3] for i in range(600)], pa.list_(pa.int64())),
            "ts": pa.array([[f"t{i}"] * (i % 3) if i % 13 else None for i in range(600)], pa.list_(pa.string())),
            "fs": pa.array([[i * 0.5, None][: i % 3] for i in range(600)], pa.list_(pa.float64())),
        }
    )
    path = directory / "lists_v2_encodings.parquet"
    pq.write_table(
        lists,
        path,
        row_group_size=300,
        write_page_index=True,
        max_rows_per_page=50,
        compression="zstd",
        data_page_version="2.0",
        use_dictionary=False,
        column_encoding={
            "xs.list.element": "DELTA_BINARY_PACKED",
            "ts.list.element": "DELTA_LENGTH_BYTE_ARRAY",
            "fs.list.element": "BYTE_STREAM_SPLIT",
        },
    )
    paths.append(path)
    # What writers with Parquet v2 settings produce, in pages of many DELTA_BINARY_PACKED
    # miniblocks: pqsift's own decoders of these encodings read ahead within a page.
    encoded = pa.table(
        {
            "id": pa.array(np.arange(n, dtype=np.int64) * 1_000_003 % 7_919_993),
            "small": pa.array(rng.integers(-40, 40, n).astype(np.int32), mask=rng.random(n) < 0.1),
            "kind": flat["kind"],
            "amount": flat["amount"],
            "text": flat["text"],
            "url": pa.array([f"https://h{i % 7}.example/p/{i}" for i in range(n)], mask=rng.random(n) < 0.1),
        }
    )
    path = directory / "flat_v2_encodings.parquet"
    pq.write_table(
        encoded,
        path,
        row_group_size=1500,
        write_page_index=True,
        max_rows_per_page=700,
        compression="zstd",
        data_page_version="2.0",
        use_dictionary=["kind"],
        column_encoding={
            "id": "DELTA_BINARY_PACKED",
            "small": "DELTA_BINARY_PACKED",
            "amount": "BYTE_STREAM_SPLIT",
            "text": "DELTA_LENGTH_BYTE_ARRAY",
            "url": "DELTA_BYTE_ARRAY",
        },
    )
    paths.append(path)
    return paths


def load_seeds(corpus: Path, directory: Path) -> list[Seed]:
    paths = [corpus / name for name in CORPUS_SEEDS if (corpus / name).is_file()] + generated_seeds(directory)
    return [Seed(path, path.read_bytes(), *seed_filter(path)) for path in paths]


# ----- mutations ------------------------------------------------------------------------


def _int_fields(value: object, out: list[tuple[ps.Struct, ps.Field]]) -> None:
    if isinstance(value, ps.Struct):
        for f in value.fields:
            if f.type in ps.INTS:
                out.append((value, f))
            else:
                _int_fields(f.value, out)
    elif isinstance(value, ps.List):
        for item in value.items:
            _int_fields(item, out)
    elif isinstance(value, ps.Map):
        for k, v in value.items:
            _int_fields(k, out)
            _int_fields(v, out)


_LIMITS = {ps.BYTE: 7, ps.I16: 15, ps.I32: 31, ps.I64: 63}


def _extreme(rng: random.Random, old: int, type: int) -> int:  # noqa: A002 - the Thrift field's name
    bits = _LIMITS[type]
    candidates = [0, -1, 1, old + 1, old - 1, old * 2, old // 2, -old, (1 << bits) - 1, -(1 << bits), old + rng.randint(-4096, 4096)]
    if bits >= 31:
        candidates += [rng.getrandbits(bits), (1 << 31) - 1, 1 << 30, 1 << 24]
    value = rng.choice(candidates)
    return max(-(1 << bits), min((1 << bits) - 1, value))


def _mutate_struct_ints(struct_: ps.Struct, rng: random.Random) -> None:
    fields: list[tuple[ps.Struct, ps.Field]] = []
    _int_fields(struct_, fields)
    if not fields:
        raise ValueError("no integer field")
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        _, f = rng.choice(fields)
        f.value = _extreme(rng, f.value, f.type)


def truncate(data: bytes, rng: random.Random) -> bytes:
    return data[: rng.randrange(0, len(data))]


def truncate_footer(data: bytes, rng: random.Random) -> bytes:
    length = struct.unpack("<I", data[-8:-4])[0]
    start = max(0, len(data) - 8 - length)
    return data[: rng.randrange(start, len(data))]


def bit_flips(data: bytes, rng: random.Random) -> bytes:
    out = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        i = rng.randrange(len(out))
        out[i] ^= 1 << rng.randrange(8)
    return bytes(out)


def footer_bit_flips(data: bytes, rng: random.Random) -> bytes:
    length = struct.unpack("<I", data[-8:-4])[0]
    start = max(0, len(data) - 8 - length)
    out = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        i = rng.randrange(start, len(out))
        out[i] ^= 1 << rng.randrange(8)
    return bytes(out)


def footer_length(data: bytes, rng: random.Random) -> bytes:
    length = struct.unpack("<I", data[-8:-4])[0]
    value = rng.choice([0, 1, length - 1, length + 1, len(data) - 8, len(data) - 4, len(data), 0xFFFFFFFF, rng.getrandbits(32)])
    return data[:-8] + struct.pack("<I", value & 0xFFFFFFFF) + data[-4:]


def footer_field(data: bytes, rng: random.Random) -> bytes:
    return ps.edit_footer(data, lambda footer: _mutate_struct_ints(footer, rng))


def footer_drop(data: bytes, rng: random.Random) -> bytes:
    """Removes one field of a random struct of the footer (required or not)."""

    def edit(footer: ps.Struct) -> None:
        structs: list[ps.Struct] = []

        def walk(v: object) -> None:
            if isinstance(v, ps.Struct):
                structs.append(v)
                for f in v.fields:
                    walk(f.value)
            elif isinstance(v, ps.List):
                for item in v.items:
                    walk(item)

        walk(footer)
        target = rng.choice([s for s in structs if s.fields])
        target.fields.remove(rng.choice(target.fields))

    return ps.edit_footer(data, edit)


def _random_page(data: bytes, rng: random.Random) -> tuple[int, int, tuple[int, ps.Struct, int, int]]:
    """A random page of a random column chunk: (the chunk, the page's position in it, the page)."""
    _, footer = ps.split(data)
    chunk = rng.randrange(len(ps.chunks(footer)))
    pages = ps.pages(data, ps.chunks(footer)[chunk][1])
    page = rng.randrange(len(pages))
    return chunk, page, pages[page]


def page_header_field(data: bytes, rng: random.Random) -> bytes:
    """An integer field of any page's header (dictionary, first or later data page)."""
    _, _, (offset, _, _, _) = _random_page(data, rng)
    return ps.rewrite_struct_at(data, offset, lambda header: _mutate_struct_ints(header, rng))


def _mutate_bytes(data: bytes, rng: random.Random) -> bytes:
    """One to three edits of ``data``: bits flipped, bytes set to edge values, a run
    overwritten or copied from elsewhere, the end cut or extended."""
    out = bytearray(data)
    for _ in range(rng.choice([1, 1, 2, 3])):
        edit = rng.randrange(6)
        if not out or edit == 5:
            out += bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 16)))
        elif edit == 0:
            i = rng.randrange(len(out))
            out[i] ^= 1 << rng.randrange(8)
        elif edit == 1:
            out[rng.randrange(len(out))] = rng.choice([0, 0xFF, 0x7F, 0x80, rng.getrandbits(8)])
        elif edit == 2:
            i = rng.randrange(len(out))
            n = min(len(out) - i, rng.randint(1, 8))
            out[i : i + n] = bytes([rng.choice([0xFF, 0x00, rng.getrandbits(8)])]) * n
        elif edit == 3:
            i, j = rng.randrange(len(out)), rng.randrange(len(out))
            n = min(len(out) - max(i, j), rng.randint(1, 32))
            out[i : i + n] = out[j : j + n]
        else:
            del out[len(out) - min(len(out), rng.randint(1, 16)) :]
    return bytes(out)


def page_body(data: bytes, rng: random.Random) -> bytes:
    """A page's decompressed bytes edited (``parquet_surgery.edit_page_bytes``): damage
    that decompression cannot catch, left for the decoders of levels and values to meet."""
    chunk, page, _ = _random_page(data, rng)
    return ps.edit_page_bytes(data, chunk, page, lambda page_bytes: _mutate_bytes(page_bytes, rng))


def page_index_field(data: bytes, rng: random.Random) -> bytes:
    """A column index or offset index edited — an integer (page offsets, sizes, first rows,
    null counts, the boundary order), a min or max value, a null-page flag, or a list cut
    short — and written after the pages, where the chunk now points."""
    _, footer = ps.split(data)
    targets = [
        (chunk, column_index)
        for chunk, (cc, _) in enumerate(ps.chunks(footer))
        for column_index, field in ((True, ps.CC_CI_OFFSET), (False, ps.CC_OI_OFFSET))
        if cc.get(field) is not None
    ]
    if not targets:
        raise ValueError("no page index")
    chunk, column_index = rng.choice(targets)

    def edit(index: ps.Struct) -> None:
        lists = [f.value for f in index.fields if isinstance(f.value, ps.List) and f.value.items]
        binaries = [v for v in lists if v.element_type == ps.BINARY]
        flags = [v for v in lists if v.element_type in (ps.TRUE, ps.FALSE)]
        kind = rng.randrange(4)
        if kind == 1 and binaries:
            values = rng.choice(binaries)
            replacement = [bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 12))), rng.choice(rng.choice(binaries).items), b""]
            values.items[rng.randrange(len(values.items))] = rng.choice(replacement)
        elif kind == 2 and flags:
            values = rng.choice(flags)
            i = rng.randrange(len(values.items))
            values.items[i] = not values.items[i]
        elif kind == 3 and lists:
            values = rng.choice(lists)
            del values.items[rng.randrange(len(values.items))]
        else:
            _mutate_struct_ints(index, rng)

    return ps.edit_page_index(data, edit, chunk, column_index)


def bloom_header_field(data: bytes, rng: random.Random) -> bytes:
    _, footer = ps.split(data)
    with_bloom = [i for i, (_, meta) in enumerate(ps.chunks(footer)) if meta.get(ps.CM_BLOOM_OFFSET) is not None]
    if not with_bloom:
        raise ValueError("no bloom filter")
    return ps.edit_bloom_header(data, lambda header: _mutate_struct_ints(header, rng), rng.choice(with_bloom))


MUTATIONS: dict[str, Callable[[bytes, random.Random], bytes]] = {
    "truncate": truncate,
    "truncate_footer": truncate_footer,
    "bit_flips": bit_flips,
    "footer_bit_flips": footer_bit_flips,
    "footer_length": footer_length,
    "footer_field": footer_field,
    "footer_drop": footer_drop,
    "page_header_field": page_header_field,
    "page_body": page_body,
    "page_index_field": page_index_field,
    "bloom_header_field": bloom_header_field,
}
# Structured mutations find more than random flips: weight them up.
WEIGHTS = {"truncate": 1, "truncate_footer": 1, "bit_flips": 2, "footer_bit_flips": 2, "footer_length": 1,
           "footer_field": 5, "footer_drop": 1, "page_header_field": 4, "page_body": 5, "page_index_field": 3,
           "bloom_header_field": 2}


def mutate(seed: Seed, rng: random.Random) -> tuple[str, bytes]:
    names = list(MUTATIONS)
    name = rng.choices(names, weights=[WEIGHTS[n] for n in names])[0]
    try:
        return name, MUTATIONS[name](seed.data, rng)
    except (ValueError, IndexError, KeyError, TypeError, struct.error):
        return "bit_flips", bit_flips(seed.data, rng)


# ----- running --------------------------------------------------------------------------


def _run_worker(
    cases: list[tuple[str, str, str, dict[str, object]]], timeout: float, options: dict[str, object]
) -> tuple[dict[str, list[str]], set[str], str]:
    """Runs ``cases`` in one subprocess, every scan with ``options``: (results by case,
    started cases, how it ended)."""
    job = json.dumps({"options": options, "cases": cases})
    try:
        done = subprocess.run([sys.executable, "-c", _WORKER], input=job, capture_output=True, text=True, timeout=timeout)
        stdout, ended = done.stdout, ("ok" if done.returncode == 0 else f"crash (exit {done.returncode})")
        if done.returncode != 0:
            ended += ": " + done.stderr[-300:].replace("\n", " | ")
    except subprocess.TimeoutExpired as expired:
        raw = expired.stdout or b""
        stdout, ended = (raw.decode() if isinstance(raw, bytes) else raw), "hang"
    results: dict[str, list[str]] = {}
    started: set[str] = set()
    for line in stdout.splitlines():
        parts = line.split()
        if parts[:1] == ["START"]:
            started.add(parts[1])
        elif parts[:1] == ["RESULT"]:
            results[parts[1]] = parts[2:]
    return results, started, ended


def run_campaign(
    seeds: list[Seed],
    cases: int,
    seed: int,
    directory: Path,
    batch: int = 100,
    log: Callable[[str], None] = lambda s: None,
    store: Store | None = None,
) -> Report:
    """``cases`` mutants of ``seeds`` (deterministic for ``seed``), scanned in batches: from
    ``directory``, or uploaded to ``store`` and scanned from there (kept in ``directory``
    too)."""
    options: dict[str, object] = {} if store is None else {"storage_options": store.options}
    rng = random.Random(seed)
    report = Report()
    for start in range(0, cases, batch):
        pending: list[tuple[str, str, str, dict[str, object]]] = []
        kinds: dict[str, str] = {}
        for i in range(start, min(cases, start + batch)):
            source = rng.choice(seeds)
            kind, data = mutate(source, rng)
            path = directory / f"case{i:06d}_{kind}_{source.path.stem}.parquet"
            path.write_bytes(data)
            case_id = f"{i}"
            target = str(path) if store is None else store.put(path.name, data)
            pending.append((case_id, target, source.filter, scan_variant(source.column, rng)))
            kinds[case_id] = kind
            report.mutations[kind] += 1
        results, _, ended = _run_worker(pending, timeout=30 + 3 * len(pending), options=options)
        if ended != "ok":
            # Isolate: every case without a result runs alone.
            for case in pending:
                if case[0] in results:
                    continue
                alone, _, alone_ended = _run_worker([case], timeout=60, options=options)
                results[case[0]] = alone.get(case[0]) or [alone_ended.split(":")[0]] * SCANS_PER_CASE
                if alone_ended != "ok":
                    results[case[0]] = ["crash" if alone_ended.startswith("crash") else alone_ended] * SCANS_PER_CASE
                    log(f"isolated failure: case {case[0]} {case[1]}: {alone_ended}")
        for case_id, target, _, _ in pending:
            path = str(directory / target.rsplit("/", 1)[-1])
            outcomes = results.get(case_id, ["missing"] * SCANS_PER_CASE)
            report.cases += 1
            report.scans += len(outcomes)
            for outcome in outcomes:
                label = outcome.split(":")[0] if outcome.startswith("unexpected") else outcome
                report.outcomes[label] += 1
                if label in FAILURES or label == "missing":
                    report.failures.append((path, kinds[case_id], outcome))
                elif label in SUSPICIOUS or label.endswith(":unnamed"):
                    report.suspicious.append((path, kinds[case_id], outcome))
            if not any(o.split(":")[0] in FAILURES + SUSPICIOUS or o.endswith(":unnamed") for o in outcomes):
                Path(path).unlink(missing_ok=True)  # keep only failing mutants
        log(f"{report.cases}/{cases} cases, {len(report.failures)} failures")
    return report


def campaign(
    corpus: Path, cases: int, seed: int, keep: Path | None = None, batch: int = 100, log=print, store: Store | None = None
) -> Report:
    with tempfile.TemporaryDirectory(prefix="pqsift-fuzz-") as tmp:
        directory = keep or Path(tmp)
        directory.mkdir(parents=True, exist_ok=True)
        seeds = load_seeds(corpus, Path(tmp))
        return run_campaign(seeds, cases, seed, directory, batch=batch, log=log, store=store)
