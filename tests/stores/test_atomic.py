"""``link_file``: the one way an earlier version's file is kept by a new one (search layers, derived files, dump
segments): a hard link, or a copy where the file system refuses links; never a moment without the target."""

import errno
import os
from pathlib import Path

import pytest

from bibgraph.graph.stores import atomic
from bibgraph.graph.stores.atomic import link_file


def _files(directory: Path) -> list[str]:
    return sorted(path.name for path in directory.iterdir())


def test_a_link_is_the_same_file_and_replaces_the_target_whole(tmp_path: Path) -> None:
    source, target = tmp_path / "earlier", tmp_path / "later"
    source.write_bytes(b"kept")
    link_file(source, target)
    assert os.path.samefile(source, target)
    target.unlink()
    target.write_bytes(b"a file the new version had written itself")  # a path that exists already
    other = tmp_path / "other"
    other.write_bytes(b"another earlier file")
    link_file(other, target)
    assert os.path.samefile(other, target) and source.read_bytes() == b"kept"
    assert _files(tmp_path) == ["earlier", "later", "other"]  # no temporary left


@pytest.mark.parametrize("refusal", [errno.EXDEV, errno.EPERM, errno.EMLINK, errno.EOPNOTSUPP])
def test_a_file_system_refusing_links_gets_a_copy(tmp_path: Path, monkeypatch, refusal: int) -> None:
    source, target = tmp_path / "earlier", tmp_path / "later"
    source.write_bytes(os.urandom(3 << 20))  # over one copy block
    target.write_bytes(b"old")

    def refuse(*_: object) -> None:
        raise OSError(refusal, os.strerror(refusal))

    monkeypatch.setattr(atomic.os, "link", refuse)
    link_file(source, target)
    assert target.read_bytes() == source.read_bytes() and not os.path.samefile(source, target)
    assert _files(tmp_path) == ["earlier", "later"]


def test_a_missing_source_raises_and_leaves_the_target(tmp_path: Path) -> None:
    target = tmp_path / "later"
    target.write_bytes(b"as it was")
    with pytest.raises(FileNotFoundError):
        link_file(tmp_path / "none", target)
    assert target.read_bytes() == b"as it was" and _files(tmp_path) == ["later"]


def test_other_errors_are_not_hidden_by_a_copy(tmp_path: Path, monkeypatch) -> None:
    source, target = tmp_path / "earlier", tmp_path / "later"
    source.write_bytes(b"kept")

    def full(*_: object) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(atomic.os, "link", full)
    with pytest.raises(OSError, match="No space"):
        link_file(source, target)
    assert _files(tmp_path) == ["earlier"]
