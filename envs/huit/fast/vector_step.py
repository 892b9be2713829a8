"""A step of the vector env (`cardlab.training.arena.vector`) over Huit in one compiled call: `FusedStep`,
Huit's `FastPaths.vector_step`.

Why: a learner step is the learner's moves, the other seats' moves up to the
learner's next turn, the ends of episodes, new deals and new seats for the
games that ended, and the learner's observations and masks. Played from Python
(`CardVectorEnv._play_out`), that is a dozen engine calls and their array
checks per step, which cost about as much as the moves themselves at a few
hundred games. Here `vector_step` does all of it in one numba call, writing
into the step's output arrays, with the same draws in the same order (the
env's generator for the seats and its random players, the agent's for a
heuristic), so it plays the games the env's Python passes play
(`tests/training/test_vector_fused.py` holds them to it, step for step).

Covered (`fused_step`): a `HuitBatch` whose other seats are all ``"random"``
(the env's generator draws them, as `HuitBatch.play_random`) or all one
compiled heuristic (`playout.compiled_player`). The env plays everything
else, and a step with a penalized illegal move, in Python.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from numba import njit

from cardlab.envs.fast import CompiledPolicy, StepResult
from cardlab.envs.fast_playout import NONE, Scratch, scratch
from cardlab.envs.huit.batch_rounds import random_rounds
from cardlab.envs.huit.batch_state import (
    HAND_OVER,
    S_INFO,
    S_REWARDS,
    S_SEATS,
    SCORE_CHANGES,
    TRUNCATED,
    KernelArrays,
)
from cardlab.envs.huit.batched import HuitBatch
from cardlab.envs.huit.fast.playout import CompiledPlayer, PlayerArrays, compiled_player, play_rounds
from cardlab.envs.huit.heuristics.arrays import TABLES_ARRAYS
from cardlab.envs.huit.heuristics.kernels import AGAIN
from cardlab.envs.huit.kernels import mask_kernel, observe_kernel, reset_kernel, step_kernel
from cardlab.envs.match import points_reward

ENV_RANDOM = -1
"""`vector_step`'s kind of the env's own random players (`play_random`'s draws); others: `play_rounds`'"""
STEPPED, TOO_MANY_DEALS = -1, -2
"""`vector_step`'s status when it played the step, and when a game ended `max_deals` deals in a row before
the learner's first move; a status >= 0 is the first game whose learner action is illegal (nothing moved)."""


class StepArrays(NamedTuple):
    """The env's side of `vector_step`: what it reads and writes of the env, the step's outputs and its
    scratch arrays, by game (B)."""

    who: np.ndarray  # (B,) int64: the learner's seats, drawn again in place for each new deal
    owners: np.ndarray  # (B, n) int64: the seats' owners (the learner -1), drawn again likewise
    num_specs: int  # how many specs the env's owners are drawn from
    max_deals: int  # the most deals in a row that may end before the learner's first move
    fresh: np.ndarray  # (B,) bool: the games dealt since the learner's last move (set for new deals)
    gained: np.ndarray  # (B,) float64, out: the learner's rewards
    terminated: np.ndarray  # (B,) bool, out
    truncated: np.ndarray  # (B,) bool, out
    points: np.ndarray  # (B,) int64, out: the learner's score change of a won game
    reported: np.ndarray  # (B,) int64, out: the games whose episodes ended, first `count`
    finals: np.ndarray  # (B, obs_size) float32, out: their last observations, first `count`
    observations: np.ndarray  # (B, obs_size) float32, out: the learner's next observations
    masks: np.ndarray  # (B, num_actions) bool, out: and masks
    every: np.ndarray  # (B,) int64: 0..B-1
    counted: np.ndarray  # (B,) bool, scratch
    deals: np.ndarray  # (B,) int64, scratch
    legal: np.ndarray  # (num_actions,) int64, scratch


@njit(cache=True)
def vector_step(learn: bool, actions: np.ndarray, v: StepArrays, s: KernelArrays, gens: Any,
                env_rng: np.random.Generator, player: PlayerArrays, agent_rng: np.random.Generator,
                work: Scratch) -> tuple[int, int]:
    """`CardVectorEnv.step` (`learn`) or the play-out of `reset` (not `learn`: no learner move) in one call.

    In: the learner's `actions` and the env's arrays `v` (`StepArrays`),
    the engine's `s` and generators, the env's generator, the other seats'
    player (`ENV_RANDOM`: the env's random players) and its generator,
    scratch. Out: `v`'s outputs (the ends, the games whose episodes ended
    in `v.reported[:count]`, the learner's next observations and masks).
    Returns (status, count).
    """
    who, owners, fresh, gained, counted, deals = v.who, v.owners, v.fresh, v.gained, v.counted, v.deals
    terminated, truncated, reported, points, info, rows = (v.terminated, v.truncated, v.reported, v.points,
                                                           s[S_INFO], work.rows)
    seats, rewards = s[S_SEATS], s[S_REWARDS]
    n = owners.shape[1]
    if learn:
        bad = step_kernel(actions, s, gens)
        if bad >= 0:
            return bad, 0
        for b in range(who.shape[0]):
            gained[b] = rewards[b, who[b]]
    else:
        gained[:] = 0.0
    terminated[:] = False
    truncated[:] = False
    deals[:] = 0
    count = 0
    while True:  # a pass: the others move up to the learner's turn, then the games that ended are dealt again
        for b in range(who.shape[0]):
            counted[b] = not fresh[b]
        if player.kind == ENV_RANDOM:
            random_rounds(who, env_rng, gained, counted, s, gens, v.legal, work.actions, work.flags[0],
                          work.flags[1], rows)
        else:
            play_rounds(who, gained, counted, s, gens, player, agent_rng, work)
        over = 0
        for b in range(who.shape[0]):
            if info[b, HAND_OVER]:
                rows[over] = b
                over += 1
        if over == 0:
            break
        for i in range(over):
            b = rows[i]
            if not fresh[b]:  # the learner's episode ended (`CardVectorEnv._record_ends`)
                won = info[b, TRUNCATED] == 0
                terminated[b], truncated[b] = won, not won
                points[b] = seats[b, SCORE_CHANGES, who[b]] if won else 0
                reported[count] = b
                observe_kernel(reported[count:count + 1], who[b:b + 1], s, v.finals[count:count + 1])
                count += 1
            deals[b] += 1
            if deals[b] > v.max_deals:
                return TOO_MANY_DEALS, count
        reset_kernel(rows[:over], s, gens)
        for i in range(over):  # `CardVectorEnv._seat`: the seats, then the owners, as numpy draws them
            who[rows[i]] = env_rng.integers(0, n)
        for i in range(over):
            for seat in range(n):
                owners[rows[i], seat] = env_rng.integers(0, v.num_specs)
        for i in range(over):
            owners[rows[i], who[rows[i]]] = -1
            fresh[rows[i]] = True
    mask_kernel(s, v.masks)
    observe_kernel(v.every, who, s, v.observations)
    return STEPPED, count


class FusedStep:
    """`vector_step` over one engine and its other seats' player: buffers made once, outputs fresh per step
    (a caller may keep the arrays of earlier steps)."""

    def __init__(self, engine: HuitBatch, num_specs: int, player: CompiledPlayer | None, reward: str,
                 max_deals: int, no_moves: np.ndarray) -> None:
        self.engine, self.num_specs, self.player = engine, num_specs, player
        self.points_reward = reward == "points"
        self.max_deals, self.no_moves = max_deals, no_moves
        B = engine.batch_size
        self.every = np.arange(B, dtype=np.int64)
        self.fresh = np.zeros(B, dtype=np.bool_)
        self.counted = np.zeros(B, dtype=np.bool_)
        self.deals = np.zeros(B, dtype=np.int64)
        self.points = np.zeros(B, dtype=np.int64)
        self.reported = np.zeros(B, dtype=np.int64)
        self.legal = np.zeros(engine.num_actions, dtype=np.int64)
        self.env_players = PlayerArrays(ENV_RANDOM, 0, NONE, engine.n, AGAIN, NONE,
                                        np.zeros(0, dtype=np.float64), TABLES_ARRAYS)
        """the player of `vector_step` when the env's random players hold the other seats"""
        self.work = scratch(engine)

    def __call__(self, actions: np.ndarray | None, seats: np.ndarray, owners: np.ndarray,
                 rng: np.random.Generator) -> StepResult:
        """The learner's `actions` ((B,) int64) and the rest of the step, or with None the play-out after a
        deal (every game fresh). `seats` and `owners` are the env's, drawn again in place for new deals.

        An illegal learner action raises the engine's `ValueError` (nothing moved), as `HuitBatch.step`.
        """
        e, p, B = self.engine, self.player, self.engine.batch_size
        learn = actions is not None
        self.fresh[:] = not learn
        gained = np.empty(B)
        terminated, truncated = np.empty(B, dtype=np.bool_), np.empty(B, dtype=np.bool_)
        finals = np.empty((B, e.obs_size), dtype=np.float32)
        observations = np.empty((B, e.obs_size), dtype=np.float32)
        masks = np.empty((B, e.num_actions), dtype=np.bool_)
        player, agent_rng = (self.env_players, rng) if p is None else (p.arrays, p.agent.rng)
        env = StepArrays(seats, owners, self.num_specs, self.max_deals, self.fresh, gained, terminated,
                         truncated, self.points, self.reported, finals, observations, masks, self.every,
                         self.counted, self.deals, self.legal)
        status, count = vector_step(learn, self.every if actions is None else actions, env, e.kernel_arrays,
                                    e.generators, rng, player, agent_rng, self.work)
        if status >= 0:  # nothing moved: the engine refuses the action as its own step does, naming the game
            assert actions is not None
            e.step(actions)
            raise AssertionError(f"the engine took the action vector_step refused in game {status}")
        if status == TOO_MANY_DEALS:
            raise RuntimeError(f"{self.max_deals} deals in a row ended before the learner's first move")
        final = None
        if count:
            rows = self.reported[:count]
            if self.points_reward:
                gained[rows] = np.where(terminated[rows], points_reward(self.points[rows]), 0.0)
            final = np.full(B, None, dtype=object)
            for i, b in enumerate(rows.tolist()):
                final[b] = {"observation": finals[i], "action_mask": self.no_moves}
        return StepResult(gained, terminated, truncated, final,
                          {"observation": observations, "action_mask": masks.view(np.int8)})


def fused_step(engine: Any, num_specs: int, policy: CompiledPolicy | None, reward: str, max_deals: int,
               no_moves: np.ndarray) -> FusedStep | None:
    """The fused step of an env's engine whose other seats are all `policy` (None: all the env's random
    players, drawn from `num_specs` specs), or None where there is none (the module doc)."""
    if not isinstance(engine, HuitBatch):
        return None
    player = None if policy is None else compiled_player(engine, policy)
    if policy is not None and player is None:
        return None
    return FusedStep(engine, num_specs, player, reward, max_deals, no_moves)
