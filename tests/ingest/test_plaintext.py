"""Labels are plain text: no LaTeX script marks (``π_θ``), braces or backslashes survive, whatever the
formula (generated), and what a script stands for is kept (its characters, in order)."""

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from bibgraph.graph.ingest.plaintext import plain_text
from bibgraph.graph.rdf.vocab import sparql_prologue

ATOMS = ["x", "n", "T", "K", "1", "2", "i", "j", r"\theta", r"\pi", r"\alpha", r"\max", r"\text{in}", r"\mathrm{KL}"]


def _formula(depth: int) -> st.SearchStrategy[str]:
    atom = st.sampled_from(ATOMS)
    if depth == 0:
        return atom
    inner = _formula(depth - 1)
    scripted = st.tuples(atom, st.sampled_from("_^"), inner).map(lambda t: f"{t[0]}{t[1]}{{{t[2]}}}")
    bare = st.tuples(atom, st.sampled_from("_^"), atom).map(lambda t: f"{t[0]}{t[1]}{t[2]}")
    frac = st.tuples(inner, inner).map(lambda t: rf"\frac{{{t[0]}}}{{{t[1]}}}")
    return st.lists(st.one_of(atom, scripted, bare, frac), min_size=1, max_size=4).map(" ".join)


@settings(deadline=None, max_examples=300)
@given(_formula(3), st.sampled_from(["policy ", "", "with "]))
def test_no_latex_survives_in_a_formula(formula, lead) -> None:
    shown = plain_text(f"{lead}${formula}$ is optimal")
    assert not re.search(r"[_\\{}$]", shown), (formula, shown)
    assert shown.startswith(lead.strip()) and shown.endswith("is optimal")


def test_subscripts_and_superscripts_keep_their_characters() -> None:
    assert plain_text(r"$\pi_\theta$ and $\pi_{\text{old}}$") == "πθ and πold"  # no subscript d: written after its base
    assert plain_text(r"$\mathcal{M}^{Shap}$, $x^{2}_{k}$") == "\u2133^(Shap), x²ₖ"
    assert plain_text(r"a snake_case name and a\_b") == "a snake_case name and a_b"


def test_seed_labels_hold_no_script_marks(seed_store) -> None:
    rows = seed_store.select(
        sparql_prologue() + "SELECT ?label WHERE { ?p a schema:ScholarlyArticle ; rdfs:label ?label }"
    )
    labels = [str(row["label"]) for row in rows]
    assert any("πθ" in label for label in labels) or all("π" not in label for label in labels)
    assert not [label for label in labels if re.search(r"[^\s]_[^\s]|\^|``", label)]
