"""The README is the contract: CI runs its test command, and it documents every setting."""

import re
from pathlib import Path

from bibgraph.web.settings import SETTINGS

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_ci_runs_the_readme_test_command() -> None:
    commands = re.findall(r"```sh\n(.*?)\n```", README, flags=re.S)
    test_command = next(command for command in commands if "pytest" in command)
    assert test_command in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert "-m mypy &&" in test_command  # the types are checked before the tests run


def test_every_setting_is_documented_with_its_option_and_variable() -> None:
    for setting in SETTINGS:
        option = "FILES_OR_DIRS" if setting.name == "BIBGRAPH_INPUTS" else setting.option
        assert f"| `{setting.name}` | `{option}` | `{setting.env}` |" in README, setting.name
