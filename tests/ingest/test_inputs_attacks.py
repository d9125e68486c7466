"""Red team: every input file is read, whatever its name: two lists of one name are both read.

``bibgraph build a/list.txt b/list.txt`` (or ``build a b`` where both folders hold a ``list.txt``) read
``a/list.txt`` only and reported "0 problems": the records of ``b/list.txt`` were dropped without a word,
since files were told apart by their display name. Now one file is read once however often it is given,
and different files of one name each get a name long enough to tell them apart (``a/list.txt``).
"""

import os
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from bibgraph.graph.ingest.inputs import find_input_files

# Files in a small tree (so names collide), and the arguments given: folders or files of it.
TREE = st.lists(
    st.tuples(st.sampled_from(["", "a", "b", "a/b", "b/a", "c/a"]), st.sampled_from(["x", "y"])), min_size=1
)


@settings(max_examples=60, deadline=None)
@given(TREE, st.data())
def test_each_file_given_is_read_once_under_a_name_of_its_own(files: list[tuple[str, str]], data) -> None:
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        made = set()
        for folder, stem in files:
            path = root / folder / f"{stem}.txt"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(str(path), encoding="utf-8")
            made.add(path)
        folders = sorted({p.relative_to(root).parent for p in made} | {Path(".")})
        choices = [root / folder for folder in folders] + sorted(made)
        args = data.draw(st.lists(st.sampled_from(choices), min_size=1, max_size=5))
        wanted = {p for p in made if any(p == arg or arg in p.parents for arg in args)}
        found = list(find_input_files(args))
        assert sorted(str(path) for path, _ in found) == sorted(str(path) for path in wanted)  # each once
        names = [name for _, name in found]
        assert len(set(names)) == len(names)
        for path, name in found:
            assert str(path).endswith(os.sep + name.replace("/", os.sep)) or str(path) == name
        assert list(find_input_files(list(reversed(args)))) == found  # whatever the order of the arguments
