"""The data behind each HTML page, read from the store with named SPARQL queries.

Returns plain dataclasses so that the web layer only formats; values are the store's, so a
page always agrees with what a SPARQL client sees.
"""

from dataclasses import dataclass, field

from .queries import named_query
from .store import GraphStore


def _bind(query: str, **iris: str) -> str:
    """Bind variables to IRIs by a ``VALUES`` clause placed at the start of the WHERE block."""
    values = " ".join(f"VALUES ?{name} {{ <{iri}> }}" for name, iri in iris.items())
    head, brace, rest = query.partition("WHERE {")
    return f"{head}{brace} {values}{rest}"


@dataclass
class AuthorPaper:
    iri: str
    label: str
    position: int
    listed: int
    truncated: bool
    subject: str | None
    area: str | None


@dataclass
class Coauthor:
    iri: str
    name: str
    joint: int


@dataclass
class AuthorProfile:
    iri: str
    name: str
    variants: list[str]
    papers: list[AuthorPaper] = field(default_factory=list)
    coauthors: list[Coauthor] = field(default_factory=list)

    @property
    def areas(self) -> list[str]:
        return sorted({p.area or p.subject for p in self.papers if p.area or p.subject})  # type: ignore[misc]


def _check_iri(iri: str) -> str:
    if any(c in iri for c in '<>"{}|^`\\ '):
        raise ValueError(f"not an IRI: {iri!r}")
    return iri


def author_profile(store: GraphStore, iri: str) -> AuthorProfile | None:
    iri = _check_iri(iri)
    rows = store.select(_bind(named_query("author_profile").text, author=iri))
    if not rows:
        return None
    alts = str(rows[0]["alts"] or "")
    profile = AuthorProfile(iri, str(rows[0]["name"]), [a for a in alts.split("\x1f") if a])
    for row in store.select(_bind(named_query("author_papers").text, author=iri)):
        profile.papers.append(
            AuthorPaper(
                iri=str(row["paper"]),
                label=str(row["label"]),
                position=int(row["position"]),  # type: ignore[arg-type]
                listed=int(row["listed"]),
                truncated=bool(row["truncated"]),  # type: ignore[arg-type]
                subject=row["conceptLabel"] and str(row["conceptLabel"]),  # type: ignore[arg-type]
                area=row["areaLabel"] and str(row["areaLabel"]),  # type: ignore[arg-type]
            )
        )
    for row in store.select(_bind(named_query("author_coauthors").text, author=iri)):
        profile.coauthors.append(Coauthor(str(row["coauthor"]), str(row["name"]), int(row["joint"])))  # type: ignore[arg-type]
    return profile


def dataset_summary(store: GraphStore) -> dict[str, int]:
    row = store.select(named_query("dataset_summary").text)[0]
    return {key: int(value or 0) for key, value in row.items()}  # type: ignore[arg-type]
