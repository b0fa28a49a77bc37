"""Chart of the peer benchmark: ``benches/results/peers.json`` → ``benches/results/peers.png``.

Grouped bars, one group per query shape and one bar per engine, time on a log scale (the
shapes span two orders of magnitude); pqsift in a strong colour, pqsift without pushdown
in a light shade of it, the peers in muted colours; each pqsift bar is labelled with its
speed relative to the best peer (>1× is faster).

The results file holds one run per dataset and thread count; the chart shows one of them
(default: the ``peers`` dataset at 2 threads, else the first run) and one measure, the best
wall time (default) or the median CPU time (``--metric cpu``).

``benches/peers.py`` calls :func:`plot` after every run; ``python benches/plot_peers.py``
redraws the chart from the JSON alone (``make plot-peers``).
"""

from __future__ import annotations

import argparse
import json
import textwrap
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results"
PQSIFT = "pqsift"
PQSIFT_COLOURS = {"pqsift": "#d9480f", "pqsift (no pushdown)": "#ffa94d"}
PEER_COLOURS = ["#8da0cb", "#66c2a5", "#a6d854", "#b3b3b3", "#e78ac3", "#e5c494"]


def select_run(data: dict[str, Any], dataset: str = "peers", threads: int = 2) -> dict[str, Any]:
    """The run of `dataset` at `threads` threads in a results file of ``benches/peers.py``
    (``{"runs": [{"dataset", "threads", "data", "shapes"}, ...]}``), else the first run."""
    runs = data["runs"]
    for run in runs:
        if run["dataset"] == dataset and run["threads"] == threads:
            return run
    return runs[0]


def load(path: Path, dataset: str = "peers", threads: int = 2, metric: str = "wall") -> list[dict[str, Any]]:
    """The shapes of one run of a results file, each ``{"name", "filter", "columns", "rows",
    "seconds": {engine: time}}`` — the best wall time, or with ``metric="cpu"`` the median CPU
    time. Also reads the earlier formats of the file: one run (``{"shapes": [...]}`` with
    ``seconds`` per shape) and the first (a mapping shape → engine → seconds)."""
    data = json.loads(path.read_text())
    if isinstance(data, dict) and "runs" in data:
        key = {"wall": "wall_s", "cpu": "cpu_s"}[metric]
        return [{**shape, "seconds": shape[key]} for shape in select_run(data, dataset, threads)["shapes"]]
    if isinstance(data, dict) and "shapes" in data:
        return list(data["shapes"])
    return [{"name": name, "filter": None, "columns": None, "rows": None, "seconds": times} for name, times in data.items()]


def engines_of(shapes: list[dict[str, Any]]) -> list[str]:
    """Engines in a stable order: pqsift's variants first, then the peers as they appear."""
    seen: list[str] = []
    for shape in shapes:
        for engine in shape["seconds"]:
            if engine not in seen:
                seen.append(engine)
    ours = [e for e in seen if e.startswith(PQSIFT)]
    return sorted(ours, key=lambda e: (e != PQSIFT, e)) + [e for e in seen if not e.startswith(PQSIFT)]


def plot(
    json_path: Path = RESULTS / "peers.json",
    png_path: Path = RESULTS / "peers.png",
    title: str | None = None,
    dataset: str = "peers",
    threads: int = 2,
    metric: str = "wall",
) -> Path:
    """Draws the chart of ``json_path`` (the run of `dataset` at `threads` threads, `metric`
    ``wall`` or ``cpu``) into ``png_path`` and returns that path."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    shapes = load(json_path, dataset, threads, metric)
    data = json.loads(json_path.read_text())
    if isinstance(data, dict) and "runs" in data:
        run = select_run(data, dataset, threads)
        dataset, threads = run["dataset"], run["threads"]
        where = f"{dataset} dataset, {threads} thread{'s' if threads != 1 else ''}: "
    else:
        where = ""
    measure = "median CPU time" if metric == "cpu" else "best time"
    engines = engines_of(shapes)
    peer_colours = iter(PEER_COLOURS)
    colours = {e: PQSIFT_COLOURS.get(e) or next(peer_colours, "#adb5bd") for e in engines}

    groups = len(shapes)
    width = 0.8 / len(engines)
    fig, ax = plt.subplots(figsize=(max(11, 1.6 * groups), 5.2), dpi=120)
    for i, engine in enumerate(engines):
        xs, ys = [], []
        for g, shape in enumerate(shapes):
            seconds = shape["seconds"].get(engine)
            if seconds is not None:
                xs.append(g - 0.4 + width * (i + 0.5))
                ys.append(seconds * 1000)
        ours = engine.startswith(PQSIFT)
        bars = ax.bar(
            xs,
            ys,
            width * 0.92,
            label=engine,
            color=colours[engine],
            edgecolor="black" if engine == PQSIFT else "none",
            linewidth=1.2 if engine == PQSIFT else 0,
            zorder=3 if ours else 2,
        )
        if engine == PQSIFT:
            for bar, shape in zip(bars, [s for s in shapes if engine in s["seconds"]], strict=True):
                peers = [t for e, t in shape["seconds"].items() if not e.startswith(PQSIFT)]
                if peers:
                    ratio = min(peers) / shape["seconds"][engine]
                    ax.annotate(
                        f"{ratio:.2f}×",
                        (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                        xytext=(0, 3),
                        textcoords="offset points",
                        ha="center",
                        va="bottom",
                        fontsize=8,
                        fontweight="bold",
                        color=PQSIFT_COLOURS[PQSIFT],
                        zorder=10,  # above the neighbouring bars
                    )
    ax.set_yscale("log")
    ax.set_ylabel(f"{'CPU ' if metric == 'cpu' else ''}time, ms (log scale; lower is better)")
    labels = []
    for shape in shapes:
        label = textwrap.fill(shape["name"], 20)
        if shape.get("rows") is not None:
            label += f"\n{shape['rows']:,} row{'s' if shape['rows'] != 1 else ''}"
        labels.append(label)
    ax.set_xticks(range(groups), labels, fontsize=9)
    ax.grid(axis="y", which="both", alpha=0.3, zorder=0)
    ax.set_axisbelow(True)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    ax.legend(ncol=3, fontsize=8, frameon=False, loc="upper left")
    ax.set_title(
        title or f"pqsift vs peers, {where}{measure} per query shape (label: best peer's time / pqsift's; > 1: pqsift ahead)",
        fontsize=10,
    )
    fig.tight_layout()
    png_path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(png_path)
    plt.close(fig)
    return png_path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, default=RESULTS / "peers.json", help="results of benches/peers.py")
    parser.add_argument("--png", type=Path, default=RESULTS / "peers.png", help="the chart to write")
    parser.add_argument("--dataset", default="peers", help="the run of this dataset (default: peers)")
    parser.add_argument("--threads", type=int, default=2, help="the run at this thread count (default: 2)")
    parser.add_argument("--metric", choices=("wall", "cpu"), default="wall", help="best wall time or median CPU time")
    args = parser.parse_args()
    print(f"wrote {plot(args.json, args.png, dataset=args.dataset, threads=args.threads, metric=args.metric)}")


if __name__ == "__main__":
    main()
