"""The batched engines as Gymnasium envs: one learner seat per game, the other seats played here.

```python
import cardlab, gymnasium        # importing cardlab registers the ids (or use "cardlab:cardlab/Huit-v1")
envs = gymnasium.make_vec("cardlab/Huit-v1", num_envs=256, vectorization_mode="vector_entry_point",
                          num_players=2, opponents=["expert"])
obs, infos = envs.reset(seed=0)  # {"observation": (256, obs_size) float32, "action_mask": (256, A) int8}
obs, rewards, terminations, truncations, infos = envs.step(actions)
```

Why a module of its own above the engines: Gymnasium's one-agent API needs
someone to play the seats that are not the learner's, and those players are
agents (heuristics, bots), which `envs` must not import. So the vector env
lives in `training`, beside the self-play table it borrows from
(`cardlab.training.arena.selfplay.batched_engine`), and the ids name it by
string (`cardlab.registration`), so that registering them imports none of
this. Its contract (seats, opponents, rewards, ends, same-step autoreset,
seeding, sizes) is written in docs/own-algorithm.md, "The vector env's
contract". An opponent that fails stops `reset` or `step` with an
`AgentFailure` naming it, its game and seat, before its move reaches the
engine; the env then refuses to step again until `reset`. In a game with a
fused vector step (`FastPaths.vector_step`: Huit), with every other seat
``"random"`` or one compiled heuristic, a whole step is one compiled call that
plays what the Python passes play.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from cardlab.agents.batch import BatchPlayers
from cardlab.agents.failure import AgentFailure, check_legal
from cardlab.envs.aec import ILLEGAL, REWARDS
from cardlab.envs.batched_engine import sample_legal
from cardlab.envs.checked_json import excerpt
from cardlab.envs.declared import KIND, check_choice, check_whole, refusal
from cardlab.envs.game_spec import Game, make_game
from cardlab.envs.match import points_reward
from cardlab.envs.rng import check_seed
from cardlab.training.arena.selfplay import batched_engine

Policy = Callable[[np.ndarray, np.ndarray], np.ndarray]
"""(observations (k, obs_size) float32, masks (k, A) bool) -> (k,) legal action ids"""
LEARNER = -1
"""the owner index of the learner's seat"""
MAX_REDEALS = 100
"""deals in a row allowed to end before the learner's first move (then the env gives up)"""
SELF = "self"
MAX_NUM_ENVS = 65_536
"""most games of one vector env (each holds about 20 KB of engine arrays: 1.3 GB at this bound)"""


class CardVectorEnv(VectorEnv):
    """`num_envs` games of a batched engine, the learner in one seat of each (see the module doc)."""

    # Gymnasium declares metadata an instance attribute (so no ClassVar) and reads it from the class.
    metadata: dict[str, Any] = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}  # noqa: RUF012

    def __init__(self, game: str, num_envs: int = 1, opponents: Sequence[str] = ("random",),
                 policy: Policy | None = None, reward: str = "win", illegal_action: str = "raise",
                 **rule_options: Any) -> None:
        self.illegal_action = check_choice("illegal_action", illegal_action, ILLEGAL)
        check_choice("reward", reward, REWARDS)
        if isinstance(opponents, str) or not opponents:
            raise ValueError(refusal("opponents", opponents, KIND if isinstance(opponents, str) else "empty",
                                     "a non-empty list of agent specs"))
        self.game: Game = make_game(game, rule_options)
        check_whole("num_envs", num_envs, 1, MAX_NUM_ENVS, f"a whole number from 1 to {MAX_NUM_ENVS:,}")
        self.engine = batched_engine(self.game, num_envs)
        self.reward = reward
        self.num_envs = self.engine.batch_size
        self.n = self.game.num_players
        self.specs = [str(s).strip() for s in opponents]
        self._policy = policy
        self._all_random = all(s == "random" for s in self.specs)
        self.players = BatchPlayers(self.game)
        """the agents of the listed specs other than "random" and "self", one per place in `specs`"""
        for i, spec in enumerate(self.specs):
            if spec not in (SELF, "random"):
                self.players.agent(i, spec)  # checks every spec now, not at the first deal
        self.fused = True
        """play each step in one compiled call where there is one (the game's `FastPaths.vector_step`), else
        the opponents' passes in one call each where there is one (False: round by round in Python, the
        reference the compiled calls are tested against)"""
        self._fused_play = None
        heuristic = None
        if len(self.specs) == 1 and self.specs[0] not in (SELF, "random"):
            self._fused_play = self.players.play_out(0, self.specs[0], self.engine)
            heuristic = self.players.agent(0, self.specs[0])
        self._no_moves = np.zeros(self.game.num_actions, dtype=np.int8)
        self._no_moves.flags.writeable = False  # every final observation's mask: no legal move, read-only
        paths = self.game.spec.fast_paths()
        fused_step = None if paths is None else paths.vector_step
        compiled = None if heuristic is None else heuristic.compiled()  # None with a heuristic: not compiled
        wanted = fused_step is not None and (self._all_random or compiled is not None)
        self._fast = None if not wanted or fused_step is None else fused_step(
            self.engine, len(self.specs), compiled, reward, MAX_REDEALS, self._no_moves)
        layout = self.game.layout
        self.single_observation_space = spaces.Dict({
            "observation": spaces.Box(layout.low, layout.high, dtype=np.float32),
            "action_mask": spaces.Box(0, 1, shape=(self.game.num_actions,), dtype=np.int8),
        })
        self.single_action_space = spaces.Discrete(self.game.num_actions)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.rng = np.random.default_rng()
        self._rows = np.arange(self.num_envs)
        self.seats = np.zeros(self.num_envs, dtype=np.int64)
        """(B,) the learner's seat in each game"""
        self.owners = np.zeros((self.num_envs, self.n), dtype=np.int64)
        """(B, n) who plays each seat: an index into `specs`, or LEARNER"""
        self._obs: dict[str, np.ndarray] | None = None
        self._stopped: str | None = None
        """why the last reset or step stopped part-way (an opponent's failure), until the next reset"""

    def set_policy(self, policy: Policy | None) -> None:
        """The function that plays the ``"self"`` seats from now on."""
        self._policy = policy

    # ------------------------------------------------------------ episodes
    def reset(self, *, seed: int | list[int] | None = None,
              options: dict[str, Any] | None = None) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """Deal every game; with a seed, game b as the AEC env's ``reset(seed=seed + b)``."""
        seeds = self._seeds(seed)
        super().reset(seed=seeds[0] if seeds is not None and isinstance(seed, (int, np.integer)) else None)
        everything = np.arange(self.num_envs)
        if seeds is None:
            self.engine.reset(everything)
        else:
            for b, s in enumerate(seeds):  # dealt by the rules engine, as the AEC env deals
                self.engine.load(b, self.game.new_state(np.random.default_rng(s)))
            self.rng = np.random.default_rng(seeds[0])
            self.players.reseed(seeds[0])
        self._seat(everything)
        self._obs, self._stopped = None, None
        if self._fast is not None and self.fused:  # the play-out and the observations in one compiled call
            self._obs = self._fast(None, self.seats, self.owners, self.rng).obs
        else:
            fresh = np.ones(self.num_envs, dtype=np.bool_)
            self._guarded(lambda: self._play_out(np.zeros(self.num_envs), fresh))
            self._obs = self._observe()
        return self._obs, {"seat": self.seats.copy(), "_seat": np.ones(self.num_envs, dtype=np.bool_)}

    def _seeds(self, seed: Any) -> list[int] | None:
        """The seed of each game: `seed` + b (Python ints: any size, as the AEC env takes), or the list's."""
        if seed is None:
            return None
        if isinstance(seed, list):
            if len(seed) != self.num_envs:
                raise ValueError(f"reset takes {self.num_envs} seeds, got {len(seed)}")
            return [check_seed(s, f"seed[{b}]") for b, s in enumerate(seed)]
        first = check_seed(seed, "seed")
        return [first + b for b in range(self.num_envs)]

    def _seat(self, rows: np.ndarray) -> None:
        """Draw the learner's seat and the other seats' players of these games."""
        self.seats[rows] = self.rng.integers(self.n, size=rows.size)
        self.owners[rows] = self.rng.integers(len(self.specs), size=(rows.size, self.n))
        self.owners[rows, self.seats[rows]] = LEARNER

    # ------------------------------------------------------------ moves
    def step(self, actions: Any) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray, np.ndarray,
                                          dict[str, Any]]:
        """The learner's move in every game, then the others' up to its next turn (module doc)."""
        if self._stopped is not None:
            raise RuntimeError(f"the last reset or step stopped: {self._stopped}; call reset() to deal again")
        if self._obs is None:
            raise RuntimeError("step() before reset(): call reset() first")
        acts = np.asarray(actions)
        if acts.shape != (self.num_envs,) or not np.issubdtype(acts.dtype, np.integer):
            raise ValueError(f"actions must be a ({self.num_envs},) integer array, "
                             f"got {acts.dtype} {acts.shape}")
        illegal = self._illegal(acts)
        if illegal is None and self._fast is not None and self.fused:  # the whole step in one compiled call
            rewards, terminated, truncated, final, self._obs = self._fast(
                acts.astype(np.int64, copy=False), self.seats, self.owners, self.rng)
        else:
            rewards, terminated, truncated, final = self._stepped(acts, illegal)
            self._obs = self._observe()
        infos: dict[str, Any] = {}
        if final is not None:
            infos = {"final_obs": final, "_final_obs": terminated | truncated}
        infos["seat"], infos["_seat"] = self.seats.copy(), np.ones(self.num_envs, dtype=np.bool_)
        return self._obs, rewards.astype(np.float32), terminated, truncated, infos

    def _stepped(self, acts: np.ndarray, illegal: np.ndarray | None) -> tuple[
            np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
        """`step` by the engine's calls: the learner's moves, `_play_out`, the penalties of illegal moves;
        (rewards (B,) float64, terminated, truncated, final observations or None)."""
        moving = None if illegal is None else ~illegal
        moved, won, cut = self.engine.step(acts, moving)
        rewards = moved[self._rows, self.seats].astype(np.float64)
        ended = bool(won.any() or cut.any())
        terminated, truncated, final = self._guarded(
            lambda: self._play_out(rewards, np.zeros(self.num_envs, dtype=np.bool_), ended))
        if illegal is not None:
            final = self._penalize(illegal, rewards, terminated, final)
        return rewards, terminated, truncated, final

    def _guarded(self, call: Callable[[], Any]) -> Any:
        """`call()`; an opponent's `AgentFailure` is noted (`step` refuses until `reset`) and raised."""
        try:
            return call()
        except AgentFailure as err:
            self._stopped = str(err)
            raise

    def _illegal(self, acts: np.ndarray) -> np.ndarray | None:
        """(B,) bool: the learner's illegal actions, when they are penalized (None: none, or raise)."""
        if self.illegal_action == "raise":
            return None  # the engine refuses them, naming the game and its legal actions
        assert self._obs is not None
        mask = self._obs["action_mask"]
        inside = (acts >= 0) & (acts < mask.shape[1])
        illegal = ~inside
        illegal[inside] = mask[self._rows[inside], acts[inside]] == 0
        return illegal if illegal.any() else None

    def _penalize(self, illegal: np.ndarray, rewards: np.ndarray, terminated: np.ndarray,
                  final: np.ndarray | None) -> np.ndarray:
        """End the games of illegal moves as the AEC env's ``illegal_action="penalize"``: -1, terminated."""
        assert self._obs is not None
        rows = np.flatnonzero(illegal)
        rewards[rows], terminated[rows] = -1.0, True
        if final is None:
            final = np.full(self.num_envs, None, dtype=object)
        for b in rows:
            final[b] = {"observation": self._obs["observation"][b].copy(),
                        "action_mask": self._no_moves}
        self.engine.reset(rows)
        self._seat(rows)
        self._play_out(np.zeros(self.num_envs), illegal.copy())
        return final

    def _observe(self) -> dict[str, np.ndarray]:
        return {"observation": self.engine.observe(self.seats),
                "action_mask": self.engine.legal_mask().view(np.int8)}

    def _play_out(self, rewards: np.ndarray, fresh: np.ndarray, ended_before: bool = False) -> tuple[
            np.ndarray, np.ndarray, np.ndarray | None]:
        """Play the other seats until the learner is to move in every game, dealing ended games again.

        `rewards` (B,) gathers the learner's rewards in place; `fresh` (B,)
        marks the games dealt since the learner's last move (an end of one
        of those is not the learner's episode: it is dealt again). Returns
        (terminated, truncated, final observations or None) of the episodes
        that ended; `ended_before`: some episode ended before the pass (by
        the learner's move). Why in passes: each pass plays every live game up to
        the learner's turn (a game that ends on the way waits), then the
        ended games are noted and dealt again together, so a step costs
        about two passes and one dealing, however the ends fall.
        """
        terminated = np.zeros(self.num_envs, dtype=np.bool_)
        truncated = np.zeros(self.num_envs, dtype=np.bool_)
        final: np.ndarray | None = None
        deals: np.ndarray | None = None
        while True:
            if self._all_random and self.fused:  # every round of the pass in one call
                some = self.engine.play_random(self.seats, self.rng, rewards, ~fresh)
            elif self._fused_play is not None and self.fused:  # one listed spec, its heuristic compiled
                some = self._fused_play(self.seats, rewards, ~fresh)
            else:
                self._play_rounds(rewards, fresh)
                some = True
            ended = self.engine.over if some or ended_before else None
            ended_before = False
            if ended is None or not ended.any():
                return terminated, truncated, final
            over = np.flatnonzero(ended)
            report = over[~fresh[over]]
            if report.size:
                final = self._record_ends(report, rewards, terminated, truncated, final)
            deals = np.zeros(self.num_envs, dtype=np.int64) if deals is None else deals
            deals[over] += 1
            if deals[over].max() > MAX_REDEALS:
                raise RuntimeError(f"{MAX_REDEALS} deals in a row ended before the learner's first move")
            self.engine.reset(ended)
            self._seat(over)
            fresh[over] = True

    def _play_rounds(self, rewards: np.ndarray, fresh: np.ndarray) -> None:
        """One pass of `_play_out` with the listed players: a round of moves at a time, each player asked
        once a round for all its games (`hold` keeps the rounds where few games wait cheap)."""
        actions = np.zeros(self.num_envs, dtype=np.int64)
        seats = self.seats
        while True:
            current = self.engine.current_player()
            waiting = (current != seats) & ~self.engine.over
            rows = np.flatnonzero(waiting)
            if rows.size == 0:
                return
            with self.engine.hold(waiting):
                mask = self.engine.legal_mask()
                self._choose(rows, current, mask, actions)
                moved = self.engine.step(actions)[0]
            gained = moved[rows, seats[rows]]
            gained[fresh[rows]] = 0.0
            rewards[rows] += gained

    def _record_ends(self, rows: np.ndarray, rewards: np.ndarray, terminated: np.ndarray,
                     truncated: np.ndarray, final: np.ndarray | None) -> np.ndarray:
        """Note the ends of the learner's episodes in `rows` (before they are dealt again)."""
        won = self.engine.done[rows]
        terminated[rows], truncated[rows] = won, ~won
        if self.reward == "points":
            rewards[rows] = 0.0
            rewards[rows[won]] = points_reward(self.engine.score_changes()[rows[won], self.seats[rows[won]]])
        if final is None:
            final = np.full(self.num_envs, None, dtype=object)
        observations = self.engine.observe(self.seats)
        for b in rows:
            final[b] = {"observation": observations[b], "action_mask": self._no_moves}
        return final

    def _choose(self, rows: np.ndarray, current: np.ndarray, mask: np.ndarray, actions: np.ndarray) -> None:
        """Fill `actions[rows]` with the moves of each game's player of the seat to move."""
        obs = self.engine.observe(current)  # _play_rounds runs only when some listed player reads it
        if len(self.specs) == 1:
            actions[rows] = self._play(0, rows, current, obs, mask)
            self._check_moves(0, rows, current, mask, actions)
            return
        owner = self.owners[rows, current[rows]]
        for player in np.unique(owner):
            chosen = rows[owner == player]
            actions[chosen] = self._play(int(player), chosen, current, obs, mask)
            self._check_moves(int(player), chosen, current, mask, actions)

    def _check_moves(self, player: int, rows: np.ndarray, current: np.ndarray, mask: np.ndarray,
                     actions: np.ndarray) -> None:
        """An `AgentFailure` naming the player if a move of it in `rows` is illegal (before the engine)."""
        check_legal(actions[rows], mask[rows], lambda i: self._who(player, int(rows[i]), current))

    def _who(self, player: int, b: int, current: np.ndarray) -> str:
        return f"opponent {self.specs[player]} (game {b}, seat {int(current[b])})"

    def _play(self, player: int, rows: np.ndarray, current: np.ndarray, obs: np.ndarray | None,
              mask: np.ndarray) -> np.ndarray:
        """The moves of one player (an index into `specs`) in the games `rows`."""
        spec = self.specs[player]
        if spec == "random":
            return sample_legal(mask[rows], self.rng)
        assert obs is not None
        if spec == SELF:
            if self._policy is None:
                raise ValueError("an opponent is 'self' but no policy was given: "
                                 "pass policy= or call set_policy()")
            return np.asarray(self._policy(obs[rows], mask[rows]), dtype=np.int64)
        try:
            return self.players.act(player, spec, obs[rows], mask[rows])
        except AgentFailure as err:  # a bot's non-finite logits
            raise err.named(self._who(player, int(rows[0]), current)) from err
        except Exception as err:  # an agent's bug of any kind is its failure
            raise AgentFailure(self._who(player, int(rows[0]), current), f"it raised {type(err).__name__}",
                               str(err)[:200]) from err

    def close_extras(self, **kwargs: Any) -> None:
        """Nothing to release: the games live in this process."""


class CardEnv(gymnasium.Env[dict[str, np.ndarray], np.int64]):
    """One game of `CardVectorEnv`: what ``gymnasium.make("cardlab/Huit-v1", ...)`` gives.

    After a game ends, `reset()` without a seed starts the next deal of the
    game's generator, as the AEC env's does.
    """

    metadata: dict[str, Any] = {"render_modes": []}  # noqa: RUF012 - as CardVectorEnv's

    def __init__(self, game: str, **options: Any) -> None:
        self.vector = CardVectorEnv(game, 1, **options)
        self.observation_space = self.vector.single_observation_space
        self.action_space = self.vector.single_action_space
        self._pending: dict[str, np.ndarray] | None = None

    def reset(self, *, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        super().reset(seed=None if seed is None else check_seed(seed, "seed"))
        pending = self._pending if seed is None else None
        obs = pending if pending is not None else self.vector.reset(seed=seed)[0]
        self._pending = None
        return _one(obs), {"seat": int(self.vector.seats[0])}

    def step(self, action: Any) -> tuple[dict[str, np.ndarray], float, bool, bool, dict[str, Any]]:
        """One move of the learner; an action id is an int or a numpy integer (76.9, "76" are refused)."""
        act = np.asarray(action)
        if act.shape != () or not np.issubdtype(act.dtype, np.integer):
            raise ValueError(f"action {excerpt(action)} is not an action id: give a whole number (an int or "
                             f"a numpy integer) 0..{self.vector.game.num_actions - 1}")
        obs, rewards, terminated, truncated, infos = self.vector.step(act.reshape(1))
        if terminated[0] or truncated[0]:
            self._pending = obs
            obs = {k: v[None] for k, v in infos["final_obs"][0].items()}
        return _one(obs), float(rewards[0]), bool(terminated[0]), bool(truncated[0]), {}


def _one(obs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    return {k: v[0].copy() for k, v in obs.items()}


def make_vector_env(game: str, num_envs: int = 1, **options: Any) -> CardVectorEnv:
    """The `vector_entry_point` of the ids (`cardlab.registration`)."""
    return CardVectorEnv(game, num_envs, **options)
