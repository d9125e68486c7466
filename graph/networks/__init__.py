"""Every network (co-author, topic, ego, path), its communities, layout and exports, from one incidence.

networkx is the graph model users get: each network is a ``networkx`` graph. The modules: :mod:`.filters` (what a
co-author network is filtered on), :mod:`.incidence` (the paper-author incidence read from the store),
:mod:`.coauthor`, :mod:`.topic`, :mod:`.ego`, :mod:`.paths`, :mod:`.communities`, :mod:`.analytics`,
:mod:`.spec` (what names a network), :mod:`.engine` (the one entry point) and :mod:`.exports` (file formats).
Only the light names are imported here: numpy and scipy load with :mod:`.engine`, when a network is first made.
"""

from bibgraph.graph.networks.filters import AREA, MAX_MAP_LINKS, SUBAREA, Filters

__all__ = ["AREA", "MAX_MAP_LINKS", "SUBAREA", "Filters"]
