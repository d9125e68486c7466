"""Every setting is a `serve` option and a BIBGRAPH_… variable: option over variable over default."""

import pytest

from bibgraph.web.commands.cli import _parser
from bibgraph.web.settings import SETTINGS, resolve

OPTIONAL = [setting for setting in SETTINGS if setting.name != "BIBGRAPH_INPUTS"]


@pytest.mark.parametrize("setting", OPTIONAL, ids=lambda setting: setting.name)
def test_each_setting_is_an_option_of_serve(setting):
    if setting.type is bool:  # a switch
        assert getattr(_parser().parse_args(["serve", setting.option]), setting.name) is True
    else:
        value = setting.choices[-1] if setting.choices else {int: "7", float: "2.5"}.get(setting.type, "x:/y")
        args = _parser().parse_args(["serve", setting.option, value])
        assert getattr(args, setting.name) == setting.parse(value)
    untouched = _parser().parse_args(["serve"])
    assert getattr(untouched, setting.name) is None  # not given: the variable or the default decides


def test_resolve_reads_the_environment(monkeypatch):
    monkeypatch.setenv("BIBGRAPH_MAX_VIEW_NODES", "7")
    monkeypatch.setenv("BIBGRAPH_PORT", "5123")
    assert resolve()["MAX_VIEW_NODES"] == 7
    assert resolve({"MAX_VIEW_NODES": 9})["MAX_VIEW_NODES"] == 9
    assert resolve()["BIBGRAPH_BASE"] == "http://127.0.0.1:5123/"  # the base follows host and port
    monkeypatch.setenv("BIBGRAPH_BASE", "https://example.org/bib/")
    assert resolve()["BIBGRAPH_BASE"] == "https://example.org/bib/"


def test_inputs_variable_takes_a_json_list_or_one_path(monkeypatch):
    monkeypatch.setenv("BIBGRAPH_INPUTS", '["a.txt", "dir"]')
    assert resolve()["BIBGRAPH_INPUTS"] == ["a.txt", "dir"]
    monkeypatch.setenv("BIBGRAPH_INPUTS", "lists/")
    assert resolve()["BIBGRAPH_INPUTS"] == ["lists/"]


def test_a_bad_variable_is_named(monkeypatch):
    monkeypatch.setenv("BIBGRAPH_QUERY_THREADS", "many")
    with pytest.raises(ValueError, match="BIBGRAPH_QUERY_THREADS"):
        resolve()
    monkeypatch.setenv("BIBGRAPH_QUERY_THREADS", "2")
    monkeypatch.setenv("BIBGRAPH_LOG_FORMAT", "xml")
    with pytest.raises(ValueError, match="BIBGRAPH_LOG_FORMAT"):
        resolve()


def test_a_switch_is_read_from_its_variable(monkeypatch):
    monkeypatch.setenv("BIBGRAPH_SPARQL_UNSANDBOXED", "true")
    assert resolve()["SPARQL_UNSANDBOXED"] is True
    monkeypatch.setenv("BIBGRAPH_SPARQL_UNSANDBOXED", "0")
    assert resolve()["SPARQL_UNSANDBOXED"] is False
    assert _parser().parse_args(["serve", "--unsandboxed"]).SPARQL_UNSANDBOXED is True
