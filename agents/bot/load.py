"""`load_bot`: a bot's files, checked (`cardlab.agents.bot.validate`), made into a `BotAgent`.

A bot file's network is built from its checked weights; an ONNX bot's graph
is checked and run by onnxruntime (`cardlab.agents.bot.onnx_bot`). Either
network's logits must be finite on probes and on observations of random play.

A loaded bot refuses an env of another game, other rule options, another
number of players, or another observation/action layout, since its network
would read the numbers wrongly.
"""

from __future__ import annotations

import itertools
import pathlib
from typing import Any

import torch
from torch import nn

from cardlab.agents.base import as_game
from cardlab.agents.bot.agent import BotAgent
from cardlab.agents.bot.format import (
    ACTIVATIONS,
    ONNX_FORMAT,
    RUN_BOT,
    SUFFIXES,
    bot_paths,
    layer_names,
    onnx_path,
)
from cardlab.agents.bot.threads import inference_threads
from cardlab.agents.bot.validate import (
    check_game,
    check_network,
    check_outputs,
    read_metadata,
    read_weights,
    refuse,
)
from cardlab.envs.game_spec import get_spec


def build_network(meta: dict[str, Any], tensors: dict[str, torch.Tensor]) -> nn.Module:
    """The actor: Linear layers built without memory of their own, then given the checked tensors.

    Public so that a test can watch the networks `load_bot` builds.
    """
    sizes = meta["network"]["layer_sizes"]
    activation = ACTIVATIONS[meta["network"]["activation"]]
    layers: list[nn.Module] = []
    state: dict[str, torch.Tensor] = {}
    for name, (n_in, n_out) in zip(layer_names(sizes), itertools.pairwise(sizes), strict=True):
        for part in ("weight", "bias"):
            state[f"{len(layers)}.{part}"] = tensors[f"{name}.{part}"]
        layers.append(nn.Linear(n_in, n_out, device="meta"))
        if name != "action":
            layers.append(activation())
    network = nn.Sequential(*layers)
    network.load_state_dict(state, assign=True)
    return network


def load_bot(path: str | pathlib.Path, game: Any = None, seed: int | None = None, *,
             sample: bool = False, threads: int | None = None) -> BotAgent:
    """Load a bot (a bot file or an ONNX bot) for `game` (a `Game`, or an env); refuse it unless game, rules
    and layouts match.

    Without `game`, the bot's own game and rules (from its metadata) are used. Every
    check on the files (sizes, nesting, fields, layer sizes against the metadata and
    the game, the weights' header, hash and values) runs before the network is built,
    so a bad file is a ValueError, not a huge allocation.
    `sample=True` samples from the masked softmax (with the agent's seeded
    generator) instead of taking the masked argmax. `threads`: torch threads of
    its forward pass (default: `inference_threads()`, i.e. $CARDLAB_TORCH_THREADS or 1).
    """
    threads = inference_threads(threads)
    meta_path, weights_path = bot_paths(path)
    folder = pathlib.Path(path).expanduser()
    if folder.is_dir() and not meta_path.is_file():
        raise ValueError(f"the run folder {folder} has no {meta_path.name} (did the run finish?): write its "
                         f"bot from its last checkpoint with `cardlab export {folder} -o {folder / RUN_BOT}`")
    if not meta_path.is_file() and folder.suffix not in SUFFIXES and not folder.exists():
        raise ValueError(f"bot {folder}: no such bot file or run folder (give NAME.json, with "
                         "NAME.safetensors or NAME.onnx beside it, or a training run's folder)")
    meta = read_metadata(meta_path)
    if game is None:
        try:
            table = get_spec(meta["game"]).make(meta["rules"])
        except ValueError as err:
            raise refuse(meta_path, f"its game or rules are not known here: {err}") from None
    else:
        table = as_game(game)
    check_game(meta_path, meta, table)
    network: nn.Module
    if meta["format"] == ONNX_FORMAT:
        from cardlab.agents.bot.onnx_bot import load_onnx_network  # onnxruntime only for an ONNX bot

        network = load_onnx_network(meta_path, meta, onnx_path(meta_path), table, threads)
    else:
        check_network(meta_path, meta)
        network = build_network(meta, read_weights(meta_path, meta, weights_path))
        check_outputs(meta_path, network, table)
    return BotAgent(table, network, meta, seed=seed, sample=sample, threads=threads)
