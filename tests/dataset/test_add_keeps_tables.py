"""The first ``add`` after a build writes the added triples beside the build's table files and rewrites none of
them: the build ends with its store compacted (:func:`~bibgraph.graph.dataset.buildphases.describe`), so the add's
store is the build's files (hard links of RocksDB's checkpoint) and its own new ones. At a million papers the build
left about 20 level-0 files a column family, which the first add's writes sent to compaction (~550 MB of new table
files, ~7 CPU-s, whatever was added)."""

import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bibgraph.graph.dataset.directory import STORE, verify
from bibgraph.web.commands import versionwrite
from tests.conftest import BASE
from tests.dataset.test_add import dump_bytes, records
from tests.identity.test_dumps import write


def tables(version: Path) -> dict[str, tuple[int, int]]:
    """The table files of ``version``'s store: name to (device, inode)."""
    return {
        path.name: (status.st_dev, status.st_ino) for path in (version / STORE).glob("*.sst") if (status := path.stat())
    }


@settings(max_examples=5, deadline=None)
@given(drawn=records, cut=st.integers(1, 23))
def test_first_add_after_a_build_rewrites_none_of_its_tables(drawn: list, cut: int) -> None:
    """Build A, add B: every table file of the build's store is one of the added version's (the same file)."""
    cut = min(cut, len(drawn) - 1)
    with tempfile.TemporaryDirectory() as tmp, pytest.MonkeyPatch.context() as patch:
        patch.setattr(versionwrite, "derive", lambda version, base, previous=None, roles=None: None)  # the store only
        root = Path(tmp)
        write(root / "a", {"a.txt": drawn[:cut]})
        write(root / "b", {"b.txt": drawn[cut:]})
        built, _ = versionwrite.build_dataset([root / "a"], root / "d", BASE)
        before = tables(built)
        added, _ = versionwrite.add_to_dataset(root / "d", [root / "b"])
        after = tables(added)
        assert before, "the build wrote no table file"
        assert {name: after.get(name) for name in before} == before
        assert set(after) - set(before), "the add wrote no table file of its own"
        assert verify(added) == []


def test_first_add_after_a_build_from_a_dump_rewrites_none_of_its_tables(tmp_path: Path) -> None:
    """A build from a dump (:func:`~bibgraph.graph.dataset.buildphases.load_dumps`) ends compacted too."""
    drawn = [
        ("Biology · Proteins", ["Ada Quill", "Bert Norm"], ["protein"]),
        ("Physics · Optics", ["Cleo Marsh"], ["lens"]),
    ]
    write(tmp_path / "a", {"a.txt": drawn[:1]})
    write(tmp_path / "b", {"b.txt": drawn[1:]})
    listed, _ = versionwrite.build_dataset([tmp_path / "a"], tmp_path / "listed", BASE)
    (tmp_path / "a.nt").write_bytes(dump_bytes(listed, "bibgraph.nt"))
    built, _ = versionwrite.build_dataset([tmp_path / "a.nt"], tmp_path / "d", BASE)
    before = tables(built)
    added, _ = versionwrite.add_to_dataset(tmp_path / "d", [tmp_path / "b"])
    assert before and {name: tables(added).get(name) for name in before} == before
