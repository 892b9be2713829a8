"""One seat of a card game as a gymnasium env, for MaskablePPO.

The AEC env has one agent per seat; PPO trains one policy on one stream of
transitions. `SingleSeatEnv` puts the learner in one seat (a new seat every
hand, drawn with the env's own seeded generator) and lets league opponents
play every other seat inside `reset()` and `step()`. So each observation is
the learner's own, taken at its next decision; the reward of a step is
everything the learner received from its action up to its next decision (an
opponent that ends the hand still pays the learner, on the step that led
there); a hand truncated by the turn limit (C1) ends with ``truncated=True``;
`action_masks()` is the learner's legal mask (sb3-contrib's protocol). The
PettingZoo + SB3 tutorial gets the first two wrong (it hands the next seat's
observation to the learner and drops rewards earned on other seats' moves);
tests/training/test_single_seat.py checks both.

With ``privileged=True`` each observation is followed by the table's hidden
cards (`observe_hidden`), for a critic that reads them while the actor reads
the first `public_size` numbers (`cardlab.training.trainers.policy`). With
``skip_forced=True`` a learner move with a single legal action is played for
it inside `step`, its reward still credited.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from cardlab.agents.agent_spec import make_agent
from cardlab.agents.base import show_table
from cardlab.envs import env_class
from cardlab.envs.aec import CardGameEnv
from cardlab.envs.checked_json import excerpt
from cardlab.training.arena.league import League, LeagueSettings

MAX_REDEALS = 100


def make_game_env(
    game: str, num_players: int, rules: dict[str, Any] | None = None, **env_options: Any
) -> CardGameEnv:
    """The raw AEC env of `game` (no wrappers: the single-seat view drives it correctly itself)."""
    return env_class(game)(num_players=num_players, **(rules or {}), **env_options)


def discounted_returns(rewards: Sequence[float], gamma: float) -> list[float]:
    """Return from each step to the end: r_t + gamma * r_{t+1} + gamma^2 * r_{t+2} + ..."""
    out, total = [], 0.0
    for reward in reversed(rewards):
        total = reward + gamma * total
        out.append(total)
    return out[::-1]


class SingleSeatEnv(gymnasium.Env):
    """The learner's seat of a hand; league opponents play the others (see the module doc).

    `reset(options=...)` accepts ``seat`` (fix the learner's seat for this
    hand, e.g. to rotate seats in evaluation) and the AEC env's own ``deal`` or
    ``state``. The final `info` of a hand holds ``seat``, ``winner``, ``won``,
    ``truncated``, ``hand_points`` (the learner's) and ``opponents`` (labels).
    """

    observation_space: spaces.Box
    action_space: spaces.Discrete

    def __init__(
        self,
        game: str,
        num_players: int,
        rules: dict[str, Any] | None = None,
        opponents: LeagueSettings | Sequence[str] = ("random",),
        reward: str = "win",
        privileged: bool = False,
        skip_forced: bool = False,
    ) -> None:
        super().__init__()
        # An instance attribute, as gymnasium.Env declares it (a ClassVar would clash with that).
        self.metadata: dict[str, Any] = {"render_modes": []}
        self.skip_forced = skip_forced
        self.game_env = make_game_env(game, num_players, rules, reward=reward)
        layout = self.game_env.layout
        self.public_size = layout.size
        self.privileged = privileged
        low, high = layout.low, layout.high
        if privileged:
            hidden = self.game_env.observer.hidden_layout
            low, high = np.concatenate([low, hidden.low]), np.concatenate([high, hidden.high])
        self.observation_space = spaces.Box(low, high, dtype=np.float32)
        self.action_space = spaces.Discrete(self.game_env.NUM_ACTIONS)
        self.num_players = num_players
        self.league = League(self.game_env.game, LeagueSettings.of(opponents))
        self.seat = 0
        self.opponents: dict[int, Any] = {}
        self.opponent_labels: list[str] = []
        self._last: dict[str, np.ndarray] = {}
        self._reward = 0.0
        self._game_seeded = False
        self._teacher: tuple[str, Any] | None = None  # (spec, agent) of `demonstrate`

    @property
    def learner(self) -> str:
        return self.game_env.possible_agents[self.seat]

    # ------------------------------------------------------------ gymnasium API
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        options = dict(options or {})
        seat = options.pop("seat", None)
        if seat is not None and (isinstance(seat, bool) or not isinstance(seat, (int, np.integer))
                                 or not 0 <= seat < self.num_players):
            raise ValueError(f"options['seat'] must be a seat 0..{self.num_players - 1}, got {excerpt(seat)}")
        game_seed = None
        if seed is not None or not self._game_seeded:
            game_seed = int(self.np_random.integers(2**63))
            self.league.reseed(int(self.np_random.integers(2**63)))
            self._game_seeded = True
        for _ in range(MAX_REDEALS):
            self._deal(seat, game_seed, options)
            game_seed = None
            if not self._hand_over():
                return self._observation(), {"seat": self.seat, "opponents": list(self.opponent_labels)}
            if options:
                raise ValueError("the given deal or state ends the hand before the learner's first decision")
        raise RuntimeError(f"{MAX_REDEALS} deals in a row ended before the learner's first decision")

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict]:
        if self._hand_over():
            raise RuntimeError("step() after the hand ended: call reset() first")
        self._reward = 0.0
        self._apply(action.item() if isinstance(action, np.ndarray) else action)
        self._play_opponents()
        env = self.game_env
        terminated, truncated = env.terminations[self.learner], env.truncations[self.learner]
        info: dict[str, Any] = {}
        if terminated or truncated:
            info = self._final_info()
        self._last = env.observe(self.learner)
        return self._observation(), self._reward, terminated, truncated, info

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions (all False once the hand is over)."""
        return self._last["action_mask"].astype(bool)

    def demonstrate(
        self, spec: str, hands: int, gamma: float, keep_teacher: bool = False
    ) -> dict[str, np.ndarray]:
        """Let agent `spec` play the learner's seat for `hands` hands; its transitions, for imitation.

        Returns ``observations``, ``masks``, ``actions`` and ``returns`` (the
        seat's rewards discounted with `gamma` to the end of each hand). The
        teacher's seed comes from the env's generator, so a seeded env gives
        the same demonstrations. With `keep_teacher` the teacher of the last
        call plays on, so calls of 3 and 2 hands give what one call of 5 gives.
        """
        if not (keep_teacher and self._teacher is not None and self._teacher[0] == spec):
            seed = int(self.np_random.integers(2**63))
            self._teacher = (spec, make_agent(spec, self.game_env.game, seed=seed))
        teacher = self._teacher[1]
        observations, masks, actions, returns = [], [], [], []
        for _ in range(hands):
            obs, _ = self.reset()
            teacher.reset()
            rewards, done = [], False
            while not done:
                mask = self._last["action_mask"]
                show_table(teacher, self.game_env, self.learner)
                action = teacher.act(self._last)
                observations.append(obs)
                masks.append(mask.astype(bool))
                actions.append(action)
                obs, reward, terminated, truncated, _ = self.step(action)
                rewards.append(reward)
                done = terminated or truncated
            returns.extend(discounted_returns(rewards, gamma))
        return {
            "observations": np.array(observations, dtype=np.float32).reshape(
                -1, *self.observation_space.shape
            ),
            "masks": np.array(masks, dtype=bool).reshape(-1, self.action_space.n),
            "actions": np.array(actions, dtype=np.int64),
            "returns": np.array(returns, dtype=np.float32),
        }

    # ------------------------------------------------------------ internals
    def _observation(self) -> np.ndarray:
        """The learner's observation, followed by the hidden cards when `privileged`."""
        public = self._last["observation"]
        if not self.privileged:
            return public
        env = self.game_env
        return np.concatenate([public, env.observer.observe_hidden(env.game_state, self.seat)])

    def _deal(self, seat: int | np.integer | None, game_seed: int | None, options: dict[str, Any]) -> None:
        self.seat = int(self.np_random.integers(self.num_players)) if seat is None else int(seat)
        picks = self.league.pick(self.np_random, self.num_players - 1)
        others = [s for s in range(self.num_players) if s != self.seat]
        self.opponents = {s: agent for s, (_, agent) in zip(others, picks, strict=True)}
        self.opponent_labels = [label for label, _ in picks]
        for agent in self.opponents.values():
            agent.reset()
        self.game_env.reset(seed=game_seed, options=options or None)
        self._reward = 0.0
        self._play_opponents()
        self._last = self.game_env.observe(self.learner)

    def _hand_over(self) -> bool:
        env = self.game_env
        return env.terminations[self.learner] or env.truncations[self.learner]

    def _apply(self, action: int) -> None:
        """Step the AEC env and credit the learner with what it received on that step."""
        self.game_env.step(action)
        self._reward += float(self.game_env.rewards[self.learner])

    def _play_opponents(self) -> None:
        """Play on until the learner has a decision to make or the hand is over.

        Opponents move; with `skip_forced` the learner's moves that have a
        single legal action are played for it too.
        """
        env = self.game_env
        while not self._hand_over():
            name = env.agent_selection
            if name != self.learner:
                opponent = self.opponents[env.agent_seat[name]]
                show_table(opponent, env, name)
                self._apply(opponent.act(env.observe(name)))
                continue
            if not self.skip_forced:
                return
            legal = env.legal_actions()
            if len(legal) != 1:
                return
            self._apply(legal[0])

    def _final_info(self) -> dict[str, Any]:
        state = self.game_env.game_state
        return {
            "seat": self.seat,
            "winner": state.winner,
            "won": state.winner == self.seat,
            "truncated": bool(state.truncated),
            "hand_points": int(state.hand_points[self.seat]),
            "opponents": list(self.opponent_labels),
        }
