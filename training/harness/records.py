"""Evaluations during a run and where they go: `LearnerEval` rows, eval.csv, TensorBoard names.

Shared by both trainers, so their run folders read the same.
"""

from __future__ import annotations

import csv
import dataclasses
import re
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from stable_baselines3.common.logger import KVWriter, Logger, TensorBoardOutputFormat

from cardlab.agents.bot import export_bot
from cardlab.envs.declared import check_that
from cardlab.evaluation.evaluate import evaluate
from cardlab.evaluation.request import EvalRequest
from cardlab.training.harness.config import (
    TrainConfig,
)
from cardlab.training.harness.progress import Progress

EvalReporter = Callable[[int, Sequence["LearnerEval"], bool], object]
"""Called with (steps, results, final) after each evaluation; the final one comes after the bot file is
written. A sweep (`cardlab.cluster.sweep`) passes them to Ray Tune, whose scheduler may stop the run there."""
EVAL_SEED_OFFSET = 1_000_003


# SB3's logger keys -> this project's TensorBoard names (None: not written).
RENAMES: tuple[tuple[str, str | None], ...] = (
    ("train/learning_rate", "charts/learning_rate"),
    ("train/", "losses/"),
    ("rollout/", "charts/"),
    ("time/fps", "charts/SPS"),
    ("time/", None),
)


# ---------------------------------------------------------------- evaluation
@dataclasses.dataclass(frozen=True)
class LearnerEval:
    """The learner's results against one opponent spec (a row of eval.csv)."""

    steps: int
    opponent: str
    hands: int
    win_rate: float
    ci_low: float
    """Wilson's interval (every hand independent) ..."""
    ci_high: float
    paired_ci_low: float
    """... and the one clustered by deal (a deal's seat rotations one unit): the one to trust"""
    paired_ci_high: float
    mean_points: float
    """the learner's mean hand points (cards left when another seat wins; lower is better)"""
    matches: int = 0
    """matches played to the target score (0: none; the final evaluation plays `eval.final_matches`)"""
    match_win_rate: float = 0.0
    match_ci_low: float = 0.0
    match_ci_high: float = 0.0
    match_paired_ci_low: float = 0.0
    match_paired_ci_high: float = 0.0
    minutes: float = 0.0
    """minutes of training (wall clock, imitation excluded) when measured: the x of a learning curve over
    time (0 where the trainer does not record it)"""

    def row(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


EVAL_FIELDS = tuple(f.name for f in dataclasses.fields(LearnerEval))
"""the columns of eval.csv"""
EVAL_ROWS = ("eval.csv as the trainer wrote it: a header of its columns (steps, opponent, then some of "
             f"{', '.join(EVAL_FIELDS[2:])}) and a row per evaluation with a value in each column, steps a "
             "whole number, the rest numbers or empty; restore the file or train again")
"""what eval.csv may hold, as its refusals say"""
_STEPS = re.compile(r"[0-9]+")
_NUMBER = re.compile(r"|nan|-?inf|-?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")
"""a value of eval.csv's number columns: a number as Python writes an int or a float (an interval of one deal
is nan), or empty (a column an older run did not have, rewritten empty by `EvalHistory.append`)"""


def evaluate_bot(
    bot_path: Path, cfg: TrainConfig, spec: str, hands: int, seed: int, steps: int = 0, bar: bool = False,
    matches: int = 0, beat: Progress | None = None,
) -> LearnerEval:
    """`evaluate` a bot (masked argmax) in one seat against `spec` in all the others, seats rotating.

    `bar`: draw a progress bar on stderr; `matches`: also play this many matches; `beat`: where a log
    without bars gets a line of how far the evaluation is (`Progress.heartbeat`).
    """
    n = cfg.num_players

    def played(done: int, total: int) -> None:
        if beat is not None:
            beat.heartbeat(lambda: f"  evaluating against {spec}: {done:,} of {total:,} episodes played")

    request = EvalRequest(cfg.game, [f"bot:{bot_path}"] + [spec] * (n - 1), hands=hands, matches=matches,
                          seed=seed, rules={**cfg.rules, "num_players": n})
    result = evaluate(request, progress=bar, desc=f"eval vs {spec}", on_played=played)
    learner = result.stats[0]
    hand_rate, matched = learner.hands, learner.matches
    match_fields = {"match_win_rate": matched.rate, **matched.fields("match_")} if matched.n else {}
    return LearnerEval(steps=steps, opponent=spec, hands=hand_rate.n, win_rate=hand_rate.rate,
                       **hand_rate.fields(""),
                       mean_points=learner.mean_points, matches=matched.n, **match_fields)


def evaluate_policy(policy: Any, cfg: TrainConfig, hands: int, steps: int,
                    progress: Progress | None = None, matches: int = 0,
                    beat: Progress | None = None) -> list[LearnerEval]:
    """Evaluate an SB3 policy against every eval opponent (through a temporary bot export).

    With `progress`, each opponent's evaluation draws a bar (on a terminal) or
    ends with a line; `beat` (or `progress`) prints a line of how far it is at
    least every `HEARTBEAT_SECONDS` in a log: no long silence.
    """
    beat = beat or progress
    seed = cfg.seed + EVAL_SEED_OFFSET
    results: list[LearnerEval] = []
    status = beat.status if beat is not None else None
    with tempfile.TemporaryDirectory(prefix="cardlab-eval-") as tmp:
        path = export_bot(policy, Path(tmp) / "learner", game=cfg.game, rules=cfg.rules,
                          num_players=cfg.num_players, summary={})
        for spec in cfg.eval.opponents:
            if beat is not None:
                beat.doing(f"evaluating at {steps:,} steps: {hands:,} hands against {spec}")
            bar = progress is not None and progress.bars
            results.append(evaluate_bot(path, cfg, spec, hands, seed, steps, bar=bar, matches=matches,
                                        beat=beat))
            if progress is not None and not bar:
                progress.say(f"  against {spec}: {format_rate(results[-1])}")
    if beat is not None and status is not None:
        beat.doing(status)
    return results


def interval_text(low: float, high: float) -> str:
    return f"[{low:.3f}, {high:.3f}]"


def format_rate(r: LearnerEval) -> str:
    """A win rate with its paired 95% interval, as `cardlab eval` prints them; matches beside."""
    text = f"{r.win_rate:.3f} {interval_text(r.paired_ci_low, r.paired_ci_high)}"
    if r.matches:
        matches = interval_text(r.match_paired_ci_low, r.match_paired_ci_high)
        text += f", matches {r.match_win_rate:.3f} {matches}"
    return text


def format_results(results: Sequence[LearnerEval]) -> str:
    """The evaluation table printed at the end of a run (fractions, as `cardlab eval` prints them)."""
    with_matches = any(r.matches for r in results)
    head = (f"{'opponent':<24}{'hands':>7}  {'win rate':>8}  {'95% CI (paired)':<17}{'Wilson':<16}"
            f"{'mean points':>11}")
    if with_matches:
        head += f"{'matches':>9}  {'match rate':>10}  {'95% CI (paired)':<17}Wilson"
    lines = [head]
    for r in results:
        paired, wilson = interval_text(r.paired_ci_low, r.paired_ci_high), interval_text(r.ci_low, r.ci_high)
        line = f"{r.opponent:<24}{r.hands:>7}  {r.win_rate:>8.3f}  {paired:<17}{wilson:<16}"
        line += f"{r.mean_points:>11.2f}"
        if with_matches:
            match_paired = interval_text(r.match_paired_ci_low, r.match_paired_ci_high)
            line += f"{r.matches:>9}  {r.match_win_rate:>10.3f}  {match_paired:<17}"
            line += interval_text(r.match_ci_low, r.match_ci_high)
        lines.append(line)
    return "\n".join(lines)


def tag(spec: str) -> str:
    """A TensorBoard-friendly name for an agent spec (bot paths have slashes)."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", spec)


def record_results(logger: Logger, results: Sequence[LearnerEval], prefix: str = "") -> None:
    for r in results:
        name = tag(r.opponent)
        logger.record(f"eval/{prefix}win_rate_{name}", r.win_rate)
        logger.record(f"eval/{prefix}ci_low_{name}", r.ci_low)
        logger.record(f"eval/{prefix}paired_ci_low_{name}", r.paired_ci_low)
        logger.record(f"eval/{prefix}paired_ci_high_{name}", r.paired_ci_high)
        logger.record(f"eval/{prefix}mean_points_{name}", r.mean_points)
        if r.matches:
            logger.record(f"eval/{prefix}match_win_rate_{name}", r.match_win_rate)
            logger.record(f"eval/{prefix}match_ci_low_{name}", r.match_ci_low)
            logger.record(f"eval/{prefix}match_paired_ci_low_{name}", r.match_paired_ci_low)


class EvalHistory:
    """``eval.csv``: one row per evaluation and opponent."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def rows(self) -> list[dict[str, str]]:
        """The file's rows, where it is eval.csv as a trainer writes it (`EVAL_ROWS`); else a `ValueError` in
        one line naming the file and its first wrong line: a resumed run rewrites the file from these rows
        and the learning curves draw them, so a row cut short (a write stopped midway) or a damaged value
        would be kept, or drawn, as if measured."""
        if not self.path.exists():
            return []
        try:
            with self.path.open(newline="", encoding="utf-8") as f:
                lines = [(number, line) for number, line in enumerate(csv.reader(f), 1) if line]
        except (UnicodeDecodeError, csv.Error) as err:
            raise ValueError(f"{self.path} is not a CSV text ({err}); accepted: {EVAL_ROWS}") from None
        if not lines:
            return []
        header = lines[0][1]
        check_that(header[:2] == ["steps", "opponent"] and set(header) <= set(EVAL_FIELDS),
                   f"{self.path} line {lines[0][0]}", ",".join(header), "not the header of eval.csv",
                   EVAL_ROWS)
        for number, line in lines[1:]:
            check_that(len(line) == len(header), f"{self.path} line {number}", ",".join(line),
                       f"a row of {len(line)} columns, not the header's {len(header)}", EVAL_ROWS)
            for name, value in zip(header, line, strict=True):
                number_ok = (_STEPS if name == "steps" else _NUMBER).fullmatch(value) is not None
                check_that(name == "opponent" or number_ok, f"{self.path} line {number} {name}", value,
                           "not a whole number" if name == "steps" else "not a number", EVAL_ROWS)
        return [dict(zip(header, line, strict=True)) for _, line in lines[1:]]

    def append(self, results: Sequence[LearnerEval]) -> None:
        """Add rows; a file written before a column was added (a resumed older run) is rewritten first."""
        old = self.rows()
        if old and list(old[0]) != list(EVAL_FIELDS):
            self.path.unlink()
            self._write(old, "w")  # the new columns empty in the old rows
        self._write([r.row() for r in results], "a")

    def truncate(self, steps: int) -> None:
        """Drop rows after `steps` (evaluations a resumed run will redo)."""
        kept = [r for r in self.rows() if int(r["steps"]) <= steps]
        self.path.unlink(missing_ok=True)
        self._write(kept, "w")

    def _write(self, rows: Sequence[dict[str, Any]], mode: str) -> None:
        if not rows:
            return
        header = mode == "w" or not self.path.exists()
        with self.path.open(mode, newline="", encoding="utf-8") as f:
            writer = csv.DictWriter(f, fieldnames=EVAL_FIELDS)
            if header:
                writer.writeheader()
            writer.writerows(rows)


class RenamingWriter(KVWriter):
    """Writes SB3's logger values under this project's names (`RENAMES`)."""

    def __init__(self, inner: KVWriter) -> None:
        self.inner = inner

    @staticmethod
    def rename(key: str) -> str | None:
        """The written name of `key` (a prefix rule renames the prefix), or None to drop it."""
        for source, target in RENAMES:
            if key == source:
                return target
            if source.endswith("/") and key.startswith(source):
                return None if target is None else target + key[len(source):]
        return key

    def write(
        self, key_values: dict[str, Any], key_excluded: dict[str, tuple[str, ...]], step: int = 0
    ) -> None:
        values, excluded = {}, {}
        for key, value in key_values.items():
            name = self.rename(key)
            if name is not None:
                values[name], excluded[name] = value, key_excluded.get(key, ())
        self.inner.write(values, excluded, step)

    def close(self) -> None:
        self.inner.close()


def make_logger(run_dir: Path) -> Logger:
    return Logger(str(run_dir), [RenamingWriter(TensorBoardOutputFormat(str(run_dir)))])
