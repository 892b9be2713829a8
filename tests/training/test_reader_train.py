"""`cardlab read-hands`: a reader config trained end to end in a tiny form, resumed, and refused when bad."""

from __future__ import annotations

import dataclasses
import json
import pathlib

import numpy as np
import pytest
import torch

from cardlab.agents.hand_reading.reader import load_reader
from cardlab.envs import make_game
from cardlab.training.data.reader import ReaderConfig, load_reader_config, read_hands, validate_reader
from cardlab.training.data.reader_data import Table, make_chunk
from cardlab.training.harness.config import OpponentConfig

CONFIGS = pathlib.Path(__file__).resolve().parents[2] / "configs" / "readers"
TINY = ReaderConfig(name="tiny", game="huit", num_players=3, positions=120, chunk=60, hidden=[8], epochs=1,
                    batch_size=32, holdout_share=0.5,
                    field=[OpponentConfig("expert", 1.0), OpponentConfig("random", 1.0)])


def test_a_tiny_reader_trains_resumes_and_loads(tmp_path: pathlib.Path) -> None:
    run = read_hands(TINY, runs_dir=tmp_path, progress=False)
    reader = load_reader(run / "reader.json", make_game("huit", {"num_players": 3}))
    record = json.loads((run / "run.json").read_text())
    assert record["holdout_positions"] == 60 and record["holdout"]["log_loss"] > 0
    chunk = run / "data" / "chunk-00001.npz"
    kept = dict(np.load(chunk))
    chunk.unlink()
    read_hands(TINY, runs_dir=tmp_path, resume=run, progress=False)
    again = dict(np.load(chunk))
    assert all(np.array_equal(kept[key], again[key]) for key in kept)  # a chunk is the same whoever makes it
    assert reader.meta["summary"]["positions"] == 120


def test_labels_place_every_unseen_card_and_inputs_hold_no_hidden_card() -> None:
    table = Table("huit", {"num_players": 4}, (("expert", 1.0),), 1.0, seed=5)
    data = make_chunk(table, 0, 40)
    labels, room = data["labels"].astype(int), data["room"]
    assert np.array_equal(labels.sum(axis=1), room)  # each place holds its size, the pile its cards
    assert (labels <= 1).all()  # Huit: one copy of each card
    other = make_chunk(dataclasses.replace(table, seed=6), 0, 40)
    assert not np.array_equal(data["inputs"], other["inputs"])


@pytest.mark.parametrize(("changes", "message"), [
    ({"field": [OpponentConfig("nobody", 1.0)]}, r"field\[0\].spec"),
    ({"positions": 0}, "positions=0 is out of range"),
    ({"activation": "gelu"}, "activation='gelu' is not one of the choices; accepted: 'relu', 'tanh'"),
    ({"rules": {"num_players": 3}}, "rules.num_players=3 is not a rule option"),
    ({"game": "chess"}, "game='chess' is not one of the choices"),
    ({"device": "gpu"}, "device='gpu' is not one of the choices; accepted: 'cpu', 'cuda', 'auto'"),
    ({"field": []}, r"^field=\[\] is empty; accepted: a list of at least one agent spec$"),
    ({"field": [OpponentConfig("expert", 0.0)]}, "weights add up to 0"),
])
def test_a_bad_config_is_refused_with_its_key(changes: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        validate_reader(dataclasses.replace(TINY, **changes))  # type: ignore[arg-type]


def test_cuda_without_a_gpu_is_refused_as_the_training_config_refuses_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The reader's device is the lean learner's (`placement`): one check, one wording, and ``auto``."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    refused = r"^device='cuda' is not usable: torch sees no GPU here .*; accepted: 'cpu', or 'auto'"
    with pytest.raises(ValueError, match=refused):
        validate_reader(dataclasses.replace(TINY, device="cuda"))
    validate_reader(dataclasses.replace(TINY, device="auto"))


def test_a_bad_device_on_the_command_line_is_refused_in_one_line(tmp_path: pathlib.Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    from cardlab.cli import main

    assert main(["read-hands", str(CONFIGS / "huit_4p.yaml"), "--device", "gpu", "--runs-dir",
                 str(tmp_path / "runs")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith("--workers/--device: device='gpu' is not one of the choices; accepted: 'cpu', "
                        "'cuda', 'auto'") and "\n" not in err, err
    assert not (tmp_path / "runs").exists()


def test_every_shipped_reader_config_loads() -> None:
    names = sorted(p.stem for p in CONFIGS.glob("*.yaml"))
    assert names == ["huit_2p", "huit_3p", "huit_4p", "huit_5p", "huit_6p",
                     "switch_4p", "switch_5p", "switch_6p"]
    for name in names:
        cfg = load_reader_config(CONFIGS / f"{name}.yaml")
        assert f"{cfg.game}_{cfg.num_players}p" == name


def test_an_unknown_key_names_the_file(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("game: huit\nworlds: 3\n")
    with pytest.raises(ValueError, match=r"config file .*bad\.yaml: .*worlds"):
        load_reader_config(path)


@pytest.mark.parametrize(("changes", "message"), [
    ({"hidden": [65536, 65536]}, r"hidden=\[65536, 65536\] makes a reader of [\d,]+ parameters: use at most "
                                 "33,554,432"),
    ({"hidden": [8] * 17}, "hidden has 17 hidden layers: use at most 16"),
    ({"positions": 100_000_000, "chunk": 1}, "make 100,000,000 chunks: use at most 10,000"),
    ({"positions": 1000, "chunk": 1000, "holdout_share": 0.9}, r"holdout_share=0.9 of 1 chunk\(s\) .* holds "
                                                                "none out apart from those trained on"),
    ({"holdout_share": 0.0}, r"holdout_share=0.0 of 2 chunk\(s\) .* holds none out"),
])
def test_a_reader_past_the_caps_or_without_a_held_out_side_is_refused(changes: dict[str, object],
                                                                      message: str) -> None:
    with pytest.raises(ValueError, match=message) as err:
        validate_reader(dataclasses.replace(TINY, **changes))  # type: ignore[arg-type]
    assert "\n" not in str(err.value)


@pytest.mark.parametrize(("changes", "message"), [
    ({"workers": 256}, r"^workers=256 is more than this machine's \d+ core\(s\); accepted: at most \d+$"),
    ({"torch_threads": 1024}, r"^torch_threads=1024 is more than this machine's \d+ core\(s\); accepted"),
    ({"positions": 100_000_000, "chunk": 10_000}, r"positions=100,000,000 take about [\d,.]+ GiB"),
])
def test_read_hands_refuses_what_the_machine_cannot_run_before_any_work(tmp_path: pathlib.Path,
                                                                       changes: dict[str, object],
                                                                       message: str) -> None:
    with pytest.raises(ValueError, match=message):
        cfg = dataclasses.replace(TINY, **changes)  # type: ignore[arg-type]
        read_hands(cfg, runs_dir=tmp_path, progress=False)
    assert list(tmp_path.iterdir()) == []  # no run folder made


def test_making_positions_says_where_it_is_before_a_chunk_is_done(tmp_path: pathlib.Path,
                                                                  monkeypatch: pytest.MonkeyPatch,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """A log hears from the run while a chunk is made (a chunk of 10,000 positions takes minutes), not only
    when it is done: the heartbeat is asked after every hand."""
    from cardlab.training.harness import progress

    monkeypatch.setattr(progress, "HEARTBEAT_SECONDS", 0.0)
    read_hands(dataclasses.replace(TINY, epochs=1), runs_dir=tmp_path)
    out = capsys.readouterr().out
    assert "making positions: 0 of 2 chunks of 60 made (1 worker(s))" in out
