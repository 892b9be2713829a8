"""The PettingZoo AEC machinery both games share.

A game module (`switch_v0`, `huit_v0`) subclasses `CardGameEnv` with its rules,
state, observer and action table; everything else lives here once: agent order,
rewards, infos, rendering, stacked deals and saved states, and the policy for
illegal actions.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

import gymnasium
import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from cardlab.envs import cards as C
from cardlab.envs.common import win_rewards
from cardlab.envs.layout import Layout

EPISODES = ("hand", "match")
REWARDS = ("win", "points")
ILLEGAL = ("raise", "penalize")
RENDER_MODES = (None, "ansi", "human")


def _choice(name: str, value: Any, accepted: tuple[Any, ...]) -> Any:
    if value not in accepted:
        shown = ", ".join(repr(a) for a in accepted)
        raise ValueError(f"option {name}={value!r} is not accepted: use one of {shown}")
    return value


class CardGameEnv(AECEnv):
    """A shedding card game as a PettingZoo AEC environment (see the game module's doc)."""

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["ansi", "human"], "name": "card_game", "is_parallelizable": False}
    GAME: ClassVar[str]
    NUM_ACTIONS: ClassVar[int]
    Rules: ClassVar[type]
    State: ClassVar[type]
    Observer: ClassVar[type]
    _action_to_str: ClassVar[Callable[[int], str]]
    _str_to_action: ClassVar[Callable[[str], int]]

    def __init__(
        self,
        render_mode: str | None = None,
        episode: str = "hand",
        reward: str = "win",
        illegal_action: str = "raise",
        **rule_options: Any,
    ) -> None:
        super().__init__()
        self.render_mode = _choice("render_mode", render_mode, RENDER_MODES)
        self.episode = _choice("episode", episode, EPISODES)
        self.reward_mode = _choice("reward", reward, REWARDS)
        self.illegal_action = _choice("illegal_action", illegal_action, ILLEGAL)
        try:
            self.rules = self.Rules.from_options(rule_options)
        except (TypeError, ValueError) as err:
            env_opts = "render_mode, episode, reward, illegal_action"
            raise ValueError(f"{err} (env options: {env_opts})") from None
        self.observer = self.Observer(self.rules)
        self.layout: Layout = self.observer.layout
        n = self.rules.num_players
        self.possible_agents = [f"player_{i}" for i in range(n)]
        self.agent_seat = {a: i for i, a in enumerate(self.possible_agents)}
        obs_space = spaces.Dict({
            "observation": spaces.Box(self.layout.low, self.layout.high, dtype=np.float32),
            "action_mask": spaces.Box(0, 1, shape=(self.NUM_ACTIONS,), dtype=np.int8),
        })
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        self.action_spaces = {a: spaces.Discrete(self.NUM_ACTIONS) for a in self.possible_agents}
        self._rng: np.random.Generator | None = None
        self.state: Any = None
        self._legal: list[int] = []

    # ------------------------------------------------------------ spaces
    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    # ------------------------------------------------------------ actions as text
    def action_to_str(self, action: int) -> str:
        """``play 9S``, ``draw``, ... (see the module doc for the grammar)."""
        return type(self)._action_to_str(int(action))

    def str_to_action(self, text: str) -> int:
        return type(self)._str_to_action(text)

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
            gymnasium.logger.warn(f"reset ignores the unknown option(s) {unknown}; it reads 'deal' and 'state'")
        if "deal" in options and "state" in options:
            raise ValueError("reset takes either options['deal'] (a stacked deal) or options['state'] "
                             "(a dict from state_dict()), not both")
        if seed is not None or self._rng is None:
            self._rng = np.random.default_rng(seed)
        if "state" in options:
            self.state = self.State.from_state_dict(options["state"], self.rules)
            self._rng = self.state.rng
        else:
            self.state = self.State(self.rules, self._rng)
            if "deal" in options:
                self.state.deal_stacked(options["deal"])
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: self._hand_info() for a in self.agents}
        self._after_change()

    # ------------------------------------------------------------ step
    def step(self, action: int | None) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        seat = self.agent_seat[agent]
        if not self._is_legal(action):
            self._illegal(agent, seat, action)
            return
        self._cumulative_rewards[agent] = 0.0
        self._clear_rewards()
        state = self.state
        state.apply(int(action))  # type: ignore[arg-type]
        if state.hand_over:
            self._end_of_hand(seat)
        self._after_change()
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def _is_legal(self, action: Any) -> bool:
        if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
            return False
        return int(action) in self._legal_set

    def _illegal(self, agent: str, seat: int, action: Any) -> None:
        legal = ", ".join(f"{a} ({self.action_to_str(a)})" for a in self._legal)
        if isinstance(action, (int, np.integer)) and not isinstance(action, (bool, np.bool_)) and (
            0 <= int(action) < self.NUM_ACTIONS
        ):
            what = f"{int(action)} ({self.action_to_str(int(action))})"
        else:
            what = f"{action!r} (not an action id 0..{self.NUM_ACTIONS - 1})"
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
        state = self.state
        info = self._hand_info()
        for a in self.agents:
            self.infos[a] = dict(info)
        if state.truncated:
            for a in self.agents:
                self.truncations[a] = True
            return
        if self.reward_mode == "points":
            for a, delta in zip(self.agents, state.score_changes):
                self.rewards[a] = -delta / 100.0
        if self.episode == "hand" or state.match_over:
            if self.reward_mode == "win":
                winners = [state.winner] if self.episode == "hand" else state.match.winners()
                for a, r in zip(self.agents, win_rewards(state.n, winners)):
                    self.rewards[a] = r
            for a in self.agents:
                self.terminations[a] = True
            return
        state.next_hand()

    def _hand_info(self) -> dict[str, Any]:
        state = self.state
        info: dict[str, Any] = {
            "hand_number": state.match.hands_played + (0 if state.hand_over else 1),
            "scores": list(state.match.scores),
        }
        if state.hand_over:
            info.update(
                winner=state.winner,
                truncated=state.truncated,
                hand_points=list(state.hand_points),
                score_changes=list(state.score_changes),
                match_over=state.match_over,
            )
            if state.match_over:
                info["match_winners"] = state.match.winners()
        return info

    def _after_change(self) -> None:
        """Refresh the legal set and the agent to move."""
        state = self.state
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
        return {"observation": self.observer.observe(self.state, seat), "action_mask": mask}

    # ------------------------------------------------------------ saved states
    def state_dict(self) -> dict[str, Any]:
        """The full engine state as JSON-serialisable data; `reset(options={"state": d})` restores it."""
        return self.state.state_dict()

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
        state = self.state
        seat = state.current if seat is None else seat
        lines = [f"{self.metadata['name']}  hand {self._hand_info()['hand_number']}  turn {state.turn}"]
        lines += [f"  {k:<13}{v}" for k, v in self._status().items()]
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

    def _status(self) -> dict[str, str]:
        """Game-specific lines of the table: top card, suit, pending draw, ..."""
        raise NotImplementedError

    def close(self) -> None:
        pass


def make_env_factory(raw_cls: type[CardGameEnv]) -> Callable[..., AECEnv]:
    """`env(**options)`: `raw_env` wrapped in PettingZoo's checking wrappers.

    `OrderEnforcingWrapper` checks the call order (reset before step, ...).
    `AssertOutOfBoundsWrapper` is left out on purpose: `raw_env` already refuses
    out-of-range ids, with a `ValueError` that lists the legal actions (or the
    "penalize" policy) instead of a bare `AssertionError`.
    """

    def env(**options: Any) -> AECEnv:
        return wrappers.OrderEnforcingWrapper(raw_cls(**options))

    env.__doc__ = f"The {raw_cls.GAME} environment with PettingZoo's checking wrappers (see the module doc)."
    return env
