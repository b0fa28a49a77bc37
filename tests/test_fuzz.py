"""A short, deterministic fuzzing campaign (``tests/fuzz_harness.py``): mutants of corpus
and generated files, scanned three ways (without and with a filter, and with drawn
options) in subprocesses. Every outcome must be a result or a pqsift exception: no
crash, hang, panic or foreign exception.
``python benches/fuzz.py`` runs the long campaign."""

from __future__ import annotations

from pathlib import Path

import fuzz_harness

CASES = 300


def test_short_fuzz_campaign_has_no_failures(corpus: Path, tmp_path: Path) -> None:
    report = fuzz_harness.campaign(corpus, cases=CASES, seed=20261121, keep=tmp_path / "failing", batch=100, log=lambda s: None)
    print(report.summary())
    assert report.cases == CASES
    assert not report.failures, report.summary()
    # The mutants exercise the error paths, not only the happy one.
    assert report.outcomes["CorruptFileError"] > 0 and report.outcomes["ok"] > 0
