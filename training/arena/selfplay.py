"""Self-play over a batched engine: every seat of every game played by a policy drawn from the league.

```python
table = SelfPlayBatch(game, num_games=256, league=settings, learner_share=1.0, seed=0)
obs, mask, seats, learner = table.observe()      # the seat to move in each game, from its point of view
rewards, ended = table.step(my_policy(obs, mask))  # used where `learner` is True; (B, n) rewards, (B,) ends
```

Why one move per game per call: a batched engine applies one action in
every live game at each `step`, so a game cannot wait while others catch up;
each call plays the learner's move where a learner seat is to move and a
snapshot's, a bot's or a heuristic's elsewhere, each spec one batched agent
for all its games (`cardlab.agents.batch.BatchPlayers`). Who sits where is
drawn per episode from the league (docs/training.md, "Self-play on the
batched engines"): one seat is always the learner's, each other is the learner's too
with probability `learner_share`, else a snapshot or a fixed spec.
``episode="match"`` makes a game a whole match (``reward="match"`` pays each
hand's change of match equity, `cardlab.training.arena.match_reward`).
`observe_table` is a privileged critic's input (every seat's observation,
the given seat's first). `credit` gives a learner transition everything its
seat receives until its next move in the same episode, so a hand ended by
another seat still pays every learner seat; the chain of one seat's
transitions (`next_index`) is what GAE follows. `SelfPlayVecEnv` is the same
table as a stable-baselines3 `VecEnv` with `action_masks()`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from gymnasium import spaces
from stable_baselines3.common.vec_env import VecEnv
from stable_baselines3.common.vec_env.base_vec_env import VecEnvIndices, VecEnvObs, VecEnvStepReturn
from torch import nn

from cardlab.agents.agent_spec import make_agent
from cardlab.agents.batch import BatchPlayers
from cardlab.agents.bot import BotAgent, load_bot, network_actions
from cardlab.envs.aec import REWARDS
from cardlab.envs.checked_json import excerpt
from cardlab.envs.declared import RANGE, check_choice, check_that
from cardlab.envs.game_spec import Game
from cardlab.envs.match import EPISODES, points_reward
from cardlab.training.arena.league import LeagueSettings, list_population, list_snapshots
from cardlab.training.arena.match_reward import MATCH, MatchReward, check_reward_episode, check_reward_equity

LEARNER = 0
"""the policy index of the learner in `SelfPlayBatch.owners`"""
View = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]
"""what `SelfPlayBatch.observe` returns: (obs, mask, seat to move, learner to move)"""


def batched_engine(game: Game, batch_size: int, seed: int | None = None, episode: str = "hand") -> Any:
    """The batched engine of `game` (`GameSpec.batched_engine()`: win rewards), B games of `episode`s."""
    return game.spec.batched_engine()(game.rules, batch_size, seed=seed, episode=episode)


class SelfPlayBatch:
    """`num_games` games, each seat owned by the learner, a snapshot or a heuristic (see the module doc)."""

    def __init__(self, game: Game, num_games: int, league: LeagueSettings, learner_share: float = 1.0,
                 seed: int | None = None, reward: str = "win", episode: str = "hand", equity: str = ""
                 ) -> None:
        check_that(0.0 <= learner_share <= 1.0, "learner_share", learner_share, RANGE, "a number from 0 to 1")
        check_choice("reward", reward, (*REWARDS, MATCH))
        check_choice("episode", episode, EPISODES)
        check_reward_episode(reward, episode)
        self.reward, self.episode = reward, episode
        weights = np.array([w for _, w in league.opponents], dtype=np.float64)
        if not league.opponents or (weights <= 0).any():
            raise ValueError(f"the league needs opponent specs with weights > 0, got "
                             f"{excerpt(league.opponents)}")
        self.game, self.league, self.learner_share = game, league, learner_share
        self.n = game.num_players
        self.num_games = num_games
        cdf = (weights / weights.sum()).cumsum()
        self._spec_cdf = cdf / cdf[-1]
        seeds = np.random.SeedSequence(seed).spawn(3)
        self.rng = np.random.default_rng(seeds[0])
        self.engine = batched_engine(game, num_games, seed=int(seeds[1].generate_state(1)[0]),
                                     episode=episode)
        self.policies: list[str] = ["learner"]
        """policy index -> name: 'learner', a spec string, or a snapshot's file stem"""
        self._index: dict[str, int] = {"learner": LEARNER}
        self._networks: dict[int, nn.Module] = {}
        self._sampled: dict[int, bool] = {}
        """network policy index -> whether it samples its masked distribution (else masked argmax)"""
        self.players = BatchPlayers(game, seed=int(seeds[2].generate_state(1)[0]))
        """the agents of the specs that are neither the learner nor networks, one per policy index"""
        self._pool: list[Path] = []
        self._population: list[Path] = []
        self.owners = np.zeros((num_games, self.n), dtype=np.int64)
        """(B, n): the policy index of each seat of each game"""
        self._seat_games(np.arange(num_games))
        check_reward_equity(reward, equity)
        self.match_reward = MatchReward(game, self.engine, equity) if reward == MATCH else None
        """`reward='match'`'s equities of the games, from `equity`'s file or the table's shipped one (None
        with another reward)"""

    # ------------------------------------------------------------ seating
    def _policy(self, name: str, path: Path | None = None) -> int:
        if name not in self._index:
            self._index[name] = len(self.policies)
            self.policies.append(name)
            index = self._index[name]
            if path is not None:
                self._networks[index] = load_bot(path, self.game).network
                self._sampled[index] = not self.league.snapshot_deterministic
            elif name.startswith("bot:"):  # a bot spec plays as its BotAgent would, for all its games at once
                agent = make_agent(name, self.game)
                if isinstance(agent, BotAgent):
                    self._networks[index], self._sampled[index] = agent.network, agent.sample
        return self._index[name]

    def _refresh_pool(self) -> None:
        """Rescan the run's snapshots and the population's (as `League` does for the MaskablePPO trainer)."""
        league = self.league
        if league.snapshot_dir is not None and league.snapshot_share > 0:
            self._pool = list_snapshots(Path(league.snapshot_dir))[-league.pool_size:]
        if league.population_dir is not None and league.population_share > 0:
            found = list_population(Path(league.population_dir), league.learner)
            self._population = found[-league.population_size:]

    def _draw_seat(self) -> int:
        if self.rng.random() < self.learner_share:
            return LEARNER
        if self._pool and self.rng.random() < self.league.snapshot_share:
            path = self._pool[int(self.rng.integers(len(self._pool)))]
            return self._policy(path.stem, path)
        if self._population and self.rng.random() < self.league.population_share:
            path = self._population[int(self.rng.integers(len(self._population)))]
            return self._policy(path.stem, path)
        # rng.choice(len(p), p=p)'s own draw (one uniform against the cumulative weights), without its checks
        spec = self.league.opponents[int(self._spec_cdf.searchsorted(self.rng.random(), side="right"))][0]
        return self._policy(spec)

    def _seat_games(self, games: np.ndarray) -> None:
        """Draw the owners of every seat of these games (at each new episode: a deal, or a match's first)."""
        if games.size == 0:
            return
        self._refresh_pool()
        for b in games:
            kept = int(self.rng.integers(self.n))
            for seat in range(self.n):
                self.owners[b, seat] = LEARNER if seat == kept else self._draw_seat()

    # ------------------------------------------------------------ moves
    def observe(self) -> View:
        """(obs (B, obs_size), mask (B, A) bool, seat to move (B,), learner to move (B,) bool)."""
        seats = self.engine.current_player()
        return self._movers(seats, self.engine.observe(seats))

    def observe_with_table(self) -> tuple[View, np.ndarray]:
        """(`observe()`, `observe_table` of the seats to move), observing each seat once."""
        seats = self.engine.current_player()
        obs, table = movers_and_table(self.engine, seats, self.n)
        return self._movers(seats, obs), table

    def _movers(self, seats: np.ndarray, obs: np.ndarray) -> View:
        mask = self.engine.legal_mask()
        learner = self.owners[np.arange(self.num_games), seats] == LEARNER
        return obs, mask, seats, learner

    def step(self, learner_actions: np.ndarray,
             view: View | None = None,
             active: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """One move in every game: the given action where the learner is to move, the owner's elsewhere.

        `view`: what `observe()` just returned (saves computing it again);
        `active`: (B,) bool, the games that move (default all; the others wait).
        Returns (rewards (B, n) float32 for every seat, ended (B,) bool: the
        episode is over); an ended game starts a new one at once, its seats
        drawn again. Rewards are the AEC env's of the same ``reward`` and
        ``episode`` options: with "points", a won hand pays each seat minus its
        points over 100 (a truncated one 0); with "match" (match episodes, no
        AEC counterpart), each hand's end pays each seat its change of match
        equity (`cardlab.training.arena.match_reward`).
        """
        obs, mask, seats, learner = self.observe() if view is None else view
        actions = np.asarray(learner_actions, dtype=np.int64).copy()
        owner = self.owners[np.arange(self.num_games), seats]
        moving = np.ones(self.num_games, dtype=np.bool_) if active is None else np.asarray(active, bool)
        for policy in np.unique(owner[~learner & moving]):
            games = np.flatnonzero((owner == policy) & moving)
            network = self._networks.get(int(policy))
            if network is not None:
                actions[games] = self._network_actions(network, obs[games], mask[games],
                                                       self._sampled[int(policy)])
            else:
                actions[games] = self.players.act(int(policy), self.policies[int(policy)], obs[games],
                                                  mask[games])
        rewards, done, truncated = self.engine.step(actions, active)
        ended = done | truncated
        if self.reward == "points":
            won = done & ~truncated
            rewards = np.zeros_like(rewards)
            rewards[won] = points_reward(self.engine.score_changes()[won])
        elif self.match_reward is not None:
            rewards = self.match_reward.rewards()
        games = np.flatnonzero(ended)
        if games.size:
            self.engine.reset(games)
            self._seat_games(games)
            if self.match_reward is not None:
                self.match_reward.restart(games)
        return rewards, ended

    def _network_actions(self, network: nn.Module, obs: np.ndarray, mask: np.ndarray,
                         sampled: bool) -> np.ndarray:
        """A network's moves in its games (a snapshot's or a bot's): one forward pass, masked argmax or
        masked sample."""
        return network_actions(network, obs, mask, self.rng if sampled else None)

    def observe_seats(self) -> np.ndarray:
        """(B, n, obs_size): every seat's observation (to bootstrap values at a rollout's end)."""
        return seat_views(self.engine, self.num_games, self.n)

    def observe_table(self, first: np.ndarray) -> np.ndarray:
        """A privileged critic's input (module doc): every seat's observation from seat `first` on.

        `first` is (B,) or (B, k) seat indices; returns (B, n * obs_size) or
        (B, k, n * obs_size): in game b the observations of seats first, first + 1,
        ..., first + n - 1 (mod n), concatenated. Costs n engine calls.
        """
        return table_view(self.engine, first, self.n)


def seat_views(engine: Any, batch_size: int, num_players: int) -> np.ndarray:
    """(B, n, obs_size): every seat's observation in every game of a batched engine (n engine calls)."""
    return np.stack([engine.observe(np.full(batch_size, s, dtype=np.int64)) for s in range(num_players)],
                    axis=1)


def table_view(engine: Any, first: np.ndarray, num_players: int) -> np.ndarray:
    """`SelfPlayBatch.observe_table` of any batched engine (also what imitation's critic learns from)."""
    seat_obs = seat_views(engine, len(first), num_players)
    first = np.asarray(first, dtype=np.int64)
    order = (first[..., None] + np.arange(num_players)) % num_players
    rows = np.arange(len(first)).reshape((-1,) + (1,) * (order.ndim - 1))
    return seat_obs[rows, order].reshape(*first.shape, -1)


def movers_and_table(engine: Any, seats: np.ndarray, num_players: int) -> tuple[np.ndarray, np.ndarray]:
    """(the movers' observations (B, obs_size), `table_view` from the movers (B, n * obs_size)).

    An actor's input and a privileged critic's in n engine calls, not n + 1: the
    table view starts with the mover's own observation.
    """
    table = table_view(engine, seats, num_players)
    return table[:, : table.shape[1] // num_players], table


def credit(rewards: np.ndarray, ended: np.ndarray, seats: np.ndarray,
           learner: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each learner transition's reward, terminal flag and next index in its seat's chain (module doc).

    Inputs over a rollout of T calls of `SelfPlayBatch.step` on B games:
    rewards (T, B, n), ended (T, B), seats (T, B) (seat that moved), learner
    (T, B) (whether it was the learner's). Returns (reward (T, B) float32,
    terminal (T, B) bool, next_index (T, B) int64: the step of the same seat's
    next move in the same episode, -1 if none in the rollout); zero / False / -1
    where `learner` is False.
    """
    T, B, n = rewards.shape
    out_reward = np.zeros((T, B), dtype=np.float32)
    out_terminal = np.zeros((T, B), dtype=np.bool_)
    out_next = np.full((T, B), -1, dtype=np.int64)
    acc = np.zeros((B, n), dtype=np.float64)
    term = np.zeros((B, n), dtype=np.bool_)
    nxt = np.full((B, n), -1, dtype=np.int64)
    for t in range(T - 1, -1, -1):
        over = ended[t]
        acc[over], term[over], nxt[over] = 0.0, True, -1  # later steps belong to the next episode
        acc += rewards[t]
        rows = np.flatnonzero(learner[t])
        s = seats[t, rows]
        out_reward[t, rows] = acc[rows, s]
        out_terminal[t, rows] = term[rows, s]
        out_next[t, rows] = nxt[rows, s]
        acc[rows, s], term[rows, s], nxt[rows, s] = 0.0, False, t
    return out_reward, out_terminal, out_next


class SelfPlayVecEnv(VecEnv):
    """`SelfPlayBatch` as an SB3 `VecEnv`: env b is game b, the learner in one seat of it (module doc).

    Rewards are the learner seat's (its win reward when the hand ends,
    whoever ends it), observations and masks the learner seat's at each of its
    turns. A hand truncated at max_turns ends the episode like any other.
    """

    def __init__(self, game: Game, num_envs: int, league: LeagueSettings, seed: int | None = None) -> None:
        self.table = SelfPlayBatch(game, num_envs, league, learner_share=0.0, seed=seed)
        self.render_mode = None  # SB3 reads it; the games have no picture
        layout = game.layout
        super().__init__(num_envs, spaces.Box(layout.low, layout.high, dtype=np.float32),
                         spaces.Discrete(game.num_actions))
        self._actions = np.zeros(num_envs, dtype=np.int64)
        self._rows = np.arange(num_envs)
        self._view = self._advance(np.zeros(num_envs), np.zeros(num_envs, dtype=np.bool_))[2]

    def _learner_seats(self) -> np.ndarray:
        return (self.table.owners == LEARNER).argmax(axis=1)

    def _advance(self, returns: np.ndarray, done: np.ndarray) -> tuple[np.ndarray, np.ndarray, View]:
        """Play the other seats until the learner is to move in every game (rewards of unfinished hands)."""
        while True:
            view = self.table.observe()
            waiting = ~view[3]
            if not waiting.any():
                return returns, done, view
            seats = self._learner_seats()
            rewards, ended = self.table.step(np.zeros(self.num_envs, dtype=np.int64), view, active=waiting)
            returns += np.where(done, 0.0, rewards[self._rows, seats])
            done |= ended

    def reset(self) -> VecEnvObs:
        return self._view[0]

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions, dtype=np.int64)

    def step_wait(self) -> VecEnvStepReturn:
        seats = self._learner_seats()
        rewards, ended = self.table.step(self._actions, self._view)
        returns, done, self._view = self._advance(rewards[self._rows, seats].astype(np.float64), ended.copy())
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        for b in np.flatnonzero(done):
            infos[b]["terminal_observation"] = self._view[0][b]  # never read: no episode is cut by time
        return self._view[0], returns.astype(np.float32), done, infos

    def action_masks(self) -> np.ndarray:
        """(num_envs, num_actions) bool: the learner's legal actions (what MaskablePPO asks for)."""
        return self._view[1]

    def close(self) -> None:
        """Nothing to release: the games live in this process."""

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        return [getattr(self, attr_name) for _ in self._get_indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        setattr(self, attr_name, value)

    def env_method(self, method_name: str, *method_args: Any, indices: VecEnvIndices = None,
                   **method_kwargs: Any) -> list[Any]:
        if method_name == "action_masks":  # sb3-contrib's get_action_masks asks each env for its mask
            return [self._view[1][b] for b in self._get_indices(indices)]
        raise AttributeError(f"SelfPlayVecEnv has no per-env method {excerpt(method_name)}")

    def env_is_wrapped(self, wrapper_class: type, indices: VecEnvIndices = None) -> list[bool]:
        return [False for _ in self._get_indices(indices)]
