"""The shipped match-equity models: each seat's chance to win the match sums to 1 over the seats, a finished
match gives its winners 1 (A12/B13, ties sharing), more points mean less equity, and a file for another table
or rules of play, or a corrupted one, is refused in one line; an option that is no rule of play does not
matter."""

from __future__ import annotations

import json
import pathlib
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from cardlab.agents.bot_catalogue import table_bots
from cardlab.agents.match_equity import (
    SHIPPED,
    equity_at,
    equity_file,
    equity_rules,
    load_equity,
    shipped_equity,
    weights_sha256,
)
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


@pytest.mark.parametrize("game_id", ["huit", "switch"])
def test_an_option_that_is_no_rule_of_play_does_not_keep_an_equity_from_a_table(
        game_id: str, tmp_path: pathlib.Path) -> None:
    """``memory`` only adds to what a seat observes: the shipped equity serves a table with it, and an equity
    fitted with it serves one without it (the hands, and so the chances, are the same)."""
    shipped = SHIPPED / f"{game_id}-4p.json"
    assert "memory" not in equity_rules(make_game(game_id, {"num_players": 4}))
    with_memory = make_game(game_id, {"num_players": 4, "memory": True})
    assert load_equity(shipped, with_memory).target == with_memory.rules.to_dict()["target_score"]
    data = json.loads(shipped.read_text())
    data["rules"]["memory"] = True
    fitted = tmp_path / "equity.json"
    fitted.write_text(json.dumps(data))
    load_equity(fitted, make_game(game_id, {"num_players": 4}))
    del data["rules"]["memory"]  # a file that never heard of it: fitted without it
    fitted.write_text(json.dumps(data))
    load_equity(fitted, with_memory)


def _other_value(value: Any) -> Any:
    """A value of a rule option other than `value` that every 4-seat table takes."""
    return not value if isinstance(value, bool) else value + 1


@pytest.mark.parametrize(("game_id", "name"), [
    (game_id, name) for game_id in ("huit", "switch")
    for name in equity_rules(make_game(game_id, {"num_players": 4})) if name != "num_players"])
def test_every_rule_of_play_that_differs_is_refused(game_id: str, name: str) -> None:
    """A rule of play changes a hand's points, its winner or the match's scoring (target_score, B12, C1's
    cut hands), so the shipped equity is refused at a table where any one of them differs, in one line."""
    default = make_game(game_id, {"num_players": 4}).rules.to_dict()[name]
    other = _other_value(default)
    with pytest.raises(ValueError, match=rf"other rules: {name}={default!r} \(table: {other!r}\)") as err:
        load_equity(SHIPPED / f"{game_id}-4p.json", make_game(game_id, {"num_players": 4, name: other}))
    assert "\n" not in str(err.value)


def test_an_unknown_rule_in_a_file_is_refused(tmp_path: pathlib.Path) -> None:
    """A rule this cardlab does not know may be one of play: the file is refused, not read as fitting."""
    data = json.loads((SHIPPED / "huit-4p.json").read_text())
    data["rules"]["made_up"] = 1
    path = tmp_path / "equity.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match=r"other rules: made_up=1 \(table: '\(missing\)'\)"):
        load_equity(path, make_game("huit", {"num_players": 4}))


def test_a_named_file_is_read_once_until_it_changes(tmp_path: pathlib.Path) -> None:
    game = make_game("huit", {"num_players": 4})
    path = tmp_path / "equity.json"
    path.write_text((SHIPPED / "huit-4p.json").read_text())
    first = equity_at(path, game)
    assert equity_at(path, game) is first
    path.write_text(path.read_text().replace('"format_version"', '"format_version" ', 1))
    assert equity_at(path, game) is not first


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
                                         r"one with cardlab match-equity and name its RUN/equity.json "
                                         r"\(search option equity=, config key equity\)$"):
        shipped_equity(make_game("switch", {"num_players": 3}))


def _first(value: Any, change: Callable[[Any], Any]) -> Any:
    """`value` (nested lists of numbers) with `change` applied to its first number, the rest kept."""
    return [_first(value[0], change), *value[1:]] if isinstance(value, list) else change(value)


@pytest.mark.parametrize(("changes", "message"), [
    ({"hidden": [1] * 17}, r"hidden must be a list of at most 16 layer widths, each 1 to 256, got \[1, 1, "),
    ({"hidden": [257]}, r"hidden must be a list of at most 16 layer widths, each 1 to 256, got \[257\]"),
    ({"summary": []}, r"summary must be an object of the fields policy, hands, .*, got \[\]"),
    ({"summary": {"policy": "expert"}}, r"summary must be an object of the fields policy, .* \['policy'\]"),
    ({"summary": "steps"}, r"summary must be an object of the fields .*, got 'steps'"),
])
def test_a_hostile_network_or_summary_is_refused(tmp_path: pathlib.Path, changes: dict[str, Any],
                                                 message: str) -> None:
    """Before: any number of hidden layers was read (a file could ask for a network of thousands of layers,
    each a matrix product per valuation) and the summary was never looked at."""
    with pytest.raises(ValueError, match=rf"^match equity .*: {message}") as refused:
        load_equity(_shipped_copy(tmp_path, **changes), make_game("huit", {"num_players": 4}))
    assert "\n" not in str(refused.value)


@pytest.mark.parametrize(("field", "value", "accepted"), [
    ("hands", -5, "a whole number"), ("matches", 2.5, "a whole number"), ("seed", True, "a whole number"),
    ("holdout_log_loss", "low", "a number"), ("policy", 3, "the spec of the policy that played"),
    ("reliability", [{"low": 0.0}], "a list of at most 10 rows of the numbers low, high, count, predicted, "
                                    "observed"),
    ("reliability", [{"low": 0, "high": 1, "count": 1, "predicted": 0.5, "observed": 0.5}] * 11, "a list"),
])
def test_each_summary_field_is_checked(tmp_path: pathlib.Path, field: str, value: Any, accepted: str) -> None:
    summary = json.loads((SHIPPED / "huit-4p.json").read_text())["summary"] | {field: value}
    with pytest.raises(ValueError, match=rf": summary field {field} is .*; it must be {accepted}"):
        load_equity(_shipped_copy(tmp_path, summary=summary), make_game("huit", {"num_players": 4}))
    with pytest.raises(ValueError, match=rf"^an equity file's summary field {field} is "):
        equity_file(make_game("huit", {"num_players": 4}), [], summary)
