"""The bots shipped in the package: one per shipped config (bot:huit-2p, bot:switch-4p, the self-play ones,
a bot per table size), loadable by name, with their measured strength in their metadata and the docs."""

from __future__ import annotations

import json
import pathlib

import pytest

from cardlab.agents.agent_spec import make_agent, spec_names
from cardlab.agents.bot import BotAgent
from cardlab.agents.bot_catalogue import SHIPPED_BOTS, shipped_bots
from cardlab.envs import make_game
from cardlab.training.harness.config import load_config
from cardlab.training.trainers.expert_iteration import load_teach_config
from cardlab.training.trainers.ship import OPPONENT, SHIPPED, bots_table, is_teach_config, measurements

ROOT = pathlib.Path(__file__).resolve().parents[2]
BOTS = sorted(spec[4:] for spec in shipped_bots())


def table_of(name: str) -> tuple[str, int]:
    meta = json.loads((SHIPPED_BOTS / f"{name}.json").read_text(encoding="utf-8"))
    return meta["game"], meta["num_players"]


def test_every_shipped_bot_has_its_config_and_every_table_size_one() -> None:
    """A bot file comes from a config of `SHIPPED` (the table bots arrive as their runs finish)."""
    assert {"huit-2p", "switch-4p"} <= set(BOTS) <= set(SHIPPED)
    sizes = set()
    for name, path in SHIPPED.items():
        cfg = load_teach_config(ROOT / path) if is_teach_config(ROOT / path) else load_config(ROOT / path)
        game, players = name.split("-")[:2]
        assert (cfg.game, f"{cfg.num_players}p") == (game, players), name
        sizes.add((cfg.game, cfg.num_players))
    assert sizes == {("huit", n) for n in range(2, 7)} | {("switch", n) for n in (4, 5, 6)}


@pytest.mark.parametrize("name", BOTS)
def test_shipped_bot_loads_by_name(name: str) -> None:
    game_id, players = table_of(name)
    game = make_game(game_id, num_players=players)
    bot = make_agent(f"bot:{name}", game, seed=0)
    assert isinstance(bot, BotAgent)
    assert f"bot:{name}" in spec_names(game)
    other = make_game(game_id, num_players=3 if players != 3 else 4)
    assert f"bot:{name}" not in spec_names(other)
    for suffix in (".json", ".safetensors"):
        assert (SHIPPED_BOTS / f"{name}{suffix}").stat().st_size < 1_000_000  # small enough to ship
    with pytest.raises(ValueError, match="trained for"):
        make_agent(f"bot:{name}", other)


@pytest.mark.parametrize("name", BOTS)
def test_measured_strength_is_in_the_metadata_and_the_docs(name: str) -> None:
    meta = json.loads((SHIPPED_BOTS / f"{name}.json").read_text(encoding="utf-8"))
    shipped = meta["summary"]["shipped"]
    low, high = shipped["ci95"]
    assert shipped["name"] == name and shipped["opponent"] == OPPONENT and shipped["hands"] >= 2000
    paired_low, paired_high = shipped["paired_ci95"]  # clustered by deal: narrower than Wilson's here
    assert low < paired_low < shipped["win_rate"] < paired_high < high
    assert measurements(shipped)[OPPONENT]["win_rate"] == shipped["win_rate"]
    row = f"| `bot:{name}` |"
    for page, brief in (("README.md", True), ("docs/results.md", False)):
        text, table = (ROOT / page).read_text(encoding="utf-8"), bots_table(brief=brief)
        line = next((line for line in text.splitlines() if line.startswith(row) and line in table), None)
        assert line is not None, f"{page}: no row of {name} in the shipped bots' table"
        assert f"{shipped['win_rate']:.3f}" in line and f"[{paired_low:.3f}, {paired_high:.3f}]" in line


def test_a_path_still_works_and_unknown_names_are_paths() -> None:
    game = make_game("huit", num_players=2)
    assert isinstance(make_agent(f"bot:{SHIPPED_BOTS / 'huit-2p.json'}", game), BotAgent)
    with pytest.raises(ValueError, match=r"no shipped bot named 'huit-2': did you mean bot:huit-2p\?"):
        make_agent("bot:huit-2", game)
    with pytest.raises(ValueError, match=r"bot huit-9p\.json: file not found"):
        make_agent("bot:huit-9p.json", game)
