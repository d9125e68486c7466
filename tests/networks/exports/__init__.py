"""The network exports: every writer against networkx's, the whole co-author exports and their memory."""
