"""The network views: request arguments, views and downloads, the per-app cache of networks, the gate of map
computations, vis-network data."""
