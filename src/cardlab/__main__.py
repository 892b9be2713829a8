"""``python -m cardlab``: the `cardlab` command (`cardlab.cli.main`)."""

import sys

from cardlab.cli import main

if __name__ == "__main__":  # not again in a worker process that imports this module
    sys.exit(main())
