"""A teach run's labels file is written by rename and read back checked: a truncated or foreign labels.npz is
refused in one line naming it; a config whose opponents cannot play in the labels' batched play, or whose
check cannot be played, is refused by the config check, before a run folder is made."""

from __future__ import annotations

import pathlib
import re

import numpy as np
import pytest

from cardlab.envs import make_game
from cardlab.training.data.teach_labels import LABELS_FILE, read_labels, write_labels
from cardlab.training.data.teach_positions import LABELLING
from cardlab.training.trainers.expert_iteration import teach, teach_config_from_dict

TINY = {"name": "tiny", "game": "huit", "num_players": 2, "base": "bot:huit-2p",
        "teacher": "search:worlds=4:ms=0:bot:huit-2p", "labels": 40, "num_envs": 8, "check_hands": 0}
GAME = make_game("huit", {"num_players": 2})


def labels(n: int = 6, kept: int = 3) -> dict[str, np.ndarray]:
    size, actions = GAME.layout.size, GAME.num_actions
    mask = np.zeros((n, actions), dtype=np.bool_)
    mask[:, 0] = True
    return {"obs": np.zeros((n, size), np.float32), "mask": mask, "action": np.zeros(n, np.int64),
            "value": np.zeros(n, np.float32), "base_action": np.zeros(n, np.int64),
            "kept_obs": np.zeros((kept, size), np.float32), "kept_mask": np.ones((kept, actions), np.bool_)}


def test_labels_are_written_by_rename_and_read_back(tmp_path: pathlib.Path) -> None:
    path = write_labels(tmp_path, labels())
    assert sorted(p.name for p in tmp_path.iterdir()) == [LABELS_FILE]  # no partial file left
    assert path == tmp_path / LABELS_FILE
    back = read_labels(tmp_path, GAME)
    assert all(np.array_equal(back[k], v) for k, v in labels().items())


@pytest.mark.parametrize("damage", ["truncated", "empty", "text", "lacks", "width", "lengths", "illegal"])
def test_a_damaged_labels_file_is_refused_in_one_line_naming_it(tmp_path: pathlib.Path, damage: str) -> None:
    path = write_labels(tmp_path, labels())
    data = labels()
    if damage == "truncated":
        path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    elif damage == "empty":
        path.write_bytes(b"")
    elif damage == "text":
        path.write_text("obs,mask\n1,2\n")
    else:
        if damage == "lacks":
            del data["value"]
        elif damage == "width":
            data["obs"] = np.zeros((6, 3), np.float32)
        elif damage == "lengths":
            data["action"] = np.zeros(5, np.int64)
        else:
            data["action"] = np.ones(6, np.int64)  # the masks allow action 0 only
        np.savez_compressed(path, **data)  # type: ignore[arg-type]
    with pytest.raises(ValueError) as refused:
        read_labels(tmp_path, GAME)
    message = str(refused.value)
    assert str(path) in message and "\n" not in message and "labels_from=" in message, message


def test_another_tables_labels_are_refused_before_a_run_folder(tmp_path: pathlib.Path) -> None:
    """Huit 2p labels given to a Huit 4p teach config: refused by the config check, not after the run
    folder is made."""
    (tmp_path / "run").mkdir()
    write_labels(tmp_path / "run", labels())
    four = {**TINY, "num_players": 4, "base": "bot:huit-4p", "teacher": "search:worlds=4:ms=0:bot:huit-4p",
            "labels_from": str(tmp_path / "run")}
    with pytest.raises(ValueError, match=r"^labels_from=.*labels.npz is not of this table: its obs should be "
                                         r"float32, 2-d with \d+ columns"):
        teach(teach_config_from_dict(four), runs_dir=tmp_path / "runs", progress=False)
    assert not (tmp_path / "runs").exists()


@pytest.mark.parametrize(("record", "why"), [
    (None, "run.json cannot be read (FileNotFoundError"), ("{", "run.json cannot be read (ValueError"),
    ('{"labels": 6}', "run.json records no teacher (got None)")])
def test_labels_from_a_run_whose_record_names_no_teacher_are_refused(
        tmp_path: pathlib.Path, record: str | None, why: str) -> None:
    """The run records the teacher of the labels it trains on, read from the labelled run's run.json: one
    that cannot say it is refused in one line before a run folder is made."""
    write_labels(tmp_path, labels())
    if record is not None:
        (tmp_path / "run.json").write_text(record)
    config = {key: value for key, value in TINY.items() if key not in LABELLING}
    with pytest.raises(ValueError) as refused:
        teach_config_from_dict({**config, "labels_from": str(tmp_path)})
    message = str(refused.value)
    assert message.startswith(f"labels_from={tmp_path}: {tmp_path / 'run.json'} ") and why in message
    assert "\n" not in message and message.endswith("give the folder of a finished teach run of this table")


@pytest.mark.parametrize("opponent", ["search:belief=expert:worlds=4:ms=0:expert",
                                      "search:cheat=1:worlds=4:ms=0:expert"])
def test_opponents_that_cannot_play_the_labels_are_refused_before_a_run_folder(
        tmp_path: pathlib.Path, opponent: str) -> None:
    refused = (r"opponents\[0\]=.* is an agent that must be shown the hand's record or true state; "
               r"accepted: an agent that plays from its observation")
    with pytest.raises(ValueError, match=refused):
        teach(teach_config_from_dict({**TINY, "opponents": [opponent]}), runs_dir=tmp_path, progress=False)
    assert list(tmp_path.iterdir()) == []


READS = "search:belief=learned:worlds=2:ms=0:expert"
"""a teacher shown the hand's record: its labels come from hands played one at a time"""
TINY_READ = {**{k: v for k, v in TINY.items() if k != "num_envs"}, "teacher": READS, "labels": 2, "epochs": 1}


@pytest.mark.parametrize(("changes", "refused"), [
    ({"check_hands": 2, "check_opponent": "search:belief=expert:worlds=2:ms=0:expert"},
     r"^check_opponent=.* is an agent that must be shown the hand's record or true state; accepted: an agent "
     r"that plays from its observation \(the check, played batched, shows nothing else\), or check_hands: "
     r"0$"),
    ({"num_envs": 8}, r"^num_envs=8 is read only with a teacher that plays from its observation, not "
                      rf"{re.escape(READS)}, which is shown the hand's record .*; accepted: num_envs left "
                      r"out beside such a teacher$"),
])
def test_what_a_reading_teachers_run_would_fail_on_or_not_read_is_refused_before_a_run_folder(
        tmp_path: pathlib.Path, changes: dict[str, object], refused: str) -> None:
    """An opponent of the check that must be shown the record failed only after the labels and the training
    (the check plays batched); num_envs sizes the batched labelling, which a reading teacher does not use."""
    with pytest.raises(ValueError, match=refused):
        teach(teach_config_from_dict({**TINY_READ, **changes}), runs_dir=tmp_path, progress=False)
    assert list(tmp_path.iterdir()) == []


def test_a_reading_teachers_hands_seat_opponents_that_read_the_record_too(tmp_path: pathlib.Path) -> None:
    """Hands played one at a time show every seat what it sees, so such opponents play there."""
    reader = "search:belief=expert:worlds=2:ms=0:expert"
    config = teach_config_from_dict({**TINY_READ, "opponents": [reader]})
    run = teach(config, runs_dir=tmp_path, progress=False)
    assert len(read_labels(run, GAME)["action"]) == 2


def test_a_binary_config_is_refused_in_one_line_naming_it(tmp_path: pathlib.Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    from cardlab.cli import main

    path = tmp_path / "bin.yaml"
    path.write_bytes(b"\xff\xfe\x00name: x")
    assert main(["teach", str(path)]) != 0
    err = capsys.readouterr().err.strip()
    assert str(path) in err and "is not UTF-8 text" in err and len(err.splitlines()) == 1, err


def test_the_search_responder_names_the_agent_that_fails_in_its_rollouts(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """A target that fails only inside the responder's rollouts is named there, not just the search."""
    import sys

    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
    from failing_agents import register_failing  # type: ignore[import-not-found]

    from cardlab.cli import main

    register_failing(monkeypatch)
    assert main(["exploit", "fails-raise", "--game", "huit", "--responder", "search", "--worlds", "2",
                 "--deals", "1"]) != 0
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert "its rollout model fails-raise failed: it raised KeyError" in err, err
