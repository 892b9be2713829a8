"""Stand-ins for the table bots (bot:huit-4p, ...) while they train: untrained networks, exported as bots.

`fake_bot` writes one with `export_bot`; `shipped_folder` makes a folder of
shipped bots (the real ones copied, plus fakes for the given tables) and
points `cardlab.agents.bot_catalogue.SHIPPED_BOTS` at it for the test.
"""

from __future__ import annotations

import pathlib
import shutil
from collections.abc import Sequence
from typing import Any

import pytest
import torch
from torch import nn

from cardlab.agents import bot_catalogue
from cardlab.agents.bot import export_bot
from cardlab.envs import make_game

TABLES = (("huit", 3), ("huit", 4), ("switch", 5))
"""the fake table bots of the `table_bots` fixture (beside the real huit-2p and switch-4p)"""
REAL = ("huit-2p", "switch-4p")
"""the shipped bots' names the folder keeps (with their variants: huit-2p-match, ...)"""


def fake_bot(folder: pathlib.Path, name: str, game_id: str, players: int, seed: int = 0,
             summary: dict[str, Any] | None = None) -> pathlib.Path:
    """An untrained (seeded, random) network for a `players`-player table, as ``folder/NAME.json``."""
    game = make_game(game_id, {"num_players": players})
    generator = torch.Generator().manual_seed(seed)
    actor = nn.Sequential(nn.Linear(game.layout.size, 16), nn.Tanh(), nn.Linear(16, game.num_actions))
    with torch.no_grad():
        for parameter in actor.parameters():
            parameter.copy_(0.1 * torch.randn(parameter.shape, generator=generator))
    return export_bot(actor, folder / name, game=game, summary=summary or {"steps": 0, "note": "untrained"})


def shipped_folder(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch,
                   tables: Sequence[tuple[str, int]] = TABLES, real: bool = True) -> pathlib.Path:
    """A folder of shipped bots for this test: the real ones (if `real`) and a fake ``GAME-Np`` per table."""
    folder = tmp_path / "shipped"
    folder.mkdir()
    if real:  # the real bots of huit 2p and switch 4p: the fakes stand for the other sizes
        for path in bot_catalogue.SHIPPED_BOTS.iterdir():
            if path.name.startswith(REAL):
                shutil.copyfile(path, folder / path.name)
    for i, (game_id, players) in enumerate(tables):
        fake_bot(folder, f"{game_id}-{players}p", game_id, players, seed=i)
    monkeypatch.setattr(bot_catalogue, "SHIPPED_BOTS", folder)
    return folder


def overflowing_bot(folder: pathlib.Path, name: str, game_id: str, players: int) -> pathlib.Path:
    """A bot with finite weights whose logits are ±inf on real observations but finite on flat ones.

    Every hidden unit is ``tanh(1e4 * (x0 - x1))`` and every action weight
    ``±3e38``: on an input whose first two numbers agree (all zeros, all
    ones, all halves) the logits are 0, on one where they differ the sixteen
    products add up past float32's largest number.
    """
    game = make_game(game_id, {"num_players": players})
    first, last = nn.Linear(game.layout.size, 16), nn.Linear(16, game.num_actions)
    actor = nn.Sequential(first, nn.Tanh(), last)
    with torch.no_grad():
        for parameter in actor.parameters():
            parameter.zero_()
        first.weight[:, 0], first.weight[:, 1] = 1e4, -1e4
        signs = torch.where(torch.arange(game.num_actions) % 2 == 0, 1.0, -1.0)
        last.weight.copy_(3e38 * signs[:, None].expand(game.num_actions, 16))
    return export_bot(actor, folder / name, game=game, summary={"steps": 0, "note": "overflows"})
