"""The size of the plans ``pqsift.spark.read`` hands its tasks, against the files' footers.

Each Spark task carries the driver's plan of its pieces (``rust/planning/task_plan.rs``):
per file a footer, cut to the row groups the task reads. This plans each file of
``benches/scaling.py``'s dataset (``data/scaling``: 40 to 10,000 row groups of two
columns, 10 to 2,000 columns in 20 row groups; written by ``scaling.py`` if absent) for
Spark twice — with the default task size, and with a task per row group (``target_task_bytes=1``)
— and reports the tasks, the plans' bytes together (as the function's closure pickles them),
the file's footer bytes, their ratio, and the driver's planning time (best of ``--repeat``,
footers cached). Writes ``benches/results/task_plans.md`` unless ``--out`` says otherwise.

Run: ``python benches/task_plans.py [--repeat 3]``.
"""

from __future__ import annotations

import argparse
import pickle
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq

HERE = Path(__file__).resolve().parent
DATA = Path("data/scaling")
FILES = ["rg40", "rg500", "rg2000", "rg4000", "rg8000", "rg10000", "cols10", "cols100", "cols500", "cols1000", "cols2000"]


def footer_bytes(path: Path) -> int:
    """The footer's length, as the file's last eight bytes give it."""
    with path.open("rb") as file:
        file.seek(-8, 2)
        return int.from_bytes(file.read(4), "little")


def measure(path: Path, repeat: int, **options: int) -> tuple[int, int, float]:
    """Tasks, pickled plan bytes and best planning seconds of `path` planned for Spark."""
    from pqsift.spark.planning import plan_tasks

    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        plan = plan_tasks(str(path), None, None, parallelism=16, **options)
        rows = [task.to_rows() for task in plan.tasks]
        best = min(best, time.perf_counter() - started)
    return len(plan.tasks), len(pickle.dumps(rows)), best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", type=Path, default=Path("benches/results/task_plans.md"))
    args = parser.parse_args()
    paths = [DATA / f"{name}.parquet" for name in FILES]
    if not all(path.exists() for path in paths):
        sys.path.insert(0, str(HERE))
        from scaling import write_case

        DATA.mkdir(parents=True, exist_ok=True)
        for name in FILES:
            axis, size = ("row_groups", name[2:]) if name.startswith("rg") else ("columns", name[4:])
            write_case(axis, int(size), DATA)
    import pqsift

    lines = [
        "# The plans `pqsift.spark.read` hands its tasks, against the files' footers",
        "",
        f"`python benches/task_plans.py --repeat {args.repeat}` (pqsift {pqsift.__version__}): each file of"
        f" `{DATA}` planned for Spark (`plan_tasks`, `parallelism=16`), with the default task size and with a task per"
        " row group (`target_task_bytes=1`); plans: the tasks' plans pickled together, as `read`'s function carries"
        " them; planning: best of the runs, footers cached.",
        "",
        "| file | row groups | columns | footer KiB | tasks | plans KiB | plans ÷ footer | planning ms |"
        " tasks (a row group each) | plans KiB | plans ÷ footer | planning ms |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for path in paths:
        metadata = pq.ParquetFile(path).metadata
        footer = footer_bytes(path)
        cells = [path.name, f"{metadata.num_row_groups:,}", f"{metadata.num_columns:,}", f"{footer / 1024:,.0f}"]
        for options in ({}, {"target_task_bytes": 1}):
            tasks, plans, seconds = measure(path, args.repeat, **options)
            cells += [f"{tasks:,}", f"{plans / 1024:,.0f}", f"{plans / footer:.2f}", f"{seconds * 1000:,.1f}"]
        lines.append("| " + " | ".join(cells) + " |")
        print(lines[-1], flush=True)
    text = "\n".join(lines) + "\n"
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    print(f"written {args.out}")


if __name__ == "__main__":
    main()
