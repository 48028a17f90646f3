"""`python -m bspkit` is the `bspkit` command."""

import sys

from bspkit.cli import main

sys.exit(main())
