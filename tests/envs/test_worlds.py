"""Worlds dealt as arrays (`Determinization.deal`, `sample_into`) and the batched engines' row queries.

Claims: the hidden cards are dealt uniformly (every card equally likely at
every place, every pair of cards equally likely to share a hand: a count test
that rejects a dealer that only rotates the cards); worlds go only into the
slots asked for, and bad grids are refused; `legal_mask(rows)` and
`observe(seats, rows)` are the rows of the whole-batch answers, and Switch's
step still refuses an illegal move after a mask of some rows; `reseed(seed)`
restarts the generators as the constructor seeds them.
(That each loaded slot shows the seat its observation and legal mask and holds
the state `load` would put there: `tests/envs/test_determinize.py`.)
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from cardlab.envs import make_game
from cardlab.envs.batched_engine import only_legal, sample_legal
from cardlab.envs.world_sampling import Determinization, Worlds
from tests.envs.test_determinize import view_of
from tests.envs.test_generic_batch import without_engine

SIGMAS = 6.0
"""how far (in binomial standard deviations) a count may stray before the dealer is called biased"""


def known_at(game_id: str, players: int, moves: int, seed: int = 0) -> tuple[Any, Determinization]:
    """The mover's determinization after `moves` random legal moves of a seeded deal."""
    game = make_game(game_id, num_players=players)
    rng = np.random.default_rng(seed)
    state = game.new_state(rng)
    for _ in range(moves):
        legal = state.legal_actions()
        state.apply(int(legal[rng.integers(len(legal))]))
    assert not state.hand_over
    return game, game.determinization(view_of(game, state, state.current), state.current)


def biased(known: Determinization) -> list[str]:
    """What is wrong with `known.deal`'s distribution, by counts over 20,000 worlds (empty: nothing)."""
    return biased_deal(known, lambda count: known.deal(np.random.default_rng(1), count).hidden)


def biased_deal(known: Determinization, deal: Callable[[int], np.ndarray]) -> list[str]:
    """The count tests of a dealer `deal(count) -> (count, unseen) hidden rows` of `known`'s worlds."""
    count = 20_000
    hidden = deal(count)
    unseen = known.unseen.size
    found = []
    # Each copy of a card kind at each place: probability copies / unseen.
    kinds, copies = np.unique(known.unseen, return_counts=True)
    for kind, k in zip(kinds, copies, strict=True):
        counts = (hidden == kind).sum(axis=0)
        p = k / unseen
        if np.abs(counts - count * p).max() > SIGMAS * np.sqrt(count * p * (1 - p)):
            found.append(f"card {kind} is not equally likely at every place")
    # Two given places of the first other hand hold two given distinct cards (a pair) with p = 1/(U(U-1))
    # per ordered pair of copies: measured as both cards in that hand, whatever the places.
    spans, _ = known.spans
    _, start, stop = spans[0]
    size = stop - start
    held = hidden[:, start:stop]
    singles = [kind for kind, k in zip(kinds, copies, strict=True) if k == 1][:12]
    p = size * (size - 1) / (unseen * (unseen - 1))
    for a, b in itertools.combinations(singles, 2):
        both = int(((held == a).any(axis=1) & (held == b).any(axis=1)).sum())
        if abs(both - count * p) > SIGMAS * np.sqrt(count * p * (1 - p)):
            found.append(f"cards {a} and {b} are not as likely as any other pair to share a hand")
    return found


@pytest.mark.parametrize("game_id, players, moves", [("huit", 2, 6), ("huit", 4, 3), ("switch", 4, 5)])
def test_the_unseen_cards_are_dealt_uniformly(game_id: str, players: int, moves: int) -> None:
    _, known = known_at(game_id, players, moves)
    assert biased(known) == []
    under = known.deal(np.random.default_rng(2), 5000).under
    if under.shape[1] > 1:
        first = (under[:, 0] == known.under[0]).mean()
        assert abs(first - 1 / under.shape[1]) < SIGMAS * np.sqrt(1 / under.shape[1] / 5000)


def test_the_count_tests_catch_a_dealer_that_only_rotates_the_cards() -> None:
    """A dealer of uniformly random rotations puts every card everywhere equally often, but some pairs of
    cards never share a hand: the pair test says so. A fixed order fails the place test."""
    _, known = known_at("huit", 2, 6)
    rng = np.random.default_rng(3)

    def rotations(count: int) -> np.ndarray:
        shifts = rng.integers(known.unseen.size, size=count)
        return np.stack([np.roll(known.unseen, s) for s in shifts])

    found = biased_deal(known, rotations)
    assert found and all("share a hand" in what for what in found)
    assert any("every place" in what for what in biased_deal(
        known, lambda count: np.tile(known.unseen, (count, 1))))


def test_worlds_go_only_into_the_slots_given() -> None:
    game, known = known_at("switch", 4, 5)
    batch = game.spec.batched_engine()(game.rules, 16, seed=0)
    before = {slot: batch.state_dict(slot) for slot in range(16)}
    grid = np.array([[9, 3, 12], [4, 15, 0]])
    known.sample_into(batch, grid, np.random.default_rng(0))
    for slot in set(range(16)) - set(grid.ravel().tolist()):
        assert batch.state_dict(slot) == before[slot]


@pytest.mark.parametrize("game_id", ["huit", "switch"])
def test_a_bad_grid_of_slots_is_refused(game_id: str) -> None:
    game, known = known_at(game_id, 3, 2)
    batch = game.spec.batched_engine()(game.rules, 8, seed=0)
    worlds = known.deal(np.random.default_rng(0), 2)
    for grid, says in [(np.array([0, 1]), "grid"), (np.array([[0], [1], [2]]), "grid"),
                       (np.array([[0, 1], [1, 2]]), "distinct"), (np.array([[0, 1], [2, 8]]), r"0\.\.7"),
                       (np.array([[0.0], [1.0]]), "grid")]:
        with pytest.raises(ValueError, match=says):
            batch.load_worlds(known, worlds, grid)
    with pytest.raises(ValueError, match="whole number of worlds"):
        known.deal(np.random.default_rng(0), -1)
    other = make_game(game_id, num_players=4)
    with pytest.raises(ValueError, match="rules"):
        other.spec.batched_engine()(other.rules, 8, seed=0).load_worlds(known, worlds, np.array([[0], [1]]))


def test_the_worlds_of_one_deal_are_each_its_own() -> None:
    _, known = known_at("huit", 4, 3)
    worlds = known.deal(np.random.default_rng(0), 50)
    assert isinstance(worlds, Worlds) and worlds.count == 50
    assert len({tuple(row) for row in worlds.hidden.tolist()}) == 50
    assert all(sorted(row) == sorted(known.unseen.tolist()) for row in worlds.hidden.tolist())


@pytest.mark.parametrize("game_id, players", [("huit", 3), ("switch", 5)])
def test_row_queries_are_the_rows_of_the_whole_batch(game_id: str, players: int) -> None:
    game = make_game(game_id, num_players=players)
    batch = game.spec.batched_engine()(game.rules, 64, seed=1)
    rng = np.random.default_rng(2)
    for _ in range(60):
        mask, seats = batch.legal_mask(), batch.current_player()
        rows = np.flatnonzero(rng.random(64) < 0.4)
        np.testing.assert_array_equal(batch.legal_mask(rows), mask[rows])
        np.testing.assert_array_equal(batch.observe(seats[rows], rows), batch.observe(seats)[rows])
        np.testing.assert_array_equal(only_legal(mask[rows]),
                                      [a[0] if a.size == 1 else -1 for a in map(np.flatnonzero, mask[rows])])
        _, done, truncated = batch.step(sample_legal(mask, rng))
        batch.reset(done | truncated)
    with pytest.raises(ValueError, match=r"slot indices 0\.\.63"):
        batch.legal_mask(np.array([64]))
    with pytest.raises(ValueError, match="seat indices"):
        batch.observe(np.zeros(3, dtype=np.int64), np.array([0, 1]))


def test_switch_refuses_an_illegal_move_after_a_mask_of_some_rows() -> None:
    """The step reads the last mask back only where it covers every slot that moves."""
    game = make_game("switch", num_players=4)
    batch = game.spec.batched_engine()(game.rules, 8, seed=3)
    mask = batch.legal_mask()
    actions = sample_legal(mask, np.random.default_rng(0))
    batch.legal_mask(np.array([0, 1]))
    illegal = int(np.flatnonzero(~mask[5])[0])
    actions[5] = illegal
    with pytest.raises(ValueError, match="slot 5: illegal action"):
        batch.step(actions)
    active = np.zeros(8, dtype=np.bool_)
    active[[0, 1]] = True
    batch.step(actions, active)  # covered by the mask of rows 0 and 1: slot 5 waits


@pytest.mark.parametrize("game_id", ["huit", "switch"])
def test_reseed_restarts_the_generators_as_the_constructor_seeds_them(game_id: str) -> None:
    game = make_game(game_id, num_players=2)
    engine = game.spec.batched_engine()
    batch = engine(game.rules, 4, seed=1)
    for gen in batch.generators:
        gen.random(3)
    batch.reseed(7)
    assert [g.bit_generator.state for g in batch.generators] == [
        np.random.default_rng(child).bit_generator.state for child in np.random.SeedSequence(7).spawn(4)]
    dealt = [batch.state_dict(slot) for slot in range(4)]
    batch.reset()
    assert [batch.state_dict(slot) for slot in range(4)] == [
        engine(game.rules, 4, seed=7).state_dict(slot) for slot in range(4)]
    assert dealt != [batch.state_dict(slot) for slot in range(4)]


@pytest.mark.parametrize("game_id", ["huit", "switch"])
def test_the_generic_engine_loads_the_same_worlds(game_id: str) -> None:
    """The always-there engine (a state per slot) takes worlds as the game's own does, and answers row
    queries the same."""
    game, known = known_at(game_id, 3, 4)
    own = game.spec.batched_engine()(game.rules, 8, seed=0)
    generic = without_engine(game_id).batched_engine()(game.rules, 8, seed=0)
    worlds = known.deal(np.random.default_rng(4), 3)
    grid = np.array([[6, 1], [0, 3], [7, 2]])
    own.load_worlds(known, worlds, grid)
    generic.load_worlds(known, worlds, grid)
    rows = grid.ravel()
    for slot in rows:
        assert {**generic.state_dict(int(slot)), "rng": None} == {**own.state_dict(int(slot)), "rng": None}
    np.testing.assert_array_equal(generic.legal_mask(rows), own.legal_mask(rows))
    seats = own.current_player()[rows]
    np.testing.assert_array_equal(generic.observe(seats, rows), own.observe(seats, rows))
