"""The stores the graph lives in: embedded Oxigraph (memory or disk) and a remote SPARQL endpoint."""
