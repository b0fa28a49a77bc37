"""Two builds of pqsift timed on the same shapes, interleaved: what a change did.

Ratios against other engines move 10-30% between runs on shared vCPUs, and between machines
more (an engine can be twice as fast on one instance as on another). To say what a change
did, time the build before it and the build after it in alternating rounds, each round in
a fresh process per build, on every shape of the `peers` and `events` datasets (the text-heavy
projection left out: seconds a run, and the change rarely touches it).

    # keep the current build, change the code, rebuild (make build), then:
    cp -r python/pqsift /tmp/base/            # before the change: the package with its _core
    python benches/ab_builds.py --base /tmp/base --rounds 2 --threads 1

Prints a markdown table: best wall and best median CPU time per build (ms), and the CPU
change. The datasets are those of `benches/peers.py` (written there if absent).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import peers  # noqa: E402

SKIPPED = {"text-heavy projection"}


#: The datasets `--datasets` names: where `benches/peers.py` writes each, and its shapes.
DATASETS = {
    "peers": (Path("data/bench"), peers.shapes),
    "events": (Path("data/bench-events"), lambda: peers.event_shapes(8_000_000)),
    "events-spark": (Path("data/bench-events-spark"), lambda: peers.event_shapes(8_000_000, int96_ts=True)),
}


def child(threads: int, repeat: int, datasets: list[str]) -> None:
    """Runs every shape with the pqsift on sys.path; one JSON line per shape."""
    import pqsift

    for root, shapes in (DATASETS[name] for name in datasets):
        for shape in shapes():
            if shape.name in SKIPPED:
                continue

            def run(shape: peers.Shape = shape, root: Path = root) -> int:
                scan = pqsift.scan(str(root), columns=shape.columns, filter=shape.where or None, threads=threads)
                return scan.to_table().num_rows

            run()
            walls, cpus = [], []
            for _ in range(repeat):
                cpu, wall = time.process_time(), time.perf_counter()
                rows = run()
                cpus.append(time.process_time() - cpu)
                walls.append(time.perf_counter() - wall)
            cpus.sort()
            line = {"data": root.name, "shape": shape.name, "rows": rows, "wall": min(walls), "cpu": cpus[len(cpus) // 2]}
            print(json.dumps(line), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base", type=Path, help="a directory holding the build before the change (its pqsift package)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=5, help="timed runs per shape and round")
    parser.add_argument(
        "--datasets", default="peers,events", help=f"comma-separated, of {', '.join(DATASETS)} (default: peers,events)"
    )
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    datasets = args.datasets.split(",")
    if unknown := set(datasets) - set(DATASETS):
        parser.error(f"unknown datasets: {', '.join(sorted(unknown))}")
    if args.child:
        child(args.threads, args.repeat, datasets)
        return
    if args.base is None:
        parser.error("--base is required")
    for name in datasets:
        for dataset in peers.default_datasets(name):
            dataset.ensure()
    best: dict[tuple[str, str], dict[tuple[str, str], float]] = defaultdict(dict)
    for _ in range(args.rounds):
        for build, path in (("before", str(args.base.resolve())), ("after", "")):
            env = dict(os.environ, PYTHONPATH=path)
            command = [
                sys.executable,
                __file__,
                "--child",
                f"--threads={args.threads}",
                f"--repeat={args.repeat}",
                f"--datasets={args.datasets}",
            ]
            out = subprocess.run(command, env=env, check=True, capture_output=True, text=True).stdout
            for line in out.splitlines():
                got = json.loads(line)
                slot = best[(got["data"], got["shape"])]
                for measure in ("wall", "cpu"):
                    slot[(build, measure)] = min(slot.get((build, measure), float("inf")), got[measure])
    print("| dataset | shape | wall before → after (ms) | CPU before → after (ms) | CPU |")
    print("|---|---|---|---|---|")
    for (data, shape), slot in best.items():
        before, after = slot[("before", "cpu")], slot[("after", "cpu")]
        wall = f"{slot[('before', 'wall')] * 1e3:.1f} → {slot[('after', 'wall')] * 1e3:.1f}"
        print(f"| {data} | {shape} | {wall} | {before * 1e3:.1f} → {after * 1e3:.1f} | {100 * (after / before - 1):+.0f}% |")


if __name__ == "__main__":
    main()
