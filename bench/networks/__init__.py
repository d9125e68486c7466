"""The network algorithms and writers against networkx's own (communities, layouts, exports)."""
