"""HTTP and command-line adapters around :mod:`bibgraph.graph`."""
