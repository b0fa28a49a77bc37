"""The long fuzzing campaign: ``python benches/fuzz.py [--cases 10000] [--seed N]``.

Mutants of corpus and generated Parquet files (``tests/fuzz_harness.py``) are scanned three
ways (without and with a filter, and with drawn options) in worker subprocesses; crashes, hangs and non-pqsift exceptions are
isolated case by case and their mutant files kept in ``--keep`` (default
``fuzz-failures/``). ``--store s3`` uploads each mutant to a local S3 (moto, in this
process) and scans it from there: the object-store path (ranged footer and page index
reads, pages fetched before their headers are checked). Prints cases run and outcomes by
class; exits 1 on any failure.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

import fuzz_harness  # noqa: E402
from conftest import CORPUS  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--batch", type=int, default=200)
    parser.add_argument("--keep", type=Path, default=Path("fuzz-failures"))
    parser.add_argument("--store", choices=["local", "s3"], default="local")
    args = parser.parse_args()
    started = time.monotonic()
    with contextlib.ExitStack() as stack:
        store = None
        if args.store == "s3":
            from s3_harness import S3Emulator

            emulator = stack.enter_context(S3Emulator())
            bucket = emulator.new_bucket("fuzz")

            def put(name: str, data: bytes) -> str:
                return f"s3://{bucket}/{emulator.put_object(bucket, name, data)}"

            store = fuzz_harness.Store(put, emulator.storage_options)
        report = fuzz_harness.campaign(CORPUS.resolve(), args.cases, args.seed, keep=args.keep, batch=args.batch,
                                       log=lambda s: print(s, file=sys.stderr, flush=True), store=store)
    print(report.summary())
    print(f"{time.monotonic() - started:.0f} s")
    return 1 if report.failures else 0


if __name__ == "__main__":
    sys.exit(main())
