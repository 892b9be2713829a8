"""`cardlab export`: a bot from a run folder or one of its checkpoints (this machine's runs only), as a bot
file or as an ONNX bot; an ONNX bot also from any bot file (``bot:NAME``, a bot's ``.json``)."""

from __future__ import annotations

import argparse
import pathlib
from typing import Any

from cardlab.cli.common import Command


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The run folder, checkpoint or bot, the format and the bot to write."""
    p.add_argument("source", metavar="RUN_DIR_OR_CHECKPOINT_ZIP",
                   help="a run folder (its last checkpoint) or one of its checkpoints/model_<steps>.zip; "
                        "with --format onnx also a bot: bot:NAME (a shipped bot) or a bot's .json")
    p.add_argument("-o", "--output", required=True, type=pathlib.Path, metavar="PATH",
                   help="the bot to write: PATH.json and PATH.safetensors, or PATH.onnx with --format onnx "
                        "(a folder gets bot.json in it)")
    p.add_argument("--force", action="store_true",
                   help="replace the bot's files where they exist already (refused without it)")
    p.add_argument("--format", choices=FORMATS, default=FORMATS[0],
                   help="bot: a bot file (default); onnx: an ONNX bot, the same policy as an ONNX graph that "
                        "any onnxruntime plays")


def checkpoint_and_run(source: pathlib.Path) -> tuple[pathlib.Path, pathlib.Path]:
    """(checkpoint .zip, run folder) of a run folder (its last checkpoint) or of a checkpoint file.

    A checkpoint file must be RUN/checkpoints/model_<steps>.zip: its run's
    record is what allows loading it (`cardlab.training.harness.checkpoints`).
    """
    from cardlab.training.harness.checkpoints import list_checkpoints, run_of_checkpoint

    if source.is_dir():
        found = list_checkpoints(source)
        if not found:
            raise ValueError(f"{source} has no checkpoints/model_<steps>.zip (is it a run folder?)")
        return found[-1], source
    if source.suffix != ".zip" or not source.is_file():
        why = "is not a checkpoint .zip" if source.exists() else "does not exist"
        raise ValueError(f"{source} {why}: expected a run folder or an existing checkpoint .zip")
    return source, run_of_checkpoint(source)


FORMATS = ("bot", "onnx")


def checked_target(output: pathlib.Path, suffix: str, force: bool) -> None:
    """Refuse an `-o` that would write anywhere but regular files in an existing folder, or replace a bot.

    Why: export wrote ``/dev/null.json`` for ``-o /dev/null``, made missing
    parent folders anywhere, and replaced a bot's pair without a word. Its
    files (``NAME.json`` and ``NAME`` + `suffix`, or ``bot.json`` and its pair in a
    folder) must be new files in an existing folder, or existing regular files
    with `force`.
    """
    from cardlab.agents.bot import bot_paths

    output = output.expanduser()
    accepted = "give -o NAME (NAME.json and its pair are written) or a folder (bot.json in it)"
    if output.exists() and not (output.is_dir() or output.is_file()):
        raise ValueError(f"-o {output}: not a regular file or a folder; {accepted}, in an existing folder")
    meta_path = bot_paths(output)[0]
    if not meta_path.parent.is_dir():
        raise ValueError(f"-o {output}: the folder {meta_path.parent} does not exist; create it first, or "
                         f"{accepted} in an existing folder")
    for path in (meta_path, meta_path.with_name(meta_path.stem + suffix)):
        if path.exists() and not path.is_file():
            raise ValueError(f"-o {output}: {path} exists and is not a regular file; {accepted}, new files "
                             "or a bot's regular files")
        if path.exists() and not force:
            raise ValueError(f"-o {output}: {path} exists already; give --force to replace the bot's files, "
                             "or another -o")


def export_loaded_bot(source: str, output: pathlib.Path) -> int:
    """Write an ONNX bot of a bot (shipped or a file): the same network, its table and summary."""
    from cardlab.agents.agent_spec import bot_source
    from cardlab.agents.bot import ONNX_FORMAT, BotAgent, export_onnx, load_bot

    bot: BotAgent = load_bot(bot_source(source if source.startswith("bot:") else f"bot:{source}"))
    if bot.metadata["format"] == ONNX_FORMAT:
        raise ValueError(f"{source} is an ONNX bot already: it plays as it is (bot:PATH)")
    summary = {**bot.metadata["summary"], "exported_from": source}
    path = export_onnx(bot.network, output, game=bot.game, summary=summary)
    print(f"wrote {path} and {path.with_suffix('.onnx')} ({bot.game.id}, {bot.game.num_players} players, "
          f"from {source})")
    return 0


def run(args: argparse.Namespace) -> int:
    """Load the checkpoint with its run's config (either trainer) and write the bot's two files."""
    from cardlab.agents.bot import actor_network, export_bot, export_onnx
    from cardlab.training.harness.checkpoints import load_checkpoint
    from cardlab.training.harness.config import config_to_dict, load_config

    text = str(args.source)
    source = pathlib.Path(text).expanduser()
    checked_target(args.output, ".onnx" if args.format == "onnx" else ".safetensors", args.force)
    if text.startswith("bot:") or source.suffix == ".json":
        if args.format != "onnx":
            raise ValueError(f"{text} is a bot already: give --format onnx to write it as an ONNX bot, or a "
                             "run folder or checkpoint .zip to write a bot file")
        return export_loaded_bot(text, args.output)
    checkpoint, run_dir = checkpoint_and_run(source)
    config_path = run_dir / "config.yaml"
    if not config_path.is_file():
        raise ValueError(f"no config.yaml in {run_dir}: the run's config names the game and rules of "
                         f"{checkpoint}")
    cfg = load_config(config_path)
    # Only a checkpoint this machine's run saved is loaded.
    policy: Any
    if cfg.trainer == "lean":
        from cardlab.training.trainers.lean import ALGORITHMS, load_actor

        algorithm, (policy, steps) = ALGORITHMS[cfg.algorithm], load_actor(checkpoint, run_dir, cfg)
    else:
        model = load_checkpoint(checkpoint, run_dir, device="cpu")
        algorithm, policy, steps = "MaskablePPO", model.policy, int(model.num_timesteps)
    summary = {"algorithm": algorithm, "run": run_dir.name, "checkpoint": checkpoint.name,
               "steps": steps, "config": config_to_dict(cfg)}
    table: dict[str, Any] = {"game": cfg.game, "rules": cfg.rules, "num_players": cfg.num_players,
                             "summary": summary}
    if args.format == "onnx":
        path = export_onnx(actor_network(policy), args.output, **table)
        written = path.with_suffix(".onnx")
    else:
        path = export_bot(policy, args.output, **table)
        written = path.with_suffix(".safetensors")
    print(f"wrote {path} and {written} ({cfg.game}, {cfg.num_players} players, {steps:,} steps)")
    return 0


COMMAND = Command("export", "write a bot file or an ONNX bot from a run folder or a checkpoint .zip of a run "
                  "on this machine (checked against the run's checkpoints/SHA256SUMS), or an ONNX bot from a "
                  "bot file", add_arguments, run)
