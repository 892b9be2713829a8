"""`EvalRequest`: what an evaluation plays, checked once, taken by `evaluate`, its Ray twins and the exploits.

Why one object: the game, the seats' agents, the hands, the matches, the
seed, the rule options and the factory that builds the agents were a list of
parameters repeated in every function that plays an evaluation (serial, on
Ray, for each table of a tournament, at each mark of an exploit), each
checking them again. A request is built and checked once (a bad count, seed
or rule option is refused in one line when it is made), and `table` works out
what it plays: the table's rules, its slots (the agents repeated in order to
fill the seats) and the deals of each kind. How it is played (a progress bar,
Ray workers, the batched engine) stays with the function that plays it.
`old_form` lets a function that takes a request read the parameter lists of
before, with a deprecation warning, for one version.
"""

from __future__ import annotations

import dataclasses
import functools
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Concatenate, ParamSpec, TypeVar, cast

from cardlab.agents.agent_spec import make_agent
from cardlab.agents.base import Agent
from cardlab.envs import make_game
from cardlab.envs.checked_json import excerpt
from cardlab.envs.game_spec import Game
from cardlab.envs.rng import check_seed
from cardlab.evaluation.episodes import HAND, MATCH, players_for, rotated_deals, seat_slots, table_rules

AgentFactory = Callable[[Any, Any, int], Agent]
"""(slot spec, game, seed) -> the slot's agent: `make_agent`, or one that sets the agent up further"""


@dataclasses.dataclass(frozen=True)
class Table:
    """What a request plays: the rule options as given (with the table's size), every rule, the slots' specs,
    the game, and the deals of each kind (hands or matches rounded up to whole rotations of the seats)."""

    rules: dict[str, Any]
    full_rules: dict[str, Any]
    slots: list[str]
    game: Game
    deals: dict[int, int]

    @property
    def num_players(self) -> int:
        return len(self.slots)


@dataclasses.dataclass(frozen=True)
class EvalRequest:
    """An evaluation: `agents` fill the seats of `game` (repeated in order), `hands` seeded hands and
    `matches` matches, every seat rotation of each deal (`cardlab.evaluation.evaluate`)."""

    game: str
    """the game's id (``huit``, ``switch``, a registered game)"""
    agents: Sequence[str]
    """agent specs, one per slot; fewer than the seats repeat in order"""
    hands: int = 0
    """hands to play (rounded up to a multiple of the table's size)"""
    matches: int = 0
    """matches to the target score to play (likewise rounded up)"""
    seed: int = 0
    """the seed every deal and agent is derived from (C2)"""
    rules: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    """rule options; without ``num_players`` each agent gets a seat"""
    agent_factory: AgentFactory = make_agent
    """(slot spec, game, seed) -> the slot's agent (`make_agent`, or one that sets it up further)"""

    def __post_init__(self) -> None:
        if isinstance(self.agents, str) or not all(isinstance(a, str) for a in self.agents):
            raise ValueError(f"agents must be a list of agent specs, got {excerpt(self.agents)}")
        for name in ("hands", "matches"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"{name} must be a whole number >= 0, got {excerpt(value)}")
        if self.hands == 0 and self.matches == 0:
            raise ValueError("nothing to play: give hands > 0 or matches > 0")
        object.__setattr__(self, "agents", tuple(self.agents))
        object.__setattr__(self, "seed", check_seed(self.seed))
        object.__setattr__(self, "rules", dict(self.rules or {}))

    def replace(self, **changes: Any) -> EvalRequest:
        """This request with some fields changed (checked again)."""
        return dataclasses.replace(self, **changes)

    @functools.cached_property
    def table(self) -> Table:
        """What this request plays, checked (a bad rule option or agent count is refused in one line)."""
        rules = dict(self.rules)
        rules["num_players"] = players_for(self.game, rules, self.agents)
        full_rules = table_rules(self.game, rules)
        n = full_rules["num_players"]
        game = make_game(self.game, full_rules)
        slots = seat_slots(list(self.agents), n, game)
        deals = {HAND: rotated_deals(self.hands, n), MATCH: rotated_deals(self.matches, n)}
        return Table(rules, full_rules, slots, game, deals)


OLD_ORDER = ("agents", "hands", "seed", "rules", "matches", "progress", "desc", "batched", "on_played",
             "agent_factory")
"""the positional parameters after the game in the parameter lists of before (`evaluate`'s)"""
OLD_NAMES = {"agent_specs": "agents", "tables": "agents", "specs": "agents", "rule_options": "rules",
             "hands_per_pair": "hands"}
"""their old keyword names"""
FIELDS = frozenset(f.name for f in dataclasses.fields(EvalRequest))
Q = TypeVar("Q")
R = TypeVar("R")
P = ParamSpec("P")


def legacy_request(function: str, game: str, args: Sequence[Any], kwargs: Mapping[str, Any],
                   order: Sequence[str] = OLD_ORDER) -> tuple[dict[str, Any], dict[str, Any]]:
    """The request fields and the other options of a call in the old form ``function(game, specs, hands,
    seed, rule_options, ...)`` (the parameters after the game in `order`), with a DeprecationWarning that
    shows the new one, at the line that called `function` (through `old_form`'s wrapper)."""
    warnings.warn(f"{function}(game, agent_specs, hands, ...) is deprecated: pass an EvalRequest "
                  f"({function}(EvalRequest(game, agents, hands=..., seed=..., rules=...)), "
                  "cardlab.evaluation.request); the old form goes in the next version",
                  DeprecationWarning, stacklevel=3)
    if len(args) > len(order):
        raise TypeError(f"{function} takes at most {len(order) + 1} positional arguments in the old form")
    given = dict(zip(order, args, strict=False))
    for key, value in kwargs.items():
        name = OLD_NAMES.get(key, key)
        if name in given:
            raise TypeError(f"{function} got {key} twice")
        given[name] = value
    fields = {k: v for k, v in given.items() if k in FIELDS}
    fields["game"] = game
    fields["rules"] = fields.get("rules") or {}
    return fields, {k: v for k, v in given.items() if k not in FIELDS}


def one_request(fields: dict[str, Any]) -> EvalRequest:
    """The request of an old-form call's fields."""
    return EvalRequest(**fields)


def each_table(fields: dict[str, Any]) -> list[EvalRequest]:
    """A request per table of an old-form call whose agents were a list of tables (`evaluate_many`'s)."""
    tables = fields.pop("agents")
    return [EvalRequest(agents=table, **fields) for table in tables]


def old_form(build: Callable[[dict[str, Any]], Q], order: Sequence[str] = OLD_ORDER
             ) -> Callable[[Callable[Concatenate[Q, P], R]], Callable[Concatenate[Q | str, P], R]]:
    """A function of a request (`Q`) and keyword options that also takes, for one version, the old form
    ``function(game, specs, hands, ...)`` (its parameters after the game in `order`): the old call's request
    made by `build`, with a DeprecationWarning at the caller's line (`legacy_request`). A new-form call with
    positional arguments after the request is a TypeError: one place for what `evaluate`, its Ray twins and
    the tournaments each did."""

    def wrap(function: Callable[Concatenate[Q, P], R]) -> Callable[Concatenate[Q | str, P], R]:
        name = getattr(function, "__name__", "evaluate")
        plain = cast("Callable[..., R]", function)  # called with the options as the caller gave them

        @functools.wraps(function)
        def call(request: Any, *old: Any, **keywords: Any) -> R:
            if isinstance(request, str):
                fields, options = legacy_request(name, request, old, keywords, order)
                return plain(build(fields), **options)
            if old:
                raise TypeError(f"{name} takes a request and keyword options, got {len(old)} more positional "
                                "argument(s)")
            return plain(request, **keywords)

        return cast("Callable[Concatenate[Q | str, P], R]", call)

    return wrap
