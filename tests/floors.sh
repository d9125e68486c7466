#!/usr/bin/env bash
# Dependency floors hold: with the lowest versions pyproject.toml allows, the dumps are byte-identical to those of
# the current versions (.venv), in every syntax, and the domain's tests pass (parser, identity, RDF, SPARQL, networks).
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 tests/floors.py pyproject.toml > "$work/constraints.txt"
python3 -m venv "$work/venv"
"$work/venv/bin/pip" install -q -c "$work/constraints.txt" -e '.[test]'
.venv/bin/python -m bench.generate 3000 "$work/lists" --messy 0.3 > /dev/null
for lists in seeds "$work/lists"; do
  for format in turtle nt jsonld xml; do
    .venv/bin/bibgraph build "$lists" --out "$work/current.$format" --format "$format" --quiet > /dev/null
    "$work/venv/bin/bibgraph" build "$lists" --out "$work/floor.$format" --format "$format" --quiet > /dev/null
    cmp "$work/current.$format" "$work/floor.$format" || { echo "floors: $lists gives another $format dump"; diff "$work/current.$format" "$work/floor.$format" | head -20; exit 1; }
  done
done
# the domain's tests: parsing, identity, the RDF and SPARQL layers, every network and export (the web's run in the suite)
"$work/venv/bin/python" -m pytest -q -p no:cacheprovider -n 2 tests/ingest tests/identity tests/rdf tests/sparql tests/networks \
  tests/dataset/test_triples.py tests/dataset/test_void.py
echo "floors: the lowest allowed versions give the same dumps and pass"
