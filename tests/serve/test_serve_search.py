"""The web app offers the search at both levels (``search-quick``, the default search, and ``search-strong``)
for each game that can be searched, and a table can be started with either in a seat, which then moves."""

from __future__ import annotations

import json
import pathlib
from typing import Any

import pytest

from cardlab.agents import match_equity
from cardlab.agents.match_equity import SHIPPED
from cardlab.agents.search import LEVELS
from cardlab.envs import get_spec, make_game
from cardlab.serve.catalogue import Catalogue, has_equity, search_choices

from .helpers import client, table_of


def test_the_options_offer_each_level_of_the_search_for_both_games() -> None:
    agents = client().get("/api/options").json()["agents"]
    offered = {(a["name"], a["game"]) for a in agents if a["name"].startswith("search-")}
    assert offered == {(f"search-{level}", game) for level in LEVELS for game in ("huit", "switch")}
    assert [c.name for c in search_choices("huit")] == ["search-quick", "search-strong"]  # quick first
    assert [c.spec for c in search_choices("switch")] == ["search:level=quick:expert",
                                                          "search:level=strong:expert"]


@pytest.mark.parametrize("game, players", [("huit", 2), ("switch", 3)])
@pytest.mark.parametrize("level", list(LEVELS))
def test_a_table_starts_with_the_search_in_a_seat_and_it_plays(game: str, players: int, level: str) -> None:
    """The search sits in seat 0 and the player in the last seat, so the search moves before the page's
    first frame asks the player: its moves are in the frames."""
    api = client()
    body = {"game": game, "num_players": players, "seat": players - 1, "seed": 5,
            "opponents": [f"search-{level}"] * (players - 1)}
    response = api.post("/api/games", json=body)
    assert response.status_code == 200, response.text
    frames = response.json()["frames"]
    assert [p["label"] for p in frames[-1]["players"][:-1]] == [f"search-{level}"] * (players - 1)
    assert len(frames) >= players  # the start, then a move of each seat before the player's


@pytest.mark.parametrize(("game", "players", "rules", "reads"), [
    ("huit", 2, {}, True), ("huit", 4, {}, True), ("switch", 4, {}, True), ("huit", 3, {}, False),
    ("switch", 5, {}, False), ("huit", 4, {"hand_size": 6}, False), ("huit", 4, {"memory": True}, True),
    ("switch", 4, {"memory": True}, True), ("huit", 2, {"memory": True, "hand_size": 6}, False)])
def test_the_offered_search_reads_the_hands_at_the_tables_where_that_measured_stronger(
        game: str, players: int, rules: dict[str, int], reads: bool) -> None:
    """At a table size of its game's `GameSpec.read_tables`, under the default rules of play its reader was
    trained with, both levels deal their worlds by the shipped hand reader; elsewhere uniformly. An option
    that is no rule of play (memory) does not count (before, a memory table fell back to uniform worlds)."""
    catalogue = Catalogue({})
    table = make_game(game, {"num_players": players, **rules})
    for level in LEVELS:
        spec = catalogue.choose(f"search-{level}", table).spec
        assert spec == f"search:{'belief=learned:' if reads else ''}level={level}:expert"
    assert (players in get_spec(game).read_tables) == (reads or bool(rules))


@pytest.mark.parametrize(("game", "players", "rules", "plays_match"), [
    ("huit", 4, {}, True), ("huit", 5, {}, True), ("switch", 4, {}, True), ("switch", 3, {}, False),
    ("huit", 4, {"target_score": 100}, False)])
def test_in_match_play_the_offered_search_plays_for_the_match_where_the_table_has_an_equity(
        game: str, players: int, rules: dict[str, int], plays_match: bool) -> None:
    """B13/A12: in match play both levels value a play-out by the seat's chance to win the match (the
    table's shipped match equity, fitted under the default rules); in hand play, and where no equity fits
    the table, by the hand's win as before."""
    catalogue = Catalogue({})
    table = make_game(game, {"num_players": players, **rules})
    for level in LEVELS:
        hand, match = (catalogue.choose(f"search-{level}", table, mode).spec for mode in ("hand", "match"))
        assert "value=match" not in hand
        assert match == (hand.replace("search:", "search:value=match:", 1) if plays_match else hand)


def test_a_match_table_seats_the_search_that_plays_for_the_match() -> None:
    api = client()
    body = {"game": "huit", "num_players": 4, "seat": 3, "seed": 5, "mode": "match",
            "opponents": ["search-quick", "expert", "expert"]}
    response = api.post("/api/games", json=body)
    assert response.status_code == 200, response.text
    table = table_of(api, response.json()["id"])
    assert table.players[0].spec == "search:value=match:belief=learned:level=quick:expert"


def damaged(kind: str, folder: pathlib.Path) -> None:
    """Put a damaged ``huit-4p.json`` in `folder`: cut short, another table's, or its weights edited."""
    text = (SHIPPED / "huit-4p.json").read_text()
    if kind == "cut":
        text = text[: len(text) // 2]
    elif kind == "foreign":
        text = (SHIPPED / "huit-3p.json").read_text()
    else:
        data = json.loads(text)
        data["weights"]["b0"][0] += 0.5
        text = json.dumps(data)
    (folder / "huit-4p.json").write_text(text)


@pytest.mark.parametrize(("kind", "reason"), [
    ("cut", "not valid JSON"), ("foreign", "with 3 players, not huit with 4"), ("edited", "do not hash")])
def test_a_broken_shipped_equity_refuses_the_match_table_naming_the_file(
        kind: str, reason: str, tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A shipped equity that is there but does not load is the loader's one-line refusal naming the file,
    not a table without an equity (whose search would play for the hand's win without a word)."""
    damaged(kind, tmp_path)
    monkeypatch.setattr(match_equity, "SHIPPED", tmp_path)
    body = {"game": "huit", "num_players": 4, "seat": 3, "seed": 5, "mode": "match",
            "opponents": ["search-quick", "expert", "expert"]}
    response = client().post("/api/games", json=body)
    assert response.status_code == 400, response.text
    detail = response.json()["detail"]
    assert detail.startswith("match equity huit-4p.json: ") and reason in detail and "\n" not in detail
    assert str(tmp_path) not in detail  # the server's path is not shown (`without_paths`)


def test_a_match_table_without_an_equity_file_still_plays_for_the_hand(
        tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    damaged("edited", tmp_path)  # another size's file is broken: not this table's business
    monkeypatch.setattr(match_equity, "SHIPPED", tmp_path)
    api = client()
    body = {"game": "huit", "num_players": 5, "seat": 4, "seed": 5, "mode": "match",
            "opponents": ["search-quick", "expert", "expert", "expert"]}
    response = api.post("/api/games", json=body)
    assert response.status_code == 200, response.text
    catalogue: Catalogue = api.app.state.catalogue  # type: ignore[attr-defined]
    table = make_game("huit", {"num_players": 5})
    assert catalogue.choose("search-quick", table, "match").spec == "search:level=quick:expert"


def test_the_equity_file_is_read_once_however_many_tables_ask(
        tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`has_equity` runs at each match table the web app seats: the file is read and checked once, and a
    file replaced since (damaged here) is read again and refused as the loader refuses it."""
    (tmp_path / "huit-4p.json").write_text((SHIPPED / "huit-4p.json").read_text())
    monkeypatch.setattr(match_equity, "SHIPPED", tmp_path)
    reads: list[pathlib.Path] = []
    read = match_equity.read_json_file

    def counted(path: pathlib.Path, *args: Any) -> Any:
        reads.append(path)
        return read(path, *args)

    monkeypatch.setattr(match_equity, "read_json_file", counted)
    table = make_game("huit", {"num_players": 4})
    assert all(has_equity(table) for _ in range(5))
    assert has_equity(make_game("huit", {"num_players": 4, "target_score": 100})) is False  # other rules
    assert has_equity(make_game("huit", {"num_players": 4, "memory": True}))  # no rule of play
    assert reads == [tmp_path / "huit-4p.json"]
    damaged("edited", tmp_path)
    for _ in range(2):
        with pytest.raises(ValueError, match=r"^match equity .*huit-4p.json: its weights do not hash"):
            has_equity(table)
    assert len(reads) == 3
