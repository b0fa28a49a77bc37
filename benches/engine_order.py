"""One query run by engines in a given order in one process: what the run before costs the next.

``benches/peers.py`` times every engine in one process, an engine's warm-up and runs in a
row, the engines in turns. A shape whose result is gigabytes (the text-heavy projection:
3.3 GiB of Arrow strings from pqsift, 6.2 GiB of views from DataFusion) then depends on
what ran before it: memory another engine's allocator gave back to the kernel is memory the
next one takes fresh, each page faulted in and zeroed (in a virtual machine, possibly backed
by the host again). This bench shows it: the engines named by ``--order`` run one query
each, in that order, and each run prints its wall and CPU time and the minor page faults
it took.

    python benches/engine_order.py --dataset events --shape "text-heavy projection" \\
        --threads 1 --order pqsift,pqsift,datafusion,pqsift,pqsift,polars,pqsift,pqsift

Run it from the repository root (the datasets of ``peers.py``, written there if absent);
``--out`` adds the runs as a Markdown table.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="events", help="a dataset of peers.py (default: events)")
    parser.add_argument("--shape", default="text-heavy projection", help="a shape of that dataset, by name")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--order", required=True, help="engine names of peers.py, comma-separated, run in this order")
    parser.add_argument("--out", type=Path, default=None, help="also write the runs here as Markdown")
    args = parser.parse_args()
    from peers import default_datasets, engines, limit_threads, thread_environment

    # Before `engines` imports Polars and DataFusion.
    os.environ.update(thread_environment(args.threads))

    (dataset,) = default_datasets(args.dataset)
    dataset.ensure()
    shape = {s.name: s for s in dataset.shapes(dataset.files * dataset.rows_per_file)}[args.shape]
    limit_threads(args.threads)
    runs = engines(dataset.root, args.threads)
    lines = [
        f'`python benches/engine_order.py --dataset {args.dataset} --shape "{args.shape}" --threads {args.threads} --order {args.order}`',
        "",
        "| # | engine | wall ms | CPU ms | minor faults |",
        "|---:|---|---:|---:|---:|",
    ]
    for number, name in enumerate(args.order.split(","), 1):
        faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        cpu, wall = time.process_time(), time.perf_counter()
        runs[name](shape)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults
        lines.append(f"| {number} | {name} | {wall * 1000:.0f} | {cpu * 1000:.0f} | {faults:,} |")
        print(lines[-1], flush=True)
    if args.out is not None:
        args.out.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
