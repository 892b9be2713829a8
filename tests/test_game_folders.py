"""One game in one place: no module outside a game's folders imports the game's modules or their constants
(the engine's columns, `HAND_OVER`, `SCORE_CHANGES`, ...), and the generic layers reach a game's compiled
fast paths only through its spec (`GameSpec.fast`)."""

from __future__ import annotations

import ast
import pathlib
import re
import sys

import numpy as np
import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10: the backport (a dev requirement there)
    import tomli as tomllib

from cardlab.agents import batch, rollouts
from cardlab.agents.agent_spec import make_agent
from cardlab.agents.hand_reading import belief
from cardlab.envs import make_game
from cardlab.envs.fast import EXPERT, GREEDY, RANDOM, FastPaths
from cardlab.envs.game_spec import BUILTIN, get_spec
from tests.toygame.spec import SPEC as TOY_SPEC

ROOT = pathlib.Path(__file__).resolve().parents[1]
GAMES = tuple(BUILTIN)
"""the games whose folders are checked (every built-in game)"""
REGISTRY = {"cardlab.envs.game_spec": "BUILTIN, the registry's line per game (a string, imported when asked)",
            "cardlab.agents.heuristics": "the package of the heuristic agents names each game's classes"}
"""modules outside the games' folders allowed to name a game, and why"""


def game_of(module: str) -> str | None:
    """The game whose folders hold `module` (None: a generic module): the game's package under envs, its
    PettingZoo doc pages (``huit_v1``), and its heuristic agents (``cardlab.agents.heuristics.huit``)."""
    for game in GAMES:
        inside = (f"cardlab.envs.{game}", f"cardlab.agents.heuristics.{game}")
        if any(module == home or module.startswith(home + ".") for home in inside):
            return game
        if re.fullmatch(rf"cardlab\.envs\.{game}_v\d+", module):
            return game
    return None


def modules() -> dict[str, pathlib.Path]:
    """Every source module of the package, by name (the folders `pyproject.toml` maps onto cardlab.*)."""
    folders = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    found: dict[str, pathlib.Path] = {}
    for package, folder in folders.items():
        for path in (ROOT / folder).rglob("*.py"):
            parts = path.relative_to(ROOT / folder).with_suffix("").parts
            if "__pycache__" in parts:
                continue
            name = ".".join([package, *parts]).removesuffix(".__init__")
            if name not in found or len(package) > len(found[name].parts):
                found[name] = path
    return found


def named_modules(tree: ast.AST, module: str, is_package: bool) -> set[str]:
    """The cardlab modules an import of `tree` names (an imported name that is a module counts as one too),
    and the module paths of its string constants (``"cardlab.envs.huit.batched:HuitBatch"``)."""
    named: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            named.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = module.split(".")[: len(module.split(".")) - (0 if is_package else 1)]
                package = package[: len(package) - (node.level - 1)]
                base = ".".join([*package, base]) if base else ".".join(package)
            named.add(base)
            named.update(f"{base}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            found = re.fullmatch(r"(cardlab(?:\.\w+)+)(?::\w+)?", node.value)
            if found:
                named.add(found.group(1))
    return {name for name in named if name.startswith("cardlab")}


def test_no_module_outside_a_game_s_folders_names_the_game() -> None:
    found = modules()
    assert "cardlab.agents.rollouts" in found and "cardlab.envs.huit.fast.playout" in found
    offenders = []
    for module, path in sorted(found.items()):
        if game_of(module) is not None or module in REGISTRY:
            continue
        tree = ast.parse(path.read_text())
        for name in sorted(named_modules(tree, module, path.name == "__init__.py")):
            if game_of(name) is not None:
                offenders.append(f"{path.relative_to(ROOT)} names {name}")
    assert not offenders, "\n".join(offenders)


def test_the_check_sees_an_import_of_a_game_s_constants() -> None:
    """The walk above finds the imports it must refuse, however written."""
    for source in ("from cardlab.envs.huit.kernels import HAND_OVER",
                   "from cardlab.envs.switch import kernels",
                   "import cardlab.envs.huit.fast.playout",
                   "from cardlab.envs import huit_v1",
                   "from ..envs.huit.kernels import SCORE_CHANGES",
                   "PATH = 'cardlab.envs.huit.fast:FAST_PATHS'"):
        names = named_modules(ast.parse(source), "cardlab.agents.rollouts", False)
        assert any(game_of(name) for name in names), source
    generic = ast.parse("from cardlab.envs.fast import ToEnd\nfrom cardlab.envs import huitieme")
    assert not any(game_of(name) for name in named_modules(generic, "cardlab.agents.x", False))


def test_each_game_declares_its_fast_paths_in_its_spec() -> None:
    huit, switch = get_spec("huit").fast_paths(), get_spec("switch").fast_paths()
    assert isinstance(huit, FastPaths) and isinstance(switch, FastPaths)
    assert None not in (huit.play_out, huit.to_end, huit.replay, huit.vector_step)
    assert switch.to_end is not None and (switch.play_out, switch.replay, switch.vector_step) == (None,) * 3
    assert TOY_SPEC.fast is None and TOY_SPEC.fast_paths() is None


@pytest.mark.parametrize("game_id", ["huit", "switch"])
def test_the_generic_layers_reach_the_fast_paths_through_the_agent_s_game(game_id: str) -> None:
    """A game's own compiled heuristics (exactly those classes) and `random` say how a compiled path plays
    them; a bot does not; the generic helpers find the path through the agent's game's spec."""
    game = make_game(game_id, num_players=4)
    kinds = {name: make_agent(name, game, seed=0).compiled() for name in ("random", "greedy", "expert")}
    assert {name: policy.kind for name, policy in kinds.items() if policy} == {
        "random": RANDOM, "greedy": GREEDY, "expert": EXPERT}
    assert all(policy is not None and policy.rules == game.rules for policy in kinds.values())
    assert make_agent(f"bot:{game_id}-4p", game).compiled() is None
    engine = game.spec.batched_engine()(game.rules, 8, seed=0)
    expert = make_agent("expert", game, seed=0)
    assert rollouts.fused_to_end(engine, expert) is not None
    assert (batch.fused_play_out(engine, expert) is not None) is (game_id == "huit")
    assert (belief.fused_replay(engine, expert, 0.3) is not None) is (game_id == "huit")
    gained = np.zeros(engine.batch_size)
    play = rollouts.fused_to_end(engine, make_agent("random", game, seed=0))
    assert play is not None
    engine.reset()
    play(engine.batch_size, 0, gained)
    assert engine.over.all()


def test_a_game_without_fast_paths_is_played_move_by_move() -> None:
    toy = TOY_SPEC.make()
    engine = toy.spec.batched_engine()(toy.rules, 4, seed=0)
    agent = make_agent("random", toy, seed=0)
    assert agent.compiled() is not None  # random compiles, but the toy game has no path to compile it in
    assert rollouts.fused_to_end(engine, agent) is None and batch.fused_play_out(engine, agent) is None
