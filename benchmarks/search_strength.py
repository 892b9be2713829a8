"""How strong is each search configuration? One seat per config, the field in every other, on the same deals.

Each configuration (any agent spec, usually a ``search:`` one) sits in slot 0
with the field (`--field`, default the expert; repeated in order) in every
other seat, every deal played once per seat rotation (`play_deals`, the unit
`evaluate` plays), on the first deals of a deal suite (`--suite`,
`cardlab.evaluation.suites`): every configuration meets the same cards, so
their differences are paired by deal (`cardlab.evaluation.stats.paired_difference`).

Printed, per configuration: hands, win rate with its 95% interval clustered
by deal (`cardlab.evaluation.paired`), its paired difference from the first
configuration with a 95% interval, its points per deal (the others' mean
less its own, `points_by_deal`) and their paired difference from the first
configuration's, and the mean milliseconds of its decisions
with more than one legal move (wall time of its `act`, so it depends on the
machine and its load); then every pair's paired differences. `--json` writes
all of it. `--workers N` plays blocks of deals on a local Ray with N workers
(the specs are built in the workers, so bot paths must be local files);
`--processes N` plays them in N local processes instead, without Ray.

The ceiling of a search is its cheating twin (``cheat=1``: the other hands
as they are), and the ablation of what inference buys is one command, every
row on the same deals (options that exist in this cardlab's ``search:``)::

    nice python benchmarks/search_strength.py --suite huit-2p --hands 4000 --workers 2 \\
        --json search_ablation.json --configs expert \\
        search:worlds=64:ms=0:expert \\
        search:belief=expert:worlds=64:ms=0:expert \\
        search:opponents=recognise:worlds=64:ms=0:expert \\
        search:belief=expert:opponents=recognise:worlds=64:ms=0:expert \\
        search:belief=expert:opponents=recognise:worlds=256:ms=0:expert \\
        search:cheat=1:worlds=64:ms=0:expert

    python benchmarks/search_strength.py --hands 20 --configs expert search:worlds=4:ms=0:expert
    python benchmarks/search_strength.py --show search_ablation.json   # a stopped run's finished rounds

The JSON keeps every hand (deal, rotation, seats, winners, points), so a run
grows in rounds across sessions: ``--resume F`` reads F, keeps its finished
deals and plays the next ones up to ``--hands``, writing F again after each
round (the same configs, field and suite, else it is refused, saying which)::

    python benchmarks/search_strength.py --suite huit-4p --hands 8000 --resume huit4.json \\
        --configs expert search:belief=learned:worlds=128:ms=0:expert
"""

from __future__ import annotations

import argparse
import json
import math
import pathlib
import re
import shlex
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np
from tqdm import tqdm

from cardlab import __version__
from cardlab.agents.agent_spec import make_agent
from cardlab.agents.base import Agent
from cardlab.cli.common import check_output, write_text_output
from cardlab.envs import make_game
from cardlab.envs.checked_json import excerpt
from cardlab.envs.declared import RANGE, check_whole, refusal
from cardlab.evaluation.bench import DEFAULT_FIELD, bench_row, bench_slots, point_differences, points_by_deal
from cardlab.evaluation.episodes import HAND, plural, seat_slots
from cardlab.evaluation.evaluate import play_deals
from cardlab.evaluation.results import EpisodeRecord, Rate, text_table
from cardlab.evaluation.stats import mean_interval, paired_difference
from cardlab.evaluation.suites import DEFAULT_SUITE, Suite, load_suite

FORMAT = 2
"""version of the JSON's layout (2: every hand kept under "played", so that a run resumes)"""
ROUNDS = 10
"""rounds of a run (at least; twice the workers or processes when more): each plays the next block of deals
for every config (the Ray tasks), and the JSON is written after each, so a run stopped early keeps its
finished rounds, every config on the same deals"""

PLAYING = ("configs", "field", "suite", "hands", "workers", "processes", "json", "resume", "rows")
"""the options of a run that plays (their dests), which ``--join`` and ``--show`` do not read"""


class Timed(Agent):
    """An agent's wall time over its decisions with a choice; everything else is the agent's own."""

    def __init__(self, agent: Agent) -> None:
        super().__init__(agent.game)
        self.agent, self.name, self.sees = agent, agent.name, agent.sees
        self.seconds, self.decisions = 0.0, 0

    def act(self, observation: dict[str, np.ndarray]) -> int:
        if np.count_nonzero(observation["action_mask"]) < 2:
            return self.agent.act(observation)
        start = time.perf_counter()
        action = self.agent.act(observation)
        self.seconds += time.perf_counter() - start
        self.decisions += 1
        return action

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        return self.agent.act_batch(observations, masks)

    def show(self, seen: Any) -> None:
        self.agent.show(seen)

    def reset(self) -> None:
        self.agent.reset()

    def seed(self, seed: int | None) -> None:
        self.agent.seed(seed)


def play_timed(game: str, rules: dict[str, Any], slots: Sequence[str], first: int, stop: int, seed: int,
               on_deal: Callable[[int], object] | None = None, kind: int = HAND
               ) -> tuple[list[EpisodeRecord], float, int]:
    """Deals first..stop-1 (`play_deals`: `evaluate`'s records of this seed; hands or, with `kind` MATCH,
    matches), with slot 0's wall time over its decisions with a choice: (records, seconds, decisions)."""
    timed: list[Timed] = []

    def factory(spec: str, table: Any, agent_seed: int) -> Agent:
        agent = make_agent(spec, table, agent_seed)
        if not timed:
            timed.append(Timed(agent))
            return timed[0]
        return agent

    records = play_deals(game, rules, slots, kind, range(first, stop), seed, agent_factory=factory,
                         on_deal=on_deal)
    return records, timed[0].seconds, timed[0].decisions


def blocks(deals: int, count: int, start: int = 0) -> list[range]:
    """deals start..deals-1 in `count` runs (fewer when there are fewer deals), in deal order."""
    size = max(1, math.ceil((deals - start) / max(1, count)))
    return [range(first, min(first + size, deals)) for first in range(start, deals, size)]


Played = list[tuple[list[EpisodeRecord], float, int]]
"""per configuration: its records in deal order, its seconds and its decisions with a choice"""


def play_rounds(suite: Suite, tables: list[list[str]], deals: int, workers: int,
                progress: bool, processes: int = 0, done: Played | None = None) -> Iterator[Played]:
    """Every table's deals of `suite` up to deals-1 after those `done` holds (each table's records of
    its first deals, as a resumed run kept them), here, with `workers` > 0 as Ray tasks or with
    `processes` > 0 in local processes (no Ray), in `ROUNDS` rounds (each the next block of deals for
    every table); after each round, every table's so far."""
    out: Played = [([], 0.0, 0) for _ in tables] if done is None else list(done)
    n = suite.num_players
    start = len(out[0][0]) // n
    parts = blocks(deals, max(ROUNDS, 2 * (workers + processes)), start)
    jobs = [(t, r) for r in range(len(parts)) for t in range(len(tables))]
    results: dict[tuple[int, int], tuple[list[EpisodeRecord], float, int]] = {}
    rounds = 0

    def completed() -> Iterator[Played]:
        nonlocal rounds
        while rounds < len(parts) and all((t, rounds) in results for t in range(len(tables))):
            for t, (records, seconds, decisions) in enumerate(out):
                more, more_seconds, more_decisions = results.pop((t, rounds))
                out[t] = records + more, seconds + more_seconds, decisions + more_decisions
            rounds += 1
            yield list(out)

    with tqdm(total=len(tables) * (deals - start) * n, disable=not progress, desc="search strength",
              unit="hand", file=sys.stderr) as bar:
        if not workers and not processes:
            for t, r in jobs:
                results[t, r] = play_timed(suite.game, suite.rules, tables[t], parts[r].start, parts[r].stop,
                                           suite.seed, on_deal=bar.update, kind=suite.kind)
                yield from completed()
            return
        if processes:
            import concurrent.futures
            import multiprocessing

            context = multiprocessing.get_context("spawn")
            with concurrent.futures.ProcessPoolExecutor(processes, mp_context=context) as pool:
                futures = {pool.submit(play_timed, suite.game, suite.rules, tables[t], parts[r].start,
                                       parts[r].stop, suite.seed, None, suite.kind): (t, r) for t, r in jobs}
                try:
                    for future in concurrent.futures.as_completed(futures):
                        job = futures[future]
                        results[job] = future.result()
                        bar.update(len(parts[job[1]]) * n)
                        yield from completed()
                except BaseException:
                    # a failed job (or Ctrl-C) stops the run now: leaving the pool would first play every
                    # round still queued, hours of them, before the failure is told
                    pool.shutdown(wait=False, cancel_futures=True)
                    for child in multiprocessing.active_children():
                        child.terminate()
                    raise
            return
        from cardlab.cluster.runtime import import_ray, ray_session

        with ray_session(workers):
            ray = import_ray()
            remote = ray.remote(num_cpus=1)(play_timed)
            pending = {remote.remote(suite.game, suite.rules, tables[t], parts[r].start, parts[r].stop,
                                     suite.seed, None, suite.kind): (t, r) for t, r in jobs}
            while pending:
                ready, _ = ray.wait(list(pending), num_returns=1)
                job = pending.pop(ready[0])
                results[job] = ray.get(ready[0])
                bar.update(len(parts[job[1]]) * n)
                yield from completed()


def check_hands(key: str, hands: Any, suite: Suite) -> int:
    """`hands` where it is a whole number from 1 to the suite's hands, else refused by `check_whole` as `key`:
    ``--hands`` from the command line (before the rows' check says what to give), ``hands`` from `measure`."""
    return check_whole(key, hands, 1, suite.episodes, f"a whole number from 1 to {suite.episodes} (suite "
                       f"{suite.name}: {suite.deals} deals x {suite.num_players} rotations)")


def measure(configs: Sequence[str], suite: Suite, hands: int, field: Sequence[str] = DEFAULT_FIELD,
            workers: int = 0, progress: bool = False,
            on_round: Callable[[dict[str, Any]], object] | None = None, processes: int = 0,
            resume: dict[str, Any] | None = None) -> dict[str, Any]:
    """Each config in slot 0 on the suite's first deals (`hands` rounded up to whole rotations): the
    figures the table prints and the JSON holds; `on_round(figures so far)` after each round. With
    `resume` (a JSON this benchmark wrote, for the same configs, field and suite), its hands are kept
    and only the deals after them are played."""
    if not configs:
        raise ValueError("give at least one configuration (an agent spec), e.g. --configs expert "
                         "search:worlds=64:ms=0:expert")
    n = suite.num_players
    deals = suite.deals_of(check_hands("hands", hands, suite))
    tables = [bench_slots(config.strip(), [f.strip() for f in field], n) for config in configs]
    table = make_game(suite.game, suite.rules)
    for spec in dict.fromkeys(spec for slots in tables for spec in slots):
        make_agent(spec, table)  # a bad spec is refused, saying why, before any hand is played
    names = [c.strip() for c in configs]
    done = None if resume is None else resumed(resume, suite, names, [f.strip() for f in field])
    if done is not None and len(done[0][0]) // n >= deals:
        return figures(suite, names, tables, trimmed(done, deals, n), list(field), deals)
    result: dict[str, Any] = {}
    for played in play_rounds(suite, tables, deals, workers, progress, processes, done):
        result = figures(suite, names, tables, played, list(field), deals)
        result["workers"] = workers
        if on_round is not None:
            on_round(result)
    return result


def figures(suite: Suite, configs: list[str], tables: list[list[str]], played: Played, field: list[str],
            asked: int) -> dict[str, Any]:
    """The figures of the deals played so far (`asked`: the deals the run plays in all)."""
    n = suite.num_players
    rows = []
    for config, slots, (records, seconds, decisions) in zip(configs, tables, played, strict=True):
        rate = Rate.of_slot(records, 0)
        (low, high), (w_low, w_high) = rate.paired_interval, rate.interval
        points, points_low, points_high = mean_interval(point_differences(records))
        diff, diff_low, diff_high = paired_difference(records, played[0][0])
        more, more_low, more_high = paired_points(records, played[0][0])
        rows.append({"config": config, "slots": slots, "hands": rate.n, "wins": rate.wins,
                     "win_rate": rate.rate, "paired_ci_low": low, "paired_ci_high": high,
                     "wilson_ci_low": w_low, "wilson_ci_high": w_high,
                     "vs_first": {"difference": diff, "ci_low": diff_low, "ci_high": diff_high},
                     "point_difference": points, "point_difference_ci_low": points_low,
                     "point_difference_ci_high": points_high,
                     "points_vs_first": {"difference": more, "ci_low": more_low, "ci_high": more_high},
                     "truncated": sum(r.truncated for r in records), "decisions": decisions,
                     "ms_per_decision": 1000 * seconds / decisions if decisions else None})
    pairs = []
    for i in range(len(configs)):
        for j in range(i + 1, len(configs)):
            diff, low, high = paired_difference(played[j][0], played[i][0])
            more, more_low, more_high = paired_points(played[j][0], played[i][0])
            pairs.append({"a": configs[j], "b": configs[i], "difference": diff, "ci_low": low,
                          "ci_high": high, "points": {"difference": more, "ci_low": more_low,
                                                      "ci_high": more_high}})
    deals = len(played[0][0]) // n
    return {"format": FORMAT, "suite": suite.name, "suite_version": suite.version,
            "suite_sha256": suite.deals_sha256, "game": suite.game, "num_players": n, "rules": suite.rules,
            "deals": deals, "hands": deals * n, "deals_asked": asked, "complete": deals == asked,
            "field": field, "fair_share": 1 / n, "configs": rows, "pairs": pairs,
            "cardlab_version": __version__,
            "played": [{"seconds": seconds, "decisions": decisions,
                        "hands": [[r.deal, r.rotation, list(r.seats), list(r.winners), list(r.points),
                                   int(r.truncated)] for r in records]}
                       for records, seconds, decisions in played]}


def paired_points(records: Sequence[EpisodeRecord], base: Sequence[EpisodeRecord]
                  ) -> tuple[float, float, float]:
    """How many more points per deal (`points_by_deal`: the others' mean less slot 0's) `records` hold than
    `base` on the same deals: the mean of the per-deal differences and its 95% t interval over deals (the
    deals both played untruncated)."""
    mine, theirs = points_by_deal(records), points_by_deal(base)
    both = [mine[d] - theirs[d] for d in mine if d in theirs]
    return mean_interval(both) if both else (math.nan, math.nan, math.nan)


def trimmed(played: Played, deals: int, n: int) -> Played:
    """Each table's records of its first `deals` deals (the times kept whole: they are per decision)."""
    return [(records[:deals * n], seconds, decisions) for records, seconds, decisions in played]


def played_of(saved: dict[str, Any]) -> Played:
    """Each config's records, seconds and decisions as a JSON of this benchmark holds them."""
    return [([EpisodeRecord(int(d), int(rot), tuple(map(int, seats)), tuple(map(int, winners)),
                            tuple(map(int, points)), bool(truncated))
              for d, rot, seats, winners, points, truncated in table["hands"]],
             float(table["seconds"]), int(table["decisions"])) for table in saved["played"]]


def check_rows(deals: int, suite: Suite) -> None:
    """Refuse `--rows` for a run of `deals` deals short of the whole suite (a leaderboard row is the whole
    suite), in one line: before the run (from `--hands`) and before its rows are written."""
    if deals != suite.deals:
        raise ValueError(f"--rows: the run plays {deals:,} of suite {suite.name}'s {suite.deals:,} deals; a "
                         f"leaderboard row is the whole suite: accepted: --hands {suite.episodes}")


def row_path(folder: pathlib.Path, suite: Suite, slots: Sequence[str]) -> pathlib.Path:
    """The file of the leaderboard row of the config in `slots[0]` (its table's slots, `seat_slots`), named
    as the leaderboard names it."""
    return folder / f"{suite.name}--{re.sub(r'[:/]', '_', slots[0])}.json"


def check_rows_before(folder: pathlib.Path, suite: Suite, configs: Sequence[str], field: Sequence[str],
                      hands: int) -> None:
    """Refuse, before the first round, `--rows` where the run would not write them: `hands` short of the
    whole suite (`check_rows`; more hands than the suite's are `measure`'s to refuse), or a row's file the
    write would fail on (`check_output`: a folder there, a folder that cannot be written)."""
    check_rows(suite.deals_of(hands), suite)
    table = make_game(suite.game, suite.rules)
    for config in configs:
        slots = bench_slots(config.strip(), [f.strip() for f in field], suite.num_players)
        check_output("--rows", row_path(folder, suite, seat_slots(slots, suite.num_players, table)))


def leaderboard_rows(result: dict[str, Any], suite: Suite, folder: pathlib.Path) -> list[pathlib.Path]:
    """Each config's leaderboard row (`cardlab.evaluation.bench.bench_row`: what ``cardlab bench CONFIG
    --suite S --field ...`` writes, the same hands) in `folder`, named as the leaderboard names them; only
    for a run over the whole suite. Each is written whole or not at all (`write_text_output`)."""
    check_rows(result["deals"], suite)
    table = make_game(suite.game, suite.rules)
    written = []
    for row, (records, _, _) in zip(result["configs"], played_of(result), strict=True):
        config, field = row["config"], result["field"]
        command = shlex.join(["cardlab", "bench", config, "--suite", suite.name,
                              *([] if field == list(DEFAULT_FIELD) else ["--field", *field])])
        slots = seat_slots(row["slots"], suite.num_players, table)
        data = bench_row(suite, slots[0], field, slots, records, command)
        path = row_path(folder, suite, slots)
        write_text_output(path, json.dumps(plain(data), indent=2, allow_nan=False) + "\n")
        written.append(path)
    return written


def checked_layout(saved: Any, where: str) -> list[str]:
    """The configs of `saved` where it is a JSON of this benchmark's layout (a dict of format `FORMAT`,
    its rows each a config with its slots, a list of played tables); else a `ValueError` in one line
    that starts with `where` (``--resume``, ``--join FILE``) and says what is accepted."""
    hint = "give a JSON this benchmark wrote (layout 2 or later), or start a new run"
    ours = isinstance(saved, dict)
    if not (ours and saved.get("format") == FORMAT and isinstance(saved.get("played"), list)):
        shown = excerpt(saved.get("format")) if ours else f"none, a {type(saved).__name__}"
        raise ValueError(f"{where}: not a JSON of this benchmark's layout {FORMAT} (format {shown}; a run "
                         f"written before layout 2 keeps no hands); {hint}")
    rows = saved.get("configs")
    if not isinstance(rows, list) or not rows or not all(
            isinstance(row, dict) and isinstance(row.get("config"), str)
            and isinstance(row.get("slots"), list) and all(isinstance(slot, str) for slot in row["slots"])
            for row in rows):
        raise ValueError(f"{where}: the JSON's configs are {excerpt(rows)}, not its list of rows (a damaged "
                         f"file); {hint}")
    return [row["config"] for row in rows]


def checked_hands(saved: dict[str, Any], suite: Suite, where: str) -> Played:
    """The hands of `saved` (`checked_layout` passed) where each config played the first deals of `suite`,
    every rotation of each in order; else a `ValueError` in one line that starts with `where`."""
    try:
        played = played_of(saved)
    except (KeyError, TypeError, ValueError) as err:
        raise ValueError(f"{where}: the JSON's played hands are damaged ({type(err).__name__}: {err}); give "
                         "a JSON this benchmark wrote, or start a new run") from None
    n = suite.num_players
    deals = len(played[0][0]) // n if played else 0
    grid = [(d, r) for d in range(min(deals, suite.deals)) for r in range(n)]
    if len(played) != len(saved["configs"]) or any(
            [(h.deal, h.rotation) for h in records] != grid or any(
                sorted(h.seats) != list(range(n)) or len(h.points) != n or not set(h.winners) <= set(range(n))
                for h in records)
            for records, _, _ in played):
        raise ValueError(f"{where}: the JSON's configs did not each play the suite's first deals, every "
                         f"rotation of each in order with {n} seats (a damaged file, or another suite's); "
                         "give a JSON this benchmark wrote, or start a new run")
    return played


def resumed(saved: Any, suite: Suite, configs: list[str], field: list[str]) -> Played:
    """The hands a JSON this benchmark wrote holds, for a run of these configs, field and suite; a
    `ValueError` naming what differs when it was written for another run or another layout."""
    theirs = checked_layout(saved, "--resume")
    mine = {"suite": suite.name, "suite_version": suite.version, "suite_sha256": suite.deals_sha256,
            "field": field}
    for key, value in mine.items():
        if saved.get(key) != value:
            raise ValueError(f"--resume: the JSON's {key} is {excerpt(saved.get(key))}, this run's "
                             f"{excerpt(value)}: resume with the same suite and field")
    if theirs != configs:
        raise ValueError(f"--resume: the JSON measured --configs {' '.join(theirs)}, this run "
                         f"{' '.join(configs)}: resume with the same configs in the same order")
    return checked_hands(saved, suite, "--resume")


def joined(saved: Sequence[Any], names: Sequence[str] = ()) -> dict[str, Any]:
    """The figures of several runs of this benchmark (JSONs it wrote, named `names`: their files) on one
    suite and field, as if one run: each run's configs in the order given, on the deals every run played
    (the first of the fewest), the first config the base of the differences; a config measured in several
    runs is kept once, and must have played the same hands in each (the same seeds give the same hands:
    C2). So rows measured apart (a new config beside older runs) are paired by deal; a config's decisions
    and time are its whole run's. Fewer than two runs, a file that is not such a JSON or is damaged, and
    runs of other suites, fields or hands, or a run of no hands, are refused, each in one line that starts
    with ``--join``."""
    names = list(names) or [f"JSON {i + 1}" for i in range(len(saved))]
    if len(saved) < 2:
        raise ValueError(f"--join: {len(saved)} JSON given; accepted: two JSONs or more this benchmark wrote "
                         "(the table of one: --show JSON)")
    configs = [checked_layout(run, f"--join {name}") for run, name in zip(saved, names, strict=True)]
    for key in ("suite", "suite_version", "suite_sha256", "field"):
        values = [run.get(key) for run in saved]
        if any(value != values[0] for value in values):
            raise ValueError(f"--join: the JSONs differ in {key} ({', '.join(map(excerpt, values))}): join "
                             "runs of one suite version and field")
    try:
        suite = load_suite(saved[0]["suite"], check=False)
    except (TypeError, ValueError) as err:
        raise ValueError(f"--join: {err}") from None
    runs = [checked_hands(run, suite, f"--join {name}") for run, name in zip(saved, names, strict=True)]
    for run_played, name in zip(runs, names, strict=True):
        if not run_played[0][0]:  # no deal has no figures to join
            raise ValueError(f"--join {name}: the JSON holds no played hands; accepted: a JSON this "
                             "benchmark wrote after a finished round (it writes none before)")
    n, deals = suite.num_players, min(len(run[0][0]) for run in runs) // suite.num_players
    found: list[str] = []
    tables: list[list[str]] = []
    played: Played = []
    for run, run_configs, run_played in zip(saved, configs, runs, strict=True):
        kept = trimmed(run_played, deals, n)
        for row, config, table in zip(run["configs"], run_configs, kept, strict=True):
            if config not in found:
                found.append(config)
                tables.append(row["slots"])
                played.append(table)
            elif played[found.index(config)][0] != table[0]:
                raise ValueError(f"--join: {config} played other hands in two of the runs (another suite "
                                 "version, field or seeding): join runs of the same deals")
    return figures(suite, found, tables, played, saved[0]["field"], deals)


def plain(value: Any) -> Any:
    """`value` with every NaN (an interval of one deal) as None, for strict JSON."""
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


def dumped(result: dict[str, Any]) -> str:
    """The JSON text: the figures indented, every config's hands on one line of their own."""
    head = plain({k: v for k, v in result.items() if k != "played"})
    text = json.dumps(head, indent=2, allow_nan=False)
    if "played" not in result:
        return text + "\n"
    tables = ",\n    ".join(json.dumps(table, separators=(",", ":"), allow_nan=False)
                            for table in result["played"])
    return f'{text[:-2]},\n  "played": [\n    {tables}\n  ]\n}}\n'


def _interval(low: float | None, high: float | None, signed: bool = False, digits: int = 3) -> str:
    form = f"{'+' if signed else ''}.{digits}f"
    return "" if low is None or high is None or math.isnan(low) else f"[{low:{form}}, {high:{form}}]"


def _points(paired: dict[str, Any] | None) -> list[str]:
    """A paired points difference as two cells (none in a JSON written before they were paired)."""
    if paired is None or paired["difference"] is None:
        return ["", ""]
    return [f"{paired['difference']:+.2f}", _interval(paired["ci_low"], paired["ci_high"], True, 2)]


def format_table(result: dict[str, Any]) -> str:
    """The configurations' rows, then every pair's paired difference (points per deal: the others' mean
    less the config's, so above 0 is better; a JSON written before they were paired shows none)."""
    head = (f"{result['game']} {result['num_players']}p, suite {result['suite']} v{result['suite_version']}: "
            f"its first {plural(result['deals'], 'deal')} x {result['num_players']} seat rotations = "
            f"{plural(result['hands'], 'hand')} per config, field {', '.join(result['field'])}, fair share "
            f"{result['fair_share']:.3f}; 95% intervals clustered by deal, differences paired by deal")
    first = result["configs"][0]["config"]
    rows = [[r["config"], r["hands"], f"{r['win_rate']:.3f}",
             _interval(r["paired_ci_low"], r["paired_ci_high"]),
             f"{r['vs_first']['difference']:+.3f}",
             _interval(r["vs_first"]["ci_low"], r["vs_first"]["ci_high"], True),
             f"{r['point_difference']:+.2f}", *_points(r.get("points_vs_first")),
             "" if r["ms_per_decision"] is None else f"{r['ms_per_decision']:.1f}"]
            for r in result["configs"]]
    headers = ["config", "hands", "win rate", "95% CI", f"vs {first}", "95% CI", "points/deal", "vs first",
               "95% CI", "ms/decision"]
    table = text_table(headers, rows)
    pairs = [[p["a"], p["b"], f"{p['difference']:+.3f}", _interval(p["ci_low"], p["ci_high"], True),
              *_points(p.get("points"))] for p in result["pairs"]]
    out = f"{head}\n{table}"
    if len(pairs) > 1:
        out += "\n\n" + text_table(["config", "less", "difference", "95% CI", "points/deal", "95% CI"], pairs)
    return out


def read_joined(paths: Sequence[pathlib.Path]) -> list[Any]:
    """The JSONs `--join` names, read; a `ValueError` in one line for a file given twice, missing or not
    JSON (what each holds is `joined`'s to check)."""
    seen: set[pathlib.Path] = set()
    runs = []
    for path in paths:
        if path.resolve() in seen:
            raise ValueError(f"--join {path}: given twice; accepted: each JSON once")
        seen.add(path.resolve())
        try:
            runs.append(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError) as err:
            raise ValueError(f"--join {path}: not a JSON ({type(err).__name__}: {err}); give a JSON this "
                             "benchmark wrote") from None
    return runs


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configs", nargs="+",
                        help="agent specs, one per row; the first is the base of the differences")
    parser.add_argument("--field", nargs="+", default=list(DEFAULT_FIELD),
                        help="agent specs of the other seats, repeated in order (default: expert)")
    parser.add_argument("--suite", default=DEFAULT_SUITE, help=f"deal suite (default {DEFAULT_SUITE})")
    parser.add_argument("--hands", type=int, default=400, help="hands per config (default 400)")
    parser.add_argument("--workers", type=int, default=0, help="Ray workers (default 0: play here)")
    parser.add_argument("--processes", type=int, default=0,
                        help="local processes instead of Ray workers (default 0; the same figures)")
    parser.add_argument("--json", type=pathlib.Path, help="write the figures to this JSON file")
    parser.add_argument("--resume", type=pathlib.Path, metavar="JSON",
                        help="keep the hands of this JSON (a run of the same configs, field and suite), play "
                             "the next deals up to --hands and write it again after each round")
    parser.add_argument("--rows", type=pathlib.Path, metavar="DIR",
                        help="when the run covers the whole suite, write each config's leaderboard row (what "
                             "cardlab bench writes for it) in DIR, e.g. docs/leaderboard")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument("--show", type=pathlib.Path, metavar="JSON",
                        help="print the table of a JSON this benchmark wrote (a stopped run's: its finished "
                             "rounds) instead of playing")
    parser.add_argument("--join", type=pathlib.Path, nargs="+", metavar="JSON",
                        help="print one table of several JSONs this benchmark wrote on one suite and field, "
                             "their configs paired on the deals all of them played, instead of playing")
    args = parser.parse_args(argv)
    for reader, value in (("--join", args.join), ("--show", args.show)):
        given = [f"--{dest}" for dest in (*PLAYING, *(["show"] if reader == "--join" else []))
                 if getattr(args, dest) != parser.get_default(dest)]
        if value and given:  # a --json beside them was never written
            verb, them = ("is", "it") if len(given) == 1 else ("are", "them")
            parser.error(f"{reader} prints a table of saved JSON and plays nothing: {', '.join(given)} "
                         f"{verb} not read beside it; accepted: {reader} without {them}, or no {reader} "
                         "to play")
    if args.join:
        try:
            print(format_table(joined(read_joined(args.join), list(map(str, args.join)))))
        except ValueError as err:
            parser.error(str(err))
        return
    if args.show is not None:
        try:
            table = format_table(json.loads(args.show.read_text(encoding="utf-8")))
        except (OSError, ValueError, KeyError, TypeError) as err:
            parser.error(f"--show {args.show}: not a JSON this benchmark wrote ({type(err).__name__}: "
                         f"{err}); accepted: a file its --json or --resume wrote")
        print(table)
        return
    if not args.configs:
        parser.error("give --configs SPEC... (agent specs, one per row), or --show JSON")
    if args.workers < 0:
        parser.error(f"--workers must be 0 (play here) or more, got {args.workers}")
    if args.processes < 0:
        parser.error(refusal("--processes", args.processes, RANGE, "0 (play here) or a whole number of local "
                             "processes"))
    if args.workers and args.processes:  # both played in processes, the JSON saying Ray workers
        parser.error(refusal("--processes", args.processes, f"not accepted with --workers {args.workers}",
                             "--workers N (Ray) or --processes N (local processes), not both"))
    if args.rows is not None and not args.rows.is_dir():
        parser.error(f"--rows {args.rows}: not a folder; give the folder of the rows, e.g. docs/leaderboard")
    resume = None
    if args.resume is not None:
        if args.json is not None and args.json != args.resume:
            parser.error("--resume JSON writes to that JSON: leave out --json, or give it the same path")
        args.json = args.resume
        if args.resume.exists():
            try:
                resume = json.loads(args.resume.read_text(encoding="utf-8"))
            except (OSError, ValueError) as err:
                parser.error(f"--resume {args.resume}: not a JSON ({type(err).__name__}: {err}); accepted: a "
                             "JSON this benchmark wrote, or the name of a new file to start one")

    written: list[pathlib.Path] = []

    def write(result: dict[str, Any]) -> None:
        if args.json is not None:
            partial = args.json.with_name(args.json.name + ".partial")
            partial.write_text(dumped(result), encoding="utf-8")
            partial.replace(args.json)  # by rename: a run stopped while writing keeps its last round
            written[:] = [args.json]

    try:
        check_output("--json" if args.resume is None else "--resume", args.json)  # before the first round
        suite = load_suite(args.suite)
        check_hands("--hands", args.hands, suite)
        if args.rows is not None:
            check_rows_before(args.rows, suite, args.configs, args.field, args.hands)
        result = measure(args.configs, suite, args.hands, args.field, args.workers, not args.no_progress,
                         on_round=write, processes=args.processes, resume=resume)
    except ValueError as err:
        parser.error(str(err))
    print(format_table(result))
    if written:
        print(f"wrote {args.json}", file=sys.stderr)
    elif args.json is not None:  # a resumed run that holds the hands asked already: nothing played
        print(f"{args.json} already holds the hands asked: nothing played, the file left as it was",
              file=sys.stderr)
    if args.rows is not None:
        try:
            paths = leaderboard_rows(result, suite, args.rows)
        except (OSError, ValueError) as err:
            parser.error(str(err))
        print(f"wrote {', '.join(map(str, paths))}", file=sys.stderr)


if __name__ == "__main__":
    main()
