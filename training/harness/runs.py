"""The run folder: a fresh one, resuming one, its league folder and the summary written in its bot.

Shared by both trainers (`cardlab.training.trainers.sb3`, `cardlab.training.trainers.lean`).
"""

from __future__ import annotations

import dataclasses
import re
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol

from cardlab.agents.bot import load_bot, read_metadata
from cardlab.agents.bot.validate import check_game
from cardlab.envs.checked_json import excerpt
from cardlab.evaluation.episodes import plural
from cardlab.training.arena.league import (
    LeagueSettings,
    list_snapshots,
    snapshot_steps,
)
from cardlab.training.arena.match_reward import MATCH, table_equity
from cardlab.training.harness.checkpoints import (
    CHECKPOINT_PREFIX,
    checkpoint_steps,
    list_checkpoints,
    remove_stale_temporaries,
    verify_checkpoint,
)
from cardlab.training.harness.config import (
    TrainConfig,
    config_to_dict,
    load_config,
    save_config,
)
from cardlab.training.harness.config_tables import header_game
from cardlab.training.harness.records import EvalHistory, LearnerEval, format_results

RESUMABLE = ("total_timesteps", "max_minutes", "actors", "device", "ray.address")
"""the config keys a resumed run may change: how long it goes on, and where its parts run"""
EQUITY_RECORD = "equity.sha256"
"""in a ``reward: match`` run's folder: the weights' SHA-256 of the match equity it pays (`pin_equity`)"""


class TrainingInterrupted(KeyboardInterrupt):
    """Ctrl-C stopped `train`: the run folder, and the steps of its last checkpoint (None: none yet)."""

    def __init__(self, run_dir: Path, checkpoint_steps: int | None) -> None:
        super().__init__(f"training interrupted: run folder {run_dir}")
        self.run_dir = run_dir
        self.checkpoint_steps = checkpoint_steps

    @classmethod
    def of(cls, run_dir: Path) -> TrainingInterrupted:
        """The interruption of the run in `run_dir`, with the steps of its newest checkpoint."""
        saved = list_checkpoints(run_dir)
        return cls(run_dir, checkpoint_steps(saved[-1]) if saved else None)


def league_folder(run_dir: Path) -> Path:
    """Where a run keeps the learner's frozen snapshots (the self-play part of the league)."""
    return run_dir / "checkpoints" / "league"


def league_settings(cfg: TrainConfig, league_dir: Path) -> LeagueSettings:
    sp, pop = cfg.self_play, cfg.population
    return LeagueSettings(
        opponents=tuple((o.spec, o.weight) for o in cfg.opponents),
        snapshot_dir=str(league_dir.resolve()) if sp.enabled else None,
        snapshot_share=sp.share if sp.enabled else 0.0,
        pool_size=sp.pool_size,
        snapshot_deterministic=sp.deterministic,
        population_dir=str(Path(pop.dir).resolve()) if pop.dir else None,
        population_share=pop.share,
        population_size=pop.pool_size,
        learner=league_dir.parent.parent.name,  # the run folder's name
    )


class Named(Protocol):
    """What names a run folder: a config's name and seed (a training or a teach config)."""

    name: str
    seed: int


def new_run_dir(runs_dir: Path, cfg: Named) -> Path:
    base = f"{cfg.name}__{cfg.seed}__{time.strftime('%Y%m%d-%H%M%S')}"
    for k in range(1000):
        run_dir = runs_dir / (base if k == 0 else f"{base}-{k}")
        try:
            run_dir.mkdir(parents=True)
            return run_dir
        except FileExistsError:
            continue
    raise RuntimeError(f"cannot create a fresh run folder {runs_dir / base}")


def _flatten(data: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    if isinstance(data, dict) and data and prefix != "rules":
        for key, value in data.items():
            yield from _flatten(value, f"{prefix}.{key}" if prefix else key)
    else:
        yield prefix, data


def _resumed_config(cfg: TrainConfig, run_dir: Path) -> TrainConfig:
    """The run's own config; `cfg` may only change `RESUMABLE` keys."""
    saved = load_config(run_dir / "config.yaml")
    mine, theirs = dict(_flatten(config_to_dict(cfg))), dict(_flatten(config_to_dict(saved)))
    diffs = [f"{k} (run: {excerpt(theirs.get(k))}, given: {excerpt(mine.get(k))})"
             for k in sorted(set(mine) | set(theirs))
             if k not in RESUMABLE and mine.get(k) != theirs.get(k)]
    if diffs:
        raise ValueError(f"--resume continues {run_dir} with its own config.yaml; the given config differs "
                         f"in {', '.join(diffs)}: only {', '.join(RESUMABLE)} may change")
    return dataclasses.replace(saved, total_timesteps=cfg.total_timesteps, max_minutes=cfg.max_minutes,
                               actors=cfg.actors, device=cfg.device, ray=cfg.ray)


def prepare_resume(cfg: TrainConfig, run_dir: Path) -> tuple[TrainConfig, Path]:
    """Config and last checkpoint of a run; drops snapshots and eval rows after that checkpoint.

    The checkpoint is checked against the run's record (`verify_checkpoint`)
    before anything in the run folder changes.
    """
    if not (run_dir / "config.yaml").is_file():
        raise ValueError(f"cannot resume {run_dir}: it has no config.yaml (is it a run folder?)")
    stale = remove_stale_temporaries(run_dir)
    if stale:
        print(f"removed {plural(len(stale), 'temporary file')} of checkpoints that were never finished: "
              + ", ".join(p.name for p in stale), flush=True)
    checkpoints = list_checkpoints(run_dir)
    if not checkpoints:
        raise ValueError(f"cannot resume {run_dir}: no checkpoints/{CHECKPOINT_PREFIX}<steps>.zip in it")
    last = checkpoints[-1]
    verify_checkpoint(last, run_dir)
    cfg = _resumed_config(cfg, run_dir)
    pin_equity(cfg, run_dir)
    steps = checkpoint_steps(last)
    check_pool(cfg, run_dir, steps)
    EvalHistory(run_dir / "eval.csv").truncate(steps)  # it refuses a damaged file before it changes it
    for meta in list_snapshots(league_folder(run_dir)):
        if snapshot_steps(meta) > steps:
            meta.unlink()
            meta.with_suffix(".safetensors").unlink(missing_ok=True)
    save_config(cfg, run_dir / "config.yaml")
    return cfg, last


def pin_equity(cfg: TrainConfig, run_dir: Path) -> None:
    """With ``reward: match``, pin the match equity the run pays the changes of (its `equity` file, else the
    table's shipped one) by its weights' SHA-256 in ``RUN/equity.sha256``: written when the run starts (or
    first resumed without it), and a resume whose equity hashes otherwise is refused in one line. The key
    `equity` must match on resume as any key outside `RESUMABLE`; this catches the same path holding
    another equity (a file fitted again, a relative path read from another folder, a new shipped one),
    which would change the reward the run learns from without a word."""
    if cfg.reward != MATCH:
        return
    digest = str(table_equity(header_game(cfg), cfg.equity).meta["weights_sha256"])
    record = run_dir / EQUITY_RECORD
    if not record.is_file():
        record.write_text(digest + "\n", encoding="utf-8")
        return
    pinned = record.read_text(encoding="utf-8", errors="replace")[:100].strip()
    if pinned != digest:
        shown = pinned if re.fullmatch(r"[0-9a-f]{64}", pinned) else excerpt(pinned)
        given = f"the file equity names ({excerpt(cfg.equity)})" if cfg.equity else "the table's shipped one"
        raise ValueError(f"--resume continues {run_dir}, which pays the changes of the match equity whose "
                         f"weights hash to {shown} ({EQUITY_RECORD}); its equity, {given}, now "
                         f"hashes to {digest}: give the run the equity it started with, or start a new run")


def check_pool(cfg: TrainConfig, run_dir: Path, steps: int) -> None:
    """Load the league's snapshots a resumed run seats (its newest `pool_size` up to the checkpoint at
    `steps`), so that a damaged one, or one of another game or table size (a league folder copied from
    another run), is refused here, in one line, before the run folder changes, not with a traceback when
    the trainer seats its first games."""
    if not (cfg.self_play.enabled and cfg.self_play.share > 0):
        return
    table = header_game(cfg)
    kept = [meta for meta in list_snapshots(league_folder(run_dir)) if snapshot_steps(meta) <= steps]
    for meta in kept[-cfg.self_play.pool_size:]:
        try:  # what differs from this run's table, not how to play the file elsewhere: this run says that
            check_game(meta, read_metadata(meta), table, advice=False)
            load_bot(meta, table)  # its checks word what else is wrong: a damaged file
        except ValueError as err:
            raise ValueError(f"cannot resume {run_dir}: a league snapshot it seats is refused: {err}; "
                             f"accepted: the snapshots this run wrote, whole (move the others out of "
                             f"{meta.parent})") from None


def finish_run(write_bot: Callable[[list[LearnerEval]], object], checkpoint: Callable[[], object] | None,
               evaluate: Callable[[], list[LearnerEval]]) -> list[LearnerEval]:
    """The end of a run, the bot file first: it is what the run makes, so a disk that fills up takes only
    what may fail without it (the final checkpoint). Then the final checkpoint (None: the last one saved
    is of the model as it is), the final evaluation, and the bot file again with those results."""
    write_bot([])
    if checkpoint is not None:
        checkpoint()
    results = evaluate()
    if results:
        write_bot(results)
    return results


def print_end(cfg: TrainConfig, run_dir: Path, steps: int, results: Sequence[LearnerEval]) -> None:
    """The final evaluation table, the run folder and the bot file."""
    if results:
        print(f"\nFinal evaluation of {run_dir.name} after {steps:,} steps "
              f"({cfg.eval.final_hands} hands{and_matches(cfg)} per opponent, seats rotating):")
        print(format_results(results))
    print(f"run folder: {run_dir}\nbot: {run_dir / 'bot.json'}")


def and_matches(cfg: TrainConfig) -> str:
    return f" and {cfg.eval.final_matches} matches" if cfg.eval.final_matches else ""


def bot_summary(cfg: TrainConfig, run_dir: Path, steps: int,
                results: Sequence[LearnerEval]) -> dict[str, Any]:
    """What the bot file says about its training (``minutes``: the run's wall clock at its last evaluation,
    None where the trainer does not record it)."""
    return {
        "algorithm": "MaskablePPO",
        "run": run_dir.name,
        "config": cfg.name,
        "seed": cfg.seed,
        "steps": steps,
        "minutes": max((r.minutes for r in results), default=0.0) or None,
        "opponents": [dataclasses.asdict(o) for o in cfg.opponents],
        "self_play": cfg.self_play.enabled,
        "final_eval": {r.opponent: {k: v for k, v in r.row().items() if k not in ("opponent", "steps")}
                       for r in results},
    }
