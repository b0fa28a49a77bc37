"""A griffe extension: pqsift's docstrings, written for Python's ``help()`` and doctest
with Sphinx-style roles, made readable as the Markdown mkdocstrings renders.

The docstrings themselves are not changed; what this does, per docstring, before it is
parsed:

* Sphinx roles (``:func:`scan```, ``:class:`~pqsift.Expr```, ``:data:``, ``:meth:``,
  ``:attr:``, ``:mod:``, ``:exc:``, ``:obj:``) become code, linked to the object's entry
  in the API reference where it has one (an optional cross-reference: no warning where
  it has none, such as a private helper);
* doctest examples (runs of ``>>>`` lines and their output) become ``pycon`` code blocks
  (Markdown would read ``>>>`` as nested quotes), their ``# doctest:`` directives left out;
* a paragraph ending in ``::`` (reStructuredText's "a code block follows") ends in ``:``;
* an attribute documented by ``#:`` comments above it (Sphinx's convention, which griffe
  does not read) gets them as its docstring.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

_ROLE = re.compile(r":(?:py:)?(?:func|class|meth|attr|data|mod|exc|obj|const):`(~?)([^`]+)`")
_DIRECTIVE = re.compile(r"\s*#\s*doctest:.*$")


class PqsiftDocstrings(griffe.Extension):
    """See the module's docstring."""

    def on_package(self, *, pkg: griffe.Module, loader: griffe.GriffeLoader, **kwargs: Any) -> None:
        for obj in _objects(pkg):
            if obj.is_attribute and obj.docstring is None:
                comment = _comment_above(obj)
                if comment:
                    obj.docstring = griffe.Docstring(comment, parent=obj)
            if obj.docstring is not None:
                text = _doctest_blocks(obj.docstring.value)
                text = re.sub(r"::$", ":", text, flags=re.MULTILINE)
                obj.docstring.value = _ROLE.sub(lambda m, obj=obj: _reference(obj, loader, m), text)


def _objects(obj: griffe.Object) -> Any:
    """``obj`` and every object defined in it (not imported into it), depth first."""
    yield obj
    for member in obj.members.values():
        if member.is_alias:
            continue
        yield from _objects(member)  # type: ignore[arg-type]


def _comment_above(obj: griffe.Object) -> str | None:
    """The ``#:`` comment lines right above an attribute, as text."""
    if obj.lineno is None or obj.parent is None:
        return None
    lines = obj.module.lines
    found: list[str] = []
    index = obj.lineno - 2
    while index >= 0 and lines[index].lstrip().startswith("#:"):
        found.append(lines[index].lstrip()[2:].strip())
        index -= 1
    return "\n".join(reversed(found)) or None


def _doctest_blocks(text: str) -> str:
    """Each run of doctest lines (``>>>``, then ``...`` and output lines up to a blank
    line) in a ``pycon`` fence."""
    out: list[str] = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.lstrip().startswith(">>>"):
            indent = line[: len(line) - len(line.lstrip())]
            block: list[str] = []
            while i < len(lines) and lines[i].strip():
                block.append(_DIRECTIVE.sub("", lines[i][len(indent) :] if lines[i].startswith(indent) else lines[i]))
                i += 1
            if out and out[-1].strip():
                out.append("")
            out.extend([f"{indent}```pycon", *(indent + b for b in block), f"{indent}```", ""])
            continue
        out.append(line)
        i += 1
    return "\n".join(out)


def _reference(obj: griffe.Object, loader: griffe.GriffeLoader, match: re.Match[str]) -> str:
    """A role as code, with an optional link to the object it names."""
    short, name = match.group(1) == "~", match.group(2).strip()
    shown = name.rsplit(".", 1)[-1] if short else name
    code = f"<code>{shown}</code>"
    target = _resolve(obj, loader, name)
    if target is None:
        return code
    return f'<autoref identifier="{target}" optional>{code}</autoref>'


def _resolve(obj: griffe.Object, loader: griffe.GriffeLoader, name: str) -> str | None:
    """The canonical path of what ``name`` means in ``obj``'s scope, or None."""
    candidates = []
    if name.startswith("pqsift"):
        candidates.append(name)
    else:
        scope: griffe.Object | None = obj if (obj.is_class or obj.is_module) else obj.parent
        first = name.partition(".")[0]
        while scope is not None:
            if first in scope.members:
                candidates.append(f"{scope.path}.{name}")
                break
            scope = scope.parent
        # Names of the package's public API, written without it.
        candidates.append(f"pqsift.{name}")
        candidates.append(f"pqsift.spark.{name}")
    for candidate in candidates:
        try:
            found = loader.modules_collection[candidate]
        except KeyError:
            continue
        try:
            return str(found.final_target.path if found.is_alias else found.path)
        except griffe.AliasResolutionError:
            return None
    return None
