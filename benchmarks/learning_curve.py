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
import dataclasses
import math
import re
import time
from pathlib import Path
from typing import Any

import yaml
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from cardlab.envs.declared import RANGE, refusal
from cardlab.evaluation.results import new_figure
from cardlab.training.arena.league import list_snapshots
from cardlab.training.harness.checkpoints import checkpoint_steps, list_checkpoints, remove_checkpoint
from cardlab.training.harness.config import TrainConfig, config_from_dict, load_config, validate_config
from cardlab.training.harness.config_bounds import MINUTES
from cardlab.training.harness.records import EvalHistory
from cardlab.training.harness.runs import prepare_resume
from cardlab.training.harness.yaml_files import read_extended
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
    steps: list[int]
    rate: list[float]
    low: list[float]
    high: list[float]
    paired: bool = True
    """whether every band is the paired interval (False: some rows predate it and show Wilson's)"""
    trained: bool = False
    """whether the minutes are eval.csv's minutes of training (False: TensorBoard's wall clock)"""


def method(cfg: dict[str, Any]) -> str:
    """How a run trained, from its saved config: the trainer, then each method key it turned on."""
    learner = "DMC" if cfg.get("algorithm") == "dmc" else "PPO"
    parts = [f"lean {learner}" if cfg.get("trainer") == "lean" else "MaskablePPO"]
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
    try:
        rows = [r for r in EvalHistory(run_dir / "eval.csv").rows() if r["opponent"] == OPPONENT]
    except ValueError as err:
        raise SystemExit(str(err)) from None
    by_step = {int(r["steps"]): r for r in rows}  # the final evaluation, written last, wins a shared step
    trained = {steps: float(r["minutes"]) for steps, r in by_step.items() if float(r.get("minutes") or 0) > 0}
    times = trained if by_step and len(trained) == len(by_step) else wall_minutes(run_dir)
    curve = Curve(label, cfg["game"], cfg["num_players"], [], [], [], [], [], trained=times is trained)
    for steps, row in sorted(by_step.items()):
        if steps in times:
            curve.minutes.append(times[steps])
            curve.steps.append(steps)
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


def plot(curves: list[Curve], out: Path, by_steps: bool = False) -> Path:
    """One panel per table (up to 3 in a row), a curve per run, with its band and the fair share.

    `by_steps`: the x axis is the learner's steps on a log scale (long runs), else minutes of training.
    """
    tables = sorted({(c.game, c.num_players) for c in curves})
    columns = min(3, len(tables))
    rows = math.ceil(len(tables) / columns)
    fig = new_figure(6.0 * columns, 4.2 * rows)
    axes = fig.subplots(rows, columns, squeeze=False).flatten()
    for ax, (game, n) in zip(axes, tables, strict=False):
        shown = [c for c in curves if (c.game, c.num_players) == (game, n)]
        for c in shown:
            label = c.label if c.paired else f"{c.label}, Wilson band"
            shown_at = [i for i, steps in enumerate(c.steps) if steps > 0 or not by_steps]  # log: no 0
            xs = [float(c.steps[i] if by_steps else c.minutes[i]) for i in shown_at]
            line = ax.plot(xs, [c.rate[i] for i in shown_at], marker="o", markersize=3, label=label)[0]
            ax.fill_between(xs, [c.low[i] for i in shown_at], [c.high[i] for i in shown_at],
                            color=line.get_color(), alpha=0.2)
        ax.axhline(1.0 / n, color="grey", linestyle=":", label=f"fair share 1/{n}")
        ax.set_title(f"{game}, {n} players: one bot against {n - 1} x {OPPONENT}")
        trained = all(c.trained for c in shown)
        if by_steps:
            ax.set_xscale("log")
            ax.set_xlabel("learner steps (log scale)")
        else:
            ax.set_xlabel("minutes of training (eval.csv)" if trained else
                          "wall clock (minutes from the start of the run)")
            ax.set_xlim(left=0.0)
        ax.set_ylabel(f"hands won against {OPPONENT} (95% CI, clustered by deal)")
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


LONG_RUNS_DIR = REPO / "benchmarks" / "results" / "long-runs"
CURVE_POINTS = [n * 10**k for k in range(6, 10) for n in (1, 2, 5)][:-1]
"""the steps at which a long run's rounds end (1M, 2M, 5M, ... 200M, 500M, 1G, 2G): its curve's points on a
log axis; past 200M a round takes hours on a few cores, minutes with many actors and a GPU learner"""
LONG_EVAL_EVERY = 200_000_000
"""a long run's evaluation interval (400 hands), as its first round saved it in config.yaml: a resumed run
keeps its config, so past 200M a round also evaluates at each multiple of it, between the curve's points"""
LONG_FINAL_HANDS = 2000
"""hands against the experts at the end of every round (the curve's points)"""


def table_recipe(game: str, num_players: int, learner: str, imitation: bool, *, name: str, steps: int,
                 checkpoint_every: int, every_steps: int, hands: int, final_hands: int) -> TrainConfig:
    """The table bots' recipe (configs/tables/base.yaml) at the table `game` x `num_players`, with the
    learner `learner` (``ppo`` or ``dmc``) and the recipe's imitation of the expert on or off, trained for
    `steps` learner steps with no wall-clock limit and evaluated against `OPPONENT` only (`hands` every
    `every_steps`, `final_hands` at the end): one place for the long runs (`long_config`) and the rows of
    benchmarks/dmc_vs_ppo.py. A `ValueError` where the recipe refuses the table."""
    recipe = read_extended(REPO / "configs" / "tables" / "base.yaml")
    cfg = config_from_dict({**recipe, "game": game, "num_players": num_players})
    return dataclasses.replace(
        cfg, name=name, algorithm=learner, total_timesteps=steps, max_minutes=0.0,
        checkpoint_every=checkpoint_every, imitation=dataclasses.replace(cfg.imitation, enabled=imitation),
        eval=dataclasses.replace(cfg.eval, every_steps=every_steps, hands=hands, final_hands=final_hands,
                                 opponents=[OPPONENT]))


LABEL = re.compile(r"([a-z]+)-([1-9][0-9]?)p-(dmc|ppo)-(scratch|clone)")
"""a long run's label, written one way only (``huit-04p-...`` or another script's digits would name another
folder for the same run): ASCII letters and digits, the table size without a leading zero"""
LABELS = ("GAME-Np-LEARNER-START, e.g. huit-4p-dmc-scratch (a game and its table size in the digits 0-9, "
          "learner dmc or ppo, start scratch or clone)")
"""what a long run's label may be, as its refusal says"""


def long_config(label: str) -> TrainConfig:
    """The config of a long run, by label ``GAME-Np-LEARNER-START`` (`LABEL`): the table bots' recipe
    (`table_recipe`) at that table, with learner ``dmc`` or ``ppo`` and START ``scratch`` (imitation off)
    or ``clone`` (the recipe's imitation of the expert first). A run in progress resumes from it, so what
    it returns for a label does not change. Another label, or a table the recipe refuses, is refused in
    one line (`refusal`)."""
    found = LABEL.fullmatch(label)
    if found is None:
        raise SystemExit(refusal("label", label, "an unknown long run", LABELS))
    game, seats, learner, start = found.groups()
    if learner == "dmc" and start == "clone":
        raise SystemExit(refusal("label", label, "an unknown long run (the DMC learner has no imitation "
                                 "start)", f"{game}-{seats}p-ppo-clone or {game}-{seats}p-dmc-scratch"))
    try:
        return table_recipe(game, int(seats), learner, start == "clone", name=label.replace("-", "_"),
                            steps=CURVE_POINTS[-1], checkpoint_every=10_000_000, every_steps=LONG_EVAL_EVERY,
                            hands=400, final_hands=LONG_FINAL_HANDS)
    except ValueError as err:
        raise SystemExit(refusal("label", label, f"an unknown long run (the recipe refuses its table: {err})",
                                 LABELS)) from None


def check_growth(minutes: float, until: int) -> None:
    """Refuse, before a round starts, minutes a round cannot run in (half a minute at least, finite: NaN
    and infinity are refused) and a step count outside the curve's (`CURVE_POINTS`)."""
    if not 0.5 < minutes <= MINUTES:
        raise SystemExit(refusal("--minutes", minutes, RANGE, "a number of minutes > 0.5 (a round takes "
                                 f"half a minute at least) and <= {MINUTES:,.0f}"))
    if not 1 <= until <= CURVE_POINTS[-1]:
        raise SystemExit(refusal("--until", until, RANGE, f"a whole number of learner steps from 1 to "
                                 f"{CURVE_POINTS[-1]:,}"))


def placed(cfg: TrainConfig, actors: int, device: str) -> TrainConfig:
    """`cfg` with this call's actor processes and learner device, checked as a run checks them (`cuda`
    where torch sees no GPU, more actors than the machine's cores take: refused in one line).

    They say where a round runs, not what it learns, so each round may choose them (`--resume` lets them
    change: `RESUMABLE` of cardlab.training.harness.runs) and the curve's points stay one run's: the same
    recipe, the same learner steps. What actors change is whose policy plays a rollout, one at most
    `max_policy_lag` updates older than the learner's (PPO's ratio corrects for it); the run's config.yaml
    records the last round's."""
    try:
        return validate_config(dataclasses.replace(cfg, actors=actors, device=device))
    except ValueError as err:
        raise SystemExit(str(err)) from None


def grow(label: str, minutes: float, until: int, actors: int = 0, device: str = "cpu",
         root: Path | None = None) -> Path:
    """Grow the long run `label` for `minutes` of training, round by round, up to `until` steps, with
    `actors` actor processes and the learner on `device` (`placed`).

    Its run folder lives in the repository (LONG_RUNS_DIR/label/; `root`/label/ for a copy grown
    elsewhere: a dry run's, or one unpacked from another machine), so that rounds go on in a later
    session: each round trains to the next of `CURVE_POINTS` (or until the minutes are up), ends with
    the final evaluation (the curve's point) and keeps only its last checkpoint. A folder that holds
    anything but the label's own runs, or a run that cannot be resumed (a corrupt checkpoint, another
    config), is refused in one line (`own_runs`, `grow_round`).
    """
    home = (root or LONG_RUNS_DIR) / label
    cfg = long_config(label)
    check_growth(minutes, until)
    cfg = placed(cfg, actors, device)
    done = steps_done(own_runs(label, home, cfg.name))
    least = min(done, CURVE_POINTS[-1])  # a finished run (its last round ends past the curve's end) redraws
    if until < least:
        raise SystemExit(refusal("--until", until, f"below the {done:,} learner steps {label} has trained",
                                 f"a whole number of learner steps from {least:,} to {CURVE_POINTS[-1]:,}"))
    started = time.monotonic()
    while (left := minutes - (time.monotonic() - started) / 60.0) > 0.5:
        runs = own_runs(label, home, cfg.name)
        done = steps_done(runs)
        target = next((p for p in CURVE_POINTS if p > done), None)
        if target is None or done >= until:
            break
        round_cfg = dataclasses.replace(cfg, total_timesteps=min(target, until), max_minutes=left)
        print(f"{label}: round from {done:,} to {round_cfg.total_timesteps:,} steps, at most {left:.1f} min, "
              f"actors {cfg.actors}, learner on {cfg.device}", flush=True)
        run = grow_round(label, round_cfg, home, runs[-1] if runs else None)
        keep_what_resumes(run, cfg.self_play.pool_size)
    runs = own_runs(label, home, cfg.name)
    if not runs:
        raise SystemExit(f"{label}: no round ran (give more than half a minute)")
    return runs[-1]


def steps_done(runs: list[Path]) -> int:
    """The learner steps of the newest of a long run's folders (`own_runs`) at its last checkpoint (0:
    none)."""
    return max((checkpoint_steps(c) for c in list_checkpoints(runs[-1])), default=0) if runs else 0


def own_runs(label: str, home: Path, name: str) -> list[Path]:
    """The run folders of the long run `label` in its folder `home` (named `name`__...), oldest first.

    Anything else there (another label's run, a stray file) is refused in one line: a round would start
    a fresh run beside it and the curve would mix them; so is a file in the folder's place, or in the place
    of a folder above it (`--long-runs` a file: the new run folder's mkdir failed with a traceback).
    """
    if home.exists() and not home.is_dir():
        raise SystemExit(f"{label}: {home} is a file, not the long run's folder; accepted: a folder holding "
                         f"only its own run folders ({name}__*), or none there: move the file out")
    above = next(folder for folder in (home, *home.parents) if folder.exists())
    if not above.is_dir():
        raise SystemExit(f"{label}: {above} is a file, not a folder above the long run's folder {home}; "
                         "accepted: --long-runs a folder (made where missing)")
    if not home.is_dir():
        return []
    strangers = sorted(p.name for p in home.iterdir() if not (p.is_dir() and p.name.startswith(f"{name}__")))
    if strangers:
        raise SystemExit(f"{label}: {home} holds {', '.join(strangers)}, not runs of {label}; accepted: only "
                         f"its own run folders ({name}__*): move the rest out")
    return sorted(home.glob(f"{name}__*"))


def grow_round(label: str, cfg: TrainConfig, home: Path, resume: Path | None) -> Path:
    """One round of the long run `label`: `train` from `resume` (None: a new run in `home`). A run that
    cannot be resumed (a corrupt or foreign checkpoint, a config other than the label's) is refused in
    one line that says why, before any step: `prepare_resume` checks it as `train` will (it only drops
    what follows the last checkpoint, which `train` drops too, and refuses a damaged eval.csv); a run
    without its eval.csv is refused too (the round would start the curve again); an error during training
    keeps its traceback."""
    if resume is not None:
        if not (resume / "eval.csv").is_file():
            raise SystemExit(f"{label}: cannot grow {resume}: it has no eval.csv (the curve so far); "
                             "accepted: the run folder as its last round left it: restore eval.csv, or move "
                             "the run out to start again")
        try:
            prepare_resume(validate_config(cfg), resume)
        except ValueError as err:
            raise SystemExit(f"{label}: cannot grow {resume}: {err}") from None
    return train(cfg, runs_dir=home, resume=resume, progress=False)


def keep_what_resumes(run: Path, pool_size: int) -> None:
    """Leave in a long run's folder what the next round needs and the curve: the last checkpoint, the
    league's newest `pool_size` snapshots (its pool), eval.csv, the config and the bot. TensorBoard's
    event files go (megabytes a round in the repository; eval.csv holds the curve)."""
    for old in list_checkpoints(run)[:-1]:
        remove_checkpoint(old)
    league = run / "checkpoints" / "league"
    for meta in list_snapshots(league)[:-pool_size]:
        meta.with_suffix(".safetensors").unlink(missing_ok=True)
        meta.unlink()
    for events in run.glob("events.out.tfevents.*"):
        events.unlink()


def curve_table(curve: Curve) -> str:
    """The curve as a markdown table: steps, minutes of training, hands, win rate and its paired interval."""
    lines = ["| learner steps | minutes | win rate vs expert | 95% CI (paired) |", "|---|---|---|---|"]
    lines += [f"| {s:,} | {m:.1f} | {r:.3f} | [{lo:.3f}, {hi:.3f}] |"
              for s, m, r, lo, hi in zip(curve.steps, curve.minutes, curve.rate, curve.low, curve.high,
                                         strict=True)]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("plot", help="draw the curves of run folders")
    p.add_argument("runs", nargs="+", type=Path, help="run folders")
    p.add_argument("--out", type=Path, default=REPO / "docs" / "learning_curve.png", help="the PNG to write")
    p.add_argument("--steps", action="store_true", help="x axis: learner steps on a log scale")
    p = sub.add_parser("long", help="grow a long run by rounds (its folder: benchmarks/results/long-runs)")
    p.add_argument("label", help="GAME-Np-LEARNER-START, e.g. huit-4p-dmc-scratch or switch-4p-ppo-clone")
    p.add_argument("--minutes", type=float, default=20.0, help="minutes of training in this call")
    p.add_argument("--until", type=int, default=CURVE_POINTS[-1], help="stop at this many learner steps")
    p.add_argument("--actors", type=int, default=0, help="actor processes of its rounds (0: one process)")
    p.add_argument("--device", default="cpu", help="the learner's device: cpu, cuda or auto")
    p.add_argument("--no-plot", action="store_true",
                   help="print the curve's table only (where matplotlib is not installed); `plot --steps` "
                        "draws the PNG later")
    p.add_argument("--long-runs", type=Path, help="the folder of the long runs (default: "
                                                  "benchmarks/results/long-runs)")
    p = sub.add_parser("old", help="train the old pipeline (huit_ppo.yaml, imitation off) for the comparison")
    p.add_argument("--minutes", type=float, default=50.0, help="wall-clock budget of the run")
    p.add_argument("--runs-dir", type=Path, default=Path("runs"), help="where the run folder goes")
    args = parser.parse_args(argv)
    if args.command == "plot":
        if args.out.suffix.lower() != ".png" or args.out.is_dir():  # matplotlib wrote a folder "x" as x.png
            parser.error(f"--out {args.out}: not the name of a PNG file; accepted: a file name ending in "
                         ".png (not a folder)")
        curves = [read_curve(run) for run in args.runs]
        for c in curves:
            print(f"{c.label:<58} {len(c.minutes):>3} evaluations, last at {c.minutes[-1]:5.1f} min: "
                  f"{c.rate[-1]:.3f} [{c.low[-1]:.3f}, {c.high[-1]:.3f}]")
        print(f"wrote {plot(curves, args.out, by_steps=args.steps)}")
    elif args.command == "long":
        root = args.long_runs or LONG_RUNS_DIR
        curve = read_curve(grow(args.label, args.minutes, args.until, args.actors, args.device, root))
        print(curve_table(curve))
        if not args.no_plot:
            print(f"wrote {plot([curve], root / f'{args.label}.png', by_steps=True)}")
    else:
        if not 0 < args.minutes <= MINUTES:  # 0 was no limit: 10**9 steps, hours; NaN and -1 a traceback
            parser.error(refusal("--minutes", args.minutes, RANGE,
                                 f"a number of minutes > 0 and <= {MINUTES:,.0f}"))
        print(f"run folder: {train_old(args.minutes, args.runs_dir)}")


if __name__ == "__main__":
    main()
