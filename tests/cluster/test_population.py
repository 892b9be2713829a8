"""A population league: learners publish snapshots into a shared folder and draw the others' from it;
across machines the folder is mirrored through a Ray actor, every received file checked as a bot file."""

from __future__ import annotations

import collections
import pathlib
from typing import Any

import numpy as np
import pytest

from cardlab.training.arena.league import (
    League,
    LeagueSettings,
    list_population,
    publish_snapshot,
    snapshot_steps,
)
from cardlab.training.arena.single_seat import make_game_env
from cardlab.training.harness.config import load_config
from tests.cluster.conftest import make_bot

CONFIGS = pathlib.Path(__file__).resolve().parents[2] / "configs"


def snapshot(folder: pathlib.Path, steps: int, seed: int = 0) -> pathlib.Path:
    return make_bot(folder, f"snapshot_{steps:012d}", seed=seed)


def test_learners_draw_each_others_snapshots_not_their_own(tmp_path: pathlib.Path) -> None:
    pool = tmp_path / "pool"
    for learner, seed in (("a__1__t", 0), ("b__2__t", 1)):
        for steps in (0, 100):
            publish_snapshot(snapshot(tmp_path / learner, steps, seed), pool, learner)
    assert not list(pool.glob(".tmp*"))  # copies are renamed into place
    names = [p.stem for p in list_population(pool, "a__1__t")]
    assert names == ["b__2__t__snapshot_000000000000", "b__2__t__snapshot_000000000100"]
    assert [snapshot_steps(p) for p in list_population(pool)] == [0, 0, 100, 100]

    settings = LeagueSettings((("random", 1.0),), population_dir=str(pool), population_share=0.5,
                              population_size=1, learner="a__1__t")
    league = League(make_game_env("huit", 2), settings, seed=0)
    rng = np.random.default_rng(0)
    labels = collections.Counter(label for _ in range(400) for label, _ in league.pick(rng, 1))
    assert set(labels) == {"random", "b__2__t__snapshot_000000000100"}  # the other's newest only
    assert 0.4 < labels["random"] / 400 < 0.6
    alone = League(make_game_env("huit", 2), LeagueSettings(
        (("random", 1.0),), population_dir=str(tmp_path / "empty"), population_share=1.0), seed=0)
    assert [label for label, _ in alone.pick(rng, 3)] == ["random"] * 3  # an empty pool: the specs stand in


def test_population_config_needs_self_play(tmp_path: pathlib.Path) -> None:
    from cardlab.training.harness.config import config_from_dict, config_to_dict

    data = config_to_dict(load_config(CONFIGS / "huit_quick.yaml"))
    data["population"] = {"dir": str(tmp_path), "share": 0.5}
    assert config_from_dict(data).population.share == 0.5
    data["self_play"]["enabled"] = False
    with pytest.raises(ValueError, match=r"population.dir.*set self_play.enabled: true"):
        config_from_dict(data)
    data["self_play"]["enabled"], data["population"]["share"] = True, 1.5
    with pytest.raises(ValueError, match=r"population\.share=1\.5"):
        config_from_dict(data)


@pytest.mark.ray
def test_the_ray_pool_mirrors_folders_and_checks_what_arrives(ray_local: Any, tmp_path: pathlib.Path) -> None:
    from cardlab.agents.bot import load_bot
    from cardlab.cluster.botfiles import BotFile
    from cardlab.cluster.pool import PoolMirror, start_pool

    pool = start_pool(keep=2)
    mirrors = {who: PoolMirror(pool, tmp_path / who, who) for who in ("a", "b")}
    for steps in (0, 100, 200):
        publish_snapshot(snapshot(tmp_path / "runs", steps), tmp_path / "a", "a__1__t")
    assert mirrors["a"].sync() == 0  # sent its own three, got nothing
    assert mirrors["b"].sync() == 2  # the pool keeps each learner's newest 2
    got = sorted(p.stem for p in (tmp_path / "b").glob("*.json"))
    assert got == ["a__1__t__snapshot_000000000100", "a__1__t__snapshot_000000000200"]
    load_bot(tmp_path / "b" / got[0])  # a checked bot file
    assert mirrors["a"].sync() == 0  # its own are never fetched back

    bot = BotFile.read(tmp_path / "b" / got[0])
    with pytest.raises(ray_local.exceptions.RayTaskError, match="is not a snapshot's name"):
        ray_local.get(pool.publish.remote("../../etc/evil__snapshot_1", bot))
    damaged = BotFile(bot.source, bot.metadata, bot.weights[:-1] + b"\0")
    ray_local.get(pool.publish.remote("c__3__t__snapshot_000000000000", damaged))
    assert mirrors["b"].sync() == 0  # refused on arrival: never in the folder a league draws from
    assert mirrors["b"].refused == {"c__3__t__snapshot_000000000000"}
    assert not (tmp_path / "b" / "c__3__t__snapshot_000000000000.json").exists()
