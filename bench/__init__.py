"""On-demand benchmarks (not part of the test suite), grouped by what they measure.

- ``bench.building``: a build and an add, by stage and against the N-Triples + ``oxigraph load`` reference.
- ``bench.serving``: pages, maps, downloads and the SPARQL endpoint of a running server, cold and warm.
- ``bench.engines``: the same views through an external SPARQL engine (Virtuoso, the Oxigraph server).
- ``bench.networks``: the network algorithms and writers against networkx's own.
- ``bench.persons``: person identity against gold (real lists with person identifiers).

Here, shared by the groups and the integration tests: corpora (:mod:`.generate`), servers on loopback
(:mod:`.servers`, :mod:`.virtuoso`, :mod:`.oxigraphserver`), stage timers (:mod:`.stages`) and whole-tree CPU
(:mod:`.treecpu`). Start with ``python -m bench.building.build --help``.
"""
