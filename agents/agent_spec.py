"""The agent spec language: one string names any agent, and `make_agent(spec, game, seed)` builds it.

Spec strings name agents everywhere (configs, CLI): ``random``, the game's
heuristics (``greedy``, ``expert``: `GameSpec.heuristics`), ``bot:NAME`` (a
bot shipped with cardlab, in ``agents/bots/``: ``bot:huit-2p``,
``bot:switch-4p``, one per table size: `cardlab.agents.bot_catalogue`), ``bot:GAME`` (``bot:huit``,
``bot:switch``: the shipped bot of the table's size, `fitting_bot`),
``bot:PATH`` (a trained bot file), ``search:BASE`` (decision-time search
over any of those, with options: `cardlab.agents.search`) and
``MODULE:FACTORY`` (a user's own agent: MODULE imported, ``FACTORY(game, seed=None)`` called).
`resolve_spec` turns an alias into the bot it stands for at a table.

A user's factory lets anyone's agent enter `cardlab bench`, `eval`, `compare` and `tournament`
without registering anything: a module on the Python path (``PYTHONPATH=.``) with a callable that
takes the `Game` and a seed and returns an `Agent`. It imports and runs code, so only the command
line and Python take it; the web app seats only the agents of its catalogue.

```python
# my_agent.py, then: PYTHONPATH=. cardlab bench my_agent:make
from cardlab.agents.base import Agent, RandomAgent

def make(game, seed=None) -> Agent:
    return RandomAgent(game, seed)
```
"""

from __future__ import annotations

import difflib
import functools
import importlib
import pathlib
import re
from typing import TYPE_CHECKING, Any

from cardlab.agents.base import Agent, as_game, named_agent, registered_names
from cardlab.agents.bot_catalogue import and_joined, bot_tables, fitting_bot, shipped_bots, table_aliases
from cardlab.envs.checked_json import excerpt
from cardlab.envs.game_spec import Game, games

if TYPE_CHECKING:
    from cardlab.agents.search import SearchAgent

FACTORY_SPEC = re.compile(r"(?P<module>[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*):(?P<factory>[A-Za-z_]\w*)")
"""``package.module:factory``: dotted Python names on both sides of one colon"""
RESERVED = ("bot", "search")
"""spec prefixes cardlab reads itself, never taken for a module name"""


def is_factory_spec(spec: str) -> bool:
    """Whether `spec` names a user's agent factory (``MODULE:FACTORY``), not a ``bot:`` or ``search:`` one."""
    match = FACTORY_SPEC.fullmatch(spec.strip()) if isinstance(spec, str) else None
    return match is not None and match["module"] not in RESERVED


def factory_agent(spec: str, game: Game, seed: int | None = None) -> Agent:
    """Import MODULE of ``MODULE:FACTORY``, call FACTORY(game, seed=seed), check that it made an Agent."""
    match = FACTORY_SPEC.fullmatch(spec.strip())
    if match is None or match["module"] in RESERVED:
        raise ValueError(f"agent spec {excerpt(spec)} is not MODULE:FACTORY (e.g. my_agent:make)")
    module_name, name = match["module"], match["factory"]
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as err:
        if err.name is not None and (module_name + ".").startswith(err.name + "."):
            raise ValueError(f"unknown agent spec {excerpt(spec)} for {game.id}: no module {module_name} "
                             "to import as MODULE:FACTORY (a module must be on the Python path, e.g. "
                             "PYTHONPATH=. for my_agent.py in this folder); use "
                             f"{', '.join(spec_names(game))}") from None
        raise ValueError(f"agent spec {spec.strip()}: cannot import {module_name} ({err}); the module must "
                         "be on the Python path, e.g. PYTHONPATH=. for my_agent.py in this folder") from None
    factory = getattr(module, name, None)
    if not callable(factory):
        found = "not callable" if factory is not None else "not defined there"
        raise ValueError(f"agent spec {spec.strip()}: {module_name}.{name} is {found}; give a callable "
                         "factory(game, seed=None) that returns an Agent")
    agent = factory(game, seed=seed)
    if not isinstance(agent, Agent):
        raise ValueError(f"agent spec {spec.strip()}: {module_name}.{name}(game, seed=...) returned "
                         f"{type(agent).__name__}, not a cardlab Agent (cardlab.agents.base.Agent)")
    return agent


def resolve_spec(spec: str, game: Any) -> str:
    """`spec`, with a table alias (``bot:huit``) replaced by the shipped bot fitting `game`'s table.

    Shipped names come first, then the aliases, then paths: a bot file named
    like a game is ``bot:./huit``. An alias of another game is refused.
    """
    text = spec.strip() if isinstance(spec, str) else spec
    if not isinstance(text, str) or not text.startswith("bot:"):
        return text
    name = text[4:].strip()
    if f"bot:{name}" in shipped_bots() or name not in games():
        return text
    game = as_game(game)
    if name != game.id:
        raise ValueError(f"bot:{name} is the shipped {name} bot of the table's size, but this table plays "
                         f"{game.id}: use bot:{game.id}")
    return fitting_bot(game)


def check_bot_name(path: str) -> None:
    """Refuse a plain name (no folder, no suffix) that is neither a shipped bot nor a file: a typo's hint.

    Why: ``bot:huit-2`` would otherwise be read as the file ``huit-2.json`` and
    fail with "file not found", saying nothing of the shipped bots.
    """
    from cardlab.agents.bot.format import bot_paths

    plain = pathlib.Path(path)
    if len(plain.parts) != 1 or plain.suffix or plain.exists() or bot_paths(path)[0].exists():
        return
    names = [spec[4:] for spec in shipped_bots()]
    aliases = [spec[4:] for spec in table_aliases()]
    table = re.fullmatch(r"(\w+)-(\d+)p", path)
    sizes = list(bot_tables(table[1])) if table and table[1] in games() else []
    if table and sizes:
        hint = (f"there is no {table[2]}-player {table[1]} bot (the {table[1]} bots are for "
                f"{and_joined(sizes)} players); ")
    else:
        close = difflib.get_close_matches(path, names + aliases, n=1, cutoff=0.6)
        hint = f"did you mean bot:{close[0]}? " if close else ""
    tables = f"; {', '.join('bot:' + a for a in aliases)} name the one of the table's size" if aliases else ""
    raise ValueError(f"no shipped bot named {path[:60]!r}: {hint}the shipped bots are "
                     f"{', '.join('bot:' + n for n in names)}{tables}; or give bot:PATH (a bot file or a run "
                     "folder)")


def bot_source(spec: str, game: Any = None) -> str | pathlib.Path:
    """What a ``bot:`` spec loads: a shipped bot's metadata file (an alias: the one fitting `game`), a path.

    A plain name that is neither shipped nor a file is refused with a hint (`check_bot_name`).
    """
    path = spec.strip()[4:].strip()
    if not path:
        raise ValueError(
            "agent spec 'bot:' is missing the bot: give a shipped bot's name, a bot file or a run "
            "folder, e.g. bot:huit-2p, bot:huit (the shipped bot of the table's size), bot:runs/RUN/bot.json "
            "or bot:runs/RUN"
        )
    if game is not None:
        path = resolve_spec(f"bot:{path}", game)[4:]
    elif path in games() and f"bot:{path}" not in shipped_bots():
        raise ValueError(f"bot:{path} stands for the shipped {path} bot of a table's size: give the table "
                         f"(the game with its num_players), or name the bot, e.g. bot:{path}-2p")
    shipped = shipped_bots().get(f"bot:{path}")
    if shipped is not None:
        return shipped
    check_bot_name(path)
    return path


def is_shipped_name(spec: str) -> bool:
    """Whether a ``bot:`` spec names a shipped bot or a table alias (not a path to make absolute)."""
    name = spec.strip()[4:].strip() if spec.strip().startswith("bot:") else None
    return name is not None and (f"bot:{name}" in shipped_bots() or name in games())


def spec_names(game: Game) -> list[str]:
    """The agent specs accepted for `game`, as help text lists them."""
    bots = list(shipped_bots(game))
    alias = [f"bot:{game.id}"] if bots else []
    return [*registered_names(), *game.spec.heuristics, *alias, *bots, "bot:PATH", "search:BASE",
            "MODULE:FACTORY"]


def make_agent(spec: str, game: Any, seed: int | None = None) -> Agent:
    """Build the agent a spec string names, for `game` (a `Game`; an env gives its `Game`)."""
    game = as_game(game)
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"agent spec must be a non-empty string: use {', '.join(spec_names(game))}")
    spec = spec.strip()
    if spec.startswith("bot:"):
        from cardlab.agents.bot import load_bot  # torch only when a bot is asked for

        return load_bot(bot_source(spec, game), game, seed=seed)
    if spec.startswith("search:") or spec == "search":
        return make_search_agent(spec, game, seed)
    agent = named_agent(spec, game, seed)
    if agent is not None:
        return agent
    if is_factory_spec(spec):
        return factory_agent(spec, game, seed)
    raise ValueError(f"unknown agent spec {excerpt(spec)} for {game.id}: use {', '.join(spec_names(game))}")


def make_search_agent(spec: str, game: Any, seed: int | None = None) -> SearchAgent:
    """The agent of a ``search:...`` spec (`cardlab.agents.search`'s doc); `make_agent` calls this."""
    from cardlab.agents.search import BASE, ROLLOUT, SearchAgent, drawn_apart, parse_spec, rollout_spec

    game = as_game(game)
    options, base_spec = parse_spec(spec)
    try:
        base = make_agent(base_spec, game, seed=drawn_apart(seed, BASE))
    except ValueError as err:
        raise ValueError(f"agent spec {excerpt(spec)}: its base agent: {err}") from None
    try:
        policy = rollout_spec(options.rollout, game)
        rollout = None if policy is None else make_agent(policy, game, seed=drawn_apart(seed, ROLLOUT))
    except ValueError as err:
        raise ValueError(f"agent spec {excerpt(spec)}: its rollout policy: {err}") from None
    agent = SearchAgent(game, base, options, seed, rollout)
    agent.spec = spec
    agent.remake = functools.partial(make_search_agent, spec, game)
    return agent
