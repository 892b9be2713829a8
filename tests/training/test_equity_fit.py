"""`cardlab match-equity`: a tiny equity config fitted end to end by its command, its matches played by the
rules (A3/B3 dealer, B12 streaks, B13 end), and bad configs refused with their key."""

from __future__ import annotations

import dataclasses
import json
import pathlib

import numpy as np
import pytest

from cardlab.agents.match_equity import load_equity
from cardlab.cli import main
from cardlab.envs import make_game
from cardlab.training.data.match_equity import EquityConfig, play_matches, reliability, validate_equity

TINY = EquityConfig(name="tiny", game="huit", num_players=3, hands=64, holdout_hands=32, matches=200,
                    holdout_matches=50, hidden=[4], epochs=1, batch_size=64)


def test_a_tiny_equity_fits_end_to_end_by_its_command(tmp_path: pathlib.Path) -> None:
    config = tmp_path / "tiny.yaml"
    config.write_text("\n".join(f"{k}: {json.dumps(v)}" for k, v in dataclasses.asdict(TINY).items()))
    assert main(["match-equity", str(config), "--runs-dir", str(tmp_path / "runs")]) == 0
    (run,) = (tmp_path / "runs").iterdir()
    model = load_equity(run / "equity.json", make_game("huit", {"num_players": 3}))
    summary = model.meta["summary"]
    assert summary["matches"] == 200 and summary["hands_per_match"] > 1 and summary["reliability"]
    equity = model.equity(np.array([[10, 40, 70], [0, 0, 0]]), np.array([0, 2]), np.zeros((2, 3)))
    assert np.allclose(equity.sum(axis=1), 1.0)


def test_matches_follow_the_dealer_and_the_target() -> None:
    """B3: the dealer moves on each hand and the dealer's next seat plays first; B13: the match ends once a
    total reaches 151, the lowest total winning."""
    game = make_game("huit", {"num_players": 2})
    played = play_matches(game, np.array([[0, 30]]), np.array([0]), 1, np.random.default_rng(0))
    # the first to play always wins and the other holds 30: the seats take turns to win
    assert played.dealer.tolist() == [1, 0] * 5 + [1]
    assert played.scores[:3].tolist() == [[0, 0], [0, 30], [30, 30]]
    assert played.scores[-1].tolist() == [150, 150]  # hand 11 takes seat 1 to 180: seat 0 wins
    assert played.shares.tolist() == [[1.0, 0.0]] * 11
    assert played.streaks.max() == 1


def test_the_streak_bonus_takes_ten_off_the_third_win_in_a_row() -> None:
    """B12: a seat winning three hands in a row gets 10 off (below 0 if need be) and its streak restarts."""
    game = make_game("huit", {"num_players": 2})
    first_wins, second_wins = [0, 40], [40, 0]  # by seat from the first to play
    many = play_matches(game, np.array([first_wins, second_wins]), np.array([0, 1]), 300,
                        np.random.default_rng(11))
    assert (many.streaks <= 2).all()  # a streak never stands at 3: the bonus restarts it
    assert many.scores.min() == -10  # a seat that won the first three hands
    assert ((many.scores % 10) == 0).all()


def test_reliability_bins_by_decile() -> None:
    rows = reliability(np.array([[0.05, 0.95], [0.15, 0.85]]), np.array([[0.0, 1.0], [1.0, 0.0]]))
    assert [(r["low"], r["count"]) for r in rows] == [(0.0, 1), (0.1, 1), (0.8, 1), (0.9, 1)]


@pytest.mark.parametrize(("changes", "message"), [
    ({"policy": "nobody"}, "policy:"),
    ({"hands": 0}, "hands=0 is out of range"),
    ({"hidden": [0]}, r"hidden\[0\]=0 is out of range"),
    ({"rules": {"num_players": 3}}, "rules.num_players=3 is not a rule option"),
    ({"game": "chess"}, "game='chess' is not one of the choices"),
    ({"learning_rate": 0.0}, "learning_rate=0.0 is out of range"),
])
def test_a_bad_config_is_refused_with_its_key(changes: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        validate_equity(dataclasses.replace(TINY, **changes))  # type: ignore[arg-type]


@pytest.mark.parametrize("policy", ["search:belief=learned:worlds=2:ms=0:expert",
                                    "search:cheat=1:worlds=2:ms=0:expert"])
def test_a_policy_that_must_be_shown_the_record_is_refused_before_a_run_folder(
        tmp_path: pathlib.Path, policy: str, capsys: pytest.CaptureFixture[str]) -> None:
    """The hands are played in the batched engine, which shows a policy its observation only: such a policy
    failed at its first move, after the run folder was made."""
    config = tmp_path / "tiny.yaml"
    data = {**dataclasses.asdict(TINY), "policy": policy}
    config.write_text("\n".join(f"{k}: {json.dumps(v)}" for k, v in data.items()))
    assert main(["match-equity", str(config), "--runs-dir", str(tmp_path / "runs")]) != 0
    err = capsys.readouterr().err.strip()
    assert f"tiny.yaml: policy='{policy[:12]}" in err and "\n" not in err, err
    why = ("' is an agent that must be shown the hand's record or true state; accepted: an agent that plays "
           "from its observation (the batched engine that plays the hands shows nothing else)")
    assert err.endswith(why), err
    assert not (tmp_path / "runs").exists()


def test_hands_that_c1_cuts_every_time_are_refused_leaving_no_run_folder(
        tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A hand C1 cuts adds no points: matches drawn from hands that were all cut never reached the target,
    and the command looped for ever after making its run folder. The refusal takes the folder away, still
    empty."""
    config = tmp_path / "tiny.yaml"
    data = {**dataclasses.asdict(TINY), "rules": {"max_turns": 1}}
    config.write_text("\n".join(f"{k}: {json.dumps(v)}" for k, v in data.items()))
    assert main(["match-equity", str(config), "--runs-dir", str(tmp_path / "runs")]) != 0
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.endswith("rules.max_turns=1 cut every one of the 64 hands played before anyone went out (C1), "
                        "so no match could reach the target; accepted: a max_turns within which the policy's "
                        "hands end (the default is 1,000)"), err
    assert not list((tmp_path / "runs").iterdir())
