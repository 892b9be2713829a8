"""What a play loop shows an agent beyond its observation (`Agent.sees`, `Agent.show`, `show_table`).

Every loop that asks an agent for a move in an env (evaluation's episodes and
so comparisons, the web app's tables, the single-seat trainer's opponents and
teacher) shows an agent that sees "record" the hand's public record as its
seat saw it, before each move; the record never names a card no other seat
could see (cards only in lays and the starter: A3, B5; draws give a number,
A8, B9); "state" is a copy of the true state, refused at a person's table.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np
import pytest

from cardlab.agents.base import Agent, register, show_table
from cardlab.envs import make_env
from cardlab.envs.record import LAY, STARTER, Record
from cardlab.evaluation.episodes import run_episode


class RecordSpy(Agent):
    """Random legal moves; refuses to act unless shown the record since its last move, and logs it."""

    name = "test_record_spy"
    sees = frozenset({"record"})
    shown_records: ClassVar[list[Record]] = []

    def __init__(self, game: Any, seed: int | None = None) -> None:
        super().__init__(game, seed)
        self.pending: Record | None = None

    def show(self, seen: Mapping[str, Any]) -> None:
        assert set(seen) == {"record"}
        self.pending = seen["record"]

    def act(self, observation: dict[str, np.ndarray]) -> int:
        assert self.pending is not None, "asked to act without being shown the record first"
        RecordSpy.shown_records.append(self.pending)
        self.pending = None
        legal = np.flatnonzero(observation["action_mask"])
        return int(legal[self.rng.integers(legal.size)])


class StateSpy(RecordSpy):
    name = "test_state_spy"
    sees = frozenset({"state"})

    def show(self, seen: Mapping[str, Any]) -> None:
        assert set(seen) == {"state"}
        seen["state"].hands[0][:] = 0  # a copy: the env's state must not change
        self.pending = Record((), True)


register(RecordSpy.name, RecordSpy)
register(StateSpy.name, StateSpy)


@pytest.fixture(autouse=True)
def _clear() -> None:
    RecordSpy.shown_records.clear()


def only_public(record: Record) -> None:
    """No event names a card but a lay (B5, A5) or the starter (A3); draws and deals give numbers only."""
    for event in record.events:
        if event.cards:
            assert event.kind in (LAY, STARTER), event


@pytest.mark.parametrize("game", ["huit", "switch"])
def test_run_episode_shows_each_seat_its_record_before_every_move(game: str) -> None:
    env = make_env(game, num_players=3)
    raw = env.unwrapped
    spies = [RecordSpy(raw.game, seed=s) for s in range(3)]
    checked = 0

    def before_step(seat: int, action: int) -> None:
        nonlocal checked
        shown = RecordSpy.shown_records[-1]
        name = raw.possible_agents[seat]
        assert shown == raw.public_record(name)  # the record of this seat, seats numbered from it
        assert shown.complete
        only_public(shown)
        # Every seat sees the same events: renumbered, the record of seat 0 is this one.
        assert raw.public_record(raw.possible_agents[0]).seen_from(seat, 3) == shown
        checked += 1

    run_episode(env, spies, seed=3, before_step=before_step)
    assert checked == len(RecordSpy.shown_records) > 5


def test_evaluation_shows_the_record() -> None:
    from cardlab.evaluation.episodes import HAND
    from cardlab.evaluation.evaluate import play_deals

    records = play_deals("huit", {"num_players": 2}, [RecordSpy.name, "expert"], HAND, range(2), 0)
    assert len(records) == 4  # two deals, each with both seatings
    assert RecordSpy.shown_records and all(r.complete for r in RecordSpy.shown_records)
    for record in RecordSpy.shown_records:
        only_public(record)


def test_the_web_app_table_shows_the_record_and_refuses_a_cheat() -> None:
    from cardlab.envs import make_game
    from cardlab.serve.table import Player, Table

    game = make_game("huit", {"num_players": 2})
    table = Table(game, 0, [Player("you", None), Player("spy", RecordSpy.name)], seed=1)
    table.start()
    for _ in range(30):
        if table.hand.over:
            break
        table.move(game.action_to_str(table.hand.env.legal_actions()[0]))
    assert RecordSpy.shown_records
    for record in RecordSpy.shown_records:
        only_public(record)
        assert all(e.seat in (0, 1) for e in record.events if e.seat >= 0)
    with pytest.raises(ValueError, match="sees the true state"):
        Table(game, 0, [Player("you", None), Player("cheat", StateSpy.name)], seed=1)


def test_single_seat_opponents_and_teacher_are_shown_the_record() -> None:
    from cardlab.training.arena.single_seat import SingleSeatEnv

    env = SingleSeatEnv("huit", 2, opponents=[RecordSpy.name])
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(40):
        _, _, terminated, truncated, _ = env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
        if terminated or truncated:
            env.reset()
    opponents = len(RecordSpy.shown_records)
    assert opponents > 0
    env.demonstrate(RecordSpy.name, hands=1, gamma=0.99)
    assert len(RecordSpy.shown_records) > opponents
    for record in RecordSpy.shown_records:
        only_public(record)


def test_the_state_shown_is_a_copy() -> None:
    env = make_env("huit", num_players=2)
    env.reset(seed=0)
    raw = env.unwrapped
    before = raw.game_state.hands[0].copy()
    spy = StateSpy(raw.game)
    show_table(spy, env, env.agent_selection)
    assert spy.pending is not None
    assert (raw.game_state.hands[0] == before).all() and before.any()


def test_an_agent_seeing_something_unknown_is_refused() -> None:
    env = make_env("huit", num_players=2)
    env.reset(seed=0)
    spy = RecordSpy(env.unwrapped.game)
    spy.sees = frozenset({"minds"})
    with pytest.raises(ValueError, match="may see 'record' and 'state'"):
        show_table(spy, env, env.agent_selection)


def test_batched_evaluation_refuses_an_agent_that_sees_more() -> None:
    from cardlab.evaluation.batched_deals import play_hands_batched

    with pytest.raises(ValueError, match="batched play cannot show it"):
        play_hands_batched("huit", {"num_players": 2}, [RecordSpy.name, "expert"], range(1), 0)
