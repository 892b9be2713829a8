"""Property tests of both envs over random legal play (RULES.md A2-A10, B1-B10, C1, C2).

Hypothesis draws the seed and the rule options; a seeded generator then picks
random legal actions. The main check is the action mask against a brute-force
legality reference written here from RULES.md, independent of the engines: it
reads only `state_dict()` (card strings) and enumerates moves the slow, obvious way.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from itertools import combinations, permutations
from types import ModuleType
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pettingzoo import AECEnv

from cardlab.envs import huit_v1, switch_v1
from cardlab.envs.huit.rules import HuitRules
from cardlab.envs.options import RuleOptions
from cardlab.envs.switch.rules import SwitchRules
from tests.envs.helpers import dealt, play, play_random

MODULES: dict[str, ModuleType] = {"switch": switch_v1, "huit": huit_v1}
SUITS = ("S", "H", "D", "C")
SWITCH_RANKS = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
HUIT_RANKS = ("7", "8", "9", "10", "J", "Q", "K", "A")
SWITCH_POINTS = {"JOKER": 50, "2": 20, "A": 15, "K": 10, "Q": 10, "J": 10, "10": 10}  # A11, others 5
HUIT_POINTS = {"8": 32, "A": 11, "10": 10, "9": 9, "7": 7, "K": 4, "Q": 3, "J": 2}  # B11
SEEDS = st.integers(0, 2**32 - 1)
PROPERTY_SETTINGS = settings(max_examples=50, deadline=None)
# Random play with many 2s and Jokers can stall for thousands of turns (hands only grow) until C1
# truncates it; a lower cap than the defaults keeps the file fast. The C1 test also plays the defaults.
FAST_MAX_TURNS = 800

Options = dict[str, Any]
Move = tuple[Any, ...]


# ---------------------------------------------------------------- option strategies
KEPT_AT_DEFAULT = {"target_score", "streak_length", "streak_bonus"}
"""Match scoring, which the property tests leave at its default (the match tests draw it); every other
option a strategy does not draw itself is drawn from its declaration by `declared_rest`."""


def declared_rest(draw: st.DrawFn, rules: type[RuleOptions], chosen: Options) -> Options:
    """`chosen`, plus a value of every other option of `rules` drawn from its declaration (a bool either
    way, a whole number within its range near the default), so a new option is drawn without an edit."""
    out = dict(chosen)
    for field in rules.describe():
        if field.name in out or field.name in KEPT_AT_DEFAULT:
            continue
        low, high = rules.limits(field.name)
        if isinstance(field.default, bool):
            out[field.name] = draw(st.booleans())
        elif low is not None and high is not None:
            out[field.name] = draw(st.integers(low, min(high, max(field.default, low) * 2 + 1)))
        else:
            raise AssertionError(f"{rules.GAME} option {field.name} is neither a bool nor a bounded whole "
                                 "number: draw it in the game's strategy")
    return out


@st.composite
def switch_options(draw: st.DrawFn) -> Options:
    """Switch rule options (A1, A2, A3, A5, A8, memory), small decks included so the stock runs out (A10)."""
    num_players = draw(st.integers(2, 10))
    num_decks = draw(st.integers(1, 4))
    extra_jokers = draw(st.integers(0, 6))
    extra_twos = draw(st.integers(0, 6))
    deck_size = 54 * num_decks + extra_jokers + extra_twos
    return declared_rest(draw, SwitchRules, {
        "num_players": num_players,
        "num_decks": num_decks,
        "extra_jokers": extra_jokers,
        "extra_twos": extra_twos,
        "hand_size": draw(st.integers(1, min(10, (deck_size - 1) // num_players))),
        "match_rank": draw(st.booleans()),
        "play_after_draw": draw(st.booleans()),
        "voluntary_draw": draw(st.booleans()),
        "memory": draw(st.booleans()),
        "max_turns": FAST_MAX_TURNS,
    })


@st.composite
def huit_options(draw: st.DrawFn) -> Options:
    """Huit rule options (B2, B8, B10, and `memory`), including hand_size 'all' (no bank at all)."""
    num_players = draw(st.integers(2, 6))
    return declared_rest(draw, HuitRules, {
        "num_players": num_players,
        "hand_size": draw(st.one_of(st.just("all"), st.integers(1, 32 // num_players))),
        "queen_skips_each": draw(st.booleans()),
        "shuffle_on_refill": draw(st.booleans()),
        "memory": draw(st.booleans()),
        "max_turns": FAST_MAX_TURNS,
    })


GAMES = st.one_of(
    switch_options().map(lambda o: ("switch", o)),
    huit_options().map(lambda o: ("huit", o)),
)


# ---------------------------------------------------------------- playing
def make_env(game: str, options: Options, seed: int | None = None) -> AECEnv:
    env = MODULES[game].env(**options)
    env.reset(seed=seed)
    return env


def mask_ids(env: AECEnv) -> list[int]:
    return np.flatnonzero(env.observe(env.agent_selection)["action_mask"]).tolist()


def episode_ended(env: AECEnv) -> bool:
    _, _, terminated, truncated, _ = env.last()
    return terminated or truncated


def play_checked(
    env: AECEnv, rng: np.random.Generator, steps: int, check: Callable[[AECEnv], None]
) -> list[int]:
    """Like `helpers.play_random`, but picks from the observed mask and runs `check` before each step."""
    actions: list[int] = []
    while len(actions) < steps and not episode_ended(env):
        check(env)
        action = int(rng.choice(mask_ids(env)))
        env.step(action)
        actions.append(action)
    return actions


def final_rewards(env: AECEnv) -> dict[str, float]:
    """Each agent's reward as `last()` reports it after the end, stepping the dead agents out."""
    rewards: dict[str, float] = {}
    for agent in env.agent_iter():
        _, reward, terminated, truncated, _ = env.last()
        assert terminated or truncated, f"{agent} is still live after the end"
        assert agent not in rewards, f"{agent} is asked to act twice after the end"
        rewards[agent] = float(reward)
        env.step(None)
    return rewards


# ---------------------------------------------------------------- card notation (independent of envs.cards)
def rank(card: str) -> str | None:
    return None if card == "JOKER" else card[:-1]


def suit(card: str) -> str | None:
    return None if card == "JOKER" else card[-1]


def deck_counts(game: str, options: Options) -> Counter[str]:
    """The deck of A2 (extra 2s to S H D C in turn, as `switch.rules` documents) or B1."""
    if game == "huit":
        return Counter(r + s for r in HUIT_RANKS for s in SUITS)
    decks = options["num_decks"]
    counts = Counter({r + s: decks for r in SWITCH_RANKS for s in SUITS})
    counts["JOKER"] = 2 * decks + options["extra_jokers"]
    for i in range(options["extra_twos"]):
        counts["2" + SUITS[i % 4]] += 1
    return counts


def cards_in_play(state: dict[str, Any]) -> Counter[str]:
    piles = ("stock", "discard") if state["game"] == "switch" else ("bank", "table")
    return Counter([c for hand in state["hands"] for c in hand] + state[piles[0]] + state[piles[1]])


def card_points(game: str, card: str) -> int:
    if game == "switch":
        return SWITCH_POINTS.get(card, SWITCH_POINTS.get(rank(card) or "", 5))
    return HUIT_POINTS[rank(card) or ""]


# ---------------------------------------------------------------- reference legality
def switch_can_follow(card: str, state: dict[str, Any], match_rank: bool) -> bool:
    """A4/A5: Joker and Jacks always; the current suit (any card while it is free); the top's rank."""
    top, current = state["discard"][-1], state["current_suit"]
    if card == "JOKER" or rank(card) == "J" or current is None or suit(card) == current:
        return True
    return match_rank and top != "JOKER" and rank(card) == rank(top)


def switch_plays(card: str) -> set[Move]:
    if rank(card) == "J":
        return {("play", card, s) for s in SUITS}
    return {("play", card, None)}


def switch_reference(state: dict[str, Any], rules: Options) -> set[Move]:
    """Legal moves of the player to move, from RULES.md A4-A9."""
    if state["hand_over"]:
        return set()
    if state["phase"] == "declare":  # A4: Jack starter
        return {("declare", s) for s in SUITS}
    hand = set(state["hands"][state["current_player"]])
    if state["phase"] == "after_draw":  # A8: the drawn card, or end the turn
        drawn = state["drawn_card"]
        assert rules["play_after_draw"], "after_draw phase although play_after_draw is off"
        assert drawn in hand and state["pending_draw"] == 0
        assert switch_can_follow(drawn, state, rules["match_rank"]), f"drawn {drawn} cannot be played"
        return switch_plays(drawn) | {("pass",)}
    if state["pending_draw"]:  # A6: add a 2 or a Joker, or draw the run
        if sum(1 for h in state["hands"] if h) == 1:  # A9: the last player with cards draws the run
            return {("draw",)}
        return {m for c in hand if c == "JOKER" or rank(c) == "2" for m in switch_plays(c)} | {("draw",)}
    moves = {m for c in hand if switch_can_follow(c, state, rules["match_rank"]) for m in switch_plays(c)}
    if not moves or rules["voluntary_draw"]:  # A8
        moves.add(("draw",))
    return moves


def huit_order_legal(order: tuple[str, ...], state: dict[str, Any]) -> bool:
    """B4-B7: may the cards be laid in this order (first laid first)?"""
    group_rank = rank(order[0])
    if not state["table"]:  # B4
        return len(order) == 1 or group_rank == "8"
    if group_rank == "8":  # B6
        return True
    top = state["table"][-1]
    if rank(top) == "A" and group_rank != "A":  # B7
        return False
    return group_rank == rank(top) or suit(order[0]) == state["current_suit"]  # B5, B6


def huit_reference(state: dict[str, Any]) -> set[Move]:
    """Legal moves of the player to move, from RULES.md B4-B9: every order of every same-rank group."""
    if state["hand_over"]:
        return set()
    moves: set[Move] = {("pass",)} if state["phase"] == "after_draw" else {("draw",)}  # B9
    hand = state["hands"][state["current_player"]]
    for group_rank in {rank(c) for c in hand}:
        same = [c for c in hand if rank(c) == group_rank]
        for size in range(1, len(same) + 1):
            for group in combinations(same, size):
                for order in permutations(group):
                    if huit_order_legal(order, state):
                        declares = SUITS if group_rank == "8" else (None,)
                        moves |= {("play", frozenset(order), order[-1], d) for d in declares}
    return moves


def decode(game: str, text: str) -> Move:
    """An engine action text as a move of the references above."""
    words = text.split()
    if words[0] in ("draw", "pass"):
        return (words[0],)
    if words[0] == "declare":
        return ("declare", words[1])
    declare = words[-1] if words[-2] == "declare" else None
    cards = words[1:-2] if declare else words[1:]
    if game == "switch":
        assert len(cards) == 1, text
        return ("play", cards[0], declare)
    return ("play", frozenset(cards), cards[-1], declare)


def check_mask(env: AECEnv, game: str, options: Options) -> None:
    """(b) The mask is the engine's legal set and the reference's, and only the mover has one."""
    raw = env.unwrapped
    ids = mask_ids(env)
    assert ids == raw.game_state.legal_actions()
    texts = [raw.action_to_str(a) for a in ids]
    moves = {decode(game, t) for t in texts}
    assert len(moves) == len(ids), f"two action ids mean the same move: {texts}"
    state = raw.state_dict()
    rules = raw.rules.to_dict()
    expected = switch_reference(state, rules) if game == "switch" else huit_reference(state)
    assert moves == expected, (
        f"mask and RULES.md differ; only in mask: {moves - expected}; only in reference: {expected - moves}"
    )
    for agent in env.agents:
        if agent != env.agent_selection:
            assert not env.observe(agent)["action_mask"].any(), f"{agent} is not to move but has a mask"


# ---------------------------------------------------------------- properties
@PROPERTY_SETTINGS
@given(seed=SEEDS, game=GAMES)
def test_cards_are_conserved_and_state_is_json(seed: int, game: tuple[str, Options]) -> None:
    """(a) No card is created or lost by dealing, drawing, refills (A10/B10) or plays; (e) JSON-ready."""
    name, options = game
    env = make_env(name, options, seed)
    deck = deck_counts(name, options)

    def check(env: AECEnv) -> None:
        state = env.unwrapped.state_dict()
        assert cards_in_play(state) == deck
        assert json.loads(json.dumps(state)) == state

    play_checked(env, np.random.default_rng(seed), 10_000, check)
    check(env)


@settings(max_examples=100, deadline=None)
@given(seed=SEEDS, game=GAMES)
def test_mask_matches_engine_and_reference(seed: int, game: tuple[str, Options]) -> None:
    """(b) The action mask is exactly the set of moves RULES.md allows, at every step."""
    name, options = game
    env = make_env(name, options, seed)
    play_checked(env, np.random.default_rng(seed), 10_000, lambda e: check_mask(e, name, options))
    assert mask_ids(env) == []


@settings(max_examples=40, deadline=None)
@given(seed=SEEDS, options=switch_options(), starter=st.sampled_from(["JS", "JOKER", "2H", "KD", "8C", "7S"]))
def test_mask_matches_reference_after_each_starter(seed: int, options: Options, starter: str) -> None:
    """(b) for the A4 starters, rare in shuffled deals (Jack: declare phase, Joker: free suit)."""
    rng = np.random.default_rng(seed)
    pack = list((deck_counts("switch", options) - Counter([starter])).elements())
    rng.shuffle(pack)
    size, n = options["hand_size"], options["num_players"]
    hands = [pack[i * size:(i + 1) * size] for i in range(n)]
    deal = {"hands": hands, "starter": starter, "stock": pack[n * size:]}
    env = dealt(switch_v1.env, deal, seed, **options)
    assert env.unwrapped.state_dict()["discard"] == [starter]
    play_checked(env, rng, 10_000, lambda e: check_mask(e, "switch", options))


@PROPERTY_SETTINGS
@given(seed=SEEDS, game=GAMES, max_turns=st.one_of(st.none(), st.integers(1, 80)))
def test_every_hand_ends_within_max_turns(
    seed: int, game: tuple[str, Options], max_turns: int | None
) -> None:
    """(c) C1: a hand ends by a win or by truncation at max_turns; truncation has no winner.

    `max_turns=None` plays the engine's default limit.
    """
    name, options = game
    options = {**options, "max_turns": max_turns}
    if max_turns is None:
        del options["max_turns"]
    env = make_env(name, options, seed)
    limit = env.unwrapped.rules.max_turns
    steps = len(play_random(env, np.random.default_rng(seed), limit + 1))
    _, _, terminated, truncated, info = env.last()
    assert terminated != truncated, "a hand ends either terminated or truncated"
    assert steps <= limit
    state = env.unwrapped.state_dict()
    if truncated:
        assert steps == limit
        assert info["winner"] is None and info["truncated"] is True
        assert all(env.truncations.values()) and not any(env.terminations.values())
        assert set(final_rewards(env).values()) == {0.0}
        return
    winner = info["winner"]
    assert isinstance(winner, int) and state["hands"][winner] == []
    # A11/B11: the others score what they hold.
    assert info["hand_points"] == [sum(card_points(name, c) for c in hand) for hand in state["hands"]]


@PROPERTY_SETTINGS
@given(
    seed=SEEDS,
    game=GAMES,
    episode=st.sampled_from(["hand", "match"]),
    before=st.integers(0, 60),
    after=st.integers(1, 120),
)
def test_same_seed_and_actions_give_same_game(
    seed: int, game: tuple[str, Options], episode: str, before: int, after: int
) -> None:
    """(d) C2: replaying the actions from the seed, or from a saved state, reproduces the game."""
    name, options = game
    options = {**options, "episode": episode}
    env = make_env(name, options, seed)
    rng = np.random.default_rng(seed)
    played = play_random(env, rng, before)
    saved = json.loads(json.dumps(env.unwrapped.state_dict()))
    trail: list[dict[str, Any]] = []
    continued = play_checked(env, rng, after, lambda e: trail.append(e.unwrapped.state_dict()))
    trail.append(env.unwrapped.state_dict())

    replay = make_env(name, options, seed)
    for action in played:
        replay.step(action)
    assert replay.unwrapped.state_dict() == saved

    restored = MODULES[name].env(**options)
    restored.reset(options={"state": saved})
    for replayed in (replay, restored):
        states = []
        for action in continued:
            states.append(replayed.unwrapped.state_dict())
            replayed.step(action)
        states.append(replayed.unwrapped.state_dict())
        assert states == trail
        assert replayed.agent_selection == env.agent_selection
        for agent in env.agents:
            expected = env.observe(agent)["observation"]
            np.testing.assert_array_equal(replayed.observe(agent)["observation"], expected)


@PROPERTY_SETTINGS
@given(seed=SEEDS, game=GAMES, episode=st.sampled_from(["hand", "match"]))
def test_observations_in_space_and_win_rewards_sum_to_zero(
    seed: int, game: tuple[str, Options], episode: str
) -> None:
    """(f) Every agent's observation lies in its space; reward="win" is zero-sum at the end.

    In match mode a target_score of 150 keeps the match short.
    """
    name, options = game
    options = {**options, "episode": episode}
    if episode == "match":
        options["target_score"] = 150
    env = make_env(name, options, seed)

    def check(env: AECEnv) -> None:
        for agent in env.agents:
            obs = env.observe(agent)
            assert env.observation_space(agent).contains(obs), f"{agent}'s observation is outside its space"

    play_checked(env, np.random.default_rng(seed), 10_000, check)
    check(env)
    state = env.unwrapped.game_state
    rewards = final_rewards(env)
    assert sorted(rewards) == sorted(env.possible_agents)
    assert sum(rewards.values()) == pytest.approx(0.0, abs=1e-9)
    if episode == "hand" and not state.truncated:
        assert rewards[f"player_{state.winner}"] == 1.0


LOW_TARGET_DEALS: dict[str, dict[str, Any]] = {
    # Seat 0 goes out at once; seat 1 keeps 120 (A11) or 75 (B11) points, far above target_score=1.
    "switch": {"hands": [["7S"], ["JOKER", "JOKER", "2S"]], "starter": "9S", "stock": ["3C", "4C"]},
    "huit": {"hands": [["7S"], ["8S", "8H", "AS"]], "bank": ["9C"]},
}


@pytest.mark.parametrize("name", ["switch", "huit"])
def test_observation_in_space_when_a_low_target_ends_the_match(name: str) -> None:
    """(f) target_score (A12/B13) does not bound the last hand's points: totals can pass 10 x target."""
    env = dealt(MODULES[name].env, LOW_TARGET_DEALS[name], num_players=2, episode="match", target_score=1)
    play(env, "play 7S")
    assert env.unwrapped.game_state.match_over
    for agent in env.agents:
        assert env.observation_space(agent).contains(env.observe(agent))
