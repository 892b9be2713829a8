"""A JSON object giving one key twice is refused wherever cardlab reads JSON (the one checked reader): a bot's
metadata and its weights' header included, where `json.loads` would silently keep the last copy."""

from __future__ import annotations

import hashlib
import json
import pathlib
import shutil

import pytest

from cardlab.agents.bot import load_bot
from cardlab.envs.checked_json import read_json

BOTS = pathlib.Path(__file__).resolve().parents[2] / "agents" / "bots"


def test_the_reader_refuses_a_key_given_twice_naming_it() -> None:
    with pytest.raises(ValueError, match=r"the file x\.json gives the key 'c' twice in one object"):
        read_json('{"a": 1, "b": {"c": 1, "c": 2}}', "the file x.json")
    assert read_json('[{"c": 1}, {"c": 2}]', "it") == [{"c": 1}, {"c": 2}]  # one key per object is fine


def copy_bot(tmp_path: pathlib.Path) -> tuple[pathlib.Path, pathlib.Path]:
    meta, weights = tmp_path / "mine.json", tmp_path / "mine.safetensors"
    shutil.copy(BOTS / "huit-2p.json", meta)
    shutil.copy(BOTS / "huit-2p.safetensors", weights)
    load_bot(meta)  # the copy loads as it is
    return meta, weights


def test_bot_metadata_with_a_key_twice_is_refused(tmp_path: pathlib.Path) -> None:
    meta, _ = copy_bot(tmp_path)
    text = meta.read_text()
    meta.write_text('{"game": "switch", ' + text.lstrip()[1:])
    with pytest.raises(ValueError) as refused:
        load_bot(meta)
    assert "gives the key 'game' twice" in str(refused.value) and str(meta) in str(refused.value)


def test_a_weights_header_with_a_tensor_twice_is_refused(tmp_path: pathlib.Path) -> None:
    meta, weights = copy_bot(tmp_path)
    data = weights.read_bytes()
    size = int.from_bytes(data[:8], "little")
    header_text = data[8: 8 + size].decode()
    header = json.loads(header_text)
    first = next(k for k in header if k != "__metadata__")
    entry = json.dumps(first) + ": " + json.dumps(header[first])
    doubled = ("{" + entry + ", " + header_text.lstrip()[1:]).encode()
    forged = len(doubled).to_bytes(8, "little") + doubled + data[8 + size:]
    weights.write_bytes(forged)
    info = json.loads(meta.read_text())
    info["weights"]["sha256"] = hashlib.sha256(forged).hexdigest()  # the forger updates the hash too
    meta.write_text(json.dumps(info))
    with pytest.raises(ValueError, match=f"gives the key '{first}' twice"):
        load_bot(meta)
