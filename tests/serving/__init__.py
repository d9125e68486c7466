"""Tests of graph/serving/: guard, pool, fair share, the query path, scratch directories."""
