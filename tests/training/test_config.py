"""Training configs: the shipped files load, and every kind of mistake is named by its key path."""

from __future__ import annotations

import dataclasses
import pathlib
from typing import Any

import pytest
import yaml

from cardlab.training.arena.single_seat import make_game_env
from cardlab.training.harness.config import (
    TrainConfig,
    config_from_dict,
    config_to_dict,
    load_config,
    save_config,
    validate_config,
)

CONFIGS = pathlib.Path(__file__).resolve().parents[2] / "configs"
SHIPPED = sorted(p.name for p in CONFIGS.glob("*.yaml") if not p.name.startswith("teach_"))
"""the training configs (`teach_*.yaml` are `cardlab teach`'s, loaded in test_expert_iteration)"""
TABLES = sorted(p.name for p in (CONFIGS / "tables").glob("*_*p.yaml"))
"""the table bots' configs, each extending configs/tables/base.yaml"""


def small(**changes: Any) -> dict[str, Any]:
    """A valid config dict (random opponents) with top-level `changes`."""
    data: dict[str, Any] = {
        "name": "t", "game": "huit", "num_players": 2, "opponents": ["random"],
        "ppo": {"n_steps": 64, "batch_size": 32}, "eval": {"opponents": ["random"]},
    }
    data.update(changes)
    return data


def error(data: Any) -> str:
    with pytest.raises(ValueError) as info:
        config_from_dict(data)
    return str(info.value)


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_configs_load(name: str) -> None:
    cfg = load_config(CONFIGS / name)
    assert cfg.name == name.removesuffix(".yaml")
    assert cfg.game == name.split("_")[0]
    assert cfg.device == "cpu"


def test_quick_configs_are_tiny_and_main_configs_are_not() -> None:
    for game in ("huit", "switch"):
        quick, main = load_config(CONFIGS / f"{game}_quick.yaml"), load_config(CONFIGS / f"{game}_ppo.yaml")
        assert quick.total_timesteps <= 10_000 < main.total_timesteps
        assert main.self_play.enabled and "expert" in main.eval.opponents
    assert load_config(CONFIGS / "huit_ppo.yaml").num_players == 2
    assert load_config(CONFIGS / "switch_ppo.yaml").num_players == 4


def test_defaults_fill_missing_keys_and_round_trip(tmp_path: pathlib.Path) -> None:
    cfg = config_from_dict(small(opponents=["random", {"spec": "greedy", "weight": 3}]))
    assert cfg.ppo.gamma == TrainConfig().ppo.gamma
    assert [(o.spec, o.weight) for o in cfg.opponents] == [("random", 1.0), ("greedy", 3.0)]
    assert config_from_dict(config_to_dict(cfg)) == cfg
    save_config(cfg, tmp_path / "c.yaml")
    assert load_config(tmp_path / "c.yaml") == cfg


def test_the_memory_of_the_hand_is_a_rules_key() -> None:
    """`rules: {memory: true}` reaches the env the trainer builds: its observation gains `drew_on`."""
    cfg = config_from_dict(small(game="switch", num_players=4, rules={"memory": True}))
    env = make_game_env(cfg.game, cfg.num_players, cfg.rules)
    assert env.layout.slices["drew_on"] == slice(175, 187)


def test_scientific_notation_without_a_dot_is_a_float(tmp_path: pathlib.Path) -> None:
    # YAML 1.1 (PyYAML) reads 3e-4 as a string; configs are written that way all the time.
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(small()).replace("ppo:", "ppo:\n  learning_rate: 3e-4"))
    assert load_config(path).ppo.learning_rate == pytest.approx(3e-4)


@pytest.mark.parametrize(("data", "expected"), [
    (small(seeed=1), ["unknown config key(s) seeed; accepted: ", "seed"]),
    (small(ppo={"learning_ratee": 0.1}), ["unknown config key(s) ppo.learning_ratee; accepted: ",
                                           "learning_rate", "(the keys of ppo)"]),
    (small(eval={"hands": 10, "oponents": ["random"]}), ["eval.oponents", "opponents"]),
    (small(opponents=[{"spec": "random", "wieght": 2}]), ["opponents[0].wieght", "weight"]),
])
def test_unknown_keys_are_named_with_the_accepted_ones(data: dict[str, Any], expected: list[str]) -> None:
    message = error(data)
    for part in expected:
        assert part in message


@pytest.mark.parametrize(("data", "expected"), [
    (small(ppo={"n_steps": "many"}), ["ppo.n_steps", "whole number"]),
    (small(ppo={"n_steps": 64.0, "batch_size": 32}), ["ppo.n_steps", "whole number"]),
    (small(ppo={"learning_rate": "fast"}), ["ppo.learning_rate", "number"]),
    (small(self_play={"enabled": "yes"}), ["self_play.enabled", "true or false"]),
    (small(policy={"net_arch": 64}), ["policy.net_arch", "list"]),
    (small(policy={"net_arch": [64, "wide"]}), ["policy.net_arch[1]", "whole number"]),
    (small(rules=["hand_size"]), ["rules", "mapping"]),
    (small(ppo=3), ["ppo", "mapping"]),
    (small(num_players=True), ["num_players", "whole number"]),
    ([1, 2], ["config", "mapping"]),
])
def test_wrong_types_are_named(data: Any, expected: list[str]) -> None:
    message = error(data)
    for part in expected:
        assert part in message


@pytest.mark.parametrize(("data", "expected"), [
    (small(ppo={"learning_rate": -1.0, "n_steps": 64, "batch_size": 32}), ["ppo.learning_rate", "> 0"]),
    (small(ppo={"gamma": 1.5, "n_steps": 64, "batch_size": 32}), ["ppo.gamma", "(0, 1]"]),
    (small(ppo={"n_steps": 64, "batch_size": 1000}), ["ppo.batch_size", "n_steps * num_envs = 128"]),
    (small(self_play={"share": 1.5}), ["self_play.share", "between 0 and 1"]),
    (small(self_play={"pool_size": 0}), ["self_play.pool_size", ">= 1"]),
    (small(policy={"activation": "gelu"}), ["policy.activation", "'tanh', 'relu'"]),
    (small(policy={"net_arch": [64, 0]}), ["policy.net_arch[1]", ">= 1"]),
    (small(num_envs=0), ["num_envs", ">= 1"]),
    (small(max_minutes=-5), ["max_minutes", ">= 0"]),
    (small(max_minutes=float("nan")), ["max_minutes", ">= 0"]),
    (small(reward="shaped"), ["reward", "'win', 'points'"]),
    (small(vec_env="ray"), ["vec_env", "'subproc', 'dummy'"]),
    (small(device="cuda"), ["device", "'cpu'"]),
    (small(name="my run/1"), ["name", "letters, digits"]),
    (small(opponents=[]), ["opponents", "at least one"]),
    (small(opponents=[{"spec": "random", "weight": 0}]), ["opponents[0].weight", "> 0"]),
    (small(eval={"hands": 0, "opponents": ["random"]}), ["eval.hands", ">= 1"]),
])
def test_bad_values_are_named_with_what_is_accepted(data: dict[str, Any], expected: list[str]) -> None:
    message = error(data)
    for part in expected:
        assert part in message


@pytest.mark.parametrize(("data", "expected"), [
    (small(opponents=[]), "opponents=[] is empty; accepted: a list of at least one agent spec"),
    (small(opponents=[{"spec": "random", "weight": 0}]),
     "opponents[0].weight=0.0 is out of range; accepted: a value > 0 and <= 1,000,000"),
    (small(ppo={"n_steps": 64, "batch_size": 1000}),
     "ppo.batch_size=1000 is out of range; accepted: 2 to ppo.n_steps * num_envs = 128"),
    (small(eval={"opponents": []}),
     "eval.opponents=[] is empty; accepted: a list of at least one agent spec"),
])
def test_bad_values_use_the_one_refusal_wording(data: dict[str, Any], expected: str) -> None:
    """A value out of range or an empty list: ``KEY=VALUE is PROBLEM; accepted: WHAT`` (`refusal`)."""
    assert error(data) == expected


def test_bad_game_is_named() -> None:
    message = error(small(game="poker"))
    assert "game" in message and "'switch', 'huit'" in message


@pytest.mark.parametrize(("data", "expected"), [
    (small(rules={"hand_sise": 5}), ["rules.hand_sise", "for huit", "hand_size", "queen_skips_each"]),
    (small(rules={"match_rank": False}), ["rules.match_rank", "for huit"]),  # a Switch option
    (small(rules={"reward": "points"}), ["rules.reward", "accepted"]),  # an env option, not a rule
    (small(rules={"hand_size": 99}), ["rules", "hand_size=99", "out of range"]),
    (small(rules={"queen_skips_each": 1}), ["rules", "queen_skips_each", "true or false"]),
    (small(rules={"num_players": 3}), ["rules.num_players", "top-level key num_players"]),
    (small(num_players=9), ["num_players", "2 to 6"]),
    (small(game="switch", num_players=11), ["num_players", "2 to 10"]),
])
def test_bad_rule_options_are_named(data: dict[str, Any], expected: list[str]) -> None:
    message = error(data)
    for part in expected:
        assert part in message


def test_switch_rules_are_checked_against_switch() -> None:
    cfg = config_from_dict(small(game="switch", num_players=4, rules={"match_rank": False, "num_decks": 2}))
    assert cfg.rules == {"match_rank": False, "num_decks": 2}


@pytest.mark.parametrize(("data", "expected"), [
    (small(opponents=["random", "grandmaster"]),
     ["opponents[1].spec", "grandmaster", "use random, ", "expert", "bot:PATH"]),
    (small(opponents=[{"spec": "bot:/no/such/bot"}]),
     ["opponents[0].spec", "no such bot file or run folder"]),
    (small(eval={"opponents": ["random", ""]}), ["eval.opponents[1]", "non-empty"]),
])
def test_bad_agent_specs_are_named(data: dict[str, Any], expected: list[str]) -> None:
    message = error(data)
    for part in expected:
        assert part in message


def test_config_built_in_python_is_validated_too() -> None:
    cfg = config_from_dict(small())
    assert validate_config(cfg) == cfg
    with pytest.raises(ValueError, match="num_envs"):
        validate_config(dataclasses.replace(cfg, num_envs=0))
    with pytest.raises(ValueError, match=r"ppo\.clip_range"):
        validate_config(dataclasses.replace(cfg, ppo=dataclasses.replace(cfg.ppo, clip_range=0.0)))


def test_a_config_file_must_name_its_game(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "c.yaml"
    for text in ("", "# a comment only\n", "---\n"):
        path.write_text(text)
        with pytest.raises(ValueError, match="is empty: a config must at least name its game"):
            load_config(path)
    path.write_text("name: no_game\nseed: 2\n")
    with pytest.raises(ValueError, match="does not name its game: add the key game"):
        load_config(path)
    path.write_text("game: switch\nnum_players: 4\n")
    assert load_config(path).game == "switch"  # the game alone is enough: the rest has defaults


def test_unreadable_files_raise_value_errors(tmp_path: pathlib.Path) -> None:
    with pytest.raises(ValueError, match=r"missing\.yaml: file not found \(a config is a YAML file\)$"):
        load_config(tmp_path / "missing.yaml")
    (tmp_path / "folder.yaml").mkdir()  # `missing_file`'s line, as a bot's or a suite's folder
    with pytest.raises(ValueError, match=r"^config file \S*folder\.yaml: is a folder, not a file; give the "
                                         r"path of the \.yaml file \(a config is a YAML file\)$"):
        load_config(tmp_path / "folder.yaml")
    bad = tmp_path / "bad.yaml"  # `refused_file`'s line: what is wrong (PyYAML's words), and what is accepted
    bad.write_text("ppo: [unclosed\n")
    with pytest.raises(ValueError, match=r"^config file \S*bad\.yaml: is not valid YAML \(.* in "
                                         r"\"\S*bad\.yaml\", line 1, .*\); a config is a YAML file of key: "
                                         r"value lines$"):
        load_config(bad)
    bad.write_bytes(b"\xff\xfe\x00name: x")
    with pytest.raises(ValueError, match=r"^config file \S*bad\.yaml: is not UTF-8 text \(byte 0\); a config "
                                         r"is a YAML file of UTF-8 text$"):
        load_config(bad)


@pytest.mark.parametrize("name", TABLES)
def test_table_configs_are_the_base_recipe_with_their_table(name: str) -> None:
    cfg = load_config(CONFIGS / "tables" / name)
    base = yaml.safe_load((CONFIGS / "tables" / "base.yaml").read_text(encoding="utf-8"))
    game, players = name.removesuffix("p.yaml").split("_")
    assert (cfg.game, cfg.num_players, cfg.name) == (game, int(players), name.removesuffix(".yaml"))
    assert (cfg.trainer, cfg.max_minutes) == (base["trainer"], base["max_minutes"])
    assert cfg.eval.final_hands == 4000
    assert cfg.ppo.learning_rate == base["ppo"]["learning_rate"]


def test_extends_merges_sections_key_by_key_and_replaces_lists(tmp_path: pathlib.Path) -> None:
    (tmp_path / "base.yaml").write_text(yaml.safe_dump(small(ppo={"n_steps": 64, "batch_size": 32,
                                                                  "learning_rate": 0.01})))
    (tmp_path / "run.yaml").write_text("extends: base.yaml\nname: child\nppo: {batch_size: 16}\n"
                                       "eval: {opponents: [greedy]}\n")
    cfg = load_config(tmp_path / "run.yaml")
    assert (cfg.name, cfg.ppo.n_steps, cfg.ppo.batch_size, cfg.ppo.learning_rate) == ("child", 64, 16, 0.01)
    assert cfg.eval.opponents == ["greedy"]


def test_extends_refuses_cycles_missing_bases_and_non_strings(tmp_path: pathlib.Path) -> None:
    (tmp_path / "a.yaml").write_text("extends: b.yaml\ngame: huit\n")
    (tmp_path / "b.yaml").write_text("extends: a.yaml\n")
    with pytest.raises(ValueError, match="cycle"):
        load_config(tmp_path / "a.yaml")
    (tmp_path / "c.yaml").write_text("extends: nowhere.yaml\ngame: huit\n")
    with pytest.raises(ValueError, match=r"nowhere\.yaml: file not found"):
        load_config(tmp_path / "c.yaml")
    (tmp_path / "d.yaml").write_text("extends: [a.yaml]\ngame: huit\n")
    with pytest.raises(ValueError, match="extends must name a base config file"):
        load_config(tmp_path / "d.yaml")


@pytest.mark.parametrize(("name", "what", "command"), [
    ("sweeps/huit_quick_sweep.yaml", "a sweep file (key base)", "cardlab sweep"),
    ("sweeps/huit_population.yaml", "a sweep file (key base)", "cardlab sweep"),
    ("teach_huit_2p.yaml", "a teach config (key teacher)", "cardlab teach"),
    ("readers/huit_2p.yaml", "a hand reader's config (key positions)", "cardlab read-hands"),
    ("equity/huit_4p.yaml", "a match equity config (key holdout_hands)", "cardlab match-equity"),
])
def test_another_commands_file_names_that_command(name: str, what: str, command: str) -> None:
    """A shipped file of another command given as a training config says which command reads it."""
    path = CONFIGS / name
    with pytest.raises(ValueError, match=r"^config file \S+ is ") as err:
        load_config(path)
    assert str(err.value) == (f"config file {path} is {what}, not a training config: run it with "
                              f"`{command} {path}`; a training config is e.g. configs/huit_ppo.yaml")
