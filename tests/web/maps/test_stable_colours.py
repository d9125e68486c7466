"""Map colours are the data's, not the process's: they survive a restart (``hash()`` would not)."""

import json
import os
import subprocess
import sys

COLOURS = """
import json, re
from bibgraph.web.app import create_app
app = create_app({"TESTING": True, "SPARQL_UNSANDBOXED": True, "QUERY_THREADS": 1})
colours = {}
with app.test_client() as client:
    for url in ("/graph/topics?subareas=all", "/graph/coauthors"):
        html = client.get(url).get_data(as_text=True)
        data = json.loads(re.search(r'id="graph-data">(.*?)</script>', html, re.S).group(1))
        colours[url] = sorted((node["id"], json.dumps(node["color"], sort_keys=True)) for node in data["nodes"])
app.extensions["bibgraph"].close()
print(json.dumps(colours))
"""


def _colours(hash_seed: str) -> dict[str, list[list[str]]]:
    environment = {**os.environ, "PYTHONHASHSEED": hash_seed}
    done = subprocess.run(
        [sys.executable, "-c", COLOURS], env=environment, capture_output=True, text=True, timeout=600, check=True
    )
    return json.loads(done.stdout.splitlines()[-1])


def test_two_processes_with_different_hash_seeds_draw_the_same_colours() -> None:
    first, second = _colours("1"), _colours("2")
    for url, nodes in first.items():
        assert len(nodes) > 10 and len({colour for _, colour in nodes}) > 2, url  # a real map, several colours
        assert nodes == second[url], url
