"""The package's modules import each other without a cycle (a cycle is a design knot: two modules that are one)."""

import ast
import re
import tomllib
from pathlib import Path

import networkx as nx

import bibgraph

ROOT = Path(__file__).resolve().parent.parent


def _packages() -> dict[str, Path]:
    """Every package of the distribution and its folder, as pyproject.toml installs them (a subpackage without a
    ``package-dir`` row lies under its parent's folder)."""
    tool = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    folders: dict[str, Path] = {}
    for package in sorted(tool["packages"], key=lambda name: name.count(".")):
        parent, _, leaf = package.rpartition(".")
        given = tool["package-dir"].get(package)
        folders[package] = ROOT / given if given else folders[parent] / leaf
    return folders


PACKAGES = _packages()


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
    assert graph.has_edge("bibgraph.web.sparql.endpoint", "bibgraph.graph.sparql.guard")
    assert graph.has_edge("bibgraph.graph.serving.pool", "bibgraph.graph.serving.worker")  # relative imports


def test_no_module_imports_itself_through_others() -> None:
    cycles = list(nx.simple_cycles(import_graph()))
    assert cycles == [], "import cycles: " + "; ".join(" -> ".join([*cycle, cycle[0]]) for cycle in cycles)


def documented_layers() -> list[str]:
    """The domain's packages in the order docs/architecture.md's module map gives them, lowest layer first."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    return ["bibgraph." + folder.replace("/", ".") for folder in re.findall(r"^### `(graph/[a-z]+)/`$", text, re.M)]


def test_each_domain_package_imports_only_the_layers_below_it() -> None:
    """Packages import downwards in the documented order, so no two packages are one knot (a module of each
    importing the other's: the remote store and the query guard, the formats table and the network writers were)."""
    layers = documented_layers()
    assert set(layers) == {package for package in PACKAGES if package.startswith("bibgraph.graph.")}
    rank = {package: index for index, package in enumerate(layers)}
    known = modules()

    def package(name: str) -> str:
        return name if known[name].stem == "__init__" else name.rpartition(".")[0]

    upward = [
        f"{module} -> {target}"
        for module, target in import_graph().edges
        if package(module) in rank and package(target) in rank and rank[package(target)] > rank[package(module)]
    ]
    assert sorted(upward) == []


CLI = ("bibgraph.web.commands.cli", "bibgraph.web.commands.readgraph")  # each command imports what it runs:
# `bibgraph --help` and each command load only theirs
DEFERRED = {  # (module, what it imports inside a function): the rest of the package imports at module level
    # the parser and builder: serving a dataset never builds
    ("bibgraph.graph.dataset.opener", "bibgraph.graph.dataset.build"),
    # urllib.request and its TLS stack (~0.3 s): only a remote store
    ("bibgraph.graph.dataset.opener", "bibgraph.graph.stores.remote"),
    # rdflib's SPARQL engine (~0.3 s): serving never uses it
    ("bibgraph.graph.stores.store", "oxrdflib"),
    # numpy, scipy, igraph (~1 s): a server's start and the pages never wait for them
    ("bibgraph.graph.dataset.derived", "bibgraph.graph.networks.incidence"),
    ("bibgraph.graph.dataset.derived", "numpy"),
    ("bibgraph.graph.site.profile", "numpy"),  # an author's co-authors and papers from a kept incidence
    ("bibgraph.graph.site.profile", "bibgraph.graph.networks.incidence"),  # its one gather of many slices
    ("bibgraph.graph.site.closepapers", "numpy"),  # a paper page's papers by co-authors, from a kept incidence
    ("bibgraph.graph.site.closepapers", "bibgraph.graph.networks.incidence"),
    ("bibgraph.graph.site.closepapers", "bibgraph.graph.arrays.sets"),  # numpy, as the line above
    ("bibgraph.graph.site.profile", "bibgraph.graph.arrays.sets"),
    ("bibgraph.graph.site.homeupdate", "bibgraph.graph.arrays.sets"),
    ("bibgraph.graph.dataset.sitedata", "bibgraph.graph.networks"),
    ("bibgraph.graph.dataset.sitedata", "bibgraph.graph.networks.incidence"),
    ("bibgraph.graph.dataset.wholeexports", "bibgraph.graph.networks"),  # the engine, as sitedata
    ("bibgraph.graph.dataset.wholeexports", "bibgraph.graph.networks.wholecoauthors"),
    ("bibgraph.graph.dataset.sitedata", "bibgraph.graph.site.searchbuild"),
    ("bibgraph.graph.dataset.sitedata", "bibgraph.graph.site.conceptbuild"),  # a build's concept figures (numpy)
    ("bibgraph.graph.site.roles", "numpy"),  # the profiles' kept positions: read by the pages, made by a build
    ("bibgraph.graph.site.roles", "bibgraph.graph.networks.incidence"),
    ("bibgraph.graph.site.homeupdate", "numpy"),  # sitedata's (loaded by the pages): the home figures an add updates
    ("bibgraph.graph.site.homeupdate", "bibgraph.graph.networks.incidence"),
    ("bibgraph.graph.dataset.sitedata", "bibgraph.graph.site.mapview"),  # networkx: the default maps' drawings kept
    ("bibgraph.web.links", "bibgraph.graph.site.mapview"),  # networkx: links are made by every page, maps by few
    ("bibgraph.web.maps.cache", "bibgraph.graph.networks"),
    ("bibgraph.web.maps.cache", "bibgraph.graph.networks.incidence"),
    ("bibgraph.web.maps.cache", "bibgraph.graph.site.searchbuild"),
    # urllib.request and its TLS stack, and the publish side's naming: only a site over an engine (`sparql:`)
    ("bibgraph.web.maps.cache", "bibgraph.graph.stores.remote"),
    ("bibgraph.web.downloads", "bibgraph.graph.stores.remote"),  # an engine's dumps in other syntaxes
}


def in_function_imports() -> set[tuple[str, str]]:
    """(module, what it imports: the module's absolute name) for every import inside a function of the package
    (``if TYPE_CHECKING`` blocks are at module level: not counted)."""
    found = set()
    for name, path in modules().items():
        package = name if path.stem == "__init__" else name.rpartition(".")[0]
        for function in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
                for node in ast.walk(function):
                    if isinstance(node, ast.Import):
                        found |= {(name, alias.name) for alias in node.names}
                    elif isinstance(node, ast.ImportFrom):
                        base = package.split(".")[: len(package.split(".")) - node.level + 1] if node.level else []
                        found.add((name, ".".join([*base, *([node.module] if node.module else [])])))
    return found


def test_imports_are_deferred_only_where_start_up_time_needs_it() -> None:
    """The rule (docs/architecture.md, "Imports"): a module imports at its top; an import inside a function is the
    CLI's (per command) or one of :data:`DEFERRED`, each for a start-up time or memory it saves. A new one is added
    there with its reason, one that is gone is removed."""
    found = {(module, target) for module, target in in_function_imports() if module not in CLI}
    assert found == DEFERRED
    assert any(module in CLI for module, _ in in_function_imports())  # the walk sees the CLI's commands
