"""Tests of graph/sparql/: syntax errors explained."""
