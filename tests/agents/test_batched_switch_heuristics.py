"""Switch's heuristics play a batch (`act_batch`) as they play its rows one at a time (`act`).

Each heuristic is one compiled kernel (`cardlab.envs.switch.heuristics.kernels`),
and `act` is that kernel on a batch of one. The claim: for any rows,
`agent.act_batch(obs, masks)` is what the same agent (same generator state)
plays by `act` row after row, whatever the rows before a row in its batch, and
both generators end in the same state, so the tie-breaks (drawn with the
agent's generator) are the same draws. The rows come from batched games at every table size (A1),
played by random, greedy and expert movers in turn, so they hold draw runs
of 2s and Jokers (A6), declarations after a Jack starter (A4), passes and
plays after a draw (A8), reversed play (A7), skips (A7), seats already out
during a run (A9) and hands of one card; each case is counted and required.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cardlab.agents.heuristics import SwitchExpert, SwitchGreedy
from cardlab.agents.heuristics.common import HeuristicAgent
from cardlab.agents.heuristics.switch import SwitchWeights
from cardlab.envs import cards as C
from cardlab.envs import make_game
from cardlab.envs.batched_engine import sample_legal
from cardlab.envs.game_spec import Game
from cardlab.envs.switch import rules as R
from cardlab.envs.switch.batched import SwitchBatch
from cardlab.envs.switch.heuristics import kernels as K
from cardlab.envs.switch.kernels import (
    CURRENT,
    DIRECTION,
    DISCARD,
    DISCARD_LEN,
    FIRST_OUT,
    PENDING,
    PHASE,
    SIZES,
    SUIT,
)
from cardlab.envs.switch.rules import SwitchRules, SwitchState
from tests.envs.test_properties import SEEDS, switch_options

AGENTS = (SwitchGreedy, SwitchExpert)


@dataclass
class Positions:
    """Decision rows of one set of rules, and how many of them show each case the heuristics read."""

    game: Game
    obs: np.ndarray
    masks: np.ndarray
    cases: dict[str, int] = field(default_factory=dict)  # rows showing each of CASES, and "rows"


CASES = ("run", "free_suit", "declare", "after_draw", "reversed", "eight_on_top", "seat_out", "next_out",
         "one_card_left")


def take_rows(batch: SwitchBatch, rows: list[np.ndarray], masks: list[np.ndarray], cases: dict[str, int]
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Keep the movers' observations and masks of the live slots, counting the cases they show.

    Returns the live slots, their (B, obs_size) rows and (B, num_actions) masks.
    """
    mask = batch.legal_mask()
    obs = batch.observe(batch.current_player())
    live = np.flatnonzero(mask.any(axis=1))
    rows.append(obs[live])
    masks.append(mask[live])
    info, sizes = batch.info[live], batch.seats[live, SIZES]
    top = batch.piles[live, DISCARD, info[:, DISCARD_LEN] - 1]
    cases["rows"] = cases.get("rows", 0) + live.size
    found = {
        "run": info[:, PENDING] > 0,
        "free_suit": info[:, SUIT] < 0,
        "declare": info[:, PHASE] == R.DECLARE_START,
        "after_draw": info[:, PHASE] == R.AFTER_DRAW,
        "reversed": info[:, DIRECTION] < 0,
        "eight_on_top": np.array([C.rank_of(int(card)) == C.EIGHT for card in top], dtype=bool),
        "seat_out": (sizes == 0).any(axis=1),
        "next_out": sizes[np.arange(live.size), (info[:, CURRENT] + info[:, DIRECTION]) % batch.n] == 0,
        "one_card_left": sizes[np.arange(live.size), info[:, CURRENT]] == 1,
    }
    for name in CASES:
        cases[name] = cases.get(name, 0) + int(found[name].sum())
    return live, obs, mask


def gone_out(batch: SwitchBatch, slot: int, rng: np.random.Generator) -> SwitchState:
    """The slot's position (a draw run pending, A6) as if the next seat and maybe others had gone out on
    the run (A9): their cards go under the stock and one of them is the first out; one holder stays."""
    data = batch.state_dict(slot)
    me, n = data["current_player"], batch.n
    others = [(me + k * data["direction"]) % n for k in range(1, n)]
    out = [others[0], *(seat for seat in others[1:-1] if rng.random() < 0.5)]
    for seat in out:
        data["stock"] = data["hands"][seat] + data["stock"]
        data["hands"][seat] = []
    data["first_out"] = out[int(rng.integers(len(out)))]
    return SwitchState.from_state_dict(data, batch.rules)


def play_positions(options: dict[str, Any], seed: int, slots: int = 12, steps: int = 150,
                   deals: int = 100, runs_out: int = 30) -> Positions:
    """The mover's observation and mask in `deals` fresh deals (every starter, A4), at every step of
    `slots` batched games, and in up to `runs_out` of their draw runs made A9 runs (`gone_out`).

    Slots are played by random, greedy and expert movers (slot % 3), with one
    move in five random everywhere, so heuristic play reaches the ends of hands
    and random play the odd positions; finished games are dealt again.
    """
    rules = SwitchRules(**options)
    game = make_game("switch", rules.to_dict())
    rows: list[np.ndarray] = []
    masks: list[np.ndarray] = []
    cases: dict[str, int] = {}
    take_rows(SwitchBatch(rules, deals, seed=seed + 1), rows, masks, cases)
    batch = SwitchBatch(rules, slots, seed=seed)
    rng = np.random.default_rng(seed)
    movers = [SwitchGreedy(game, seed), SwitchExpert(game, seed)]
    style = np.arange(slots) % 3
    a9: list[SwitchState] = []
    for _ in range(steps):
        live, obs, mask = take_rows(batch, rows, masks, cases)
        info = batch.info
        runs = live[(info[live, PENDING] > 0) & (info[live, FIRST_OUT] < 0)]
        a9 += [gone_out(batch, int(b), rng) for b in runs[: runs_out - len(a9)]]
        actions = sample_legal(mask, rng)
        for k, mover in enumerate(movers, start=1):
            mine = live[(style[live] == k) & (rng.random(live.size) < 0.8)]
            if mine.size:
                actions[mine] = mover.act_batch(obs[mine], mask[mine])
        batch.step(actions)
        finished = np.flatnonzero(batch.done | batch.truncated)
        if finished.size:
            batch.reset(finished)
    if a9:
        loaded = SwitchBatch(rules, len(a9), seed=seed)
        for slot, state in enumerate(a9):
            loaded.load(slot, state)
        take_rows(loaded, rows, masks, cases)
    return Positions(game, np.concatenate(rows), np.concatenate(masks), cases)


def one_by_one(agent: HeuristicAgent, obs: np.ndarray, masks: np.ndarray) -> tuple[list[int], int]:
    """What `agent.act` plays row after row (masks as int8, as the AEC env gives them), and its draws."""
    moves, draws = [], 0
    for row, mask in zip(obs, masks.astype(np.int8), strict=True):
        before = agent.rng.bit_generator.state["state"]["state"]
        moves.append(agent.act({"observation": row, "action_mask": mask}))
        draws += agent.rng.bit_generator.state["state"]["state"] != before
    return moves, draws


def check_same(positions: Positions, cls: type[HeuristicAgent], seed: int, chunks: int = 3,
               weights: SwitchWeights | None = None) -> int:
    """`act_batch` over the rows (cut into `chunks` calls) equals `act` row after row; returns the ties."""
    batched, alone = cls(positions.game, seed), cls(positions.game, seed)
    if weights is not None:
        batched.weights = alone.weights = weights  # type: ignore[attr-defined]
    want, ties = one_by_one(alone, positions.obs, positions.masks)
    parts = np.array_split(np.arange(len(positions.obs)), chunks)
    got = np.concatenate([batched.act_batch(positions.obs[p], positions.masks[p]) for p in parts])
    assert got.dtype == np.int64
    wrong = np.flatnonzero(got != np.array(want))
    if wrong.size:
        i = int(wrong[0])
        raise AssertionError(f"{cls.name}: {wrong.size} of {len(got)} rows differ; row {i}: batched "
                             f"{R.action_to_str(int(got[i]))}, one by one {R.action_to_str(want[i])}")
    assert batched.rng.bit_generator.state == alone.rng.bit_generator.state, f"{cls.name}: generators"
    return ties


def at_table(options: dict[str, Any], players: int) -> dict[str, Any]:
    """Drawn options moved to `players` seats, the hand size lowered if the deck cannot deal it (A3)."""
    deck = SwitchRules(**{**options, "num_players": 2, "hand_size": 1}).deck_size()
    return {**options, "num_players": players, "hand_size": min(options["hand_size"], (deck - 1) // players)}


# ---------------------------------------------------------------- every table size, every case
@pytest.mark.parametrize("players", range(2, 11))
def test_batched_heuristics_play_as_one_row_at_a_time_at_every_table_size(players: int) -> None:
    """A1-A9: same moves and same generator states, ties included, in runs, declarations, after draws,
    reversals, skips, seats out and last cards; the default rules but `memory` at odd sizes,
    `voluntary_draw` (A8) at 3, 6 and 9 and no `match_rank` (A5) at 2, 6 and 10."""
    options = {"num_players": players, "memory": players % 2 == 1, "voluntary_draw": players % 3 == 0,
               "match_rank": players % 4 != 2, "max_turns": 800}
    positions = play_positions(options, seed=players, steps=120 + 20 * players)
    cases = positions.cases
    required = [name for name in CASES if name != "reversed" or players > 2]  # A7: no reversal at 2
    assert all(cases[name] > 0 for name in required), cases
    assert cases["reversed"] == 0 or players > 2
    for cls in AGENTS:
        ties = check_same(positions, cls, seed=players)
        assert ties > 20, f"{cls.name}: only {ties} tie-breaks drawn in {cases['rows']} rows"


@settings(max_examples=12, deadline=None)
@given(options=switch_options(), players=st.integers(2, 10), seed=SEEDS)
def test_batched_heuristics_honour_the_rule_options(options: dict[str, Any], players: int, seed: int) -> None:
    """Drawn rule options (A2 decks, A3 hand size, A5 match_rank, A8 play_after_draw, voluntary_draw,
    memory) at a drawn table size: same moves and generator states."""
    positions = play_positions(at_table(options, players), seed=seed % 1000, slots=8, steps=80)
    for cls in AGENTS:
        check_same(positions, cls, seed=seed, chunks=2)


@settings(max_examples=6, deadline=None)
@given(weights=st.builds(SwitchWeights, **{f.name: st.floats(-3, 3).map(lambda x: round(x, 2))
                                           for f in dataclasses.fields(SwitchWeights)}), seed=SEEDS)
def test_drawn_weights_are_read_at_each_call(weights: SwitchWeights, seed: int) -> None:
    """Weights set on an agent after it is built are the ones its batches and single moves play."""
    positions = play_positions({"num_players": 5, "num_decks": 2, "extra_twos": 4}, seed=seed % 1000,
                               slots=8, steps=80)
    check_same(positions, SwitchExpert, seed=seed, chunks=1, weights=weights)


def test_each_weight_moves_some_decision() -> None:
    """The expert reads every one of its weights: turning any one alone against its sign changes some of its
    moves (`tempo` weighs a draw while it could play, so the rules allow one, A8's `voluntary_draw`)."""
    positions = play_positions({"num_players": 4, "num_decks": 2, "extra_twos": 4, "voluntary_draw": True},
                               seed=3, steps=150)
    plain = SwitchExpert(positions.game, 0).act_batch(positions.obs, positions.masks)
    for name in K.WEIGHT_NAMES:
        expert = SwitchExpert(positions.game, 0)
        expert.weights = dataclasses.replace(expert.weights, **{name: -2.0 - getattr(expert.weights, name)})
        assert (expert.act_batch(positions.obs, positions.masks) != plain).any(), name


def test_the_weights_array_names_every_weight() -> None:
    assert list(K.WEIGHT_NAMES) == [f.name for f in dataclasses.fields(SwitchWeights)]


# ---------------------------------------------------------------- refusals
@pytest.mark.parametrize("cls", AGENTS)
def test_bad_batches_are_refused_before_any_draw(cls: type[HeuristicAgent]) -> None:
    game = make_game("switch", {"num_players": 3})
    agent = cls(game, 1)
    state = agent.rng.bit_generator.state
    obs = np.zeros((2, game.layout.size), dtype=np.float32)
    masks = np.zeros((2, R.NUM_ACTIONS), dtype=np.bool_)
    masks[0, R.DRAW] = True
    with pytest.raises(ValueError, match=r"row 1 of the action masks has no legal action"):
        agent.act_batch(obs, masks)
    with pytest.raises(ValueError, match=rf"act_batch takes observations \(B, {game.layout.size}\)"):
        agent.act_batch(obs[:, :-1], masks)
    with pytest.raises(ValueError, match=rf"masks \(B,\s+{R.NUM_ACTIONS}\)"):
        agent.act_batch(obs, masks[:1])
    assert agent.rng.bit_generator.state == state
    empty = agent.act_batch(obs[:0], masks[:0])
    assert empty.shape == (0,) and empty.dtype == np.int64


def test_the_kernel_called_directly_marks_a_row_with_no_legal_action() -> None:
    """Past `checked_batch` (a direct call), such a row gets -1 and draws nothing, never a stray id."""
    game = make_game("switch", {"num_players": 3})
    agent = SwitchGreedy(game, 1)
    state = agent.rng.bit_generator.state
    masks = np.zeros((2, R.NUM_ACTIONS), dtype=np.bool_)
    masks[1, R.DRAW] = True
    obs = np.zeros((2, game.layout.size), dtype=np.float32)
    moves = K.greedy_actions(obs, masks, agent.offsets, agent.deck, 3, agent.rng)
    assert moves.tolist() == [-1, R.DRAW] and agent.rng.bit_generator.state == state
