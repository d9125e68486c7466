"""The search index's texts a build's load spools (:mod:`bibgraph.graph.dataset.searchspool`) are the rows the
store's queries give (:func:`~bibgraph.graph.site.searchbuild.store_documents`, as a multiset), the index written from
them is the index written from the store, and no published version keeps the spool."""

from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from bibgraph.graph.dataset import build, searchspool
from bibgraph.graph.dataset.build import build_graph
from bibgraph.graph.dataset.directory import current_version, read_manifest
from bibgraph.graph.networks.incidence import incidence_of
from bibgraph.graph.site import searchbuild
from bibgraph.graph.site.search import FILE_NAME
from bibgraph.graph.site.searchbuild import build_search_index, store_documents
from bibgraph.graph.stores.store import OxigraphGraphStore
from bibgraph.seeds import seed_directory
from bibgraph.web.commands import versionwrite
from tests.conftest import BASE
from tests.dataset.test_voidtally import ABSTRACTS, AREAS, STUDY, _lists
from tests.site.test_searchbuild_bulk import contents

# Names written in capitals too (one person, its other spelling an skos:altLabel), shared by several papers (persons
# merged, or split by their co-authors), an area named like a person.
WORDS = ["Wei", "WEI", "Zhang", "ZHANG", "Li", "Anna", "Models"]
NAMES = st.lists(st.sampled_from(WORDS), min_size=2, max_size=2).map(" ".join)
AUTHORS = st.one_of(  # short lists often, long ones sometimes (over ten: a cut list)
    st.lists(NAMES, min_size=1, max_size=3, unique_by=str.casefold),
    st.lists(NAMES, min_size=1, max_size=12, unique_by=str.casefold),
)
RECORDS = st.tuples(AREAS, AUTHORS, ABSTRACTS)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(RECORDS, min_size=1, max_size=8),
    st.integers(min_value=1, max_value=3),
    st.one_of(st.none(), st.tuples(NAMES, NAMES)),
)
@example([(("Models", "li"), ["Wei Zhang", "Li Anna"], STUDY), (("Models", None), ["WEI ZHANG"], STUDY)], 2, None)
def test_the_spooled_texts_are_the_stores_and_index_alike(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, records: list, copies: int, curated: tuple[str, str] | None
) -> None:
    """Duplicate records (a list in several files), other spellings, areas with and without subareas, cut author
    lists, curated joins: the spool's rows are the queries' (each once: no text twice where a store holds a triple
    once), and the index written from them is the one written from the queries, row for row."""
    monkeypatch.setattr(build, "CHUNK_CHARS", 300)
    case = tmp_path / f"case-{len(list(tmp_path.iterdir()))}"
    case.mkdir()
    _lists(case / "lists", records, copies, curated)
    store = OxigraphGraphStore.disk(case / "store")
    with searchspool.writing(case) as spool:
        store, _ = build_graph([case / "lists"], base=BASE, store=store, progress=False, describe=False, search=spool)
    spooled = list(searchspool.documents(case / searchspool.SPOOL))
    assert Counter(spooled) == Counter(store_documents(store))
    incidence = incidence_of(store)
    build_search_index(store, case / "queried.sqlite", incidence)
    build_search_index(store, case / "spooled.sqlite", incidence, iter(spooled))
    assert contents(case / "spooled.sqlite") == contents(case / "queried.sqlite")


def test_a_spool_keeps_any_text_on_one_line(tmp_path: Path) -> None:
    """Line breaks, quotes, backslashes, tabs and separators in a text: each row read back as written."""
    texts = ["a\nb", 'q"uo\\te', "tab\there\r", "line\u2028sep\u0085", "数据 Über"]
    with searchspool.writing(tmp_path) as spool:
        for number, text in enumerate(texts):
            spool.paper(f"{BASE}p{number}", text, text)
    read = list(searchspool.documents(tmp_path / searchspool.SPOOL))
    assert read == [(f"{BASE}p{number}", "paper", text, text) for number, text in enumerate(texts)]


def _spool_seen(monkeypatch: pytest.MonkeyPatch, seen: list[Any], then: Exception | None = None) -> None:
    """The search index's writer records whether it was given the spool's rows (and the spool was there), and
    raises ``then`` once it has read them."""
    original = searchbuild.build_search_index

    def writer(store: Any, path: Path, incidence: Any = None, documents: Any = None) -> None:
        seen.append((documents is not None, (path.parent.parent / searchspool.SPOOL).exists()))
        original(store, path, incidence, documents)
        if then is not None:
            raise then

    monkeypatch.setattr(searchbuild, "build_search_index", writer)


def test_a_build_reads_its_spool_and_publishes_none(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[Any] = []
    _spool_seen(monkeypatch, seen)
    version, _ = versionwrite.build_dataset([seed_directory()], tmp_path / "data", BASE)
    assert seen == [(True, True)]
    assert not (version / searchspool.SPOOL).exists()
    assert searchspool.SPOOL not in "".join(read_manifest(version)["checksums"])
    assert (version / "derived" / FILE_NAME).exists()


@pytest.mark.parametrize("step", ["index", "exports"])
def test_a_build_that_dies_after_its_load_leaves_no_spool(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, step: str
) -> None:
    """The derive failing once the spool was read (``index``), or in a later step with it removed (``exports``): no
    version is published, and no spool is left anywhere in the dataset."""
    root = tmp_path / "data"
    before, _ = versionwrite.build_dataset([seed_directory()], root, BASE)
    seen: list[Any] = []
    _spool_seen(monkeypatch, seen, RuntimeError("died") if step == "index" else None)
    if step == "exports":
        monkeypatch.setattr("bibgraph.graph.dataset.sitedata.derive_exports", _dies)
    with pytest.raises(versionwrite.DeriveError, match="died"):
        versionwrite.build_dataset([seed_directory()], root, BASE)
    assert seen == [(True, True)]
    assert current_version(root) == before
    assert [path for path in root.rglob("*") if path.name == searchspool.SPOOL] == []


def _dies(*args: Any) -> None:
    raise RuntimeError("died")
