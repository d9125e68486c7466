"""Tests of graph/rdf/: IRIs, formats."""
