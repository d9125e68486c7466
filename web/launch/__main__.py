"""``python -m bibgraph``: the ``bibgraph`` command (this folder is installed as the ``bibgraph`` package)."""

import sys

from bibgraph.web.commands.cli import main

sys.exit(main())
