"""ONNX bots: an exported bot plays the moves of the bot file it came from, plays wherever a bot plays, and
every hostile or broken graph is refused in one line that names the file."""

from __future__ import annotations

import json
import pathlib
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from cardlab.agents.agent_spec import make_agent
from cardlab.agents.bot import ONNX_FORMAT, BotAgent, export_onnx, load_bot, write_onnx_metadata
from cardlab.agents.bot import onnx_bot as onnx_module
from cardlab.agents.bot.onnx_export import onnx_metadata
from cardlab.agents.bot.validate import random_play
from cardlab.agents.bot_catalogue import shipped_bots
from cardlab.envs import make_game
from cardlab.envs.game_spec import Game

HUIT = make_game("huit", {"num_players": 2})


def same_moves(one: BotAgent, two: BotAgent, game: Game, count: int = 300) -> None:
    """Both bots choose the same move on each of a fixed set of observations, one by one and batched."""
    obs, masks = random_play(game, count, seed=5)
    singles = [(one.act({"observation": o, "action_mask": m}), two.act({"observation": o, "action_mask": m}))
               for o, m in zip(obs, masks, strict=True)]
    assert all(a == b for a, b in singles)
    np.testing.assert_array_equal(one.act_batch(obs, masks), two.act_batch(obs, masks))


@pytest.mark.parametrize("name", ["huit-2p", "switch-4p"])
def test_an_exported_shipped_bot_plays_its_bot_files_moves(tmp_path: pathlib.Path, name: str) -> None:
    bot = make_agent(f"bot:{name}", make_game(name.split("-")[0], {"num_players": int(name[-2])}))
    assert isinstance(bot, BotAgent)
    path = export_onnx(bot.network, tmp_path / name, game=bot.game, summary={"from": f"bot:{name}"})
    meta = json.loads(path.read_text())
    assert meta["format"] == ONNX_FORMAT and meta["onnx"]["file"] == f"{name}.onnx"
    exported = make_agent(f"bot:{tmp_path / name}.onnx", bot.game)
    assert isinstance(exported, BotAgent) and isinstance(exported.network, onnx_module.OnnxNetwork)
    same_moves(bot, exported, bot.game)
    obs, _ = random_play(bot.game, 64, seed=9)
    np.testing.assert_allclose(exported.logits(obs), bot.logits(obs), rtol=1e-4, atol=1e-4)


@pytest.mark.slow
def test_every_shipped_bot_exports_to_the_same_moves(tmp_path: pathlib.Path) -> None:
    from cardlab.cli import main

    for spec, meta_path in shipped_bots().items():
        meta = json.loads(meta_path.read_text())
        game = make_game(meta["game"], meta["rules"])
        out = tmp_path / spec[4:]
        assert main(["export", spec, "--format", "onnx", "-o", str(out)]) == 0
        same_moves(load_bot(meta_path, game), load_bot(f"{out}.onnx", game), game, count=100)


# ---------------------------------------------------------------- hostile and broken graphs
def linear_model(obs: int, actions: int, *, weight: float = 0.01, batch: str | int = "batch",
                 out_size: int | None = None, domain: str = "", external: str | None = None,
                 inputs: int = 1) -> onnx.ModelProto:
    """A one-layer policy, logits = observation @ W, built by hand so each test can break one thing."""
    rng = np.random.default_rng(0)
    cols = actions if out_size is None else out_size
    w = numpy_helper.from_array((weight * rng.standard_normal((obs, cols))).astype(np.float32), "W")
    if external is not None:
        w.ClearField("raw_data")
        w.data_location = TensorProto.EXTERNAL
        w.external_data.add(key="location", value=external)
    node = helper.make_node("MatMul", ["observation", "W"], ["logits"])
    nodes = [node]
    if domain:
        nodes = [helper.make_node("Backdoor", ["observation"], ["opened"], domain=domain),
                 helper.make_node("MatMul", ["opened", "W"], ["logits"])]
    ins = [helper.make_tensor_value_info("observation", TensorProto.FLOAT, [batch, obs])]
    ins += [helper.make_tensor_value_info(f"extra{i}", TensorProto.FLOAT, [batch, 1])
            for i in range(inputs - 1)]
    out = helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", cols])
    graph = helper.make_graph(nodes, "policy", ins, [out], initializer=[w])
    opsets = [helper.make_opsetid("", 17)] + ([helper.make_opsetid(domain, 1)] if domain else [])
    return helper.make_model(graph, opset_imports=opsets, ir_version=8)


def write_bot(folder: pathlib.Path, model: onnx.ModelProto | bytes, game: Game = HUIT,
              **onnx_fields: Any) -> pathlib.Path:
    """``folder/policy.onnx`` and its metadata, written as export would (hash included), without loading."""
    graph = model if isinstance(model, bytes) else model.SerializeToString()
    (folder / "policy.onnx").write_bytes(graph)
    meta = json.loads(onnx_metadata(graph, game, summary={}, file="policy.onnx"))
    meta["onnx"].update(onnx_fields)
    (folder / "policy.json").write_text(json.dumps(meta))
    return folder / "policy.json"


def refused(path: pathlib.Path, *words: str) -> str:
    with pytest.raises(ValueError) as caught:
        load_bot(path, HUIT)
    message = str(caught.value)
    assert message.startswith(f"bot {path}: ") and "\n" not in message, message
    for word in words:
        assert word in message, message
    return message


def test_a_hand_built_graph_plays(tmp_path: pathlib.Path) -> None:
    bot = load_bot(write_bot(tmp_path, linear_model(HUIT.layout.size, HUIT.num_actions)), HUIT)
    obs, masks = random_play(HUIT, 20, seed=1)
    moves = bot.act_batch(obs, masks)
    assert all(masks[i, a] for i, a in enumerate(moves))


def test_names_and_other_outputs_are_the_metadatas(tmp_path: pathlib.Path) -> None:
    """The input and output go by the names the metadata gives; another output (a value head) is not read."""
    model = linear_model(SIZE, ACTIONS)
    graph = model.graph
    graph.node.append(helper.make_node("ReduceSum", ["logits"], ["value"], keepdims=1))
    graph.output.append(helper.make_tensor_value_info("value", TensorProto.FLOAT, ["batch", 1]))
    for node in graph.node:
        node.input[:] = ["obs" if name == "observation" else name for name in node.input]
        node.output[:] = ["scores" if name == "logits" else name for name in node.output]
        node.input[:] = ["scores" if name == "logits" else name for name in node.input]
    graph.input[0].name, graph.output[0].name = "obs", "scores"
    bot = load_bot(write_bot(tmp_path, model, input="obs", output="scores"), HUIT)
    obs = random_play(HUIT, 8, seed=3)[0]
    logits = bot.logits(obs)
    assert logits.shape == (8, ACTIONS)
    weights = numpy_helper.to_array(graph.initializer[0])
    np.testing.assert_allclose(logits, obs @ weights, rtol=1e-5, atol=1e-5)


SIZE, ACTIONS = HUIT.layout.size, HUIT.num_actions
HOSTILE = {
    "custom operator": (linear_model(SIZE, ACTIONS, domain="com.evil"),
                        ["custom operator 'Backdoor' of the domain 'com.evil'", "standard ONNX operators"]),
    "external data": (linear_model(SIZE, ACTIONS, external="../../secret.bin"),
                      ["external file '../../secret.bin'", "self-contained"]),
    "input size": (linear_model(SIZE - 1, ACTIONS), [f"shape ['batch', {SIZE - 1}]", f"(B, {SIZE})"]),
    "output size": (linear_model(SIZE, ACTIONS, out_size=ACTIONS + 3),
                    [f"shape ['batch', {ACTIONS + 3}]", f"(B, {ACTIONS})"]),
    "fixed batch": (linear_model(SIZE, ACTIONS, batch=1), ["shape [1, ", "dynamic batch axis"]),
    "two inputs": (linear_model(SIZE, ACTIONS, inputs=2), ["inputs 'observation', 'extra0';", "needs one"]),
    "non-finite": (linear_model(SIZE, ACTIONS, weight=float("inf")), ["NaN or infinite"]),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_graphs_are_refused_in_one_line_naming_the_file(tmp_path: pathlib.Path, case: str) -> None:
    model, words = HOSTILE[case]
    refused(write_bot(tmp_path, model), *words)


def test_truncated_graphs_are_refused(tmp_path: pathlib.Path) -> None:
    data = linear_model(SIZE, ACTIONS).SerializeToString()
    path = write_bot(tmp_path, data)
    (tmp_path / "policy.onnx").write_bytes(data[: len(data) // 2])
    refused(path, "does not match its sha256 (truncated or changed?)")
    refused(write_bot(tmp_path, data[: len(data) // 2]), "policy.onnx", "truncated?")
    refused(write_bot(tmp_path, b""), "holds no graph")


def test_oversized_graphs_are_refused(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write_bot(tmp_path, linear_model(SIZE, ACTIONS))
    monkeypatch.setattr(onnx_module, "MAX_ONNX_BYTES", 1000)
    refused(path, "policy.onnx is larger than 1,000 bytes")


def test_graphs_of_too_many_nodes_are_refused(tmp_path: pathlib.Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(onnx_module, "MAX_ONNX_NODES", 0)
    refused(write_bot(tmp_path, linear_model(SIZE, ACTIONS)), "more than 0 nodes")


def test_metadata_names_must_match_the_graph(tmp_path: pathlib.Path) -> None:
    model = linear_model(SIZE, ACTIONS)
    refused(write_bot(tmp_path, model, output="value"), "no output 'value'")
    refused(write_bot(tmp_path, model, input="obs"), "inputs 'observation';", "input 'obs'")
    meta = tmp_path / "policy.json"
    data = json.loads(meta.read_text())
    del data["onnx"]["sha256"]
    meta.write_text(json.dumps(data))
    refused(meta, "no onnx.sha256")
    meta = write_bot(tmp_path, model)
    (tmp_path / "policy.onnx").unlink()
    refused(meta, "policy.onnx is missing")


def test_another_table_is_refused(tmp_path: pathlib.Path) -> None:
    path = write_bot(tmp_path, linear_model(SIZE, ACTIONS))
    with pytest.raises(ValueError, match="it was trained for 2 players, the game has 3"):
        load_bot(path, make_game("huit", {"num_players": 3}))


def test_write_onnx_metadata_refuses_and_leaves_nothing(tmp_path: pathlib.Path) -> None:
    (tmp_path / "policy.onnx").write_bytes(linear_model(SIZE - 1, ACTIONS).SerializeToString())
    with pytest.raises(ValueError, match="shape"):
        write_onnx_metadata(tmp_path / "policy.onnx", game="huit", num_players=2)
    assert not (tmp_path / "policy.json").exists()
    (tmp_path / "policy.onnx").write_bytes(linear_model(SIZE, ACTIONS).SerializeToString())
    meta = write_onnx_metadata(tmp_path / "policy.onnx", game="huit", num_players=2)
    assert isinstance(load_bot(meta).network, onnx_module.OnnxNetwork)


# ---------------------------------------------------------------- where a bot plays
@pytest.fixture(scope="module")
def onnx_bot(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    """The shipped huit-2p exported as ONNX, ``mine.onnx``."""
    folder = tmp_path_factory.mktemp("onnx")
    bot = make_agent("bot:huit-2p", HUIT)
    assert isinstance(bot, BotAgent)
    export_onnx(bot.network, folder / "mine", game=HUIT, summary={"from": "bot:huit-2p"})
    return folder / "mine.onnx"


def test_it_sits_at_a_web_table(onnx_bot: pathlib.Path) -> None:
    from cardlab.serve.app import named_bots
    from tests.serve.helpers import client

    bots = named_bots([onnx_bot])
    assert bots == {"bot:mine": onnx_bot.with_suffix(".json").resolve()}
    api = client(bots=bots)
    assert "bot:mine" in {a["name"] for a in api.get("/api/options").json()["agents"]}
    body = {"game": "huit", "num_players": 2, "seat": 0, "opponents": ["bot:mine"], "seed": 3}
    response = api.post("/api/games", json=body)
    assert response.status_code == 200, response.text
    assert response.json()["frames"][-1]["players"][1]["label"] == "bot:mine"


def test_it_is_a_training_opponent_that_plays_as_its_bot_file(onnx_bot: pathlib.Path) -> None:
    from cardlab.training.arena.league import LeagueSettings
    from cardlab.training.arena.selfplay import SelfPlayBatch

    tables = [SelfPlayBatch(HUIT, 16, LeagueSettings.of([spec]), learner_share=0.0, seed=0)
              for spec in ("bot:huit-2p", f"bot:{onnx_bot}")]
    for _ in range(60):
        views = [table.observe() for table in tables]
        np.testing.assert_array_equal(views[0][0], views[1][0])
        first_legal = views[0][1].argmax(axis=1)
        results = [table.step(first_legal, view) for table, view in zip(tables, views, strict=True)]
        np.testing.assert_array_equal(results[0][0], results[1][0])


def test_the_search_plays_over_it(onnx_bot: pathlib.Path) -> None:
    agent = make_agent(f"search:worlds=4:ms=0:bot:{onnx_bot}", HUIT, seed=0)
    obs, masks = random_play(HUIT, 1, seed=2)
    assert masks[0, agent.act({"observation": obs[0], "action_mask": masks[0]})]


def test_a_run_folder_of_an_onnx_bot_loads(tmp_path: pathlib.Path, onnx_bot: pathlib.Path) -> None:
    for suffix in (".json", ".onnx"):
        (tmp_path / f"bot{suffix}").write_bytes(onnx_bot.with_suffix(suffix).read_bytes())
    assert isinstance(load_bot(tmp_path).network, onnx_module.OnnxNetwork)


def test_trainers_imitate_an_onnx_bot_rather_than_copy_its_weights(onnx_bot: pathlib.Path) -> None:
    """A teach run's base must be a bot file (its weights are the student's start); exploit's warm start
    imitates an ONNX bot instead of copying weights it does not have."""
    import dataclasses

    from cardlab.training.trainers.expert_iteration import TeachConfig, validate_teach

    onnx, file = make_agent(f"bot:{onnx_bot}", HUIT), make_agent("bot:huit-2p", HUIT)
    assert isinstance(onnx, BotAgent) and isinstance(file, BotAgent)
    assert not onnx.has_weights and file.has_weights
    cfg = dataclasses.replace(TeachConfig(), base=f"bot:{onnx_bot}")
    refused = r"base=.* is not a bot with weights; accepted: a bot file's spec .*not an ONNX bot"
    with pytest.raises(ValueError, match=refused):
        validate_teach(cfg)


def test_it_travels_to_ray_workers_as_its_files_bytes(onnx_bot: pathlib.Path) -> None:
    """What a Ray worker gets (`BotFile`): the metadata and the graph's bytes, loaded with every check."""
    from cardlab.cluster.botfiles import BotFile

    sent = BotFile.read(onnx_bot)
    assert sent.weights_suffix == ".onnx" and sent.weights == onnx_bot.read_bytes()
    arrived = sent.load(HUIT)
    assert isinstance(arrived, BotAgent) and isinstance(arrived.network, onnx_module.OnnxNetwork)
    damaged = BotFile(sent.source, sent.metadata, sent.weights[:-7], sent.weights_suffix)
    with pytest.raises(ValueError, match=r"as received: bot .*does not match its sha256 \(truncated or"):
        damaged.load(HUIT)


def test_serve_offers_each_bot_of_a_folder(tmp_path: pathlib.Path, onnx_bot: pathlib.Path) -> None:
    """`cardlab serve --bot FOLDER`: every bot in it (an ONNX bot beside a bot file)."""
    from cardlab.agents.bot_catalogue import SHIPPED_BOTS
    from cardlab.cli.serve import bot_files
    from cardlab.serve.app import named_bots

    for suffix in (".json", ".onnx"):
        (tmp_path / f"mine{suffix}").write_bytes(onnx_bot.with_suffix(suffix).read_bytes())
    for suffix in (".json", ".safetensors"):
        (tmp_path / f"file{suffix}").write_bytes((SHIPPED_BOTS / f"huit-2p{suffix}").read_bytes())
    (tmp_path / "notes.json").write_text("{}")  # no bot: nothing beside it
    assert bot_files([tmp_path]) == [tmp_path / "file.json", tmp_path / "mine.json"]
    assert list(named_bots(bot_files([tmp_path]))) == ["bot:file", "bot:mine"]
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="holds no bot"):
        bot_files([tmp_path / "empty"])


def test_the_speed_benchmark_runs_and_checks_the_moves(monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    from tests.benchmarks import load_benchmark

    load_benchmark("onnx_speed", monkeypatch).main(["--bots", "huit-2p", "--moves", "16", "--batch", "16",
                                                    "--repeats", "1"])
    row = capsys.readouterr().out.splitlines()[-1]
    assert row.startswith("| bot:huit-2p | ") and row.count(" us") == 4
