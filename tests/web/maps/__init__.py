"""Tests of web/maps/: the network views, their gate and cache, maps in a browser."""
