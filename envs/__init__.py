"""Rules engines, observers and PettingZoo environments of the games, and the registry of games.

```python
from cardlab.envs import games, make_env, make_game
games()                                   # ('switch', 'huit')
env = make_env("huit", num_players=2)     # the PettingZoo AEC env, with its checking wrappers
game = make_game("huit", num_players=2)   # the game with its rules: what agents are built from
```
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from cardlab.envs.game_spec import (
    ActionRange,
    Game,
    GameSpec,
    games,
    get_spec,
    make_game,
    register,
    rule_names,
)

if TYPE_CHECKING:
    from cardlab.envs.aec import CardGameEnv

__all__ = [
    "ActionRange", "Game", "GameSpec", "env_class", "games", "get_spec", "make_env", "make_game", "register",
    "rule_names",
]


def env_class(game: str | GameSpec) -> type[CardGameEnv]:
    """The raw AEC env class of a registered game."""
    from cardlab.envs.aec import env_class as _env_class  # PettingZoo only when an env is asked for

    return _env_class(game)


def make_env(game: str | GameSpec, **options: Any) -> Any:
    """The PettingZoo AEC env of a registered game, in the checking wrappers (`raw_env` options)."""
    from cardlab.envs.aec import make_env as _make_env

    return _make_env(game, **options)
