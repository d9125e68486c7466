"""Tests of graph/engines/: publishing into an external engine and its HTTP client."""
