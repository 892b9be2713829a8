"""Bot files: an exported MaskablePPO actor plays exactly like the SB3 policy, and
every kind of wrong or damaged file is refused with a ValueError that says which."""

from __future__ import annotations

import json
import pathlib
from typing import Any

import gymnasium
import numpy as np
import pytest
import torch
from safetensors.torch import load_file, save_file

from cardlab.agents.base import RandomAgent, make_agent
from cardlab.agents.bot import BotAgent, bot_paths, export_bot, load_bot
from cardlab.envs import env_class
from cardlab.envs import huit_v0, switch_v0

MaskablePPO = pytest.importorskip("sb3_contrib").MaskablePPO


class SpacesOnly(gymnasium.Env):
    """The smallest env MaskablePPO accepts: just the game's spaces."""

    def __init__(self, obs_space: gymnasium.spaces.Box, num_actions: int) -> None:
        self.observation_space = obs_space
        self.action_space = gymnasium.spaces.Discrete(num_actions)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        return np.zeros(self.observation_space.shape, np.float32), {}

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict]:
        return np.zeros(self.observation_space.shape, np.float32), 0.0, True, False, {}

    def action_masks(self) -> np.ndarray:
        return np.ones(self.action_space.n, dtype=bool)


def make_policy(env: Any, net_arch: list[int], seed: int, activation: type[torch.nn.Module] = torch.nn.Tanh) -> Any:
    """An untrained MaskablePPO policy with random (not near-zero) weights, so argmaxes differ."""
    raw = env.unwrapped
    space = raw.observation_space(raw.possible_agents[0])["observation"]
    model = MaskablePPO(
        "MlpPolicy", SpacesOnly(space, raw.NUM_ACTIONS), n_steps=8, batch_size=8, device="cpu",
        policy_kwargs={"net_arch": net_arch, "activation_fn": activation},
    )
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in model.policy.parameters():
            p.copy_(torch.randn(p.shape, generator=gen) * 0.5)
    return model.policy


def collect(env: Any, decisions: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Observations and masks of the players to move in seeded random play."""
    agents = [RandomAgent(env, seed + i) for i in range(env.unwrapped.rules.num_players)]
    obs, masks = [], []
    hand = 0
    while len(obs) < decisions:
        env.reset(seed=seed + hand)
        hand += 1
        for name in env.agent_iter():
            o, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            obs.append(o["observation"])
            masks.append(o["action_mask"])
            env.step(agents[env.unwrapped.agent_seat[name]].act(o))
    return np.array(obs[:decisions]), np.array(masks[:decisions])


GAMES = {"switch": (switch_v0, {"num_players": 3, "hand_size": 5}), "huit": (huit_v0, {"num_players": 2})}


@pytest.fixture(scope="module", params=sorted(GAMES))
def exported(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    game = request.param
    module, rules = GAMES[game]
    env = module.env(**rules)
    policy = make_policy(env, [32, 16], seed=1)
    path = export_bot(policy, tmp_path_factory.mktemp(game) / "bot", game=game, rules=rules,
                      num_players=rules["num_players"], summary={"timesteps": 0, "note": "untrained"})
    return {"game": game, "module": module, "rules": rules, "env": env, "policy": policy, "path": path}


def test_export_writes_metadata_and_weights(exported: dict[str, Any]) -> None:
    meta_path, weights_path = bot_paths(exported["path"])
    assert exported["path"] == meta_path and weights_path.is_file()
    meta = json.loads(meta_path.read_text())
    raw = exported["env"].unwrapped
    assert meta["game"] == exported["game"]
    assert meta["rules"] == raw.rules.to_dict()  # all options stored, not only the ones given
    assert meta["num_players"] == exported["rules"]["num_players"]
    assert meta["observation"] == {"version": 1, "size": raw.layout.size}
    assert meta["num_actions"] == raw.NUM_ACTIONS
    assert meta["network"]["layer_sizes"] == [raw.layout.size, 32, 16, raw.NUM_ACTIONS]
    assert meta["network"]["activation"] == "tanh"
    assert meta["summary"] == {"timesteps": 0, "note": "untrained"}
    assert len(meta["weights"]["sha256"]) == 64


def test_bot_plays_the_sb3_policys_deterministic_masked_actions(exported: dict[str, Any]) -> None:
    env = exported["env"]
    obs, masks = collect(env, 400, seed=7)
    expected, _ = exported["policy"].predict(obs, deterministic=True, action_masks=masks.astype(bool))
    bot = load_bot(exported["path"], game=env, seed=0)
    got = np.array([bot.act({"observation": o, "action_mask": m}) for o, m in zip(obs, masks)])
    assert isinstance(bot, BotAgent)
    assert (masks[np.arange(len(got)), got] == 1).all()
    np.testing.assert_array_equal(got, expected)
    # The masks matter: unmasked, the policy would often pick an illegal action.
    assert (masks[np.arange(len(obs)), bot.logits(obs).argmax(axis=1)] == 0).any()


def test_make_agent_routes_bot_specs(exported: dict[str, Any]) -> None:
    agent = make_agent(f"bot:{exported['path']}", exported["env"], seed=3)
    assert isinstance(agent, BotAgent)
    # Either file of the pair, or the name without suffix, names the bot.
    stem = exported["path"].with_suffix("")
    for spec in (stem, stem.with_suffix(".safetensors")):
        assert isinstance(load_bot(spec, game=exported["env"]), BotAgent)


def test_sampling_is_seeded_and_legal(exported: dict[str, Any]) -> None:
    obs, masks = collect(exported["env"], 60, seed=11)
    runs = []
    for _ in range(2):
        bot = load_bot(exported["path"], game=exported["env"], seed=5, sample=True)
        runs.append([bot.act({"observation": o, "action_mask": m}) for o, m in zip(obs, masks)])
    assert runs[0] == runs[1]
    assert all(m[a] == 1 for a, m in zip(runs[0], masks))


def test_relu_and_no_hidden_layers_round_trip(tmp_path: pathlib.Path) -> None:
    env = huit_v0.env(num_players=2)
    obs, masks = collect(env, 100, seed=3)
    for arch, act in (([24], torch.nn.ReLU), ([], torch.nn.Tanh)):
        policy = make_policy(env, arch, seed=2, activation=act)
        path = export_bot(policy, tmp_path / f"b{len(arch)}", game="huit", rules={}, num_players=2, summary={})
        bot = load_bot(path, game=env)
        expected, _ = policy.predict(obs, deterministic=True, action_masks=masks.astype(bool))
        np.testing.assert_array_equal([bot.act({"observation": o, "action_mask": m}) for o, m in zip(obs, masks)],
                                      expected)


# ---------------------------------------------------------------- refusals
def _copy_bot(src: pathlib.Path, dst_dir: pathlib.Path) -> tuple[pathlib.Path, pathlib.Path]:
    meta_src, weights_src = bot_paths(src)
    meta_dst, weights_dst = bot_paths(dst_dir / "copy")
    meta_dst.write_bytes(meta_src.read_bytes())
    weights_dst.write_bytes(weights_src.read_bytes())
    return meta_dst, weights_dst


def _edit_meta(meta_path: pathlib.Path, edit: Any) -> None:
    meta = json.loads(meta_path.read_text())
    edit(meta)
    meta_path.write_text(json.dumps(meta))


def _rehash(meta_path: pathlib.Path, weights_path: pathlib.Path) -> None:
    import hashlib

    digest = hashlib.sha256(weights_path.read_bytes()).hexdigest()
    _edit_meta(meta_path, lambda m: m["weights"].update(sha256=digest))


@pytest.fixture()
def switch_bot(tmp_path: pathlib.Path) -> tuple[pathlib.Path, pathlib.Path]:
    env = switch_v0.env(num_players=3, hand_size=5)
    path = export_bot(make_policy(env, [8], seed=0), tmp_path / "src", game="switch",
                      rules={"hand_size": 5}, num_players=3, summary={})
    return _copy_bot(path, tmp_path)


def test_refuses_env_of_another_game(switch_bot: tuple[pathlib.Path, pathlib.Path]) -> None:
    with pytest.raises(ValueError, match="it plays switch, not huit"):
        load_bot(switch_bot[0], game=huit_v0.env(num_players=3))


def test_refuses_other_rule_options(switch_bot: tuple[pathlib.Path, pathlib.Path]) -> None:
    with pytest.raises(ValueError, match=r"other rule options: hand_size=5 \(game: 7\)"):
        load_bot(switch_bot[0], game=switch_v0.env(num_players=3))


def test_refuses_other_num_players(switch_bot: tuple[pathlib.Path, pathlib.Path]) -> None:
    with pytest.raises(ValueError, match="trained for 3 players, the game has 4"):
        load_bot(switch_bot[0], game=switch_v0.env(num_players=4, hand_size=5))


def test_refuses_other_layout_version(switch_bot: tuple[pathlib.Path, pathlib.Path]) -> None:
    _edit_meta(switch_bot[0], lambda m: m["observation"].update(version=99))
    with pytest.raises(ValueError, match="observation layout is version 99, the game's is 1"):
        load_bot(switch_bot[0], game=switch_v0.env(num_players=3, hand_size=5))


def test_refuses_other_observation_size(switch_bot: tuple[pathlib.Path, pathlib.Path]) -> None:
    _edit_meta(switch_bot[0], lambda m: m["observation"].update(size=12))
    with pytest.raises(ValueError, match="reads 12 observation numbers, the game gives 173"):
        load_bot(switch_bot[0], game=switch_v0.env(num_players=3, hand_size=5))
    with pytest.raises(ValueError, match="it reads 12 observation numbers, the game gives 173"):
        load_bot(switch_bot[0])


def test_refuses_truncated_metadata(switch_bot: tuple[pathlib.Path, pathlib.Path]) -> None:
    text = switch_bot[0].read_text()
    switch_bot[0].write_text(text[: len(text) // 2])
    with pytest.raises(ValueError, match="not valid JSON"):
        load_bot(switch_bot[0])


def test_refuses_metadata_without_fields(switch_bot: tuple[pathlib.Path, pathlib.Path]) -> None:
    _edit_meta(switch_bot[0], lambda m: m.pop("network"))
    with pytest.raises(ValueError, match="lacks fields"):
        load_bot(switch_bot[0])


def test_refuses_other_format_version(switch_bot: tuple[pathlib.Path, pathlib.Path]) -> None:
    _edit_meta(switch_bot[0], lambda m: m.update(format_version=2))
    with pytest.raises(ValueError, match="format version 2; this cardlab reads version 1"):
        load_bot(switch_bot[0])


def test_refuses_truncated_or_altered_weights(switch_bot: tuple[pathlib.Path, pathlib.Path]) -> None:
    data = switch_bot[1].read_bytes()
    switch_bot[1].write_bytes(data[:-10])
    with pytest.raises(ValueError, match="does not match its sha256"):
        load_bot(switch_bot[0])
    flipped = bytearray(data)
    flipped[-1] ^= 0xFF
    switch_bot[1].write_bytes(bytes(flipped))
    with pytest.raises(ValueError, match="does not match its sha256"):
        load_bot(switch_bot[0])


def test_refuses_unreadable_weights_with_matching_hash(switch_bot: tuple[pathlib.Path, pathlib.Path]) -> None:
    switch_bot[1].write_bytes(switch_bot[1].read_bytes()[:-10])
    _rehash(*switch_bot)
    with pytest.raises(ValueError, match="cannot read the weights file"):
        load_bot(switch_bot[0])


def test_refuses_missing_tensors(switch_bot: tuple[pathlib.Path, pathlib.Path]) -> None:
    tensors = load_file(str(switch_bot[1]))
    del tensors["action.bias"]
    save_file(tensors, str(switch_bot[1]))
    _rehash(*switch_bot)
    with pytest.raises(ValueError, match=r"wrong tensors: missing \['action.bias'\]"):
        load_bot(switch_bot[0])


def test_refuses_wrong_tensor_shapes(switch_bot: tuple[pathlib.Path, pathlib.Path]) -> None:
    tensors = load_file(str(switch_bot[1]))
    tensors["hidden.0.bias"] = torch.zeros(9)
    save_file(tensors, str(switch_bot[1]))
    _rehash(*switch_bot)
    with pytest.raises(ValueError, match=r"tensor hidden.0.bias has shape \[9\], the network needs \[8\]"):
        load_bot(switch_bot[0])


def test_refuses_missing_files(switch_bot: tuple[pathlib.Path, pathlib.Path], tmp_path: pathlib.Path) -> None:
    with pytest.raises(ValueError, match="file not found"):
        load_bot(tmp_path / "nowhere.json")
    with pytest.raises(ValueError, match="file not found"):
        make_agent(f"bot:{tmp_path / 'nowhere'}", switch_v0.env())
    switch_bot[1].unlink()
    with pytest.raises(ValueError, match="weights file .* is missing"):
        load_bot(switch_bot[0])


def test_export_refuses_a_policy_for_other_rules(tmp_path: pathlib.Path) -> None:
    policy = make_policy(switch_v0.env(num_players=3), [8], seed=0)
    with pytest.raises(ValueError, match="reads 173 observation numbers but switch with these rules has 175"):
        export_bot(policy, tmp_path / "b", game="switch", rules={}, num_players=4, summary={})
    with pytest.raises(ValueError, match="rules say num_players=4 but num_players=3"):
        export_bot(policy, tmp_path / "b", game="switch", rules={"num_players": 4}, num_players=3, summary={})
    with pytest.raises(ValueError, match="unknown game 'poker'"):
        env_class("poker")


def test_playing_a_bot_needs_torch_only(tmp_path: pathlib.Path) -> None:
    import subprocess
    import sys

    path = export_bot(make_policy(huit_v0.env(num_players=2), [8], seed=0), tmp_path / "b", game="huit",
                      rules={}, num_players=2, summary={})
    code = (
        "import sys\n"
        "from cardlab.agents.bot import load_bot\n"
        "from cardlab.envs import huit_v0\n"
        "env = huit_v0.env(num_players=2)\n"
        "env.reset(seed=0)\n"
        f"bot = load_bot({str(path)!r}, game=env)\n"
        "bot.act(env.observe(env.agent_selection))\n"
        "assert not {'stable_baselines3', 'sb3_contrib'} & set(sys.modules), 'SB3 was imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
