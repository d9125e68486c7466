"""Tests of graph/stores/: the remote store and the engines it reads."""
