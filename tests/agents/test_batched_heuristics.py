"""Huit's heuristics play a batch (`act_batch`) as they play its rows one at a time (`act`).

Each heuristic is one compiled kernel, and `act` is that kernel on a batch of
one. The claim, for `random`, `greedy` and `expert`: from the same generator
state, `agent.act_batch(observations, masks)` (in chunks of any size) is
`[agent.act(row) for row in rows]` and leaves the generator where the
row-by-row agent leaves it (so ties are drawn alike), whatever the rows before
a row in its batch (the kernels' memos are per row); the expert's value of each
legal action is the same alone and in a batch, to the last bit, and the move
it plays is one of the highest value.
Positions come from whole hands played by a mix of random, greedy and expert
seats at every table size (2-6 players), rule options drawn as the property tests draw them (B2 hand sizes, B8
`queen_skips_each`, B10 refills, `memory`, which moves the observation's
fields); they include every phase the heuristics read: after a draw (B9), a
fresh Ace (B7), suits announced by 8s (B6), empty tables (B4), Queens at 2
players (B8, the expert's look-ahead) and hands near their end (B11).
"""

from __future__ import annotations

import copy
import itertools
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings

from cardlab.agents.agent_spec import make_agent
from cardlab.agents.base import Agent
from cardlab.agents.heuristics import HuitExpert
from cardlab.envs import cards as C
from cardlab.envs import make_game
from cardlab.envs.game_spec import Game
from cardlab.envs.huit import rules as R
from tests.benchmarks import load_benchmark
from tests.envs.test_properties import SEEDS, huit_options

SPECS = ("random", "greedy", "expert")
QUEENS = np.array([a < R.DRAW and R.ACTION_RANK[a] == C.QUEEN for a in range(R.NUM_ACTIONS)])


def positions(game: Game, seed: int, count: int) -> tuple[np.ndarray, np.ndarray]:
    """`count` (observation, int8 mask) rows of the seats to move in hands played by random, greedy and
    expert seats (which of them sits where changes with each hand), on the rules engine."""
    rng = np.random.default_rng(seed)
    observer = game.observer
    observations: list[np.ndarray] = []
    masks: list[np.ndarray] = []
    specs = itertools.cycle(SPECS)
    state = None
    while len(observations) < count:
        if state is None or state.hand_over:
            state = game.new_state(rng)
            players = [make_agent(next(specs), game, int(rng.integers(1 << 30)))
                       for _ in range(game.num_players)]
        seat = state.current
        mask = np.zeros(game.num_actions, dtype=np.int8)
        mask[state.legal_actions()] = 1
        observation = observer.observe(state, seat)
        observations.append(observation)
        masks.append(mask)
        state.apply(players[seat].act({"observation": observation, "action_mask": mask}))
    return np.stack(observations), np.stack(masks)


def row_by_row(agent: Agent, observations: np.ndarray, masks: np.ndarray) -> list[int]:
    return [agent.act({"observation": obs, "action_mask": mask}) for obs, mask in zip(observations, masks,
                                                                                      strict=True)]


def check_same_moves(game: Game, observations: np.ndarray, masks: np.ndarray, seed: int) -> dict[str, bool]:
    """Each heuristic's batch (in chunks of drawn sizes) against its copy playing row by row; whether it
    drew."""
    chunks = np.random.default_rng(seed).integers(1, 300, size=len(observations))
    cuts = np.cumsum(chunks)[np.cumsum(chunks) < len(observations)]
    drew = {}
    for spec in SPECS:
        batched = make_agent(spec, game, seed)
        alone = copy.deepcopy(batched)
        start = copy.deepcopy(batched.rng.bit_generator.state)
        moves = np.concatenate([batched.act_batch(o, m) for o, m in zip(np.split(observations, cuts),
                                                                         np.split(masks, cuts), strict=True)])
        assert moves.dtype == np.int64
        expected = row_by_row(alone, observations, masks)
        wrong = np.flatnonzero(moves != expected)
        assert not wrong.size, (f"{spec}: {wrong.size} of {len(moves)} rows differ, first row {wrong[0]}: "
                                f"{game.action_to_str(moves[wrong[0]])} instead of "
                                f"{game.action_to_str(expected[wrong[0]])}")
        assert batched.rng.bit_generator.state == alone.rng.bit_generator.state, f"{spec}: generators differ"
        drew[spec] = batched.rng.bit_generator.state != start
    return drew


def check_same_values(game: Game, observations: np.ndarray, masks: np.ndarray) -> None:
    """The expert's value of every legal action is the same in the batch as alone, to the last bit, and
    the move it plays is of the highest value (`best_index` compares values rounded to 9 digits)."""
    expert = make_agent("expert", game, 0)
    assert isinstance(expert, HuitExpert)
    batched = expert.values_batch(observations, masks)
    assert np.array_equal(np.isnan(batched), masks == 0)
    moves = expert.act_batch(observations, masks)
    for b, (obs, mask) in enumerate(zip(observations, masks, strict=True)):
        alone = expert.values({"observation": obs, "action_mask": mask})
        wrong = {game.action_to_str(a): (v, batched[b, a]) for a, v in alone.items() if batched[b, a] != v}
        assert not wrong, f"row {b}: action: (value alone, value in the batch) {wrong}"
        if len(alone) > 1:
            assert round(alone[int(moves[b])], 9) == max(round(v, 9) for v in alone.values()), f"row {b}"


def kinds(game: Game, observations: np.ndarray, masks: np.ndarray) -> dict[str, int]:
    """How many rows of each phase the heuristics read differently."""
    at = game.layout.slices
    flag = {name: observations[:, at[name].start] > 0.5
            for name in ("after_draw", "ace_penalty", "announced")}
    fewest = np.minimum(observations[:, at["hand"]].sum(axis=1),
                        np.rint(observations[:, at["opponents"]] * 8).min(axis=1))
    return {
        **{name: int(rows.sum()) for name, rows in flag.items()},
        "empty table": int((observations[:, at["top"]].sum(axis=1) == 0).sum()),
        "queen to play": int((masks[:, QUEENS] != 0).any(axis=1).sum()),
        "near the end": int((fewest <= 1).sum()),
        "one legal move": int((masks.sum(axis=1) == 1).sum()),
    }


# Every table size with the default rules, and each rule option that changes what the heuristics see or
# reckon: B8's one skip for several Queens, `memory` (a longer observation), small and whole-deck hands.
TABLES: list[dict[str, Any]] = [
    {"num_players": 2}, {"num_players": 3}, {"num_players": 4}, {"num_players": 5}, {"num_players": 6},
    {"num_players": 2, "memory": True, "hand_size": 8}, {"num_players": 4, "queen_skips_each": False},
    {"num_players": 6, "queen_skips_each": False, "memory": True, "hand_size": "all"},
    {"num_players": 3, "hand_size": 2, "shuffle_on_refill": True},
]


@pytest.mark.parametrize("options", TABLES, ids=["-".join(f"{k}={v}" for k, v in o.items()) for o in TABLES])
def test_batched_heuristics_play_as_one_row_at_a_time(options: dict[str, Any]) -> None:
    game = make_game("huit", options)
    observations, masks = positions(game, seed=len(TABLES) + game.num_players, count=400)
    seen = kinds(game, observations, masks)
    wanted = ["after_draw", "ace_penalty", "announced", "empty table", "near the end", "one legal move"]
    assert all(seen[name] for name in wanted), seen
    if game.num_players == 2:
        assert seen["queen to play"] > 10, seen  # B8: the expert's look-ahead over its own turns again
    drew = check_same_moves(game, observations, masks, seed=game.num_players)
    assert drew == {spec: True for spec in SPECS}  # ties were drawn, so the tie-breaks were compared too
    check_same_values(game, observations, masks)


@settings(max_examples=12, deadline=None)
@given(options=huit_options(), seed=SEEDS)
def test_batched_heuristics_play_as_one_row_at_a_time_under_drawn_rules(options: dict[str, Any],
                                                                        seed: int) -> None:
    game = make_game("huit", options)
    observations, masks = positions(game, seed, count=120)
    check_same_moves(game, observations, masks, seed)
    check_same_values(game, observations, masks)


@pytest.mark.parametrize(("game_id", "players"), [("switch", 2), ("switch", 7), ("huit", 5)])
def test_random_plays_as_row_by_row_in_every_game(game_id: str, players: int) -> None:
    """`RandomAgent.act_batch` is shared by the games: `legal[rng.integers(legal.size)]` row after row."""
    game = make_game(game_id, num_players=players)
    observations, masks = positions(game, seed=players, count=150)
    one, two = make_agent("random", game, seed=4), make_agent("random", game, seed=4)
    assert one.act_batch(observations, masks).tolist() == row_by_row(two, observations, masks)
    assert one.rng.bit_generator.state == two.rng.bit_generator.state


@pytest.mark.parametrize("spec", ["greedy", "expert"])
def test_a_row_with_one_legal_move_draws_nothing(spec: str) -> None:
    """As `policy_kernels.best_index`: a tie needs two moves, so one legal move leaves the generator be."""
    game = make_game("huit", num_players=2)
    observations, masks = positions(game, seed=3, count=60)
    only = np.zeros_like(masks)
    only[np.arange(len(masks)), masks.argmax(axis=1)] = 1  # each row's first legal move, alone
    agent = make_agent(spec, game, seed=5)
    before = copy.deepcopy(agent.rng.bit_generator.state)
    assert agent.act_batch(observations, only).tolist() == masks.argmax(axis=1).tolist()
    assert agent.rng.bit_generator.state == before
    assert agent.act_batch(observations[:0], only[:0]).shape == (0,)


@pytest.mark.parametrize("spec", SPECS)
def test_bad_batches_are_refused_before_any_row_is_played(spec: str) -> None:
    game = make_game("huit", num_players=3)
    observations, masks = positions(game, seed=1, count=20)
    agent = make_agent(spec, game, seed=2)
    before = copy.deepcopy(agent.rng.bit_generator.state)
    empty = masks.copy()
    empty[7] = 0
    with pytest.raises(ValueError, match="row 7 of the action masks has no legal action"):
        agent.act_batch(observations, empty)
    with pytest.raises(ValueError, match=rf"observations \(B, {game.layout.size}\) and masks \(B, 354\)"):
        agent.act_batch(observations[:, :-1], masks)
    with pytest.raises(ValueError, match="masks"):
        agent.act_batch(observations, masks[:-1])
    assert agent.rng.bit_generator.state == before


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.float32, np.int64])
def test_any_mask_dtype_gives_the_same_moves(dtype: type) -> None:
    """Masks of another dtype are read as `act` reads them (nonzero: legal)."""
    game = make_game("huit", num_players=4)
    observations, masks = positions(game, seed=2, count=80)
    for spec in SPECS:
        one, two = make_agent(spec, game, seed=9), make_agent(spec, game, seed=9)
        expected = row_by_row(two, observations, masks)
        assert one.act_batch(observations, masks.astype(dtype)).tolist() == expected


def test_the_benchmark_runs_with_a_row_per_game_and_table(monkeypatch: pytest.MonkeyPatch) -> None:
    """`benchmarks/heuristic_throughput.py` stays runnable: a measured row per game, table and agent."""
    monkeypatch.delenv("NUMBA_NUM_THREADS", raising=False)  # the module sets it; restored after the test
    bench = load_benchmark("heuristic_throughput", monkeypatch)
    rows = bench.measure(games=["huit"], tables=[2], rows=64, act_rows=16, repeats=1, seed=0)
    assert [(r.game, r.players, r.agent) for r in rows] == [("huit", 2, spec) for spec in SPECS]
    assert all(r.batched > 0 and r.act > 0 for r in rows)
    assert "| huit | 2 | expert |" in bench.table(rows)
