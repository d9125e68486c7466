"""Red team: a sitemap number the index does not name is 404, whatever its size; never a 500.

``/sitemap-papers-9223372036854775808.xml`` made ``OFFSET 92233720368547758080000`` that the engine refuses:
an internal server error (and an ERROR with a traceback in the log); a number just past the last chunk
walked every resource of the kind before answering 404.
"""

import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bibgraph.graph.site.crawl import PAGE_CLASSES


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(sorted(PAGE_CLASSES)), st.one_of(st.integers(0, 5), st.integers(0, 2**80)))
def test_a_sitemap_is_one_the_index_names_or_404(client, kind: str, number: int) -> None:
    named = set(re.findall(r"sitemap-(\w+)-(\d+)\.xml", client.get("/sitemap.xml").get_data(as_text=True)))
    response = client.get(f"/sitemap-{kind}-{number}.xml")
    assert response.status_code == (200 if (kind, str(number)) in named else 404)
