"""Real-world author lines at scale: a generated corpus mixing every class of issue 10, built and checked.

Prints records in and out, repairs and warnings by class against what the generator wrote, and the
build time next to the same corpus written plainly (the cost of cleaning). Exit 1 when a record is
lost or a count disagrees. Usage: ``python -m bench.persons.names --records 50000``.
"""

import argparse
import sys
import tempfile
import time
from pathlib import Path

from bench.generate import COMMA_AREAS, Expected, write_lists
from bibgraph.graph.ingest import authorline


def check(directory: Path, expected: Expected) -> tuple[list[str], float, bool]:
    """Build ``directory``; return report lines, CPU seconds, and whether everything agrees with ``expected``."""
    from bibgraph.graph.dataset.build import build_graph
    from bibgraph.graph.rdf.vocab import sparql_prologue
    from bibgraph.graph.sparql.queries import integer

    start = time.process_time()
    store, report = build_graph([directory], progress=False)
    seconds = time.process_time() - start
    rows = store.select(
        sparql_prologue()
        + "SELECT ?label (COUNT(DISTINCT ?p) AS ?n) WHERE { ?p dcterms:subject/skos:prefLabel ?label }"
        " GROUP BY ?label"
    )
    comma_areas = sum(integer(row["n"]) for row in rows if str(row["label"]) in COMMA_AREAS)
    lines = [
        f"records in {expected['records']:,}, records out {report.records:,}, problems {len(report.problems)}",
        f"papers under a comma area: {comma_areas:,} (written: {expected['class comma area']:,})",
    ]
    ok = report.records == expected["records"] and not report.problems and comma_areas == expected["class comma area"]
    warnings = {authorline.UNSPLIT, authorline.TOO_MANY, authorline.REPEATED}
    written = {kind for kind in expected if not kind.startswith("class ") and kind != "records"}
    for kind in sorted(written | set(report.repairs) | set(report.warnings)):
        title, tallies = ("warning", report.warnings) if kind in warnings else ("repair", report.repairs)
        found = tallies[kind].count if kind in tallies else 0
        ok = ok and found == expected[kind]
        lines.append(f"{title}: {kind}: reported {found:,}, written {expected[kind]:,}")
    lines.append(
        "records per class: " + ", ".join(f"{k[6:]} {v:,}" for k, v in sorted(expected.items()) if k[:6] == "class ")
    )
    return lines, seconds, ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=50_000)
    parser.add_argument("--messy", type=float, default=0.5, help="share of records written in a messy class")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        expected = Expected()
        write_lists(Path(scratch) / "messy", args.records, messy=args.messy, expected=expected)
        write_lists(Path(scratch) / "plain", args.records, expected=Expected())
        lines, seconds, ok = check(Path(scratch) / "messy", expected)
        _, plain_seconds, _ = check(Path(scratch) / "plain", Expected(records=args.records))
    print("\n".join(lines))
    print(f"build CPU time: messy {seconds:.1f} s, plain {plain_seconds:.1f} s ({seconds / plain_seconds:.2f}×)")
    print("all records kept and every repair reported" if ok else "MISMATCH")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
