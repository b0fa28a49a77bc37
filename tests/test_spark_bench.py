"""benches/spark_bench.py's tables: the medians' ratio and the spread of the rounds' own
ratios, which the results in benches/results report."""

from __future__ import annotations

import doctest
import importlib.util
import sys
from pathlib import Path

BENCHES = Path(__file__).resolve().parents[1] / "benches"


def test_table_cells_report_the_rounds_spread() -> None:
    sys.path.insert(0, str(BENCHES))
    try:
        spec = importlib.util.spec_from_file_location("spark_bench", BENCHES / "spark_bench.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(BENCHES))
    result = doctest.testmod(module)
    assert result.attempted >= 1 and result.failed == 0
    # One round: no spread to tell.
    assert module.table_cells({"spark native": [0.2], "pqsift read": [0.1]}) == "200 (200) | 100 (100) | 2.00×"
    times = {"spark native": [0.3, 0.3, 0.3, 0.3, 0.3], "pqsift read": [0.1, 0.1, 0.1, 0.1, 0.3]}
    assert module.round_ratios(times, "pqsift read") == "(3.0–3.0)"
