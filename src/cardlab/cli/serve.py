"""`cardlab serve`: the local web app (`cardlab.serve`), with its limits set from the command line."""

from __future__ import annotations

import argparse
import pathlib

from cardlab.cli.common import Command, add_threads, whole

DEFAULT_GAME = "huit"
"""The page opens on Huit américain, at its smallest table with a shipped bot (2 players), against it."""


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Address, port, extra bots, the app's limits and the page's pause."""
    p.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default 127.0.0.1: this machine only)")
    p.add_argument("--port", type=whole(1), default=8000, metavar="P",
                   help="port to listen on (default 8000)")
    p.add_argument("--bot", action="append", type=pathlib.Path, default=[], metavar="PATH",
                   help="also offer this bot (a bot file's .json, an ONNX bot's .onnx or .json), as bot:NAME "
                        "after its file name, or after its run folder for a run's bot.json; a folder of "
                        "bots offers each of them (repeatable)")
    p.add_argument("--game", default=DEFAULT_GAME, metavar="GAME",
                   help=f"the game the page opens on (default {DEFAULT_GAME})")
    p.add_argument("--opponent", metavar="NAME",
                   help="the opponent the page seats when it fits the table, e.g. bot:huit-2p-match "
                        "(default: the shipped bot of the table's size, bot:GAME-Np; else the first bot that "
                        "fits)")
    p.add_argument("--max-games", type=whole(1), default=100, metavar="N",
                   help="games open at once (default 100)")
    p.add_argument("--max-replays", type=whole(1), default=20, metavar="N",
                   help="loaded replays open at once, apart from the games (default 20)")
    p.add_argument("--games-per-client", type=whole(1), default=10, metavar="N",
                   help="games one client (address) may have open at once, its share of --max-games "
                        "(default 10)")
    p.add_argument("--replays-per-client", type=whole(1), default=4, metavar="N",
                   help="loaded replays one client may have open at once (default 4)")
    p.add_argument("--idle-minutes", type=float, default=60.0, metavar="M",
                   help="forget a game unused this long (default 60)")
    p.add_argument("--max-body", type=whole(1), default=512 * 1024, metavar="BYTES",
                   help="largest request body (default 524288)")
    p.add_argument("--delay-ms", type=whole(0), default=600, metavar="MS",
                   help="the page's pause between opponents' moves (default 600)")
    p.add_argument("--search-workers", type=whole(1), default=None, metavar="N",
                   help="threads that run the search opponents and advisors, each client in turn (default: "
                        "one per core but one, at least 1)")
    p.add_argument("--max-search-agents", type=whole(1), default=24, metavar="N",
                   help="search agents (seats and advisors, about 17 MB each) held at once; a table or "
                        "advice needing more is refused with 503 until one is freed (default 24)")
    add_threads(p)


def bot_files(paths: list[pathlib.Path]) -> list[pathlib.Path]:
    """The bots of ``--bot``: each path as given, a folder of bots (not a run folder) as each bot in it."""
    from cardlab.agents.bot import RUN_BOT, bots_in

    found: list[pathlib.Path] = []
    for path in paths:
        if not path.is_dir() or (path / f"{RUN_BOT}.json").is_file():
            found.append(path)
            continue
        inside = bots_in(path)
        if not inside:
            raise ValueError(f"--bot {path}: the folder holds no bot (NAME.json beside NAME.safetensors or "
                             "NAME.onnx) and no run's bot.json")
        found += inside
    return found


def run(args: argparse.Namespace) -> int:
    """Check the limits, then serve until stopped."""
    from cardlab.serve.app import Settings, named_bots, serve

    if not 1 <= args.port <= 65535:
        raise ValueError(f"--port must be 1..65535, got {args.port}")
    if args.max_games < 1 or args.max_body < 1 or args.delay_ms < 0 or args.idle_minutes <= 0:
        raise ValueError("--max-games and --max-body must be at least 1, --delay-ms at least 0 and "
                         "--idle-minutes above 0")
    settings = Settings(max_games=args.max_games, max_replays=args.max_replays,
                        games_per_client=args.games_per_client, replays_per_client=args.replays_per_client,
                        idle_seconds=args.idle_minutes * 60, max_body=args.max_body,
                        bots=named_bots(bot_files(args.bot)), delay_ms=args.delay_ms, game=args.game,
                        opponent=args.opponent, max_search_agents=args.max_search_agents,
                        **({} if args.search_workers is None else {"search_workers": args.search_workers}))
    serve(args.host, args.port, settings)
    return 0


COMMAND = Command("serve", "play the bots in a browser: a local web app", add_arguments, run,
                  lists_specs=True)
