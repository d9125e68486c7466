"""The dataset's dumps do not depend on the order of the input: generated corpora where identity decisions
happen (a common name split, variants joined by a shared co-author), built as ``build --dataset`` writes them
(the N-Triples dump streamed, the Turtle dump converted from it, the VoID tail)."""

import tempfile
from pathlib import Path

import pyoxigraph as ox
from hypothesis import given, settings
from hypothesis import strategies as st

from bibgraph.graph.dataset.dumps import complete_streamed_dumps, streamed_ntriples
from bibgraph.graph.dataset.opener import fill
from bibgraph.graph.dataset.void import void_quads
from bibgraph.graph.rdf.iris import Iris
from bibgraph.graph.stores.store import OxigraphGraphStore
from tests.conftest import BASE

# "Wei" and "Wang" start many names, so a Wei Wang with nothing in common is split; the Schölkopf and Bengio
# forms are joined when they share a co-author.
FAMILY = ["Li", "Zhang", "Chen", "Liu", "Zhou", "Sun", "Xu", "Ma", "Wang"]
GIVEN = ["Hui", "Lei", "Tao", "Gang", "Feng", "Bin", "Jun", "Min", "Wei"]
POOL = [f"Wei {f}" for f in FAMILY] + [f"{g} Wang" for g in GIVEN[:-1]]
POOL += ["Bernhard Schölkopf", "Bernhard Scholkopf", "Yoshua Bengio", "Y. Bengio", "Alex Smola"]
WORDS = "protein galaxy lattice enzyme kernel margin robot theorem".split()
AREAS = ["Biology · Proteins", "Astronomy · Galaxies", "Learning · Kernels"]


def records_of(names: list[str]) -> st.SearchStrategy[list[tuple[str, list[str], list[str]]]]:
    """Lists of 4 to 24 records (area line, 1 to 4 authors drawn from ``names``, an abstract of a few words)."""
    return st.lists(
        st.tuples(
            st.sampled_from(AREAS),
            st.lists(st.sampled_from(names), min_size=1, max_size=4, unique=True),
            st.lists(st.sampled_from(WORDS), min_size=3, max_size=6),
        ),
        min_size=4,
        max_size=24,
    )


records = records_of(POOL)


def write(directory: Path, files: dict[str, list[tuple[str, list[str], list[str]]]]) -> None:
    directory.mkdir()
    for name, found in files.items():
        text = "".join(f"{area}\n\n{', '.join(authors)}\n\n{' '.join(words)}.\n\n" for area, authors, words in found)
        (directory / name).write_text("论文检索\n\n" + text, encoding="utf-8")


def dumps(inputs: list[Path], out: Path) -> dict[str, bytes]:
    """The dumps a dataset version holds, written as ``build_dataset`` writes them."""
    out.mkdir()
    store = OxigraphGraphStore.disk(out / "store")
    with streamed_ntriples(out / "dumps") as ntriples:
        fill(store, inputs, BASE, ntriples)
    complete_streamed_dumps(out / "dumps", void_quads(store, Iris(BASE)))
    store.close()
    return {path.suffix: path.read_bytes() for path in (out / "dumps").iterdir()}


def split(drawn: list, cuts: list[int]) -> list[list]:
    bounds = sorted({min(c, len(drawn)) for c in cuts})
    parts, start = [], 0
    for bound in [*bounds, len(drawn)]:
        parts.append(drawn[start:bound])
        start = bound
    return [part for part in parts if part]


def without_provenance(data: bytes, syntax: ox.RdfFormat) -> list[str]:
    """The triples, sorted, but those only where a record stood says: a source record's file and line (and
    the VoID count of distinct objects, which counts those lines)."""
    kept = []
    for triple in ox.parse(data, format=syntax):
        if "#source-" in str(triple.subject) or str(triple.predicate).endswith("#distinctObjects"):
            continue
        kept.append(f"{triple.subject} {triple.predicate} {triple.object}")
    return sorted(kept)


@settings(max_examples=10, deadline=None)
@given(drawn=records, cuts=st.lists(st.integers(0, 24), max_size=2), order=st.randoms(use_true_random=False))
def test_the_same_lists_in_any_order_give_byte_identical_dumps(drawn: list, cuts: list[int], order) -> None:
    parts = split(drawn, cuts)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        write(root / "lists", {f"list{i}.txt": part for i, part in enumerate(parts)})
        files = sorted((root / "lists").iterdir())
        given_order = list(files)
        order.shuffle(given_order)
        first = dumps([root / "lists"], root / "a")  # a directory
        second = dumps(given_order, root / "b")  # its files, named one by one in another order
        assert first == second
        # the same records in another order within other files of other names: the same graph but where each
        # record stood (its file and line); the persons, their IRIs and numbers, sameAs, shared names alike
        shuffled = list(drawn)
        order.shuffle(shuffled)
        write(root / "other", {f"z{len(parts) - i}.txt": part for i, part in enumerate(split(shuffled, cuts))})
        third = dumps([root / "other"], root / "c")
        for suffix, syntax in ((".nt", ox.RdfFormat.N_TRIPLES), (".ttl", ox.RdfFormat.TURTLE)):
            assert without_provenance(first[suffix], syntax) == without_provenance(third[suffix], syntax)


def test_the_generated_corpora_make_identity_decisions(tmp_path: Path) -> None:
    """The generator above reaches both decisions: a shared name split, forms joined (else it proves little)."""
    drawn = [
        ("Biology · Proteins", ["Wei Wang", "Wei Li"], ["protein", "enzyme", "lattice"]),
        ("Astronomy · Galaxies", ["Wei Wang", "Wei Zhang"], ["galaxy", "theorem", "robot"]),
        ("Learning · Kernels", ["Bernhard Schölkopf", "Alex Smola"], ["kernel", "margin", "robot"]),
        ("Learning · Kernels", ["Bernhard Scholkopf", "Alex Smola"], ["kernel", "margin", "theorem"]),
    ] + [("Biology · Proteins", [name], ["protein", "enzyme", "margin"]) for name in POOL[:17]]
    write(tmp_path / "lists", {"a.txt": drawn})
    text = dumps([tmp_path / "lists"], tmp_path / "out")[".nt"].decode()
    assert "-0002>" in text and "owl#sameAs" in text and "SharedName" in text
