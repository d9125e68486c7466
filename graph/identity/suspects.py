"""Where a curator should look: suspected homonyms and variant pairs, with their evidence, largest first.

``bibgraph authors DIR`` reads the lists as a build does, decides persons, and lists (1) names whose
authorships fall into separate co-author communities (two or more groups of papers sharing co-authors
within, none between) or that the algorithm split, and (2) pairs of forms that may be one person
(:func:`~bibgraph.graph.identity.keys.compatible`), joined or not, with the co-authors they share.
"""

from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from bibgraph.graph.identity.cluster import communities
from bibgraph.graph.identity.curation import find, read
from bibgraph.graph.identity.decide import persons_of
from bibgraph.graph.identity.features import Collected
from bibgraph.graph.identity.join import Commonness
from bibgraph.graph.identity.keys import block_key, compatible
from bibgraph.graph.ingest.inputs import find_input_files
from bibgraph.graph.ingest.parse import parse_file, scan_areas
from bibgraph.graph.ingest.records import Problem, require_records
from bibgraph.seeds import seed_directory

SHOWN = 50


@dataclass(frozen=True)
class Homonym:
    name: str
    authorships: int
    communities: tuple[int, ...]  # sizes of the co-author communities of two or more authorships
    persons: int  # persons the algorithm made of the name
    expected: float  # persons the name's frequency suggests
    areas: tuple[str, ...]


@dataclass(frozen=True)
class VariantPair:
    forms: tuple[str, str]
    authorships: int
    shared_coauthors: tuple[str, ...]
    joined: bool


def collect(paths: Sequence[Path]) -> Collected:
    """The identity evidence of the lists, read as a build reads them (each paper once)."""
    collected = Collected()
    files = list(find_input_files(paths))
    known = scan_areas(path for path, _ in files)
    seen: set[tuple[tuple[str, ...], str]] = set()
    problems: list[Problem] = []
    for path, name in files:
        records, trouble = parse_file(path, name, known)
        problems.extend(trouble)
        for record in records:
            if not record.authors or (record.authors, record.abstract) in seen:
                continue
            seen.add((record.authors, record.abstract))
            where = (record.source, record.line)
            collected.add(record.authors, record.area or "", record.subarea or "", record.abstract, f"{where}", where)
    require_records(len(files), len(seen), problems)
    return collected


def suspects(paths: Sequence[Path]) -> tuple[list[Homonym], list[VariantPair]]:
    paths = list(paths) or [seed_directory()]  # as the build: no input is the seeds
    collected = collect(paths)
    persons = persons_of(collected, read(find(paths)))
    commonness = Commonness(collected.written)
    by_name: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for record, names in enumerate(collected.written):
        for position, name in enumerate(names):
            by_name[name].append((record, position))
    homonyms = []
    for name, mentions in by_name.items():
        if len(mentions) < 4:
            continue
        coauthors = [set(collected.names[r]) - {collected.names[r][p]} for r, p in mentions]
        groups = sorted((len(c) for c in communities(coauthors)), reverse=True)
        sizes = tuple(size for size in groups if size >= 2)
        made = len({persons.of[m] for m in mentions})
        if len(sizes) >= 2 or made > 1:
            areas = tuple(sorted({collected.concepts[r][0] for r, _ in mentions} - {""}))
            homonyms.append(Homonym(name, len(mentions), sizes, made, commonness.of(name).expected, areas))
    homonyms.sort(key=lambda h: (-h.authorships, h.name))
    return homonyms, _pairs(by_name, collected, persons.of)


def _pairs(
    by_name: dict[str, list[tuple[int, int]]], collected: Collected, of: Mapping[tuple[int, int], int]
) -> list[VariantPair]:
    blocks: dict[str, list[str]] = defaultdict(list)
    for name in by_name:
        blocks[block_key(name)].append(name)
    pairs = []
    for names in blocks.values():
        if len(names) > 200:  # a block of a very common family name and initial: its pairs say little
            continue
        for i, a in enumerate(sorted(names)):
            for b in sorted(names)[i + 1 :]:
                if (
                    collected.names[by_name[a][0][0]][by_name[a][0][1]]
                    == collected.names[by_name[b][0][0]][by_name[b][0][1]]
                ):
                    continue  # the same name up to case and spacing: one name, not a pair
                if not compatible(a, b):
                    continue
                near_a = {n for r, p in by_name[a] for k, n in enumerate(collected.written[r]) if k != p}
                near_b = {n for r, p in by_name[b] for k, n in enumerate(collected.written[r]) if k != p}
                joined = of[by_name[a][0]] == of[by_name[b][0]]
                total = len(by_name[a]) + len(by_name[b])
                pairs.append(VariantPair((a, b), total, tuple(sorted(near_a & near_b)), joined))
    pairs.sort(key=lambda p: (-p.authorships, p.forms))
    return pairs


def report_lines(homonyms: list[Homonym], pairs: list[VariantPair], shown: int = SHOWN) -> Iterator[str]:
    yield f"suspected homonyms: {len(homonyms)} (authorships, persons made, co-author communities, expected holders)"
    for h in homonyms[:shown]:
        sizes = "+".join(str(s) for s in h.communities) or "none"
        areas = f"; areas: {', '.join(h.areas[:4])}" + (" …" if len(h.areas) > 4 else "") if h.areas else ""
        made = f"{h.persons} person(s)"
        yield f"  {h.name}: {h.authorships} authorships, {made}, communities {sizes}, expected {h.expected:.2f}{areas}"
    yield f"variant pairs: {len(pairs)} (authorships, joined or not, shared co-authors)"
    for p in pairs[:shown]:
        evidence = ", ".join(p.shared_coauthors[:5]) or "no shared co-author"
        state = "joined" if p.joined else "apart"
        yield f"  {p.forms[0]} = {p.forms[1]}: {p.authorships} authorships, {state}; {evidence}"
