"""The bench's converted lists are named so that the held-out part is told by name (``bench.persons.identity``)."""

from hypothesis import given
from hypothesis import strategies as st

from bench.persons.acl_lists import list_name, slug, year_of
from bench.persons.identity import HELD_OUT_FROM


@given(st.sampled_from("CDEIJKLNPQSTWY"), st.integers(0, 99))
def test_an_old_id_is_named_by_its_year(letter: str, two: int) -> None:
    collection = f"{letter}{two:02d}"
    year = 1900 + two if two >= 50 else 2000 + two
    assert year_of(collection) == year
    assert list_name(collection) == f"{year}.{collection}"
    assert (list_name(collection) >= HELD_OUT_FROM) == (year >= int(HELD_OUT_FROM))


def test_a_new_id_keeps_its_name() -> None:
    assert list_name("2022.findings") == "2022.findings"
    assert year_of("2025.naacl") == 2025


@given(st.text(alphabet="aßłøæœ\u0131ASŁØÆŒI Đđ-", max_size=12))
def test_the_case_of_a_name_never_changes_its_id(text: str) -> None:
    assert slug(text) == slug(text.upper()) == slug(text.lower())
    assert slug("Matthias Aßenmacher") == slug("Matthias Assenmacher") == "matthias-assenmacher"
