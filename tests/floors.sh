#!/usr/bin/env bash
# Dependency floors hold: with the lowest versions pyproject.toml allows, the dumps are byte-identical to those of
# the current versions (.venv) and the tests of the parser, the model and the networks pass.
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 tests/floors.py pyproject.toml > "$work/constraints.txt"
python3 -m venv "$work/venv"
"$work/venv/bin/pip" install -q -c "$work/constraints.txt" -e '.[test]'
.venv/bin/python -m bench.generate 3000 "$work/lists" --messy 0.3 > /dev/null
for lists in seeds "$work/lists"; do
  .venv/bin/bibgraph build "$lists" --out "$work/current.ttl" --quiet > /dev/null
  "$work/venv/bin/bibgraph" build "$lists" --out "$work/floor.ttl" --quiet > /dev/null
  cmp "$work/current.ttl" "$work/floor.ttl" || { echo "floors: $lists gives another Turtle dump"; diff "$work/current.ttl" "$work/floor.ttl" | head -20; exit 1; }
done
"$work/venv/bin/python" -m pytest -q -p no:cacheprovider -n 2 tests/ingest/test_parse.py tests/ingest/test_authorline.py tests/dataset/test_triples.py \
  tests/ingest/test_parse_variants.py tests/networks/test_networks.py tests/networks/exports/test_exports_exact.py tests/dataset/test_void.py
echo "floors: the lowest allowed versions give the same dumps and pass"
