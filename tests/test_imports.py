"""The package's modules import each other without a cycle (a cycle is a design knot: two modules that are one)."""

import ast
from pathlib import Path

import networkx as nx

import bibgraph

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = {  # as pyproject.toml maps them
    "bibgraph": ROOT / "web" / "launch",
    "bibgraph.graph": ROOT / "graph",
    "bibgraph.graph.serving": ROOT / "graph" / "serving",
    "bibgraph.graph.stores": ROOT / "graph" / "stores",
    "bibgraph.web": ROOT / "web",
    "bibgraph.ontology": ROOT / "ontology",
    "bibgraph.seeds": ROOT / "seeds",
}


def modules() -> dict[str, Path]:
    """Every module of the package, by dotted name."""
    found = {}
    for package, directory in PACKAGES.items():
        for path in directory.glob("*.py"):
            found[package if path.stem == "__init__" else f"{package}.{path.stem}"] = path
    return found


def imported(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The package's modules that ``name`` imports, anywhere in it (a lazy import inside a function counts)."""
    package = name if path.stem == "__init__" else name.rpartition(".")[0]
    targets = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")
            base = base[: len(base) - node.level + 1] if node.level else []
            source = ".".join([*base, *([node.module] if node.module else [])])
            targets.add(source)
            targets |= {f"{source}.{alias.name}" for alias in node.names}  # ``from package import module``
    return {target for target in targets if target in known and target != name}


def import_graph() -> nx.DiGraph:
    known = modules()
    graph = nx.DiGraph()
    graph.add_nodes_from(known)
    for name, path in known.items():
        graph.add_edges_from((name, target) for target in imported(name, path, known))
    return graph


def test_the_import_graph_is_read_from_the_checkout_and_sees_real_imports() -> None:
    graph = import_graph()
    assert Path(bibgraph.__path__[0]).resolve() == PACKAGES["bibgraph"].resolve()
    assert graph.has_edge("bibgraph.web.sparql", "bibgraph.graph.serving.guard")
    assert graph.has_edge("bibgraph.graph.serving.pool", "bibgraph.graph.serving.worker")  # relative imports


def test_no_module_imports_itself_through_others() -> None:
    cycles = list(nx.simple_cycles(import_graph()))
    assert cycles == [], "import cycles: " + "; ".join(" -> ".join([*cycle, cycle[0]]) for cycle in cycles)
