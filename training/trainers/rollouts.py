"""A lean rollout in two halves: playing it (`play`) and turning it into PPO's batch (`score`).

Why two halves: an actor (`cardlab.training.trainers.actors`) plays with its copy of
the policy in its own process and sends what the games did (`Rollout`: the
observations, masks, actions and their log-probabilities, who moved, the
rewards and ends); the learner scores it. The single-process trainer
(``actors: 0``) does both in turn, with the same code.

`play` steps ``ppo.n_steps`` moves in every game of a `SelfPlayBatch`,
choosing the learner's moves from the actor's masked logits (`Player.choose`:
PPO samples them, DMC is epsilon-greedy). With
``values=True`` (the single process on the CPU) it also asks the critic for
each transition's value as it goes, as the trainer always did; an actor
leaves the values to the learner (it holds no critic), whose `score` asks its
own critic, the newest, over the whole rollout at once (`learner_values`).

`score` credits the rewards to each seat's chain (`selfplay.credit`), computes
GAE (`ppo.advantages`) and keeps the learner's transitions: the batch holds
the behaviour policy's log-probabilities (`logp`), against which PPO's ratio
is taken, so a rollout played by an older policy is corrected as far as the
clipped ratio allows (the actors' staleness, `docs/training.md`).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import torch

from cardlab.envs.match import POINTS_PER_REWARD
from cardlab.training.arena.selfplay import SelfPlayBatch, credit
from cardlab.training.harness.config import TrainConfig
from cardlab.training.trainers.hand_head import hand_targets, right_seat_share
from cardlab.training.trainers.lean_model import ActorCritic, Player, inputs
from cardlab.training.trainers.ppo import advantages


@dataclasses.dataclass
class Rollout:
    """T moves in B games as they were played (the module doc); the shapes are (T, B, ...)."""

    obs: torch.Tensor
    critic: torch.Tensor
    """the critic's inputs: every seat's observation with a privileged critic, else `obs` itself"""
    mask: torch.Tensor
    actions: torch.Tensor
    logp: torch.Tensor
    """log-probability of each learner move under the policy that played it (0 elsewhere)"""
    seats: np.ndarray
    learner: np.ndarray
    rewards: np.ndarray
    ended: np.ndarray
    hands: torch.Tensor
    """the other seats' hands (the hand head's targets; (T, B, 0) without the head)"""
    final_inputs: torch.Tensor
    """(B, n, critic inputs): every seat's critic input after the last move (the bootstrap of cut chains)"""
    values: torch.Tensor | None = None
    """(T, B): the playing critic's values; None: the learner's critic is asked (`learner_values`)"""
    last: torch.Tensor | None = None
    """(B, n): the playing critic's values of `final_inputs` (None with `values`)"""
    version: int = 0
    """how many updates the learner had made when the playing policy's weights were taken"""
    compact: bool = False
    """the per-move tensors hold the learner's moves alone, (K, ...) in (t, b) order (`cut`)"""
    returns: torch.Tensor | None = None
    """algorithm dmc: the Monte Carlo return of each row of `obs` and `actions`, which are then the learner
    moves whose episodes ended by this rollout's end (`dmc_model.MonteCarlo`); the other per-move tensors
    are empty"""

    def cut(self) -> Rollout:
        """The rollout with its per-move tensors cut to the learner's moves: what an actor sends (the other
        seats' moves are read by `credit` from the small arrays alone)."""
        keep = torch.tensor(self.learner.reshape(-1))
        obs = learner_rows(self.obs, keep)
        critic = obs if self.critic is self.obs else learner_rows(self.critic, keep)
        return dataclasses.replace(self, obs=obs, critic=critic, mask=learner_rows(self.mask, keep),
                                   actions=learner_rows(self.actions, keep),
                                   logp=learner_rows(self.logp, keep), hands=learner_rows(self.hands, keep),
                                   compact=True)

    def rows(self, x: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
        """The learner's rows of one of this rollout's per-move tensors (already so when `compact`)."""
        return x if self.compact else learner_rows(x, keep)


def learner_rows(x: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
    """(T, B, ...) -> (K, ...): the rows where `keep` (T * B,) is true, in (t, b) order."""
    return x.flatten(0, 1)[keep]


def play(model: ActorCritic | Player, table: SelfPlayBatch, cfg: TrainConfig, values: bool,
         generator: torch.Generator | None = None) -> Rollout:
    """`ppo.n_steps` moves in every game of `table`, the learner's chosen by `model` (`Player.choose`)."""
    T, B, n = cfg.ppo.n_steps, cfg.num_envs, table.n
    privileged, reading = cfg.policy.privileged_critic, model.hands is not None
    critic = model if isinstance(model, ActorCritic) else None  # DMC's Q network has none
    if critic is None and (privileged or values):
        raise ValueError("a critic's inputs and values need PPO's actor-critic, not DMC's Q network")
    layout = table.game.layout
    obs_b = torch.empty(T, B, layout.size)
    hands_b = torch.empty(T, B, model.hands.out_features if model.hands is not None else 0)
    critic_b = torch.empty(T, B, inputs(critic.critic)) if privileged and critic is not None else obs_b
    mask_b = torch.empty(T, B, table.game.num_actions, dtype=torch.bool)
    act_b = torch.empty(T, B, dtype=torch.long)
    logp_b = torch.empty(T, B)
    value_b = torch.empty(T, B) if values and critic is not None else None
    seats_b = np.empty((T, B), dtype=np.int64)
    learner_b = np.empty((T, B), dtype=np.bool_)
    rewards_b = np.empty((T, B, n), dtype=np.float32)
    ended_b = np.empty((T, B), dtype=np.bool_)
    with torch.no_grad():
        for t in range(T):
            if privileged or reading:
                view, seen = table.observe_with_table()
                if privileged:
                    critic_b[t] = torch.from_numpy(seen)
                if reading:
                    hands_b[t] = torch.from_numpy(hand_targets(seen, layout, n))
            else:
                view = table.observe()
            obs, mask, seats, learner = view
            obs_b[t], mask_b[t] = torch.from_numpy(obs), torch.from_numpy(mask)
            # The networks run on the learner's games only: the others' moves are their owners'.
            mine = None if learner.all() else torch.from_numpy(np.flatnonzero(learner))
            legal = mask_b[t] if mine is None else mask_b[t, mine]
            logits = model.masked_logits(obs_b[t] if mine is None else obs_b[t, mine], legal)
            action = model.choose(logits, legal, generator)
            logp = torch.log_softmax(logits, dim=-1).gather(1, action[:, None]).squeeze(1)
            if mine is None:
                act_b[t], logp_b[t] = action, logp
            else:
                act_b[t], logp_b[t] = 0, 0.0  # never read: not learner transitions
                act_b[t, mine], logp_b[t, mine] = action, logp
            if value_b is not None and critic is not None:
                value = critic.value(critic_b[t] if mine is None else critic_b[t, mine])
                if mine is None:
                    value_b[t] = value
                else:
                    value_b[t], value_b[t, mine] = 0.0, value
            seats_b[t], learner_b[t] = seats, learner
            rewards_b[t], ended_b[t] = table.step(act_b[t].numpy(), view)
        every_seat = np.broadcast_to(np.arange(n), (B, n))
        final = torch.from_numpy(table.observe_table(every_seat) if privileged else table.observe_seats())
        last = None if value_b is None or critic is None else critic.value(final)
    return Rollout(obs_b, critic_b, mask_b, act_b, logp_b, seats_b, learner_b, rewards_b, ended_b, hands_b,
                   final, value_b, last)


def learner_values(model: ActorCritic, rollout: Rollout, device: torch.device) -> tuple[torch.Tensor,
                                                                                        torch.Tensor]:
    """(values (T, B), last (B, n)) of a rollout by `model`'s critic on `device`, on the CPU (0 where the
    move is not the learner's: never read)."""
    T, B = rollout.learner.shape
    values = torch.zeros(T * B)
    mine = torch.tensor(rollout.learner.reshape(-1))  # a copy: Ray hands arrays over read-only
    critic = rollout.rows(rollout.critic, mine)
    with torch.no_grad():
        values[mine] = model.value(critic.to(device)).cpu()
        last = model.value(rollout.final_inputs.to(device)).cpu()
    return values.reshape(T, B), last


def score(rollout: Rollout, cfg: TrainConfig, model: ActorCritic,
          device: torch.device) -> tuple[dict[str, torch.Tensor], dict[str, float], int]:
    """(PPO's batch on `device`, the rollout's charts, its learner transitions) of a played rollout."""
    n = rollout.rewards.shape[2]
    if rollout.values is None or rollout.last is None:
        value_b, last = learner_values(model, rollout, device)
    else:
        value_b, last = rollout.values, rollout.last
    learner_b, ended_b = rollout.learner, rollout.ended
    reward, terminal, next_index = credit(rollout.rewards, ended_b, rollout.seats, learner_b)
    adv = advantages(torch.from_numpy(reward), torch.from_numpy(terminal),
                     torch.from_numpy(next_index), value_b, last, torch.tensor(rollout.seats),
                     cfg.ppo.gamma, cfg.ppo.gae_lambda)
    keep = torch.tensor(learner_b).reshape(-1)
    batch = {"obs": rollout.rows(rollout.obs, keep), "mask": rollout.rows(rollout.mask, keep),
             "actions": rollout.rows(rollout.actions, keep), "logp": rollout.rows(rollout.logp, keep),
             "advantages": adv.reshape(-1)[keep], "returns": (adv + value_b).reshape(-1)[keep]}
    privileged = cfg.policy.privileged_critic
    batch["critic"] = rollout.rows(rollout.critic, keep) if privileged else batch["obs"]
    reading = model.hands is not None
    if reading:
        batch["hands"] = rollout.rows(rollout.hands, keep)
    batch = {key: value.to(device) for key, value in batch.items()}
    stats = play_stats(rollout, cfg, reward[terminal])
    if reading:
        with torch.no_grad():  # before the update: positions the head never trained on
            read = model.read(batch["obs"])
            stats["charts/hands_right_seat"] = right_seat_share(read, batch["hands"], n)
    return batch, stats, int(keep.sum())


def play_stats(rollout: Rollout, cfg: TrainConfig, outcomes: np.ndarray) -> dict[str, float]:
    """The charts of how a rollout's games went: the learner's share of the moves and, where chains ended
    (`outcomes`: the rewards of their last transitions, `credit`'s), its win rate or hand points."""
    stats = {"charts/learner_share_of_moves": float(rollout.learner.mean())}
    if outcomes.size:
        if cfg.reward == "points":
            stats["charts/hand_points"] = float(-outcomes.mean() * POINTS_PER_REWARD)
        else:
            stats["charts/win_rate"] = float((outcomes > 0).mean())
        stats["charts/matches" if cfg.episode == "match" else "charts/hands"] = float(rollout.ended.sum())
    return stats
