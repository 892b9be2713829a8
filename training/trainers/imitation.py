"""Imitation: behaviour cloning of a teacher agent into a fresh MaskablePPO policy before PPO.

A warm start: the policy first copies the teacher's moves (and the critic
their outcomes), so PPO begins from sensible play instead of random moves.
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import numpy as np
import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.vec_env import VecEnv

from cardlab.training.harness.config import (
    TrainConfig,
)
from cardlab.training.harness.progress import Progress
from cardlab.training.trainers.vec_env import make_vec_env, stop_workers

IMITATION_SEED_OFFSET = 2_000_003


def imitate(model: MaskablePPO, env: VecEnv, cfg: TrainConfig, league_dir: Path, progress: Progress) -> None:
    """Behaviour cloning of `cfg.imitation.teacher` into the actor (and its outcomes into the critic).

    The demonstrations are collected by env processes in parallel
    (`SingleSeatEnv.demonstrate`); the losses and the share of teacher moves
    the policy's argmax matches go to TensorBoard under ``imitation/``, per epoch.
    """
    im = cfg.imitation
    data = _demonstrations(env, cfg, league_dir, progress)
    size = len(data["actions"])
    optimizer = torch.optim.Adam(model.policy.parameters(), lr=im.learning_rate)
    rng = np.random.default_rng(cfg.seed)
    model.policy.set_training_mode(True)
    for epoch in progress.bar(iterable=range(im.epochs), desc=f"imitating {im.teacher} ({size:,} moves)",
                              unit="epoch"):
        progress.doing(f"imitation: epoch {epoch + 1}/{im.epochs} on {size:,} {im.teacher} moves")
        totals = np.zeros(3)
        for idx in np.array_split(rng.permutation(size), max(1, size // im.batch_size)):
            batch = {key: value[torch.as_tensor(idx)] for key, value in data.items()}
            totals += len(idx) * np.array(_imitation_step(model, optimizer, batch, cfg))
        for name, value in zip(("policy_loss", "value_loss", "accuracy"), totals / size, strict=True):
            model.logger.record(f"imitation/{name}", value)
        model.logger.dump(epoch)
        if not progress.bars:
            progress.say(f"imitation epoch {epoch + 1}/{im.epochs}: the policy's argmax matches "
                         f"{totals[2] / size:.3f} of the teacher's moves")
    model.policy.set_training_mode(False)


DEMONSTRATION_CHUNKS = 10
"""demonstrations are collected in this many steps, to show progress (the data is the same as in one)"""


def _demonstrations(env: VecEnv, cfg: TrainConfig, league_dir: Path,
                    progress: Progress) -> dict[str, torch.Tensor]:
    """The teacher's demonstrations, collected in worker processes even when training runs in one."""
    im = cfg.imitation
    per_env = math.ceil(im.hands / cfg.num_envs)
    total = per_env * cfg.num_envs
    progress.say(f"imitation: collecting {total:,} hands of {im.teacher} play in {cfg.num_envs} env(s)")
    sizes = [len(part) for part in np.array_split(np.arange(per_env), min(DEMONSTRATION_CHUNKS, per_env))]
    workers = env
    if cfg.vec_env == "dummy" and cfg.num_envs > 1:
        workers = make_vec_env(dataclasses.replace(cfg, vec_env="subproc"), league_dir)
    chunks: list[list[dict[str, np.ndarray]]] = []  # chunks[k][e]: chunk k of env e
    try:
        workers.seed(cfg.seed + IMITATION_SEED_OFFSET)
        workers.reset()
        done = 0
        progress.doing(lambda: f"imitation: {done:,} of {total:,} hands collected")
        with progress.bar(total=total, desc=f"collecting {im.teacher} hands", unit="hand") as bar:
            for k, size in enumerate(sizes):
                # Later chunks keep each env's teacher: the data is what one call of `per_env` hands gives.
                chunks.append(workers.env_method("demonstrate", im.teacher, size, cfg.ppo.gamma, k > 0))
                done += size * cfg.num_envs
                bar.update(size * cfg.num_envs)
                progress.heartbeat(progress.status)
        if not progress.bars:  # a log's line that the collection is over (a bar shows it on a terminal)
            progress.say(f"imitation: {done:,} of {total:,} hands collected")
    except KeyboardInterrupt:
        if workers is not env:
            stop_workers(workers)
        raise
    finally:
        if workers is not env:
            workers.close()
    parts = [chunk[e] for e in range(cfg.num_envs) for chunk in chunks]  # env by env, as one call each
    return {key: torch.as_tensor(np.concatenate([part[key] for part in parts])) for key in parts[0]}


def _imitation_step(model: MaskablePPO, optimizer: torch.optim.Optimizer, batch: dict[str, torch.Tensor],
                    cfg: TrainConfig) -> tuple[float, float, float]:
    """One gradient step on a minibatch of demonstrations: (policy loss, value loss, argmax accuracy)."""
    policy = model.policy
    obs, actions, masks = batch["observations"], batch["actions"], batch["masks"]
    values, log_prob, _ = policy.evaluate_actions(obs, actions, action_masks=masks)
    policy_loss = -log_prob.mean()
    value_loss = torch.nn.functional.mse_loss(values.flatten(), batch["returns"])
    optimizer.zero_grad()
    (policy_loss + cfg.ppo.vf_coef * value_loss).backward()
    torch.nn.utils.clip_grad_norm_(policy.parameters(), cfg.ppo.max_grad_norm)
    optimizer.step()
    with torch.no_grad():
        chosen = policy.get_distribution(obs, action_masks=masks.numpy()).mode()  # the masked argmax
        accuracy = (chosen == actions).float().mean()
    return policy_loss.item(), value_loss.item(), accuracy.item()
