"""DouZero's deep Monte Carlo, the playing side: the Q network over (observation, move), epsilon-greedy
play, and the Monte Carlo returns of the played moves.

A move is read by its features (`move_features`: the rank laid, the suits
laid, the suit on top, the suit announced, how many cards, draw, pass), not
by its index alone, so that what Q learns of one move carries to moves that
share them. The network is in two towers, Q(s, a) = phi(s) . psi(a) + b(a):
phi is an MLP of ``policy.net_arch`` over the observation, psi an MLP over
the move's features. DouZero runs one MLP over the concatenated pair; the
two-tower form costs one forward pass of the observation per decision (as
PPO's actor does, against one per legal move) and folds into a plain actor
network: with psi over every move as the weights of a last Linear layer,
phi's layers then that layer give Q of every move as logits
(`QLearner.actor`). That actor is what the actors play, the league's
snapshots and the bot file hold (its masked argmax is Q's greedy move), so
every part of the lean trainer that plays an actor plays it unchanged.

`MonteCarlo` turns played rollouts into (observation, move, return)
triples, the return being the sum of the seat's rewards from its move to
its episode's end (gamma 1; the hand's reward for ``reward: win`` or
``points``, each hand's equity change for ``reward: match``); a move whose
episode ends in a later rollout waits for it.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import torch
from torch import nn

from cardlab.envs import cards as C
from cardlab.envs.game_spec import Game
from cardlab.training.harness.config import TrainConfig
from cardlab.training.harness.config_tables import header_game
from cardlab.training.trainers.lean_model import ActorCritic, mlp, new_model
from cardlab.training.trainers.ppo import ILLEGAL_LOGIT
from cardlab.training.trainers.rollouts import Rollout, learner_rows

RANK, SUITS = 0, C.NUM_RANKS + 1
TOP, DECLARED = SUITS + C.NUM_SUITS, SUITS + 2 * C.NUM_SUITS
COUNT = DECLARED + C.NUM_SUITS
DRAW, PASS = COUNT + 1, COUNT + 2
MOVE_FEATURES = PASS + 1
"""a move's features: its rank one-hot (the joker last), the suits it lays, the suit on top, the suit
announced, the cards laid / 4, draw, pass"""
MOVE_HIDDEN = 64
"""the move tower's hidden layer"""


def move_features(game: Game) -> np.ndarray:
    """(number of actions, `MOVE_FEATURES`) float32: each action id's features in `game` (module doc), from
    the game's `GameSpec.move_facts`; a game without them is refused in one line."""
    facts = game.spec.move_facts
    if facts is None:
        raise ValueError(f"algorithm: dmc reads moves by their features, and the game {game.spec.id!r} "
                         "declares none (GameSpec.move_facts): use algorithm: ppo")
    out = np.zeros((game.num_actions, MOVE_FEATURES), dtype=np.float32)
    for action in range(game.num_actions):
        row, move = out[action], facts(action)
        if move.draw or move.passes:
            row[DRAW if move.draw else PASS] = 1.0
            continue
        if move.rank >= 0:
            row[RANK + move.rank] = 1.0
        row[SUITS:SUITS + C.NUM_SUITS] = [move.suits >> s & 1 for s in range(C.NUM_SUITS)]
        if move.top != C.NO_SUIT:
            row[TOP + move.top] = 1.0
        if move.declared != C.NO_SUIT:
            row[DECLARED + move.declared] = 1.0
        row[COUNT] = move.cards / C.NUM_SUITS
    return out


def epsilon_greedy(q: torch.Tensor, mask: torch.Tensor, epsilon: float,
                   generator: torch.Generator | None = None) -> torch.Tensor:
    """(N,) moves: the argmax of the masked `q` (N, A), or with probability `epsilon` a legal move drawn
    uniformly (`mask` (N, A) bool; every row has a legal move). Never an illegal one."""
    greedy = q.masked_fill(~mask, -torch.inf).argmax(dim=-1)
    draws = torch.rand(mask.shape, generator=generator, device=mask.device)
    uniform = draws.masked_fill(~mask, -1.0).argmax(dim=-1)
    explore = torch.rand(len(q), generator=generator, device=mask.device) < epsilon
    return torch.where(explore, uniform, greedy)


class QLearner(nn.Module):
    """Q(s, a) = phi(s) . psi(features(a)) + b(a) (module doc), with `actor` its folded form.

    `actor` shares phi's layers and ends in a Linear layer whose weights are
    psi over every move, set by `fold` (after each update); it is never
    trained itself. `hands` is None (no hand head): what `rollouts.play` reads.
    """

    def __init__(self, obs_size: int, features: np.ndarray, net_arch: list[int], activation: str,
                 epsilon: float) -> None:
        super().__init__()
        width = net_arch[-1]
        self.state = nn.Sequential(*list(mlp([obs_size, *net_arch, width], activation, 1.0))[:-1])
        self.moves = mlp([MOVE_FEATURES, MOVE_HIDDEN, width + 1], activation, 0.01)  # Q about 0 at first
        self.register_buffer("features", torch.from_numpy(features))
        self.head = nn.Linear(width, len(features)).requires_grad_(False)
        self.actor = nn.Sequential(*self.state, self.head)
        self.hands: nn.Linear | None = None
        self.epsilon = epsilon
        self.fold()

    def embed(self) -> tuple[torch.Tensor, torch.Tensor]:
        """(psi (A, width), b (A,)) of every move."""
        out = self.moves(self.features)
        return out[:, :-1], out[:, -1]

    def q(self, obs: torch.Tensor, actions: torch.Tensor) -> torch.Tensor:
        """Q of each (observation, move) pair: (N, obs) and (N,) -> (N,), with gradients."""
        weight, bias = self.embed()
        return (self.state(obs) * weight[actions]).sum(-1) + bias[actions]

    @torch.no_grad()
    def fold(self) -> None:
        """Write psi and b of every move into `actor`'s last layer (its logits are then Q of every move)."""
        weight, bias = self.embed()
        self.head.weight.copy_(weight)
        self.head.bias.copy_(bias)

    def masked_logits(self, obs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return self.actor(obs).masked_fill(~mask, ILLEGAL_LOGIT)

    def choose(self, logits: torch.Tensor, mask: torch.Tensor,
               generator: torch.Generator | None = None) -> torch.Tensor:
        """Epsilon-greedy over the legal moves (training's play)."""
        return epsilon_greedy(logits, mask, self.epsilon, generator)


def build_model(cfg: TrainConfig) -> ActorCritic | QLearner:
    """The lean trainer's network for `cfg.algorithm`: PPO's actor-critic, or DMC's Q network."""
    if cfg.algorithm != "dmc":
        return new_model(cfg)
    game = header_game(cfg)
    return QLearner(game.layout.size, move_features(game), list(cfg.policy.net_arch), cfg.policy.activation,
                    cfg.dmc.epsilon)


def returns_to_go(rewards: np.ndarray, ended: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(R (T, B, n), open (T, B)) of a rollout: R[t, b, s] the sum of seat s's rewards from step t to the end
    of the episode under way at step t (or to the rollout's end), open[t, b] whether that episode is still
    under way after the rollout's last step."""
    T = len(rewards)
    R = np.zeros(rewards.shape, dtype=np.float64)
    still = np.zeros(ended.shape, dtype=np.bool_)
    after, going = np.zeros(rewards.shape[1:]), np.ones(ended.shape[1], dtype=np.bool_)
    for t in range(T - 1, -1, -1):
        after = rewards[t] + np.where(ended[t][:, None], 0.0, after)
        going = ~ended[t] & going
        R[t], still[t] = after, going
    return R, still


class MonteCarlo:
    """The moves of one table's games waiting for their episodes to end, and the returns of those that did.

    `finish` takes each rollout of the table in turn (every move, not `Rollout.cut`) and gives it back with
    its per-move rows the learner moves finished by its end (those of earlier rollouts whose episode ended
    in it, then its own) and their `Rollout.returns`; the small arrays (who moved, rewards, ends) are its own.
    """

    def __init__(self) -> None:
        self.obs: torch.Tensor | None = None
        self.actions = torch.empty(0, dtype=torch.long)
        self.games = np.empty(0, dtype=np.int64)
        self.seats = np.empty(0, dtype=np.int64)
        self.sums = np.empty(0, dtype=np.float64)

    def finish(self, rollout: Rollout) -> Rollout:
        assert not rollout.compact, "MonteCarlo reads every move of a rollout: finish it before any cut"
        R, still = returns_to_go(rollout.rewards, rollout.ended)
        keep = torch.tensor(rollout.learner.reshape(-1))
        t_idx, b_idx = np.nonzero(rollout.learner)  # (t, b) order, as learner_rows
        seats = rollout.seats[t_idx, b_idx]
        obs, actions = learner_rows(rollout.obs, keep), learner_rows(rollout.actions, keep)
        pending_sums = self.sums + R[0, self.games, self.seats]
        pending_done = ~still[0, self.games]
        sums = np.concatenate([pending_sums, R[t_idx, b_idx, seats]])
        done = np.concatenate([pending_done, ~still[t_idx, b_idx]])
        all_obs = obs if self.obs is None else torch.cat([self.obs, obs])
        all_actions = torch.cat([self.actions, actions])
        games, all_seats = np.concatenate([self.games, b_idx]), np.concatenate([self.seats, seats])
        ready, wait = torch.from_numpy(done), torch.from_numpy(~done)
        self.obs, self.actions = all_obs[wait], all_actions[wait]
        self.games, self.seats, self.sums = games[~done], all_seats[~done], sums[~done]
        none = torch.empty(0)
        return dataclasses.replace(rollout, obs=all_obs[ready], critic=none, mask=none,
                                   actions=all_actions[ready], logp=none, hands=none, final_inputs=none,
                                   returns=torch.from_numpy(sums[done]).float(), compact=True)
