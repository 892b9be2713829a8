"""Old import paths of moved modules and names, kept for one version: the tables and what serves them.

`MOVED` maps each old module name to its new one; `MOVED_NAMES` the names that left a module that stays
(served by that module's `__getattr__`, `moved_name`). `cardlab/__init__.py` installs `MovedFinder`, so
``import cardlab.training.lean`` (or unpickling a class saved under the old path) imports the new
module, warns with a DeprecationWarning that names the new path, and leaves the same module object
under both names in `sys.modules`. A module that moves adds one row here; the next version deletes
the rows (and this module, once empty).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import warnings
from collections.abc import Sequence
from types import ModuleType
from typing import Any

ROOMS = {
    "arena": ("league", "match_reward", "selfplay", "single_seat", "vector"),
    "harness": ("checkpoints", "config", "config_bounds", "config_tables", "placement", "progress",
                "records", "runs", "yaml_files"),
    "data": ("match_equity", "reader", "reader_data", "teach_labels"),
    "trainers": ("actors", "expert_iteration", "hand_head", "imitation", "lean", "lean_imitation",
                 "lean_model", "policy", "ppo", "rollouts", "sb3", "ship", "train", "vec_env"),
    "best_response": ("exploit", "exploit_search"),
}
"""training/'s rooms in 0.4 (room: its modules), which were flat in training/ before"""

RENAMED: dict[str, str] = {
    "envs.playout": "envs.fast_playout",
    "envs.spec": "envs.game_spec",
    "serve.replay": "serve.hand_replay",
    "evaluation.batched": "evaluation.batched_deals",
    "cluster.evaluate": "cluster.parallel_evaluation",
    "envs.huit.rounds": "envs.huit.batch_rounds",
    "envs.saved": "envs.state_checks",
    "envs.switch.holdings": "envs.switch.hand_constraints",
    "envs.holdings": "envs.hand_constraints",
    "envs.leaning": "envs.worlds_by_reading",
    "envs.determinize": "envs.world_sampling",
    "envs.replay": "envs.world_replay",
    "envs.kernels": "envs.batched_kernels",
    "envs.batched": "envs.batched_engine",
}
"""the generic layers' modules renamed in 0.4 to names that tell them apart (old: new, under `cardlab.`)"""

MOVED: dict[str, str] = {
    **{f"cardlab.training.{module}": f"cardlab.training.{room}.{module}"
       for room, modules in ROOMS.items() for module in modules},
    "cardlab.agents.factory": "cardlab.agents.agent_spec",
    **{f"cardlab.agents.{module}": f"cardlab.agents.hand_reading.{module}"
       for module in ("belief", "reader", "reading")},
    **{f"cardlab.{old}": f"cardlab.{new}" for old, new in RENAMED.items()},
}
"""old module name: new module name"""

SPEC_NAMES = ("resolve_spec", "check_bot_name", "bot_source", "is_shipped_name", "spec_names", "make_agent")
CATALOGUE_NAMES = ("SHIPPED_BOTS", "shipped_bots", "bot_tables", "table_aliases", "fitting_bot", "table_bots",
                   "default_bot")
MOVED_NAMES: dict[str, dict[str, str]] = {
    "cardlab.agents.base": {**dict.fromkeys(SPEC_NAMES, "cardlab.agents.agent_spec"),
                            **dict.fromkeys(CATALOGUE_NAMES, "cardlab.agents.bot_catalogue")},
    "cardlab.agents.search": {"make_search_agent": "cardlab.agents.agent_spec"},
}
"""module that stays: {name that moved out of it: its new module}, served by the module's `__getattr__`"""


def moved_message(old: str, new: str) -> str:
    """The deprecation warning's text for a module or name that moved from OLD to NEW."""
    return f"{old} moved to {new}; the old path goes in the next version"


def moved_name(module: str, name: str) -> Any:
    """A module's `__getattr__` for the names that moved out of it (`MOVED_NAMES`), with a warning.

    The new module is imported by name, when an old name is asked for: the module that stays does not
    import the one its names went to (which imports it), so no import circle comes back with the shim.
    An unknown name is the AttributeError Python would give.
    """
    new = MOVED_NAMES.get(module, {}).get(name)
    if new is None:
        raise AttributeError(f"module {module!r} has no attribute {name!r}")
    warnings.warn(moved_message(f"{module}.{name}", f"{new}.{name}"), DeprecationWarning, stacklevel=3)
    return getattr(importlib.import_module(new), name)


class _Alias(importlib.abc.Loader):
    """Loads an old name as the module its new name imports (the same object, its own spec kept)."""

    def __init__(self, new: str) -> None:
        self.new = new
        self.spec: importlib.machinery.ModuleSpec | None = None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        """The new module, with a warning pinned on the line that imported the old name.

        (`warnings` skips the import system's frames: stacklevel 2 is the importer.)
        """
        warnings.warn(moved_message(spec.name, self.new), DeprecationWarning, stacklevel=2)
        module = importlib.import_module(self.new)
        self.spec = module.__spec__
        return module

    def exec_module(self, module: ModuleType) -> None:
        """Give the module its own spec back (the import system set the old name's on it)."""
        module.__spec__ = self.spec


class MovedFinder(importlib.abc.MetaPathFinder):
    """Finds the old names of `MOVED` (and nothing else)."""

    def find_spec(self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None,
                  ) -> importlib.machinery.ModuleSpec | None:
        new = MOVED.get(fullname)
        return None if new is None else importlib.util.spec_from_loader(fullname, _Alias(new))


def install() -> None:
    """Put one `MovedFinder` on `sys.meta_path` (a second call adds none)."""
    if not any(isinstance(finder, MovedFinder) for finder in sys.meta_path):
        sys.meta_path.append(MovedFinder())
