"""The allocator A/B: pqsift's jemalloc configuration (``rust/allocator.rs``) against
alternatives, on the peer benchmark's shapes and on the memory several Python workers hold
together.

Run with ``make bench-allocator`` (builds the wheel into ``target/ab/``). Each variant runs
in child processes that import the package from that wheel, with jemalloc's settings
changed through ``PQSIFT_MALLOC_CONF`` (it overrides the options it names; the package
loads its extension with jemalloc's own variable set to it, ``pqsift/_allocator.py``), so all are timed by the same interpreter on the same files
(``data/bench`` and ``data/bench-events``, written by ``benches/peers.py`` if absent):

1. **Time**: every shape of both datasets, at 1 and 2 threads, a warm-up and ``--repeat`` runs
   in a row per shape; ``--passes`` passes, the variants' order rotating each pass. Reported:
   per shape the median CPU time (user + system, all threads) and the best wall time over the
   passes, and each variant's ratio to the default (< 1: the variant is cheaper).
2. **Memory of several workers**: ``--workers`` processes at once (Spark runs one Python
   worker per core) each stream every column of the ``peers`` dataset twice, dropping each
   batch, then sit idle. Reported: the sum over the workers of the peak RSS, and of the RSS
   right after the scans, 2 s later and 12 s later — against pyarrow.dataset doing the same.

The run that replaced the hand-written large-block allocator with jemalloc is kept in
``benches/results/allocator_decision.md``. Writes ``benches/results/allocator.md`` and
``.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import zipfile
from pathlib import Path
from typing import Any

BENCHES = Path(__file__).resolve().parent
ROOT = BENCHES.parent
AB = ROOT / "target" / "ab"

#: The alternatives to the default configuration, as `PQSIFT_MALLOC_CONF` overrides.
JEMALLOC_CONFIGS = {
    "1 s decay": "dirty_decay_ms:1000",
    "huge pages": "thp:always,metadata_thp:auto",
    "8 arenas": "narenas:8",
    "no oversize arena": "oversize_threshold:0",
}

TIME_CHILD = r"""
import json, os, statistics, sys, time
sys.path.insert(0, os.environ["AB_BENCHES"])
import pqsift
import peers

args = json.loads(sys.argv[1])
assert pqsift.__file__.startswith(args["package"]), (pqsift.__file__, args["package"])
out = {}
for name, root in (("peers", args["peers"]), ("events", args["events"])):
    dataset = peers.Dataset(name, __import__("pathlib").Path(root), 0, 0, 0)
    rows = sum(__import__("pyarrow.parquet").parquet.ParquetFile(p).metadata.num_rows for p in sorted(dataset.root.glob("*.parquet")))
    for shape in dataset.shapes(rows):
        def run():
            scan = pqsift.scan(root, columns=shape.columns, filter=shape.where or None, threads=args["threads"])
            return scan.to_table().num_rows
        run()
        walls, cpus = [], []
        for _ in range(args["repeat"]):
            cpu, wall = time.process_time(), time.perf_counter()
            run()
            walls.append(time.perf_counter() - wall)
            cpus.append(time.process_time() - cpu)
        out[f"{name}: {shape.name}"] = {"wall": min(walls), "cpu": statistics.median(cpus)}
print(json.dumps(out))
"""

MEMORY_CHILD = r"""
import json, sys, time
args = json.loads(sys.argv[1])

def status(field):
    for line in open("/proc/self/status"):
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    return 0

import pyarrow as pa
if args["engine"] == "pyarrow":
    import pyarrow.dataset as ds
    dataset = ds.dataset(args["root"], format="parquet")
    def scan():
        for batch in dataset.to_batches():
            del batch
else:
    import pqsift
    assert pqsift.__file__.startswith(args["package"]), (pqsift.__file__, args["package"])
    def scan():
        for batch in pqsift.scan(args["root"], threads=args["threads"]):
            del batch
baseline = status("VmRSS")
for _ in range(2):
    scan()
after = status("VmRSS")
time.sleep(2)
after_2s = status("VmRSS")
time.sleep(10)
print(json.dumps({"baseline": baseline, "peak": status("VmHWM"), "after": after, "after_2s": after_2s, "after_12s": status("VmRSS")}))
"""


def extract(name: str) -> Path:
    """The package of the newest wheel in ``target/ab/<name>-wheel`` unpacked into
    ``target/ab/<name>`` (its ``pqsift`` directory and the extension)."""
    wheels = sorted((AB / f"{name}-wheel").glob("pqsift-*.whl"), key=lambda p: p.stat().st_mtime)
    if not wheels:
        sys.exit(f"no wheel in {AB / f'{name}-wheel'}: run `make bench-allocator`")
    target = AB / name
    with zipfile.ZipFile(wheels[-1]) as wheel:
        wheel.extractall(target)
    return target


def variants() -> dict[str, tuple[Path, dict[str, str]]]:
    package = extract("current")
    out: dict[str, tuple[Path, dict[str, str]]] = {"default": (package, {})}
    for name, conf in JEMALLOC_CONFIGS.items():
        out[name] = (package, {"PQSIFT_MALLOC_CONF": conf})
    return out


def child_env(package: Path, extra: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PQSIFT_MALLOC_CONF", "_RJEM_MALLOC_CONF", "MALLOC_CONF")}
    env.update(extra)
    env["PYTHONPATH"] = f"{package}{os.pathsep}{env.get('PYTHONPATH', '')}"
    env["AB_BENCHES"] = str(BENCHES)
    return env


def time_variants(found: dict[str, tuple[Path, dict[str, str]]], data: dict[str, str], passes: int, repeat: int) -> dict[str, Any]:
    names = list(found)
    runs: dict[str, dict[int, list[dict[str, Any]]]] = {name: {1: [], 2: []} for name in names}
    for number in range(passes):
        order = names[number % len(names) :] + names[: number % len(names)]
        for threads in (1, 2):
            for name in order:
                package, extra = found[name]
                arguments = {**data, "threads": threads, "repeat": repeat, "package": str(package)}
                print(f"pass {number + 1}/{passes}, {threads} thread(s): {name}", flush=True)
                done = subprocess.run(
                    [sys.executable, "-c", TIME_CHILD, json.dumps(arguments)],
                    env=child_env(package, extra),
                    capture_output=True,
                    text=True,
                    check=True,
                )
                runs[name][threads].append(json.loads(done.stdout.strip().splitlines()[-1]))
    out: dict[str, Any] = {}
    for name in names:
        out[name] = {}
        for threads in (1, 2):
            shapes = runs[name][threads][0].keys()
            out[name][str(threads)] = {
                shape: {
                    "cpu": statistics.median(run[shape]["cpu"] for run in runs[name][threads]),
                    "wall": min(run[shape]["wall"] for run in runs[name][threads]),
                }
                for shape in shapes
            }
    return out


def memory(found: dict[str, tuple[Path, dict[str, str]]], root: str, workers: int) -> dict[str, Any]:
    engines: dict[str, tuple[Path | None, dict[str, str]]] = {**found, "pyarrow.dataset": (None, {})}
    out: dict[str, Any] = {}
    for name, (package, extra) in engines.items():
        arguments = {"engine": "pyarrow" if package is None else "pqsift", "root": root, "threads": 1, "package": str(package)}
        env = child_env(package or Path(), extra)
        print(f"memory: {workers} workers of {name}", flush=True)
        started = [
            subprocess.Popen([sys.executable, "-c", MEMORY_CHILD, json.dumps(arguments)], env=env, stdout=subprocess.PIPE, text=True)
            for _ in range(workers)
        ]
        results = [json.loads(process.communicate()[0].strip().splitlines()[-1]) for process in started]
        out[name] = {key: sum(r[key] for r in results) for key in results[0]}
    return out


def markdown(document: dict[str, Any]) -> str:
    mib = 2**20
    lines = [
        "# Allocator A/B",
        "",
        f"`{document['command']}` on {document['machine']}. CPU: median over {document['passes']} passes of the "
        f"median of {document['repeat']} runs; wall: best. Ratio: variant / default (< 1: the variant is cheaper).",
        "",
        "Variants (`PQSIFT_MALLOC_CONF` over the default of `rust/allocator.rs`):",
        "",
    ]
    lines += [f"- **{name}**: `{conf}`" for name, conf in JEMALLOC_CONFIGS.items()]
    timing = document["time"]
    others = [name for name in timing if name != "default"]
    for threads in ("1", "2"):
        lines += ["", f"## {threads} thread(s): CPU ms (wall ms)", ""]
        lines.append("| shape | default | " + " | ".join(others) + " |")
        lines.append("|---|---:|" + "---:|" * len(others))
        ratios: dict[str, list[float]] = {name: [] for name in others}
        for shape, base in timing["default"][threads].items():
            cells = [f"{base['cpu'] * 1000:.1f} ({base['wall'] * 1000:.1f})"]
            for name in others:
                value = timing[name][threads][shape]
                ratio = value["cpu"] / base["cpu"]
                ratios[name].append(ratio)
                cells.append(f"{value['cpu'] * 1000:.1f} ({value['wall'] * 1000:.1f}) ×{ratio:.2f}")
            lines.append(f"| {shape} | " + " | ".join(cells) + " |")
        geo = [f"×{statistics.geometric_mean(ratios[name]):.3f}" for name in others]
        lines.append("| **geometric mean of CPU ratios** | | " + " | ".join(geo) + " |")
    lines += [
        "",
        f"## Memory of {document['workers']} workers at once (sum of RSS, MiB)",
        "",
        "Each worker streams every column of `data/bench` twice (1 thread), dropping batches, then idles.",
        "",
        "| engine | baseline | peak | after the scans | 2 s later | 12 s later |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name, sums in document["memory"].items():
        lines.append(
            f"| {name} | {sums['baseline'] / mib:.0f} | {sums['peak'] / mib:.0f} | {sums['after'] / mib:.0f} | "
            f"{sums['after_2s'] / mib:.0f} | {sums['after_12s'] / mib:.0f} |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--passes", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--data", type=Path, default=Path("data/bench"))
    parser.add_argument("--events-data", type=Path, default=Path("data/bench-events"))
    parser.add_argument("--out", type=Path, default=BENCHES / "results" / "allocator")
    args = parser.parse_args()
    sys.path.insert(0, str(BENCHES))
    import peers

    for dataset in (
        peers.Dataset("peers", args.data, peers.FILES, peers.ROWS_PER_FILE, peers.ROW_GROUP_ROWS),
        peers.Dataset("events", args.events_data, peers.EVENT_FILES, peers.EVENT_ROWS_PER_FILE, peers.EVENT_ROW_GROUP_ROWS),
    ):
        dataset.ensure()
    found = variants()
    data = {"peers": str(args.data.resolve()), "events": str(args.events_data.resolve())}
    started = time.perf_counter()
    document = {
        "command": " ".join(["python", *sys.argv]),
        "machine": f"{os.cpu_count()} cores",
        "passes": args.passes,
        "repeat": args.repeat,
        "workers": args.workers,
        "configs": JEMALLOC_CONFIGS,
        "time": time_variants(found, data, args.passes, args.repeat),
        "memory": memory(found, data["peers"], args.workers),
    }
    document["seconds"] = round(time.perf_counter() - started)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.with_suffix(".json").write_text(json.dumps(document, indent=1) + "\n")
    args.out.with_suffix(".md").write_text(markdown(document))
    print(markdown(document))


if __name__ == "__main__":
    main()
