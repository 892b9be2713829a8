"""Trained bot files: export a MaskablePPO policy, load it back as an agent.

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
  ``action.bias`` for the output logits.

``bot:PATH`` and `load_bot` accept either file (or PATH without a suffix).
Only the actor is kept: features are the flat observation vector, then
``Linear -> activation`` per hidden layer, then a ``Linear`` to the logits.
Playing a bot needs torch only; this module never imports stable-baselines3.
A loaded bot refuses an env of another game, other rule options, another
number of players, or another observation/action layout, since its network
would read the numbers wrongly.
"""

from __future__ import annotations

import hashlib
import json
import pathlib
from typing import Any

import numpy as np
import torch
from safetensors import SafetensorError
from safetensors.torch import load_file, save_file
from torch import nn

from cardlab.agents.base import Agent, as_game
from cardlab.envs.spec import Game, get_spec, make_game

FORMAT = "cardlab-bot"
FORMAT_VERSION = 1
ACTIVATIONS: dict[str, type[nn.Module]] = {
    "tanh": nn.Tanh,
    "relu": nn.ReLU,
    "elu": nn.ELU,
    "leaky_relu": nn.LeakyReLU,
    "gelu": nn.GELU,
    "silu": nn.SiLU,
    "sigmoid": nn.Sigmoid,
}


def bot_paths(path: str | pathlib.Path) -> tuple[pathlib.Path, pathlib.Path]:
    """The (metadata, weights) files a bot path names."""
    path = pathlib.Path(path).expanduser()
    return path.with_suffix(".json"), path.with_suffix(".safetensors")


def _sha256(path: pathlib.Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# ---------------------------------------------------------------- export
def _actor_layers(policy: Any) -> tuple[list[nn.Linear], str, nn.Linear]:
    """Hidden Linear layers, activation name and output layer of an SB3 policy's actor."""
    extractor = getattr(policy, "pi_features_extractor", None) or getattr(policy, "features_extractor", None)
    if type(extractor).__name__ != "FlattenExtractor":
        raise ValueError(
            f"the policy's features extractor is {type(extractor).__name__}: only an MlpPolicy over a flat "
            "Box observation (FlattenExtractor) can be exported"
        )
    modules = list(policy.mlp_extractor.policy_net)
    hidden = modules[0::2]
    activations = modules[1::2]
    if len(hidden) != len(activations) or not all(isinstance(m, nn.Linear) for m in hidden):
        raise ValueError("the policy's mlp_extractor.policy_net is not a sequence of (Linear, activation) pairs")
    kinds = {type(a) for a in activations}
    # Without hidden layers no activation is used; "tanh" (SB3's default) is stored for completeness.
    name = next((n for n, cls in ACTIVATIONS.items() if kinds == {cls}), None) if kinds else "tanh"
    if name is None:
        shown = sorted(k.__name__ for k in kinds)
        raise ValueError(f"the policy uses activation(s) {shown}: one of {', '.join(ACTIVATIONS)} is supported")
    action = policy.action_net
    if not isinstance(action, nn.Linear):
        raise ValueError(f"the policy's action_net is {type(action).__name__}, expected Linear")
    return hidden, name, action


def export_bot(
    policy: Any,
    path: str | pathlib.Path,
    *,
    game: str | Game,
    rules: dict[str, Any] | None = None,
    num_players: int | None = None,
    summary: dict[str, Any],
) -> pathlib.Path:
    """Write the bot files of a MaskablePPO policy; returns the metadata (.json) path.

    `game` is a `Game`, or a game id with `rules` (only the options that
    differ from the defaults are needed: the file stores them all, so that
    loading compares complete rule sets) and `num_players`.
    """
    rules = dict(rules or {})
    if num_players is not None:
        if rules.get("num_players", num_players) != num_players:
            raise ValueError(f"rules say num_players={rules['num_players']} but num_players={num_players} was given")
        rules["num_players"] = num_players
    table = make_game(game, rules)
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
    for i, layer in enumerate(hidden):
        tensors[f"hidden.{i}.weight"] = layer.weight
        tensors[f"hidden.{i}.bias"] = layer.bias
    tensors["action.weight"], tensors["action.bias"] = action.weight, action.bias
    tensors = {k: v.detach().to("cpu", torch.float32).contiguous() for k, v in tensors.items()}
    meta_path, weights_path = bot_paths(path)
    meta_path.parent.mkdir(parents=True, exist_ok=True)
    save_file(tensors, str(weights_path))
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
        "weights": {"file": weights_path.name, "sha256": _sha256(weights_path)},
    }
    meta_path.write_text(json.dumps(meta, indent=2, sort_keys=False, default=str) + "\n", encoding="utf-8")
    return meta_path


# ---------------------------------------------------------------- load
class BotAgent(Agent):
    """A trained actor network: masked argmax of its logits, or a masked sample."""

    name = "bot"

    def __init__(
        self, game: Game, network: nn.Module, metadata: dict[str, Any], seed: int | None = None,
        sample: bool = False,
    ) -> None:
        super().__init__(game, seed)
        self.network = network.eval()
        self.metadata = metadata
        self.sample = sample

    def logits(self, observation: np.ndarray) -> np.ndarray:
        """Raw logits for one observation vector (or a batch of them)."""
        with torch.inference_mode():
            x = torch.as_tensor(np.asarray(observation, dtype=np.float32))
            return self.network(x).numpy()

    def _masked_logits(self, observation: dict[str, np.ndarray]) -> np.ndarray:
        mask = np.asarray(observation["action_mask"], dtype=bool)
        if not mask.any():
            raise ValueError("the observation's action_mask has no legal action")
        return np.where(mask, self.logits(observation["observation"]).astype(np.float64), -np.inf)

    def act(self, observation: dict[str, np.ndarray]) -> int:
        if not self.sample:
            return int(np.argmax(self._masked_logits(observation)))
        probs = self.action_probabilities(observation)
        return int(self.rng.choice(probs.size, p=probs))

    def action_probabilities(self, observation: dict[str, np.ndarray]) -> np.ndarray:
        """The softmax of the logits over the legal actions (what `sample=True` draws from)."""
        logits = self._masked_logits(observation)
        probs = np.exp(logits - logits.max())
        return probs / probs.sum()


def _refuse(path: pathlib.Path, reason: str) -> ValueError:
    return ValueError(f"bot {path}: {reason}")


def _read_metadata(meta_path: pathlib.Path) -> dict[str, Any]:
    if not meta_path.is_file():
        raise _refuse(meta_path, "file not found (a bot is NAME.json plus NAME.safetensors, written by export)")
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise _refuse(meta_path, f"the metadata is not valid JSON (truncated or corrupted?): {err}") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise _refuse(meta_path, f"not a {FORMAT} file")
    if meta.get("format_version") != FORMAT_VERSION:
        raise _refuse(
            meta_path, f"format version {meta.get('format_version')!r}; this cardlab reads version {FORMAT_VERSION}"
        )
    try:
        net = meta["network"]
        checks = [
            isinstance(meta["game"], str),
            isinstance(meta["rules"], dict),
            isinstance(meta["num_players"], int),
            isinstance(meta["observation"]["version"], int),
            isinstance(meta["observation"]["size"], int),
            isinstance(meta["num_actions"], int),
            net["activation"] in ACTIVATIONS,
            isinstance(net["layer_sizes"], list) and len(net["layer_sizes"]) >= 2,
            all(isinstance(s, int) and s > 0 for s in net["layer_sizes"]),
            isinstance(meta["weights"]["sha256"], str),
        ]
    except (KeyError, TypeError):
        checks = [False]
    if not all(checks):
        raise _refuse(meta_path, "the metadata lacks fields or has fields of the wrong type (corrupted?)")
    return meta


def _check_game(meta_path: pathlib.Path, meta: dict[str, Any], game: Game) -> None:
    """Refuse a game whose id, rules or layouts differ from the bot's."""
    spec = game.spec
    if meta["game"] != spec.id:
        raise _refuse(meta_path, f"it plays {meta['game']}, not {spec.id}")
    if meta["num_players"] != game.num_players:
        raise _refuse(
            meta_path, f"it was trained for {meta['num_players']} players, the game has {game.num_players}"
        )
    game_rules = game.rules.to_dict()
    diffs = [
        f"{k}={meta['rules'].get(k, '(missing)')!r} (game: {game_rules.get(k, '(missing)')!r})"
        for k in sorted(set(game_rules) | set(meta["rules"]))
        if meta["rules"].get(k, "(missing)") != game_rules.get(k, "(missing)")
    ]
    if diffs:
        raise _refuse(meta_path, f"it was trained with other rule options: {', '.join(diffs)}")
    if meta["observation"]["version"] != spec.observation_version:
        raise _refuse(
            meta_path,
            f"its observation layout is version {meta['observation']['version']}, "
            f"the game's is {spec.observation_version}",
        )
    if meta["observation"]["size"] != game.layout.size:
        raise _refuse(
            meta_path, f"it reads {meta['observation']['size']} observation numbers, the game gives {game.layout.size}"
        )
    if meta["num_actions"] != spec.num_actions:
        raise _refuse(meta_path, f"it has {meta['num_actions']} actions, the game has {spec.num_actions}")


def _build_network(meta_path: pathlib.Path, meta: dict[str, Any], weights_path: pathlib.Path) -> nn.Module:
    sizes = meta["network"]["layer_sizes"]
    if sizes[0] != meta["observation"]["size"] or sizes[-1] != meta["num_actions"]:
        raise _refuse(meta_path, "the network's input/output sizes disagree with the observation size/actions")
    if not weights_path.is_file():
        raise _refuse(meta_path, f"the weights file {weights_path} is missing")
    if _sha256(weights_path) != meta["weights"]["sha256"]:
        raise _refuse(meta_path, f"the weights file {weights_path.name} does not match its sha256 (corrupted?)")
    try:
        tensors = load_file(str(weights_path))
    except (SafetensorError, OSError, ValueError) as err:
        raise _refuse(meta_path, f"cannot read the weights file {weights_path.name}: {err}") from None
    layers: list[nn.Module] = []
    names: list[str] = []
    for i, (n_in, n_out) in enumerate(zip(sizes[:-2], sizes[1:-1])):
        layers += [nn.Linear(n_in, n_out), ACTIVATIONS[meta["network"]["activation"]]()]
        names.append(f"hidden.{i}")
    layers.append(nn.Linear(sizes[-2], sizes[-1]))
    names.append("action")
    expected = {f"{name}.{p}" for name in names for p in ("weight", "bias")}
    if set(tensors) != expected:
        missing, extra = sorted(expected - set(tensors)), sorted(set(tensors) - expected)
        raise _refuse(meta_path, f"the weights file has the wrong tensors: missing {missing}, unexpected {extra}")
    linears = [m for m in layers if isinstance(m, nn.Linear)]
    with torch.no_grad():
        for name, linear in zip(names, linears):
            for p in ("weight", "bias"):
                target, value = getattr(linear, p), tensors[f"{name}.{p}"]
                if tuple(value.shape) != tuple(target.shape):
                    raise _refuse(
                        meta_path,
                        f"tensor {name}.{p} has shape {list(value.shape)}, the network needs {list(target.shape)}",
                    )
                target.copy_(value)
    return nn.Sequential(*layers)


def load_bot(path: str | pathlib.Path, game: Any = None, seed: int | None = None, *,
             sample: bool = False) -> BotAgent:
    """Load a bot file for `game` (a `Game`, or an env); refuse it unless game, rules and layouts match.

    Without `game`, the bot's own game and rules (from its metadata) are used.
    `sample=True` samples from the masked softmax (with the agent's seeded
    generator) instead of taking the masked argmax.
    """
    meta_path, weights_path = bot_paths(path)
    meta = _read_metadata(meta_path)
    if game is None:
        try:
            table = get_spec(meta["game"]).make(meta["rules"])
        except ValueError as err:
            raise _refuse(meta_path, f"its game or rules are not known here: {err}") from None
    else:
        table = as_game(game)
    _check_game(meta_path, meta, table)
    network = _build_network(meta_path, meta, weights_path)
    return BotAgent(table, network, meta, seed=seed, sample=sample)
