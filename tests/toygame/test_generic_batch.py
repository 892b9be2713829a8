"""The toy game, which has no batched engine, gets the generic one: it plays as its rules engine."""

from __future__ import annotations

import numpy as np

from cardlab.envs.batched_engine import sample_legal
from tests.toygame.spec import SPEC


def test_the_toy_game_runs_batched_as_its_rules_engine() -> None:
    assert SPEC.batched is None
    rules = SPEC.make().rules
    batch = SPEC.batched_engine()(rules, 4, seed=2, episode="match")
    states = [batch.to_state(i) for i in range(4)]
    rng = np.random.default_rng(5)
    for _ in range(200):
        mask = batch.legal_mask()
        for i, state in enumerate(states):
            legal = [] if state.hand_over else sorted(state.legal_actions())
            assert np.flatnonzero(mask[i]).tolist() == legal
        actions = sample_legal(mask, rng)
        batch.step(actions)
        for i, state in enumerate(states):
            if not state.hand_over:
                state.apply(int(actions[i]))
                if state.hand_over and not state.truncated and not state.match_over:
                    state.next_hand()
            assert batch.state_dict(i) == state.state_dict()
    assert sum(s.match.hands_played for s in states) > 4
