"""Shipping bots: measured against expert, greedy and random into `summary.shipped`, with the training
minutes; written whole, under a lock, while others ship; the docs' table comes from the metadata."""

from __future__ import annotations

import csv
import json
import pathlib
import threading
from typing import Any

import pytest

from cardlab.agents.bot import load_bot
from cardlab.evaluation.evaluate import evaluate
from cardlab.evaluation.request import EvalRequest
from cardlab.training.harness.records import EVAL_FIELDS
from cardlab.training.trainers.ship import (
    OPPONENTS,
    bots_table,
    locked,
    measurements,
    ship_bot,
    training_minutes,
)
from tests.fakebots import fake_bot


def test_a_bot_file_is_measured_against_each_opponent(tmp_path: pathlib.Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    source = fake_bot(tmp_path / "made", "bot", "huit", 4, summary={"steps": 1234, "minutes": 19.94})
    asked: list[list[str]] = []

    def counting(request: EvalRequest, **kwargs: Any) -> Any:
        asked.append(list(request.agents))
        return evaluate(request, **kwargs)

    shipped = ship_bot("huit-4p", source, tmp_path / "bots", hands=8, seed=3, evaluate=counting)
    assert [specs[1:] for specs in asked] == [[o] * 3 for o in OPPONENTS]  # the bot in one seat, one opponent
    assert list(shipped["against"]) == list(OPPONENTS) and shipped["fair_share"] == 0.25
    assert (shipped["steps"], shipped["minutes"], shipped["hands"]) == (1234, 19.9, 8)
    for opponent, m in shipped["against"].items():
        assert m["hands"] == 8 and m["ci95"][0] <= m["win_rate"] <= m["ci95"][1]
        assert f"against 3 x {opponent} (8 hands" in m["about"]
    assert shipped["win_rate"] == shipped["against"]["expert"]["win_rate"]
    printed = capsys.readouterr().out
    assert "measuring huit-4p" in printed and all(f"  against {o}: " in printed for o in OPPONENTS)
    bot = load_bot(tmp_path / "bots" / "huit-4p.json")
    assert bot.metadata["summary"]["shipped"] == shipped and bot.game.num_players == 4


def test_a_ship_writes_only_under_the_folder_s_lock(tmp_path: pathlib.Path) -> None:
    """Ships running at once (one process per bot) write one at a time, each pair whole."""
    source = fake_bot(tmp_path / "made", "bot", "huit", 2)
    out = tmp_path / "bots"
    out.mkdir()
    measured = threading.Event()

    def counting(*args: Any, **kwargs: Any) -> Any:
        result = evaluate(*args, **kwargs)
        measured.set()
        return result

    shipping = threading.Thread(target=ship_bot, args=("same", source, out),
                                kwargs={"hands": 2, "progress": False, "evaluate": counting})
    with locked(out):
        shipping.start()
        assert measured.wait(60)  # it measures while another holds the lock ...
        shipping.join(timeout=1.0)
        assert shipping.is_alive() and not list(out.iterdir())  # ... but waits to write
    shipping.join(timeout=60)
    assert sorted(p.name for p in out.iterdir()) == ["same.json", "same.safetensors"]
    load_bot(out / "same.json")  # refuses a pair whose weights are not the metadata's


def test_training_minutes_come_from_eval_csv_or_the_summary(tmp_path: pathlib.Path) -> None:
    with (tmp_path / "eval.csv").open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=EVAL_FIELDS)
        writer.writeheader()
        writer.writerows([{"steps": 1, "opponent": "expert", "minutes": 9.96},
                          {"steps": 2, "opponent": "expert", "minutes": 21.04}])
    assert training_minutes({}, tmp_path) == 21.0
    assert training_minutes({"final_eval": {"expert": {"minutes": 3.0}}}, None) == 3.0
    assert training_minutes({"final_eval": {"expert": {"minutes": 0.0}}}, tmp_path / "no-run") is None


def test_the_docs_table_has_a_row_per_bot_and_opponent(tmp_path: pathlib.Path) -> None:
    folder = tmp_path / "bots"
    for name, players in (("switch-5p", 5), ("switch-4p", 4)):
        shipped = {"name": name, "opponent": "expert", "hands": 4000, "win_rate": 0.21, "ci95": [0.2, 0.22],
                   "paired_ci95": [0.205, 0.215], "fair_share": 1 / players, "steps": 5_000_000,
                   "minutes": 20.4 if players == 5 else None}
        if players == 5:
            rates = zip(OPPONENTS, (0.21, 0.3, 0.5), strict=True)
            shipped["against"] = {o: {**shipped, "win_rate": w} for o, w in rates}
        fake_bot(folder, name, "switch", players, summary={"seed": 1, "shipped": shipped})
    full = bots_table(folder).splitlines()
    assert full[2].startswith("| `bot:switch-4p` | Switch, 4 players, default rules | "
                              "`configs/switch_ppo.yaml`, seed 1 | 5,000,000 |  | expert | 0.210 |")
    assert full[3].startswith("| `bot:switch-5p` | Switch, 5 players, default rules | "
                              "`configs/tables/switch_5p.yaml`, seed 1 | 5,000,000 | 20 | expert | 0.210 | "
                              "[0.205, 0.215] | [0.200, 0.220] | 4,000 | 0.20 |")
    assert full[4] == "| | | | | | greedy | 0.300 | [0.205, 0.215] | [0.200, 0.220] | 4,000 | 0.20 |"
    assert len(full) == 2 + 1 + 3
    brief = bots_table(folder, brief=True).splitlines()
    assert brief[0] == "| bot | table | vs expert | vs greedy | vs random | fair share |"
    assert brief[3] == ("| `bot:switch-5p` | Switch, 5 players, default rules | 0.210 [0.205, 0.215] | "
                        "0.300 [0.205, 0.215] | 0.500 [0.205, 0.215] | 0.20 |")
    old = json.loads((folder / "switch-4p.json").read_text())["summary"]["shipped"]
    assert list(measurements(old)) == ["expert"]  # an entry from before `against`: the expert's keys
