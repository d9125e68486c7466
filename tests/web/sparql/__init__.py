"""Tests of web/sparql/: the SPARQL endpoint, its clients and the query page."""
