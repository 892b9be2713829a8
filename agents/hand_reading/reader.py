"""`HandReader`: where each unseen card is, read from one seat's view of the hand; its files.

Why a learned reader: a likelihood belief (`cardlab.agents.hand_reading.belief`)
weighs worlds dealt uniformly, and with three or more hidden hands almost
every such world is far from the truth. A reader predicts the placement
directly from the seat's public knowledge (`cardlab.envs.reading_inputs`),
learned from positions the engines label for free
(`cardlab.training.data.reader`). Design: a per-card softmax over the places a
card can be (each other hand, then the pile), added to the log of each
place's size, so an untrained reader is the uniform deal and training learns
only what the record says beyond it; the deal (`cardlab.envs.worlds_by_reading`) ties
the cards together through the exact hand sizes, at a fraction of an
autoregressive model's cost.

Files: like a bot's and held to its rules, ``NAME.json`` (`FORMAT`: game,
rules, table, observation and reading versions, places, kinds, network
shape, summary, the weights' sha256) beside ``NAME.safetensors``.
`load_reader` refuses in one line a file for another game, table, rule set
(`memory` aside: `reading_table`) or version, or a corrupted one; its logits
must be finite on probes and on positions of random play (`played_readings`),
and a reading that is not finite in play is refused naming the file. The
shipped readers are ``agents/readers/GAME-Np.json`` (`shipped_reader`).
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import json
import pathlib
from typing import Any

import numpy as np
import torch
from safetensors.torch import save as save_bytes
from torch import nn

from cardlab.agents.bot import inference_threads, torch_threads, write_bot_files
from cardlab.agents.bot.format import ACTIVATIONS, MAX_JSON_DEPTH, MAX_METADATA_BYTES, bot_paths, layer_names
from cardlab.agents.bot.load import build_network
from cardlab.agents.bot.validate import (
    check_game,
    check_network,
    check_version,
    read_capped,
    read_weights,
    table_misfit,
)
from cardlab.envs import make_env
from cardlab.envs.aec import live_turns
from cardlab.envs.cards import NUM_KINDS
from cardlab.envs.checked_json import excerpt, read_json
from cardlab.envs.declared import missing_file, refused_file
from cardlab.envs.game_spec import Game, games, make_game
from cardlab.envs.reading_inputs import READING_VERSION, InputLayout, input_layout, reading_inputs
from cardlab.envs.record import Record
from cardlab.envs.world_sampling import Determinization
from cardlab.envs.worlds_by_reading import places

READER_ACTIVATIONS = ("relu", "tanh")
"""the activations a reader may have (the ones its trainer offers)"""
FORMAT = "cardlab-reader"
FORMAT_VERSION = 1
SHIPPED = pathlib.Path(__file__).resolve().parent.parent / "readers"
"""the folder of the shipped readers, ``GAME-Np.json`` each"""


def reader_layout(game: Game) -> InputLayout:
    """The reader's input layout at `game`'s table."""
    deck: list[int] = game.rules.deck()  # type: ignore[attr-defined]  # every card game's rules have a deck
    return input_layout(game.layout.size, game.num_players, deck)


def new_network(inputs: int, kinds: int, places_n: int, hidden: list[int], activation: str) -> nn.Sequential:
    """An untrained MLP from the reading inputs to (kinds x places) logits."""
    sizes = [inputs, *hidden, kinds * places_n]
    layers: list[nn.Module] = []
    for i, (n_in, n_out) in enumerate(itertools.pairwise(sizes)):
        layers.append(nn.Linear(n_in, n_out))
        if i < len(sizes) - 2:
            layers.append(ACTIVATIONS[activation]())
    return nn.Sequential(*layers)


def place_log_probs(logits: torch.Tensor, room: torch.Tensor) -> torch.Tensor:
    """(B, kinds, P) log-probabilities of each kind's place: logits plus the log of each place's room,
    normalised over the places; a place without room gets -inf (see the module doc)."""
    prior = torch.log(room.to(logits.dtype)).unsqueeze(1)  # log 0 = -inf: no room, no card
    return torch.log_softmax(logits + prior, dim=-1)


class HandReader:
    """A trained reader at one table: `leaning` gives, for a seat's view, each kind's place weights."""

    def __init__(self, game: Game, network: nn.Module, meta: dict[str, Any], path: pathlib.Path,
                 table: Game | None = None) -> None:
        self.game, self.path = game, path
        self.table = game if table is None else table
        """the table the network reads (`reading_table`): `game`, or `game` without its options that are no
        rules of play, whose observation is the start of `game`'s"""
        self.network = network.eval()
        self.meta = meta
        self.layout = reader_layout(self.table)
        self.kinds = np.asarray(self.layout.deck_kinds, dtype=np.int64)
        self.places = game.num_players
        self.threads = inference_threads()

    def inputs(self, known: Determinization, observation: np.ndarray, record: Record | None) -> np.ndarray:
        """The reading inputs of one view (`cardlab.envs.reading_inputs`), of the observation's part that the
        reader's table shows (`reading_table`)."""
        if self.table is not self.game:
            observation = np.asarray(observation)[..., :self.table.layout.size]
        return reading_inputs(self.layout, known, observation, record)

    def log_probs(self, inputs: np.ndarray, room: np.ndarray) -> np.ndarray:
        """(B, kinds, P) log-probabilities for (B, inputs) rows and their (B, P) places' room.

        On the reader's torch threads (`inference_threads`: one by default), as a bot's forward pass: a
        reader reads one row per decision, where more threads, or numpy's BLAS, cost more than the
        arithmetic on a busy machine."""
        with torch_threads(self.threads), torch.inference_mode():
            logits = self.network(torch.as_tensor(inputs, dtype=torch.float32))
            if not bool(torch.isfinite(logits).all()):  # else NaN weights deal the worlds
                raise _refuse(self.path, f"its network's logits are NaN or infinite on this position; "
                                         f"{FINITE}")
            logits = logits.reshape(len(inputs), self.kinds.size, self.places)
            return place_log_probs(logits.double(), torch.as_tensor(room)).numpy()

    def leaning(self, known: Determinization, observation: np.ndarray, record: Record | None) -> np.ndarray:
        """(NUM_KINDS, P) place probabilities of each kind for this view: what `Determinization.leaning`
        deals by (kinds outside the deck: uniform, never dealt)."""
        room = places(known)
        probs = np.exp(self.log_probs(self.inputs(known, observation, record)[None], room[None])[0])
        out = np.full((NUM_KINDS, self.places), 1.0 / self.places)
        out[self.kinds] = probs
        return out


# ------------------------------------------------------------------ files
def save_reader(network: nn.Module, path: str | pathlib.Path, game: Game, activation: str,
                summary: dict[str, Any]) -> pathlib.Path:
    """Write a reader's two files (each whole or not at all, as bot files); returns the .json path."""
    linears = [m for m in network.modules() if isinstance(m, nn.Linear)]
    sizes = [linears[0].in_features, *(m.out_features for m in linears)]
    layout = reader_layout(game)
    if sizes[0] != layout.size or sizes[-1] != len(layout.deck_kinds) * game.num_players:
        raise ValueError(f"the network maps {sizes[0]} inputs to {sizes[-1]} logits; a reader at this table "
                         f"maps {layout.size} to {len(layout.deck_kinds) * game.num_players}")
    tensors: dict[str, torch.Tensor] = {}
    for name, layer in zip(layer_names(sizes), linears, strict=True):
        tensors[f"{name}.weight"] = layer.weight.detach().to("cpu", torch.float32).contiguous()
        tensors[f"{name}.bias"] = layer.bias.detach().to("cpu", torch.float32).contiguous()
    meta_path, weights_path = bot_paths(path)
    weights = save_bytes(tensors)
    meta = {
        "format": FORMAT, "format_version": FORMAT_VERSION, "game": game.spec.id,
        "rules": game.rules.to_dict(), "num_players": game.num_players,
        "observation": {"version": game.spec.observation_version, "size": game.layout.size},
        "num_actions": game.spec.num_actions,
        "reading": {"version": READING_VERSION, "size": layout.size},
        "places": game.num_players, "kinds": list(layout.deck_kinds),
        "network": {"layer_sizes": sizes, "activation": activation},
        "summary": summary,
        "weights": {"file": weights_path.name, "sha256": hashlib.sha256(weights).hexdigest()},
    }
    text = json.dumps(meta, indent=2, default=str) + "\n"
    return write_bot_files(meta_path, text.encode("utf-8"), weights)


_WHAT = "reader"
READER_FILES = "a reader is NAME.json plus NAME.safetensors, written by cardlab read-hands"
"""what a reader's files are, as a refusal of a missing one says"""


def _refuse(path: pathlib.Path, reason: str) -> ValueError:
    return refused_file(_WHAT, path, reason)


def _is_int(value: Any) -> bool:
    return type(value) is int


_FIELDS: tuple[tuple[str, Any, str], ...] = (
    ("game", lambda v: isinstance(v, str) and v in games(), f"a game id: {', '.join(games())}"),
    ("rules", lambda v: isinstance(v, dict), "an object of rule options"),
    ("num_players", _is_int, "a whole number of players"),
    ("observation", lambda v: isinstance(v, dict) and _is_int(v.get("version")) and _is_int(v.get("size")),
     "an object with the observation layout's version and size"),
    ("num_actions", _is_int, "a whole number"),
    ("reading", lambda v: isinstance(v, dict) and _is_int(v.get("version")) and _is_int(v.get("size")),
     "an object with the reading inputs' version and size"),
    ("places", _is_int, "a whole number of places"),
    ("kinds", lambda v: isinstance(v, list) and len(v) <= NUM_KINDS and all(_is_int(k) for k in v),
     "the list of the deck's card ids"),
    ("network", lambda v: isinstance(v, dict) and isinstance(v.get("layer_sizes"), list)
     and v.get("activation") in READER_ACTIVATIONS, f"an object with layer_sizes and an activation, one of "
     f"{', '.join(READER_ACTIVATIONS)}"),
    ("summary", lambda v: isinstance(v, dict), "an object"),
    ("weights", lambda v: isinstance(v, dict) and isinstance(v.get("sha256"), str),
     "an object with a sha256"),
)


def read_reader_metadata(meta_path: pathlib.Path) -> dict[str, Any]:
    """The metadata, refused unless it is small, shallow JSON of `FORMAT` with well-typed fields."""
    if not meta_path.is_file():
        raise missing_file(_WHAT, meta_path, READER_FILES)
    data = read_capped(meta_path, meta_path, MAX_METADATA_BYTES, _refuse(
        meta_path, f"the metadata is larger than {MAX_METADATA_BYTES:,} bytes; a reader's is a few KiB of "
                   "JSON"), kind=_WHAT)
    try:
        meta = read_json(data, "the metadata", max_bytes=len(data), max_depth=MAX_JSON_DEPTH)
    except ValueError as err:
        raise _refuse(meta_path, str(err)) from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        found = meta.get("format") if isinstance(meta, dict) else meta
        raise _refuse(meta_path, f'not a {FORMAT} file ("format" is {excerpt(found)}); a reader\'s metadata '
                                 'is '
                                 f'the JSON object cardlab read-hands writes, with "format": "{FORMAT}"')
    check_version(meta_path, meta.get("format_version"), FORMAT_VERSION, "train the reader again", kind=_WHAT)
    for key, valid, accepted in _FIELDS:
        if key not in meta or not valid(meta[key]):
            raise _refuse(meta_path, f"the metadata field {key} is {excerpt(meta.get(key, '(missing)'))}; it "
                                     f"must be {accepted} (corrupted?)")
    return meta


def load_reader(path: str | pathlib.Path, game: Game) -> HandReader:
    """A reader's files, checked against `game`'s table (see the module doc), as a `HandReader`."""
    given = pathlib.Path(path).expanduser()
    if given.is_dir():  # bot_paths reads a folder as a training run's; no run folder holds a reader
        raise missing_file(_WHAT, given, READER_FILES)
    meta_path, weights_path = bot_paths(given)
    meta = read_reader_metadata(meta_path)
    table = reading_table(meta, game)
    layout = reader_layout(table)
    check_game(meta_path, meta, table, kind=_WHAT)
    reading = meta["reading"]
    if reading["version"] != READING_VERSION:
        raise _refuse(meta_path, f"its reading inputs are version {reading['version']}, this cardlab's are "
                                 f"{READING_VERSION}; train the reader again with this cardlab")
    if reading["size"] != layout.size or meta["places"] != table.num_players or \
            meta["kinds"] != list(layout.deck_kinds):
        raise _refuse(meta_path, f"it reads {reading['size']} inputs into {meta['places']} places over "
                                 f"{len(meta['kinds'])} kinds; this table reads {layout.size} into "
                                 f"{table.num_players} over {len(layout.deck_kinds)}")
    view = {**meta, "observation": {"version": reading["version"], "size": reading["size"]},
            "num_actions": len(layout.deck_kinds) * table.num_players}
    check_network(meta_path, view, kind=_WHAT)
    network = build_network(view, read_weights(meta_path, view, weights_path, kind=_WHAT))
    with torch.inference_mode():
        probe = network(torch.stack([torch.zeros(layout.size), torch.ones(layout.size)]))
        played = network(torch.as_tensor(played_readings(table)))
    for logits, where in ((probe, "a probe"), (played, "a position of random play")):
        if not bool(torch.isfinite(logits).all()):
            raise _refuse(meta_path, f"its network's logits are NaN or infinite on {where} (weights too "
                                     f"large?); {FINITE}")
    return HandReader(game, network, meta, meta_path, table)


def reading_table(meta: dict[str, Any], game: Game) -> Game:
    """The table whose reading inputs a reader's checked metadata `meta` reads at `game`'s table: `game`
    itself, or, where the file was trained without options of `game` that are no rules of play
    (`RuleOptions.of_play`: ``memory``, which only adds an observation field, last), `game` with those
    options at their defaults. The hands are dealt and played the same with or without them, so the reader
    reads the start of `game`'s observation that such a table shows (`HandReader.inputs`); any other
    difference is left to `check_game`'s refusal."""
    if table_misfit(meta, game) is None:
        return game
    rules, play = game.rules.to_dict(), type(game.rules).of_play()
    declared = type(game.rules).declared()
    bare = make_game(game.spec, {k: v if k in play else declared[k].default for k, v in rules.items()})
    fields, bare_fields = [f.name for f in game.layout.fields], [f.name for f in bare.layout.fields]
    if table_misfit(meta, bare) is not None or fields[:len(bare_fields)] != bare_fields:
        return game
    return bare


FINITE = "a reader's forward pass must give finite numbers on every position of its table"
PLAYED_READINGS = 256
"""positions of random play a reader's logits must be finite on at load (besides the flat probes)"""


@functools.lru_cache(maxsize=16)
def played_readings(game: Game, count: int = PLAYED_READINGS) -> np.ndarray:
    """(count, inputs) float32: the reading inputs of the seats to move in seeded random hands of `game`.

    Real positions, because a flat probe misses a network that overflows only
    where two inputs differ (as `cardlab.agents.bot.validate.played_observations`
    for bots). Cached per table: a search may load its reader many times.
    """
    layout = reader_layout(game)
    env = make_env(game.spec, **game.rules.to_dict())
    raw = env.unwrapped
    rng = np.random.default_rng(0)
    rows: list[np.ndarray] = []
    while len(rows) < count:
        env.reset(seed=int(rng.integers(2**31)))
        for name, _, obs in live_turns(env):
            record = raw.public_record(name)
            known = game.determinization(obs, 0, record)
            rows.append(reading_inputs(layout, known, obs["observation"], record))
            if len(rows) == count:
                break
            env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    return np.stack(rows).astype(np.float32)


def shipped_reader_path(game: Game) -> pathlib.Path:
    """Where the shipped reader of `game`'s table would be."""
    return SHIPPED / f"{game.spec.id}-{game.num_players}p.json"


def shipped_reader(game: Game) -> HandReader:
    """The shipped reader of `game`'s table; a `ValueError` naming the tables that have one otherwise."""
    path = shipped_reader_path(game)
    if not path.is_file():
        have = ", ".join(sorted(p.stem for p in SHIPPED.glob("*.json"))) or "none"
        raise ValueError(f"no hand reader ships for {game.spec.id} with {game.num_players} players (readers: "
                         f"{have}); train one with cardlab read-hands")
    return load_reader(path, game)
