"""The bot file format: what a bot's two files hold, what a loader accepts, and where they live.

A bot is two files side by side, so that loading one never executes code (no
pickle):

- ``NAME.json``: the metadata, UTF-8 JSON (`FORMAT`, `FORMAT_VERSION`): the game,
  its full rule options, `num_players`, the observation layout (observer
  `OBSERVATION_VERSION` and vector size), the number of actions, the network
  shape (layer sizes, activation), the training summary, and the name and
  sha256 of the weights file (its name is recorded too, but the loader always
  reads the ``.safetensors`` next to the ``.json``, so a renamed pair still loads);
- ``NAME.safetensors``: the actor's weights, tensors ``hidden.{i}.weight``,
  ``hidden.{i}.bias`` for each hidden layer and ``action.weight``,
  ``action.bias`` for the output logits (`layer_names`, `tensor_shapes`).

Only the actor is kept: features are the flat observation vector, then
``Linear -> activation`` per hidden layer (`ACTIVATIONS`), then a ``Linear`` to
the logits. The ``MAX_*`` caps are written here, beside the format, because
export, the loader's checks and the cluster's bot-file transport all bound
the same files by them.
"""

from __future__ import annotations

import itertools
import pathlib

from torch import nn

from cardlab.envs.checked_json import MAX_DEPTH

FORMAT = "cardlab-bot"
FORMAT_VERSION = 1
ONNX_FORMAT = "cardlab-onnx-bot"
"""the metadata format of an ONNX bot: ``NAME.json`` beside ``NAME.onnx`` (`cardlab.agents.bot.onnx_bot`)"""
ONNX_FORMAT_VERSION = 1
ACTIVATIONS: dict[str, type[nn.Module]] = {
    "tanh": nn.Tanh,
    "relu": nn.ReLU,
    "elu": nn.ELU,
    "leaky_relu": nn.LeakyReLU,
    "gelu": nn.GELU,
    "silu": nn.SiLU,
    "sigmoid": nn.Sigmoid,
}
# Caps on what a bot file may make the loader read or allocate; export writes far less (metadata of a few
# KiB nested 4 deep, a header under 4 KiB, a few hidden layers of hundreds of units, < 1M parameters).
MAX_METADATA_BYTES = 1 << 20
MAX_JSON_DEPTH = MAX_DEPTH  # the one checked JSON reader's depth cap
MAX_HEADER_BYTES = 1 << 16
MAX_HIDDEN_LAYERS = 16
MAX_LAYER_UNITS = 65_536
MAX_PARAMETERS = 1 << 25
MAX_ONNX_BYTES = 4 * MAX_PARAMETERS + (1 << 20)
"""an ONNX bot's graph file: as many float32 numbers as a bot file's network may hold, and 1 MiB of graph"""
MAX_ONNX_NODES = 10_000

RUN_BOT = "bot"
"""the name of the bot a training run writes in its folder (``RUN/bot.json``)"""
SUFFIXES = (".json", ".safetensors", ".onnx")


def bot_paths(path: str | pathlib.Path) -> tuple[pathlib.Path, pathlib.Path]:
    """The (metadata, weights) files a bot path names: NAME.json, .safetensors, .onnx, NAME, or a folder.

    A folder (a training run's) names the bot in it, ``FOLDER/bot.json``. Only
    a ``.json``, ``.safetensors`` or ``.onnx`` suffix is replaced:
    ``runs/v1.2/bot`` keeps its dots. An ONNX bot's graph is `onnx_path` of
    the metadata file; its metadata's format says which of the two it is.
    """
    path = pathlib.Path(path).expanduser()
    if path.is_dir():
        path = path / RUN_BOT
    if path.name in ("", ".", ".."):
        raise ValueError(f"bot path {str(path)!r} names no file: give NAME.json (with NAME.safetensors "
                         "beside it) or a run folder")
    stem = path.with_suffix("") if path.suffix in SUFFIXES else path
    return stem.with_name(stem.name + ".json"), stem.with_name(stem.name + ".safetensors")


def bots_in(folder: pathlib.Path) -> list[pathlib.Path]:
    """The metadata file of each bot in a folder: every ``NAME.json`` with ``NAME.safetensors`` or
    ``NAME.onnx`` beside it, by name (a folder of bots, as `cardlab serve --bot FOLDER` takes)."""
    return [path for path in sorted(folder.glob("*.json"))
            if path.with_suffix(".safetensors").is_file() or onnx_path(path).is_file()]


def onnx_path(meta_path: pathlib.Path) -> pathlib.Path:
    """The graph file of an ONNX bot whose metadata is `meta_path`: ``NAME.onnx`` beside ``NAME.json``."""
    return meta_path.with_name(meta_path.stem + ".onnx")


def layer_names(sizes: list[int]) -> list[str]:
    """The tensor name prefix of each Linear layer of a network of these layer sizes, input to output."""
    return [f"hidden.{i}" for i in range(len(sizes) - 2)] + ["action"]


def tensor_shapes(sizes: list[int]) -> dict[str, tuple[int, ...]]:
    """The tensors of a network of these layer sizes, name -> shape (weight [out, in], bias [out])."""
    shapes: dict[str, tuple[int, ...]] = {}
    for name, (n_in, n_out) in zip(layer_names(sizes), itertools.pairwise(sizes), strict=True):
        shapes[f"{name}.weight"] = (n_out, n_in)
        shapes[f"{name}.bias"] = (n_out,)
    return shapes
