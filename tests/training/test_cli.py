"""The `cardlab` command line, through main([...]): every subcommand's output,
and bad input as one line on stderr with status 2."""

from __future__ import annotations

import io
import json
import pathlib

import numpy as np
import pytest
import yaml
from safetensors.torch import load_file

from cardlab.agents.bot import load_bot
from cardlab.envs import huit_v0
from cardlab.training.cli import main, parse_rule

TINY_CONFIG = {
    "name": "tiny", "seed": 1, "game": "huit", "num_players": 2, "rules": {"hand_size": 6},
    "opponents": [{"spec": "random", "weight": 1}],
    "ppo": {"n_steps": 32, "batch_size": 32, "n_epochs": 1},
    "policy": {"net_arch": [16]}, "num_envs": 1, "vec_env": "dummy", "total_timesteps": 64,
    "eval": {"every_steps": 100_000, "hands": 4, "final_hands": 4, "opponents": ["random"]},
    "checkpoint_every": 100_000,
}


def fail(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """Run a command that must fail with status 2 and one line on stderr; returns that line."""
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert "Traceback" not in err
    return err.splitlines()[-1]


def test_rules_prints_layouts(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules", "switch"]) == 0
    out = capsys.readouterr().out
    assert "num_players=4" in out and "float32, 175 values with 4 players" in out
    assert "| 0:53 | `hand` | 53 |" in out
    assert "`Discrete(71)`" in out and "| 49..64 | play the Jack of suit j and declare suit s (A5)" in out
    assert "| `voluntary_draw` | false | true or false |" in out
    assert main(["rules", "huit", "--rule", "num_players=2", "--rule", "hand_size=all"]) == 0
    out = capsys.readouterr().out
    assert "hand_size=all" in out and "float32, 109 values with 2 players" in out and "`Discrete(354)`" in out


def test_rules_markdown_prints_only_the_generated_tables(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules", "huit", "--markdown"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("### Rule options") and "# Huit" not in out


def test_eval_prints_and_writes(tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    files = [tmp_path / "r.json", tmp_path / "r.csv", tmp_path / "r.png"]
    argv = ["eval", "--game", "huit", "--agents", "random", "greedy", "--hands", "10", "--matches", "2",
            "--seed", "3", "--rule", "target_score=40", "--json", str(files[0]), "--csv", str(files[1]),
            "--plot", str(files[2])]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "huit, 2 players, seed 3: 10 hands = 5 deals x 2 seat rotations, 2 matches to 40" in out
    assert "1     greedy" in out
    data = json.loads(files[0].read_text())
    assert data["rules"]["target_score"] == 40 and data["matches"] == 2
    assert files[1].read_text().startswith("slot,agent,hands,hand_wins")
    assert files[2].read_bytes()[:4] == b"\x89PNG"
    assert all(f"wrote {f}" in out for f in files)


def test_tournament_prints_cross_table_and_ratings(tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["tournament", "--game", "switch", "--agents", "random", "greedy", "--hands", "6",
            "--json", str(tmp_path / "t.json")]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "switch tournament, 2 players (head to head), 6 hands per pairing" in out
    assert "TrueSkill ratings:" in out
    assert json.loads((tmp_path / "t.json").read_text())["agents"] == ["random", "greedy"]


def test_play_reads_stdin(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("draw\n"))
    assert main(["play", "huit", "--opponents", "random,greedy", "--seed", "2"]) == 0
    out = capsys.readouterr().out
    assert "player_1 = random, player_2 = greedy" in out and "you: draw" in out and "end of input" in out


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    """A real (tiny) training run through `cardlab train`."""
    folder = tmp_path_factory.mktemp("train")
    config = folder / "tiny.yaml"
    config.write_text(yaml.safe_dump(TINY_CONFIG))
    assert main(["train", str(config), "--runs-dir", str(folder / "runs")]) == 0
    (run,) = (folder / "runs").iterdir()
    return run


def test_train_then_export(run_dir: pathlib.Path, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    (checkpoint,) = (run_dir / "checkpoints").glob("model_*.zip")
    for source, name in ((run_dir, "from_run"), (checkpoint, "from_zip")):
        assert main(["export", str(source), "-o", str(tmp_path / name)]) == 0
        assert f"wrote {tmp_path / name}.json" in capsys.readouterr().out
        meta = json.loads((tmp_path / f"{name}.json").read_text())
        assert meta["game"] == "huit" and meta["num_players"] == 2 and meta["rules"]["hand_size"] == 6
        assert meta["summary"]["steps"] == 64 and meta["summary"]["checkpoint"] == checkpoint.name
        # the final checkpoint holds the same weights as the bot the run exported itself
        mine, runs = load_file(str(tmp_path / f"{name}.safetensors")), load_file(str(run_dir / "bot.safetensors"))
        assert mine.keys() == runs.keys() and all(np.array_equal(mine[k], runs[k]) for k in mine)
    env = huit_v0.env(num_players=2, hand_size=6)
    env.reset(seed=0)
    obs = env.observe(env.agent_selection)
    assert obs["action_mask"][load_bot(tmp_path / "from_run.json", game=env).act(obs)] == 1


def test_export_and_train_refusals(run_dir: pathlib.Path, tmp_path: pathlib.Path,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    assert "expected a run folder or an existing checkpoint .zip" in fail(
        ["export", str(tmp_path / "none"), "-o", str(tmp_path / "b")], capsys)
    assert "has no checkpoints/model_<steps>.zip" in fail(["export", str(tmp_path), "-o", str(tmp_path / "b")], capsys)
    lonely = tmp_path / "checkpoints" / "model_1.zip"
    lonely.parent.mkdir()
    lonely.write_bytes((next((run_dir / "checkpoints").glob("*.zip"))).read_bytes())
    assert "no config.yaml in" in fail(["export", str(lonely), "-o", str(tmp_path / "b")], capsys)
    assert "config file" in fail(["train", str(tmp_path / "missing.yaml")], capsys)


@pytest.mark.parametrize(("argv", "message"), [
    (["--agents", "random", "nobody"], "unknown agent spec 'nobody'"),
    (["--agents", "random", "random", "--rule", "hand_size=99"], "hand_size=99 is out of range"),
    (["--agents", "random", "random", "--rule", "hand_size"], "expected key=value"),
    (["--agents", "random", "random", "--rule", "colour=red"], "unknown rule option(s) colour"),
    (["--agents", "random", "bot:/no/such/bot"], "bot /no/such/bot.json: file not found"),
    (["--agents", "random", "random", "--json", "/no/such/folder/r.json"], "folder /no/such/folder does not exist"),
    (["--agents", "random", "random", "--plot", "r.svg"], "give a .png file name"),
])
def test_eval_errors(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    line = fail(["eval", "--game", "huit", "--hands", "2", *argv], capsys)
    assert line.startswith("cardlab eval: error:") and message in line


def test_other_errors(capsys: pytest.CaptureFixture[str]) -> None:
    assert "invalid choice: 'poker'" in fail(["eval", "--game", "poker", "--agents", "random", "--hands", "2"], capsys)
    assert "at least one agent spec" in fail(["play", "huit", "--opponents", ","], capsys)
    assert "repeated" in fail(["tournament", "--game", "huit", "--agents", "random", "random", "--hands", "2"], capsys)
    assert "required" in fail([], capsys)


def test_parse_rule() -> None:
    assert parse_rule("hand_size=all") == ("hand_size", "all")
    assert parse_rule("match_rank=false") == ("match_rank", False)
    assert parse_rule(" num_players = 3") == ("num_players", 3)
    with pytest.raises(ValueError, match="single number"):
        parse_rule("hand_size=[1, 2]")
    with pytest.raises(ValueError, match="expected key=value"):
        parse_rule("=3")


def test_ship_bots_from_a_run_and_from_a_config(run_dir: pathlib.Path, tmp_path: pathlib.Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "tiny.yaml"
    config.write_text(yaml.safe_dump(TINY_CONFIG))
    out = tmp_path / "bots"
    argv = ["ship-bots", f"tiny-run={run_dir}", f"tiny-new={config}", "--out", str(out), "--hands", "6",
            "--seed", "5", "--runs-dir", str(tmp_path / "runs")]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    for name in ("tiny-run", "tiny-new"):
        assert f"wrote {out / name}.json and .safetensors: bot:{name} wins" in printed
        meta = json.loads((out / f"{name}.json").read_text())
        shipped = meta["summary"]["shipped"]
        assert shipped["hands"] == 6 and shipped["seed"] == 5 and shipped["opponent"] == "expert"
        assert meta["weights"]["file"] == f"{name}.safetensors"
        assert load_bot(out / f"{name}.json").game.num_players == 2
    assert len(list((tmp_path / "runs").iterdir())) == 1  # the config was trained, the run was not
    assert "expected NAME=CONFIG_OR_RUN_DIR" in fail(["ship-bots", "huit-2p"], capsys)
    missing = ["ship-bots", f"x={tmp_path / 'no'}"]
    assert "expected a YAML config or a finished run folder" in fail(missing, capsys)
    assert "bot name 'a b'" in fail(["ship-bots", f"a b={run_dir}"], capsys)
