"""`cardlab export`: a bot file from a run folder or one of its checkpoints (this machine's runs only)."""

from __future__ import annotations

import argparse
import pathlib
from typing import Any

from cardlab.cli.common import Command


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The run folder or checkpoint, and the bot to write."""
    p.add_argument("source", type=pathlib.Path, metavar="RUN_DIR_OR_CHECKPOINT_ZIP",
                   help="a run folder (its last checkpoint) or one of its checkpoints/model_<steps>.zip")
    p.add_argument("-o", "--output", required=True, type=pathlib.Path, metavar="PATH",
                   help="the bot to write: PATH.json and PATH.safetensors (a folder gets bot.json in it)")


def checkpoint_and_run(source: pathlib.Path) -> tuple[pathlib.Path, pathlib.Path]:
    """(checkpoint .zip, run folder) of a run folder (its last checkpoint) or of a checkpoint file.

    A checkpoint file must be RUN/checkpoints/model_<steps>.zip: its run's
    record is what allows loading it (`cardlab.training.checkpoints`).
    """
    from cardlab.training.checkpoints import list_checkpoints, run_of_checkpoint

    if source.is_dir():
        found = list_checkpoints(source)
        if not found:
            raise ValueError(f"{source} has no checkpoints/model_<steps>.zip (is it a run folder?)")
        return found[-1], source
    if source.suffix != ".zip" or not source.is_file():
        raise ValueError(f"{source}: expected a run folder or an existing checkpoint .zip")
    return source, run_of_checkpoint(source)


def run(args: argparse.Namespace) -> int:
    """Load the checkpoint with its run's config (either trainer) and write the bot's two files."""
    from cardlab.agents.bot import export_bot
    from cardlab.training.checkpoints import load_checkpoint
    from cardlab.training.config import config_to_dict, load_config

    checkpoint, run_dir = checkpoint_and_run(args.source)
    config_path = run_dir / "config.yaml"
    if not config_path.is_file():
        raise ValueError(f"no config.yaml in {run_dir}: the run's config names the game and rules of "
                         f"{checkpoint}")
    cfg = load_config(config_path)
    # Only a checkpoint this machine's run saved is loaded.
    policy: Any
    if cfg.trainer == "lean":
        from cardlab.training.lean import ALGORITHM, load_actor

        algorithm, (policy, steps) = ALGORITHM, load_actor(checkpoint, run_dir, cfg)
    else:
        model = load_checkpoint(checkpoint, run_dir, device="cpu")
        algorithm, policy, steps = "MaskablePPO", model.policy, int(model.num_timesteps)
    summary = {"algorithm": algorithm, "run": run_dir.name, "checkpoint": checkpoint.name,
               "steps": steps, "config": config_to_dict(cfg)}
    path = export_bot(policy, args.output, game=cfg.game, rules=cfg.rules, num_players=cfg.num_players,
                      summary=summary)
    print(f"wrote {path} and {path.with_suffix('.safetensors')} ({cfg.game}, {cfg.num_players} players, "
          f"{steps:,} steps)")
    return 0


COMMAND = Command("export", "write a bot file from a run folder or a checkpoint .zip of a run on this "
                  "machine (checked against the run's checkpoints/SHA256SUMS)", add_arguments, run)
