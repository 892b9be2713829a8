"""Deal suites: shipped, small, versioned, refused at load when this cardlab would deal other cards (C2)."""

from __future__ import annotations

import dataclasses
import json
import pathlib

import pytest

from cardlab.evaluation.episodes import HAND, rotated_deals
from cardlab.evaluation.request import EvalRequest
from cardlab.evaluation.suites import (
    SUITE_PLAN,
    SUITES_DIR,
    SuitePlan,
    load_suite,
    make_suite,
    suite_names,
)


def test_every_planned_suite_is_shipped_small_and_deals_the_cards_it_records() -> None:
    """C2: the engines deal from the seed alone, so a suite's seed and size pin every card (hash checked)."""
    assert suite_names() == [plan.name for plan in SUITE_PLAN]
    tables = {(p.game, p.num_players, p.episode) for p in SUITE_PLAN}
    assert {("huit", n, "hand") for n in range(2, 7)} | {("switch", n, "hand") for n in range(4, 7)} <= tables
    assert {("huit", n, "match") for n in range(2, 7)} | {("switch", n, "match") for n in range(4, 7)} \
        <= tables
    for plan in SUITE_PLAN:
        assert (SUITES_DIR / f"{plan.name}.json").stat().st_size < 1000
        suite = load_suite(plan.name)  # deals every card again and compares the hash
        assert (suite.game, suite.num_players, suite.episode, suite.deals) == (
            plan.game, plan.num_players, plan.episode, plan.deals)
        assert suite.deals >= 500 and suite.version >= 1


def test_a_run_of_hands_plays_them_in_whole_rotations_of_the_suites_first_deals() -> None:
    """The deals a run of hands plays, worked out in one place (`rotated_deals`; `Suite.deals_of` for a
    suite, which holds no more): each deal is played once per seat rotation, so hands round up to whole
    rotations, in whole numbers however many; `EvalRequest` plays as many as a suite's run says."""
    suite = make_suite(SuitePlan("tiny", "huit", 4, "hand", 3), 0)
    hands = (1, 4, 5, 8, 9, suite.episodes, suite.episodes + 1, 10**6)
    assert [suite.deals_of(n) for n in hands] == [1, 1, 2, 2, 3, 3, 3, 3]
    assert [rotated_deals(n, 3) for n in (0, 1, 3, 4, 3 * 10**20 + 1)] == [0, 1, 1, 2, 10**20 + 1]
    for n in hands[:5]:
        request = EvalRequest("huit", ["expert"], hands=n, rules={"num_players": 4})
        assert request.table.deals[HAND] == suite.deals_of(n)


def test_every_table_with_a_shipped_bot_has_a_match_suite() -> None:
    """A12/B13: people play matches, so each table a bot ships for is measured in matches too."""
    from cardlab.agents.bot_catalogue import table_bots

    tables = {(p.game, p.num_players) for p in SUITE_PLAN if p.episode == "match"}
    assert {(game, n) for game, sizes in table_bots().items() for n in sizes} <= tables


def test_the_files_are_what_the_plan_makes() -> None:
    """The first suites, and a new match suite: the plan's seeds stay where they were as suites are added."""
    for number, plan in [*enumerate(SUITE_PLAN[:2]), (len(SUITE_PLAN) - 1, SUITE_PLAN[-1])]:
        shipped = json.loads((SUITES_DIR / f"{plan.name}.json").read_text())
        assert shipped == make_suite(plan, number).to_dict()


@pytest.mark.parametrize(("change", "words"), [
    ({"seed": 12345}, "this cardlab deals other cards from its seeds"),
    ({"deals": 11}, "this cardlab deals other cards from its seeds"),
    ({"rules": {"num_players": 2, "hand_size": 6}}, "the rules or the engine changed since it was made"),
    ({"deals": 0}, "deals must be a whole number from 1 to 100,000"),
    ({"episode": "game"}, "episode must be hand or match"),
    ({"extra": 1}, "expected the fields"),
])
def test_a_suite_that_does_not_deal_its_recorded_cards_is_refused(
        tmp_path: pathlib.Path, change: dict[str, object], words: str) -> None:
    suite = make_suite(SuitePlan("tiny", "huit", 2, "hand", 10), 0)
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(suite.to_dict()))
    assert load_suite(str(path)) == suite
    path.write_text(json.dumps({**suite.to_dict(), **change}))
    with pytest.raises(ValueError, match=words):
        load_suite(str(path))


def test_an_unknown_suite_lists_the_shipped_ones() -> None:
    """`unknown`'s line, as an unknown config key or rule option: the name given, then every shipped suite
    and the other thing accepted (a suite's file)."""
    with pytest.raises(ValueError) as caught:
        load_suite("huit-9p")
    shipped = ", ".join(suite_names())
    assert str(caught.value) == f"unknown suite(s) huit-9p; accepted: {shipped}, or a suite's .json file"


def test_a_missing_suite_file_says_so_not_unknown_suite(tmp_path: pathlib.Path) -> None:
    """A .json path that is not there is a missing file (its path), not an unknown suite name."""
    with pytest.raises(ValueError, match=r"suite file \S*nope\.json: file not found \(a suite is NAME\.json, "
                       r"or give one of the suites huit-2p, huit-3p"):
        load_suite(str(tmp_path / "nope.json"))
    (tmp_path / "dir.json").mkdir()
    with pytest.raises(ValueError, match=r"^suite file \S*dir\.json: is a folder, not a file; give the path "
                                         r"of the \.json file \(a suite is NAME\.json"):  # `missing_file`'s
        load_suite(str(tmp_path / "dir.json"))


def test_a_suite_plays_evaluate_s_deals_of_its_seed() -> None:
    """The cards of deal d are the ones `evaluate` deals with the suite's seed (anyone can replay them)."""
    from cardlab.evaluation.evaluate import evaluate

    suite = dataclasses.replace(load_suite("switch-4p", check=False), deals=2)
    a = evaluate(EvalRequest("switch", ["expert"], hands=suite.episodes, seed=suite.seed, rules=suite.rules))
    b = evaluate(EvalRequest("switch", ["expert"], hands=suite.episodes, seed=suite.seed, rules=suite.rules))
    assert a.hand_records == b.hand_records and len(a.hand_records) == 8
