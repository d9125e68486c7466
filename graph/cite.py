"""Citations of a paper built from the graph: BibTeX, a plain-text reference, schema.org JSON-LD.

The input has no titles, so every form says so: the label is derived (first author and the
abstract's opening words) and the citation carries a note explaining it.
"""

import re
import unicodedata
from typing import Any

from .pages import PaperPage
from .plaintext import plain_text

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
