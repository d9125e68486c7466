"""ACL Anthology XML → paper lists with gold person identifiers kept apart (for ``bench.persons.identity``).

The Anthology disambiguates people: ``<author id=...>`` on an authorship, and
``data/yaml/name_variants.yaml`` listing each person's id and written variants. A name no entry
lists is one person, keyed by its slug (the Anthology's own rule). A name several entries share,
written without an id, or an id the Anthology marks "may refer to several people" (its catch-all for the
name's unassigned papers), has no known gold person: it stays in the lists (its co-authors and text are
evidence) but is not scored. The lists carry no identifier; the gold goes to a separate file, one
line per record in list order, ``?`` for an unknown person.

    python -m bench.persons.acl_lists GIT_DIR OUT_DIR 2020.acl 2021.emnlp P19 ...
    python -m bench.persons.acl_lists GIT_DIR OUT_DIR --with-ids-before 2023   # every collection naming a person by id

reads ``data/xml/*.xml`` at ``HEAD`` of an Anthology git directory (``fetch github:acl-org/acl-anthology``
or a fork small enough to fetch) and writes ``OUT_DIR/<name>.txt.gz`` and ``<name>.gold.gz``, ``<name>`` the
collection's id with its year in front when the id does not start with it (``P19`` -> ``2019.P19``): the bench
tells its held-out part by that name. ``--with-ids-before YEAR`` converts every collection before ``YEAR`` whose
XML names a person by ``<author id=...>`` (only those can hold two gold persons of one name: the homonyms), and
skips a collection whose file the snapshot lacks (a fetched snapshot leaves out its largest files).
"""

import gzip
import re
import subprocess
import sys
import unicodedata
import xml.etree.ElementTree as ET
from pathlib import Path

import yaml

_NOT_SLUG = re.compile(r"[^a-z0-9]+")


# Latin letters NFKD does not decompose, read as the Anthology's slugify (python-slugify, unidecode) reads them;
# dropping them made ``Aßenmacher`` ``aenmacher`` beside ``assenmacher``: one person as two gold ids, a false homonym
_LETTERS = str.maketrans(
    {
        "ł": "l",
        "ø": "o",
        "đ": "d",
        "ð": "d",
        "þ": "th",
        "æ": "ae",
        "œ": "oe",
        "\u0131": "i",
        "ħ": "h",
    }
)


def slug(text: str) -> str:
    """The Anthology's id of a name without an entry: casefolded (``ß`` is ``ss``), accents and marks dropped."""
    folded = unicodedata.normalize("NFKD", text.casefold().translate(_LETTERS))
    return _NOT_SLUG.sub("-", folded.encode("ascii", "ignore").decode("ascii")).strip("-")


def _text(node: ET.Element | None) -> str:
    return " ".join("".join(node.itertext()).split()) if node is not None else ""


def _written(author: ET.Element) -> str:
    return " ".join(part for part in (_text(author.find("first")), _text(author.find("last"))) if part)


CATCH_ALL = "may refer to"  # the comment of an id that gathers the papers of a name not yet assigned to anyone


def name_index(variants_yaml: str) -> tuple[dict[str, list[str]], set[str]]:
    """Written name (slug) → the ids of the persons it may name; and the catch-all ids (no one person)."""
    index: dict[str, list[str]] = {}
    catch_all: set[str] = set()
    for entry in yaml.safe_load(variants_yaml):
        canonical = entry["canonical"]
        full = f"{canonical.get('first') or ''} {canonical.get('last') or ''}"
        person = entry.get("id") or slug(full)
        if CATCH_ALL in str(entry.get("comment", "")).lower():
            catch_all.add(person)
        for name in [canonical, *entry.get("variants", [])]:
            key = slug(f"{name.get('first') or ''} {name.get('last') or ''}")
            ids = index.setdefault(key, [])
            if person not in ids:
                ids.append(person)
    return index, catch_all


def gold_id(author: ET.Element, index: dict[str, list[str]], catch_all: set[str]) -> str:
    """The person's id; ``?`` for an ambiguous name written without one, or an id that gathers several people."""
    if author.get("id"):
        person = str(author.get("id"))
    else:
        key = slug(_written(author))
        ids = index.get(key, [key])
        person = ids[0] if len(ids) == 1 else "?"
    return "?" if person in catch_all else person


def convert(xml_text: str, collection: str, index: dict[str, list[str]], catch_all: set[str]) -> tuple[str, str]:
    """One collection's list text and its gold lines."""
    root = ET.fromstring(xml_text)
    venue, _, _ = collection.partition(".")
    year = collection.split(".")[0] if collection[:4].isdigit() else ""
    area = collection.partition(".")[2].upper() or venue
    out, gold = ["论文检索", ""], []
    for volume in root.iter("volume"):
        track = volume.get("id") or ""
        for paper in volume.iter("paper"):
            authors = paper.findall("author")
            names = [_written(a) for a in authors]
            if not authors or any(not n or "," in n for n in names):
                continue
            abstract = _text(paper.find("abstract")) or _text(paper.find("title"))
            if len(abstract) < 20:
                continue
            out += [f"{area} · {year} {track}".strip(), "", ", ".join(names), "", abstract, ""]
            gold.append("\t".join(gold_id(a, index, catch_all) for a in authors))
    return "\n".join(out), "\n".join(gold) + "\n"


_OLD_ID = re.compile(r"^[A-Z](\d\d)$")  # P19, W15, J80: the Anthology's ids before 2020


def year_of(collection: str) -> int:
    """The collection's year: written first in ids since 2020, two digits after a letter before."""
    if collection[:4].isdigit():
        return int(collection[:4])
    found = _OLD_ID.match(collection)
    if not found:
        raise ValueError(f"not an Anthology collection id: {collection}")
    two = int(found.group(1))
    return 1900 + two if two >= 50 else 2000 + two


def list_name(collection: str) -> str:
    """The converted list's name: the year first, so names sort by year (``P19`` -> ``2019.P19``)."""
    return collection if collection[:4].isdigit() else f"{year_of(collection)}.{collection}"


def with_ids(git_dir: Path, before: int) -> list[str]:
    """Collections before ``before`` whose XML at HEAD names a person by id."""
    found = subprocess.run(
        ["git", "-C", str(git_dir), "grep", "-l", "<author id=", "HEAD", "--", "data/xml/*.xml"],
        capture_output=True,
        text=True,
    ).stdout.split()
    collections = sorted(Path(path.partition(":")[2]).stem for path in found)
    return [c for c in collections if (c[:4].isdigit() or _OLD_ID.match(c)) and year_of(c) < before]


def _present(git_dir: Path, path: str) -> bool:
    found = subprocess.run(["git", "-C", str(git_dir), "cat-file", "-e", f"HEAD:{path}"], capture_output=True)
    return found.returncode == 0


def _git_show(git_dir: Path, path: str) -> str:
    return subprocess.run(
        ["git", "-C", str(git_dir), "show", f"HEAD:{path}"], check=True, capture_output=True, text=True
    ).stdout


def main(argv: list[str]) -> None:
    git_dir, out_dir, collections = Path(argv[0]), Path(argv[1]), argv[2:]
    if collections[:1] == ["--with-ids-before"]:
        collections = with_ids(git_dir, int(collections[1])) + collections[2:]
    out_dir.mkdir(parents=True, exist_ok=True)
    index, catch_all = name_index(_git_show(git_dir, "data/yaml/name_variants.yaml"))
    for collection in collections:
        if not _present(git_dir, f"data/xml/{collection}.xml"):
            print(collection, "not in this snapshot: skipped")
            continue
        text, gold = convert(_git_show(git_dir, f"data/xml/{collection}.xml"), collection, index, catch_all)
        name = list_name(collection)
        (out_dir / f"{name}.txt.gz").write_bytes(gzip.compress(text.encode(), mtime=0))
        (out_dir / f"{name}.gold.gz").write_bytes(gzip.compress(gold.encode(), mtime=0))
        print(name, gold.count("\n"), "records", sum(len(g.split("\t")) for g in gold.splitlines()), "authorships")


if __name__ == "__main__":
    main(sys.argv[1:])
