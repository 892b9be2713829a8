"""A teach run's labels file (``labels.npz``): written whole or not at all, and read back checked.

Why apart: `cardlab teach` may train on the labels of an earlier run
(``labels_from``), so the file crosses a boundary: a truncated or foreign
file is refused in one line naming it, and a run stopped while writing
leaves no half-written file (written beside it, then renamed into place).
"""

from __future__ import annotations

import os
import zipfile
from pathlib import Path

import numpy as np

from cardlab.envs.checked_json import excerpt, read_json_file
from cardlab.envs.game_spec import Game

LABELS_FILE = "labels.npz"
RECORD_FILE = "run.json"
"""a finished teach run's record (`cardlab.training.trainers.expert_iteration.teach` writes it)"""
COLUMNS = {"obs": (np.float32, 2), "mask": (np.bool_, 2), "action": (np.int64, 1), "value": (np.float32, 1),
           "base_action": (np.int64, 1), "kept_obs": (np.float32, 2), "kept_mask": (np.bool_, 2)}
"""each array of the file: its dtype and number of dimensions"""


def write_labels(run_dir: Path, labels: dict[str, np.ndarray]) -> Path:
    """Write the labels into `run_dir` by rename: a reader finds the whole file or none."""
    path = run_dir / LABELS_FILE
    partial = run_dir / f".{LABELS_FILE}.partial.npz"
    arrays: dict[str, np.ndarray] = dict(labels)
    np.savez_compressed(partial, **arrays)  # type: ignore[arg-type]
    os.replace(partial, path)
    return path


def _refused(run_dir: Path, path: Path, why: str) -> ValueError:
    return ValueError(f"labels_from={run_dir}: {path} {why}; give the folder of a finished teach run of this "
                      "table")


def labelled_by(run_dir: Path) -> str:
    """The teacher that made the labels of the teach run in `run_dir`, as its ``run.json`` records it (what a
    run trained on those labels records as its own teacher)."""
    path = run_dir / RECORD_FILE
    try:
        record = read_json_file(path, "the file")
    except (OSError, ValueError) as err:
        raise _refused(run_dir, path, f"cannot be read ({type(err).__name__}: {str(err)[:120]})") from None
    teacher = record.get("teacher") if isinstance(record, dict) else None
    if not isinstance(teacher, str):
        raise _refused(run_dir, path, f"records no teacher (got {excerpt(teacher)})")
    return teacher


def read_labels(run_dir: Path, game: Game) -> dict[str, np.ndarray]:
    """The labels a teach run saved, checked: every array there, of its type, of this table's sizes."""
    path = run_dir / LABELS_FILE

    def refuse(why: str) -> ValueError:
        return _refused(run_dir, path, why)

    try:
        with np.load(path, allow_pickle=False) as data:
            labels = {key: data[key] for key in data.files if key in COLUMNS}
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as err:
        raise refuse(f"cannot be read ({type(err).__name__}: {str(err)[:120]}): truncated or not a labels "
                     "file?") from None
    missing = [key for key in COLUMNS if key not in labels]
    if missing:
        raise refuse(f"lacks {', '.join(missing)}")
    widths = {"obs": game.layout.size, "mask": game.num_actions, "kept_obs": game.layout.size,
              "kept_mask": game.num_actions}
    for key, (kind, ndim) in COLUMNS.items():
        array = labels[key]
        if array.dtype != kind or array.ndim != ndim or (key in widths and array.shape[1] != widths[key]):
            width = f" with {widths[key]} columns" if key in widths else ""
            raise refuse(f"is not of this table: its {key} should be {np.dtype(kind).name}, {ndim}-d{width}; "
                         f"it is {array.dtype.name} of shape {array.shape}")
    rows = {key: len(labels[key]) for key in ("obs", "mask", "action", "value", "base_action")}
    if len(set(rows.values())) != 1 or len(labels["kept_obs"]) != len(labels["kept_mask"]):
        raise refuse(f"holds arrays of different lengths ({rows})")
    actions = labels["action"]
    if actions.size and (actions.min() < 0 or actions.max() >= game.num_actions
                         or not labels["mask"][np.arange(actions.size), actions].all()):
        raise refuse("labels a move its position's mask does not allow")
    return labels
