"""A dataset build is the domain's work: ``bibgraph build --dataset`` and ``bibgraph add`` load no web stack.

The build derived the views' data by driving the Flask app through its test client; the domain now derives it
(``graph/dataset/sitedata.py``) and the web reads it. Each command runs in a fresh interpreter, which then lists the web
modules it loaded: none may be there.
"""

import json
import subprocess
import sys
from pathlib import Path

from bibgraph.seeds import seed_directory
from tests.conftest import BASE

WEB_STACK = ("flask", "werkzeug", "jinja2", "pyvis", "waitress")
RUN = """
import json, sys
from bibgraph.web.commands.cli import main
code = main(sys.argv[2:])
web = set(sys.argv[1].split(","))
loaded = sorted({name.split(".")[0] for name in sys.modules} & web)
print(json.dumps({"code": code, "web": loaded}))
"""


def _run(*arguments: str) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", RUN, ",".join(WEB_STACK), *arguments],
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    return json.loads(done.stdout.splitlines()[-1])


def test_build_and_add_load_no_web_stack(tmp_path: Path) -> None:
    root = tmp_path / "dataset"
    seeds = sorted(seed_directory().glob("*.txt"))
    assert len(seeds) >= 2
    built = _run("build", str(seeds[0]), "--dataset", str(root), "--base", BASE, "--quiet")
    assert built == {"code": 0, "web": []}
    added = _run("add", str(root), str(seeds[1]))
    assert added == {"code": 0, "web": []}
