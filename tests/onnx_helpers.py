"""What the ONNX bot tests share: a tiny deal suite for `cardlab bench` (a few deals, so a bench is quick),
and a seat at a web table."""

from __future__ import annotations

import json
import pathlib

from cardlab.evaluation.suites import SuitePlan, make_suite


def tiny_suite(folder: pathlib.Path, game: str, players: int, deals: int = 4) -> pathlib.Path:
    """A suite of `deals` hands of `game` at a `players` table, written as ``folder/tiny.json``."""
    path = folder / "tiny.json"
    path.write_text(json.dumps(make_suite(SuitePlan("tiny", game, players, "hand", deals), 0).to_dict()))
    return path


def seated(bot: pathlib.Path, players: int = 2) -> None:
    """The bot, given to the web app as `cardlab serve --bot` gives it, sits at a Huit table of its size."""
    from fastapi.testclient import TestClient

    from cardlab.serve.app import Settings, create_app, named_bots

    bots = named_bots([bot])
    (name,) = bots
    api = TestClient(create_app(Settings(bots=bots)), base_url="http://127.0.0.1")
    body = {"game": "huit", "num_players": players, "seat": 0, "opponents": [name] * (players - 1), "seed": 3}
    response = api.post("/api/games", json=body)
    assert response.status_code == 200, response.text
    assert response.json()["frames"][-1]["players"][1]["label"] == name
