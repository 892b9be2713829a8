"""Export: write the bot files of a trained actor (a MaskablePPO policy or a lean-PPO `nn.Sequential`).

This module never imports stable-baselines3: an SB3 policy is read through
its attributes, so that exporting and playing a bot need torch only.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import pathlib
import secrets
from typing import Any

import torch
from safetensors.torch import save as save_bytes
from torch import nn

from cardlab.agents.bot.format import ACTIVATIONS, FORMAT, FORMAT_VERSION, bot_paths, layer_names
from cardlab.envs.game_spec import Game, make_game


def _actor_layers(policy: Any) -> tuple[list[nn.Linear], str, nn.Linear]:
    """Hidden Linear layers, activation name and output layer of an SB3 policy's actor.

    An `nn.Sequential` of (Linear, activation) pairs then a Linear (the lean
    trainer's actor) is read as it is.
    """
    if isinstance(policy, nn.Sequential):
        modules = list(policy)
        return _split_layers(modules[:-1], modules[-1] if modules else None)
    extractor = getattr(policy, "pi_features_extractor", None) or getattr(policy, "features_extractor", None)
    if type(extractor).__name__ != "FlattenExtractor":
        raise ValueError(
            f"the policy's features extractor is {type(extractor).__name__}: only an MlpPolicy over a flat "
            "Box observation (FlattenExtractor) can be exported"
        )
    return _split_layers(list(policy.mlp_extractor.policy_net), policy.action_net)


def _split_layers(modules: list[nn.Module], action: Any) -> tuple[list[nn.Linear], str, nn.Linear]:
    """(hidden Linear layers, activation name, output layer) of (Linear, activation) pairs and an output."""
    hidden = [m for m in modules[0::2] if isinstance(m, nn.Linear)]
    activations = modules[1::2]
    if not len(hidden) == len(activations) == len(modules[0::2]):
        raise ValueError(
            "the policy's actor is not a sequence of (Linear, activation) pairs before its output Linear"
        )
    kinds = {type(a) for a in activations}
    # Without hidden layers no activation is used; "tanh" (SB3's default) is stored for completeness.
    name = next((n for n, cls in ACTIVATIONS.items() if kinds == {cls}), None) if kinds else "tanh"
    if name is None:
        shown = sorted(k.__name__ for k in kinds)
        raise ValueError(
            f"the policy uses activation(s) {shown}: one of {', '.join(ACTIVATIONS)} is supported"
        )
    if not isinstance(action, nn.Linear):
        raise ValueError(f"the policy's action_net is {type(action).__name__}, expected Linear")
    return hidden, name, action


def table_of(game: str | Game, rules: dict[str, Any] | None, num_players: int | None) -> Game:
    """The `Game` an export names: a `Game`, or a game id with rule options and `num_players`."""
    rules = dict(rules or {})
    if num_players is not None:
        if rules.get("num_players", num_players) != num_players:
            raise ValueError(
                f"rules say num_players={rules['num_players']} but num_players={num_players} was given"
            )
        rules["num_players"] = num_players
    return make_game(game, rules)


def actor_network(policy: Any) -> nn.Sequential:
    """The actor of a MaskablePPO policy or of an actor `nn.Sequential` (checked as `export_bot` checks it),
    as one `nn.Sequential` from the flat observation to the logits, sharing the policy's layers."""
    _actor_layers(policy)
    if isinstance(policy, nn.Sequential):
        return policy
    return nn.Sequential(*policy.mlp_extractor.policy_net, policy.action_net)


def export_bot(
    policy: Any,
    path: str | pathlib.Path,
    *,
    game: str | Game,
    rules: dict[str, Any] | None = None,
    num_players: int | None = None,
    summary: dict[str, Any],
) -> pathlib.Path:
    """Write the bot files of a MaskablePPO policy or an actor `nn.Sequential`; returns the .json path.

    `game` is a `Game`, or a game id with `rules` (only the options that
    differ from the defaults are needed: the file stores them all, so that
    loading compares complete rule sets) and `num_players`.
    """
    table = table_of(game, rules, num_players)
    spec, rule_set = table.spec, table.rules
    num_players = table.num_players
    obs_size = table.layout.size
    hidden, activation, action = _actor_layers(policy)
    sizes = [layer.in_features for layer in hidden] + [action.in_features]
    if sizes[0] != obs_size:
        raise ValueError(
            f"the policy reads {sizes[0]} observation numbers but {spec.id} with these rules has {obs_size}: "
            "export with the rules the policy was trained with"
        )
    if action.out_features != spec.num_actions:
        raise ValueError(f"the policy has {action.out_features} actions but {spec.id} has {spec.num_actions}")
    tensors: dict[str, torch.Tensor] = {}
    for name, layer in zip(layer_names([*sizes, spec.num_actions]), [*hidden, action], strict=True):
        tensors[f"{name}.weight"], tensors[f"{name}.bias"] = layer.weight, layer.bias
    tensors = {k: v.detach().to("cpu", torch.float32).contiguous() for k, v in tensors.items()}
    meta_path, weights_path = bot_paths(path)
    weights = save_bytes(tensors)
    meta = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "game": spec.id,
        "rules": rule_set.to_dict(),
        "num_players": num_players,
        "observation": {"version": spec.observation_version, "size": obs_size},
        "num_actions": spec.num_actions,
        "network": {
            "layer_sizes": [*sizes, spec.num_actions],
            "activation": activation,
            "tensors": {k: list(v.shape) for k, v in tensors.items()},
        },
        "summary": summary,
        "weights": {"file": weights_path.name, "sha256": hashlib.sha256(weights).hexdigest()},
    }
    text = json.dumps(meta, indent=2, sort_keys=False, default=str) + "\n"
    return write_bot_files(meta_path, text.encode("utf-8"), weights)


def write_bot_files(path: str | pathlib.Path, metadata: bytes, weights: bytes, *,
                    weights_suffix: str = ".safetensors") -> pathlib.Path:
    """Write a bot's two files, each whole or not at all: the weights first, the metadata renamed in last.

    The weights are ``NAME.safetensors``, or with ``weights_suffix=".onnx"`` an ONNX bot's graph.

    Why: readers list ``*.json`` (a league's snapshots, the shipped bots) while
    another process writes, and must never see half a bot. Each file is written
    under a unique temporary name beside it, then renamed over the old one; both
    follow the umask (safetensors' own save_file makes its file 0600). Returns
    the metadata path.
    """
    meta_path = bot_paths(path)[0]
    weights_path = meta_path.with_name(meta_path.stem + weights_suffix)
    for data, final in ((weights, weights_path), (metadata, meta_path)):
        temporary = final.with_name(f".tmp-{final.name}-{os.getpid()}-{secrets.token_hex(4)}")
        try:
            final.parent.mkdir(parents=True, exist_ok=True)
            with temporary.open("xb") as f:
                f.write(data)
            os.replace(temporary, final)
        except OSError as err:  # the file asked for is named, not the temporary one beside it
            raise OSError(err.errno, err.strerror or str(err), str(final)) from None
        finally:
            with contextlib.suppress(OSError):
                temporary.unlink(missing_ok=True)
    return meta_path
