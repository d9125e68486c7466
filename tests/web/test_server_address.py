"""``serve`` on an address it cannot listen on: one line and exit 2, never "serving on" then a traceback."""

import socket
import subprocess
import sys

import pytest

from bibgraph.web.server import AddressUnusable, serve


@pytest.fixture
def taken() -> int:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        yield holder.getsockname()[1]


def test_a_port_in_use_is_one_line_and_exit_2_before_any_build(taken: int) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bibgraph.web.commands.cli", "serve", "--port", str(taken), "--host", "127.0.0.1"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    assert done.stderr == f"bibgraph: error: cannot listen on 127.0.0.1:{taken}: already in use\n"
    assert done.stdout == ""  # not even the build's summary: the port is checked first


def test_an_unknown_host_is_one_line_and_exit_2() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bibgraph.web.commands.cli", "serve", "--host", "no-such-host.invalid"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    assert done.stderr == "bibgraph: error: cannot listen on no-such-host.invalid:5000: unknown host\n"


def test_a_port_taken_during_the_build_is_reported_before_serving_on(app, taken: int, capsys) -> None:
    with pytest.raises(AddressUnusable, match="already in use"):
        serve(app, "127.0.0.1", taken)
    assert "serving on" not in capsys.readouterr().out
