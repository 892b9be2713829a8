"""The search-strength benchmark (`benchmarks/search_strength.py`) and the paired difference it reports
(`cardlab.evaluation.stats.paired_difference`): configs on the same deals, differences paired by deal."""

from __future__ import annotations

import json
import math
import pathlib
from typing import Any

import pytest

from cardlab.evaluation.bench import bench as bench_suite
from cardlab.evaluation.results import EpisodeRecord
from cardlab.evaluation.stats import paired_difference
from cardlab.evaluation.suites import SuitePlan, load_suite, make_suite
from tests.benchmarks import load_benchmark

SEARCH = "search:worlds=4:ms=0:expert"


def record(deal: int, rotation: int, winner: int) -> EpisodeRecord:
    seats = (rotation % 2, (rotation + 1) % 2)
    return EpisodeRecord(deal, rotation, seats, (winner,), (0, 0), False)


def test_a_paired_difference_is_the_mean_per_deal_difference_with_a_t_interval() -> None:
    a = [record(d, r, 0) for d in range(4) for r in range(2)]  # slot 0 wins every hand
    b = [record(d, r, int(d < 2 or r == 1)) for d in range(4) for r in range(2)]  # 0, 0, 1/2, 1/2 per deal
    diff, low, high = paired_difference(a, b)
    assert diff == pytest.approx(0.75)  # 1 - (0 + 0 + 0.5 + 0.5) / 4: the difference of the rates
    assert low < 0.75 < high and high - 0.75 == pytest.approx(0.75 - low)
    assert paired_difference(b, b) == (0.0, 0.0, 0.0)
    assert paired_difference(list(reversed(a)), b)[0] == pytest.approx(0.75)  # matched by deal, not order
    assert math.isnan(paired_difference(a[:2], b[:2])[1])  # one deal: no interval


def test_a_paired_difference_refuses_other_deals() -> None:
    a = [record(d, r, 0) for d in range(3) for r in range(2)]
    with pytest.raises(ValueError, match="same deals with the same episodes"):
        paired_difference(a, a[:4])
    with pytest.raises(ValueError, match="same deals with the same episodes"):
        paired_difference(a, [record(d + 1, r, 0) for d in range(3) for r in range(2)])


def test_the_benchmark_measures_configs_on_the_same_deals(monkeypatch: pytest.MonkeyPatch,
                                                         tmp_path: pathlib.Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """A tiny run: every field of the JSON, a config's paired difference with itself 0 (the same deals,
    the same seeds: the same hands), the configs' rows in order, the table printed."""
    bench = load_benchmark("search_strength", monkeypatch)
    out = tmp_path / "strength.json"
    rounds: list[int] = []
    monkeypatch.setattr(bench, "ROUNDS", 3)
    write = bench.measure

    def measure(*a: Any, **k: Any) -> Any:
        def on_round(r: dict[str, Any]) -> None:
            rounds.append(r["deals"])
            k["on_round"](r)
        return write(*a, **{**k, "on_round": on_round})

    monkeypatch.setattr(bench, "measure", measure)
    bench.main(["--hands", "11", "--no-progress", "--json", str(out), "--configs", SEARCH, "expert", SEARCH])
    result = json.loads(out.read_text(encoding="utf-8"))
    assert rounds == [2, 4, 6]  # 11 hands: 6 deals of 2 rotations, in 3 rounds, the JSON written after each
    suite = load_suite("huit-2p", check=False)
    assert {k: result[k] for k in ("suite", "suite_version", "suite_sha256", "game", "num_players")} == {
        "suite": "huit-2p", "suite_version": suite.version, "suite_sha256": suite.deals_sha256,
        "game": "huit", "num_players": 2}
    assert (result["deals"], result["hands"], result["deals_asked"], result["complete"]) == (6, 12, 6, True)
    assert result["field"] == ["expert"] and result["fair_share"] == 0.5 and result["workers"] == 0
    first, expert, again = result["configs"]
    assert [first["config"], expert["config"], again["config"]] == [SEARCH, "expert", SEARCH]
    assert first["slots"] == [SEARCH, "expert"]
    for row in result["configs"]:
        assert row["hands"] == 12 and row["wins"] == round(row["win_rate"] * 12)
        assert row["paired_ci_low"] <= row["win_rate"] <= row["paired_ci_high"]
        assert row["decisions"] > 0 and row["ms_per_decision"] > 0
    assert first["vs_first"] == {"difference": 0.0, "ci_low": 0.0, "ci_high": 0.0}
    assert again["vs_first"] == {"difference": 0.0, "ci_low": 0.0, "ci_high": 0.0}
    assert again["wins"] == first["wins"]
    assert expert["vs_first"]["difference"] == pytest.approx(expert["win_rate"] - first["win_rate"])
    assert again["points_vs_first"] == first["points_vs_first"] == {"difference": 0.0, "ci_low": 0.0,
                                                                     "ci_high": 0.0}
    assert expert["points_vs_first"]["difference"] == pytest.approx(  # no hand truncated: the same deals
        expert["point_difference"] - first["point_difference"])
    pairs = {(p["a"], p["b"]): p["difference"] for p in result["pairs"]}
    assert pairs == {("expert", SEARCH): pytest.approx(expert["win_rate"] - first["win_rate"]),
                     (SEARCH, SEARCH): 0.0, (SEARCH, "expert"): pytest.approx(first["win_rate"] -
                                                                              expert["win_rate"])}
    table = capsys.readouterr().out
    assert f"{SEARCH}  12" in table and "vs search:worlds=4:ms=0:expert" in table
    assert "points/deal" in table and f"{expert['point_difference']:+.2f}" in table
    bench.main(["--show", str(out)])
    assert capsys.readouterr().out == table


def test_the_benchmark_refuses_bad_input_before_playing(monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    bench = load_benchmark("search_strength", monkeypatch)
    for argv, said in ((["--configs", "search:worlds=x:expert"], "worlds=x"),
                       (["--configs", "expert", "--hands", "0"],
                        "--hands=0 is out of range; accepted: a whole number from 1 to 4000 (suite "),
                       (["--configs", "expert", "--field", "nobody"], "unknown agent spec"),
                       ([], "give --configs SPEC"),
                       (["--show", "nowhere.json"],
                        "--show nowhere.json: not a JSON this benchmark wrote (FileNotFoundError: [Errno 2] "
                        "No such file or directory: 'nowhere.json'); accepted: a file its --json or --resume "
                        "wrote"),
                       (["--configs", "expert", "--json", "no/such/x.json"],
                        "cannot write --json no/such/x.json: the folder no/such does not exist"),
                       (["--configs", "expert", "--resume", "no/such/x.json"],
                        "cannot write --resume no/such/x.json: the folder no/such does not exist"),
                       (["--configs", "expert", "--json", "."], "--json . is a folder: give the name of a "),
                       (["--configs", "expert", "--rows", "no/such"],
                        "--rows no/such: not a folder; give the folder of the rows")):
        with pytest.raises(SystemExit):
            bench.main(argv)
        assert said in capsys.readouterr().err


def test_a_resumed_run_plays_only_the_deals_after_its_saved_ones_and_matches_one_run(
        monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    """C2 across sessions: 6 hands, then resumed to 12, give the JSON one 12-hand run gives (times aside);
    the resumed part plays deals 3..5 only; a resume with other configs or field is refused, file intact."""
    bench = load_benchmark("search_strength", monkeypatch)
    configs = ["--configs", "expert", "greedy"]
    whole, grown = tmp_path / "whole.json", tmp_path / "grown.json"
    bench.main(["--hands", "12", "--no-progress", "--json", str(whole), *configs])
    bench.main(["--hands", "6", "--no-progress", "--resume", str(grown), *configs])
    played: list[range] = []
    play = bench.play_timed

    def noted(game: str, rules: dict[str, object], slots: list[str], first: int, stop: int,
              *args: object, **kwargs: object) -> object:
        played.append(range(first, stop))
        return play(game, rules, slots, first, stop, *args, **kwargs)

    monkeypatch.setattr(bench, "play_timed", noted)
    bench.main(["--hands", "12", "--no-progress", "--resume", str(grown), *configs])
    assert sorted({d for block in played for d in block}) == [3, 4, 5]

    def untimed(path: pathlib.Path) -> dict[str, object]:
        result = json.loads(path.read_text(encoding="utf-8"))
        for row in result["configs"]:
            del row["ms_per_decision"]
        for table in result["played"]:
            del table["seconds"]
        return result

    assert untimed(grown) == untimed(whole)
    saved = grown.read_text(encoding="utf-8")
    capsys.readouterr()
    for argv, said in ((["--configs", "expert", "random"], "resume with the same configs"),
                       ([*configs, "--field", "greedy"], "resume with the same suite and field"),
                       ([*configs, "--json", str(whole)], "leave out --json")):
        with pytest.raises(SystemExit):
            bench.main(["--hands", "14", "--no-progress", "--resume", str(grown), *argv])
        assert said in capsys.readouterr().err
    assert grown.read_text(encoding="utf-8") == saved
    old = tmp_path / "old.json"
    old.write_text(json.dumps({k: v for k, v in json.loads(saved).items() if k != "played"} | {"format": 1}))
    with pytest.raises(SystemExit):
        bench.main(["--hands", "14", "--no-progress", "--resume", str(old), *configs])
    assert "(format 1; a run written before layout 2 keeps no hands); give a JSON" in capsys.readouterr().err


def test_a_resume_file_of_another_run_or_damaged_is_refused_in_one_line_before_playing(
        monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--resume FILE: a file of another suite, of other configs, not JSON, of another program or damaged
    (rows that are not rows, hands that are not the suite's first deals in order) is refused in one line
    that says what to give instead, and nothing is played or written."""
    bench = load_benchmark("search_strength", monkeypatch)
    suite = load_suite("huit-2p")
    hands = [[d, r, [r, 1 - r], [0], [0, 0], False] for d in range(2) for r in range(2)]
    mine = {"format": bench.FORMAT, "suite": suite.name, "suite_version": suite.version,
            "suite_sha256": suite.deals_sha256, "field": ["expert"],
            "configs": [{"config": "expert", "slots": ["expert", "expert"]}],
            "played": [{"hands": hands, "seconds": 1.0, "decisions": 4}]}
    cases = [
        ({**mine, "suite": "huit-3p"}, "the JSON's suite is 'huit-3p', this run's 'huit-2p': resume with the "
                                       "same suite and field"),
        ({**mine, "configs": [{"config": "greedy", "slots": ["greedy", "expert"]}]},
         "the JSON measured --configs greedy, this run expert: resume with the same configs in the same "
         "order"),
        ({**mine, "configs": [1]}, "the JSON's configs are [1], not its list of rows (a damaged file); give "
                                   "a JSON this benchmark wrote (layout 2 or later), or start a new run"),
        ({**mine, "configs": [{"config": "expert"}]}, "not its list of rows"),
        ({**mine, "configs": 5}, "the JSON's configs are 5, not its list of rows"),
        ({"name": "a cardlab bench row"}, "not a JSON of this benchmark's layout 2"),
        ({**mine, "played": [{"hands": hands[:3], "seconds": 1.0, "decisions": 3}]},
         "the JSON's configs did not each play the suite's first deals, every rotation of each in order "
         "with 2 seats (a damaged file, or another suite's); give a JSON this benchmark wrote, or start a "
         "new run"),
        ({**mine, "played": [{"hands": [hands[0]] * 4, "seconds": 1.0, "decisions": 4}]},
         "did not each play"),
        ({**mine, "played": [{"hands": [[4000 + d, *h[1:]] for d, h in enumerate(hands)], "seconds": 1.0,
                              "decisions": 4}]}, "did not each play"),
        ({**mine, "played": [{"hands": [[0, 0, [0, 0], [0], [0, 0], False], *hands[1:]], "seconds": 1.0,
                              "decisions": 4}]}, "did not each play"),
        ({**mine, "played": [{"hands": [[0, 0]]}]}, "the JSON's played hands are damaged"),
        ([1, 2], "not a JSON of this benchmark's layout 2 (format none, a list;"),
    ]
    played: list[object] = []
    monkeypatch.setattr(bench, "play_timed", lambda *args, **kwargs: played.append(args))
    for n, (content, said) in enumerate(cases):
        path = tmp_path / f"resume{n}.json"
        path.write_text(json.dumps(content), encoding="utf-8")
        with pytest.raises(SystemExit):
            bench.main(["--hands", "8", "--no-progress", "--resume", str(path), "--configs", "expert"])
        error = capsys.readouterr().err.strip().splitlines()[-1]
        assert error.split(": error: ", 1)[1].startswith("--resume") and said in error, (n, error)
        assert json.loads(path.read_text(encoding="utf-8")) == content
    text = tmp_path / "text.json"
    text.write_bytes(b"\xff{")
    with pytest.raises(SystemExit):
        bench.main(["--hands", "8", "--no-progress", "--resume", str(text), "--configs", "expert"])
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert "not a JSON (UnicodeDecodeError" in error and error.endswith(
        "; accepted: a JSON this benchmark wrote, or the name of a new file to start one")
    assert not played


def test_joined_runs_give_the_figures_of_one_run_on_the_deals_all_of_them_played(
        monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Runs measured apart (expert and greedy on 12 hands, expert and random on 8) joined: the figures one
    run of expert, greedy and random on the 8 hands both played gives (the expert kept once: its hands are
    the same in both, C2); runs of other hands of a config, or of another field, are refused."""
    bench = load_benchmark("search_strength", monkeypatch)
    one, two, whole = tmp_path / "one.json", tmp_path / "two.json", tmp_path / "whole.json"
    bench.main(["--hands", "12", "--no-progress", "--json", str(one), "--configs", "expert", "greedy"])
    bench.main(["--hands", "8", "--no-progress", "--json", str(two), "--configs", "expert", "random"])
    bench.main(["--hands", "8", "--no-progress", "--json", str(whole), "--configs", "expert", "greedy",
                "random"])
    runs = [json.loads(path.read_text(encoding="utf-8")) for path in (one, two, whole)]
    joined = json.loads(json.dumps(bench.plain(bench.joined(runs[:2]))))
    for result in (joined, runs[2]):
        for row in result["configs"]:
            del row["ms_per_decision"], row["decisions"]  # (the times are the whole runs')
        del result["played"]
        result.pop("workers", None)
    assert joined == runs[2]
    capsys.readouterr()
    bench.main(["--join", str(one), str(two)])
    assert "4 deals x 2 seat rotations = 8 hands" in capsys.readouterr().out
    other = json.loads(two.read_text(encoding="utf-8"))
    other["played"][0]["hands"][0][3] = [1 - other["played"][0]["hands"][0][3][0]]
    with pytest.raises(ValueError, match="expert played other hands in two of the runs"):
        bench.joined([runs[0], other])
    with pytest.raises(ValueError, match="the JSONs differ in field"):
        bench.joined([runs[0], {**runs[1], "field": ["greedy"]}])


def test_join_refuses_files_that_cannot_be_joined_in_one_line_naming_the_file(
        monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--join A.json B.json ...: one file, the same file twice, a missing, truncated or non-JSON file, a JSON
    that is not this benchmark's (a leaderboard row, a list, damaged rows or hands, no hands), runs of other
    suites or games or fields: each refused in one line that starts with --join (and names the file where
    one is at fault), nothing printed on stdout."""
    bench = load_benchmark("search_strength", monkeypatch)
    one, two, other = tmp_path / "one.json", tmp_path / "two.json", tmp_path / "switch.json"
    bench.main(["--hands", "4", "--no-progress", "--json", str(one), "--configs", "expert"])
    bench.main(["--hands", "4", "--no-progress", "--json", str(two), "--configs", "greedy"])
    bench.main(["--hands", "4", "--no-progress", "--suite", "switch-4p", "--json", str(other), "--configs",
                "expert"])
    run = json.loads(one.read_text(encoding="utf-8"))
    text = one.read_text(encoding="utf-8")

    def written(name: str, content: object) -> str:
        path = tmp_path / name
        path.write_text(content if isinstance(content, str) else json.dumps(content), encoding="utf-8")
        return str(path)

    cases = [
        ([str(one)], "--join: 1 JSON given; accepted: two JSONs or more this benchmark wrote (the table of "
                     "one: --show JSON)"),
        ([str(one), str(one)], f"--join {one}: given twice; accepted: each JSON once"),
        ([str(one), str(tmp_path / ".." / tmp_path.name / "one.json")], "given twice"),
        ([str(one), str(tmp_path / "nowhere.json")], f"--join {tmp_path / 'nowhere.json'}: not a JSON "
                                                     "(FileNotFoundError"),
        ([str(one), cut := written("cut.json", text[:len(text) // 2])], f"--join {cut}: not a JSON "
                                                                        "(JSONDecodeError"),
        ([str(one), row := written("row.json", {"name": "a leaderboard row"})],
         f"--join {row}: not a JSON of this benchmark's layout 2 (format None;"),
        ([str(one), listed := written("list.json", [1, 2])],
         f"--join {listed}: not a JSON of this benchmark's layout 2 (format none, a list;"),
        ([str(one), rows := written("rows.json", {**run, "configs": [{"config": "expert"}]})],
         f"--join {rows}: the JSON's configs are [{{'config': 'expert'}}], not its list of rows"),
        ([str(one), hands := written("hands.json", {**run, "played": [{"hands": [[0, 0]]}]})],
         f"--join {hands}: the JSON's played hands are damaged"),
        ([str(one), short := written("short.json", {**run, "played": [
            {**run["played"][0], "hands": run["played"][0]["hands"][1:]}]})],
         f"--join {short}: the JSON's configs did not each play the suite's first deals"),
        ([str(one), str(other)], "--join: the JSONs differ in suite ('huit-2p', 'switch-4p'): join runs of "
                                 "one suite version and field"),
        ([str(one), written("field.json", {**run, "field": ["random"]})],
         "--join: the JSONs differ in field (['expert'], ['random'])"),
        ([str(one), empty := written("empty.json", {**run, "played": [{**run["played"][0], "hands": []}]})],
         f"--join {empty}: the JSON holds no played hands; accepted: a JSON this benchmark wrote after a "
         "finished round"),
    ]
    capsys.readouterr()
    for argv, said in cases:
        with pytest.raises(SystemExit):
            bench.main(["--join", *argv])
        out, err = capsys.readouterr()
        error = err.strip().splitlines()[-1].split(": error: ", 1)[1]
        assert not out and error.startswith("--join") and said in error, (argv, error)
    bench.main(["--join", str(one), str(two)])
    assert "greedy" in capsys.readouterr().out


@pytest.mark.parametrize("episode", ["hand", "match"])
def test_a_whole_suite_run_writes_the_rows_bench_writes(monkeypatch: pytest.MonkeyPatch,
                                                        tmp_path: pathlib.Path, episode: str) -> None:
    """`--rows`: each config's row is the one `cardlab bench CONFIG --suite S` writes (the same hands or
    matches, C2), named as the leaderboard names it; a run short of the whole suite writes none and says
    why."""
    bench = load_benchmark("search_strength", monkeypatch)
    suite = make_suite(SuitePlan("tiny", "huit", 2, episode, 3), 0)
    monkeypatch.setattr(bench, "load_suite", lambda name: suite)
    configs = ["expert", SEARCH]
    short = bench.measure(configs, suite, 4)
    with pytest.raises(ValueError, match="2 of suite tiny's 3 deals"):
        bench.leaderboard_rows(short, suite, tmp_path)
    bench.main(["--hands", "6", "--no-progress", "--json", str(tmp_path / "run.json"),
                "--rows", str(tmp_path), "--configs", *configs])
    for config in configs:
        row = json.loads((tmp_path / f"tiny--{config.replace(':', '_')}.json").read_text(encoding="utf-8"))
        benched = bench_suite(config, suite, command=["cardlab", "bench", config, "--suite", "tiny"])
        assert row == json.loads(benched.to_json())


def test_rows_the_run_would_not_write_and_negative_processes_are_refused_before_playing(
        monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`--rows` with `--hands` short of the whole suite was refused after the run had played (a search's
    run takes hours), a row's file that is a folder failed with a traceback after it; `--processes -2`
    played here as if 0. Each is now one line before any hand."""
    bench = load_benchmark("search_strength", monkeypatch)
    suite = make_suite(SuitePlan("tiny", "huit", 2, "hand", 3), 0)
    monkeypatch.setattr(bench, "load_suite", lambda name: suite)
    monkeypatch.setattr(bench, "play_rounds", lambda *args, **kwargs: pytest.fail("played"))
    (tmp_path / "tiny--search_worlds=4_ms=0_expert.json").mkdir()  # a row's file name
    folder = tmp_path / "tiny--search_worlds=4_ms=0_expert.json"
    cases = [
        (["--hands", "4", "--rows", str(tmp_path)],
         "--rows: the run plays 2 of suite tiny's 3 deals; a leaderboard row is the whole suite: accepted: "
         "--hands 6"),
        (["--hands", "6", "--rows", str(tmp_path)], f"--rows {folder} is a folder: give the name of a file"),
        (["--hands", "4", "--processes", "-2"],
         "--processes=-2 is out of range; accepted: 0 (play here) or a whole number of local processes"),
    ]
    for argv, said in cases:
        with pytest.raises(SystemExit):
            bench.main(["--no-progress", *argv, "--configs", "expert", SEARCH])
        error = capsys.readouterr().err.strip().splitlines()[-1].split(": error: ", 1)[1]
        assert error.startswith(said), (argv, error)
    assert [p.name for p in tmp_path.iterdir()] == ["tiny--search_worlds=4_ms=0_expert.json"]


def test_workers_beside_processes_is_refused_before_playing(monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """`--workers 2 --processes 2` played in local processes while the JSON said 2 Ray workers: one or the
    other is accepted, both refused in one line before any hand."""
    bench = load_benchmark("search_strength", monkeypatch)
    monkeypatch.setattr(bench, "play_rounds", lambda *args, **kwargs: pytest.fail("played"))
    with pytest.raises(SystemExit):
        bench.main(["--no-progress", "--hands", "4", "--workers", "2", "--processes", "2",
                    "--configs", "expert"])
    error = capsys.readouterr().err.strip().splitlines()[-1].split(": error: ", 1)[1]
    assert error == ("--processes=2 is not accepted with --workers 2; accepted: --workers N (Ray) or "
                     "--processes N (local processes), not both")


def test_a_failing_agent_stops_a_run_in_processes_at_once() -> None:
    """The first job that fails ends the run in one line naming the agent and how it failed. Before: the
    failure could not be unpickled (BrokenProcessPool, the failure lost), then the run first played every
    round still queued (for a search, hours) before telling it; here each of the slow agent's rounds takes
    minutes (5 s a move), ten of them, far past the timeout."""
    import os
    import subprocess
    import sys

    root = pathlib.Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, str(root / "benchmarks" / "search_strength.py"), "--no-progress", "--hands", "40",
         "--processes", "2", "--configs", "tests.failing_agents:raising", "tests.failing_agents:slow"],
        capture_output=True, text=True, timeout=240, cwd=root,
        env={**os.environ, "PYTHONPATH": str(root)})
    error = done.stderr.strip().splitlines()[-1]
    assert done.returncode == 2, done.stderr[-2000:]
    assert error.startswith("search_strength.py: error: tests.failing_agents:raising (slot 0, seat ")
    assert "failed: it raised KeyError" in error and "Traceback" not in done.stderr


def test_join_and_show_refuse_the_options_of_a_run_that_plays(monkeypatch: pytest.MonkeyPatch,
                                                              tmp_path: pathlib.Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """`--join A B --json J` printed the joined table and wrote no J, without a word; `--show` beside
    `--configs` played nothing either: an option of a run that plays, beside `--join` or `--show` (or
    `--show` beside `--join`), is refused in one line saying which, and nothing is written."""
    bench = load_benchmark("search_strength", monkeypatch)
    one, two = tmp_path / "one.json", tmp_path / "two.json"
    bench.main(["--hands", "4", "--no-progress", "--json", str(one), "--configs", "expert"])
    bench.main(["--hands", "4", "--no-progress", "--json", str(two), "--configs", "greedy"])
    out = tmp_path / "joined.json"
    cases = [
        (["--join", str(one), str(two), "--json", str(out)],
         "--join prints a table of saved JSON and plays nothing: --json is not read beside it; accepted: "
         "--join without it, or no --join to play"),
        (["--join", str(one), str(two), "--show", str(one)], "--join prints a table of saved JSON and plays "
                                                             "nothing: --show is not read beside it"),
        (["--show", str(one), "--configs", "expert", "--hands", "8"],
         "--show prints a table of saved JSON and plays nothing: --configs, --hands are not read beside it; "
         "accepted: --show without them, or no --show to play"),
    ]
    capsys.readouterr()
    for argv, said in cases:
        with pytest.raises(SystemExit):
            bench.main(argv)
        out_text, err = capsys.readouterr()
        assert not out_text and err.strip().splitlines()[-1].split(": error: ", 1)[1].startswith(said), argv
    assert sorted(p.name for p in tmp_path.iterdir()) == ["one.json", "two.json"]


def test_a_resumed_run_that_holds_the_hands_asked_says_it_wrote_nothing(
        monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`--resume F --hands` at most F's hands plays nothing and leaves F as it was; it said "wrote F"."""
    bench = load_benchmark("search_strength", monkeypatch)
    grown = tmp_path / "grown.json"
    bench.main(["--hands", "8", "--no-progress", "--resume", str(grown), "--configs", "expert"])
    assert capsys.readouterr().err.strip().splitlines()[-1] == f"wrote {grown}"
    saved = grown.read_text(encoding="utf-8")
    monkeypatch.setattr(bench, "play_rounds", lambda *args, **kwargs: pytest.fail("played"))
    bench.main(["--hands", "4", "--no-progress", "--resume", str(grown), "--configs", "expert"])
    assert capsys.readouterr().err.strip().splitlines()[-1] == (f"{grown} already holds the hands asked: "
                                                                "nothing played, the file left as it was")
    assert grown.read_text(encoding="utf-8") == saved
