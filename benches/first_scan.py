"""A query's first runs in a fresh process: pqsift's allocator settings and the peers.

The peers bench times each engine after a warm-up, when the memory a scan decodes into has
already been mapped by the runs before. A command-line scan, a notebook's first query and a
new Spark Python worker start without that memory: the kernel faults in and zeroes every
page of the output. How much that costs depends on the page size and on the host: under a
hypervisor that takes back free guest memory (virtio-balloon free page reporting, as
Firecracker does), the first touch of a fresh page also faults on the host, and a huge page
is carved from exactly the large free blocks that were given back.

Each round starts, for every shape and every variant in turn (the order alternating), a
fresh process that imports the engines, then runs the shape ``--runs`` times in a row.
Variants: pqsift as built, pqsift with other jemalloc settings (``PQSIFT_MALLOC_CONF``, see
``pqsift/_allocator.py``) and, with ``--peers``, Polars and pyarrow.dataset. Reported per
shape and variant: the first run's wall time (median over the rounds, with the range), the
second's, and the warm time (each process's best of the later runs, median over rounds);
the first run's CPU time (user + system) and page faults; and each first-run median over
pqsift's (as built).

    python benches/first_scan.py --rounds 6 --threads 1 --peers
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

BENCHES = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCHES))

from peers import THREAD_VARIABLES, default_datasets  # noqa: E402

#: pqsift variants: name → ``PQSIFT_MALLOC_CONF`` (None: the build's own settings).
ALLOCATOR_VARIANTS: dict[str, str | None] = {
    "pqsift": None,
    "pqsift, huge pages": "thp:always,metadata_thp:auto",
}

#: The shapes timed: (dataset, shape name), shapes of ``peers.py``.
SHAPES = [
    ("peers", "moderate (~25%)"),
    ("events", "moderate (~25%)"),
    ("events", "projection scan"),
    ("events", "numeric-heavy projection"),
    ("events", "text-heavy projection"),
    ("events-spark", "projection scan"),
]

CHILD = r"""
import json, os, resource, sys, time
sys.path.insert(0, os.environ["FIRST_SCAN_BENCHES"])
import peers

args = json.loads(sys.argv[1])
dataset = next(d for d in peers.default_datasets(args["dataset"]))
shape = next(s for s in dataset.shapes(dataset.files * dataset.rows_per_file) if s.name == args["shape"])
run = peers.engines(dataset.root, args["threads"])[args["engine"]]
out = []
for _ in range(args["runs"]):
    before = resource.getrusage(resource.RUSAGE_SELF)
    wall = time.perf_counter()
    rows = run(shape)
    wall = time.perf_counter() - wall
    after = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    out.append({"wall_ms": wall * 1e3, "cpu_ms": cpu * 1e3, "sys_ms": (after.ru_stime - before.ru_stime) * 1e3,
                "faults": after.ru_minflt - before.ru_minflt, "rows": rows})
print(json.dumps(out))
"""


def run_child(dataset: str, shape: str, variant: str, threads: int, runs: int) -> list[dict[str, Any]]:
    """One fresh process running ``shape`` ``runs`` times with ``variant``."""
    env = {**os.environ, "FIRST_SCAN_BENCHES": str(BENCHES), **dict.fromkeys(THREAD_VARIABLES, str(threads))}
    env.pop("PQSIFT_MALLOC_CONF", None)
    engine = variant
    if variant in ALLOCATOR_VARIANTS:
        engine = "pqsift"
        if ALLOCATOR_VARIANTS[variant] is not None:
            env["PQSIFT_MALLOC_CONF"] = str(ALLOCATOR_VARIANTS[variant])
    request = {"dataset": dataset, "shape": shape, "engine": engine, "threads": threads, "runs": runs}
    done = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps(request)], env=env, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"{variant} on {dataset} {shape}: {done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def host() -> dict[str, str]:
    """What decides the cost of fresh memory here: the kernel's transparent huge page
    setting and whether a balloon device takes back the guest's free memory."""

    def read(path: str) -> str:
        try:
            return Path(path).read_text().strip()
        except OSError:
            return "unknown"

    reporting = [part for part in read("/proc/cmdline").split() if part.startswith("page_reporting.")]
    return {
        "transparent_hugepage": read("/sys/kernel/mm/transparent_hugepage/enabled"),
        "transparent_hugepage_defrag": read("/sys/kernel/mm/transparent_hugepage/defrag"),
        "virtio_balloon": "yes" if Path("/sys/bus/virtio/drivers/virtio_balloon").exists() else "no",
        "free_page_reporting": " ".join(reporting) or "not set on the kernel command line",
    }


def summarise(processes: list[list[dict[str, Any]]]) -> dict[str, Any]:
    def spread(values: list[float]) -> dict[str, float]:
        return {"median": statistics.median(values), "min": min(values), "max": max(values)}

    return {
        "first_wall": spread([p[0]["wall_ms"] for p in processes]),
        "second_wall": spread([p[1]["wall_ms"] for p in processes]),
        "warm_wall": spread([min(r["wall_ms"] for r in p[2:]) for p in processes]),
        "first_cpu": spread([p[0]["cpu_ms"] for p in processes]),
        "first_sys": spread([p[0]["sys_ms"] for p in processes]),
        "first_faults": spread([p[0]["faults"] for p in processes]),
        "rows": {p[0]["rows"] for p in processes}.pop(),
    }


def cell(values: dict[str, float]) -> str:
    return f"{values['median']:,.0f} ({values['min']:,.0f}–{values['max']:,.0f})"


def markdown(document: dict[str, Any], command: str) -> str:
    lines = [
        "# `benches/first_scan.py` — a query's first runs in a fresh process",
        "",
        f"Produced by `{command}` on {document['when']}, {os.cpu_count()} CPUs, {document['platform']}, "
        f"{document['threads']} thread(s), {document['rounds']} rounds: in each, every variant runs every shape in a "
        f"fresh process ({document['runs']} runs in a row), the variants' order alternating. Cells: median over the "
        "rounds (range). Warm: each process's best of its runs after the second. `first ÷ pqsift`: the first run's "
        "median wall time over pqsift's (as built); > 1: slower than pqsift.",
        "",
        "Host: transparent huge pages `{transparent_hugepage}` (defrag `{transparent_hugepage_defrag}`); "
        "virtio-balloon driver: {virtio_balloon}; free page reporting: {free_page_reporting}.".format(
            **document["host"]
        ),
        "",
        "Variants: "
        + "; ".join(
            f"`{name}`" + (f" (`PQSIFT_MALLOC_CONF={conf}`)" if conf else " (as built)")
            for name, conf in ALLOCATOR_VARIANTS.items()
            if name in document["variants"]
        )
        + ".",
        "",
    ]
    for key, results in document["shapes"].items():
        lines += [
            f"## {key}",
            "",
            "| variant | first run, ms | second run, ms | warm, ms | first run CPU ms | of it system | page faults | first ÷ pqsift |",
            "|---|---:|---:|---:|---:|---:|---:|---:|",
        ]
        base = results["pqsift"]["first_wall"]["median"]
        for variant, summary in results.items():
            lines.append(
                f"| {variant} | {cell(summary['first_wall'])} | {cell(summary['second_wall'])} | "
                f"{summary['warm_wall']['median']:,.0f} | {cell(summary['first_cpu'])} | "
                f"{summary['first_sys']['median']:,.0f} | {summary['first_faults']['median']:,.0f} | "
                f"{summary['first_wall']['median'] / base:.2f} |"
            )
        lines.append("")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--runs", type=int, default=5, help="runs in each process (at least 3)")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--peers", action="store_true", help="also Polars and pyarrow.dataset")
    parser.add_argument("--shapes", default="all", help="comma-separated 'dataset:shape' keys, or all")
    parser.add_argument("--out", type=Path, default=BENCHES / "results" / "first_scan")
    parser.add_argument("--render", type=Path, help="only write the Markdown of this earlier run's JSON")
    args = parser.parse_args()
    if args.render is not None:
        document = json.loads(args.render.read_text())
        if "host" not in document:  # a run from before the host was recorded: this host
            document["host"] = host()
            args.render.write_text(json.dumps(document, indent=1))
        args.render.with_suffix(".md").write_text(markdown(document, document.get("command", "")))
        return
    if args.runs < 3:
        raise SystemExit("--runs must be at least 3 (first, second, warm)")
    shapes = SHAPES if args.shapes == "all" else [tuple(key.split(":", 1)) for key in args.shapes.split(",")]
    for dataset in {d for d, _ in shapes}:
        default_datasets(dataset)[0].ensure()
    variants = list(ALLOCATOR_VARIANTS) + (["polars", "pyarrow.dataset"] if args.peers else [])
    raw: dict[str, dict[str, list[list[dict[str, Any]]]]] = {}
    for round_ in range(args.rounds):
        for dataset, shape in shapes:
            key = f"{dataset}: {shape}"
            order = variants if round_ % 2 == 0 else variants[::-1]
            for variant in order:
                runs = run_child(dataset, shape, variant, args.threads, args.runs)
                raw.setdefault(key, {}).setdefault(variant, []).append(runs)
                print(f"round {round_ + 1} {key:<40} {variant:<24} first {runs[0]['wall_ms']:8.1f} ms", flush=True)
    document = {
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "platform": platform.platform(),
        "host": host(),
        "command": "python benches/first_scan.py " + " ".join(sys.argv[1:]),
        "threads": args.threads,
        "rounds": args.rounds,
        "runs": args.runs,
        "variants": variants,
        "shapes": {key: {v: summarise(raw[key][v]) for v in variants} for key in raw},
        "raw": raw,
    }
    for key, results in document["shapes"].items():
        if len({summary["rows"] for summary in results.values()}) != 1:
            raise SystemExit(f"{key}: the variants returned different row counts")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.with_suffix(".json").write_text(json.dumps(document, indent=1))
    args.out.with_suffix(".md").write_text(markdown(document, document["command"]))
    print(markdown(document, document["command"]))


if __name__ == "__main__":
    main()
