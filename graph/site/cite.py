"""Citations built from the graph: a paper's (BibTeX, a plain-text reference, schema.org JSON-LD, Highwire tags)
and a list's (an author's, an area's, a search's papers) as BibTeX, RIS or CSV downloads.

The input has no titles, so every form says so: the label is derived (first author and the
abstract's opening words) and the citation carries a note explaining it.
"""

import csv
import io
import re
import unicodedata
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from bibgraph.graph.ingest.plaintext import plain_text
from bibgraph.graph.site.pagedata import PaperPage, author_from_row, paper_from_row
from bibgraph.graph.sparql.queries import bind, named_query
from bibgraph.graph.stores.store import GraphStore

CHUNK = 500  # papers bound by one query's VALUES

LABEL_NOTE = "No title in the source; the label is derived from the first author and the abstract's opening words"
_BIBTEX_SPECIAL = re.compile(r"([{}\\&%$#_~^])")
_BIBTEX_ESCAPES = {"~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "\\": r"\textbackslash{}"}


def _bibtex_value(text: str) -> str:
    return _BIBTEX_SPECIAL.sub(lambda m: _BIBTEX_ESCAPES.get(m.group(1), "\\" + m.group(1)), text)


def title_words(paper: PaperPage) -> str:
    """The label without its author lead (``First et al.: ``): the words that stand in for a title."""
    return paper.label.split(": ", 1)[1] if ": " in paper.label else paper.label


def cite_key(paper: PaperPage) -> str:
    """``family`` + the paper id's first 6 characters: ASCII, stable, unique enough."""
    first = paper.authors[0].name if paper.authors else "anon"
    family = unicodedata.normalize("NFKD", first.split()[-1] if first.split() else first)
    ascii_name = re.sub(r"[^A-Za-z0-9]", "", family.encode("ascii", "ignore").decode()).lower() or "paper"
    return f"{ascii_name}{paper.iri.rsplit('/', 1)[-1][:6]}"


def bibtex(paper: PaperPage, url: str | None = None) -> str:
    """``url``: where the page is read (the public URL behind a proxy; the IRI by default)."""
    authors = " and ".join("{" + _bibtex_value(a.name) + "}" for a in paper.authors)
    if paper.truncated:
        authors += " and others"
    keywords = ", ".join(label for label in (paper.area_label, paper.subject_label) if label)
    fields = [
        ("author", authors),
        ("title", "{" + _bibtex_value(title_words(paper)) + "}"),
        ("howpublished", r"\url{" + (url or paper.iri) + "}"),
        ("url", url or paper.iri),
        ("keywords", _bibtex_value(keywords)),
        ("note", _bibtex_value(LABEL_NOTE)),
    ]
    body = ",\n".join(f"  {name} = {{{value}}}" for name, value in fields if value)
    return f"@misc{{{cite_key(paper)},\n{body}\n}}\n"


def plain_reference(paper: PaperPage, url: str | None = None) -> str:
    names = [a.name for a in paper.authors]
    who = ", ".join(names) + (", et al." if paper.truncated else "")
    return f"{who}. “{title_words(paper)}” (untitled; label derived from the abstract). {url or paper.iri}"


def json_ld(paper: PaperPage, url: str | None = None) -> dict[str, Any]:
    """schema.org ``ScholarlyArticle`` for the page head (search engines, reference managers): ``@id``
    the paper's IRI, ``url`` where its page is read (the public URL behind a proxy)."""
    data: dict[str, Any] = {
        "@context": "https://schema.org",
        "@type": "ScholarlyArticle",
        "@id": paper.iri,
        "url": url or paper.iri,
        "name": paper.label,
        "alternativeHeadline": title_words(paper),
        "abstract": plain_text(paper.abstract),
        "author": [{"@type": "Person", "@id": a.iri, "name": a.name} for a in paper.authors],
        "description": LABEL_NOTE + ".",
    }
    subjects = [
        {"@type": "DefinedTerm", "@id": iri, "name": label}
        for iri, label in ((paper.area, paper.area_label), (paper.subject, paper.subject_label))
        if iri and label
    ]
    if subjects:
        data["about"] = subjects
    return data


def meta_tags(paper: PaperPage, url: str | None = None) -> list[tuple[str, str]]:
    """Highwire Press ``citation_*`` tags, which Zotero and Google Scholar read."""
    tags = [("citation_title", title_words(paper))]
    tags += [("citation_author", a.name) for a in paper.authors]
    tags += [
        ("citation_abstract", plain_text(paper.abstract)),
        ("citation_public_url", url or paper.iri),
        ("citation_abstract_html_url", url or paper.iri),
        ("citation_publisher", "bibgraph"),
    ]
    tags += [("citation_keywords", label) for label in (paper.area_label, paper.subject_label) if label]
    tags += [("DC.title", title_words(paper)), ("DC.identifier", paper.iri)]
    tags += [("DC.creator", a.name) for a in paper.authors]
    return tags


def citation_pages(store: GraphStore, iris: list[str]) -> Iterator[PaperPage]:
    """What citing each paper needs (no related papers), in the order of ``iris``, a few queries per 500 papers."""
    for start in range(0, len(iris), CHUNK):
        block = iris[start : start + CHUNK]
        pages: dict[str, PaperPage] = {}
        for row in store.select(bind(named_query("citation_papers").text, paper=block)):
            iri = str(row["paper"])
            pages[iri] = paper_from_row(iri, row)
        for row in store.select(bind(named_query("citation_authors").text, paper=block)):
            page = pages.get(str(row["paper"]))
            if page is not None:
                page.authors.append(author_from_row(row))
        for iri in block:
            if iri in pages:
                pages[iri].authors.sort(key=lambda a: a.position)
                yield pages[iri]


def _keywords(paper: PaperPage) -> list[str]:
    """The paper's area, then its subarea (a paper whose subject is an area has only that)."""
    if paper.area_label:
        return [paper.area_label, *([paper.subject_label] if paper.subject_label else [])]
    return [paper.subject_label] if paper.subject_label else []


def bibtex_list(papers: Iterable[PaperPage], url: Callable[[str], str]) -> str:
    return "\n".join(bibtex(paper, url(paper.iri)) for paper in papers)


def ris(papers: Iterable[PaperPage], url: Callable[[str], str]) -> str:
    """RIS (Zotero, EndNote, Mendeley): a ``GEN`` record per paper; a cut list (等) ends its authors with "et al."."""
    lines: list[str] = []
    for paper in papers:
        lines += ["TY  - GEN", f"ID  - {cite_key(paper)}"]
        lines += [f"AU  - {_one_line(a.name)}" for a in paper.authors]
        if paper.truncated:
            lines.append("AU  - et al.")
        lines += [f"TI  - {_one_line(title_words(paper))}", f"AB  - {_one_line(plain_text(paper.abstract))}"]
        lines += [f"KW  - {_one_line(k)}" for k in _keywords(paper)]
        lines += [f"UR  - {url(paper.iri)}", f"N1  - {LABEL_NOTE}", "ER  - ", ""]
    return "\n".join(lines)


def _one_line(text: str) -> str:
    """RIS is read line by line: a field's text on one line."""
    return " ".join(text.split())


CSV_COLUMNS = ("key", "iri", "url", "authors", "authors_cut", "title", "area", "subarea", "abstract")


def csv_table(papers: Iterable[PaperPage], url: Callable[[str], str]) -> str:
    """One row per paper; ``authors`` joined by "; " (a name may hold a comma), ``authors_cut``: the list ends in 等."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(CSV_COLUMNS)
    for paper in papers:
        area, subarea = [*_keywords(paper), "", ""][:2]
        writer.writerow(
            [
                cite_key(paper),
                paper.iri,
                url(paper.iri),
                "; ".join(a.name for a in paper.authors),
                "yes" if paper.truncated else "no",
                title_words(paper),
                area,
                subarea,
                plain_text(paper.abstract),
            ]
        )
    return out.getvalue()


# name -> (media type, file suffix, writer): the downloads of a list of papers
LIST_FORMATS: dict[str, tuple[str, str, Callable[[Iterable[PaperPage], Callable[[str], str]], str]]] = {
    "bibtex": ("application/x-bibtex", "bib", bibtex_list),
    "ris": ("application/x-research-info-systems", "ris", ris),
    "csv": ("text/csv", "csv", csv_table),
}
