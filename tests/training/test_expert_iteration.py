"""Expert iteration (`cardlab teach`): the student moves towards the search's labels, stays a loadable bot,
is reproducible (C2), and a bad config is refused in one line naming the file and the key."""

from __future__ import annotations

import dataclasses
import json
import pathlib
from typing import Any

import numpy as np
import pytest
import yaml

from cardlab.agents.agent_spec import make_agent
from cardlab.agents.bot import load_bot
from cardlab.cli import main
from cardlab.envs import make_game
from cardlab.training.data.teach_positions import LABELLING
from cardlab.training.harness.config_bounds import numbers
from cardlab.training.harness.progress import Progress
from cardlab.training.trainers.expert_iteration import (
    LABELS_FILE,
    TeachConfig,
    load_teach_config,
    teach,
    teach_config_from_dict,
    validate_teach,
    versus_base,
)

TINY: dict[str, Any] = {"name": "tiny", "game": "huit", "num_players": 2, "base": "bot:huit-2p",
        "teacher": "search:worlds=4:ms=0:bot:huit-2p", "labels": 40, "num_envs": 8, "epochs": 8,
        "learning_rate": 1e-3, "check_hands": 0, "seed": 5}


def tiny_run(tmp_path: pathlib.Path, **changes: Any) -> pathlib.Path:
    return teach(teach_config_from_dict({**TINY, **changes}), runs_dir=tmp_path, progress=False)


@pytest.fixture(scope="module")
def first_run(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    return tiny_run(tmp_path_factory.mktemp("teach"))


def test_the_student_moves_towards_the_labels_and_is_a_loadable_bot(first_run: pathlib.Path) -> None:
    record = json.loads((first_run / "run.json").read_text())
    assert record["labels"] == 40 and record["holdout_labels"] == 4
    before, after = record["before"]["train"], record["after"]["train"]
    assert after["cross_entropy"] < before["cross_entropy"]  # the policy moved towards the labels
    assert after["agreement"] >= before["agreement"]
    assert record["after"]["kl_to_base_on_kept"] > 0  # it moved, and the KL term measured how far
    game = make_game("huit", num_players=2)
    bot = load_bot(first_run / "bot.json", game)
    assert bot.metadata["summary"]["algorithm"] == "expert iteration"
    assert bot.metadata["summary"]["teacher"] == TINY["teacher"]
    assert (first_run / "critic.safetensors").is_file() and (first_run / "config.yaml").is_file()
    labels = np.load(first_run / LABELS_FILE)
    rows = np.arange(len(labels["action"]))
    assert labels["mask"][rows, labels["action"]].all()  # the search's moves are legal
    assert (labels["mask"].sum(axis=1) > 1).all()  # labels only where there was a choice
    assert np.all(np.abs(labels["value"]) <= 1)  # the win reward's range at 2 players
    obs = {"observation": labels["obs"][0], "action_mask": labels["mask"][0].astype(np.int8)}
    assert bot.act(obs) in np.flatnonzero(labels["mask"][0])


def test_the_same_seed_gives_the_same_labels_and_the_same_bot_c2(first_run: pathlib.Path,
                                                                   tmp_path: pathlib.Path) -> None:
    again = tiny_run(tmp_path)
    first, second = np.load(first_run / LABELS_FILE), np.load(again / LABELS_FILE)
    assert set(first.files) == set(second.files)
    for key in first.files:
        np.testing.assert_array_equal(first[key], second[key], err_msg=key)
    assert (first_run / "bot.safetensors").read_bytes() == (again / "bot.safetensors").read_bytes()
    other = tiny_run(tmp_path, seed=6)
    assert not np.array_equal(np.load(other / LABELS_FILE)["obs"], first["obs"])


def test_labels_from_a_run_train_the_same_student_without_searching(first_run: pathlib.Path,
                                                                      tmp_path: pathlib.Path) -> None:
    """The run records the teacher of the labels it trained on (the labelled run's), not its config's."""
    config = {key: value for key, value in TINY.items() if key not in LABELLING}
    again = teach(teach_config_from_dict({**config, "labels_from": str(first_run)}), runs_dir=tmp_path,
                  progress=False)
    assert (first_run / "bot.safetensors").read_bytes() == (again / "bot.safetensors").read_bytes()
    record = json.loads((again / "run.json").read_text())
    assert record["teacher"] == TINY["teacher"] != TeachConfig().teacher
    assert record["labels_from"] == str(first_run) and record["labels"] == 40
    assert json.loads((first_run / "run.json").read_text())["labels_from"] is None
    saved = yaml.safe_load((again / "config.yaml").read_text())  # kept whole, and read again as it was
    assert not set(saved) & set(LABELLING)
    assert teach_config_from_dict(saved) == teach_config_from_dict({**config, "labels_from": str(first_run)})


def test_a_config_built_in_python_beside_labels_from_is_refused_where_a_labelling_value_is_not_its_default(
        first_run: pathlib.Path) -> None:
    """A `TeachConfig` built in Python has no written keys: a labelling key counts as given where it is not
    its default (all that can be known of it), and the one check refuses it in the same sentence."""
    config = {key: value for key, value in TINY.items() if key not in LABELLING}
    built = dataclasses.replace(TeachConfig(**config), labels_from=str(first_run))
    validate_teach(built)
    refused = r"^labels=7 is not read beside labels_from .*; accepted: drop labels from this config$"
    with pytest.raises(ValueError, match=refused):
        validate_teach(dataclasses.replace(built, labels=7))


def test_a_config_file_that_writes_the_default_label_count_beside_labels_from_is_refused(
        first_run: pathlib.Path, tmp_path: pathlib.Path) -> None:
    config = {key: value for key, value in TINY.items() if key not in LABELLING}
    path = tmp_path / "again.yaml"
    path.write_text(yaml.safe_dump({**config, "labels_from": str(first_run), "labels": TeachConfig().labels}))
    with pytest.raises(ValueError, match=r"^config file .*again.yaml: labels=2000 is not read beside "
                                         r"labels_from \(the labels come from that run, .*\); accepted: drop "
                                         r"labels from this config$"):
        load_teach_config(path)


CHANGED = {"teacher": "search:worlds=1:ms=0:random", "opponents": ["greedy"], "labels": 7, "label_share": 0.5,
           "keep_share": 0.5, "max_minutes": 1.0, "num_envs": 8}
"""a value other than the default of each key read only while labels are made"""


@pytest.mark.parametrize("default", [False, True])
@pytest.mark.parametrize("key", LABELLING)
def test_a_labelling_key_beside_labels_from_is_refused_in_one_line(first_run: pathlib.Path, key: str,
                                                                   default: bool) -> None:
    """The labels come from the labelled run: a teacher, opponents, label count... given beside labels_from
    would not be read, so it is refused rather than ignored, its default value too (``labels: 2000`` is
    written, so meant)."""
    config = {key: value for key, value in TINY.items() if key not in LABELLING}
    value = getattr(TeachConfig(), key) if default else CHANGED[key]
    with pytest.raises(ValueError) as refused:
        teach_config_from_dict({**config, "labels_from": str(first_run), key: value})
    message = str(refused.value)
    assert message.startswith(f"{key}=") and "\n" not in message, message
    assert f"not read beside labels_from (the labels come from that run, {first_run})" in message
    assert message.endswith(f"accepted: drop {key} from this config")
    assert set(CHANGED) == set(LABELLING)


def test_a_student_no_different_from_its_base_differs_by_nothing_on_the_same_deals() -> None:
    game = make_game("huit", num_players=2)
    check = versus_base(game, "bot:huit-2p", "bot:huit-2p", "expert", 40, 7, Progress(False))
    assert check["difference"] == 0 and check["student"] == check["base"] and not check["better"]
    assert check["base"]["hands"] == 40


def test_a_run_with_a_check_records_it(tmp_path: pathlib.Path) -> None:
    run = tiny_run(tmp_path, labels=8, epochs=1, check_hands=20)
    check = json.loads((run / "run.json").read_text())["check"]
    low, high = check["difference_ci95"]
    assert low <= check["difference"] <= high
    assert check["difference"] == pytest.approx(check["student"]["win_rate"] - check["base"]["win_rate"])
    assert load_bot(run / "bot.json").metadata["summary"]["check"] == check


def test_every_number_of_the_teach_config_has_a_range_and_the_defaults_hold() -> None:
    for path, bound, value in numbers(TeachConfig()):
        assert bound.in_range(value), (path, value)
        assert bound.low is not None or bound.name == "num_players", bound.name


TEACH_CONFIGS = sorted((pathlib.Path(__file__).parents[2] / "configs").glob("teach_*.yaml"))


@pytest.mark.parametrize("path", TEACH_CONFIGS, ids=[p.name for p in TEACH_CONFIGS])
def test_the_shipped_teach_configs_load(path: pathlib.Path) -> None:
    cfg = load_teach_config(path)
    assert cfg.base.startswith("bot:") and cfg.teacher.startswith("search:") and cfg.check_hands >= 4000
    assert ":ms=0:" in cfg.teacher and cfg.max_minutes == 0  # reproducible labels (C2)


def test_ship_bots_teaches_a_teach_config(tmp_path: pathlib.Path) -> None:
    """`cardlab ship-bots NAME=configs/teach_*.yaml` runs `cardlab teach` on it, then measures the student."""
    from cardlab.training.trainers.ship import ship_bot

    path = tmp_path / "teach_tiny.yaml"
    path.write_text(yaml.safe_dump({**TINY, "labels": 6, "epochs": 1}))
    shipped = ship_bot("tiny-taught", path, tmp_path / "bots", hands=4, seed=3, runs_dir=tmp_path / "runs",
                       progress=False)
    (run,) = (tmp_path / "runs").iterdir()
    assert run.name.startswith("tiny__5__") and (run / LABELS_FILE).is_file()
    bot = load_bot(tmp_path / "bots" / "tiny-taught.json")
    assert bot.metadata["summary"]["shipped"] == shipped and shipped["hands"] == 4


@pytest.mark.parametrize(("changes", "key"), [
    ({"label_share": 2}, "label_share="),
    ({"label_share": 0}, "label_share="),
    ({"learning_rate": -1}, "learning_rate="),
    ({"holdout_share": 0.95}, "holdout_share="),
    ({"labels": 0}, "labels="),
    ({"labels": "many"}, "labels='many' is of the wrong type; accepted: a whole number"),
    ({"epochs": 1.5}, "epochs=1.5 is of the wrong type; accepted: a whole number"),
    ({"base": "expert"}, "base='expert' is not a bot with weights; accepted: a bot file's spec"),
    ({"base": "bot:nowhere"}, "base:"),
    ({"teacher": "expert"}, "teacher='expert' is not a search; accepted: a search spec"),
    ({"teacher": "search:worlds=99999:bot:huit-2p"}, "teacher:"),
    ({"opponents": []}, "opponents=[] is empty; accepted: a list of at least one agent spec"),
    ({"opponents": ["expert", "nobody"]}, "opponents[1]:"),
    ({"check_opponent": "nobody"}, "check_opponent:"),
    ({"rules": {"wild": 3}}, "rules.wild"),
    ({"num_players": 9}, "num_players"),
    ({"game": "chess"}, "game="),
    ({"labels_from": "/nowhere"}, "labels_from='/nowhere' is a folder without labels.npz; accepted: "
                                  "a teach run folder holding labels.npz"),
    ({"name": "a b"}, "name="),
    ({"worlds": 4}, "unknown config key(s) worlds"),
])
def test_a_bad_value_is_refused_in_one_line_naming_the_file_and_the_key(
        tmp_path: pathlib.Path, changes: dict[str, Any], key: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump({**TINY, **changes}))
    with pytest.raises(ValueError) as err:
        load_teach_config(path)
    message = str(err.value)
    assert message.startswith(f"config file {path}: ") and key in message and "\n" not in message


def test_the_command_refuses_a_missing_config_in_one_line(tmp_path: pathlib.Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["teach", str(tmp_path / "none.yaml")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("cardlab teach: error: config file") and "\n" not in err


def test_the_command_teaches_from_a_config(tmp_path: pathlib.Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "tiny.yaml"
    path.write_text(yaml.safe_dump({**TINY, "labels": 6, "epochs": 1}))
    assert main(["teach", str(path), "--runs-dir", str(tmp_path / "runs")]) == 0
    (run,) = (tmp_path / "runs").iterdir()
    assert f"bot: {run / 'bot.json'}" in capsys.readouterr().out
    assert make_agent(f"bot:{run / 'bot.json'}", make_game("huit", num_players=2)).name == "bot"


def test_a_config_is_kept_whole_in_its_run_folder(first_run: pathlib.Path) -> None:
    saved = yaml.safe_load((first_run / "config.yaml").read_text())
    assert teach_config_from_dict(saved) == dataclasses.replace(TeachConfig(), **TINY)


TINY_4P = {"name": "tiny-4p", "game": "huit", "num_players": 4, "base": "bot:huit-4p",
           "teacher": "search:belief=learned:worlds=4:ms=0:expert", "opponents": ["expert", "greedy"],
           "labels": 12, "epochs": 2, "learning_rate": 1e-3, "check_hands": 8, "seed": 5}


@pytest.fixture(scope="module")
def four_seat_run(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    return teach(teach_config_from_dict(TINY_4P), runs_dir=tmp_path_factory.mktemp("teach4"), progress=False)


def test_a_four_seat_teacher_that_reads_the_record_labels_hands_played_one_at_a_time(
        four_seat_run: pathlib.Path) -> None:
    """The reader's search (belief=learned) is shown the hand's record before each labelled decision, which
    the batched engine keeps none of: its labels come from hands played in the AEC env, 4 seats."""
    record = json.loads((four_seat_run / "run.json").read_text())
    assert record["labels"] == 12 and record["teacher"] == TINY_4P["teacher"]
    labels = np.load(four_seat_run / LABELS_FILE)
    rows = np.arange(len(labels["action"]))
    assert labels["obs"].shape == (12, make_game("huit", num_players=4).layout.size)
    assert labels["mask"][rows, labels["action"]].all() and (labels["mask"].sum(axis=1) > 1).all()
    assert labels["mask"][rows, labels["base_action"]].all()  # the base's own moves, legal
    assert np.isfinite(labels["value"]).all()
    assert record["check"]["hands"] == 8 and record["check"]["base"]["hands"] == 8
    assert load_bot(four_seat_run / "bot.json").metadata["num_players"] == 4


def test_hand_by_hand_labels_are_reproducible_c2(four_seat_run: pathlib.Path, tmp_path: pathlib.Path) -> None:
    again = teach(teach_config_from_dict({**TINY_4P, "check_hands": 0}), runs_dir=tmp_path, progress=False)
    first, second = np.load(four_seat_run / LABELS_FILE), np.load(again / LABELS_FILE)
    for key in first.files:
        np.testing.assert_array_equal(first[key], second[key], err_msg=key)


def test_a_teacher_shown_the_true_state_labels_too(tmp_path: pathlib.Path) -> None:
    """cheat=1 (the search dealt the true other hands) sees the state: an oracle to imitate."""
    run = teach(teach_config_from_dict({**TINY_4P, "teacher": "search:cheat=1:worlds=2:ms=0:expert",
                                        "labels": 4, "epochs": 1, "check_hands": 0}),
                runs_dir=tmp_path, progress=False)
    assert json.loads((run / "run.json").read_text())["labels"] == 4
