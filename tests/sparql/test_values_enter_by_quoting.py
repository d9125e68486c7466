"""Values enter SPARQL text only serialised: bound by ``bind`` into a named query, or, where a query or update has no
WHERE block to bind in (a graph's name, ``INSERT DATA``), written by the one IRI and literal writers
(:mod:`bibgraph.graph.rdf.ntriples`, pyoxigraph's terms). Every SPARQL text built with values in ``graph/`` and
``web/`` is checked here, so a new one that splices a value in as it is fails, whatever module it is in."""

import ast
import re
from pathlib import Path

import pyoxigraph as ox
import pytest
from hypothesis import given
from hypothesis import strategies as st

from bibgraph.graph.engines.publish import PublishError, _iri
from bibgraph.graph.rdf.ntriples import iri, is_iri

ROOT = Path(__file__).resolve().parents[2]
# SPARQL, not SQLite's SQL (graph/site/search*.py): a query form with a ``?variable``, or an update's data or template
QUERY = re.compile(r"\b(SELECT|CONSTRUCT|ASK|DESCRIBE)\b[\s\S]*\?[A-Za-z_]")
UPDATE = re.compile(r"\b(INSERT|DELETE)\s+(DATA\b|\{)")
WRITERS = {"iri", "_iri", "literal", "typed", "Literal", "NamedNode", "bind"}  # each serialises or refuses a value


def _called(node: ast.expr) -> str | None:
    if isinstance(node, ast.Call):
        func = node.func
        return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
    return None


def _assigned(function: ast.AST) -> dict[str, list[ast.expr]]:
    """Each name a function assigns, with the values it is given (a tuple unpacked element by element)."""
    found: dict[str, list[ast.expr]] = {}
    for node in ast.walk(function):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    found.setdefault(target.id, []).append(node.value)
                elif isinstance(target, ast.Tuple) and isinstance(node.value, ast.Tuple):
                    for name, value in zip(target.elts, node.value.elts, strict=True):
                        if isinstance(name, ast.Name):
                            found.setdefault(name.id, []).append(value)
    return found


def _quoted(value: ast.expr, names: dict[str, list[ast.expr]], seen: frozenset[str] = frozenset()) -> bool:
    """Whether ``value`` is written by a writer: a writer's call, a name given only such values, an f-string of
    them, or a conditional whose branches are (``None`` aside)."""
    if _called(value) in WRITERS:
        return True
    if isinstance(value, ast.Constant):
        return value.value is None
    if isinstance(value, ast.JoinedStr):
        return all(_quoted(part.value, names, seen) for part in value.values if isinstance(part, ast.FormattedValue))
    if isinstance(value, ast.IfExp):
        return _quoted(value.body, names, seen) and _quoted(value.orelse, names, seen)
    if isinstance(value, ast.Name) and value.id in names and value.id not in seen:
        return all(_quoted(given, names, seen | {value.id}) for given in names[value.id])
    return False


def spliced(root: Path = ROOT) -> list[str]:
    """Each SPARQL text in graph/ and web/ built with a value no writer wrote: ``file:line: value``."""
    found = []
    for path in sorted([*root.glob("graph/**/*.py"), *root.glob("web/**/*.py")]):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        functions = [node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)]
        constants = {  # the texts a ``%`` may format: written in place, or a module's named constant
            ast.unparse(node): node.value for node in ast.walk(tree) if isinstance(node, ast.Constant)
        } | {
            target.id: node.value.value
            for node in tree.body
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
            for target in node.targets
            if isinstance(target, ast.Name)
        }
        for function in functions:
            names = _assigned(function)
            for node in ast.walk(function):
                if isinstance(node, ast.JoinedStr):
                    text = "".join(str(part.value) for part in node.values if isinstance(part, ast.Constant))
                    values = [part.value for part in node.values if isinstance(part, ast.FormattedValue)]
                elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
                    text, values = str(constants.get(ast.unparse(node.left), "")), [node.right]
                else:
                    continue
                if QUERY.search(text) or UPDATE.search(text):
                    found += [
                        f"{path.relative_to(root)}:{node.lineno}: {ast.unparse(value)}"
                        for value in values
                        if not _quoted(value, names)
                    ]
    return found


def test_every_value_in_a_sparql_text_is_written_by_a_writer() -> None:
    assert spliced() == []


def test_the_rule_sees_a_value_spliced_in(tmp_path: Path) -> None:
    """The check itself: a value as it is, ``%``-formatted or through an innocent name, is found."""
    module = tmp_path / "graph" / "spliced.py"
    module.parent.mkdir()
    module.write_text(
        "def a(g):\n    return f'SELECT ?s WHERE {{ GRAPH <{g}> {{ ?s ?p ?o }} }}'\n"
        "def b(block):\n    return 'SELECT ?x WHERE { VALUES ?x { %s } }' % block\n"
        "def c(g):\n    where = f'<{g}>'\n    return f'SELECT ?s WHERE {{ GRAPH {where} {{ ?s ?p ?o }} }}'\n"
        "def d(g):\n    where = iri(g)\n    return f'SELECT ?s WHERE {{ GRAPH {where} {{ ?s ?p ?o }} }}'\n"
        "Q = 'SELECT ?x WHERE { VALUES ?x { %s } }'\n"
        "def e(block):\n    return Q % block\n"
        "def f(g, text):\n    return f'INSERT DATA {{ GRAPH {iri(g)} {{ {iri(g)} {iri(g)} {text} }} }}'\n",
        encoding="utf-8",
    )
    assert [line.split(": ")[0] for line in spliced(tmp_path)] == [
        "graph/spliced.py:2",
        "graph/spliced.py:4",
        "graph/spliced.py:7",
        "graph/spliced.py:13",
        "graph/spliced.py:15",
    ]


@given(st.text(max_size=40))
def test_a_publish_quotes_an_iri_as_the_engine_reads_it_or_refuses_it(text: str) -> None:
    """The graph names a publish writes into its updates: the one writer's text, refused exactly when no IRI."""
    if is_iri(text):
        assert _iri(text) == iri(text) == str(ox.NamedNode(text))
    else:
        with pytest.raises(PublishError):
            _iri(text)
