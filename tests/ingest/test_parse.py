"""The paper-list reader on every input case the format throws at it."""

from pathlib import Path

import pytest

from bibgraph.graph.ingest.inputs import find_input_files
from bibgraph.graph.ingest.parse import parse_file
from tests.conftest import parse_text

ABSTRACT = "We study a problem. Our method improves the state of the art on three benchmarks."


def test_record_with_area_and_subarea() -> None:
    records, problems = parse_text(f"论文检索\n\nSocial Aspects · Fairness\n\nA B, C D\n\n{ABSTRACT}\n", "f.txt")
    assert problems == []
    (record,) = records
    assert (record.area, record.subarea, record.authors) == ("Social Aspects", "Fairness", ("A B", "C D"))
    assert (record.source, record.line, record.truncated, record.abstract) == ("f.txt", 3, False, ABSTRACT)


def test_record_without_area_line() -> None:
    text = f"论文检索\n\nX · Y\n\nA B\n\n{ABSTRACT}\n\nRenxiang Guan, Xiang Yang\n\n{ABSTRACT} Again.\n"
    records, problems = parse_text(text, "f.txt")
    assert problems == []
    assert [(r.area, r.subarea, r.line) for r in records] == [("X", "Y", 3), (None, None, 9)]


def test_area_without_subarea_and_single_author() -> None:
    text = f"论文检索\nOptimization\nAli Zindari, Sebastian Stich\n{ABSTRACT}\n\nOğuz Yüksel\n{ABSTRACT} More.\n"
    records, problems = parse_text(text, "f.txt")
    assert problems == []
    assert [(r.area, r.subarea, r.authors) for r in records] == [
        ("Optimization", None, ("Ali Zindari", "Sebastian Stich")),
        (None, None, ("Oğuz Yüksel",)),
    ]


@pytest.mark.parametrize("subarea", ["Sequential Models, Time series", "Transfer, Multitask and Meta-learning"])
def test_subareas_with_commas(subarea: str) -> None:
    records, _ = parse_text(f"Deep Learning · {subarea}\nA B\n{ABSTRACT}\n", "f.txt")
    assert records[0].subarea == subarea


def test_truncated_author_list() -> None:
    names = [f"Name{i} Surname" for i in range(9)] + ["周欣"]
    records, _ = parse_text(f"A · B\n{', '.join(names)} 等\n{ABSTRACT}\n", "f.txt")
    assert records[0].truncated is True
    assert records[0].authors == tuple(names)


@pytest.mark.parametrize(
    "name", ["YI REN", "zhang keli", "Devriş İşler", "周欣", "Tse-Hsun (Peter) Chen", "Francesco D'Angelo"]
)
def test_names_in_any_case_or_script(name: str) -> None:
    records, problems = parse_text(f"A · B\nFirst Author, {name}\n{ABSTRACT}\n", "f.txt")
    assert problems == []
    assert records[0].authors == ("First Author", name)


def test_abstract_kept_verbatim() -> None:
    abstract = r"We train $\pi_\theta$ with *soft* and **hard** targets; see https://example.org/x?a=1. Done."
    records, _ = parse_text(f"A · B\nA B\n{abstract}\n", "f.txt")
    assert records[0].abstract == abstract


def test_bom_crlf_trailing_spaces_blank_runs_and_missing_header(write_list) -> None:
    text = f"\ufeffA · B  \r\n\r\n\r\n\r\nA B, C D   \r\n\r\n{ABSTRACT}   \r\n\r\n\r\n"
    records, problems = parse_file(write_list(text.encode("utf-8")))
    assert problems == []
    assert [(r.area, r.authors, r.abstract, r.line) for r in records] == [("A", ("A B", "C D"), ABSTRACT, 1)]


def test_wrapped_abstract_lines_join_into_one_paragraph() -> None:
    records, problems = parse_text("A · B\nA B\nFirst line of the abstract is here,\nand it goes on.\n", "f")
    assert problems == []
    assert records[0].abstract == "First line of the abstract is here,\nand it goes on."


def test_author_line_without_abstract_is_reported_and_others_kept() -> None:
    text = f"论文检索\n\nA · B\n\nLonely Author, Other Author\n\nC · D\n\nGood Author\n\n{ABSTRACT}\n"
    records, problems = parse_text(text, "lists/x.txt")
    assert [str(p) for p in problems] == ["lists/x.txt:5: author line with no abstract after it"]
    assert [r.authors for r in records] == [("Good Author",)]


def test_abstract_without_authors_is_reported_and_others_kept() -> None:
    text = f"A · B\n\n{ABSTRACT}\n\nC · D\n\nGood Author\n\n{ABSTRACT}\n"
    records, problems = parse_text(text, "x.txt")
    assert [str(p) for p in problems] == ["x.txt:3: abstract with no author line before it"]
    assert [r.area for r in records] == ["C"]


def test_trailing_area_line_is_reported() -> None:
    _, problems = parse_text(f"A · B\nA B\n{ABSTRACT}\n\nC · D\n", "x.txt")
    assert [str(p) for p in problems] == ["x.txt:5: area line with no authors and abstract after it"]


def test_not_utf8_line_costs_only_its_record(write_list) -> None:
    # Changed deliberately (issue 9 §4): one bad byte used to drop every record of the file.
    head = f"论文检索\nA · B\nAnn Lee\n{ABSTRACT}\n\nC · D\n".encode()
    bad = "Ünïcode Name\n".encode("latin-1") + f"{ABSTRACT} Two.\n\nE · F\nBo Chen\n{ABSTRACT} Three.\n".encode()
    records, problems = parse_file(write_list(head + bad, "bad.txt"))
    assert [str(p) for p in problems] == ["bad.txt:7: not UTF-8 (byte 0xdc at column 1): skipped with its record"]
    assert [(r.area, r.authors, r.line) for r in records] == [("A", ("Ann Lee",), 2), ("E", ("Bo Chen",), 10)]


@pytest.mark.parametrize("content", ["", "论文检索\n\n\n", "\ufeff  \n"])
def test_empty_file_is_reported(write_list, content: str) -> None:
    records, problems = parse_file(write_list(content, "empty.txt"))
    assert records == []
    assert [str(p) for p in problems] == ["empty.txt:1: empty file: no records"]


def test_input_files_are_ordered_whatever_the_argument_order(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    for name in ("b.txt", "a.txt", "d/c.txt"):
        (tmp_path / name).write_text("x", encoding="utf-8")
    forward = list(find_input_files([tmp_path / "b.txt", tmp_path / "a.txt", tmp_path / "d"]))
    backward = list(find_input_files([tmp_path / "d", tmp_path / "a.txt", tmp_path / "b.txt"]))
    assert forward == backward
    assert [name for _, name in forward] == ["a.txt", "b.txt", "c.txt"]


def test_truncation_mark_needs_a_space_before_it() -> None:
    records, _ = parse_text(f"A · B\nAnn Lee, 王等\n{ABSTRACT}\n\nC · D\nBo Li 等\n{ABSTRACT} Two.\n", "f.txt")
    assert [(r.authors, r.truncated) for r in records] == [(("Ann Lee", "王等"), False), (("Bo Li",), True)]


def test_overlong_line_costs_only_its_record(write_list) -> None:
    from bibgraph.graph.ingest.parse import MAX_LINE_BYTES

    huge = "x" * (3 * MAX_LINE_BYTES)
    text = f"A · B\nAnn Lee\n{huge}\n\nC · D\nBo Chen\n{ABSTRACT}\n"
    records, problems = parse_file(write_list(text, "long.txt"))
    assert [str(p) for p in problems] == [
        f"long.txt:3: line longer than {MAX_LINE_BYTES:,} bytes: skipped with its record"
    ]
    assert [(r.area, r.authors, r.line) for r in records] == [("C", ("Bo Chen",), 5)]


def test_dangling_symlink_and_fifo_are_reported_and_skipped(tmp_path: Path) -> None:
    import os

    from bibgraph.graph.ingest.records import Problem

    (tmp_path / "good.txt").write_text(f"A · B\nAnn Lee\n{ABSTRACT}\n", encoding="utf-8")
    (tmp_path / "gone.txt").symlink_to(tmp_path / "missing.txt")
    os.mkfifo(tmp_path / "pipe.txt")
    problems: list[Problem] = []
    found = list(find_input_files([tmp_path], problems))
    assert [name for _, name in found] == ["good.txt"]
    assert [str(p) for p in problems] == [
        "gone.txt:1: not a regular file (dangling symlink): skipped",
        "pipe.txt:1: not a regular file (FIFO): skipped",
    ]


def test_build_with_bad_inputs_reports_them_and_keeps_the_rest(tmp_path: Path, capsys) -> None:
    import os

    from bibgraph.web.commands.cli import main

    lists = tmp_path / "lists"
    lists.mkdir()
    (lists / "good.txt").write_text(f"A · B\nAnn Lee\n{ABSTRACT}\n", encoding="utf-8")
    bad = f"A · B\nBo Chen\n{ABSTRACT}\n\nC · D\nCy! Diaz\n{ABSTRACT}\n".encode().replace(b"!", b"\xff")
    (lists / "bad.txt").write_bytes(bad)
    (lists / "gone.txt").symlink_to(lists / "missing.txt")
    os.mkfifo(lists / "pipe.txt")
    assert main(["build", str(lists), "--out", str(tmp_path / "g.ttl"), "--quiet"]) == 0
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err + captured.out
    assert captured.err.splitlines() == [
        "bad.txt:6: not UTF-8 (byte 0xff at column 3): skipped with its record",
        "gone.txt:1: not a regular file (dangling symlink): skipped",
        "pipe.txt:1: not a regular file (FIFO): skipped",
    ]
    assert "2 records, 2 papers" in captured.out


def test_serve_refuses_a_broken_dump_in_one_line(tmp_path: Path, capsys) -> None:
    from bibgraph.web.commands.cli import main

    dump = tmp_path / "bad.ttl"
    dump.write_text('@prefix x: <http://x/> .\nx:a x:b "unterminated .\n', encoding="utf-8")
    assert main(["serve", str(dump), "--port", "1"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"bibgraph: error: {dump}: cannot load this dump: ") and "Traceback" not in err


def test_short_abstract_of_a_record_without_area() -> None:
    text = "论文检索\n\nAnn Lee, Bo Chen\n\nWe propose X.\n\nC · D\n\nCy Diaz\n\nShort too.\n"
    records, problems = parse_text(text, "f.txt")
    assert problems == []
    assert [(r.area, r.authors, r.abstract) for r in records] == [
        (None, ("Ann Lee", "Bo Chen"), "We propose X."),
        ("C", ("Cy Diaz",), "Short too."),
    ]
    _, problems = parse_text(
        "Optimization\n\nAnn Lee\n\nC · D\n\nCy Diaz\n\nShort.\n", "f.txt", frozenset({"Optimization"})
    )
    assert [str(p) for p in problems] == ["f.txt:3: author line with no abstract after it"]
