"""Tests of graph/ingest/: the list reader, author lines, input files."""
