"""The documentation's code examples, run as tests.

Every ```python and ```pycon block of README.md and docs/**/*.md runs, page by page, in
order, in one namespace per page and a fresh working directory per page (the examples
write their own small files there). A ```pycon block is a doctest: its ``>>>`` lines run
and their output must match (``...`` matches anything, whitespace is normalised). A
```python block is executed. Other blocks (```sh, ```text, output) are not Python.

An HTML comment right above a block (invisible on GitHub and in the site) says what it
needs; several needs are separated by commas:

    <!-- docs-test: skip <why> -->       not run: illustrative only, and says why
    <!-- docs-test: spark -->            a Spark session as ``spark`` (skipped without pyspark)
    <!-- docs-test: s3 -->               ``s3://bucket/`` holds a copy of the page's working
                                         directory and AWS_* variables point at a local S3
                                         (moto; skipped without it)
    <!-- docs-test: parquet-testing -->  ./parquet-testing is the Apache corpus
    <!-- docs-test: delta-testing -->    ./delta-testing is the Delta test tables
    <!-- docs-test: iceberg-testing -->  ./iceberg-testing is the Iceberg test tables
                                         (both from ../shared/; skipped when absent)
    <!-- docs-test: core=NAME -->        the installed pqsift._core has Scan.NAME (an
                                         example of an API newer than the built extension:
                                         skipped, with the reason, until it is rebuilt)

A block that is run after skipped ones sees what those would have defined missing, so a
page's examples are marked consistently (what needs Spark is marked where it starts).
"""

from __future__ import annotations

import contextlib
import doctest
import os
import re
import sys
import traceback
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
CORPORA = {
    "parquet-testing": SHARED / "parquet-testing",
    "delta-testing": SHARED / "delta-testing",
    "iceberg-testing": SHARED / "iceberg-testing",
}

_FENCE = re.compile(r"^(?P<indent> {0,3})(?P<fence>```+|~~~+)\s*(?P<info>[^\n`]*)$")
_MARK = re.compile(r"<!--\s*docs-test:\s*(?P<needs>.*?)\s*-->")
_PYTHON = ("python", "py", "python3")
_DOCTEST = ("pycon",)
_DOCTEST_FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


@dataclass(frozen=True)
class Block:
    """One code block of a page: its language, code, first line and needs."""

    page: str
    line: int
    language: str
    code: str
    needs: tuple[str, ...]

    @property
    def id(self) -> str:
        return f"{self.page}:{self.line}"


def _pages() -> list[Path]:
    docs = sorted(p for p in (ROOT / "docs").rglob("*.md") if "hooks" not in p.relative_to(ROOT / "docs").parts)
    return [ROOT / "README.md", *docs]


def blocks_of(path: Path) -> list[Block]:
    """The Python blocks of a Markdown page, with the needs marked above each."""
    lines = path.read_text(encoding="utf-8").split("\n")
    page = path.relative_to(ROOT).as_posix()
    found: list[Block] = []
    i = 0
    while i < len(lines):
        match = _FENCE.match(lines[i])
        if not match:
            i += 1
            continue
        fence, language = match.group("fence"), match.group("info").strip().split(" ")[0].strip("{}.").lower()
        start = i
        body: list[str] = []
        i += 1
        while i < len(lines) and not lines[i].strip().startswith(fence):
            body.append(lines[i][len(match.group("indent")) :])
            i += 1
        i += 1
        if language not in _PYTHON + _DOCTEST:
            continue
        # The needs: a docs-test comment on the closest non-blank line above the fence.
        above = start - 1
        while above >= 0 and not lines[above].strip():
            above -= 1
        mark = _MARK.search(lines[above]) if above >= 0 else None
        needs = tuple(n.strip() for n in mark.group("needs").split(",")) if mark else ()
        found.append(Block(page, start + 1, language, "\n".join(body) + "\n", needs))
    return found


BLOCKS = [block for page in _pages() for block in blocks_of(page)]


def test_the_docs_have_examples() -> None:
    """The collection itself: pages found, blocks found, every need known."""
    assert len(BLOCKS) > 20, [b.id for b in BLOCKS]
    known = {"spark", "s3", *CORPORA}
    for block in BLOCKS:
        for need in block.needs:
            name = need.split("=", 1)[0].split(" ", 1)[0]
            assert name in known | {"skip", "core"}, f"{block.id}: unknown docs-test need {need!r}"
            if name == "skip":
                assert need[len("skip") :].strip(), f"{block.id}: a skipped example says why"


@dataclass
class PageState:
    """A page's namespace, working directory and the blocks run so far."""

    directory: Path
    namespace: dict[str, Any] = field(default_factory=lambda: {"__name__": "__docs__"})
    done: set[int] = field(default_factory=set)
    used_spark: bool = False


@pytest.fixture(scope="session")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, PageState]:
    states: dict[str, PageState] = {}
    for page in {b.page for b in BLOCKS}:
        directory = tmp_path_factory.mktemp(re.sub(r"\W+", "-", page))
        states[page] = PageState(directory)
    return states


def _skip_reason(block: Block) -> str | None:
    """Why ``block`` cannot run here, or None."""
    for need in block.needs:
        if need.startswith("skip"):
            return f"illustrative only: {need[len('skip') :].strip()}"
        if need in CORPORA and not (CORPORA[need]).is_dir():
            return f"{need} is not at {CORPORA[need]}"
        if need.startswith("core="):
            from pqsift import _core

            name = need.split("=", 1)[1]
            if not hasattr(_core.Scan, name):
                return f"the installed pqsift._core predates Scan.{name} (rebuild with `make build`)"
        if need == "spark":
            try:
                import pyspark  # noqa: F401
            except ImportError:
                return "pyspark is not installed"
        if need == "s3":
            try:
                import moto.server  # noqa: F401
            except ImportError:
                return "moto[s3] is not installed"
    return None


def _run(block: Block, state: PageState, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs ``block`` in its page's namespace and directory; fails with what went wrong."""
    if "spark" in block.needs:
        # Made (if it is the first) from the session's directory, which it registers the data
        # source from, before this block moves to its page's.
        state.namespace["spark"] = request.getfixturevalue("spark")
        request.addfinalizer(_register_again)
    monkeypatch.chdir(state.directory)
    if "spark" in block.needs and state.used_spark:
        # The page's own registration (by an earlier example) back in force for this one.
        _register_again(state.directory)
    state.used_spark = state.used_spark or "spark" in block.needs
    for corpus, location in CORPORA.items():
        if corpus in block.needs and not (state.directory / corpus).exists():
            (state.directory / corpus).symlink_to(location.resolve(), target_is_directory=True)
    if "s3" in block.needs:
        _mirror_to_s3(state.directory, request, monkeypatch)
    name = f"{block.page}:{block.line}"
    if block.language in _PYTHON:
        try:
            exec(compile(block.code, name, "exec"), state.namespace)
        except Exception:  # noqa: BLE001 - whatever an example raises is its failure, reported
            pytest.fail(f"{name}: the example raised\n{traceback.format_exc()}", pytrace=False)
        return
    test = doctest.DocTestParser().get_doctest(block.code, state.namespace, name, block.page, block.line)
    output: list[str] = []
    runner = doctest.DocTestRunner(optionflags=_DOCTEST_FLAGS)
    result = runner.run(test, out=output.append, clear_globs=False)
    state.namespace.update(test.globs)  # a DocTest runs in a copy of the namespace it was given
    if result.failed:
        pytest.fail(f"{name}: the example's output differs\n{''.join(output)}", pytrace=False)


_START_DIRECTORY = os.getcwd()


def _register_again(directory: str | Path = _START_DIRECTORY) -> None:
    """The data source registered again from ``directory``, which relative ``load()`` paths
    are resolved against. After an example: from the directory the test session started in,
    as the session's other Spark tests expect (an example's ``register`` resolves them
    against its page's directory); before a page's later example: from the page's."""
    spark_module = sys.modules.get("pqsift.spark")
    session = _active_session()
    if spark_module is None or session is None:
        return
    here = os.getcwd()
    os.chdir(directory)
    try:
        spark_module.register(session)
    finally:
        os.chdir(here)


def _active_session() -> Any:
    from pyspark.sql import SparkSession

    return SparkSession.getActiveSession()


_BUCKET = "bucket"


def _mirror_to_s3(directory: Path, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """``s3://bucket/`` made a copy of ``directory`` on the local S3, and the AWS_*
    variables the object store reads pointed at it."""
    emulator = request.getfixturevalue("s3_emulator")

    with contextlib.suppress(Exception):  # made by an earlier example
        emulator.create_bucket(_BUCKET)
    for path in sorted(directory.rglob("*")):
        if path.is_file() and not path.is_symlink():
            emulator.upload_file(path, _BUCKET, path.relative_to(directory).as_posix())
    options = emulator.storage_options
    monkeypatch.setenv("AWS_ENDPOINT", options["aws_endpoint"])
    monkeypatch.setenv("AWS_ALLOW_HTTP", "true")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", options["aws_access_key_id"])
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", options["aws_secret_access_key"])


def _earlier(block: Block) -> Iterator[Block]:
    """The runnable blocks of ``block``'s page before it."""
    for other in BLOCKS:
        if other is block:
            return
        if other.page == block.page and _skip_reason(other) is None:
            yield other


@pytest.mark.parametrize("block", BLOCKS, ids=[b.id for b in BLOCKS])
def test_example(
    block: Block, pages: dict[str, PageState], request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    reason = _skip_reason(block)
    if reason is not None:
        pytest.skip(reason)
    state = pages[block.page]
    # A block selected alone (-k) still gets what the page's earlier blocks set up.
    for earlier in _earlier(block):
        if earlier.line not in state.done:
            state.done.add(earlier.line)
            _run(earlier, state, request, monkeypatch)
    state.done.add(block.line)
    _run(block, state, request, monkeypatch)
