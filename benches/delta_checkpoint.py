"""Delta log replay on a large log: the checkpoint read for `add` only (seed 004) against
reading the whole checkpoint.

Builds, in a temporary directory, two Delta tables with a long history — "flat"
(unpartitioned) and "partitioned" (by a string ``day`` column) — each of FILES real tiny
Parquet data files of which REMOVED (a fraction) were later removed:

1. ``deltalake.write_deltalake`` creates the table (version 0: protocol, metaData, one add);
2. the script writes FILES more tiny Parquet files with pyarrow and commits them in JSON
   commits of PER_COMMIT adds each, following the Delta protocol (``add``: path,
   partitionValues, size, modificationTime, dataChange, stats with numRecords / minValues /
   maxValues / nullCount; ``remove``: path, deletionTimestamp, dataChange, plus the optional
   extendedFileMetadata, partitionValues and size, as Spark and delta-rs write them); each
   removed file is removed by a random later commit (like compactions and overwrites);
3. ``DeltaTable(path).create_checkpoint()``: delta-rs, an independent writer, writes the
   Parquet checkpoint (one row per live add and per remove tombstone, as the tombstones are
   younger than the 7-day retention);
4. two more commits by delta-rs after the checkpoint: an append (``write_deltalake``) and a
   delete (``DeltaTable.delete``) removing whole files, so the replay also reads commits.

Then, best of REPEAT in one process (wall: ``time.perf_counter``; CPU:
``time.process_time``, all threads), round-robin over the cases (run 1 of each, then run 2,
...) after one untimed run of each:

a. pqsift's log replay: ``pqsift.scan(table)`` construction (listing, checkpoint read for
   ``add`` plus the small protocol/metaData read, the commits after it) — no data file is
   opened until a plan. Its counts come from ``scan.metrics`` of a scan built with
   ``filter="id < -1"``: the log's statistics skip every active file before any footer is
   read (checked: ``files_pruned_log_stats == delta_active_files``), so planning opens no
   data file and the metrics are the replay's own;
b. the whole checkpoint: ``pyarrow.parquet.read_table`` (all columns), and pqsift reading it
   as a plain Parquet file, ``pqsift.scan(checkpoint).to_table()``;
c. the checkpoint projected to ``add`` with ``add.path IS NOT NULL`` pushed down, by pqsift
   (what the replay does) and, for reference, pyarrow's ``read_table(columns=["add"])``;
d. deltalake: ``DeltaTable(table).file_uris()`` (load + active files) and
   ``DeltaTable(table).get_add_actions()``.

pqsift keeps a process-wide cache of parsed footers (keyed by path, size and mtime): before
every pqsift repetition the checkpoint's mtime is bumped, so each one reads and parses its
footer as a new process would; (a') is the replay with the footer cached. The OS page cache
is warm for everything (files just written).

Correctness: pqsift's active files (``scan.files``) equal deltalake's ``file_uris()`` and the
set the builder expects; the add-only read returns exactly the checkpoint's non-null ``add``
rows; pqsift reads as many rows from the table as the active files' ``numRecords`` sum to.

    .venv/bin/python benches/delta_checkpoint.py [--files N] [--out benches/results/delta_checkpoint.md]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import random
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import deltalake
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from deltalake import DeltaTable, write_deltalake

import pqsift

ROWS_PER_FILE = 4
DAYS = 30


# ----- building the log ---------------------------------------------------------------------


@dataclass
class Built:
    """A table built by :func:`build_table` and what the builder knows of it."""

    name: str
    root: Path
    checkpoint: Path
    checkpoint_version: int
    version: int
    expected_active: set[str]
    expected_rows: int
    adds_written: int
    removes_written: int
    commits_written: int
    build_seconds: float
    notes: list[str] = field(default_factory=list)


def _data_table(first_id: int, rows: int) -> pa.Table:
    return pa.table(
        {
            "id": pa.array(range(first_id, first_id + rows), pa.int64()),
            "value": pa.array([(first_id + i) * 0.5 for i in range(rows)], pa.float64()),
        }
    )


def build_table(root: Path, name: str, files: int, removed: float, per_commit: int, partitioned: bool, seed: int) -> Built:
    started = time.perf_counter()
    rng = random.Random(seed)
    days = [f"2026-01-{d:02d}" if d <= 31 else f"2026-02-{d - 31:02d}" for d in range(1, DAYS + 1)]
    # Version 0 by deltalake: protocol, metaData and one add (ids 0..ROWS_PER_FILE-1).
    initial = _data_table(0, ROWS_PER_FILE)
    if partitioned:
        initial = initial.append_column("day", pa.array([days[0]] * ROWS_PER_FILE, pa.string()))
        write_deltalake(str(root), initial, partition_by=["day"])
    else:
        write_deltalake(str(root), initial)
    (initial_file,) = {os.path.normpath(str(p)) for p in root.rglob("*.parquet") if "_delta_log" not in p.parts}
    expected_active = {initial_file}
    expected_rows = ROWS_PER_FILE

    # FILES tiny Parquet files (file i holds ids (i+1)*ROWS_PER_FILE ...) and their adds.
    now = int(time.time() * 1000)
    adds: list[dict[str, Any]] = []
    for i in range(files):
        first = (i + 1) * ROWS_PER_FILE
        table = _data_table(first, ROWS_PER_FILE)
        part_values: dict[str, str] = {}
        directory = root
        if partitioned:
            day = days[rng.randrange(DAYS)]
            part_values = {"day": day}
            directory = root / f"day={day}"
            directory.mkdir(exist_ok=True)
        file_name = f"part-{i:05d}-{uuid.UUID(int=rng.getrandbits(128), version=4)}-c000.snappy.parquet"
        path = directory / file_name
        pq.write_table(table, path, compression="snappy")
        stats = {
            "numRecords": ROWS_PER_FILE,
            "minValues": {"id": first, "value": first * 0.5},
            "maxValues": {"id": first + ROWS_PER_FILE - 1, "value": (first + ROWS_PER_FILE - 1) * 0.5},
            "nullCount": {"id": 0, "value": 0},
        }
        adds.append(
            {
                "path": str(path.relative_to(root)),
                "partitionValues": part_values,
                "size": path.stat().st_size,
                "modificationTime": now,
                "dataChange": True,
                "stats": json.dumps(stats, separators=(",", ":")),
            }
        )

    # Commit c (1-based) adds files [(c-1)*per_commit, c*per_commit); a removed file goes in a
    # random later commit (files of the last commit are never removed).
    commits = (files + per_commit - 1) // per_commit
    commit_of = [i // per_commit + 1 for i in range(files)]
    candidates = [i for i in range(files) if commit_of[i] < commits]
    n_removed = min(len(candidates), round(files * removed))
    removed_in: dict[int, list[int]] = {}
    removed_set = set(rng.sample(candidates, n_removed))
    for i in sorted(removed_set):
        removed_in.setdefault(rng.randint(commit_of[i] + 1, commits), []).append(i)
    log = root / "_delta_log"
    for c in range(1, commits + 1):
        timestamp = now + c
        removes = removed_in.get(c, [])
        new = range((c - 1) * per_commit, min(c * per_commit, files))
        info = {
            "timestamp": timestamp,
            "operation": "WRITE",
            "operationParameters": {"mode": "Append"},
            "engineInfo": "pqsift benches/delta_checkpoint.py",
            "operationMetrics": {"numAddedFiles": str(len(new)), "numRemovedFiles": str(len(removes))},
        }
        lines = [json.dumps({"commitInfo": info})]
        for i in removes:
            add = adds[i]
            lines.append(
                json.dumps(
                    {
                        "remove": {
                            "path": add["path"],
                            "deletionTimestamp": timestamp,
                            "dataChange": True,
                            "extendedFileMetadata": True,
                            "partitionValues": add["partitionValues"],
                            "size": add["size"],
                        }
                    }
                )
            )
        for i in new:
            lines.append(json.dumps({"add": adds[i]}))
        # A commit file is created whole (a writer's put-if-absent): write, then rename.
        target = log / f"{c:020d}.json"
        tmp = log / f".{c:020d}.json.tmp"
        tmp.write_text("\n".join(lines) + "\n")
        os.rename(tmp, target)
    for i in range(files):
        if i not in removed_set:
            expected_active.add(os.path.normpath(str(root / adds[i]["path"])))
            expected_rows += ROWS_PER_FILE

    dt = DeltaTable(str(root))
    assert dt.version() == commits, (dt.version(), commits)
    dt.create_checkpoint()
    checkpoint = log / f"{commits:020d}.checkpoint.parquet"
    assert checkpoint.is_file(), sorted(os.listdir(log))[-4:]

    # Two commits by delta-rs after the checkpoint: an append and a delete of whole files.
    # The builder predicts their effect itself: the appended file is the new Parquet file in
    # the directory; the delete removes exactly the files its predicate covers whole.
    notes = []
    before_files = {os.path.normpath(str(p)) for p in root.rglob("*.parquet") if "_delta_log" not in p.parts}
    append_first = (files + 1) * ROWS_PER_FILE
    appended = _data_table(append_first, ROWS_PER_FILE)
    if partitioned:
        appended = appended.append_column("day", pa.array([days[-1]] * ROWS_PER_FILE, pa.string()))
    write_deltalake(str(root), appended, mode="append")
    new_files = {os.path.normpath(str(p)) for p in root.rglob("*.parquet") if "_delta_log" not in p.parts} - before_files
    assert len(new_files) == 1, new_files
    expected_active |= new_files
    expected_rows += ROWS_PER_FILE
    active = [i for i in range(files) if i not in removed_set]
    if partitioned:
        predicate = f"day = '{days[1]}'"
        gone = {os.path.normpath(str(root / adds[i]["path"])) for i in active if adds[i]["partitionValues"]["day"] == days[1]}
    else:
        # Every id below the 21st active file's: the initial file and the first 20 active
        # files go whole (the cut is at a file boundary, so nothing is rewritten).
        cut = (active[min(20, len(active) - 1)] + 1) * ROWS_PER_FILE
        predicate = f"id < {cut}"
        gone = {initial_file} | {os.path.normpath(str(root / adds[i]["path"])) for i in active if (i + 2) * ROWS_PER_FILE <= cut}
    result = DeltaTable(str(root)).delete(predicate)
    notes.append(f"delta-rs delete `{predicate}`: {json.dumps(result, default=str)}")
    expected_active -= gone
    expected_rows -= ROWS_PER_FILE * len(gone)
    dt = DeltaTable(str(root))
    return Built(
        name=name,
        root=root,
        checkpoint=checkpoint,
        checkpoint_version=commits,
        version=dt.version(),
        expected_active=expected_active,
        expected_rows=expected_rows,
        adds_written=files,
        removes_written=n_removed,
        commits_written=commits,
        build_seconds=time.perf_counter() - started,
        notes=notes,
    )


# ----- the checkpoint's layout ----------------------------------------------------------------


def checkpoint_layout(path: Path) -> dict[str, Any]:
    pf = pq.ParquetFile(path)
    md = pf.metadata
    table = pq.read_table(path)
    present = {name: table.num_rows - table[name].null_count for name in table.column_names}
    bytes_by_action: dict[str, int] = {}
    for rg in range(md.num_row_groups):
        for j in range(md.num_columns):
            column = md.row_group(rg).column(j)
            root_name = column.path_in_schema.split(".")[0]
            bytes_by_action[root_name] = bytes_by_action.get(root_name, 0) + column.total_compressed_size
    # Runs of action kinds in row order (what decides whether a page can be skipped).
    add_valid = table["add"].is_valid().to_numpy(zero_copy_only=False)
    remove_valid = table["remove"].is_valid().to_numpy(zero_copy_only=False)
    kind = np.where(add_valid, 1, np.where(remove_valid, 2, 0))
    boundaries = np.flatnonzero(np.diff(kind)) + 1
    run_starts = np.concatenate(([0], boundaries))
    run_kinds = kind[run_starts]
    runs = {"add": int((run_kinds == 1).sum()), "remove": int((run_kinds == 2).sum()), "other": int((run_kinds == 0).sum())}
    info = pqsift.inspect(str(path))
    pages: dict[str, list[int]] = {}
    for leaf in ("add.path", "remove.path"):
        pages[leaf] = [next(c["pages"] for c in rg["columns"] if c["column"] == leaf) or 0 for rg in info["row_groups"]]
    # Pages of add.path without any add (the only ones `add.path IS NOT NULL` can skip).
    column_pages = pqsift._core.column_pages(str(path), "add.path")
    empty_pages = 0
    total_pages = 0
    row_offset = 0
    for rows, page_list, _ in column_pages:
        starts = [p[2] for p in page_list] + [rows]
        for k in range(len(page_list)):
            total_pages += 1
            lo, hi = row_offset + starts[k], row_offset + starts[k + 1]
            if not add_valid[lo:hi].any():
                empty_pages += 1
        row_offset += rows
    return {
        "file_bytes": path.stat().st_size,
        "rows": md.num_rows,
        "row_groups": md.num_row_groups,
        "row_group_rows": [md.row_group(i).num_rows for i in range(md.num_row_groups)],
        "columns": md.num_columns,
        "created_by": md.created_by,
        "has_page_index": info["has_page_index"],
        "present": present,
        "bytes_by_action": bytes_by_action,
        "runs": runs,
        "pages": pages,
        "add_path_pages": total_pages,
        "add_path_pages_without_add": empty_pages,
        # Filter the struct first: a null struct's child slot holds a placeholder, not a null.
        "add_paths": set(table["add"].combine_chunks().filter(pa.array(add_valid)).field("path").to_pylist()),
    }


# ----- timing ---------------------------------------------------------------------------------


@dataclass
class Timing:
    walls: list[float]
    cpus: list[float]
    result: Any = None

    @property
    def best_wall(self) -> float:
        return min(self.walls)

    @property
    def median_wall(self) -> float:
        return statistics.median(self.walls)

    @property
    def best_cpu(self) -> float:
        return min(self.cpus)


def measure_interleaved(
    cases: dict[str, tuple[Callable[[], Any], Callable[[], None] | None]], repeat: int
) -> dict[str, Timing]:
    """Times each case ``(fn, before)`` ``repeat`` times, round-robin over the cases (run 1 of
    every case, then run 2, ...), so that a burst of other work on the shared machine hits
    all cases alike instead of every run of one. Each case runs once untimed first;
    ``before`` (not timed) runs before every run; the previous run's result is freed before
    the timer starts (freeing a Scan of thousands of files is not free)."""
    timings = {name: Timing([], []) for name in cases}
    for name, (fn, before) in cases.items():
        if before is not None:
            before()
        timings[name].result = fn()
    for _ in range(repeat):
        for name, (fn, before) in cases.items():
            timing = timings[name]
            timing.result = None
            if before is not None:
                before()
            gc.collect()
            gc.disable()
            try:
                c0, w0 = time.process_time(), time.perf_counter()
                result = fn()
                w1, c1 = time.perf_counter(), time.process_time()
            finally:
                gc.enable()
            timing.result = result
            del result
            timing.walls.append(w1 - w0)
            timing.cpus.append(c1 - c0)
    return timings


def touch(path: Path) -> Callable[[], None]:
    """Bumps the file's mtime: pqsift's footer cache (keyed by path, size, mtime) misses."""
    def bump() -> None:
        st = path.stat()
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))

    return bump


# ----- one shape ------------------------------------------------------------------------------


def run_shape(built: Built, repeat: int) -> dict[str, Any]:
    root, cp = str(built.root), built.checkpoint
    layout = checkpoint_layout(cp)
    out: dict[str, Any] = {"built": built, "layout": layout, "rows": []}
    bump = touch(cp)

    def row(label: str, timing: Timing, bytes_read: Any = "", decoded: Any = "", rows: Any = "", note: str = "") -> None:
        out["rows"].append(
            {"label": label, "timing": timing, "bytes_read": bytes_read, "decoded": decoded, "rows": rows, "note": note}
        )

    def scan_read(source: str, **kw: Any) -> Callable[[], tuple[pa.Table, dict[str, Any]]]:
        def run() -> tuple[pa.Table, dict[str, Any]]:
            s = pqsift.scan(source, **kw)
            t = s.to_table()
            return t, s.metrics

        return run

    path_filter = {"columns": ["add"], "filter": "add.path IS NOT NULL"}
    others_filter = {
        "columns": ["protocol", "metaData"],
        "filter": "protocol.minReaderVersion IS NOT NULL OR metaData.id IS NOT NULL",
    }
    cases: dict[str, tuple[Callable[[], Any], Callable[[], None] | None]] = {
        "replay": (lambda: pqsift.scan(root), bump),
        "replay_warm": (lambda: pqsift.scan(root), None),
        "full_pa": (lambda: pq.read_table(cp), None),
        "full_pq": (scan_read(str(cp)), bump),
        "add_pq": (scan_read(str(cp), **path_filter), bump),
        "path_filtered": (scan_read(str(cp), columns=["add.path"], filter="add.path IS NOT NULL"), bump),
        "path": (scan_read(str(cp), columns=["add.path"]), bump),
        "others": (scan_read(str(cp), **others_filter), bump),
        "add_pa": (lambda: pq.read_table(cp, columns=["add"]), None),
        "dl_files": (lambda: DeltaTable(root).file_uris(), None),
        "dl_adds": (lambda: DeltaTable(root).get_add_actions(), None),
    }
    timings = measure_interleaved(cases, repeat)
    out["load_after"] = ", ".join(f"{x:.2f}" for x in os.getloadavg())

    # (a) pqsift's replay; its counts from a scan whose filter skips every file on the log's
    # statistics, so that planning opens no data file.
    replay, replay_warm = timings["replay"], timings["replay_warm"]
    bump()
    probe = pqsift.scan(root, filter="id < -1")
    m = probe.metrics
    out["replay_metrics"] = {k: v for k, v in m.items() if k.startswith("delta_")}
    out["replay_metrics"]["files_pruned_log_stats"] = m["files_pruned_log_stats"]
    out["replay_metrics"]["row_groups_total (data files)"] = m["row_groups_total"]
    explain = probe.explain().splitlines()
    out["explain_first_line"] = next((line for line in explain if line.startswith("delta table")), explain[0])
    no_footer = m["files_pruned_log_stats"] == m["delta_active_files"] == m["files_total"] and m["row_groups_total"] == 0
    out["metrics_without_footers"] = no_footer
    scan_files = replay.result.files
    rm = out["replay_metrics"]
    rows_note = f"{rm['delta_checkpoint_rows_selected']:,} of {rm['delta_checkpoint_rows_total']:,} selected"
    pages_note = (
        f"{rm['delta_checkpoint_pages_pruned']} of {rm['delta_checkpoint_pages_total']} add.path page(s), "
        f"{rm['delta_checkpoint_row_groups_pruned']} of {rm['delta_checkpoint_row_groups_total']} row group(s) skipped"
    )
    row(
        "(a) pqsift replay: `pqsift.scan(table)`",
        replay,
        rm["delta_checkpoint_bytes_read"],
        rm["delta_checkpoint_values_decoded"],
        rows_note,
        f"{rm['delta_active_files']:,} active files; {rm['delta_commits_read']} commits after the checkpoint; {pages_note}",
    )
    row("(a') same, checkpoint footer already in pqsift's cache", replay_warm, note="no mtime bump between runs")

    # (b) the whole checkpoint.
    full_pa = timings["full_pa"]
    row("(b) pyarrow `read_table(checkpoint)`, all columns", full_pa, "", "", f"{full_pa.result.num_rows:,} rows out")
    full_pq = timings["full_pq"]
    t_full, m_full = full_pq.result
    row(
        "(b) pqsift `scan(checkpoint).to_table()`, all columns",
        full_pq,
        m_full["bytes_read"],
        m_full["rows_decoded"],
        f"{m_full['rows_selected']:,} of {m_full['rows_total']:,} selected, {t_full.num_rows:,} out",
    )

    # (c) projected to add, add.path IS NOT NULL.
    add_pq = timings["add_pq"]
    t_add, m_add = add_pq.result
    row(
        "(c) pqsift `scan(checkpoint, columns=[\"add\"], filter=\"add.path IS NOT NULL\")`",
        add_pq,
        m_add["bytes_read"],
        m_add["rows_decoded"],
        f"{m_add['rows_selected']:,} of {m_add['rows_total']:,} selected, {t_add.num_rows:,} out",
        f"{m_add['pages_pruned']} of {m_add['pages_total']} page(s), "
        f"{m_add['row_groups_total'] - m_add['row_groups_selected']} of {m_add['row_groups_total']} row group(s) skipped",
    )
    # The predicate's column alone: does the predicate stage fetch only add.path?
    for key, filtered in (("path_filtered", True), ("path", False)):
        t_path, m_path = timings[key].result
        row(
            "(c) pqsift `scan(checkpoint, columns=[\"add.path\"]" + (', filter="add.path IS NOT NULL"' if filtered else "") + ")`",
            timings[key],
            m_path["bytes_read"],
            m_path["rows_decoded"],
            f"{m_path['rows_selected']:,} of {m_path['rows_total']:,} selected, {t_path.num_rows:,} out",
            "the predicate's leaf only, filtered" if filtered else "the predicate's leaf only, no filter",
        )
        out["path_bytes_filtered" if filtered else "path_bytes"] = m_path["bytes_read"]
    others = timings["others"]
    t_others, m_others = others.result
    row(
        "(c) pqsift `protocol`, `metaData` where set (the replay's second, small read of the checkpoint)",
        others,
        m_others["bytes_read"],
        m_others["rows_decoded"],
        f"{m_others['rows_selected']:,} of {m_others['rows_total']:,} selected, {t_others.num_rows} out",
        f"{m_others['pages_pruned']} of {m_others['pages_total']} page(s) skipped",
    )
    add_pa = timings["add_pa"]
    row("(c) pyarrow `read_table(checkpoint, columns=[\"add\"])` (no filter)", add_pa, "", "", f"{add_pa.result.num_rows:,} rows out")

    # (d) deltalake.
    dl_files, dl_adds = timings["dl_files"], timings["dl_adds"]
    row("(d) deltalake `DeltaTable(table).file_uris()`", dl_files, "", "", f"{len(dl_files.result):,} files")
    row("(d) deltalake `DeltaTable(table).get_add_actions()`", dl_adds, "", "", f"{len(dl_adds.result):,} adds")

    # Correctness.
    pqsift_set = {os.path.normpath(p) for p in scan_files}
    delta_set = {os.path.normpath(u.removeprefix("file://")) for u in dl_files.result}
    add_paths_pq = set(t_add["add"].combine_chunks().field("path").to_pylist())
    checks = {
        "pqsift active files == deltalake file_uris()": pqsift_set == delta_set,
        "pqsift active files == the builder's expected set": pqsift_set == built.expected_active,
        "no duplicate in pqsift's files": len(scan_files) == len(pqsift_set),
        "delta_active_files == len(scan.files)": rm["delta_active_files"] == len(scan_files),
        "add-only read == the checkpoint's non-null add rows (paths)": add_paths_pq == layout["add_paths"]
        and t_add.num_rows == layout["present"]["add"],
        "delta_checkpoint_adds == non-null add rows": rm["delta_checkpoint_adds"] == layout["present"]["add"],
        "metrics read without opening a data file (all skipped on log stats)": no_footer,
    }
    if pqsift_set != delta_set:
        out["diff"] = {
            "only_pqsift": sorted(pqsift_set - delta_set)[:5],
            "only_deltalake": sorted(delta_set - pqsift_set)[:5],
        }
    started = time.perf_counter()
    rows_read = pqsift.scan(root, columns=["id"]).to_table().num_rows
    out["row_check_seconds"] = time.perf_counter() - started
    checks[f"pqsift reads {built.expected_rows:,} rows from the table (sum of numRecords)"] = rows_read == built.expected_rows
    out["rows_read"] = rows_read
    out["checks"] = checks
    out["ratios"] = {
        "pqsift wall full/add-only": full_pq.best_wall / add_pq.best_wall,
        "pqsift CPU full/add-only": full_pq.best_cpu / add_pq.best_cpu if add_pq.best_cpu else float("nan"),
        "pyarrow full / pqsift add-only (wall)": full_pa.best_wall / add_pq.best_wall,
        "bytes full/add-only": m_full["bytes_read"] / m_add["bytes_read"] if m_add["bytes_read"] else float("nan"),
        "values decoded full/add-only": m_full["rows_decoded"] / m_add["rows_decoded"] if m_add["rows_decoded"] else float("nan"),
        "replay / add-only read (wall)": replay.best_wall / add_pq.best_wall,
        "deltalake file_uris / pqsift replay (wall)": dl_files.best_wall / replay.best_wall,
    }
    return out


# ----- report ---------------------------------------------------------------------------------


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f}"


def fmt(value: Any) -> str:
    return f"{value:,}" if isinstance(value, int) else str(value)


def render(results: list[dict[str, Any]], args: argparse.Namespace, command: str, env: dict[str, str], total_s: float) -> str:
    lines = [
        "# Delta log replay: checkpoint read for `add` only vs the whole checkpoint (`benches/delta_checkpoint.py`)",
        "",
        f"Command: `{command}` — whole run {total_s:.0f} s. Generated by the script; the last section is the reading of the figures.",
        "",
        "## Setup",
        "",
        f"Machine: {env['cpu']}, {env['cores']} shared vCPUs (other work, e.g. a cargo build, may be running; "
        f"load average at start {env['load']}), Linux, Python {env['python']}. "
        f"pqsift {env['pqsift']} (extension built {env['so_mtime']}, release profile), deltalake {env['deltalake']}, "
        f"pyarrow {env['pyarrow']}. Temporary directory on local disk; the OS page cache is warm for every file (all just written).",
        "",
        f"Each table: `write_deltalake` creates it (version 0); then {args.files:,} tiny Parquet files "
        f"({ROWS_PER_FILE} rows: `id` int64, `value` double; written by pyarrow) are added by the script's own JSON commits of "
        f"{args.per_commit} adds each, following the Delta protocol (add: path, partitionValues, size, modificationTime, "
        f"dataChange, stats; remove: path, deletionTimestamp, dataChange, extendedFileMetadata, partitionValues, size), "
        f"and {args.removed:.0%} of them are removed by a random later commit. "
        "`DeltaTable(path).create_checkpoint()` — delta-rs — writes the checkpoint; then delta-rs appends one file "
        "(`write_deltalake(mode=\"append\")`) and deletes whole files (`DeltaTable.delete`), so the replay reads two commits "
        "after the checkpoint. Shape *partitioned*: the same with a string partition column `day` (30 values, files in "
        "`day=…/` directories).",
        "",
        f"Timings: best of {args.repeat} in one process, round-robin over the cases (run 1 of every case, then run 2, …: "
        "a burst of other work hits all cases alike) after one untimed run of each, wall (`perf_counter`) and CPU (`process_time`, all threads; "
        "pqsift and delta-rs use several). pqsift caches parsed footers process-wide (keyed by path, size, mtime): "
        "before every pqsift run the checkpoint's mtime is bumped so the footer is read and parsed each time, "
        "except row (a'). *bytes read* and *values decoded* are pqsift's own counters (`metrics[\"bytes_read\"]`, "
        "`[\"rows_decoded\"]` — rows decoded summed over the root columns read; `add` is one root column; "
        "for (a) `delta_checkpoint_bytes_read` / `delta_checkpoint_values_decoded`, which cover the `add` read only, "
        "not the replay's second small read of `protocol`/`metaData`). "
        "The replay's metrics come from `pqsift.scan(table, filter=\"id < -1\").metrics`: the filter skips every active "
        "file on the log's statistics, so planning opens no data file (checked below) and the numbers are the replay's.",
        "",
    ]
    for res in results:
        b: Built = res["built"]
        lay = res["layout"]
        lines += [
            f"## Shape: {b.name}",
            "",
            f"Load average after the replay runs: {res['load_after']}. "
            f"Log: version {b.version}; {b.commits_written} JSON commits by the script ({b.adds_written:,} adds, "
            f"{b.removes_written:,} removes), checkpoint at version {b.checkpoint_version}, then 2 commits by delta-rs. "
            f"Built in {b.build_seconds:.1f} s.",
            "",
            f"Checkpoint `{b.checkpoint.name}` (written by `{lay['created_by']}`): {lay['file_bytes']:,} bytes, "
            f"{lay['rows']:,} rows, {lay['columns']} leaf columns, {lay['row_groups']} row group(s) "
            f"({', '.join(f'{r:,}' for r in lay['row_group_rows'])} rows), page index: {lay['has_page_index']}. "
            "Non-null actions: " + ", ".join(f"{k} {v:,}" for k, v in lay["present"].items() if v) + ". "
            f"Row order: {lay['runs']['add']} runs of adds and {lay['runs']['remove']} runs of removes interleaved "
            f"({lay['runs']['other']} runs of other actions). Pages: `add.path` {lay['pages']['add.path']}, "
            f"`remove.path` {lay['pages']['remove.path']} per row group; pages of `add.path` holding no add "
            f"(the only ones `add.path IS NOT NULL` can skip): {lay['add_path_pages_without_add']} of {lay['add_path_pages']}. "
            "Compressed bytes by action column: "
            + ", ".join(f"`{k}` {v:,}" for k, v in sorted(lay["bytes_by_action"].items(), key=lambda kv: -kv[1]))
            + ".",
            "",
            "| what | best wall ms | median wall ms | best CPU ms | bytes read | values decoded | rows | notes |",
            "|---|---:|---:|---:|---:|---:|---|---|",
        ]
        for r in res["rows"]:
            t: Timing = r["timing"]
            lines.append(
                f"| {r['label']} | {ms(t.best_wall)} | {ms(t.median_wall)} | {ms(t.best_cpu)} | {fmt(r['bytes_read'])} | "
                f"{fmt(r['decoded'])} | {r['rows']} | {r['note']} |"
            )
        lines += ["", "Ratios: " + "; ".join(f"{k} **{v:.2f}×**" for k, v in res["ratios"].items()) + ".", ""]
        lines += ["Replay metrics (`scan.metrics`, `delta_*`):", "", "```"]
        lines += [f"{k} = {v}" for k, v in res["replay_metrics"].items()]
        lines += ["```", "", f"`explain()` line: `{res['explain_first_line']}`", ""]
        lines += ["Checks:", ""]
        lines += [f"- {'PASS' if ok else 'FAIL'}: {name}" for name, ok in res["checks"].items()]
        if "diff" in res:
            lines.append(f"- difference: {res['diff']}")
        lines += [f"- (row check: pqsift read {res['rows_read']:,} rows from the table in {res['row_check_seconds']:.1f} s, not timed above)"]
        lines += [f"- {n}" for n in b.notes]
        lines.append("")
    return "\n".join(lines)


def summary(results: list[dict[str, Any]]) -> str:
    """The reading of the figures, from the numbers."""
    out = ["## What the figures show", ""]
    for res in results:
        lay = res["layout"]
        full = next(r for r in res["rows"] if r["label"].startswith("(b) pqsift"))
        add = next(r for r in res["rows"] if r["label"].startswith("(c) pqsift"))
        replay = res["rows"][0]
        ratio = res["ratios"]
        full_pa = next(r for r in res["rows"] if r["label"].startswith("(b) pyarrow"))
        others = next(r for r in res["rows"] if "second, small read" in r["label"])
        text = (
            f"*{res['built'].name}*: the checkpoint holds {lay['present']['add']:,} adds and {lay['present'].get('remove', 0):,} "
            f"remove tombstones in {lay['row_groups']} row group(s). pqsift's add-only read took "
            f"{ms(add['timing'].best_wall)} ms against {ms(full['timing'].best_wall)} ms for pqsift reading the whole file "
            f"({ratio['pqsift wall full/add-only']:.2f}× wall, {ratio['pqsift CPU full/add-only']:.2f}× CPU) and "
            f"{ms(full_pa['timing'].best_wall)} ms for pyarrow's full read; "
            f"it read {ratio['bytes full/add-only']:.2f}× fewer bytes ({fmt(add['bytes_read'])} vs {fmt(full['bytes_read'])}) "
            f"and decoded one root column instead of {len(lay['present'])} "
            f"({fmt(add['decoded'])} vs {fmt(full['decoded'])} rows decoded). "
        )
        if ratio["pqsift wall full/add-only"] < 1:
            text += "At this size the add-only read was not faster in wall time: the reads take a few ms and the machine is shared. "
        replay_metrics = res["replay_metrics"]
        if replay_metrics["delta_checkpoint_pages_pruned"] == 0 and replay_metrics["delta_checkpoint_row_groups_pruned"] == 0:
            if lay["add_path_pages_without_add"] == 0:
                text += (
                    "No row group and no page was skipped, and none could be: delta-rs writes the checkpoint as "
                    f"{lay['row_groups']} row group(s) with {lay['add_path_pages']} page(s) of `add.path`, and adds and "
                    f"removes interleave in row order ({lay['runs']['add']} runs of adds between {lay['runs']['remove']} runs "
                    "of removes), so every page holds an add. The saving is the columns never fetched nor decoded "
                    "(`remove`, `metaData`, `protocol`, `txn`, …), not pruning: every row of `add` is still decoded "
                    "(nulls for the remove rows). "
                )
            else:
                text += (
                    f"No page was skipped although {lay['add_path_pages_without_add']} page(s) of `add.path` hold no add "
                    "— the page index stage did not prune them. "
                )
        else:
            text += (
                f"{replay_metrics['delta_checkpoint_pages_pruned']} page(s) and {replay_metrics['delta_checkpoint_row_groups_pruned']} "
                "row group(s) were skipped. "
            )
        if res["path_bytes_filtered"] == add["bytes_read"] and res["path_bytes"] < add["bytes_read"]:
            text += (
                f"Projecting `add.path` alone with the same filter still reads {fmt(res['path_bytes_filtered'])} bytes — all of "
                f"`add` — against {fmt(res['path_bytes'])} bytes for `add.path` without the filter: the predicate stage decodes "
                "the whole root column `add` (every leaf, every row), not `add.path` first. The replay needs all of `add` "
                "anyway, so this costs it only the decoding of the remove rows' nulls in the other leaves. "
            )
        parquet_s = add["timing"].best_wall + others["timing"].best_wall
        share = parquet_s / replay["timing"].best_wall
        text += (
            f"The replay's two Parquet reads (rows (c): `add`, then `protocol`/`metaData`), timed alone, take "
            f"{parquet_s * 1000:.1f} ms together against {ms(replay['timing'].best_wall)} ms for the whole replay "
            f"(listing, both reads, the two JSON commits after the checkpoint, building "
            f"{replay_metrics['delta_active_files']:,} active files)"
        )
        text += (
            ": most of the replay is spent outside the Parquet reads. "
            if share < 0.5
            else ": the Parquet reads are most of the replay. "
        )
        text += f"deltalake's load + `file_uris()` took {ratio['deltalake file_uris / pqsift replay (wall)']:.2f}× pqsift's replay."
        out += [text, ""]
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=20_000, help="data files added per table (default 20,000)")
    parser.add_argument("--removed", type=float, default=0.8, help="fraction of them later removed (default 0.8)")
    parser.add_argument("--per-commit", type=int, default=200, help="adds per JSON commit (default 200)")
    parser.add_argument("--repeat", type=int, default=5, help="runs per measurement, best reported (default 5)")
    parser.add_argument("--shapes", default="flat,partitioned", help="comma-separated: flat, partitioned")
    parser.add_argument("--out", default=None, help="write the Markdown report there")
    parser.add_argument("--keep", default=None, help="build the tables under this directory and keep them")
    args = parser.parse_args()
    started = time.perf_counter()
    so = Path(pqsift._core.__file__)
    env = {
        "cpu": next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines() if line.startswith("model name")), platform.processor()),
        "cores": str(os.cpu_count()),
        "load": ", ".join(f"{x:.2f}" for x in os.getloadavg()),
        "python": platform.python_version(),
        "pqsift": pqsift.__version__,
        "so_mtime": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(so.stat().st_mtime)),
        "deltalake": deltalake.__version__,
        "pyarrow": pa.__version__,
    }
    command = ".venv/bin/python benches/delta_checkpoint.py " + " ".join(sys.argv[1:])
    results = []
    with tempfile.TemporaryDirectory(prefix="pqsift_delta_cp_", dir=args.keep) as tmp:
        base = Path(args.keep) if args.keep else Path(tmp)
        for shape in [s.strip() for s in args.shapes.split(",") if s.strip()]:
            root = base / f"{shape}_{args.files}"
            if root.exists():
                raise SystemExit(f"{root} exists")
            root.mkdir(parents=True)
            print(f"[{shape}] building {args.files:,} files ...", flush=True)
            built = build_table(root, shape, args.files, args.removed, args.per_commit, shape == "partitioned", seed=4)
            print(f"[{shape}] built in {built.build_seconds:.1f} s; measuring ...", flush=True)
            res = run_shape(built, args.repeat)
            results.append(res)
            lay = res["layout"]
            print(
                f"[{shape}] checkpoint {lay['file_bytes']:,} B, {lay['rows']:,} rows, row groups {lay['row_group_rows']}, "
                f"present {lay['present']}, add.path pages {lay['pages']['add.path']} "
                f"({lay['add_path_pages_without_add']} without an add), runs {lay['runs']}"
            )
            for r in res["rows"]:
                t = r["timing"]
                print(
                    f"  {r['label'][:70]:70s} wall {ms(t.best_wall):>8} ms (median {ms(t.median_wall):>8})  "
                    f"cpu {ms(t.best_cpu):>8} ms  bytes {fmt(r['bytes_read']):>10}  decoded {fmt(r['decoded']):>8}  {r['rows']}"
                )
            for name, ok in res["checks"].items():
                print(f"  {'PASS' if ok else 'FAIL'} {name}")
            if "diff" in res:
                print("  diff:", res["diff"])
            print("  ratios:", {k: round(v, 2) for k, v in res["ratios"].items()})
            print("  metrics:", res["replay_metrics"])
            for n in built.notes:
                print("  note:", n)
        total = time.perf_counter() - started
        report = render(results, args, command, env, total) + "\n" + summary(results)
    print(f"total {total:.1f} s")
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(report + "\n")
        print(f"wrote {args.out}")
    if not all(ok for res in results for ok in res["checks"].values()):
        raise SystemExit("some checks FAILED")


if __name__ == "__main__":
    main()
