"""Trained bot files: export a MaskablePPO policy (or a lean-PPO actor), load it back as an agent.

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

``bot:PATH`` and `load_bot` accept either file, PATH without a suffix, or a
run folder (``RUN``: the ``RUN/bot.json`` a training run writes).
Only the actor is kept: features are the flat observation vector, then
``Linear -> activation`` per hidden layer, then a ``Linear`` to the logits.
Playing a bot needs torch only; this module never imports stable-baselines3.
A loaded bot refuses an env of another game, other rule options, another
number of players, or another observation/action layout, since its network
would read the numbers wrongly.

Bot files are meant to be shared, so `load_bot` treats them as untrusted: a
bad file is a ValueError saying what is wrong and what is accepted, found
before anything large is read or allocated. The metadata is at most
`MAX_METADATA_BYTES` of JSON nested at most `MAX_JSON_DEPTH` deep; the network
has at most `MAX_HIDDEN_LAYERS` hidden layers of 1 to `MAX_LAYER_UNITS` units
and `MAX_PARAMETERS` parameters; the weights file is checked against its
sha256, then its header (at most `MAX_HEADER_BYTES`; float32 tensors of exactly
the shapes the layer sizes give, laid end to end) before its tensors are
loaded, and NaN or infinite weights are refused.

A bot's network is small (a forward pass takes well under a millisecond on
one thread), and torch's default of one thread per core only adds waiting:
on a machine whose cores are busy a move took 40-56 ms instead of 0.08 ms.
So a bot runs its network on `inference_threads()` torch threads: the
`THREADS_ENV` environment variable (``CARDLAB_TORCH_THREADS``, which the
command line's ``--torch-threads`` sets), else 1; `load_bot(threads=...)`
chooses for one bot. Only the forward pass uses that count; torch's setting
for the rest of the process is left as it was (see `torch_threads`).
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import math
import os
import pathlib
import re
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import torch
from safetensors import SafetensorError
from safetensors.torch import load as load_bytes
from safetensors.torch import save as save_bytes
from torch import nn

from cardlab.agents.base import THREADS_ENV, Agent, as_game
from cardlab.envs.spec import Game, games, get_spec, make_game

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
# Caps on what a bot file may make the loader read or allocate; export writes far less (metadata of a few
# KiB nested 4 deep, a header under 4 KiB, a few hidden layers of hundreds of units, < 1M parameters).
MAX_METADATA_BYTES = 1 << 20
MAX_JSON_DEPTH = 32
MAX_HEADER_BYTES = 1 << 16
MAX_HIDDEN_LAYERS = 16
MAX_LAYER_UNITS = 65_536
MAX_PARAMETERS = 1 << 25
# A JSON string (an unterminated one runs to the end: a failed match would be retried at every later
# quote, quadratic time), or a bracket.
_JSON_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"?|[\[\]{}]', re.DOTALL)


RUN_BOT = "bot"
"""the name of the bot a training run writes in its folder (``RUN/bot.json``)"""
SUFFIXES = (".json", ".safetensors")


def bot_paths(path: str | pathlib.Path) -> tuple[pathlib.Path, pathlib.Path]:
    """The (metadata, weights) files a bot path names: NAME.json, NAME.safetensors, NAME, or a folder.

    A folder (a training run's) names the bot in it, ``FOLDER/bot.json``. Only
    a ``.json`` or ``.safetensors`` suffix is replaced: ``runs/v1.2/bot`` keeps
    its dots.
    """
    path = pathlib.Path(path).expanduser()
    if path.is_dir():
        path = path / RUN_BOT
    if path.name in ("", ".", ".."):
        raise ValueError(f"bot path {str(path)!r} names no file: give NAME.json (with NAME.safetensors "
                         "beside it) or a run folder")
    stem = path.with_suffix("") if path.suffix in SUFFIXES else path
    return stem.with_name(stem.name + ".json"), stem.with_name(stem.name + ".safetensors")


# ---------------------------------------------------------------- export
def _actor_layers(policy: Any) -> tuple[list[nn.Linear], str, nn.Linear]:
    """Hidden Linear layers, activation name and output layer of an SB3 policy's actor.

    An `nn.Sequential` of (Linear, activation) pairs then a Linear (the lean
    trainer's actor, `cardlab.training.ppo`) is read as it is.
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
    rules = dict(rules or {})
    if num_players is not None:
        if rules.get("num_players", num_players) != num_players:
            raise ValueError(
                f"rules say num_players={rules['num_players']} but num_players={num_players} was given"
            )
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
    weights = save_bytes(tensors)
    # Written like the .json, so both files follow the umask (safetensors' save_file makes its file 0600).
    weights_path.write_bytes(weights)
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
    meta_path.write_text(json.dumps(meta, indent=2, sort_keys=False, default=str) + "\n", encoding="utf-8")
    return meta_path


# ---------------------------------------------------------------- threads
def inference_threads(threads: int | None = None) -> int:
    """The torch threads a bot's forward pass uses: `threads`, else $CARDLAB_TORCH_THREADS, else 1."""
    if threads is None:
        text = os.environ.get(THREADS_ENV, "").strip()
        if not text:
            return 1
        try:
            threads = int(text)
        except ValueError:
            raise ValueError(f"the environment variable {THREADS_ENV}={text!r} is not a whole number: set it "
                             f"to the torch threads of bot inference, e.g. {THREADS_ENV}=1") from None
        where = f"the environment variable {THREADS_ENV}"
    else:
        where = "torch threads"
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise ValueError(f"{where}={threads!r}: give a whole number >= 1 (1 is fastest for a bot on a busy "
                         "machine)")
    return threads


@contextlib.contextmanager
def torch_threads(threads: int) -> Iterator[None]:
    """Run the block with `threads` torch intra-op threads, then restore the count it had.

    Nothing is changed when the count is already `threads` (the command line
    sets it once for a whole evaluation, so a move costs no switching).
    """
    before = torch.get_num_threads()
    if before == threads:
        yield
        return
    torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(before)


# ---------------------------------------------------------------- load
class BotAgent(Agent):
    """A trained actor network: masked argmax of its logits, or a masked sample."""

    name = "bot"

    def __init__(
        self, game: Game, network: nn.Module, metadata: dict[str, Any], seed: int | None = None,
        sample: bool = False, threads: int | None = None,
    ) -> None:
        super().__init__(game, seed)
        self.network = network.eval()
        self.metadata = metadata
        self.sample = sample
        self.threads = inference_threads(threads)
        """torch threads of the forward pass (see the module doc)"""

    def logits(self, observation: np.ndarray) -> np.ndarray:
        """Raw logits for one observation vector (or a batch of them)."""
        with torch_threads(self.threads), torch.inference_mode():
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


def _show(value: Any, limit: int = 60) -> str:
    """A bounded repr: a refusal quotes the bad value, never a whole file."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


def _is_int(value: Any) -> bool:
    """A JSON whole number: not a bool (an int to Python), not 64.0."""
    return type(value) is int


def _is_size(value: Any) -> bool:
    return _is_int(value) and 1 <= value <= MAX_LAYER_UNITS


def _too_deep(text: str) -> bool:
    """Whether arrays/objects nest deeper than `MAX_JSON_DEPTH` (json.loads would recurse, not refuse)."""
    depth = 0
    for match in _JSON_TOKENS.finditer(text):
        token = match.group()
        if token in ("[", "{"):
            depth += 1
            if depth > MAX_JSON_DEPTH:
                return True
        elif token in ("]", "}"):
            depth -= 1
    return False


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _parse_json(path: pathlib.Path, data: bytes, what: str) -> Any:
    """Strict JSON (no NaN/Infinity), refused with a ValueError when it is not text, too deep or invalid."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise _refuse(path, f"{what} is not UTF-8 text (byte {err.start}); {what} is UTF-8 JSON") from None
    if _too_deep(text):
        raise _refuse(path, f"{what} nests arrays/objects more than {MAX_JSON_DEPTH} deep; "
                            "export writes a handful of levels")
    try:
        return json.loads(text, parse_constant=_no_constant)
    except ValueError as err:
        raise _refuse(path, f"{what} is not valid JSON (truncated or corrupted?): {str(err)[:200]}; "
                            f"{what} is the JSON export writes") from None


_FIELDS: tuple[tuple[str, Callable[[Any], bool], str], ...] = (
    ("game", lambda v: isinstance(v, str) and v in games(), f"a game id: {', '.join(games())}"),
    ("rules", lambda v: isinstance(v, dict), "an object of rule options"),
    ("num_players", lambda v: _is_int(v) and v >= 1, "a whole number of players"),
    ("observation", lambda v: isinstance(v, dict), "an object with the layout's version and size"),
    ("observation.version", _is_int, "a whole number"),
    ("observation.size", _is_size, f"a whole number from 1 to {MAX_LAYER_UNITS:,}"),
    ("num_actions", _is_size, f"a whole number from 1 to {MAX_LAYER_UNITS:,}"),
    ("network", lambda v: isinstance(v, dict), "an object with layer_sizes and activation"),
    ("network.layer_sizes", lambda v: isinstance(v, list), "a list of layer widths"),
    ("network.activation", lambda v: isinstance(v, str) and v in ACTIVATIONS,
     f"one of {', '.join(ACTIVATIONS)}"),
    ("weights", lambda v: isinstance(v, dict), "an object with the weights file's sha256"),
    ("weights.sha256", lambda v: isinstance(v, str) and re.fullmatch("[0-9a-f]{64}", v) is not None,
     "64 lowercase hex digits"),
)


def _read_metadata(meta_path: pathlib.Path) -> dict[str, Any]:
    """The metadata, refused unless it is small, shallow JSON of this format with well-typed fields."""
    if not meta_path.is_file():
        raise _refuse(
            meta_path, "file not found (a bot is NAME.json plus NAME.safetensors, written by export)"
        )
    with meta_path.open("rb") as f:
        data = f.read(MAX_METADATA_BYTES + 1)
    if len(data) > MAX_METADATA_BYTES:
        raise _refuse(meta_path, f"the metadata file is larger than {MAX_METADATA_BYTES:,} bytes (1 MiB); "
                                 "a bot's metadata is a few KiB of JSON")
    meta = _parse_json(meta_path, data, "the metadata")
    _check_format(meta_path, meta)
    _check_fields(meta_path, meta)
    return meta


def _check_format(meta_path: pathlib.Path, meta: Any) -> None:
    accepted = f'the JSON object export writes, with "format": "{FORMAT}"'
    if not isinstance(meta, dict):
        raise _refuse(meta_path, f"not a {FORMAT} file (the JSON is not an object); "
                                 f"a bot's metadata is {accepted}")
    if meta.get("format") != FORMAT:
        raise _refuse(meta_path, f'not a {FORMAT} file ("format" is {_show(meta.get("format"))}); '
                                 f"a bot's metadata is {accepted}")
    version = meta.get("format_version")
    if not (_is_int(version) and version == FORMAT_VERSION):
        raise _refuse(meta_path, f"format version {_show(version)}; this cardlab reads version "
                                 f"{FORMAT_VERSION} (export the bot again with this cardlab)")


def _check_fields(meta_path: pathlib.Path, meta: dict[str, Any]) -> None:
    """Each field the loader reads exists and has the right type (parents are checked before children)."""
    for name, valid, accepted in _FIELDS:
        *parents, key = name.split(".")
        holder = meta
        for parent in parents:
            holder = holder[parent]
        if key not in holder:
            raise _refuse(meta_path, f"the metadata lacks fields (corrupted?): no {name}, "
                                     f"which must be {accepted}")
        if not valid(holder[key]):
            raise _refuse(meta_path, f"the metadata field {name} is {_show(holder[key])}; "
                                     f"it must be {accepted}")


def _check_game(meta_path: pathlib.Path, meta: dict[str, Any], game: Game) -> None:
    """Refuse a game whose id, rules or layouts differ from the bot's."""
    spec = game.spec
    if meta["game"] != spec.id:
        raise _refuse(meta_path, f"it plays {meta['game']}, not {spec.id}; play it at a {meta['game']} table")
    if meta["num_players"] != game.num_players:
        raise _refuse(
            meta_path, f"it was trained for {meta['num_players']} players, the game has "
                       f"{game.num_players}; play it with {meta['num_players']} players"
        )
    game_rules = game.rules.to_dict()
    diffs = [
        f"{k}={meta['rules'].get(k, '(missing)')!r} (game: {game_rules.get(k, '(missing)')!r})"
        for k in sorted(set(game_rules) | set(meta["rules"]))
        if meta["rules"].get(k, "(missing)") != game_rules.get(k, "(missing)")
    ]
    if diffs:
        raise _refuse(meta_path, f"it was trained with other rule options: {', '.join(diffs)}; "
                                 "play it with the rule options it was trained with")
    if meta["observation"]["version"] != spec.observation_version:
        raise _refuse(
            meta_path,
            f"its observation layout is version {meta['observation']['version']}, the game's is "
            f"{spec.observation_version}; play it with the cardlab it was trained with, or train it again",
        )
    if meta["observation"]["size"] != game.layout.size:
        raise _refuse(
            meta_path, f"it reads {meta['observation']['size']} observation numbers, the game gives "
                       f"{game.layout.size}; play it with the observation layout it was trained on"
        )
    if meta["num_actions"] != spec.num_actions:
        raise _refuse(meta_path, f"it has {meta['num_actions']} actions, the game has {spec.num_actions}; "
                                 "play it with the action layout it was trained on")


LAYER_LIMITS = (
    f"network.layer_sizes lists the observation size, 0 to {MAX_HIDDEN_LAYERS} hidden layer widths and the "
    f"number of actions, each a whole number from 1 to {MAX_LAYER_UNITS:,}, "
    f"{MAX_PARAMETERS:,} parameters at most"
)


def _parameter_count(sizes: list[int]) -> int:
    return sum((n_in + 1) * n_out for n_in, n_out in itertools.pairwise(sizes))


def _check_network(meta_path: pathlib.Path, meta: dict[str, Any]) -> None:
    """Refuse layer sizes that are not whole numbers, absurd, or off the layouts, before allocating."""
    sizes = meta["network"]["layer_sizes"]
    if not 2 <= len(sizes) <= MAX_HIDDEN_LAYERS + 2:
        raise _refuse(meta_path, f"network.layer_sizes has {len(sizes):,} entries; {LAYER_LIMITS}")
    for i, size in enumerate(sizes):
        if not _is_size(size):
            raise _refuse(meta_path, f"network.layer_sizes[{i}] is {_show(size)}; {LAYER_LIMITS}")
    count = _parameter_count(sizes)
    if count > MAX_PARAMETERS:
        raise _refuse(meta_path, f"network.layer_sizes {sizes} make {count:,} parameters; {LAYER_LIMITS}")
    obs, actions = meta["observation"]["size"], meta["num_actions"]
    if sizes[0] != obs or sizes[-1] != actions:
        raise _refuse(meta_path, f"the network's input/output sizes ({sizes[0]}, {sizes[-1]}) disagree with "
                                 f"the observation size/actions ({obs}, {actions}); layer_sizes starts with "
                                 "the observation size and ends with the number of actions")


def _layer_names(sizes: list[int]) -> list[str]:
    return [f"hidden.{i}" for i in range(len(sizes) - 2)] + ["action"]


def _expected_shapes(sizes: list[int]) -> dict[str, tuple[int, ...]]:
    """The tensors of a network of these layer sizes, name -> shape (weight [out, in], bias [out])."""
    shapes: dict[str, tuple[int, ...]] = {}
    for name, (n_in, n_out) in zip(_layer_names(sizes), itertools.pairwise(sizes), strict=True):
        shapes[f"{name}.weight"] = (n_out, n_in)
        shapes[f"{name}.bias"] = (n_out,)
    return shapes


def _read_weights(meta_path: pathlib.Path, meta: dict[str, Any],
                  weights_path: pathlib.Path) -> dict[str, torch.Tensor]:
    """The checked weights: file size capped by the network's, sha256, header, then finite float32 values.

    The file is read once, so the bytes checked are the bytes loaded.
    """
    if not weights_path.is_file():
        raise _refuse(meta_path, f"the weights file {weights_path} is missing")
    sizes = meta["network"]["layer_sizes"]
    shapes = _expected_shapes(sizes)
    limit = 8 + MAX_HEADER_BYTES + 4 * sum(math.prod(shape) for shape in shapes.values())
    too_big = _refuse(meta_path, f"the weights file {weights_path.name} is larger than the {limit:,} bytes a "
                                 f"network of layer_sizes {sizes} takes in safetensors")
    if weights_path.stat().st_size > limit:
        raise too_big
    with weights_path.open("rb") as f:
        data = f.read(limit + 1)
    if len(data) > limit:
        raise too_big
    if hashlib.sha256(data).hexdigest() != meta["weights"]["sha256"]:
        raise _refuse(meta_path, f"the weights file {weights_path.name} does not match its sha256 "
                                 "(corrupted?); a bot's .safetensors must be the one exported with its .json")
    _check_header(meta_path, weights_path.name, data, shapes)
    try:
        tensors = load_bytes(data)
    except (SafetensorError, ValueError) as err:
        raise _refuse(meta_path, f"cannot read the weights file {weights_path.name}: {str(err)[:200]}; "
                                 f"{WEIGHTS_ACCEPTED}") from None
    _check_weights(meta_path, tensors)
    return tensors


WEIGHTS_ACCEPTED = "a bot's weights are the safetensors file of float32 (F32) tensors export writes"


def _check_header(meta_path: pathlib.Path, name: str, data: bytes,
                  shapes: dict[str, tuple[int, ...]]) -> None:
    """Refuse a safetensors file whose header is not exactly these float32 tensors, laid end to end.

    Layout: an 8-byte little-endian header length, a JSON header mapping each
    tensor name to its dtype, shape and [begin, end) byte offsets into the
    data that follows (plus an optional "__metadata__" object of strings).
    """

    def cannot(reason: str) -> ValueError:
        return _refuse(meta_path, f"cannot read the weights file {name}: {reason}; {WEIGHTS_ACCEPTED}")

    if len(data) < 8:
        raise cannot(f"it has {len(data)} bytes, fewer than the 8 of the header length")
    size = int.from_bytes(data[:8], "little")
    if size > MAX_HEADER_BYTES:
        raise cannot(f"its header length is {size:,} bytes, more than the {MAX_HEADER_BYTES:,} accepted")
    if 8 + size > len(data):
        raise cannot(f"its header length is {size:,} bytes but only {len(data) - 8:,} follow (truncated?)")
    header = _parse_json(meta_path, data[8 : 8 + size], f"the header of the weights file {name}")
    if not isinstance(header, dict):
        raise cannot("its header is not a JSON object")
    extra = header.pop("__metadata__", {})
    if not (isinstance(extra, dict) and all(isinstance(v, str) for v in extra.values())):
        raise cannot("its __metadata__ is not an object of strings")
    if set(header) != set(shapes):
        missing, unexpected = sorted(set(shapes) - set(header)), sorted(set(header) - set(shapes))
        raise _refuse(meta_path, f"the weights file has the wrong tensors: missing {_show(missing, 200)}, "
                                 f"unexpected {_show(unexpected, 200)}; a network of its layer_sizes has "
                                 f"exactly {', '.join(shapes)}")
    spans = []
    for tensor, shape in shapes.items():
        entry = header[tensor]
        if not isinstance(entry, dict):
            raise cannot(f"its header entry {tensor} is not an object with dtype, shape and data_offsets")
        if entry.get("dtype") != "F32":
            raise _refuse(meta_path, f"tensor {tensor} has dtype {_show(entry.get('dtype'))}; "
                                     "bot weights are float32 (F32) tensors only")
        found = entry.get("shape")
        if not (isinstance(found, list) and all(_is_int(n) for n in found)):
            raise cannot(f"the shape of {tensor} is {_show(found)}, not a list of whole numbers")
        if tuple(found) != shape:
            raise _refuse(meta_path, f"tensor {tensor} has shape {_show(found)}, the network needs "
                                     f"{list(shape)} (from the metadata's network.layer_sizes)")
        offsets = entry.get("data_offsets")
        if not (isinstance(offsets, list) and len(offsets) == 2 and all(_is_int(n) for n in offsets)
                and offsets[1] - offsets[0] == 4 * math.prod(shape)):
            raise cannot(f"the data_offsets of {tensor} are {_show(offsets)}, not [begin, begin + "
                         f"{4 * math.prod(shape):,}] (4 bytes per float32)")
        spans.append((offsets[0], offsets[1]))
    end = 0
    for begin, stop in sorted(spans):
        if begin != end:
            raise cannot("its tensors' data_offsets overlap or leave gaps")
        end = stop
    if end != len(data) - 8 - size:
        raise cannot(f"its tensors take {end:,} bytes but {len(data) - 8 - size:,} follow the header "
                     "(truncated or edited?)")


def _check_weights(meta_path: pathlib.Path, tensors: dict[str, torch.Tensor]) -> None:
    """Refuse weights a network would turn into NaN logits, which an argmax reads as a legal-looking move."""
    for name, tensor in tensors.items():
        if tensor.dtype != torch.float32:
            raise _refuse(meta_path, f"tensor {name} has dtype {tensor.dtype}; "
                                     "bot weights are float32 tensors only")
        if not bool(torch.isfinite(tensor).all()):
            raise _refuse(meta_path, f"tensor {name} holds NaN or infinite values; bot weights must be "
                                     "finite float32 numbers (did the training diverge?)")


def _build_network(meta: dict[str, Any], tensors: dict[str, torch.Tensor]) -> nn.Module:
    """The actor: Linear layers built without memory of their own, then given the checked tensors."""
    sizes = meta["network"]["layer_sizes"]
    activation = ACTIVATIONS[meta["network"]["activation"]]
    layers: list[nn.Module] = []
    state: dict[str, torch.Tensor] = {}
    for name, (n_in, n_out) in zip(_layer_names(sizes), itertools.pairwise(sizes), strict=True):
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
    """Load a bot file for `game` (a `Game`, or an env); refuse it unless game, rules and layouts match.

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
    meta = _read_metadata(meta_path)
    if game is None:
        try:
            table = get_spec(meta["game"]).make(meta["rules"])
        except ValueError as err:
            raise _refuse(meta_path, f"its game or rules are not known here: {err}") from None
    else:
        table = as_game(game)
    _check_game(meta_path, meta, table)
    _check_network(meta_path, meta)
    tensors = _read_weights(meta_path, meta, weights_path)
    return BotAgent(table, _build_network(meta, tensors), meta, seed=seed, sample=sample, threads=threads)
