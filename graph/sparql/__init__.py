"""Named SPARQL queries (queries/*.rq) and the one way values are bound into them; what a syntax error expected."""
