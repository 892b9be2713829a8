"""A game's fast paths: what its `GameSpec.fast` declares, and what the generic layers hand them.

Why: a search's rollouts, a belief's replay, a batch's play-out and the
vector env's step run fastest as one compiled call of the game's own kernels
(its engine and its heuristics compiled together). Those calls know the game;
the layers that use them (`cardlab.agents.rollouts`, `cardlab.agents.hand_reading.belief`,
`cardlab.agents.batch`, `cardlab.training.arena.vector`) must not. So a game
declares its fast paths in its spec (``fast="module:FAST_PATHS"``, a
`FastPaths`, imported when first asked for: `GameSpec.fast_paths`), and an
agent says how a compiled path may play it (`CompiledPolicy`, from
`Agent.compiled`): which kernel (`RANDOM`, `GREEDY`, `EXPERT`), for which
rules, and with which parameters. Each path returns None where it does not
compile that engine and policy; the caller then plays move by move, with the
same results (each game's differential tests hold its paths to that).

A game without fast paths (the toy game) declares none (`fast=None`): every
feature still plays it, move by move.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, NamedTuple, Protocol

import numpy as np

RANDOM, GREEDY, EXPERT = range(3)
"""The compiled players (`CompiledPolicy.kind`), by the kernel they call."""
PlayOut = Callable[[np.ndarray, np.ndarray, np.ndarray], bool]
"""(seats (B,), gained (B,) float64, counted (B,) bool) -> whether some episode ended: every seat but
`seats[b]` played up to that seat's turn, as `BatchedEngine.play_random` plays it"""
ToEnd = Callable[[int, int, np.ndarray], None]
"""(slots n, seat, gained (B,) float64): the first n slots played to their episode's end, `gained` adding
`seat`'s rewards (the slots from n on are not looked at)"""
Replay = Callable[[int, np.ndarray, np.ndarray, np.ndarray, np.ndarray], None]
"""(slots n, seats (M,) int64, actions (M,) int64, ok (n,) bool, loglik (players, n) float64): the first n
slots played through the M recorded moves; `ok` cleared where a move does not fit, each seat's row of
`loglik` added to (`cardlab.agents.hand_reading.belief.play_back`)"""


def no_params() -> tuple[np.ndarray, ...]:
    """The parameters of a kernel that reads none (`random`)."""
    return ()


class Drawing(Protocol):
    """What draws a compiled player's moves: an agent's generator, read at each call (`Agent.seed` replaces
    it)."""

    rng: np.random.Generator


class CompiledPolicy(NamedTuple):
    """An agent as a game's compiled paths play it (`Agent.compiled`): they pick, on the same rows with the
    same generator, what its `act_batch` picks."""

    kind: int
    """`RANDOM`, `GREEDY` or `EXPERT`: the game's kernel it plays with"""
    rules: Any
    """the rule options it plays (a path compiles it only on an engine of the same rules)"""
    player: Drawing
    """the agent, whose `rng` draws the moves"""
    params: Callable[[], tuple[np.ndarray, ...]] = no_params
    """the kernel's parameters as the agent holds them now (what each game's kernel reads: its docstring)"""


class StepResult(NamedTuple):
    """What a fused vector step gives the env: the learner's rewards and ends, the last observations of the
    episodes that ended (None: none ended), and the learner's next observations and masks."""

    rewards: np.ndarray  # (B,) float64
    terminated: np.ndarray  # (B,) bool
    truncated: np.ndarray  # (B,) bool
    final: np.ndarray | None  # (B,) object: {"observation", "action_mask"} where an episode ended
    obs: dict[str, np.ndarray]


VectorStep = Callable[[np.ndarray | None, np.ndarray, np.ndarray, np.random.Generator], StepResult]
"""(learner actions (B,) or None for the play-out after a deal, seats, owners, the env's generator) ->
`StepResult`: `cardlab.training.arena.vector.CardVectorEnv`'s step in one compiled call"""


MakeStep = Callable[[Any, int, CompiledPolicy | None, str, int, np.ndarray], VectorStep | None]
"""(engine, specs, policy or None, reward, max deals, no moves) -> the fused step (`FastPaths.vector_step`)"""


@dataclasses.dataclass(frozen=True)
class FastPaths:
    """A game's compiled paths (each None where the game has none); each takes an engine of the game's
    batched engine class and returns None where it does not compile that engine and policy."""

    play_out: Callable[[Any, CompiledPolicy], PlayOut | None] | None = None
    """(engine, policy) -> every seat but one played up to that seat's turn (`cardlab.agents.batch`)"""
    to_end: Callable[[Any, CompiledPolicy], ToEnd | None] | None = None
    """(engine, policy) -> every seat played to the hand's end (a search's rollouts)"""
    replay: Callable[[Any, CompiledPolicy, float], Replay | None] | None = None
    """(engine, policy, eps) -> the record played back, the policy softened by eps (a belief)"""
    vector_step: MakeStep | None = None
    """(engine, specs, policy or None for the env's random players, reward, max deals, the mask of no moves)
    -> the vector env's step (`cardlab.training.arena.vector`)"""
