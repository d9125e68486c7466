"""Run a command and report the CPU seconds and peak memory of its whole process tree, read from /proc.

``/usr/bin/time`` counts a descendant's CPU only when every process between it and the command waited for it:
a build whose query workers were forked from a zygote and killed at the end (checkouts before the one network
engine derived the site's data through them) showed less than half its CPU. This polls the tree every
``--every`` seconds and sums, per process ever seen, its last user+system time (a process that lives less than
one poll is missed); the peak is of the tree's summed RSS. Usage:
``python -m bench.treecpu -- bibgraph build LISTS --dataset OUT --quiet``.
"""

import argparse
import contextlib
import os
import subprocess
import sys
import time
from pathlib import Path

TICKS = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")


def tree(root: int) -> list[int]:
    """``root`` and its descendants now."""
    found, pending = [], [root]
    while pending:
        pid = pending.pop()
        found.append(pid)
        with contextlib.suppress(OSError):
            for task in os.listdir(f"/proc/{pid}/task"):
                with contextlib.suppress(OSError):
                    pending += [int(c) for c in Path(f"/proc/{pid}/task/{task}/children").read_text().split()]
    return found


def sample(pid: int) -> tuple[float, int] | None:
    """CPU seconds (user + system, this process's own) and resident bytes, or None once it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / TICKS, int(fields[21]) * PAGE


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--every", type=float, default=0.25)
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    started = time.perf_counter()
    process = subprocess.Popen(command)
    cpu: dict[int, float] = {}
    peak = 0
    while process.poll() is None:
        rss = 0
        for pid in tree(process.pid):
            seen = sample(pid)
            if seen is not None:
                cpu[pid], rss = seen[0], rss + seen[1]
        peak = max(peak, rss)
        time.sleep(args.every)
    wall = time.perf_counter() - started
    print(
        f"tree CPU s {sum(cpu.values()):.1f} ({len(cpu)} processes), peak tree RSS MB {peak / 2**20:.0f}, "
        f"wall s {wall:.1f}, exit {process.returncode}, load {os.getloadavg()}",
        file=sys.stderr,
    )
    sys.exit(process.returncode)


if __name__ == "__main__":
    main()
