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
            "suite_sha256": suite.deals_sha256, "rules": suite.rules, "agent": agent, "field": ["expert"],
            "episodes": 4000,
            "win_rate": rate, "paired_ci_low": rate - 0.01, "paired_ci_high": rate + 0.01,
            "point_difference": 1.0, "point_difference_ci_low": 0.5,
            "point_difference_ci_high": 1.5, "command": f"cardlab bench {agent}",
            "game": "huit", "num_players": 2, "episode": "hand", "deals": 2000, "slots": ["expert", "expert"],
            "wins": round(rate * 4000), "wilson_ci_low": max(0.0, rate - 0.015),
            "wilson_ci_high": min(1.0, rate + 0.015), "fair_share": 0.5, "truncated": 0,
            "cardlab_version": "0.3.0", **changes}


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
        "random", "greedy", "expert", "bot:huit-3p", "search:worlds=128:ms=0:expert",
        "search:belief=learned:worlds=128:ms=0:expert"]  # a hand reader ships for Huit 3p


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
    assert ("| huit 2p | `greedy` | PPO from imitation of expert | 0.585 | 30,000 | 1.0 | 0.574 | "
            "[0.547, 0.601] | 0.500 | 0.047 | 1000 |") in exploit_markdown(tmp_path)


def test_a_search_responder_s_row_names_its_base_and_worlds_and_ranks_by_its_bound(
        tmp_path: pathlib.Path) -> None:
    """A search row has no training steps; its minutes are its evaluation's; rows rank by bound."""
    (tmp_path / "exploit").mkdir()
    ppo = {"responder": "ppo", "game": "huit", "num_players": 2, "agent": "expert", "warm_start": "none",
           "steps": 10, "seconds": 6.0, "hands": 100, "fair_share": 0.5, "exploiter_win_rate": 0.45,
           "exploiter_ci_low": 0.4, "exploiter_ci_high": 0.5}
    search = {"responder": "search", "base": "expert", "worlds": 64, "game": "huit", "num_players": 2,
              "agent": "expert", "seconds": 600.0, "hands": 2000, "fair_share": 0.5,
              "exploiter_win_rate": 0.547, "exploiter_ci_low": 0.529, "exploiter_ci_high": 0.565}
    (tmp_path / "exploit" / "a.json").write_text(json.dumps(ppo))
    (tmp_path / "exploit" / "b.json").write_text(json.dumps(search))
    lines = exploit_markdown(tmp_path).splitlines()
    assert lines[2] == ("| huit 2p | `expert` | search over `expert`, 64 worlds | - | - | 10.0 | 0.547 | "
                        "[0.529, 0.565] | 0.500 | 0.029 | 2000 |")
    assert lines[3].startswith("| huit 2p | `expert` | PPO from none | - | 10 | 0.1 | 0.450 |")


@pytest.mark.parametrize(("changes", "words"), [
    ({"responder": "minimax"}, "responder 'minimax'; this cardlab reads the responders ppo, search"),
    ({"worlds": None}, "lacks worlds"),
])
def test_an_exploit_file_of_an_unknown_responder_or_without_its_fields_is_refused(
        tmp_path: pathlib.Path, changes: dict[str, object], words: str) -> None:
    (tmp_path / "exploit").mkdir()
    data = {"responder": "search", "base": "expert", "worlds": 64, "game": "huit", "num_players": 2,
            "agent": "expert", "seconds": 1.0, "hands": 20, "fair_share": 0.5, "exploiter_win_rate": 0.5,
            "exploiter_ci_low": 0.4, "exploiter_ci_high": 0.6, **changes}
    (tmp_path / "exploit" / "a.json").write_text(json.dumps({k: v for k, v in data.items() if v is not None}))
    with pytest.raises(ValueError, match=words):
        exploit_markdown(tmp_path)
