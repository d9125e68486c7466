"""The maps' palette (graph/networks/palette.py) tells its colours apart for normal vision and for a deuteranope or a
protanope (the commonest colour blindness), and from the grey of the small communities."""

import itertools
import math

import numpy as np
import pytest

from bibgraph.graph.networks.palette import OTHER_COLOUR, PALETTE
from tests.web.pages.test_ui_html import _lab

# Machado, Oliveira and Fernandes (2009), severity 1, on linear RGB
SIMULATIONS = {
    "normal": np.eye(3),
    "deuteranopia": np.array(
        [[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413], [-0.01182, 0.04294, 0.968881]]
    ),
    "protanopia": np.array(
        [[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216], [-0.003882, -0.048116, 1.051998]]
    ),
}
LEAST = {"normal": 20.0, "deuteranopia": 8.0, "protanopia": 8.0}


def seen(colour: str, matrix: np.ndarray) -> str:
    rgb = [int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    linear = np.array([c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb])
    out = np.clip(matrix @ linear, 0, 1)
    return "#" + "".join(
        f"{round(255 * (c * 12.92 if c <= 0.0031308 else 1.055 * c ** (1 / 2.4) - 0.055)):02x}" for c in out
    )


@pytest.mark.parametrize("vision", SIMULATIONS)
def test_every_two_colours_differ_as_a_reader_sees_them(vision: str) -> None:
    assert len(set(PALETTE)) == len(PALETTE) >= 15
    shown = [seen(colour, SIMULATIONS[vision]) for colour in (*PALETTE, OTHER_COLOUR)]
    for (a, sa), (b, sb) in itertools.combinations(zip((*PALETTE, OTHER_COLOUR), shown, strict=True), 2):
        assert math.dist(_lab(sa), _lab(sb)) >= LEAST[vision], (vision, a, b)


def test_the_co_author_map_colours_each_of_its_coloured_communities_differently() -> None:
    from bibgraph.graph.site.mapview import colour

    shown = [colour(index) for index in range(len(PALETTE))]  # the communities a map colours (the largest first)
    assert len(set(shown)) == len(PALETTE) and OTHER_COLOUR not in shown
    assert colour(len(PALETTE)) == OTHER_COLOUR  # the smaller ones share the grey
