"""The PettingZoo AEC machinery every game shares.

An env class is `CardGameEnv` with a `GameSpec` (`SPEC`): `env_class(game)`
makes one for any registered game, and the doc-page modules `switch_v1` and
`huit_v1` name theirs `raw_env`. Everything else lives here once: agent
order, rewards, infos, rendering, stacked deals and saved states, PettingZoo's
`state()`, and the policy for illegal actions.
"""

from __future__ import annotations

import copy
import functools
import importlib
import importlib.util
from collections.abc import Callable, Iterator
from typing import Any, ClassVar

import gymnasium
import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from cardlab.envs import cards as C
from cardlab.envs.checked_json import excerpt
from cardlab.envs.declared import check_choice
from cardlab.envs.game_spec import Game, GameSpec, action_id, get_spec
from cardlab.envs.layout import Layout
from cardlab.envs.match import EPISODES, points_reward, win_rewards
from cardlab.envs.record import Record

REWARDS = ("win", "points")
ILLEGAL = ("raise", "penalize")
RENDER_MODES = (None, "ansi", "human")
ENV_OPTION = "env option"
"""the kind a refused env option is named by (`refusal`): ``env option reward='x' is ...``"""


class CardGameEnv(AECEnv):
    """A shedding card game as a PettingZoo AEC environment (see the game module's doc).

    `game_state` is the engine state of the hand being played (the attribute
    is not called `state`: that name is PettingZoo's `state()` method).
    """

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["ansi", "human"], "name": "card_game",
                                          "is_parallelizable": False}
    SPEC: ClassVar[GameSpec]
    GAME: ClassVar[str]
    NUM_ACTIONS: ClassVar[int]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        spec = cls.__dict__.get("SPEC")
        if spec is not None:
            cls.GAME, cls.NUM_ACTIONS = spec.id, spec.num_actions
            cls.metadata = {**CardGameEnv.metadata, "name": spec.env_name}

    def __init__(
        self,
        render_mode: str | None = None,
        episode: str = "hand",
        reward: str = "win",
        illegal_action: str = "raise",
        **rule_options: Any,
    ) -> None:
        super().__init__()
        self.render_mode = check_choice("render_mode", render_mode, RENDER_MODES, ENV_OPTION)
        self.episode = check_choice("episode", episode, EPISODES, ENV_OPTION)
        self.reward_mode = check_choice("reward", reward, REWARDS, ENV_OPTION)
        self.illegal_action = check_choice("illegal_action", illegal_action, ILLEGAL, ENV_OPTION)
        try:
            self.game: Game = self.SPEC.make(rule_options)
        except (TypeError, ValueError) as err:
            if set(rule_options) <= set(self.SPEC.rules.names()):
                raise  # a bad value of a known rule option: its message says what is accepted
            env_opts = "render_mode, episode, reward, illegal_action"  # an unknown name: maybe one of these
            raise ValueError(f"{err} (env options: {env_opts})") from None
        self.rules = self.game.rules
        self.observer = self.game.observer
        self.layout: Layout = self.game.layout
        n = self.game.num_players
        self.possible_agents = [f"player_{i}" for i in range(n)]
        self.agent_seat = {a: i for i, a in enumerate(self.possible_agents)}
        obs_space = spaces.Dict({
            "observation": spaces.Box(self.layout.low, self.layout.high, dtype=np.float32),
            "action_mask": spaces.Box(0, 1, shape=(self.NUM_ACTIONS,), dtype=np.int8),
        })
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        # Annotated: gymnasium's own hints differ across versions (1.2 and 1.4 infer different types).
        self.action_spaces: dict[str, spaces.Space] = {a: spaces.Discrete(self.NUM_ACTIONS)
                                                       for a in self.possible_agents}
        state_layout = self.game.state_layout
        self.state_space = spaces.Box(state_layout.low, state_layout.high, dtype=np.float32)
        self._rng: np.random.Generator | None = None
        self.game_state: Any = None
        self._last_hand: dict[str, Any] | None = None
        self._legal: list[int] = []
        self._legal_set: frozenset[int] = frozenset()

    # ------------------------------------------------------------ spaces
    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    # ------------------------------------------------------------ actions as text
    def action_to_str(self, action: int) -> str:
        """``play 9S``, ``draw``, ... (see the module doc for the grammar); ids follow `spec.action_id`."""
        return self.game.action_to_str(action)

    def str_to_action(self, text: str) -> int:
        return self.game.str_to_action(text)

    def legal_actions(self) -> list[int]:
        """Legal action ids of the player to move."""
        return list(self._legal)

    # ------------------------------------------------------------ reset
    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Deal a new hand (or match). `options`: {"deal": {...}} or {"state": {...}}."""
        options = dict(options or {})
        unknown = sorted(set(options) - {"deal", "state"})
        if unknown:
            # Not an error: PettingZoo's api_test resets with options it made up.
            gymnasium.logger.warn(
                f"reset ignores the unknown option(s) {unknown}; it reads 'deal' and 'state'"
            )
        if "deal" in options and "state" in options:
            raise ValueError("reset takes either options['deal'] (a stacked deal) or options['state'] "
                             "(a dict from state_dict()), not both")
        # Build the new state aside: a refused deal or saved state leaves the env as it was.
        if "state" in options:
            state = self.game.restore(options["state"])
            rng = state.rng
        else:
            # A copy of the running generator: a refused deal must not advance the env's own.
            if seed is not None or self._rng is None:
                rng = np.random.default_rng(seed)
            else:
                rng = copy.deepcopy(self._rng)
            state = self.game.new_state(rng)
            if "deal" in options:
                state.deal_stacked(options["deal"])
        self._rng, self.game_state = rng, state
        self._last_hand = None
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: self._hand_info() for a in self.agents}
        if state.hand_over:
            # A saved state of a finished hand (or match) restores finished: nobody can move.
            done = self.truncations if state.truncated else self.terminations
            for a in self.agents:
                done[a] = True
        self._after_change()

    # ------------------------------------------------------------ step
    def step(self, action: int | None) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        seat = self.agent_seat[agent]
        number = self._legal_id(action)
        if number is None:
            self._illegal(agent, seat, action)
            return
        self._cumulative_rewards[agent] = 0.0
        self._clear_rewards()
        state = self.game_state
        state.apply(number)
        if state.hand_over:
            self._end_of_hand(seat)
        self._after_change()
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def _legal_id(self, action: Any) -> int | None:
        """The action id of `action` when it is legal now, else None (read once per step: a hot path)."""
        try:
            number = action_id(action, self.NUM_ACTIONS)
        except ValueError:
            return None
        return number if number in self._legal_set else None

    def _illegal(self, agent: str, seat: int, action: Any) -> None:
        legal = ", ".join(f"{a} ({self.action_to_str(a)})" for a in self._legal)
        try:
            number = action_id(action, self.NUM_ACTIONS)
            what = f"{number} ({self.action_to_str(number)})"
        except ValueError:
            what = f"{excerpt(action)} (not an action id 0..{self.NUM_ACTIONS - 1})"
        message = f"illegal action {what} for {agent}; legal actions: {legal}"
        if self.illegal_action == "raise":
            raise ValueError(message)
        # PettingZoo's TerminateIllegalWrapper convention: the offender loses, the game ends.
        self._cumulative_rewards[agent] = 0.0
        self._clear_rewards()
        self.rewards[agent] = -1.0
        self.terminations = {a: True for a in self.agents}
        for a in self.agents:
            self.infos[a] = {**self.infos[a], "illegal_action": message}
        self._legal, self._legal_set = [], frozenset()
        self._accumulate_rewards()

    def _end_of_hand(self, seat: int) -> None:
        state = self.game_state
        info = self._hand_info()
        for a in self.agents:
            self.infos[a] = dict(info)
        if state.truncated:
            for a in self.agents:
                self.truncations[a] = True
            return
        if self.reward_mode == "points":
            for a, delta in zip(self.agents, state.score_changes, strict=True):
                self.rewards[a] = points_reward(delta)
        if self.episode == "hand" or state.match_over:
            if self.reward_mode == "win":
                winners = [state.winner] if self.episode == "hand" else state.match.winners()
                for a, r in zip(self.agents, win_rewards(state.n, winners), strict=True):
                    self.rewards[a] = r
            for a in self.agents:
                self.terminations[a] = True
            return
        self._last_hand = {"hand_number": info["hand_number"], **self._hand_result()}
        state.next_hand()
        info = self._hand_info()
        for a in self.agents:
            self.infos[a] = dict(info)

    def _hand_info(self) -> dict[str, Any]:
        """Infos: the hand number and totals; at the end of a hand its result.

        During a hand of a match, the result of the hand before is kept under
        ``last_hand`` (never as this hand's ``winner``).
        """
        state = self.game_state
        info: dict[str, Any] = {
            "hand_number": state.match.hands_played + (0 if state.hand_over else 1),
            "scores": list(state.match.scores),
        }
        if state.hand_over:
            info.update(self._hand_result())
            if state.match_over:
                info["match_winners"] = state.match.winners()
        elif self._last_hand is not None:
            info["last_hand"] = self._last_hand
        return info

    def _hand_result(self) -> dict[str, Any]:
        state = self.game_state
        return {
            "winner": state.winner,
            "truncated": state.truncated,
            "hand_points": list(state.hand_points),
            "score_changes": list(state.score_changes),
            "match_over": state.match_over,
        }

    def _after_change(self) -> None:
        """Refresh the legal set and the agent to move."""
        state = self.game_state
        self._legal = state.legal_actions()
        self._legal_set = frozenset(self._legal)
        if state.hand_over:
            self._legal, self._legal_set = [], frozenset()
        self.agent_selection = self.possible_agents[state.current]

    # ------------------------------------------------------------ observe
    def observe(self, agent: str) -> dict[str, np.ndarray]:
        seat = self.agent_seat[agent]
        mask = np.zeros(self.NUM_ACTIONS, dtype=np.int8)
        if agent == self.agent_selection and self._legal:
            mask[self._legal] = 1
        return {"observation": self.observer.observe(self.game_state, seat), "action_mask": mask}

    def public_record(self, agent: str) -> Record:
        """The hand's public record (`cardlab.envs.record`) as `agent` saw it: seats numbered from its own.

        Only what every seat saw: laid cards, draw counts, passes, suit calls,
        never a drawn card. The observation and the action mask stay as they are.
        """
        if self.game_state is None:
            raise RuntimeError("public_record() before reset(): call reset() first")
        if agent not in self.agent_seat:
            raise ValueError(f"unknown agent {excerpt(agent)}: agents are {', '.join(self.possible_agents)}")
        return self.game_state.public_record(self.agent_seat[agent])

    def state(self) -> np.ndarray:
        """PettingZoo's global state: the whole table from seat 0, every hand and the pile (`state_space`).

        For centralised critics and analysis; an agent's policy must not read it.
        """
        if self.game_state is None:
            raise RuntimeError("state() before reset(): call reset() first")
        return self.observer.observe_state(self.game_state)

    # ------------------------------------------------------------ saved states
    def state_dict(self) -> dict[str, Any]:
        """The full engine state as JSON-serialisable data; `reset(options={"state": d})` restores it."""
        return self.game_state.state_dict()

    # ------------------------------------------------------------ render
    def render(self) -> str | None:
        if self.render_mode is None:
            gymnasium.logger.warn(
                "render() was called without a render_mode: create the env with render_mode='ansi' or 'human'"
            )
            return None
        text = self.table_text()
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def table_text(self, seat: int | None = None) -> str:
        """The table as text; shows the hand of `seat` (default: the player to move)."""
        state = self.game_state
        seat = state.current if seat is None else seat
        lines = [f"{self.metadata['name']}  hand {self._hand_info()['hand_number']}  turn {state.turn}"]
        lines += [f"  {k:<13}{v}" for k, v in self.SPEC.status(state).items()]
        lines.append("  seat       cards  score")
        for s in range(state.n):
            marks = " <- to move" if s == state.current and not state.hand_over else ""
            if s == state.match.dealer:
                marks += " (dealer)"
            lines.append(f"  player_{s:<4}{state.sizes[s]:>5}  {state.match.scores[s]:>5}{marks}")
        if state.hand_over:
            end = "truncated (C1)" if state.truncated else f"player_{state.winner} wins the hand"
            lines.append(f"  hand over: {end}; points {state.hand_points}")
        else:
            hand = C.counts_to_cards(state.hands[seat].tolist())
            lines.append(f"  player_{seat} holds: {C.format_cards(hand)}")
        return "\n".join(lines)

    def close(self) -> None:
        pass


ENV_DOC = """
## Actions and observations

Actions, observation layout and rule options: the generated tables at the
end of this page (`cardlab rules GAME --markdown` prints the same).
`env.unwrapped.action_to_str(a)` and `env.unwrapped.str_to_action(s)` convert
between ids and text; bad text raises a `ValueError` that says why. Action ids
are ints, numpy integers or 0-d integer arrays; anything else is refused.

`observation` is a float32 vector from the point of view of the observing
agent; `action_mask` is int8, 1 exactly for the legal actions of the agent to
move (all zero for the others); `env.unwrapped.layout.split(obs)` names the
parts. `env.state()` is PettingZoo's global state (`env.state_space`): the
whole table from seat 0, every hand and the pile, for centralised critics and
analysis only.

## Options

Rule options: see the generated table below. Env options: `render_mode` (None, "ansi",
"human"), `episode` ("hand" or "match"), `reward` ("win" or "points"),
`illegal_action` ("raise": a `ValueError` naming the action and the legal
ones; "penalize": the offender gets -1 and the episode ends, PettingZoo's
TerminateIllegalWrapper convention).

## Infos

At the end of a hand every agent's info holds `winner` (seat, or None when
truncated), `truncated`, `hand_points`, `score_changes`, `scores` (totals),
`match_over` (and `match_winners` when it is), plus `hand_number`. During a
hand, infos hold `hand_number` and `scores`, and in match mode, from the
second hand on, `last_hand`: the result of the hand before (never shown as
this hand's `winner`).

"""
"""The sections of every env's doc page that do not depend on the game: actions, options, infos."""


def doc_page_tail(spec: GameSpec) -> str:
    """What every env module's doc page ends with: the shared sections, then the generated tables."""
    return ENV_DOC + "\n## Generated tables (default rules)\n\n" + spec.make().markdown(level=3) + "\n"


@functools.cache
def _generic_env_class(spec: GameSpec) -> type[CardGameEnv]:
    namespace = {"SPEC": spec, "__doc__": f"{spec.title} without wrappers."}
    return type(f"{spec.id}_raw_env", (CardGameEnv,), namespace)


def env_class(game: str | GameSpec) -> type[CardGameEnv]:
    """The raw AEC env class of a registered game (the doc-page module's `raw_env` for built-in games)."""
    spec = get_spec(game)
    module = f"cardlab.envs.{spec.env_name}"  # PettingZoo's naming: a doc-page module per env version
    if importlib.util.find_spec(module) is not None:
        cls = importlib.import_module(module).raw_env
        if cls.SPEC is spec:
            return cls
    return _generic_env_class(spec)


def make_env(game: str | GameSpec, **options: Any) -> AECEnv:
    """`env(**options)` of any registered game: the raw env in PettingZoo's checking wrappers."""
    return make_env_factory(env_class(game))(**options)


def make_env_factory(raw_cls: type[CardGameEnv]) -> Callable[..., AECEnv]:
    """`env(**options)`: `raw_env` wrapped in PettingZoo's checking wrappers.

    `OrderEnforcingWrapper` checks the call order (reset before step, ...).
    `AssertOutOfBoundsWrapper` is left out on purpose: `raw_env` already refuses
    out-of-range ids, with a `ValueError` that lists the legal actions (or the
    "penalize" policy) instead of a bare `AssertionError`.
    """

    def env(**options: Any) -> AECEnv:
        return wrappers.OrderEnforcingWrapper(raw_cls(**options))

    env.__doc__ = (
        f"The {raw_cls.SPEC.title} environment with PettingZoo's checking wrappers (see the module doc)."
    )
    return env


def live_turns(env: Any) -> Iterator[tuple[str, int, dict[str, np.ndarray]]]:
    """(agent name, seat, observation) of each turn of `env`'s episode that is played, in order.

    Why: PettingZoo's `agent_iter` also hands every finished agent a turn,
    which must be stepped with ``None`` before the episode ends; every play
    loop of the package skips those the same way, here once. The caller plays
    each yielded turn with ``env.step(action)`` before asking for the next
    (asking without a step yields the same turn again). Reset `env` first; a
    caller may stop at any turn (the next reset starts afresh).
    """
    seats = env.unwrapped.agent_seat
    for name in env.agent_iter():
        observation, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        yield name, seats[name], observation
