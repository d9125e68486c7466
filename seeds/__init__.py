"""The default dataset: the paper lists bibgraph builds when given no input."""

from importlib.resources import files
from pathlib import Path


def seed_directory() -> Path:
    """Where the seed files are installed; a real directory because setuptools installs files."""
    return Path(str(files(__name__)))
