"""The `cardlab` command line, through main([...]): every subcommand's output,
bad input as one line on stderr with status 2, Ctrl-C as one line and status
130, and what a newcomer meets. tests/cli/test_cli_process.py
runs it as a separate process (signals, pipes, a terminal, temp folders)."""

from __future__ import annotations

import argparse
import io
import json
import os
import pathlib
import re

import numpy as np
import pytest
import torch
import yaml
from safetensors.torch import load_file

from cardlab.agents.bot import load as bot_load
from cardlab.agents.bot import load_bot
from cardlab.cli import COMMANDS, build_parser, main
from cardlab.cli.common import parse_rule
from cardlab.envs import huit_v1
from cardlab.training.harness.checkpoints import checkpoint_path, record_checkpoint

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


def test_tournament_prints_cross_table_and_ratings(
    tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
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


def test_train_then_export(
    run_dir: pathlib.Path, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (checkpoint,) = (run_dir / "checkpoints").glob("model_*.zip")
    for source, name in ((run_dir, "from_run"), (checkpoint, "from_zip")):
        assert main(["export", str(source), "-o", str(tmp_path / name)]) == 0
        assert f"wrote {tmp_path / name}.json" in capsys.readouterr().out
        meta = json.loads((tmp_path / f"{name}.json").read_text())
        assert meta["game"] == "huit" and meta["num_players"] == 2 and meta["rules"]["hand_size"] == 6
        assert meta["summary"]["steps"] == 64 and meta["summary"]["checkpoint"] == checkpoint.name
        # the final checkpoint holds the same weights as the bot the run exported itself
        mine = load_file(str(tmp_path / f"{name}.safetensors"))
        runs = load_file(str(run_dir / "bot.safetensors"))
        assert mine.keys() == runs.keys() and all(np.array_equal(mine[k], runs[k]) for k in mine)
    env = huit_v1.env(num_players=2, hand_size=6)
    env.reset(seed=0)
    obs = env.observe(env.agent_selection)
    assert obs["action_mask"][load_bot(tmp_path / "from_run.json", game=env).act(obs)] == 1


def test_export_and_train_refusals(run_dir: pathlib.Path, tmp_path: pathlib.Path,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    assert "expected a run folder or an existing checkpoint .zip" in fail(
        ["export", str(tmp_path / "none"), "-o", str(tmp_path / "b")], capsys)
    assert "has no checkpoints/model_<steps>.zip" in fail(
        ["export", str(tmp_path), "-o", str(tmp_path / "b")], capsys)
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
    (["--agents", "random", "bot:/no/such/bot"], "bot /no/such/bot: no such bot file or run folder"),
    (["--agents", "random", "random", "--json", "/no/such/folder/r.json"],
     "folder /no/such/folder does not exist"),
    (["--agents", "random", "random", "--plot", "r.svg"], "give a .png file name"),
])
def test_eval_errors(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    line = fail(["eval", "--game", "huit", "--hands", "2", *argv], capsys)
    assert line.startswith("cardlab eval: error:") and message in line


def test_other_errors(capsys: pytest.CaptureFixture[str]) -> None:
    assert "invalid choice: 'poker'" in fail(
        ["eval", "--game", "poker", "--agents", "random", "--hands", "2"], capsys)
    assert "at least one agent spec" in fail(["play", "huit", "--opponents", ","], capsys)
    assert "repeated" in fail(
        ["tournament", "--game", "huit", "--agents", "random", "random", "--hands", "2"], capsys)
    assert "required" in fail([], capsys)


def test_parse_rule() -> None:
    assert parse_rule("hand_size=all") == ("hand_size", "all")
    assert parse_rule("match_rank=false") == ("match_rank", False)
    assert parse_rule(" num_players = 3") == ("num_players", 3)
    with pytest.raises(ValueError, match="single number"):
        parse_rule("hand_size=[1, 2]")
    with pytest.raises(ValueError, match="expected key=value"):
        parse_rule("=3")


# ---------------------------------------------------------------- what a newcomer meets
BOT_RULES = ["--rule", "hand_size=6"]  # the rules of the run_dir fixture's bot


def test_agent_lists_are_space_or_comma_separated_everywhere(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    outputs = []
    for agents in (["random", "greedy"], ["random,greedy"], ["random,", "greedy"]):
        assert main(["eval", "--game", "huit", "--agents", *agents, "--hands", "4"]) == 0
        outputs.append(capsys.readouterr().out)
    assert outputs[0] == outputs[1] == outputs[2] and "1     greedy" in outputs[0]
    for opponents in (["random", "greedy"], ["random,greedy"]):
        monkeypatch.setattr("sys.stdin", io.StringIO("draw\n"))
        assert main(["play", "huit", "--opponents", *opponents, "--seed", "2"]) == 0
        assert "player_1 = random, player_2 = greedy" in capsys.readouterr().out
    assert main(["tournament", "--game", "huit", "--agents", "random,greedy", "expert", "--hands", "2"]) == 0
    assert "2  expert" in capsys.readouterr().out


@pytest.mark.parametrize(("argv", "message"), [
    (["eval", "--game", "huit", "--agents", "random", "--hands", "2"],
     "1 agent given (random), but Huit américain seats 2 to 6 players: give 2 to 6 agents, or set the rule "
     "option num_players=N"),
    (["eval", "--game", "huit", "--agents", *["random"] * 7, "--hands", "2"],
     "7 agents given (random, random, random, random, random, random, random), but Huit américain seats 2 "
     "to 6 players"),
    (["eval", "--game", "huit", "--agents", "random", "random", "random", "--hands", "2", "--rule",
      "num_players=2"], "3 agents given (random, random, random) for 2 seats (num_players=2): give 1 to 2"),
    (["play", "huit", "--opponents", *["random"] * 6],
     "6 opponents given (random, random, random, random, random, random), but Huit américain seats 2 to 6 "
     "players, you included: give 1 to 5 opponents"),
])
def test_agent_counts_are_explained(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    line = fail(argv, capsys)
    assert message in line and "out of range" not in line


def test_bots_run_on_one_torch_thread_unless_told(
    run_dir: pathlib.Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    seen: list[int] = []
    build = bot_load.build_network

    def recording(meta: dict, tensors: dict) -> torch.nn.Module:
        network = build(meta, tensors)
        network.register_forward_pre_hook(lambda *_: seen.append(torch.get_num_threads()))
        return network

    monkeypatch.setattr(bot_load, "build_network", recording)
    monkeypatch.delenv("CARDLAB_TORCH_THREADS", raising=False)
    before = torch.get_num_threads()
    torch.set_num_threads(2)  # torch's default on a 2-core machine: what made bots slow on a busy one
    try:
        argv = ["eval", "--game", "huit", "--agents", f"bot:{run_dir}", "random", "--hands", "2", *BOT_RULES]
        for extra, env, threads in (([], None, 1), (["--torch-threads", "3"], None, 3), ([], "4", 4)):
            if env is not None:
                monkeypatch.setenv("CARDLAB_TORCH_THREADS", env)
            seen.clear()
            assert main(argv + extra) == 0
            assert seen and set(seen) == {threads}
            assert torch.get_num_threads() == 2  # the process's own setting is left as it was
        assert os.environ["CARDLAB_TORCH_THREADS"] == "4"  # --torch-threads set it for its command only
        monkeypatch.setenv("CARDLAB_TORCH_THREADS", "many")
        assert "CARDLAB_TORCH_THREADS='many' is not a whole number" in fail(argv, capsys)
        monkeypatch.delenv("CARDLAB_TORCH_THREADS")
        assert "argument --torch-threads: expected a whole number >= 1, got 0" in fail(
            [*argv, "--torch-threads", "0"], capsys)
        assert load_bot(run_dir).threads == 1 and load_bot(run_dir, threads=2).threads == 2
    finally:
        torch.set_num_threads(before)


def test_bot_spec_takes_a_run_folder(run_dir: pathlib.Path, tmp_path: pathlib.Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    for spec in (f"bot:{run_dir}", f"bot:{run_dir}/bot.json", f"bot:{run_dir}/bot"):
        assert main(["eval", "--game", "huit", "--agents", spec, "random", "--hands", "2", *BOT_RULES]) == 0
        assert f"0     {spec}" in capsys.readouterr().out
    line = fail(["eval", "--game", "huit", "--agents", "bot:", "random", "--hands", "2"], capsys)
    assert "agent spec 'bot:' is missing the bot: give a shipped bot's name" in line
    line = fail(["eval", "--game", "huit", "--agents", f"bot:{tmp_path}", "random", "--hands", "2"], capsys)
    assert f"the run folder {tmp_path} has no bot.json" in line
    assert f"cardlab export {tmp_path} -o {tmp_path / 'bot'}" in line


def no_python_text(line: str) -> str:
    python = r"PosixPath|\[Errno|BytesIO|wasn't a zip-file|Traceback|<[a-z_.]+ object"
    assert not re.search(python, line), line
    return line


def test_messages_are_sentences_not_python_objects(run_dir: pathlib.Path, tmp_path: pathlib.Path,
                                                   monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    evaluate = ["eval", "--game", "huit", "--agents", "random", "random", "--hands", "2"]
    for spec in ("bot:.", "bot:/"):
        line = no_python_text(fail(["eval", "--game", "huit", "--agents", spec, "random", "--hands", "2"],
                                   capsys))
        assert "bot" in line
    line = no_python_text(fail([*evaluate, "--json", "."], capsys))
    assert "--json . is a folder: give the name of a file to write" in line
    (tmp_path / "a_file").write_text("")
    config = tmp_path / "tiny.yaml"
    config.write_text(yaml.safe_dump(TINY_CONFIG))
    line = no_python_text(fail(["train", str(config), "--runs-dir", "a_file/runs"], capsys))
    assert line.startswith("cardlab train: error: a_file/runs") and "a part of the path is a file" in line
    line = no_python_text(fail(["train", "."], capsys))
    assert "config file .: is a folder, not a file; give the path of the .yaml file" in line
    # A checkpoint the run recorded but that is no zip file (damaged while saved): a sentence, not SB3's text.
    run = tmp_path / "run"
    run.mkdir()
    (run / "config.yaml").write_text((run_dir / "config.yaml").read_text())
    broken = checkpoint_path(run, 64)
    broken.parent.mkdir()
    broken.write_bytes(b"not a zip file")
    record_checkpoint(broken)
    line = no_python_text(fail(["export", str(run), "-o", "b"], capsys))
    assert f"checkpoint {broken} is not a zip file" in line and "use another checkpoint" in line


def test_counts_and_rounding_are_reported_as_played(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", "--game", "huit", "--agents", "random", "greedy", "--hands", "0", "--matches", "3",
                 "--rule", "target_score=30"]) == 0
    out = capsys.readouterr().out
    assert "nan" not in out.lower() and "pts/hand" not in out and "win rate  " not in out
    assert ("4 matches to 30 = 2 deals x 2 seat rotations (3 asked for, rounded up to whole seat rotations)"
            in out)
    assert main(["eval", "--game", "huit", "--agents", "random", "greedy", "--hands", "3"]) == 0
    out = capsys.readouterr().out
    assert "4 hands = 2 deals x 2 seat rotations (3 asked for, rounded up" in out and "match" not in out
    assert main(["eval", "--game", "huit", "--agents", "random", "greedy", "--hands", "4"]) == 0
    assert "asked for" not in capsys.readouterr().out


def test_only_existing_options_are_suggested(capsys: pytest.CaptureFixture[str]) -> None:
    line = fail(["tournament", "--game", "huit", "--agents", "random", "greedy", "--hands", "0"], capsys)
    assert "argument --hands: expected a whole number >= 1, got 0" in line and "--matches" not in line
    line = fail(["eval", "--game", "huit", "--agents", "random", "random", "--hands", "2", "--rule",
                 "hand_size=99"], capsys)
    assert line.endswith("rule option hand_size=99 is out of range; accepted: 1 to 16 for 2 players, "
                         "or 'all'")
    line = fail(["eval", "--game", "huit", "--agents", "random", "random", "--hands", "0"], capsys)
    assert "nothing to play: give hands > 0 or matches > 0" in line  # eval has --matches


def test_a_config_must_name_its_game(tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    empty, nameless = tmp_path / "empty.yaml", tmp_path / "nameless.yaml"
    empty.write_text("# nothing yet\n")
    nameless.write_text("seed: 3\n")
    runs = tmp_path / "runs"
    assert "is empty: a config must at least name its game, e.g. `game: huit`" in fail(
        ["train", str(empty), "--runs-dir", str(runs)], capsys)
    assert "does not name its game: add the key game" in fail(
        ["train", str(nameless), "--runs-dir", str(runs)], capsys)
    assert not runs.exists()  # refused before a run folder is made


def test_files_follow_the_umask(run_dir: pathlib.Path, tmp_path: pathlib.Path,
                                capsys: pytest.CaptureFixture[str]) -> None:
    def mode(path: pathlib.Path) -> int:
        return path.stat().st_mode & 0o777

    umask = os.umask(0o022)
    os.umask(umask)
    # The run's own files, written under this process's umask.
    for name in ("bot.json", "bot.safetensors", "config.yaml", "checkpoints/SHA256SUMS"):
        assert mode(run_dir / name) == 0o666 & ~umask, name
    os.umask(0o002)
    try:
        assert main(["export", str(run_dir), "-o", str(tmp_path / "shared")]) == 0
    finally:
        os.umask(umask)
    capsys.readouterr()
    assert mode(tmp_path / "shared.json") == mode(tmp_path / "shared.safetensors") == 0o664


def test_every_option_of_every_command_has_help() -> None:
    def actions(parser: argparse.ArgumentParser, name: str) -> list[tuple[str, argparse.Action]]:
        found = []
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for command, sub in action.choices.items():
                    found += actions(sub, f"{name} {command}")
            else:
                found.append((name, action))
        return found

    everything = actions(build_parser(), "cardlab")
    missing = [f"{name} {action.option_strings or action.dest}" for name, action in everything
               if not action.help or action.help == argparse.SUPPRESS]
    assert not missing, f"options without a help line: {missing}"
    assert len({name for name, _ in everything}) == 1 + len(COMMANDS)  # cardlab and each of its commands
    rule_help = next(a.help for n, a in everything if n == "cardlab eval" and "--rule" in a.option_strings)
    assert rule_help is not None and "cardlab rules GAME" in rule_help


@pytest.mark.parametrize("command", ["eval", "tournament", "play"])
def test_ctrl_c_is_one_line_and_status_130(command: str, monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    target = {"eval": "cardlab.evaluation.evaluate.evaluate",
              "tournament": "cardlab.evaluation.tournament.tournament",
              "play": "cardlab.terminal.play"}[command]
    monkeypatch.setattr(target, interrupted)
    argv = {"eval": ["eval", "--game", "huit", "--agents", "random", "random", "--hands", "2"],
            "tournament": ["tournament", "--game", "huit", "--agents", "random", "greedy", "--hands", "2"],
            "play": ["play", "huit", "--opponents", "random"]}[command]
    assert main(argv) == 130
    captured = capsys.readouterr()
    assert captured.err == f"cardlab {command}: interrupted\n" and captured.out == ""


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
        assert f"measuring {name}" in printed and "  against greedy: " in printed  # a line per opponent
        meta = json.loads((out / f"{name}.json").read_text())
        shipped = meta["summary"]["shipped"]
        assert shipped["hands"] == 6 and shipped["seed"] == 5 and shipped["opponent"] == "expert"
        assert list(shipped["against"]) == ["expert", "greedy", "random"]
        assert shipped["against"]["expert"]["win_rate"] == shipped["win_rate"]  # the old keys: the expert's
        paired_low, paired_high = shipped["paired_ci95"]
        assert paired_low <= shipped["win_rate"] <= paired_high and shipped["paired_ci95"] != shipped["ci95"]
        assert f"[{paired_low:.3f}, {paired_high:.3f}]" in shipped["about"]
        assert meta["weights"]["file"] == f"{name}.safetensors"
        assert load_bot(out / f"{name}.json").game.num_players == 2
    assert len(list((tmp_path / "runs").iterdir())) == 1  # the config was trained, the run was not
    weights = (out / "tiny-run.safetensors").read_bytes()
    remeasure = ["ship-bots", "--remeasure", "tiny-run", "--out", str(out), "--hands", "4", "--seed", "6"]
    assert main(remeasure) == 0
    again = json.loads((out / "tiny-run.json").read_text())["summary"]["shipped"]
    assert (again["hands"], again["seed"]) == (4, 6)
    assert (out / "tiny-run.safetensors").read_bytes() == weights  # measured again, not trained
    capsys.readouterr()
    assert "expected NAME=SOURCE" in fail(["ship-bots", "huit-2p"], capsys)
    missing = ["ship-bots", f"x={tmp_path / 'no'}"]
    assert "no such file or folder (give a YAML config, a finished run folder" in fail(missing, capsys)
    refused = fail(["ship-bots", f"x={tmp_path / 'bots'}/tiny-run.safetensors"], capsys)
    assert ("expected a YAML config (a training config, or a teach_*.yaml teach config), a finished run "
            "folder or a bot's .json") in refused
    assert "--remeasure: no bot in" in fail(["ship-bots", "--remeasure", "--out", str(tmp_path)], capsys)
    assert "bot name 'a b'" in fail(["ship-bots", f"a b={run_dir}"], capsys)
