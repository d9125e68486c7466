"""Abstract text as plain reading text: markdown emphasis and LaTeX turned into what they stand for.

Derived labels, headings, citations, meta tags and search snippets are plain text, where
``*x*``, ``$d \\gg n$`` or ``70\\%`` would show their source. Only ``$…$`` spans are LaTeX (the
rest of an abstract is prose, where ``%`` is a percent sign, not a comment), so pylatexenc
converts those spans alone; outside them only LaTeX's escaped characters are undone.
"""

import re
from functools import lru_cache

from pylatexenc.latex2text import LatexNodes2Text
from pylatexenc.latexwalker import LatexWalker, get_default_latex_context_db

_MATH = re.compile(r"\$\$(.+?)\$\$|\$([^$\n]+?)\$", re.S)
_STRONG = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*")
_EMPHASIS = re.compile(r"(?<![*\w])\*(?=\S)([^*]+?)(?<=\S)\*(?![*\w])")
_ESCAPED = re.compile(r"\\([%&_#$])")
_BARE_PERCENT = re.compile(r"(?<!\\)%")
_SPACES = re.compile(r"\s+")
_LATEX = LatexNodes2Text(math_mode="text", strict_latex_spaces="based-on-source")
# Built once: pylatexenc builds its default macro table for every walker otherwise (0.4 ms a span,
# most of a build's time on abstracts with formulas).
_CONTEXT = get_default_latex_context_db()


def _math(match: re.Match[str]) -> str:
    return _math_text(match.group(1) or match.group(2))


@lru_cache(maxsize=4096)  # formulas repeat across abstracts ($n$, $\\epsilon$ ...)
def _math_text(span: str) -> str:
    source = _BARE_PERCENT.sub(r"\\%", span)
    try:
        nodes = LatexWalker(source, latex_context=_CONTEXT).get_latex_nodes()[0]
        return str(_LATEX.nodelist_to_text(nodes)).strip()
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
