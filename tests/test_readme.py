"""The README is the contract: CI runs its test command; the docs document every setting; links resolve."""

import re
from pathlib import Path

import pytest

from bibgraph.web.settings import SETTINGS

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
OPERATING = (ROOT / "docs" / "operating.md").read_text(encoding="utf-8")
README_MAX_BYTES = 25 * 1024  # the README is for users; internals live in docs/


def test_ci_runs_the_readme_test_command() -> None:
    commands = re.findall(r"```sh\n(.*?)\n```", README, flags=re.S)
    test_command = next(command for command in commands if "pytest" in command)
    assert test_command in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert "-m mypy &&" in test_command  # the types are checked before the tests run


def test_every_setting_is_documented_with_its_option_and_variable() -> None:
    for setting in SETTINGS:
        option = "FILES_OR_DIRS" if setting.name == "BIBGRAPH_INPUTS" else setting.option
        assert f"| `{setting.name}` | `{option}` | `{setting.env}` |" in OPERATING, setting.name


def test_the_readme_stays_short() -> None:
    assert len(README.encode("utf-8")) <= README_MAX_BYTES


def _pages() -> list[Path]:
    return [ROOT / "README.md", ROOT / "ontology" / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def _anchors(page: Path) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation but hyphens dropped, spaces as hyphens."""
    heads = re.findall(r"^#+ (.+)$", page.read_text(encoding="utf-8"), flags=re.M)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in heads}


@pytest.mark.parametrize("page", _pages(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(page: Path) -> None:
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        linked = (page.parent / path).resolve() if path else page
        assert linked.exists(), f"{page.name}: {target}"
        if anchor and linked.suffix == ".md":
            assert anchor in _anchors(linked), f"{page.name}: {target}"
