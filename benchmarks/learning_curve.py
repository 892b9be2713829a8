"""Learning curves over time: win rate against `expert` (95% intervals) by minutes of run.

The band is the interval clustered by deal (eval.csv's ``paired_ci_low/high``)
where the rows have it, Wilson's (``ci_low/high``) for rows of older runs; the
legend says which. The minutes are eval.csv's ``minutes`` column (the lean
trainer's minutes of training at each evaluation, wall clock, evaluations
included) where every row has them, else the wall time TensorBoard recorded
for each evaluation, counted from the creation of the run's event file (the
start of the run).

Reads run folders and draws one panel per table (game and number of
players), a curve per run, into one PNG. The README's figure is made by:

    python benchmarks/learning_curve.py old --minutes 50 --runs-dir runs/curves
    python benchmarks/learning_curve.py plot runs/curves/huit_ppo_no_imitation__* \\
        runs/huit_selfplay__* runs/huit_selfplay_match__* runs/switch_selfplay__* \\
        --out docs/learning_curve.png

where the three self-play runs are ``cardlab train configs/<name>.yaml``.
``old`` trains the pipeline the issue compares with: configs/huit_ppo.yaml
(MaskablePPO, single-seat envs, heuristics move by move) with imitation off,
evaluated against `expert` every 262,144 steps (400 hands), for `--minutes`
of wall clock.

The table bots' curves (``cardlab train configs/tables/GAME_Np.yaml``, one
panel per table) are made by:

    python benchmarks/learning_curve.py plot runs/huit_3p__* runs/huit_4p__* runs/huit_5p__* \\
        runs/huit_6p__* runs/switch_5p__* runs/switch_6p__* --out docs/table_bots_curve.png
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import math
from pathlib import Path
from typing import Any

import yaml
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from cardlab.evaluation.results import new_figure
from cardlab.training.harness.config import load_config
from cardlab.training.trainers.train import train

REPO = Path(__file__).resolve().parents[1]
OPPONENT = "expert"


@dataclasses.dataclass
class Curve:
    """One run's evaluations against `OPPONENT`: minutes since the run started, rates and intervals."""

    label: str
    game: str
    num_players: int
    minutes: list[float]
    rate: list[float]
    low: list[float]
    high: list[float]
    paired: bool = True
    """whether every band is the paired interval (False: some rows predate it and show Wilson's)"""
    trained: bool = False
    """whether the minutes are eval.csv's minutes of training (False: TensorBoard's wall clock)"""


def method(cfg: dict[str, Any]) -> str:
    """How a run trained, from its saved config: the trainer, then each method key it turned on."""
    parts = ["lean PPO" if cfg.get("trainer") == "lean" else "MaskablePPO"]
    if cfg.get("imitation", {}).get("enabled"):
        parts.append("after imitation")
    if cfg.get("self_play", {}).get("enabled"):
        parts.append("self-play league")
    if cfg.get("policy", {}).get("privileged_critic"):
        parts.append("privileged critic")
    if cfg.get("episode") == "match":
        parts.append("match episodes")
    if (cfg.get("rules") or {}).get("memory"):
        parts.append("memory")
    return ", ".join(parts)


def read_curve(run_dir: Path) -> Curve:
    """The run's evaluations against `OPPONENT` (the final one included) over its minutes."""
    if not (run_dir / "eval.csv").is_file() or not (run_dir / "config.yaml").is_file():
        raise SystemExit(f"{run_dir} has no eval.csv or config.yaml: is it a run folder?")
    cfg = yaml.safe_load((run_dir / "config.yaml").read_text())
    label = f"{method(cfg)}, {cfg['name']} (reward: {cfg.get('reward', 'win')})"
    with (run_dir / "eval.csv").open(newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["opponent"] == OPPONENT]
    by_step = {int(r["steps"]): r for r in rows}  # the final evaluation, written last, wins a shared step
    trained = {steps: float(r["minutes"]) for steps, r in by_step.items() if float(r.get("minutes") or 0) > 0}
    times = trained if by_step and len(trained) == len(by_step) else wall_minutes(run_dir)
    curve = Curve(label, cfg["game"], cfg["num_players"], [], [], [], [], trained=times is trained)
    for steps, row in sorted(by_step.items()):
        if steps in times:
            curve.minutes.append(times[steps])
            curve.rate.append(float(row["win_rate"]))
            low, high = band(row)
            curve.paired &= low is not None
            curve.low.append(float(low if low is not None else row["ci_low"]))
            curve.high.append(float(high if high is not None else row["ci_high"]))
    if not curve.minutes:
        raise SystemExit(f"{run_dir}: no evaluation against {OPPONENT} with a time yet")
    return curve


def wall_minutes(run_dir: Path) -> dict[int, float]:
    """Steps -> minutes from the start of the run at which TensorBoard recorded each evaluation."""
    events = sorted(run_dir.glob("events.out.tfevents.*"))
    if not events:
        raise SystemExit(f"{run_dir} has no minutes in eval.csv and no TensorBoard event file")
    start = float(events[0].name.split(".")[3])  # events.out.tfevents.<unix time>.<host>...
    times: dict[int, float] = {}
    for path in events:
        acc = EventAccumulator(str(path), size_guidance={"scalars": 0})
        acc.Reload()
        for tag in (f"eval/win_rate_{OPPONENT}", f"eval/final_win_rate_{OPPONENT}"):
            if tag in acc.Tags()["scalars"]:
                times |= {e.step: (e.wall_time - start) / 60.0 for e in acc.Scalars(tag)}
    return times


def band(row: dict[str, str]) -> tuple[str | None, str | None]:
    """The row's paired interval, or (None, None) for a row written before eval.csv had one."""
    low, high = row.get("paired_ci_low") or None, row.get("paired_ci_high") or None
    return (low, high) if low is not None and high is not None else (None, None)


def plot(curves: list[Curve], out: Path) -> Path:
    """One panel per table (up to 3 in a row), a curve per run, with its band and the fair share."""
    tables = sorted({(c.game, c.num_players) for c in curves})
    columns = min(3, len(tables))
    rows = math.ceil(len(tables) / columns)
    fig = new_figure(6.0 * columns, 4.2 * rows)
    axes = fig.subplots(rows, columns, squeeze=False).flatten()
    for ax, (game, n) in zip(axes, tables, strict=False):
        shown = [c for c in curves if (c.game, c.num_players) == (game, n)]
        for c in shown:
            label = c.label if c.paired else f"{c.label}, Wilson band"
            line = ax.plot(c.minutes, c.rate, marker="o", markersize=3, label=label)[0]
            ax.fill_between(c.minutes, c.low, c.high, color=line.get_color(), alpha=0.2)
        ax.axhline(1.0 / n, color="grey", linestyle=":", label=f"fair share 1/{n}")
        ax.set_title(f"{game}, {n} players: one bot against {n - 1} x {OPPONENT}")
        trained = all(c.trained for c in shown)
        ax.set_xlabel("minutes of training (eval.csv)" if trained else
                      "wall clock (minutes from the start of the run)")
        ax.set_ylabel(f"hands won against {OPPONENT} (95% CI, clustered by deal)")
        ax.set_xlim(left=0.0)
        ax.set_ylim(0.0, max(0.6, *(max(c.high) for c in shown)))
        ax.grid(alpha=0.3)
        ax.legend(loc="lower right", fontsize="small")
    for ax in axes[len(tables):]:
        ax.set_visible(False)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    return out


def train_old(minutes: float, runs_dir: Path) -> Path:
    """configs/huit_ppo.yaml with imitation off, evaluated against expert, for `minutes` of wall clock."""
    cfg = load_config(REPO / "configs" / "huit_ppo.yaml")
    cfg = dataclasses.replace(
        cfg, name="huit_ppo_no_imitation", total_timesteps=10**9, max_minutes=minutes,
        imitation=dataclasses.replace(cfg.imitation, enabled=False),
        eval=dataclasses.replace(cfg.eval, every_steps=262_144, hands=400, final_hands=1000,
                                 opponents=[OPPONENT]),
    )
    return train(cfg, runs_dir=runs_dir, progress=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("plot", help="draw the curves of run folders")
    p.add_argument("runs", nargs="+", type=Path, help="run folders")
    p.add_argument("--out", type=Path, default=REPO / "docs" / "learning_curve.png", help="the PNG to write")
    p = sub.add_parser("old", help="train the old pipeline (huit_ppo.yaml, imitation off) for the comparison")
    p.add_argument("--minutes", type=float, default=50.0, help="wall-clock budget of the run")
    p.add_argument("--runs-dir", type=Path, default=Path("runs"), help="where the run folder goes")
    args = parser.parse_args()
    if args.command == "plot":
        curves = [read_curve(run) for run in args.runs]
        for c in curves:
            print(f"{c.label:<58} {len(c.minutes):>3} evaluations, last at {c.minutes[-1]:5.1f} min: "
                  f"{c.rate[-1]:.3f} [{c.low[-1]:.3f}, {c.high[-1]:.3f}]")
        print(f"wrote {plot(curves, args.out)}")
    else:
        print(f"run folder: {train_old(args.minutes, args.runs_dir)}")


if __name__ == "__main__":
    main()
