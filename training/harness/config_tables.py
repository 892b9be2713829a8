"""The table a run config names (`cardlab teach`, `cardlab read-hands`), checked as a training config's is.

Kept apart from `cardlab.training.harness.config` (the training config's dataclasses and checks) so that each
stays short; both name a bad key the same way.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from cardlab.envs import games, get_spec, rule_names
from cardlab.envs.checked_json import excerpt
from cardlab.envs.game_spec import Game, make_game


def config_table(name: str, game: str, num_players: int, rules: dict[str, Any], needs: str = "",
                 has: Callable[[Any], bool] = lambda spec: True) -> Game:
    """The table of a run config (`cardlab teach`, `cardlab read-hands`): its run `name` checked, `game`
    one that `has` what the run `needs` (its `GameSpec`), `rules` its rule options; or a `ValueError`
    naming the key and what is accepted."""
    if not re.fullmatch(r"[A-Za-z0-9_.-]+", name):
        raise ValueError(f"name={excerpt(name)} is not accepted: use letters, digits, '-', '_' and '.' "
                         "(it names the run folder)")
    if game not in games():
        raise ValueError(f"game={excerpt(game)} is not accepted: use one of {', '.join(games())}")
    if not has(get_spec(game)):
        raise ValueError(f"game={game} is not accepted: {needs}")
    accepted = [n for n in rule_names(game) if n != "num_players"]
    unknown = [k for k in rules if k not in accepted]
    if unknown:
        raise ValueError(f"rules.{unknown[0]} is not accepted: rule options of {game} are "
                         f"{', '.join(accepted)} (num_players is a top-level key)")
    try:
        return make_game(game, {**rules, "num_players": num_players})
    except ValueError as err:
        raise ValueError(f"num_players or rules: {err}") from None
