"""The floor of a build: the same input files written as N-Triples by plain string formatting.

As simple as it can be, so that ``bench.building.build`` can say how far ``bibgraph build`` is from the cost
of reading the files and writing the triples at all: split lines, take a long line ending in a
full stop as an abstract, the line before it as its author line and the one before that as its
area, format the triples of the same shape as the build's (paper, label, abstract, author list,
one authorship node per author, people, areas, source), write them to one file. No name
cleaning, no identity rules, no checks, no store: not a parser, a yardstick.
Usage: ``python -m bench.building.floor DIR OUT.nt``.
"""

import argparse
import hashlib
from pathlib import Path

BASE = "http://127.0.0.1:5000/"
BG = "https://w3id.org/bibgraph/vocab#"
TYPE = "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>"
INTEGER = "<http://www.w3.org/2001/XMLSchema#integer>"


def _literal(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _key(text: str) -> str:
    return hashlib.sha256(text.lower().encode()).hexdigest()[:16]


def write_floor(directory: Path, out: Path) -> int:
    """Write the triples of every ``*.txt`` under ``directory`` to ``out``; return how many."""
    people: dict[str, str] = {}
    areas: dict[str, str] = {}
    count = 0
    with out.open("w", encoding="utf-8") as stream:
        for path in sorted(directory.rglob("*.txt")):
            short: list[str] = []  # the lines before an abstract: [area,] author line
            for number, line in enumerate(path.read_text(encoding="utf-8").split("\n"), 1):
                line = line.strip()
                if not line or line == "论文检索":
                    continue
                if len(line) < 200 or not line.endswith(".") or not short:
                    short.append(line)
                    continue
                area = short[-2].split(" · ")[0] if len(short) > 1 else None
                lines = _paper(line, short[-1], area, path.name, number, people, areas)
                stream.write("".join(lines))
                count += len(lines)
                short.clear()
        for key, name in people.items():
            stream.write(f"<{BASE}author/{key}> {TYPE} <http://xmlns.com/foaf/0.1/Person> .\n")
            stream.write(f"<{BASE}author/{key}> <http://xmlns.com/foaf/0.1/name> {_literal(name)} .\n")
        for key, label in areas.items():
            stream.write(f"<{BASE}area/{key}> {TYPE} <http://www.w3.org/2004/02/skos/core#Concept> .\n")
            stream.write(f"<{BASE}area/{key}> <http://www.w3.org/2004/02/skos/core#prefLabel> {_literal(label)} .\n")
    return count + 2 * (len(people) + len(areas))


def _paper(
    abstract: str, authors: str, area: str | None, source: str, number: int, people: dict, areas: dict
) -> list[str]:
    names = [name.strip() for name in authors.removesuffix(" 等").split(",")]
    paper = f"<{BASE}paper/{_key(authors + abstract)}>"
    lines = [
        f"{paper} {TYPE} <http://schema.org/ScholarlyArticle> .\n",
        f"{paper} <http://www.w3.org/2000/01/rdf-schema#label> {_literal(names[0] + ': ' + abstract[:60])} .\n",
        f"{paper} <http://purl.org/dc/terms/abstract> {_literal(abstract)} .\n",
        f"{paper} <{BG}authorList> {_literal(authors)} .\n",
        f'{paper} <{BG}listedAuthorCount> "{len(names)}"^^{INTEGER} .\n',
    ]
    if area:
        key = _key(area)
        areas.setdefault(key, area)
        lines.append(f"{paper} <http://purl.org/dc/terms/subject> <{BASE}area/{key}> .\n")
    for position, name in enumerate(names, 1):
        key = _key(name)
        people.setdefault(key, name)
        person = f"<{BASE}author/{key}>"
        node = f"<{paper[1:-1]}#authorship-{position}>"
        lines += [
            f"{paper} <http://purl.org/dc/terms/creator> {person} .\n",
            f"{paper} <{BG}authorship> {node} .\n",
            f"{node} {TYPE} <{BG}Authorship> .\n",
            f"{node} <http://www.w3.org/ns/prov#agent> {person} .\n",
            f'{node} <{BG}authorPosition> "{position}"^^{INTEGER} .\n',
            f"{node} <{BG}nameAsWritten> {_literal(name)} .\n",
        ]
    source_node = f"<{paper[1:-1]}#source-1>"
    lines += [
        f"{paper} <http://www.w3.org/ns/prov#wasDerivedFrom> {source_node} .\n",
        f"{source_node} {TYPE} <{BG}SourceRecord> .\n",
        f"{source_node} <{BG}sourceFile> {_literal(source)} .\n",
        f'{source_node} <{BG}sourceLine> "{number}"^^{INTEGER} .\n',
    ]
    return lines


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory", type=Path)
    parser.add_argument("out", type=Path)
    args = parser.parse_args()
    print(write_floor(args.directory, args.out), "triples")
