"""Tests of graph/identity/: persons, numbering, curation, identity pages."""
