"""Distinct values by a sort (``graph/arrays/sets.py``), and no plain ``np.unique`` left in the package."""

import ast
from pathlib import Path

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from bibgraph.graph.arrays.sets import count_distinct, distinct, first_of_each

ROOT = Path(__file__).resolve().parent.parent
# what makes numpy 2.4's np.unique sort instead of hashing: any of these asked for
SORTING_ARGUMENTS = {"return_index", "return_inverse", "return_counts", "axis"}


@given(
    hnp.arrays(
        dtype=st.sampled_from([np.int64, np.int32, np.uint8, np.intp]),
        shape=hnp.array_shapes(min_dims=1, max_dims=2, min_side=0, max_side=40),
    )
)
def test_distinct_is_numpys_unique(values: np.ndarray) -> None:
    found = distinct(values)
    expected = np.unique(values)
    assert found.dtype == expected.dtype
    assert found.tolist() == expected.tolist()


@given(hnp.arrays(dtype=st.sampled_from([np.int64, np.uint8]), shape=st.integers(0, 60)))
def test_a_count_of_distinct_values_is_numpys_unique_counted(values: np.ndarray) -> None:
    assert count_distinct(values.copy()) == len(np.unique(values))


@given(hnp.arrays(dtype=st.sampled_from([np.int64, np.uint8]), shape=st.integers(0, 60)))
def test_the_first_of_each_value_is_numpys_unique_with_its_index(values: np.ndarray) -> None:
    found, first = first_of_each(values)
    expected, index = np.unique(values, return_index=True)
    assert found.tolist() == expected.tolist() and first.tolist() == index.tolist()


def plain_unique_calls(source: str) -> list[int]:
    """The lines of ``source`` calling ``np.unique`` or ``numpy.unique`` without an argument that makes it sort."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "unique"
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id in {"np", "numpy"}
            and not SORTING_ARGUMENTS & {keyword.arg for keyword in node.keywords}
        ):
            lines.append(node.lineno)
    return lines


def test_the_scan_finds_a_plain_unique_and_passes_one_that_sorts() -> None:
    assert plain_unique_calls("import numpy as np\nnp.unique(x)\nnp.unique(x, return_counts=True)\n") == [2]


def test_no_module_calls_the_hashing_unique() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{line}"
        for folder in ("graph", "web", "bench")
        for path in sorted((ROOT / folder).rglob("*.py"))
        for line in plain_unique_calls(path.read_text(encoding="utf-8"))
    ]
    assert found == [], "use bibgraph.graph.arrays.sets.distinct: " + ", ".join(found)
