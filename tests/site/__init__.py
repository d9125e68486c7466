"""Tests of graph/site/: page data, concept figures, search, the data a build keeps for the site."""
