"""Trained bot files: export a MaskablePPO policy (or a lean-PPO actor), load it back as an agent.

A bot is a ``NAME.json`` of metadata beside a ``NAME.safetensors`` of the
actor's weights, so that loading one never executes code (no pickle); the
format is described in `cardlab.agents.bot.format`. An ONNX bot is a
``NAME.json`` beside a ``NAME.onnx`` graph, a policy trained anywhere, run
by onnxruntime after its checks (`cardlab.agents.bot.onnx_bot`). ``bot:PATH`` and
`load_bot` accept either file, PATH without a suffix, or a run folder
(``RUN``: the ``RUN/bot.json`` a training run writes). Playing a bot needs
torch only; this package never imports stable-baselines3.

The modules, one concept each: `format` (constants, caps, names), `export`
(a pair written whole or not at all), `onnx_export`, `onnx_bot` (an untrusted
graph's checks and session), `validate` (the checks of untrusted files, each
refusal saying what is accepted), `load` (every check before building the
network), `agent` (`BotAgent`), `threads` (a forward pass's torch threads).
Everything public is re-exported here: import from ``cardlab.agents.bot``.
"""

from cardlab.agents.bot.agent import BotAgent, network_actions
from cardlab.agents.bot.export import actor_network, export_bot, write_bot_files
from cardlab.agents.bot.format import (
    ACTIVATIONS,
    FORMAT,
    FORMAT_VERSION,
    MAX_HEADER_BYTES,
    MAX_HIDDEN_LAYERS,
    MAX_JSON_DEPTH,
    MAX_LAYER_UNITS,
    MAX_METADATA_BYTES,
    MAX_ONNX_BYTES,
    MAX_ONNX_NODES,
    MAX_PARAMETERS,
    ONNX_FORMAT,
    RUN_BOT,
    SUFFIXES,
    bot_paths,
    bots_in,
    layer_names,
    onnx_path,
    tensor_shapes,
)
from cardlab.agents.bot.load import build_network, load_bot
from cardlab.agents.bot.onnx_export import export_onnx, write_onnx_metadata
from cardlab.agents.bot.threads import inference_threads, torch_threads
from cardlab.agents.bot.validate import BOT_FILES, LAYER_LIMITS, read_metadata

__all__ = [
    "ACTIVATIONS",
    "BOT_FILES",
    "FORMAT",
    "FORMAT_VERSION",
    "LAYER_LIMITS",
    "MAX_HEADER_BYTES",
    "MAX_HIDDEN_LAYERS",
    "MAX_JSON_DEPTH",
    "MAX_LAYER_UNITS",
    "MAX_METADATA_BYTES",
    "MAX_ONNX_BYTES",
    "MAX_ONNX_NODES",
    "MAX_PARAMETERS",
    "ONNX_FORMAT",
    "RUN_BOT",
    "SUFFIXES",
    "BotAgent",
    "actor_network",
    "bot_paths",
    "bots_in",
    "build_network",
    "export_bot",
    "export_onnx",
    "inference_threads",
    "layer_names",
    "load_bot",
    "network_actions",
    "onnx_path",
    "read_metadata",
    "tensor_shapes",
    "torch_threads",
    "write_bot_files",
    "write_onnx_metadata",
]
