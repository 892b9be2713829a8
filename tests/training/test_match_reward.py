"""`reward: match`: each hand's change of match equity, summing over a match to its result less its start; the
equity is the table's shipped one or the fitted file a config's `equity` names."""

from __future__ import annotations

import csv
import dataclasses
import json
import pathlib
import re
from typing import Any

import numpy as np
import pytest

from cardlab.agents.bot import load_bot
from cardlab.agents.match_equity import SHIPPED, equity_at, shipped_equity, weights_sha256
from cardlab.envs import make_game
from cardlab.envs.checked_json import excerpt
from cardlab.envs.generic_batch import generic_batch
from cardlab.training.arena.league import LeagueSettings
from cardlab.training.arena.match_reward import MatchReward
from cardlab.training.arena.selfplay import SelfPlayBatch, batched_engine
from cardlab.training.harness.config import config_from_dict, config_to_dict, load_config
from cardlab.training.harness.progress import Progress
from cardlab.training.trainers.actors import RolloutActor
from cardlab.training.trainers.lean import LeanRun
from cardlab.training.trainers.train import train

CONFIGS = pathlib.Path(__file__).resolve().parents[2] / "configs"
RANDOM = LeagueSettings((("random", 1.0),))


def _play(table: SelfPlayBatch, steps: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(T, B, n) rewards and (T, B) episode ends of random legal moves (the same moves for the same seed)."""
    rng = np.random.default_rng(seed)
    rewards, ended = [], []
    for _ in range(steps):
        _, mask, _, _ = table.observe()
        r, e = table.step(np.where(mask, rng.random(mask.shape), -1.0).argmax(axis=1))
        rewards.append(r)
        ended.append(e)
    return np.stack(rewards), np.stack(ended)


@pytest.mark.parametrize(("game_id", "n", "steps"), [("huit", 4, 1500), ("switch", 4, 1500)])
def test_a_seat_rewards_over_a_match_sum_to_its_result_less_its_start_equity(game_id: str, n: int,
                                                                             steps: int) -> None:
    """A12/B13: the lowest total wins the match (ties share it); C1: a cut match is a draw (1/n each).

    The same games are played with reward='win', whose zero-sum rewards name the
    winners (a winner's reward is its share), so the result is not read from
    the code under test."""
    game = make_game(game_id, num_players=n)
    match, match_ended = _play(SelfPlayBatch(game, 8, RANDOM, seed=5, reward="match", episode="match"),
                               steps, 9)
    win, win_ended = _play(SelfPlayBatch(game, 8, RANDOM, seed=5, episode="match"), steps, 9)
    np.testing.assert_array_equal(match_ended, win_ended)
    start = shipped_equity(game).equity(np.zeros((1, n), dtype=np.int64), np.array([n - 1]))[0]
    matches = 0
    for b in range(match.shape[1]):
        first = 0
        for end in np.flatnonzero(match_ended[:, b]):
            result = np.clip(win[end, b], 0.0, None) if win[end, b].any() else np.full(n, 1.0 / n)
            np.testing.assert_allclose(match[first:end + 1, b].sum(axis=0), result - start, atol=1e-5)
            paid_inside = match[first:end, b]
            assert np.abs(paid_inside).sum() > 0  # hands inside the match pay their equity changes
            first, matches = end + 1, matches + 1
    assert matches >= 4


def test_the_rewards_are_the_equity_changes_of_the_engine_match() -> None:
    """At a hand's end inside a match the reward is the equity of the totals, streaks (B12) and next dealer
    (B3) the rules engine's state holds, less the equity before the hand."""
    game = make_game("huit", num_players=3)
    model = shipped_equity(game)
    engine = batched_engine(game, 4, seed=2, episode="match")
    paying = MatchReward(game, engine)
    rng = np.random.default_rng(0)
    before = model.equity(np.zeros((4, 3), dtype=np.int64), np.full(4, 2))
    checked = 0
    for _ in range(400):
        mask = engine.legal_mask()
        engine.step(np.where(mask, rng.random(mask.shape), -1.0).argmax(axis=1))
        rewards = paying.rewards()
        for b in np.flatnonzero(rewards.any(axis=1)):
            m = engine.to_state(int(b)).match
            after = model.equity(np.array([m.scores]), np.array([m.dealer]), np.array([m.streaks]))[0]
            np.testing.assert_allclose(rewards[b], after - before[b], atol=1e-6)
            before[b] = after
            checked += 1
        over = engine.over
        engine.reset(over)
        paying.restart(np.flatnonzero(over))
        before[over] = model.equity(np.zeros((1, 3), dtype=np.int64), np.array([2]))[0]
    assert checked >= 3


@pytest.mark.parametrize(("changes", "expected"), [
    ({"episode": "hand", "reward": "match"}, "reward='match' is not accepted with episode: hand; accepted: "
     "'win' or 'points', or episode: match ('match' pays the change of the match equity across the hands of "
     "a match)"),
    ({"episode": "match", "reward": "gain"},
     "reward='gain' is not one of the choices; accepted: 'win', 'points', 'match'"),
])
def test_the_table_refuses_a_match_reward_outside_matches(changes: dict[str, str], expected: str) -> None:
    with pytest.raises(ValueError, match=f"^{re.escape(expected)}$"):  # the whole sentence: one wording
        SelfPlayBatch(make_game("huit", num_players=2), 2, RANDOM, seed=0, episode=changes["episode"],
                      reward=changes["reward"])


@pytest.mark.parametrize(("episode", "reward"), [("hand", "match"), ("match", "points")])
def test_the_config_and_the_table_refuse_a_reward_the_episode_rules_out_in_one_sentence(episode: str,
                                                                                       reward: str) -> None:
    """One rule, one owner (`check_reward_episode`): a config and a self-play table say the same sentence."""
    data = config_to_dict(load_config(CONFIGS / "huit_selfplay.yaml"))
    data.update(episode=episode, reward=reward)
    with pytest.raises(ValueError) as from_config:
        config_from_dict(data)
    with pytest.raises(ValueError) as from_table:
        SelfPlayBatch(make_game("huit", num_players=2), 2, RANDOM, seed=0, episode=episode, reward=reward)
    assert str(from_config.value) == str(from_table.value)
    assert str(from_table.value).startswith(f"reward={reward!r} is not accepted with episode: {episode};")


def test_a_table_without_a_shipped_equity_is_refused_naming_those_that_have_one() -> None:
    with pytest.raises(ValueError, match=r"^reward: match needs the table's match equity: no match "
                                         r"equity ships for switch with 2 players \(equity models: "
                                         r"huit-2p, .*switch-4p"):
        SelfPlayBatch(make_game("switch", num_players=2), 2, RANDOM, seed=0, reward="match", episode="match")


def _match_config(tmp_path: pathlib.Path, **rules: int) -> dict[str, Any]:
    """configs/tables/huit_4p_match.yaml at these rules, without imitation, naming an equity fitted for them
    (the shipped Huit 4p weights, as a user's `cardlab match-equity` run writes its RUN/equity.json)."""
    data = json.loads((SHIPPED / "huit-4p.json").read_text())
    data["rules"].update(rules)
    path = tmp_path / "equity_run" / "equity.json"
    path.parent.mkdir()
    path.write_text(json.dumps(data))
    cfg = config_to_dict(load_config(CONFIGS / "tables" / "huit_4p_match.yaml"))
    cfg.update(equity=str(path), imitation={"enabled": False})
    cfg["rules"] = {**cfg["rules"], **rules}
    return cfg


def test_a_config_equity_pays_the_lean_runs_and_actors_tables(tmp_path: pathlib.Path) -> None:
    """At a table whose rules no shipped equity fits, ``equity: PATH`` names a fitted one: the config loads,
    and the tables of the learner and of its actors pay that file's equity changes."""
    data = _match_config(tmp_path, target_score=200)
    with pytest.raises(ValueError, match=r"match equity .*huit-4p.json: it was fitted under other rules: "
                                         r"target_score=151 \(table: 200\)"):
        config_from_dict({**data, "equity": ""})
    cfg = config_from_dict(data)
    game = make_game("huit", num_players=4, target_score=200)
    run = LeanRun(cfg, tmp_path / "run", None, Progress(False))
    actor = RolloutActor(cfg, str(tmp_path / "league"), (1, 2))
    for table in (run.table, actor.table):
        assert table is not None and table.match_reward is not None
        assert table.match_reward.model is equity_at(cfg.equity, game)


def test_a_config_equity_of_other_rules_or_beside_another_reward_is_refused(tmp_path: pathlib.Path) -> None:
    data = _match_config(tmp_path, target_score=200)
    data["rules"] = {**data["rules"], "target_score": 151}
    with pytest.raises(ValueError, match=r"^match equity .*equity.json: it was fitted under other rules: "
                                         r"target_score=200 \(table: 151\)"):
        config_from_dict(data)
    data.update(episode="hand", reward="win")
    with pytest.raises(ValueError) as from_config:
        config_from_dict(data)
    with pytest.raises(ValueError) as from_table:
        SelfPlayBatch(make_game("huit", num_players=4), 2, RANDOM, seed=0, equity=str(data["equity"]))
    assert str(from_config.value) == str(from_table.value) == (
        f"equity={excerpt(data['equity'])} is not accepted with reward: win; accepted: '' (none), or reward: "
        "match (whose equity changes it pays)")


@pytest.mark.parametrize("engine_kind", ["huit", "switch", "generic"])
def test_match_state_is_the_rules_engine_match(engine_kind: str) -> None:
    """Every batched engine's `match_state` is its slots' `Match` (totals, dealer, B12 streaks, hands)."""
    game = make_game("switch" if engine_kind == "switch" else "huit", num_players=3, target_score=60)
    cls = generic_batch(game.spec) if engine_kind == "generic" else game.spec.batched_engine()
    engine = cls(game.rules, 4, seed=1, episode="match")
    rng = np.random.default_rng(3)
    hands = 0
    for _ in range(300):
        mask = engine.legal_mask()
        engine.step(np.where(mask, rng.random(mask.shape), -1.0).argmax(axis=1))
        totals, dealer, streaks, played = engine.match_state()
        for b in range(4):
            m = engine.to_state(b).match
            assert (totals[b].tolist(), int(dealer[b]), streaks[b].tolist(), int(played[b])) == (
                m.scores, m.dealer, m.streaks, m.hands_played)
        hands = max(hands, int(played.max()))
        engine.reset(engine.over)
    assert hands >= 2


@pytest.mark.parametrize("game_id", ["huit", "switch"])
def test_the_4p_match_configs_train_a_tiny_run_end_to_end(game_id: str, tmp_path: pathlib.Path) -> None:
    """configs/tables/GAME_4p_match.yaml (the recipe of bot:GAME-4p-match: imitation, then PPO on match
    episodes paid the equity's changes at 4 seats), shrunk to seconds: it imitates, trains, evaluates
    matches along the run and at its end, and writes a 4-player bot of its game."""
    cfg = load_config(CONFIGS / "tables" / f"{game_id}_4p_match.yaml")
    assert (cfg.game, cfg.num_players, cfg.episode, cfg.reward) == (game_id, 4, "match", "match")
    assert cfg.imitation.enabled and cfg.eval.final_matches >= 1000
    cfg = dataclasses.replace(
        cfg, num_envs=16, total_timesteps=1500, checkpoint_every=1000, max_minutes=0.0,
        imitation=dataclasses.replace(cfg.imitation, hands=40, epochs=1, batch_size=128),
        ppo=dataclasses.replace(cfg.ppo, n_steps=32, batch_size=128),
        self_play=dataclasses.replace(cfg.self_play, snapshot_every=1000),
        eval=dataclasses.replace(cfg.eval, every_steps=1000, hands=4, final_hands=8, matches=2,
                                 final_matches=4, opponents=["expert"]))
    run_dir = train(cfg, runs_dir=tmp_path, progress=False)
    bot = load_bot(run_dir)
    assert (bot.game.id, bot.metadata["num_players"]) == (game_id, 4)
    assert bot.metadata["summary"]["steps"] >= 1500
    with (run_dir / "eval.csv").open(newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) >= 2 and all(int(r["matches"]) >= 2 for r in rows[:-1]) and int(rows[-1]["matches"]) == 4


def test_a_resume_whose_equity_file_changed_is_refused(tmp_path: pathlib.Path) -> None:
    """`equity` must match on resume as any key outside RESUMABLE, and the run pins the file's weights: the
    same path holding another equity (fitted again, or a relative path read from another folder) changed
    the reward the resumed run learned from, without a word. The run folder is left as it was."""
    data = _match_config(tmp_path, target_score=200)
    data.update(num_envs=8, total_timesteps=64, checkpoint_every=64, max_minutes=0.0,
                ppo={**data["ppo"], "n_steps": 8, "batch_size": 64},
                self_play={**data["self_play"], "snapshot_every": 64},
                eval={**data["eval"], "every_steps": 1000, "hands": 2, "final_hands": 2, "matches": 1,
                      "final_matches": 1, "opponents": ["random"]})
    cfg = config_from_dict(data)
    run_dir = train(cfg, runs_dir=tmp_path / "runs", progress=False)
    path = pathlib.Path(cfg.equity)
    assert (run_dir / "equity.sha256").read_text().strip() == json.loads(path.read_text())["weights_sha256"]
    refit = json.loads(path.read_text())
    refit["weights"]["b0"][0] += 0.5
    refit["weights_sha256"] = weights_sha256(refit["weights"])
    path.write_text(json.dumps(refit))
    before = sorted((p.name, p.stat().st_mtime_ns) for p in run_dir.rglob("*"))
    longer = dataclasses.replace(cfg, total_timesteps=128)
    with pytest.raises(ValueError, match=rf"^--resume continues {re.escape(str(run_dir))}, which pays the "
                                         r"changes of the match equity whose weights hash to [0-9a-f]{64} "
                                         r"\(equity.sha256\); its equity, the file equity names \(.*\), now "
                                         rf"hashes to {refit['weights_sha256']}: give the run the equity it "
                                         r"started with, or start a new run$"):
        train(longer, resume=run_dir, progress=False)
    assert sorted((p.name, p.stat().st_mtime_ns) for p in run_dir.rglob("*")) == before
    (tmp_path / "elsewhere.json").write_text(json.dumps(refit))
    with pytest.raises(ValueError, match=r"the given config differs in equity \(run: "):
        train(dataclasses.replace(longer, equity=str(tmp_path / "elsewhere.json")), resume=run_dir,
              progress=False)
