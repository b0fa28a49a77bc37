"""The Python surface of RowSelection, checked against a plain list-of-bools model."""

from __future__ import annotations

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pqsift
from pqsift import RowSelection

settings.register_profile("pqsift", max_examples=200, deadline=None)
settings.load_profile("pqsift")


# ----- the model -------------------------------------------------------------------------


def model_runs(mask: list[bool]) -> list[tuple[str, int]]:
    runs: list[tuple[str, int]] = []
    for value in mask:
        label = "select" if value else "skip"
        if runs and runs[-1][0] == label:
            runs[-1] = (label, runs[-1][1] + 1)
        else:
            runs.append((label, 1))
    return runs


def model_and_then(outer: list[bool], inner: list[bool]) -> list[bool]:
    it = iter(inner)
    return [next(it) if value else False for value in outer]


# Masks made of runs, so that long and short runs both occur.
masks = st.lists(st.tuples(st.booleans(), st.integers(1, 70)), max_size=10).map(
    lambda runs: [value for value, n in runs for _ in range(n)]
)


@st.composite
def selections(draw: st.DrawFn, mask: list[bool] | None = None) -> tuple[list[bool], RowSelection]:
    """A mask and a selection of it, built through a random entry point."""
    if mask is None:
        mask = draw(masks)
    how = draw(st.sampled_from(["runs", "mask", "arrow", "ranges"]))
    if how == "runs":
        # Unnormalised input on purpose: split runs and zero-length runs.
        runs = [("select" if v else "skip", 1) for v in mask] + [("skip", 0)]
        return mask, RowSelection.from_runs(runs)
    if how == "mask":
        return mask, RowSelection.from_mask(mask)
    if how == "arrow":
        return mask, RowSelection.from_mask(pa.array(mask, type=pa.bool_()))
    ranges = [(start, end) for start, end in _ranges(mask)]
    return mask, RowSelection.from_ranges(ranges, len(mask))


def _ranges(mask: list[bool]) -> list[tuple[int, int]]:
    out, start = [], None
    for i, value in enumerate([*mask, False]):
        if value and start is None:
            start = i
        elif not value and start is not None:
            out.append((start, i))
            start = None
    return out


def check(selection: RowSelection, expected: list[bool]) -> None:
    assert selection.to_mask() == expected
    assert selection.runs() == model_runs(expected)
    assert selection.row_count == len(expected) == len(selection)
    assert selection.selected_count == sum(expected)
    assert selection.skipped_count == len(expected) - sum(expected)
    assert selection.selects_any() == any(expected)
    assert selection.selected_ranges() == _ranges(expected)


# ----- properties ------------------------------------------------------------------------


@given(selections())
def test_queries_match_model(case: tuple[list[bool], RowSelection]) -> None:
    mask, selection = case
    check(selection, mask)
    for policy in ("auto", "mask", "selectors"):
        check(selection.with_policy(policy), mask)
    assert pa.array(selection).to_pylist() == mask


@given(st.data())
def test_and_then_matches_model(data: st.DataObject) -> None:
    outer, left = data.draw(selections())
    inner_mask = data.draw(st.lists(st.booleans(), min_size=sum(outer), max_size=sum(outer)))
    _, right = data.draw(selections(inner_mask))
    check(left.and_then(right), model_and_then(outer, inner_mask))


@given(st.data())
def test_intersection_and_union_match_model(data: st.DataObject) -> None:
    a, left = data.draw(selections())
    b_mask = data.draw(st.lists(st.booleans(), min_size=len(a), max_size=len(a)))
    _, right = data.draw(selections(b_mask))
    check(left.intersection(right), [x and y for x, y in zip(a, b_mask, strict=True)])
    check(left.union(right), [x or y for x, y in zip(a, b_mask, strict=True)])


@given(selections(), st.integers(0, 800))
def test_split_offset_limit_trim_match_model(case: tuple[list[bool], RowSelection], n: int) -> None:
    mask, selection = case
    head, tail = selection.split_off(n)
    check(head, mask[:n])
    check(tail, mask[n:])

    selected = [i for i, v in enumerate(mask) if v]
    check(selection.offset(n), [v and i not in selected[:n] for i, v in enumerate(mask)])
    check(selection.limit(n), [v and i in selected[:n] for i, v in enumerate(mask)])

    end = (selected[-1] + 1) if selected else 0
    check(selection.trim(), mask[:end])


@given(selections(), st.integers(1, 64))
def test_policy_matches_definition(case: tuple[list[bool], RowSelection], threshold: int) -> None:
    mask, selection = case
    runs = len(model_runs(mask))
    expected = "mask" if len(mask) < runs * threshold else "selectors"
    assert selection.policy(threshold=threshold) == expected
    assert selection.with_policy("auto", threshold).representation == expected


@given(selections(), st.lists(st.integers(1, 60), min_size=1, max_size=12))
def test_scan_ranges_match_model(case: tuple[list[bool], RowSelection], sizes: list[int]) -> None:
    mask, selection = case
    first_rows = [sum(sizes[:i]) for i in range(len(sizes))]
    pages = [(1000 + 100 * i, 50, row) for i, row in enumerate(first_rows)]
    expected = []
    for i, (offset, size, start) in enumerate(pages):
        end = first_rows[i + 1] if i + 1 < len(first_rows) else len(mask)
        if any(mask[start:end]):
            expected.append((offset, size))
    assert selection.scan_ranges(pages) == expected
    # Pages are 50 bytes apart: a gap of 50 merges neighbours, the dictionary page comes first.
    merged = selection.scan_ranges(pages, dictionary_page=(4, 996), coalesce_gap=50)
    if expected:
        assert merged[0][0] == 4
        assert all(any(m[0] <= o and o + s <= m[0] + m[1] for m in merged) for o, s in expected)
    else:
        assert merged == []


# ----- examples from the issue and seed 001 ----------------------------------------------


def test_seed_and_then_example() -> None:
    a = RowSelection.from_runs([("skip", 100), ("select", 50), ("skip", 50)])
    b = RowSelection.from_runs([("select", 10), ("skip", 40)])
    assert a.and_then(b).runs() == [("skip", 100), ("select", 10), ("skip", 90)]


def test_seed_scan_ranges_example() -> None:
    s = RowSelection.from_runs([("skip", 150), ("select", 10), ("skip", 40)])
    assert s.scan_ranges([(0, 10, 0), (10, 10, 100)]) == [(10, 10)]


def test_from_mask_accepts_iterables_and_arrow() -> None:
    assert RowSelection.from_mask(iter([True, False, True])).to_mask() == [True, False, True]
    chunked = pa.chunked_array([[True, None], [False, True]], type=pa.bool_())
    assert RowSelection.from_mask(chunked).to_mask() == [True, False, False, True]
    sliced = pa.array([False, True, True, False, True]).slice(1, 3)
    assert RowSelection.from_mask(sliced).to_mask() == [True, True, False]


def test_equality_is_logical() -> None:
    runs = RowSelection.from_runs([("select", 1), ("skip", 1)])
    mask = RowSelection.from_mask([True, False])
    assert runs == mask
    assert runs.representation == "selectors" and mask.representation == "mask"
    assert runs != RowSelection.from_mask([True, True])
    assert "RowSelection(rows=2" in repr(runs)


def test_policy_examples() -> None:
    assert RowSelection.from_mask([True, False] * 64).policy() == "mask"
    assert RowSelection.from_runs([("select", 500), ("skip", 500)]).policy() == "selectors"
    # 2 runs over 63 rows: 63 < 64 picks the mask; over 64 rows it does not.
    assert RowSelection.from_runs([("select", 31), ("skip", 32)]).policy() == "mask"
    assert RowSelection.from_runs([("select", 32), ("skip", 32)]).policy() == "selectors"


# ----- errors -----------------------------------------------------------------------------


def test_and_then_length_mismatch_is_value_error() -> None:
    a = RowSelection.from_mask([True, False, True])
    with pytest.raises(ValueError, match="left side selects 2"):
        a.and_then(RowSelection.select_all(3))
    with pytest.raises(pqsift.SelectionError):
        a.and_then(RowSelection.select_all(1))


def test_mismatched_lengths_in_set_operations() -> None:
    with pytest.raises(ValueError, match="different row counts"):
        RowSelection.select_all(3).intersection(RowSelection.select_all(4))
    with pytest.raises(ValueError):
        RowSelection.select_all(3).union(RowSelection.skip_all(2))


@pytest.mark.parametrize(
    "runs",
    [
        [("select", -1)],
        [("skip", 2**64)],
        [("select", 2**63), ("select", 2**63)],  # the total overflows
        [("keep", 3)],
    ],
)
def test_bad_runs_are_value_errors(runs: list[tuple[str, int]]) -> None:
    with pytest.raises(ValueError):
        RowSelection.from_runs(runs)


def test_bad_run_types_are_type_errors() -> None:
    with pytest.raises(TypeError):
        RowSelection.from_runs([("select", 1.5)])
    with pytest.raises(TypeError):
        RowSelection.from_runs(["select"])
    with pytest.raises(TypeError):
        RowSelection.from_mask([True, "yes"])
    with pytest.raises(TypeError):
        RowSelection.from_mask(pa.array([1, 2]))


@pytest.mark.parametrize("ranges", [[(5, 3)], [(4, 6), (2, 3)], [(0, 11)], [(-1, 2)]])
def test_bad_ranges_are_value_errors(ranges: list[tuple[int, int]]) -> None:
    with pytest.raises(ValueError):
        RowSelection.from_ranges(ranges, 10)


def test_negative_counts_are_value_errors() -> None:
    s = RowSelection.select_all(5)
    for call in (s.split_off, s.offset, s.limit, s.expand_to_batch_boundaries):
        with pytest.raises(ValueError):
            call(-1)
    with pytest.raises(ValueError):
        s.expand_to_batch_boundaries(0)
    with pytest.raises(ValueError):
        s.with_policy("fastest")


def test_bad_pages_are_value_errors() -> None:
    s = RowSelection.select_all(10)
    with pytest.raises(ValueError, match="row 0"):
        s.scan_ranges([(0, 10, 3)])
    with pytest.raises(ValueError, match="must not decrease"):
        s.scan_ranges([(0, 10, 0), (10, 10, 6), (20, 10, 4)])
    with pytest.raises(ValueError):
        s.scan_ranges([(2**64 - 2, 10, 0)])
    with pytest.raises(TypeError):
        s.scan_ranges([(0, 10)])


def test_inputs_are_not_modified() -> None:
    runs = [("select", 2), ("select", 3)]
    mask = [True, False, True]
    RowSelection.from_runs(runs)
    RowSelection.from_mask(mask)
    assert runs == [("select", 2), ("select", 3)]
    assert mask == [True, False, True]
