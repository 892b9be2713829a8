"""Imitation for the lean trainer: behaviour cloning of a teacher into the actor (and its outcomes into the
critic) before PPO, over the batched engine.

Why: from scratch, self-play reaches the expert's level at two players but
not at bigger tables in a short budget (Huit 4p stalled near 0.22 against
three experts, fair 0.25). Copying the expert first starts PPO at the
expert's level; its snapshots then give the league expert-like opponents
that play in one batched forward pass instead of move by move in Python.

The teacher plays every seat of `cfg.num_envs` games (as `cfg.imitation.teacher`):
one agent for all of them, asked once per move of the batch for every game's
move (`Agent.act_batch`: one forward pass for a bot, one kernel call for a
compiled heuristic), its one generator breaking the ties of all the games in
row order; every move is a demonstration, from the mover's point of view. The critic learns the
discounted outcome of each move in its seat's chain (`selfplay.credit`, GAE with
zero values and lambda 1: the Monte Carlo return); chains the collection cuts
short are dropped.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from stable_baselines3.common.logger import Logger
from torch import nn

from cardlab.agents.agent_spec import make_agent
from cardlab.agents.base import Agent
from cardlab.agents.failure import checked_actions
from cardlab.envs.game_spec import Game
from cardlab.training.arena.selfplay import batched_engine, credit, movers_and_table
from cardlab.training.harness.config import TrainConfig
from cardlab.training.harness.progress import Progress
from cardlab.training.trainers.ppo import advantages

IMITATION_SEED_OFFSET = 2_000_003
"""the demonstrations' seed is the run's plus this (the same offset as the MaskablePPO imitation's)"""
COLLECT_STEPS = 64
"""moves per game per collection round (one `credit` pass each)"""


def demonstrations(game: Game, teacher: str, hands: int, num_games: int, gamma: float, seed: int,
                   progress: Progress, privileged: bool = False) -> dict[str, torch.Tensor]:
    """At least `hands` finished hands of `teacher` play: obs, mask, actions, returns (flat tensors), and
    with `privileged` the critic's input, every seat's observation from the mover's on (`table_view`)."""
    seeds = np.random.SeedSequence(seed)
    engine = batched_engine(game, num_games, seed=int(seeds.generate_state(1)[0]))
    agent = make_agent(teacher, game, seed=int(seeds.spawn(1)[0].generate_state(1)[0]))
    parts: list[dict[str, torch.Tensor]] = []
    finished = 0
    with progress.bar(total=hands, desc=f"collecting {teacher} hands", unit="hand") as bar:
        progress.doing(lambda: f"imitation: {finished:,} of {hands:,} {teacher} hands collected")
        while finished < hands:
            part, ended = _collect(engine, agent, gamma, privileged, f"teacher {teacher}")
            parts.append(part)
            bar.update(min(finished + ended, hands) - finished)
            finished += ended
    return {key: torch.cat([p[key] for p in parts]) for key in parts[0]}


def _collect(eng: Any, agent: Agent, gamma: float, privileged: bool,
             who: str) -> tuple[dict[str, torch.Tensor], int]:
    """`COLLECT_STEPS` teacher moves in every game; the moves whose outcome is known, and the hands ended.
    A teacher that fails stops it with an `AgentFailure` naming `who` (`checked_actions`)."""
    B, n = eng.batch_size, eng.n
    obs_t: list[np.ndarray] = []
    mask_t: list[np.ndarray] = []
    act_t: list[np.ndarray] = []
    seats_t: list[np.ndarray] = []
    rewards_t: list[np.ndarray] = []
    ended_t: list[np.ndarray] = []
    critic_t: list[np.ndarray] = []
    for _ in range(COLLECT_STEPS):
        seats, mask = eng.current_player(), eng.legal_mask()
        if privileged:
            obs, table = movers_and_table(eng, seats, n)
            critic_t.append(table)
        else:
            obs = eng.observe(seats)
        actions = checked_actions(agent, obs, mask, who)
        rewards, done, truncated = eng.step(actions)
        ended = done | truncated
        eng.reset(ended)
        for store, value in zip((obs_t, mask_t, act_t, seats_t, rewards_t, ended_t),
                                (obs, mask, actions, seats, rewards, ended), strict=True):
            store.append(value)
    seats_all, ended_all = np.stack(seats_t), np.stack(ended_t)
    T = len(seats_t)
    reward, terminal, next_index = credit(np.stack(rewards_t), ended_all, seats_all,
                                          np.ones_like(seats_all, dtype=np.bool_))
    zeros = torch.zeros(reward.shape)
    returns = advantages(torch.from_numpy(reward), torch.from_numpy(terminal), torch.from_numpy(next_index),
                         zeros, torch.zeros(B, n), torch.from_numpy(seats_all), gamma, 1.0)
    known = _outcome_known(terminal, next_index).reshape(-1)
    obs_all, mask_all = np.stack(obs_t), np.stack(mask_t)
    part = {"obs": torch.from_numpy(obs_all.reshape(T * B, -1))[known],
            "mask": torch.from_numpy(mask_all.reshape(T * B, -1))[known],
            "actions": torch.from_numpy(np.stack(act_t)).reshape(-1)[known],
            "returns": returns.reshape(-1)[known]}
    critic = torch.from_numpy(np.stack(critic_t).reshape(T * B, -1))[known] if privileged else part["obs"]
    part["critic"] = critic
    return part, int(ended_all.sum())


def _outcome_known(terminal: np.ndarray, next_index: np.ndarray) -> torch.Tensor:
    """(T, B) bool: moves whose seat's chain reaches the end of its hand within the collection."""
    T, B = terminal.shape
    known = np.zeros((T, B), dtype=np.bool_)
    for t in range(T - 1, -1, -1):
        nxt = next_index[t]
        later = np.where(nxt >= 0, nxt, 0)
        known[t] = terminal[t] | ((nxt >= 0) & known[later, np.arange(B)])
    return torch.from_numpy(known)


def imitate(actor: nn.Module, critic: nn.Module, masked_logits: Any, cfg: TrainConfig, game: Game,
            progress: Progress, logger: Logger) -> float:
    """Clone `cfg.imitation.teacher` into `actor` (cross-entropy on masked logits) and its returns into
    `critic`; returns the share of demonstrations whose argmax the actor matches after the last epoch."""
    im = cfg.imitation
    progress.say(f"imitation: collecting {im.hands:,} hands of {im.teacher} play in {cfg.num_envs} games")
    data = demonstrations(game, im.teacher, im.hands, cfg.num_envs, cfg.ppo.gamma,
                          cfg.seed + IMITATION_SEED_OFFSET, progress, cfg.policy.privileged_critic)
    size = len(data["actions"])
    params = [*actor.parameters(), *critic.parameters()]
    optimizer = torch.optim.Adam(params, lr=im.learning_rate)
    generator = torch.Generator().manual_seed(cfg.seed)
    accuracy = 0.0
    for epoch in range(im.epochs):
        progress.doing(f"imitation: epoch {epoch + 1}/{im.epochs} on {size:,} {im.teacher} moves")
        totals = np.zeros(3)
        for idx in torch.randperm(size, generator=generator).split(im.batch_size):
            logits = masked_logits(data["obs"][idx], data["mask"][idx])
            policy_loss = nn.functional.cross_entropy(logits, data["actions"][idx])
            value_loss = nn.functional.mse_loss(critic(data["critic"][idx]).squeeze(-1), data["returns"][idx])
            optimizer.zero_grad()
            (policy_loss + cfg.ppo.vf_coef * value_loss).backward()
            nn.utils.clip_grad_norm_(params, cfg.ppo.max_grad_norm)
            optimizer.step()
            matched = (logits.argmax(-1) == data["actions"][idx]).float().sum()
            totals += np.array([policy_loss.item() * len(idx), value_loss.item() * len(idx), matched.item()])
        policy_loss_mean, value_loss_mean, accuracy = totals / size
        for name, value in (("policy_loss", policy_loss_mean), ("value_loss", value_loss_mean),
                            ("accuracy", accuracy)):
            logger.record(f"imitation/{name}", value)
        logger.dump(epoch)
        progress.say(f"imitation epoch {epoch + 1}/{im.epochs}: the actor's argmax matches {accuracy:.3f} of "
                     f"{size:,} {im.teacher} moves")
    return float(accuracy)
