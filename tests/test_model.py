"""The data model on the seeds and on small hand-made lists: figures, identities, IRIs, SHACL."""

import io
import random
from pathlib import Path

from bibgraph.graph.build import build_graph
from bibgraph.graph.formats import rdf_syntax
from bibgraph.graph.names import normalise, person_key
from bibgraph.graph.store import OxigraphGraphStore
from bibgraph.graph.validate import validate
from bibgraph.graph.vocab import sparql_prologue
from bibgraph.seeds import seed_directory

from .conftest import BASE

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

    from bibgraph.graph.vocab import BG

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
    assert rows == [{"name": "YI REN", "alt": "Yi Ren"}]
    assert report.merged_names == [("YI REN", ["Yi Ren"])]
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
    assert rows[0]["entities"] == 40 + 207 + 203 + 29 + 1 + 40
