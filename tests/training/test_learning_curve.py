"""`benchmarks/learning_curve.py` draws the paired band where eval.csv has it, over eval.csv's minutes of
training where it has them, one panel per table (not otherwise tested)."""

from __future__ import annotations

import csv
import pathlib
from typing import Any

import pytest
import yaml

from cardlab.training.harness.records import EVAL_FIELDS
from tests.benchmarks import load_benchmark

ROOT = pathlib.Path(__file__).resolve().parents[2]


def fake_run(folder: pathlib.Path, rows: list[dict[str, Any]], fields: list[str], players: int = 2,
             tensorboard: bool = True) -> pathlib.Path:
    """A run folder with eval.csv rows against expert, their TensorBoard scalars and config.yaml."""
    from torch.utils.tensorboard import SummaryWriter

    folder.mkdir()
    (folder / "config.yaml").write_text(yaml.safe_dump({"name": "x", "game": "huit", "num_players": players}))
    with (folder / "eval.csv").open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    if not tensorboard:
        return folder
    with SummaryWriter(str(folder)) as tb:
        for row in rows:
            tb.add_scalar("eval/win_rate_expert", row["win_rate"], row["steps"])
    return folder


def test_the_band_is_the_paired_interval_where_rows_have_it(monkeypatch: pytest.MonkeyPatch,
                                                            tmp_path: pathlib.Path) -> None:
    bench = load_benchmark("learning_curve", monkeypatch)
    rows = [{"steps": s, "opponent": "expert", "hands": 100, "win_rate": 0.4, "ci_low": 0.30, "ci_high": 0.50,
             "paired_ci_low": 0.32 + s / 1e4, "paired_ci_high": 0.48, "mean_points": 3.0} for s in (10, 20)]
    curve = bench.read_curve(fake_run(tmp_path / "new", rows, list(EVAL_FIELDS)))
    assert curve.paired and curve.low == [0.321, 0.322] and curve.high == [0.48, 0.48]
    old = [f for f in EVAL_FIELDS if "paired" not in f]
    older = bench.read_curve(fake_run(tmp_path / "old", rows, old))
    assert not older.paired and older.low == [0.30, 0.30]
    png = bench.plot([curve, older], tmp_path / "curve.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_minutes_of_eval_csv_make_the_clock_one_panel_per_table(monkeypatch: pytest.MonkeyPatch,
                                                                    tmp_path: pathlib.Path) -> None:
    bench = load_benchmark("learning_curve", monkeypatch)
    rows = [{"steps": s, "opponent": o, "hands": 400, "win_rate": 0.2, "ci_low": 0.15, "ci_high": 0.25,
             "paired_ci_low": 0.16, "paired_ci_high": 0.24, "mean_points": 9.0, "minutes": s / 10}
            for s in (30, 60, 90) for o in ("expert", "greedy")]
    curves = [bench.read_curve(fake_run(tmp_path / f"t{n}", rows, list(EVAL_FIELDS), n, tensorboard=False))
              for n in (3, 4, 5, 6)]
    assert curves[0].trained and curves[0].minutes == [3.0, 6.0, 9.0] and curves[0].rate == [0.2] * 3
    png = bench.plot(curves, tmp_path / "tables.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(SystemExit, match=r"no minutes in eval\.csv and no TensorBoard event file"):
        bench.read_curve(fake_run(tmp_path / "old", rows[:1], [f for f in EVAL_FIELDS if f != "minutes"],
                                  tensorboard=False))


def test_the_legend_names_each_method_the_run_turned_on(monkeypatch: pytest.MonkeyPatch) -> None:
    bench = load_benchmark("learning_curve", monkeypatch)
    recipe = yaml.safe_load((ROOT / "configs" / "tables" / "base.yaml").read_text())
    assert bench.method(recipe) == "lean PPO, after imitation, self-play league"
    every = {**recipe, "imitation": {"enabled": False}, "episode": "match", "rules": {"memory": True},
             "policy": {"privileged_critic": True}}
    assert bench.method(every) == "lean PPO, self-play league, privileged critic, match episodes, memory"
    assert bench.method({"trainer": "sb3", "rules": None}) == "MaskablePPO"


def test_a_long_run_is_named_by_table_learner_and_start(monkeypatch: pytest.MonkeyPatch) -> None:
    bench = load_benchmark("learning_curve", monkeypatch)
    from cardlab.training.harness.config import validate_config

    cfg = bench.long_config("huit-4p-dmc-scratch")
    assert (cfg.game, cfg.num_players, cfg.algorithm, cfg.imitation.enabled) == ("huit", 4, "dmc", False)
    assert cfg.eval.final_hands == bench.LONG_FINAL_HANDS and cfg.eval.opponents == ["expert"]
    validate_config(cfg)
    clone = bench.long_config("switch-4p-ppo-clone")
    assert (clone.game, clone.algorithm, clone.imitation.enabled) == ("switch", "ppo", True)
    assert bench.method({"trainer": "lean", "algorithm": "dmc"}) == "lean DMC"
    shape = ("is an unknown long run; accepted: GAME-Np-LEARNER-START, e.g. huit-4p-dmc-scratch (a game and "
             "its table size in the digits 0-9, learner dmc or ppo, start scratch or clone)")
    for bad in ("huit-4p-dmc", "huit-4p-sac-scratch", "huit-4p-ppo-fresh", "huit-04p-ppo-scratch",
                "huit-+4p-ppo-scratch", "huit-\u0664p-ppo-scratch", "Huit-4p-ppo-scratch",
                "huit-4P-ppo-scratch",
                "huit-4p-ppo-scratch ", "huit_4p_ppo_scratch", ""):
        with pytest.raises(SystemExit) as refused:
            bench.long_config(bad)
        assert str(refused.value) == f"label={bad!r} {shape}"
    with pytest.raises(SystemExit) as refused:
        bench.long_config("huit-9p-dmc-scratch")
    assert str(refused.value).startswith("label='huit-9p-dmc-scratch' is an unknown long run (the recipe "
                                         "refuses its table: num_players: rule option num_players=9 is out "
                                         "of range")
    with pytest.raises(SystemExit) as refused:
        bench.long_config("chess-4p-ppo-scratch")
    assert "the recipe refuses its table: game='chess' is not one of the choices" in str(refused.value)
    with pytest.raises(SystemExit) as refused:
        bench.long_config("huit-4p-dmc-clone")
    assert str(refused.value) == ("label='huit-4p-dmc-clone' is an unknown long run (the DMC learner has no "
                                  "imitation start); accepted: huit-4p-ppo-clone or huit-4p-dmc-scratch")


@pytest.mark.parametrize(("argv", "said"), [
    (["huit-4p-ppo-scratch", "--minutes", "0"],
     "--minutes=0.0 is out of range; accepted: a number of minutes > 0.5 (a round takes half a minute at "
     "least) and <= 1,000,000"),
    (["huit-4p-ppo-scratch", "--minutes", "0.5"], "--minutes=0.5 is out of range"),
    (["huit-4p-ppo-scratch", "--minutes", "-3"], "--minutes=-3.0 is out of range"),
    (["huit-4p-ppo-scratch", "--minutes", "nan"], "--minutes=nan is out of range"),
    (["huit-4p-ppo-scratch", "--minutes", "inf"], "--minutes=inf is out of range"),
    (["huit-4p-ppo-scratch", "--until", "0"],
     "--until=0 is out of range; accepted: a whole number of learner steps from 1 to 2,000,000,000"),
    (["huit-4p-ppo-scratch", "--until", "3000000000"], "--until=3000000000 is out of range"),
    (["huit-4p-ppo-scratch", "--actors", "-1"], "actors=-1 is not a whole number >= 0"),
    (["huit-4p-ppo-scratch", "--device", "gpu"], "device='gpu' is not one of the choices; accepted: 'cpu', "
                                                 "'cuda', 'auto'"),
    (["huit-04p-ppo-scratch"], "label='huit-04p-ppo-scratch' is an unknown long run"),
])
def test_a_long_run_with_bad_minutes_steps_or_label_is_refused_before_a_round(
        monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path, argv: list[str], said: str) -> None:
    bench = load_benchmark("learning_curve", monkeypatch)
    monkeypatch.setattr(bench, "LONG_RUNS_DIR", tmp_path)
    monkeypatch.setattr(bench, "train", lambda *args, **kwargs: pytest.fail("trained"))
    with pytest.raises(SystemExit) as refused:
        bench.main(["long", *argv])
    assert str(refused.value).startswith(said) and "\n" not in str(refused.value)
    assert list(tmp_path.iterdir()) == []


def test_a_long_run_grows_by_rounds_that_resume_and_keep_one_checkpoint(monkeypatch: pytest.MonkeyPatch,
                                                                        tmp_path: pathlib.Path) -> None:
    """Each round ends at the next curve point with its evaluation; a later call resumes the same folder."""
    import dataclasses

    bench = load_benchmark("learning_curve", monkeypatch)
    real = bench.long_config

    def tiny(label: str) -> Any:
        cfg = real(label)
        return dataclasses.replace(cfg, num_envs=8, checkpoint_every=10**6,
                                   ppo=dataclasses.replace(cfg.ppo, n_steps=16, batch_size=64),
                                   self_play=dataclasses.replace(cfg.self_play, snapshot_every=10**6),
                                   eval=dataclasses.replace(cfg.eval, hands=8, final_hands=8))

    monkeypatch.setattr(bench, "long_config", tiny)
    monkeypatch.setattr(bench, "LONG_RUNS_DIR", tmp_path)
    monkeypatch.setattr(bench, "CURVE_POINTS", [300, 600, 900])
    run = bench.grow("huit-2p-ppo-scratch", minutes=5.0, until=600)
    assert run.parent == tmp_path / "huit-2p-ppo-scratch"
    curve = bench.read_curve(run)
    assert len(curve.steps) == 2 and 300 <= curve.steps[0] < 600 <= curve.steps[1]
    kept = f"model_{curve.steps[1]:012d}.zip"
    assert [p.name for p in bench.list_checkpoints(run)] == [kept]
    assert (run / "checkpoints" / "SHA256SUMS").read_text().count("model_") == 1  # the record names only it
    assert not list(run.glob("events.out.tfevents.*"))
    assert 1 <= len(list((run / "checkpoints" / "league").glob("snapshot_*.json"))) <= 5  # the pool
    # the same folder, resumed by a round with an actor: where a round runs is its own (`placed`)
    assert bench.grow("huit-2p-ppo-scratch", minutes=5.0, until=900, actors=1) == run
    assert len(bench.read_curve(run).steps) == 3
    assert yaml.safe_load((run / "config.yaml").read_text(encoding="utf-8"))["actors"] == 1
    assert "| learner steps |" in bench.curve_table(curve)
    png = bench.plot([curve], tmp_path / "long.png", by_steps=True)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    checkpoint = bench.list_checkpoints(run)[-1]
    checkpoint.write_bytes(checkpoint.read_bytes()[:-8] + b"damaged!")
    kept_files = {p: p.read_bytes() for p in run.rglob("*") if p.is_file()}
    monkeypatch.setattr(bench, "CURVE_POINTS", [300, 600, 900, 1200])  # a round left to grow
    with pytest.raises(SystemExit) as refused:
        bench.grow("huit-2p-ppo-scratch", minutes=5.0, until=1200)  # a corrupt checkpoint: one line, not run
    said = str(refused.value)
    assert said.startswith(f"huit-2p-ppo-scratch: cannot grow {run}: checkpoint {checkpoint} has changed "
                           "since it was saved")
    assert said.endswith("use an unchanged checkpoint of the run, or train again") and "\n" not in said
    assert {p: p.read_bytes() for p in run.rglob("*") if p.is_file()} == kept_files  # nothing lost


def test_a_long_runs_folder_holding_anything_but_its_own_runs_is_refused(monkeypatch: pytest.MonkeyPatch,
                                                                         tmp_path: pathlib.Path) -> None:
    """Another label's run in a long run's folder: a round would start a fresh run beside it (the curve
    mixing the two); refused in one line that says what the folder may hold, before any training; so is
    a file in its place or above it."""
    bench = load_benchmark("learning_curve", monkeypatch)
    monkeypatch.setattr(bench, "LONG_RUNS_DIR", tmp_path)
    monkeypatch.setattr(bench, "train", lambda *args, **kwargs: pytest.fail("trained"))
    other = tmp_path / "huit-2p-ppo-scratch" / "switch_4p_ppo_clone__1__20261206-112700"
    other.mkdir(parents=True)
    home = other.parent
    with pytest.raises(SystemExit) as refused:
        bench.grow("huit-2p-ppo-scratch", minutes=5.0, until=600)
    assert str(refused.value) == (f"huit-2p-ppo-scratch: {home} holds {other.name}, not runs of "
                                  "huit-2p-ppo-scratch; accepted: only its own run folders "
                                  "(huit_2p_ppo_scratch__*): move the rest out")
    assert other.is_dir()
    taken = tmp_path / "huit-3p-ppo-scratch"
    taken.write_text("not a folder", encoding="utf-8")
    with pytest.raises(SystemExit) as refused:  # before: a traceback from the new run folder's mkdir
        bench.grow("huit-3p-ppo-scratch", minutes=5.0, until=600)
    assert str(refused.value) == (f"huit-3p-ppo-scratch: {taken} is a file, not the long run's folder; "
                                  "accepted: a folder holding only its own run folders "
                                  "(huit_3p_ppo_scratch__*), or none there: move the file out")
    assert taken.read_text(encoding="utf-8") == "not a folder"
    with pytest.raises(SystemExit) as refused:  # --long-runs a file: a traceback from the mkdir too
        bench.grow("huit-3p-ppo-scratch", minutes=5.0, until=600, root=taken / "runs")
    assert str(refused.value) == (f"huit-3p-ppo-scratch: {taken} is a file, not a folder above the long "
                                  f"run's folder {taken / 'runs' / 'huit-3p-ppo-scratch'}; accepted: "
                                  "--long-runs a folder (made where missing)")
    assert taken.read_text(encoding="utf-8") == "not a folder"


def test_the_docs_long_run_tables_are_the_run_folders_curves(monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/results.md quotes each long run's curve between `<!-- long-run: LABEL -->` and its end marker; the
    table is what `curve_table` makes of the run folder in the repository, so a round grown and not quoted
    (or quoted and not committed) fails here."""
    import re

    bench = load_benchmark("learning_curve", monkeypatch)
    text = (ROOT / "docs" / "results.md").read_text(encoding="utf-8")
    quoted = re.findall(r"<!-- long-run: (\S+) -->\n(.*?)\n<!-- end long-run -->", text, re.DOTALL)
    assert quoted, "docs/results.md quotes no long run"
    for label, table in quoted:
        runs = sorted((bench.LONG_RUNS_DIR / label).glob("*__*"))
        assert runs, f"{label}: no run folder in {bench.LONG_RUNS_DIR}"
        assert table == bench.curve_table(bench.read_curve(runs[-1])), label


def test_the_long_runs_and_dmc_vs_ppo_build_the_table_recipe_in_one_place_as_before(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """`table_recipe` makes both: a long run's config is still the one its committed run saved, as a round
    resumes it (`load_config`: a key added since at its default), and dmc_vs_ppo's rows are still
    configs/tables/huit_4p.yaml with imitation off."""
    import dataclasses

    from cardlab.training.harness.config import config_to_dict, load_config

    bench = load_benchmark("learning_curve", monkeypatch)
    dmc_vs_ppo = load_benchmark("dmc_vs_ppo", monkeypatch)
    for saved in sorted(bench.LONG_RUNS_DIR.glob("*/*__*/config.yaml")):
        label = saved.parents[1].name
        kept = config_to_dict(load_config(saved))  # as a resume reads it: a key added since, at its default
        made = config_to_dict(bench.long_config(label))
        per_round = ("max_minutes", "total_timesteps", "actors", "device")  # each round's: `placed`
        assert {k: v for k, v in made.items() if k not in per_round} == {
            k: v for k, v in kept.items() if k not in per_round}, label
    long = bench.long_config("switch-5p-ppo-clone")
    assert long == bench.table_recipe("switch", 5, "ppo", True, name="switch_5p_ppo_clone",
                                      steps=bench.CURVE_POINTS[-1], checkpoint_every=10_000_000,
                                      every_steps=200_000_000, hands=400,
                                      final_hands=bench.LONG_FINAL_HANDS)
    for steps, hands in ((12_000_000, 2000), (1000, 10)):
        table = load_config(ROOT / "configs" / "tables" / "huit_4p.yaml")
        before = dataclasses.replace(  # the rows as dmc_vs_ppo built them from that file
            table, name="huit_4p_scratch", total_timesteps=steps, max_minutes=0.0, checkpoint_every=steps,
            imitation=dataclasses.replace(table.imitation, enabled=False),
            eval=dataclasses.replace(table.eval, every_steps=steps // 4, hands=200, final_hands=hands,
                                     opponents=["expert"]))
        rows = dmc_vs_ppo.rows(steps, hands)
        assert rows["ppo"] == before
        assert rows["dmc"] == dataclasses.replace(before, algorithm="dmc")


def long_run_copy(bench: Any, tmp_path: pathlib.Path, label: str = "huit-4p-ppo-clone",
                  monkeypatch: pytest.MonkeyPatch | None = None) -> pathlib.Path:
    """A copy of the committed long run `label` in `tmp_path` (the script's long-runs folder from now on),
    training refused: its run folder. With `monkeypatch`, the curve gains a point past the run's steps,
    so that the copy has a round left to grow even where the committed run has reached the curve's end:
    its steps are read as the curve's last point but one."""
    import shutil

    shutil.copytree(bench.LONG_RUNS_DIR / label, tmp_path / label)
    if monkeypatch is not None:
        trained = bench.steps_done
        monkeypatch.setattr(bench, "steps_done", lambda runs: min(trained(runs), bench.CURVE_POINTS[-2]))
    return next((tmp_path / label).glob("*__*"))


@pytest.mark.parametrize(("damage", "said"), [
    (lambda text: text[:-40], "eval.csv line 13='200003892,expert,...,0.271513342184996' is a row of 8 "
                              "columns, not the header's 16; accepted: eval.csv as the trainer wrote it"),
    (lambda text: text.replace("0.254,", "0.2x4,"), "eval.csv line 3 win_rate='0.2x4' is not a number"),
    (lambda text: text.replace("\n1002310,", "\n1e6,"), "eval.csv line 3 steps='1e6' is not a whole number"),
    (lambda text: "\udcff" + text, "eval.csv is not a CSV text ('utf-8' codec can't decode"),
    (lambda text: text.replace("steps,", "step,", 1),
     "eval.csv line 1='step,opponent,han...ed_ci_high,minutes' is not the header"),
    (None, "it has no eval.csv (the curve so far); accepted: the run folder as its last round left it"),
])
def test_a_long_run_with_a_damaged_or_missing_eval_csv_is_refused_before_a_round_losing_nothing(
        monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path, damage: Any, said: str) -> None:
    """eval.csv is the curve: a row cut short (a write stopped midway), a damaged value or a missing file
    trained a round (minutes) before: resuming rewrote the cut row with empty columns, or started the curve
    again, and the curve failed or was drawn from the damage. Now one line names the file, the line and
    the column, before any change to the run folder."""
    bench = load_benchmark("learning_curve", monkeypatch)
    run = long_run_copy(bench, tmp_path, monkeypatch=monkeypatch)
    monkeypatch.setattr(bench, "LONG_RUNS_DIR", tmp_path)
    monkeypatch.setattr(bench, "train", lambda *args, **kwargs: pytest.fail("trained"))
    eval_csv = run / "eval.csv"
    if damage is None:
        eval_csv.unlink()
    else:
        eval_csv.write_bytes(damage(eval_csv.read_text(encoding="utf-8")).encode(errors="surrogateescape"))
    kept = {p: p.read_bytes() for p in run.rglob("*") if p.is_file()}
    with pytest.raises(SystemExit) as refused:
        bench.main(["long", "huit-4p-ppo-clone", "--minutes", "5"])
    message = str(refused.value)
    assert message.startswith(f"huit-4p-ppo-clone: cannot grow {run}: ") and "\n" not in message
    assert said in message
    assert {p: p.read_bytes() for p in run.rglob("*") if p.is_file()} == kept


def test_a_long_run_asked_to_stop_below_its_steps_is_refused(monkeypatch: pytest.MonkeyPatch,
                                                              tmp_path: pathlib.Path) -> None:
    """`--until` below the steps the run has trained: before, no round ran and nothing said so (the curve
    printed as if grown); its own steps are accepted (the curve and its figure again)."""
    bench = load_benchmark("learning_curve", monkeypatch)
    run = long_run_copy(bench, tmp_path)
    monkeypatch.setattr(bench, "LONG_RUNS_DIR", tmp_path)
    monkeypatch.setattr(bench, "train", lambda *args, **kwargs: pytest.fail("trained"))
    steps = bench.steps_done([run])
    least = min(steps, bench.CURVE_POINTS[-1])  # a finished run's last round ends past the curve's end
    with pytest.raises(SystemExit) as refused:
        bench.main(["long", "huit-4p-ppo-clone", "--until", "5000000"])
    assert str(refused.value) == (f"--until=5000000 is below the {steps:,} learner steps huit-4p-ppo-clone "
                                  f"has trained; accepted: a whole number of learner steps from {least:,} "
                                  "to 2,000,000,000")
    assert bench.grow("huit-4p-ppo-clone", 5.0, least) == run
    monkeypatch.setattr(bench, "CURVE_POINTS", [p for p in bench.CURVE_POINTS if p <= steps])
    assert bench.grow("huit-4p-ppo-clone", 5.0, bench.CURVE_POINTS[-1]) == run  # finished: nothing to train


def test_a_plot_onto_a_folder_or_not_a_png_is_refused(monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """`plot --out FOLDER` wrote FOLDER.png beside it and said it wrote FOLDER; `--out x.txt` failed with
    matplotlib's traceback after reading every run."""
    bench = load_benchmark("learning_curve", monkeypatch)
    run = next((bench.LONG_RUNS_DIR / "huit-4p-ppo-clone").glob("*__*"))
    for out in (tmp_path, tmp_path / "curve.txt"):
        with pytest.raises(SystemExit):
            bench.main(["plot", str(run), "--out", str(out)])
        error = capsys.readouterr().err.strip().splitlines()[-1]
        assert error.endswith(f"--out {out}: not the name of a PNG file; accepted: a file name ending in "
                              ".png (not a folder)")
    assert list(tmp_path.iterdir()) == [] and not tmp_path.with_suffix(".png").exists()


def test_a_long_run_with_a_damaged_league_snapshot_is_refused_before_a_round(
        monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path) -> None:
    """A snapshot of the league's pool cut short: the round resumed the run folder (its config saved, a
    TensorBoard file added) and failed with a traceback when the trainer seated its first games;
    `prepare_resume` loads the pool first and refuses it in one line, the run folder as it was."""
    bench = load_benchmark("learning_curve", monkeypatch)
    run = long_run_copy(bench, tmp_path, monkeypatch=monkeypatch)
    monkeypatch.setattr(bench, "LONG_RUNS_DIR", tmp_path)
    monkeypatch.setattr(bench, "train", lambda *args, **kwargs: pytest.fail("trained"))
    weights = sorted((run / "checkpoints" / "league").glob("*.safetensors"))[-1]
    weights.write_bytes(weights.read_bytes()[:-8])
    kept = {p: p.read_bytes() for p in run.rglob("*") if p.is_file()}
    with pytest.raises(SystemExit) as refused:
        bench.main(["long", "huit-4p-ppo-clone", "--minutes", "5"])
    message = str(refused.value)
    assert message.startswith(f"huit-4p-ppo-clone: cannot grow {run}: cannot resume {run}: a league snapshot "
                              f"it seats is refused: bot {weights.with_suffix('.json')}: ")
    assert message.endswith(f"; accepted: the snapshots this run wrote, whole (move the others out of "
                            f"{weights.parent})")
    assert "\n" not in message
    assert {p: p.read_bytes() for p in run.rglob("*") if p.is_file()} == kept


@pytest.mark.parametrize("minutes", ["0", "-1", "nan", "inf"])
def test_the_old_pipeline_without_a_time_limit_is_refused(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], minutes: str) -> None:
    """`old --minutes 0` trained 10**9 steps with no limit (hours); -1 and NaN failed in the config check
    with a traceback."""
    bench = load_benchmark("learning_curve", monkeypatch)
    monkeypatch.setattr(bench, "train", lambda *args, **kwargs: pytest.fail("trained"))
    with pytest.raises(SystemExit):
        bench.main(["old", "--minutes", minutes])
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert error.endswith(f"--minutes={float(minutes)} is out of range; accepted: a number of minutes > 0 "
                          "and <= 1,000,000"), error


@pytest.mark.parametrize("bot", ["switch-4p", "huit-2p"])
def test_a_long_run_with_a_league_snapshot_of_another_table_is_refused_before_a_round(
        bot: str, monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path) -> None:
    """A snapshot of another game or seat count in the league's pool (a league folder copied from another
    run): it loaded as a bot, then failed when the trainer seated it at this run's table; `check_pool` checks
    it against this run's table, so it is refused in one line, in `check_game`'s words (the file, what it
    plays, the run's game or seats) without their advice on where to play it, which is no answer to a
    resume, saying what the run accepts, the run folder as it was."""
    from cardlab.agents.bot_catalogue import SHIPPED_BOTS

    bench = load_benchmark("learning_curve", monkeypatch)
    run = long_run_copy(bench, tmp_path, monkeypatch=monkeypatch)
    monkeypatch.setattr(bench, "LONG_RUNS_DIR", tmp_path)
    monkeypatch.setattr(bench, "train", lambda *args, **kwargs: pytest.fail("trained"))
    meta = sorted((run / "checkpoints" / "league").glob("*.json"))[-1]
    for suffix in (".json", ".safetensors"):
        meta.with_suffix(suffix).write_bytes((SHIPPED_BOTS / f"{bot}{suffix}").read_bytes())
    kept = {p: p.read_bytes() for p in run.rglob("*") if p.is_file()}
    with pytest.raises(SystemExit) as refused:
        bench.main(["long", "huit-4p-ppo-clone", "--minutes", "5"])
    plays = {"switch-4p": "it plays switch, not huit",
             "huit-2p": "it was trained for 2 players, the game has 4"}[bot]
    assert str(refused.value) == (
        f"huit-4p-ppo-clone: cannot grow {run}: cannot resume {run}: a league snapshot it seats is refused: "
        f"bot {meta}: {plays}; accepted: the snapshots this run wrote, whole (move the others out of "
        f"{meta.parent})")
    assert {p: p.read_bytes() for p in run.rglob("*") if p.is_file()} == kept
