"""The game contract: one `GameSpec` per game, and the one registry of games.

Everything cardlab knows about a game goes through its `GameSpec`: the rule
options (defaults, ranges, docs), the engine state class, the observer (the
public view, and the hidden view that only a training critic reads), action
ids as text both ways, the action table of the docs, the heuristic agents, the
compiled fast paths (`fast`, `cardlab.envs.fast`) and
the lines of the text view. The AEC env, the agents, the CLI, configs,
evaluation and bot files all read the spec from the registry, never a game
module directly, so a third game is one folder plus one registration line:

```python
from cardlab.envs.game_spec import register
register(MY_GAME_SPEC)                     # or one line in BUILTIN below
```

A `Game` is a spec with its rule options (OpenSpiel's "game with its
parameters"): what an agent is built from. It holds no state of a hand, so an
agent made from it cannot see any card a player may not see.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple, Protocol, runtime_checkable

import numpy as np

from cardlab.envs.checked_json import excerpt
from cardlab.envs.fast import FastPaths
from cardlab.envs.layout import Layout
from cardlab.envs.match import Match
from cardlab.envs.options import RuleOptions

if TYPE_CHECKING:
    from cardlab.envs.batched_engine import BatchedEngine
    from cardlab.envs.record import Record
    from cardlab.envs.world_sampling import Determinization

# ---------------------------------------------------------------- the engine and observer contracts


@runtime_checkable
class GameState(Protocol):
    """What the AEC env needs of an engine state (the shared parts live in `common.HandState`).

    The state knows nothing of tensors: it holds cards, seats and the match;
    the observer turns it into vectors.
    """

    GAME: ClassVar[str]
    PILES: ClassVar[tuple[str, str]]
    n: int
    rules: Any
    rng: np.random.Generator
    current: int
    turn: int
    hands: list[np.ndarray]
    sizes: list[int]
    match: Match
    hand_over: bool
    truncated: bool
    winner: int | None
    hand_points: list[int]
    score_changes: list[int]
    match_over: bool

    def legal_actions(self) -> list[int]: ...

    def apply(self, action: int) -> None: ...

    def next_hand(self) -> None: ...

    def deal_stacked(self, deal: dict[str, Any]) -> None: ...

    def state_dict(self) -> dict[str, Any]: ...


class Observer(Protocol):
    """Turns a state into flat float32 vectors through named layouts (`cardlab.envs.layout`)."""

    layout: Layout
    hidden_layout: Layout
    state_layout: Layout

    def observe(self, state: Any, seat: int) -> np.ndarray:
        """What `seat` may see: the agents' observation."""

    def observe_hidden(self, state: Any, seat: int) -> np.ndarray:
        """What `seat` cannot see: for a training critic only, never for an agent."""

    def observe_state(self, state: Any) -> np.ndarray:
        """The whole table from seat 0 (PettingZoo's `state()`): for critics and analysis only."""


# ---------------------------------------------------------------- action ids


def action_id(action: Any, num_actions: int) -> int:
    """The one rule for action ids, used by `step` and `action_to_str` alike.

    Accepted: Python ints, numpy integer scalars and 0-d integer arrays (what
    gymnasium's `Discrete.sample()` and SB3 policies give), in 0..num_actions-1.
    Refused with a `ValueError`: bools, floats, strings, other arrays.
    """
    value = action
    if isinstance(value, np.ndarray) and value.ndim == 0 and np.issubdtype(value.dtype, np.integer):
        value = value.item()
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise ValueError(
            f"action {excerpt(action)} ({type(action).__name__}) is not an action id: "
            f"give an int 0..{num_actions - 1} "
            "(a numpy integer or 0-d integer array is accepted too; floats, strings and bools are not)"
        )
    value = int(value)
    if not 0 <= value < num_actions:
        raise ValueError(f"action id {excerpt(value)} is out of range: ids are 0..{num_actions - 1}")
    return value


@dataclasses.dataclass(frozen=True)
class ActionRange:
    """One row of a game's action table: ids `first..last`, what they do, how the id is formed."""

    first: int
    last: int
    action: str
    formula: str = ""


class MoveFacts(NamedTuple):
    """What one action id does, in the terms every shedding game shares (a learner's move features):
    draw, pass, or lay `cards` cards of `rank` (a card index's rank, `cards.NUM_RANKS` for a joker, -1 for
    none), of the suits in the 4-bit mask `suits`, `top` the suit laid last and `declared` the suit
    announced (`cards.NO_SUIT` for none)."""

    draw: bool = False
    passes: bool = False
    rank: int = -1
    suits: int = 0
    top: int = -1
    declared: int = -1
    cards: int = 0


# ---------------------------------------------------------------- the spec


@dataclasses.dataclass(frozen=True, eq=False)
class GameSpec:
    """Everything the rest of cardlab knows about one game (see the module doc)."""

    id: str
    """the game id used everywhere: configs, CLI, bot files, saved states ('switch', 'huit')"""
    title: str
    """the game's name for people"""
    summary: str
    """one paragraph on the game, for `cardlab rules` and the web page"""
    rules: type[RuleOptions]
    """the rule options dataclass (defaults, ranges and docs of each option)"""
    state: type
    """the engine state class (`GameState`): built as state(rules, rng), restored by from_state_dict"""
    observer: Callable[[Any], Observer]
    """builds the observer of a rule set"""
    observation_version: int
    """bumped whenever the observation layout changes meaning; bot files record it"""
    num_actions: int
    """size of the Discrete action space"""
    action_to_str: Callable[[int], str]
    """text of an action id, e.g. 'play 9S'"""
    str_to_action: Callable[[str], int]
    """action id of a text; a ValueError says what is wrong"""
    action_ranges: tuple[ActionRange, ...]
    """the action table, generated into the docs"""
    status: Callable[[Any], dict[str, str]]
    """the game's own lines of the text view (top card, suit, ...) for a state: public, as every player
    sees them (terminal play and the web page show them)"""
    heuristics: Mapping[str, str | Callable[..., Any]] = dataclasses.field(default_factory=dict)
    """agent spec name -> agent class (or 'module:Class', imported when first asked for)"""
    version: int = 0
    """the env version: the PettingZoo name is '<id>_v<version>'"""
    batched: str | None = None
    """'module:Class' of the game's batched engine (a `cardlab.envs.batched_engine.BatchedEngine`); None:
    the game has none of its own, and `batched_engine()` gives the generic one built on its rules engine"""
    move_facts: Callable[[int], MoveFacts] | None = None
    """what an action id does (`MoveFacts`), for learners that read moves by their features (DMC's Q
    network); None: the game offers none, and such learners refuse it"""
    move_notes: Callable[[Any, Any, int], list[tuple[int, str]]] | None = None
    """what a move did to a seat beyond the move itself, for terminal play: (state before the move,
    state after it, action) -> [(seat, text)], each text with '{who}' for the seat's name ('you' or
    'player_2'), e.g. (2, 'a Queen skipped {who} (B8)'); None: nothing to say"""
    view: Callable[[Any, int], dict[str, Any]] | None = None
    """the game's own public fields of a seat's view, for the web app: (state, seat) -> JSON values that
    every player sees (suit to follow, flags, ...) plus what only this seat saw (a card it drew); hands,
    pile sizes, the turn and the match's totals are added by the app; None: no fields of its own"""
    read_tables: frozenset[int] = frozenset()
    """the table sizes (default rules) where the web app's searches deal their worlds by the table's shipped
    hand reader (``belief=learned``): where that measured stronger than uniform worlds (docs/results.md)"""
    fast: str | None = None
    """'module:NAME' of the game's compiled fast paths (a `cardlab.envs.fast.FastPaths`: fused play-outs, the
    compiled replay, the fused vector step), imported when first asked for (`fast_paths`); None: the game
    has none, and every feature plays it move by move"""
    determinize: Callable[[Any, Mapping[str, np.ndarray], int, Record | None], Determinization] | None = None
    """reads one seat's observation for search agents: (rules, observation dict, seat, the public record as
    the seat saw it or None) -> a `cardlab.envs.world_sampling.Determinization`, whose `sample(rng)` gives
    whole states with `seat` to move whose observation and legal mask for `seat` are the given ones, the
    unseen cards dealt at random (and agreeing with the record); None: the game has none, and search
    agents refuse it"""

    def __post_init__(self) -> None:
        covered = sorted(i for r in self.action_ranges for i in range(r.first, r.last + 1))
        if covered != list(range(self.num_actions)):
            raise ValueError(
                f"game {self.id!r}: action_ranges must cover ids 0..{self.num_actions - 1} once each"
            )

    @property
    def env_name(self) -> str:
        return f"{self.id}_v{self.version}"

    def make(self, rule_options: Mapping[str, Any] | None = None, **more: Any) -> Game:
        """The game with these rule options (unknown names and bad values are refused)."""
        return Game(self, self.rules.from_options({**(rule_options or {}), **more}))

    def batched_engine(self, generic: bool = True) -> type[BatchedEngine]:
        """The game's batched engine class, imported when first asked for.

        A game without one (`batched` None) gets the generic batch of its rules
        engine (`cardlab.envs.generic_batch`: same API, slower), so the lean
        trainer runs every game; with `generic=False` it is refused instead with a
        `ValueError` saying the game has no batched engine.
        """
        if self.batched is None:
            if not generic:
                raise ValueError(
                    f"game {self.id!r} has no batched engine of its own (GameSpec.batched is None)"
                )
            from cardlab.envs.generic_batch import generic_batch

            return generic_batch(self)
        module, _, attr = self.batched.partition(":")
        return getattr(importlib.import_module(module), attr)

    def fast_paths(self) -> FastPaths | None:
        """The game's compiled fast paths (`fast`), imported when first asked for; None where it has none."""
        if self.fast is None:
            return None
        module, _, attr = self.fast.partition(":")
        paths = getattr(importlib.import_module(module), attr)
        if not isinstance(paths, FastPaths):
            raise ValueError(f"game {self.id!r}: GameSpec.fast names {self.fast!r}, which is not a FastPaths")
        return paths

    def heuristic(self, name: str) -> Callable[..., Any]:
        """The agent class registered under `name` for this game."""
        target = self.heuristics[name]
        if isinstance(target, str):
            module, _, attr = target.partition(":")
            return getattr(importlib.import_module(module), attr)
        return target

    def action_table(self) -> str:
        """The Markdown action table: ids, what they do, an example of the text form."""
        rows = ["| ids | action | id | text |", "|---|---|---|---|"]
        for r in self.action_ranges:
            ids = str(r.first) if r.first == r.last else f"{r.first}..{r.last}"
            rows.append(f"| {ids} | {r.action} | {r.formula or ids} | `{self.action_to_str(r.first)}` |")
        return "\n".join(rows)

    def rules_table(self) -> str:
        """The Markdown table of the rule options: name, default, accepted values, meaning."""
        rows = ["| option | default | accepted | meaning |", "|---|---|---|---|"]
        for opt in self.rules.describe():
            default = str(opt.default).lower() if isinstance(opt.default, bool) else opt.default
            rows.append(f"| `{opt.name}` | {default} | {opt.accepted} | {opt.doc} |")
        return "\n".join(rows)


@dataclasses.dataclass(frozen=True, eq=False)
class Game:
    """A game with its rule options: layouts, action ids, new and restored states.

    Agents are built from a `Game`; it holds no state of a hand.
    """

    spec: GameSpec
    rules: RuleOptions

    @functools.cached_property
    def observer(self) -> Observer:
        return self.spec.observer(self.rules)

    @property
    def id(self) -> str:
        return self.spec.id

    @property
    def num_players(self) -> int:
        return int(self.rules.num_players)  # type: ignore[attr-defined]

    @property
    def num_actions(self) -> int:
        return self.spec.num_actions

    @property
    def layout(self) -> Layout:
        return self.observer.layout

    @property
    def hidden_layout(self) -> Layout:
        return self.observer.hidden_layout

    @property
    def state_layout(self) -> Layout:
        return self.observer.state_layout

    def action_to_str(self, action: Any) -> str:
        return self.spec.action_to_str(action_id(action, self.num_actions))

    def str_to_action(self, text: str) -> int:
        return self.spec.str_to_action(text)

    def new_state(self, rng: np.random.Generator) -> Any:
        """A freshly shuffled deal."""
        return self.spec.state(self.rules, rng)

    def restore(self, data: Mapping[str, Any]) -> Any:
        """A state from `state_dict()` data, every field checked (a `ValueError` names the bad one)."""
        return self.spec.state.from_state_dict(data, self.rules)  # type: ignore[attr-defined]

    def determinization(self, observation: Mapping[str, np.ndarray], seat: int = 0,
                        record: Record | None = None) -> Determinization:
        """What `seat`'s observation dict (and the public record it saw) fix of a state: sample worlds."""
        if self.spec.determinize is None:
            raise ValueError(f"game {self.id!r} has no determinization (GameSpec.determinize is None): "
                             "search agents cannot sample its hidden cards")
        return self.spec.determinize(self.rules, observation, seat, record)

    def determinize(self, observation: Mapping[str, np.ndarray], rng: np.random.Generator,
                    seat: int = 0, record: Record | None = None) -> Any:
        """One state agreeing with `seat`'s observation dict (and record), unseen cards dealt from `rng`."""
        return self.determinization(observation, seat, record).sample(rng)

    def markdown(self, level: int = 2) -> str:
        """Rule options, observation and action tables of this game, generated from the code.

        The README, the env modules' doc pages and `cardlab rules GAME --markdown`
        all print this, so the docs cannot drift from the layouts.
        """
        h = "#" * level
        spec, layout = self.spec, self.layout
        n = self.num_players
        return "\n".join([
            f"{h} Rule options\n",
            spec.rules_table(),
            f"\n{h} Observation\n",
            f"`observation`: float32, {layout.size} values with {n} players, from the observing seat "
            f"(layout version {spec.observation_version}); `action_mask`: int8, {spec.num_actions} values, "
            "1 exactly for the legal actions of the seat to move.\n",
            layout.table(),
            f"\n{h} Actions\n",
            f"`Discrete({spec.num_actions})`; text both ways with `action_to_str` / `str_to_action`.\n",
            spec.action_table(),
        ])

    def describe(self) -> str:
        """Rule options as ``k=v`` words."""
        return " ".join(f"{k}={v}" for k, v in self.rules.to_dict().items())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Game) and other.spec.id == self.spec.id and other.rules == self.rules

    def __hash__(self) -> int:
        return hash((self.spec.id, self.rules))


# ---------------------------------------------------------------- the registry

BUILTIN: dict[str, str] = {
    "switch": "cardlab.envs.switch.spec:SPEC",
    "huit": "cardlab.envs.huit.spec:SPEC",
}
"""The games that come with cardlab: id -> 'module:attribute' of its `GameSpec` (imported when first used)."""

_REGISTRY: dict[str, GameSpec] = {}


def register(spec: GameSpec) -> GameSpec:
    """Add a game; its id must be new (re-registering the same spec object is a no-op)."""
    if not isinstance(spec, GameSpec):
        raise ValueError(f"register() takes a GameSpec, got {type(spec).__name__}")
    if not spec.id.isidentifier() or spec.id != spec.id.lower():
        raise ValueError(f"game id {spec.id!r} must be a lower-case identifier, e.g. 'huit'")
    known = _REGISTRY.get(spec.id)
    if known is not None and known is not spec:
        raise ValueError(f"a game {spec.id!r} is registered already")
    _REGISTRY[spec.id] = spec
    return spec


def unregister(game_id: str) -> None:
    """Remove a game added by `register` (tests use it to clean up; built-in games come back on next use)."""
    _REGISTRY.pop(game_id, None)


def _load_builtin() -> None:
    for game_id, target in BUILTIN.items():
        if game_id not in _REGISTRY:
            module, _, attr = target.partition(":")
            register(getattr(importlib.import_module(module), attr))


def games() -> tuple[str, ...]:
    """The ids of every registered game, built-in ones first."""
    _load_builtin()
    return (*BUILTIN, *(game_id for game_id in _REGISTRY if game_id not in BUILTIN))


def get_spec(game: str | GameSpec) -> GameSpec:
    """The spec of a game id (a spec is returned as it is)."""
    if isinstance(game, GameSpec):
        return game
    _load_builtin()
    if not isinstance(game, str) or game not in _REGISTRY:
        raise ValueError(f"unknown game {excerpt(game)}: use one of {', '.join(_REGISTRY)}")
    return _REGISTRY[game]


def make_game(
    game: str | GameSpec | Game, rule_options: Mapping[str, Any] | None = None, **more: Any
) -> Game:
    """A `Game` from an id (or spec) and rule options.

    A `Game` is returned as it is when no options are given.
    """
    if isinstance(game, Game):
        if rule_options or more:
            return game.spec.make({**game.rules.to_dict(), **(rule_options or {}), **more})
        return game
    return get_spec(game).make(rule_options, **more)


def rule_names(game: str | GameSpec) -> Sequence[str]:
    return get_spec(game).rules.names()
