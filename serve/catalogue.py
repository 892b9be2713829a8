"""The agents of one server by name: the built-in ones, the shipped bots, the bot files of the command line.

No request names a path: a request names an agent from this list, and the
list says which tables each fits (a bot: its game, size and rule options).
Each game that can be searched offers the search at each of its levels
(`search_choices`: ``search-quick``, the default search, and ``search-strong``).
At the table sizes of the game's `GameSpec.read_tables` (default rules of play) the
search deals its worlds by the table's shipped hand reader
(``belief=learned``), where that measured stronger than uniform worlds; in
match play, where the table has a shipped match equity (its rules), it
values its play-outs by the seat's chance to win the match
(``value=match``) instead of the hand's win; a shipped equity file that
fails to load refuses the match table in one line naming it.
"""

from __future__ import annotations

import dataclasses
import difflib
import pathlib
from collections.abc import Mapping
from typing import Any

from cardlab.agents.agent_spec import resolve_spec
from cardlab.agents.bot import read_metadata
from cardlab.agents.bot_catalogue import shipped_bots, table_bots
from cardlab.agents.match_equity import equity_rules, shipped_equity, shipped_equity_path
from cardlab.agents.search import LEVEL_BOUNDS_MS, LEVELS
from cardlab.envs.checked_json import excerpt
from cardlab.envs.game_spec import Game, games, get_spec, make_game


@dataclasses.dataclass(frozen=True)
class AgentChoice:
    """An agent the page may seat or ask: its name, the spec it stands for, what it plays."""

    name: str
    spec: str
    game: str | None = None
    num_players: int | None = None
    about: str = ""
    rules: Mapping[str, Any] | None = None
    """the rule options it was trained with (a bot plays only those); None: any"""
    search_ms: float = 0.0
    """a search: its level's bound on a decision's time in ms (what a seat of it costs the search workers
    each round of play); 0: not a search"""

    def public(self) -> dict[str, Any]:
        rules = None if self.rules is None else dict(self.rules)
        return {"name": self.name, "game": self.game, "num_players": self.num_players, "about": self.about,
                "rules": rules}

    def fits(self, game: Game) -> bool:
        return (self.game in (None, game.id) and self.num_players in (None, game.num_players)
                and (self.rules is None or game.spec.rules.completed(self.rules) == game.rules.to_dict()))


def _bot_choice(name: str, meta_path: pathlib.Path, spec: str) -> AgentChoice:
    meta = read_metadata(meta_path)  # load_bot's checked reader: bounded, fields typed
    shipped = meta["summary"].get("shipped")
    about = str(shipped.get("about", "a trained bot") if isinstance(shipped, dict) else "a trained bot")
    rules = meta.get("rules") if isinstance(meta.get("rules"), Mapping) else {}
    return AgentChoice(name, spec, meta.get("game"), meta.get("num_players"), about, rules)


LEARNED = "belief=learned:"
"""what a search's spec gains at a table of its game's `GameSpec.read_tables`"""


MATCH_VALUE = "value=match:"
"""what a search's spec gains in match play at a table with a shipped match equity"""


def at_table(choice: AgentChoice, game: Game, mode: str = "hand") -> AgentChoice:
    """`choice` as it plays at `game`'s table in `mode` (hand or match play): an offered search reads the
    hands where its game's `GameSpec.read_tables` says (under the default rules of play, which its reader
    was trained with: `default_play`), and in match play values its play-outs by the match equity where the
    table has one."""
    if not choice.search_ms:
        return choice
    if game.num_players in game.spec.read_tables and default_play(game):
        choice = dataclasses.replace(choice, spec=choice.spec.replace("search:", "search:" + LEARNED, 1),
                                     about=choice.about + ", its deals read from the hands' record")
    if mode == "match" and has_equity(game):
        choice = dataclasses.replace(choice, spec=choice.spec.replace("search:", "search:" + MATCH_VALUE, 1),
                                     about=choice.about + ", playing for the match")
    return choice


def default_play(game: Game) -> bool:
    """Whether `game` plays its game's default rules of play at its size (what the shipped readers and match
    equities were fitted under): an option that is no rule of play (`RuleOptions.of_play`; ``memory``, which
    only adds to what a seat observes) does not count, since the hands are the same with or without it
    (`equity_rules`; a reader reads such a table's observation without the field, `reading_table`)."""
    defaults, ours = game.spec.rules.completed({"num_players": game.num_players}), game.rules.to_dict()
    return all(ours[name] == defaults[name] for name in equity_rules(game))


def has_equity(game: Game) -> bool:
    """Whether a match equity ships for `game`'s table and rules: none where no file ships for its size or
    its rules of play (`equity_rules`: an option that is no rule of play, such as memory, does not count)
    are not the defaults the shipped one was fitted under. A shipped file that fails to load
    (corrupted, of another table or version) is its loader's one-line `ValueError` naming it, not "no
    equity": the search would otherwise play for the hand's win without a word. Asked at every match table
    seated, it reads the file once (`shipped_equity` keeps what it loaded until the file changes)."""
    if not shipped_equity_path(game).is_file():
        return False
    shipped_equity(make_game(game.spec, {"num_players": game.num_players}))
    return default_play(game)


SEARCH_BASE = "expert"
"""the base (and so the rollout policy) of the offered searches: it fits every table of its game"""


def search_choices(game_id: str) -> list[AgentChoice]:
    """The search at each level (`cardlab.agents.search.LEVELS`, quick first: the default) over the game's
    expert, for a game that can sample its hidden cards and has an expert; none otherwise."""
    spec = get_spec(game_id)
    if spec.determinize is None or SEARCH_BASE not in spec.heuristics:
        return []
    return [AgentChoice(f"search-{level}", f"search:level={level}:{SEARCH_BASE}", game_id,
                        about=f"the {SEARCH_BASE} looking ahead over sampled deals, {level} "
                              f"(within {LEVEL_BOUNDS_MS[level] / 1000:g} s a move)",
                        search_ms=LEVEL_BOUNDS_MS[level])
            for level in LEVELS]


class Catalogue:
    """The agents of this server: random, each game's heuristics and searches, shipped bots, command-line
    bots."""

    def __init__(self, bots: Mapping[str, pathlib.Path]) -> None:
        self.choices = [AgentChoice("random", "random", about="uniform over the legal moves")]
        for game_id in games():
            for name in get_spec(game_id).heuristics:
                self.choices.append(AgentChoice(name, name, game_id, about=f"the {name} heuristic"))
        for game_id in games():
            self.choices += search_choices(game_id)
        self.choices += [_bot_choice(name, path, name) for name, path in sorted(shipped_bots().items())]
        self.choices += [_bot_choice(name, path, f"bot:{path}") for name, path in bots.items()]
        self.table_bots = table_bots()
        """game -> table size -> its shipped bot (default rules), the page's default opponent there"""

    def names(self) -> list[str]:
        """Every name an agent of this server goes by: its choices, and ``bot:GAME`` where a game has bots."""
        aliases = [f"bot:{game_id}" for game_id in self.table_bots if self.table_bots[game_id]]
        return list(dict.fromkeys([c.name for c in self.choices] + aliases))  # a heuristic of each game once

    def check_name(self, name: str, what: str) -> None:
        """Refuse a name no agent of this server goes by (`what` says where it came from), suggesting one."""
        names = self.names()
        if name in names:
            return
        close = difflib.get_close_matches(name, names, n=1, cutoff=0.6)
        hint = f"did you mean {close[0]}? " if close else ""
        raise ValueError(f"{what} {excerpt(name)} is not an agent of this server: {hint}"
                         f"use one of {', '.join(names)}")

    def for_game(self, game: Game) -> list[AgentChoice]:
        """The agents that may play `game`: a bot only with the rule options it was trained with."""
        return [c for c in self.choices if c.fits(game)]

    def choose(self, name: str, game: Game, mode: str = "hand") -> AgentChoice:
        """The agent a name stands for, if it may play `game` in `mode` (hand or match play; a ValueError
        lists the names that may).

        ``bot:GAME`` names the shipped bot of the table's size (`fitting_bot`).
        """
        fits = self.for_game(game)
        name = resolve_spec(name, game)
        for choice in fits:
            if choice.name == name:
                return at_table(choice, game, mode)
        table = f"{game.id} with {game.num_players} players and these rule options"
        names = ", ".join(c.name for c in fits)
        known = next((c for c in self.choices if c.name == name), None)
        if known is not None:
            made = f"{known.num_players}-player {known.game}" if known.num_players else str(known.game)
            rules = " with the rule options it was trained with" if known.rules is not None else ""
            raise ValueError(f"{name} does not fit this table ({table}): it plays {made} tables{rules} only; "
                             f"use {names}")
        raise ValueError(f"unknown agent {excerpt(name)} for {table}: use {names}")
