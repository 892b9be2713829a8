"""The single-seat training envs of the MaskablePPO trainer, in one process or in worker processes.
"""

from __future__ import annotations

import signal
from collections.abc import Callable
from pathlib import Path

import gymnasium
import torch
from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv, VecEnv, VecMonitor

from cardlab.training.arena.league import (
    LeagueSettings,
)
from cardlab.training.arena.single_seat import SingleSeatEnv
from cardlab.training.harness.config import (
    TrainConfig,
)
from cardlab.training.harness.runs import league_settings


class EnvFactory:
    """Builds one training env (picklable, for SubprocVecEnv's worker processes)."""

    def __init__(self, cfg: TrainConfig, league: LeagueSettings, worker: bool) -> None:
        self.game, self.num_players, self.rules = cfg.game, cfg.num_players, dict(cfg.rules)
        self.reward = cfg.reward
        self.privileged, self.skip_forced = cfg.policy.privileged_critic, cfg.skip_forced_moves
        self.league = league
        self.worker = worker

    def __call__(self) -> SingleSeatEnv:
        if self.worker:
            torch.set_num_threads(1)  # one core per worker; snapshots play small nets
            # Ctrl-C reaches every process of the terminal: the trainer stops the workers itself, so they
            # neither print a traceback each nor die while the trainer still talks to them.
            signal.signal(signal.SIGINT, signal.SIG_IGN)
        return SingleSeatEnv(self.game, self.num_players, self.rules, opponents=self.league,
                             reward=self.reward, privileged=self.privileged, skip_forced=self.skip_forced)


def stop_workers(vec: VecEnv) -> None:
    """After Ctrl-C: end a SubprocVecEnv's workers at once (a worker busy sending a result would keep
    `close` waiting for ever); a no-op for other envs."""
    inner = getattr(vec, "venv", vec)
    if isinstance(inner, SubprocVecEnv) and not inner.closed:
        for process in inner.processes:
            process.terminate()
        for process in inner.processes:
            process.join(timeout=10)
        inner.closed = True


def make_vec_env(cfg: TrainConfig, league_dir: Path) -> VecEnv:
    """`num_envs` single-seat envs (SubprocVecEnv or DummyVecEnv, per `vec_env`), with episode stats."""
    league = league_settings(cfg, league_dir)
    subproc = cfg.vec_env == "subproc"
    # Typed as SB3 asks (its parameter is a list, which is invariant in its element type).
    factories: list[Callable[[], gymnasium.Env]] = [
        EnvFactory(cfg, league, worker=subproc) for _ in range(cfg.num_envs)
    ]
    vec: VecEnv = SubprocVecEnv(factories) if subproc else DummyVecEnv(factories)
    return VecMonitor(vec)
