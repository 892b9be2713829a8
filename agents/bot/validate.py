"""Checks of untrusted bot files: each refusal is a ValueError saying what is wrong and what is accepted.

Bot files are meant to be shared, so `load_bot` treats them as untrusted: a
bad file is refused before anything large is read or allocated. The metadata
is at most `MAX_METADATA_BYTES` of JSON nested at most `MAX_JSON_DEPTH` deep
(`read_metadata`, a limited JSON reader, then the format and the fields);
it must match the game it is played at (`check_game`); the network has at most
`MAX_HIDDEN_LAYERS` hidden layers of 1 to `MAX_LAYER_UNITS` units and
`MAX_PARAMETERS` parameters (`check_network`); the weights file is checked
against its sha256, then its header (at most `MAX_HEADER_BYTES`; float32
tensors of exactly the shapes the layer sizes give, laid end to end) before
its tensors are loaded, and NaN or infinite weights are refused
(`read_weights`). A network whose logits are not finite on probes and on
observations of random play is refused too (`check_outputs`). A hand reader's
files go through the same checks, each told the file's kind (``kind="reader"``),
so that its refusal names the file it refuses as it is raised.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import math
import pathlib
import re
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from safetensors import SafetensorError
from safetensors.torch import load as load_bytes
from torch import nn

from cardlab.agents.bot.format import (
    ACTIVATIONS,
    FORMAT,
    FORMAT_VERSION,
    MAX_HEADER_BYTES,
    MAX_HIDDEN_LAYERS,
    MAX_JSON_DEPTH,
    MAX_LAYER_UNITS,
    MAX_METADATA_BYTES,
    MAX_PARAMETERS,
    ONNX_FORMAT,
    ONNX_FORMAT_VERSION,
    tensor_shapes,
)
from cardlab.envs import env_class
from cardlab.envs.aec import live_turns
from cardlab.envs.checked_json import excerpt, read_json
from cardlab.envs.declared import missing_file, refused_file
from cardlab.envs.game_spec import Game, games

BOT_FILES = "a bot is NAME.json plus NAME.safetensors, or NAME.json plus NAME.onnx, written by export"
"""what a bot's files are, as a refusal of a missing one says"""
BOT = "bot"
"""the kind of file the checks refuse, as their refusals name it, unless told another (`refuse`)"""


def refuse(path: pathlib.Path, reason: str, *, kind: str = BOT) -> ValueError:
    """The error of a refused bot file (`refused_file`'s wording); `kind` names a file of another kind that
    the bot checks read too (a hand reader's, ``reader``), so that each says which file it refuses."""
    return refused_file(kind, path, reason)


def _show(value: Any, limit: int = 60) -> str:
    """A bounded excerpt: a refusal quotes the bad value, never a whole file."""
    return excerpt(value, limit)


def _is_int(value: Any) -> bool:
    """A JSON whole number: not a bool (an int to Python), not 64.0."""
    return type(value) is int


def _is_size(value: Any) -> bool:
    return _is_int(value) and 1 <= value <= MAX_LAYER_UNITS


def _parse_json(path: pathlib.Path, data: bytes, what: str, *, kind: str = BOT) -> Any:
    """The checked JSON reader (`cardlab.envs.checked_json`), its refusal naming the bot file (or the file of
    `kind`)."""
    try:
        return read_json(data, what, max_bytes=len(data), max_depth=MAX_JSON_DEPTH)
    except ValueError as err:
        raise refuse(path, f"{err}; {what} is the JSON export writes", kind=kind) from None


Field = tuple[str, Callable[[Any], bool], str]
_TABLE_FIELDS: tuple[Field, ...] = (
    ("game", lambda v: isinstance(v, str) and v in games(), f"a game id: {', '.join(games())}"),
    ("rules", lambda v: isinstance(v, dict), "an object of rule options"),
    ("num_players", lambda v: _is_int(v) and v >= 1, "a whole number of players"),
    ("observation", lambda v: isinstance(v, dict), "an object with the layout's version and size"),
    ("observation.version", _is_int, "a whole number"),
    ("observation.size", _is_size, f"a whole number from 1 to {MAX_LAYER_UNITS:,}"),
    ("num_actions", _is_size, f"a whole number from 1 to {MAX_LAYER_UNITS:,}"),
)
_SHA256: Field = ("sha256", lambda v: isinstance(v, str) and re.fullmatch("[0-9a-f]{64}", v) is not None,
                  "64 lowercase hex digits")
_SUMMARY: Field = ("summary", lambda v: isinstance(v, dict), "an object (the training summary export writes)")
_FIELDS: tuple[Field, ...] = (
    *_TABLE_FIELDS,
    ("network", lambda v: isinstance(v, dict), "an object with layer_sizes and activation"),
    ("network.layer_sizes", lambda v: isinstance(v, list), "a list of layer widths"),
    ("network.activation", lambda v: isinstance(v, str) and v in ACTIVATIONS,
     f"one of {', '.join(ACTIVATIONS)}"),
    _SUMMARY,
    ("weights", lambda v: isinstance(v, dict), "an object with the weights file's sha256"),
    ("weights." + _SHA256[0], *_SHA256[1:]),
)


def _is_name(value: Any) -> bool:
    return isinstance(value, str) and 1 <= len(value) <= 256


_ONNX_FIELDS: tuple[Field, ...] = (
    *_TABLE_FIELDS,
    ("onnx", lambda v: isinstance(v, dict), "an object with the graph's sha256, input and output"),
    ("onnx." + _SHA256[0], *_SHA256[1:]),
    ("onnx.input", _is_name, "the name of the graph's input of observations (B, observation size)"),
    ("onnx.output", _is_name, "the name of the graph's output of logits (B, number of actions)"),
    _SUMMARY,
)
FORMATS = {FORMAT: (FORMAT_VERSION, _FIELDS), ONNX_FORMAT: (ONNX_FORMAT_VERSION, _ONNX_FIELDS)}
"""the metadata formats a bot may have: format -> (the version read, the fields checked)"""


def read_metadata(meta_path: pathlib.Path) -> dict[str, Any]:
    """The metadata, refused unless it is small, shallow JSON of this format with well-typed fields."""
    if not meta_path.is_file():
        raise missing_file("bot", meta_path, BOT_FILES)
    data = read_capped(meta_path, meta_path, MAX_METADATA_BYTES, refuse(
        meta_path, f"the metadata file is larger than {MAX_METADATA_BYTES:,} bytes (1 MiB); a bot's metadata "
                   "is a few KiB of JSON"))
    meta = _parse_json(meta_path, data, "the metadata")
    _check_format(meta_path, meta)
    _check_fields(meta_path, meta)
    return meta


def read_capped(meta_path: pathlib.Path, path: pathlib.Path, limit: int, too_big: ValueError, *,
                kind: str = BOT) -> bytes:
    """The bytes of one of a bot's files, read once: `too_big` past `limit`; a file that cannot be read (a
    link to /proc/self/mem, a device, a folder) refused naming it, not as a bare "input/output error"."""
    try:
        if path.stat().st_size > limit:
            raise too_big
        with path.open("rb") as f:
            data = f.read(limit + 1)
    except OSError as err:
        reason = (err.strerror or type(err).__name__).lower()
        raise refuse(meta_path, f"cannot read {path}: {reason}; a {kind}'s files are the regular files "
                                 "export writes", kind=kind) from None
    if len(data) > limit:
        raise too_big
    return data


def _check_format(meta_path: pathlib.Path, meta: Any) -> None:
    accepted = (f'the JSON object export writes, with "format": "{FORMAT}" (beside NAME.safetensors) or '
                f'"{ONNX_FORMAT}" (beside NAME.onnx)')
    if not isinstance(meta, dict):
        raise refuse(meta_path, f"not a {FORMAT} file (the JSON is not an object); "
                                 f"a bot's metadata is {accepted}")
    if meta.get("format") not in FORMATS:
        raise refuse(meta_path, f'not a {FORMAT} file ("format" is {_show(meta.get("format"))}); '
                                 f"a bot's metadata is {accepted}")
    check_version(meta_path, meta.get("format_version"), FORMATS[meta["format"]][0], "export the bot again")


def check_version(meta_path: pathlib.Path, version: Any, expected: int, again: str, *,
                  kind: str = BOT) -> None:
    """Refuse a format version other than `expected` (a whole number: ``true`` is not 1); `again` says how
    to get a file of this version. Bots and hand readers share it, `kind` naming the file (``reader``)."""
    if not (_is_int(version) and version == expected):
        raise refuse(meta_path, f"format version {_show(version)}; this cardlab reads version {expected} "
                                 f"({again} with this cardlab)", kind=kind)


def _check_fields(meta_path: pathlib.Path, meta: dict[str, Any]) -> None:
    """Each field the loader reads exists and has the right type (parents are checked before children)."""
    for name, valid, accepted in FORMATS[meta["format"]][1]:
        *parents, key = name.split(".")
        holder = meta
        for parent in parents:
            holder = holder[parent]
        if key not in holder:
            raise refuse(meta_path, f"the metadata lacks fields (corrupted?): no {name}, "
                                     f"which must be {accepted}")
        if not valid(holder[key]):
            raise refuse(meta_path, f"the metadata field {name} is {_show(holder[key])}; "
                                     f"it must be {accepted}")


def check_game(meta_path: pathlib.Path, meta: dict[str, Any], game: Game, *, kind: str = BOT,
               advice: bool = True) -> None:
    """Refuse a game whose id, rules or layouts differ from the bot's (or those of the file of `kind`, which
    the refusal names: a hand reader's), saying what differs and how to play the file; `advice=False` says
    what differs alone, for a caller that says itself what it accepts instead (a resumed run's league,
    which seats the snapshots it wrote: there "play it at a switch table" is no answer)."""
    misfit = table_misfit(meta, game)
    if misfit is not None:
        what, how = misfit
        raise refuse(meta_path, f"{what}; {how}" if advice else what, kind=kind)


def table_misfit(meta: dict[str, Any], game: Game) -> tuple[str, str] | None:
    """(what differs between the table a file's checked metadata was made for and `game`, how to play the
    file), or None where they agree: `check_game`'s checks, in its order."""
    spec = game.spec
    if meta["game"] != spec.id:
        return f"it plays {meta['game']}, not {spec.id}", f"play it at a {meta['game']} table"
    if meta["num_players"] != game.num_players:
        return (f"it was trained for {meta['num_players']} players, the game has {game.num_players}",
                f"play it with {meta['num_players']} players")
    game_rules, bot_rules = game.rules.to_dict(), spec.rules.completed(meta["rules"])
    diffs = [
        f"{k}={excerpt(bot_rules.get(k, '(missing)'))} (game: {excerpt(game_rules.get(k, '(missing)'))})"
        for k in sorted(set(game_rules) | set(bot_rules))
        if bot_rules.get(k, "(missing)") != game_rules.get(k, "(missing)")
    ]
    if diffs:
        return (f"it was trained with other rule options: {', '.join(diffs)}",
                "play it with the rule options it was trained with")
    if meta["observation"]["version"] != spec.observation_version:
        return (f"its observation layout is version {meta['observation']['version']}, the game's is "
                f"{spec.observation_version}",
                "play it with the cardlab it was trained with, or train it again")
    if meta["observation"]["size"] != game.layout.size:
        return (f"it reads {meta['observation']['size']} observation numbers, the game gives "
                f"{game.layout.size}", "play it with the observation layout it was trained on")
    if meta["num_actions"] != spec.num_actions:
        return (f"it has {meta['num_actions']} actions, the game has {spec.num_actions}",
                "play it with the action layout it was trained on")
    return None


LAYER_LIMITS = (
    f"network.layer_sizes lists the observation size, 0 to {MAX_HIDDEN_LAYERS} hidden layer widths and the "
    f"number of actions, each a whole number from 1 to {MAX_LAYER_UNITS:,}, "
    f"{MAX_PARAMETERS:,} parameters at most"
)


def _parameter_count(sizes: list[int]) -> int:
    return sum((n_in + 1) * n_out for n_in, n_out in itertools.pairwise(sizes))


def check_network(meta_path: pathlib.Path, meta: dict[str, Any], *, kind: str = BOT) -> None:
    """Refuse layer sizes that are not whole numbers, absurd, or off the layouts, before allocating."""
    sizes = meta["network"]["layer_sizes"]
    if not 2 <= len(sizes) <= MAX_HIDDEN_LAYERS + 2:
        raise refuse(meta_path, f"network.layer_sizes has {len(sizes):,} entries; {LAYER_LIMITS}", kind=kind)
    for i, size in enumerate(sizes):
        if not _is_size(size):
            raise refuse(meta_path, f"network.layer_sizes[{i}] is {_show(size)}; {LAYER_LIMITS}", kind=kind)
    count = _parameter_count(sizes)
    if count > MAX_PARAMETERS:
        raise refuse(meta_path, f"network.layer_sizes {sizes} make {count:,} parameters; {LAYER_LIMITS}",
                     kind=kind)
    obs, actions = meta["observation"]["size"], meta["num_actions"]
    if sizes[0] != obs or sizes[-1] != actions:
        raise refuse(meta_path, f"the network's input/output sizes ({sizes[0]}, {sizes[-1]}) disagree with "
                                 f"the observation size/actions ({obs}, {actions}); layer_sizes starts with "
                                 "the observation size and ends with the number of actions", kind=kind)


def read_weights(meta_path: pathlib.Path, meta: dict[str, Any],
                  weights_path: pathlib.Path, *, kind: str = BOT) -> dict[str, torch.Tensor]:
    """The checked weights: file size capped by the network's, sha256, header, then finite float32 values.

    The file is read once, so the bytes checked are the bytes loaded.
    """
    if not weights_path.is_file():
        raise refuse(meta_path, f"the weights file {weights_path} is missing", kind=kind)
    sizes = meta["network"]["layer_sizes"]
    shapes = tensor_shapes(sizes)
    limit = 8 + MAX_HEADER_BYTES + 4 * sum(math.prod(shape) for shape in shapes.values())
    too_big = refuse(meta_path, f"the weights file {weights_path.name} is larger than the {limit:,} bytes a "
                                 f"network of layer_sizes {sizes} takes in safetensors", kind=kind)
    data = read_capped(meta_path, weights_path, limit, too_big, kind=kind)
    if hashlib.sha256(data).hexdigest() != meta["weights"]["sha256"]:
        raise refuse(meta_path, f"the weights file {weights_path.name} does not match its sha256 "
                                 f"(corrupted?); a {kind}'s .safetensors must be the one written with its "
                                 ".json", kind=kind)
    _check_header(meta_path, weights_path.name, data, shapes, kind=kind)
    try:
        tensors = load_bytes(data)
    except (SafetensorError, ValueError) as err:
        raise refuse(meta_path, f"cannot read the weights file {weights_path.name}: {str(err)[:200]}; "
                                 f"{weights_accepted(kind)}", kind=kind) from None
    _check_weights(meta_path, tensors, kind=kind)
    return tensors


def weights_accepted(kind: str = BOT) -> str:
    """What a weights file of a `kind` file (a bot's, a reader's) must be, as its refusals say."""
    return f"a {kind}'s weights are the safetensors file of float32 (F32) tensors export writes"


def _check_header(meta_path: pathlib.Path, name: str, data: bytes,
                  shapes: dict[str, tuple[int, ...]], *, kind: str = BOT) -> None:
    """Refuse a safetensors file whose header is not exactly these float32 tensors, laid end to end.

    Layout: an 8-byte little-endian header length, a JSON header mapping each
    tensor name to its dtype, shape and [begin, end) byte offsets into the
    data that follows (plus an optional "__metadata__" object of strings).
    """

    def cannot(reason: str) -> ValueError:
        return refuse(meta_path, f"cannot read the weights file {name}: {reason}; {weights_accepted(kind)}",
                      kind=kind)

    if len(data) < 8:
        raise cannot(f"it has {len(data)} bytes, fewer than the 8 of the header length")
    size = int.from_bytes(data[:8], "little")
    if size > MAX_HEADER_BYTES:
        raise cannot(f"its header length is {size:,} bytes, more than the {MAX_HEADER_BYTES:,} accepted")
    if 8 + size > len(data):
        raise cannot(f"its header length is {size:,} bytes but only {len(data) - 8:,} follow (truncated?)")
    header = _parse_json(meta_path, data[8 : 8 + size], f"the header of the weights file {name}", kind=kind)
    if not isinstance(header, dict):
        raise cannot("its header is not a JSON object")
    extra = header.pop("__metadata__", {})
    if not (isinstance(extra, dict) and all(isinstance(v, str) for v in extra.values())):
        raise cannot("its __metadata__ is not an object of strings")
    if set(header) != set(shapes):
        missing, unexpected = sorted(set(shapes) - set(header)), sorted(set(header) - set(shapes))
        raise refuse(meta_path, f"the weights file has the wrong tensors: missing {_show(missing, 200)}, "
                                 f"unexpected {_show(unexpected, 200)}; a network of its layer_sizes has "
                                 f"exactly {', '.join(shapes)}", kind=kind)
    spans = []
    for tensor, shape in shapes.items():
        entry = header[tensor]
        if not isinstance(entry, dict):
            raise cannot(f"its header entry {tensor} is not an object with dtype, shape and data_offsets")
        if entry.get("dtype") != "F32":
            raise refuse(meta_path, f"tensor {tensor} has dtype {_show(entry.get('dtype'))}; "
                                     f"{kind} weights are float32 (F32) tensors only", kind=kind)
        found = entry.get("shape")
        if not (isinstance(found, list) and all(_is_int(n) for n in found)):
            raise cannot(f"the shape of {tensor} is {_show(found)}, not a list of whole numbers")
        if tuple(found) != shape:
            raise refuse(meta_path, f"tensor {tensor} has shape {_show(found)}, the network needs "
                                     f"{list(shape)} (from the metadata's network.layer_sizes)", kind=kind)
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


def _check_weights(meta_path: pathlib.Path, tensors: dict[str, torch.Tensor], *, kind: str = BOT) -> None:
    """Refuse weights a network would turn into NaN logits, which an argmax reads as a legal-looking move."""
    for name, tensor in tensors.items():
        if tensor.dtype != torch.float32:
            raise refuse(meta_path, f"tensor {name} has dtype {tensor.dtype}; "
                                     f"{kind} weights are float32 tensors only", kind=kind)
        if not bool(torch.isfinite(tensor).all()):
            raise refuse(meta_path, f"tensor {name} holds NaN or infinite values; {kind} weights must be "
                                     "finite float32 numbers (did the training diverge?)", kind=kind)


PLAYED_OBSERVATIONS = 256
"""observations of random play a bot's logits must be finite on (besides the flat probes)"""


def random_play(game: Game, count: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(observations, action masks) of the first `count` decisions of seeded random hands of `game` (hand
    k dealt from `seed` + k, every seat moving at random from one generator of `seed`): real positions on
    which to probe a network, or to compare two bots' moves (tests, benchmarks/onnx_speed.py)."""
    env = env_class(game.spec)(episode="hand", **game.rules.to_dict())
    rng = np.random.default_rng(seed)
    obs: list[np.ndarray] = []
    masks: list[np.ndarray] = []
    hand = 0
    while len(obs) < count:
        env.reset(seed=seed + hand)
        hand += 1
        for _, _, o in live_turns(env):
            if len(obs) == count:
                break
            obs.append(o["observation"])
            masks.append(o["action_mask"])
            env.step(int(rng.choice(np.flatnonzero(o["action_mask"]))))
    return np.array(obs), np.array(masks)


@functools.lru_cache(maxsize=32)
def played_observations(game: Game, count: int = PLAYED_OBSERVATIONS) -> np.ndarray:
    """(count, obs_size) float32: the observations of the seats to move in seeded random hands of `game`
    (`random_play`).

    Real observations, because a flat probe misses a network that overflows
    only where two inputs differ (``tanh(1e4 * (x0 - x1))`` times ``3e38``).
    Cached per game: a loader may load many bots of one table.
    """
    return random_play(game, count, seed=0)[0].astype(np.float32)


def check_outputs(meta_path: pathlib.Path, network: nn.Module, game: Game) -> None:
    """Refuse a network whose logits are NaN or infinite on a probe or on an observation of random play.

    Finite but huge weights (3e38) overflow: their probabilities would be NaN
    and their masked argmax an illegal move.
    """
    size = game.layout.size
    probe = torch.stack([torch.zeros(size), torch.ones(size), torch.full((size,), 0.5)])
    with torch.inference_mode():
        if not bool(torch.isfinite(network(probe)).all()):
            raise refuse(meta_path, "its network's logits are NaN or infinite on a probe observation "
                                    f"(weights too large?); {FINITE}")
        played = network(torch.as_tensor(played_observations(game)))
        if not bool(torch.isfinite(played).all()):
            raise refuse(meta_path, "its network's logits are NaN or infinite on an observation of random "
                                    f"play (weights too large?); {FINITE}")


FINITE = "a bot's forward pass must give finite numbers on every observation of its game"
