"""Abstract text as plain reading text: markdown emphasis and LaTeX turned into what they stand for.

Derived labels, headings, citations, meta tags and search snippets are plain text, where
``*x*``, ``$d \\gg n$`` or ``70\\%`` would show their source. Only ``$…$`` spans are LaTeX (the
rest of an abstract is prose, where ``%`` is a percent sign, not a comment), so pylatexenc
converts those spans alone; outside them only LaTeX's escaped characters and quotes are undone.
Sub- and superscripts (``$\\pi_\\theta$``, ``$x^2$``), which pylatexenc leaves as ``π_θ`` and
``x^2``, become Unicode sub- and superscripts where each character has one (``x²``, ``ESSₘᵢₙ``);
otherwise a subscript is written after its base (``πθ``) and a superscript as ``^(…)``.
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
_QUOTES = (("``", "\u201c"), ("''", "\u201d"))  # LaTeX's ``quotes'' in prose
_SUB = dict(zip("0123456789+-=()aehijklmnoprstuvxβγρφχ", "₀₁₂₃₄₅₆₇₈₉₊₋₌₍₎ₐₑₕᵢⱼₖₗₘₙₒₚᵣₛₜᵤᵥₓᵦᵧᵨᵩᵪ", strict=True))  # noqa: RUF001
_SUPER = dict(
    zip(
        "0123456789+-=()abcdefghijklmnoprstuvwxyzABDEGHIJKLMNOPRTUVWαβγδεθιφχ",  # noqa: RUF001
        "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁼⁽⁾ᵃᵇᶜᵈᵉᶠᵍʰⁱʲᵏˡᵐⁿᵒᵖʳˢᵗᵘᵛʷˣʸᶻᴬᴮᴰᴱᴳᴴᴵᴶᴷᴸᴹᴺᴼᴾᴿᵀᵁⱽᵂᵅᵝᵞᵟᵋᶿᶥᵠᵡ",
        strict=True,
    )
)
_PLACEHOLDER = 0xE000  # private-use characters stand for finished scripts while pylatexenc reads the rest
_LATEX = LatexNodes2Text(math_mode="text", strict_latex_spaces="based-on-source")
# Built once: pylatexenc builds its default macro table for every walker otherwise (0.4 ms a span,
# most of a build's time on abstracts with formulas).
_CONTEXT = get_default_latex_context_db()


def _math(match: re.Match[str]) -> str:
    return _math_text(match.group(1) or match.group(2))


@lru_cache(maxsize=4096)  # formulas repeat across abstracts ($n$, $\\epsilon$ ...)
def _math_text(span: str) -> str:
    source, scripts = _take_scripts(_BARE_PERCENT.sub(r"\\%", span))
    try:
        nodes = LatexWalker(source, latex_context=_CONTEXT).get_latex_nodes()[0]
        text = str(_LATEX.nodelist_to_text(nodes)).strip()
    except Exception:  # pylatexenc is lenient, but a label must never fail on odd input
        text = source
    for index, script in enumerate(scripts):
        text = text.replace(chr(_PLACEHOLDER + index), script)
    return text


def _take_scripts(source: str) -> tuple[str, list[str]]:
    """``source`` with each ``_x``/``^{…}`` replaced by a placeholder, and the scripts' finished text."""
    out: list[str] = []
    scripts: list[str] = []
    i = 0
    while i < len(source):
        char = source[i]
        if char == "\\" and i + 1 < len(source):  # a macro or an escaped character (``\\_`` is an underscore)
            end = _macro_end(source, i)
            out.append(source[i:end])
            i = end
        elif char in "_^" and len(scripts) < 256:
            argument, i = _script_argument(source, i + 1)
            scripts.append(_script(_math_text(argument) if argument else "", char == "^"))
            out.append(chr(_PLACEHOLDER + len(scripts) - 1))
        else:
            out.append(char)
            i += 1
    return "".join(out), scripts


def _macro_end(source: str, start: int) -> int:
    end = start + 1
    while end < len(source) and source[end].isascii() and source[end].isalpha():
        end += 1
    return max(end, start + 2)


def _group_end(source: str, start: int) -> int:
    """The index after the brace group opening at ``start`` (the end of the text when it never closes)."""
    depth = 0
    for index in range(start, len(source)):
        if source[index] == "{" and source[index - 1 : index] != "\\":
            depth += 1
        elif source[index] == "}" and source[index - 1 : index] != "\\":
            depth -= 1
            if depth == 0:
                return index + 1
    return len(source)


def _script_argument(source: str, start: int) -> tuple[str, int]:
    """The argument of a script at ``start``: a brace group's content, a macro with its brace
    groups (``\\text{in}``), or one character."""
    while start < len(source) and source[start] == " ":
        start += 1
    if start >= len(source):
        return "", start
    if source[start] == "{":
        end = _group_end(source, start)
        return source[start + 1 : end - 1] if source[end - 1 : end] == "}" else source[start + 1 : end], end
    if source[start] == "\\":
        end = _macro_end(source, start)
        while end < len(source) and source[end] == "{":
            end = _group_end(source, end)
        return source[start:end], end
    return source[start], start + 1


def _script(text: str, superscript: bool) -> str:
    """A script's text as Unicode sub- or superscript characters when every character has one."""
    table = _SUPER if superscript else _SUB
    if text and all(char in table or char in table.values() for char in text):  # x_{i_j}: ᵢⱼ
        return "".join(table.get(char, char) for char in text)
    if superscript:
        return "^" + (text if len(text) == 1 else f"({text})")
    return text


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
    for latex, quote in _QUOTES:
        text = text.replace(latex, quote)
    text = _STRONG.sub(r"\1", text)
    return _EMPHASIS.sub(r"\1", text)
