"""A running server: pages, maps, downloads and the SPARQL endpoint, cold and warm, against baselines."""
