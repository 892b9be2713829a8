"""Every declared search option is read by the search code.

Why: a field of `SearchOptions` declared with `option(...)` is parsed, checked and documented from its
declaration alone, so an option added and never read by `cardlab.agents.search` passes every other test
while the spec that sets it plays as the default. The guard reads the source of `cardlab.agents`: each
declared name must be read as an attribute of a search options value (``options.NAME``,
``self.options.NAME``, an alias such as ``o = self.options``, or ``self.NAME`` in a method of
`SearchOptions` itself), outside a check (``if ...: raise``, a cross-option check, or ``....check(v)``:
checking a value is not using it).
"""

from __future__ import annotations

import ast
import dataclasses
import re
from pathlib import Path

import cardlab.agents
from cardlab.agents.search_options import DECLARED, SearchOptions
from cardlab.envs.declared import option

HOLDER = re.compile(r"(^|\.)options$")
"""the expressions that hold a search options value: ``options``, ``self.options``, ``twin.options``"""


def agents_sources() -> dict[str, str]:
    """path -> source of every module of `cardlab.agents`."""
    root = Path(cardlab.agents.__file__).parent
    return {str(path.relative_to(root)): path.read_text() for path in sorted(root.rglob("*.py"))}


def only_checks(node: ast.AST) -> bool:
    """Whether `node` is a check, not a use: ``if ...: raise ...`` or a statement ``....check(...)``."""
    if isinstance(node, ast.If):
        return all(isinstance(line, ast.Raise) for line in node.body) and not node.orelse
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) \
        and isinstance(node.value.func, ast.Attribute) and node.value.func.attr == "check"


def reads(tree: ast.AST, holders: set[str], in_options: bool = False) -> set[str]:
    """The attribute names read off a holder of search options in `tree` (``self`` too where `in_options`:
    a method of the options class), checks left out."""
    found: set[str] = set()
    for node in ast.iter_child_nodes(tree):
        if only_checks(node):
            continue
        if isinstance(node, ast.ClassDef):
            found |= reads(node, holders, node.name == SearchOptions.__name__)
            continue
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
            held = ast.unparse(node.value)
            if HOLDER.search(held) or held in holders or (in_options and held == "self"):
                found.add(node.attr)
        found |= reads(node, holders, in_options)
    return found


def unread(names: list[str], sources: dict[str, str]) -> list[str]:
    """The `names` no source reads off search options (aliases: ``x = ...options`` assignments)."""
    read: set[str] = set()
    for source in sources.values():
        tree = ast.parse(source)
        aliases = {target.id for node in ast.walk(tree) if isinstance(node, ast.Assign)
                   and HOLDER.search(ast.unparse(node.value)) for target in node.targets
                   if isinstance(target, ast.Name)}
        read |= reads(tree, aliases)
    return [name for name in names if name not in read]


def test_every_declared_search_option_is_read_by_the_search_code() -> None:
    missing = unread(list(DECLARED), agents_sources())
    assert not missing, (f"search options declared and never read in cardlab.agents: {missing}; read each "
                         "in cardlab.agents.search (options.NAME), or drop its declaration")


@dataclasses.dataclass(frozen=True)
class MadeUpOptions(SearchOptions):
    """The search options with one more, declared as the module doc of `search_options` says, never read."""

    made_up: int = option(0, "a made-up option, declared and never read", low=0, high=1)


def test_a_made_up_option_declared_and_never_read_is_caught() -> None:
    names = [field.name for field in dataclasses.fields(MadeUpOptions)]
    sources = agents_sources()
    assert unread(names, sources) == ["made_up"]
    checked = {"check.py": "def f(options):\n    if options.made_up > 1:\n        raise ValueError('no')\n"}
    assert unread(names, sources | checked) == ["made_up"], "a check that only raises is no use"
    declared = {"check.py": "def check(options):\n    DECLARED['made_up'].check(options.made_up)\n"}
    assert unread(names, sources | declared) == ["made_up"], "checking its value is no use"
    for use in ("def f(agent):\n    return agent.options.made_up\n",
                "def f(agent):\n    o = agent.options\n    return o.made_up + 1\n",
                "class SearchOptions:\n    def g(self):\n        return self.made_up\n"):
        assert unread(names, sources | {"use.py": use}) == [], use
