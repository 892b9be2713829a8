"""The bots shipped with cardlab, by name and by table: ``bot:huit-2p``; ``bot:huit``, the table's size's.

Why apart from the spec language (`cardlab.agents.agent_spec`): the search's reading of the table
(`cardlab.agents.hand_reading.reading`, `belief`) asks which shipped bot fits a table, below the
searches that the spec language builds. Each bot is ``SHIPPED_BOTS/NAME.json`` (its metadata) beside
its weights.
"""

from __future__ import annotations

import pathlib
from typing import Any

from cardlab.envs.checked_json import read_json_file
from cardlab.envs.game_spec import Game, games, make_game

SHIPPED_BOTS = pathlib.Path(__file__).resolve().parent / "bots"
"""The bots that come with cardlab: ``bot:NAME`` loads ``SHIPPED_BOTS/NAME.json`` (see the README)."""


def shipped_bots(game: Game | None = None) -> dict[str, pathlib.Path]:
    """Spec -> metadata file of each shipped bot (only those made for `game`'s id and players, if given)."""
    found = {}
    for path in sorted(SHIPPED_BOTS.glob("*.json"), key=lambda found: found.stem):
        if game is not None:
            meta = read_json_file(path)
            if meta.get("game") != game.id or meta.get("num_players") != game.num_players:
                continue
        found[f"bot:{path.stem}"] = path
    return found


def bot_tables(game_id: str) -> dict[int, list[str]]:
    """Table size -> the shipped bots of `game_id` made for it (smallest table first)."""
    sizes: dict[int, list[str]] = {}
    for spec, path in shipped_bots().items():
        meta = read_json_file(path)
        if meta.get("game") == game_id and isinstance(meta.get("num_players"), int):
            sizes.setdefault(meta["num_players"], []).append(spec)
    return dict(sorted(sizes.items()))


def table_aliases() -> list[str]:
    """``bot:GAME`` for each game with a shipped bot: the spec of the shipped bot of the table's size."""
    return [f"bot:{game_id}" for game_id in games() if bot_tables(game_id)]


def fitting_bot(game: Game) -> str:
    """The spec of the shipped bot made for `game`'s table: ``bot:GAME-Np`` if there is one, else the first.

    Why: ``bot:huit`` (and the default opponents of `cardlab play`, `cardlab eval`
    and the web app) should mean the trained bot at whatever table is played.
    A ValueError names the table sizes that have a bot.
    """
    fits = list(shipped_bots(game))
    if fits:
        return _preferred(game.id, game.num_players, fits)
    tables = bot_tables(game.id)
    if not tables:
        raise ValueError(f"no {game.id} bot is shipped (the shipped bots: {', '.join(shipped_bots())})")
    sizes = list(tables)
    listed = ", ".join(spec for specs in tables.values() for spec in specs)
    raise ValueError(f"no shipped bot fits a {game.num_players}-player {game.id} table: the shipped "
                     f"{game.id} bots are for {and_joined(sizes)} players ({listed})")


def _preferred(game_id: str, num_players: int, specs: list[str]) -> str:
    """Among the shipped bots of one table size, ``bot:GAME-Np`` if it is one of them, else the first."""
    plain = f"bot:{game_id}-{num_players}p"
    return plain if plain in specs else specs[0]


def table_bots() -> dict[str, dict[int, str]]:
    """Game -> table size -> its shipped bot (`fitting_bot`), for every table that has one."""
    return {game_id: {n: _preferred(game_id, n, specs) for n, specs in tables.items()}
            for game_id in games() if (tables := bot_tables(game_id))}


def and_joined(numbers: list[int]) -> str:
    """Table sizes as a sentence names them: "2", "2 and 3", "2, 3 and 4"."""
    words = [str(n) for n in numbers]
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"


def default_bot(game_id: str, rules: dict[str, Any]) -> tuple[str, int]:
    """(spec, players) of the shipped bot that fits a table of `game_id` with these rule options.

    Why: a newcomer's first ``cardlab play huit`` should meet the trained bot, at
    the table size it was trained for (``num_players`` in `rules` picks one size;
    without it the smallest table with a bot). `fitting_bot` picks among the bots of that size.
    """
    smallest = next(iter(bot_tables(game_id)), None)
    size = {} if "num_players" in rules or smallest is None else {"num_players": smallest}
    game = make_game(game_id, {**rules, **size})
    return fitting_bot(game), game.num_players  # no bot at all: fitting_bot says so
