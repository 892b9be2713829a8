"""Rewrite the generated tables of the docs from the code (`cardlab rules GAME --markdown`).

Each block between ``<!-- BEGIN GENERATED: cardlab rules GAME --markdown -->``
and ``<!-- END GENERATED -->`` in README.md or a page of docs/ is replaced by
what that command prints (`Game.markdown(level=3)` of the game with default
rules). tests/test_docs.py fails when a page and the code disagree; run
``python docs/update_tables.py`` to mend it.
"""

from __future__ import annotations

import pathlib
import re
import sys

from cardlab.envs import make_game

ROOT = pathlib.Path(__file__).resolve().parents[1]
BLOCK = re.compile(
    r"(<!-- BEGIN GENERATED: cardlab rules (?P<game>\w+) --markdown -->\n)"
    r"(?P<body>.*?)"
    r"(<!-- END GENERATED -->)",
    re.DOTALL,
)


def pages() -> list[pathlib.Path]:
    """Every page that may hold generated blocks: the README and the pages of docs/."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def generated(game: str) -> str:
    return make_game(game).markdown(level=3) + "\n"


def blocks(text: str) -> dict[str, str]:
    """Game id -> the body of its generated block in `text`."""
    return {m["game"]: m["body"] for m in BLOCK.finditer(text)}


def update(text: str) -> str:
    return BLOCK.sub(lambda m: m.group(1) + generated(m["game"]) + m.group(4), text)


if __name__ == "__main__":
    for page in pages():
        text = page.read_text(encoding="utf-8")
        if BLOCK.search(text) and update(text) != text:
            page.write_text(update(text), encoding="utf-8")
            print(f"updated {page.relative_to(ROOT)}", file=sys.stderr)
