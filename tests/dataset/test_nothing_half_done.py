"""Nothing half-done is ever served or kept: atomic writes, stale temporaries, full disks, disk stores."""

import ast
import errno
import os
import signal
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pyoxigraph as ox
import pytest

from bench.servers import free_port
from bibgraph.graph.dataset.opener import COMPLETE_MARKER, prepare
from bibgraph.graph.stores import atomic
from bibgraph.graph.stores.atomic import remove_stale_temporaries, temporary_name, write_atomically
from bibgraph.graph.stores.store import OxigraphGraphStore
from bibgraph.seeds import seed_directory
from bibgraph.web.commands.cli import main
from tests.conftest import BASE, CHECKOUT


def _dead_pid() -> int:
    """The id of a process that has exited (and been reaped)."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


@pytest.mark.parametrize("umask", [0o022, 0o002, 0o077])
def test_dumps_respect_the_umask(tmp_path: Path, umask: int) -> None:
    out = tmp_path / "graph.nt"
    previous = os.umask(umask)
    try:
        assert main(["build", "--out", str(out), "--format", "nt", "--quiet"]) == 0
    finally:
        os.umask(previous)
    assert stat.S_IMODE(out.stat().st_mode) == 0o666 & ~umask


def test_a_full_disk_is_one_line_and_exit_1_and_the_old_dump_stays(tmp_path: Path, monkeypatch, capsys) -> None:
    out = tmp_path / "graph.ttl"
    out.write_text("previous dump\n", encoding="utf-8")

    def full(self, stream, syntax) -> None:
        stream.write(b"@prefix half: <written> .\n")
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(OxigraphGraphStore, "dump", full)
    assert main(["build", "--out", str(out), "--quiet"]) == 1
    err = capsys.readouterr().err
    assert err == f"bibgraph: error: cannot write {out}: No space left on device\n"
    assert out.read_text(encoding="utf-8") == "previous dump\n"
    assert [p.name for p in tmp_path.iterdir()] == ["graph.ttl"]


def test_export_graph_on_a_full_disk(tmp_path: Path, monkeypatch, capsys) -> None:
    out = tmp_path / "net.graphml"

    def full(path: Path, write) -> int:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr("bibgraph.web.commands.readgraph.write_bytes_atomically", lambda path, body: full(path, None))
    assert main(["export-graph", "--out", str(out)]) == 1
    assert capsys.readouterr().err.strip() == f"bibgraph: error: cannot write {out}: No space left on device"
    assert not out.exists()


def test_a_killed_writer_leaves_a_temporary_the_next_write_removes(tmp_path: Path) -> None:
    out = tmp_path / "graph.nt"
    script = textwrap.dedent(
        f"""
        import os, signal
        from pathlib import Path
        from bibgraph.graph.stores.atomic import write_atomically

        def half(out):
            out.write(b"<a:b> <a:c> <a:d> .\\n")
            out.flush()
            os.kill(os.getpid(), signal.SIGKILL)

        write_atomically(Path({str(out)!r}), half)
        """
    )
    killed = subprocess.run([sys.executable, "-c", script])
    assert killed.returncode == -signal.SIGKILL
    (left,) = tmp_path.iterdir()
    assert left.name.startswith(".graph.nt.") and left.name.endswith(".part")
    assert main(["build", "--out", str(out), "--format", "nt", "--quiet"]) == 0
    assert [p.name for p in tmp_path.iterdir()] == ["graph.nt"]


def test_only_our_stale_temporaries_are_removed(tmp_path: Path) -> None:
    dead, alive = _dead_pid(), os.getppid()
    stale = tmp_path / f".graph.ttl.{dead}.0123abcd.part"
    stale_store = tmp_path / f".store.{dead}.89abcdef.part"
    running = tmp_path / f".graph.ttl.{alive}.0123abcd.part"
    mine = temporary_name(tmp_path / "graph.ttl")
    others = [tmp_path / ".graph.ttl.part", tmp_path / f"notes.{dead}.0123abcd.part", tmp_path / "graph.ttl"]
    for path in [stale, running, mine, *others]:
        path.write_bytes(b"x")
    stale_store.mkdir()
    (stale_store / "000001.sst").write_bytes(b"x")
    assert sorted(remove_stale_temporaries(tmp_path)) == sorted([stale, stale_store])
    assert sorted(tmp_path.iterdir()) == sorted([running, mine, *others])


def test_a_failing_write_removes_its_temporary(tmp_path: Path) -> None:
    def fail(out) -> None:
        out.write(b"half")
        raise OSError(errno.ENOSPC, "No space left on device")

    with pytest.raises(OSError):
        write_atomically(tmp_path / "x.ttl", fail)
    assert list(tmp_path.iterdir()) == []


# The places that write or move files other than through graph/stores/atomic.py, each with why that is safe.
NOT_FOR_READERS = {
    (
        "graph/dataset/opener.py",
        "write_text",
    ): "the completeness marker, written inside the store's temporary directory",
    ("graph/dataset/opener.py", "rename"): "a whole store directory moved into place, as atomic.py moves a file",
    (
        "graph/dataset/directory.py",
        "rename",
    ): "a whole version directory moved into place, and the symlink switched by one rename",
    ("web/commands/versionwrite.py", "write_text"): "the store's completeness marker, inside a version directory not "
    "yet published",
    ("graph/serving/worker.py", "mkstemp"): "a private answer spool, read only by the request that made it",
    ("graph/serving/worker.py", "fdopen"): "that spool opened for writing",
    ("graph/serving/childprocess.py", "fdopen"): "a build phase's answer, written to the pipe its parent reads",
    ("graph/serving/sandbox.py", "open"): "the kernel's uid/gid maps (/proc/self/...), not a file on disk",
    ("graph/site/searchbuild.py", "rename"): "the search index, written by SQLite under atomic.py's temporary name,"
    " fsynced and moved into place as atomic.py moves a file",
    (
        "graph/serving/scratch.py",
        "rename",
    ): "a scratch directory's lock file, made under another name and renamed so that"
    " it appears locked; no reader reads it",
    ("graph/site/searchbuild.py", "mkstemp"): "the search index of a store served without a dataset, private to the "
    "process",
}
_WRITING_CALLS = {"rename", "write_text", "write_bytes", "mkstemp", "NamedTemporaryFile", "fdopen"}


def _file_writes(tree: ast.AST) -> set[str]:
    """The calls in ``tree`` that can write or move a file: renames (``os.replace``, ``Path.replace``),
    ``write_*``, temporary files, ``open(..., "w")``."""
    found = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        on_os = isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "os"
        modes = [a.value for a in node.args[1:2] if isinstance(a, ast.Constant)]
        modes += [k.value.value for k in node.keywords if k.arg == "mode" and isinstance(k.value, ast.Constant)]
        if name in _WRITING_CALLS:
            found.add(name)
        elif name == "replace" and (on_os or len(node.args) == 1):  # not str.replace(old, new)
            found.add("rename")
        elif name == "open" and not on_os and any(isinstance(m, str) and set(m) & set("wax+") for m in modes):
            found.add(name)
    return found


def test_one_atomic_writer() -> None:
    """Every file the package writes goes through graph/stores/atomic.py (dump.py, downloads.py and graphcommands.py
    among
    them); the few other writes are listed above, each with the reason it is safe."""
    root = CHECKOUT
    for module in ("graph/dataset/dumps.py", "web/downloads.py", "web/commands/readgraph.py"):
        text = (root / module).read_text(encoding="utf-8")
        assert "from bibgraph.graph.stores.atomic import" in text or "from .atomic import" in text, module
    seen = set()
    for path in sorted([*(root / "graph").rglob("*.py"), *(root / "web").rglob("*.py")]):
        module = path.relative_to(root).as_posix()
        if module != "graph/stores/atomic.py":
            seen |= {(module, call) for call in _file_writes(ast.parse(path.read_text(encoding="utf-8")))}
    assert seen - set(NOT_FOR_READERS) == set(), "write these through graph/stores/atomic.py"
    assert set(NOT_FOR_READERS) <= seen, "an allowed write is gone: remove it from NOT_FOR_READERS"


def test_the_writer_check_sees_writes() -> None:
    """The check above finds each way of writing a file (so it cannot pass by seeing nothing)."""
    source = (
        "import os\nos.replace(a, b)\np.replace(q)\ns.replace('a', 'b')\nopen(x, 'wb')\nopen(x)\n"
        "open(x, mode='a')\np.write_text('x')\ntempfile.mkstemp()\nos.open(x, os.O_RDONLY)\n"
    )
    assert _file_writes(ast.parse(source)) == {"rename", "open", "write_text", "mkstemp"}
    assert _file_writes(ast.parse("s.replace('a', 'b')\nopen(x, 'rb')\n")) == set()


KILLED_BUILD = """
import os, signal, sys
from pathlib import Path
from bibgraph.graph.dataset import opener

real_fill = opener.fill

def fill_then_die(store, inputs, base):
    real_fill(store, inputs, base)  # the whole graph is in, the build is not finished
    store.store.flush()
    os.kill(os.getpid(), signal.SIGKILL)

opener.fill = fill_then_die
opener.prepare([], "disk:" + sys.argv[1], sys.argv[2])
"""


def test_a_disk_store_killed_during_its_first_build_is_never_served(tmp_path: Path, seed_store) -> None:
    path = tmp_path / "store"
    killed = subprocess.run([sys.executable, "-c", KILLED_BUILD, str(path), BASE])
    assert killed.returncode == -signal.SIGKILL
    assert not path.exists()
    (left,) = tmp_path.iterdir()
    assert left.name.startswith(".store.") and left.name.endswith(".part") and left.is_dir()
    opener, summary = prepare([], f"disk:{path}", BASE)
    assert "reused" not in summary and "records" in summary
    assert sorted(p.name for p in tmp_path.iterdir()) == ["store"]
    assert (path / COMPLETE_MARKER).is_file()
    assert opener().triple_count() == seed_store.triple_count()
    _, again = prepare([], f"disk:{path}", BASE)
    assert again.endswith("reused")


def test_a_store_without_its_completeness_mark_is_refused(tmp_path: Path, capsys) -> None:
    path = tmp_path / "store"
    store = OxigraphGraphStore.disk(path)  # half-built by an older version, or by someone else
    store.close()
    del store
    with pytest.raises(ValueError, match="not a complete bibgraph store"):
        prepare([], f"disk:{path}", BASE)
    with pytest.raises(ValueError, match="not a complete bibgraph store"):
        prepare([seed_directory()], f"disk:{path}", BASE)  # never deletes what is not ours
    assert main(["serve", "--store", f"disk:{path}", "--port", str(free_port())]) == 2
    assert "not a complete bibgraph store" in capsys.readouterr().err


def test_a_full_disk_while_building_a_disk_store_is_one_line_and_leaves_nothing(
    tmp_path: Path, monkeypatch, capsys
) -> None:
    from bibgraph.graph.dataset import opener

    def full(store, inputs, base) -> None:
        store.store.add(ox.Quad(ox.NamedNode("http://a.test/s"), ox.NamedNode("http://a.test/p"), ox.Literal("o")))
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(opener, "fill", full)
    path = tmp_path / "store"
    assert main(["serve", "--store", f"disk:{path}", "--port", str(free_port())]) == 1
    assert capsys.readouterr().err == "bibgraph: error: cannot prepare the store: No space left on device\n"
    assert list(tmp_path.iterdir()) == []


def test_a_directory_is_looked_through_for_stale_temporaries_once_a_minute(tmp_path: Path, monkeypatch) -> None:
    """An add writes thousands of files into one directory: listing it before each write cost seconds."""
    clock = [1000.0]
    monkeypatch.setattr(atomic.time, "monotonic", lambda: clock[0])
    dead = _dead_pid()
    first, second = tmp_path / f".a.{dead}.0123abcd.part", tmp_path / f".b.{dead}.0123abcd.part"
    first.write_bytes(b"x")
    write_atomically(tmp_path / "one", lambda out: out.write(b"1"))
    assert not first.exists()
    second.write_bytes(b"x")
    clock[0] += atomic.SWEEP_INTERVAL - 1
    write_atomically(tmp_path / "two", lambda out: out.write(b"2"))
    assert second.exists()  # not looked for again so soon
    clock[0] += 1
    write_atomically(tmp_path / "three", lambda out: out.write(b"3"))
    assert not second.exists()
