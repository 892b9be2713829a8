"""Loading a benchmark script (`benchmarks/NAME.py`, not a package) as a module, for the tests that keep
each benchmark runnable."""

from __future__ import annotations

import importlib.util
import pathlib
import sys
from typing import Any

import pytest

BENCHMARKS = pathlib.Path(__file__).resolve().parents[1] / "benchmarks"


def load_benchmark(name: str, monkeypatch: pytest.MonkeyPatch) -> Any:
    """`benchmarks/<name>.py` as a module, registered under its name for the test (dataclasses look their
    module up there); `sys.path`, which a benchmark may extend, is restored after the test."""
    monkeypatch.setattr(sys, "path", list(sys.path))
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, name, module)
    spec.loader.exec_module(module)
    return module
