"""Persons in the graph and on the site: a shared name's numbered persons and its disambiguation page,
a joined form's IRI as owl:sameAs and 301, the profile's "N people share this name"."""

from functools import partial
from pathlib import Path

import pytest

from bibgraph.graph.dataset.build import build_graph
from bibgraph.graph.identity.pagedata import holders
from bibgraph.graph.ingest.names import person_key
from bibgraph.graph.networks.incidence import incidence_of
from bibgraph.graph.rdf.validate import validate
from bibgraph.graph.rdf.vocab import sparql_prologue
from bibgraph.graph.site.profile import areas_from
from tests.conftest import BASE, make_app

HTML = {"Accept": "text/html"}
# "Wei" and "Wang" are common in this list (nine names each), so two Wei Wang papers that share nothing are two people.
LIST = """论文检索

Biology · Proteins

Wei Wang, Wei Li, Jun Wang

Protein folding kinetics of enzymes measured by calorimetry in yeast cells.

Astronomy · Galaxies

Wei Wang, Wei Zhang, Min Wang

Galaxy cluster lensing surveys constrain dark matter halos at high redshift.

Chemistry · Catalysis

Wei Chen, Wei Liu, Wei Zhou, Wei Sun, Wei Xu, Wei Ma

Catalysts for ammonia synthesis at low pressure.

Physics · Optics

Hui Wang, Lei Wang, Tao Wang, Gang Wang, Feng Wang, Bin Wang

Optical lattices trap cold atoms for quantum simulation.

Learning · Kernels

Bernhard Schölkopf, Alex Smola

Kernel methods learn in reproducing kernel Hilbert spaces.

Learning · Kernels

Bernhard Scholkopf, Alex Smola, Ed Other

Support vector machines with kernels generalise by margin.
"""


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("identity")
    (directory / "list.txt").write_text(LIST, encoding="utf-8")
    return directory


def test_a_shared_name_gets_numbered_persons_and_a_disambiguation_resource(built: Path) -> None:
    store, report = build_graph([built], base=BASE, progress=False)
    base = person_key("Wei Wang")
    rows = store.select(sparql_prologue() + 'SELECT ?p WHERE { ?p a foaf:Person ; foaf:name "Wei Wang" } ORDER BY ?p')
    assert [row["p"] for row in rows] == [f"{BASE}author/{base}-0001", f"{BASE}author/{base}-0002"]
    shared = store.select(
        sparql_prologue() + f"SELECT ?p WHERE {{ <{BASE}author/{base}> a bg:SharedName ; bg:nameOf ?p }}"
    )
    assert len(shared) == 2 and report.shared_names == 2
    conforms, text = validate(store.rdflib_graph())
    assert conforms, text


def test_joined_forms_are_one_person_and_the_other_iri_is_same_as(built: Path) -> None:
    store, _ = build_graph([built], base=BASE, progress=False)
    rows = store.select(
        sparql_prologue()
        + "SELECT ?old ?p ?name ?alt WHERE { ?old owl:sameAs ?p . ?p foaf:name ?name ; skos:altLabel ?alt }"
    )
    assert len(rows) == 1
    assert {rows[0]["name"], rows[0]["alt"]} == {"Bernhard Schölkopf", "Bernhard Scholkopf"}
    assert rows[0]["old"] == f"{BASE}author/{person_key(rows[0]['alt'])}"
    papers = store.select(sparql_prologue() + f"SELECT ?paper WHERE {{ ?paper dcterms:creator <{rows[0]['p']}> }}")
    assert len(papers) == 2


def test_the_site_serves_the_disambiguation_page_the_profile_note_and_a_301(built: Path) -> None:
    app = make_app(BIBGRAPH_INPUTS=[str(built)])
    try:
        client = app.test_client()
        base = person_key("Wei Wang")
        page = client.get(f"/author/{base}", headers=HTML)
        assert page.status_code == 200
        html = page.get_data(as_text=True)
        assert "Name shared by 2 people" in html and f"/author/{base}-0001" in html and "Proteins" not in html
        assert "Biology" in html and "Astronomy" in html
        profile = client.get(f"/author/{base}-0001", headers=HTML).get_data(as_text=True)
        assert "2 people in this dataset share this name" in profile and f"/author/{base}-0002" in profile
        store, _ = build_graph([built], base=BASE, progress=False)
        (row,) = store.select(sparql_prologue() + "SELECT ?old ?p WHERE { ?old owl:sameAs ?p }")
        old = row["old"].removeprefix(BASE)
        moved = client.get(f"/{old}", headers=HTML)
        assert moved.status_code == 301 and moved.headers["Location"].endswith(row["p"].removeprefix(BASE))
        assert client.get(f"/{old}.ttl").status_code == 301
    finally:
        app.extensions["bibgraph"].close()


def test_add_sends_known_names_to_the_persons_the_dataset_has(built: Path, tmp_path: Path) -> None:
    from bibgraph.graph.dataset.add import add_lists

    store, _ = build_graph([built], base=BASE, progress=False)
    (row,) = store.select(sparql_prologue() + "SELECT ?old ?p WHERE { ?old owl:sameAs ?p }")
    retired = next(f for f in ("Bernhard Scholkopf", "Bernhard Schölkopf") if row["old"].endswith(person_key(f)))
    (tmp_path / "more.txt").write_text(
        "论文检索\n\nBiology · Proteins\n\nWei Wang, Jun Wang\n\nEnzyme kinetics again, in bacteria.\n\n"
        f"Learning · Kernels\n\n{retired}, Kim Novak\n\nKernel two-sample tests.\n",
        encoding="utf-8",
    )
    add_lists(store, [tmp_path / "more.txt"], BASE)

    def creators(word: str) -> set[str]:
        query = "SELECT ?p WHERE { ?paper dcterms:creator ?p ; dcterms:abstract ?a FILTER (CONTAINS(?a, '%s')) }"
        return {r["p"] for r in store.select(sparql_prologue() + query % word)}

    # the new Wei Wang paper goes to the Wei Wang who wrote with Jun Wang before (not the astronomer)
    biologist = creators("calorimetry") & creators("bacteria") - {f"{BASE}author/{person_key('Jun Wang')}"}
    assert len(biologist) == 1 and biologist.pop().endswith(("-0001", "-0002"))
    assert not creators("bacteria") & creators("Galaxy")
    # the retired form's new paper goes to the survivor
    assert row["p"] in creators("two-sample") and row["old"] not in creators("two-sample")
    shared = f"SELECT ?t WHERE {{ <{BASE}author/{person_key('Wei Wang')}> a ?t }}"
    assert store.select(sparql_prologue() + shared) == [{"t": "https://w3id.org/bibgraph/ontology#SharedName"}]


def test_add_joins_a_new_form_to_a_person_its_coauthors_wrote_with(built: Path, tmp_path: Path) -> None:
    from bibgraph.graph.dataset.add import add_lists

    store, _ = build_graph([built], base=BASE, progress=False)
    (row,) = store.select(sparql_prologue() + "SELECT ?p WHERE { ?p skos:altLabel ?alt }")
    bernhard = row["p"]
    (tmp_path / "more.txt").write_text(
        "论文检索\n\nLearning · Kernels\n\nB. Schölkopf, Alex Smola\n\nKernel mean embeddings.\n\n"
        "Learning · Kernels\n\nC. Schölkopf, Alex Smola\n\nKernel ridge regression.\n\n"
        "Learning · Kernels\n\nB. Scholkopf, Nora Stranger\n\nCausal inference with kernels.\n",
        encoding="utf-8",
    )
    add_lists(store, [tmp_path / "more.txt"], BASE)

    def creator(word: str, form: str) -> str:
        query = "SELECT ?p WHERE { ?paper dcterms:creator ?p ; dcterms:abstract ?a . ?p foaf:name|skos:altLabel ?n"
        query += " FILTER (CONTAINS(?a, '%s') && ?n = '%s') }"
        (found,) = store.select(sparql_prologue() + query % (word, form))
        return str(found["p"])

    # a shared co-author and a compatible form: the same person, the new form's IRI retired into it
    assert creator("embeddings", "B. Schölkopf") == bernhard
    same = f"ASK {{ <{BASE}author/{person_key('B. Schölkopf')}> owl:sameAs <{bernhard}> }}"
    assert store.rdflib_graph().query(sparql_prologue() + same).askAnswer
    # another initial (not compatible), or no co-author in common: a person of its own
    assert creator("ridge", "C. Schölkopf") == f"{BASE}author/{person_key('C. Schölkopf')}"
    assert creator("Causal", "B. Scholkopf") == f"{BASE}author/{person_key('B. Scholkopf')}"


def test_add_never_joins_a_common_short_form_to_a_longer_one(tmp_path: Path) -> None:
    """As a build: ``Xiang Li`` (Xiang and Li each borne by ten persons and more) may be anyone, so a paper of it
    with Xiang Lorraine Li's co-author stays apart; a rare short form (``Yoshua Bengio``) joins its longer form."""
    from bibgraph.graph.dataset.add import add_lists

    given = ["Ming", "Hua", "Jun", "Lan", "Bo", "Qing", "Tao", "Yan", "Fei", "Hong", "Kai"]
    family = ["Wang", "Zhang", "Chen", "Zhao", "Huang", "Zhou", "Wu", "Xu", "Sun", "Ma", "Hu"]
    papers = [(f"Xiang {f}", f"{g} Li") for g, f in zip(given, family, strict=True)]
    papers += [("Xiang Lorraine Li", "Bob Helper"), ("Yoshua J. Bengio", "Aaron Courville")]
    records = (f"\nBiology · Cells\n\n{a}, {b}\n\nStudy number {k}.\n" for k, (a, b) in enumerate(papers))
    text = "论文检索\n" + "".join(records)
    (tmp_path / "list.txt").write_text(text, encoding="utf-8")
    store, _ = build_graph([tmp_path / "list.txt"], base=BASE, progress=False)
    (tmp_path / "more.txt").write_text(
        "论文检索\n\nBiology · Cells\n\nXiang Li, Bob Helper\n\nAnother study.\n\n"
        "Biology · Cells\n\nYoshua Bengio, Aaron Courville\n\nDeep study.\n",
        encoding="utf-8",
    )
    add_lists(store, [tmp_path / "more.txt"], BASE)
    query = "SELECT ?n WHERE { ?paper dcterms:creator ?p ; dcterms:abstract '%s' . ?p foaf:name ?n }"

    def names(abstract: str) -> set[str]:
        return {str(r["n"]) for r in store.select(sparql_prologue() + query % abstract)}

    assert names("Another study.") == {"Xiang Li", "Bob Helper"}
    assert names("Deep study.") == {"Yoshua J. Bengio", "Aaron Courville"}


def test_a_holder_with_a_paper_of_no_subject_keeps_its_areas(tmp_path: Path) -> None:
    """A paper listed before any heading has no subject: its holder's other papers still give their areas (an
    OPTIONAL's unbound label made the whole GROUP_CONCAT unbound on Oxigraph, and the page showed none)."""
    unheaded = "Wei Wang, Wei Li, Qiang Wang\n\nEnzyme kinetics of protein folding, listed before any heading.\n\n"
    (tmp_path / "list.txt").write_text(LIST.replace("论文检索\n\n", "论文检索\n\n" + unheaded, 1), encoding="utf-8")
    store, _ = build_graph([tmp_path], base=BASE, progress=False)
    shared = f"{BASE}author/{person_key('Wei Wang')}"
    found = [(holder.papers, holder.areas) for holder in holders(store, shared)]
    assert found == [(2, ["Biology"]), (1, ["Astronomy"])]
    incidence = incidence_of(store)  # a dataset's kept incidence gives the same areas, the store not asked them
    kept = holders(store, shared, kept_areas=partial(areas_from, incidence))
    assert [(holder.papers, holder.areas) for holder in kept] == found


def test_holders_take_their_top_coauthors_from_what_is_kept(built: Path) -> None:
    """Given a kept source (a dataset's incidence), a holder's co-authors are its answer; where it has none (None),
    the store's co-author list answers, as without it."""
    store, _ = build_graph([built], base=BASE, progress=False)
    shared = f"{BASE}author/{person_key('Wei Wang')}"
    asked = holders(store, shared)
    kept = holders(store, shared, lambda person, count: None if person.endswith("1") else [person[-4:]] * count)
    assert [holder.coauthors for holder in kept] == [asked[0].coauthors, ["0002"] * 3]
    assert [holder.coauthors for holder in asked] == [["Jun Wang", "Wei Li"], ["Min Wang", "Wei Zhang"]]
