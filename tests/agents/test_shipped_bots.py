"""The bots shipped in the package: bot:huit-2p, bot:switch-4p and the self-play ones, loadable by name,
with their measured strength against the expert in their metadata and in the README."""

from __future__ import annotations

import json
import pathlib

import pytest

from cardlab.agents.base import SHIPPED_BOTS, make_agent, shipped_bots, spec_names
from cardlab.agents.bot import BotAgent
from cardlab.envs import make_game
from cardlab.training.ship import SHIPPED

ROOT = pathlib.Path(__file__).resolve().parents[2]
TABLES = {"huit-2p": ("huit", 2), "switch-4p": ("switch", 4), "huit-2p-selfplay": ("huit", 2),
          "huit-2p-match": ("huit", 2), "switch-4p-selfplay": ("switch", 4)}


def test_every_shipped_config_has_its_bot() -> None:
    assert set(shipped_bots()) == {f"bot:{name}" for name in SHIPPED} == {f"bot:{name}" for name in TABLES}
    for name in SHIPPED:
        assert (ROOT / SHIPPED[name]).is_file()


@pytest.mark.parametrize("name", sorted(TABLES))
def test_shipped_bot_loads_by_name(name: str) -> None:
    game_id, players = TABLES[name]
    game = make_game(game_id, num_players=players)
    bot = make_agent(f"bot:{name}", game, seed=0)
    assert isinstance(bot, BotAgent)
    assert f"bot:{name}" in spec_names(game)
    assert f"bot:{name}" not in spec_names(make_game(game_id, num_players=3))
    for suffix in (".json", ".safetensors"):
        assert (SHIPPED_BOTS / f"{name}{suffix}").stat().st_size < 1_000_000  # small enough to ship
    with pytest.raises(ValueError, match="trained for"):
        make_agent(f"bot:{name}", make_game(game_id, num_players=3))


@pytest.mark.parametrize("name", sorted(TABLES))
def test_measured_strength_is_in_the_metadata_and_the_readme(name: str) -> None:
    meta = json.loads((SHIPPED_BOTS / f"{name}.json").read_text(encoding="utf-8"))
    shipped = meta["summary"]["shipped"]
    low, high = shipped["ci95"]
    assert shipped["name"] == name and shipped["opponent"] == "expert" and shipped["hands"] >= 2000
    assert low < shipped["win_rate"] < high
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    row = f"| `bot:{name}` |"
    assert row in readme, f"the README's table of shipped bots lacks {name}"
    line = next(line for line in readme.splitlines() if line.startswith(row))
    assert f"{shipped['win_rate']:.3f}" in line and f"[{low:.3f}, {high:.3f}]" in line
    paired_low, paired_high = shipped["paired_ci95"]  # clustered by deal: narrower than Wilson's here
    assert low < paired_low < shipped["win_rate"] < paired_high < high
    cells = f"| {shipped['win_rate']:.3f} | [{paired_low:.3f}, {paired_high:.3f}] | [{low:.3f}, {high:.3f}] |"
    assert cells in line


def test_a_path_still_works_and_unknown_names_are_paths() -> None:
    game = make_game("huit", num_players=2)
    assert isinstance(make_agent(f"bot:{SHIPPED_BOTS / 'huit-2p.json'}", game), BotAgent)
    with pytest.raises(ValueError, match=r"no shipped bot named 'huit-9p': did you mean bot:huit-2p\?"):
        make_agent("bot:huit-9p", game)
    with pytest.raises(ValueError, match=r"bot huit-9p\.json: file not found"):
        make_agent("bot:huit-9p.json", game)
