"""A module the web app must never import (a MODULE:FACTORY spec sent to it names this one)."""

from __future__ import annotations

from typing import Any


def make(game: Any, seed: int | None = None) -> Any:
    raise AssertionError("the web app imported and called a MODULE:FACTORY spec")
