"""The RDF vocabulary: every IRI minted and read back, the ontology's terms, N-Triples text, SHACL validation, the one
table of formats."""
