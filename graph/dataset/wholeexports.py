"""The whole networks' exports a dataset keeps (every format, no filter): plain files a first download sends.

The whole co-author network (every author and link: 185,000 authors and 900,000 links at 100,000 papers, ten times
that at a million) is too large to be a networkx graph in a build (a kilobyte per author and link: the derive
reached 12.3 GB at a million papers) or to be laid out (112.6 CPU-s at 100,000 papers). Above
:data:`LAID_OUT_MAX_NODES` authors its files are written from the incidence's arrays, row by row into the files
(:mod:`bibgraph.graph.networks.wholecoauthors`), the VOSviewer map without coordinates, as the engine makes it for a
network that large: the same bytes as a download computed by the app. A smaller network, and the topic network,
go through the engine, each kept with its layout.
"""

from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bibgraph.graph.dataset.derived import DerivedFiles, derived_key, file_name, keeper
from bibgraph.graph.networks import Filters
from bibgraph.graph.networks import exports as network_exports
from bibgraph.graph.networks.exports import NETWORK_SYNTAXES, network_syntax
from bibgraph.graph.networks.spec import COAUTHORS, TOPICS, NetworkSpec
from bibgraph.graph.stores.atomic import write_atomically, write_bytes_atomically

if TYPE_CHECKING:
    import networkx as nx

DEFAULT_EXPORTS = (NetworkSpec(COAUTHORS, Filters()), NetworkSpec(TOPICS))  # what the downloads offer with no filter


def export_file(directory: Path, spec: NetworkSpec, fmt: str, weight: str) -> Path:
    """The file in ``directory`` (a dataset's ``derived/``) of the export of ``spec`` in format ``fmt`` (a syntax's
    name) weighted by ``weight``: the export's bytes as they are served (data, read by nobody but a download)."""
    return directory / f"{Path(file_name(derived_key('export', spec, fmt, weight))).stem}.{network_syntax(fmt).suffix}"


def derive(
    directory: Path, incidence: Any, specs: tuple[NetworkSpec, ...] = DEFAULT_EXPORTS, sync: bool = True
) -> None:
    """Every format of the whole networks of ``specs`` (by default the co-author and topic networks), as the
    downloads serve them with no filter, in ``directory`` (a dataset's ``derived/``): a first download is a file
    read (the whole co-author network's VOSviewer map took 170 s at 20,000 papers). ``sync``: each file fsynced
    as written (not in a version being built: its tree is, before it is published)."""
    from bibgraph.graph.networks import engine
    from bibgraph.graph.networks.wholecoauthors import WholeCoauthors

    files = DerivedFiles(directory, writable=True)
    files.sync = sync
    kept = keeper(files)
    for spec in specs:
        paths = {syntax.name: export_file(directory, spec, syntax.name, "weight") for syntax in NETWORK_SYNTAXES}
        missing = [name for name, path in paths.items() if not path.exists()]
        if not missing:
            continue
        if spec == DEFAULT_EXPORTS[0] and len(incidence.authors) > network_exports.LAID_OUT_MAX_NODES:
            whole = WholeCoauthors(incidence)
            for name in missing:
                write_atomically(paths[name], partial(whole.write, name), sync)
            del whole
            continue

        def made(spec: NetworkSpec = spec) -> "nx.Graph":
            return engine.network(incidence, spec)

        network = kept(derived_key("network", spec), made)
        for name in missing:  # the layout is made (and kept) only when a format with positions asks

            def positions(spec: Any = spec, network: Any = network) -> Any:
                return kept(derived_key("layout", spec), lambda: engine.positions(spec, network))

            write_bytes_atomically(paths[name], network_syntax(name).export(network, positions, weight="weight"), sync)
        del network


def derive_kept(directory: Path, specs: tuple[NetworkSpec, ...], sync: bool) -> None:
    """:func:`derive` from the incidence kept in ``directory`` (a version being built): what a build runs in a
    process of its own (:func:`~bibgraph.graph.serving.childprocess.in_child`), which then holds the incidence and
    the whole co-author network's links and communities alone (at a million papers, +1.4 GB over the incidence)."""
    found, incidence = DerivedFiles(directory).load(derived_key("incidence"))
    if not found:
        raise FileNotFoundError(f"{directory} keeps no incidence to export the whole networks from")
    derive(directory, incidence, specs, sync)
