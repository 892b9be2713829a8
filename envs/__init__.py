"""Rules engines, observers and PettingZoo environments of the two games."""

from __future__ import annotations

import importlib

GAMES: tuple[str, ...] = ("switch", "huit")


def env_class(game: str) -> type:
    """The raw AEC env class of a game name (``switch_v0.raw_env``, ...); the one registry of games."""
    if game not in GAMES:
        raise ValueError(f"unknown game {game!r}: use one of {', '.join(GAMES)}")
    return importlib.import_module(f"cardlab.envs.{game}_v0").raw_env
