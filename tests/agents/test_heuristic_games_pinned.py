"""Seeded games of `greedy` and `expert` in both games, pinned move for move by a digest.

The digests were taken from the agents' `act` when a second, Python
implementation of each heuristic was held equal to its compiled kernel by
differential tests, so they pin the play both agreed on. However the kernel
is changed or called, the seeded games must not change: a single different
move, or a different tie drawn, changes the digest.
"""

from __future__ import annotations

import hashlib

import pytest

from cardlab.agents.agent_spec import make_agent
from tests.agents.test_heuristics import GAMES, play_hand

PINNED = {
    ("huit", 2, "greedy"): "sha256:3210a614ed78396c",
    ("huit", 2, "expert"): "sha256:6b288f3abdafb07f",
    ("huit", 4, "greedy"): "sha256:2efee3300c2efe90",
    ("huit", 4, "expert"): "sha256:79719b0d10f86b08",
    ("switch", 2, "greedy"): "sha256:45cb3a0557171856",
    ("switch", 2, "expert"): "sha256:319fd2f245cde20c",
    ("switch", 4, "greedy"): "sha256:eddac2aee13f994b",
    ("switch", 4, "expert"): "sha256:65b0a0ef28befc17",
}


def digest(game: str, players: int, spec: str, hands: int = 6) -> str:
    """sha256 of every action of `hands` seeded hands, the agent against itself, 3 seats in 4 alike."""
    env = GAMES[game].raw_env(num_players=players)
    agents = [make_agent(spec if seat % 4 != 3 else "random", env.game, seed=seat) for seat in range(players)]
    actions = [a for hand in range(hands) for a in play_hand(env, agents, seed=hand)]
    return "sha256:" + hashlib.sha256(",".join(map(str, actions)).encode()).hexdigest()[:16]


@pytest.mark.parametrize(("game", "players", "spec"), list(PINNED))
def test_seeded_heuristic_games_are_unchanged(game: str, players: int, spec: str) -> None:
    assert digest(game, players, spec) == PINNED[(game, players, spec)]
