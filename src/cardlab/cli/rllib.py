"""`cardlab rllib CONFIG.yaml`: RLlib's multi-agent PPO, one shared policy for all seats (the rllib extra)."""

from __future__ import annotations

import argparse
import dataclasses
import pathlib

from cardlab.cli.common import ADDRESS_HELP, Command, whole


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The config, the runs folder, the Ray to run on and its env runners."""
    p.add_argument("config", type=pathlib.Path, metavar="CONFIG.yaml",
                   help="a training config, e.g. configs/huit_rllib.yaml (docs/own-algorithm.md: the keys "
                        "RLlib reads)")
    p.add_argument("--runs-dir", type=pathlib.Path, default=pathlib.Path("runs"), metavar="DIR",
                   help="where the run folder goes (default: runs)")
    p.add_argument("--env-runners", type=whole(0), metavar="N",
                   help="Ray actors that play games, each with num_envs envs (default: the config's "
                        "rllib.num_env_runners; 0 samples in this process)")
    p.add_argument("--ray-address", metavar="ADDR", help=ADDRESS_HELP)


def run(args: argparse.Namespace) -> int:
    """Train, export the bot and evaluate it; a missing config or RLlib is refused before Ray starts."""
    from cardlab.cluster.rllib import check_rllib_config, import_rllib, train_rllib
    from cardlab.training.harness.config import load_config, validate_config

    if not args.config.is_file():
        raise ValueError(f"config file {args.config} does not exist: give a YAML config, e.g. "
                         "configs/huit_rllib.yaml")
    cfg = load_config(args.config)
    if args.env_runners is not None:
        cfg = validate_config(dataclasses.replace(
            cfg, rllib=dataclasses.replace(cfg.rllib, num_env_runners=args.env_runners)))
    check_rllib_config(cfg)
    import_rllib()
    train_rllib(cfg, runs_dir=args.runs_dir, address=args.ray_address)
    return 0


COMMAND = Command("rllib", "RLlib multi-agent PPO from a training config, on a local Ray or a cluster; "
                  "writes a bot file", add_arguments, run)
