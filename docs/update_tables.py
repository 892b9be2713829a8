"""Rewrite the generated tables of the docs from the code.

Each block between ``<!-- BEGIN GENERATED: WHAT -->`` and ``<!-- END
GENERATED -->`` in README.md or a page of docs/ is replaced by what WHAT
names:

- ``cardlab rules GAME --markdown``: what that command prints
  (`Game.markdown(level=3)` of the game with default rules);
- ``shipped bots``: the table of the shipped bots, from their metadata
  (`cardlab.training.ship.bots_table`: a row per bot and measuring opponent);
  ``shipped bots, brief``: a row per bot.

tests/test_docs.py fails when a page and the code disagree; run
``python docs/update_tables.py`` to mend it (after `cardlab ship-bots`, too).
"""

from __future__ import annotations

import pathlib
import re
import sys

from cardlab.envs import make_game
from cardlab.training.ship import bots_table

ROOT = pathlib.Path(__file__).resolve().parents[1]
BLOCK = re.compile(
    r"(<!-- BEGIN GENERATED: (?P<what>[^\n]*?) -->\n)"
    r"(?P<body>.*?)"
    r"(<!-- END GENERATED -->)",
    re.DOTALL,
)
RULES = re.compile(r"cardlab rules (?P<game>\w+) --markdown")
BOTS = {"shipped bots": False, "shipped bots, brief": True}
"""the shipped bots' blocks -> whether brief"""


def pages() -> list[pathlib.Path]:
    """Every page that may hold generated blocks: the README, CONTRIBUTING.md and the pages of docs/."""
    return [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md"))]


def generated(what: str) -> str:
    """The body of the block WHAT names (a ValueError for a name this script does not know)."""
    rules = RULES.fullmatch(what)
    if rules is not None:
        return make_game(rules["game"]).markdown(level=3) + "\n"
    if what in BOTS:
        return bots_table(brief=BOTS[what])
    raise ValueError(f"unknown generated block {what!r}: use 'cardlab rules GAME --markdown' or one of "
                     f"{', '.join(map(repr, BOTS))}")


def blocks(text: str) -> dict[str, str]:
    """What each generated block of `text` names -> its body."""
    return {m["what"]: m["body"] for m in BLOCK.finditer(text)}


def update(text: str) -> str:
    return BLOCK.sub(lambda m: m.group(1) + generated(m["what"]) + m.group(4), text)


if __name__ == "__main__":
    for page in pages():
        text = page.read_text(encoding="utf-8")
        if BLOCK.search(text) and update(text) != text:
            page.write_text(update(text), encoding="utf-8")
            print(f"updated {page.relative_to(ROOT)}", file=sys.stderr)
