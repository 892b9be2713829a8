"""Cardlab's Gymnasium ids: ``cardlab/Huit-v1`` and ``cardlab/Switch-v1``, registered by ``import cardlab``.

Why at import time: Gymnasium 1.x has no plugin entry points any more (it
finds an id only in its registry), so a package registers its ids when it is
imported; ``gymnasium.make("cardlab:cardlab/Huit-v1")`` imports cardlab first
by itself. The entry points are strings, so registering imports neither the
engines nor torch: only `gymnasium.envs.registration`.

Versions follow the PettingZoo envs (``huit_v1``, ``switch_v1``). Keyword
arguments go to `cardlab.training.arena.vector.CardVectorEnv`: ``num_players`` and
the other rule options, ``opponents``, ``policy``, ``reward``.
"""

from __future__ import annotations

IDS: dict[str, str] = {"cardlab/Huit-v1": "huit", "cardlab/Switch-v1": "switch"}
"""Gymnasium id -> cardlab game id"""


def register_envs() -> None:
    """Register the ids once (a second call leaves them as they are)."""
    from gymnasium.envs.registration import register, registry

    for env_id, game in IDS.items():
        if env_id in registry:
            continue
        register(id=env_id, entry_point="cardlab.training.arena.vector:CardEnv",
                 vector_entry_point="cardlab.training.arena.vector:make_vector_env",
                 kwargs={"game": game}, disable_env_checker=False)
