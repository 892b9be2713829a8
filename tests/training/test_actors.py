"""The lean trainer's actors: `actors: 0` is the single process of before, bit for bit."""

from __future__ import annotations

import csv
import hashlib
import json
import pathlib
from typing import Any

import pytest
import torch

from cardlab.training.checkpoints import list_checkpoints
from cardlab.training.train import train
from tests.training.test_ppo import tiny

REFERENCE = pathlib.Path(__file__).with_name("lean_reference.json")


def fingerprint(run_dir: pathlib.Path) -> dict[str, Any]:
    """The final checkpoint's steps, weights (sha256 and per-tensor sums) and the run's eval.csv win rates."""
    data = torch.load(list_checkpoints(run_dir)[-1], weights_only=True)
    state = data["model"]
    digest = hashlib.sha256(b"".join(state[k].numpy().tobytes() for k in sorted(state))).hexdigest()
    sums = {k: [float(state[k].double().sum()), float((state[k].double() ** 2).sum())] for k in sorted(state)}
    with (run_dir / "eval.csv").open() as f:
        rows = [[r["steps"], r["opponent"], r["win_rate"]] for r in csv.DictReader(f)]
    return {"steps": data["steps"], "digest": digest, "sums": sums, "eval": rows}


def test_no_actors_trains_as_the_single_process_did(tmp_path: pathlib.Path) -> None:
    """`tiny()` with `actors: 0` gives the weights and evaluations recorded from the code before actors.

    The sums are compared to 1e-9 relative rather than the digest alone, so that a CPU whose matrix
    kernels round differently in the last bit still passes; another draw of any random number (a
    different deal, sample or minibatch) moves them by far more."""
    reference = json.loads(REFERENCE.read_text())
    found = fingerprint(train(tiny(actors=0), runs_dir=tmp_path, progress=False))
    assert (found["steps"], found["eval"]) == (reference["steps"], reference["eval"])
    assert found["sums"].keys() == reference["sums"].keys()
    for key, sums in reference["sums"].items():
        assert found["sums"][key] == pytest.approx(sums, rel=1e-9, abs=1e-12), key
