"""Evaluation and tournaments on Ray: equal to the serial run record for record, a killed worker's block
replayed to the same records, bots sent as bytes and refused when damaged, the CLI's Ray flags."""

from __future__ import annotations

import json
import os
import pathlib
import sys
from typing import Any

import pytest

from cardlab.cli import main
from cardlab.cluster.botfiles import BotFile
from cardlab.cluster.parallel_evaluation import evaluate_parallel, play_block, tournament_parallel
from cardlab.cluster.runtime import task_error
from cardlab.envs import make_game
from cardlab.evaluation.episodes import HAND
from cardlab.evaluation.evaluate import evaluate
from cardlab.evaluation.request import EvalRequest
from cardlab.evaluation.tournament import tournament
from tests.cluster.conftest import make_bot

pytestmark = pytest.mark.ray
pytest.importorskip("ray")


@pytest.mark.parametrize(("game", "specs", "hands", "matches", "rules"), [
    ("huit", ["expert", "greedy"], 120, 4, {"target_score": 40}),
    ("switch", ["random", "greedy", "expert"], 45, 0, {"num_players": 3}),
    ("huit", ["greedy", "random"], 10, 0, {"num_players": 4, "hand_size": 4}),
])
def test_parallel_equals_serial(ray_local: Any, game: str, specs: list[str], hands: int, matches: int,
                                rules: dict[str, Any]) -> None:
    serial = evaluate(EvalRequest(game, specs, hands=hands, matches=matches, seed=7, rules=rules))
    parallel = evaluate_parallel(EvalRequest(game, specs,
                                             hands=hands, matches=matches, seed=7, rules=rules), workers=2)
    assert parallel.hand_records == serial.hand_records  # every hand's record, in the same order
    assert parallel.match_records == serial.match_records
    assert parallel.to_json() == serial.to_json() and parallel.format_table() == serial.format_table()
    paired = [(s.hands.paired_interval, s.matches.paired_interval) for s in serial.stats]
    assert [(s.hands.paired_interval, s.matches.paired_interval) for s in parallel.stats] == paired


def test_tournament_equals_serial(ray_local: Any) -> None:
    specs = ["random", "greedy", "expert"]
    request = EvalRequest("huit", specs, hands=30, seed=2)
    serial = tournament(request)
    parallel = tournament_parallel(request, workers=2)
    assert parallel.to_json() == serial.to_json()
    assert [parallel.overall(i).paired_interval for i in range(3)] == [serial.overall(i).paired_interval
                                                                      for i in range(3)]
    four = {"num_players": 4}
    four_players = EvalRequest("switch", ["random", "greedy"], hands=8, seed=1, rules=four)
    assert tournament_parallel(four_players).to_json() == tournament(four_players).to_json()


def test_bots_travel_as_bytes_and_play_as_at_home(ray_local: Any, tmp_path: pathlib.Path) -> None:
    bot = make_bot(tmp_path, rules={"target_score": 30})
    specs = [f"bot:{bot}", "greedy"]
    serial = evaluate(EvalRequest("huit", specs,
                                  hands=40, matches=2, seed=1, rules={"target_score": 30}))
    parallel = evaluate_parallel(EvalRequest("huit", specs,
                                             hands=40, matches=2, seed=1, rules={"target_score": 30}))
    assert parallel.hand_records == serial.hand_records and parallel.match_records == serial.match_records
    assert parallel.slots[0] == f"bot:{bot}"


def test_an_onnx_bot_travels_and_plays_as_at_home(ray_local: Any, tmp_path: pathlib.Path) -> None:
    from cardlab.agents.bot import export_onnx, load_bot

    file = load_bot(make_bot(tmp_path))
    onnx = export_onnx(file.network, tmp_path / "exported", game=file.game, summary={})
    specs = [f"bot:{onnx.with_suffix('.onnx')}", "greedy"]
    serial = evaluate(EvalRequest("huit", specs, hands=20, seed=2))
    assert evaluate_parallel(EvalRequest("huit", specs, hands=20, seed=2)).hand_records == serial.hand_records


def test_a_killed_worker_is_retried_and_the_result_is_unchanged(ray_local: Any,
                                                                 tmp_path: pathlib.Path) -> None:
    marker = tmp_path / "killed-once"

    def kill_first_attempt(block: int) -> None:  # runs in the worker, before each block
        if block == 1 and not marker.exists():
            marker.touch()
            os._exit(1)  # the worker process dies mid-evaluation; Ray plays the block again elsewhere

    serial = evaluate(EvalRequest("huit", ["expert", "random"], hands=200, seed=3))
    parallel = evaluate_parallel(EvalRequest("huit", ["expert", "random"],
                                             hands=200, seed=3), workers=2, before_block=kill_first_attempt)
    assert marker.exists()  # the worker did die
    assert parallel.hand_records == serial.hand_records


def flip(data: bytes, at: int) -> bytes:
    return data[:at] + bytes([data[at] ^ 0x01]) + data[at + 1:]


def test_a_bot_damaged_in_transit_is_refused(ray_local: Any, tmp_path: pathlib.Path) -> None:
    game = make_game("huit", num_players=2)
    sent = BotFile.read(make_bot(tmp_path))
    assert sent.load(game).act is not None  # intact bytes load
    damaged = BotFile(sent.source, sent.metadata, flip(sent.weights, len(sent.weights) - 3))
    with pytest.raises(ValueError, match=r"as received: bot .*does not match its sha256 \(corrupted\?\)"):
        damaged.load(game)
    bad_meta = BotFile(sent.source, sent.metadata.replace(b'"num_actions": 354', b'"num_actions": 355'),
                       sent.weights)
    with pytest.raises(ValueError, match="it has 355 actions, the game has 354"):
        bad_meta.load(game)
    # the same refusal from inside a Ray task, as the driver re-raises it
    task = ray_local.remote(play_block).remote("huit", {"num_players": 2}, [damaged, "greedy"], HAND, 0, 1, 0)
    with pytest.raises(ray_local.exceptions.RayTaskError) as caught:
        ray_local.get(task)
    error = task_error(caught.value)
    assert isinstance(error, ValueError) and "does not match its sha256" in str(error)


def test_a_bad_bot_is_refused_before_any_task(ray_local: Any, tmp_path: pathlib.Path) -> None:
    bot = make_bot(tmp_path, game="switch", players=2)
    with pytest.raises(ValueError, match="it plays switch, not huit"):
        evaluate_parallel(EvalRequest("huit", [f"bot:{bot}", "greedy"], hands=4))


# ---------------------------------------------------------------- the command line
def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main(argv) == 0
    return capsys.readouterr().out


def test_cli_workers_print_and_write_what_the_serial_run_does(ray_local: Any, tmp_path: pathlib.Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["eval", "--game", "huit", "--agents", "expert", "greedy", "--hands", "60", "--seed", "4"]
    serial = run([*argv, "--json", str(tmp_path / "s.json")], capsys)
    parallel = run([*argv, "--json", str(tmp_path / "p.json"), "--workers", "2"], capsys)
    assert serial.replace("s.json", "p.json") == parallel
    assert json.loads((tmp_path / "s.json").read_text()) == json.loads((tmp_path / "p.json").read_text())
    argv = ["tournament", "--game", "switch", "--agents", "random", "greedy", "expert", "--hands", "6"]
    assert run(argv, capsys) == run([*argv, "--workers", "2"], capsys)


def test_cli_ray_flag_without_ray_says_how_to_install(monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` now fails as if it were not installed
    for argv in (["eval", "--game", "huit", "--agents", "random", "random", "--hands", "2", "--workers", "2"],
                 ["sweep", "configs/sweeps/huit_quick_sweep.yaml"],
                 ["tournament", "--game", "huit", "--agents", "random", "greedy", "--hands", "2",
                  "--ray-address", "auto"]):
        assert main(argv) == 2
        err = capsys.readouterr().err.strip()
        assert err.splitlines() == [err] and "Traceback" not in err
        hint = 'pip install torch==2.13.0 -e ".[ray]"'
        assert f"Ray is not installed; install cardlab's ray extra: {hint}" in err
    serial = ["eval", "--game", "huit", "--agents", "random", "random", "--hands", "2"]
    assert main(serial) == 0  # the serial command runs without Ray
    assert main([*serial, "--workers", "0"]) == 2
    assert "expected a whole number >= 1" in capsys.readouterr().err


def test_compare_on_ray_equals_the_serial_comparison(ray_local: Any, tmp_path: pathlib.Path) -> None:
    """Batches of deals split over Ray workers: the same records, so the same decision and LLR."""
    from cardlab.cluster.parallel_evaluation import deal_player
    from cardlab.evaluation.compare import Contest, compare_agents
    from cardlab.evaluation.sequential import Hypotheses

    bot = make_bot(tmp_path)
    contest = Contest.seat("huit", f"bot:{bot}", "greedy", seed=3)
    hypotheses = Hypotheses.from_delta(0.05)
    serial = compare_agents(contest, hypotheses, max_hands=120, batch=15)
    with deal_player(contest, workers=2) as play:
        parallel = compare_agents(contest, hypotheses, max_hands=120, batch=15, play=play)
    assert parallel.records == serial.records and parallel.as_dict() == serial.as_dict()


def test_cli_compare_with_workers_writes_what_the_serial_run_does(ray_local: Any,
                                                                  tmp_path: pathlib.Path) -> None:
    argv = ["compare", "--game", "huit", "expert", "greedy", "--max-hands", "200", "--batch", "20"]
    assert main([*argv, "--json", str(tmp_path / "serial.json")]) == 0
    assert main([*argv, "--workers", "2", "--json", str(tmp_path / "ray.json")]) == 0
    serial, parallel = (json.loads((tmp_path / f"{name}.json").read_text()) for name in ("serial", "ray"))
    assert parallel == serial
