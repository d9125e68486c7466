"""The whole networks' exports a dataset keeps, made in a process of their own that exits when they are written.

The whole co-author network (every author and link: 250,000 authors and 900,000 links at 100,000 papers) is a
networkx graph of about a kilobyte per node and link, laid out, then written in four formats. A process gives
back what it allocated only when it exits (CPython's and glibc's heaps keep their peak): made in the build's own
process, the network came on top of what the build and the rest of the derive left allocated. Made in a child
(``python -m bibgraph.graph.dataset.wholeexports DERIVED``), which reads the incidence the parent kept, the
build's peak is the larger of the two, not their sum. A small network is made in-process (a child costs the
imports, ~1 s): the bytes are the same, by the same function.
"""

import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bibgraph.graph.dataset.derived import DerivedFiles, derived_key, file_name, keeper
from bibgraph.graph.networks import Filters
from bibgraph.graph.networks.exports import NETWORK_SYNTAXES, network_syntax
from bibgraph.graph.networks.spec import COAUTHORS, TOPICS, NetworkSpec
from bibgraph.graph.serving.memory import release_free_memory
from bibgraph.graph.stores.atomic import write_bytes_atomically

if TYPE_CHECKING:
    import networkx as nx

CHILD_MIN_AUTHORSHIPS = 50_000  # below, the exports are made in-process (10,000 papers: ~35,000 authorships)


class ExportError(RuntimeError):
    """The child making the exports failed (its last error lines say why)."""


DEFAULT_EXPORTS = (NetworkSpec(COAUTHORS, Filters()), NetworkSpec(TOPICS))  # what the downloads offer with no filter


def export_file(directory: Path, spec: NetworkSpec, fmt: str, weight: str) -> Path:
    """The file in ``directory`` (a dataset's ``derived/``) of the export of ``spec`` in format ``fmt`` (a syntax's
    name) weighted by ``weight``: the export's bytes as they are served (data, read by nobody but a download)."""
    return directory / f"{Path(file_name(derived_key('export', spec, fmt, weight))).stem}.{network_syntax(fmt).suffix}"


def derive(directory: Path, incidence: Any, specs: tuple[NetworkSpec, ...] = DEFAULT_EXPORTS) -> None:
    """Every format of the whole networks of ``specs`` (by default the co-author and topic networks), as the
    downloads serve them with no filter, in ``directory`` (a dataset's ``derived/``, which keeps ``incidence``): a
    first download is a file read (the whole co-author network's VOSviewer map took 170 s at 20,000 papers). In a
    child when the co-author network is among them and large."""
    if specs != DEFAULT_EXPORTS or len(incidence.ap_paper) < CHILD_MIN_AUTHORSHIPS:
        make(directory, incidence, specs)
        return
    release_free_memory()  # what the derive freed, back to the system while the child runs
    done = subprocess.run([sys.executable, "-m", __name__, str(directory)], capture_output=True, text=True)
    if done.returncode != 0:
        raise ExportError(f"making the whole networks' exports failed: {done.stderr.strip()[-2000:]}")


def make(directory: Path, incidence: Any, specs: tuple[NetworkSpec, ...] = DEFAULT_EXPORTS) -> None:
    """The exports of :func:`derive`, made here; each spec's network and layout kept too (under their keys)."""
    from bibgraph.graph.networks import engine

    kept = keeper(DerivedFiles(directory, writable=True))
    for spec in specs:

        def whole(spec: NetworkSpec = spec) -> "nx.Graph":
            return engine.network(incidence, spec)

        network = kept(derived_key("network", spec), whole)
        for syntax in NETWORK_SYNTAXES:
            path = export_file(directory, spec, syntax.name, "weight")
            if not path.exists():  # the layout is made (and kept) only when a format with positions asks

                def positions(spec: Any = spec, network: Any = network) -> Any:
                    return kept(derived_key("layout", spec), lambda: engine.positions(spec, network))

                write_bytes_atomically(path, syntax.export(network, positions, weight="weight"))
        del network


def main(argv: list[str]) -> int:
    """The child: the exports of the dataset's ``derived/`` directory ``argv[0]``, from the incidence it keeps."""
    directory = Path(argv[0])
    found, incidence = DerivedFiles(directory).load(derived_key("incidence"))
    if not found:
        print(f"{directory} keeps no incidence to make the exports from", file=sys.stderr)
        return 1
    make(directory, incidence)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
