"""Rewrite the generated tables of README.md from the code (`cardlab rules GAME --markdown`).

Each block between ``<!-- BEGIN GENERATED: cardlab rules GAME --markdown -->``
and ``<!-- END GENERATED -->`` is replaced by what that command prints.
tests/test_docs.py fails when the README and the code disagree; run
``python docs/update_tables.py`` to mend it.
"""

from __future__ import annotations

import pathlib
import re
import sys

from cardlab.envs import make_game

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"
BLOCK = re.compile(
    r"(<!-- BEGIN GENERATED: cardlab rules (?P<game>\w+) --markdown -->\n)"
    r"(?P<body>.*?)"
    r"(<!-- END GENERATED -->)",
    re.DOTALL,
)


def generated(game: str) -> str:
    return make_game(game).markdown(level=3) + "\n"


def blocks(text: str) -> dict[str, str]:
    """Game id -> the body of its generated block in `text`."""
    return {m["game"]: m["body"] for m in BLOCK.finditer(text)}


def update(text: str) -> str:
    return BLOCK.sub(lambda m: m.group(1) + generated(m["game"]) + m.group(4), text)


if __name__ == "__main__":
    README.write_text(update(README.read_text(encoding="utf-8")), encoding="utf-8")
    print(f"updated {README}", file=sys.stderr)
