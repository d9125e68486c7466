"""Domain core of bibgraph: parsing, RDF mapping, stores and networks.

Nothing in this package imports Flask or pyvis; ``bibgraph.web`` adapts it to HTTP.
"""
