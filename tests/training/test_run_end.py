"""The end of a run and a resume, on a disk that can fill up or a run killed mid-save: the bot file is
written before the optional final checkpoint, no checkpoint is saved twice, and a resume removes the
temporary files of saves that never finished (keeping a live process's)."""

from __future__ import annotations

import dataclasses
import errno
import os
import pathlib
import shutil
from collections import Counter
from typing import Any

import pytest

from cardlab.agents.bot import load_bot
from cardlab.training.harness import checkpoints
from cardlab.training.harness.checkpoints import RECORD_NAME, checkpoint_dir, list_checkpoints
from cardlab.training.harness.runs import prepare_resume
from cardlab.training.trainers import lean, sb3
from cardlab.training.trainers.train import train
from tests.training.test_checkpoints import STEPS, tiny
from tests.training.test_ppo import tiny as tiny_lean

TRAINERS = {"maskable_ppo": (tiny, sb3), "lean": (tiny_lean, lean)}


def counting(monkeypatch: pytest.MonkeyPatch, module: Any, fail_at: int | None = None) -> Counter[str]:
    """Count the trainer's checkpoint saves by file name; the save of step `fail_at` finds the disk full."""
    saves: Counter[str] = Counter()
    real = module.save_checkpoint

    def save(model: Any, path: pathlib.Path) -> str:
        saves[pathlib.Path(path).name] += 1
        if fail_at is not None and checkpoints.checkpoint_steps(path) >= fail_at:
            raise OSError(errno.ENOSPC, "the disk is full (12 bytes free): the checkpoint is not saved",
                          str(path))
        return str(real(model, path))

    monkeypatch.setattr(module, "save_checkpoint", save)
    return saves


@pytest.mark.parametrize("trainer", sorted(TRAINERS))
def test_no_checkpoint_is_saved_twice_and_a_resume_at_the_end_saves_none(
        trainer: str, tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make, module = TRAINERS[trainer]
    saves = counting(monkeypatch, module)
    cfg = make()
    run = train(cfg, runs_dir=tmp_path, progress=False)
    assert saves and set(saves.values()) == {1}, saves  # the final one was saved again before
    assert sorted(saves) == [p.name for p in list_checkpoints(run)]
    saves.clear()
    train(cfg, resume=run, progress=False)  # nothing left to train: the last checkpoint is the final one
    assert not saves
    assert load_bot(run).metadata["summary"]["final_eval"]


@pytest.mark.parametrize("trainer", sorted(TRAINERS))
def test_a_full_disk_at_the_final_checkpoint_still_leaves_the_bot_file(
        trainer: str, tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make, module = TRAINERS[trainer]
    cfg = make()
    counting(monkeypatch, module, fail_at=cfg.total_timesteps)
    with pytest.raises(OSError, match="the disk is full"):
        train(cfg, runs_dir=tmp_path, progress=False)
    (run,) = tmp_path.iterdir()
    bot = load_bot(run)  # written first: the run's product does not wait on the optional checkpoint
    assert bot.metadata["summary"]["steps"] >= cfg.total_timesteps


def test_a_resume_removes_the_temporary_files_of_saves_that_never_finished(tmp_path: pathlib.Path) -> None:
    run = train(tiny(), runs_dir=tmp_path / "runs", progress=False)
    folder = checkpoint_dir(run)
    dead = 4_194_305  # above Linux's largest process id: no process has it
    stale = [f".tmp-model_{STEPS:012d}.zip", f".tmp-{dead}-model_{STEPS:012d}.zip",
             f".{RECORD_NAME}.{dead}.fa11ed"]
    live = f".{RECORD_NAME}.{os.getppid()}.deadbeef"  # a save another live process has in progress
    for name in [*stale, live]:
        (folder / name).write_bytes(b"half")
    prepare_resume(tiny(total_timesteps=2 * STEPS), run)
    assert sorted(p.name for p in folder.iterdir() if p.name.startswith(".")) == [live]
    # a run killed during its first checkpoint: nothing to resume, but its temporary file goes too
    first = tmp_path / "first"
    shutil.copytree(run, first)
    for path in list_checkpoints(first):
        path.unlink()
    (checkpoint_dir(first) / stale[1]).write_bytes(b"half")
    with pytest.raises(ValueError, match="no checkpoints"):
        prepare_resume(dataclasses.replace(tiny()), first)
    assert not (checkpoint_dir(first) / stale[1]).exists()
