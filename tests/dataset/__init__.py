"""Tests of graph/dataset/: the build, triples, VoID, dataset directories, derived data, dumps, nothing half-done."""
