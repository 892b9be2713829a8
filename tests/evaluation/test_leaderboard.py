"""The leaderboard's tables: every result file a row, ranked; shipped agents without one listed as not run."""

from __future__ import annotations

import json
import pathlib

import pytest

from cardlab.evaluation.leaderboard import bench_markdown, exploit_markdown, shipped_agents
from cardlab.evaluation.suites import load_suite


def row(agent: str, rate: float, **changes: object) -> dict[str, object]:
    suite = load_suite("huit-2p", check=False)
    return {"format": 1, "suite": "huit-2p", "suite_version": suite.version,
            "suite_sha256": suite.deals_sha256, "agent": agent, "field": ["expert"], "episodes": 4000,
            "win_rate": rate, "paired_ci_low": rate - 0.01, "paired_ci_high": rate + 0.01,
            "point_difference": 1.0, "point_difference_ci_low": 0.5,
            "point_difference_ci_high": 1.5, "command": f"cardlab bench {agent}", **changes}


def test_rows_are_ranked_by_win_rate_and_shipped_agents_not_run_are_listed(tmp_path: pathlib.Path) -> None:
    (tmp_path / "a.json").write_text(json.dumps(row("greedy", 0.41)))
    (tmp_path / "b.json").write_text(json.dumps(row("expert", 0.50)))
    text = bench_markdown(tmp_path)
    huit = text.split("### huit-3p")[0]
    assert huit.index("| 1 | `expert`") < huit.index("| 2 | `greedy`")
    assert "| - | `random` | expert | not run |" in huit
    assert "| - | `bot:huit-2p` | expert | not run |" in huit
    assert "| - | `bot:switch-4p` | expert | not run |" in text
    assert shipped_agents(load_suite("huit-3p", check=False)) == [
        "random", "greedy", "expert", "bot:huit-3p", "search:bot:huit-3p"]


@pytest.mark.parametrize(("changes", "words"), [
    ({"suite_sha256": "0" * 64}, "was played on other cards than suite huit-2p version 1: run its command"),
    ({"suite": "huit-9p"}, "this cardlab reads format 1 of the suites"),
    ({"format": 2}, "format 2 of suite 'huit-2p'"),
])
def test_a_row_of_other_cards_or_a_broken_file_is_refused(tmp_path: pathlib.Path, changes: dict[str, object],
                                                           words: str) -> None:
    (tmp_path / "a.json").write_text(json.dumps(row("greedy", 0.4, **changes)))
    with pytest.raises(ValueError, match=words):
        bench_markdown(tmp_path)
    data = row("greedy", 0.4)
    del data["win_rate"]
    (tmp_path / "a.json").write_text(json.dumps(data))
    with pytest.raises(ValueError, match="lacks win_rate: give the JSON that cardlab wrote"):
        bench_markdown(tmp_path)


def test_exploitability_rows_show_the_bound_above_the_fair_share(tmp_path: pathlib.Path) -> None:
    assert "not run" in exploit_markdown(tmp_path)
    (tmp_path / "exploit").mkdir()
    result = {"game": "huit", "num_players": 2, "agent": "greedy", "warm_start": "imitation of expert",
              "steps": 30000, "seconds": 60.0, "hands": 1000, "fair_share": 0.5, "exploiter_win_rate": 0.574,
              "exploiter_ci_low": 0.547, "exploiter_ci_high": 0.601,
              "curve": [{"steps": 0, "win_rate": 0.585}, {"steps": 30000, "win_rate": 0.574}]}
    (tmp_path / "exploit" / "greedy.json").write_text(json.dumps(result))
    assert ("| huit 2p | `greedy` | imitation of expert | 0.585 | 30,000 | 1.0 | 0.574 | [0.547, 0.601] "
            "| 0.500 | 0.047 | 1000 |") in exploit_markdown(tmp_path)
