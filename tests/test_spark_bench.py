"""benches/spark_bench.py's tables: the medians' ratio and the spread of the rounds' own
ratios, which the results in benches/results report."""

from __future__ import annotations

import doctest

from bench_modules import load_bench


def test_table_cells_report_the_rounds_spread() -> None:
    module = load_bench("spark_bench")
    result = doctest.testmod(module)
    assert result.attempted >= 1 and result.failed == 0
    # One round: no spread to tell.
    assert module.table_cells({"spark native": [0.2], "pqsift read": [0.1]}) == "200 (200) | 100 (100) | 2.00×"
    times = {"spark native": [0.3, 0.3, 0.3, 0.3, 0.3], "pqsift read": [0.1, 0.1, 0.1, 0.1, 0.3]}
    assert module.round_ratios(times, "pqsift read") == "(3.0–3.0)"
