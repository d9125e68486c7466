"""On-demand benchmarks (not part of the test suite). Run ``python -m bench.build --help``."""
