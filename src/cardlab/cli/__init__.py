"""The `cardlab` command line: train, evaluate, run tournaments, export bots, play, show layouts.

Each command is a module of this package with its arguments and its run
function (`cardlab.cli.common.Command`); `COMMANDS` is the one list of them,
in the order ``cardlab --help`` shows them (``cardlab COMMAND --help``: a
command's arguments; the README and docs/ show them in use).

Agent specs: ``random``, ``greedy``, ``expert``, ``bot:NAME`` (a shipped bot),
``bot:PATH`` (a bot file, an ONNX bot or a run folder), ``search:...``,
``MODULE:FACTORY`` (your own agent, `cardlab.agents.agent_spec`). Lists of
agents are space- or comma-separated; ``--rule k=v`` sets a rule option, v
read as a YAML scalar (`cardlab rules GAME` lists them). eval, bench, compare
and tournament also take ``--workers N`` and ``--ray-address ADDR``: the same
results, played by Ray workers (`cardlab.cluster`, the ray extra).

Bad input (unknown spec, bad rule option, missing file) prints one line on
stderr and exits with status 2; Ctrl-C stops a command with one line and
status 130 (``train`` names the run folder and the command that resumes it);
a closed output pipe (``| head``) ends the command quietly.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from typing import NoReturn

from cardlab.cli import (
    advise,
    bench,
    compare,
    evaluate,
    exploit,
    export,
    match_equity,
    play,
    read_hands,
    rllib,
    rules,
    serve,
    ship_bots,
    sweep,
    teach,
    tournament,
    train,
)
from cardlab.cli.common import (
    INTERRUPTED,
    USAGE_ERROR,
    Command,
    describe_os_error,
    quiet_stdout,
    specs_text,
    threads_option,
)

COMMANDS: dict[str, Command] = {command.name: command for command in (
    train.COMMAND, evaluate.COMMAND, bench.COMMAND, compare.COMMAND, exploit.COMMAND, tournament.COMMAND,
    sweep.COMMAND, rllib.COMMAND, export.COMMAND, play.COMMAND, rules.COMMAND, serve.COMMAND, advise.COMMAND,
    ship_bots.COMMAND, teach.COMMAND, read_hands.COMMAND, match_equity.COMMAND,
)}
"""Every `cardlab` command by name: adding a command is a module and a line here."""


class Parser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one line, as every other bad input (see the README)."""

    def error(self, message: str) -> NoReturn:
        """Print `PROG: error: MESSAGE (see PROG --help)` on stderr and exit with status 2."""
        self.exit(USAGE_ERROR, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    """The parser of `cardlab` and of each of its `COMMANDS`."""
    epilog = f"agent specs: {specs_text()}"
    parser = Parser(prog="cardlab",
                                     description="RL environments and agents for Switch and Huit américain.",
                                     epilog=epilog)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=Parser)
    for command in COMMANDS.values():
        p = sub.add_parser(command.name, help=command.help, epilog=epilog if command.lists_specs else None)
        command.add_arguments(p)
    return parser


def interrupted(err: KeyboardInterrupt, args: argparse.Namespace) -> str:
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
        with threads_option(args):
            code = COMMANDS[args.command].run(args)
        sys.stdout.flush()  # a closed pipe shows here, not at exit
        return code
    except KeyboardInterrupt as err:
        if sys.stderr.isatty():
            print(file=sys.stderr)  # a line of its own, below ^C and any progress bar
        say(interrupted(err, args))
        return INTERRUPTED
    except BrokenPipeError:
        quiet_stdout()
        return 0
    except OSError as err:
        say(f"error: {describe_os_error(err)}")
        return USAGE_ERROR
    except ValueError as err:
        say(f"error: {err}")
        return USAGE_ERROR
