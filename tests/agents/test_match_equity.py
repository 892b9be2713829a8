"""The shipped match-equity models: each seat's chance to win the match sums to 1 over the seats, a finished
match gives its winners 1 (A12/B13, ties sharing), more points mean less equity, and a file for another table
or rule set, or a corrupted one, is refused in one line."""

from __future__ import annotations

import json
import pathlib
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from cardlab.agents.bot_catalogue import table_bots
from cardlab.agents.match_equity import SHIPPED, load_equity, shipped_equity, weights_sha256
from cardlab.envs import make_game
from cardlab.envs.game_spec import Game

TABLES = [(game, n) for game, sizes in table_bots().items() for n in sorted(sizes)]


@pytest.mark.parametrize(("game_id", "n"), TABLES)
def test_every_table_with_a_bot_ships_an_equity_that_sums_to_one(game_id: str, n: int) -> None:
    game = make_game(game_id, {"num_players": n})
    model = shipped_equity(game)
    target = model.target
    rng = np.random.default_rng(n)
    scores = rng.integers(-20, target, size=(200, n))
    equity = model.equity(scores, rng.integers(n, size=200), rng.integers(0, 3, size=(200, n)))
    assert equity.shape == (200, n) and (equity >= 0).all()
    assert np.allclose(equity.sum(axis=1), 1.0)
    assert abs(model.meta["summary"]["calibration_worst"]) < 0.05


@pytest.mark.parametrize(("game_id", "n"), [("huit", 4), ("switch", 4)])
def test_a_match_that_is_over_gives_its_winner_equity_one(game_id: str, n: int) -> None:
    """A12/B13: once a total reaches the target the lowest total wins; tied lowest totals share the win."""
    model = shipped_equity(make_game(game_id, {"num_players": n}))
    t = model.target
    scores = np.array([[t, 20, 40, 60], [t + 5, 30, 30, t - 1]])
    equity = model.equity(scores, np.array([0, 1]))
    assert equity.tolist() == [[0.0, 1.0, 0.0, 0.0], [0.0, 0.5, 0.5, 0.0]]


def test_fewer_points_more_equity_and_the_end_sharpens_it() -> None:
    model = shipped_equity(make_game("huit", {"num_players": 4}))
    early = model.equity(np.array([[0, 20, 20, 20]]), np.array([3]))[0]
    late = model.equity(np.array([[100, 120, 120, 120]]), np.array([3]))[0]
    assert early[0] > 0.25 > early[1] and late[0] > early[0]
    assert model.equity(np.array([[0, 0, 0, 0]]), np.array([3]))[0] == pytest.approx([0.25] * 4, abs=0.03)


def _shipped_copy(tmp_path: pathlib.Path, **changes: object) -> pathlib.Path:
    data = json.loads((SHIPPED / "huit-4p.json").read_text())
    data.update(changes)
    path = tmp_path / f"equity-{len(list(tmp_path.iterdir()))}.json"
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize(("game", "message"), [
    (("switch", {"num_players": 4}), "it is for 'huit' with 4 players, not switch with 4"),
    (("huit", {"num_players": 3}), "it is for 'huit' with 4 players, not huit with 3"),
    (("huit", {"num_players": 4, "target_score": 100}), r"other rules: target_score=151 \(table: 100\)"),
])
def test_an_equity_for_another_table_is_refused(game: tuple[str, dict[str, object]], message: str) -> None:
    with pytest.raises(ValueError, match=message) as err:
        load_equity(SHIPPED / "huit-4p.json", make_game(*game))
    assert "\n" not in str(err.value)


def test_a_corrupt_or_foreign_equity_file_is_refused(tmp_path: pathlib.Path) -> None:
    game = make_game("huit", {"num_players": 4})
    data = json.loads((SHIPPED / "huit-4p.json").read_text())
    data["weights"]["b0"][0] += 1.0
    edited = _shipped_copy(tmp_path, weights=data["weights"])
    with pytest.raises(ValueError, match="do not hash to the weights_sha256"):
        load_equity(edited, game)
    for path, message in [
        (_shipped_copy(tmp_path, format="cardlab-reader"), "not a cardlab-match-equity file"),
        (_shipped_copy(tmp_path, features_version=99), "features 99; this cardlab reads"),
        (_shipped_copy(tmp_path, extra=1), "expected the fields"),
        (_shipped_copy(tmp_path, format_version=True), "format_version must be a whole number, got True"),
        (_shipped_copy(tmp_path, num_players=4.0), "num_players must be a whole number, got 4.0"),
        (_shipped_copy(tmp_path, hidden=[16, 32]), r"layer 0 must be a \(16, 11\) weight"),
        (_seats_edited(tmp_path, game),
         r"its weights read the features of 3 seats, but it records num_players=4 \(edited\?\)"),
        (tmp_path / "missing.json", "file not found"),
    ]:
        with pytest.raises(ValueError, match=message):
            load_equity(path, game)
    for layer, wrong in (("w0", lambda v: _first(v, str)), ("b1", lambda v: [True] * len(v)),
                         ("w2", lambda v: _first(v, lambda x: [x]))):  # text, flags, a ragged row
        weights = json.loads((SHIPPED / "huit-4p.json").read_text())["weights"]
        weights[layer] = wrong(weights[layer])
        damaged = _shipped_copy(tmp_path, weights=weights, weights_sha256=weights_sha256(weights))
        with pytest.raises(ValueError, match=rf"^match equity .*: layer {layer[1]}'s weights are not "
                                             r"arrays of numbers$"):
            load_equity(damaged, game)
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(ValueError, match=r"match equity .*bad.json"):
        load_equity(tmp_path / "bad.json", game)



@pytest.mark.parametrize("value", [1e300, -2000.0])
def test_an_equity_whose_weights_overflow_is_refused(tmp_path: pathlib.Path, value: float) -> None:
    """A weight past `MOST_WEIGHT` (re-hashed, as an edit would): it loaded, and 1e300 overflowed the logits
    to NaN equities, which a search took for values (JSON's reader refuses an infinite number itself)."""
    game = make_game("huit", {"num_players": 4})
    weights = json.loads((SHIPPED / "huit-4p.json").read_text())["weights"]
    weights["w2"] = _first(weights["w2"], lambda _: value)
    path = _shipped_copy(tmp_path, weights=weights, weights_sha256=weights_sha256(weights))
    with pytest.raises(ValueError) as refused:
        load_equity(path, game)
    assert str(refused.value) == (
        f"match equity {path}: layer 2 holds a value of magnitude {abs(value):.3g}; accepted: finite values "
        "from -1000 to 1000 (corrupted or edited?); fit it again with cardlab match-equity")


def _seats_edited(tmp_path: pathlib.Path, game: Game) -> pathlib.Path:
    """The 3-seat equity with its table (players and rules) edited to `game`'s: its weights disagree."""
    data = json.loads((SHIPPED / "huit-3p.json").read_text())
    data.update(num_players=game.num_players, rules=game.rules.to_dict())
    path = tmp_path / "seats-edited.json"
    path.write_text(json.dumps(data))
    return path


def test_a_table_without_an_equity_is_refused_naming_those_that_have_one() -> None:
    with pytest.raises(ValueError, match=r"no match equity ships for switch with 3 players .*huit-4p.*; fit "
                                         r"one with cardlab match-equity and copy its equity.json to "
                                         r".*switch-3p.json$"):
        shipped_equity(make_game("switch", {"num_players": 3}))


def _first(value: Any, change: Callable[[Any], Any]) -> Any:
    """`value` (nested lists of numbers) with `change` applied to its first number, the rest kept."""
    return [_first(value[0], change), *value[1:]] if isinstance(value, list) else change(value)
