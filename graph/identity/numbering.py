"""Person IRIs that never change meaning: which key each person is published under, given what was published.

A dataset keeps a map (``persons.json`` in each version) from the person keys that a rebuild could give
another meaning to (a shared name's numbered persons ``…-0001``, a person of several written forms, a key
retired into another person) to the authorships they named (``paperid#position``), and per shared name the
highest number ever given. A rebuild into the dataset hands persons their published keys back by overlap
of authorships (most shared authorships first), so numbers do not follow the papers' ids any more once
published: a new person gets the next number never given, a number is never given again. A published key
no person takes back answers ``owl:sameAs`` the person holding most of its authorships (a merge: the site
answers 301); an unnumbered key whose name several persons now hold is the name's disambiguation page
(a split). With no map (a first build) persons of a shared name are numbered in their first paper's order.

A build writes the map whole; an add writes only what it changed (``persons.NNNNNN.json``, its version's number: the
authorships it recorded, the numbers it gave) beside the earlier files, hard links never written again: the map at
a million papers is tens of MB, and an add wrote it whole again (~3 s of a 34 s add). :func:`read_version` reads a
version's files in order as one map.
"""

import json
import re
from collections import defaultdict
from collections.abc import Container, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bibgraph.graph.ingest.names import person_key
from bibgraph.graph.sparql.queries import named_query
from bibgraph.graph.stores.atomic import write_atomically
from bibgraph.graph.stores.store import GraphStore

FILE_NAME = "persons.json"
FORMAT = 1
DELTA = re.compile(r"persons\.(?P<number>[0-9]{6})\.json")  # what one add changed of the map


@dataclass
class Numbering:
    """Published keys and the authorships each named; the highest number given per shared name."""

    keys: dict[str, list[str]] = field(default_factory=dict)  # decided by a build, with the evidence of all
    numbers: dict[str, int] = field(default_factory=dict)
    added: dict[str, list[str]] = field(default_factory=dict)  # written under the key by ``add`` (a likelier guess)

    def to_json(self) -> str:
        def tidy(found: dict[str, list[str]]) -> dict[str, list[str]]:
            return {key: sorted(set(mentions)) for key, mentions in sorted(found.items())}

        numbers = dict(sorted(self.numbers.items()))
        data = {"format": FORMAT, "keys": tidy(self.keys), "added": tidy(self.added), "numbers": numbers}
        return json.dumps(data, indent=0)

    def write(self, path: Path) -> None:
        data = self.to_json().encode("utf-8")
        write_atomically(path, lambda out: out.write(data))

    def mark(self) -> tuple[dict[str, int], dict[str, int]]:
        """What :meth:`since` compares with: each added key's number of authorships, the numbers given."""
        return {key: len(mentions) for key, mentions in self.added.items()}, dict(self.numbers)

    def since(self, mark: tuple[dict[str, int], dict[str, int]]) -> "Numbering":
        """What was recorded and numbered after :meth:`mark` (mentions are only appended, numbers only grow)."""
        lengths, numbers = mark
        added = {key: m[lengths.get(key, 0) :] for key, m in self.added.items() if len(m) > lengths.get(key, -1)}
        return Numbering(added=added, numbers={b: n for b, n in self.numbers.items() if numbers.get(b) != n})

    def record(self, key: str, mention: str) -> None:
        """An authorship written under ``key`` (``add``): kept if the key is one the map follows (a key the add
        numbered itself is in ``added`` from the start)."""
        if key in self.keys or key in self.added:
            self.added.setdefault(key, []).append(mention)


def read(path: Path) -> Numbering:
    """The map of a dataset version (an empty one when the version has none: made before there was one)."""
    if not path.exists():
        return Numbering()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("format") != FORMAT:
            raise ValueError(f"format {data.get('format')!r}, expected {FORMAT}")
        keys, added = ({str(k): [str(m) for m in v] for k, v in data[part].items()} for part in ("keys", "added"))
        return Numbering(keys, {str(k): int(v) for k, v in data["numbers"].items()}, added)
    except (ValueError, KeyError, TypeError, AttributeError) as error:
        raise ValueError(f"{path}: not a person numbering map: {error}") from error


def files(version: Path) -> list[str]:
    """The names of ``version``'s person map files in reading order: the build's, then each add's."""
    deltas = sorted(path.name for path in version.glob("persons.*.json") if DELTA.fullmatch(path.name))
    return [FILE_NAME, *deltas] if (version / FILE_NAME).exists() else []


def delta_name(number: int) -> str:
    return f"persons.{number:06d}.json"


def read_version(version: Path) -> Numbering:
    """The person map of a dataset version: the build's file, then what each add recorded and numbered."""
    found = read(version / FILE_NAME)
    for name in files(version)[1:]:
        delta = read(version / name)
        for key, mentions in delta.added.items():
            found.added.setdefault(key, []).extend(mentions)
        for base, number in delta.numbers.items():
            found.numbers[base] = max(found.numbers.get(base, 0), number)
    return found


def of_store(store: GraphStore) -> Numbering:
    """The map of a graph loaded as it is (a dataset built from dumps): the numbered persons and the persons of
    several forms, with the authorships the graph gives them; each name's highest number. (A rebuild's map also
    follows retired keys: a dump does not say which authorships those named.)"""
    found = Numbering()
    for row in store.iter_select(named_query("persons_map").text):
        paper, _, authorship = str(row["authorship"]).rpartition("#authorship-")
        key = str(row["person"]).rsplit("/", 1)[1]
        found.keys.setdefault(key, []).append(f"{paper.rsplit('/', 1)[1]}#{int(authorship) - 1}")
        if row.get("name"):  # a numbered person: ``base-NNNN``, its name's IRI the page or ``owl:sameAs`` it
            base, number = key.rsplit("-", 1)
            found.numbers[base] = max(found.numbers.get(base, 0), int(number))
    return found


def base_of(key: str, numbers: dict[str, int]) -> str:
    """The name key of ``key``: itself, or the shared name it is a number of (a key's digest may be all digits)."""
    head, _, tail = key.rpartition("-")
    return head if head in numbers and tail.isdigit() else key


@dataclass
class Assigned:
    """Each person's key (the persons' order), published keys now another person's, and the map to publish."""

    keys: list[str]
    bases: list[str]  # each person's name key: a ``bg:SharedName`` where it differs from the person's key
    same_as: list[tuple[str, int]]  # retired key, index of the person it now is
    numbering: Numbering


def assign(
    names: Sequence[str], several: Container[int], mention_ids: Sequence[list[str]], previous: Numbering
) -> Assigned:
    """Give each person (its name; ``several``: the persons of several written forms; ``mention_ids``: its
    authorships as ``paperid#position``) its key, keeping published ones."""
    owner = {m: (key, 0) for key, mentions in previous.keys.items() for m in mentions}
    owner.update({m: (key, 1) for key, mentions in previous.added.items() for m in mentions})
    overlap: dict[tuple[int, str], list[int]] = defaultdict(lambda: [0, 0])  # authorships a build, an add gave
    for index in range(len(mention_ids)) if owner else ():  # a first build publishes nothing to keep
        for mention in mention_ids[index]:
            if mention in owner:
                key, part = owner[mention]
                overlap[(index, key)][part] += 1
    keys: list[str | None] = [None] * len(names)
    taken: set[str] = set()
    for (index, old), _ in sorted(overlap.items(), key=lambda item: (-item[1][0], -item[1][1], item[0][1], item[0][0])):
        if keys[index] is None and old not in taken:
            keys[index] = old
            taken.add(old)
    numbers = dict(previous.numbers)
    bases = [base_of(k, numbers) if k else person_key(name) for k, name in zip(keys, names, strict=True)]
    holders: dict[str, int] = defaultdict(int)
    for base in bases:
        holders[base] += 1
    for index, kept in enumerate(keys):  # an unnumbered key of a name several persons now hold: a split
        if kept is not None and kept == bases[index] and (holders[kept] > 1 or kept in numbers):
            keys[index] = None
            taken.discard(kept)
    final: list[str] = []
    for index, found in enumerate(keys):
        base = bases[index]
        if found is None:
            if holders[base] == 1 and base not in numbers and base not in taken:
                found = base
            else:
                numbers[base] = numbers.get(base, 0) + 1
                found = f"{base}-{numbers[base]:04d}"
            taken.add(found)
        final.append(found)
    same_as = _retired(final, overlap, holders)
    followed = Numbering(numbers=numbers)
    for index, key in enumerate(final):
        if key != bases[index] or index in several or key in previous.keys:
            followed.keys[key] = list(mention_ids[index])
    for key, _ in same_as:
        followed.keys[key] = previous.keys.get(key, []) + previous.added.get(key, [])
    return Assigned(final, bases, same_as, followed)


def _retired(
    final: list[str], overlap: dict[tuple[int, str], list[int]], holders: dict[str, int]
) -> list[tuple[str, int]]:
    """Published keys no person holds now, each with the person holding most of its authorships (not a name
    several persons now hold: that is their disambiguation page)."""
    held = set(final) | {base for base, count in holders.items() if count > 1}
    best: dict[str, tuple[int, int, int]] = {}
    for (index, key), (core, added) in overlap.items():
        if key not in held and (key not in best or (-core, -added, index) < best[key]):
            best[key] = (-core, -added, index)
    return sorted((key, index) for key, (_, _, index) in best.items())
