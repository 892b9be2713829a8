"""`SearchAgent`: decision-time search over a base agent (perfect-information Monte Carlo), ``search:BASE``.

Why: a bot plays each move from its observation alone; looking ahead when it
must decide makes the same bot stronger without any training. At a decision
with more than one legal move the agent samples `worlds` determinizations,
plays every legal candidate in every world to the hand's end in the game's
batched engine (`cardlab.agents.rollouts`), and plays the best mean over the
same worlds when it beats the base's own choice by more than ``z`` standard
errors of their paired differences, else the base's choice: among many
candidates the luckiest estimate would otherwise often displace a good
base's move. Spec strings put ``key=value`` options between ``search:`` and
the base (``search:worlds=128:ms=0:bot:huit-2p``); each option is declared
once in `cardlab.agents.search_options`. docs/training.md, "Decision-time
search", explains the options, beliefs, values, the time cap and the
reproducibility (C2) this module keeps.
"""

from __future__ import annotations

import copy
import dataclasses
import time
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

import numpy as np

from cardlab import moved
from cardlab.agents.base import Agent
from cardlab.agents.hand_reading.posterior import Drawer
from cardlab.agents.hand_reading.reader import load_reader, shipped_reader
from cardlab.agents.hand_reading.reading import Reading, Weighing, weighed_margin, weighed_values
from cardlab.agents.match_equity import MatchEquity, equity_at, shipped_equity
from cardlab.agents.rollouts import Prepare, Rollouts, checked_seat_models, seat_values
from cardlab.agents.search_options import (
    LEVEL_BOUNDS_MS,
    LEVELS,
    MOST_MS,
    MOST_WORLDS,
    READERS,
    ROLLOUTS,
    SEARCH,
    SearchOptions,
    options_markdown,
    parse_spec,
)
from cardlab.envs.declared import refusal
from cardlab.envs.game_spec import Game
from cardlab.envs.record import Record
from cardlab.envs.world_sampling import Determinization, Worlds, revealed

__all__ = ["LEVELS", "LEVEL_BOUNDS_MS", "MOST_WORLDS", "Decision", "SearchAgent", "SearchOptions",
           "drawn_apart", "options_markdown", "parse_spec", "rollout_spec"]

BASE, ENGINE, ROLLOUT, SEAT, POSTERIOR = range(1, 6)
"""The streams `drawn_apart` draws the seeds of: the base agent, the rollout engine's slot generators,
a rollout policy other than the base, the model `set_seat_models` gave a seat, and the exact posterior's
replays (``belief=posterior``)."""


def drawn_apart(seed: int | None, *stream: int) -> int | None:
    """The seed of one `stream` of the agent's parts, drawn apart from the others (None stays None)."""
    if seed is None:
        return None
    return int(np.random.SeedSequence([int(seed), *stream]).generate_state(1, np.uint64)[0] >> 1)


def rollout_spec(rollout: str, game: Game) -> str | None:
    """The agent spec of a ``rollout=`` name at `game`'s table (None: the base), or a `ValueError` saying
    which this game has."""
    if rollout == "base":
        return None
    if rollout == "bot":
        return f"bot:{game.id}"
    if rollout != "random" and rollout not in game.spec.heuristics:
        have = ", ".join(f"rollout={name}" for name in ROLLOUTS
                         if name in ("base", "random", "bot") or name in game.spec.heuristics)
        raise ValueError(f"search option rollout={rollout}: {game.id} has no {rollout} heuristic; "
                         f"give {have}")
    return rollout


def table_equity(game: Game, path: str = "") -> MatchEquity:
    """``value=match``'s equity: the file ``equity=`` names (its loader's one-line refusal where it does not
    fit the table), else the table's shipped one, or a one-line refusal of the option saying why and the
    values that play at this table."""
    if path:
        return equity_at(path, game)
    try:
        return shipped_equity(game)
    except ValueError as err:
        raise ValueError(refusal("value", "match", f"not playable at this table: {err}",
                                 "value=win or value=points here, or value=match beside equity=PATH, a "
                                 "fitted equity of these rules", SEARCH)) from None


class Decision(NamedTuple):
    """What one search found: the candidates, their mean values, the worlds played, the base's choice and
    the move played."""

    candidates: np.ndarray
    values: np.ndarray
    worlds: int
    base: int
    action: int


WARM_WORLDS = 4
"""worlds of the warm-up decision: enough to run every compiled step of a decision once"""
_WARMED: set[str] = set()
"""the searches (spec, or the game and options of one built without a spec) warmed in this process"""


class SearchAgent(Agent):
    """PIMC over a base agent: sampled worlds, every candidate rolled out, the best mean played when it
    beats the base's own choice by the margin (see the module doc)."""

    name = "search"

    def __init__(self, game: Game, base: Agent, options: SearchOptions | None = None,
                 seed: int | None = None, rollout: Agent | None = None) -> None:
        super().__init__(game, seed)
        if self.game.spec.determinize is None:
            raise ValueError(f"search agents need a game that can sample its hidden cards: {self.game.id} "
                             "has no determinization (GameSpec.determinize is None)")
        if isinstance(base, SearchAgent) or isinstance(rollout, SearchAgent):
            raise ValueError("the base of a search, and its rollout policy, cannot be another search")
        self.base = base
        self.rollout = rollout
        """the rollout policy when it is not the base (``rollout=``), else None"""
        self.options = options or SearchOptions()
        self.last_decision: Decision | None = None
        """the last decision's search (None after a decision with one legal move)"""
        self.rollouts = Rollouts(self.game, base if rollout is None else rollout, drawn_apart(seed, ENGINE))
        self.equity = table_equity(self.game, self.options.equity) if self.options.value == "match" else None
        """with ``value=match``: the match equity (``equity=``'s, else the table's shipped one), whose chance
        to win the match values a play-out"""
        o = self.options
        if o.belief == "posterior" and o.budget()[1]:
            raise ValueError(f"search option belief=posterior samples its worlds for seconds whatever the "
                             f"cap, so it takes no ms={o.budget()[1]}: give ms=0 beside it")
        self.posterior = Drawer(self.game, drawn_apart(seed, POSTERIOR)) if o.belief == "posterior" else None
        """with ``belief=posterior``: the sampler of the exact posterior's worlds (`Drawer`)"""
        self.reader = None if o.belief not in READERS else (
            load_reader(o.reader, self.game) if o.reader else shipped_reader(self.game))
        """with ``belief=learned``: the hand reader (``reader=``, else the table's shipped one) whose reading
        deals the worlds (with ``belief=posterior``, where the posterior has none)"""
        weighed = "uniform" if o.belief in READERS else o.belief
        self.reading = None if weighed == "uniform" and o.opponents == "base" else Reading(
            self.game, base, weighed, o.opponents == "recognise", o.ess, drawn_apart(seed, BASE),
            weights=o.weigh)
        """the likelihood belief and recognition of the table (`cardlab.agents.hand_reading.belief`); None:
        neither is asked for"""
        reads = self.reading is not None or self.reader is not None
        self.sees = frozenset(({"record"} if reads else set()) |
                              ({"state"} if o.cheat else set()))
        self._record: Record | None = None
        self._state: Any = None
        """with ``cheat=1``: the true state shown before this decision (`show`), used once"""
        self.spec: str | None = None
        """the spec it was made from (`cardlab.agents.agent_spec.make_search_agent`)"""
        self.remake: Callable[[int], SearchAgent] | None = None
        """builds this search again from its spec with a seed (set with `spec`): its warm-up twin"""

    @property
    def seat_models(self) -> Mapping[int, Agent]:
        """The models that play some seats in the rollouts, keyed by seat relative to the searcher."""
        return self.rollouts.seat_models

    def set_seat_models(self, models: Mapping[int, Agent]) -> None:
        """The models that play these seats in the rollouts, keyed by seat relative to the searcher
        (1 = the next seat, up to n - 1); the other seats keep the rollout policy. Replaces the models
        given before (an empty mapping: the rollout policy everywhere). A `ValueError` refuses a seat
        outside 1..n - 1, a model of another game or rules, or a search, and changes nothing."""
        self.rollouts.seat_models = checked_seat_models(self.game, models)

    def seed(self, seed: int | None) -> None:
        """Reseed the search and everything it plays with: the base, the rollout policy, the seat models
        (each model once, by its first seat; the base and the rollout policy keep their own seeds) and
        the rollout engine, so that a seed replays a hand whatever was played before it (C2)."""
        super().seed(seed)
        self.base.seed(drawn_apart(seed, BASE))
        if self.rollout is not None:
            self.rollout.seed(drawn_apart(seed, ROLLOUT))
        seeded = {id(self.base), id(self.rollout)}
        for seat, model in sorted(self.seat_models.items()):
            if id(model) not in seeded:
                seeded.add(id(model))
                model.seed(drawn_apart(seed, SEAT, seat))
        self.rollouts.reseed(drawn_apart(seed, ENGINE))
        if self.posterior is not None:
            self.posterior.reseed(drawn_apart(seed, POSTERIOR))

    def reset(self) -> None:
        self.base.reset()
        if self.reading is not None:
            self.reading.new_hand()

    def show(self, seen: Mapping[str, Any]) -> None:
        """What `sees` names, before a decision: the hand's public record (a belief or recognition), the true
        state (``cheat=1``)."""
        self._record = seen.get("record")
        self._state = seen.get("state")

    def act(self, observation: dict[str, np.ndarray]) -> int:
        legal = np.flatnonzero(np.asarray(observation["action_mask"]))
        if legal.size == 0:
            raise ValueError("the observation's action_mask has no legal action")
        self.last_decision = None
        if legal.size == 1:
            self._record = self._state = None
            return int(legal[0])
        self.warm_up(observation)
        started = time.perf_counter()  # the cap counts the base's own move too
        choice = int(self.base.act(observation))
        rng = np.random.default_rng(int(self.rng.integers(2**63)))
        results, weights = self._search(observation, legal, rng, started)
        self._record = None  # shown for this decision only
        values = weighed_values(results, weights)
        best = int(np.argmax(values))
        beats = self._beats(results, best, int(np.searchsorted(legal, choice)), weights)
        action = int(legal[best]) if beats else choice
        self.last_decision = Decision(legal, values, results.shape[1], choice, action)
        return action

    def warm_up(self, observation: dict[str, np.ndarray]) -> None:
        """Before a clocked decision, what the clock should not time: the rollout engine built at the size
        the decision plays in (`Rollouts.ready`), and in the process's first clocked decision of this
        search, its compiled code compiled or loaded from the cache, by a twin (from its spec, else a copy)
        that decides here over `WARM_WORLDS` worlds under a clock it never reaches (the clocked code is
        compiled apart from the unclocked). The twin's generators are its own: this search plays as it
        would unwarmed. A search built in code whose base cannot be copied (it holds a session or a lock)
        has no twin: its first clocked decision compiles what the engine's warm-up did not."""
        if not self.options.budget()[1]:
            return
        self.rollouts.ready()
        key = self.spec or f"{self.game.id}/{self.game.num_players}/{type(self.base).__name__}/{self.options}"
        if key in _WARMED:
            return
        _WARMED.add(key)
        try:
            twin = self.remake(0) if self.remake is not None else copy.deepcopy(self)
        except (TypeError, copy.Error):  # deepcopy's refusal of an object it cannot pickle or copy
            return
        twin.options = dataclasses.replace(twin.options, worlds=WARM_WORLDS, ms=MOST_MS)  # a clock, never hit
        twin.show({"record": self._record, "state": self._state})
        twin.act(observation)

    def _beats(self, results: np.ndarray, best: int, base: int, weights: np.ndarray | None = None) -> bool:
        """Whether candidate `best` beats the base's choice by more than `z` standard errors.

        The error is that of the paired differences over the worlds (common
        random numbers), weighted by `weights` (None: equal;
        `reading.weighed_margin`): without this margin the noisiest of many
        candidates would often displace a good base's choice. With one world,
        or weights as concentrated as one, there is no error to measure: only
        ``z=0`` switches.
        """
        mean, error, size = weighed_margin(results[best] - results[base], weights)
        if size == 0 or mean <= 0:
            return False
        if size <= 1.0:
            return self.options.z == 0
        return bool(mean > self.options.z * error)

    # ------------------------------------------------------------ the search
    def _search(self, observation: dict[str, np.ndarray], legal: np.ndarray, rng: np.random.Generator,
                started: float) -> tuple[np.ndarray, np.ndarray | None]:
        """(candidates, worlds finished): each candidate's result in each world (`Rollouts.play`), the
        cap counted from `started` (`time.perf_counter`); and with ``weigh=weights`` the worlds' weights
        (None: equal)."""
        wanted, ms = self.options.budget()
        if wanted == 0:
            return np.zeros((legal.size, 0)), None
        deadline = started + ms / 1000 if ms else None
        record = self._record
        if (self.reading is not None or self.reader is not None) and record is None:
            raise ValueError("a search with a belief or recognised opponents must be shown the hand's public "
                             "record before each decision (Agent.show, as the play loops do: sees='record'); "
                             "none was shown")
        known = self.game.determinization(observation, 0, record)
        if self.reader is not None:
            known = dataclasses.replace(known, leaning=self.reader.leaning(known, observation["observation"],
                                                                           record))
        if self.options.cheat:
            known = self._revealed(known)
        worlds, prepare = self._deal(known, wanted, rng, deadline)
        values = (seat_values(self.options.value, self.options.points_weight) if self.equity is None
                  else self.equity.after_hand(known.match))
        results = self.rollouts.play(known, worlds, legal, deadline, values, prepare)
        if prepare is None or self.reading is None:
            return results, None
        return results, self.reading.weights(results.shape[1])

    def _deal(self, known: Determinization, wanted: int, rng: np.random.Generator,
              deadline: float | None) -> tuple[Worlds | Weighing, Prepare | None]:
        """The worlds of one decision, dealt at once from the decision's generator (the same worlds however
        many are in play at a time): the one place where worlds are chosen; with a belief, resampled by it
        or (``weigh=weights``) with the hook that weighs them as the rollouts reach them, and with
        recognition, the recognised seats' models set (`set_seat_models`). The posterior draws from a
        generator spawned from the decision's (`Generator.spawn` leaves its state as it was), so that where
        it keeps no world the fallback deals the very worlds the reader's search deals from that seed."""
        drawn = None if self.posterior is None or self.options.cheat else self.posterior.draw(
            known, wanted, self._record, rng.spawn(1)[0])
        if drawn is not None:
            return drawn, None
        if self.reading is None:
            return known.deal(rng, wanted), None
        read = self.reading.read(known, wanted, self._record, rng, deadline)
        if read.seats is not None:
            self.set_seat_models(read.seats)
        return read.worlds, read.prepare

    def _revealed(self, known: Determinization) -> Determinization:
        """With ``cheat=1``: `known` dealing the true other hands of the state shown for this decision."""
        state, self._state = self._state, None
        if state is None:
            raise ValueError("search option cheat=1 deals the true hidden hands, so it needs the true state "
                             "shown before each decision (Agent.show), as evaluation's play loops do; this "
                             "play loop showed none")
        return revealed(known, state, state.current)


def __getattr__(name: str) -> object:
    """`make_search_agent`, which moved to `cardlab.agents.agent_spec`, with a warning."""
    return moved.moved_name(__name__, name)
