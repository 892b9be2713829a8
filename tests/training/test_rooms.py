"""training/ in rooms that import one way, and the old flat import paths kept for one version.

Why: a flat folder of 34 modules does not say what is a trainer, what is data and what is the run's
machinery; rooms do, if nothing imports back up. The old paths (`cardlab.training.lean`) keep working
with a DeprecationWarning through the one table of `cardlab.moved` (pytest's filterwarnings in
pyproject.toml does not turn warnings into errors, so each check of the warning is explicit here).
"""

from __future__ import annotations

import ast
import importlib
import pathlib
import pickle
import re
import sys
from collections.abc import Iterator

import pytest

import cardlab.training
from cardlab.moved import MOVED, moved_message

ROOT = pathlib.Path(__file__).resolve().parents[2]
TRAINING = pathlib.Path(cardlab.training.__path__[0])


def listed_rooms() -> list[str]:
    """The rooms in the order training/__init__.py lists them (each may import only those before it)."""
    return re.findall(r"^- `(\w+)`", cardlab.training.__doc__ or "", re.MULTILINE)


def imported_rooms(path: pathlib.Path) -> set[str]:
    """The rooms of cardlab.training that a module's imports (at any depth) name."""
    found = set()
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


@pytest.fixture
def forgotten(request: pytest.FixtureRequest) -> Iterator[str]:
    """An old name, not yet imported (and forgotten again after the test, as a fresh process has it)."""
    old: str = request.param
    parent, _, child = old.rpartition(".")

    def forget() -> None:
        sys.modules.pop(old, None)
        if child in vars(sys.modules[parent]):
            delattr(sys.modules[parent], child)

    forget()
    yield old
    forget()


@pytest.mark.parametrize("forgotten", sorted(MOVED), indirect=True)
def test_an_old_path_imports_the_new_module_with_a_warning(forgotten: str) -> None:
    new = MOVED[forgotten]
    with pytest.warns(DeprecationWarning, match=re.escape(moved_message(forgotten, new))):
        module = importlib.import_module(forgotten)
    assert module is importlib.import_module(new) is sys.modules[forgotten]
    assert module.__name__ == module.__spec__.name == new  # the module keeps its own name and spec


@pytest.mark.parametrize("forgotten", ["cardlab.training.progress"], indirect=True)
def test_from_the_old_package_import_works_too(forgotten: str) -> None:
    from cardlab.training.harness import progress as new

    with pytest.warns(DeprecationWarning, match="cardlab.training.progress moved to") as caught:
        from cardlab.training import progress
    assert progress is new
    assert [w.filename for w in caught] == [__file__]  # pinned on the importing line, so Python shows it


def test_every_new_name_imports_and_no_old_name_is_a_file() -> None:
    for old, new in MOVED.items():
        assert importlib.import_module(new).__name__ == new
        assert not (TRAINING / f"{old.rpartition('.')[2]}.py").exists(), old


def test_an_unknown_name_under_training_is_still_not_found() -> None:
    with pytest.raises(ModuleNotFoundError, match=re.escape("cardlab.training.no_such_module")):
        importlib.import_module("cardlab.training.no_such_module")


HOLD_OLD_PATHS = (pathlib.Path(__file__), ROOT / "src" / "cardlab" / "moved.py")
"""the files that name old paths on purpose: this one and the table's"""
SOURCES = ("src", "envs", "agents", "training", "evaluation", "serve", "cluster", "benchmarks", "tests",
           "examples", "docs", "notebooks", "configs")


def repository_texts() -> Iterator[tuple[str, str]]:
    """(path, text) of every file of the repository that names modules; CHANGELOG.md's history aside."""
    yield from ((name, (ROOT / name).read_text(encoding="utf-8"))
                for name in ("README.md", "CONTRIBUTING.md", "pyproject.toml"))
    for folder in SOURCES:
        for path in sorted((ROOT / folder).rglob("*")):
            if path.suffix in (".py", ".md", ".yaml", ".ipynb", ".toml", ".json", ".txt") and (
                    path not in HOLD_OLD_PATHS):
                yield str(path.relative_to(ROOT)), path.read_text(encoding="utf-8")


def test_no_old_path_remains_in_the_repository() -> None:
    modules = "|".join(re.escape(old.rpartition(".")[2]) for old in MOVED)
    old_paths = [re.compile(rf"\bcardlab\.training\.({modules})\b"),
                 re.compile(rf"from cardlab\.training import \(?[\w, ]*\b({modules})\b"),
                 re.compile(rf"(?<![\w/.])training/({modules})\.py\b")]
    found = [f"{name}: {m.group(0)}" for name, text in repository_texts() for pattern in old_paths
             for m in pattern.finditer(text)]
    assert not found, found


@pytest.mark.parametrize("forgotten", ["cardlab.training.policy"], indirect=True)
def test_a_pickle_that_names_an_old_path_still_loads(forgotten: str) -> None:
    """SB3's saved models name the policy class by module: one saved before the move still loads."""
    from cardlab.training.trainers.policy import PrivilegedCriticPolicy

    saved = f"c{forgotten}\nPrivilegedCriticPolicy\n.".encode()  # pickle protocol 0: a global by name
    with pytest.warns(DeprecationWarning, match=re.escape(f"{forgotten} moved to")):
        assert pickle.loads(saved) is PrivilegedCriticPolicy
