"""Bot files over the network: their bytes travel, never a pickle of a network.

A Ray worker on another machine cannot read ``bot:runs/x/bot.json``, and a
pickled torch module would run code where it is unpickled. So a bot travels
as the bytes of its two files (`BotFile`: the metadata, and the weights or an
ONNX bot's graph), and the receiver writes them into
a private temporary folder and loads them with `load_bot`: every check that
guards a bot file from a stranger (sizes, nesting, fields, layer sizes, the
weights' sha256, header and values, the game and rules) runs on arrival, and
a file damaged in transit is refused with `load_bot`'s message.
"""

from __future__ import annotations

import dataclasses
import pathlib
import re
import tempfile

from cardlab.agents.base import Agent
from cardlab.agents.bot import (
    MAX_HEADER_BYTES,
    MAX_METADATA_BYTES,
    MAX_ONNX_BYTES,
    MAX_PARAMETERS,
    ONNX_FORMAT,
    bot_paths,
    load_bot,
    onnx_path,
    read_metadata,
    write_bot_files,
)

# Nothing larger is read: load_bot refuses metadata over MAX_METADATA_BYTES and weights over what the
# largest network it accepts takes (header length, header, float32 parameters), so one byte more is enough.
_MAX_WEIGHTS_BYTES = 8 + MAX_HEADER_BYTES + 4 * MAX_PARAMETERS


def _read_capped(path: pathlib.Path, limit: int) -> bytes:
    if not path.is_file():
        raise ValueError(f"bot {path}: file not found (a bot is NAME.json plus NAME.safetensors)")
    with path.open("rb") as f:
        return f.read(limit + 1)


@dataclasses.dataclass(frozen=True)
class BotFile:
    """A bot's metadata and weights as bytes, with the spec they came from (for messages)."""

    source: str
    """where the bytes were read, e.g. 'bot:runs/x/bot.json'"""
    metadata: bytes
    weights: bytes
    weights_suffix: str = ".safetensors"
    """the weights file's suffix: ".safetensors", or ".onnx" for an ONNX bot's graph"""

    @classmethod
    def read(cls, path: str | pathlib.Path, source: str | None = None) -> BotFile:
        """The bytes of a bot's two files (read once, capped; checked by whoever loads them)."""
        meta_path, weights_path = bot_paths(path)
        metadata = _read_capped(meta_path, MAX_METADATA_BYTES)
        if read_metadata(meta_path)["format"] == ONNX_FORMAT:
            return cls(source or f"bot:{meta_path}", metadata,
                       _read_capped(onnx_path(meta_path), MAX_ONNX_BYTES), ".onnx")
        return cls(source or f"bot:{meta_path}", metadata, _read_capped(weights_path, _MAX_WEIGHTS_BYTES))

    def write(self, folder: str | pathlib.Path, stem: str) -> pathlib.Path:
        """Write the pair as ``folder/stem``, weights first and the metadata renamed in last.

        A reader that lists ``*.json`` (a league) never sees half a bot; returns the metadata path.
        """
        return write_bot_files(pathlib.Path(folder) / stem, self.metadata, self.weights,
                               weights_suffix=self.weights_suffix)

    def load(self, game: object = None, seed: int | None = None, sample: bool = False) -> Agent:
        """The bot as an agent, through `load_bot` on a private copy (all its checks run)."""
        stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", pathlib.Path(self.source).stem) or "bot"
        with tempfile.TemporaryDirectory(prefix="cardlab-bot-") as tmp:
            try:
                return load_bot(self.write(tmp, stem), game, seed=seed, sample=sample)
            except ValueError as err:
                raise ValueError(f"{self.source} as received: {err}") from None
