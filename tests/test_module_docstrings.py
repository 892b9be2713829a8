"""Module docstrings say what and why in a paragraph or two: at most `MOST_LINES` lines each; the long
explanations (APIs, layouts, decisions) live in docs/. PettingZoo's doc pages are the exception: an env
module's docstring is its doc page (`huit_v1`, `switch_v1`), as in PettingZoo's classic envs."""

from __future__ import annotations

import ast
import re

from tests.test_game_folders import modules

MOST_LINES = 25
DOC_PAGES = re.compile(r"cardlab\.envs\.\w+_v\d+")
"""modules whose docstring is the env's doc page (PettingZoo's layout)"""
NOT_YET: frozenset[str] = frozenset()
"""modules still over the bound (none)"""


def docstring_lines() -> dict[str, int]:
    out = {}
    for name, path in modules().items():
        doc = ast.get_docstring(ast.parse(path.read_text()), clean=False)
        if doc and not DOC_PAGES.fullmatch(name):
            out[name] = doc.strip("\n").count("\n") + 1
    return out


def test_every_module_docstring_is_short() -> None:
    lines = docstring_lines()
    long = {name: n for name, n in lines.items() if n > MOST_LINES and name not in NOT_YET}
    assert not long, f"module docstrings over {MOST_LINES} lines (move the detail to docs/): {long}"
    assert len(lines) > 100  # the walk found the package's modules
