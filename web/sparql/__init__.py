"""The SPARQL 1.1 Protocol endpoint and the query page."""
