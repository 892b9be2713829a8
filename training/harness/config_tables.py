"""The header every run config opens with (name, seed, game, num_players, rules), declared and checked once.

Why one header: the training config (`cardlab.training.harness.config`), the reader's, the match
equity's and the teach config each open with the same five keys; each is a subclass of `RunHeader`
and `check_header` checks them all alike (the run name, the game known and able to run the config,
the players in its range, the rules by its `RuleOptions`), so a new header key is one edit here.
A config whose runs or tables differ gives another default with `header_default`.
"""

from __future__ import annotations

import dataclasses
import re
import warnings
from collections.abc import Callable
from typing import Any

from cardlab.envs import games, get_spec, rule_names
from cardlab.envs.declared import CHOICE, quoted, refusal, unknown
from cardlab.envs.game_spec import Game, make_game
from cardlab.training.harness.config_bounds import SEED_HIGH, bounded, elsewhere

RUN_NAME = re.compile(r"[A-Za-z0-9_.-]+")
"""what a run name may hold: it is the first part of the run folder's name"""


@dataclasses.dataclass
class RunHeader:
    """The keys that open every run config, in this order; a config subclasses it and adds its own."""

    name: str = elsewhere("run", "letters, digits, '-', '_' and '.' (it names the run folder)")
    """run name, the first part of the run folder's name"""
    seed: int = bounded(1, 0, SEED_HIGH)
    """seed of everything the run draws (the deals, the seats' agents, the network's start)"""
    game: str = elsewhere("huit", "a registered game id (`cardlab.envs.games()`)")
    """the game: 'switch', 'huit', or another registered game id"""
    num_players: int = elsewhere(2, "the game's own range, checked by building the game")
    """players at the table"""
    rules: dict[str, Any] = dataclasses.field(default_factory=dict)
    """rule options of the game (`cardlab rules GAME`); num_players is the key above"""


def header_default(key: str, default: Any) -> Any:
    """The header field `key` as declared in `RunHeader`, with another `default` (a config whose runs have
    another name, or whose tables another size)."""
    declared = RunHeader.__dataclass_fields__[key]
    return dataclasses.field(default=default, metadata=declared.metadata)


def header_game(cfg: RunHeader) -> Game:
    """The table a run config plays: its game with its rules and its num_players (one key of a config, the
    other a rule option of the game). A config `check_header` has checked builds it without an error."""
    return make_game(cfg.game, {**cfg.rules, "num_players": cfg.num_players})


def check_header(cfg: RunHeader, needs: str = "", has: Callable[[Any], bool] = lambda spec: True) -> Game:
    """The table of a run config: its run name checked, its game one that `has` what the run `needs` (its
    `GameSpec`), num_players in the game's range, the rules its `RuleOptions` accept; or a `ValueError`
    naming the key and what is accepted."""
    if not RUN_NAME.fullmatch(cfg.name):
        raise ValueError(refusal("name", cfg.name, "not a run name",
                                 "letters, digits, '-', '_' and '.' (it names the run folder)"))
    if cfg.game not in games():
        raise ValueError(refusal("game", cfg.game, CHOICE, quoted(games())))
    if not has(get_spec(cfg.game)):
        raise ValueError(refusal("game", cfg.game, "not a game this run can use", needs))
    try:
        make_game(cfg.game, {"num_players": cfg.num_players})
    except ValueError as err:
        raise ValueError(f"num_players: {err}") from None
    if "num_players" in cfg.rules:
        raise ValueError(refusal("rules.num_players", cfg.rules["num_players"],
                                 "not a rule option of a config", "the top-level key num_players"))
    accepted = [n for n in rule_names(cfg.game) if n != "num_players"]
    given = [f"rules.{k}" for k in cfg.rules if k not in accepted]
    if given:
        raise unknown("rule option", given, ", ".join(accepted), f"for {cfg.game}")
    try:
        return header_game(cfg)
    except ValueError as err:
        raise ValueError(f"rules: {err}") from None


def config_table(name: str, game: str, num_players: int, rules: dict[str, Any], needs: str = "",
                 has: Callable[[Any], bool] = lambda spec: True) -> Game:
    """Deprecated (`check_header` of a `RunHeader`): the table of a run config's header keys."""
    warnings.warn("cardlab.training.harness.config_tables.config_table is deprecated: a run config "
                  "subclasses RunHeader and check_header(cfg) checks its header; config_table goes in the "
                  "next version",
                  DeprecationWarning, stacklevel=2)
    return check_header(RunHeader(name, 1, game, num_players, rules), needs, has)
