"""A script of ``benches/`` loaded as a module, for the tests of its helpers."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

BENCHES = Path(__file__).resolve().parents[1] / "benches"


def load_bench(name: str) -> ModuleType:
    """``benches/<name>.py`` as a module. Neither it nor the bench modules it imports by
    name (``peers``, ``spark_bench``) stay in ``sys.modules``: another test loading one of
    them from its file would otherwise find its doctests missing (doctest takes a function
    for the module its ``__module__`` names in ``sys.modules``)."""
    sys.path.insert(0, str(BENCHES))
    before = set(sys.modules)
    try:
        spec = importlib.util.spec_from_file_location(name, BENCHES / f"{name}.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(BENCHES))
        for added in set(sys.modules) - before:
            file = getattr(sys.modules[added], "__file__", None)
            if file is not None and Path(file).resolve().parent == BENCHES:
                del sys.modules[added]
    return module
