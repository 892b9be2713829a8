"""`benchmarks/speed_table.py`: one command measures every row of the speed table, and the rows render as
the results page shows them (`benchmarks/speed_rows.py`).

Why: the table sets each seat's speed beside its target from one run; a
row the command stopped measuring, or a "met?" that misreads its target,
would make the page claim what no run showed.
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
from typing import Any

import pytest

from tests.benchmarks import BENCHMARKS, load_benchmark


def report(figures: dict[str, float], quick: bool = False, nice: int = 0) -> dict[str, Any]:
    return {"machine": {"cpu": "Some CPU", "cores": 2}, "loadavg": {"start": [3.4, 2, 1], "end": [3.9, 3, 2]},
            "nice": nice, "quick": quick, "repeats": 3, "figures": figures}


def test_met_is_at_least_the_target_and_reported_rows_have_none(monkeypatch: pytest.MonkeyPatch) -> None:
    rows = load_benchmark("speed_rows", monkeypatch)
    figures = {key: 1.0 for key in rows.KEYS}
    figures["vector random"] = 500_000.0  # the target exactly: met
    figures["vector expert"] = 249_999.0  # just under: not met
    figures["lean ratio"] = 0.51
    lines = {line.split(" | ")[0].removeprefix("| "): line for line in rows.table(figures).splitlines()}
    by_key = {row.key: lines[row.measure] for row in rows.ROWS}
    assert by_key["vector random"].endswith("| 500,000 learner steps/s | at least 500,000 | yes |")
    assert by_key["vector expert"].endswith("| 249,999 learner steps/s | at least 250,000 | no |")
    assert by_key["lean ratio"].endswith("| 0.51 | at least 0.50 | yes |")
    assert by_key["worlds search:bot:huit-2p"].endswith("| 1 worlds | at least 1,000 | no |")
    assert by_key["lean vs expert"].endswith("| report | - |")
    figures["act expert huit"] = 3_269.0
    assert "(act: 3,269) | report | - |" in rows.table(figures)


def test_every_row_is_in_the_table_once_and_a_missing_figure_is_named(
        monkeypatch: pytest.MonkeyPatch) -> None:
    rows = load_benchmark("speed_rows", monkeypatch)
    body = rows.table({key: 2.0 for key in rows.KEYS}).splitlines()
    assert len(body) == 2 + len(rows.ROWS) == 2 + len({row.measure for row in rows.ROWS})
    figures = {key: 2.0 for key in rows.KEYS if key != "engine"}
    with pytest.raises(ValueError, match="lack 'engine'"):
        rows.table(figures)


def test_the_lead_says_the_machine_and_its_load_once(monkeypatch: pytest.MonkeyPatch) -> None:
    rows = load_benchmark("speed_rows", monkeypatch)
    text = rows.markdown(report({key: 2.0 for key in rows.KEYS}))
    lead = text.split("\n\n")[0]
    assert "2-core Some CPU" in lead and "3.4" in lead and "3.9" in lead and "--quick" not in lead
    assert "`--quick`" in rows.markdown(report({key: 2.0 for key in rows.KEYS}, quick=True))
    assert "nice" not in lead
    assert "at nice 10" in rows.markdown(report({key: 2.0 for key in rows.KEYS}, nice=10))


@pytest.mark.slow
def test_quick_run_measures_every_row_with_a_positive_figure(tmp_path: pathlib.Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """The command itself (its own process: it pins itself to one core), every measure at a tiny size."""
    rows = load_benchmark("speed_rows", monkeypatch)
    out = tmp_path / "speed.json"
    env = {**os.environ, "NUMBA_NUM_THREADS": "1"}
    done = subprocess.run([sys.executable, str(BENCHMARKS / "speed_table.py"), "--quick", "--json", str(out)],
                          capture_output=True, text=True, env=env, timeout=1800)
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(out.read_text(encoding="utf-8"))
    assert found["quick"] is True and found["machine"]["cores"] == os.cpu_count()
    assert len(found["loadavg"]["start"]) == len(found["loadavg"]["end"]) == 3
    for key in rows.KEYS:
        assert found["figures"][key] > 0, key
    assert done.stdout.count("os.getloadavg()") == 1
    assert rows.table(found["figures"]) in done.stdout
    assert rows.markdown(found).endswith(rows.table(found["figures"]))


def test_a_missing_json_folder_is_refused_before_measuring(tmp_path: pathlib.Path,
                                                           monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("NUMBA_NUM_THREADS", raising=False)  # the module sets it; restored after the test
    bench = load_benchmark("speed_table", monkeypatch)
    monkeypatch.setattr(bench, "run", lambda *_: pytest.fail("measured with a --json it cannot write"))
    with pytest.raises(SystemExit) as exited:
        bench.main(["--quick", "--json", str(tmp_path / "no" / "speed.json")])
    assert exited.value.code == 2
    assert f"its folder {tmp_path / 'no'} does not exist" in capsys.readouterr().err


def test_the_search_rows_count_the_worlds_of_the_default_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    """The rows' cap is the default search's (the quick level's): what a core of its own plays within it."""
    from cardlab.agents.search_options import LEVELS, SearchOptions

    rows = load_benchmark("speed_rows", monkeypatch)
    budget = LEVELS[SearchOptions().level][1]
    assert budget == rows.BUDGET_MS
    assert all(f"x the default {budget} ms" in row.measure for row in rows.ROWS if row.unit == "worlds")


def test_the_cold_start_report_renders_a_row_per_command_and_the_first_decision(
        tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`benchmarks/cold_start.py --json` keeps each command's cold and warm seconds and the first search
    decision's worlds, and the page's table shows exactly those (the commands are not run here)."""
    bench = load_benchmark("cold_start", monkeypatch)
    rows = load_benchmark("speed_rows", monkeypatch)
    seconds = iter([30.0, 3.0, 20.0, 5.0])
    first = {"first_ms": 1234.0, "first_worlds": 140, "again_ms": 60.0, "again_worlds": 133}

    def timed(argv: list[str], cache: pathlib.Path) -> tuple[float, str]:
        assert cache.is_dir()
        return next(seconds), json.dumps(first) if "-c" in argv else "done"

    monkeypatch.setattr(bench, "timed", timed)
    out = tmp_path / "cold.json"
    bench.main(["--only", "search", "eval", "--json", str(out)])
    found = json.loads(out.read_text(encoding="utf-8"))
    assert [(r["command"], r["cold_s"], r["warm_s"]) for r in found["rows"]] == [("search", 30.0, 3.0),
                                                                                 ("eval", 20.0, 5.0)]
    page = rows.cold_markdown(found)
    assert f"| {rows.COLD_COMMANDS['eval']} | 20.0 | 5.0 | 0.25 |" in page
    assert "| empty | 1.2 s | 140 | 133 worlds |" in page
    assert "search:level=quick:expert` at Huit 4p" in page
    assert rows.COLD_COMMANDS["main job"] not in page


def test_the_actors_table_sets_each_config_beside_its_own_single_process_run(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """`actor_throughput.py --json`'s report: a row per (config, actors), the ratio to that config's
    ``actors: 0`` and the spread of the repeats (a ratio over another config's baseline would misstate it)."""
    rows = load_benchmark("speed_rows", monkeypatch)

    def row(config: str, actors: int, each: list[float]) -> dict[str, Any]:
        return {"config": config, "label": f"{config} (label)", "actors": actors, "steady": sorted(each)[1],
                "whole": 1000.0, "steady_each": each, "whole_each": [1000.0] * 3}

    table = {"steps": 100_000, "repeats": 3, "device": "cpu", "warm_iterations": 3,
             "machine": {"cpu": "Some CPU", "cores": 2},
             "loadavg": {"start": [1.5, 1, 1], "end": [2.25, 2, 2]},
             "rows": [row("a", 0, [9000.0, 10000.0, 11000.0]), row("a", 2, [14000.0, 13000.0, 20000.0]),
                      row("b", 0, [20000.0, 20000.0, 20000.0]), row("b", 2, [10000.0, 11000.0, 12000.0]),
                      row("c", 1, [5000.0, 5000.0, 5000.0])]}
    lead, body = rows.actors_markdown(table).split("\n\n")
    assert "2-core Some CPU" in lead and "1.5" in lead and "2.2" in lead and "100,000 steps" in lead
    lines = body.splitlines()
    assert lines[2] == "| a (label) | 0 | 10,000 | 9,000-11,000 | 1,000 | 1.00x |"
    assert lines[3] == "| a (label) | 2 | 14,000 | 13,000-20,000 | 1,000 | 1.40x |"
    assert lines[5] == "| b (label) | 2 | 11,000 | 10,000-12,000 | 1,000 | 0.55x |"
    assert lines[6].endswith("| - |")  # no actors: 0 run of c to compare with
