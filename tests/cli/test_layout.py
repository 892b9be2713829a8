"""The command line's place in the package: one list of commands, and nothing below it imports it.

Why: a command module left out of `COMMANDS` is dead code the help never
shows, and a lower layer that imports the command line (or `training` that
imports the web app or Ray, as it did through the old `training/cli.py`)
ties the layers into a cycle.
"""

from __future__ import annotations

import ast
import importlib
import importlib.metadata
import pathlib
import pkgutil

import cardlab
import cardlab.cli
from cardlab.cli import COMMANDS


def test_every_command_module_is_in_the_one_list() -> None:
    modules = {info.name for info in pkgutil.iter_modules(cardlab.cli.__path__)} - {"common"}
    listed = {command.run.__module__.rpartition(".")[2] for command in COMMANDS.values()}
    assert listed == modules
    scripts = importlib.metadata.entry_points(group="console_scripts", name="cardlab")
    assert [script.value for script in scripts] == ["cardlab.cli:main"]


def imported(package: str) -> set[str]:
    """The cardlab modules that the sources of `package` (a subpackage of cardlab) import."""
    names: set[str] = set()
    for folder in importlib.import_module(package).__path__:
        for path in pathlib.Path(folder).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.ImportFrom) and node.module:
                    names.add(node.module)
                elif isinstance(node, ast.Import):
                    names.update(alias.name for alias in node.names)
    return {name for name in names if name.startswith("cardlab")}


def test_nothing_below_the_command_line_imports_it() -> None:
    below = [f"cardlab.{info.name}" for info in pkgutil.iter_modules(cardlab.__path__)
             if info.ispkg and info.name != "cli"]
    assert {"cardlab.envs", "cardlab.training", "cardlab.serve", "cardlab.cluster"} <= set(below)
    for package in below:
        found = imported(package)
        assert not [name for name in found if name.startswith(("cardlab.cli", "cardlab.terminal"))], package
    found = imported("cardlab.training")
    assert not [name for name in found if name.startswith(("cardlab.serve", "cardlab.cluster"))]
