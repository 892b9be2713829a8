"""Write ONNX bots: a torch module's logits as ``NAME.onnx``, or the metadata of a graph exported elsewhere.

`export_onnx` takes any torch module that maps float32 observations
``(B, observation size)`` to logits ``(B, number of actions)`` (a lab bot's
network, a MaskablePPO policy's actor through `actor_network`, a CleanRL
actor, a plain module) and writes ``NAME.onnx`` and ``NAME.json``;
`write_onnx_metadata` writes the ``NAME.json`` of an ``.onnx`` file that
another tool exported. Both then load the bot with every check of
`load_bot`, so a bot they write is one that plays.

The graph comes from torch's TorchScript-based exporter
(``torch.onnx.export(..., dynamo=False)``): with torch 2.13 it needs nothing
beyond torch and onnx, where the ``torch.export``-based exporter (the
default, ``dynamo=True``) also needs onnxscript and takes about four times
as long for these small networks; both give the same operators here.
"""

from __future__ import annotations

import copy
import hashlib
import json
import pathlib
import tempfile
import warnings
from typing import Any

import torch
from torch import nn

from cardlab.agents.bot.export import table_of, write_bot_files
from cardlab.agents.bot.format import MAX_ONNX_BYTES, ONNX_FORMAT, ONNX_FORMAT_VERSION, bot_paths, onnx_path
from cardlab.envs.game_spec import Game

OPSET = 17
"""the ONNX operator set the graphs are written in (onnxruntime 1.17 and later run it)"""
INPUT, OUTPUT = "observation", "logits"
"""the names `export_onnx` gives the graph's input and output"""


def onnx_bytes(module: nn.Module, obs_size: int, *, input_name: str = INPUT,
               output_name: str = OUTPUT) -> bytes:
    """The ONNX graph of `module` (float32 ``(B, obs_size)`` in, its output out), a dynamic batch axis."""
    network = copy.deepcopy(module).to("cpu", torch.float32).eval()
    with tempfile.TemporaryDirectory(prefix="cardlab-onnx-") as folder, warnings.catch_warnings(), \
            torch.no_grad():
        warnings.simplefilter("ignore")  # the exporter's notice that a newer one exists
        graph = pathlib.Path(folder) / "policy.onnx"
        torch.onnx.export(network, (torch.zeros(1, obs_size),), str(graph), input_names=[input_name],
                          output_names=[output_name], opset_version=OPSET, dynamo=False,
                          dynamic_axes={input_name: {0: "batch"}, output_name: {0: "batch"}})
        return graph.read_bytes()


def onnx_metadata(graph: bytes, table: Game, *, summary: dict[str, Any], input_name: str = INPUT,
                  output_name: str = OUTPUT, file: str = "") -> bytes:
    """The ``NAME.json`` of an ONNX bot: the table it plays, its graph's sha256, input and output."""
    spec = table.spec
    meta = {
        "format": ONNX_FORMAT,
        "format_version": ONNX_FORMAT_VERSION,
        "game": spec.id,
        "rules": table.rules.to_dict(),
        "num_players": table.num_players,
        "observation": {"version": spec.observation_version, "size": table.layout.size},
        "num_actions": spec.num_actions,
        "onnx": {"file": file, "sha256": hashlib.sha256(graph).hexdigest(), "input": input_name,
                 "output": output_name},
        "summary": summary,
    }
    return (json.dumps(meta, indent=2, default=str) + "\n").encode("utf-8")


def export_onnx(module: nn.Module, path: str | pathlib.Path, *, game: str | Game,
                rules: dict[str, Any] | None = None, num_players: int | None = None,
                summary: dict[str, Any]) -> pathlib.Path:
    """Write ``PATH.onnx`` and ``PATH.json`` of a module's logits; returns the .json path (loaded: it plays).

    `game` is a `Game`, or a game id with `rules` and `num_players`, as for `export_bot`.
    """
    from cardlab.agents.bot.load import load_bot

    table = table_of(game, rules, num_players)
    graph = onnx_bytes(module, table.layout.size)
    meta_path = bot_paths(path)[0]
    metadata = onnx_metadata(graph, table, summary=summary, file=onnx_path(meta_path).name)
    written = write_bot_files(meta_path, metadata, graph, weights_suffix=".onnx")
    load_bot(written, table)
    return written


def write_onnx_metadata(graph_file: str | pathlib.Path, *, game: str | Game,
                        rules: dict[str, Any] | None = None, num_players: int | None = None,
                        summary: dict[str, Any] | None = None, input_name: str = INPUT,
                        output_name: str = OUTPUT) -> pathlib.Path:
    """Write the ``NAME.json`` beside an ``NAME.onnx`` exported elsewhere; returns it (loaded: it plays).

    The graph must take float32 observations ``(B, observation size)`` as
    `input_name` and give logits ``(B, number of actions)`` as `output_name`.
    """
    from cardlab.agents.bot.load import load_bot

    graph_path = pathlib.Path(graph_file).expanduser()
    if graph_path.suffix != ".onnx" or not graph_path.is_file():
        raise ValueError(f"{graph_path}: give an existing NAME.onnx file (its metadata is written beside it)")
    if graph_path.stat().st_size > MAX_ONNX_BYTES:
        raise ValueError(f"{graph_path}: larger than the {MAX_ONNX_BYTES:,} bytes an ONNX bot may have")
    table = table_of(game, rules, num_players)
    meta_path = bot_paths(graph_path)[0]
    metadata = onnx_metadata(graph_path.read_bytes(), table, summary=summary or {}, input_name=input_name,
                             output_name=output_name, file=graph_path.name)
    meta_path.write_bytes(metadata)
    try:
        load_bot(meta_path, table)
    except ValueError:
        meta_path.unlink()  # no metadata is left beside a graph that does not play
        raise
    return meta_path
