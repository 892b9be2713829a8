"""What the commands share: the `Command` record, argument types and options, outputs, threads, errors.

One place for each option that several commands take (``--rule``, ``--seed``,
``--torch-threads``, the result files, the Ray options), so that it reads and
checks the same everywhere.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import os
import pathlib
import secrets
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import yaml

from cardlab.agents.base import THREADS_ENV
from cardlab.agents.bot_catalogue import shipped_bots, table_aliases
from cardlab.cluster.runtime import import_ray
from cardlab.envs import games, make_game
from cardlab.envs.checked_json import excerpt

USAGE_ERROR = 2
INTERRUPTED = 130  # 128 + SIGINT, what shells report for a command stopped by Ctrl-C

WORKERS_HELP = ("play on N Ray workers (blocks of deals as Ray tasks; the results equal the serial run's); "
                "a local Ray with N CPUs is started unless --ray-address is given")
ADDRESS_HELP = ("join this running Ray cluster (what `ray start --head` prints, or 'auto' for one started on "
                "this machine) instead of starting a local one")


@dataclass(frozen=True)
class Command:
    """A subcommand: its name and help line, what adds its arguments, what runs it (returns the exit status).

    `lists_specs` puts the list of agent specs under the command's own
    ``--help`` (for the commands whose main argument is an agent).
    """

    name: str
    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]
    lists_specs: bool = False


# ---------------------------------------------------------------- argument types
def parse_rule(text: str) -> tuple[str, Any]:
    """``k=v`` -> (k, v) with v a YAML scalar."""
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise ValueError(f"--rule {excerpt(text)}: expected key=value, e.g. --rule hand_size=7")
    try:
        parsed = yaml.safe_load(value) if value.strip() else value
    except yaml.YAMLError as err:
        raise ValueError(f"--rule {excerpt(text)}: cannot read the value: {err}") from None
    if isinstance(parsed, (list, dict)):
        raise ValueError(f"--rule {excerpt(text)}: the value must be a single number, true/false or a word")
    return key.strip(), parsed


def rule_options(items: list[str] | None) -> dict[str, Any]:
    """The ``--rule k=v`` items of a command as a rule-options dict."""
    return dict(parse_rule(item) for item in items or [])


def agent_list(tokens: Sequence[str], option: str) -> list[str]:
    """The agent specs of ``--agents`` / ``--opponents``: space-separated words, commas accepted too."""
    specs = [part.strip() for token in tokens for part in token.split(",") if part.strip()]
    if not specs:
        raise ValueError(f"{option} needs at least one agent spec, e.g. {option} random greedy")
    return specs


MOST_WHOLE = 10**12
"""the largest whole number an option takes unless it says otherwise (a count of steps, hands, games: more
would run for years)"""
MOST_SEED = 2**63 - 1


def whole(low: int, high: int = MOST_WHOLE) -> Callable[[str], int]:
    """An argparse type: a whole number from `low` to `high` (argparse names the option in its message)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"expected a whole number >= {low}, got {excerpt(text)}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"expected a whole number >= {low}, got {value}")
        if value > high:
            raise argparse.ArgumentTypeError(f"expected a whole number >= {low} and at most {high:,}, got "
                                             f"{excerpt(text)}")
        return value

    parse.__name__ = f"whole number from {low} to {high}"
    return parse


def search_value(name: str) -> Callable[[str], Any]:
    """An argparse type: a search option's value, read by its one declaration (`SearchOptions`), whose
    bounds are checked where the search's spec is made, so the command line does not check them again."""

    def parse(text: str) -> Any:
        from cardlab.agents.search_options import DECLARED  # the hand readers' imports only when given

        try:
            return DECLARED[name].parse(text)
        except ValueError as err:
            raise argparse.ArgumentTypeError(str(err)) from None

    parse.__name__ = f"search option {name}"
    return parse


# ---------------------------------------------------------------- shared options
def specs_text() -> str:
    """The agent specs a person may give, with the shipped bots of this install."""
    aliases = table_aliases()
    tables = f"{', '.join(aliases)} (the shipped bot of the table's size), " if aliases else ""
    return (f"random, greedy, expert, {tables}{', '.join(shipped_bots())} (shipped bots), "
            "bot:PATH (a bot's .json, an ONNX bot's .onnx, or a run folder), search:BASE (decision-time "
            "search over any of those, e.g. search:bot:huit-2p or search:worlds=128:ms=0:bot:huit-2p), "
            "MODULE:FACTORY (your own agent: a module on the Python path and its factory(game, seed=None))")


def table_default(game_id: str, rules: dict[str, Any], instead: str) -> tuple[str, int]:
    """(spec, players) of the table's shipped bot (`default_bot`). A bad rule option is refused with its
    own error alone; only "no bot for this table" advises giving the agents (`instead`)."""
    from cardlab.agents.bot_catalogue import default_bot

    make_game(game_id, rules)  # a bad rule option's fix is the option, not the agents
    try:
        return default_bot(game_id, rules)
    except ValueError as err:
        raise ValueError(f"{err}; give the agents, e.g. {instead}") from None


def agents_help() -> str:
    """The start of the help line of ``--agents``."""
    return f"the agents, space- or comma-separated: {specs_text()}"


def add_game(p: argparse.ArgumentParser, option: bool = False) -> None:
    """The game, as the positional GAME or (`option`) as a required ``--game G``."""
    ids = games()
    text = f"the game: {', '.join(ids)}"
    if option:
        p.add_argument("--game", required=True, choices=ids, help=text)
    else:
        p.add_argument("game", choices=ids, help=text)


def add_rule(p: argparse.ArgumentParser) -> None:
    """``--rule K=V`` (repeatable): read with `rule_options`."""
    p.add_argument("--rule", action="append", metavar="K=V",
                   help="set a rule option, e.g. --rule hand_size=7 (repeatable); `cardlab rules GAME` lists "
                        "the options with their meaning, accepted values and default")


def add_outputs(p: argparse.ArgumentParser) -> None:
    """``--json``, ``--csv`` and ``--plot``: result files, checked by `check_outputs` before the work."""
    p.add_argument("--json", type=pathlib.Path, metavar="F", help="also write the results as JSON to F")
    p.add_argument("--csv", type=pathlib.Path, metavar="F", help="also write the results as CSV to F")
    p.add_argument("--plot", type=pathlib.Path, metavar="F.png", help="also draw the results as a PNG plot")


def add_threads(p: argparse.ArgumentParser, what: str = "bots") -> None:
    """``--torch-threads N``: `threads_option` applies it to the whole command."""
    p.add_argument("--torch-threads", type=whole(1), metavar="N",
                   help=f"torch threads of {what} (default: ${THREADS_ENV}, else 1; more only helps on an "
                        "idle machine)")


def add_seed(p: argparse.ArgumentParser, what: str) -> None:
    """``--seed S`` (default 0), seeding `what`."""
    p.add_argument("--seed", type=whole(0, MOST_SEED), default=0, metavar="S",
                   help=f"seed of {what}; the same seed gives the same results (default 0)")


def add_ray_options(p: argparse.ArgumentParser) -> None:
    """``--workers N`` and ``--ray-address ADDR`` (for eval and tournament)."""
    p.add_argument("--workers", type=whole(1), metavar="N", help=WORKERS_HELP)
    p.add_argument("--ray-address", metavar="ADDR", help=ADDRESS_HELP)


def on_ray(args: argparse.Namespace) -> bool:
    """Whether a Ray option was given; if so Ray must be installed (checked first, before any work).

    Ray is imported only then, so the serial commands run without the ray extra.
    """
    if args.workers is None and not args.ray_address:
        return False
    import_ray()
    return True


# ---------------------------------------------------------------- results and threads
def check_outputs(args: argparse.Namespace) -> None:
    """Refuse unwritable output paths before a long evaluation, not after it (`check_output`)."""
    for option, path in (("--json", args.json), ("--csv", args.csv), ("--plot", args.plot)):
        check_output(option, path)
    if args.plot is not None and args.plot.suffix.lower() != ".png":
        raise ValueError(f"--plot {args.plot}: give a .png file name")


def check_output(option: str, path: pathlib.Path | None) -> None:
    """Refuse an output path the write would fail on, tried the way `write_output` writes: a file created
    in its folder (``os.access`` says yes to root in /sys, and to a path under a file it says nothing)."""
    if path is None:
        return
    if path.is_dir():
        raise ValueError(f"{option} {path} is a folder: give the name of a file to write")
    try:
        _temporary(path).unlink()
    except OSError as err:
        why = describe_os_error(OSError(err.errno, err.strerror or str(err)))
        if err.errno == errno.ENOENT and not path.parent.exists():
            why = f"the folder {path.parent} does not exist"
        raise ValueError(f"cannot write {option} {path}: {why}") from None


def write_output(path: pathlib.Path, write: Callable[[pathlib.Path], Any]) -> None:
    """`write(temporary path)`, then rename it to `path`: a failed write (a full disk) leaves no partial
    file and the old one intact, and its error names `path`."""
    tmp = _temporary(path)
    try:
        write(tmp)
        os.replace(tmp, path)
    except OSError as err:
        tmp.unlink(missing_ok=True)
        raise _naming(err, path) from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_text_output(path: pathlib.Path, text: str) -> None:
    """`write_output` of a text, flushed to the disk before the rename (so a full disk shows here)."""
    def write(tmp: pathlib.Path) -> None:
        with tmp.open("w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())

    write_output(path, write)


def _temporary(path: pathlib.Path) -> pathlib.Path:
    """A new empty file beside `path` (its suffix kept: matplotlib reads the format from it), mode as
    `open` would make it (0666 less the umask)."""
    tmp = path.with_name(f".{path.stem}.{secrets.token_hex(4)}.tmp{path.suffix}")
    os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
    return tmp


def _naming(err: OSError, path: pathlib.Path) -> OSError:
    """The same error naming `path`, not the temporary file that was written."""
    return OSError(err.errno, err.strerror or str(err), str(path))


def write_outputs(result: Any, args: argparse.Namespace) -> None:
    """Print the result's table and write the files `add_outputs` asked for."""
    print(result.format_table())
    for path, text in ((args.json, result.to_json), (args.csv, result.to_csv)):
        if path is not None:
            write_text_output(path, text())
            print(f"wrote {path}")
    if args.plot is not None:
        write_output(args.plot, result.plot)
        print(f"wrote {args.plot}")


@contextlib.contextmanager
def bot_threads(specs: Sequence[str]) -> Iterator[None]:
    """Hold torch at the bots' thread count for a whole command (no switching per move) when a bot plays."""
    if not any("bot:" in spec for spec in specs):  # a bot, or a search over one
        yield
        return
    from cardlab.agents.bot import inference_threads, torch_threads

    with torch_threads(inference_threads()):
        yield


@contextlib.contextmanager
def threads_option(args: argparse.Namespace) -> Iterator[None]:
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


# ---------------------------------------------------------------- errors as sentences
OS_FIXES = {
    errno.ENOENT: "check the path",
    errno.EACCES: "check its permissions, or choose a place you can write to",
    errno.EPERM: "check its permissions, or choose a place you can write to",
    errno.EISDIR: "it is a folder: give a file name",
    errno.ENOTDIR: "a part of the path is a file, not a folder",
    errno.ENOSPC: "free some disk space, or choose another disk",
    errno.EROFS: "the disk is read-only: choose another place",
    errno.EEXIST: "choose another name",
}
"""errno -> what a person can do about it, the second half of `describe_os_error`'s sentence."""


def describe_os_error(err: OSError) -> str:
    """An OSError as a sentence naming the file and the fix (not ``[Errno 2] ...: 'x'``)."""
    reason = (err.strerror or type(err).__name__).rstrip(".")
    reason = reason[:1].lower() + reason[1:]
    name = err.filename if err.filename is not None else err.filename2
    if isinstance(name, (str, bytes, os.PathLike)):
        name = os.fsdecode(name)
    text = reason if name is None else f"{name}: {reason}"
    fix = OS_FIXES.get(err.errno or 0)
    return f"{text}; {fix}" if fix else text


def quiet_stdout() -> None:
    """After a closed pipe (``cardlab ... | head``): send what is left to /dev/null, so exit stays quiet."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
