"""Checkpoints are pickles: `cardlab export` and `cardlab train --resume` load only the ones a run on
this machine saved and recorded in RUN/checkpoints/SHA256SUMS, unchanged, and refuse every other with a
message that says why and what to do."""

from __future__ import annotations

import csv
import dataclasses
import hashlib
import io
import pathlib
import re
import shutil
import zipfile
from collections.abc import Callable
from typing import Any

import pytest

from cardlab.cli import main
from cardlab.training.harness.checkpoints import (
    RECORD_NAME,
    checkpoint_path,
    list_checkpoints,
    record_checkpoint,
    verify_checkpoint,
)
from cardlab.training.harness.config import TrainConfig, load_config
from cardlab.training.harness.runs import list_checkpoints as train_list_checkpoints
from cardlab.training.trainers.train import train

MaskablePPO = pytest.importorskip("sb3_contrib").MaskablePPO

CONFIGS = pathlib.Path(__file__).resolve().parents[2] / "configs"
STEPS = 256  # two rollouts of 2 envs x 64 steps, a checkpoint after each
NEVER = r"checkpoints are pickles and can run code; take bot files from others, never checkpoints"


def tiny(**changes: Any) -> TrainConfig:
    """The Huit quick config, shrunk to a few seconds: random opponents, no imitation, no self-play."""
    cfg = load_config(CONFIGS / "huit_quick.yaml")
    cfg = dataclasses.replace(
        cfg,
        opponents=[dataclasses.replace(cfg.opponents[0], spec="random")],
        total_timesteps=STEPS,
        checkpoint_every=128,
        ppo=dataclasses.replace(cfg.ppo, n_steps=64, batch_size=64, n_epochs=1),
        policy=dataclasses.replace(cfg.policy, net_arch=[16]),
        self_play=dataclasses.replace(cfg.self_play, enabled=False),
        eval=dataclasses.replace(cfg.eval, every_steps=10**6, hands=2, final_hands=2, opponents=["random"]),
        imitation=dataclasses.replace(cfg.imitation, enabled=False),
        vec_env="dummy",
    )
    return dataclasses.replace(cfg, **changes)


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    return train(tiny(), runs_dir=tmp_path_factory.mktemp("runs"), progress=False)


@pytest.fixture()
def copy(run: pathlib.Path, tmp_path: pathlib.Path) -> pathlib.Path:
    """A copy of the run (its record travels with it), free to damage."""
    return pathlib.Path(shutil.copytree(run, tmp_path / "runs" / run.name))


def record_lines(run_dir: pathlib.Path) -> list[str]:
    return (run_dir / "checkpoints" / RECORD_NAME).read_text().splitlines()


def fail(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """Run a command that must fail with status 2 and one line on stderr; returns that line."""
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert "Traceback" not in err and len(err.splitlines()) == 1
    return err


@pytest.fixture()
def no_unpickling(monkeypatch: pytest.MonkeyPatch) -> None:
    """A refused checkpoint never reaches MaskablePPO.load."""

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("MaskablePPO.load was called on a refused checkpoint")

    monkeypatch.setattr(MaskablePPO, "load", refuse)


# ---------------------------------------------------------------- a run records its checkpoints
def test_each_checkpoint_is_recorded_as_sha256sum_writes_it(run: pathlib.Path) -> None:
    checkpoints = list_checkpoints(run)
    assert [p.name for p in checkpoints] == ["model_000000000128.zip", f"model_{STEPS:012d}.zip"]
    sums = [hashlib.sha256(p.read_bytes()).hexdigest() for p in checkpoints]
    assert record_lines(run) == [f"{digest}  {p.name}" for digest, p in zip(sums, checkpoints, strict=True)]
    # no temporary file is left behind, and train.list_checkpoints is still the same function
    names = sorted(p.name for p in (run / "checkpoints").iterdir())
    assert names == [RECORD_NAME, *(p.name for p in checkpoints)]
    assert train_list_checkpoints is list_checkpoints


def test_recording_again_replaces_the_line(tmp_path: pathlib.Path) -> None:
    folder = tmp_path / "checkpoints"
    folder.mkdir()
    first, second = folder / "model_000000000002.zip", folder / "model_000000000010.zip"
    for path, text in ((second, b"b"), (first, b"a"), (second, b"c")):
        path.write_bytes(text)
        assert record_checkpoint(path) == hashlib.sha256(text).hexdigest()
    assert record_lines(tmp_path) == [f"{hashlib.sha256(b'a').hexdigest()}  {first.name}",
                                      f"{hashlib.sha256(b'c').hexdigest()}  {second.name}"]
    assert verify_checkpoint(second, tmp_path) == b"c"
    assert sorted(p.name for p in folder.iterdir()) == [RECORD_NAME, first.name, second.name]


def test_export_accepts_its_own_run(run: pathlib.Path, tmp_path: pathlib.Path,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    for source, name in ((run, "from_run"), (list_checkpoints(run)[0], "from_zip")):
        assert main(["export", str(source), "-o", str(tmp_path / name)]) == 0
        assert f"wrote {tmp_path / name}.json" in capsys.readouterr().out


def test_resume_accepts_its_own_run_and_records_the_new_checkpoints(copy: pathlib.Path) -> None:
    assert train(tiny(total_timesteps=2 * STEPS), resume=copy, progress=False) == copy
    checkpoints = list_checkpoints(copy)
    assert [p.name for p in checkpoints][-1] == f"model_{2 * STEPS:012d}.zip"
    assert len(record_lines(copy)) == len(checkpoints) == 4
    for path in checkpoints:
        verify_checkpoint(path, copy)


# ---------------------------------------------------------------- refusals
def _last(run_dir: pathlib.Path) -> pathlib.Path:
    return list_checkpoints(run_dir)[-1]


def _edited(run_dir: pathlib.Path) -> str:
    data = bytearray(_last(run_dir).read_bytes())
    data[len(data) // 2] ^= 0x01
    _last(run_dir).write_bytes(bytes(data))
    return (rf"checkpoint .*model_{STEPS:012d}.zip has changed since it was saved \(its sha256 is not the "
            rf"one in .*{RECORD_NAME}\): {NEVER}; use an unchanged checkpoint of the run, or train again")


def _foreign(run_dir: pathlib.Path) -> str:
    """Someone else's checkpoint, dropped in with the newest steps so that it is the one picked."""
    with zipfile.ZipFile(checkpoint_path(run_dir, 10**9), "w") as z:
        z.writestr("data", '{"policy_class": {":serialized:": "..."}}')
    return (rf"checkpoint .*model_{10**9:012d}.zip was not written by a run on this machine \(no entry in "
            rf".*checkpoints/{RECORD_NAME}\): {NEVER}$")


def _copied_in(run_dir: pathlib.Path) -> str:
    """One of this run's own checkpoints, copied under a new name: the record lists names, not contents."""
    shutil.copyfile(_last(run_dir), checkpoint_path(run_dir, 10**9))
    return rf"model_{10**9:012d}.zip was not written by a run on this machine \(no entry in "


def _no_record(run_dir: pathlib.Path) -> str:
    (run_dir / "checkpoints" / RECORD_NAME).unlink()
    return (rf"checkpoint .*model_{STEPS:012d}.zip cannot be checked: .*checkpoints/{RECORD_NAME} is "
            rf"missing, so no run on this machine recorded it: {NEVER} \(for a run of your own from before "
            rf"cardlab recorded checkpoints: make sure it is yours, then run "
            rf"`sha256sum model_{STEPS:012d}.zip >> {RECORD_NAME}`")


def _bad_record(run_dir: pathlib.Path) -> str:
    (run_dir / "checkpoints" / RECORD_NAME).write_text("import os; os.system('...')\n")
    return (rf"cannot be checked: .*{RECORD_NAME} line 1 is not '<sha256>  <file name>' \(the format of "
            rf"sha256sum\), so not a record cardlab wrote: {NEVER}")


def _linked_from_elsewhere(run_dir: pathlib.Path) -> str:
    """The newest checkpoint is a link to a file outside the run's checkpoints folder."""
    last = _last(run_dir)
    outside = run_dir.parent / "elsewhere" / last.name
    outside.parent.mkdir()
    last.rename(outside)
    last.symlink_to(outside)
    return rf"checkpoint .*{last.name} is not in a run's checkpoints folder .*{NEVER}"


CASES: dict[str, Callable[[pathlib.Path], str]] = {
    "edited": _edited, "foreign": _foreign, "copied_in": _copied_in, "no_record": _no_record,
    "bad_record": _bad_record, "linked": _linked_from_elsewhere,
}


def _state(run_dir: pathlib.Path) -> tuple[str, str, list[str]]:
    """What a resume rewrites: the config, the eval history, the checkpoint names."""
    with (run_dir / "eval.csv").open(newline="") as f:
        rows = str(list(csv.reader(f)))
    return (run_dir / "config.yaml").read_text(), rows, [p.name for p in list_checkpoints(run_dir)]


@pytest.mark.parametrize("case", sorted(CASES))
def test_export_refuses(case: str, copy: pathlib.Path, tmp_path: pathlib.Path, no_unpickling: None,
                        capsys: pytest.CaptureFixture[str]) -> None:
    message = CASES[case](copy)
    for source in (copy, _last(copy)):
        line = fail(["export", str(source), "-o", str(tmp_path / "bot")], capsys)
        assert line.startswith("cardlab export: error: checkpoint ")
        assert re.search(message, line), line
    assert not (tmp_path / "bot.json").exists()


@pytest.mark.parametrize("case", sorted(CASES))
def test_resume_refuses_and_changes_nothing(case: str, copy: pathlib.Path, no_unpickling: None) -> None:
    message = CASES[case](copy)
    before = _state(copy)
    with pytest.raises(ValueError, match=message):
        train(tiny(total_timesteps=2 * STEPS), resume=copy, progress=False)
    assert _state(copy) == before


def test_a_checkpoint_copied_out_of_its_run_is_refused(run: pathlib.Path, tmp_path: pathlib.Path,
                                                        no_unpickling: None,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "config.yaml").write_text((run / "config.yaml").read_text())
    elsewhere = pathlib.Path(shutil.copy(_last(run), tmp_path / "elsewhere.zip"))
    line = fail(["export", str(elsewhere), "-o", str(tmp_path / "b")], capsys)
    assert line == (f"cardlab export: error: checkpoint {elsewhere} is not in a run's checkpoints folder "
                    f"(RUN/checkpoints/model_<steps>.zip, recorded in RUN/checkpoints/{RECORD_NAME} by the "
                    f"run that saved it): checkpoints are pickles and can run code; take bot files from "
                    f"others, never checkpoints")
    other = tmp_path / "other_run" / "checkpoints"
    other.mkdir(parents=True)
    shutil.copy(_last(run), other)
    folder = re.escape(str(run / "checkpoints"))
    with pytest.raises(ValueError, match=rf"checkpoint .* is outside its run's checkpoints folder {folder} "
                                         rf"\(it is .*other_run.*\): {NEVER}"):
        verify_checkpoint(other / _last(run).name, run)


# ---------------------------------------------------------------- a full disk, a pickled lean file
@pytest.mark.parametrize("error", [
    OSError(28, "No space left on device"),
    RuntimeError("[enforce fail at inline_container.cc:778] . PytorchStreamWriter failed writing file "
                 "data/0: file write failed"),
])
def test_a_full_disk_is_one_line_and_leaves_no_temp_file(tmp_path: pathlib.Path, error: Exception,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    import errno as errno_module

    from cardlab.training.harness import checkpoints

    class Full:
        def save(self, path: pathlib.Path) -> None:
            pathlib.Path(path).write_bytes(b"half a checkpoint")
            raise error

    monkeypatch.setattr(checkpoints.shutil, "disk_usage", lambda _: shutil._ntuple_diskusage(10, 10, 0))
    path = tmp_path / "checkpoints" / "model_64.zip"
    with pytest.raises(OSError) as info:
        checkpoints.save_checkpoint(Full(), path)
    assert info.value.errno == errno_module.ENOSPC and info.value.filename == str(path)
    assert "the disk is full (0 bytes free)" in str(info.value) and "\n" not in str(info.value)
    assert not list(path.parent.iterdir())  # neither the temporary file nor a record


def test_ctrl_c_while_a_checkpoint_is_written_comes_after_it_is_written_and_recorded(
        tmp_path: pathlib.Path) -> None:
    """torch's zip writer turns a KeyboardInterrupt raised inside it into a RuntimeError: the save holds
    Ctrl-C until the checkpoint is whole and recorded, then raises it (what `train` turns into the resume
    command)."""
    import os
    import signal

    import torch

    from cardlab.training.harness import checkpoints

    class Interrupted(io.BytesIO):
        """A file that Ctrl-C reaches in the middle of torch's writing."""

        writes = 0

        def write(self, data: Any) -> int:
            self.writes += 1
            if self.writes == 3:
                os.kill(os.getpid(), signal.SIGINT)
            return super().write(data)

    class Model:
        def save(self, path: pathlib.Path) -> None:
            out = Interrupted()
            torch.save({"weights": torch.arange(50_000)}, out)
            pathlib.Path(path).write_bytes(out.getvalue())

    path = tmp_path / "checkpoints" / "model_000000000064.zip"
    with pytest.raises(KeyboardInterrupt):
        checkpoints.save_checkpoint(Model(), path)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # Ctrl-C is Ctrl-C again
    assert verify_checkpoint(path, tmp_path) == path.read_bytes()  # whole, and recorded
    assert torch.equal(torch.load(path)["weights"], torch.arange(50_000))
    assert sorted(p.name for p in path.parent.iterdir()) == [RECORD_NAME, path.name]


def test_a_lean_checkpoint_holding_a_pickle_is_refused_as_not_cardlabs(tmp_path: pathlib.Path) -> None:
    import argparse

    import torch

    from cardlab.training.harness.checkpoints import record_checkpoint
    from cardlab.training.trainers.lean import load_actor

    cfg = load_config(CONFIGS / "huit_selfplay.yaml")
    run_dir = tmp_path / "run"
    path = run_dir / "checkpoints" / "model_64.zip"
    path.parent.mkdir(parents=True)
    torch.save({"model": argparse.Namespace(x=1), "optimizer": {}, "steps": 64}, path)
    record_checkpoint(path)
    with pytest.raises(ValueError, match="not one of cardlab's lean checkpoints and is refused") as info:
        load_actor(path, run_dir, cfg)
    assert "weights_only" not in str(info.value)
