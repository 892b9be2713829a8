"""Ray tests share one local Ray of 2 CPUs (started once, shut down at the end); bots for them."""

from __future__ import annotations

import pathlib
from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture(scope="session")
def ray_local() -> Iterator[Any]:
    """A local Ray with 2 CPUs, started the way the CLI starts one (`ray_session`)."""
    ray = pytest.importorskip("ray")
    from cardlab.cluster.runtime import ray_session

    with ray_session(workers=2) as parallel:
        assert parallel == 2
        yield ray


def make_bot(folder: pathlib.Path, name: str = "bot", seed: int = 0, game: str = "huit", players: int = 2,
             rules: dict[str, Any] | None = None) -> pathlib.Path:
    """An untrained MaskablePPO actor exported as a bot file; returns its .json path."""
    from sb3_contrib import MaskablePPO

    from cardlab.agents.bot import export_bot
    from cardlab.training.arena.single_seat import SingleSeatEnv

    env = SingleSeatEnv(game, players, rules)
    model = MaskablePPO("MlpPolicy", env, n_steps=16, batch_size=16, seed=seed,
                        policy_kwargs={"net_arch": [16]}, device="cpu")
    return export_bot(model.policy, folder / name, game=game, rules=rules, num_players=players, summary={})
