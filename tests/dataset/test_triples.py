"""The data model on the seeds and on small hand-made lists: figures, identities, IRIs, SHACL."""

import io
import random
import re
import sys
from pathlib import Path

from hypothesis import example, given, settings
from hypothesis import strategies as st

from bibgraph.graph.dataset.build import build_graph
from bibgraph.graph.dataset.triples import LABEL_WORDS_CHARS, _shorten, derived_label
from bibgraph.graph.ingest.names import normalise, person_key, tidy
from bibgraph.graph.ingest.plaintext import plain_text
from bibgraph.graph.ingest.records import Record
from bibgraph.graph.rdf.formats import rdf_syntax
from bibgraph.graph.rdf.validate import validate
from bibgraph.graph.rdf.vocab import sparql_prologue
from bibgraph.graph.stores.store import OxigraphGraphStore
from bibgraph.seeds import seed_directory
from tests.conftest import BASE

ABSTRACT = "We study a problem. Our method improves the state of the art on three benchmarks."


def count(store: OxigraphGraphStore, pattern: str) -> int:
    rows = store.select(f"{sparql_prologue()} SELECT (COUNT(*) AS ?n) WHERE {{ {pattern} }}")
    return int(rows[0]["n"])  # type: ignore[arg-type]


def test_seed_figures(seed_build) -> None:
    store, report = seed_build
    assert (report.records, report.papers, report.authors, report.authorships) == (40, 40, 203, 207)
    assert count(store, "?p a schema:ScholarlyArticle") == 40
    assert count(store, "?a a bg:Authorship") == 207
    assert count(store, "?p a foaf:Person") == 203
    assert count(store, "?c skos:topConceptOf ?s") == 8
    assert count(store, "?c skos:broader ?a") == 21
    assert count(store, "?p a schema:ScholarlyArticle FILTER NOT EXISTS { ?p dcterms:subject ?c }") == 1
    assert count(store, "?p bg:authorListTruncated true") == 1
    assert report.truncated == ["000_d76ea8ef0d7929c9.txt:103"]
    assert report.problems == []


def test_seed_authors_with_two_papers(seed_store) -> None:
    rows = seed_store.select(
        sparql_prologue() + "SELECT ?name (COUNT(?p) AS ?n) WHERE { ?p dcterms:creator ?a . ?a foaf:name ?name }"
        " GROUP BY ?name HAVING (COUNT(?p) > 1) ORDER BY ?name"
    )
    assert [(row["name"], row["n"]) for row in rows] == [
        ("Ke Wang", 2),
        ("Luwei Wang", 2),
        ("Oğuz Yüksel", 2),
        ("Ziniu Li", 2),
    ]


def test_seed_graph_conforms_to_shapes(seed_store) -> None:
    conforms, report = validate(seed_store.rdflib_graph())
    assert conforms, report


def test_shapes_catch_a_title_and_a_missing_position(seed_store) -> None:
    graph = seed_store.rdflib_graph()
    copy = type(graph)()
    for triple in graph:
        copy.add(triple)
    from rdflib import DCTERMS, Literal

    from bibgraph.graph.rdf.vocab import BG

    paper = next(copy.subjects(BG.listedAuthorCount, None))
    copy.add((paper, DCTERMS.title, Literal("Invented")))
    node = next(copy.objects(paper, BG.authorship))
    copy.remove((node, BG.authorPosition, None))
    conforms, report = validate(copy)
    assert not conforms
    assert "dcterms:title" in report or "title" in report
    assert "authorPosition" in report


def test_name_variants_are_one_person(write_list) -> None:
    path = write_list(f"A · B\nYI REN, Ann Lee\n{ABSTRACT}\n\nA · B\nYi  Ren\n{ABSTRACT} Two.\n")
    store, report = build_graph([path], base=BASE, progress=False)
    rows = store.select(sparql_prologue() + "SELECT ?name ?alt WHERE { ?a foaf:name ?name ; skos:altLabel ?alt }")
    # the form not in capitals names the person, whichever file order (the first seen would depend on it)
    assert rows == [{"name": "Yi Ren", "alt": "YI REN"}]
    assert report.merged_names == [("Yi Ren", ["YI REN"])]
    assert normalise("Ｙｉ　REN") == "yi ren"
    assert person_key("YI REN") == person_key("yi ren")
    assert person_key("Devriş İşler") != person_key("Devris Isler")


def test_same_subarea_under_two_areas_is_two_concepts(write_list) -> None:
    path = write_list(f"A · Theory\nX Y\n{ABSTRACT}\n\nB · Theory\nX Y\n{ABSTRACT} Two.\n")
    store, _ = build_graph([path], base=BASE, progress=False)
    assert count(store, "?c skos:prefLabel 'Theory' ; skos:broader ?a") == 2


def test_same_record_twice_is_one_paper_with_two_sources(write_list) -> None:
    first = write_list(f"A · B\nX Y, Z W\n{ABSTRACT}\n", "one.txt")
    second = write_list(f"论文检索\n\nA · B\n\nx y, Z  W\n\n{ABSTRACT}\n", "two.txt")
    store, report = build_graph([first, second], base=BASE, progress=False)
    assert (report.records, report.papers, report.duplicate_records) == (2, 1, 1)
    rows = store.select(
        sparql_prologue()
        + "SELECT ?file ?line WHERE { ?p prov:wasDerivedFrom ?s . ?s bg:sourceFile ?file ; bg:sourceLine ?line }"
        " ORDER BY ?file"
    )
    assert rows == [{"file": "one.txt", "line": 1}, {"file": "two.txt", "line": 3}]


def paper_iris(store: OxigraphGraphStore) -> set[str]:
    rows = store.select(sparql_prologue() + "SELECT ?p WHERE { ?p a schema:ScholarlyArticle }")
    return {str(row["p"]) for row in rows}


def test_adding_files_never_renames_papers(tmp_path: Path) -> None:
    seeds = sorted(seed_directory().glob("*.txt"))
    one, _ = build_graph(seeds[:1], base=BASE, progress=False)
    both, _ = build_graph(seeds, base=BASE, progress=False)
    assert paper_iris(one) < paper_iris(both)


def test_iris_follow_the_base_and_ignore_record_order(tmp_path: Path) -> None:
    text = (seed_directory() / "000_d76ea8ef0d7929c9.txt").read_text(encoding="utf-8")
    blocks = text.split("\n\n")[1:]
    records = [blocks[i : i + 3] for i in range(0, len(blocks), 3)]
    random.Random(7).shuffle(records)
    shuffled = tmp_path / "shuffled.txt"
    shuffled.write_text("\n\n".join("\n\n".join(r) for r in records), encoding="utf-8")
    original, _ = build_graph([seed_directory() / "000_d76ea8ef0d7929c9.txt"], base=BASE, progress=False)
    reordered, _ = build_graph([shuffled], base=BASE, progress=False)
    other_base, _ = build_graph([shuffled], base="https://example.org/bib/", progress=False)
    assert paper_iris(original) == paper_iris(reordered)
    assert {iri.replace("https://example.org/bib/", BASE) for iri in paper_iris(other_base)} == paper_iris(original)


def turtle(store: OxigraphGraphStore) -> bytes:
    out = io.BytesIO()
    store.dump(out, rdf_syntax("turtle"))
    return out.getvalue()


def test_same_input_gives_byte_identical_turtle_in_any_file_order() -> None:
    seeds = sorted(seed_directory().glob("*.txt"))
    first, _ = build_graph(seeds, base=BASE, progress=False)
    again, _ = build_graph(list(reversed(seeds)), base=BASE, progress=False)
    assert turtle(first) == turtle(again)
    assert count(first, "?p a schema:ScholarlyArticle ; dcterms:title ?t") == 0


def test_void_description_counts_the_data(seed_store) -> None:
    rows = seed_store.select(
        sparql_prologue() + "SELECT ?triples ?entities ?papers WHERE { ?d a void:Dataset ; void:triples ?triples ;"
        " void:entities ?entities ;"
        " void:classPartition [ void:class schema:ScholarlyArticle ; void:entities ?papers ] }"
    )
    void_triples = count(seed_store, "?d a void:Dataset . ?d ?p ?o") + count(
        seed_store, "?d void:classPartition|void:propertyPartition ?x . ?x ?p ?o"
    )
    assert rows[0]["papers"] == 40
    assert rows[0]["triples"] == seed_store.triple_count() - void_triples
    assert rows[0]["entities"] == 40 + 207 + 203 + 29 + 1 + 40 + 1  # ... and the identity step (a prov:Activity)


# Paper IRIs of the seeds as main minted them before name cleaning existed: cleaning must rename none.
SEED_PAPER_IDS = """
062edf1ab121a5d6 06cfd00c8a8ec448 1044e28b01ec5a2b 12b15c4dbaa3026f 15c0f5f7d317898c 190b17029a9ab507
1ad5912db3266e29 1c05e21f03923afd 2139036c43b3cfee 28cde08515425ce3 345e1d73a87f1633 39adef182015486d
4924f090328d8ff5 4a5d2040bccdf711 4e4923989442b661 58827c121bb82aff 5c6b3cc4dcff68cf 5ef6a7c99538f1c3
6047eb445e7759ef 633a9fea3f1f74dd 674c97ed325be672 700ffdd773df6ade 7d9f8036ca775135 8cae47b11c2caffe
8e69a2eff1b5ecb1 90b24f562614c118 9295e3e8418b64d8 931506e8a56f7149 9ff785b5408a3f92 c11a5c43935adb7f
c1b0181008c13339 c66c05a7160c2a99 ced37af19cf33fb6 e45ed58e1c6ae7ea e8127b3c7acca5bd ebe4d1afa13be1d9
ee6243c3dc4926c0 f3eb6a97b4ff97d4 f7d7fe9bf4721ab0 ffce1e8372bc4ef0
""".split()
# SHA-256 of the seed person IRIs (sorted, one per line) as main minted them.
SEED_PERSON_DIGEST = "6df5f112820ee734946f67c3e02571a9ade49544e62dcbececed6a93f4b5f9a5"


def test_seed_iris_are_unchanged_since_before_name_cleaning(seed_store) -> None:
    import hashlib

    papers = seed_store.select(sparql_prologue() + "SELECT ?p WHERE { ?p a schema:ScholarlyArticle }")
    assert sorted(str(row["p"]).removeprefix(f"{BASE}paper/") for row in papers) == SEED_PAPER_IDS
    people = seed_store.select(sparql_prologue() + "SELECT ?p WHERE { ?p a foaf:Person }")
    listed = "\n".join(sorted(str(row["p"]) for row in people))
    assert hashlib.sha256(listed.encode()).hexdigest() == SEED_PERSON_DIGEST


def test_a_cleaned_paper_keeps_the_iri_its_written_line_gives() -> None:
    from bibgraph.graph.ingest.records import Record, paper_id
    from tests.conftest import parse_text

    (cleaned,), _ = parse_text(f"A · B\nAnn Lee1, Bo Chen and Cy Diaz\n{ABSTRACT}\n", "f.txt")
    assert cleaned.authors == ("Ann Lee", "Bo Chen", "Cy Diaz")
    as_main_read_it = Record("f.txt", 1, "A", "B", ("Ann Lee1", "Bo Chen and Cy Diaz"), False, ABSTRACT)
    assert paper_id(cleaned) == paper_id(as_main_read_it)


# Pieces of abstracts: words, every kind of whitespace, and the characters plain_text acts on.
_ABSTRACT_PIECES = st.sampled_from(
    [
        *["representation ", "of ", "a", "Pruning", "70\\% ", " ", "  ", "\n", "\t", "\u3000", "$", "$$", "*"],
        *["**", "\\", "\\gg ", "x_1", "{", "}", "%", ", ", ". ", "*heads* ", " **all** ", "$d \\gg n$ "],
    ]
)


@settings(max_examples=400)
@given(
    st.lists(_ABSTRACT_PIECES, max_size=100),
    st.sampled_from([0, 0, 0, 10, 55, 62, 200, 238, 240, 241, 300]),
    st.booleans(),
)
@example(["*heads* "] * 10, 0, True)
def test_a_label_read_from_the_opening_is_the_label_of_the_whole_abstract(
    pieces: list[str], plain: int, long: bool
) -> None:
    """The label's text comes from the abstract's opening alone: the same as from the whole abstract."""
    # plain openings of lengths around the window; abstracts shorter and longer than it
    abstract = "x " * (plain // 2) + "".join(pieces) + " and so on" * (30 if long else 0) or "x"
    record = Record("a.txt", 1, None, None, ("Ann Lee",), False, abstract)
    assert derived_label(record) == f"Ann Lee: {_shorten(plain_text(tidy(abstract)), LABEL_WORDS_CHARS)}"


def test_whitespace_is_collapsed_at_exactly_what_the_regular_expression_calls_whitespace() -> None:
    """``tidy`` and ``normalise`` split with ``str.split``: the same characters as ``\\s``, every code point."""
    characters = [chr(code) for code in range(sys.maxunicode + 1) if not 0xD800 <= code <= 0xDFFF]
    by_regex = {c for c in characters if re.match(r"\s", c)}
    assert by_regex == {c for c in characters if c.isspace()}
    for space in by_regex:
        text = f"{space}Ann{space}{space}Lee {space}"
        assert tidy(text) == re.sub(r"\s+", " ", text).strip() == "Ann Lee"
        assert normalise(text.upper()) == "ann lee"
