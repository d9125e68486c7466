"""Showing user-controlled text: always escaped, then only our own markup added."""

import re

from markupsafe import Markup, escape

_MATH = re.compile(r"(\$\$.+?\$\$|\$[^$\n]+?\$)", re.S)
_STRONG = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*")
_EMPHASIS = re.compile(r"(?<![*\w])\*(?=\S)([^*]+?)(?<=\S)\*(?![*\w])")


def abstract_html(text: str) -> Markup:
    """Escaped abstract with markdown ``**strong**`` and ``*emphasis*``; ``$…$`` math left for KaTeX.

    Escaping comes first, so no markup from the input survives; math spans are not touched
    (``$a*b*c$`` stays math), and KaTeX renders them as text-only math in the browser.
    """
    parts = _MATH.split(text)
    html = []
    for index, part in enumerate(parts):
        escaped = str(escape(part))
        if index % 2 == 0:
            escaped = _STRONG.sub(r"<strong>\1</strong>", escaped)
            escaped = _EMPHASIS.sub(r"<em>\1</em>", escaped)
        html.append(escaped)
    return Markup("".join(html))


_DECIMAL = re.compile(r"-?[0-9]+(\.[0-9]+)?")


def thousands(value: int | float | str) -> str:
    """A count for people, digits grouped by thousands (``12,345``): the one rule of every page (the
    ``thousands`` template filter). A string counts only as a plain decimal (a literal's lexical form)."""
    if isinstance(value, str):
        if not _DECIMAL.fullmatch(value):
            return value
        value = float(value) if "." in value else int(value)
    return f"{value:,}"
