"""Determinization (`GameSpec.determinize`): sampled states agree exactly with the seat's observation.

Hypothesis draws the game, its rule options (table sizes 2..10 and 2..6, small
decks, refills) and a seed; random legal play then reaches positions, and at
each one a state is sampled from the mover's observation dict. The claims: the
sampled state's observation for that seat and its legal mask equal the given
ones (in the rules engine, once loaded into the batched engine, and in every
slot of worlds dealt straight into the engine's arrays), every card of the deck
is in exactly one place, the seat's hand is its own, and the state is one the
engine accepts when restored.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings

from cardlab.envs import make_game
from cardlab.envs.game_spec import Game
from cardlab.envs.huit.rules import HuitRules
from cardlab.envs.switch.rules import SwitchRules
from tests.envs.test_properties import FAST_MAX_TURNS, GAMES, SEEDS
from tests.toygame.spec import SPEC as TOY_SPEC

STEPS = 120


def mask_of(state: Any, num_actions: int) -> np.ndarray:
    mask = np.zeros(num_actions, dtype=np.int8)
    mask[state.legal_actions()] = 1
    return mask


def all_cards(state: Any) -> Counter[int]:
    down, played = state.PILES
    held = [c for hand in state.hands for c in np.repeat(np.arange(hand.size), hand)]
    return Counter([*held, *getattr(state, down), *getattr(state, played), *state.left_out])


def view_of(game: Game, state: Any, seat: int) -> dict[str, np.ndarray]:
    """What `seat` is given to act on: its observation dict."""
    mask = mask_of(state, game.num_actions)
    return {"observation": game.observer.observe(state, seat), "action_mask": mask}


def check_position(game: Game, state: Any, rng: np.random.Generator, batch: Any) -> None:
    """Sample worlds from the mover's view (at its own seat and at seat 0) and check each claim."""
    mover = state.current
    observed = view_of(game, state, mover)
    rules = game.rules
    assert isinstance(rules, (HuitRules, SwitchRules))
    deck = Counter({card: k for card, k in enumerate(rules.deck()) if k})
    for seat in {mover, 0}:
        world = game.determinize(observed, rng, seat=seat)
        assert world.current == seat
        np.testing.assert_array_equal(game.observer.observe(world, seat), observed["observation"])
        np.testing.assert_array_equal(mask_of(world, game.num_actions), observed["action_mask"])
        np.testing.assert_array_equal(world.hands[seat], state.hands[mover])
        assert all_cards(world) == deck
        assert world.sizes == [int(h.sum()) for h in world.hands]
        game.restore(world.state_dict())  # every field checked, alone and against the others
        batch.load(0, world)
        np.testing.assert_array_equal(batch.observe(np.full(batch.batch_size, seat))[0],
                                      observed["observation"])
        np.testing.assert_array_equal(batch.legal_mask()[0], observed["action_mask"].astype(bool))
        check_worlds(game, game.determinization(observed, seat), observed, rng, batch, deck)


GRID = np.array([[5, 1], [0, 6], [3, 2]])
"""three worlds, two slots each, in no order: where `check_worlds` loads them (slot 7 stays free)"""


def check_worlds(game: Game, known: Any, observed: dict[str, np.ndarray], rng: np.random.Generator,
                 batch: Any, deck: Counter[int]) -> None:
    """Worlds dealt straight into engine slots (`sample_into`): each slot shows the seat its observation
    and legal mask, holds every card once, and is the state `load` puts there from the same world."""
    worlds = known.sample_into(batch, GRID, rng)
    rows = GRID.ravel()
    seen = batch.observe(np.full(rows.size, known.seat), rows)
    np.testing.assert_array_equal(seen, np.tile(observed["observation"], (rows.size, 1)))
    np.testing.assert_array_equal(batch.legal_mask(rows),
                                  np.tile(observed["action_mask"].astype(bool), (rows.size, 1)))
    _, pile = known.spans
    for w, slots in enumerate(GRID):
        batch.load(7, known.world(worlds, w, np.random.default_rng(0)))
        expected = {**batch.state_dict(7), "rng": None}
        for slot in slots:
            loaded = batch.to_state(int(slot))
            assert all_cards(loaded) == deck
            assert Counter(loaded.left_out) == Counter(worlds.hidden[w, pile.stop:].tolist())
            assert {**batch.state_dict(int(slot)), "rng": None} == expected


@settings(max_examples=40, deadline=None)
@given(GAMES, SEEDS)
def test_sampled_states_match_the_observation(game_options: tuple[str, dict[str, Any]], seed: int) -> None:
    game_id, options = game_options
    game = make_game(game_id, options)
    rng = np.random.default_rng(seed)
    state = game.new_state(rng)
    batch = game.spec.batched_engine()(game.rules, GRID.size + 2, seed=0)
    for _ in range(STEPS):
        if state.hand_over:
            break
        check_position(game, state, rng, batch)
        legal = state.legal_actions()
        state.apply(int(legal[rng.integers(len(legal))]))


def test_a_run_after_two_seats_went_out() -> None:
    """A9: two seats out on 2s, the run pending: the sampled first_out is either of them, the state valid."""
    game = make_game("switch", num_players=4, num_decks=1)
    state = game.new_state(np.random.default_rng(0))
    state.deal_stacked({"hands": [["2S"], ["2H"], ["5S", "6D"], ["9C", "9D"]], "stock": ["KC", "QC"],
                        "starter": "7S"})
    for text in ("play 2S", "play 2H"):
        state.apply(game.str_to_action(text))
    assert state.pending == 4 and state.current == 2
    batch = game.spec.batched_engine()(game.rules, GRID.size + 2, seed=0)
    rng = np.random.default_rng(3)
    firsts = set()
    for _ in range(20):
        check_position(game, state, rng, batch)
        firsts.add(game.determinize(view_of(game, state, 2), rng, seat=2).first_out)
    assert firsts == {0, 1}


@pytest.mark.parametrize("game_id, players", [("huit", 2), ("huit", 4), ("switch", 4), ("switch", 6)])
def test_hidden_cards_are_dealt_at_random(game_id: str, players: int) -> None:
    """The next seat's hand varies between samples (the unseen cards are dealt, not copied from the truth)."""
    game = make_game(game_id, num_players=players, max_turns=FAST_MAX_TURNS)
    state = game.new_state(np.random.default_rng(1))
    observed = view_of(game, state, state.current)
    rng = np.random.default_rng(2)
    seen = {tuple(game.determinize(observed, rng).hands[1]) for _ in range(20)}
    assert len(seen) > 10


def test_same_generator_same_world() -> None:
    game = make_game("huit", num_players=3)
    state = game.new_state(np.random.default_rng(5))
    observed = view_of(game, state, state.current)
    first = game.determinize(observed, np.random.default_rng(9)).state_dict()
    assert game.determinize(observed, np.random.default_rng(9)).state_dict() == first


@pytest.mark.parametrize("game_id", ["huit", "switch"])
def test_an_observation_of_no_state_is_refused(game_id: str) -> None:
    game = make_game(game_id, num_players=4)
    state = game.new_state(np.random.default_rng(0))
    vector = game.observer.observe(state, state.current)
    parts = game.layout.split(vector)
    parts["opponents"][:] = 3.0  # 30 or 24 cards in each other hand: more than are unseen
    with pytest.raises(ValueError, match="fits no state"):
        game.determinize({"observation": vector, "action_mask": mask_of(state, game.num_actions)},
                         np.random.default_rng(0))


def test_a_game_without_determinization_is_refused() -> None:
    game = TOY_SPEC.make()
    with pytest.raises(ValueError, match="no determinization"):
        game.determinize({"observation": np.zeros(game.layout.size, np.float32)}, np.random.default_rng(0))
