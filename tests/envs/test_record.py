"""The public record of a hand (`cardlab.envs.record`): what it holds, what it never holds, how it is saved.

Leak tests in the spirit of the web API's (tests/serve/test_serve_leaks.py):
whole hands of random play at several table sizes of both games, each step's
new events checked against the engine's own before/after state, so a card
that only its holder saw (a drawn card) can never be in them. Scenarios cite
the rules whose events they check.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import numpy as np
import pytest

from cardlab.envs import cards as C
from cardlab.envs import huit_v1, make_game, switch_v1
from cardlab.envs.huit.batched import HuitBatch
from cardlab.envs.huit.rules import HuitRules, HuitState
from cardlab.envs.record import DEAL, DRAW, LAY, PASS, REFILL, STARTER, Event, Record
from cardlab.envs.switch.batched import SwitchBatch
from cardlab.envs.switch.rules import SwitchRules, SwitchState
from tests.envs.helpers import dealt, play, play_all

TABLES = [("huit", 2), ("huit", 4), ("huit", 6), ("switch", 2), ("switch", 4), ("switch", 7)]


def texts(record: Record) -> list[str]:
    return [e.text() for e in record.events]


def played_counts(state: Any) -> Counter[int]:
    return Counter(getattr(state, state.PILES[1]))


@pytest.mark.parametrize(("game", "players"), TABLES)
def test_the_record_holds_what_the_table_saw_and_no_drawn_card(game: str, players: int) -> None:
    """Each step's events against the state before and after it; every seat sees the same events."""
    options: dict[str, Any] = {"num_players": players}
    if game == "switch":
        options.update(num_decks=1, hand_size=5)  # a small deck: the stock runs out and refills (A10)
    table = make_game(game, options)
    rng = np.random.default_rng(players)
    kinds: Counter[int] = Counter()
    for hand in range(3):
        state = table.new_state(np.random.default_rng(100 * players + hand))
        record = state.public_record()
        assert record.complete
        assert [e for e in record.events if e.kind == DEAL] == [Event(DEAL, s, number=state.sizes[s])
                                                                for s in range(players)]
        while not state.hand_over:
            seat, before = state.current, len(state.events)
            held, sizes, played = state.hands[seat].copy(), list(state.sizes), played_counts(state)
            state.apply(int(rng.choice(state.legal_actions())))
            new = state.public_record().events[before:]
            assert new and all(e.seat in (seat, -1) for e in new)
            for event in new:
                kinds[event.kind] += 1
                if event.kind == LAY:  # the cards that left the hand are the cards laid, in the pile's order
                    gone = held - state.hands[seat]
                    assert Counter(event.cards) == Counter(C.counts_to_cards(gone.tolist()))
                    assert list(getattr(state, state.PILES[1])[-len(event.cards):]) == list(event.cards)
                else:  # nothing else names a card: a drawn card's identity stays hidden
                    assert event.cards == ()
                if event.kind == DRAW:
                    assert event.number == state.sizes[seat] - sizes[seat]
                if event.kind == REFILL:
                    assert event.number == sum(played.values()) - 1
            for viewer in range(players):
                seen = state.public_record(viewer)
                assert seen == state.public_record().seen_from(viewer, players)
                assert [e.seat for e in seen.events] == [
                    -1 if e.seat == -1 else (e.seat - viewer) % players for e in state.events]
                assert [e._replace(seat=0) for e in seen.events] == [e._replace(seat=0) for e in state.events]
        saved = json.loads(json.dumps(state.state_dict()))  # saved states carry the record, as JSON
        assert type(state).from_state_dict(saved, table.rules).public_record() == state.public_record()
    assert kinds[LAY] and kinds[DRAW]
    if game == "huit":
        assert kinds[PASS]


def test_the_env_gives_each_agent_the_record_from_its_seat() -> None:
    """`public_record(agent)`: seats numbered from the agent's own; the observation is unchanged."""
    env = dealt(switch_v1.env, {"hands": [["9H", "3C"], ["4S", "5C"], ["KD", "7D"]], "starter": "7H",
                                "stock": ["6C", "QC"]}, num_players=3)
    before = env.observe("player_1")["observation"].copy()
    play(env, "play 9H")
    play(env, "draw")  # A8: seat 1 holds no heart, no 9 and no wild card
    assert texts(env.unwrapped.public_record("player_0"))[-2:] == ["seat 0 lay 9H", "seat 1 draw 1 on H"]
    assert texts(env.unwrapped.public_record("player_1"))[-2:] == ["seat 2 lay 9H", "seat 0 draw 1 on H"]
    assert texts(env.unwrapped.public_record("player_2"))[-2:] == ["seat 1 lay 9H", "seat 2 draw 1 on H"]
    assert before.shape == env.observe("player_1")["observation"].shape
    with pytest.raises(ValueError, match="unknown agent 'player_9'"):
        env.unwrapped.public_record("player_9")


# ---------------------------------------------------------------- Switch scenarios
def switch_env(hands: list[list[str]], starter: str, stock: list[str], **options: Any) -> Any:
    deal = {"hands": hands, "starter": starter, "stock": stock}
    return dealt(switch_v1.env, deal, num_players=len(hands), **options)


def test_A3_A4_the_deal_and_the_starter_open_the_record() -> None:
    """A3: each seat's dealt count, then the starter; A4: a Jack starter's suit call is an event."""
    env = switch_env([["9H", "3C"], ["4S", "5C"]], "JD", ["6C"])
    play(env, "declare S")
    assert texts(env.unwrapped.public_record("player_0")) == [
        "seat 0 deal 2", "seat 1 deal 2", "starter JD", "seat 0 call declare S"]


def test_A5_A6_A8_penalty_and_offered_draws() -> None:
    """A6: a run drawn is a penalty draw; A5: a Jack's declared suit; A8: a forced draw whose card can be
    laid is offered (the drawer keeps the turn), then passed or laid; the drawn card is never named."""
    env = switch_env([["2H", "JC", "5S"], ["4S", "3D", "KS"]], "7H", ["8D", "7D", "9C", "5C"])
    play_all(env, ["play 2H", "draw", "play JC declare C", "draw", "pass", "draw", "play 5C"])
    assert texts(env.unwrapped.public_record("player_0"))[3:] == [
        "seat 0 lay 2H", "seat 1 draw 2 on H penalty", "seat 0 lay JC declare C",
        "seat 1 draw 1 on C offered", "seat 1 pass", "seat 0 draw 1 on C offered", "seat 0 lay 5C"]


def test_A8_A10_an_unplayable_draw_ends_the_turn_and_a_refill_names_no_card() -> None:
    """A8: a drawn card that cannot be laid ends the turn (not offered); A10: the discard pile but its
    top card shuffled into the stock is a refill event of its size."""
    env = switch_env([["9H", "3C"], ["4S", "5C"]], "7H", ["6C"])
    play_all(env, ["play 9H", "draw", "draw", "play 7H"])
    assert texts(env.unwrapped.public_record("player_1"))[3:] == [
        "seat 1 lay 9H", "seat 0 draw 1 on H", "refill 1", "seat 1 draw 1 on H offered", "seat 1 lay 7H"]


# ---------------------------------------------------------------- Huit scenarios
def huit_hand() -> Any:
    """B4 one card on the empty table, B9 draw then pass, B5 a group (first card matching, last on top),
    B6 8s announce a suit, B7 the Ace's 2-card penalty, B10 the table turned over into the bank."""
    deal = {"hands": [["9S", "10S", "10H", "8C", "AS", "7S"], ["7D", "10D", "QC"]],
            "bank": ["KD", "JH", "7C"]}
    env = dealt(huit_v1.env, deal, num_players=2)
    play_all(env, ["play 9S", "draw", "pass", "play 10S 10H", "play 10D", "play 8C declare S", "draw", "pass",
                   "play AS", "draw"])
    return env


def test_B4_to_B10_lays_groups_calls_draws_passes_penalty_and_refill() -> None:
    env = huit_hand()
    assert texts(env.unwrapped.public_record("player_0")) == [
        "seat 0 deal 6", "seat 1 deal 3", "seat 0 lay 9S", "seat 1 draw 1 on S", "seat 1 pass",
        "seat 0 lay 10S 10H", "seat 1 lay 10D", "seat 0 lay 8C declare S", "seat 1 draw 1 on S",
        "seat 1 pass", "seat 0 lay AS", "refill 5", "seat 1 draw 2 on S penalty"]


# ---------------------------------------------------------------- saved states and other sources
def test_saved_states_carry_the_record_and_older_files_restore_it_empty_and_incomplete() -> None:
    state = huit_hand().unwrapped.game_state
    saved = state.state_dict()
    rules = HuitRules(num_players=2)
    assert HuitState.from_state_dict(saved, rules).public_record() == state.public_record()
    old = {k: v for k, v in saved.items() if k != "record"}
    restored = HuitState.from_state_dict(old, rules)
    assert restored.public_record() == Record((), False)
    restored.apply(restored.legal_actions()[0])  # play goes on: later events are noted, still incomplete
    assert len(restored.events) >= 1 and not restored.record_complete


@pytest.mark.parametrize(("change", "message"), [
    ({"complete": "yes"}, r"\['complete'\] must be true or false"),
    ({"events": [{"kind": "shout"}]}, r"\['events'\]\[0\] must be a dict with the keys kind, seat"),
    ({"extra": 1}, "must be a dict with the keys complete and events"),
])
def test_a_bad_saved_record_is_refused_with_what_is_accepted(change: dict[str, Any], message: str) -> None:
    saved = huit_hand().unwrapped.game_state.state_dict()
    saved["record"] = {**saved["record"], **change}
    with pytest.raises(ValueError, match=message):
        HuitState.from_state_dict(saved, HuitRules(num_players=2))


def test_a_saved_event_with_a_card_outside_the_deck_or_a_bad_seat_is_refused() -> None:
    saved = huit_hand().unwrapped.game_state.state_dict()
    event = saved["record"]["events"][2]
    for key, value, message in [("cards", ["2S"], "cards of the deck"), ("seat", 2, "a seat 0..1"),
                                ("kind", "shout", "must be one of deal, starter")]:
        saved["record"]["events"][2] = {**event, key: value}
        with pytest.raises(ValueError, match=message):
            HuitState.from_state_dict(saved, HuitRules(num_players=2))


def test_batched_slots_and_sampled_worlds_have_an_empty_incomplete_record() -> None:
    """The batched engines keep no record: `to_state` and `state_dict` say the past is unknown."""
    engines: list[tuple[Any, Any]] = [
        (HuitBatch(HuitRules(), 2, seed=1), HuitState(HuitRules(), np.random.default_rng(1))),
        (SwitchBatch(SwitchRules(), 2, seed=1), SwitchState(SwitchRules(), np.random.default_rng(1)))]
    for batch, state in engines:
        assert state.public_record().complete
        batch.load(1, state)
        assert batch.to_state(1).public_record() == Record((), False)
        assert batch.state_dict(1)["record"] == {"complete": False, "events": []}
    game = make_game("switch", {})
    state = game.new_state(np.random.default_rng(2))
    seat = state.current
    world = game.determinize({"observation": game.observer.observe(state, seat),
                              "action_mask": np.isin(np.arange(game.num_actions), state.legal_actions())},
                             np.random.default_rng(3), seat, state.public_record(seat))
    assert world.public_record() == Record((), False)
    assert [e.kind for e in state.events[:5]] == [DEAL] * 4 + [STARTER]
