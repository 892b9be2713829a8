"""`SearchAgent`: decision-time search over a base agent (perfect-information Monte Carlo), ``search:BASE``.

Why: a bot plays each move from its observation alone; looking ahead when it
must decide makes the same bot stronger without any training. At a decision
with more than one legal move the agent samples `worlds` determinizations
(whole states that agree with its observation: `Game.determinization`), plays
every legal candidate in every world and rolls the hand out to its end in the
game's batched engine (`cardlab.agents.rollouts`: the worlds dealt straight
into its slots, each seat's moves from its rollout model, one `act_batch` per
model per step, or the whole play-out in one compiled call when one compiled
heuristic plays every seat). A candidate's value is its mean result over
the worlds, the same worlds for every candidate (common random numbers: each
world's slots start from one state; a reshuffle, Switch's A10 or Huit's B10
with `shuffle_on_refill`, draws from each slot's own generator, so candidates
of one world part ways there, which adds noise but no bias). The best one is
played when it beats the base's own choice by more than ``z`` standard errors
of their paired differences over the worlds, else the base's choice is (with
``worlds=0`` the agent plays as its base): among many candidates the luckiest
estimate would otherwise often displace a good base's move.

The base gives the move the search must beat; the rollout policy
(``rollout=``) plays the rollouts' moves in every seat, and
`SearchAgent.set_seat_models` puts a model of its own in some seats (an
opponent recognised, say), keyed by seat relative to the searcher.

Spec strings: ``search:BASE``, options as ``key=value`` parts between
``search:`` and the base (colons, so that no shell quoting is needed and the
commas of ``--agents`` still separate agents):

    search:expert                           the defaults: level=quick, the expert's rollouts
    search:level=strong:expert              the strong level (about 1 s a decision)
    search:rollout=expert:bot:huit-2p       the bot's move to beat, the expert's rollouts
    search:worlds=128:ms=0:bot:huit-2p      128 worlds, no time cap
    search:value=points:bot:huit-2p-match   minus the seat's points, for match play
    search:cheat=1:worlds=64:ms=0:expert    the cheat: the other hands as they are (upper bounds only)
    search:belief=expert:weigh=weights:expert   worlds weighed by the expert's likelihood of the moves made

Options (`SearchOptions`, defaults in brackets):

- ``level`` [quick]: the budget, ``quick`` (`LEVELS`: worlds and ms within
  100 ms a decision at the 99th percentile on one core, the web app's
  default) or ``strong`` (within 1 s); ``worlds`` and ``ms`` given beside it
  override its own;
- ``worlds``: worlds sampled per decision, 0 to `MOST_WORLDS`;
- ``ms``: wall-clock cap per decision in milliseconds, 0 for none, counted
  from the decision's start (the base's move, a belief's replay and the
  rollouts all within it); a world the cap finds still in play is dropped,
  and with no world finished the base's choice is played. A decision takes
  at most about `ms` plus one wave (fused) or one engine step (stepped), or
  with a belief one replay block (`reading.MIN_BLOCK` worlds or more);
- ``rollout`` [base]: the policy of the rollouts' moves, one of `ROLLOUTS`:
  ``base``, ``random``, the game's heuristics (``greedy``, ``expert``), or
  ``bot`` (the table's shipped bot, ``bot:GAME``);
- ``value`` [win]: ``win``, the seat's hand win reward (+1 for a win, the
  loss shared out as in `cardlab.envs.match.win_rewards`, 0 when C1 cuts the
  hand), or ``points``, minus the seat's score change over 100 (what the
  points reward pays: match play cares by how much a hand is lost);
- ``z`` [1]: the margin, in standard errors, by which the best candidate
  must beat the base's choice to be played (0 to `MOST_Z`; 0: the best mean,
  ties to the base);
- ``belief`` [uniform]: how the worlds are weighed (`cardlab.agents.belief`):
  ``uniform``, or a model of the other seats (``expert``, ``greedy``,
  ``random``, ``bot``: the table's shipped bot, ``base``: the search's own
  base) by whose likelihood of their recorded moves the worlds are weighed;
- ``weigh`` [resample]: how a belief's weights are used
  (`cardlab.agents.reading`, `WEIGHS`): ``resample``, four times the worlds
  dealt and weighed (under a cap, as many as fit in `REPLAY_SHARE` of it) and
  the worlds searched drawn from them by weight; or ``weights``, the worlds
  dealt once, each weighed, and each candidate's value its weighted mean
  over the worlds (self-normalised importance sampling), the margin ``z``
  then in weighted standard errors of the paired differences
  (`reading.weighed_margin`, with the weights' effective sample size). With
  a cap the replay of the record counts in it, as the rollouts do;
- ``opponents`` [base]: who plays the other seats in the rollouts: ``base``,
  or ``recognise``: each seat's likeliest model of the library
  (`belief.LIBRARY`) by its moves this hand and match (`set_seat_models`);
- ``ess`` [0.01]: the share of the worlds under which a belief's effective
  sample size makes it fall back to the uniform worlds.

With a belief or recognition the agent `sees` the hand's public record
(the play loop `show`s it before each move; the worlds then agree with all
of it, not only with the observation), and refuses to decide without it.
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
played depend on the machine's speed. A bot breaks no ties at random; a
heuristic breaks its ties with its own generator across the slots, which adds
noise between candidates but no bias. `action_probabilities` is the default
of `Agent`: 1 on the chosen move. `last_decision` keeps the last search's
candidates, values and worlds.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping
from typing import Any, NamedTuple

import numpy as np

from cardlab.agents.base import Agent, as_game, make_agent
from cardlab.agents.reading import REPLAY_SHARE, WEIGHS, Reading, Weighing, weighed_margin, weighed_values
from cardlab.agents.rollouts import Prepare, Rollouts, checked_seat_models, seat_values
from cardlab.envs.checked_json import excerpt
from cardlab.envs.determinize import Determinization, Worlds, revealed
from cardlab.envs.record import Record
from cardlab.envs.spec import Game

PREFIX = "search:"
VALUES = ("win", "points")
ROLLOUTS = ("base", "random", "greedy", "expert", "bot")
"""the rollout policies a spec may name (``greedy`` and ``expert`` where the game has them)"""
BELIEFS = ("uniform", "expert", "greedy", "random", "bot", "base")
"""the beliefs a spec may name (`cardlab.agents.belief`)"""
OPPONENTS = ("base", "recognise")
MOST_WORLDS = 16384
"""the most worlds a spec may ask for (each is a batch slot per candidate, played in waves)"""
MOST_Z = 10.0
"""the largest margin `z` a spec may ask for"""
LEVELS: dict[str, tuple[int, int]] = {"quick": (2048, 60), "strong": (MOST_WORLDS, 700)}
"""level -> (worlds, ms): ``quick`` the web app's default search, ``strong`` about ten times its time"""
LEVEL_BOUNDS_MS = {"quick": 100.0, "strong": 1000.0}
"""level -> the decision time its budget keeps within at the 99th percentile on one core (what
``benchmarks/decision_latency.py --levels`` checks)"""


@dataclasses.dataclass(frozen=True)
class SearchOptions:
    """The budget, the rollouts and the value of a search (see the module doc); `worlds` and `ms` left None
    take the `level`'s."""

    worlds: int | None = None
    ms: int | None = None
    value: str = "win"
    z: float = 1.0
    rollout: str = "base"
    level: str = "quick"
    belief: str = "uniform"
    opponents: str = "base"
    ess: float = 0.01
    cheat: int = 0
    weigh: str = "resample"

    def __post_init__(self) -> None:
        if self.level not in LEVELS:
            raise ValueError(f"search option level={excerpt(self.level)}: give one of "
                             f"{', '.join(f'level={name}' for name in LEVELS)}")
        worlds, ms = LEVELS[self.level]
        object.__setattr__(self, "worlds", worlds if self.worlds is None else self.worlds)
        object.__setattr__(self, "ms", ms if self.ms is None else self.ms)
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
        if self.rollout not in ROLLOUTS:
            raise ValueError(f"search option rollout={excerpt(self.rollout)}: give one of "
                             f"{', '.join(f'rollout={name}' for name in ROLLOUTS)}")

        if self.belief not in BELIEFS:
            raise ValueError(f"search option belief={excerpt(self.belief)}: give one of {', '.join(BELIEFS)}")
        if self.weigh not in WEIGHS:
            raise ValueError(f"search option weigh={excerpt(self.weigh)}: give one of "
                             f"{', '.join(f'weigh={name}' for name in WEIGHS)}")
        if self.opponents not in OPPONENTS:
            raise ValueError(f"search option opponents={excerpt(self.opponents)}: give opponents=base or "
                             "opponents=recognise")
        if isinstance(self.ess, bool) or not isinstance(self.ess, (int, float)) or not 0 <= self.ess <= 1:
            raise ValueError(f"search option ess={excerpt(self.ess)}: give a share of the worlds from 0 to 1")

    def budget(self) -> tuple[int, int]:
        """(worlds, ms): the level's where not given (`__post_init__` filled them)."""
        assert self.worlds is not None and self.ms is not None
        return self.worlds, self.ms


_FIELDS = tuple(field.name for field in dataclasses.fields(SearchOptions))
ACCEPTED = (f"level={'|'.join(LEVELS)} (the budget, default {SearchOptions.level}: "
            f"{', '.join(f'{name} {w} worlds in {ms} ms' for name, (w, ms) in LEVELS.items())}), "
            f"worlds=N (worlds per decision, 0..{MOST_WORLDS}, default the level's), "
            f"ms=N (time cap per decision in ms, 0 for none, default the level's), "
            f"rollout={'|'.join(ROLLOUTS)} (the rollouts' policy, default {SearchOptions.rollout}), "
            f"value=win|points (default {SearchOptions.value}), "
            f"z=X (standard errors a move must beat the base's choice by, 0..{MOST_Z}, "
            f"default {SearchOptions.z}), belief={'|'.join(BELIEFS)} (default {SearchOptions.belief}), "
            f"weigh={'|'.join(WEIGHS)} (how a belief's weights are used, default {SearchOptions.weigh}), "
            f"opponents={'|'.join(OPPONENTS)} (default {SearchOptions.opponents}), "
            f"ess=X (share of the worlds, 0..1, default {SearchOptions.ess}), "
            f"cheat=0|1 (1: worlds dealt with the true hidden hands, default {SearchOptions.cheat})")


def options_markdown() -> str:
    """The options table of the docs (docs/update_tables.py writes it into docs/training.md)."""
    levels = ", ".join(f"`{name}`: {w} worlds, {ms} ms (p99 within {LEVEL_BOUNDS_MS[name]:g} ms)"
                       for name, (w, ms) in LEVELS.items())
    rows = [
        ("level", SearchOptions.level, " or ".join(f"`{name}`" for name in LEVELS),
         f"the budget: {levels}; `worlds` or `ms` given beside it win"),
        ("worlds", "the level's", f"0..{MOST_WORLDS}", "worlds per decision (0: play as BASE)"),
        ("ms", "the level's", "whole number, 0 for none",
         "time cap per decision in milliseconds; a world the cap finds in play is dropped"),
        ("rollout", SearchOptions.rollout, ", ".join(f"`{name}`" for name in ROLLOUTS),
         "the policy of the rollouts' moves in every seat (`bot`: the table's shipped bot; `greedy` and "
         "`expert` where the game has them)"),
        ("value", SearchOptions.value, ", ".join(f"`{name}`" for name in VALUES),
         "the seat's hand win reward, or minus its points / 100 (for match play)"),
        ("z", f"{SearchOptions.z:g}", f"0..{MOST_Z:g}",
         "standard errors by which a move must beat BASE's choice to be played instead (0: the best mean)"),
        ("belief", SearchOptions.belief, ", ".join(f"`{name}`" for name in BELIEFS),
         "how the worlds are weighed: uniformly, or by how likely that model of the other seats (`bot`: the "
         "table's shipped bot, `base`: BASE) was to make their recorded moves from each world's hands"),
        ("weigh", SearchOptions.weigh, ", ".join(f"`{name}`" for name in WEIGHS),
         "how a belief's weights are used: `resample`, four times the worlds dealt and weighed (under a cap, "
         f"as many as fit in {REPLAY_SHARE:g} of it) and the worlds searched drawn from them by weight; "
         "`weights`, the "
         "worlds dealt once and each candidate's value its weighted mean over them (importance sampling; "
         "`z` in weighted standard errors)"),
        ("opponents", SearchOptions.opponents, ", ".join(f"`{name}`" for name in OPPONENTS),
         "who plays the other seats in the rollouts: the rollout policy, or each seat's likeliest model "
         "(random, the heuristics, the table's bot, BASE) by its moves this hand and match"),
        ("ess", f"{SearchOptions.ess:g}", "0..1",
         "the share of the worlds under which the belief's effective sample size makes it fall back to "
         "uniform worlds"),
        ("cheat", str(SearchOptions.cheat), "`0`, `1`",
         "1: every world holds the other seats' true hands (the face-down pile still dealt at random from "
         "its true cards): the measured upper bound of any inference of the hidden cards, for benchmarks "
         "only (it plays only where the play loop shows it the true state, as evaluation does)"),
    ]
    lines = ["| option | default | accepted | meaning |", "|---|---|---|---|"]
    lines += [f"| `{name}` | {default} | {accepted} | {meaning} |" for name, default, accepted, meaning in
              rows]
    return "\n".join(lines) + "\n"


_WORDS = ("value", "rollout", "level", "belief", "opponents", "weigh")
"""the options whose values are words, not numbers"""


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
        if key in _WORDS:
            values[key] = text
            continue
        try:
            values[key] = float(text) if key in ("z", "ess") else int(text)
        except ValueError:
            kind = "number" if key in ("z", "ess") else "whole number"
            raise ValueError(f"agent spec {excerpt(spec)}: search option {key}={excerpt(text)} is not a "
                             f"{kind}; accepted: {ACCEPTED}") from None
    try:
        return SearchOptions(**values), base
    except ValueError as err:
        raise ValueError(f"agent spec {excerpt(spec)}: {err}") from None


BASE, ENGINE, ROLLOUT, SEAT = range(1, 5)
"""The streams `drawn_apart` draws the seeds of: the base agent, the rollout engine's slot generators,
a rollout policy other than the base, and the model `set_seat_models` gave a seat."""


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
        self._values = seat_values(self.options.value)
        o = self.options
        self.reading = None if o.belief == "uniform" and o.opponents == "base" else Reading(
            self.game, base, o.belief, o.opponents == "recognise", o.ess, drawn_apart(seed, BASE),
            weights=o.weigh)
        """the belief and recognition of the table (`cardlab.agents.belief`); None: neither is asked for"""
        self.sees = frozenset(({"record"} if self.reading is not None else set()) |
                              ({"state"} if o.cheat else set()))
        self._record: Record | None = None
        self._state: Any = None
        """with ``cheat=1``: the true state shown before this decision (`show`), used once"""

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
        if self.reading is not None and record is None:
            raise ValueError("a search with a belief or recognised opponents must be shown the hand's public "
                             "record before each decision (Agent.show, as the play loops do: sees='record'); "
                             "none was shown")
        known = self.game.determinization(observation, 0, record)
        if self.options.cheat:
            known = self._revealed(known)
        worlds, prepare = self._deal(known, wanted, rng, deadline)
        results = self.rollouts.play(known, worlds, legal, deadline, self._values, prepare)
        if prepare is None or self.reading is None:
            return results, None
        return results, self.reading.weights(results.shape[1])

    def _deal(self, known: Determinization, wanted: int, rng: np.random.Generator,
              deadline: float | None) -> tuple[Worlds | Weighing, Prepare | None]:
        """The worlds of one decision, dealt at once from the decision's generator (the same worlds however
        many are in play at a time): the one place where worlds are chosen; with a belief, resampled by it
        or (``weigh=weights``) with the hook that weighs them as the rollouts reach them, and with
        recognition, the recognised seats' models set (`set_seat_models`)."""
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


def make_search_agent(spec: str, game: Any, seed: int | None = None) -> SearchAgent:
    """The agent of a ``search:...`` spec (see the module doc); `make_agent` calls this."""
    game = as_game(game)
    options, base_spec = parse_spec(spec)
    try:
        base = make_agent(base_spec, game, seed=drawn_apart(seed, BASE))
    except ValueError as err:
        raise ValueError(f"agent spec {excerpt(spec)}: its base agent: {err}") from None
    try:
        policy = rollout_spec(options.rollout, game)
        rollout = None if policy is None else make_agent(policy, game, seed=drawn_apart(seed, ROLLOUT))
    except ValueError as err:
        raise ValueError(f"agent spec {excerpt(spec)}: its rollout policy: {err}") from None
    return SearchAgent(game, base, options, seed, rollout)
