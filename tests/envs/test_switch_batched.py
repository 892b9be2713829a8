"""Differential tests of the batched Switch engine against the rules engine and the AEC env.

Every slot of a `SwitchBatch` plays in lockstep with a raw AEC env holding the
same engine state (same deal, same generator state): random legal actions are
drawn from the batch's mask, and after every step the tests compare the legal
sets, the observations of the mover and of the next seat, the rewards, the
end of the episode (done, truncated) and, every `every` steps, the whole
`state_dict` (every step in the normal run).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest

from cardlab.envs import switch_v1
from cardlab.envs.batched_engine import sample_legal
from cardlab.envs.options import kernel_params, param_slots
from cardlab.envs.switch import rules as R
from cardlab.envs.switch.batched import (
    SwitchBatch,
)
from cardlab.envs.switch.kernels import PARAM_SLOTS, STOCK_LEN
from cardlab.envs.switch.rules import SwitchRules, SwitchState
from tests.envs.helpers import check_options_reach_the_batch, position


@dataclass
class Coverage:
    """What a differential run went through, so a test can say its rules were exercised."""

    steps: int = 0
    won: int = 0
    truncated: int = 0
    refills: int = 0
    next_hands: int = 0
    match_ends: int = 0
    actions: set[int] = field(default_factory=set)


def reference_envs(rules: SwitchRules, batch: SwitchBatch, seed: int | None, episode: str) -> list[Any]:
    """One raw AEC env per slot, dealt as `SwitchState(rules, generator)` from the batch's seed sequence."""
    envs = []
    for child in np.random.SeedSequence(seed).spawn(batch.batch_size):
        env = switch_v1.raw_env(episode=episode, **rules.to_dict())
        env.reset(options={"state": SwitchState(rules, np.random.default_rng(child)).state_dict()})
        envs.append(env)
    return envs


def check_slots(batch: SwitchBatch, envs: list[Any], with_state: bool) -> None:
    """Legal sets, the player to move, observations (mover and next seat) and optionally the state."""
    mask = batch.legal_mask()
    current = batch.current_player()
    nxt = (current + 1) % batch.n
    obs_mover, obs_next = batch.observe(current), batch.observe(nxt)
    for i, env in enumerate(envs):
        state = env.game_state
        assert np.flatnonzero(mask[i]).tolist() == env.legal_actions(), f"slot {i} legal set"
        assert current[i] == state.current, f"slot {i} current player"
        assert np.array_equal(obs_mover[i], env.observer.observe(state, state.current)), f"slot {i} obs"
        assert np.array_equal(obs_next[i], env.observer.observe(state, int(nxt[i]))), f"slot {i} obs next"
        if with_state:
            assert position(batch.state_dict(i)) == position(env.state_dict()), f"slot {i} state"


def run_differential(options: dict[str, Any], batch_size: int, steps: int, seed: int = 0,
                     episode: str = "hand", every: int = 1) -> Coverage:
    """Random legal play on a batch and on one AEC env per slot, compared after every step."""
    rules = SwitchRules(**options)
    batch = SwitchBatch(rules, batch_size, seed=seed, episode=episode)
    envs = reference_envs(rules, batch, seed, episode)
    rng = np.random.default_rng(seed + 1000)
    cov = Coverage()
    check_slots(batch, envs, with_state=True)
    for step in range(steps):
        mask = batch.legal_mask()
        actions = sample_legal(mask, rng)
        if step % 2:
            batch._known_fresh = False  # step() then checks legality itself instead of reading the last mask
        before = batch.info.copy()
        rewards, done, truncated = batch.step(actions)
        for i, env in enumerate(envs):
            state = env.game_state
            hands_before = state.match.hands_played
            agent = env.agent_selection
            env.step(int(actions[i]))
            cov.actions.add(int(actions[i]))
            expected = np.array([env.rewards[a] for a in env.possible_agents], dtype=np.float32)
            assert np.array_equal(rewards[i], expected), f"slot {i} step {step} rewards"
            over = env.terminations[agent] or env.truncations[agent]
            assert done[i] == env.terminations[agent] and truncated[i] == env.truncations[agent], \
                f"slot {i} step {step} end"
            assert not (done[i] and truncated[i]) and (done[i] or truncated[i]) == over
            state = env.game_state
            if state.match.hands_played > hands_before and not over:
                cov.next_hands += 1
            elif batch.info[i, STOCK_LEN] > before[i, STOCK_LEN]:
                cov.refills += 1
            if over:
                cov.truncated += bool(truncated[i])
                cov.won += not truncated[i]
                cov.match_ends += bool(state.match_over)
        cov.steps += batch_size
        check_slots(batch, envs, with_state=(step + 1) % every == 0 or bool((done | truncated).any()))
        finished = np.flatnonzero(done | truncated)
        if finished.size:
            batch.reset(finished)
            for slot in finished:
                envs[slot].reset()  # no seed: the env's generator runs on, as the slot's does
            check_slots(batch, envs, with_state=True)
    return cov


# ---------------------------------------------------------------- normal run: about 2.5 * 10^4 steps


PLAYERS = range(2, 11)


@pytest.mark.parametrize("players", PLAYERS)
def test_every_player_count(players: int) -> None:
    cov = run_differential({"num_players": players}, batch_size=4, steps=300, seed=players)
    assert cov.won > 0


def refilled(cov: Coverage) -> bool:
    return cov.refills > 0


def won(cov: Coverage) -> bool:
    return cov.won > 0


def hands_and_match_ends(cov: Coverage) -> bool:
    """Hands follow each other (the dealer moves on) and the win rewards come at the match end (A12)."""
    return cov.next_hands > 0 and cov.match_ends > 0


# (options, episode, steps, seed, what the run must have gone through): every rule option at a
# non-default value (test_options_reach_the_kernels checks it), refills, truncations, match ends.
CASES: list[tuple[dict[str, Any], str, int, int, Callable[[Coverage], bool]]] = [
    # A10 shuffles the discard pile back, many times.
    ({"num_decks": 1, "num_players": 4}, "hand", 500, 11, lambda cov: cov.refills > 5),
    # With 8 players on one deck the stock and discard run low: draws of what there is (A10).
    ({"num_decks": 1, "num_players": 8, "hand_size": 5, "extra_jokers": 4}, "hand", 400, 12, refilled),
    ({"match_rank": False, "hand_size": 3}, "hand", 300, 37, won),
    ({"play_after_draw": False}, "hand", 300, 26, won),
    ({"voluntary_draw": True, "num_players": 3}, "hand", 300, 42, won),
    ({"extra_jokers": 6, "extra_twos": 9, "num_players": 5}, "hand", 300, 54, won),
    ({"memory": True, "num_players": 5, "num_decks": 1}, "hand", 300, 50, won),
    ({"match_rank": False, "play_after_draw": False, "voluntary_draw": True, "num_decks": 2, "hand_size": 3,
      "memory": True}, "hand", 300, 119, won),
    ({"max_turns": 15, "num_players": 4}, "hand", 200, 21, lambda cov: cov.truncated > 5),
    *[({"num_players": n, "target_score": 60, "hand_size": 5, "memory": n != 3}, "match", 400, 30 + n,
       hands_and_match_ends) for n in (2, 3, 6)],
    ({"num_players": 4, "target_score": 150, "max_turns": 40, "hand_size": 3}, "match", 300, 41,
     lambda cov: cov.truncated > 0 and cov.next_hands > 0),
]
CASE_IDS = [f"{ep}-" + "-".join(f"{k}={v}" for k, v in kw.items()) for kw, ep, *_ in CASES]


@pytest.mark.parametrize(("options", "episode", "steps", "seed", "went_through"), CASES, ids=CASE_IDS)
def test_rule_options(options: dict[str, Any], episode: str, steps: int, seed: int,
                      went_through: Callable[[Coverage], bool]) -> None:
    cov = run_differential(options, batch_size=4, steps=steps, seed=seed, episode=episode)
    assert went_through(cov), cov


def test_options_reach_the_kernels() -> None:
    """Every Switch rule option is a kernel parameter or declared as read elsewhere, changes what it
    feeds, and takes a non-default value in a differential case above."""
    drawn = [{"num_players": n} for n in PLAYERS] + [options for options, *_ in CASES]
    check_options_reach_the_batch(SwitchBatch, SwitchRules, drawn)


# ---------------------------------------------------------------- slow: 10^6 steps


SLOW_CONFIGS = [
    ({"num_players": 4}, "hand"),
    ({"num_players": 2, "num_decks": 1, "voluntary_draw": True}, "hand"),
    ({"num_players": 7, "match_rank": False, "play_after_draw": False, "max_turns": 120}, "hand"),
    ({"num_players": 10, "extra_jokers": 5, "extra_twos": 7, "target_score": 200, "memory": True}, "match"),
]


@pytest.mark.long
@pytest.mark.parametrize(("options", "episode"), SLOW_CONFIGS)
def test_a_million_steps(options: dict[str, Any], episode: str) -> None:
    """10^6 steps over the four configs; the whole state compared every 50 steps and at every end."""
    cov = run_differential(options, batch_size=50, steps=5000, seed=7, episode=episode, every=50)
    assert cov.steps == 250_000


# ---------------------------------------------------------------- stacked deals and saved states


def stacked_state(options: dict[str, Any], deal: dict[str, Any]) -> SwitchState:
    state = SwitchState(SwitchRules(**options), np.random.default_rng(5))
    state.deal_stacked(deal)
    return state


def lockstep(batch: SwitchBatch, slot: int, state: SwitchState, texts: list[str]) -> None:
    """Play `texts` in `slot` and on `state`, comparing legal sets and the whole state after each."""
    for text in texts:
        action = R.str_to_action(text)
        assert np.flatnonzero(batch.legal_mask()[slot]).tolist() == state.legal_actions()
        actions = np.zeros(batch.batch_size, dtype=np.int64)
        actions[slot] = action
        live = ~(batch.done | batch.truncated)
        live[slot] = False
        actions[live] = sample_legal(batch.legal_mask(), np.random.default_rng(0))[live]
        batch.step(actions)
        state.apply(action)
        assert position(batch.state_dict(slot)) == position(state.state_dict())


def test_load_stacked_last_holder_must_draw() -> None:
    """A9: seat 0 goes out on a 2; seat 1, the last holder, may only draw the run, then seat 0 wins."""
    deal = {"hands": [["2S"], ["2H", "5D"]], "starter": "7S", "stock": ["9C", "4H", "KD"]}
    state = stacked_state({"num_players": 2}, deal)
    batch = SwitchBatch(SwitchRules(num_players=2), 3, seed=1)
    batch.load(1, state)
    assert position(batch.state_dict(1)) == position(state.state_dict())
    assert batch.state_dict(1)["left_out"]  # a stacked deal leaves cards out: they stay out
    lockstep(batch, 1, state, ["play 2S"])
    assert batch.legal_mask()[1].nonzero()[0].tolist() == [R.DRAW]
    actions = sample_legal(batch.legal_mask(), np.random.default_rng(2))
    actions[1] = R.DRAW
    rewards, done, truncated = batch.step(actions)
    state.apply(R.DRAW)
    assert position(batch.state_dict(1)) == position(state.state_dict())
    assert done[1] and not truncated[1] and state.winner == 0
    assert rewards[1].tolist() == [1.0, -1.0]
    assert not batch.legal_mask()[1].any()


def test_load_restored_state_last_holder_short_stock() -> None:
    """A saved A9 position restored by the engine and loaded: the last holder draws a run of 9
    from a stock of 3, so the discard pile is shuffled back (A10) and the draw stops short."""
    deal = {"hands": [["2S"], ["JOKER", "5D"], ["2C"]], "starter": "7S", "dealer": 2,
            "scores": [10, 20, 30], "stock": ["9C", "4H", "KD"]}
    state = stacked_state({"num_players": 3}, deal)
    for text in ["play 2S", "play JOKER", "play 2C"]:  # seats 0 and 2 go out, seat 1 faces 2 + 5 + 2
        state.apply(R.str_to_action(text))
    assert state.legal_actions() == [R.DRAW] and state.pending == 9
    saved = state.state_dict()
    restored = SwitchState.from_state_dict(saved, SwitchRules(num_players=3))
    batch = SwitchBatch(SwitchRules(num_players=3), 2, seed=3)
    batch.load(0, restored)
    assert position(batch.state_dict(0)) == position(saved)
    lockstep(batch, 0, restored, ["draw"])
    assert batch.done[0] and restored.winner == 0 and restored.sizes[1] == 1 + 6


@pytest.mark.parametrize("starter", ["JH", "KS", "8D", "2C", "JOKER"])
def test_load_stacked_starters(starter: str) -> None:
    """A4: each starter's effect on the first player, loaded and played out in lockstep."""
    deal = {"hands": [["3S", "9H", "QD"], ["4C", "JS", "2H"], ["5S", "KH", "AC"], ["6D", "8C", "10S"]],
            "starter": starter, "stock": ["7H", "7S", "7D", "7C", "AH", "AS", "QH", "QS"]}
    state = stacked_state({"num_players": 4}, deal)
    batch = SwitchBatch(SwitchRules(num_players=4), 2, seed=4)
    batch.load(1, state)
    assert position(batch.state_dict(1)) == position(state.state_dict())
    rng = np.random.default_rng(9)
    while not state.hand_over and state.turn < 40:
        legal = state.legal_actions()
        lockstep(batch, 1, state, [R.action_to_str(legal[rng.integers(len(legal))])])


# ---------------------------------------------------------------- refusals, shapes, dtypes


def test_illegal_action_refused_and_nothing_moves() -> None:
    batch = SwitchBatch(SwitchRules(num_players=3), 4, seed=8)
    saved = [batch.state_dict(i) for i in range(4)]
    mask = batch.legal_mask()
    actions = sample_legal(mask, np.random.default_rng(0))
    actions[2] = int(np.flatnonzero(~mask[2])[0])
    with pytest.raises(ValueError, match="slot 2: illegal action"):
        batch.step(actions)
    actions[2] = 999
    with pytest.raises(ValueError, match=r"slot 2: illegal action 999 \(not an action id"):
        batch.step(actions)
    assert [batch.state_dict(i) for i in range(4)] == saved
    batch.reset(np.array([0]))  # no mask since: step() checks legality itself
    saved[0] = batch.state_dict(0)
    actions[0] = batch.to_state(0).legal_actions()[0]
    with pytest.raises(ValueError, match="slot 2: illegal action 999"):
        batch.step(actions)
    assert [batch.state_dict(i) for i in range(4)] == saved
    with pytest.raises(ValueError, match="actions must be a"):
        batch.step(actions[:3])
    with pytest.raises(ValueError, match="seats must be"):
        batch.observe(np.full(4, 3))


def test_finished_slots_ignore_their_actions() -> None:
    batch = SwitchBatch(SwitchRules(num_players=2, max_turns=3), 3, seed=2)
    rng = np.random.default_rng(1)
    for _ in range(3):
        batch.step(sample_legal(batch.legal_mask(), rng))
    assert batch.truncated.all() and not batch.done.any()
    saved = [batch.state_dict(i) for i in range(3)]
    rewards, done, truncated = batch.step(np.full(3, 999))
    assert not done.any() and truncated.all() and not rewards.any()
    assert [batch.state_dict(i) for i in range(3)] == saved
    batch.reset(np.array([1]))
    assert batch.truncated.tolist() == [True, False, True]
    batch.reset(np.array([True, False, True]))
    assert not (batch.done | batch.truncated).any()
    for bad in (np.array([3]), np.array([0.5]), np.array([True, False])):
        with pytest.raises(ValueError, match="slots must be"):
            batch.reset(bad)
    with pytest.raises(ValueError, match="slot must be"):
        batch.to_state(3)


def test_shapes_and_dtypes() -> None:
    rules = SwitchRules(num_players=5)
    batch = SwitchBatch(rules, 6, seed=0)
    mask = batch.legal_mask()
    assert mask.shape == (6, R.NUM_ACTIONS) and mask.dtype == np.bool_
    obs = batch.observe(batch.current_player())
    assert obs.shape == (6, switch_v1.raw_env(num_players=5).layout.size) and obs.dtype == np.float32
    assert batch.current_player().shape == (6,)
    rewards, done, truncated = batch.step(sample_legal(mask, np.random.default_rng(0)))
    assert rewards.shape == (6, 5) and rewards.dtype == np.float32
    assert done.shape == truncated.shape == (6,) and done.dtype == truncated.dtype == np.bool_
    for kwargs, refused in (
            ({"batch_size": 2, "episode": "game"},
             "episode='game' is not one of the choices; accepted: 'hand', 'match'"),
            ({"batch_size": 0}, "batch_size=0 is out of range; accepted: a whole number >= 1"),
            ({"batch_size": 2.0}, "batch_size=2.0 is of the wrong type; accepted: a whole number >= 1")):
        with pytest.raises(ValueError, match=f"^{re.escape(refused)}$"):
            SwitchBatch(rules, **kwargs)


def test_to_state_round_trip() -> None:
    """A slot back as an engine state: the AEC env restores it and plays on from there."""
    batch = SwitchBatch(SwitchRules(), 2, seed=6)
    batch.step(sample_legal(batch.legal_mask(), np.random.default_rng(0)))
    state = batch.to_state(1)
    assert position(state.state_dict()) == position(batch.state_dict(1))
    env = switch_v1.raw_env()
    env.reset(options={"state": batch.state_dict(1)})
    assert env.legal_actions() == np.flatnonzero(batch.legal_mask()[1]).tolist()


def test_kernel_params_refuse_a_name_without_a_value() -> None:
    """A slot named after no option and not computed, or a computed value without a slot, is refused
    (a kernel slot never keeps a silent zero)."""
    rules = SwitchRules()
    with pytest.raises(ValueError, match="neither a switch rule option nor computed"):
        kernel_params(rules, param_slots("num_players", "episode_match"))
    with pytest.raises(ValueError, match="have no slot"):
        kernel_params(rules, param_slots("num_players"), episode_match=True)
    with pytest.raises(ValueError, match="repeat"):
        param_slots("num_players", "num_players")
    assert kernel_params(rules, PARAM_SLOTS, episode_match=True)[PARAM_SLOTS["target_score"]] == 500
