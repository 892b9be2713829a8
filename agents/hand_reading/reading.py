"""A search's reading of the table within its time budget: the worlds a belief weighs, recognised opponents.

Why apart from `cardlab.agents.hand_reading.belief`: the belief's arithmetic
(the replay, the weights, the evidence) knows nothing of a search's budget; a
reading spends it. The record is played back in blocks of worlds
(`belief.play_back`): without a time cap every world is replayed (blocks of
at most `MAX_BLOCK`, the same on every machine, C2); under one, the first
block holds `MIN_BLOCK` worlds and each next one as many as the pace
measured on this decision's record says end in time (at most `BLOCK_GROWTH`
times the worlds replayed so far), and the replay stops before it would pass
its share of the time, so a decision's cap covers replay and rollouts
together. A record in which no other seat has moved yet is not replayed.

A belief's weights are used one of two ways (``weigh=``, `WEIGHS`):
``resample`` (`pool` times the worlds wanted dealt and weighed, under a cap
as many as fit in `REPLAY_SHARE` of the time left, and the worlds searched
drawn from them by weight) or ``weights`` (the worlds dealt once and weighed
as the rollouts reach them, `prepare`; the values are weighted means,
`weighed_values`: self-normalised importance sampling). Either way a belief
whose effective sample size falls under `share` of the worlds gives the
uniform worlds. Recognition (`recognise`) reads the evidence of the worlds
replayed before the rollouts start.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np

from cardlab.agents.base import Agent
from cardlab.agents.bot_catalogue import fitting_bot
from cardlab.agents.hand_reading.belief import (
    LIBRARY,
    Recognizer,
    Replayed,
    Weighed,
    model_library,
    normalised,
    play_back,
    seat_agents,
    weigh,
)
from cardlab.agents.hand_reading.belief import ess as effective_size
from cardlab.envs import world_replay
from cardlab.envs.game_spec import Game
from cardlab.envs.record import Record
from cardlab.envs.world_sampling import Determinization, Worlds

WEIGHS = ("resample", "weights")
"""how a belief's weights are used (module doc)"""
POOL = 4
"""resampling: the worlds dealt and weighed per world wanted"""
MIN_BLOCK = 64
"""the fewest worlds a replay block holds (a block has a fixed cost: its deals walked back, its load)"""
MAX_BLOCK = 2048
"""the most worlds a replay block holds (the replay engine's slots)"""
BLOCK_GROWTH = 4
"""under a time cap, the most worlds a replay block holds per world replayed before it in the decision"""
REPLAY_SHARE = 0.4
"""resampling under a time cap: the most of the time left that the replay may take (the rollouts the
rest); at the replay's pace (about a sixth of the rollouts' a world, Huit) it weighs about four worlds
per world the rollouts finish"""


class Read(NamedTuple):
    """What a reading gives a decision: the worlds to search, the seats' rollout agents when recognised
    (None: unchanged), and with ``weigh=weights`` the hook that weighs the worlds before the rollouts load
    them (`Rollouts.play`'s `prepare`)."""

    worlds: Worlds | Weighing
    seats: dict[int, Agent] | None
    prepare: Callable[[int], None] | None = None


def joined(parts: Sequence[Worlds]) -> Worlds:
    """The worlds of `parts`, in order, as one `Worlds`."""
    if len(parts) == 1:
        return parts[0]
    picks = {name: np.concatenate([p.picks[name] for p in parts]) for name in parts[0].picks}
    return Worlds(np.concatenate([p.hidden for p in parts]), np.concatenate([p.under for p in parts]), picks)


def stacked(parts: Sequence[Replayed]) -> Replayed:
    """The replays of consecutive blocks of worlds as one (the first reason not to replay wins)."""
    if len(parts) == 1:
        return parts[0]
    return Replayed(np.concatenate([p.loglik for p in parts], axis=2), np.concatenate([p.ok for p in parts]),
                    next((p.reason for p in parts if p.reason is not None), None))


class Reading:
    """A search's reading of the table (`cardlab.agents.search`: ``belief=``, ``opponents=``, ``weigh=``):
    the worlds it deals weighed by `belief` (a model name, or "uniform"), and with `recognise` each other
    seat's model for the rollouts, from the replay of the record at each decision (see the module doc)."""

    def __init__(self, game: Game, base: Agent, belief: str, recognise: bool, share: float,
                 seed: int | None, pool: int = POOL, weights: str = "resample") -> None:
        if weights not in WEIGHS:
            raise ValueError(f"weigh={weights!r}: give one of {', '.join(f'weigh={w}' for w in WEIGHS)}")
        self.game, self.belief, self.recognise, self.share, self.pool = game, belief, recognise, share, pool
        self.weighs = weights
        names = [belief] if belief != "uniform" else []
        if recognise:
            try:
                fitting_bot(game)
                has_bot = True
            except ValueError:
                has_bot = False
            known = [name for name in LIBRARY if name == "random" or name in game.spec.heuristics
                     or (name == "bot" and has_bot)]
            if base.name not in (*game.spec.heuristics, "random"):  # a heuristic base is in it already
                known.append("base")
            names += [name for name in known if name not in names]
        self.models = model_library(game, base, names, seed)
        self.names = list(self.models)
        self.recognizer = Recognizer(self.names, game.num_players)
        self.last: Weighed | None = None
        """the last decision's belief (None: no belief asked for)"""
        self._engine: Any = None
        self._hand_started = False
        self._open: Weighing | None = None

    def new_hand(self) -> None:
        """A hand ends: its evidence joins the match's (`Recognizer.end_hand`)."""
        self.recognizer.end_hand()
        self._hand_started = False

    # ------------------------------------------------------------ a decision
    def read(self, known: Determinization, wanted: int, record: Record | None, rng: np.random.Generator,
             deadline: float | None = None) -> Read:
        """`wanted` worlds to search (module doc), the cap `deadline` (`time.perf_counter`, None: none)."""
        self.last, self._open = None, None
        if not self._hand_started:
            self._hand_started = True
            if not any(known.match.scores):  # totals all 0: a new match
                self.recognizer.new_match()
        reason = world_replay.unreplayable(record)
        if record is not None and reason is None and not any(
                e.kind in world_replay.ACTING and e.seat != 0 for e in record.events):
            reason = "no other seat has moved"
        believes = self.belief != "uniform"
        if reason is not None:
            worlds = known.deal(rng, wanted)
            if believes:
                flat = np.full(wanted, 1.0 / max(wanted, 1))
                self.last = Weighed(worlds, flat, float(wanted), True, reason)
            return Read(worlds, seat_agents(self.models, self.recognizer.best()) if self.recognise else None)
        assert record is not None
        if believes and self.weighs == "resample":
            until = None if deadline is None else _share_of(deadline, REPLAY_SHARE)
            parts, replayed = self._blocks(known, record, rng, wanted * self.pool, until,
                                           lambda start, size: known.deal(rng, size))
            pool = joined(parts)
            self.last = weigh(pool, replayed, [self.names.index(self.belief)] * self.game.num_players,
                              self.share, rng, wanted)
            worlds = self.last.worlds
            if worlds.count < wanted and deadline is None:  # uniform, from a pool smaller than `wanted`
                worlds = joined([worlds, known.deal(rng, wanted - worlds.count)])
            return Read(worlds, self._recognised(replayed))
        if not believes:  # recognition alone: the evidence of as many worlds as fit in the replay's share
            worlds = known.deal(rng, wanted)
            until = None if deadline is None else _share_of(deadline, REPLAY_SHARE)
            _, replayed = self._blocks(known, record, rng, wanted, until,
                                       lambda start, size: worlds.rows(slice(start, start + size)))
            return Read(worlds, self._recognised(replayed))
        # weigh=weights: the first block now (the evidence for recognition), the rest as the rollouts go
        opened = self._open = Weighing(known, record, rng, wanted, deadline is not None)
        self._extend(opened, min(wanted, MIN_BLOCK))
        seats = self._recognised(stacked(opened.replays))
        return Read(opened, seats, self.prepare)

    def prepare(self, stop: int) -> None:
        """``weigh=weights``: the first `stop` worlds of this decision weighed (replayed in blocks of at
        least `MIN_BLOCK`), before the rollouts load them."""
        opened = self._open
        if opened is None:
            raise ValueError("prepare() weighs the worlds of a decision read with weigh=weights; none is "
                             "open")
        if stop > opened.done:
            self._extend(opened, max(stop - opened.done, min(MIN_BLOCK, opened.count - opened.done)))

    def weights(self, finished: int) -> np.ndarray | None:
        """``weigh=weights``: the weights (summing to 1) of this decision's first `finished` worlds, or None
        where the belief falls back to uniform ones (the ESS under `share` of them, or nothing weighed);
        `last` records the belief."""
        opened = self._open
        if opened is None:
            return None
        replayed = stacked(opened.replays)
        count = min(finished, opened.done)
        loglik, ok = replayed.loglik[:, :, :count], replayed.ok[:count]
        cut = Replayed(loglik, ok, replayed.reason)
        index = self.names.index(self.belief)
        logs = sum((cut.loglik[index, s] for s in range(1, self.game.num_players)), np.zeros(count))
        weights = normalised(logs, ok)
        found = effective_size(weights)
        worlds = opened.rows(slice(0, count))
        if count == 0 or found < self.share * count:
            reason = "no world fits the record" if not ok.any() else "the weights collapsed"
            self.last = Weighed(worlds, weights, found, True, reason)
            return None
        self.last = Weighed(worlds, weights, found, False)
        return weights

    # ------------------------------------------------------------ the replay, in blocks
    def _extend(self, opened: Weighing, size: int) -> None:
        """The next `size` worlds of an open ``weigh=weights`` decision dealt (unless dealt at once) and
        replayed, in blocks of at most `MAX_BLOCK`."""
        stop = min(opened.done + size, opened.count)
        while opened.done < stop:
            block = opened.deal(min(stop, opened.done + MAX_BLOCK))
            opened.replays.append(self._replay(opened.known, block, opened.record, opened.rng, opened.capped))
            opened.done += block.count

    def _blocks(self, known: Determinization, record: Record, rng: np.random.Generator, target: int,
                until: float | None, source: Callable[[int, int], Worlds]) -> tuple[list[Worlds], Replayed]:
        """Up to `target` worlds (`source(start, size)` gives them) replayed in blocks: all of them without
        a cap (`until` None), else those that this decision's pace says end by `until` (module doc), the
        first block always."""
        parts: list[Worlds] = []
        replays: list[Replayed] = []
        done, spent = 0, 0.0
        while done < target:
            size = min(target - done, MAX_BLOCK)
            if until is not None:
                if done:
                    fits = int(max(until - time.perf_counter(), 0.0) * done / max(spent, 1e-9))
                    if fits < MIN_BLOCK:
                        break
                    size = min(size, fits, BLOCK_GROWTH * done)
                else:
                    size = min(size, MIN_BLOCK)
            started = time.perf_counter()
            worlds = source(done, size)
            parts.append(worlds)
            replays.append(self._replay(known, worlds, record, rng, until is not None))
            spent += time.perf_counter() - started
            done += size
        return parts, stacked(replays)

    def _replay(self, known: Determinization, worlds: Worlds, record: Record, rng: np.random.Generator,
                capped: bool) -> Replayed:
        """One block played back in the reading's engine: grown to a power of two, or under a time cap
        made with `MAX_BLOCK` slots at once (a larger engine is not built while a cap runs)."""
        if self._engine is None or self._engine.batch_size < worlds.count:
            size = MAX_BLOCK if capped else max(MIN_BLOCK, 1 << max(worlds.count - 1, 0).bit_length())
            self._engine = self.game.spec.batched_engine()(self.game.rules, size, seed=0)
        return play_back(self.game, known, worlds, record, list(self.models.values()), rng, self._engine)

    def _recognised(self, replayed: Replayed) -> dict[int, Agent] | None:
        """With `recognise`: the evidence of `replayed` taken in, each other seat's likeliest model."""
        if not self.recognise:
            return None
        self.recognizer.observe(replayed)
        return seat_agents(self.models, self.recognizer.best())


class Weighing:
    """A ``weigh=weights`` decision in progress: its worlds (`count` and `rows`, what `Rollouts.play` reads
    of a `Worlds`), and the blocks of them replayed so far.

    Without a cap the worlds are dealt at once, as a uniform search deals them (the same worlds from the
    same generator); under one, block by block as the rollouts reach them (a deal that fills the record's
    slots, Switch's A8, costs a Python call per world: worlds the cap never reaches are not dealt).
    """

    def __init__(self, known: Determinization, record: Record, rng: np.random.Generator, count: int,
                 capped: bool) -> None:
        self.known, self.record, self.rng, self.count, self.capped = known, record, rng, count, capped
        self.replays: list[Replayed] = []
        self.done = 0
        """the worlds replayed so far (the first ones)"""
        self._dealt = [] if capped else [known.deal(rng, count)]
        self._joined: Worlds | None = None if capped else self._dealt[0]

    @property
    def dealt(self) -> int:
        return sum(part.count for part in self._dealt)

    def deal(self, stop: int) -> Worlds:
        """Worlds `done` to `stop`, dealt now where they were not yet."""
        if stop > self.dealt:
            self._dealt.append(self.known.deal(self.rng, stop - self.dealt))
            self._joined = None
        return self.rows(slice(self.done, stop))

    def rows(self, which: slice) -> Worlds:
        """The worlds `which` of those dealt; a `ValueError` for worlds not dealt yet (`Reading.prepare`
        deals them)."""
        stop = self.count if which.stop is None else which.stop
        if stop > self.dealt:
            raise ValueError(f"worlds up to {stop} are asked for but {self.dealt} are dealt: call "
                             f"prepare({stop}) first")
        if self._joined is None:
            self._joined = joined(self._dealt)
        return self._joined.rows(which)


def _share_of(deadline: float, share: float) -> float:
    """The time by which `share` of what is left until `deadline` is spent."""
    now = time.perf_counter()
    return now + share * max(deadline - now, 0.0)


def weighed_values(results: np.ndarray, weights: np.ndarray | None) -> np.ndarray:
    """(K,) each candidate's weighted mean over the worlds of `results` (K, W) (None: equal weights; the
    same floats as the plain mean when all weights are equal)."""
    if results.shape[1] == 0:
        return np.zeros(results.shape[0])
    w = np.ones(results.shape[1]) if weights is None else weights / weights.max()
    return (results * w).sum(axis=1) / w.sum()


def weighed_margin(diff: np.ndarray, weights: np.ndarray | None) -> tuple[float, float, float]:
    """(mean, standard error, effective sample size) of paired differences `diff` over weighted worlds
    (None: equal weights).

    The self-normalised importance-sampling mean, and its error
    sqrt(sum w^2 (d - mean)^2 * n / (n - 1)) / sum w with n the effective
    sample size (sum w)^2 / sum w^2: with equal weights, the plain mean and
    its standard error (std with ddof 1 over sqrt n), to the last bits.
    """
    if diff.size == 0:
        return 0.0, 0.0, 0.0
    w = np.ones(diff.size) if weights is None else weights / weights.max()
    total = float(w.sum())
    mean = float((diff * w).sum() / total)
    squares = float((w * w).sum())
    size = total * total / squares
    if size <= 1.0:
        return mean, 0.0, size
    deviation = diff - mean
    error = float(np.sqrt(float((w * w * deviation * deviation).sum()) * size / (size - 1.0)) / total)
    return mean, error, size
