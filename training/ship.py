"""Shipped bots: train the shipped configs, measure each bot against the expert, write it into the package.

`cardlab ship-bots` rebuilds every bot of `SHIPPED` (from the repository
root): it trains the config (or takes a finished run folder), plays the bot
against the `expert` heuristic in every other seat (seats rotated, 2000
hands, seed 123 by default) and writes ``NAME.json`` + ``NAME.safetensors``
into ``agents/bots/``, with the measured win rate and its 95% intervals
(``paired_ci95``, clustered by deal, and Wilson's ``ci95``) under
``summary.shipped`` of the metadata. `make_agent` then resolves ``bot:NAME``.
"""

from __future__ import annotations

import json
import pathlib
import shutil
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cardlab.evaluation.results import Rate

from cardlab.envs.checked_json import excerpt

SHIPPED = {
    "huit-2p": "configs/huit_ppo.yaml",
    "switch-4p": "configs/switch_ppo.yaml",
    "huit-2p-selfplay": "configs/huit_selfplay.yaml",
    "huit-2p-match": "configs/huit_selfplay_match.yaml",
    "switch-4p-selfplay": "configs/switch_selfplay.yaml",
}
"""Name of each shipped bot -> the config it is trained from (a path from the repository root)."""
OUT_DIR = pathlib.Path("agents/bots")
OPPONENT = "expert"


def ship_bot(name: str, source: pathlib.Path, out_dir: pathlib.Path = OUT_DIR, hands: int = 2000,
             seed: int = 123, runs_dir: pathlib.Path = pathlib.Path("runs")) -> dict[str, Any]:
    """Train `source` (a YAML config) or take it as a finished run folder, measure, write `out_dir/NAME`.

    Returns the `summary.shipped` entry written into the bot's metadata.
    """
    from cardlab.agents.bot import bot_paths, load_bot  # torch only when a bot is shipped
    from cardlab.evaluation.evaluate import evaluate

    if not name.replace("-", "").replace("_", "").isalnum():
        raise ValueError(f"bot name {excerpt(name)}: use letters, digits, '-' and '_' (it becomes "
                         f"bot:{name})")
    if source.is_dir():
        run_dir = source
    elif source.is_file():
        from cardlab.training.train import train_from_file  # SB3 only when training

        run_dir = train_from_file(source, runs_dir=runs_dir)
    else:
        raise ValueError(f"{source}: expected a YAML config or a finished run folder")
    meta_path, weights_path = bot_paths(run_dir / "bot.json")
    bot = load_bot(meta_path)  # refuses a damaged or partial bot before anything is measured
    n = bot.game.num_players
    result = evaluate(bot.game.id, [f"bot:{meta_path}", *[OPPONENT] * (n - 1)], hands, seed=seed,
                      rule_options=bot.game.rules.to_dict())
    steps = bot.metadata.get("summary", {}).get("steps")
    shipped = shipped_summary(name, result.stats[0].hands, seed, n, steps)
    meta = dict(bot.metadata)
    meta["summary"] = {**meta.get("summary", {}), "shipped": shipped}
    meta["weights"] = {**meta["weights"], "file": f"{name}.safetensors"}
    out_dir.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(weights_path, out_dir / f"{name}.safetensors")
    (out_dir / f"{name}.json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    load_bot(out_dir / f"{name}.json")  # the written pair loads
    return shipped


def shipped_summary(name: str, hands: Rate, seed: int, players: int, steps: int | None) -> dict[str, Any]:
    """The `summary.shipped` entry of a bot measured over `hands` against the expert in the other seats."""
    (low, high), (paired_low, paired_high) = hands.interval, hands.paired_interval
    return {
        "name": name, "opponent": OPPONENT, "hands": hands.n, "seed": seed,
        "win_rate": hands.rate, "ci95": [low, high], "paired_ci95": [paired_low, paired_high],
        "fair_share": 1 / players, "steps": steps,
        "about": f"{hands.rate:.3f} [{paired_low:.3f}, {paired_high:.3f}] of hands against "
                 f"{players - 1} x {OPPONENT} ({hands.n} hands, seats rotated, seed {seed}, 95% interval "
                 f"clustered by deal; Wilson's [{low:.3f}, {high:.3f}]; fair share {1 / players:.2f})",
    }
