"""Test-wide settings.

Temporary files go under pytest's own temporary folder (the one `tmp_path`
lives in, which pytest prunes), never straight into the system temp folder:
the code under test, the processes it starts (multiprocessing's ``pymp-*``
folders, SubprocVecEnv workers, the notebook's kernel and its
``cardlab-runs-*`` folder) and SB3 loggers (``SB3-*`` folders) all take
their temp folder from ``TMPDIR`` / `tempfile.tempdir`.
"""

from __future__ import annotations

import os
import pathlib
import tempfile
from collections.abc import Iterator

import pytest


@pytest.fixture(scope="session", autouse=True)
def temp_inside_pytest(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder = str(tmp_path_factory.mktemp("tmp"))
    saved = {name: os.environ.get(name) for name in ("TMPDIR", "SB3_LOGDIR")}
    before = tempfile.tempdir
    os.environ["TMPDIR"] = folder
    os.environ["SB3_LOGDIR"] = os.path.join(folder, "sb3")  # where an SB3 model without a logger writes
    tempfile.tempdir = folder
    yield folder
    tempfile.tempdir = before
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


@pytest.fixture
def table_bots(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> pathlib.Path:
    """The shipped bots with fake table bots beside them (`tests.fakebots.TABLES`), for this test only."""
    from tests.fakebots import shipped_folder

    return shipped_folder(tmp_path, monkeypatch)
