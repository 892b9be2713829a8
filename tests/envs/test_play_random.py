"""`play_random`: random moves for every seat but one per slot, up to that seat's turn (vector env opponents).

Huit's engine plays it compiled; the generic `BatchedEngine.play_random` is
its definition, and the two must give the same games from the same draws.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from cardlab.envs import get_spec, make_game
from cardlab.envs.batched_engine import BatchedEngine, sample_legal


def _advanced(game_id: str, players: int, size: int, seed: int) -> BatchedEngine:
    """A batch a few random moves into its hands, some slots finished (not dealt again)."""
    game = make_game(game_id, num_players=players)
    batch = get_spec(game_id).batched_engine()(game.rules, size, seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(25):
        batch.step(sample_legal(batch.legal_mask(), rng))
    return batch


@pytest.mark.parametrize(("players", "seed"), [(2, 0), (3, 1), (5, 2)])
def test_compiled_huit_play_is_the_generic_play(players: int, seed: int) -> None:
    """Claim: HuitBatch.play_random moves as BatchedEngine.play_random does, draw for draw."""
    size = 64
    fast, slow = _advanced("huit", players, size, seed), _advanced("huit", players, size, seed)
    assert type(fast).play_random is not BatchedEngine.play_random  # the compiled one is tested
    seats = np.random.default_rng(seed + 7).integers(players, size=size)
    counted = np.random.default_rng(seed + 8).random(size) < 0.7
    gains = [np.zeros(size), np.zeros(size)]
    rngs = [np.random.default_rng(seed + 9), np.random.default_rng(seed + 9)]
    over_before = fast.over
    ended = [fast.play_random(seats, rngs[0], gains[0], counted),
             BatchedEngine.play_random(slow, seats, rngs[1], gains[1], counted)]
    assert ended[0] == ended[1]
    np.testing.assert_array_equal(gains[0], gains[1])
    assert rngs[0].random() == rngs[1].random()  # the same number of draws
    for b in range(size):
        assert json.dumps(fast.state_dict(b), default=str) == json.dumps(slow.state_dict(b), default=str)
    live = ~fast.over
    assert (fast.current_player()[live] == seats[live]).all()  # every live slot waits for its seat
    assert (fast.over[over_before]).all() and (fast.over & ~over_before).any() == ended[0]
    assert (gains[0][~counted] == 0).all()


@pytest.mark.parametrize("game_id", ["huit", "switch"])
def test_play_random_stops_at_the_seat_and_refuses_bad_arrays(game_id: str) -> None:
    batch = _advanced(game_id, 4, 16, 3)
    seats = np.zeros(16, dtype=np.int64)
    gained = np.zeros(16)
    batch.play_random(seats, np.random.default_rng(0), gained, np.ones(16, dtype=np.bool_))
    live = ~batch.over
    assert (batch.current_player()[live] == 0).all()
    with pytest.raises(ValueError, match="float64"):
        batch.play_random(seats, np.random.default_rng(0), np.zeros(16, dtype=np.float32), live)
    with pytest.raises(ValueError, match="bool"):
        batch.play_random(seats, np.random.default_rng(0), gained, np.ones(16))
    with pytest.raises(ValueError, match="seat"):
        batch.play_random(np.full(16, 9), np.random.default_rng(0), gained, live)
