"""What the ONNX bot tests share: a tiny deal suite for `cardlab bench` (a few deals, so a bench is quick)."""

from __future__ import annotations

import json
import pathlib

from cardlab.evaluation.suites import SuitePlan, make_suite


def tiny_suite(folder: pathlib.Path, game: str, players: int, deals: int = 4) -> pathlib.Path:
    """A suite of `deals` hands of `game` at a `players` table, written as ``folder/tiny.json``."""
    path = folder / "tiny.json"
    path.write_text(json.dumps(make_suite(SuitePlan("tiny", game, players, "hand", deals), 0).to_dict()))
    return path
