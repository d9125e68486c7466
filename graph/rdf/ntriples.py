"""N-Triples terms written as text, for the build's hot path.

The builder emits N-Triples lines for pyoxigraph's Rust loader: building one pyoxigraph term per
node costs several times more. Every literal and every IRI that is not a constant of ours goes
through this module, which writes exactly what pyoxigraph's own serialiser writes (a test compares
them), so the text is always valid N-Triples. Elsewhere (VoID, pages) use pyoxigraph terms.
"""

import re

import pyoxigraph as ox

# ECHAR where N-Triples has one, UCHAR for the other C0 controls and DEL (as Oxigraph writes them).
_ESCAPES = {code: f"\\u{code:04X}" for code in [*range(0x20), 0x7F]} | {
    ord("\\"): "\\\\",
    ord('"'): '\\"',
    ord("\n"): "\\n",
    ord("\r"): "\\r",
    ord("\t"): "\\t",
    ord("\b"): "\\b",
    ord("\f"): "\\f",
}
_SURROGATE = re.compile("[\ud800-\udfff]")
# Anything the escaping or the surrogate check acts on: most literals (abstracts) have none, and
# one search costs a tenth of a ``translate`` over a thousand characters.
_SPECIAL = re.compile(r'[\x00-\x1f\x7f"\\\ud800-\udfff]')
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
# Characters no XML 1.0 document can hold, not even as a character reference: a literal holding
# one could not be published as RDF/XML (nor as SPARQL XML results).
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")
XSD_INTEGER = "http://www.w3.org/2001/XMLSchema#integer"
XSD_BOOLEAN = "http://www.w3.org/2001/XMLSchema#boolean"


def literal(text: str) -> str:
    """A plain string literal; lone surrogates (not Unicode scalar values, so not RDF) are refused."""
    if _SPECIAL.search(text) is None:
        return f'"{text}"'
    if _SURROGATE.search(text):
        raise ValueError(f"not a Unicode string (lone surrogate): {text!r}")
    if _CONTROL.search(text) is None:  # backslashes and quotes only (LaTeX in abstracts): replace is faster
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return f'"{text.translate(_ESCAPES)}"'


def unpublishable(text: str) -> str | None:
    """Why ``text`` cannot be a literal of every dump format (``None`` when it can)."""
    found = _NOT_XML.search(text)
    if found is None:
        return None
    return f"character U+{ord(found.group()):04X} cannot be published (XML 1.0, so RDF/XML, cannot hold it)"


def typed(value: int | bool) -> str:
    """An ``xsd:integer`` or ``xsd:boolean`` literal."""
    if isinstance(value, bool):
        return f'"{str(value).lower()}"^^<{XSD_BOOLEAN}>'
    return f'"{int(value)}"^^<{XSD_INTEGER}>'


def is_iri(text: str) -> bool:
    """Whether ``text`` is an absolute IRI (RFC 3987, as Oxigraph checks it): no spaces, controls,
    ``<>"{}|^`\\``, bad percent-escapes or surrogates, so it can stand between ``<`` and ``>``."""
    try:
        ox.NamedNode(text)
    except (ValueError, UnicodeEncodeError):
        return False
    return True


def iri(text: str) -> str:
    """``<text>``, refusing anything that is not an IRI."""
    if not is_iri(text):
        raise ValueError(f"not an IRI: {text!r}")
    return f"<{text}>"
