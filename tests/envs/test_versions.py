"""The envs are v1; the v0 modules warn and give the v1 env."""

from __future__ import annotations

import importlib
import sys

import pytest

from cardlab.envs import get_spec


@pytest.mark.parametrize("game", ["huit", "switch"])
def test_v0_warns_and_gives_the_v1_env(game: str) -> None:
    sys.modules.pop(f"cardlab.envs.{game}_v0", None)
    with pytest.warns(DeprecationWarning, match=f"use cardlab.envs.{game}_v1"):
        old = importlib.import_module(f"cardlab.envs.{game}_v0")
    new = importlib.import_module(f"cardlab.envs.{game}_v1")
    assert old.raw_env is new.raw_env and old.env is new.env
    assert get_spec(game).env_name == f"{game}_v1" == new.raw_env.metadata["name"]
    assert "Version history" in (new.__doc__ or "") and "- v1" in (new.__doc__ or "")
