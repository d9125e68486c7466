"""The lowest versions pyproject.toml allows, as pip constraints (`name==floor`), for tests/floors.sh."""

import re
import sys
import tomllib
from pathlib import Path

FLOOR = re.compile(r"^\s*([A-Za-z0-9_.\-]+)(?:\[[^\]]*\])?\s*>=\s*([0-9][^,;\s]*)")


def constraints(pyproject: Path, extras: tuple[str, ...] = ("test",)) -> list[str]:
    """Every `name>=X` requirement of the project and the given extras as `name==X`."""
    project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
    requirements = list(project["dependencies"])
    for extra in extras:
        requirements += project["optional-dependencies"][extra]
    pins = []
    for requirement in requirements:
        match = FLOOR.match(requirement)
        if match is None:
            raise SystemExit(f"{pyproject}: {requirement!r} has no lower bound")
        pins.append(f"{match.group(1)}=={match.group(2)}")
    return pins


if __name__ == "__main__":
    print("\n".join(constraints(Path(sys.argv[1]))))
