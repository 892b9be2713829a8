"""The header of every run config (name, seed, game, num_players, rules) is declared once, in `RunHeader`,
and checked once, by `check_header`: each config opens with it and refuses a bad header value alike."""

from __future__ import annotations

import dataclasses
import pathlib
from collections.abc import Callable
from typing import Any

import pytest

from cardlab.envs.huit.rules import HuitRules
from cardlab.training.data.match_equity import EquityConfig, load_equity_config, validate_equity
from cardlab.training.data.reader import ReaderConfig, load_reader_config, validate_reader
from cardlab.training.harness.config import TrainConfig, load_config, validate_config
from cardlab.training.harness.config_tables import RunHeader, check_header, config_table
from cardlab.training.trainers.expert_iteration import TeachConfig, load_teach_config, validate_teach

HEADER = [f.name for f in dataclasses.fields(RunHeader)]
CONFIGS: list[tuple[Any, Callable[[Any], Any]]] = [
    (TrainConfig(), validate_config), (ReaderConfig(), validate_reader), (EquityConfig(), validate_equity),
    (TeachConfig(), validate_teach)]


def test_every_run_config_opens_with_the_one_header() -> None:
    assert HEADER == ["name", "seed", "game", "num_players", "rules"]
    for cfg, _ in CONFIGS:
        assert isinstance(cfg, RunHeader)
        assert [f.name for f in dataclasses.fields(cfg)][:len(HEADER)] == HEADER
        header = {f.name: f.metadata for f in dataclasses.fields(RunHeader)}
        assert {f.name: f.metadata for f in dataclasses.fields(cfg) if f.name in HEADER} == header


CONFIGS_DIR = pathlib.Path(__file__).resolve().parents[2] / "configs"
RUN_CONFIGS = sorted(str(p.relative_to(CONFIGS_DIR)) for p in CONFIGS_DIR.rglob("*.yaml")
                     if p.parent.name != "sweeps" and p.name != "base.yaml")
"""every run config shipped (the sweeps are sweep files; tables/base.yaml is the tables' shared recipe)"""


def loader(name: str) -> Callable[[pathlib.Path], RunHeader]:
    """The loader of a shipped config, by where it lies."""
    kinds = {"readers": load_reader_config, "equity": load_equity_config}
    return kinds.get(name.partition("/")[0], load_teach_config if name.startswith("teach_") else load_config)


def test_every_shipped_run_config_loads_with_the_header() -> None:
    assert len(RUN_CONFIGS) >= 30
    for name in RUN_CONFIGS:
        cfg = loader(name)(CONFIGS_DIR / name)
        assert isinstance(cfg, RunHeader) and cfg.game in name, name


def test_the_configs_keep_their_own_defaults() -> None:
    """`header_default`: the run names and table sizes of before (a YAML file without them means the same)."""
    assert [(cfg.name, cfg.num_players) for cfg, _ in CONFIGS] == [
        ("cardlab", 2), ("reader", 4), ("equity", 4), ("teach", 2)]


@pytest.mark.parametrize(("changes", "expected"), [
    ({"game": "chess"}, "game='chess' is not one of the choices; accepted: 'switch', 'huit'"),
    ({"name": "a b"}, "name='a b' is not a run name; accepted: letters, digits"),
    ({"seed": -1}, "seed=-1 is out of range; accepted: a value >= 0 and <= 2,147,483,647"),
    ({"num_players": 99}, "num_players: "),
    ({"rules": {"wild": 3}}, "unknown rule option(s) rules.wild for huit; accepted: hand_size,"),
    ({"rules": {"num_players": 3}}, "rules.num_players=3 is not a rule option of a config; accepted: the "
                                    "top-level key num_players"),
    ({"rules": {"target_score": 0}}, "rules: rule option target_score=0 is out of range; accepted: 1 to"),
])
def test_a_bad_header_value_is_refused_alike_by_every_config(changes: dict[str, Any], expected: str) -> None:
    messages = set()
    for cfg, validate in CONFIGS:
        with pytest.raises(ValueError) as info:
            validate(dataclasses.replace(cfg, **changes))
        messages.add(str(info.value))
    assert len(messages) == 1, messages
    (message,) = messages
    assert message.startswith(expected) and "\n" not in message


def test_a_config_that_needs_more_of_its_game_says_what() -> None:
    with pytest.raises(ValueError, match=r"^game='huit' is not a game this run can use; accepted: a game "):
        check_header(RunHeader(), "a game with a made-up engine", lambda spec: False)


def test_config_table_still_works_with_a_deprecation_warning() -> None:
    with pytest.warns(DeprecationWarning, match="check_header"):
        game = config_table("t", "huit", 3, {"target_score": 50})
    assert game.num_players == 3 and isinstance(game.rules, HuitRules) and game.rules.target_score == 50
