"""`SearchAgent`: decision-time search over a base agent (perfect-information Monte Carlo), ``search:BASE``.

Why: a bot plays each move from its observation alone; looking ahead when it
must decide makes the same bot stronger without any training. At a decision
with more than one legal move the agent samples `worlds` determinizations
(whole states that agree with its observation: `Game.determinization`), plays
every legal candidate in every world and rolls the hand out to its end with
the base agent playing every seat, in the game's batched engine
(`GameSpec.batched_engine`): all candidates x worlds are slots of one batch,
so a bot base plays all of them in one forward pass per move
(`Agent.act_batch`); other bases act slot by slot (slow). A candidate's
value is its mean result over the worlds, the same worlds for every
candidate (common random numbers: each world's slots start from one state
and one generator state). The best one is played when it beats the base's
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

Options (`SearchOptions`, defaults in brackets):

- ``worlds`` [64]: worlds sampled per decision, 0 to `MOST_WORLDS`;
- ``ms`` [80]: wall-clock cap per decision in milliseconds, 0 for none. With
  a cap the worlds are played in rounds, each as large as the time left
  allows at the pace of the agent's earlier rounds (usually one round holds
  them all); a round the cap cuts short is dropped, and with no world
  finished the base's choice is played. So a decision takes at most about
  `ms` plus one engine step;
- ``value`` [win]: ``win``, the seat's hand win reward (+1 for a win, the
  loss shared out as in `cardlab.envs.match.win_rewards`, 0 when C1 cuts the
  hand), or ``points``, minus the seat's score change over 100 (what the
  points reward pays: match play cares by how much a hand is lost);
- ``z`` [1]: the margin, in standard errors, by which the best candidate
  must beat the base's choice to be played (0 to `MOST_Z`; 0: the best mean,
  ties to the base).

Reproducible (C2): the same seed and observations give the same moves as long
as the cap does not cut a decision (each decision draws its worlds from its
own generator, seeded from the agent's; ``ms=0`` never cuts). A bot base
breaks no ties at random; a heuristic base breaks its ties with its own
generator across the slots, which adds noise between candidates but no bias.
`action_probabilities` is the default of `Agent`: 1 on the chosen move.
`last_decision` keeps the last search's candidates, values and worlds.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any, NamedTuple

import numpy as np

from cardlab.agents.base import Agent, as_game, make_agent
from cardlab.envs.batched import only_legal
from cardlab.envs.checked_json import excerpt
from cardlab.envs.match import points_reward
from cardlab.envs.spec import Game

PREFIX = "search:"
VALUES = ("win", "points")
MOST_WORLDS = 4096
"""the most worlds a spec may ask for (each is a batch slot per candidate)"""
FIRST_ROUND = 8
"""worlds of the first round under a time cap while the agent has no pace yet (its first search)"""
FIRST_SHARE = 0.7
"""with a time cap, the share of it the first round of a decision is sized to fill at the pace so far"""
PACE_WEIGHT = 0.3
"""weight of the latest round in the running pace (seconds per candidate and world) that sizes rounds"""
SMALLEST_BATCH = 64
MOST_Z = 10.0
"""the largest margin `z` a spec may ask for"""


@dataclasses.dataclass(frozen=True)
class SearchOptions:
    """The budget and the value of a search (see the module doc)."""

    worlds: int = 64
    ms: int = 80
    value: str = "win"
    z: float = 1.0

    def __post_init__(self) -> None:
        for name, high in (("worlds", MOST_WORLDS), ("ms", None)):
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
            f"default {SearchOptions.z})")


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
        self._pace: float | None = None
        """seconds per candidate and world of the recent rounds (sizes the rounds under a time cap)"""

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
        """(candidates, worlds played): each candidate's result in each world (see `_rollouts`).

        Without a time cap all worlds are one round. With one, a round holds as
        many worlds as the time left allows at the pace of the earlier rounds
        (`FIRST_ROUND` before any), the first only `FIRST_SHARE` of the cap, so
        that a costlier position than the last still fits in one round.
        """
        wanted, ms, k = self.options.worlds, self.options.ms, legal.size
        deadline = time.perf_counter() + ms / 1000 if ms else None
        known = self.game.determinization(observation)
        rounds = [np.zeros((k, 0))]
        played = 0
        share = FIRST_SHARE
        while played < wanted:
            size = wanted - played
            if deadline is not None:
                if self._pace is None:
                    size = min(size, FIRST_ROUND)
                else:
                    size = min(size, int((deadline - time.perf_counter()) * share / (self._pace * k)))
                if size < 1:
                    break
            share = 1.0
            start = time.perf_counter()
            engine = self._batch(size * k)
            known.sample_into(engine, np.arange(size * k).reshape(size, k), rng)
            results = self._rollouts(engine, size, legal, deadline)
            if results is None:
                break
            pace = (time.perf_counter() - start) / (size * k)
            self._pace = pace if self._pace is None else (1 - PACE_WEIGHT) * self._pace + PACE_WEIGHT * pace
            rounds.append(results)
            played += size
        return np.concatenate(rounds, axis=1)

    def _batch(self, slots: int) -> Any:
        """The batched engine the rollouts use, kept across decisions and grown (to a power of two) when
        more slots are needed; its generators are seeded from the agent's seed (`seed`)."""
        if self._engine is None or self._engine.batch_size < slots:
            size = max(SMALLEST_BATCH, 1 << (slots - 1).bit_length())
            self._engine = self.game.spec.batched_engine()(self.game.rules, size, seed=self._engine_seed)
        return self._engine

    def _rollouts(self, engine: Any, worlds: int, legal: np.ndarray,
                  deadline: float | None) -> np.ndarray | None:
        """(candidates, worlds): the seat's result of each candidate played in each world, then the base.

        The worlds are loaded in the engine's first worlds x K slots, slot
        w * K + k playing candidate k in world w; the seat is seat 0 of the
        worlds (`Game.determinization`'s default). Each move the base is asked,
        in one `act_batch` call, for the slots where the player to move has a
        choice; the others play their only legal move. None when `deadline`
        passed first.
        """
        k = legal.size
        used = np.zeros(engine.batch_size, dtype=np.bool_)
        used[: k * worlds] = True
        actions = np.zeros(engine.batch_size, dtype=np.int64)
        actions[used] = np.tile(legal, worlds)
        wins = np.zeros(engine.batch_size, dtype=np.float64)
        active = used
        while True:
            rewards, _, _ = engine.step(actions, active)
            wins += rewards[:, 0]
            active = used & ~engine.over
            rows = np.flatnonzero(active)
            if not rows.size:
                break
            if deadline is not None and time.perf_counter() > deadline:
                return None
            mask = engine.legal_mask(rows)
            only = only_legal(mask)
            actions[rows] = only
            choice = only < 0
            if choice.any():
                asked = rows[choice]
                obs = engine.observe(engine.current_player()[asked], asked)
                actions[asked] = self.base.act_batch(obs, mask[choice])
        if self.options.value == "points":
            won = engine.done & used
            result = np.where(won, points_reward(engine.score_changes()[:, 0].astype(np.float64)), 0.0)
        else:
            result = wins
        return result[used].reshape(worlds, k).T


def make_search_agent(spec: str, game: Any, seed: int | None = None) -> SearchAgent:
    """The agent of a ``search:...`` spec (see the module doc); `make_agent` calls this."""
    game = as_game(game)
    options, base_spec = parse_spec(spec)
    try:
        base = make_agent(base_spec, game, seed=base_seed(seed))
    except ValueError as err:
        raise ValueError(f"agent spec {excerpt(spec)}: its base agent: {err}") from None
    return SearchAgent(game, base, options, seed)
