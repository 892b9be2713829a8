"""The rows of the speed table (`benchmarks/speed_table.py`): what each measures, its target, and the
Markdown of a run's figures.

The cold-start table (`benchmarks/cold_start.py --json docs/cold_start.json`)
and the actors table (`benchmarks/actor_throughput.py --json docs/actors_table.json`)
are rendered here too, beside it on the results page.

Kept apart from the measuring script, which imports torch, numba and every
benchmark, so that docs/update_tables.py can render the table of
docs/results.md from the run's JSON file without them.
"""

from __future__ import annotations

import os
import platform
from typing import Any, NamedTuple

GAMES = ("huit", "switch")
HEURISTICS = ("random", "greedy", "expert")
HEURISTIC_PLAYERS = 4
"""the table size of the heuristics' rows"""
NUM_ENVS = 256
"""games of the vector env and of the raw engine it is set beside"""
SEARCHES = (("search:bot:huit-2p", 2), ("search:bot:huit-4p", 4),
            ("search:expert@huit-2p", 2), ("search:expert@huit-4p", 4))
"""the searches measured, at their default budget (`benchmarks/decision_latency.py` specs), and players"""
WORLDS_TARGET = {2: 1000.0, 4: 300.0}
"""worlds per decision wanted at the default budget, by players"""
BUDGET_MS = 60
"""the default search's time cap (the quick level's, `cardlab.agents.search_options.LEVELS`): the search
rows are the worlds a core of its own plays in it, its worlds per CPU second times this"""


class Row(NamedTuple):
    """One measure of the table."""

    key: str
    """its figure's name in the JSON file"""
    measure: str
    unit: str
    """what the figure counts ("" for a ratio)"""
    target: float | None = None
    """at least this; None: reported only"""
    beside: str | None = None
    """the key of a figure shown beside it (the one-move `act` rate)"""


def search_key(spec: str) -> str:
    return f"worlds {spec}"


def heuristic_keys(game: str, agent: str) -> tuple[str, str]:
    """(batched, one-move `act`) keys of a heuristic's decisions per second."""
    return f"batched {agent} {game}", f"act {agent} {game}"


def _search_row(spec: str, players: int) -> Row:
    base, _, table = spec.partition("@")
    shown = f"`{base}`" + (f", Huit {players}p" if table else "")
    return Row(search_key(spec), f"search worlds per decision, {shown} (worlds per CPU second x the default "
               f"{BUDGET_MS} ms)", "worlds", WORLDS_TARGET[players])


ROWS: tuple[Row, ...] = (
    Row("lean vs expert", "lean training, Huit 4p, learner against three experts", "steps/s"),
    Row("lean self-play", "lean training, Huit 4p, pure self-play", "steps/s"),
    Row("lean ratio", "lean training: against three experts / pure self-play", "", 0.5),
    *(_search_row(spec, players) for spec, players in SEARCHES),
    Row("engine", f"raw batched engine, Huit 2p, {NUM_ENVS} games, random moves", "steps/s"),
    Row("vector random", f"vector env, Huit 2p, {NUM_ENVS} games, `random` opponents", "learner steps/s",
        500_000.0),
    Row("vector ratio", "vector env (`random` opponents) / raw engine", "", 0.4),
    Row("vector expert", f"vector env, Huit 2p, {NUM_ENVS} games, `expert` opponents", "learner steps/s",
        250_000.0),
    *(Row(heuristic_keys(game, agent)[0],
          f"batched `{agent}`, {game.capitalize()} {HEURISTIC_PLAYERS}p (one-move `act` beside)",
          "decisions/s", beside=heuristic_keys(game, agent)[1])
      for game in GAMES for agent in HEURISTICS),
)
KEYS = tuple(key for row in ROWS for key in (row.key, row.beside) if key is not None)
"""every figure a run's JSON file holds"""


def number(value: float, unit: str) -> str:
    return f"{value:.2f}" if not unit else f"{value:,.0f}"


def cells(row: Row, figures: dict[str, float]) -> tuple[str, str, str]:
    """(figure, target, met?) of a row."""
    value = figures[row.key]
    figure = number(value, row.unit) + (f" {row.unit}" if row.unit else "")
    if row.beside is not None:
        figure += f" (act: {number(figures[row.beside], row.unit)})"
    if row.target is None:
        return figure, "report", "-"
    return figure, f"at least {number(row.target, row.unit)}", "yes" if value >= row.target else "no"


def table(figures: dict[str, float]) -> str:
    """The Markdown table of a run's figures; a ValueError names the figures it lacks."""
    missing = [key for key in KEYS if key not in figures]
    if missing:
        raise ValueError(f"the speed figures lack {', '.join(map(repr, missing))}: run "
                         "python benchmarks/speed_table.py --json PATH again")
    lines = ["| measure | figure | target | met? |", "|---|---|---|---|"]
    lines += ["| {} | {} | {} | {} |".format(row.measure, *cells(row, figures)) for row in ROWS]
    return "\n".join(lines) + "\n"


def markdown(report: dict[str, Any]) -> str:
    """A run's JSON report as the results page shows it: the machine and how busy it was, then the table."""
    machine, load = report["machine"], report["loadavg"]
    cores = machine["cores"]
    quick = " With `--quick`: tiny sizes, for a test, not figures." if report["quick"] else ""
    nice = f", at nice {report['nice']} (below the other processes)" if report["nice"] > 0 else ""
    lead = (f"One run on one core of a {cores}-core {machine['cpu']}{nice}, {busy(cores, load)}; rates "
            f"per CPU second of the process (medians of {report['repeats']} runs), the search's worlds "
            "what a core of its own plays within the default cap: what a busy core or a lower priority "
            f"leaves it is less.{quick}\n\n")
    return lead + table(report["figures"])


def busy(cores: int, load: dict[str, list[float]]) -> str:
    """How busy the machine was over a run, as its report's ``loadavg`` (`load_now` at its start and end)
    says, in the words every table's lead uses."""
    return (f"with about {load['start'][0]:.1f} processes wanting its {cores} cores when it began and "
            f"{load['end'][0]:.1f} when it ended (the one-minute figure of `os.getloadavg()`)")


def load_now() -> list[float]:
    """`os.getloadavg()` in hundredths, as a report's ``loadavg`` records it."""
    return [round(x, 2) for x in os.getloadavg()]


def machine() -> dict[str, Any]:
    """The CPU model (from /proc/cpuinfo where there is one) and the number of cores."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            cpu = next((line.split(":", 1)[1].strip() for line in info if line.startswith("model name")), cpu)
    except OSError:
        pass
    return {"cpu": cpu, "cores": os.cpu_count() or 1}


COLD_COMMANDS = {"search": "a process's first search decision (start, load, decide, the same position again)",
                 "eval": "`cardlab eval --game huit --agents expert expert --hands 200`",
                 "train quick": "`cardlab train configs/huit_quick.yaml`",
                 "main job": "`cardlab train configs/huit_ppo.yaml` (the README's main job)"}
"""the cold-start commands (`benchmarks/cold_start.py`) as the table names them"""


def cold_markdown(report: dict[str, Any]) -> str:
    """A cold-start run's JSON report as the results page shows it: the machine, then a row per command
    (wall seconds with an empty kernel cache and with the one it filled), then the first search decision."""
    machine, load = report["machine"], report["loadavg"]
    lines = [f"One run each on a {machine['cores']}-core {machine['cpu']}, {busy(machine['cores'], load)}; "
             "wall seconds of the whole command, process start included: cold with `NUMBA_CACHE_DIR` a new "
             "empty folder (it compiles the kernels it uses), warm with the folder that run filled.", "",
             "| command | cold s (empty kernel cache) | warm s | warm / cold |", "|---|---|---|---|"]
    for row in report["rows"]:
        lines.append(f"| {COLD_COMMANDS[row['command']]} | {row['cold_s']:.1f} | {row['warm_s']:.1f} | "
                     f"{row['warm_s'] / row['cold_s']:.2f} |")
    first = next((row["first"] for row in report["rows"] if row["command"] == "search"), None)
    if first is not None:
        lines += ["", f"The first decision of `{report['spec']}` at Huit {report['players']}p, then the same "
                  "position again in the same process:", "",
                  "| kernel cache | first decision | its worlds | the same position again |",
                  "|---|---|---|---|"]
        for cache, name in (("cold", "empty"), ("warm", "filled")):
            seen = first[cache]
            lines.append(f"| {name} | {seen['first_ms'] / 1000:.1f} s | {seen['first_worlds']} | "
                         f"{seen['again_worlds']} worlds |")
    return "\n".join(lines) + "\n"


def actors_markdown(report: dict[str, Any]) -> str:
    """An `actor_throughput.py` run's JSON report as the results page shows it: the machine and how busy it
    was, then a row per (config, actors) with the median steady and whole-run rates, the spread of the
    steady rate over the repeats, and the steady rate against the same config's ``actors: 0``."""
    machine, load = report["machine"], report["loadavg"]
    lead = (f"One run of {report['repeats']} repeats of {report['steps']:,} steps each on a "
            f"{machine['cores']}-core {machine['cpu']}, the learner on `{report['device']}`, "
            f"{busy(machine['cores'], load)}; medians, the steady rate's lowest and highest of the repeats "
            "beside it:\n\n")
    lines = ["| config | actors | steady steps/s | steady, repeats | whole-run steps/s "
             "| steady vs actors 0 |", "|---|---|---|---|---|---|"]
    base = {row["config"]: row["steady"] for row in report["rows"] if row["actors"] == 0}
    for row in report["rows"]:
        low, high = min(row["steady_each"]), max(row["steady_each"])
        versus = f"{row['steady'] / base[row['config']]:.2f}x" if row["config"] in base else "-"
        lines.append(f"| {row['label']} | {row['actors']} | {row['steady']:,.0f} | {low:,.0f}-{high:,.0f} "
                     f"| {row['whole']:,.0f} | {versus} |")
    return lead + "\n".join(lines) + "\n"
