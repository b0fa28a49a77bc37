"""pqsift's CPU time against the decompression floor (issue 42, item 4).

    python benches/decompression_floor.py [--repeat 5]

A scan that reads every page of its columns cannot cost less than decompressing them. For
each shape of ``benches/peers.py`` that does (the ~25% filter: a quarter of the rows pass
everywhere, so every page of every column read holds one; the projections), the floor is
zstd's own time on exactly those pages: each column chunk's dictionary page and data pages
(located by the offset index, as pqsift reads them) are read from the files beforehand, and
the zstd frame of each page is decompressed by ``zstandard`` (libzstd 1.5.7, the version the
``zstd-sys`` crate builds into pqsift). pqsift's figure is the CPU time
(``time.process_time``) of the whole scan at one thread, best of ``--repeat``; the floor's,
the best of ``--repeat`` passes over the pages. The ratio is what the issue bounds (≤ 1.3).

The peers that keep up with pqsift on these shapes (Polars, DataFusion) are timed the same
way, at one thread: a peer's CPU time over the floor is the most any reader that decompresses
the same pages could gain on it — below 1.25, a lead of 1.25× on that shape is out of reach.
Results go to ``--out`` (``benches/results/decompression_floor.md``).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

import zstandard

from pqsift import _core

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benches"))

import peers  # noqa: E402 - needs the path above

ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
# The peers closest to pqsift on these shapes (benches/results/peers_events_run3.md).
PEERS = ("polars", "datafusion")
# Shapes that read every page of the columns they read.
WHOLE_PAGE_SHAPES = ("moderate (~25%)", "projection scan", "text-heavy projection", "numeric-heavy projection")


def page_frames(path: Path, columns: list[str]) -> list[bytes]:
    """The zstd frame of every compressed page (dictionary pages included) of `columns` in
    the file."""
    frames: list[bytes] = []
    with path.open("rb") as file:
        for column in columns:
            for _rows, pages, dictionary in _core.column_pages(str(path), column):
                assert pages, f"{path}: {column} has no offset index"
                spans = [dictionary] if dictionary else []
                spans += [(offset, size) for offset, size, _first_row in pages]
                for offset, size in spans:
                    file.seek(offset)
                    page = file.read(size)
                    # The page header (Thrift) comes first (and a v2 page's levels, stored
                    # uncompressed); the compressed body is one frame. A v2 page its writer
                    # left uncompressed (`is_compressed` false: zstd did not shrink it) has
                    # none, and costs the floor nothing.
                    start = page.find(ZSTD_MAGIC)
                    if start >= 0:
                        frames.append(page[start:])
    return frames


def floor_seconds(frames: list[bytes], repeat: int) -> tuple[float, int]:
    """Best time to decompress every frame, and the bytes they decompress to."""
    decompressor = zstandard.ZstdDecompressor()
    best, total = float("inf"), 0
    for _ in range(repeat):
        started, total = time.process_time(), 0
        for frame in frames:
            total += len(decompressor.decompressobj().decompress(frame))
        best = min(best, time.process_time() - started)
    return best, total


def cpu_seconds(run: Callable[[peers.Shape], int], shape: peers.Shape, repeat: int) -> float:
    """Best CPU time of `repeat` runs of `shape`, after one that warms the caches."""
    best = float("inf")
    for _ in range(repeat + 1):  # the first run warms the metadata cache and the page cache
        started = time.process_time()
        run(shape)
        best = min(best, time.process_time() - started)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--out", type=Path, default=ROOT / "benches" / "results" / "decompression_floor.md")
    args = parser.parse_args()
    lines = [
        "# pqsift's CPU time against the decompression floor (`benches/decompression_floor.py`)",
        "",
        "Shapes of `benches/peers.py` that read every page of their columns. Floor: zstd "
        "(libzstd through `zstandard`) decompressing exactly those pages, dictionary pages "
        f"included; pqsift and the peers: the scan's CPU time at one thread. Best of {args.repeat}, ms. "
        "Best peer ÷ floor: the most a reader decompressing the same pages could lead that peer by.",
        "",
        "| dataset | shape | pages | decompressed MiB | floor ms | pqsift CPU ms | pqsift ÷ floor "
        "| best peer CPU ms | best peer ÷ floor | best peer ÷ pqsift |",
        "|---|---|---:|---:|---:|---:|---:|---|---:|---:|",
    ]
    # The peers at one thread, as pqsift: set before `engines` imports them, and checked.
    os.environ.update(peers.thread_environment(1))
    peers.limit_threads(1)
    print("\n".join(lines[-2:]), flush=True)
    for dataset in peers.default_datasets():
        if not dataset.root.exists():
            print(f"skipping {dataset.name}: {dataset.root} is not written (make bench-peers writes it)")
            continue
        files = sorted(dataset.root.glob("*.parquet"))
        engines = peers.engines(dataset.root, threads=1)
        for shape in dataset.shapes(dataset.files * dataset.rows_per_file):
            if shape.name not in WHOLE_PAGE_SHAPES:
                continue
            read = list(dict.fromkeys([*shape.columns, *shape.filter_columns]))
            frames = [frame for path in files for frame in page_frames(path, read)]
            floor, decompressed = floor_seconds(frames, args.repeat)
            cpu = cpu_seconds(engines["pqsift"], shape, args.repeat)
            timed = [(name, cpu_seconds(engines[name], shape, args.repeat)) for name in PEERS if name in engines]
            peer, peer_cpu = min(timed, key=lambda p: p[1], default=("none installed", float("nan")))
            lines.append(
                f"| {dataset.name} | {shape.name} | {len(frames):,} | {decompressed / 2**20:,.0f} "
                f"| {floor * 1000:.1f} | {cpu * 1000:.1f} | {cpu / floor:.2f} "
                f"| {peer_cpu * 1000:.1f} ({peer}) | {peer_cpu / floor:.2f} | {peer_cpu / cpu:.2f} |"
            )
            print(lines[-1], flush=True)
    args.out.write_text("\n".join(lines) + "\n")
    print(f"written to {args.out}")


if __name__ == "__main__":
    main()
