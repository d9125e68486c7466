"""What a co-author network is filtered on: one dataclass, whose fields say how a request or a command line sets them.

A new filter is one field here (with its ``metadata``: how a web request and ``bibgraph export-graph`` read it) and
its meaning in :mod:`.coauthor` (or :meth:`.incidence.Incidence.scope` for a filter on papers); the web's reader,
the command's options and the links a map passes on are made from these fields.
"""

import math
from dataclasses import dataclass, field, fields
from typing import Any

AREA, SUBAREA = "area", "subarea"
# Links a co-author map draws at most (``Filters.links``): the most joint papers first, then by the two IRIs.
# The drawn authors are capped (the most prolific), but their links are not bounded by that: the authors
# of one 1,000-name paper are all linked, 499,500 links, and such a map took 86-100 s, 1.8 GB of the web
# process and an 83 MB page to draw, for each filter anyone asked.
MAX_MAP_LINKS = 20_000

# ``metadata["read"]`` of a field a user sets: how its text is read (``concept``: an area or subarea, named by its
# path or IRI; ``int``/``float``: a number, clamped to ``low``..``high`` and rounded to ``step``); ``help``: the
# command's option text.
CONCEPT, INT, FLOAT = "concept", "int", "float"
# How links are weighed (a map's width, a VOSviewer map's strength): the edge attribute of each weighting.
WEIGHTINGS = {"full": "weight", "fractional": "fractional"}


@dataclass(frozen=True)
class Filters:
    """What the co-author views filter on (all optional)."""

    area: str | None = field(default=None, metadata={"read": CONCEPT, "help": "area slug, e.g. deep-learning"})
    subarea: str | None = field(
        default=None, metadata={"read": CONCEPT, "help": "area/subarea slugs, e.g. deep-learning/theory"}
    )
    min_papers: int = field(default=1, metadata={"read": INT, "low": 1, "help": "authors with at least N papers"})
    min_joint: int = field(default=1, metadata={"read": INT, "low": 1, "help": "links of at least N joint papers"})
    top: int | None = field(default=None, metadata={"read": INT, "low": 1, "help": "the N authors with most papers"})
    community: int | None = field(
        default=None, metadata={"read": INT, "low": 0, "help": "one community (0: the largest)"}
    )
    # Read to steps of 0.1: every new float recomputed the whole network (35-39 CPU-s at 10k papers), so requests
    # that differ below a step are one computation and one cache key.
    resolution: float = field(
        default=1.0,
        metadata={"read": FLOAT, "low": 0.1, "high": 10.0, "step": 0.1, "help": "community resolution (modularity)"},
    )
    authors: frozenset[str] | None = None  # keep only these authors (ego networks)
    links: int | None = None  # keep the N strongest links (maps: MAX_MAP_LINKS; exports: all)


def user_filters() -> list[Any]:
    """The fields of :class:`Filters` a user sets (a request's arguments, the command's options), in order."""
    return [f for f in fields(Filters) if "read" in f.metadata]


def read_number(text: str, metadata: Any) -> int | float:
    """``text`` as the number field ``metadata`` describes, clamped to its bounds and rounded to its step;
    ``ValueError`` when no finite number."""
    value: int | float = int(text) if metadata["read"] == INT else float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text!r} is not a finite number")
    low, high = metadata.get("low", value), metadata.get("high", 1_000_000 if metadata["read"] == INT else value)
    value = max(low, min(high, value))
    step = metadata.get("step")
    return value if step is None else round(round(value / step) * step, 10)


def replaced(filters: Filters, **changes: Any) -> Filters:
    """``filters`` with ``changes``."""
    return Filters(**{**filters.__dict__, **changes})


def weight_attribute(weighting: str | None) -> str:
    """The edge attribute a weighting (``full``, ``fractional``; anything else: full) weighs links by."""
    return WEIGHTINGS.get(weighting or "full", "weight")


def drawn(filters: Filters, limit: int) -> tuple[Filters, int | None]:
    """The filters a map draws: at most ``limit`` authors, the most prolific ones (the cap, or None when the
    filters ask for fewer), and their ``MAX_MAP_LINKS`` strongest links (downloads keep every link)."""
    filters = replaced(filters, links=MAX_MAP_LINKS)
    if filters.top is None or filters.top > limit:
        return replaced(filters, top=limit), limit
    return filters, None


NO_CONCEPT = "urn:bibgraph:no-concept"  # the one area every area/subarea filter that matches no concept is read as


def bounded(filters: Filters, authors: int, most_papers: int, scope_empty: bool = False) -> Filters:
    """``filters`` with the numbers no dataset of ``authors`` authors, none of more than ``most_papers`` papers, tells
    apart put at one value: ``top`` of at least every author is no cap, and ``min_papers`` or ``min_joint`` past the
    most papers anyone has leave nobody whatever their value, and a ``community`` numbered past every author names
    none (communities are numbered from 0, largest first: there are never more than authors). So they are one
    download (one key, one computation): ``top=100000``, ``200000``, ``999999`` (or ``community=`` so) each made
    the whole network and its communities again, as costly as asking for it. ``scope_empty``: the area and subarea
    match no concept of the dataset (an unknown slug, a subarea of another area): every such pair is one key
    (:data:`NO_CONCEPT`), not one empty computation and one cache entry per spelling a client invents."""
    changes: dict[str, Any] = {}
    if scope_empty and (filters.area or filters.subarea):
        changes["area"], changes["subarea"] = NO_CONCEPT, None
    if filters.top is not None and filters.top >= authors:
        changes["top"] = None
    if filters.community is not None and filters.community > authors:
        changes["community"] = authors
    for name in ("min_papers", "min_joint"):
        if getattr(filters, name) > most_papers + 1:
            changes[name] = most_papers + 1
    return replaced(filters, **changes) if changes else filters


def link_rank(weight: int, a: str, b: str) -> tuple[int, str, str]:
    """The order links are kept in when a map holds too many: most joint papers, then the IRIs."""
    return (-weight, a, b) if a < b else (-weight, b, a)
