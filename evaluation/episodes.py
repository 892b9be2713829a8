"""Episodes of a seated table: who plays which seat, seeds, and one episode played out.

Shared by `evaluate`, tournaments, terminal play, the web app and Ray workers,
so that every one of them seats, seeds and plays a table the same way; and
seat 0's choices in a played hand, where the belief's probes and tests
measure it (`seat_zero_choices`).
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from cardlab.agents.agent_spec import resolve_spec
from cardlab.agents.base import Agent, show_table
from cardlab.agents.failure import checked_action
from cardlab.envs import get_spec, make_game
from cardlab.envs.aec import CardGameEnv, live_turns
from cardlab.envs.game_spec import Game
from cardlab.envs.record import Record
from cardlab.envs.world_replay import unreplayable
from cardlab.envs.world_sampling import Determinization

HAND, MATCH, AGENT = 0, 1, 2  # first key of derived seeds, so the streams never overlap
ENV_OPTIONS = tuple(name for name in inspect.signature(CardGameEnv.__init__).parameters
                    if name not in ("self", "rule_options"))
"""The env's own options (episode, ...), read from its constructor so the list is never copied."""


def table_rules(game: str, rule_options: dict[str, Any] | None) -> dict[str, Any]:
    """Every rule of the table (defaults filled in); env options given as rule options are refused.

    Evaluation chooses the episode kind itself, so an ``episode`` slipped in
    among the rules would silently change what is measured.
    """
    rules = dict(rule_options or {})
    clash = sorted(set(rules) & set(ENV_OPTIONS))
    if clash:
        raise ValueError(f"{', '.join(clash)}: env option(s), not rule options; rule options are the game's "
                         f"{', '.join(get_spec(game).rules.names())}")
    return make_game(game, rules).rules.to_dict()  # refuses bad rule options with the game's own message


def plural(count: int, noun: str) -> str:
    """`count noun(s)`, for messages and table headers."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}{'es' if noun.endswith('ch') else 's'}"


def players_for(game: str, rule_options: dict[str, Any] | None, specs: Sequence[str], *,
                noun: str = "agent", other_seats: int = 0) -> int:
    """The number of players of a table for these agent specs; a ValueError says what fits.

    With ``num_players`` among the rule options, the specs repeat in order to
    fill its seats (less `other_seats`, taken by someone else: the person in
    `play`), so there may be fewer but not more. Without it every spec gets a
    seat, and their count (plus `other_seats`) must be one the game seats.
    """
    given = f"{plural(len(specs), noun)} given ({', '.join(specs)})" if specs else f"no {noun}s given"
    options = dict(rule_options or {})
    if "num_players" in options:
        n = make_game(game, options).num_players
        seats = n - other_seats
        if not 1 <= len(specs) <= seats:
            yours = ", one of them yours" if other_seats else ""
            raise ValueError(f"{given} for {plural(seats, 'seat')} (num_players={n}{yours}): give 1 to "
                             f"{seats} (they repeat in order to fill the seats)")
        return n
    spec = get_spec(game)
    low, high = spec.rules.limits("num_players")
    n = len(specs) + other_seats
    if (low is not None and n < low) or (high is not None and n > high):
        low_count = max(1, (low or 1) - other_seats)
        fits = f"{low_count} to {high - other_seats}" if high is not None else f"at least {low_count}"
        seated = f"{low} to {high}" if high is not None else f"at least {low}"
        raise ValueError(f"{given}, but {spec.title} seats {seated} players"
                         f"{', you included' if other_seats else ''}: give {fits} {noun}s, or set the rule "
                         f"option num_players=N and they repeat in order to fill the seats")
    return n


def rotated_deals(episodes: int, num_players: int) -> int:
    """The deals a run of `episodes` hands (or matches) plays at a `num_players` table: every deal is played
    once per seat rotation, so `episodes` rounded up to whole rotations (5 hands at 2 seats: 3 deals)."""
    return -(-episodes // num_players)


def derive_seed(*keys: int) -> int:
    """An independent 63-bit seed for a tuple of non-negative keys."""
    return int(np.random.SeedSequence(list(keys)).generate_state(1, np.uint64)[0] >> 1)


def run_episode(
    env: Any,
    seat_agents: Sequence[Agent],
    seed: int | None,
    on_step: Callable[[int, int], bool | None] | None = None,
    before_step: Callable[[int, int], None] | None = None,
    names: Sequence[str] | None = None,
) -> dict[str, Any]:
    """Play one episode of `env` (seat s played by ``seat_agents[s]``); returns the final info.

    `before_step(seat, action)` runs once a move is chosen, before the env
    applies it; `on_step(seat, action)` runs after every move, and returning
    True stops the episode there (the returned info is then the last one seen).
    An agent that `sees` more than its observation is shown it first
    (`show_table`, `Agent.show`). An agent that fails (`checked_action`) stops the episode with an
    `AgentFailure` naming it as ``names[seat]`` (default: its class's name),
    before the env is touched, so the env stays as it was at that turn.
    """
    env.reset(seed=seed)
    for agent in seat_agents:
        agent.reset()
    final: dict[str, Any] = {}
    for name, seat, obs in live_turns(env):
        who = names[seat] if names is not None else seat_agents[seat].name
        show_table(seat_agents[seat], env, name)
        action = checked_action(seat_agents[seat], obs, who)
        if before_step is not None:
            before_step(seat, action)
        env.step(action)
        final = env.infos[name]  # at the end every seat's info holds the result, the mover's too
        if on_step is not None and on_step(seat, action):
            return dict(final)
    return dict(final)


@dataclasses.dataclass(frozen=True)
class Choice:
    """A decision of seat 0 with more than one legal move, met before its move (`seat_zero_choices`)."""

    raw: CardGameEnv
    """the unwrapped env as it stands at the decision (its `game_state` holds the true hands)"""
    name: str
    """the agent name of seat 0"""
    obs: dict[str, np.ndarray]
    record: Record
    """the hand's public record as seat 0 sees it"""
    unreplayable: str | None
    """why the record cannot be played back from the deal (`cardlab.envs.world_replay.unreplayable`), or
    None"""

    def determinization(self) -> Determinization:
        """What seat 0's observation and record fix of the state (`Game.determinization`)."""
        return self.raw.game.determinization(self.obs, 0, self.record)


def seat_zero_choices(env: Any, agents: Sequence[Agent], seed: int) -> Iterator[Choice]:
    """Play one hand of `env` from `seed` (seat s by ``agents[s]``) and yield seat 0's choices as met.

    Why: a belief (`cardlab.agents.hand_reading.belief`) is measured where a search uses
    it, at its seat's real choices with the record seen there. Each is yielded
    before its move, which ``agents[0]`` then makes as at every other
    decision; unreplayable records are yielded too, with the reason, so a
    caller can count what it skips. Agents are shown the table (`show_table`),
    not reset (their generators run on across hands).
    """
    raw = env.unwrapped
    env.reset(seed=seed)
    for name, seat, obs in live_turns(env):
        if seat == 0 and np.count_nonzero(obs["action_mask"]) > 1:
            record = raw.public_record(name)
            yield Choice(raw, name, obs, record, unreplayable(record))
        show_table(agents[seat], env, name)
        env.step(agents[seat].act(obs))


def seat_slots(specs: Sequence[str], num_players: int, game: Game | None = None) -> list[str]:
    """The spec of each of the n slots: `specs` repeated in order.

    With `game` (the table), an alias ``bot:GAME`` becomes the shipped bot it stands
    for there (`resolve_spec`), so results name the bot that played.
    """
    if not specs:
        raise ValueError("give at least one agent spec")
    if len(specs) > num_players:
        raise ValueError(f"{plural(len(specs), 'agent')} given for {plural(num_players, 'seat')}: "
                         f"give at most {num_players}")
    slots = [specs[i % len(specs)] for i in range(num_players)]
    return slots if game is None else [resolve_spec(spec, game) for spec in slots]
