"""A build and an add: by stage, and against the N-Triples writer + ``oxigraph load`` reference."""
