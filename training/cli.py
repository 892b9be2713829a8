"""The `cardlab` command line: train, evaluate, run tournaments, export bots, play, show layouts.

```
cardlab train CONFIG.yaml [--resume RUN_DIR] [--runs-dir DIR]
cardlab eval --game G --agents SPEC [SPEC ...] --hands N [--matches N] [--seed S] [--rule k=v ...]
             [--json F] [--csv F] [--plot F.png]
cardlab tournament --game G --agents SPEC SPEC [...] --hands N [--seed S] [--rule k=v ...] [outputs as eval]
cardlab export RUN_DIR_OR_CHECKPOINT_ZIP -o PATH
cardlab play GAME --opponents SPEC,SPEC,... [--hands N] [--seed S] [--seat K] [--rule k=v ...]
cardlab rules GAME [--rule k=v ...] [--markdown]
cardlab serve [--host H] [--port P] [--bot PATH ...] [--max-games N] [--idle-minutes M] [--max-body BYTES]
cardlab advise GAME --state STATE.json --agent SPEC [--top N] [--seed S]
cardlab ship-bots [NAME=CONFIG_OR_RUN_DIR ...] [--out DIR] [--hands N] [--seed S] [--runs-dir DIR]
```

Agent specs: ``random``, ``greedy``, ``expert``, ``bot:NAME`` (a shipped bot:
``bot:huit-2p``, ``bot:switch-4p``), ``bot:PATH``. ``--rule k=v``
sets a rule option, v read as a YAML scalar (``true``, ``7``, ``all``).
Bad input (unknown spec, bad rule option, missing file) prints one line on
stderr and exits with status 2.
"""

from __future__ import annotations

import argparse
import pathlib
import sys
from typing import Any

import yaml

from cardlab.agents.base import shipped_bots
from cardlab.envs import games
from cardlab.training.ship import OUT_DIR, SHIPPED

USAGE_ERROR = 2


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


def _add_rule(p: argparse.ArgumentParser) -> None:
    p.add_argument("--rule", action="append", metavar="K=V", help="a rule option, e.g. hand_size=7 (repeatable)")


def _add_outputs(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", type=pathlib.Path, metavar="F", help="also write the results as JSON")
    p.add_argument("--csv", type=pathlib.Path, metavar="F", help="also write the results as CSV")
    p.add_argument("--plot", type=pathlib.Path, metavar="F.png", help="also draw a PNG plot")


def build_parser() -> argparse.ArgumentParser:
    game_ids = games()
    epilog = f"agent specs: random, greedy, expert, {', '.join(shipped_bots())}, bot:PATH"
    parser = argparse.ArgumentParser(prog="cardlab", description="RL environments and agents for Switch and Huit "
                                     "américain.", epilog=epilog)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("train", help="train a MaskablePPO bot from a YAML config")
    p.add_argument("config", type=pathlib.Path, metavar="CONFIG.yaml")
    p.add_argument("--resume", type=pathlib.Path, metavar="RUN_DIR", help="continue this run from its last checkpoint")
    p.add_argument("--runs-dir", type=pathlib.Path, default=pathlib.Path("runs"), metavar="DIR")

    p = sub.add_parser("eval", help="win rates of agents over seeded hands, seats rotated")
    p.add_argument("--game", required=True, choices=game_ids)
    p.add_argument("--agents", required=True, nargs="+", metavar="SPEC")
    p.add_argument("--hands", required=True, type=int, metavar="N")
    p.add_argument("--matches", type=int, default=0, metavar="N", help="also play N matches to the target score")
    p.add_argument("--seed", type=int, default=0)
    _add_rule(p)
    _add_outputs(p)

    p = sub.add_parser("tournament", help="round robin: cross-table of win rates and TrueSkill ratings")
    p.add_argument("--game", required=True, choices=game_ids)
    p.add_argument("--agents", required=True, nargs="+", metavar="SPEC")
    p.add_argument("--hands", required=True, type=int, metavar="N", help="hands per pairing")
    p.add_argument("--seed", type=int, default=0)
    _add_rule(p)
    _add_outputs(p)

    p = sub.add_parser("export", help="write a bot file from a run folder or a checkpoint .zip")
    p.add_argument("source", type=pathlib.Path, metavar="RUN_DIR_OR_CHECKPOINT_ZIP")
    p.add_argument("-o", "--output", required=True, type=pathlib.Path, metavar="PATH")

    p = sub.add_parser("play", help="play against agents in the terminal")
    p.add_argument("game", choices=game_ids)
    p.add_argument("--opponents", required=True, metavar="SPEC,SPEC,...")
    p.add_argument("--hands", type=int, default=1, metavar="N")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--seat", type=int, default=0, metavar="K", help="your seat (0 plays first)")
    _add_rule(p)

    p = sub.add_parser("rules", help="print the rule options, observation layout and action table of a game")
    p.add_argument("game", choices=game_ids)
    _add_rule(p)
    p.add_argument("--markdown", action="store_true",
                   help="print only the generated Markdown tables (what the README and the env doc pages show)")

    p = sub.add_parser("serve", help="play the bots in a browser: a local web app", epilog=epilog)
    p.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default 127.0.0.1: this machine only)")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--bot", action="append", type=pathlib.Path, default=[], metavar="PATH",
                   help="also offer this bot file, as bot:NAME after its file name (repeatable)")
    p.add_argument("--max-games", type=int, default=100, metavar="N", help="games and replays open at once")
    p.add_argument("--idle-minutes", type=float, default=60.0, metavar="M",
                   help="forget a game unused this long")
    p.add_argument("--max-body", type=int, default=512 * 1024, metavar="BYTES", help="largest request body")
    p.add_argument("--delay-ms", type=int, default=600, metavar="MS",
                   help="the page's pause between opponents' moves")

    p = sub.add_parser("advise", help="what an agent would play in a saved state, with probabilities",
                       epilog=epilog)
    p.add_argument("game", choices=game_ids)
    p.add_argument("--state", required=True, type=pathlib.Path, metavar="STATE.json",
                   help="env.unwrapped.state_dict() as JSON, or a position saved by the web app")
    p.add_argument("--agent", required=True, metavar="SPEC", help="the advisor")
    p.add_argument("--top", type=int, default=3, metavar="N", help="moves to list (default 3)")
    p.add_argument("--seed", type=int, default=0, help="the advisor's seed (heuristics break ties with it)")

    p = sub.add_parser("ship-bots", help="train, measure against the expert and write the shipped bots")
    p.add_argument("items", nargs="*", metavar="NAME=CONFIG_OR_RUN_DIR",
                   help=f"bots to build (default: {' '.join(f'{k}={v}' for k, v in SHIPPED.items())})")
    p.add_argument("--out", type=pathlib.Path, default=OUT_DIR, metavar="DIR", help=f"default {OUT_DIR}")
    p.add_argument("--hands", type=int, default=2000, metavar="N",
                   help="hands against the expert (default 2000)")
    p.add_argument("--seed", type=int, default=123)
    p.add_argument("--runs-dir", type=pathlib.Path, default=pathlib.Path("runs"), metavar="DIR")
    return parser


# ---------------------------------------------------------------- commands
def cmd_train(args: argparse.Namespace) -> int:
    from cardlab.training.train import train_from_file  # SB3 only for training

    if not args.config.is_file():
        raise ValueError(f"config file {args.config} does not exist")
    train_from_file(args.config, resume=args.resume, runs_dir=args.runs_dir)  # prints the final evaluation
    return 0


def _check_outputs(args: argparse.Namespace) -> None:
    """Refuse unwritable output paths before a long evaluation, not after it."""
    for path in (args.json, args.csv, args.plot):
        if path is not None and not path.parent.is_dir():
            raise ValueError(f"cannot write {path}: the folder {path.parent} does not exist")
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


def cmd_eval(args: argparse.Namespace) -> int:
    from cardlab.training.evaluate import evaluate

    _check_outputs(args)
    result = evaluate(args.game, args.agents, args.hands, seed=args.seed, rule_options=rule_options(args.rule),
                      matches=args.matches, progress=sys.stderr.isatty())
    _write_outputs(result, args)
    return 0


def cmd_tournament(args: argparse.Namespace) -> int:
    from cardlab.training.tournament import tournament

    _check_outputs(args)
    result = tournament(args.game, args.agents, args.hands, seed=args.seed, rule_options=rule_options(args.rule),
                        progress=sys.stderr.isatty())
    _write_outputs(result, args)
    return 0


def checkpoint_and_run(source: pathlib.Path) -> tuple[pathlib.Path, pathlib.Path]:
    """(checkpoint .zip, run folder) of a run folder (its last checkpoint) or of a checkpoint file."""
    from cardlab.training.train import list_checkpoints

    if source.is_dir():
        found = list_checkpoints(source)
        if not found:
            raise ValueError(f"{source} has no checkpoints/model_<steps>.zip (is it a run folder?)")
        return found[-1], source
    if source.suffix != ".zip" or not source.is_file():
        raise ValueError(f"{source}: expected a run folder or an existing checkpoint .zip")
    return source, source.parent.parent  # RUN_DIR/checkpoints/model_<steps>.zip


def cmd_export(args: argparse.Namespace) -> int:
    from sb3_contrib import MaskablePPO

    from cardlab.agents.bot import export_bot
    from cardlab.training.config import config_to_dict, load_config

    checkpoint, run_dir = checkpoint_and_run(args.source)
    config_path = run_dir / "config.yaml"
    if not config_path.is_file():
        raise ValueError(f"no config.yaml in {run_dir}: the run's config names the game and rules of {checkpoint}")
    cfg = load_config(config_path)
    model = MaskablePPO.load(checkpoint, device="cpu")
    summary = {"algorithm": "MaskablePPO", "run": run_dir.name, "checkpoint": checkpoint.name,
               "steps": int(model.num_timesteps), "config": config_to_dict(cfg)}
    path = export_bot(model.policy, args.output, game=cfg.game, rules=cfg.rules, num_players=cfg.num_players,
                      summary=summary)
    print(f"wrote {path} and {path.with_suffix('.safetensors')} ({cfg.game}, {cfg.num_players} players, "
          f"{model.num_timesteps:,} steps)")
    return 0


def cmd_play(args: argparse.Namespace) -> int:
    from cardlab.training.play import play

    opponents = [s.strip() for s in args.opponents.split(",") if s.strip()]
    if not opponents:
        raise ValueError("--opponents needs at least one agent spec, e.g. --opponents random,greedy")
    return play(args.game, opponents, seed=args.seed, rule_options=rule_options(args.rule), hands=args.hands,
                seat=args.seat)


def cmd_rules(args: argparse.Namespace) -> int:
    from cardlab.envs import make_game

    game = make_game(args.game, rule_options(args.rule))
    if args.markdown:
        print(game.markdown(level=3))
        return 0
    print(f"# {game.spec.title} ({game.spec.env_name})\n\n{game.spec.summary}\n\nrule options: {game.describe()}\n")
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
            "ship-bots": cmd_ship_bots}


def main(argv: list[str] | None = None) -> int:
    """Run a command; bad input gives one line on stderr and status 2, not a traceback."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:  # argparse has printed its usage message
        return int(exit_.code or 0)
    try:
        return COMMANDS[args.command](args)
    except (ValueError, OSError) as err:
        print(f"cardlab {args.command}: error: {err}", file=sys.stderr)
        return USAGE_ERROR


if __name__ == "__main__":
    sys.exit(main())
