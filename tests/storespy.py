"""Which queries a page asks of the store: ``module.get_store`` wrapped so every ``select``/``iter_select`` text is
recorded (tests that prove a page reads kept data, not the store)."""

from types import ModuleType
from typing import Any

import pytest


def record_queries(monkeypatch: pytest.MonkeyPatch, module: ModuleType) -> list[str]:
    """Patch ``module.get_store``; the list fills with the text of each query asked through it."""
    asked: list[str] = []
    served = module.get_store

    class Spy:
        def __getattr__(self, name: str) -> Any:
            found = getattr(served(), name)
            if name in ("select", "iter_select"):
                return lambda query, *args, **kwargs: asked.append(query) or found(query, *args, **kwargs)
            return found

    monkeypatch.setattr(module, "get_store", Spy)
    return asked
