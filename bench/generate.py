"""Synthetic paper lists in the seed format, with the shape of real bibliographies.

Many authors with one paper, a few prolific ones, stable research groups, case variants and
CJK names, 1-15 authors per paper (lists over ten cut with 等), ~3% of records without area.
Deterministic for a given seed.
"""

import argparse
import random
from pathlib import Path

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


def _person(rng: random.Random, index: int) -> str:
    if index % 11 == 0:
        return rng.choice(CJK) + rng.choice(CJK) + (rng.choice(CJK) if index % 2 else "")
    return f"{rng.choice(GIVEN)} {rng.choice(FAMILY)}{index}"


def _variant(rng: random.Random, name: str) -> str:
    roll = rng.random()
    if roll < 0.03:
        return name.upper()
    if roll < 0.05:
        return name.lower()
    return name


def generate(records: int, seed: int = 1) -> str:
    rng = random.Random(seed)
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
        if rng.random() >= 0.03:
            area = rng.choice(list(AREAS))
            subarea = rng.choice(AREAS[area])
            lines += [f"{area} · {subarea}" if subarea else area, ""]
        shown = [_variant(rng, name) for name in authors[:10]]
        lines += [", ".join(shown) + (" 等" if len(authors) > 10 else ""), ""]
        words = [rng.choice(WORDS) for _ in range(rng.randint(80, 200))]
        words[rng.randrange(len(words))] = r"$\pi_\theta$"
        lines += [f"Paper {number}: " + " ".join(words).capitalize() + ".", ""]
    return "\n".join(lines)


def write_lists(directory: Path, records: int, per_file: int = 5000, seed: int = 1) -> list[Path]:
    """Write ``records`` records split into files of ``per_file``; return the paths."""
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for index, start in enumerate(range(0, records, per_file)):
        path = directory / f"synthetic_{index:04d}.txt"
        path.write_text(generate(min(per_file, records - start), seed=seed * 100_003 + index), encoding="utf-8")
        paths.append(path)
    return paths


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("records", type=int)
    parser.add_argument("directory", type=Path)
    args = parser.parse_args()
    print("\n".join(str(p) for p in write_lists(args.directory, args.records)))
