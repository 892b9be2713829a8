"""`benchmarks/scale_round.py`, the round prepared for a lent GPU machine, run here as a dry run on the CPU
(tiny sizes, a copy of a committed long run): it must work the first time it runs there, where a mistake
costs minutes nobody gets back. Also the refusals of `benchmarks/actor_throughput.py`, which it runs."""

from __future__ import annotations

import json
import pathlib
import shutil
import tarfile
from importlib.metadata import version
from typing import Any

import pytest
import yaml

from tests.benchmarks import load_benchmark

ROOT = pathlib.Path(__file__).resolve().parents[2]
LABEL = "switch-4p-ppo-clone"


def long_runs_copy(bench: Any, folder: pathlib.Path) -> pathlib.Path:
    """A long-runs folder in `folder` holding a copy of the committed run `LABEL`."""
    shutil.copytree(bench.LONG_RUNS / LABEL, folder / LABEL)
    return folder


def steps_of(home: pathlib.Path) -> int:
    """The learner steps of the newest checkpoint of the long run in `home`."""
    return max(int(p.stem.split("_")[1]) for p in home.glob("*__*/checkpoints/model_*.zip"))


@pytest.mark.slow
def test_a_dry_run_measures_the_table_grows_the_run_and_packs_it_for_bring(
        monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path) -> None:
    """`run --cpu`: machine.json, actors.json with the row measured, a round of one iteration (to the
    run's steps + 1) with an actor, packed under 16 MiB with what the next round needs and no TensorBoard
    files; `bring` puts it in place of the older copy, and refuses to put an older run over a newer."""
    bench = load_benchmark("scale_round", monkeypatch)
    grown = long_runs_copy(bench, tmp_path / "there")
    here = long_runs_copy(bench, tmp_path / "here")
    before = steps_of(here / LABEL)
    older = bench.pack(here / LABEL, tmp_path)
    out = tmp_path / "out"
    bench.main(["run", "--cpu", "--out", str(out), "--long-runs", str(grown), "--table-steps", "2000",
                "--actors", "1", "--round-actors", "1", "--until", str(before + 1), "--limit-minutes", "6"])
    machine = json.loads((out / "machine.json").read_text(encoding="utf-8"))
    assert {"python", "torch", "cuda", "gpu", "cores", "usable_cores", "nvidia_smi"} <= set(machine)
    table = json.loads((out / "actors.json").read_text(encoding="utf-8"))
    assert (table["device"], table["steps"]) == ("cpu", 2000)
    [row] = table["rows"]
    assert (row["config"], row["actors"]) == ("long", 1) and row["steady"] > 0 and row["whole"] > 0
    tarball = out / f"{LABEL}.tar.gz"
    assert tarball.stat().st_size < bench.PACK_LIMIT
    with tarfile.open(tarball) as tar:
        names = tar.getnames()
        [config] = [n for n in names if n.endswith("/config.yaml")]
        saved = tar.extractfile(config)
        assert saved is not None and yaml.safe_load(saved.read())["actors"] == 1
    assert not [n for n in names if "events.out.tfevents" in n]
    for part in ("/eval.csv", "/bot.json", "/bot.safetensors", "/checkpoints/SHA256SUMS", ".zip"):
        assert any(n.endswith(part) for n in names), part
    assert any("/checkpoints/league/snapshot_" in n for n in names)
    assert "packed" in (out / "scale_round.log").read_text(encoding="utf-8")
    assert bench.bring(tarball, here) == here / LABEL
    assert steps_of(here / LABEL) > before and (here / f"{LABEL}.png").is_file()
    with pytest.raises(SystemExit) as refused:
        bench.bring(older, here)
    assert str(refused.value) == (f"{older}: {LABEL} at {before:,} learner steps, fewer than the "
                                  f"{steps_of(here / LABEL):,} of {here / LABEL}; accepted: a run grown from "
                                  "the one here")


def test_without_a_gpu_the_round_is_refused_before_installing_anything(
        monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path) -> None:
    bench = load_benchmark("scale_round", monkeypatch)
    probe = {"python": "3.12", "torch": "2", "cuda": None, "gpu": None, "cores": 16, "usable_cores": 16}
    monkeypatch.setattr(bench, "PROBE", f"print({json.dumps(json.dumps(probe))})")  # a machine without one
    with pytest.raises(SystemExit) as refused:
        bench.main(["run", "--out", str(tmp_path / "out"), "--site", str(tmp_path / "site")])
    assert str(refused.value) == ("no GPU here: torch.cuda.is_available() is false; accepted: a machine "
                                  "with a GPU, or --cpu for a dry run with the learner on the CPU")
    assert (tmp_path / "out" / "machine.json").is_file() and not (tmp_path / "site").exists()


@pytest.mark.parametrize(("option", "value", "shown"), [
    ("--limit-minutes", "0", "0.0"), ("--table-minutes", "nan", "nan"), ("--table-steps", "0", "0"),
    ("--minutes", "inf", "inf")])
def test_a_round_with_no_time_or_steps_is_refused(monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str], option: str,
                                                   value: str, shown: str) -> None:
    bench = load_benchmark("scale_round", monkeypatch)
    with pytest.raises(SystemExit):
        bench.main(["run", "--cpu", option, value])
    assert capsys.readouterr().err.strip().splitlines()[-1].endswith(
        f"{option}={shown} is out of range; accepted: a number > 0")


@pytest.mark.parametrize(("argv", "refusal"), [
    (["--until", "0"], "--until=0 is out of range; accepted: a whole number >= 1"),
    (["--until", "-5"], "--until=-5 is out of range; accepted: a whole number >= 1"),
    (["--actors", "4", "-1"], "--actors=-1 is out of range; accepted: a whole number >= 0"),
    (["--round-actors", "-2"], "--round-actors=-2 is out of range; accepted: a whole number >= 0")])
def test_a_round_with_a_step_or_actor_count_out_of_range_is_refused(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], argv: list[str], refusal: str
) -> None:
    """Before: ``--until 0`` was read as no ``--until`` (the round grew to its next curve point), and a
    negative actor count went on to the GPU machine's child processes."""
    bench = load_benchmark("scale_round", monkeypatch)
    with pytest.raises(SystemExit):
        bench.main(["run", "--cpu", *argv])
    assert capsys.readouterr().err.strip().splitlines()[-1].endswith(refusal)


def test_the_wheels_are_this_environments_versions_in_an_ignored_folder(
        monkeypatch: pytest.MonkeyPatch) -> None:
    bench = load_benchmark("scale_round", monkeypatch)
    assert bench.pins() == [f"{name}=={version(name)}" for name in bench.WHEELS]
    assert "/.whl/" in (ROOT / ".gitignore").read_text(encoding="utf-8").splitlines()


def test_bring_refuses_a_tarball_of_anything_but_one_long_run(monkeypatch: pytest.MonkeyPatch,
                                                                tmp_path: pathlib.Path) -> None:
    bench = load_benchmark("scale_round", monkeypatch)
    for name, folders in (("two", ["huit-4p-ppo-clone", LABEL]), ("bad", ["switch_4p"]), ("empty", [])):
        tarball = tmp_path / f"{name}.tar.gz"
        with tarfile.open(tarball, "w:gz") as tar:
            for folder in folders:
                (tmp_path / folder).mkdir(exist_ok=True)
                tar.add(tmp_path / folder, arcname=folder)
        with pytest.raises(SystemExit) as refused:
            bench.bring(tarball, tmp_path / "long-runs")
        said = str(refused.value)
        assert said.startswith(f"{tarball} holds {', '.join(folders) or 'nothing'}; accepted: one long run's "
                               "folder, as `run` packs it (GAME-Np-LEARNER-START") and "\n" not in said
    assert not (tmp_path / "long-runs").exists() or not list((tmp_path / "long-runs").iterdir())


@pytest.mark.parametrize(("argv", "said"), [
    (["--configs", "x"], "--configs='x' is not one of the configs; accepted: selfplay, experts, dmc, long"),
    (["--device", "gpu"], "--device='gpu' is not one of the choices; accepted: cpu, cuda, auto"),
    (["--actors", "-1"], "actors=-1 is not a whole number >= 0"),
    (["--steps", "0"], "--steps=0 is out of range; accepted: a whole number from 1 to 2,000,000,000"),
    (["--steps", "2000000001"], "--steps=2000000001 is out of range; accepted: a whole number from 1 to "),
    (["--repeats", "0"], "--repeats=0 is out of range; accepted: a whole number >= 1"),
])
def test_the_actors_table_refuses_what_it_cannot_measure_before_any_run(
        monkeypatch: pytest.MonkeyPatch, argv: list[str], said: str) -> None:
    bench = load_benchmark("actor_throughput", monkeypatch)
    monkeypatch.setattr(bench, "train", lambda *args, **kwargs: pytest.fail("trained"))
    with pytest.raises(SystemExit) as refused:
        bench.main(argv)
    assert str(refused.value).startswith(said) and "\n" not in str(refused.value)


def test_the_project_links_into_a_site_folder_as_pyproject_maps_it(monkeypatch: pytest.MonkeyPatch,
                                                                    tmp_path: pathlib.Path) -> None:
    """Where the GPU machine's Python has neither pip nor setuptools: cardlab imports from the linked
    folder, each mapped package from this checkout's folder, twice over (a warm machine's second call)."""
    import os
    import subprocess
    import sys

    bench = load_benchmark("scale_round", monkeypatch)
    site = tmp_path / "site"
    for _ in range(2):
        bench.link_project(site)
    code = ("import cardlab.training, cardlab.agents.heuristics, cardlab.serve; "
            "print(cardlab.training.__file__, cardlab.agents.heuristics.__file__)")
    env = {**os.environ, "PYTHONPATH": str(site)}
    said = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    training, heuristics = said.stdout.split()
    assert training == str(site / "cardlab" / "training" / "__init__.py")
    assert pathlib.Path(heuristics).resolve() == ROOT / "agents" / "heuristics" / "__init__.py"
    assert (site / "cardlab" / "agents" / "bots" / "huit-2p.json").is_file()


def test_only_pure_python_wheels_are_unpacked(monkeypatch: pytest.MonkeyPatch,
                                              tmp_path: pathlib.Path) -> None:
    import zipfile

    bench = load_benchmark("scale_round", monkeypatch)
    pure = tmp_path / "toy-1.0-py3-none-any.whl"
    with zipfile.ZipFile(pure, "w") as archive:
        archive.writestr("toy/__init__.py", "X = 1\n")
    bench.unpack_wheels([pure], tmp_path / "site")
    assert (tmp_path / "site" / "toy" / "__init__.py").read_text() == "X = 1\n"
    built = tmp_path / "toy-1.0-cp312-cp312-manylinux_2_17_x86_64.whl"
    shutil.copy(pure, built)
    with pytest.raises(SystemExit) as refused:
        bench.unpack_wheels([built], tmp_path / "other")
    assert str(refused.value) == (f"{built} is not a pure-Python wheel; accepted: "
                                  "NAME-VERSION-py3-none-any.whl, as `python benchmarks/scale_round.py "
                                  "wheels` downloads them")
    assert not (tmp_path / "other").exists()
