"""Bot files: an exported MaskablePPO actor plays exactly like the SB3 policy, and
every kind of wrong or damaged file is refused with a ValueError that says which."""

from __future__ import annotations

import json
import pathlib
import shutil
from typing import Any

import gymnasium
import numpy as np
import pytest
import torch
from safetensors.torch import load_file, save_file

from cardlab.agents.agent_spec import make_agent
from cardlab.agents.bot import MAX_METADATA_BYTES, BotAgent, bot_paths, export_bot, load_bot, tensor_shapes
from cardlab.agents.bot.validate import check_game, random_play, read_metadata, refuse
from cardlab.envs import env_class, huit_v1, make_game, switch_v1

MaskablePPO = pytest.importorskip("sb3_contrib").MaskablePPO


class SpacesOnly(gymnasium.Env):
    """The smallest env MaskablePPO accepts: just the game's spaces."""

    observation_space: gymnasium.spaces.Box
    action_space: gymnasium.spaces.Discrete

    def __init__(self, obs_space: gymnasium.spaces.Box, num_actions: int) -> None:
        self.observation_space = obs_space
        self.action_space = gymnasium.spaces.Discrete(num_actions)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict]:
        return np.zeros(self.observation_space.shape, np.float32), {}

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict]:
        return np.zeros(self.observation_space.shape, np.float32), 0.0, True, False, {}

    def action_masks(self) -> np.ndarray:
        return np.ones(self.action_space.n, dtype=bool)


def make_policy(
    env: Any, net_arch: list[int], seed: int, activation: type[torch.nn.Module] = torch.nn.Tanh
) -> Any:
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


GAMES = {"switch": (switch_v1, {"num_players": 3, "hand_size": 5}), "huit": (huit_v1, {"num_players": 2})}


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


def test_export_writes_exactly_the_tensors_the_loader_expects(exported: dict[str, Any]) -> None:
    # Export and the loader's header check name and shape the tensors through one function.
    meta_path, weights_path = bot_paths(exported["path"])
    meta = json.loads(meta_path.read_text())
    shapes = tensor_shapes(meta["network"]["layer_sizes"])
    assert list(shapes) == ["hidden.0.weight", "hidden.0.bias", "hidden.1.weight", "hidden.1.bias",
                            "action.weight", "action.bias"]
    assert {name: tuple(shape) for name, shape in meta["network"]["tensors"].items()} == shapes
    assert list(meta["network"]["tensors"]) == list(shapes)
    assert {name: tuple(tensor.shape) for name, tensor in load_file(weights_path).items()} == shapes


def test_bot_plays_the_sb3_policys_deterministic_masked_actions(exported: dict[str, Any]) -> None:
    env = exported["env"]
    obs, masks = random_play(env.unwrapped.game, 400, seed=7)
    expected, _ = exported["policy"].predict(obs, deterministic=True, action_masks=masks.astype(bool))
    bot = load_bot(exported["path"], game=env, seed=0)
    got = np.array([bot.act({"observation": o, "action_mask": m}) for o, m in zip(obs, masks, strict=True)])
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


def test_bot_paths_name_the_pair_in_every_form(tmp_path: pathlib.Path) -> None:
    pair = (tmp_path / "b.json", tmp_path / "b.safetensors")
    for given in ("b", "b.json", "b.safetensors"):
        assert bot_paths(tmp_path / given) == pair
    # A run folder names the bot the run wrote; dots in names stay (only .json/.safetensors are suffixes).
    assert bot_paths(tmp_path) == (tmp_path / "bot.json", tmp_path / "bot.safetensors")
    assert bot_paths(tmp_path / "v1.2" / "bot.v3")[0] == tmp_path / "v1.2" / "bot.v3.json"
    with pytest.raises(ValueError, match="names no file"):
        bot_paths(tmp_path / "missing" / "..")


def test_bots_use_one_torch_thread_unless_told(
    exported: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CARDLAB_TORCH_THREADS", raising=False)
    assert load_bot(exported["path"]).threads == 1
    assert load_bot(exported["path"], threads=3).threads == 3
    monkeypatch.setenv("CARDLAB_TORCH_THREADS", "2")
    bot = load_bot(exported["path"])
    assert bot.threads == 2
    seen: list[int] = []
    bot.network.register_forward_pre_hook(lambda *_: seen.append(torch.get_num_threads()))
    before = torch.get_num_threads()
    obs, masks = random_play(exported["env"].unwrapped.game, 3, seed=1)
    bot.act({"observation": obs[0], "action_mask": masks[0]})
    assert seen == [2] and torch.get_num_threads() == before  # only the forward pass runs on 2
    for bad in ("0", "two"):
        monkeypatch.setenv("CARDLAB_TORCH_THREADS", bad)
        with pytest.raises(ValueError, match="CARDLAB_TORCH_THREADS"):
            load_bot(exported["path"])
    with pytest.raises(ValueError, match="torch threads=0"):
        load_bot(exported["path"], threads=0)


def test_sampling_is_seeded_and_legal(exported: dict[str, Any]) -> None:
    obs, masks = random_play(exported["env"].unwrapped.game, 60, seed=11)
    runs = []
    for _ in range(2):
        bot = load_bot(exported["path"], game=exported["env"], seed=5, sample=True)
        runs.append([bot.act({"observation": o, "action_mask": m}) for o, m in zip(obs, masks, strict=True)])
    assert runs[0] == runs[1]
    assert all(m[a] == 1 for a, m in zip(runs[0], masks, strict=True))


def test_relu_and_no_hidden_layers_round_trip(tmp_path: pathlib.Path) -> None:
    env = huit_v1.env(num_players=2)
    obs, masks = random_play(env.unwrapped.game, 100, seed=3)
    for arch, act in (([24], torch.nn.ReLU), ([], torch.nn.Tanh)):
        policy = make_policy(env, arch, seed=2, activation=act)
        path = export_bot(policy, tmp_path / f"b{len(arch)}", game="huit", rules={}, num_players=2,
                          summary={})
        bot = load_bot(path, game=env)
        expected, _ = policy.predict(obs, deterministic=True, action_masks=masks.astype(bool))
        got = [bot.act({"observation": o, "action_mask": m}) for o, m in zip(obs, masks, strict=True)]
        np.testing.assert_array_equal(got, expected)


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
    env = switch_v1.env(num_players=3, hand_size=5)
    path = export_bot(make_policy(env, [8], seed=0), tmp_path / "src", game="switch",
                      rules={"hand_size": 5}, num_players=3, summary={})
    return _copy_bot(path, tmp_path)


def test_refuses_env_of_another_game(switch_bot: tuple[pathlib.Path, pathlib.Path]) -> None:
    with pytest.raises(ValueError, match="it plays switch, not huit"):
        load_bot(switch_bot[0], game=huit_v1.env(num_players=3))


def test_refuses_other_rule_options(switch_bot: tuple[pathlib.Path, pathlib.Path]) -> None:
    with pytest.raises(ValueError, match=r"other rule options: hand_size=5 \(game: 7\)"):
        load_bot(switch_bot[0], game=switch_v1.env(num_players=3))


def test_refuses_other_num_players(switch_bot: tuple[pathlib.Path, pathlib.Path]) -> None:
    with pytest.raises(ValueError, match="trained for 3 players, the game has 4"):
        load_bot(switch_bot[0], game=switch_v1.env(num_players=4, hand_size=5))


def test_refuses_other_layout_version(switch_bot: tuple[pathlib.Path, pathlib.Path]) -> None:
    _edit_meta(switch_bot[0], lambda m: m["observation"].update(version=99))
    with pytest.raises(ValueError, match="observation layout is version 99, the game's is 1"):
        load_bot(switch_bot[0], game=switch_v1.env(num_players=3, hand_size=5))


def test_refuses_other_observation_size(switch_bot: tuple[pathlib.Path, pathlib.Path]) -> None:
    _edit_meta(switch_bot[0], lambda m: m["observation"].update(size=12))
    with pytest.raises(ValueError, match="reads 12 observation numbers, the game gives 173"):
        load_bot(switch_bot[0], game=switch_v1.env(num_players=3, hand_size=5))
    with pytest.raises(ValueError, match="it reads 12 observation numbers, the game gives 173"):
        load_bot(switch_bot[0])


def test_check_game_says_the_difference_with_or_without_its_advice(
        switch_bot: tuple[pathlib.Path, pathlib.Path]) -> None:
    """`check_game` says how to play a file at its own table; a caller that says what it accepts instead (a
    resumed run's league: the snapshots it wrote) takes the difference alone."""
    meta_path = switch_bot[0]
    meta, huit = read_metadata(meta_path), make_game("huit", {"num_players": 3})
    for advice, said in ((True, "it plays switch, not huit; play it at a switch table"),
                         (False, "it plays switch, not huit")):
        with pytest.raises(ValueError) as refused:
            check_game(meta_path, meta, huit, advice=advice)
        assert str(refused.value) == f"bot {meta_path}: {said}"


def test_refuse_takes_the_kind_of_file_by_keyword_only(switch_bot: tuple[pathlib.Path, pathlib.Path]) -> None:
    """As the checks that pass it on (`check_game`, `read_weights`, ...) take it: a third positional
    argument read as the kind was easy to take for part of the reason."""
    assert str(refuse(switch_bot[0], "a reason", kind="reader")) == f"reader {switch_bot[0]}: a reason"
    with pytest.raises(TypeError):
        refuse(switch_bot[0], "a reason", "reader")  # type: ignore[call-arg]

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
    with pytest.raises(ValueError, match="nowhere: no such bot file or run folder"):  # no '.json' appended
        make_agent(f"bot:{tmp_path / 'nowhere'}", switch_v1.env())
    switch_bot[1].unlink()
    with pytest.raises(ValueError, match=r"weights file .* is missing"):
        load_bot(switch_bot[0])


def test_export_refuses_a_policy_for_other_rules(tmp_path: pathlib.Path) -> None:
    policy = make_policy(switch_v1.env(num_players=3), [8], seed=0)
    with pytest.raises(ValueError, match="reads 173 observation numbers but switch with these rules has 175"):
        export_bot(policy, tmp_path / "b", game="switch", rules={}, num_players=4, summary={})
    with pytest.raises(ValueError, match="rules say num_players=4 but num_players=3"):
        export_bot(policy, tmp_path / "b", game="switch", rules={"num_players": 4}, num_players=3, summary={})
    with pytest.raises(ValueError, match="unknown game 'poker'"):
        env_class("poker")


def test_playing_a_bot_needs_torch_only(tmp_path: pathlib.Path) -> None:
    import subprocess
    import sys

    path = export_bot(make_policy(huit_v1.env(num_players=2), [8], seed=0), tmp_path / "b", game="huit",
                      rules={}, num_players=2, summary={})
    code = (
        "import sys\n"
        "from cardlab.agents.bot import load_bot\n"
        "from cardlab.envs import huit_v1\n"
        "env = huit_v1.env(num_players=2)\n"
        "env.reset(seed=0)\n"
        f"bot = load_bot({str(path)!r}, game=env)\n"
        "bot.act(env.observe(env.agent_selection))\n"
        "assert not {'stable_baselines3', 'sb3_contrib'} & set(sys.modules), 'SB3 was imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


# ---------------------------------------------------------------- untrusted files: caps, early checks
Bot = tuple[pathlib.Path, pathlib.Path]


def _weights_parts(weights_path: pathlib.Path) -> tuple[dict[str, Any], bytes]:
    """The parsed safetensors header and the data bytes after it."""
    raw = weights_path.read_bytes()
    size = int.from_bytes(raw[:8], "little")
    return json.loads(raw[8 : 8 + size]), raw[8 + size :]


def _write_weights(bot: Bot, raw: bytes) -> None:
    """Replace the weights by hand-built bytes, with a matching sha256 so the header checks are reached."""
    bot[1].write_bytes(raw)
    _rehash(*bot)


def _with_header(header: dict[str, Any] | bytes, data: bytes) -> bytes:
    text = header if isinstance(header, bytes) else json.dumps(header).encode()
    return len(text).to_bytes(8, "little") + text + data


def _edit_tensors(bot: Bot, edit: Any) -> None:
    tensors = load_file(str(bot[1]))
    edit(tensors)
    save_file(tensors, str(bot[1]))
    _rehash(*bot)


def test_refusals_say_what_is_wrong_and_what_is_accepted(switch_bot: Bot) -> None:
    _edit_meta(switch_bot[0], lambda m: m["network"].update(activation="swish"))
    expected = (f"bot {switch_bot[0]}: the metadata field network.activation is 'swish'; "
                "it must be one of tanh, relu, elu, leaky_relu, gelu, silu, sigmoid")
    with pytest.raises(ValueError) as info:
        load_bot(switch_bot[0])
    assert str(info.value) == expected


FIELD_CASES: list[tuple[Any, str]] = [
    (lambda m: m.update(format="other"),
     r"not a cardlab-bot file \(\"format\" is 'other'\); a bot's metadata is the JSON object export writes"),
    (lambda m: m.update(format_version=True), r"format version True; this cardlab reads version 1 \(export"),
    (lambda m: m.update(format_version="1"), r"format version '1'; this cardlab reads version 1"),
    (lambda m: m["weights"].pop("sha256"),
     r"lacks fields \(corrupted\?\): no weights.sha256, which must be 64 lowercase hex digits"),
    (lambda m: m.update(num_players="3"), r"field num_players is '3'; it must be a whole number of players"),
    (lambda m: m.update(game="poker"), r"field game is 'poker'; it must be a game id: switch, huit"),
    (lambda m: m["observation"].update(size=0),
     r"field observation.size is 0; it must be a whole number from 1 to 65,536"),
    (lambda m: m.update(num_actions=10**9),
     r"field num_actions is 1000000000; it must be a whole number from 1"),
    (lambda m: m["network"].update(layer_sizes="173,8,71"),
     r"field network.layer_sizes is '173,8,71'; it must be a list of layer widths"),
    (lambda m: m["weights"].update(sha256="XYZ"),
     r"field weights.sha256 is 'XYZ'; it must be 64 lowercase hex"),
]


@pytest.mark.parametrize(("edit", "message"), FIELD_CASES)
def test_refuses_bad_metadata_fields(switch_bot: Bot, edit: Any, message: str) -> None:
    _edit_meta(switch_bot[0], edit)
    with pytest.raises(ValueError, match=message):
        load_bot(switch_bot[0])


def test_refuses_metadata_that_is_not_an_object(switch_bot: Bot) -> None:
    switch_bot[0].write_text("[1, 2]")
    with pytest.raises(ValueError, match=r"not a cardlab-bot file \(the JSON is not an object\)"):
        load_bot(switch_bot[0])


def test_refuses_json_nan_and_huge_numbers(switch_bot: Bot) -> None:
    text = switch_bot[0].read_text()
    switch_bot[0].write_text(text.replace('"num_players": 3', '"num_players": NaN'))
    with pytest.raises(ValueError, match=r"not valid JSON .*NaN is not a JSON number"):
        load_bot(switch_bot[0])
    switch_bot[0].write_text(text.replace('"num_players": 3', '"num_players": ' + "9" * 5000))
    with pytest.raises(ValueError, match="not valid JSON"):
        load_bot(switch_bot[0])


LIMITS = (r"network.layer_sizes lists the observation size, 0 to 16 hidden layer widths and the number of "
          r"actions, each a whole number from 1 to 65,536, 33,554,432 parameters at most")
SIZE_CASES: list[tuple[list[Any], str]] = [
    ([173, 10**9, 71], r"network.layer_sizes\[1\] is 1000000000; " + LIMITS),
    ([173, *[8] * 17, 71], r"network.layer_sizes has 19 entries; " + LIMITS),
    ([173, 65_536, 65_536, 71],
     r"network.layer_sizes \[173, 65536, 65536, 71\] make 4,311,089,223 parameters; " + LIMITS),
    ([173], r"network.layer_sizes has 1 entries; "),
    ([173, 0, 71], r"network.layer_sizes\[1\] is 0; "),
    ([173, -8, 71], r"network.layer_sizes\[1\] is -8; "),
    ([173, 8.0, 71], r"network.layer_sizes\[1\] is 8.0; "),
    ([173, "8", 71], r"network.layer_sizes\[1\] is '8'; "),
    ([173, True, 71], r"network.layer_sizes\[1\] is True; "),
    ([173, None, 71], r"network.layer_sizes\[1\] is None; "),
    ([173, [8], 71], r"network.layer_sizes\[1\] is \[8\]; "),
    ([173, 8, 70], r"input/output sizes \(173, 70\) disagree with the observation size/actions \(173, 71\); "
                   r"layer_sizes starts with the observation size and ends with the number of actions"),
]


@pytest.mark.parametrize(("sizes", "message"), SIZE_CASES)
def test_refuses_bad_layer_sizes_before_reading_the_weights(switch_bot: Bot, sizes: list[Any],
                                                            message: str) -> None:
    _edit_meta(switch_bot[0], lambda m: m["network"].update(layer_sizes=sizes))
    switch_bot[1].unlink()  # refused from the metadata alone: the weights are never read, nothing allocated
    for env in (None, switch_v1.env(num_players=3, hand_size=5)):
        with pytest.raises(ValueError, match=message):
            load_bot(switch_bot[0], game=env)


def test_refuses_deeply_nested_metadata(switch_bot: Bot) -> None:
    switch_bot[0].write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(ValueError, match="the metadata nests arrays/objects more than 32 deep; at most 32"):
        load_bot(switch_bot[0])


def test_nesting_counts_brackets_outside_strings_only(switch_bot: Bot) -> None:
    _edit_meta(switch_bot[0], lambda m: m.update(summary={"note": "[{" * 100 + '\\"[['}))
    assert isinstance(load_bot(switch_bot[0]), BotAgent)
    deep: list[Any] = []
    for _ in range(40):
        deep = [deep]
    _edit_meta(switch_bot[0], lambda m: m.update(summary=deep))
    with pytest.raises(ValueError, match="nests arrays/objects more than 32 deep"):
        load_bot(switch_bot[0])


def test_unterminated_strings_are_refused_in_linear_time(switch_bot: Bot) -> None:
    import time

    switch_bot[0].write_text('"a\\' * 300_000)  # every quote escaped: one string that never ends
    start = time.perf_counter()
    with pytest.raises(ValueError, match="the metadata is not valid JSON"):
        load_bot(switch_bot[0])
    assert time.perf_counter() - start < 10  # a tokenizer retrying each quote would take hours


def test_refuses_oversized_metadata(switch_bot: Bot) -> None:
    switch_bot[0].write_text(switch_bot[0].read_text() + " " * (1 << 20))
    with pytest.raises(ValueError, match=r"metadata file is larger than 1,048,576 bytes \(1 MiB\); "
                                         r"a bot's metadata is a few KiB"):
        load_bot(switch_bot[0])


def test_refuses_oversized_weights_before_reading_them(switch_bot: Bot) -> None:
    with switch_bot[1].open("r+b") as f:
        f.truncate(1 << 32)  # sparse: 4 GiB that the loader must not read
    with pytest.raises(ValueError, match=r"weights file copy.safetensors is larger than the 73,668 bytes "
                                         r"a network of layer_sizes \[173, 8, 71\] takes"):
        load_bot(switch_bot[0])


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
def test_refuses_non_finite_weights(switch_bot: Bot, value: float) -> None:
    _edit_tensors(switch_bot, lambda t: t["hidden.0.weight"].__setitem__((3, 5), value))
    with pytest.raises(ValueError, match=r"tensor hidden.0.weight holds NaN or infinite values; "
                                         r"bot weights must be finite float32 numbers"):
        load_bot(switch_bot[0])


@pytest.mark.parametrize(("dtype", "name"), [(torch.float64, "F64"), (torch.float16, "F16"),
                                             (torch.bfloat16, "BF16"), (torch.int32, "I32")])
def test_refuses_tensors_that_are_not_float32(switch_bot: Bot, dtype: torch.dtype, name: str) -> None:
    _edit_tensors(switch_bot, lambda t: t.update({"action.bias": t["action.bias"].to(dtype)}))
    with pytest.raises(ValueError, match=rf"tensor action.bias has dtype '{name}'; "
                                         r"bot weights are float32 \(F32\) tensors only"):
        load_bot(switch_bot[0])


def test_header_shapes_are_checked_before_loading(switch_bot: Bot) -> None:
    header, data = _weights_parts(switch_bot[1])
    header["hidden.0.weight"]["shape"] = [10**9, 173]
    _write_weights(switch_bot, _with_header(header, data))
    with pytest.raises(ValueError, match=r"tensor hidden.0.weight has shape \[1000000000, 173\], the network "
                                         r"needs \[8, 173\] \(from the metadata's network.layer_sizes\)"):
        load_bot(switch_bot[0])


def _shift(header: dict[str, Any], name: str, delta: int) -> dict[str, Any]:
    header[name]["data_offsets"] = [o + delta for o in header[name]["data_offsets"]]
    return header


def _replace(header: dict[str, Any], name: str, **entry: Any) -> dict[str, Any]:
    return {**header, name: {**header[name], **entry}}


HEADER_CASES: list[tuple[Any, str]] = [
    (lambda h, d: b"\x01\x02", "it has 2 bytes, fewer than the 8 of the header length"),
    (lambda h, d: (1 << 63).to_bytes(8, "little") + d,
     "header length is 9,223,372,036,854,775,808 bytes, more than the 65,536 accepted"),
    (lambda h, d: (1000).to_bytes(8, "little") + b"{}",
     r"header length is 1,000 bytes but only 2 follow \(truncated\?\)"),
    (lambda h, d: _with_header(b"not json", d),
     "the header of the weights file copy.safetensors is not valid JSON"),
    (lambda h, d: _with_header(b"\xff\xfe{}", d),
     "the header of the weights file copy.safetensors is not UTF-8"),
    (lambda h, d: _with_header(b"[" * 30_000 + b"]" * 30_000, d),
     "the header of the weights file copy.safetensors nests arrays/objects more than 32 deep"),
    (lambda h, d: _with_header(b"[]", d), "its header is not a JSON object"),
    (lambda h, d: _with_header({**h, "__metadata__": {"a": 1}}, d),
     "its __metadata__ is not an object of strings"),
    (lambda h, d: _with_header({**h, "extra": h["action.bias"]}, d),
     r"wrong tensors: missing \[\], unexpected \['extra'\]; a network of its layer_sizes has exactly "
     r"hidden.0.weight, hidden.0.bias, action.weight, action.bias"),
    (lambda h, d: _with_header({**h, "action.bias": [1, 2]}, d),
     "its header entry action.bias is not an object"),
    (lambda h, d: _with_header(_replace(h, "action.bias", shape=["71"]), d),
     r"the shape of action.bias is \['71'\], not a list of whole numbers"),
    (lambda h, d: _with_header(_replace(h, "action.bias", data_offsets=[0]), d),
     r"the data_offsets of action.bias are \[0\], not \[begin, begin \+ 284\] \(4 bytes per float32\)"),
    (lambda h, d: _with_header(_shift(h, "action.bias", -4), d), "data_offsets overlap or leave gaps"),
    (lambda h, d: _with_header(h, d[:-4]),
     r"its tensors take 8,124 bytes but 8,120 follow the header \(truncated or edited\?\)"),
    (lambda h, d: _with_header(h, d + b"\0" * 4), "its tensors take 8,124 bytes but 8,128 follow the header"),
]


@pytest.mark.parametrize(("build", "message"), HEADER_CASES)
def test_refuses_bad_safetensors_headers(switch_bot: Bot, build: Any, message: str) -> None:
    header, data = _weights_parts(switch_bot[1])
    _write_weights(switch_bot, build(header, data))
    with pytest.raises(ValueError, match=rf"bot {switch_bot[0]}: .*{message}"):
        load_bot(switch_bot[0])


# ---------------------------------------------------------------- bounds, serve --bot, probe
def test_refuses_metadata_rules_out_of_range_naming_the_range(switch_bot: Bot) -> None:
    _edit_meta(switch_bot[0], lambda m: m["rules"].update(target_score=10**50))
    with pytest.raises(ValueError, match="target_score=<a number of about 50 digits> is out of range; "
                                         "accepted: 1 to 1,000,000"):
        load_bot(switch_bot[0])


def test_refuses_a_summary_that_is_not_an_object(switch_bot: Bot) -> None:
    _edit_meta(switch_bot[0], lambda m: m.update(summary=[1, 2]))
    with pytest.raises(ValueError, match="the metadata field summary is \\[1, 2\\]; it must be an object"):
        load_bot(switch_bot[0])


def test_refuses_finite_weights_whose_logits_overflow(switch_bot: Bot) -> None:
    from safetensors.torch import load_file, save_file

    tensors = load_file(switch_bot[1])
    save_file({name: torch.full_like(t, 3e38) for name, t in tensors.items()}, switch_bot[1])
    _rehash(*switch_bot)
    with pytest.raises(ValueError, match="logits are NaN or infinite on a probe observation"):
        load_bot(switch_bot[0])


@pytest.mark.parametrize(("damage", "words"), [
    (lambda p: p.write_text("[" * 100_000), "nests arrays/objects more than 32 deep"),
    (lambda p: _edit_meta(p, lambda m: m.update(summary=[1])), "the metadata field summary is [1]"),
    (lambda p: p.write_bytes(b" " * (MAX_METADATA_BYTES + 1)), "larger than 1,048,576 bytes"),
], ids=["deep", "summary-list", "huge-file"])
def test_cardlab_serve_refuses_bad_bot_files_at_start_up(switch_bot: Bot, damage: Any, words: str) -> None:
    from cardlab.serve.app import named_bots

    damage(switch_bot[0])
    with pytest.raises(ValueError) as info:
        named_bots([switch_bot[0]])
    assert words in str(info.value) and len(str(info.value).splitlines()) == 1


# ---------------------------------------------------------------- outputs on played observations
def test_refuses_a_bot_whose_logits_overflow_on_real_observations(tmp_path: pathlib.Path) -> None:
    """Finite on the flat probes (x0 == x1), ±inf wherever x0 != x1: random play finds those."""
    from tests.fakebots import overflowing_bot

    for game_id, players in (("huit", 2), ("switch", 4)):
        path = overflowing_bot(tmp_path, f"{game_id}-over", game_id, players)
        with pytest.raises(ValueError, match=r"logits are NaN or infinite on an observation of random play"):
            load_bot(path)


def unchecked_overflowing_bot(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch,
                              game_id: str = "huit", players: int = 2) -> pathlib.Path:
    """The overflowing bot with the load-time output check turned off: a bot that fails only at play."""
    import importlib

    from tests.fakebots import overflowing_bot

    monkeypatch.setattr(importlib.import_module("cardlab.agents.bot.load"), "check_outputs",
                        lambda *args: None, raising=False)
    return overflowing_bot(tmp_path, f"{game_id}-over", game_id, players)


def test_a_bot_whose_logits_overflow_at_play_says_so(tmp_path: pathlib.Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """No masked argmax of ±inf (which gave action 0, illegal) and no empty advice: a named failure."""
    from cardlab.agents.base import advise
    from cardlab.agents.failure import AgentFailure

    bot = load_bot(unchecked_overflowing_bot(tmp_path, monkeypatch))
    env = env_class("huit")(num_players=2)
    env.reset(seed=0)
    failures = 0
    for _ in range(40):
        obs = env.observe(env.agent_selection)
        if obs["observation"][0] == obs["observation"][1]:
            action = int(np.flatnonzero(obs["action_mask"])[0])
        else:
            for call in (bot.act, lambda o: advise(bot, o)):
                with pytest.raises(AgentFailure, match="its logits are not finite on this observation"):
                    call(obs)
            failures += 1
            action = int(np.flatnonzero(obs["action_mask"])[-1])
        env.step(action)
        if any(env.terminations.values()) or any(env.truncations.values()):
            env.reset(seed=failures + 1)
    assert failures > 3


@pytest.mark.parametrize("link", ["metadata", "weights"])
def test_a_bot_file_that_cannot_be_read_is_named(tmp_path: pathlib.Path, link: str) -> None:
    """A bot's file linked to /proc/self/mem (a read gives EIO) was refused as a bare "input/output error"."""
    from cardlab.agents.bot_catalogue import SHIPPED_BOTS

    for suffix in (".json", ".safetensors"):
        target = tmp_path / f"mine{suffix}"
        if (suffix == ".json") == (link == "metadata"):
            target.symlink_to("/proc/self/mem")
        else:
            shutil.copyfile(SHIPPED_BOTS / f"huit-2p{suffix}", target)
    named = tmp_path / ("mine.json" if link == "metadata" else "mine.safetensors")
    with pytest.raises(ValueError) as info:
        load_bot(tmp_path / "mine.json")
    assert str(info.value).startswith(f"bot {tmp_path / 'mine.json'}: cannot read {named}: ")
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(("game_id", "rules"), [("huit", {"num_players": 2}),
                                                ("switch", {"num_players": 3, "hand_size": 5})])
def test_random_play_gives_the_same_real_positions_for_a_seed(game_id: str, rules: dict[str, Any]) -> None:
    """The positions bots are compared and probed on (`random_play`): seeded, the table's observations, a
    legal move in each, and what `played_observations` probes a loaded bot with."""
    from cardlab.agents.bot.validate import played_observations
    from cardlab.envs import make_game

    game = make_game(game_id, rules)
    obs, masks = random_play(game, 50, seed=4)
    again, again_masks = random_play(game, 50, seed=4)
    np.testing.assert_array_equal(obs, again)
    np.testing.assert_array_equal(masks, again_masks)
    assert len(obs) == 50 and masks.shape == (50, game.num_actions)
    assert (masks.sum(axis=1) >= 1).all()
    assert not np.array_equal(random_play(game, 50, seed=5)[0], obs)
    np.testing.assert_array_equal(played_observations(game, 20), random_play(game, 20, seed=0)[0])
