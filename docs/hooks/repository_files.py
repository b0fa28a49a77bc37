"""An MkDocs hook: the benchmark results in ``benches/results/`` published with the site.

The pages link to them as files of the repository (``../benches/results/peers.md`` from
``docs/benchmarks.md``), which is what works when the Markdown is read on GitHub. MkDocs
only publishes what is under ``docs/``, so this hook adds the results to the site (at
``benches/results/``) and points such links at those copies.
"""

from __future__ import annotations

import os
import posixpath
import re
from typing import Any

from mkdocs.structure.files import File, Files

_RESULTS = "benches/results"
_LINK = re.compile(r"(\]\(|<img [^>]*src=\")([^)\"#\s]+)")


def _repository(config: Any) -> str:
    return os.path.dirname(os.path.abspath(config["config_file_path"]))


def on_files(files: Files, config: Any) -> Files:
    results = os.path.join(_repository(config), _RESULTS)
    for name in sorted(os.listdir(results)):
        path = os.path.join(results, name)
        if os.path.isfile(path):
            files.append(File.generated(config, f"{_RESULTS}/{name}", abs_src_path=path))
    return files


def on_page_markdown(markdown: str, page: Any, config: Any, files: Files) -> str:
    """Links from a page to ``benches/results/`` in the repository, pointed at the
    published copies."""
    page_directory = posixpath.dirname(page.file.src_uri)

    def repoint(match: re.Match[str]) -> str:
        target = match.group(2)
        if "://" in target:
            return match.group(0)
        # Where the link goes in the repository (docs/ is one level below its root).
        in_repository = posixpath.normpath(posixpath.join("docs", page_directory, target))
        if not in_repository.startswith(_RESULTS + "/"):
            return match.group(0)
        # The published copy sits at the same path below the site's root.
        return match.group(1) + posixpath.relpath(in_repository, page_directory or ".")

    return _LINK.sub(repoint, markdown)
