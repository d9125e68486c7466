"""Person identity against gold: B-cubed precision, recall and F1, overall and on homonyms.

Real lists with person identifiers (ACL Anthology, converted by ``bench.persons.acl_lists``; the ids stay in
``*.gold.gz``, never in the lists). Two parts, never mixed: ``dev`` (what the method was tuned on) and
``held-out`` (looked at only through this report). Each part is identified as one dataset, by plain
name equality (one person per normalised name, the old rule) and by ``graph.identity``, in the same run.
The homonym subset is every scored authorship whose name (normalised) two or more gold persons hold.
The identity step's share of a build is timed on the same lists.

    python -m bench.persons.identity [DATA_DIR] [--no-build] [--synthetic]
    python -m bench.persons.identity --generated 100000   # the identity step's share of a generated corpus's build

``--synthetic`` adds the dev part with homonyms made from two dev persons (:func:`synthetic`), three draws.
``DATA_DIR`` (default: the sample shipped in ``bench/persons/data/identity``) holds ``*.txt.gz`` and ``*.gold.gz``
pairs as ``bench.persons.acl_lists`` writes them; lists of 2023 and later are the held-out part.
"""

import gzip
import io
import random
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

from bibgraph.graph.dataset.build import build_graph
from bibgraph.graph.identity import cluster as rules
from bibgraph.graph.identity.decide import identify
from bibgraph.graph.identity.join import Commonness
from bibgraph.graph.ingest.names import normalise
from bibgraph.graph.ingest.parse import parse_stream
from bibgraph.graph.ingest.records import Record

DATA = Path(__file__).parent / "data" / "identity"
HELD_OUT_FROM = "2023"  # collections of this year and later are held out; the method was tuned on the earlier ones
Mention = tuple[int, int]  # (record index, author position)


def load(data: Path, collections: Sequence[str]) -> tuple[list[Record], dict[Mention, str], int]:
    """The records of ``collections`` and the gold person of each scored authorship (records whose
    author count the parser reads differently from the Anthology are kept, unscored: the count is returned)."""
    records: list[Record] = []
    gold: dict[Mention, str] = {}
    skipped = 0
    for collection in collections:
        text = io.BytesIO(gzip.decompress((data / f"{collection}.txt.gz").read_bytes()))
        parsed, _ = parse_stream(text, f"{collection}.txt")
        lines = gzip.decompress((data / f"{collection}.gold.gz").read_bytes()).decode().splitlines()
        if len(parsed) != len(lines):
            raise SystemExit(f"{collection}: {len(parsed)} records parsed, {len(lines)} gold lines")
        for record, line in zip(parsed, lines, strict=True):
            ids = line.split("\t")
            index = len(records)
            records.append(record)
            if len(ids) != len(record.authors):
                skipped += 1
                continue
            for position, person in enumerate(ids):
                if person != "?":
                    gold[(index, position)] = person
    return records, gold, skipped


def bcubed(predicted: dict[Mention, str], gold: dict[Mention, str], subset: set[Mention]) -> tuple[float, float, float]:
    """B-cubed over the mentions of ``subset``, clusters taken over every scored mention."""
    by_pred: dict[str, set[Mention]] = defaultdict(set)
    by_gold: dict[str, set[Mention]] = defaultdict(set)
    for mention, person in gold.items():
        by_gold[person].add(mention)
        by_pred[predicted[mention]].add(mention)
    p = r = 0.0
    for mention in subset:
        ours, theirs = by_pred[predicted[mention]], by_gold[gold[mention]]
        both = len(ours & theirs)
        p += both / len(ours)
        r += both / len(theirs)
    p, r = p / len(subset), r / len(subset)
    return p, r, 2 * p * r / (p + r)


def homonyms(records: list[Record], gold: dict[Mention, str]) -> set[Mention]:
    holders: dict[str, set[str]] = defaultdict(set)
    for (index, position), person in gold.items():
        holders[normalise(records[index].authors[position])].add(person)
    return {m for m in gold if len(holders[normalise(records[m[0]].authors[m[1]])]) > 1}


def name_equality(records: list[Record]) -> dict[Mention, str]:
    return {(i, p): normalise(name) for i, record in enumerate(records) for p, name in enumerate(record.authors)}


def by_identity(records: list[Record]) -> dict[Mention, str]:
    persons = identify(records)
    return {(i, p): persons.person(i, p) for i, record in enumerate(records) for p in range(len(record.authors))}


def synthetic(records: list[Record], gold: dict[Mention, str], seed: int, pairs: int = 25) -> list[Record]:
    """Homonyms made from the dev part (legitimate dev evidence: the held-out part guides nothing): the
    authorships of a gold person ``B`` written with the name of a gold person ``A``, ``A``'s name common enough
    for the rules to look at it (expected holders >= ``APART_COMMON``), ``B``'s rare (< 0.05), each name held by
    that person alone, each person of 2-30 authorships; ``pairs`` pairs drawn with ``seed``. The gold is kept, so
    :func:`homonyms` finds the made names."""
    commonness = Commonness([r.authors for r in records])
    by_gold: dict[str, list[Mention]] = defaultdict(list)
    holders: dict[str, set[str]] = defaultdict(set)
    for (index, position), person in gold.items():
        by_gold[person].append((index, position))
        holders[normalise(records[index].authors[position])].add(person)

    def written(person: str) -> str:
        index, position = by_gold[person][0]
        return records[index].authors[position]

    alone = [
        person
        for person, mentions in sorted(by_gold.items())
        if 2 <= len(mentions) <= 30
        and len({normalise(records[i].authors[p]) for i, p in mentions}) == 1
        and len(holders[normalise(written(person))]) == 1
    ]
    common = [p for p in alone if commonness.of(written(p)).expected >= rules.APART_COMMON]
    rare = [p for p in alone if commonness.of(written(p)).expected < 0.05]
    rng = random.Random(seed)
    made = list(records)
    for a, b in zip(rng.sample(common, pairs), rng.sample(rare, pairs), strict=True):
        for index, position in by_gold[b]:
            authors = list(made[index].authors)
            if written(a) not in authors:
                authors[position] = written(a)
                made[index] = replace(made[index], authors=tuple(authors))
    return made


def report(part: str, records: list[Record], gold: dict[Mention, str], skipped: int) -> None:
    subset = homonyms(records, gold)
    names = len({normalise(records[i].authors[p]) for i, p in subset})
    print(
        f"\n{part}: {len(records):,} records, {len(gold):,} scored authorships ({skipped} records unscored), "
        f"homonym subset {len(subset):,} authorships of {names} names, {len(set(gold.values())):,} gold persons"
    )
    methods: list[tuple[str, Callable[[list[Record]], dict[Mention, str]]]] = [
        ("name equality", name_equality),
        ("identity", by_identity),
    ]
    for label, method in methods:
        start = time.perf_counter()
        predicted = method(records)
        seconds = time.perf_counter() - start
        overall = bcubed(predicted, gold, set(gold))
        homonym = bcubed(predicted, gold, subset)
        print(
            f"  {label:14} overall P {overall[0]:.4f} R {overall[1]:.4f} F1 {overall[2]:.4f} | "
            f"homonyms P {homonym[0]:.4f} R {homonym[1]:.4f} F1 {homonym[2]:.4f} | {seconds:.2f} s"
        )


def build_share(data: Path, collections: Sequence[str]) -> None:
    """The identity step's seconds against the whole build's, on the lists as files."""
    with tempfile.TemporaryDirectory() as tmp:
        for collection in collections:
            (Path(tmp) / f"{collection}.txt").write_bytes(gzip.decompress((data / f"{collection}.txt.gz").read_bytes()))
        start = time.perf_counter()
        _, report_ = build_graph([Path(tmp)])
        total = time.perf_counter() - start
    step = report_.identity_seconds
    print(
        f"\nbuild of {len(collections)} lists: {total:.2f} s, identity step {step:.2f} s ({100 * step / total:.1f} %)"
    )


def generated_share(records: int) -> None:
    """The identity step's share of a build of a generated corpus (``bench.generate``: few, very common names)."""
    from bench.generate import write_lists

    with tempfile.TemporaryDirectory() as tmp:
        write_lists(Path(tmp), records)
        start = time.perf_counter()
        _, report_ = build_graph([Path(tmp)], progress=False)
        total = time.perf_counter() - start
    step = report_.identity_seconds
    share = f"identity step {step:.1f} s ({100 * step / total:.1f} %)"
    print(f"generated {records:,} records: build {total:.1f} s, {share}")


def main(argv: list[str]) -> None:
    if argv[:1] == ["--generated"]:
        generated_share(int(argv[1]))
        return
    paths = [a for a in argv if not a.startswith("--")]
    data = Path(paths[0]) if paths else DATA
    collections = sorted(path.name.removesuffix(".txt.gz") for path in data.glob("*.txt.gz"))
    dev = [c for c in collections if c < HELD_OUT_FROM]
    held_out = [c for c in collections if c >= HELD_OUT_FROM]
    for part, chosen in ((f"dev ({len(dev)} lists)", dev), (f"held-out ({len(held_out)} lists)", held_out)):
        report(part, *load(data, chosen))
    if "--synthetic" in argv:
        records, gold, skipped = load(data, dev)
        for seed in (1, 2, 3):
            report(f"dev with 25 synthetic homonyms (seed {seed})", synthetic(records, gold, seed), gold, skipped)
    if "--no-build" not in argv:
        build_share(data, collections)


if __name__ == "__main__":
    main(sys.argv[1:])
