"""A short, deterministic fuzzing campaign (``tests/fuzz_harness.py``): mutants of corpus
and generated files, scanned three ways (without and with a filter, and with drawn
options) in subprocesses. Every outcome must be a result or a pqsift exception: no
crash, hang, panic or foreign exception.
``python benches/fuzz.py`` runs the long campaign."""

from __future__ import annotations

from pathlib import Path

import fuzz_harness
from s3_harness import S3Emulator

CASES = 300


def test_short_fuzz_campaign_has_no_failures(corpus: Path, tmp_path: Path) -> None:
    report = fuzz_harness.campaign(corpus, cases=CASES, seed=20261121, keep=tmp_path / "failing", batch=100, log=lambda s: None)
    print(report.summary())
    assert report.cases == CASES
    assert not report.failures, report.summary()
    # The mutants exercise the error paths, not only the happy one.
    assert report.outcomes["CorruptFileError"] > 0 and report.outcomes["ok"] > 0


def test_short_fuzz_campaign_from_an_object_store_has_no_failures(corpus: Path, tmp_path: Path, s3_emulator: S3Emulator) -> None:
    """The same mutants uploaded to a local S3 and scanned from there: the object-store
    path reads footers and page indexes by ranges and fetches pages before their headers
    are checked."""
    bucket = s3_emulator.new_bucket("fuzz")

    def put(name: str, data: bytes) -> str:
        return f"s3://{bucket}/{s3_emulator.put_object(bucket, name, data)}"

    store = fuzz_harness.Store(put, s3_emulator.storage_options)
    report = fuzz_harness.campaign(corpus, cases=60, seed=20261205, keep=tmp_path / "failing", batch=60, log=lambda s: None, store=store)
    assert report.cases == 60
    assert not report.failures and not report.suspicious, report.summary()
    assert report.outcomes["CorruptFileError"] > 0 and report.outcomes["ok"] > 0
