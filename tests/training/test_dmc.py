"""Deep Monte Carlo in the lean trainer (``algorithm: dmc``): epsilon-greedy stays legal, the Monte Carlo
targets are each seat's hand reward (B1-B13: a Huit hand is won by the seat that empties its hand), a tiny
run trains with actors and alone, resumes and writes a bot whose logits are Q, and bad keys are refused."""

from __future__ import annotations

import dataclasses
import pathlib
import re
from typing import Any

import numpy as np
import pytest
import torch

from cardlab.agents.bot import load_bot
from cardlab.envs import make_game
from cardlab.training.arena.league import LeagueSettings
from cardlab.training.arena.selfplay import SelfPlayBatch
from cardlab.training.harness.checkpoints import list_checkpoints
from cardlab.training.harness.config import config_from_dict, config_to_dict
from cardlab.training.trainers.dmc_model import (
    MonteCarlo,
    QLearner,
    build_model,
    epsilon_greedy,
    move_features,
)
from cardlab.training.trainers.lean import load_actor
from cardlab.training.trainers.rollouts import play
from cardlab.training.trainers.train import train
from tests.training.test_ppo import tiny


# ---------------------------------------------------------------- play
@pytest.mark.parametrize("epsilon", [0.0, 0.3, 1.0])
def test_epsilon_greedy_never_picks_an_illegal_move(epsilon: float) -> None:
    """Over random masks (one legal move up to all), with the illegal moves' Q the highest: never illegal;
    at epsilon 0 the best legal move; at epsilon 1 every legal move about equally often."""
    gen = torch.Generator().manual_seed(0)
    rows, actions = 4000, 354
    density = torch.rand(rows, 1, generator=gen)
    mask = torch.rand(rows, actions, generator=gen) < density
    mask[torch.arange(rows), torch.randint(0, actions, (rows,), generator=gen)] = True
    q = torch.randn(rows, actions, generator=gen) + 100.0 * (~mask)  # illegal moves look best
    moves = epsilon_greedy(q, mask, epsilon, gen)
    assert mask[torch.arange(rows), moves].all()
    best = q.masked_fill(~mask, -torch.inf).argmax(-1)
    greedy_share = float((moves == best).float().mean())
    if epsilon == 0.0:
        assert greedy_share == 1.0
    if epsilon == 1.0:  # three legal moves: each about a third of the time
        three = torch.zeros(3000, actions, dtype=torch.bool)
        three[:, [5, 77, 353]] = True
        picked = epsilon_greedy(torch.randn(3000, actions, generator=gen), three, 1.0, gen)
        counts = torch.bincount(picked, minlength=actions)[[5, 77, 353]]
        assert counts.sum() == 3000 and counts.min() > 900


@pytest.mark.parametrize("game_id", ["huit", "switch"])
def test_every_move_has_its_own_features(game_id: str) -> None:
    """A move is read by its features, not its index: no two action ids of a game share them."""
    features = move_features(make_game(game_id, num_players=4))
    assert len({row.tobytes() for row in features}) == len(features)


# ---------------------------------------------------------------- Monte Carlo returns
def _reference(rewards: np.ndarray, ended: np.ndarray, seats: np.ndarray, learner: np.ndarray,
               T: int) -> list[list[tuple[int, float]]]:
    """Per rollout of T steps: (action row index, return) of the learner moves whose hand ended in it, by
    walking each move's game forward to its hand's end and adding up its seat's rewards (gamma 1)."""
    out: list[list[tuple[int, float]]] = [[] for _ in range(len(rewards) // T)]
    for t, b in zip(*np.nonzero(learner), strict=True):
        total, s = 0.0, seats[t, b]
        for u in range(t, len(rewards)):
            total += rewards[u, b, s]
            if ended[u, b]:
                out[u // T].append((t * rewards.shape[1] + b, total))
                break
    return out


def test_monte_carlo_targets_are_each_seats_hand_reward() -> None:
    """Eight rollouts of Huit 4p (every seat the learner's, win reward) finished by `MonteCarlo`: each
    finished move's target is its seat's reward for the hand it was played in (1 for the winner, -1/3 for
    the others: B1-B13), hands that run across rollouts included, in the order they were played."""
    cfg = tiny(algorithm="dmc", num_players=4, num_envs=6, ppo=dataclasses.replace(tiny().ppo, n_steps=16),
               dmc=dataclasses.replace(tiny().dmc, epsilon=1.0))  # uniform legal moves: hands end soon
    game = make_game("huit", num_players=4)
    table = SelfPlayBatch(game, cfg.num_envs, LeagueSettings((("random", 1.0),)), learner_share=1.0, seed=3)
    torch.manual_seed(0)
    model = build_model(cfg)
    assert isinstance(model, QLearner)
    played = [play(model, table, cfg, values=False) for _ in range(8)]
    monte_carlo = MonteCarlo()
    finished = [monte_carlo.finish(r) for r in played]
    cat = {k: np.concatenate([getattr(r, k) for r in played])
           for k in ("rewards", "ended", "seats", "learner")}
    actions = torch.cat([r.actions for r in played]).reshape(-1)
    expected = _reference(cat["rewards"], cat["ended"], cat["seats"], cat["learner"], 16)
    assert sum(map(len, expected)) > 100 and cat["learner"].all()
    for done, wanted in zip(finished, expected, strict=True):
        assert done.returns is not None and done.compact
        assert done.returns.tolist() == pytest.approx([r for _, r in wanted], abs=1e-6)
        assert done.actions.tolist() == [int(actions[i]) for i, _ in wanted]
        targets = done.returns.numpy()
        assert np.all(np.isclose(targets, 1.0) | np.isclose(targets, -1 / 3))
    waiting = int(cat["learner"].sum()) - sum(map(len, expected))
    assert len(monte_carlo.sums) == waiting > 0  # the hands still under way wait for their ends


# ---------------------------------------------------------------- runs
def test_a_tiny_dmc_run_trains_with_actors_resumes_alone_and_writes_a_bot(tmp_path: pathlib.Path) -> None:
    """2 actors play with a recent copy of Q, then a resume without actors goes on; the bot file's logits
    are Q of every move (its masked argmax is Q's greedy move), and it plays a hand as a bot."""
    run_dir = train(tiny(algorithm="dmc", actors=2, total_timesteps=1500), runs_dir=tmp_path, progress=False)
    assert load_bot(run_dir).metadata["summary"]["algorithm"] == "lean deep Monte Carlo"
    train(tiny(algorithm="dmc", total_timesteps=2500), resume=run_dir, progress=False)
    bot = load_bot(run_dir)
    assert bot.metadata["summary"]["steps"] >= 2500
    data = torch.load(list_checkpoints(run_dir)[-1], weights_only=True)
    model = build_model(tiny(algorithm="dmc"))
    assert isinstance(model, QLearner)
    model.load_state_dict(data["model"])
    first = model.state[0]
    assert isinstance(first, torch.nn.Linear)
    obs = torch.randn(5, first.in_features)
    actions = torch.randint(0, model.head.out_features, (5,))  # the head has a row per move
    with torch.no_grad():
        logits = bot.network(obs)
        assert torch.allclose(logits[torch.arange(5), actions], model.q(obs, actions), atol=1e-5)
    table = SelfPlayBatch(make_game("huit", num_players=2), 8, LeagueSettings((("random", 1.0),)), seed=0)
    observations, mask, _, _ = table.observe()
    assert mask[np.arange(8), bot.act_batch(observations, mask)].all()


def _config(**changes: Any) -> dict[str, Any]:
    return {**config_to_dict(tiny()), **changes}


@pytest.mark.parametrize(("changes", "expected"), [
    ({"algorithm": "dqn"}, "algorithm='dqn' is not one of the choices; accepted: 'ppo', 'dmc'"),
    ({"algorithm": "dmc", "dmc": {"epsilon": 1.5}}, "dmc.epsilon=1.5 is out of range; accepted: a "),
    ({"algorithm": "dmc", "dmc": {"batch_size": 0}}, "dmc.batch_size=0 is out of range; accepted: a value "),
    ({"algorithm": "dmc", "dmc": {"learning_rate": 0}}, "dmc.learning_rate=0.0 is out of range; accepted: a"),
    ({"algorithm": "dmc", "dmc": {"gamma": 0.9}}, "unknown config key(s) dmc.gamma"),
    ({"algorithm": "dmc", "policy": {"net_arch": [32], "privileged_critic": True}},
     "policy.privileged_critic=True is not accepted with algorithm: dmc; accepted: False (the Q network has "
     "no critic)"),
    ({"algorithm": "dmc", "imitation": {"enabled": True}},
     "imitation.enabled=True is not accepted with algorithm: dmc; accepted: False"),
    ({"algorithm": "dmc", "trainer": "maskable_ppo", "num_envs": 2},
     "algorithm='dmc' is not accepted with trainer: maskable_ppo; accepted: 'ppo', or trainer: lean"),
])
def test_bad_dmc_keys_are_refused_in_one_line(changes: dict[str, Any], expected: str) -> None:
    with pytest.raises(ValueError, match=re.escape(expected)) as err:
        config_from_dict(_config(**changes))
    assert "\n" not in str(err.value)


def test_a_ppo_run_is_not_continued_or_loaded_as_dmc(tmp_path: pathlib.Path) -> None:
    """--resume names the algorithm that changed; a checkpoint loaded with another run's config (`cardlab
    export`'s `load_actor`) is refused naming both learners, in one line, not with a tensor dump."""
    run_dir = train(tiny(total_timesteps=600, checkpoint_every=500), runs_dir=tmp_path, progress=False)
    with pytest.raises(ValueError, match=re.escape("differs in algorithm (run: 'ppo', given: 'dmc')")):
        train(tiny(algorithm="dmc", total_timesteps=1200, checkpoint_every=500), resume=run_dir,
              progress=False)
    refused = ("holds PPO's actor-critic (algorithm: ppo), but the config asks for DMC's Q network "
               "(algorithm: dmc)")
    with pytest.raises(ValueError, match=re.escape(refused)) as err:
        load_actor(list_checkpoints(run_dir)[-1], run_dir, tiny(algorithm="dmc"))
    assert "\n" not in str(err.value)


def test_a_game_that_declares_no_move_facts_is_refused_in_one_line() -> None:
    """DMC reads moves by the facts each game declares (`GameSpec.move_facts`, in the game's folder); a game
    without them is refused, naming the way out, rather than guessed at."""
    import dataclasses

    from cardlab.envs.game_spec import get_spec, make_game
    from cardlab.training.trainers.dmc_model import move_features

    bare = dataclasses.replace(get_spec("huit"), move_facts=None)
    with pytest.raises(ValueError, match=r"declares none \(GameSpec.move_facts\): use algorithm: ppo"):
        move_features(make_game(bare, {"num_players": 4}))
