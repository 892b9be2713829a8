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
cardlab serve [--host H] [--port P] [--bot PATH ...] [--max-games N] [--idle-minutes M] [--max-body BYTES]
cardlab advise GAME --state STATE.json --agent SPEC [--top N] [--seed S]
cardlab ship-bots [NAME=CONFIG_OR_RUN_DIR ...] [--out DIR] [--hands N] [--seed S] [--runs-dir DIR]
```

Agent specs: ``random``, ``greedy``, ``expert``, ``bot:NAME`` (a shipped bot:
``bot:huit-2p``, ``bot:switch-4p``), ``bot:PATH`` (a bot's ``NAME.json``, or a
run folder for the bot it wrote). Lists of agents (``--agents``,
``--opponents``) are space-separated, and commas are accepted too:
``--agents random greedy`` = ``--agents random,greedy``. ``--rule k=v`` sets a
rule option, v read as a YAML scalar (``true``, ``7``, ``all``);
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

from cardlab.agents.base import THREADS_ENV, shipped_bots
from cardlab.cluster.cli import add_ray_options, add_sweep_command, cmd_sweep, evaluator, tournament_runner
from cardlab.envs import games
from cardlab.training.ship import OUT_DIR, SHIPPED

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
    specs_text = (f"random, greedy, expert, {', '.join(shipped_bots())} (shipped bots), "
                  "bot:PATH (a bot's .json, or a run folder)")
    epilog = f"agent specs: {specs_text}"
    parser = argparse.ArgumentParser(prog="cardlab",
                                     description="RL environments and agents for Switch and Huit américain.",
                                     epilog=epilog)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("train", help="train a PPO bot from a YAML config")
    p.add_argument("config", type=pathlib.Path, metavar="CONFIG.yaml",
                   help="the training config, e.g. configs/huit_ppo.yaml")
    p.add_argument("--resume", type=pathlib.Path, metavar="RUN_DIR",
                   help="continue this run folder from its last checkpoint (with the run's own config; only "
                        "total_timesteps and max_minutes may change)")
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

    p = sub.add_parser("serve", help="play the bots in a browser: a local web app", epilog=epilog)
    p.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default 127.0.0.1: this machine only)")
    p.add_argument("--port", type=whole(1), default=8000, metavar="P",
                   help="port to listen on (default 8000)")
    p.add_argument("--bot", action="append", type=pathlib.Path, default=[], metavar="PATH",
                   help="also offer this bot file, as bot:NAME after its file name (repeatable)")
    p.add_argument("--max-games", type=whole(1), default=100, metavar="N",
                   help="games and replays open at once (default 100)")
    p.add_argument("--idle-minutes", type=float, default=60.0, metavar="M",
                   help="forget a game unused this long (default 60)")
    p.add_argument("--max-body", type=whole(1), default=512 * 1024, metavar="BYTES",
                   help="largest request body (default 524288)")
    p.add_argument("--delay-ms", type=whole(0), default=600, metavar="MS",
                   help="the page's pause between opponents' moves (default 600)")
    _add_threads(p)

    p = sub.add_parser("advise", help="what an agent would play in a saved state, with probabilities",
                       epilog=epilog)
    p.add_argument("game", choices=game_ids, help=f"the game: {games_text}")
    p.add_argument("--state", required=True, type=pathlib.Path, metavar="STATE.json",
                   help="env.unwrapped.state_dict() as JSON, or a position saved by the web app")
    p.add_argument("--agent", required=True, metavar="SPEC", help=f"the advisor: {specs_text}")
    p.add_argument("--top", type=whole(1), default=3, metavar="N", help="moves to list (default 3)")
    _add_seed(p, "the advisor (heuristics break ties with it)")
    _add_threads(p)

    p = sub.add_parser("ship-bots", help="train, measure against the expert and write the shipped bots")
    p.add_argument("items", nargs="*", metavar="NAME=CONFIG_OR_RUN_DIR",
                   help=f"bots to build (default: {' '.join(f'{k}={v}' for k, v in SHIPPED.items())})")
    p.add_argument("--out", type=pathlib.Path, default=OUT_DIR, metavar="DIR",
                   help=f"where the bot files go (default {OUT_DIR})")
    p.add_argument("--hands", type=whole(1), default=2000, metavar="N",
                   help="hands against the expert (default 2000)")
    p.add_argument("--seed", type=whole(0), default=123, metavar="S",
                   help="seed of the measuring deals (default 123)")
    p.add_argument("--runs-dir", type=pathlib.Path, default=pathlib.Path("runs"), metavar="DIR",
                   help="where the training runs go (default: runs)")
    _add_threads(p)
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


def cmd_serve(args: argparse.Namespace) -> int:
    from cardlab.serve.app import Settings, named_bots, serve

    if not 1 <= args.port <= 65535:
        raise ValueError(f"--port must be 1..65535, got {args.port}")
    if args.max_games < 1 or args.max_body < 1 or args.delay_ms < 0 or args.idle_minutes <= 0:
        raise ValueError("--max-games and --max-body must be at least 1, --delay-ms at least 0 and "
                         "--idle-minutes above 0")
    settings = Settings(max_games=args.max_games, idle_seconds=args.idle_minutes * 60, max_body=args.max_body,
                        bots=named_bots(args.bot), delay_ms=args.delay_ms)
    serve(args.host, args.port, settings)
    return 0


def cmd_advise(args: argparse.Namespace) -> int:
    import json

    from cardlab.agents.base import advise, make_agent
    from cardlab.serve.view import read_position

    try:
        data = json.loads(args.state.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ValueError(f"{args.state} is not valid JSON: {err}") from None
    game, seat, observation = read_position(args.game, data)
    agent = make_agent(args.agent, game, seed=args.seed)
    print(f"{game.spec.title}, {game.num_players} players: player_{seat} to move; advisor {args.agent}")
    for rank, move in enumerate(advise(agent, observation, args.top), 1):
        print(f"  {rank}. {move.text:<28} {move.probability:.3f}")
    return 0


def cmd_ship_bots(args: argparse.Namespace) -> int:
    from cardlab.training.ship import ship_bot

    items = [item.partition("=") for item in args.items] or [(k, "=", v) for k, v in SHIPPED.items()]
    for name, sep, source in items:
        if not sep or not name or not source:
            raise ValueError(f"{name}{sep}{source!r}: expected NAME=CONFIG_OR_RUN_DIR, "
                             "e.g. huit-2p=configs/huit_ppo.yaml")
    for name, _, source in items:
        shipped = ship_bot(name, pathlib.Path(source), args.out, hands=args.hands, seed=args.seed,
                           runs_dir=args.runs_dir)
        print(f"wrote {args.out / name}.json and .safetensors: bot:{name} wins {shipped['about']}")
    return 0


COMMANDS = {"train": cmd_train, "eval": cmd_eval, "tournament": cmd_tournament, "export": cmd_export,
            "play": cmd_play, "rules": cmd_rules, "serve": cmd_serve, "advise": cmd_advise,
            "ship-bots": cmd_ship_bots, "sweep": cmd_sweep}


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
