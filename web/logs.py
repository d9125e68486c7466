"""Logging of ``bibgraph serve``: plain lines for a terminal, JSON lines for log shippers."""

import logging
import sys

from pythonjsonlogger.json import JsonFormatter


def configure(log_format: str = "text", level: int = logging.INFO) -> None:
    """Send bibgraph's and waitress's records to standard error in ``log_format``."""
    handler = logging.StreamHandler(sys.stderr)
    if log_format == "json":
        handler.setFormatter(JsonFormatter("%(asctime)s %(name)s %(levelname)s %(message)s", timestamp=False))
    else:
        handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
    for name in ("bibgraph", "waitress"):
        logger = logging.getLogger(name)
        logger.handlers[:] = [handler]
        logger.setLevel(level)
        logger.propagate = False
