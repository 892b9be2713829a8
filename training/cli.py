"""The `cardlab` command line."""

from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="cardlab", description=__doc__)
    parser.add_subcommand = None  # type: ignore[attr-defined]
    parser.parse_args(argv)
    return 0


if __name__ == "__main__":
    sys.exit(main())
