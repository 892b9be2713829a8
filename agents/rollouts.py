"""A search's rollouts (`cardlab.agents.search`): sampled worlds played to the hand's end in a batched engine.

Why apart from the search: the search decides what to play from the results;
this module only plays worlds, as fast as the engine lets it. Each world sits
in K slots (one per candidate, the searcher seat 0 of every world), and each
seat's moves come from that seat's model (`Rollouts.models`: the rollout
policy in every seat, or the models `set_seat_models` gave some seats, keyed
by seat relative to the searcher, 1 = the next seat). Two ways to play them:

- **fused**, when one compiled heuristic of the game plays every seat: the
  worlds are played in waves, each loaded (`BatchedEngine.load_worlds`) and
  played to the hand's end in one numba call (`FastPaths.to_end`); under a
  cap each wave is sized by the pace measured so far to end before it;
- **stepped**, otherwise (a bot, or models that differ by seat): a few
  hundred slots in play, each engine step asking each model once
  (`Agent.act_batch`) for the slots where its seat has a choice; finished
  worlds' slots are dealt new worlds while one would still finish in time.

Either way the results are the searcher's value of each candidate in each
finished world, in the order dealt; a world the cap finds unfinished is
dropped. Without a cap the moves are the same on every machine (C2).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from cardlab.agents.base import Agent
from cardlab.agents.stopping import stop_asked
from cardlab.envs.batched_engine import only_legal
from cardlab.envs.fast import ToEnd
from cardlab.envs.game_spec import Game
from cardlab.envs.match import points_reward

IN_FLIGHT = 4096
"""the most slots a search keeps in play at once (without a time cap: always as many, up to its worlds)"""
REFILL = 0.125
"""the share of the groups that must have finished before their slots are dealt new worlds (stepped)"""
DURATION_SHARE = 0.7
"""under a time cap, the most of it a world should take in play (stepped)"""
WAVE_SHARE = 0.5
"""under a time cap, the most of what is left of it a wave should take at the pace measured (fused): a
wave cannot be cut, and its hands' lengths vary"""
WAVE_SECONDS = 0.05
"""under a time cap, the most a wave should take at the pace measured (fused): a long cap is played in
many waves, so that one wave slower than its pace overshoots it by little"""
FIRST_IN_FLIGHT = 256
"""the slots a capped stepped search keeps in play before it has measured a duration"""
FIRST_WAVE = 8
"""the worlds of a capped fused search's first wave of a decision: the pace it measures (seconds a slot,
which depends on how long the hand has to go) sizes the next waves"""
PACE_WEIGHT = 0.3
"""weight of the latest worlds in the running mean of the seconds a world takes in play"""
SMALLEST_BATCH = 64
"""the fewest slots of the rollout engine, and of those a capped search keeps in play"""
Values = Callable[[Any, np.ndarray, np.ndarray], np.ndarray]
"""(engine, (W, K) slots, (B,) win rewards gained) -> (W, K) the searcher's value in each slot"""


def fused_to_end(engine: Any, agent: Agent) -> ToEnd | None:
    """`agent` playing every seat of `engine`'s first slots to the hand's end in one compiled call (its
    game's `FastPaths.to_end` with `Agent.compiled`), or None where its game's paths do not compile it."""
    paths, policy = agent.game.spec.fast_paths(), agent.compiled()
    if paths is None or paths.to_end is None or policy is None:
        return None
    return paths.to_end(engine, policy)


Prepare = Callable[[int], None]
"""(stop) -> None: the worlds up to `stop` made ready before they are loaded (`Rollouts.play`)"""


def checked_seat_models(game: Game, models: Mapping[int, Agent]) -> dict[int, Agent]:
    """`set_seat_models`' argument checked: seats 1..n-1 (relative to the searcher), agents of `game`."""
    n = game.num_players
    out: dict[int, Agent] = {}
    for seat, model in dict(models).items():
        if isinstance(seat, bool) or not isinstance(seat, (int, np.integer)) or not 1 <= seat < n:
            raise ValueError(f"seat models are keyed by seat relative to the searcher, 1..{n - 1} at this "
                             f"{n}-player table (1 = the next seat), got {seat!r}")
        if not isinstance(model, Agent):
            raise ValueError(f"the model of seat {seat} must be a cardlab Agent, got {type(model).__name__}")
        if model.game.id != game.id or model.game.rules != game.rules:
            raise ValueError(f"the model of seat {seat} plays {model.game.id} with other rule options; give "
                             f"an agent of this search's game ({game.id}, these rules)")
        if type(model).__name__ == "SearchAgent":
            raise ValueError(f"the model of seat {seat} is a search: rollouts cannot search")
        out[int(seat)] = model
    return out


class Rollouts:
    """Plays a search's worlds (see the module doc); kept across decisions with its engine and paces."""

    def __init__(self, game: Game, policy: Agent, engine_seed: int | None) -> None:
        self.game = game
        self.policy = policy
        """the rollout policy: every seat's model but those of `seat_models`"""
        self.seat_models: dict[int, Agent] = {}
        self.engine: Any = None
        self.engine_seed = engine_seed
        self._fused: tuple[Any, Agent, ToEnd | None] | None = None
        self.duration: float | None = None
        """the running mean of the seconds a world takes in play (stepped, under a time cap)"""
        self.in_flight = FIRST_IN_FLIGHT
        """the slots a capped stepped search keeps in play (adapted by the durations measured)"""

    def models(self) -> list[Agent]:
        """Each seat's model, seat 0 (the searcher) first."""
        return [self.seat_models.get(seat, self.policy) for seat in range(self.game.num_players)]

    def reseed(self, seed: int | None) -> None:
        """The engine's slot generators restarted from `seed` (C2: the same seed replays a search)."""
        self.engine_seed = seed
        if self.engine is not None:
            self.engine.reseed(seed)

    def batch(self, slots: int) -> Any:
        """The batched engine, kept across decisions and grown (to a power of two) when more slots are
        needed; its generators are seeded from `engine_seed`, and a grown engine's first slots go on
        with the old slots' generators, so that slot i draws the same numbers whether the engine was
        grown since the last `reseed` or was already large (C2: the same hand in any order of play)."""
        if self.engine is None or self.engine.batch_size < slots:
            size = max(SMALLEST_BATCH, 1 << (slots - 1).bit_length())
            old, self.engine = self.engine, self.game.spec.batched_engine()(self.game.rules, size,
                                                                            seed=self.engine_seed)
            for slot in range(0 if old is None else old.batch_size):
                self.engine.generators[slot].bit_generator.state = old.generators[slot].bit_generator.state
        return self.engine

    def ready(self) -> None:
        """Build the engine a capped search plays in before its clock starts: the fused way's
        `IN_FLIGHT` slots, the stepped way's first `in_flight` (making thousands of slot generators takes
        a large part of a quick search's time). The same moves follow either way (`batch`: C2)."""
        probe = self.batch(SMALLEST_BATCH)
        self.batch(IN_FLIGHT if self.fused(probe) is not None else self.in_flight)

    def fused(self, engine: Any) -> ToEnd | None:
        """The compiled play-out to the hand's end when one model plays every seat, else None."""
        models = self.models()
        if any(model is not models[0] for model in models):
            return None
        cached = self._fused
        if cached is None or cached[0] is not engine or cached[1] is not models[0]:
            cached = self._fused = (engine, models[0], fused_to_end(engine, models[0]))
        return cached[2]

    def play(self, known: Any, worlds: Any, legal: np.ndarray, deadline: float | None,
             values: Values, prepare: Prepare | None = None) -> np.ndarray:
        """(K candidates, worlds finished): each candidate's value in each world finished (module doc).

        `prepare(stop)`, when given, is called before worlds up to `stop` (in the order dealt) are loaded,
        inside the time the pace measures (a belief weighs them there:
        `cardlab.agents.hand_reading.reading`)."""
        probe = self.batch(legal.size)
        if self.fused(probe) is not None:
            return self._waves(known, worlds, legal, deadline, values, prepare)
        return self._stream(known, worlds, legal, deadline, values, prepare)

    def _waves(self, known: Any, worlds: Any, legal: np.ndarray, deadline: float | None,
               values: Values, prepare: Prepare | None) -> np.ndarray:
        """The fused way: waves of worlds, each played to the end in one compiled call."""
        k, wanted = legal.size, worlds.count
        most = max(1, IN_FLIGHT // k)
        results = np.zeros((k, wanted))
        done, spent = 0, 0.0
        while done < wanted:
            size = most
            if stop_asked():
                break
            if deadline is not None:
                left = deadline - time.perf_counter()
                if left <= 0:
                    break
                if done:
                    size = int(min(left * WAVE_SHARE, WAVE_SECONDS) * done / max(spent, 1e-9))  # at the pace
                    if size < 1:
                        break
                size = min(most, FIRST_WAVE if not done else size)
            size = min(size, wanted - done)
            engine = self.batch(IN_FLIGHT if deadline is not None else size * k)  # (capped: never regrown)
            play = self.fused(engine)
            assert play is not None  # (the models did not change since `play` chose this way)
            started = time.perf_counter()
            if prepare is not None:
                prepare(done + size)
            grid = np.arange(size * k).reshape(size, k)
            engine.load_worlds(known, worlds.rows(slice(done, done + size)), grid)
            active = np.zeros(engine.batch_size, dtype=np.bool_)
            active[: size * k] = True
            actions = np.zeros(engine.batch_size, dtype=np.int64)
            actions[: size * k] = np.tile(legal, size)
            rewards, _, _ = engine.step(actions, active)
            gained = rewards[:, 0].astype(np.float64)
            play(size * k, 0, gained)
            results[:, done: done + size] = values(engine, grid, gained).T
            spent += time.perf_counter() - started
            done += size
        return results[:, :done]

    def act(self, engine: Any, live: np.ndarray, actions: np.ndarray) -> None:
        """Write each live slot's move into `actions`: its one legal move, else its seat's model's, one
        `act_batch` call per model for all the slots where a seat it plays is to move."""
        mask = engine.legal_mask(live)
        only = only_legal(mask)
        actions[live] = only
        choice = np.flatnonzero(only < 0)
        if not choice.size:
            return
        asked = live[choice]
        seats = engine.current_player()[asked]
        obs = engine.observe(seats, asked)
        models = self.models()
        if all(model is models[0] for model in models):
            actions[asked] = models[0].act_batch(obs, mask[choice])
            return
        by_model: dict[int, list[int]] = {}
        for seat, model in enumerate(models):
            by_model.setdefault(id(model), []).append(seat)
        for seats_of in by_model.values():
            rows = np.flatnonzero(np.isin(seats, seats_of))
            if rows.size:
                actions[asked[rows]] = models[seats_of[0]].act_batch(obs[rows], mask[choice[rows]])

    def _stream(self, known: Any, worlds: Any, legal: np.ndarray, deadline: float | None,
                values: Values, prepare: Prepare | None) -> np.ndarray:
        """The stepped way: `groups` worlds in play at once, world by world in K slots (group g in slots
        g * K .. g * K + K - 1, candidate k in the k-th), refilled when `REFILL` of them have finished.

        Without a cap `IN_FLIGHT` slots are in play (the same on every machine,
        C2); with one, as many as let a world finish in at most
        `DURATION_SHARE` of the cap (`in_flight`, halved or doubled after each
        decision by the durations measured).
        """
        k, wanted = legal.size, worlds.count
        cap = None if deadline is None else deadline - time.perf_counter()
        groups = max(1, min(wanted, (self.in_flight if cap is not None else IN_FLIGHT) // k))
        engine = self.batch(groups * k)
        slots = np.arange(groups * k).reshape(groups, k)
        world_of = np.full(groups, -1, dtype=np.int64)  # the world in play in each group, -1: free
        started = np.zeros(groups)
        results = np.zeros((k, wanted))
        finished = np.zeros(wanted, dtype=np.bool_)
        used = np.zeros(engine.batch_size, dtype=np.bool_)
        actions = np.zeros(engine.batch_size, dtype=np.int64)
        wins = np.zeros(engine.batch_size, dtype=np.float64)
        dealt = 0
        while True:
            free = np.flatnonzero(world_of < 0)
            now = time.perf_counter()
            fits = (deadline is None or now + (self.duration or 0.0) < deadline) and not stop_asked()
            if dealt < wanted and fits and free.size and free.size >= min(groups * REFILL, wanted - dealt):
                take = free[: wanted - dealt]
                if prepare is not None:
                    prepare(dealt + take.size)
                engine.load_worlds(known, worlds.rows(slice(dealt, dealt + take.size)), slots[take])
                world_of[take] = np.arange(dealt, dealt + take.size)
                dealt += take.size
                rows = slots[take].ravel()
                used[rows], wins[rows], actions[rows] = True, 0.0, np.tile(legal, take.size)
                started[take] = now
            if not used.any():
                break
            rewards, _, _ = engine.step(actions, used)
            wins += rewards[:, 0]
            over = engine.over
            done = np.flatnonzero(over[: groups * k].reshape(groups, k).all(axis=1) & (world_of >= 0))
            if done.size:
                rows = slots[done]
                results[:, world_of[done]] = values(engine, rows, wins).T
                finished[world_of[done]] = True
                took = float((time.perf_counter() - started[done]).mean())
                self.duration = took if self.duration is None else (
                    (1 - PACE_WEIGHT) * self.duration + PACE_WEIGHT * took)
                used[rows.ravel()] = False
                world_of[done] = -1
            if stop_asked() or (deadline is not None and time.perf_counter() > deadline):
                break
            live = np.flatnonzero(used & ~over)
            if live.size:
                self.act(engine, live, actions)
        if cap is not None and self.duration is not None:
            if self.duration > cap * DURATION_SHARE:
                self.in_flight = max(SMALLEST_BATCH, self.in_flight // 2)
            elif self.duration < cap * DURATION_SHARE * 0.5:  # doubled, it should still fit
                self.in_flight = min(IN_FLIGHT, self.in_flight * 2)
        return results[:, finished]


def seat_values(value: str, points_weight: float = 0.0) -> Values:
    """The searcher's value of each finished slot: its win reward (``win``), or minus its points over 100
    (``points``, 0 when C1 cut the hand); with ``win``, `points_weight` times the latter added to it (the
    search option ``points_weight``: `cardlab.agents.search_options`), and at 0 the win reward as it is."""

    def points(engine: Any, rows: np.ndarray) -> np.ndarray:
        changes = engine.score_changes()[rows, 0].astype(np.float64)
        return np.where(engine.done[rows], points_reward(changes), 0.0)

    def values(engine: Any, rows: np.ndarray, wins: np.ndarray) -> np.ndarray:
        if value != "win":
            return points(engine, rows)
        if not points_weight:
            return wins[rows]
        return wins[rows] + points_weight * points(engine, rows)

    return values
