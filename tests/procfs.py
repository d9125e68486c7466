"""Reading another process's ``/proc`` files while it may be exiting.

A process can exit between the ``open`` and the ``read`` of one of its files: the open succeeds and the read
fails with ESRCH (:class:`ProcessLookupError`), not ENOENT. Every test that watches a process die reads through
here, so that race means "gone", never an error.
"""

import os


def proc_text(path: str) -> str | None:
    """The text of ``/proc`` file ``path``, or None once its process is gone."""
    try:
        with open(path) as file:
            return file.read()
    except (FileNotFoundError, ProcessLookupError):
        return None


def task_ids(pid: int) -> list[str]:
    """The threads of ``pid`` (none once it is gone)."""
    try:
        return os.listdir(f"/proc/{pid}/task")
    except (FileNotFoundError, ProcessLookupError):
        return []
