"""``python -m rec``."""

import sys

from rec.cli import main

sys.exit(main())
