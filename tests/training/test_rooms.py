"""training/ in rooms that import one way (the old flat paths: tests/test_moved.py).

Why: a flat folder of 34 modules does not say what is a trainer, what is data and what is the run's
machinery; rooms do, if nothing imports back up.
"""

from __future__ import annotations

import ast
import pathlib
import re

import cardlab.training

TRAINING = pathlib.Path(cardlab.training.__path__[0])


def listed_rooms() -> list[str]:
    """The rooms in the order training/__init__.py lists them (each may import only those before it)."""
    return re.findall(r"^- `(\w+)`", cardlab.training.__doc__ or "", re.MULTILINE)


def imported_rooms(path: pathlib.Path) -> set[str]:
    """The rooms of cardlab.training that a module's imports (at any depth) name."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = [node.module or ""] if isinstance(node, ast.ImportFrom) else []
        names += [alias.name for alias in node.names] if isinstance(node, ast.Import) else []
        found.update(name.split(".")[2] for name in names if name.startswith("cardlab.training."))
    return found


def test_every_module_is_in_a_listed_room_and_imports_only_the_rooms_below() -> None:
    rooms = listed_rooms()
    assert rooms == ["arena", "harness", "data", "trainers", "best_response"]
    assert sorted(p.name for p in TRAINING.glob("*.py")) == ["__init__.py"]
    assert sorted(p.name for p in TRAINING.iterdir() if (p / "__init__.py").exists()) == sorted(rooms)
    for level, room in enumerate(rooms):
        for path in sorted((TRAINING / room).glob("*.py")):
            above = imported_rooms(path) - set(rooms[: level + 1])
            assert not above, f"training/{room}/{path.name} imports the rooms above it: {sorted(above)}"
