"""The whole co-author network's exports written from the arrays are, byte for byte, the engine's exports of the
same network (networkx graph, Leiden, writers): a differential test on generated incidences, ties of paper counts,
cut lists, areas and names of every kind included."""

import io
from array import array

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bibgraph.graph.networks import Filters, engine, exports, wholetext
from bibgraph.graph.networks.exports import NETWORK_SYNTAXES
from bibgraph.graph.networks.incidence import Concept, Incidence, _arrays
from bibgraph.graph.networks.spec import COAUTHORS, NetworkSpec
from bibgraph.graph.networks.wholecoauthors import WholeCoauthors

CONCEPTS = [
    Concept("c:vision", "Vision", "c:vision", "Vision"),
    Concept("c:vision/det", "Detection", "c:vision", "Vision"),
    Concept("c:lang", "Language", "c:lang", "Language"),
    Concept("c:robots/arms", "Arms", "c:robots", "Robots & <Arms>"),
]
NAMES = ["Ann Alpha", "", "李 明", 'Bob "B" <Beta>', "Ann Alpha", "Zoë Zeta", "Cid", "Dan"]

papers = st.lists(
    st.tuples(
        st.lists(st.integers(0, len(NAMES) - 1), min_size=1, max_size=6, unique=True),
        st.booleans(),
        st.lists(st.integers(0, len(CONCEPTS) - 1), max_size=2, unique=True),
    ),
    min_size=1,
    max_size=25,
)


def incidence(
    generated: list[tuple[list[int], bool, list[int]]], names: list[str] = NAMES, iris: list[str] | None = None
) -> Incidence:
    """An incidence of the generated papers (authors, cut, concepts), numbered as a store's reader numbers them."""
    author_ids = {f"http://x/person/{i:02d}" if iris is None else iris[i]: i for i in range(len(names))}
    paper_ids = {f"http://x/paper/{p:03d}": p for p in range(len(generated))}
    ap, pc = array("q"), array("q")
    for number, (authors, _, concepts) in enumerate(generated):
        for author in authors:
            ap.extend((number, author))
        for concept in concepts:
            pc.extend((number, concept))
    used = {a for authors, _, _ in generated for a in authors}
    named: list[str | None] = [name if i in used else None for i, name in enumerate(names)]

    truncated = np.array([cut for _, cut, _ in generated], dtype=bool)
    return _arrays(author_ids, named, paper_ids, truncated, {c: i for i, c in enumerate(CONCEPTS)}, ap, pc)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(papers, st.sampled_from(["weight", "fractional"]))
def test_the_arrays_write_the_engines_bytes_in_every_format(generated, weight) -> None:
    inc = incidence(generated)
    whole = WholeCoauthors(inc)
    spec = NetworkSpec(COAUTHORS, Filters())
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(exports, "LAID_OUT_MAX_NODES", 0)  # the engine's map without coordinates, as the arrays'
        patch.setattr(wholetext, "ROWS", 3)  # rows filled a few at a time, as at scale
        for syntax in NETWORK_SYNTAXES:
            if weight != "weight" and not syntax.positioned:
                continue  # only VOSviewer maps are weighted otherwise
            out = io.BytesIO()
            whole.write(syntax.name, out, weight)
            assert out.getvalue() == engine.exported(inc, spec, syntax.name, weight)[1], syntax.name


HOSTILE = st.text(
    st.characters(blacklist_categories=("Cs",)) | st.sampled_from("\t\n\r\0&<>\"'\\"), max_size=6
) | st.sampled_from(
    ["a\0", "\0", "O'Brien", 'Say "Hi"', "'\"", "a & b", "\\", "\x1f"]  # a trailing NUL: lost by fixed-width bytes
)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    papers,
    st.lists(HOSTILE, min_size=len(NAMES), max_size=len(NAMES)),
    st.lists(HOSTILE, min_size=len(NAMES), max_size=len(NAMES), unique=True),
    st.booleans(),
    st.sampled_from(["weight", "fractional"]),
)
def test_any_names_and_iris_write_the_engines_bytes_in_either_kind_of_columns(
    generated, names, tails, wide, weight
) -> None:
    """Names and IRIs with what each format escapes (quotes, ``&``, ``<``, backslashes, control characters, NUL,
    which the fixed-width columns cannot hold), written as fixed-width bytes or variable-width strings
    (:data:`wholetext.WIDE_FROM`): the engine's bytes."""
    inc = incidence(generated, names, [f"http://x/person/{tail}" for tail in tails])
    spec = NetworkSpec(COAUTHORS, Filters())
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(exports, "LAID_OUT_MAX_NODES", 0)
        patch.setattr(wholetext, "ROWS", 2)
        if wide:
            patch.setattr(wholetext, "WIDE_FROM", 0)
        whole = WholeCoauthors(inc)
        assert whole.columns.wide or not wide
        for syntax in NETWORK_SYNTAXES:
            if weight != "weight" and not syntax.positioned:
                continue
            out = io.BytesIO()
            whole.write(syntax.name, out, weight)
            assert out.getvalue() == engine.exported(inc, spec, syntax.name, weight)[1], syntax.name


def test_a_network_of_at_most_the_laid_out_nodes_keeps_its_coordinates() -> None:
    """Only a network above :data:`exports.LAID_OUT_MAX_NODES` loses its coordinates (VOSviewer lays it out)."""
    inc = incidence([([0, 2, 3], False, [0]), ([2, 5], True, [3])])
    spec = NetworkSpec(COAUTHORS, Filters())
    assert b'"x": ' in engine.exported(inc, spec, "vosviewer")[1]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(exports, "LAID_OUT_MAX_NODES", 3)
        assert b'"x": ' not in engine.exported(inc, spec, "vosviewer")[1]
