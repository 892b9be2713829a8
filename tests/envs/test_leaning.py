"""Worlds dealt by a leaning (`cardlab.envs.worlds_by_reading`): exact sizes, the record's slots filled, the
leaning followed.

A hand reader's output reaches the search only through `Determinization.leaning`;
these claims hold for any leaning, so they are checked with made-up ones at real
positions (Huit, and Switch where the record proves what a seat holds, A8).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from cardlab.agents.agent_spec import make_agent
from cardlab.envs import make_env
from cardlab.envs.cards import NUM_KINDS
from cardlab.envs.hand_constraints import fits
from cardlab.envs.worlds_by_reading import expected, lean_rows, places
from cardlab.evaluation.episodes import seat_zero_choices


def choices(game: str, players: int, hands: int = 3) -> Iterator[Any]:
    env = make_env(game, num_players=players)
    agents = [make_agent("expert", env.unwrapped.game, seed=s) for s in range(players)]
    for hand in range(hands):
        yield from seat_zero_choices(env, agents, seed=hand)


def hands_of(known: Any, row: np.ndarray) -> dict[int, np.ndarray]:
    spans, _pile = known.spans
    return {seat: np.bincount(row[start:stop], minlength=NUM_KINDS) for seat, start, stop in spans}


@pytest.mark.parametrize(("game", "players"), [("huit", 4), ("switch", 4)])
def test_worlds_keep_sizes_cards_and_slots(game: str, players: int) -> None:
    rng = np.random.default_rng(0)
    slotted = 0
    for choice in choices(game, players):
        known = choice.determinization()
        leaning = rng.random((NUM_KINDS, players))
        worlds = dataclasses.replace(known, leaning=leaning).deal(rng, 16)
        for row in worlds.hidden:
            assert sorted(row.tolist()) == sorted(known.unseen.tolist())  # every unseen card, once
            held = hands_of(known, row)
            for slot in known.slots:  # what the record proves (A8) holds in every world
                assert fits(held[slot.seat], [s for s in known.slots if s.seat == slot.seat])
        slotted += bool(known.slots)
    if game == "switch":
        assert slotted, "no Switch position with slots was met: the slot check above checked nothing"


def test_a_confident_leaning_is_followed() -> None:
    choice = next(c for c in choices("huit", 4) if c.determinization().sizes[1] >= 3)
    known = choice.determinization()
    card = int(known.unseen[0])
    leaning = np.ones((NUM_KINDS, 4))  # places: seats 1, 2, 3 (from the reader), then the pile
    leaning[card] = [0.98, 0.01, 0.01, 0.0]
    worlds = dataclasses.replace(known, leaning=leaning).deal(np.random.default_rng(1), 400)
    in_seat_1 = np.mean([hands_of(known, row)[1][card] > 0 for row in worlds.hidden])
    uniform = known.deal(np.random.default_rng(1), 400)
    base = np.mean([hands_of(known, row)[1][card] > 0 for row in uniform.hidden])
    assert in_seat_1 > 0.85 > base + 0.3


def test_the_same_generator_deals_the_same_worlds() -> None:  # C2
    known = next(choices("switch", 4)).determinization()
    leaned = dataclasses.replace(known, leaning=np.random.default_rng(3).random((NUM_KINDS, 4)))
    first = leaned.deal(np.random.default_rng(7), 8).hidden
    again = leaned.deal(np.random.default_rng(7), 8).hidden
    other = leaned.deal(np.random.default_rng(8), 8).hidden
    assert np.array_equal(first, again) and not np.array_equal(first, other)


def test_expected_copies_add_up_to_the_rows_and_the_room() -> None:
    known = next(choices("huit", 3)).determinization()
    room = places(known)
    copies = np.bincount(known.unseen, minlength=NUM_KINDS).astype(float)
    share = expected(np.random.default_rng(0).random((NUM_KINDS, room.size)), copies, room)
    assert np.allclose(share.sum(axis=1), copies, atol=1e-3)
    assert np.allclose(share.sum(axis=0), room, atol=1e-3)


def test_a_leaning_of_the_wrong_shape_is_refused() -> None:
    known = next(choices("huit", 4)).determinization()
    with pytest.raises(ValueError, match=r"a leaning for 4 seats is \(53, 4\)"):
        lean_rows(known, np.ones((NUM_KINDS, 3)), np.random.default_rng(0), 2)


def test_slots_that_compete_for_scarce_kinds_are_dealt_again_not_refused() -> None:
    """Three seats' one-card slots over three kinds with one unseen copy each, every slot allowing two of
    them: the slots can be filled (a cycle), but a fill in order meets a dead end in about a world in four.
    Such a world is dealt again, as `deal_slots` does. Before: the first dead end refused the whole deal
    ("the record does not fit the observation"), which stopped a search at Switch 6p (A8's voids of three
    seats over the last copies of a few kinds)."""
    from cardlab.envs.hand_constraints import Slot

    known = next(c for c in choices("huit", 4) if min(c.determinization().sizes) >= 2).determinization()
    k1, k2, k3 = (int(k) for k in known.unseen[:3])
    seats = [(known.seat + r) % 4 for r in (1, 2, 3)]
    slots = [Slot(seat, 1, np.isin(np.arange(NUM_KINDS), pair))
             for seat, pair in zip(seats, [(k1, k2), (k2, k3), (k3, k1)], strict=True)]
    crafted = dataclasses.replace(known, slots=slots, leaning=np.ones((NUM_KINDS, 4)))
    worlds = crafted.deal(np.random.default_rng(0), 256)
    for row in worlds.hidden:
        held = hands_of(crafted, row)
        assert all(fits(held[slot.seat], [slot]) for slot in slots)
    assert len({tuple(row) for row in worlds.hidden}) > 1
