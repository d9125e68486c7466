"""Tests of graph/networks/: the network engine, layout, exports, palette, sizes."""
