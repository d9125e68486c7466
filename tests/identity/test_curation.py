"""The curation file (people.curation beside the lists): curated decisions win, errors name file and line."""

from pathlib import Path

import pytest

from bibgraph.graph.dataset.build import build_graph
from bibgraph.graph.rdf.vocab import sparql_prologue
from tests.conftest import BASE, parse_text
from tests.identity.test_pagedata import LIST


def lists(tmp_path: Path, curation: str) -> Path:
    (tmp_path / "list.txt").write_text(LIST, encoding="utf-8")
    (tmp_path / "people.curation").write_text(curation, encoding="utf-8")
    return tmp_path


def persons_named(store, name: str) -> list[dict]:
    query = f'SELECT ?p ?curated WHERE {{ ?p foaf:name "{name}" OPTIONAL {{ ?p bg:curated ?curated }} }} ORDER BY ?p'
    return store.select(sparql_prologue() + query)


def test_same_joins_what_the_algorithm_split_and_says_so(tmp_path: Path) -> None:
    records, _ = parse_text(LIST, "list.txt")
    first, second = [f"list.txt:{r.line}#1" for r in records if r.authors[0] == "Wei Wang"]
    store, report = build_graph([lists(tmp_path, f"# one Wei Wang after all\nsame: {first} = {second}\n")], base=BASE)
    assert persons_named(store, "Wei Wang") == [{"p": persons_named(store, "Wei Wang")[0]["p"], "curated": True}]
    assert (report.curation.decisions, report.curation.overruled) == (1, 1)
    assert any(line.startswith("curated persons: 1 decisions applied, 1 overruling") for line in report.quality_lines())


def test_other_keeps_an_authorship_apart_and_same_name_joins_forms(tmp_path: Path) -> None:
    records, _ = parse_text(LIST, "list.txt")
    (plain,) = [f"list.txt:{r.line}#1" for r in records if r.authors[0] == "Bernhard Scholkopf"]
    curation = f"other: {plain}   # a namesake, says the curator\nsame-name: Wei Li = Wei Zhang\n"
    store, report = build_graph([lists(tmp_path, curation)], base=BASE)
    assert len(persons_named(store, "Bernhard Schölkopf")) == 1 and len(persons_named(store, "Bernhard Scholkopf")) == 1
    rows = store.select(sparql_prologue() + "SELECT ?alt WHERE { ?p skos:altLabel ?alt ; bg:curated true }")
    assert [row["alt"] for row in rows] in (["Wei Li"], ["Wei Zhang"])
    assert report.curation.decisions == 2


def test_a_curated_join_the_cannot_link_drops_is_in_the_build_report(tmp_path: Path) -> None:
    """``same-name`` of two forms one paper lists (Wei Chen, Wei Liu on the chemistry paper): the join would give
    one person two authorships of it, so it is not made, and the report says which line and forms (was silent)."""
    store, report = build_graph([lists(tmp_path, "# both on one paper\nsame-name: Wei Chen = Wei Liu\n")], base=BASE)
    assert len(persons_named(store, "Wei Chen")) == 1 and len(persons_named(store, "Wei Liu")) == 1
    assert report.curation.dropped == ["people.curation:2: Wei Chen = Wei Liu"]
    lines = list(report.quality_lines())
    at = lines.index("curated joins not made (two authorships of one paper are never one person): 1")
    assert lines[at + 1] == "  people.curation:2: Wei Chen = Wei Liu"


@pytest.mark.parametrize(
    ("curation", "message"),
    [
        ("\n\nsame: list.txt:999#1 = list.txt:1#1\n", "people.curation:3: list.txt:999#1 names no authorship"),
        ("other: list.txt:1#9\n", "people.curation:1: list.txt:1#9 names no authorship"),
        ("merge: a = b\n", "people.curation:1: expected 'same:', 'other:' or 'same-name:'"),
        ("same: list.txt:1#1\n", "people.curation:1: 'same:' takes two or more authorships"),
        ("same: list.txt 1 2 = x\n", "people.curation:1: 'list.txt 1 2' is not an authorship"),
        (
            "same: list.txt:1#1 = list.txt:5#1\n# note\nother: list.txt:5#1\n",
            "people.curation:1: list.txt:5#1 is also 'other' at people.curation:3",
        ),
        ("\nsame: list.txt:9#1 = list.txt:3#1 = list.txt:3#3\n", "people.curation:2: two authorships of one paper"),
    ],
)
def test_a_bad_curation_file_is_an_error_with_file_and_line_and_nothing_is_built(
    tmp_path: Path, curation: str, message: str
) -> None:
    with pytest.raises(ValueError, match="^" + message.replace("(", r"\(").replace(".", r"\.")):
        build_graph([lists(tmp_path, curation)], base=BASE)


def test_bibgraph_authors_lists_variant_pairs_with_their_evidence(tmp_path: Path, capsys) -> None:
    from bibgraph.web.commands.cli import main

    directory = lists(tmp_path, "other: " + _reference("Bernhard Scholkopf") + "\n")
    rows = LIST + "\n".join(
        f"\nMath · Algebra\n\nWei Wang, Helper{k} Person\n\nLattice group number {k} theorem proof.\n" for k in range(4)
    )
    (directory / "list.txt").write_text(rows, encoding="utf-8")
    assert main(["authors", str(directory)]) == 0
    out = capsys.readouterr().out
    # the curated 'other' keeps them apart; the shared co-author is the evidence shown
    assert "Bernhard Scholkopf = Bernhard Schölkopf: 2 authorships, apart; Alex Smola" in out
    # the four algebra papers (alike in text and area) are one person, each of the two others its own
    assert "suspected homonyms: 1" in out and "  Wei Wang: 6 authorships, 3 person(s)" in out


def _reference(author: str) -> str:
    records, _ = parse_text(LIST, "list.txt")
    (record,) = [r for r in records if r.authors[0] == author]
    return f"list.txt:{record.line}#1"
