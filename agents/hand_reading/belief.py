"""Beliefs and recognised opponents: worlds weighed by how likely the other seats' recorded moves were.

Why: a search that deals the hidden cards uniformly (`cardlab.envs.world_sampling`)
treats a seat that laid its only heart as likely to hold more hearts as one
that had several to choose from. Each world's deal is played back through
the hand's public record (`cardlab.envs.world_replay`) in a batched engine, all
worlds in lockstep, and at each decision of another seat every model asked
gives, in one call for all the slots, the log-probability of the move that
seat made there: a heuristic its choice with probability 1 - `eps` (the
rest spread over the legal moves, ``softened``), a bot its softmax, `random`
uniform. A model the game's fast paths compile plays the whole record in one
numba call (`FastPaths.replay`), with the same log-probabilities.

`weigh` weighs each world by the product of those probabilities, falls back
to the uniform worlds when the effective sample size ((sum w)^2 / sum w^2)
falls under `ess` times the worlds, and else resamples by weight
(systematic). A world whose replay meets a move illegal there gets weight 0;
a record the replay cannot follow (after a new pile, A10, B10) leaves the
worlds uniform. How a search spends its time on this is
`cardlab.agents.hand_reading.reading`. `Recognizer` keeps, per other seat and
model of a library, the evidence for that model over the hand and the
match's finished hands; `best` names each seat's likeliest model.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np

from cardlab.agents.base import Agent, RandomAgent, named_agent
from cardlab.agents.bot_catalogue import fitting_bot, shipped_bots
from cardlab.envs import world_replay
from cardlab.envs.fast import Replay
from cardlab.envs.game_spec import Game
from cardlab.envs.record import Record
from cardlab.envs.world_sampling import Determinization, Worlds

EPS = 0.3
"""a softened heuristic's share of probability spread over the legal moves"""


class Model(NamedTuple):
    """An opponent model: an agent, and for a heuristic how far it is softened."""

    name: str
    agent: Agent
    eps: float = EPS

    def log_probs(self, observations: np.ndarray, masks: np.ndarray, actions: np.ndarray) -> np.ndarray:
        """(B,) the log-probability that this model makes `actions[b]` from row b (see the module doc)."""
        legal = np.asarray(masks, dtype=bool)
        count = legal.sum(axis=1).astype(np.float64)
        rows = np.arange(legal.shape[0])
        if isinstance(self.agent, RandomAgent):
            return -np.log(count)
        logits = getattr(self.agent, "logits", None)
        if callable(logits):
            raw = np.where(legal, np.asarray(logits(observations), dtype=np.float64), -np.inf)
            top = raw.max(axis=1, keepdims=True)
            norm = top[:, 0] + np.log(np.exp(raw - top).sum(axis=1))
            return raw[rows, actions] - norm
        chosen = np.asarray(self.agent.act_batch(observations, legal), dtype=np.int64)
        spread = self.eps / count
        return np.log(np.where(chosen == actions, 1.0 - self.eps + spread, spread))


class Replayed(NamedTuple):
    """What playing the record back from each world found."""

    loglik: np.ndarray
    """(models, n, W) each seat's log-likelihood of its recorded moves, per model and world (seat 0's: 0)"""
    ok: np.ndarray
    """(W,) bool: the world can have led to the record (a deal, every recorded move legal in it)"""
    reason: str | None = None
    """why the record was not played back (None: it was)"""


def play_back(game: Game, known: Determinization, worlds: Worlds, record: Record | None,
              models: Sequence[Model], rng: np.random.Generator, engine: Any = None,
              fused: bool = True) -> Replayed:
    """Each world's deal played forward through the record, every model asked at each decision of another
    seat (see the module doc); `engine` a batched engine of the game with at least W slots, else built.

    With `fused` and one model that has a compiled replay on the engine (`fused_replay_of`: a Huit
    heuristic or `random`) the moves are played in one compiled call, with the same results as the
    stepped loop (`fused=False`), which serves every other model and game."""
    n, count = game.num_players, worlds.count
    loglik = np.zeros((len(models), n, count))
    reason = world_replay.unreplayable(record)
    if reason is not None or count == 0:
        return Replayed(loglik, np.ones(count, dtype=bool), reason)
    assert record is not None
    deals = world_replay.deals_back(known, worlds, record, rng)
    ok = deals.ok.copy()
    moves = world_replay.recorded_moves(game, record)
    if not moves or not ok.any():
        return Replayed(loglik, ok)
    if engine is None or engine.batch_size < count:
        engine = game.spec.batched_engine()(game.rules, max(count, 1), seed=0)
    at_deal, dealt = world_replay.deal_worlds(game, known, deals, record, rng)
    engine.load_worlds(at_deal, dealt, np.arange(count)[:, None])
    compiled = fused_replay_of(engine, models[0]) if fused and len(models) == 1 else None
    if compiled is not None:
        compiled(count, np.array([move.seat for move in moves]), np.array([move.action for move in moves]),
                 ok, loglik[0])
        return Replayed(loglik, ok)
    actions = np.zeros(engine.batch_size, dtype=np.int64)
    active = np.zeros(engine.batch_size, dtype=bool)
    for move in moves:
        rows = np.flatnonzero(ok)
        if not rows.size:
            break
        mask = engine.legal_mask(rows)
        fits = mask[:, move.action] & (engine.current_player()[rows] == move.seat)
        ok[rows[~fits]] = False
        rows, mask = rows[fits], mask[fits]
        if move.seat != 0 and rows.size:
            choice = mask.sum(axis=1) > 1
            if choice.any():
                asked = rows[choice]
                obs = engine.observe(np.full(asked.size, move.seat, dtype=np.int64), asked)
                chosen = np.full(asked.size, move.action, dtype=np.int64)
                for m, model in enumerate(models):
                    loglik[m, move.seat, asked] += model.log_probs(obs, mask[choice], chosen)
        active[:] = False
        active[rows] = True
        actions[rows] = move.action
        engine.step(actions, active)
    rows = np.flatnonzero(ok)
    ok[rows] = (engine.current_player()[rows] == 0) & ~engine.over[rows].astype(bool)  # the seat's turn now
    return Replayed(loglik, ok)


_FUSED: weakref.WeakKeyDictionary[Any, dict[tuple[int, float], tuple[Agent, Replay | None]]] = (
    weakref.WeakKeyDictionary())
"""per engine, the compiled replay of each model agent (its scratch arrays are the engine's size)"""


def fused_replay_of(engine: Any, model: Model) -> Replay | None:
    """The compiled replay of `model` on `engine` (its game's `FastPaths.replay` with `Agent.compiled`), made
    once per engine and agent; None where its game's paths do not compile it."""
    per_engine = _FUSED.setdefault(engine, {})
    key = (id(model.agent), float(model.eps))
    cached = per_engine.get(key)
    if cached is None or cached[0] is not model.agent:
        cached = per_engine[key] = (model.agent, fused_replay(engine, model.agent, model.eps))
    return cached[1]


def fused_replay(engine: Any, agent: Agent, eps: float) -> Replay | None:
    """The compiled replay of `agent` (softened by `eps`) on `engine` by its game's fast paths, or None."""
    paths, policy = agent.game.spec.fast_paths(), agent.compiled()
    if paths is None or paths.replay is None or policy is None:
        return None
    return paths.replay(engine, policy, eps)


def ess(weights: np.ndarray) -> float:
    """The effective sample size of non-negative weights: (sum w)^2 / sum w^2 (0 when all are 0)."""
    total, squares = float(weights.sum()), float((weights ** 2).sum())
    return total * total / squares if squares > 0 else 0.0


def normalised(log_weights: np.ndarray, ok: np.ndarray) -> np.ndarray:
    """Weights summing to 1 from log-weights, 0 where not `ok` (all 0 when none is)."""
    logs = np.where(ok, log_weights, -np.inf)
    if not ok.any():
        return np.zeros(log_weights.shape)
    w = np.exp(logs - logs.max())
    return w / w.sum()


def resample(weights: np.ndarray, rng: np.random.Generator, keep: int | None = None) -> np.ndarray:
    """(keep,) indices (default: as many as weights) drawn by systematic resampling of normalised `weights`
    (each world about keep * w times)."""
    count = weights.size if keep is None else keep
    points = (rng.random() + np.arange(count)) / count
    return np.minimum(np.searchsorted(np.cumsum(weights), points, side="right"), weights.size - 1)


class Weighed(NamedTuple):
    """One belief's outcome: the worlds to search, the weights, their ESS and whether it fell back."""

    worlds: Worlds
    weights: np.ndarray
    ess: float
    uniform: bool
    """the worlds are the uniform ones (ESS too small, or nothing replayed: `reason`)"""
    reason: str | None = None


def weigh(worlds: Worlds, replayed: Replayed, seat_models: Sequence[int], share: float,
          rng: np.random.Generator, keep: int | None = None) -> Weighed:
    """The worlds weighed with model `seat_models[s]` (an index into the replay's models) for each seat s
    but 0, then `keep` of them (default: all) resampled in a random order, or the first `keep` uniform
    worlds when the ESS falls under `share` of the worlds."""
    count = worlds.count
    first = worlds.rows(slice(0, count if keep is None else keep))
    if replayed.reason is not None:
        return Weighed(first, np.full(count, 1.0 / max(count, 1)), float(count), True, replayed.reason)
    logs = sum((replayed.loglik[m, s] for s, m in enumerate(seat_models) if s != 0), np.zeros(count))
    weights = normalised(logs, replayed.ok)
    found = ess(weights)
    if found < share * count:
        reason = "no world fits the record" if not replayed.ok.any() else "the weights collapsed"
        return Weighed(first, weights, found, True, reason)
    drawn = resample(weights, rng, keep)  # in the pool's order: shuffled, so that any first part is a sample
    return Weighed(worlds.rows(rng.permutation(drawn)), weights, found, False)


def log_evidence(loglik: np.ndarray, ok: np.ndarray) -> np.ndarray:
    """(models, n): log of the mean over the `ok` worlds of each seat's likelihood under each model."""
    if not ok.any():
        return np.zeros(loglik.shape[:2])
    kept = loglik[:, :, ok]
    top = kept.max(axis=2, keepdims=True)
    return top[:, :, 0] + np.log(np.exp(kept - top).mean(axis=2))


class Recognizer:
    """Each other seat's evidence for each model of a library, over the hand and the match (module doc)."""

    def __init__(self, names: Sequence[str], num_players: int) -> None:
        self.names = list(names)
        self.hand = np.zeros((len(names), num_players))
        """this hand's log-evidence so far, per model and seat"""
        self.match = np.zeros((len(names), num_players))
        """the summed log-evidence of the match's finished hands"""

    def observe(self, replayed: Replayed) -> None:
        """This hand's evidence, from a replay of its record so far (a record not replayed changes none)."""
        if replayed.reason is None:
            self.hand = log_evidence(replayed.loglik, replayed.ok)

    def end_hand(self) -> None:
        self.match += self.hand
        self.hand = np.zeros_like(self.hand)

    def new_match(self) -> None:
        self.hand = np.zeros_like(self.hand)
        self.match = np.zeros_like(self.match)

    def totals(self) -> np.ndarray:
        """(models, n) the log-evidence of the match so far, this hand included."""
        return self.match + self.hand

    def best(self) -> dict[int, str]:
        """Each other seat's likeliest model (ties: the first of the library)."""
        totals = self.totals()
        return {s: self.names[int(np.argmax(totals[:, s]))] for s in range(1, totals.shape[1])}


def model_library(game: Game, base: Agent, names: Sequence[str], seed: int | None,
                  eps: float = EPS) -> dict[str, Model]:
    """Models by name: ``random``, the game's heuristics, ``bot`` (the shipped bot of the table), ``base``
    (the searcher's own base agent); a `ValueError` names the accepted ones."""
    out: dict[str, Model] = {}
    for i, name in enumerate(names):
        if name == "base":
            out[name] = Model(name, base, eps)
        elif name == "bot":
            from cardlab.agents.bot import load_bot  # torch only when a bot is asked for

            out[name] = Model(name, load_bot(shipped_bots()[fitting_bot(game)], game, seed=seed), eps)
        elif (name == "random" or name in game.spec.heuristics) and (
                agent := named_agent(name, game, seed=None if seed is None else seed + i)) is not None:
            out[name] = Model(name, agent, eps)
        else:
            raise ValueError(f"opponent model {name!r} is not known: use random, "
                             f"{', '.join(game.spec.heuristics)}, bot (the table's shipped bot) or base")
    return out


def seat_agents(models: Mapping[str, Model], chosen: Mapping[int, str]) -> dict[int, Agent]:
    """The agent of each seat's chosen model."""
    return {seat: models[name].agent for seat, name in chosen.items()}


LIBRARY = ("random", "greedy", "expert", "bot", "base")
"""the models a recognising search chooses among (those the game has: its heuristics, a shipped bot; the
search's base unless it is one of them)"""
