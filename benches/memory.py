"""Peak memory of a streaming scan of a dataset many times larger than its caches.

Run with ``python benches/memory.py`` after ``make build``. It uses the peer benchmark's
dataset (``data/bench``, written if absent: 4,000,000 rows, 198 MiB compressed, ~1 GiB
decoded, mostly a text column) and, for each setting, scans every column of every row in
a fresh subprocess, consuming batches one at a time and dropping them, then reports the
subprocess's peak RSS (``VmHWM``) beside the baseline of the same interpreter with
pyarrow and pqsift imported and nothing read. What bounds it: the ordered stream holds at
most ``2 × threads`` decoded row groups, the shared column cache at most ``cache_bytes``,
and the metadata cache its own 256 MiB cap (here a few hundred KiB).
Writes ``benches/results/memory.md``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

CHILD = r"""
import json, sys
import pyarrow as pa
import pqsift

def hwm():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return 0

args = json.loads(sys.argv[1])
baseline = hwm()
rows = 0
decoded = 0
scan = pqsift.scan(args["root"], columns=args["columns"], filter=args["filter"], threads=args["threads"],
                   cache_bytes=args["cache_bytes"])
for batch in scan:
    rows += batch.num_rows
    decoded += batch.nbytes
    del batch
print(json.dumps({"baseline": baseline, "peak": hwm(), "rows": rows, "decoded": decoded}))
"""


def measure(root: Path, columns: list[str] | None, filter: str | None, threads: int, cache_bytes: int) -> dict:  # noqa: A002
    args = {"root": str(root), "columns": columns, "filter": filter, "threads": threads, "cache_bytes": cache_bytes}
    out = subprocess.run([sys.executable, "-c", CHILD, json.dumps(args)], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path("data/bench"))
    parser.add_argument("--out", type=Path, default=Path("benches/results/memory.md"))
    args = parser.parse_args()
    if not list(args.data.glob("*.parquet")):
        from peers import write_dataset

        write_dataset(args.data)
    compressed = sum(p.stat().st_size for p in args.data.glob("*.parquet"))
    mib = 1 << 20
    settings = [
        (None, None, 1, 64 * mib),
        (None, None, 2, 64 * mib),
        (None, None, 2, 16 * mib),
        (None, "kind = 'refund' OR amount > 990", 2, 64 * mib),
        (None, "kind = 'refund' OR amount > 990", 2, 1 * mib),
    ]
    lines = [
        f"# Peak memory of streaming scans\n\nDataset `{args.data}`: {compressed / mib:.0f} MiB compressed. "
        "Each scan in a fresh subprocess, batches consumed and dropped one at a time; peak RSS is `VmHWM`, "
        "baseline the same interpreter with pyarrow and pqsift imported.\n",
        "| columns | filter | threads | cache_bytes | rows | bytes decoded and handed out | baseline RSS | peak RSS | peak − baseline |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for columns, where, threads, cache in settings:
        m = measure(args.data, columns, where, threads, cache)
        line = (
            f"| {'all' if columns is None else ', '.join(columns)} | {where or '—'} | {threads} | {cache // mib} MiB | {m['rows']:,} |"
            f" {m['decoded'] / mib:,.0f} MiB | {m['baseline'] / mib:.0f} MiB | {m['peak'] / mib:.0f} MiB | {(m['peak'] - m['baseline']) / mib:.0f} MiB |"
        )
        print(line, flush=True)
        lines.append(line)
    args.out.write_text("\n".join(lines) + "\n")
    print(f"written {args.out}")


if __name__ == "__main__":
    main()
