"""``serve DIR`` starts without loading what only building, drawing or laying out needs (issue 13: ready ≤ 5 s).

At 100k papers the imports were ~4 s of the start under load: scipy and numpy (layout, incidence arrays),
pyvis and IPython (drawn views, before they were drawn without pyvis), nameparser (the build). Each is loaded when a
request first needs it; pyvis and IPython never.
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bench.servers import free_port
from bibgraph.web.versionswitch import VIEW_IMPORTS

NEVER = ("pyvis", "IPython")  # no request imports them (maps are drawn without pyvis)
BUILD_ONLY = ("nameparser", "bibgraph.graph.dataset.build", "sklearn")  # the build's: no request of a server either
NOT_AT_START = (
    *NEVER,
    *BUILD_ONLY,
    "scipy",
    "numpy",
    "bibgraph.graph.networks.layout",
)
# rdflib's SPARQL engine and grammar (oxrdflib, syntax-error positions) and the remote store's HTTP client
NOT_AT_START += ("oxrdflib", "rdflib.plugins.sparql", "bibgraph.graph.stores.remote")

# Runs ``bibgraph serve DIR`` up to the moment it would listen, then prints the modules loaded by then.
STARTED = """
import json, sys
from bibgraph.web.commands import cli
from bibgraph.web import server

def listen(app, host, port):
    if WARM:
        server.warm_up(app).join()
    for path in ASKED:
        assert app.test_client().get(path).status_code == 200, path
    app.extensions["bibgraph"].close()
    print(json.dumps(sorted(sys.modules)))
    print(__import__("gc").get_freeze_count())

server.serve = listen
sys.exit(cli.main(["serve", sys.argv[1], "--port", sys.argv[2]]))
"""


@pytest.fixture(scope="module")
def dataset(seed_dataset: Path) -> Path:
    return seed_dataset


def started_modules(dataset: Path, first: str = "", warm: bool = False, asked: tuple[str, ...] = ()) -> set[str]:
    """The modules loaded when ``serve DIR`` is about to listen (``first``: code run before it; ``warm``: once
    its background warm-up is done; ``asked``: once these paths were answered, each 200)."""
    script = f"{first}\nWARM = {warm}\nASKED = {asked!r}\n{STARTED}"
    command = [sys.executable, "-c", script, str(dataset), str(free_port())]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=True)
    return set(json.loads(done.stdout.splitlines()[-2]))


def test_the_warm_up_leaves_what_it_made_out_of_the_collectors_generations(dataset: Path) -> None:
    """What lives as long as the server is frozen once warm (a full collection walked it at a first map's request)."""
    script = f"WARM = True\nASKED = ()\n{STARTED}"
    done = subprocess.run(
        [sys.executable, "-c", script, str(dataset), str(free_port())], capture_output=True, text=True, timeout=300
    )
    assert int(done.stdout.splitlines()[-1]) > 10_000


def test_serving_a_dataset_starts_without_the_build_layout_or_drawing_libraries(dataset: Path) -> None:
    loaded = started_modules(dataset)
    assert "bibgraph.web.app" in loaded and "pyoxigraph" in loaded  # the app was made and the store opened
    assert sorted(name for name in NOT_AT_START if name in loaded) == []


def test_the_warm_up_after_listening_loads_what_the_views_import(dataset: Path) -> None:
    """Once it listens, ``serve`` imports the views' modules in the background, so a first filtered map does not."""
    loaded = started_modules(dataset, warm=True)
    assert [name for name in VIEW_IMPORTS if name not in loaded] == []
    assert {"numpy", "scipy"} <= loaded and "pyvis" not in loaded and "IPython" not in loaded  # maps drawn without
    assert "bibgraph.graph.dataset.build" not in loaded and "nameparser" not in loaded  # only what the views need


def test_the_author_autocomplete_and_a_path_by_names_need_no_name_parser(dataset: Path) -> None:
    """Both normalise what was typed (``names``), which loads no nameparser: its 0.3 s import was the
    autocomplete's first request (0.1 s against 0.006 s before the redesign, where the search page paid it)."""
    asked = ("/graph/authors.json?q=li", "/graph/path?from=Ada%20Lovelace&to=Yi%20Ren")
    assert "nameparser" not in started_modules(dataset, warm=True, asked=asked)


def test_the_check_sees_a_module_the_start_loads(dataset: Path) -> None:
    """The same check, run with one of those modules loaded first, finds it (the check itself can fail)."""
    assert "nameparser" in started_modules(dataset, first="import nameparser")


def test_a_version_switch_first_imports_what_the_start_leaves_for_later() -> None:
    """web/versionswitch.py imports these before forking a new pool while requests may be importing them; not the
    build's modules, which no request imports (1.3 CPU-s of a first switch at a million papers, issue 28)."""
    script = (
        "import importlib, json, sys\nfrom bibgraph.web.versionswitch import FIRST_USE_IMPORTS\n"
        "for name in FIRST_USE_IMPORTS:\n    importlib.import_module(name)\nprint(json.dumps(sorted(sys.modules)))"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, check=True)
    loaded = set(json.loads(done.stdout.splitlines()[-1]))
    assert [name for name in NOT_AT_START if name not in loaded and name not in NEVER + BUILD_ONLY] == []
    assert [name for name in BUILD_ONLY if name in loaded] == []
