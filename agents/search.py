"""`SearchAgent`: decision-time search over a base agent (perfect-information Monte Carlo), ``search:BASE``.

Why: a bot plays each move from its observation alone; looking ahead when it
must decide makes the same bot stronger without any training. At a decision
with more than one legal move the agent samples `worlds` determinizations
(whole states that agree with its observation: `Game.determinization`), plays
every legal candidate in every world and rolls the hand out to its end with
the base agent playing every seat, in the game's batched engine
(`GameSpec.batched_engine`): the worlds are dealt straight into its slots
(`Determinization.sample_into`), one slot per candidate and world, and the
base is asked once per move for every slot where the player to move has a
choice (`Agent.act_batch`: a bot plays them all in one forward pass; the
default `act_batch` acts row by row, slow). A candidate's
value is its mean result over the worlds, the same worlds for every
candidate (common random numbers: each world's slots start from one state;
a reshuffle, Switch's A10 or Huit's B10 with `shuffle_on_refill`, draws from
each slot's own generator, so candidates of one world part ways there, which
adds noise but no bias). The best one is played when it beats the base's
own choice by more than ``z`` standard errors of their paired differences
over the worlds, else the base's choice is (with ``worlds=0`` the agent
plays as its base): among many candidates the luckiest estimate would
otherwise often displace a good base's move, and with a few dozen worlds
that costs more than search gains.

Spec strings: ``search:BASE``, options as ``key=value`` parts between
``search:`` and the base (colons, so that no shell quoting is needed and the
commas of ``--agents`` still separate agents):

    search:bot:huit-2p                      the defaults
    search:worlds=128:ms=0:bot:huit-2p      128 worlds, no time cap
    search:value=points:bot:huit-2p-match   minus the seat's points, for match play
    search:worlds=8:expert                  any base agent spec (not another search)
    search:cheat=1:worlds=64:expert         the cheat: the other hands as they are (upper bounds only)

Options (`SearchOptions`, defaults in brackets):

- ``worlds`` [1024]: worlds sampled per decision, 0 to `MOST_WORLDS`;
- ``ms`` [80]: wall-clock cap per decision in milliseconds, 0 for none. The
  worlds are played as a stream: a few hundred slots in play at once, the
  slots of finished worlds dealt new ones while worlds are wanted and one
  would still finish before the cap at the pace measured; a world the cap
  finds still in play is dropped (the longest of the last dealt, a small lean
  towards short hands), and with no world finished the base's choice is
  played. So a decision takes at most about `ms` plus one engine step;
- ``value`` [win]: ``win``, the seat's hand win reward (+1 for a win, the
  loss shared out as in `cardlab.envs.match.win_rewards`, 0 when C1 cuts the
  hand), or ``points``, minus the seat's score change over 100 (what the
  points reward pays: match play cares by how much a hand is lost);
- ``z`` [1]: the margin, in standard errors, by which the best candidate
  must beat the base's choice to be played (0 to `MOST_Z`; 0: the best mean,
  ties to the base);
- ``cheat`` [0]: 1 deals every world with the other seats' true hands (the
  face-down pile still dealt at random from the true pile's cards, since no
  player could know its order; `cardlab.envs.determinize.revealed`), all else
  as the normal search: the measured upper bound of what any inference of
  the hidden hands can reach. The agent `sees` the true state, so it plays
  only where the play loop shows it (evaluation), never at a person's table.

Reproducible (C2): with ``ms=0`` the same seed and observations give the same
moves (each decision draws its worlds from its own generator, seeded from the
agent's; the rollout engine is kept across decisions and its slots'
generators are reseeded with the agent, `seed`). A cap makes the worlds
played depend on the machine's speed. A bot base
breaks no ties at random; a heuristic base breaks its ties with its own
generator across the slots, which adds noise between candidates but no bias.
`action_probabilities` is the default of `Agent`: 1 on the chosen move.
`last_decision` keeps the last search's candidates, values and worlds.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping
from typing import Any, NamedTuple

import numpy as np

from cardlab.agents.base import Agent, as_game, make_agent
from cardlab.envs.batched import only_legal
from cardlab.envs.checked_json import excerpt
from cardlab.envs.determinize import revealed
from cardlab.envs.match import points_reward
from cardlab.envs.spec import Game

PREFIX = "search:"
VALUES = ("win", "points")
MOST_WORLDS = 4096
"""the most worlds a spec may ask for (each is a batch slot per candidate)"""
IN_FLIGHT = 4096
"""the most slots a search keeps in play at once (without a time cap: always as many, up to its worlds)"""
REFILL = 0.125
"""the share of the groups that must have finished before their slots are dealt new worlds"""
DURATION_SHARE = 0.7
"""under a time cap, the most of it a world should take in play: a world's time is mostly its moves one
after the other, each costing about the same whatever the batch, so more slots in play finish more
worlds until the worlds no longer finish in time"""
FIRST_IN_FLIGHT = 256
"""the slots a capped search keeps in play before it has measured a duration"""
PACE_WEIGHT = 0.3
"""weight of the latest worlds in the running mean of the seconds a world takes in play"""
SMALLEST_BATCH = 64
"""the fewest slots of the rollout engine, and of those a capped search keeps in play"""
MOST_Z = 10.0
"""the largest margin `z` a spec may ask for"""


@dataclasses.dataclass(frozen=True)
class SearchOptions:
    """The budget and the value of a search (see the module doc)."""

    worlds: int = 1024
    ms: int = 80
    value: str = "win"
    z: float = 1.0
    cheat: int = 0

    def __post_init__(self) -> None:
        for name, high in (("worlds", MOST_WORLDS), ("ms", None), ("cheat", 1)):
            number = getattr(self, name)
            if isinstance(number, bool) or not isinstance(number, int) or number < 0 or (
                    high is not None and number > high):
                top = f" to {high}" if high is not None else " or more"
                raise ValueError(f"search option {name}={excerpt(number)}: give a whole number 0{top}")
        if self.value not in VALUES:
            raise ValueError(f"search option value={excerpt(self.value)}: give value=win or value=points")
        if isinstance(self.z, bool) or not isinstance(self.z, (int, float)) or not 0 <= self.z <= MOST_Z:
            raise ValueError(f"search option z={excerpt(self.z)}: give a number from 0 to {MOST_Z}")


_FIELDS = tuple(field.name for field in dataclasses.fields(SearchOptions))
ACCEPTED = (f"worlds=N (worlds per decision, 0..{MOST_WORLDS}, default {SearchOptions.worlds}), "
            f"ms=N (time cap per decision in ms, 0 for none, default {SearchOptions.ms}), "
            f"value=win|points (default {SearchOptions.value}), "
            f"z=X (standard errors a move must beat the base's choice by, 0..{MOST_Z}, "
            f"default {SearchOptions.z}), "
            f"cheat=0|1 (1: worlds dealt with the true hidden hands, default {SearchOptions.cheat})")


def parse_spec(spec: str) -> tuple[SearchOptions, str]:
    """(options, base spec) of ``search:[key=value:...]BASE``; a `ValueError` names what is wrong."""
    if not spec.startswith(PREFIX) and spec != PREFIX[:-1]:
        raise ValueError(f"a search spec starts with 'search:', got {excerpt(spec)}")
    parts = spec[len(PREFIX):].split(":") if spec != PREFIX[:-1] else []
    given: dict[str, str] = {}
    while parts and ("=" in parts[0] or parts[0].strip() in _FIELDS):
        key, sep, text = (p.strip() for p in parts.pop(0).partition("="))
        if key not in _FIELDS or not sep:
            raise ValueError(f"agent spec {excerpt(spec)}: {excerpt(key + sep + text)} is not a search "
                             f"option; accepted: {ACCEPTED}, then the base agent, e.g. "
                             "search:worlds=64:bot:huit-2p")
        if key in given:
            raise ValueError(f"agent spec {excerpt(spec)}: search option {key} is given twice")
        given[key] = text
    base = ":".join(parts).strip()
    if not base:
        raise ValueError(f"agent spec {excerpt(spec)} names no base agent: give one after the options, e.g. "
                         "search:bot:huit-2p or search:worlds=64:expert")
    if base.startswith(PREFIX) or base == PREFIX[:-1]:
        raise ValueError(f"agent spec {excerpt(spec)}: the base of a search cannot be another search")
    values: dict[str, Any] = {}
    for key, text in given.items():
        if key == "value":
            values[key] = text
            continue
        try:
            values[key] = float(text) if key == "z" else int(text)
        except ValueError:
            kind = "number" if key == "z" else "whole number"
            raise ValueError(f"agent spec {excerpt(spec)}: search option {key}={excerpt(text)} is not a "
                             f"{kind}; accepted: {ACCEPTED}") from None
    try:
        return SearchOptions(**values), base
    except ValueError as err:
        raise ValueError(f"agent spec {excerpt(spec)}: {err}") from None


def base_seed(seed: int | None) -> int | None:
    """The base agent's seed, drawn apart from the search's own (None stays None)."""
    return _drawn_apart(seed, 1)


def engine_seed(seed: int | None) -> int | None:
    """The seed of the rollout engine's slot generators, drawn apart from the agent's and the base's."""
    return _drawn_apart(seed, 2)


def _drawn_apart(seed: int | None, stream: int) -> int | None:
    if seed is None:
        return None
    return int(np.random.SeedSequence([int(seed), stream]).generate_state(1, np.uint64)[0] >> 1)


class Decision(NamedTuple):
    """What one search found: the candidates, their mean values, the worlds played, the base's choice and
    the move played."""

    candidates: np.ndarray
    values: np.ndarray
    worlds: int
    base: int
    action: int


class SearchAgent(Agent):
    """PIMC over a base agent: sampled worlds, every candidate rolled out, the best mean played when it
    beats the base's own choice by the margin (see the module doc)."""

    name = "search"

    def __init__(self, game: Game, base: Agent, options: SearchOptions | None = None,
                 seed: int | None = None) -> None:
        super().__init__(game, seed)
        if self.game.spec.determinize is None:
            raise ValueError(f"search agents need a game that can sample its hidden cards: {self.game.id} "
                             "has no determinization (GameSpec.determinize is None)")
        if isinstance(base, SearchAgent):
            raise ValueError("the base of a search cannot be another search")
        self.base = base
        self.options = options or SearchOptions()
        self.last_decision: Decision | None = None
        """the last decision's search (None after a decision with one legal move)"""
        self._engine: Any = None
        self._engine_seed = engine_seed(seed)
        self._duration: float | None = None
        """the running mean of the seconds a world takes in play (under a time cap, when to stop dealing)"""
        self._in_flight = FIRST_IN_FLIGHT
        """the slots a capped search keeps in play (adapted to the cap by the durations measured)"""
        self.sees = frozenset({"state"}) if self.options.cheat else frozenset()
        self._state: Any = None
        """with ``cheat=1``: the true state shown before this decision (`show`), used once"""

    def show(self, seen: Mapping[str, Any]) -> None:
        self._state = seen.get("state")

    def seed(self, seed: int | None) -> None:
        super().seed(seed)
        self.base.seed(base_seed(seed))
        self._engine_seed = engine_seed(seed)
        if self._engine is not None:
            self._engine.reseed(self._engine_seed)

    def reset(self) -> None:
        self.base.reset()

    def act(self, observation: dict[str, np.ndarray]) -> int:
        legal = np.flatnonzero(np.asarray(observation["action_mask"]))
        if legal.size == 0:
            raise ValueError("the observation's action_mask has no legal action")
        self.last_decision = None
        if legal.size == 1:
            return int(legal[0])
        choice = int(self.base.act(observation))
        rng = np.random.default_rng(int(self.rng.integers(2**63)))
        results = self._search(observation, legal, rng)
        worlds = results.shape[1]
        values = results.mean(axis=1) if worlds else np.zeros(legal.size)
        best = int(np.argmax(values))
        beats = self._beats(results, best, int(np.searchsorted(legal, choice)))
        action = int(legal[best]) if beats else choice
        self.last_decision = Decision(legal, values, worlds, choice, action)
        return action

    def _beats(self, results: np.ndarray, best: int, base: int) -> bool:
        """Whether candidate `best` beats the base's choice by more than `z` standard errors.

        The error is that of the paired differences over the worlds (common
        random numbers): without this margin the noisiest of many candidates
        would often displace a good base's choice.
        """
        diff = results[best] - results[base]
        if diff.size == 0 or diff.mean() <= 0:
            return False
        if diff.size == 1:
            return self.options.z == 0
        return bool(diff.mean() > self.options.z * diff.std(ddof=1) / np.sqrt(diff.size))

    # ------------------------------------------------------------ the search
    def _search(self, observation: dict[str, np.ndarray], legal: np.ndarray,
                rng: np.random.Generator) -> np.ndarray:
        """(candidates, worlds finished): each candidate's result in each world (see `_stream`).

        Without a time cap up to `IN_FLIGHT` slots are in play at once, so the
        worlds and the slots they use are the same on every machine (C2). With
        one, the agent keeps as many slots in play as lets a world finish in
        at most `DURATION_SHARE` of the cap (`_in_flight`, halved or doubled
        after each decision by the durations measured).
        """
        wanted, ms, k = self.options.worlds, self.options.ms, legal.size
        if wanted == 0:
            return np.zeros((k, 0))
        deadline = time.perf_counter() + ms / 1000 if ms else None
        known = self.game.determinization(observation)
        if self.options.cheat:
            known = self._revealed(known)
        groups = max(1, min(wanted, (self._in_flight if ms else IN_FLIGHT) // k))
        results = self._stream(known, legal, wanted, groups, deadline, rng)
        if ms and self._duration is not None:
            if self._duration > ms / 1000 * DURATION_SHARE:
                self._in_flight = max(SMALLEST_BATCH, self._in_flight // 2)
            elif self._duration < ms / 1000 * DURATION_SHARE * 0.5:  # doubled, it should still fit
                self._in_flight = min(IN_FLIGHT, self._in_flight * 2)
        return results

    def _revealed(self, known: Any) -> Any:
        """With ``cheat=1``: `known` dealing the true other hands of the state shown for this decision."""
        state, self._state = self._state, None
        if state is None:
            raise ValueError("search option cheat=1 deals the true hidden hands, so it needs the true state "
                             "shown before each decision (Agent.show), as evaluation's play loops do; this "
                             "play loop showed none")
        return revealed(known, state, state.current)

    def _batch(self, slots: int) -> Any:
        """The batched engine the rollouts use, kept across decisions and grown (to a power of two) when
        more slots are needed; its generators are seeded from the agent's seed (`seed`)."""
        if self._engine is None or self._engine.batch_size < slots:
            size = max(SMALLEST_BATCH, 1 << (slots - 1).bit_length())
            self._engine = self.game.spec.batched_engine()(self.game.rules, size, seed=self._engine_seed)
        return self._engine

    def _stream(self, known: Any, legal: np.ndarray, wanted: int, groups: int, deadline: float | None,
                rng: np.random.Generator) -> np.ndarray:
        """(candidates, worlds finished): the seat's result of each candidate played in each world, then
        the base, the worlds in the order dealt.

        `groups` worlds are in play at once, world by world in K slots (group
        g in slots g * K .. g * K + K - 1, candidate k in the k-th), the seat
        seat 0 of the worlds (`Game.determinization`'s default). Each move the
        base is asked, in one `act_batch` call, for the slots where the player
        to move has a choice; the others play their only legal move. The
        worlds are dealt at once (`Determinization.deal`: the same worlds
        however many are in play at a time); when `REFILL` of the groups have
        finished, the next worlds are loaded into their slots
        (`BatchedEngine.load_worlds`), as long as worlds are left and, under a
        time cap, one would still finish before it at the pace measured
        (`_duration`). A world still in play at the cap is dropped.
        """
        k = legal.size
        engine = self._batch(groups * k)
        slots = np.arange(groups * k).reshape(groups, k)
        world_of = np.full(groups, -1, dtype=np.int64)  # the world in play in each group, -1: free
        started = np.zeros(groups)
        results = np.zeros((k, wanted))
        finished = np.zeros(wanted, dtype=np.bool_)
        used = np.zeros(engine.batch_size, dtype=np.bool_)
        actions = np.zeros(engine.batch_size, dtype=np.int64)
        wins = np.zeros(engine.batch_size, dtype=np.float64)
        worlds = known.deal(rng, wanted)
        dealt = 0
        while True:
            free = np.flatnonzero(world_of < 0)
            now = time.perf_counter()
            fits = deadline is None or now + (self._duration or 0.0) < deadline
            if dealt < wanted and fits and free.size and free.size >= min(groups * REFILL, wanted - dealt):
                take = free[: wanted - dealt]
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
                results[:, world_of[done]] = self._values(engine, rows, wins).T
                finished[world_of[done]] = True
                took = float((time.perf_counter() - started[done]).mean())
                self._duration = took if self._duration is None else (
                    (1 - PACE_WEIGHT) * self._duration + PACE_WEIGHT * took)
                used[rows.ravel()] = False
                world_of[done] = -1
            if deadline is not None and time.perf_counter() > deadline:
                break
            live = np.flatnonzero(used & ~over)
            if not live.size:
                continue
            mask = engine.legal_mask(live)
            only = only_legal(mask)
            actions[live] = only
            choice = only < 0
            if choice.any():
                asked = live[choice]
                obs = engine.observe(engine.current_player()[asked], asked)
                actions[asked] = self.base.act_batch(obs, mask[choice])
        return results[:, finished]

    def _values(self, engine: Any, rows: np.ndarray, wins: np.ndarray) -> np.ndarray:
        """The seat's result in each of the finished `rows` (an array of slots): its win reward, or with
        ``value=points`` minus its points over 100 (0 when C1 cut the hand)."""
        if self.options.value == "win":
            return wins[rows]
        changes = engine.score_changes()[rows, 0].astype(np.float64)
        return np.where(engine.done[rows], points_reward(changes), 0.0)


def make_search_agent(spec: str, game: Any, seed: int | None = None) -> SearchAgent:
    """The agent of a ``search:...`` spec (see the module doc); `make_agent` calls this."""
    game = as_game(game)
    options, base_spec = parse_spec(spec)
    try:
        base = make_agent(base_spec, game, seed=base_seed(seed))
    except ValueError as err:
        raise ValueError(f"agent spec {excerpt(spec)}: its base agent: {err}") from None
    return SearchAgent(game, base, options, seed)
