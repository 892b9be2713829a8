"""Every batch user asks each of its players once per step for all the games it holds (`Agent.act_batch`).

The spy (`tests.spies.BatchSpy`) raises on `act`, so a user that still plays
slot by slot fails here; its log says how many calls and rows each step made.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from cardlab.agents.batch import BatchPlayers
from cardlab.envs import make_game
from cardlab.evaluation.evaluate import evaluate
from cardlab.evaluation.request import EvalRequest
from cardlab.training.arena.league import LeagueSettings
from cardlab.training.arena.selfplay import SelfPlayBatch
from cardlab.training.arena.vector import CardVectorEnv
from cardlab.training.best_response.exploit import exploit_config
from cardlab.training.harness.progress import Progress
from cardlab.training.trainers.lean import LeanRun
from cardlab.training.trainers.lean_imitation import COLLECT_STEPS, demonstrations
from tests.spies import SPY, BatchSpy


@pytest.fixture(autouse=True)
def _clear_spy() -> None:
    BatchSpy.clear()


def test_the_league_asks_a_heuristic_once_per_step_for_all_its_games() -> None:
    """Claim: each `SelfPlayBatch.step` makes one call holding every game where the spec is to move."""
    table = SelfPlayBatch(make_game("huit", num_players=3), 16, LeagueSettings(((SPY, 1.0),)),
                          learner_share=0.3, seed=0)
    moved = 0
    for _ in range(60):
        view = table.observe()
        theirs = int((~view[3]).sum())
        before = len(BatchSpy.calls)
        table.step(view[1].argmax(axis=1), view)
        assert [rows for _, rows in BatchSpy.calls[before:]] == ([theirs] if theirs else [])
        moved += theirs
    assert moved > 100
    assert len({agent for agent, _ in BatchSpy.calls}) == 1  # one agent for every seat the spec holds


def test_exploit_trains_against_the_frozen_agent_in_one_call_per_step(tmp_path: Path) -> None:
    """Claim: a rollout of `cardlab exploit`'s training asks the target once per move of the batch."""
    cfg = exploit_config("huit", SPY, {}, seed=0)
    cfg = dataclasses.replace(cfg, num_envs=32, ppo=dataclasses.replace(cfg.ppo, n_steps=16, batch_size=64))
    run = LeanRun(cfg, tmp_path, None, Progress(False))
    run.rollout()
    run.logger.close()
    assert len(BatchSpy.calls) == cfg.ppo.n_steps  # 32 games at 2 players: the target moves in some each step
    assert all(rows <= cfg.num_envs for _, rows in BatchSpy.calls)
    assert len({agent for agent, _ in BatchSpy.calls}) == 1


def test_imitation_asks_the_teacher_once_per_move_of_the_batch() -> None:
    """Claim: the demonstrations come from one teacher agent, one call per move holding every game."""
    num_games = 8
    data = demonstrations(make_game("switch", num_players=4), SPY, hands=4, num_games=num_games, gamma=1.0,
                          seed=0, progress=Progress(False))
    assert len(data["actions"]) > 0
    rounds = len(BatchSpy.calls) // COLLECT_STEPS
    assert rounds >= 1 and len(BatchSpy.calls) == rounds * COLLECT_STEPS
    assert {rows for _, rows in BatchSpy.calls} == {num_games}
    assert len({agent for agent, _ in BatchSpy.calls}) == 1


def test_the_vector_env_asks_each_opponent_once_per_round_of_moves() -> None:
    """Claim: a step makes as many calls as the longest run of opponent moves in any game (one a round)."""
    envs = CardVectorEnv("huit", 12, opponents=[SPY], num_players=2)
    obs, _ = envs.reset(seed=0)
    checked = 0
    for _ in range(80):
        turns = np.array([envs.engine.to_state(b).turn for b in range(12)])
        before = len(BatchSpy.calls)
        obs, _, terminated, truncated, _ = envs.step(obs["action_mask"].argmax(axis=1))
        if (terminated | truncated).any():
            continue  # a new deal restarts the turn count
        runs = np.array([envs.engine.to_state(b).turn for b in range(12)]) - turns - 1
        calls = BatchSpy.calls[before:]
        assert len(calls) == runs.max()
        assert sum(rows for _, rows in calls) == runs.sum()
        checked += 1
    assert checked > 20


def test_two_listed_heuristics_are_two_agents_each_called_once_a_round() -> None:
    envs = CardVectorEnv("switch", 16, opponents=[SPY, SPY, "random"], num_players=4)
    obs, _ = envs.reset(seed=1)
    for _ in range(20):
        before = len(BatchSpy.calls)
        obs, *_ = envs.step(obs["action_mask"].argmax(axis=1))
        assert len(BatchSpy.calls) > before
    assert len({agent for agent, _ in BatchSpy.calls}) == 2


def test_players_seeds_depend_on_the_seed_and_key_only() -> None:
    """C2: a player's generator is fixed by (seed, key), whatever order the players are first asked in."""
    game = make_game("huit", num_players=2)
    first, second = BatchPlayers(game, seed=3), BatchPlayers(game, seed=3)
    a, b = first.agent(0, "random"), first.agent(1, "random")
    d, c = second.agent(1, "random"), second.agent(0, "random")
    assert a.rng.integers(2**62) == c.rng.integers(2**62) and b.rng.integers(2**62) == d.rng.integers(2**62)
    other = BatchPlayers(game, seed=4).agent(0, "random")
    first.reseed(3)
    assert first.agent(0, "random").rng.integers(2**62) != other.rng.integers(2**62)
    assert first.agent(0, "random") is a


def test_the_vector_env_with_heuristic_opponents_repeats_with_the_seed() -> None:
    """C2: with greedy opponents (ties drawn from their generators) the same seed gives the same run."""
    def run(seed: int) -> list[float]:
        envs = CardVectorEnv("huit", 8, opponents=["greedy", "expert"], num_players=3)
        out: list[float] = []
        for _ in range(2):  # a second reset with the seed replays the first, agents reseeded
            obs, _ = envs.reset(seed=seed)
            for _ in range(40):
                obs, rewards, *_ = envs.step(obs["action_mask"].argmax(axis=1))
                out += rewards.tolist() + obs["observation"][:, :12].ravel().tolist()
        return out

    once = run(5)
    assert once == run(5)
    assert once[: len(once) // 2] == once[len(once) // 2:]
    assert once != run(6)


def test_batched_evaluation_asks_each_slot_once_per_move_of_the_batch() -> None:
    """Claim: `evaluate(batched=True)` plays every hand with one act_batch call per slot per move."""
    result = evaluate(EvalRequest("huit", [SPY, SPY, "random"], hands=30, seed=2), batched=True)
    assert result.stats[0].hands.n == 30 and len(result.hand_records) == 30
    agents = {agent for agent, _ in BatchSpy.calls}
    assert len(agents) == 2  # the two spy slots: two agents
    for agent in agents:  # each call holds the games of a move of the batch: many at once, at most all 30
        rows = [r for a, r in BatchSpy.calls if a == agent]
        assert max(rows) <= 30 and sum(rows) > 4 * len(rows)


@pytest.mark.parametrize(("game_id", "specs"), [("huit", ["bot:huit-2p"] * 2),
                                                ("switch", ["bot:switch-4p"] * 4)])
def test_batched_evaluation_plays_the_serial_hands(game_id: str, specs: list[str]) -> None:
    """Claim: with agents that draw nothing at random (bots' masked argmax) the batched evaluation gives
    the serial one's records (the same deals, rotations, winners and points), and the same seed the same."""
    serial = evaluate(EvalRequest(game_id, specs, hands=24, seed=4))
    batched = evaluate(EvalRequest(game_id, specs, hands=24, seed=4), batched=True)
    assert batched.hand_records == serial.hand_records
    assert len({r.winners for r in serial.hand_records}) > 1  # not a table where one seat always wins


def test_batched_evaluation_repeats_with_the_seed() -> None:
    specs = ["expert", "greedy", "random"]
    first = evaluate(EvalRequest("switch", specs, hands=18, seed=5), batched=True)
    assert evaluate(EvalRequest("switch", specs,
                                hands=18, seed=5), batched=True).hand_records == first.hand_records
    assert evaluate(EvalRequest("switch", specs,
                                hands=18, seed=6), batched=True).hand_records != first.hand_records
