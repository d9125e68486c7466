"""A network download's body, computed where its size says: in the web process when the network is small, in a
child process that exits when it is not.

A child (:mod:`bibgraph.graph.serving.forked`) gives a large network's memory back to the system (each distinct
whole network at 10,000 papers had left ~95 MB in the web process), but forking the web process and the child's
first writes to the pages it shares cost a small download more than its network: a filtered download's first
request took 0.75-0.80 s in a child, 0.20-0.31 s in the web process before (6e2e39a). So the network's size is
read from the incidence first (:func:`bibgraph.graph.networks.engine.size`: its nodes and a bound on its links, no
pair made), and one of at most ``DOWNLOAD_IN_PROCESS_AUTHORS`` nodes and :data:`LINKS_PER_NODE` times as many links
is computed here, through the value cache and the engine the maps use (its network and layout kept within
``MAP_CACHE_BYTES``, shared with a download of the same filters in another format). It keeps the child's guarantees:
it runs in its client's turn at the gate, and between its stages (network, layout, body) it stops once its client
has gone (:class:`~.gate.ClientGone`), past ``NETWORK_TIMEOUT`` (503) or once the process tree holds more than the
hard memory limit (503); what one stage may cost is bounded by the size.
"""

import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from flask import current_app

from bibgraph.graph.networks.exports import network_syntax
from bibgraph.graph.networks.spec import NetworkSpec
from bibgraph.graph.serving.pool import QueryTimeout
from bibgraph.graph.stores.atomic import write_atomically
from bibgraph.web.maps.cache import NetworkCache, network_engine
from bibgraph.web.maps.gate import ClientGone, DerivationGate, client_gone

T = TypeVar("T")
# A map's own ratio (MAX_MAP_LINKS, 20,000 links, for the default MAX_VIEW_NODES, 1,000 authors): a download within
# DOWNLOAD_IN_PROCESS_AUTHORS nodes and this many links a node costs no more than a map the web process draws anyway.
LINKS_PER_NODE = 20


def in_process(size: tuple[int, int], bound: int) -> bool:
    """Whether a network of ``size`` (nodes, links at most) is computed in the web process, with the setting
    ``DOWNLOAD_IN_PROCESS_AUTHORS`` at ``bound`` (0: an empty network only)."""
    nodes, links = size
    return nodes <= bound and links <= LINKS_PER_NODE * bound


def write_body(cache: NetworkCache, spec: NetworkSpec, fmt: str, weight: str, path: Path) -> None:
    """Write the file of format ``fmt`` of the network of ``spec`` to ``path`` (atomically): in this process when
    the network is small (:func:`in_process`), else in a child process (:meth:`NetworkCache.forked`: killed once the
    client goes, at ``NETWORK_TIMEOUT`` or past the hard memory limit; its failure a 500 with its message)."""
    networks, incidence = network_engine(), cache.incidence()  # imported and read here: a child only computes
    if in_process(networks.size(incidence, spec), int(current_app.config["DOWNLOAD_IN_PROCESS_AUTHORS"])):
        _write_here(cache, spec, fmt, weight, path)
        return

    def work() -> None:
        write_atomically(path, lambda out: out.write(networks.exported(incidence, spec, fmt, weight)[1]))

    cache.forked(work, path)


def _write_here(cache: NetworkCache, spec: NetworkSpec, fmt: str, weight: str, path: Path) -> None:
    """The body made in this process from the cache's network and layout (the engine's, as a child's), each a
    stage: nothing is written once a stage ends with its client gone, its deadline passed or the memory over."""
    timeout = float(current_app.config["NETWORK_TIMEOUT"])
    ends = time.monotonic() + timeout

    def stage(make: Callable[[], T]) -> T:
        _go_on(cache.gate, ends, timeout)
        made = make()
        _go_on(cache.gate, ends, timeout)
        return made

    with cache.derivation():  # the body's turn (this thread's own already, when the body is made by cache.file)
        network = stage(lambda: cache.network(spec))
        body = stage(
            lambda: network_syntax(fmt).export(network, lambda: stage(lambda: cache.positions(spec)), weight=weight)
        )
        write_atomically(path, lambda out: out.write(body))


def _go_on(gate: DerivationGate | None, ends: float, timeout: float) -> None:
    """Between two stages: stop when the client has gone (counted, its turn given back), when the process tree holds
    more than the hard memory limit (503, counted) or when the deadline has passed (503), as a child is killed."""
    if gate is not None:
        gate.stop_if_gone()
        if gate.over_hard():
            raise gate.stopped_for_memory()
    elif client_gone():
        raise ClientGone("the client closed its connection: its download stopped")
    if time.monotonic() >= ends:
        raise QueryTimeout(f"the download ran past its deadline ({timeout:g} s) and was stopped")
