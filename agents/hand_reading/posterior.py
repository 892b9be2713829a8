"""Worlds drawn from the exact posterior: deals in which the other seats' model makes every recorded move.

Why: the likelihood belief (`cardlab.agents.hand_reading.belief`) weighs a
fixed pool of uniform worlds; against a near-deterministic field its weights
collapse onto a few worlds (or none), so it cannot say what the record tells
of the hidden hands. Here worlds are drawn from the posterior itself.

One replay (`belief.play_back`) of a world draws, move by move, the model's
own pick with the model's generator (ties broken at random, drawn cards
chosen at random when walking back to the deal): the world is kept when
every pick is the recorded move, so with probability equal to its
likelihood (`consistent`). Rejection: uniform worlds each kept that way are
independent posterior draws. Where too few are kept, Metropolis chains start
from the kept ones and propose swapping two cards between two hidden places
(a symmetric move over the uniform prior), taken when `consistent` keeps
the proposal: pseudo-marginal Metropolis with a 0/1 estimate, exact at
stationarity. Exact where every draw of the record may be any card (Huit);
records the replay cannot follow (A10, B10) are refused. The measured
figures and their checks are in docs/results.md, "The exact posterior".
"""

from __future__ import annotations

import dataclasses
from typing import Any, NamedTuple

import numpy as np

from cardlab.agents.base import named_agent
from cardlab.agents.hand_reading.belief import Model, play_back
from cardlab.envs import world_replay
from cardlab.envs.declared import check_fields, option
from cardlab.envs.game_spec import Game
from cardlab.envs.record import Record
from cardlab.envs.world_sampling import Determinization, Worlds


@dataclasses.dataclass(frozen=True)
class Sampling:
    """How many worlds to draw and what may be spent on them: each a whole number, at most 2**20 (a block of
    worlds is held in memory at once) and 2**30 worlds replayed, checked by their declarations."""

    count: int = option(256, "worlds wanted", 1, 1 << 20)
    block: int = option(4096, "uniform worlds replayed at once by rejection", 1, 1 << 20)
    budget: int = option(65536, "uniform worlds replayed before Metropolis takes over from the worlds kept "
                         "so far", 1, 1 << 30)
    chains: int = option(128, "Metropolis chains run at once", 1, 1 << 20)
    burn: int = option(100, "Metropolis steps before a chain's states are kept", 0, 1 << 20)
    thin: int = option(4, "Metropolis steps between kept states", 1, 1 << 20)

    def __post_init__(self) -> None:
        check_fields(self, path="Sampling.")


class Posterior(NamedTuple):
    """Worlds drawn by `sample` and how they were found."""

    worlds: Worlds
    method: str
    """``rejection`` (independent draws), ``mcmc`` (chain states) or ``none`` (no world kept: no worlds)"""
    proposed: int
    """worlds replayed in all"""
    kept: int
    """uniform worlds kept by rejection"""
    moved: float
    """share of the Metropolis proposals taken (0 without chains)"""
    chain: np.ndarray
    """(count,) the chain of each world (rejection: each its own)"""


def uniform_prior(known: Determinization) -> Determinization:
    """`known` dealing uniformly (no slots, leaning or truth), refused where the walk back to the deal is
    not uniform over the drawn cards (a record whose draws are restricted or leaned: Switch's A8)."""
    if any(d is not None for d in known.drawn) or any(v is not None for v in known.voids):
        raise ValueError("the exact posterior needs a record whose every draw may be any card (Huit); "
                         "this one restricts what was drawn (A8)")
    return dataclasses.replace(known, slots=(), leaning=None, truth=None)


def consistent(game: Game, known: Determinization, worlds: Worlds, record: Record, model: Model,
               rng: np.random.Generator, engine: Any = None) -> np.ndarray:
    """(W,) bool: each world kept with probability its likelihood under `model` in every other seat (module
    doc); a `ValueError` when the record cannot be played back."""
    replayed = play_back(game, known, worlds, record, [model], rng, engine)
    if replayed.reason is not None:
        raise ValueError(f"the record cannot be played back: {replayed.reason}")
    loglik = replayed.loglik[0].sum(axis=0)
    return replayed.ok & (np.log(rng.random(worlds.count)) < loglik)


def places(known: Determinization) -> np.ndarray:
    """(unseen,) the place of each entry of a `Worlds.hidden` row: each other hand in `spans` order, then
    the face-down pile, then the rest."""
    spans, pile = known.spans
    out = np.full(known.unseen.size, len(spans) + 1, dtype=np.int64)
    for p, (_seat, start, stop) in enumerate(spans):
        out[start:stop] = p
    out[pile] = len(spans)
    return out


def swapped(hidden: np.ndarray, place: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """(W, unseen) each row with two entries of different places swapped: the first uniform, the second
    uniform among the entries of other places (the same pair either way: a symmetric proposal)."""
    count, size = hidden.shape
    if np.unique(place).size < 2:
        raise ValueError("the hidden cards lie in one place: there is nothing to swap")
    first, second = rng.integers(size, size=(2, count))
    clash = place[second] == place[first]
    while clash.any():
        second[clash] = rng.integers(size, size=int(clash.sum()))
        clash = place[second] == place[first]
    out = hidden.copy()
    rows = np.arange(count)
    out[rows, first], out[rows, second] = hidden[rows, second], hidden[rows, first]
    return out


def sample(game: Game, known: Determinization, record: Record, model: Model, rng: np.random.Generator,
           sampling: Sampling = Sampling(), engine: Any = None) -> Posterior:
    """`sampling.count` worlds of seat 0's view `known` from the exact posterior given `record`, `model`
    playing every other seat: by rejection, or Metropolis chains where the budget would keep too few."""
    prior = uniform_prior(known)
    kept: list[Worlds] = []
    found = proposed = 0
    while found < sampling.count and proposed < sampling.budget:
        block = min(sampling.block, sampling.budget - proposed)
        worlds = prior.deal(rng, block)
        chosen = np.flatnonzero(consistent(game, known, worlds, record, model, rng, engine))
        kept.append(worlds.rows(chosen))
        found, proposed = found + chosen.size, proposed + block
        if found and found * sampling.budget < sampling.count * proposed:
            break  # at this rate the budget keeps too few: chains from those kept
    if found >= sampling.count or not found:
        pool = joined(kept, prior)
        chosen = np.arange(min(found, sampling.count))
        return Posterior(pool.rows(chosen), "rejection" if found else "none", proposed, found, 0.0, chosen)
    return chained(game, known, record, model, rng, sampling, engine, joined(kept, prior), proposed)


def chained(game: Game, known: Determinization, record: Record, model: Model, rng: np.random.Generator,
            sampling: Sampling, engine: Any, start: Worlds, proposed: int) -> Posterior:
    """`sample`'s Metropolis chains, chain c starting from world c of the kept `start` (in turn)."""
    states = start.rows(np.arange(sampling.chains) % start.count)
    place = places(known)
    draws: list[Worlds] = []
    moved = steps = 0
    while sum(d.count for d in draws) < sampling.count:
        proposal = Worlds(swapped(states.hidden, place, rng), states.under, states.picks)
        taken = consistent(game, known, proposal, record, model, rng, engine)
        states = Worlds(np.where(taken[:, None], proposal.hidden, states.hidden), states.under, states.picks)
        moved, steps = moved + int(taken.sum()), steps + 1
        if steps > sampling.burn and (steps - sampling.burn) % sampling.thin == 0:
            draws.append(states)
    worlds = joined(draws, known).rows(np.arange(sampling.count))
    chain = np.tile(np.arange(sampling.chains), len(draws))[:sampling.count]
    return Posterior(worlds, "mcmc", proposed + steps * sampling.chains, start.count,
                     moved / (steps * sampling.chains), chain)


def joined(parts: list[Worlds], known: Determinization) -> Worlds:
    """The worlds of `parts` in order, as one (none: no worlds of `known`'s layout)."""
    if not parts:
        empty = np.empty((0, known.unseen.size), np.int64)
        return Worlds(empty, np.empty((0, known.under.size), np.int64), {})
    return Worlds(np.concatenate([p.hidden for p in parts]), np.concatenate([p.under for p in parts]),
                  {name: np.concatenate([p.picks[name] for p in parts]) for name in parts[0].picks})


MODEL = "expert"
"""the model `Drawer` assumes in every other seat: the heuristic whose replay keeps a world with its
likelihood (its only randomness is its tie-breaks)"""
GAMES = ("huit",)
"""the games whose records leave every draw free, so that `uniform_prior` holds (Switch's A8 restricts what
was drawn)"""
SEARCH_SAMPLING = Sampling(count=128, burn=200, thin=1)
"""what a search spends on its worlds: one state of each of 128 chains after 200 steps where rejection keeps
too few (docs/results.md, "The exact posterior", measures it against the probe's 500)"""


class Drawer:
    """A search's worlds from the exact posterior (``search:belief=posterior``), the expert assumed in every
    other seat: kept across decisions with its replay engine, reseeded with the search (C2).

    Why apart from `sample`: a search needs one call that gives its worlds or
    says it cannot (a record the replay cannot follow, no world kept in the
    budget), so that it deals its fallback worlds there; and a refusal at
    construction where the posterior cannot apply at all (no expert, draws
    the record restricts)."""

    def __init__(self, game: Game, seed: int | None, sampling: Sampling = SEARCH_SAMPLING) -> None:
        if game.id not in GAMES or MODEL not in game.spec.heuristics:
            lacks = "draws the record restricts (A8)" if MODEL in game.spec.heuristics else "no expert"
            raise ValueError(f"search option belief=posterior draws worlds in which the expert makes every "
                             f"recorded move, so it needs {' or '.join(GAMES)} (every draw free, an expert); "
                             f"{game.id} has {lacks}")
        self.game, self.sampling = game, sampling
        agent = named_agent(MODEL, game, seed=seed)
        assert agent is not None
        self.model = Model(MODEL, agent, 0.0)
        self.engine = game.spec.batched_engine()(game.rules, max(sampling.block, sampling.chains), seed=seed)
        self.last: Posterior | None = None
        """the last decision's draw (None: its record could not be played back)"""

    def reseed(self, seed: int | None) -> None:
        """The model's tie-breaks and the replay engine's generators restarted from `seed`."""
        self.model.agent.seed(seed)
        self.engine.reseed(seed)

    def draw(self, known: Determinization, wanted: int, record: Record | None,
             rng: np.random.Generator) -> Worlds | None:
        """`wanted` worlds of the posterior of seat 0's view `known` given `record` (`sample`), or None where
        there are none: no record, one the replay cannot follow (A10, B10), or no world kept."""
        self.last = None
        if record is None or world_replay.unreplayable(record) is not None:
            return None
        self.last = sample(self.game, known, record, self.model, rng,
                           dataclasses.replace(self.sampling, count=wanted), self.engine)
        return self.last.worlds if self.last.worlds.count else None
