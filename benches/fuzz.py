"""The long fuzzing campaign: ``python benches/fuzz.py [--cases 10000] [--seed N]``.

Mutants of corpus and generated Parquet files (``tests/fuzz_harness.py``) are scanned three
ways (without and with a filter, and with drawn options) in worker subprocesses; crashes, hangs and non-pqsift exceptions are
isolated case by case and their mutant files kept in ``--keep`` (default
``fuzz-failures/``). Prints cases run and outcomes by class; exits 1 on any failure.
"""

from __future__ import annotations

import argparse
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
    args = parser.parse_args()
    started = time.monotonic()
    report = fuzz_harness.campaign(CORPUS.resolve(), args.cases, args.seed, keep=args.keep, batch=args.batch,
                                   log=lambda s: print(s, file=sys.stderr, flush=True))
    print(report.summary())
    print(f"{time.monotonic() - started:.0f} s")
    return 1 if report.failures else 0


if __name__ == "__main__":
    sys.exit(main())
