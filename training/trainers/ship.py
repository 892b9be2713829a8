"""Shipped bots: train the shipped configs, measure each bot, write it into the package.

`cardlab ship-bots` rebuilds every bot of `SHIPPED` (from the repository
root): it trains the config (or takes a finished run folder, or a bot file to
measure again), plays the bot against each of `OPPONENTS` (the bot in one
seat, the opponent in every other, seats rotated, 4000 hands, seed 123 by
default) and writes ``NAME.json`` + ``NAME.safetensors`` into
``agents/bots/``, with the measured win rates and their 95% intervals
(``paired_ci95``, clustered by deal, and Wilson's ``ci95``) under
``summary.shipped`` of the metadata: the expert's at the top level (the keys
older readers know), every opponent's under ``against``, with the training
steps and minutes. `make_agent` then resolves ``bot:NAME`` (and ``bot:GAME``
at a table of the bot's size).

Several ``cardlab ship-bots`` may run at once (one bot each, say, on a
machine's cores): each measures on its own, and writes its pair under a lock
on the bots' folder, each file whole (`write_bot_files`), so no reader ever
sees half a bot. `bots_table` is the docs' table of the shipped bots, from
their metadata (``python docs/update_tables.py`` writes it into the pages).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import pathlib
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cardlab.envs.game_spec import Game
    from cardlab.evaluation.results import EvalResult, Rate
    from cardlab.training.harness.progress import Progress

from cardlab.envs.checked_json import excerpt, read_json_file
from cardlab.evaluation.request import EvalRequest

SHIPPED = {
    "huit-2p": "configs/huit_ppo.yaml",
    "switch-4p": "configs/switch_ppo.yaml",
    "huit-2p-selfplay": "configs/huit_selfplay.yaml",
    "huit-2p-match": "configs/tables/huit_2p_match.yaml",
    "huit-4p-match": "configs/tables/huit_4p_match.yaml",
    "switch-4p-match": "configs/tables/switch_4p_match.yaml",
    "switch-4p-selfplay": "configs/switch_selfplay.yaml",
    "switch-4p-long": "configs/tables/switch_4p_long.yaml",
    **{f"huit-{n}p": f"configs/tables/huit_{n}p.yaml" for n in (3, 4, 5, 6)},
    **{f"switch-{n}p": f"configs/tables/switch_{n}p.yaml" for n in (5, 6)},
    "huit-2p-taught": "configs/teach_huit_2p_search.yaml",
}
"""Name of each shipped bot -> the config it is trained from (a path from the repository root); the
table bots (``bot:GAME-Np``, one per table size) come from configs/tables/, the taught bot from a
`cardlab teach` config (``teach_*.yaml``: expert iteration, `cardlab.training.trainers.expert_iteration`)."""
OUT_DIR = pathlib.Path("agents/bots")
OPPONENTS = ("expert", "greedy", "random")
"""the measuring opponents, each in every seat but the bot's"""
OPPONENT = OPPONENTS[0]
"""the opponent of the top-level keys of ``summary.shipped`` (what older readers take)"""
HANDS, SEED = 4000, 123
Evaluate = Callable[..., "EvalResult"]
"""`cardlab.evaluation.evaluate.evaluate`, or its Ray twin (same arguments, same result)"""


def ship_bot(name: str, source: pathlib.Path, out_dir: pathlib.Path = OUT_DIR, hands: int = HANDS,
             seed: int = SEED, runs_dir: pathlib.Path = pathlib.Path("runs"), *,
             evaluate: Evaluate | None = None, progress: bool = True) -> dict[str, Any]:
    """Train `source` (a YAML config), or take a run folder or a bot file; measure it; write `out_dir/NAME`.

    `evaluate` plays the measuring hands (default: here, serially). `progress`:
    a bar per opponent on a terminal, else a line per opponent. Returns the
    `summary.shipped` entry written into the bot's metadata.
    """
    from cardlab.agents.bot import bot_paths, load_bot, write_bot_files  # torch only when a bot is shipped
    from cardlab.training.harness.progress import Progress

    if not name.replace("-", "").replace("_", "").isalnum():
        raise ValueError(f"bot name {excerpt(name)}: use letters, digits, '-' and '_' (it becomes "
                         f"bot:{name})")
    show = Progress(progress)
    run_dir = _run_folder(source, runs_dir)
    meta_path, weights_path = bot_paths(run_dir / "bot.json" if run_dir is not None else source)
    bot = load_bot(meta_path)  # refuses a damaged or partial bot before anything is measured
    weights = weights_path.read_bytes()
    summary = dict(bot.metadata.get("summary", {}))
    show.say(f"measuring {name} ({meta_path}): {hands:,} hands against each of {', '.join(OPPONENTS)}")
    rates = {opponent: measure(meta_path, bot.game, opponent, hands, seed, evaluate, show)
             for opponent in OPPONENTS}
    shipped = shipped_summary(name, rates, seed, bot.game.num_players, summary.get("steps"),
                              training_minutes(summary, run_dir))
    meta = {**bot.metadata, "summary": {**summary, "shipped": shipped}}
    meta["weights"] = {**meta["weights"], "file": f"{name}.safetensors"}
    out_dir.mkdir(parents=True, exist_ok=True)
    with locked(out_dir):
        text = json.dumps(meta, indent=2) + "\n"
        load_bot(write_bot_files(out_dir / name, text.encode("utf-8"), weights))  # the written pair loads
    return shipped


def is_teach_config(path: pathlib.Path) -> bool:
    """Whether a config of `SHIPPED` is a `cardlab teach` config (``teach_*.yaml``), not a training one."""
    return path.suffix in (".yaml", ".yml") and path.name.startswith("teach_")


def _run_folder(source: pathlib.Path, runs_dir: pathlib.Path) -> pathlib.Path | None:
    """The run folder of `source` (trained here if it is a config); None for a bot file, measured as it is."""
    if source.is_dir():
        return source
    if source.is_file() and source.suffix == ".json":
        return None
    if source.is_file() and is_teach_config(source):
        from cardlab.training.trainers.expert_iteration import load_teach_config, teach

        return teach(load_teach_config(source), runs_dir=runs_dir)
    if source.is_file() and source.suffix in (".yaml", ".yml"):
        from cardlab.training.trainers.train import train_from_file  # SB3 only when training

        return train_from_file(source, runs_dir=runs_dir)
    raise ValueError(f"{source}: expected a YAML config (a training config, or a teach_*.yaml teach config), "
                     "a finished run folder or a bot's .json")


def measure(meta_path: pathlib.Path, game: Game, opponent: str, hands: int, seed: int,
            evaluate: Evaluate | None, show: Progress) -> Rate:
    """The hand wins of the bot (of `game`) in one seat against `opponent` in every other, seats rotated."""
    if evaluate is None:
        from cardlab.evaluation.evaluate import evaluate as serial

        evaluate = serial
    request = EvalRequest(game.id, [f"bot:{meta_path}", *[opponent] * (game.num_players - 1)], hands=hands,
                          seed=seed, rules=game.rules.to_dict())
    result = evaluate(request, progress=show.bars, desc=f"vs {opponent}")
    rate: Rate = result.stats[0].hands
    show.say(f"  against {opponent}: {about(rate, game.num_players, opponent, seed)}")
    return rate


@contextlib.contextmanager
def locked(folder: pathlib.Path) -> Iterator[None]:
    """Hold an exclusive lock on `folder` (no lock file left behind): one writer of shipped bots at a time."""
    fd = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


def training_minutes(summary: Mapping[str, Any], run_dir: pathlib.Path | None) -> float | None:
    """The minutes a bot trained, if known: its run's eval.csv (the lean trainer writes them), or its summary.

    A run's last evaluation comes after its training, so the largest value is
    the run's wall clock, its evaluations included; None when nothing recorded it.
    """
    found: list[Any] = [summary.get("minutes")]
    if run_dir is not None:
        from cardlab.training.harness.records import EvalHistory

        found += [row.get("minutes") for row in EvalHistory(run_dir / "eval.csv").rows()]
    final = summary.get("final_eval")
    found += [entry.get("minutes") for entry in (final.values() if isinstance(final, dict) else [])
              if isinstance(entry, dict)]
    shipped = summary.get("shipped")
    found.append(shipped.get("minutes") if isinstance(shipped, dict) else None)  # measured again
    values = [float(v) for v in found if _number(v) and float(v) > 0]
    return round(max(values), 1) if values else None


def _number(value: Any) -> bool:
    try:
        float(value)
    except (TypeError, ValueError):
        return False
    return not isinstance(value, bool)


def about(rate: Rate, players: int, opponent: str, seed: int) -> str:
    """One sentence of a measurement: the win rate, both intervals, hands, seed and fair share."""
    (low, high), (paired_low, paired_high) = rate.interval, rate.paired_interval
    return (f"{rate.rate:.3f} [{paired_low:.3f}, {paired_high:.3f}] of hands against {players - 1} x "
            f"{opponent} ({rate.n} hands, seats rotated, seed {seed}, 95% interval clustered by deal; "
            f"Wilson's [{low:.3f}, {high:.3f}]; fair share {1 / players:.2f})")


def shipped_summary(name: str, rates: Mapping[str, Rate], seed: int, players: int, steps: int | None,
                    minutes: float | None = None) -> dict[str, Any]:
    """The `summary.shipped` entry of a bot measured against each opponent of `rates` (`OPPONENT` first)."""
    against = {}
    for opponent, rate in rates.items():
        (low, high), (paired_low, paired_high) = rate.interval, rate.paired_interval
        against[opponent] = {"hands": rate.n, "win_rate": rate.rate, "ci95": [low, high],
                             "paired_ci95": [paired_low, paired_high],
                             "about": about(rate, players, opponent, seed)}
    top = against[OPPONENT]
    return {"name": name, "opponent": OPPONENT, "hands": top["hands"], "seed": seed,
            "win_rate": top["win_rate"], "ci95": top["ci95"], "paired_ci95": top["paired_ci95"],
            "fair_share": 1 / players, "steps": steps, "minutes": minutes, "about": top["about"],
            "against": against}


# ---------------------------------------------------------------- the docs' table
def measurements(shipped: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    """Opponent -> measurement of a `summary.shipped` entry (an older entry: the expert's top-level keys)."""
    against = shipped.get("against")
    if isinstance(against, dict) and against:
        return dict(against)
    return {str(shipped.get("opponent", OPPONENT)): shipped}


def _table_of(meta: Mapping[str, Any]) -> str:
    from cardlab.envs import get_spec, make_game

    spec = get_spec(meta["game"])
    default = make_game(spec, {"num_players": meta["num_players"]}).rules.to_dict()
    changed = [f"{k}={v}" for k, v in meta["rules"].items() if default.get(k) != v]
    return f"{spec.title}, {meta['num_players']} players, {', '.join(changed) or 'default rules'}"


def _interval(pair: Any) -> str:
    return f"[{pair[0]:.3f}, {pair[1]:.3f}]"


def bots_table(folder: pathlib.Path | None = None, brief: bool = False) -> str:
    """The markdown table of the shipped bots in `folder` (default: the package's), from their metadata.

    One row per bot and measuring opponent (win rate, paired and Wilson intervals,
    hands, fair share), or with `brief` one row per bot: its paired interval
    against each opponent. Bots come by game, table size and name.
    """
    from cardlab.agents import bot_catalogue

    folder = bot_catalogue.SHIPPED_BOTS if folder is None else folder
    metas = [read_json_file(path) for path in folder.glob("*.json")]
    metas.sort(key=lambda m: (m["game"], m["num_players"], m["summary"].get("shipped", {}).get("name", "")))
    if brief:
        lines = ["| bot | table | " + " | ".join(f"vs {o}" for o in OPPONENTS) + " | fair share |",
                 "|---|---|" + "---|" * len(OPPONENTS) + "---|"]
    else:
        lines = ["| bot | table | trained from | steps | minutes | against | win rate | 95% CI (paired) "
                 "| Wilson | hands | fair share |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for meta in metas:
        shipped = meta["summary"]["shipped"]
        name, found = shipped["name"], measurements(shipped)
        fair = f"{shipped['fair_share']:.2f}"
        if brief:
            cells = [f"{found[o]['win_rate']:.3f} {_interval(found[o]['paired_ci95'])}" if o in found else ""
                     for o in OPPONENTS]
            lines.append(f"| `bot:{name}` | {_table_of(meta)} | {' | '.join(cells)} | {fair} |")
            continue
        steps = f"{shipped['steps']:,}" if shipped.get("steps") else ""
        minutes = f"{shipped['minutes']:.0f}" if shipped.get("minutes") else ""
        config = f"`{SHIPPED[name]}`, seed {meta['summary'].get('seed')}" if name in SHIPPED else ""
        first = f"| `bot:{name}` | {_table_of(meta)} | {config} | {steps} | {minutes} "
        order = [o for o in OPPONENTS if o in found] + [o for o in found if o not in OPPONENTS]
        for i, opponent in enumerate(order):
            m = found[opponent]
            lead = first if i == 0 else "| | | | | "
            lines.append(f"{lead}| {opponent} | {m['win_rate']:.3f} | {_interval(m['paired_ci95'])} | "
                         f"{_interval(m['ci95'])} | {m['hands']:,} | {fair} |")
    return "\n".join(lines) + "\n"
