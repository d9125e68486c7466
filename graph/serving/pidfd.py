"""Processes held by a pidfd, never by their number.

A process's number goes to the next process made once it has been reaped (``pid_max`` may be 32768, and the query
zygote reaps a dead worker at once), so a signal or a wait by number long after — at exit, or after someone else
reaped it — can reach an unrelated process. A pidfd names one process for as long as it is held.
"""

import contextlib
import os
import signal


def open_pidfd(pid: int) -> int | None:
    """A descriptor for ``pid``, readable once it has exited (Linux 5.3 and later); None where there is none or the
    process is gone (a caller that only waits then polls)."""
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None


class Process:
    """A process signalled through its pidfd (taken while its number is known to be its own)."""

    def __init__(self, pid: int | None) -> None:
        self._fd: int | None = None
        if pid is not None:
            with contextlib.suppress(ProcessLookupError):  # already gone: nothing to signal, never alive
                self._fd = os.pidfd_open(pid)

    def _send(self, number: int) -> bool:
        if self._fd is None:
            return False
        try:
            signal.pidfd_send_signal(self._fd, number)
        except ProcessLookupError:
            return False
        return True

    def kill(self) -> None:
        """SIGKILL it if it is still there."""
        self._send(signal.SIGKILL)

    def alive(self) -> bool:
        """Whether it has not ended (a zombie not yet reaped counts as there)."""
        return self._send(0)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
