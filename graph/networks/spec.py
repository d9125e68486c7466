"""What names one derived network (:class:`NetworkSpec`) and the sizes its nodes are drawn and laid out at.

Light on purpose (no numpy): the web app imports it at start; :mod:`.engine` computes what a spec names.
"""

import math
from dataclasses import dataclass, field

import networkx as nx

from bibgraph.graph.networks.filters import AREA, Filters

COAUTHORS, TOPICS, TOPIC_MAP, EGO = "coauthors", "topics", "topic map", "ego"
RELATED_PER_TOPIC = 3  # strongest "related" edges kept per topic on the topic map


@dataclass(frozen=True)
class NetworkSpec:
    """Everything that shapes a derived network. The network, its layout, its drawn views and its
    analytics are all derived (and cached) from the whole spec, and each is made from the network of
    that same spec, so no two filter sets can ever share a layout."""

    kind: str  # COAUTHORS, TOPICS (the whole topic network), TOPIC_MAP (as drawn) or EGO
    filters: Filters = field(default_factory=Filters)  # COAUTHORS: the co-author filters
    expand: str | None = None  # TOPIC_MAP: the area IRI whose subareas are drawn, or "all"
    ego: tuple[str, int, int] | None = None  # EGO: (the author's IRI, radius 1 or 2, top K co-authors)


def author_radius(papers: int) -> float:
    """An author's disc in pixels: its area grows with the papers (radius with their square root), capped.
    The layout keeps these discs apart, so the drawing and the layout use this one function."""
    return round(5 + 3 * math.sqrt(min(papers, 80)), 1)


def topic_radius(papers: int, biggest: int, is_area: bool) -> float:
    """A topic's disc in pixels, relative to the biggest topic; areas larger than subareas."""
    share = math.sqrt(papers / max(biggest, 1))
    return round(8 + 32 * share, 1) if is_area else round(6 + 18 * share, 1)


def radii(spec: NetworkSpec, network: nx.Graph) -> dict[str, float]:
    """Each node's disc as drawn: what the layout keeps apart."""
    if spec.kind in (TOPICS, TOPIC_MAP):
        biggest = max((papers for _, papers in network.nodes(data="papers")), default=1)
        return {
            node: topic_radius(data["papers"], biggest, data["kind"] == AREA) for node, data in network.nodes(data=True)
        }
    return {node: author_radius(papers) for node, papers in network.nodes(data="papers", default=1)}
