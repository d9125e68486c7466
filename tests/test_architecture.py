"""docs/architecture.md stays true: every module it names exists, and the README links it."""

import ast
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGE = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")


def test_every_module_the_architecture_names_exists() -> None:
    named = set(re.findall(r"`((?:graph|web|bench|tests|ontology|seeds)/[\w/*.]+)`", PAGE))
    assert len(named) > 40  # the page names the modules (a pattern that matched nothing would prove nothing)
    missing = sorted(name for name in named if not any(ROOT.glob(name)))
    assert missing == [], f"docs/architecture.md names modules that are gone: {missing}"


def test_the_domain_stores_serving_and_web_are_all_mapped() -> None:
    for package in sorted(init.parent for top in ("graph", "web") for init in (ROOT / top).rglob("__init__.py")):
        modules = {p.relative_to(ROOT).as_posix() for p in package.glob("*.py") if p.name != "__init__.py"}
        unmapped = modules - set(re.findall(r"`([\w/]+\.py)`", PAGE))
        assert unmapped == set(), f"docs/architecture.md does not say what these do: {sorted(unmapped)}"


def test_the_readme_links_the_architecture() -> None:
    assert "](docs/architecture.md)" in (ROOT / "README.md").read_text(encoding="utf-8")


def test_every_named_query_is_used() -> None:
    """A ``.rq`` file nothing names is dead code (the reference queries of differential tests count as used)."""
    names = {path.stem for path in (ROOT / "graph").rglob("*.rq")}
    sources = " ".join(
        path.read_text(encoding="utf-8")
        for folder in ("graph", "web", "tests", "bench")
        for path in (ROOT / folder).rglob("*.py")
    )
    assert names and {name for name in names if f'"{name}"' not in sources} == set()


def test_every_package_folder_is_installed() -> None:
    """A non-editable install (the README's main command) carries only the packages pyproject lists."""
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["packages"])
    for top, name in (("graph", "bibgraph.graph"), ("web", "bibgraph.web")):
        for init in (ROOT / top).rglob("__init__.py"):
            folder = init.parent.relative_to(ROOT / top)
            package = ".".join([name, *folder.parts]) if folder.parts else name
            assert package in listed, f"{package} is missing from [tool.setuptools] packages"


def test_no_folder_holds_more_than_twenty_modules_nor_a_module_more_than_450_lines() -> None:
    """The layout rule of issue 24: a folder of code is read in one sitting, a module in one screenful of scrolling
    (tests are held to the folder rule only: a module of cases for one behaviour may run long)."""
    crowded = {
        str(folder.relative_to(ROOT)): count
        for top in ("graph", "web", "bench", "tests")
        for folder in [ROOT / top, *(path for path in (ROOT / top).rglob("*") if path.is_dir())]
        if "__pycache__" not in folder.parts and (count := len(list(folder.glob("*.py")))) > 20
    }
    long = {
        str(path.relative_to(ROOT)): lines
        for top in ("graph", "web", "bench")
        for path in (ROOT / top).rglob("*.py")
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > 450
    }
    assert (crowded, long) == ({}, {})


def test_no_module_of_the_package_imports_another_modules_private_name() -> None:
    """A name two modules share is public in the module that defines it: a leading underscore says "only here"."""
    private = {
        f"{path.relative_to(ROOT)}:{node.lineno} {alias.name}"
        for top in ("graph", "web")
        for path in (ROOT / top).rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("bibgraph")
        for alias in node.names
        if alias.name.startswith("_") and not alias.name.startswith("__")
    }
    assert private == set()
