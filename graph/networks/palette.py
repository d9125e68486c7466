"""The maps' colours, defined once: communities on co-author maps, areas on the topic map, grey for the rest.

Okabe and Ito's colour-blind-safe set first, then Paul Tol's muted and dark tones: the 15 differ pairwise by a
CIE76 ΔE of 20 or more for normal vision, 8 or more as a deuteranope or a protanope sees them (Machado et al.
2009), and from
the grey of the small communities (tests/networks/test_palette.py). Neighbouring communities never share a colour: the
largest communities each get their own (the co-author map colours at most as many as there are colours), the
others share the grey.
"""

PALETTE: tuple[str, ...] = (
    "#0072b2",  # blue
    "#e69f00",  # orange
    "#009e73",  # bluish green
    "#cc79a7",  # reddish purple
    "#d55e00",  # vermillion
    "#56b4e9",  # sky blue
    "#f0e442",  # yellow
    "#332288",  # indigo
    "#117733",  # green
    "#882255",  # wine
    "#999933",  # olive
    "#aa4499",  # purple
    "#ddcc77",  # sand
    "#661100",  # brown
    "#004488",  # dark blue
)
OTHER_COLOUR = "#a8a8a8"  # communities too small to get their own colour
BROADER_COLOUR = "#9a9a9a"  # the topic map's area → subarea links, apart from its dashed related-topic links
