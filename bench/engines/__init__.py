"""The views through an external SPARQL engine (Virtuoso, the Oxigraph server) against the embedded store."""
