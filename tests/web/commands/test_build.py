"""``bibgraph build``: outputs, exit codes, reports and atomic writes."""

from pathlib import Path

import pytest
from rdflib import Graph

from bibgraph.graph.stores.store import OxigraphGraphStore
from bibgraph.web.commands.cli import main

ABSTRACT = "We study a problem. Our method improves the state of the art on three benchmarks."


def test_build_seeds_by_default(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "graph.ttl"
    assert main(["build", "--out", str(out), "--quiet"]) == 0
    summary = capsys.readouterr().out.strip().splitlines()[-1]
    assert "40 records, 40 papers, 203 authors, 29 concepts" in summary
    assert "0 problems" in summary
    assert len(Graph().parse(out, format="turtle")) > 2000


@pytest.mark.parametrize(("fmt", "rdflib_format"), [("nt", "nt"), ("jsonld", "json-ld"), ("xml", "xml")])
def test_build_other_formats(tmp_path: Path, fmt: str, rdflib_format: str) -> None:
    out = tmp_path / f"graph.{fmt}"
    assert main(["build", "--out", str(out), "--format", fmt, "--quiet"]) == 0
    turtle = tmp_path / "graph.ttl"
    main(["build", "--out", str(turtle), "--quiet"])
    assert len(Graph().parse(out, format=rdflib_format)) == len(Graph().parse(turtle, format="turtle"))


def test_problems_are_reported_and_strict_fails(tmp_path: Path, write_list, capsys) -> None:
    bad = write_list(f"A · B\nLonely Author\n\nC · D\nGood Author\n{ABSTRACT}\n", "bad.txt")
    out = tmp_path / "g.ttl"
    assert main(["build", str(bad), "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert "bad.txt:2: author line with no abstract after it" in captured.err
    assert "1 records, 1 papers" in captured.out
    assert "malformed records: 1" in captured.out
    assert main(["build", str(bad), "--out", str(out), "--strict", "--quiet"]) == 1
    assert out.exists()


def test_quality_report_lists_truncations_and_merges(tmp_path: Path, write_list, capsys) -> None:
    names = ", ".join(f"Person{i} Name" for i in range(10))
    path = write_list(f"A · B\n{names} 等\n{ABSTRACT}\n\nA · B\nPERSON1 NAME\n{ABSTRACT} Two.\n", "l.txt")
    assert main(["build", str(path), "--out", str(tmp_path / "g.ttl")]) == 0
    out = capsys.readouterr().out
    assert "truncated author lists (等): 1\n  l.txt:1" in out
    assert "merged name variants: 1\n  Person1 Name = PERSON1 NAME" in out


def test_usage_errors_exit_2(tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as missing_out:
        main(["build"])
    assert missing_out.value.code == 2
    with pytest.raises(SystemExit) as bad_format:
        main(["build", "--out", str(tmp_path / "x"), "--format", "docx"])
    assert bad_format.value.code == 2
    with pytest.raises(SystemExit) as missing_input:
        main(["build", str(tmp_path / "nope.txt"), "--out", str(tmp_path / "x")])
    assert missing_input.value.code == 2
    assert main(["build", "--out", str(tmp_path / "x"), "--base", "not an iri"]) == 2


def test_a_failed_write_leaves_the_old_dump_and_no_temporary(tmp_path: Path, monkeypatch) -> None:
    out = tmp_path / "graph.ttl"
    out.write_text("previous dump\n", encoding="utf-8")

    def explode(self, stream, syntax) -> None:
        stream.write(b"@prefix half: <written> .\n")
        raise OSError("disk full")

    monkeypatch.setattr(OxigraphGraphStore, "dump", explode)
    assert main(["build", "--out", str(out), "--quiet"]) == 1
    assert out.read_text(encoding="utf-8") == "previous dump\n"
    assert [p.name for p in tmp_path.iterdir()] == ["graph.ttl"]
