"""The build bench's stage table counts the work a build's phases do in their child interpreters (their rows were
0.0 before: a wrap made in the bench's process does not reach a new interpreter)."""

import importlib
import sys

from bench.building.buildwalk import STAGES
from bench.stages import Stages
from bibgraph.graph.serving.childprocess import in_child


def spin(rounds: int) -> int:
    """Some CPU work, at module level so a child can import it."""
    return sum(i * i for i in range(rounds))


def test_a_function_run_in_a_phase_child_is_timed_there_and_counted_here() -> None:
    stages = Stages()
    stages.wrap(sys.modules[__name__], "spin", "spin")
    try:
        with stages.children():
            assert in_child(spin, 300_000) == spin.__wrapped__(300_000)  # type: ignore[attr-defined]
    finally:
        stages.restore()
    assert not hasattr(spin, "__wrapped__")  # the module's name is the function itself again
    assert stages.cpu["spin"] > 0 and stages.seconds["spin"] > 0 and stages.peak_mb["spin"] > 0
    assert "| spin |" in stages.table(1.0, 1.0)


def test_without_children_a_phase_child_goes_untimed() -> None:
    """The control: the same call outside :meth:`Stages.children` leaves the row empty (what the bench showed)."""
    stages = Stages()
    stages.wrap(sys.modules[__name__], "spin", "spin")
    try:
        in_child(spin, 1000)
    finally:
        stages.restore()
    assert stages.cpu["spin"] == 0 and "spin" not in stages.peak_mb


def test_every_stage_of_the_build_walk_times_a_function_of_this_checkout() -> None:
    """Each stage label has a row naming a function that exists here (the others are older checkouts' names): a
    function moved without its row would leave its stage silently untimed."""

    def exists(module: str, function: str) -> bool:
        try:
            return hasattr(importlib.import_module(module), function)
        except ModuleNotFoundError:
            return False

    labels = dict.fromkeys(label for _, _, label in STAGES)
    timed = {label for module, function, label in STAGES if exists(module, function)}
    assert [label for label in labels if label not in timed] == []
