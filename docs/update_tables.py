"""Rewrite the generated tables of the docs from the code.

Each block between ``<!-- BEGIN GENERATED: WHAT -->`` and ``<!-- END
GENERATED -->`` in README.md or a page of docs/ is replaced by what WHAT
names:

- ``cardlab rules GAME --markdown``: what that command prints
  (`Game.markdown(level=3)` of the game with default rules);
- ``shipped bots``: the table of the shipped bots, from their metadata
  (`cardlab.training.trainers.ship.bots_table`: a row per bot and measuring opponent);
  ``shipped bots, brief``: a row per bot;
- ``deal suites``: the shipped suites; ``leaderboard``: a table per suite of
  the `cardlab bench` result files in docs/leaderboard/; ``exploitability``:
  the `cardlab exploit` files in docs/leaderboard/exploit/
  (`cardlab.evaluation.leaderboard`);
- ``speed table``: the table of one run of ``python benchmarks/speed_table.py
  --json docs/speed_table.json`` (`benchmarks/speed_rows.py`: the machine, how
  busy it was, each measure with its target); ``cold start``: the run of
  ``python benchmarks/cold_start.py --main --json docs/cold_start.json``
  (`speed_rows.cold_markdown`: each command with an empty kernel cache and
  with a filled one); ``actors table``: the run of ``python
  benchmarks/actor_throughput.py --steps 100000 --repeats 3 --json
  docs/actors_table.json`` (`speed_rows.actors_markdown`);
- ``search options``: the options of ``search:BASE``
  (`cardlab.agents.search_options.options_markdown`); ``training config``:
  every key of a training config (`cardlab.training.harness.config_docs.config_markdown`);
- ``hand readers``: the shipped hand readers' held-out fit, from their
  metadata (`cardlab.training.data.reader.readers_table`).

tests/test_docs.py fails when a page and the code disagree; run
``python docs/update_tables.py`` to mend it (after `cardlab ship-bots`, too).
"""

from __future__ import annotations

import importlib.util
import json
import pathlib
import re
import sys
from collections.abc import Callable

from cardlab.agents.search_options import options_markdown
from cardlab.envs import make_game
from cardlab.evaluation.leaderboard import bench_markdown, exploit_markdown, suites_markdown
from cardlab.training.data.reader import readers_table
from cardlab.training.harness.config_docs import config_markdown
from cardlab.training.trainers.ship import bots_table

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
RESULTS = ROOT / "docs" / "leaderboard"
"""the leaderboard's result files (`cardlab bench --json`; `cardlab exploit --json` in exploit/)"""
SPEED = ROOT / "docs" / "speed_table.json"
"""the speed table's run (`python benchmarks/speed_table.py --json docs/speed_table.json`)"""


COLD = ROOT / "docs" / "cold_start.json"
"""the cold-start run (`python benchmarks/cold_start.py --main --json docs/cold_start.json`)"""
ACTORS = ROOT / "docs" / "actors_table.json"
"""the actors table's run (`python benchmarks/actor_throughput.py --steps 100000 --repeats 3 --json
docs/actors_table.json`)"""


def run_markdown(render: str, path: pathlib.Path) -> str:
    """The run of the JSON file `path`, rendered by `render` of `benchmarks/speed_rows.py` (loaded from its
    file: the benchmarks are scripts, not a package)."""
    spec = importlib.util.spec_from_file_location("speed_rows", ROOT / "benchmarks" / "speed_rows.py")
    assert spec is not None and spec.loader is not None
    rows = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(rows)
    markdown: Callable[[dict[str, object]], str] = getattr(rows, render)
    return markdown(json.loads(path.read_text(encoding="utf-8")))


LEADERBOARD: dict[str, Callable[[], str]] = {
    "deal suites": suites_markdown,
    "leaderboard": lambda: bench_markdown(RESULTS),
    "exploitability": lambda: exploit_markdown(RESULTS),
    "speed table": lambda: run_markdown("markdown", SPEED),
    "cold start": lambda: run_markdown("cold_markdown", COLD),
    "actors table": lambda: run_markdown("actors_markdown", ACTORS),
    "search options": options_markdown,
    "training config": config_markdown,
    "hand readers": readers_table,
}


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
    if what in LEADERBOARD:
        return LEADERBOARD[what]()
    raise ValueError(f"unknown generated block {what!r}: use 'cardlab rules GAME --markdown' or one of "
                     f"{', '.join(map(repr, [*BOTS, *LEADERBOARD]))}")


def blocks(text: str) -> dict[str, str]:
    """What each generated block of `text` names -> its body."""
    return {m["what"]: m["body"] for m in BLOCK.finditer(text)}


def shown(what: str) -> str:
    """`generated(what)`, refused if it holds a block's marker or HTML (what a row could slip into a page:
    an end marker would leave the text after it outside the block, and in the page after the row is gone)."""
    body = generated(what)
    if "<!--" in body or "-->" in body or "<script" in body.lower():
        raise ValueError(f"the generated block {what!r} holds a comment marker or a script: the page cannot "
                         "show it (a result file's text?)")
    return body


def update(text: str) -> str:
    """`text` with every generated block rewritten; a page whose markers do not pair is refused."""
    if text.count("<!-- BEGIN GENERATED:") != text.count("<!-- END GENERATED -->"):
        raise ValueError("the page's <!-- BEGIN GENERATED: ... --> and <!-- END GENERATED --> markers do not "
                         "pair: mend them by hand (restore the page from git)")
    return BLOCK.sub(lambda m: m.group(1) + shown(m["what"]) + m.group(4), text)


def main() -> int:
    """Rewrite every page's generated blocks; a bad result file or page is one line on stderr, exit 1."""
    try:
        updated = {page: update(page.read_text(encoding="utf-8")) for page in pages()}
    except ValueError as err:
        print(f"update_tables: {err}", file=sys.stderr)
        return 1
    for page, text in updated.items():
        if text != page.read_text(encoding="utf-8"):
            page.write_text(text, encoding="utf-8")
            print(f"updated {page.relative_to(ROOT) if page.is_relative_to(ROOT) else page}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
