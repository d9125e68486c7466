"""Variations real paper lists carry (copied from conference sites, dblp, the ACL Anthology, OpenReview and
CNKI-like portals), one generated class each: cut markers in other languages, invisible format characters,
a full stop ending the line, ``Family, Given`` names, bracketed notes and e-mails, CJK names separated by spaces
only, area separators other than `` · ``, Vancouver-style names (``Smith J``)."""

import unicodedata
from pathlib import Path

from hypothesis import assume, example, given, settings
from hypothesis import strategies as st
from nameparser import HumanName
from nameparser.config import CONSTANTS

from bibgraph.graph.ingest.authorline import read_author_line
from bibgraph.graph.ingest.nameparts import name_parts
from bibgraph.graph.ingest.parse import AREA_SEPARATORS, scan_areas
from tests.conftest import parse_text
from tests.ingest.test_authorline import _record, render

ABSTRACT = "We study a problem. Our method improves the state of the art on three benchmarks."
_LOWER = "abcdefghijklmnopqrstuvwxyzéüø"
_UPPER = "ABCDEFGHIJKLMNOPRSTUVWZ"
_NAMEPARSER_WORDS = {
    *CONSTANTS.titles,
    *CONSTANTS.suffix_acronyms,
    *CONSTANTS.suffix_not_acronyms,
    *CONSTANTS.prefixes,
    *CONSTANTS.conjunctions,
}
# A capitalised word of 2-8 letters that is no title, suffix, particle or conjunction nameparser knows.
_word = st.builds(lambda first, rest: first + rest, st.sampled_from(_UPPER), st.text(_LOWER, min_size=2, max_size=7))
_word = _word.filter(lambda w: w.lower() not in _NAMEPARSER_WORDS | {"and", "et", "etc", "others"})
_word = st.one_of(_word, _word.map(str.upper))  # "Xiaoyi MAI", "AHMED KIM": names in capitals too
_western = st.builds(lambda given_name, family: f"{given_name} {family}", _word, _word)
_han = st.text(alphabet=st.sampled_from("张王李赵刘陈杨黄伟娜芳强敏静磊洋艳勇军杰涛明超秀霞"), min_size=2, max_size=3)
_names = st.one_of(st.lists(_western, min_size=1, max_size=8), st.lists(_han, min_size=1, max_size=8))


def _authors(line: str) -> tuple[list[str], bool]:
    read = read_author_line(line, 1)
    assert not read.unsplit, line
    return [name.name for name in read.names], read.truncated


_CUTS = [" et al.", ", et al.", " et al", " et. al.", " et al.,", " etc.", ", etc.", " and others", " u. a."]
_CUTS += [" 等", " 等人", "，等", "、等", ", 等人", " 等.", " 等。", " …", " ……", "...", ", ...", "⋯⋯"]


@settings(max_examples=150, deadline=None)
@given(_names, st.sampled_from(["，", ", ", "、", "; "]), st.sampled_from(_CUTS))
def test_cut_markers_of_other_languages_end_a_cut_list(names: list[str], separator: str, cut: str) -> None:
    line = separator.join(names)
    assert _authors(line) == (names, False)
    assert _authors(line + cut) == (names, True)


@settings(max_examples=100, deadline=None)
@given(st.lists(_han, min_size=2, max_size=6))
def test_unspaced_dengren_ends_a_han_list_and_unspaced_deng_stays_a_name(names: list[str]) -> None:
    line = "，".join(names)
    assert _authors(line + "等人") == (names, True)
    assert _authors(line + "等") == ([*names[:-1], names[-1] + "等"], False)  # "王等" is a name


# Every format character (Unicode category Cf) of the Basic Multilingual Plane, from the Unicode database.
_FORMAT = [chr(c) for c in range(0x10000) if unicodedata.category(chr(c)) == "Cf"]


@settings(max_examples=150, deadline=None)
@given(_names, st.data())
def test_format_characters_are_no_part_of_a_name(names: list[str], data: st.DataObject) -> None:
    """Soft hyphens, zero-width and bidirectional marks copied from web pages: invisible, so the same person."""
    line = ", ".join(names)
    spots = data.draw(st.lists(st.integers(0, len(line)), min_size=1, max_size=4))
    for spot in sorted(spots, reverse=True):
        line = line[:spot] + data.draw(st.sampled_from(_FORMAT)) + line[spot:]
    assert _authors(line) == (names, False)


def test_every_format_character_is_removed() -> None:
    line = f"Ann{''.join(_FORMAT)} Lee, Bo Chen"
    assert _authors(line) == (["Ann Lee", "Bo Chen"], False)


@settings(max_examples=100, deadline=None)
@given(st.lists(_western, min_size=1, max_size=14), _word)
def test_a_full_stop_ending_the_line_ends_no_name(names: list[str], extra: str) -> None:
    """``…, Dan Wu.``: the record is read (the line is no sentence) and the last person has no full stop."""
    text = f"论文检索\n\nA · B\n\n{', '.join(names)}.\n\n{ABSTRACT}\n\n{extra} Lee\n\n{ABSTRACT} Two.\n"
    records, problems = parse_text(text, "f.txt")
    assert problems == []
    assert [list(r.authors) for r in records] == [names, [f"{extra} Lee"]]
    assert _authors(f"{', '.join(names)}, {extra} A.") == ([*names, f"{extra} A."], False)  # an initial keeps it
    assert _authors("，".join(["张伟", "李娜"]) + "。") == (["张伟", "李娜"], False)


_initials = st.lists(st.sampled_from(_UPPER), min_size=1, max_size=3).flatmap(
    lambda letters: st.sampled_from([". ".join(letters) + ".", ".".join(letters) + ".", " ".join(letters)])
)
_particle = st.sampled_from(["", "van ", "van der ", "de la ", "von "])


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.tuples(_particle, _word, st.one_of(_word, _initials)), min_size=2, max_size=6),
    st.sampled_from(["; ", "；", " and "]),
)
def test_family_given_names_between_semicolons_or_bibtex_and_agree_with_nameparser(
    people: list[tuple[str, str, str]], separator: str
) -> None:
    chunks = [f"{particle}{family}, {given_name}" for particle, family, given_name in people]
    parsed_chunks = [HumanName(chunk) for chunk in chunks]  # nameparser reads "Family, Given" itself: the reference
    assume(not any(parsed.suffix for parsed in parsed_chunks))  # a last initial "I" or "V" read as a Roman numeral
    names, _ = _authors(separator.join(chunks))
    assert len(names) == len(people)
    for name, parsed in zip(names, parsed_chunks, strict=True):
        assert name == " ".join(p for p in (parsed.first, parsed.middle, parsed.last) if p)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(_word, _initials), min_size=1, max_size=6))
def test_family_then_initials_between_commas_pairs_up(people: list[tuple[str, str]]) -> None:
    line = ", ".join(f"{family}, {initials}" for family, initials in people)
    assert _authors(line) == ([f"{initials} {family}" for family, initials in people], False)


@settings(max_examples=100, deadline=None)
@given(st.lists(_western, min_size=2, max_size=6), st.sampled_from(["; ", " and ", ", "]))
@example(["Chen Wangku", "AHMED KIM"], ", ")  # a name in capitals is no run of initials
def test_given_family_lists_stay_as_they_are(names: list[str], separator: str) -> None:
    """No inversion is read into ``Ann Lee, Bo Chen; Cy Diaz`` (the family part would be two names)."""
    line = ", ".join(names[:-1]) + separator + names[-1]
    assert _authors(line) == (names, False)
    assert _authors(line + " et al.") == (names, True)  # the cleaning path, where layouts are looked for


_notes = st.sampled_from(
    ["(MIT)", "[Stanford University]", "\uff08北京大学\uff09", "【清华大学】", "(张伟)", "<a@x.org>", "(a.lee@x.edu)"]
)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(_western, st.one_of(st.none(), _notes, st.just("e@mail.org"))), min_size=1, max_size=6))
def test_bracketed_notes_and_emails_after_a_name_are_no_part_of_it(people: list[tuple[str, str | None]]) -> None:
    line = ", ".join(f"{name} {note}" if note else name for name, note in people)
    assert _authors(line) == ([name for name, _ in people], False)


def test_bracketed_numbers_stay_affiliation_markers() -> None:
    read = read_author_line("Ann Lee (1), Bo Chen [2,3], Cy Diaz (Bob)", 1)
    assert [(n.name, n.written) for n in read.names] == [
        ("Ann Lee", "Ann Lee (1)"),
        ("Bo Chen", "Bo Chen [2,3]"),
        ("Cy Diaz", "Cy Diaz (Bob)"),
    ]


@settings(max_examples=100, deadline=None)
@given(st.lists(_han, min_size=3, max_size=8), st.sampled_from([" ", "\u3000", "  "]))
def test_cjk_names_separated_by_spaces_only_are_kept_whole(names: list[str], space: str) -> None:
    read = read_author_line(space.join(names), 1)
    assert read.unsplit and read.names == ()
    two = read_author_line(space.join(names[:2]), 1)  # "山田 太郎": family and given, one person
    assert [n.name for n in two.names] == [" ".join(names[:2])]
    spaced_han = " ".join(names[0])  # "王 小 明": the characters of one name spaced out
    assert [n.name for n in read_author_line(spaced_han, 1).names] == [spaced_han]


@settings(max_examples=60, deadline=None)
@given(_names, st.sampled_from(["作者\uff1a", "作者:", "Authors: ", "Author:", "AUTHORS :", "著者\uff1a"]))
def test_an_authors_label_is_no_name(names: list[str], label: str) -> None:
    assert _authors(label + "；".join(names)) == (names, False)


_area_words = st.lists(_word, min_size=1, max_size=3).map(" ".join)


@settings(max_examples=100, deadline=None)
@given(_area_words, _area_words, st.sampled_from(AREA_SEPARATORS))
def test_area_separators_that_sites_use_split_area_and_subarea(area: str, subarea: str, separator: str) -> None:
    records, problems = parse_text(f"论文检索\n\n{area} {separator} {subarea}\nAnn Lee\n{ABSTRACT}\n", "f.txt")
    assert problems == []
    assert [(r.area, r.subarea) for r in records] == [(area, subarea)]


def test_scan_areas_knows_every_separator(tmp_path: Path) -> None:
    path = tmp_path / "l.txt"
    names = [f"Area {chr(ord('A') + i)}" for i in range(len(AREA_SEPARATORS))]
    path.write_text("".join(f"{name} {sep} Sub\n" for name, sep in zip(names, AREA_SEPARATORS, strict=True)), "utf-8")
    assert scan_areas([path]) == set(names)


@settings(max_examples=150, deadline=None)
@given(_particle, _word, _initials)
def test_family_then_initials_agrees_with_nameparser(particle: str, family: str, initials: str) -> None:
    """``Smith J`` (Vancouver, PubMed): nameparser, told the order by a comma, reads the same parts."""
    parsed = HumanName(f"{particle}{family}, {initials}")
    assume(not parsed.suffix)  # nameparser reads a last initial "I" or "V" as a Roman numeral suffix
    assert name_parts(f"{particle}{family} {initials}") == (
        " ".join(p for p in (parsed.first, parsed.middle) if p),
        parsed.last,
    )


def _read(text: str) -> list[tuple]:
    records, problems = parse_text(text, "f.txt")
    assert problems == []
    return [(r.area, r.subarea, r.authors, r.truncated, r.abstract) for r in records]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.lists(_record, min_size=1, max_size=3), min_size=2, max_size=3),
    st.sampled_from(["", "\n", "\ufeff", "\r\n\ufeff"]),
    st.sampled_from(["论文检索", "論文檢索", "论文检索\uff1a", "论文检索:  ", "\u3000论文检索"]),
)
def test_lists_joined_read_as_the_lists_one_after_another(lists: list, joint: str, header: str) -> None:
    """``cat a.txt b.txt``: each header (a byte-order mark before it, no blank line after an abstract) starts
    records again; it is no area, author line or line of the abstract before it."""
    texts = [render(records).replace("论文检索", header, 1) for records in lists]
    assert _read(joint.join(texts)) == [record for text in texts for record in _read(text)]


_TYPOGRAPHIC_NAMES = st.tuples(_word, st.sampled_from(["'", "-"]), _word)


@settings(max_examples=60, deadline=None)
@given(st.lists(_TYPOGRAPHIC_NAMES, min_size=1, max_size=5), st.data())
def test_typographic_apostrophes_and_hyphens_spell_the_same_person(people: list, data: st.DataObject) -> None:
    """``O\u2019Brien`` is ``O'Brien``, ``Jean\u2010Michel`` is ``Jean-Michel`` (and so one person)."""
    variants = {"'": "'\u2019\u2018\u02bc\u2032", "-": "-\u2010\u2011\u2012\u2013\u2212\ufe63"}
    plain = [f"Ann {first}{joint}{second}" for first, joint, second in people]
    spelt = [f"Ann {first}{data.draw(st.sampled_from(variants[joint]))}{second}" for first, joint, second in people]
    line = ", ".join(spelt)
    assert _authors(line) == (plain, False)
    assert _authors(r"Gis\`ele Lee, Ren\'ee Chen") == (["Gis\u00e8le Lee", "Ren\u00e9e Chen"], False)  # LaTeX accents


@settings(max_examples=60, deadline=None)
@given(_word, st.sampled_from(AREA_SEPARATORS.replace("\u00b7", "")), st.sampled_from(["0.05", "baseline", "n."]))
def test_a_look_alike_in_a_wrapped_abstract_stays_in_the_abstract(word: str, separator: str, right: str) -> None:
    """Only two topic names (capitalised, no digits, no sentence end) make a look-alike an area separator."""
    abstract = f"{ABSTRACT}\n{word} {separator} {right}"
    assert _read(f"论文检索\n\nA · B\n\nAnn Lee\n\n{abstract}\n") == [("A", "B", ("Ann Lee",), False, abstract)]
