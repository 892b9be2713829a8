"""The lean PPO update learns: a best responder to `random` on the toy game beats it clearly.

Why: every other training test checks that runs run (folders, bots, resumes); this one fails when the
update stops learning. On the toy game (registered here, no batched engine of its own) laying a card
whenever one can is most of the skill: the heuristic `first_play` wins about 0.88 of its hands
against `random`, and 20,000 learner steps of `cardlab exploit`'s responder (a few seconds) reach
about 0.89. With the advantage's sign flipped in `ppo_loss` the same budget wins 0.0, and without the
policy term (value and entropy only) 0.29.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from cardlab.envs import register
from cardlab.envs.game_spec import unregister
from cardlab.training.best_response.exploit import exploit
from tests.toygame.spec import SPEC


@pytest.fixture
def toy() -> Iterator[str]:
    register(SPEC)
    yield SPEC.id
    unregister(SPEC.id)


def test_a_responder_learns_to_beat_random_on_the_toy_game(toy: str) -> None:
    result = exploit(toy, "random", steps=20_000, points=1, final_hands=600)
    assert result.final.steps >= 20_000 and result.final.hands == 600
    assert result.exploiter_ci_low > 0.75, result.format_table()
