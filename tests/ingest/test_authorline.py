"""Author lines as real lists write them (issue 10): one test per class, the graph they give, the report."""

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pylatexenc.latex2text import LatexNodes2Text

from bibgraph.graph.dataset.build import build_graph
from bibgraph.graph.ingest.nameparts import name_parts
from bibgraph.graph.rdf.vocab import sparql_prologue
from bibgraph.web.commands.cli import main
from tests.conftest import BASE, parse_text

ABSTRACT = "We study a problem. Our method improves the state of the art on three benchmarks."


def read(author_line: str, area: str = "A · B"):
    records, problems = parse_text(f"论文检索\n\n{area}\n\n{author_line}\n\n{ABSTRACT}\n", "f.txt")
    assert problems == []
    (record,) = records
    return record


def report_of(tmp_path: Path, capsys, author_line: str) -> str:
    path = tmp_path / "l.txt"
    path.write_text(f"A · B\n\n{author_line}\n\n{ABSTRACT}\n", encoding="utf-8")
    assert main(["build", str(path), "--out", str(tmp_path / "g.ttl")]) == 0
    return capsys.readouterr().out


def test_bare_area_with_commas_is_an_area_by_position() -> None:
    text = f"Planning, Routing, and Scheduling\n\nAnn Lee, Bo Chen\n\n{ABSTRACT}\n\nCy Diaz\n\n{ABSTRACT} Two.\n"
    records, problems = parse_text(text, "f.txt")
    assert problems == []
    assert [(r.area, r.subarea, r.authors) for r in records] == [
        ("Planning, Routing, and Scheduling", None, ("Ann Lee", "Bo Chen")),
        (None, None, ("Cy Diaz",)),
    ]


def test_known_area_before_an_abstract_is_not_a_person() -> None:
    text = f"Optimization\n\n{ABSTRACT}\n\nOptimization\n\nAnn Lee\n\n{ABSTRACT} Two.\n"
    records, problems = parse_text(text, "f.txt", known_areas=frozenset({"Optimization"}))
    assert [str(p) for p in problems] == ["f.txt:3: abstract with no author line before it"]
    assert [(r.area, r.authors) for r in records] == [("Optimization", ("Ann Lee",))]
    unknown, _ = parse_text(text, "f.txt")
    assert unknown[0].authors == ("Optimization",)  # without the areas of other files, position decides


def test_missing_abstract_is_told_from_a_bare_area_by_the_next_two_lines() -> None:
    text = f"A · B\n\nLonely Author\n\nOptimization\n\nAnn Lee\n\n{ABSTRACT}\n"
    records, problems = parse_text(text, "f.txt", known_areas=frozenset({"Optimization"}))
    assert [str(p) for p in problems] == ["f.txt:3: author line with no abstract after it"]
    assert [(r.area, r.authors) for r in records] == [("Optimization", ("Ann Lee",))]


def test_equal_contribution_and_corresponding_marks(tmp_path: Path, capsys) -> None:
    record = read("Ann Lee*, Bo Chen*, Cy Diaz†, Dan Wu✉")
    assert record.authors == ("Ann Lee", "Bo Chen", "Cy Diaz", "Dan Wu")
    assert record.written == ("Ann Lee*", "Bo Chen*", "Cy Diaz†", "Dan Wu✉")
    assert record.marks == ("*", "*", "†", "✉")
    out = report_of(tmp_path, capsys, "Ann Lee*, Bo Chen*, Cy Diaz†")
    assert "repaired names: 3 (equal-contribution and other marks 3)" in out
    assert "    l.txt:3: 'Ann Lee*' -> 'Ann Lee'\n" in out


def test_latex_accents_decoded_and_written_form_kept(tmp_path: Path, capsys) -> None:
    line = r"Stéphan Clémen\c{c}on, Jakub \L{}acki, Finn \AA{}rup Nielsen, J\"{o}rg M\"uller"
    record = read(line)
    assert record.authors == ("Stéphan Clémençon", "Jakub Łacki", "Finn Årup Nielsen", "Jörg Müller")
    assert record.written[1] == r"Jakub \L{}acki"
    assert "LaTeX 3" in report_of(tmp_path, capsys, line.rsplit(",", 1)[0])


@pytest.mark.parametrize(
    "line",
    ["A. Smith, B. Jones and C. Wu", "A. Smith, B. Jones, and C. Wu", "A. Smith & B. Jones & C. Wu"],
)
def test_and_as_last_separator(line: str) -> None:
    assert read(line).authors == ("A. Smith", "B. Jones", "C. Wu")


def test_two_names_joined_by_and_only(tmp_path: Path, capsys) -> None:
    assert read("T. Secord and H. Asada").authors == ("T. Secord", "H. Asada")
    out = report_of(tmp_path, capsys, "T. Secord and H. Asada")
    assert "repaired names: 1 ('and' separators 1)" in out
    assert "l.txt:3: 'T. Secord and H. Asada' -> 'T. Secord, H. Asada'" in out


def test_and_inside_names_is_not_a_separator() -> None:
    assert read("Anand Kumar, Alexander Andersen").authors == ("Anand Kumar", "Alexander Andersen")


def test_a_leading_and_is_a_separator_only_after_a_comma() -> None:
    """The Oxford comma puts "and" after a comma; the first name of a line has none before it."""
    assert read("AND A, Bo Chen").authors == ("AND A", "Bo Chen")
    assert read("Bo Chen, AND A").authors == ("Bo Chen", "A")


def test_affiliation_markers(tmp_path: Path, capsys) -> None:
    line = "Ann Lee1, Bo Chen[2], 1Cy Diaz, Dan Wu¹², Eve Fox1,2, Fay Gu$^{3}$"
    record = read(line)
    assert record.authors == ("Ann Lee", "Bo Chen", "Cy Diaz", "Dan Wu", "Eve Fox", "Fay Gu")
    assert record.written == ("Ann Lee1", "Bo Chen[2]", "1Cy Diaz", "Dan Wu¹²", "Eve Fox1,2", "Fay Gu$^{3}$")
    assert "affiliation markers 6" in report_of(tmp_path, capsys, line)


def test_digits_inside_a_name_are_kept() -> None:
    assert read("Person1 Name, R2 D2x").authors == ("Person1 Name", "R2 D2x")


def test_no_separators_keeps_the_record_and_the_line(tmp_path: Path, capsys) -> None:
    line = "Ann Lee Bo Chen Cy Diaz Dan Wu Eve Fox"
    record = read(line)
    assert (record.authors, record.author_list, record.abstract) == ((), line, ABSTRACT)
    out = report_of(tmp_path, capsys, line)
    assert "1 records, 1 papers, 0 authors" in out
    assert f"author lines with no separators (kept whole, no persons): 1\n    l.txt:3: '{line}'" in out
    store, _ = build_graph([tmp_path / "l.txt"], base=BASE, progress=False)
    rows = store.select(
        sparql_prologue() + "SELECT ?list ?n ?u WHERE { ?p bg:authorList ?list ; "
        "bg:listedAuthorCount ?n ; bg:authorListUnsplit ?u }"
    )
    assert [(str(r["list"]), int(r["n"]), str(r["u"])) for r in rows] == [(line, 0, "True")]


def test_cjk_run_too_long_for_one_name_is_kept_whole() -> None:
    assert read("王伟李娜张敏刘洋").author_list == "王伟李娜张敏刘洋"
    assert read("欧阳娜娜").authors == ("欧阳娜娜",)


@pytest.mark.parametrize("line", ["Ann Lee, Bo Chen et al.", "Ann Lee, Bo Chen, et al", "Ann Lee, Bo Chen 等"])
def test_et_al_ending_is_a_truncated_list(line: str) -> None:
    record = read(line)
    assert (record.authors, record.truncated) == (("Ann Lee", "Bo Chen"), True)


@pytest.mark.parametrize(
    "name", ["María de los Ángeles García de la Torre", "The ATLAS Collaboration", "José María Álvarez de Toledo"]
)
def test_long_names_are_kept(name: str) -> None:
    assert read(f"Ann Lee, {name}").authors == ("Ann Lee", name)
    assert read(name).authors == (name,)


def test_semicolons_fullwidth_commas_and_enumeration_commas() -> None:
    assert read("Ann Lee; Bo Chen；王伟、李娜，Cy Diaz").authors == ("Ann Lee", "Bo Chen", "王伟", "李娜", "Cy Diaz")


def test_unusual_spaces_and_orcid_ids(tmp_path: Path, capsys) -> None:
    line = "Ann\u00a0Lee, Bo\u200b Chen, Cy Diaz (0000-0002-1825-0097), Dan Wu https://orcid.org/0000-0001-5109-364X"
    assert read(line).authors == ("Ann Lee", "Bo Chen", "Cy Diaz", "Dan Wu")
    out = report_of(tmp_path, capsys, line)
    assert "ORCID iDs 2" in out and "unusual spaces 1" in out


def test_repeated_name_is_kept_and_warned(tmp_path: Path, capsys) -> None:
    assert read("Ann Lee, Bo Chen, Ann Lee*").authors == ("Ann Lee", "Bo Chen", "Ann Lee")
    assert "names repeated in one author list: 1\n    l.txt:3: 'Ann Lee*' -> 'Ann Lee'" in report_of(
        tmp_path, capsys, "Ann Lee, Bo Chen, Ann Lee*"
    )


def test_plain_lines_are_not_repaired(tmp_path: Path, capsys) -> None:
    line = "Tse-Hsun (Peter) Chen, Francesco D'Angelo, YI REN, wenlong deng, 周欣, A. B. Smith Jr."
    record = read(line)
    assert record.authors == tuple(line.split(", ")) and record.written == () and record.marks == ()
    out = report_of(tmp_path, capsys, line)
    assert "repaired names: 0\n" in out and "author-list warnings: 0\n" in out


def test_cleaned_names_are_one_person_and_the_paper_keeps_its_written_line(tmp_path: Path) -> None:
    path = tmp_path / "l.txt"
    path.write_text(f"A · B\nAnn Lee*, Bo Chen\n{ABSTRACT}\n\nC · D\nAnn Lee, Cy Diaz\n{ABSTRACT} Two.\n", "utf-8")
    store, report = build_graph([path], base=BASE, progress=False)
    assert report.authors == 3
    rows = store.select(
        sparql_prologue() + "SELECT ?written ?name ?equal WHERE { ?p bg:authorship ?a . ?a bg:nameAsWritten ?written ;"
        " prov:agent/foaf:name ?name ; bg:authorPosition 1 OPTIONAL { ?a bg:equalContribution ?equal } }"
        " ORDER BY ?written"
    )
    assert [(str(r["written"]), str(r["name"]), r["equal"] and str(r["equal"])) for r in rows] == [
        ("Ann Lee", "Ann Lee", None),
        ("Ann Lee*", "Ann Lee", "True"),
    ]


def test_strict_names_fails_only_when_asked(tmp_path: Path) -> None:
    path = tmp_path / "l.txt"
    path.write_text(f"A · B\nAnn Lee*, Bo Chen\n{ABSTRACT}\n", encoding="utf-8")
    out = str(tmp_path / "g.ttl")
    assert main(["build", str(path), "--out", out, "--quiet"]) == 0
    assert main(["build", str(path), "--out", out, "--quiet", "--strict"]) == 0
    assert main(["build", str(path), "--out", out, "--quiet", "--strict=names"]) == 1
    assert main(["build", str(path), "--out", out, "--quiet", "--strict=all"]) == 1
    with pytest.raises(SystemExit) as usage:
        main(["build", str(path), "--out", out, "--strict=nonsense"])
    assert usage.value.code == 2


@pytest.mark.parametrize(
    ("name", "parts"),
    [
        ("Jean-Michel Loubes", ("Jean-Michel", "Loubes")),
        ("A. B. Smith", ("A. B.", "Smith")),
        ("MAI Xiaoyi", ("Xiaoyi", "MAI")),
        ("Xiaoyi MAI", ("Xiaoyi", "MAI")),
        ("王伟", ("伟", "王")),
        ("李小龙", ("小龙", "李")),
        ("欧阳娜娜", ("娜娜", "欧阳")),
        ("田中太郎", None),  # Japanese 2 + 2 or Chinese 1 + 3: not told
        ("María de los Ángeles García de la Torre", None),
        ("The ATLAS Collaboration", None),
        ("Madonna", None),
    ],
)
def test_given_and_family_names_only_when_they_can_be_told_apart(name: str, parts) -> None:
    assert name_parts(name) == parts


def test_person_gets_given_and_family_name(tmp_path: Path) -> None:
    path = tmp_path / "l.txt"
    path.write_text(f"A · B\nJean-Michel Loubes, 王伟, The ATLAS Collaboration\n{ABSTRACT}\n", encoding="utf-8")
    store, _ = build_graph([path], base=BASE, progress=False)
    rows = store.select(
        sparql_prologue() + "SELECT ?name ?given ?family WHERE { ?p foaf:name ?name "
        "OPTIONAL { ?p foaf:givenName ?given ; foaf:familyName ?family } } ORDER BY ?name"
    )
    assert [(str(r["name"]), r["given"] and str(r["given"]), r["family"] and str(r["family"])) for r in rows] == [
        ("Jean-Michel Loubes", "Jean-Michel", "Loubes"),
        ("The ATLAS Collaboration", None, None),
        ("王伟", "伟", "王"),
    ]


# The property: lists rendered from known records, in every habit of real lists, read back as those records.
POOL = [  # (clean name, LaTeX spelling or None)
    ("Ann Lee", None),
    ("Bo Chen", None),
    ("Stéphan Clémençon", r"St\'ephan Cl\'emen\c{c}on"),
    ("Jakub Łacki", r"Jakub \L{}acki"),
    ("Finn Årup Nielsen", r"Finn \AA{}rup Nielsen"),
    ("María de los Ángeles García de la Torre", None),
    ("The ATLAS Collaboration", None),
    ("Jean-Michel Loubes", None),
    ("YI REN", None),
    ("wenlong deng", None),
    ("王伟", None),
    ("欧阳娜娜", None),
    ("A. B. Smith Jr.", None),
    ("Tse-Hsun (Peter) Chen", None),
]
AREAS = [
    ("Planning, Routing, and Scheduling", None),
    ("Optimization", None),
    ("Deep Learning", "Sequential Models, Time series"),
    ("Social Aspects", "Fairness"),
]
SENTENCES = [
    "We study a problem and show that our method improves the state of the art.",
    "Experiments on three benchmarks confirm gains over strong baselines, at a lower cost.",
    "我们提出一种新的方法来解决这个问题，并在三个基准上验证了它的效果。",
]
_author = st.tuples(
    st.sampled_from(POOL),
    st.sampled_from(["", "*", "†", "#", "✉"]),
    st.sampled_from(["", "1", "[2]", "¹", "lead"]),
    st.booleans(),  # LaTeX spelling when there is one
)
_record = st.tuples(
    st.one_of(st.none(), st.sampled_from(AREAS)),
    st.lists(_author, min_size=1, max_size=8, unique_by=lambda a: a[0][0]),
    st.sampled_from(["", " 等", " et al.", ", et al."]),
    st.sampled_from([", ", "; ", "，", "、"]),
    st.sampled_from(["", " and ", ", and "]),
    st.lists(st.sampled_from(SENTENCES), min_size=1, max_size=3).map(" ".join),
)


def _written(author) -> str:
    (name, latex), mark, affiliation, use_latex = author
    text = latex if use_latex and latex else name
    if affiliation == "lead":
        return f"1{text}{mark}"
    return f"{text}{affiliation}{mark}"


def render(records) -> str:
    blocks = ["论文检索"]
    for area, authors, ending, separator, last_glue, abstract in records:
        if area:
            blocks.append(f"{area[0]} · {area[1]}" if area[1] else area[0])
        names = [_written(a) for a in authors]
        if last_glue and len(names) > 1 and not any("\u4e00" <= c <= "\u9fff" for c in names[-1]):
            line = separator.join(names[:-1]) + last_glue + names[-1]
        else:
            line = separator.join(names)
        blocks += [line + ending, abstract]
    return "\n\n".join(blocks) + "\n"


@settings(max_examples=100, deadline=None)
@given(st.lists(_record, min_size=1, max_size=5))
def test_rendered_records_read_back_after_cleaning(records) -> None:
    parsed, problems = parse_text(render(records), "gen.txt")
    assert problems == []
    assert [(r.area, r.subarea, r.authors, r.author_marks, r.truncated, r.abstract) for r in parsed] == [
        (
            area[0] if area else None,
            area[1] if area else None,
            tuple(a[0][0] for a in authors),
            tuple(a[1] for a in authors),
            bool(ending),
            abstract,
        )
        for area, authors, ending, _, _, abstract in records
    ]


def test_graph_with_every_class_conforms_to_the_shapes(tmp_path: Path) -> None:
    from bibgraph.graph.rdf.validate import validate

    lines = [
        "Ann Lee*, Bo Chen†, Cy Diaz✉",
        r"Jakub \L{}acki and Finn \AA{}rup Nielsen",
        "Ann Lee1, Bo Chen[2]",
        "Ann Lee Bo Chen Cy Diaz Dan Wu Eve Fox",
        "Ann Lee, Bo Chen et al.",
        "María de los Ángeles García de la Torre, The ATLAS Collaboration, 王伟",
    ]
    body = "\n\n".join(f"Planning, Routing, and Scheduling\n{line}\n{ABSTRACT} {i}." for i, line in enumerate(lines))
    (tmp_path / "l.txt").write_text(body + "\n", encoding="utf-8")
    store, report = build_graph([tmp_path / "l.txt"], base=BASE, progress=False)
    assert (report.records, report.problems) == (len(lines), [])
    conforms, text = validate(store.rdflib_graph())
    assert conforms, text
    from rdflib import DCTERMS

    graph = store.rdflib_graph()
    copy = type(graph)()
    for triple in graph:
        copy.add(triple)
    paper = next(copy.subjects(DCTERMS.creator, None))
    copy.remove((paper, DCTERMS.creator, None))
    assert validate(copy)[0] is False  # neither persons nor a line kept whole


@settings(max_examples=300, deadline=None)
@given(st.text(min_size=1, max_size=80), st.text(max_size=200))
def test_any_text_is_read_without_an_exception(line: str, rest: str) -> None:
    from bibgraph.graph.ingest.authorline import read_author_line

    if line.strip():
        read_author_line(line.strip(), 1)
    parse_text(f"{line}\n{rest}\n{ABSTRACT}\n", "fuzz.txt")


_latin_word = st.text(
    alphabet=st.sampled_from("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZéüßøł'-."), min_size=1
)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.one_of(_latin_word, st.sampled_from(["Dr", "Jr.", "van", "de", "y", "III", "VI", "IX", "Mr.", "PhD"])),
        min_size=2,
        max_size=2,
    )
)
def test_two_word_shortcut_agrees_with_nameparser(words: list[str]) -> None:
    from bibgraph.graph.ingest.nameparts import _two_words, western_parts

    name = " ".join(words)
    quick = _two_words(name.split())
    if quick is not None:
        assert quick == western_parts(name)


# A LaTeX letter or accent in every form a list writes it, read as pylatexenc reads its unambiguous spelling.
_LETTER_MACROS = ["L", "l", "o", "O", "ss", "aa", "AA", "ae", "AE", "oe", "OE", "i"]
_ACCENTS = ["'", "`", "^", '"', "~", "=", ".", "H", "c", "k", "r", "u", "v"]
_TAILS = ["ącki", "ódź", "ñez", "acki", "ström", "ewski"]


@settings(max_examples=60)
@given(
    st.sampled_from(["Jakub", "Anna", "Bo"]),
    st.sampled_from(_LETTER_MACROS),
    st.sampled_from(["{}", " ", "", "{braced}"]),
    st.sampled_from(_TAILS),
)
def test_a_latex_letter_command_keeps_the_surname_behind_it(given_name: str, macro: str, form: str, tail: str) -> None:
    """``Jakub \\Lącki`` is ``Jakub Łącki`` (it was read as ``Jakub``): TeX ends a control word at a letter
    outside ASCII, so every form (``\\L{}``, ``\\L `` and ``\\L`` before such a letter, ``{\\L}``) reads alike."""
    if form == "" and tail[0].isascii():
        form = "{}"  # ``\\Lacki`` is another control word in TeX too
    written = f"{given_name} {{\\{macro}}}{tail}" if form == "{braced}" else f"{given_name} \\{macro}{form}{tail}"
    expected = " ".join(LatexNodes2Text().latex_to_text(f"{given_name} \\{macro}{{}}{tail}").split())
    assert read(f"{written}, Ann Lee").authors == (expected, "Ann Lee")
    assert expected.endswith(tail[1:]) and len(expected) > len(given_name) + len(tail)


@settings(max_examples=60)
@given(st.sampled_from(_ACCENTS), st.sampled_from("aeoucnszAEOC"), st.sampled_from(["{x}", "{\\X x}", "\\X x", "\\Xx"]))
def test_a_latex_accent_in_any_form_reads_as_its_braced_form(accent: str, letter: str, form: str) -> None:
    if form == "\\Xx" and accent.isalpha():
        form = "\\X x"  # ``\\cc`` is another control word
    command = f"\\{accent}"
    spelled = f"{command}{{{letter}}}" if form == "{x}" else form.replace("\\X", command).replace("x", letter)
    expected = " ".join(LatexNodes2Text().latex_to_text(f"Ren\\'e Dup{command}{{{letter}}}nt").split())
    assert read(f"Ren\\'e Dup{spelled}nt, Ann Lee").authors == (expected, "Ann Lee")
