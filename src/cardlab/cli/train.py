"""`cardlab train CONFIG.yaml`: a training run from a YAML config, or the resumption of one."""

from __future__ import annotations

import argparse
import pathlib

from cardlab.cli.common import Command, add_threads
from cardlab.envs.declared import missing_file


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The config, ``--resume``, ``--runs-dir`` and the threads of the bots a run plays."""
    p.add_argument("config", type=pathlib.Path, metavar="CONFIG.yaml",
                   help="the training config, e.g. configs/huit_ppo.yaml")
    p.add_argument("--resume", type=pathlib.Path, metavar="RUN_DIR",
                   help="continue this run folder from its last checkpoint (with the run's own config; only "
                        "total_timesteps, max_minutes, actors, device and the Ray address may change)")
    p.add_argument("--ray-address", metavar="ADDR",
                   help="run the config's actors (actors: N) as Ray actors: 'local' (a Ray started here), "
                        "'auto' or a cluster's HOST:PORT; the learner stays here (sets the config's "
                        "ray.address)")
    p.add_argument("--runs-dir", type=pathlib.Path, default=pathlib.Path("runs"), metavar="DIR",
                   help="where new run folders go (default: runs)")
    add_threads(p, "the bots a run plays (league snapshots, evaluations; the trainer's own come from the "
                   "config's torch_threads)")


def run(args: argparse.Namespace) -> int:
    """Train; the run prints its final evaluation. A missing config is refused before torch is imported."""
    if not args.config.is_file():
        raise missing_file("config file", args.config, "a config is a YAML file, e.g. configs/huit_ppo.yaml",
                           ".yaml")
    import dataclasses

    from cardlab.agents.bot import inference_threads
    from cardlab.training.harness.config import RayConfig, load_config
    from cardlab.training.trainers.train import train  # SB3 only for training

    inference_threads()  # a bad $CARDLAB_TORCH_THREADS is refused before a run folder is made
    cfg = load_config(args.config)
    if args.ray_address is not None:
        cfg = dataclasses.replace(cfg, ray=RayConfig(address=args.ray_address))
    remote = None
    if cfg.ray.address:
        from cardlab.cluster.lean_actors import RayActors, check_address

        check_address(cfg.ray.address)  # before the run folder is made
        remote = RayActors
    train(cfg, resume=args.resume, runs_dir=args.runs_dir, remote=remote)
    return 0


COMMAND = Command("train", "train a PPO bot from a YAML config", add_arguments, run)
