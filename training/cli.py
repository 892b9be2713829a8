"""The `cardlab` command line: train, evaluate, run tournaments, export bots, play, show layouts.

```
cardlab train CONFIG.yaml [--resume RUN_DIR] [--runs-dir DIR] [--torch-threads N]
cardlab eval --game G --agents SPEC [SPEC ...] --hands N [--matches N] [--seed S] [--rule k=v ...]
             [--json F] [--csv F] [--plot F.png] [--torch-threads N]
cardlab tournament --game G --agents SPEC SPEC [...] --hands N [--seed S] [--rule k=v ...] [outputs, threads
                   as eval]
cardlab sweep SWEEP.yaml [--sweeps-dir DIR] [--workers N] [--ray-address ADDR]   # Ray Tune (the ray extra)
cardlab export RUN_DIR_OR_CHECKPOINT_ZIP -o PATH      # only checkpoints of this machine's runs
cardlab play GAME --opponents SPEC [SPEC ...] [--hands N] [--seed S] [--seat K] [--rule k=v ...]
             [--torch-threads N]
cardlab rules GAME [--rule k=v ...] [--markdown]
```

Agent specs: ``random``, ``greedy``, ``expert``, ``bot:PATH`` (a bot's
``NAME.json``, or a run folder for the bot it wrote). Lists of agents
(``--agents``, ``--opponents``) are space-separated, and commas are accepted
too: ``--agents random greedy`` = ``--agents random,greedy``. ``--rule k=v``
sets a rule option, v read as a YAML scalar (``true``, ``7``, ``all``);
`cardlab rules GAME` lists them.

eval and tournament also take ``--workers N`` and ``--ray-address ADDR``: the
same results, played by Ray workers (`cardlab.cluster`, the ray extra).

Bots run their network on one torch thread (`cardlab.agents.bot`), or on
``--torch-threads N`` / ``$CARDLAB_TORCH_THREADS``.

Bad input (unknown spec, bad rule option, missing file) prints one line on
stderr and exits with status 2; Ctrl-C stops a command with one line and
status 130 (``train`` names the run folder and the command that resumes it);
a closed output pipe (``| head``) ends the command quietly.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import os
import pathlib
import shlex
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import yaml

from cardlab.agents.base import THREADS_ENV
from cardlab.cluster.cli import add_ray_options, add_sweep_command, cmd_sweep, evaluator, tournament_runner
from cardlab.envs import games

USAGE_ERROR = 2
INTERRUPTED = 130  # 128 + SIGINT, what shells report for a command stopped by Ctrl-C


# ---------------------------------------------------------------- argument types
def parse_rule(text: str) -> tuple[str, Any]:
    """``k=v`` -> (k, v) with v a YAML scalar."""
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise ValueError(f"--rule {text!r}: expected key=value, e.g. --rule hand_size=7")
    try:
        parsed = yaml.safe_load(value) if value.strip() else value
    except yaml.YAMLError as err:
        raise ValueError(f"--rule {text!r}: cannot read the value: {err}") from None
    if isinstance(parsed, (list, dict)):
        raise ValueError(f"--rule {text!r}: the value must be a single number, true/false or a word")
    return key.strip(), parsed


def rule_options(items: list[str] | None) -> dict[str, Any]:
    return dict(parse_rule(item) for item in items or [])


def agent_list(tokens: Sequence[str], option: str) -> list[str]:
    """The agent specs of ``--agents`` / ``--opponents``: space-separated words, commas accepted too."""
    specs = [part.strip() for token in tokens for part in token.split(",") if part.strip()]
    if not specs:
        raise ValueError(f"{option} needs at least one agent spec, e.g. {option} random greedy")
    return specs


def whole(low: int) -> Callable[[str], int]:
    """An argparse type: a whole number >= `low` (argparse names the option in its message)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number >= {low}, got {text!r}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"expected a whole number >= {low}, got {value}")
        return value

    parse.__name__ = f"whole number >= {low}"
    return parse


# ---------------------------------------------------------------- the parser
def _add_rule(p: argparse.ArgumentParser) -> None:
    p.add_argument("--rule", action="append", metavar="K=V",
                   help="set a rule option, e.g. --rule hand_size=7 (repeatable); `cardlab rules GAME` lists "
                        "the options with their meaning, accepted values and default")


def _add_outputs(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", type=pathlib.Path, metavar="F", help="also write the results as JSON to F")
    p.add_argument("--csv", type=pathlib.Path, metavar="F", help="also write the results as CSV to F")
    p.add_argument("--plot", type=pathlib.Path, metavar="F.png", help="also draw the results as a PNG plot")


def _add_threads(p: argparse.ArgumentParser, what: str = "bots") -> None:
    p.add_argument("--torch-threads", type=whole(1), metavar="N",
                   help=f"torch threads of {what} (default: ${THREADS_ENV}, else 1; more only helps on an "
                        "idle machine)")


def _add_seed(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument("--seed", type=whole(0), default=0, metavar="S",
                   help=f"seed of {what}; the same seed gives the same results (default 0)")


def build_parser() -> argparse.ArgumentParser:
    game_ids = games()
    games_text = ", ".join(game_ids)
    specs_text = "random, greedy, expert, bot:PATH (a bot's .json, or a run folder)"
    parser = argparse.ArgumentParser(prog="cardlab",
                                     description="RL environments and agents for Switch and Huit américain.",
                                     epilog=f"agent specs: {specs_text}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("train", help="train a MaskablePPO bot from a YAML config")
    p.add_argument("config", type=pathlib.Path, metavar="CONFIG.yaml",
                   help="the training config, e.g. configs/huit_ppo.yaml")
    p.add_argument("--resume", type=pathlib.Path, metavar="RUN_DIR",
                   help="continue this run folder from its last checkpoint (with the run's own config; only "
                        "total_timesteps may grow)")
    p.add_argument("--runs-dir", type=pathlib.Path, default=pathlib.Path("runs"), metavar="DIR",
                   help="where new run folders go (default: runs)")
    _add_threads(p, "the bots a run plays (league snapshots, evaluations; the trainer's own come from the "
                    "config's torch_threads)")

    agents_help = f"the agents, space- or comma-separated: {specs_text}"
    p = sub.add_parser("eval", help="win rates of agents over seeded hands, seats rotated")
    p.add_argument("--game", required=True, choices=game_ids, help=f"the game: {games_text}")
    p.add_argument("--agents", required=True, nargs="+", metavar="SPEC",
                   help=f"{agents_help}; one seat each, or repeated in order to fill --rule num_players=N")
    p.add_argument("--hands", required=True, type=whole(0), metavar="N",
                   help="hands to play (rounded up to whole seat rotations; 0 with --matches)")
    p.add_argument("--matches", type=whole(0), default=0, metavar="N",
                   help="also play N matches to the target score (rounded up to whole seat rotations)")
    _add_seed(p, "the deals and the agents")
    _add_rule(p)
    _add_outputs(p)
    _add_threads(p)
    add_ray_options(p)

    p = sub.add_parser("tournament", help="round robin: cross-table of win rates and TrueSkill ratings")
    p.add_argument("--game", required=True, choices=game_ids, help=f"the game: {games_text}")
    p.add_argument("--agents", required=True, nargs="+", metavar="SPEC",
                   help=f"{agents_help}; at least 2, each entered once")
    p.add_argument("--hands", required=True, type=whole(1), metavar="N",
                   help="hands per pairing (rounded up to whole seat rotations)")
    _add_seed(p, "the deals and the agents")
    _add_rule(p)
    _add_outputs(p)
    _add_threads(p)
    add_ray_options(p)

    add_sweep_command(sub)

    p = sub.add_parser("export", help="write a bot file from a run folder or a checkpoint .zip of a run on "
                       "this machine (checked against the run's checkpoints/SHA256SUMS)")
    p.add_argument("source", type=pathlib.Path, metavar="RUN_DIR_OR_CHECKPOINT_ZIP",
                   help="a run folder (its last checkpoint) or one of its checkpoints/model_<steps>.zip")
    p.add_argument("-o", "--output", required=True, type=pathlib.Path, metavar="PATH",
                   help="the bot to write: PATH.json and PATH.safetensors (a folder gets bot.json in it)")

    p = sub.add_parser("play", help="play against agents in the terminal")
    p.add_argument("game", choices=game_ids, help=f"the game: {games_text}")
    p.add_argument("--opponents", required=True, nargs="+", metavar="SPEC",
                   help=f"the other players, space- or comma-separated: {specs_text}; one seat each, or "
                        "repeated in order to fill --rule num_players=N")
    p.add_argument("--hands", type=whole(1), default=1, metavar="N",
                   help="hands to play, one match (default 1)")
    _add_seed(p, "the deals and the opponents")
    p.add_argument("--seat", type=whole(0), default=0, metavar="K",
                   help="your seat (0 plays first; default 0)")
    _add_rule(p)
    _add_threads(p)

    p = sub.add_parser("rules", help="print the rule options, observation layout and action table of a game")
    p.add_argument("game", choices=game_ids, help=f"the game: {games_text}")
    _add_rule(p)
    p.add_argument("--markdown", action="store_true",
                   help="print only the generated Markdown tables (what the README and the env doc pages "
                        "show)")
    return parser


# ---------------------------------------------------------------- commands
def cmd_train(args: argparse.Namespace) -> int:
    if args.config.is_dir():
        raise ValueError(f"config file {args.config} is a folder: give a YAML config, e.g. "
                         "configs/huit_ppo.yaml")
    if not args.config.is_file():
        raise ValueError(f"config file {args.config} does not exist: give a YAML config, e.g. "
                         "configs/huit_ppo.yaml")
    from cardlab.agents.bot import inference_threads
    from cardlab.training.train import train_from_file  # SB3 only for training

    inference_threads()  # a bad $CARDLAB_TORCH_THREADS is refused before a run folder is made
    train_from_file(args.config, resume=args.resume, runs_dir=args.runs_dir)  # prints the final evaluation
    return 0


def _check_outputs(args: argparse.Namespace) -> None:
    """Refuse unwritable output paths before a long evaluation, not after it."""
    for option, path in (("--json", args.json), ("--csv", args.csv), ("--plot", args.plot)):
        if path is None:
            continue
        if path.is_dir():
            raise ValueError(f"{option} {path} is a folder: give the name of a file to write")
        if not path.parent.is_dir():
            raise ValueError(f"cannot write {path}: the folder {path.parent} does not exist")
        if not os.access(path.parent, os.W_OK):
            raise ValueError(f"cannot write {path}: the folder {path.parent} is not writable; choose another")
    if args.plot is not None and args.plot.suffix.lower() != ".png":
        raise ValueError(f"--plot {args.plot}: give a .png file name")


def _write_outputs(result: Any, args: argparse.Namespace) -> None:
    print(result.format_table())
    for path, text in ((args.json, result.to_json), (args.csv, result.to_csv)):
        if path is not None:
            path.write_text(text(), encoding="utf-8")
            print(f"wrote {path}")
    if args.plot is not None:
        print(f"wrote {result.plot(args.plot)}")


@contextlib.contextmanager
def _bot_threads(specs: Sequence[str]) -> Iterator[None]:
    """Hold torch at the bots' thread count for a whole command (no switching per move) when a bot plays."""
    if not any(spec.startswith("bot:") for spec in specs):
        yield
        return
    from cardlab.agents.bot import inference_threads, torch_threads

    with torch_threads(inference_threads()):
        yield


def cmd_eval(args: argparse.Namespace) -> int:
    evaluate = evaluator(args)  # serial, or on Ray with --workers / --ray-address
    agents = agent_list(args.agents, "--agents")
    _check_outputs(args)
    with _bot_threads(agents):
        result = evaluate(args.game, agents, args.hands, seed=args.seed, rule_options=rule_options(args.rule),
                          matches=args.matches, progress=sys.stderr.isatty())
    _write_outputs(result, args)
    return 0


def cmd_tournament(args: argparse.Namespace) -> int:
    tournament = tournament_runner(args)  # serial, or on Ray with --workers / --ray-address
    agents = agent_list(args.agents, "--agents")
    _check_outputs(args)
    with _bot_threads(agents):
        result = tournament(args.game, agents, args.hands, seed=args.seed,
                            rule_options=rule_options(args.rule), progress=sys.stderr.isatty())
    _write_outputs(result, args)
    return 0


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


def cmd_export(args: argparse.Namespace) -> int:
    from cardlab.agents.bot import export_bot
    from cardlab.training.checkpoints import load_checkpoint
    from cardlab.training.config import config_to_dict, load_config

    checkpoint, run_dir = checkpoint_and_run(args.source)
    config_path = run_dir / "config.yaml"
    if not config_path.is_file():
        raise ValueError(f"no config.yaml in {run_dir}: the run's config names the game and rules of "
                         f"{checkpoint}")
    cfg = load_config(config_path)
    model = load_checkpoint(checkpoint, run_dir, device="cpu")  # only a checkpoint this machine's run saved
    summary = {"algorithm": "MaskablePPO", "run": run_dir.name, "checkpoint": checkpoint.name,
               "steps": int(model.num_timesteps), "config": config_to_dict(cfg)}
    path = export_bot(model.policy, args.output, game=cfg.game, rules=cfg.rules, num_players=cfg.num_players,
                      summary=summary)
    print(f"wrote {path} and {path.with_suffix('.safetensors')} ({cfg.game}, {cfg.num_players} players, "
          f"{model.num_timesteps:,} steps)")
    return 0


def cmd_play(args: argparse.Namespace) -> int:
    from cardlab.training.play import play

    opponents = agent_list(args.opponents, "--opponents")
    with _bot_threads(opponents):
        return play(args.game, opponents, seed=args.seed, rule_options=rule_options(args.rule),
                    hands=args.hands, seat=args.seat)


def cmd_rules(args: argparse.Namespace) -> int:
    from cardlab.envs import make_game

    game = make_game(args.game, rule_options(args.rule))
    if args.markdown:
        print(game.markdown(level=3))
        return 0
    print(f"# {game.spec.title} ({game.spec.env_name})\n\n{game.spec.summary}\n\n"
          f"rule options: {game.describe()}\n")
    print(game.markdown(level=2))
    return 0


COMMANDS = {"train": cmd_train, "eval": cmd_eval, "tournament": cmd_tournament, "export": cmd_export,
            "play": cmd_play, "rules": cmd_rules, "sweep": cmd_sweep}


# ---------------------------------------------------------------- errors as sentences
_OS_FIXES = {
    errno.ENOENT: "check the path",
    errno.EACCES: "check its permissions, or choose a place you can write to",
    errno.EPERM: "check its permissions, or choose a place you can write to",
    errno.EISDIR: "it is a folder: give a file name",
    errno.ENOTDIR: "a part of the path is a file, not a folder",
    errno.ENOSPC: "free some disk space, or choose another disk",
    errno.EROFS: "the disk is read-only: choose another place",
    errno.EEXIST: "choose another name",
}


def describe_os_error(err: OSError) -> str:
    """An OSError as a sentence naming the file and the fix (not ``[Errno 2] ...: 'x'``)."""
    reason = (err.strerror or type(err).__name__).rstrip(".")
    reason = reason[:1].lower() + reason[1:]
    name = err.filename if err.filename is not None else err.filename2
    if isinstance(name, (str, bytes, os.PathLike)):
        name = os.fsdecode(name)
    text = reason if name is None else f"{name}: {reason}"
    fix = _OS_FIXES.get(err.errno or 0)
    return f"{text}; {fix}" if fix else text


def _interrupted(err: KeyboardInterrupt, args: argparse.Namespace) -> str:
    """The one line Ctrl-C leaves; for a training run: its folder and the command that resumes it."""
    run_dir = getattr(err, "run_dir", None)
    if run_dir is None:
        return "interrupted"
    steps = getattr(err, "checkpoint_steps", None)
    if steps is None:
        again = shlex.join(["cardlab", "train", str(args.config)])
        return (f"interrupted before the run's first checkpoint, so there is nothing to resume in {run_dir} "
                f"(delete it); start again with: {again}")
    resume = shlex.join(["cardlab", "train", str(args.config), "--resume", str(run_dir)])
    return (f"interrupted; the run folder is {run_dir}; continue from its checkpoint at {steps:,} steps "
            f"with: {resume}")


@contextlib.contextmanager
def _threads_option(args: argparse.Namespace) -> Iterator[None]:
    """``--torch-threads N`` as $CARDLAB_TORCH_THREADS for the command (and the processes it starts)."""
    threads = getattr(args, "torch_threads", None)
    if threads is None:
        yield
        return
    before = os.environ.get(THREADS_ENV)
    os.environ[THREADS_ENV] = str(threads)
    try:
        yield
    finally:
        if before is None:
            del os.environ[THREADS_ENV]
        else:
            os.environ[THREADS_ENV] = before


def _quiet_stdout() -> None:
    """After a closed pipe (``cardlab ... | head``): send what is left to /dev/null, so exit stays quiet."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())


def main(argv: list[str] | None = None) -> int:
    """Run a command: bad input is one line on stderr and status 2, Ctrl-C one line and status 130."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:  # argparse has printed its usage message
        return int(exit_.code or 0)

    def say(text: str) -> None:
        print(f"cardlab {args.command}: {text}", file=sys.stderr)

    try:
        with _threads_option(args):
            code = COMMANDS[args.command](args)
        sys.stdout.flush()  # a closed pipe shows here, not at exit
        return code
    except KeyboardInterrupt as err:
        if sys.stderr.isatty():
            print(file=sys.stderr)  # a line of its own, below ^C and any progress bar
        say(_interrupted(err, args))
        return INTERRUPTED
    except BrokenPipeError:
        _quiet_stdout()
        return 0
    except OSError as err:
        say(f"error: {describe_os_error(err)}")
        return USAGE_ERROR
    except ValueError as err:
        say(f"error: {err}")
        return USAGE_ERROR


if __name__ == "__main__":
    sys.exit(main())
