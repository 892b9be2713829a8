"""The one agent interface, and agent spec strings.

An agent is made for one `Game` (a game with its rule options, from
`cardlab.envs.make_game`), never from a live env: it decodes observations
through `game.layout` and names actions through `game.action_to_str`, and each
turn it gets only the observation dict of its seat (with the `action_mask`).
So it can see what a player sees and nothing more, unless it asks for more
in `sees` (the play loop then `show`s it before each `act`: "record", the
hand's public record as its seat saw it; "state", a deep copy of the true
game state, which only a cheat for measured upper bounds asks for). It owns a seeded
`np.random.Generator` and never touches the global RNG. Every play loop that
asks an agent for a move in an env shows it what it sees through one helper,
`show_table`; the web app refuses an agent that sees the state.

Spec strings name agents everywhere (configs, CLI): ``random``, the game's
heuristics (``greedy``, ``expert``: `GameSpec.heuristics`), ``bot:NAME`` (a
bot shipped with cardlab, in ``agents/bots/``: ``bot:huit-2p``,
``bot:switch-4p``, one per table size), ``bot:GAME`` (``bot:huit``,
``bot:switch``: the shipped bot of the table's size, `fitting_bot`),
``bot:PATH`` (a trained bot file), ``search:BASE`` (decision-time search
over any of those, with options: `cardlab.agents.search`) and
``MODULE:FACTORY`` (a user's own agent, imported: `cardlab.agents.factory`).
`make_agent(spec, game, seed)` builds one; `resolve_spec` turns an alias into
the bot it stands for at a table.

Advice: `action_probabilities(observation)` is what an agent would play, as
probabilities over the legal actions (a bot: its masked softmax; random:
uniform; a heuristic: its choice with probability 1), and `advise` lists the
likeliest moves. The web app's hints and `cardlab advise` use it.
"""

from __future__ import annotations

import copy
import difflib
import pathlib
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

import numpy as np

from cardlab.envs.checked_json import excerpt, read_json_file
from cardlab.envs.fast import RANDOM, CompiledPolicy
from cardlab.envs.spec import Game, games, make_game

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


register("random", RandomAgent)

SHIPPED_BOTS = pathlib.Path(__file__).resolve().parent / "bots"
"""The bots that come with cardlab: ``bot:NAME`` loads ``SHIPPED_BOTS/NAME.json`` (see the README)."""


def shipped_bots(game: Game | None = None) -> dict[str, pathlib.Path]:
    """Spec -> metadata file of each shipped bot (only those made for `game`'s id and players, if given)."""
    found = {}
    for path in sorted(SHIPPED_BOTS.glob("*.json"), key=lambda found: found.stem):
        if game is not None:
            meta = read_json_file(path)
            if meta.get("game") != game.id or meta.get("num_players") != game.num_players:
                continue
        found[f"bot:{path.stem}"] = path
    return found


def bot_tables(game_id: str) -> dict[int, list[str]]:
    """Table size -> the shipped bots of `game_id` made for it (smallest table first)."""
    sizes: dict[int, list[str]] = {}
    for spec, path in shipped_bots().items():
        meta = read_json_file(path)
        if meta.get("game") == game_id and isinstance(meta.get("num_players"), int):
            sizes.setdefault(meta["num_players"], []).append(spec)
    return dict(sorted(sizes.items()))


def table_aliases() -> list[str]:
    """``bot:GAME`` for each game with a shipped bot: the spec of the shipped bot of the table's size."""
    return [f"bot:{game_id}" for game_id in games() if bot_tables(game_id)]


def fitting_bot(game: Game) -> str:
    """The spec of the shipped bot made for `game`'s table: ``bot:GAME-Np`` if there is one, else the first.

    Why: ``bot:huit`` (and the default opponents of `cardlab play`, `cardlab eval`
    and the web app) should mean the trained bot at whatever table is played.
    A ValueError names the table sizes that have a bot.
    """
    fits = list(shipped_bots(game))
    if fits:
        return _preferred(game.id, game.num_players, fits)
    tables = bot_tables(game.id)
    if not tables:
        raise ValueError(f"no {game.id} bot is shipped (the shipped bots: {', '.join(shipped_bots())})")
    sizes = list(tables)
    listed = ", ".join(spec for specs in tables.values() for spec in specs)
    raise ValueError(f"no shipped bot fits a {game.num_players}-player {game.id} table: the shipped "
                     f"{game.id} bots are for {_and(sizes)} players ({listed})")


def _preferred(game_id: str, num_players: int, specs: list[str]) -> str:
    """Among the shipped bots of one table size, ``bot:GAME-Np`` if it is one of them, else the first."""
    plain = f"bot:{game_id}-{num_players}p"
    return plain if plain in specs else specs[0]


def table_bots() -> dict[str, dict[int, str]]:
    """Game -> table size -> its shipped bot (`fitting_bot`), for every table that has one."""
    return {game_id: {n: _preferred(game_id, n, specs) for n, specs in tables.items()}
            for game_id in games() if (tables := bot_tables(game_id))}


def _and(numbers: list[int]) -> str:
    words = [str(n) for n in numbers]
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"


def resolve_spec(spec: str, game: Any) -> str:
    """`spec`, with a table alias (``bot:huit``) replaced by the shipped bot fitting `game`'s table.

    Shipped names come first, then the aliases, then paths: a bot file named
    like a game is ``bot:./huit``. An alias of another game is refused.
    """
    text = spec.strip() if isinstance(spec, str) else spec
    if not isinstance(text, str) or not text.startswith("bot:"):
        return text
    name = text[4:].strip()
    if f"bot:{name}" in shipped_bots() or name not in games():
        return text
    game = as_game(game)
    if name != game.id:
        raise ValueError(f"bot:{name} is the shipped {name} bot of the table's size, but this table plays "
                         f"{game.id}: use bot:{game.id}")
    return fitting_bot(game)


def default_bot(game_id: str, rules: dict[str, Any]) -> tuple[str, int]:
    """(spec, players) of the shipped bot that fits a table of `game_id` with these rule options.

    Why: a newcomer's first ``cardlab play huit`` should meet the trained bot, at
    the table size it was trained for (``num_players`` in `rules` picks one size;
    without it the smallest table with a bot). `fitting_bot` picks among the bots of that size.
    """
    smallest = next(iter(bot_tables(game_id)), None)
    size = {} if "num_players" in rules or smallest is None else {"num_players": smallest}
    game = make_game(game_id, {**rules, **size})
    return fitting_bot(game), game.num_players  # no bot at all: fitting_bot says so


def check_bot_name(path: str) -> None:
    """Refuse a plain name (no folder, no suffix) that is neither a shipped bot nor a file: a typo's hint.

    Why: ``bot:huit-2`` would otherwise be read as the file ``huit-2.json`` and
    fail with "file not found", saying nothing of the shipped bots.
    """
    from cardlab.agents.bot.format import bot_paths

    plain = pathlib.Path(path)
    if len(plain.parts) != 1 or plain.suffix or plain.exists() or bot_paths(path)[0].exists():
        return
    names = [spec[4:] for spec in shipped_bots()]
    aliases = [spec[4:] for spec in table_aliases()]
    table = re.fullmatch(r"(\w+)-(\d+)p", path)
    sizes = list(bot_tables(table[1])) if table and table[1] in games() else []
    if table and sizes:
        hint = (f"there is no {table[2]}-player {table[1]} bot (the {table[1]} bots are for {_and(sizes)} "
                "players); ")
    else:
        close = difflib.get_close_matches(path, names + aliases, n=1, cutoff=0.6)
        hint = f"did you mean bot:{close[0]}? " if close else ""
    tables = f"; {', '.join('bot:' + a for a in aliases)} name the one of the table's size" if aliases else ""
    raise ValueError(f"no shipped bot named {path[:60]!r}: {hint}the shipped bots are "
                     f"{', '.join('bot:' + n for n in names)}{tables}; or give bot:PATH (a bot file or a run "
                     "folder)")


def bot_source(spec: str, game: Any = None) -> str | pathlib.Path:
    """What a ``bot:`` spec loads: a shipped bot's metadata file (an alias: the one fitting `game`), a path.

    A plain name that is neither shipped nor a file is refused with a hint (`check_bot_name`).
    """
    path = spec.strip()[4:].strip()
    if not path:
        raise ValueError(
            "agent spec 'bot:' is missing the bot: give a shipped bot's name, a bot file or a run "
            "folder, e.g. bot:huit-2p, bot:huit (the shipped bot of the table's size), bot:runs/RUN/bot.json "
            "or bot:runs/RUN"
        )
    if game is not None:
        path = resolve_spec(f"bot:{path}", game)[4:]
    elif path in games() and f"bot:{path}" not in shipped_bots():
        raise ValueError(f"bot:{path} stands for the shipped {path} bot of a table's size: give the table "
                         f"(the game with its num_players), or name the bot, e.g. bot:{path}-2p")
    shipped = shipped_bots().get(f"bot:{path}")
    if shipped is not None:
        return shipped
    check_bot_name(path)
    return path


def is_shipped_name(spec: str) -> bool:
    """Whether a ``bot:`` spec names a shipped bot or a table alias (not a path to make absolute)."""
    name = spec.strip()[4:].strip() if spec.strip().startswith("bot:") else None
    return name is not None and (f"bot:{name}" in shipped_bots() or name in games())


def spec_names(game: Game) -> list[str]:
    """The agent specs accepted for `game`, as help text lists them."""
    bots = list(shipped_bots(game))
    alias = [f"bot:{game.id}"] if bots else []
    return [*_REGISTRY, *game.spec.heuristics, *alias, *bots, "bot:PATH", "search:BASE", "MODULE:FACTORY"]


def make_agent(spec: str, game: Any, seed: int | None = None) -> Agent:
    """Build the agent a spec string names, for `game` (a `Game`; an env gives its `Game`)."""
    game = as_game(game)
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"agent spec must be a non-empty string: use {', '.join(spec_names(game))}")
    spec = spec.strip()
    if spec.startswith("bot:"):
        from cardlab.agents.bot import load_bot  # torch only when a bot is asked for

        return load_bot(bot_source(spec, game), game, seed=seed)
    if spec.startswith("search:") or spec == "search":
        from cardlab.agents.search import make_search_agent

        return make_search_agent(spec, game, seed)
    if spec in game.spec.heuristics:
        return game.spec.heuristic(spec)(game, seed)
    if spec in _REGISTRY:
        return _REGISTRY[spec](game, seed)
    from cardlab.agents.factory import factory_agent, is_factory_spec

    if is_factory_spec(spec):
        return factory_agent(spec, game, seed)
    raise ValueError(f"unknown agent spec {excerpt(spec)} for {game.id}: use {', '.join(spec_names(game))}")
