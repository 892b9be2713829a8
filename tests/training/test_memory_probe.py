"""`benchmarks/memory_probe.py` counts the moves a bot changes when its memory of the hand is blanked: none
for a network that does not read the `drew_on` field, some for one that does."""

from __future__ import annotations

import pathlib

import pytest
import torch
from torch import nn

from cardlab.agents.bot import export_bot
from cardlab.envs import make_game
from tests.benchmarks import BENCHMARKS, load_benchmark


def linear_bot(folder: pathlib.Path, reads_memory: bool) -> pathlib.Path:
    """A one-layer network for Huit 3p with memory: random weights, its drew_on columns zero or big."""
    game = make_game("huit", {"num_players": 3, "memory": True})
    layer = nn.Linear(game.layout.size, game.num_actions)
    generator = torch.Generator().manual_seed(0)
    memory = game.layout.slices["drew_on"]
    with torch.no_grad():
        layer.weight.copy_(torch.randn(layer.weight.shape, generator=generator))
        layer.bias.zero_()
        layer.weight[:, memory] = 50 * layer.weight[:, memory] if reads_memory else 0
    return export_bot(nn.Sequential(layer), folder / f"reads_{reads_memory}", game=game, summary={"steps": 0})


@pytest.mark.parametrize("reads_memory", [False, True])
def test_the_probe_counts_the_moves_the_memory_changes(
        tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch, reads_memory: bool) -> None:
    bench = load_benchmark("memory_probe", monkeypatch)
    decisions, remembered, changed = bench.probe(str(linear_bot(tmp_path, reads_memory)), 200, 32, 0)
    assert decisions > 1000 and 0 < remembered < decisions  # seats drew, and some memory was shown
    assert (changed > 0) == reads_memory


def test_a_bot_without_memory_is_refused(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bench = load_benchmark("memory_probe", monkeypatch)
    with pytest.raises(SystemExit, match=r"trained without the memory option \(rules: memory: true\)"):
        bench.probe(str(BENCHMARKS.parent / "agents" / "bots" / "huit-4p.json"), 1, 1, 0)
