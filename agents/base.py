"""The one agent interface, and the registry of agents every game has.

An agent is made for one `Game` (a game with its rule options, from
`cardlab.envs.make_game`), never from a live env: it decodes observations
through `game.layout` and names actions through `game.action_to_str`, and each
turn it gets only the observation dict of its seat (with the `action_mask`).
So it can see what a player sees and nothing more, unless it asks for more
in `sees` (the play loop then `show`s it before each `act`: "record", the
hand's public record as its seat saw it; "state", a deep copy of the true
game state, which only a cheat for measured upper bounds asks for; the web
app refuses such an agent). Every play loop shows it through one helper,
`show_table`. It owns a seeded `np.random.Generator`, never the global RNG.

A plain name (``random``, a game's heuristic) gives an agent here
(`named_agent`); spec strings, which also name bots, searches and a user's
factories, are read by `cardlab.agents.agent_spec`, and the shipped bots are
listed by `cardlab.agents.bot_catalogue`. Advice:
`action_probabilities(observation)` is what an agent would play, as
probabilities over the legal actions, and `advise` lists the likeliest moves
(the web app's hints, `cardlab advise`).
"""

from __future__ import annotations

import copy
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

import numpy as np

from cardlab import moved
from cardlab.envs.checked_json import excerpt
from cardlab.envs.declared import refusal
from cardlab.envs.fast import RANDOM, CompiledPolicy
from cardlab.envs.game_spec import Game

THREADS_ENV = "CARDLAB_TORCH_THREADS"
"""environment variable: torch threads of a bot's network (default 1; see `cardlab.agents.bot`)"""
AgentFactory = Callable[[Game, "int | None"], "Agent"]
# Agents for every game, beyond each game's own heuristics: name -> factory(game, seed).
_REGISTRY: dict[str, AgentFactory] = {}


def as_game(game: Any) -> Game:
    """The `Game` of a Game or of an env (its game and rules only: the agent keeps no env)."""
    if isinstance(game, Game):
        return game
    found = getattr(getattr(game, "unwrapped", game), "game", None)
    if isinstance(found, Game):
        return found
    raise ValueError(
        f"agents are built from a Game (cardlab.envs.make_game(id, **rules), or env.unwrapped.game), "
        f"got {type(game).__name__}"
    )


class Agent(ABC):
    """Chooses a legal action from an observation dict."""

    name: str = "agent"
    sees: frozenset[str] = frozenset()
    """what the play loop shows the agent before each `act` (`show`), beyond its observation: "record"
    and/or "state" (see the module doc)"""

    def __init__(self, game: Game, seed: int | None = None) -> None:
        self.game = as_game(game)
        self.rng = np.random.default_rng(seed)

    def show(self, seen: Mapping[str, Any]) -> None:  # noqa: B027 - a hook: most agents see nothing more
        """Called by the play loop before each `act` with what `sees` names: {"record": the public
        record, "state": a deep copy of the true state}; agents that see nothing more ignore it."""

    @abstractmethod
    def act(self, observation: dict[str, np.ndarray]) -> int:
        """A legal action id for the seat whose observation this is."""

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """(B,) int64: `act` for each row of (B, obs_size) observations and (B, num_actions) masks.

        Why a batch: a search agent (`cardlab.agents.search`) plays many
        rollouts at once, and a bot does all their moves in one forward pass
        (it overrides this); other agents act row by row.
        """
        masks = np.asarray(masks).astype(np.int8)
        return np.array([self.act({"observation": obs, "action_mask": mask})
                         for obs, mask in zip(observations, masks, strict=True)], dtype=np.int64)

    def action_probabilities(self, observation: dict[str, np.ndarray]) -> np.ndarray:
        """Probabilities over all action ids of what this agent plays here (0 off the legal ones).

        The default is the agent's own choice with probability 1; agents that
        play from a distribution override it.
        """
        probs = np.zeros(len(observation["action_mask"]), dtype=np.float64)
        probs[self.act(observation)] = 1.0
        return probs

    def reset(self) -> None:  # noqa: B027 - a hook: stateless agents have nothing to reset
        """Called at the start of every hand; stateless agents ignore it."""

    def seed(self, seed: int | None) -> None:
        self.rng = np.random.default_rng(seed)

    def compiled(self) -> CompiledPolicy | None:
        """This agent as its game's compiled fast paths may play it (`cardlab.envs.fast`: the kernel its
        `act_batch` calls, its rules and parameters), or None (the default): then every path plays it move
        by move through `act_batch`. A class says it of itself only: a subclass may play otherwise."""
        return None


SEES = ("record", "state")
"""what an agent's `sees` may name"""


def check_unshown(key: str, spec: str, agent: Agent, where: str, instead: str = "") -> None:
    """Refuse, as config key `key`, an agent that must be shown more than its observation (`sees`) where it
    would play in batched play (`where` says which), which shows it nothing else; `instead` adds another
    accepted choice."""
    if agent.sees:
        raise ValueError(refusal(key, spec, "an agent that must be shown the hand's record or true state",
                                 f"an agent that plays from its observation ({where} shows nothing else)"
                                 f"{', or ' + instead if instead else ''}"))


def show_table(agent: Agent, env: Any, name: str) -> None:
    """Before `agent` acts as `name` in `env` (an AEC env), `show` it what its `sees` names.

    "record": the hand's public record as that seat saw it
    (`CardGameEnv.public_record`: seats numbered from its own, no hidden
    card); "state": a deep copy of the true game state. The one place every
    play loop does it; an agent that sees nothing more costs nothing.
    """
    sees = agent.sees
    if not sees:
        return
    unknown = sorted(set(sees) - set(SEES))
    if unknown:
        raise ValueError(f"agent {agent.name} sees {', '.join(map(repr, unknown))}: an agent may see "
                         f"{' and '.join(map(repr, SEES))} beyond its observation")
    raw = getattr(env, "unwrapped", env)
    seen: dict[str, Any] = {}
    if "record" in sees:
        seen["record"] = raw.public_record(name)
    if "state" in sees:
        seen["state"] = copy.deepcopy(raw.game_state)
    agent.show(seen)


def checked_batch(game: Game, observations: Any, masks: Any) -> tuple[np.ndarray, np.ndarray]:
    """A compiled `act_batch`'s input: (B, obs_size) float32 observations, (B, num_actions) masks, C order.

    Masks become bool (`masks != 0`, the legal ids `np.flatnonzero` reads):
    one dtype, the engines' own, so that each kernel compiles once. Refused
    with a `ValueError` before any row is played (so the generator is
    untouched): other shapes, or a row with no legal action.
    """
    obs = np.ascontiguousarray(observations, dtype=np.float32)
    legal = np.asarray(masks)
    rows = obs.shape[0] if obs.ndim == 2 else -1
    expected = (rows, game.layout.size), (rows, game.num_actions)
    if obs.ndim != 2 or (obs.shape, legal.shape) != expected:
        raise ValueError(f"act_batch takes observations (B, {game.layout.size}) and masks (B, "
                         f"{game.num_actions}) of {game.id}, got {obs.shape} and {legal.shape}")
    legal = np.ascontiguousarray(legal if legal.dtype == np.bool_ else legal != 0)
    from cardlab.envs.policy_kernels import first_empty_row

    empty = first_empty_row(legal) if rows else -1
    if empty >= 0:
        raise ValueError(f"row {empty} of the action masks has no legal action: is that seat to move?")
    return obs, legal


class RandomAgent(Agent):
    """Uniform over the legal actions."""

    name = "random"

    def act(self, observation: dict[str, np.ndarray]) -> int:
        legal = np.flatnonzero(observation["action_mask"])
        if legal.size == 0:
            raise ValueError("the observation's action_mask has no legal action")
        return int(legal[self.rng.integers(legal.size)])

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """`act` row by row in one compiled call (`policy_kernels.uniform_legal`), drawing from `self.rng`."""
        from cardlab.envs.policy_kernels import uniform_legal

        _obs, legal = checked_batch(self.game, observations, masks)
        return uniform_legal(legal, self.rng)

    def compiled(self) -> CompiledPolicy | None:
        """The compiled random player (`policy_kernels.uniform_legal`, every game's)."""
        return CompiledPolicy(RANDOM, self.game.rules, self) if type(self) is RandomAgent else None

    def action_probabilities(self, observation: dict[str, np.ndarray]) -> np.ndarray:
        mask = np.asarray(observation["action_mask"], dtype=np.float64)
        if not mask.any():
            raise ValueError("the observation's action_mask has no legal action")
        return mask / mask.sum()


class Advice(NamedTuple):
    """One advised move: its id, its text and the advisor's probability of playing it."""

    action: int
    text: str
    probability: float


def advise(agent: Agent, observation: dict[str, np.ndarray], top: int = 3) -> list[Advice]:
    """The `top` likeliest legal moves of `agent` here, likeliest first (ties by action id)."""
    if top < 1:
        raise ValueError(f"top must be at least 1, got {top}")
    probs = agent.action_probabilities(observation)
    legal = np.flatnonzero(observation["action_mask"])
    ranked = sorted((int(a) for a in legal if probs[a] > 0), key=lambda a: (-probs[a], a))[:top]
    return [Advice(a, agent.game.action_to_str(a), float(probs[a])) for a in ranked]


def register(name: str, factory: AgentFactory) -> None:
    """Add an agent spec for every game (a game's own heuristics are in its `GameSpec`)."""
    if not isinstance(name, str) or not name or name.startswith("bot:") or ":" in name:
        raise ValueError(f"agent spec names are plain words (no ':'), got {excerpt(name)}")
    _REGISTRY[name] = factory


def registered_names() -> list[str]:
    """The names `register` added, in the order they were added."""
    return list(_REGISTRY)


def named_agent(name: str, game: Game, seed: int | None = None) -> Agent | None:
    """The agent a plain name gives at `game`: one of the game's heuristics, else a registered agent; or
    None for a name that is neither (the spec language, `cardlab.agents.agent_spec`, reads the rest)."""
    if name in game.spec.heuristics:
        return game.spec.heuristic(name)(game, seed)
    factory = _REGISTRY.get(name)
    return None if factory is None else factory(game, seed)


register("random", RandomAgent)


def __getattr__(name: str) -> object:
    """The names that moved to `cardlab.agents.agent_spec` and `bot_catalogue`, with a warning."""
    return moved.moved_name(__name__, name)
