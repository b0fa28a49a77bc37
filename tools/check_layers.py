"""Checks that the Rust crate's modules only look down.

The top-level modules of ``rust/`` are layers in the order of ``LAYERS`` (the pipeline, with
the foundations every stage shares first). A module may use modules of its own layer or of
the layers before it, never one after it; and within a layer, the files must not depend on
each other in a circle. Test code (``tests.rs``, ``*_tests.rs`` and ``#[cfg(test)]`` blocks)
may use anything: it runs the layers together.

Run by ``make lint``; prints each violation and exits 1 if there is one.
"""

from __future__ import annotations

import re
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "rust"

#: Foundations, then the pipeline: storage, pruning math, the file format, tables, planning,
#: reading; then the Python bindings.
LAYERS = [
    "error",
    "interrupt",
    "lru",
    "allocator",
    "selection",
    "filter",
    "storage",
    "pruning",
    "format",
    "table",
    "planning",
    "reading",
    "python",
]

Module = tuple[str, ...]


def module_of(path: Path) -> Module:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] in ("mod", "lib"):
        parts.pop()
    return tuple(parts)


def without_tests(text: str) -> str:
    """`text` with `#[cfg(test)]` items (a `mod tests { ... }` block) and comments removed."""
    text = re.sub(r"//[^\n]*", "", text)
    out = []
    index = 0
    for match in re.finditer(r"#\[cfg\(test\)\]", text):
        if match.start() < index:
            continue
        out.append(text[index : match.start()])
        brace = text.find("{", match.end())
        semicolon = text.find(";", match.end())
        if semicolon != -1 and (brace == -1 or semicolon < brace):
            index = semicolon + 1
            continue
        depth = 0
        position = brace
        while position < len(text):
            if text[position] == "{":
                depth += 1
            elif text[position] == "}":
                depth -= 1
                if depth == 0:
                    break
            position += 1
        index = position + 1
    out.append(text[index:])
    return "".join(out)


def expand_use(tree: str) -> list[str]:
    """The paths of a `use` tree: `a::{b, c::{d, e}}` -> a::b, a::c::d, a::c::e."""
    tree = re.sub(r"\s+", "", tree)
    brace = tree.find("{")
    if brace == -1:
        return [re.sub(r"\bas\w+$", "", tree)]
    prefix, inner = tree[:brace], tree[brace + 1 : tree.rfind("}")]
    parts, depth, start = [], 0, 0
    for i, char in enumerate(inner):
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(inner[start:i])
            start = i + 1
    parts.append(inner[start:])
    return [path for part in parts if part for path in expand_use(prefix + part)]


def referenced(module: Module, text: str) -> set[Module]:
    """The module paths `text` (of `module`) names, absolute, possibly ending in items."""
    paths: set[Module] = set()
    for tree in re.findall(r"\buse\s+([^;]+);", text):
        for text_path in expand_use(tree):
            paths.add(tuple(text_path.split("::")))
    for text_path in re.findall(r"\b(?:crate|super)(?:::\w+)+", text):
        paths.add(tuple(text_path.split("::")))
    resolved: set[Module] = set()
    for path in paths:
        if path[0] == "crate":
            resolved.add(path[1:])
        elif path[0] == "super":
            # `super` is the parent module (a mod.rs is its directory's module).
            base = list(module[:-1])
            rest = list(path)
            while rest and rest[0] == "super":
                rest.pop(0)
                if rest and rest[0] == "super":
                    base = base[:-1]
            resolved.add((*base, *rest))
    return resolved


def main() -> int:
    files = {module_of(path): path for path in ROOT.rglob("*.rs")}
    rank = {layer: i for i, layer in enumerate(LAYERS)}
    problems: list[str] = []
    graph: dict[Module, set[Module]] = defaultdict(set)
    for module, path in sorted(files.items()):
        if path.name == "tests.rs" or path.name.endswith("_tests.rs") or not module:
            continue
        layer = module[0]
        if layer not in rank:
            problems.append(f"{path}: top-level module {layer!r} is not in LAYERS of {__file__}")
            continue
        for target in referenced(module, without_tests(path.read_text())):
            # The longest prefix of the path that is a module of the crate.
            found = next((target[:n] for n in range(len(target), 0, -1) if target[:n] in files), None)
            if found is None or found == module:
                continue
            if rank.get(found[0], -1) > rank[layer]:
                problems.append(f"{path}: uses {'::'.join(found)}, a layer above {layer}")
            elif found[0] == layer and found not in (module[:n] for n in range(1, len(module))):
                graph[module].add(found)
    problems.extend(cycles(graph))
    for problem in problems:
        print(problem)
    return 1 if problems else 0


def cycles(graph: dict[Module, set[Module]]) -> list[str]:
    """A message per circle of files (a strongly connected component of more than one)."""
    index: dict[Module, int] = {}
    low: dict[Module, int] = {}
    stack: list[Module] = []
    on_stack: set[Module] = set()
    found: list[str] = []
    counter = [0]

    def visit(node: Module) -> None:
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for nxt in graph.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                names = ", ".join(sorted("::".join(m) for m in component))
                found.append(f"modules that use each other in a circle: {names}")

    sys.setrecursionlimit(10_000)
    for node in list(graph):
        if node not in index:
            visit(node)
    return found


if __name__ == "__main__":
    sys.exit(main())
