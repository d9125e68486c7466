"""Logging of ``bibgraph serve``: plain lines for a terminal, JSON lines for log shippers."""

import logging
import re
import sys

from pythonjsonlogger.json import JsonFormatter

# Line breaks and other controls a client can put in what is logged (a path's %0a, a header), which would
# start a line of their own: ``GET /x%0a2026-12-01 ... INFO GET /admin 200`` forged an access-log line.
_CONTROLS = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


class OneLineFormatter(logging.Formatter):
    """Plain lines, one per record: controls in the message are written escaped (``\\n``), never raw;
    a traceback still follows on lines of its own."""

    def formatMessage(self, record: logging.LogRecord) -> str:
        return _CONTROLS.sub(
            lambda found: found.group().encode("unicode_escape").decode(), super().formatMessage(record)
        )


def configure(log_format: str = "text", level: int = logging.INFO) -> None:
    """Send bibgraph's and waitress's records to standard error in ``log_format``."""
    handler = logging.StreamHandler(sys.stderr)
    if log_format == "json":
        handler.setFormatter(JsonFormatter("%(asctime)s %(name)s %(levelname)s %(message)s", timestamp=False))
    else:
        handler.setFormatter(OneLineFormatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
    for name in ("bibgraph", "waitress"):
        logger = logging.getLogger(name)
        logger.handlers[:] = [handler]
        logger.setLevel(level)
        logger.propagate = False
