"""The built wheel, used as a user would: installed into a fresh virtual environment with
nothing else (no Rust toolchain involved), imported from there, and a filtered scan run.

Usage: ``python tools/wheel_smoke.py WHEEL`` — creates ``target/wheel-venv``, installs the
wheel into it, then runs the check below with that environment's Python, from a temporary
directory (so the source tree is not what is imported). Exit status 0 when it works.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import venv
from pathlib import Path

CHECK = r"""
import pathlib, sys, sysconfig
import pyarrow as pa, pyarrow.parquet as pq
import pqsift

site = pathlib.Path(sysconfig.get_paths()["purelib"]).resolve()
module = pathlib.Path(pqsift._core.__file__).resolve()
assert site in module.parents, f"pqsift imported from {module}, not from the environment's {site}"
assert module.name.endswith(".abi3.so"), module.name
path = pathlib.Path(sys.argv[1]) / "t.parquet"
pq.write_table(pa.table({"id": list(range(10_000)), "kind": ["a", "b"] * 5_000}), path, row_group_size=1_000)
scan = pqsift.scan(path, ["id"], "id >= 9990 AND kind = 'a'")
assert scan.to_table().column("id").to_pylist() == list(range(9990, 10_000, 2))
assert scan.metrics["row_groups_pruned_statistics"] == 9
assert pqsift.scan(path).count_rows() == 10_000
import importlib.util
assert importlib.util.find_spec("pyspark_pqsift") is not None, "the data source package is missing"
print("wheel ok:", module.name, pqsift.__version__)
"""


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    wheel = Path(sys.argv[1]).resolve()
    name = wheel.name
    if "-abi3-" not in name or "manylinux" not in name:
        print(f"{name}: not an abi3 manylinux wheel", file=sys.stderr)
        return 1
    environment = Path("target/wheel-venv").resolve()
    shutil.rmtree(environment, ignore_errors=True)
    venv.create(environment, with_pip=True)
    python = environment / "bin" / "python"
    subprocess.run([python, "-m", "pip", "install", "--quiet", str(wheel)], check=True)
    with tempfile.TemporaryDirectory() as work:
        done = subprocess.run([python, "-c", CHECK, work], cwd=work, check=False)
    print(f"{name}: {wheel.stat().st_size / 2**20:.1f} MiB")
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
