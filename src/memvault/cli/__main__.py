"""`python -m memvault.cli`, as the `memvault` script."""

import sys

from memvault.cli import main

sys.exit(main())
