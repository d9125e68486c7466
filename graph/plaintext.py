"""Abstract text as plain reading text: markdown emphasis and LaTeX turned into what they stand for.

Derived labels, headings, citations, meta tags and search snippets are plain text, where
``*x*``, ``$d \\gg n$`` or ``70\\%`` would show their source. Only ``$…$`` spans are LaTeX (the
rest of an abstract is prose, where ``%`` is a percent sign, not a comment), so pylatexenc
converts those spans alone; outside them only LaTeX's escaped characters are undone.
"""

import re

from pylatexenc.latex2text import LatexNodes2Text

_MATH = re.compile(r"\$\$(.+?)\$\$|\$([^$\n]+?)\$", re.S)
_STRONG = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*")
_EMPHASIS = re.compile(r"(?<![*\w])\*(?=\S)([^*]+?)(?<=\S)\*(?![*\w])")
_ESCAPED = re.compile(r"\\([%&_#$])")
_BARE_PERCENT = re.compile(r"(?<!\\)%")
_SPACES = re.compile(r"\s+")
_LATEX = LatexNodes2Text(math_mode="text", strict_latex_spaces="based-on-source")


def _math(match: re.Match[str]) -> str:
    source = _BARE_PERCENT.sub(r"\\%", match.group(1) or match.group(2))
    try:
        return str(_LATEX.latex_to_text(source)).strip()
    except Exception:  # pylatexenc is lenient, but a label must never fail on odd input
        return source


def plain_text(text: str) -> str:
    """``Pruning 70\\% of *heads* when $d \\gg n$`` → ``Pruning 70% of heads when d ≫ n``."""
    parts = []
    last = 0
    for match in _MATH.finditer(text):
        parts.append(_prose(text[last : match.start()]))
        parts.append(_math(match))
        last = match.end()
    parts.append(_prose(text[last:]))
    return _SPACES.sub(" ", "".join(parts)).strip()


def _prose(text: str) -> str:
    text = _ESCAPED.sub(r"\1", text)
    text = _STRONG.sub(r"\1", text)
    return _EMPHASIS.sub(r"\1", text)
