"""benches/plot_peers.py draws the peer benchmark chart from peers.json (both the format
peers.py writes now and the first one, shape → engine → seconds)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

BENCHES = Path(__file__).resolve().parents[1] / "benches"


def load_module():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("plot_peers", BENCHES / "plot_peers.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_committed_results_and_both_formats(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib", reason="matplotlib is a benchmark dependency (requirements-bench.txt)")
    plot_peers = load_module()
    committed = plot_peers.load(BENCHES / "results" / "peers.json")
    assert [s["name"] for s in committed][:2] == ["range on sorted ts", "point lookup (bloom)"]
    assert all("pqsift" in s["seconds"] for s in committed)
    assert plot_peers.engines_of(committed)[:2] == ["pqsift", "pqsift (no pushdown)"]

    new = {"shapes": [{"name": "q", "filter": "a > 1", "columns": ["a"], "rows": 1, "seconds": {"duckdb": 0.02, "pqsift": 0.01}}]}
    old = {"q": {"duckdb": 0.02, "pqsift": 0.01}}
    for name, document in (("new", new), ("old", old)):
        source = tmp_path / f"{name}.json"
        source.write_text(json.dumps(document))
        png = plot_peers.plot(source, tmp_path / f"{name}.png")
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
