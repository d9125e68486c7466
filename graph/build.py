"""From input files to a loaded store: parse, resolve identities, load, describe (VoID)."""

import gc
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tqdm import tqdm

from bibgraph.seeds import seed_directory

from .model import Catalogue, Iris
from .ntriples import unpublishable
from .parse import find_input_files, parse_file
from .records import Problem, Record
from .store import OxigraphGraphStore
from .void import void_ntriples

DEFAULT_BASE = "http://127.0.0.1:5000/"
PROGRESS_MIN_BYTES = 2_000_000


@dataclass
class BuildReport:
    """What a build read and made: the one-line summary and the data-quality report."""

    files: int = 0
    records: int = 0
    papers: int = 0
    authors: int = 0
    authorships: int = 0
    concepts: int = 0
    triples: int = 0
    problems: list[Problem] = field(default_factory=list)
    truncated: list[str] = field(default_factory=list)
    merged_names: list[tuple[str, list[str]]] = field(default_factory=list)
    duplicate_records: int = 0

    def summary(self) -> str:
        return (
            f"{self.records} records, {self.papers} papers, {self.authors} authors, "
            f"{self.concepts} concepts, {self.triples} triples, {len(self.problems)} problems"
        )

    def quality_lines(self) -> Iterator[str]:
        yield f"malformed records: {len(self.problems)}"
        for problem in self.problems:
            yield f"  {problem}"
        yield f"truncated author lists (等): {len(self.truncated)}"
        for where in self.truncated:
            yield f"  {where}"
        yield f"merged name variants: {len(self.merged_names)}"
        for name, variants in self.merged_names:
            yield f"  {name} = {' = '.join(variants)}"
        yield f"duplicate records (merged into one paper): {self.duplicate_records}"


def graph_lines(
    paths: Sequence[Path], iris: Iris, catalogue: Catalogue, problems: list[Problem], progress: bool = True
) -> Iterator[str]:
    """N-Triples of every record, file by file in a stable order, then of people and concepts.

    Records stream straight into the store: a build holds names and concepts, never abstracts.
    """
    files = list(find_input_files(paths))
    total = sum(path.stat().st_size for path, _ in files)
    # a log file gets no bar: tqdm would fill it with carriage-return updates
    on_terminal = sys.stderr.isatty()
    with tqdm(
        total=total,
        unit="B",
        unit_scale=True,
        desc="build",
        disable=not (progress and on_terminal) or total < PROGRESS_MIN_BYTES,
    ) as bar:
        for path, name in files:
            found, trouble = parse_file(path, name)
            problems.extend(trouble)
            for record in found:
                trouble = _unpublishable(record)
                if trouble:
                    problems.append(Problem(record.source, record.line, trouble))
                    continue
                yield from catalogue.add(record, iris)
            bar.update(path.stat().st_size)
    yield from catalogue.closing(iris)


def build_graph(
    paths: Sequence[Path], base: str = DEFAULT_BASE, store: OxigraphGraphStore | None = None, progress: bool = True
) -> tuple[OxigraphGraphStore, BuildReport]:
    """Build the graph of the given files or directories (the seeds if none) into ``store`` (new by default)."""
    iris = Iris(base)
    store = store or OxigraphGraphStore.memory()
    inputs = list(paths) or [seed_directory()]
    catalogue = Catalogue()
    problems: list[Problem] = []
    store.load_ntriples(graph_lines(inputs, iris, catalogue, problems, progress))
    report = BuildReport(
        files=len(list(find_input_files(inputs))),
        records=catalogue.records,
        papers=catalogue.papers,
        authors=len(catalogue.people),
        authorships=catalogue.authorships,
        concepts=len(catalogue.areas) + len(catalogue.subareas),
        problems=problems,
        truncated=catalogue.truncated,
        merged_names=[(person.name, person.variants) for person in catalogue.merged_people],
        duplicate_records=catalogue.duplicate_records,
    )
    del catalogue
    gc.collect()
    store.load_ntriples(void_ntriples(store, iris))
    report.triples = store.triple_count()
    return store, report


def _unpublishable(record: Record) -> str | None:
    """What in ``record`` no dump could carry; such a record is reported and left out, alone."""
    fields = {"area": record.area, "subarea": record.subarea, "abstract": record.abstract, "source": record.source}
    fields |= {f"author {n}": name for n, name in enumerate(record.authors, 1)}
    for where, text in fields.items():
        why = unpublishable(text or "")
        if why:
            return f"{where}: {why}"
    return None
