"""Synthetic paper lists in the seed format, with the shape of real bibliographies.

Many authors with one paper, a few prolific ones, stable research groups, case variants and
CJK names, 1-15 authors per paper (lists over ten cut with 等), ~3% of records without area.
Deterministic for a given seed. :func:`write_lists` writes small corpora file by file;
:func:`write_corpus` streams a corpus of any size (a million papers) drawn from one population.
"""

import argparse
import random
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from bibgraph.graph.ingest import authorline
from bibgraph.graph.ingest.names import normalise

AREAS = {
    "Deep Learning": ["Large Language Models", "Attention Mechanisms", "Sequential Models, Time series", "Theory"],
    "Reinforcement Learning": ["Deep RL", "Everything Else", "Online"],
    "Optimization": ["Stochastic", "Discrete and Combinatorial Optimization", ""],
    "General Machine Learning": ["Transfer, Multitask and Meta-learning", "Representation Learning"],
    "Social Aspects": ["Fairness", "Security", "Alignment"],
    "Probabilistic Methods": ["Bayesian Models and Methods", "Graphical Models"],
    "Theory": ["Deep Learning", "Learning Theory"],
    "Applications": ["Everything Else", "Health", "Chemistry, Physics and Earth Sciences"],
}
GIVEN = ["Wei", "Yi", "Anna", "Luca", "Maria", "Jun", "Oğuz", "Devriş", "Ke", "Sofia", "Chen", "Ahmed", "Nora"]
FAMILY = ["Wang", "Li", "Zhang", "Müller", "Rossi", "Yüksel", "Kim", "Nguyen", "Smith", "D'Angelo", "Ren", "Işler"]
CJK = (
    "王李张刘陈杨黄赵周吴徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡"
    "余杜叶程苏魏吕丁任沈姚卢姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯"
    "龙史陶黎贺顾毛郝龚邵万钱严覃武戴莫孔向汤欣伟芳娜敏静丽强磊军洋勇艳杰娟涛明超秀霞"
    "平刚桂"
)
WORDS = """we propose a method for learning models that improves robustness of training under distribution
shift our analysis shows the estimator converges and experiments on benchmarks confirm gains over baselines with
graph attention transformer policy gradient regret bound kernel sparse low-rank federated""".split()


def _letters(index: int) -> str:
    """A letter code that keeps generated people apart (digits after a name read as affiliation markers)."""
    code = ""
    while True:
        index, rest = divmod(index, 26)
        code = chr(ord("a") + rest) + code
        if not index:
            return code


def _person(rng: random.Random, index: int) -> str:
    if index % 11 == 0:
        return rng.choice(CJK) + rng.choice(CJK) + (rng.choice(CJK) if index % 2 else "")
    return f"{rng.choice(GIVEN)} {rng.choice(FAMILY)}{_letters(index)}"


def _variant(rng: random.Random, name: str) -> str:
    roll = rng.random()
    if roll < 0.03:
        return name.upper()
    if roll < 0.05:
        return name.lower()
    return name


COMMA_AREAS = ["Planning, Routing, and Scheduling", "Search, Sampling, and Inference"]  # never with a subarea
LATEX_NAMES = [  # (as written, decoded)
    (r"St\'ephan Cl\'emen\c{c}on", "Stéphan Clémençon"),
    (r"Jakub \L{}acki", "Jakub Łacki"),
    (r"Finn \AA{}rup Nielsen", "Finn Årup Nielsen"),
    (r"J\"{o}rg M\"uller", "Jörg Müller"),
]
LONG_NAMES = ["María de los Ángeles García de la Torre", "The ATLAS Collaboration"]
AFFILIATIONS = ("{}1", "{}[2]", "1{}", "{}¹", "{}$^{{3}}$")
MARKS = ("*", "†", "#", "‡")
# The classes of issue 10, one per messy record, and how often each is drawn.
CLASSES = {
    "comma area": 1,
    "marks": 3,
    "latex": 2,
    "and": 2,
    "oxford and": 1,
    "affiliation": 2,
    "no separators": 1,
    "et al": 1,
    "long names": 1,
    "semicolons": 1,
    "full-width commas": 1,
    "unusual spaces": 1,
    "orcid": 1,
    "repeated name": 1,
}


class Expected(Counter):
    """What a messy corpus holds: records per class, and the repairs and warnings the build must report."""


def _messy(rng: random.Random, names: list[str], truncated: bool, expected: Expected) -> tuple[str, bool, str | None]:
    """One record's author line written in one messy class; returns (line, truncated, comma area or None).

    ``names`` is updated to the persons the line names (emptied when it has no separators)."""
    western = [n for n in names if not any(ord(c) > 0x3000 for c in n) and not n.islower()]
    kind = rng.choices(list(CLASSES), weights=list(CLASSES.values()))[0]
    if (kind in ("and", "oxford and") and len(names) < 2) or (kind == "no separators" and len(western) < 3):
        kind = "marks"
    expected[f"class {kind}"] += 1
    tail = " 等" if truncated else ""
    if kind == "comma area":
        return ", ".join(names) + tail, truncated, rng.choice(COMMA_AREAS)
    if kind == "marks":
        chosen = rng.sample(range(len(names)), rng.randint(1, min(3, len(names))))
        expected[authorline.MARK] += len(chosen)
        written = [name + rng.choice(MARKS) if i in chosen else name for i, name in enumerate(names)]
        return ", ".join(written) + tail, truncated, None
    if kind == "latex":
        index = rng.randrange(len(names))
        names[index] = rng.choice(LATEX_NAMES)[0]
        expected[authorline.LATEX] += 1
        return ", ".join(names) + tail, truncated, None
    if kind in ("and", "oxford and"):
        expected[authorline.AND] += 1
        glue = ", and " if kind == "oxford and" and len(names) > 2 else " and "
        return ", ".join(names[:-1]) + glue + names[-1] + tail, truncated, None
    if kind == "affiliation":
        chosen = rng.sample(range(len(names)), rng.randint(1, min(3, len(names))))
        expected[authorline.AFFILIATION] += len(chosen)
        written = [rng.choice(AFFILIATIONS).format(n) if i in chosen else n for i, n in enumerate(names)]
        return ", ".join(written) + tail, truncated, None
    if kind == "no separators":
        expected[authorline.UNSPLIT] += 1
        names.clear()
        return " ".join(western), False, None
    if kind == "et al":
        expected[authorline.ET_AL] += 1
        return ", ".join(names) + " et al.", True, None
    if kind == "long names":
        names[-1] = rng.choice(LONG_NAMES)
        return ", ".join(names) + tail, truncated, None
    if kind == "semicolons":
        expected[authorline.SEMICOLON] += 1 if len(names) > 1 else 0
        return "; ".join(names) + tail, truncated, None
    if kind == "full-width commas":
        return "，".join(names) + tail, truncated, None
    if kind == "unusual spaces":
        spaced = [n.replace(" ", "\u00a0", 1) for n in names]
        expected[authorline.SPACES] += 1 if spaced != names else 0
        return ", ".join(spaced) + tail, truncated, None
    if kind == "orcid":
        expected[authorline.ORCID] += 1
        orcid = f" (0000-000{rng.randint(1, 9)}-{rng.randint(1000, 9999)}-{rng.randint(100, 999)}X)"
        return ", ".join([names[0] + orcid, *names[1:]]) + tail, truncated, None
    names.append(names[0])
    return ", ".join(names) + tail, truncated, None


def generate(records: int, seed: int = 1, messy: float = 0.0, expected: Expected | None = None) -> str:
    """A paper list of ``records`` records; a share ``messy`` of them written in one of :data:`CLASSES`
    (counted into ``expected``), drawn from a second generator so the plain corpus stays the same."""
    rng = random.Random(seed)
    mess = random.Random(seed + 7)
    expected = expected if expected is not None else Expected()
    population = max(50, int(records * 2.5))
    people = [_person(rng, i) for i in range(population)]
    prolific = people[: max(5, population // 200)]
    groups = [rng.sample(people, rng.randint(3, 8)) for _ in range(max(10, records // 20))]
    lines = ["论文检索", ""]
    for number in range(records):
        count = min(15, max(1, int(rng.lognormvariate(1.5, 0.5))))
        authors: list[str] = []
        if rng.random() < 0.4:
            authors.extend(rng.choice(groups)[:count])
        if rng.random() < 0.3:
            authors.append(rng.choice(prolific))
        while len(authors) < count:
            authors.append(rng.choice(people))
        authors = list(dict.fromkeys(authors))[:15]
        area_line = None
        if rng.random() >= 0.03:
            area = rng.choice(list(AREAS))
            subarea = rng.choice(AREAS[area])
            area_line = f"{area} · {subarea}" if subarea else area
        shown = [_variant(rng, name) for name in authors[:10]]
        author_line = ", ".join(shown) + (" 等" if len(authors) > 10 else "")
        if messy and mess.random() < messy:
            author_line, _, comma_area = _messy(mess, shown, len(authors) > 10, expected)
            area_line = comma_area or area_line
        keys = [normalise(name) for name in shown]
        expected[authorline.REPEATED] += len(keys) - len(set(keys))
        expected["records"] += 1
        lines += [area_line, ""] if area_line else []
        lines += [author_line, ""]
        words = [rng.choice(WORDS) for _ in range(rng.randint(80, 200))]
        words[rng.randrange(len(words))] = r"$\pi_\theta$"
        lines += [f"Paper {number}: " + " ".join(words).capitalize() + ".", ""]
    return "\n".join(lines)


def write_lists(
    directory: Path,
    records: int,
    per_file: int = 5000,
    seed: int = 1,
    messy: float = 0.0,
    expected: Expected | None = None,
) -> list[Path]:
    """Write ``records`` records split into files of ``per_file``; return the paths."""
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for index, start in enumerate(range(0, records, per_file)):
        path = directory / f"synthetic_{index:04d}.txt"
        text = generate(min(per_file, records - start), seed * 100_003 + index, messy, expected)
        path.write_text(text, encoding="utf-8")
        paths.append(path)
    return paths


# A corpus at scale (write_corpus): one population of authors shared by every file.
AUTHORS_PER_PAPER = (1.2, 0.6)  # 1 + lognormal(mu, sigma): mean ~4.5, median 4, up to MAX_AUTHORS
MAX_AUTHORS = 30
SHOWN_AUTHORS = 10  # a longer list is cut to this many with 等 half of the time, as conference listings do
PRODUCTIVITY = 2.0  # author index = population * u ** PRODUCTIVITY: heavy-tailed papers per author


def _person_at(index: int) -> str:
    """The name of author ``index`` of the population: a function of the index alone (no state)."""
    mixed = (index * 2654435761) & 0xFFFFFFFF  # Knuth's multiplicative hash: neighbours look unrelated
    if index % 11 == 0:
        return "".join(CJK[(mixed >> shift) % len(CJK)] for shift in (0, 8, 16)[: 2 + mixed % 2])
    return f"{GIVEN[mixed % len(GIVEN)]} {FAMILY[(mixed >> 8) % len(FAMILY)]}{_letters(index)}"


def _corpus_file(first: int, count: int, population: int, seed: int, messy: float) -> Iterator[str]:
    """The lines of one file of :func:`write_corpus`: records ``first`` .. ``first + count - 1``."""
    rng = random.Random(seed * 1_000_003 + first)
    mess = random.Random(seed * 1_000_033 + first)
    expected = Expected()
    yield "论文检索\n\n"
    for number in range(first, first + count):
        size = min(MAX_AUTHORS, 1 + int(rng.lognormvariate(*AUTHORS_PER_PAPER)))
        chosen = {int(population * rng.random() ** PRODUCTIVITY) for _ in range(size)}
        authors = [_variant(rng, _person_at(index)) for index in sorted(chosen, key=lambda i: (i * 40503) % 65521)]
        truncated = len(authors) > SHOWN_AUTHORS and rng.random() < 0.5
        shown = authors[:SHOWN_AUTHORS] if truncated else authors
        author_line = ", ".join(shown) + (" 等" if truncated else "")
        area_line = None
        if rng.random() >= 0.03:
            area = rng.choice(list(AREAS))
            subarea = rng.choice(AREAS[area])
            area_line = f"{area} · {subarea}" if subarea else area
        if messy and mess.random() < messy:
            author_line, _, comma_area = _messy(mess, shown, truncated, expected)
            area_line = comma_area or area_line
        words = rng.choices(WORDS, k=rng.randint(80, 200))
        if rng.random() < 0.3:
            words[rng.randrange(len(words))] = r"$\pi_\theta$"
        abstract = f"Paper {number}: " + " ".join(words).capitalize() + "."
        yield (f"{area_line}\n\n" if area_line else "") + f"{author_line}\n\n{abstract}\n\n"


def write_corpus(directory: Path, records: int, per_file: int = 5000, seed: int = 1, messy: float = 0.02) -> list[Path]:
    """Write ``records`` records in files of ``per_file``, streaming (one record in memory at a time).

    Unlike :func:`write_lists`, every file draws from one population of authors, with heavy-tailed
    productivity (most authors have one paper, a few hundreds), and ``messy`` records are written in
    one of :data:`CLASSES`. Deterministic for a given seed; each file depends only on its index.
    """
    directory.mkdir(parents=True, exist_ok=True)
    population = max(50, records * 5 // 2)
    paths = []
    for index, first in enumerate(range(0, records, per_file)):
        path = directory / f"corpus_{index:05d}.txt"
        with path.open("w", encoding="utf-8") as stream:
            stream.writelines(_corpus_file(first, min(per_file, records - first), population, seed, messy))
        paths.append(path)
    return paths


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("records", type=int)
    parser.add_argument("directory", type=Path)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--messy", type=float, default=0.02, help="share of records in a messy author-line class")
    args = parser.parse_args()
    print("\n".join(str(p) for p in write_corpus(args.directory, args.records, seed=args.seed, messy=args.messy)))
