"""Every exception the serving layer raises to its callers has one HTTP answer, decided in ``web/errors.py``."""

import inspect
from types import ModuleType

import pytest

from bibgraph.graph.serving import fairshare, pool, worker
from bibgraph.graph.sparql import guard
from bibgraph.graph.stores import store
from bibgraph.web.errors import STATUSES, answer_exception, status_of

DOMAIN = (fairshare, guard, pool, worker, store)


def public_exceptions(module: ModuleType) -> list[type[Exception]]:
    return [
        value
        for name, value in vars(module).items()
        if inspect.isclass(value)
        and issubclass(value, Exception)
        and value.__module__ == module.__name__
        and not name.startswith("_")
    ]


@pytest.mark.parametrize("kind", [kind for module in DOMAIN for kind in public_exceptions(module)])
def test_every_public_exception_of_the_domain_has_a_status_and_carries_none(kind: type[Exception]) -> None:
    assert any(issubclass(kind, known) for known in STATUSES), f"{kind.__name__} has no HTTP status"
    named = [*vars(kind), *inspect.signature(kind.__init__).parameters]
    assert not any("status" in name for name in named), "the domain says what went wrong, web says the status"


def test_no_entry_of_the_table_is_hidden_by_an_earlier_one() -> None:
    kinds = list(STATUSES)
    for index, kind in enumerate(kinds):
        hiding = [earlier for earlier in kinds[:index] if issubclass(kind, earlier)]
        assert not hiding, f"{kind.__name__} is answered as {hiding[0].__name__}"


@pytest.mark.parametrize(
    ("error", "code", "retry_after"),
    [
        (guard.QueryForbidden("update"), 403, None),
        (guard.QueryRefused("too deep"), 400, None),
        (store.QueryError("syntax"), 400, None),
        (pool.QueryCrashed("crashed"), 400, None),
        (worker.ResultTooLarge("large"), 422, None),
        (fairshare.OverShare("share", 7), 429, "7"),
        (pool.QueryTimeout("late"), 503, "1"),
        (fairshare.ServerBusy("busy"), 503, "1"),
        (worker.WorkerFailed("failed"), 503, "1"),
    ],
)
def test_each_exception_is_answered_with_its_status_in_plain_text_for_clients(error, code, retry_after, app) -> None:
    assert status_of(error).code == code
    with app.test_request_context("/sparql", headers={"Accept": "*/*"}):
        response = answer_exception(error)
    assert (response.status_code, response.headers.get("Retry-After")) == (code, retry_after)
    assert response.mimetype == "text/plain" and str(error) in response.get_data(as_text=True)
    with app.test_request_context("/", headers={"Accept": "text/html"}):
        page = answer_exception(error)
    assert (page.status_code, page.mimetype) == (code, "text/html")
    with app.test_request_context("/", headers={"Accept": "text/html"}):
        assert answer_exception(error, page=False).mimetype == "text/plain"
