"""The lean trainer's hand head (``policy.read_hands``): its labels are the other hands, it trains, and the
bot file stays the actor alone."""

from __future__ import annotations

import dataclasses
import pathlib
import re

import numpy as np
import pytest
import torch
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from cardlab.agents.bot import load_bot
from cardlab.envs import make_game
from cardlab.training.arena.league import LeagueSettings
from cardlab.training.arena.selfplay import SelfPlayBatch
from cardlab.training.harness.checkpoints import list_checkpoints
from cardlab.training.harness.config import config_from_dict, config_to_dict, load_config
from cardlab.training.trainers.hand_head import hand_targets, hand_width, right_seat_share
from cardlab.training.trainers.lean import load_actor
from cardlab.training.trainers.train import train
from tests.training.test_ppo import CONFIGS, tiny


@pytest.mark.parametrize(("game", "n"), [("huit", 4), ("switch", 5)])
def test_the_labels_are_each_other_seats_hand_from_the_mover_on(game: str, n: int) -> None:
    game_ = make_game(game, {"num_players": n})
    table = SelfPlayBatch(game_, 8, LeagueSettings.of(["random"]), learner_share=1.0, seed=3)
    for _ in range(5):  # a few moves in, so hands differ in size and make-up
        view, _ = table.observe_with_table()
        table.step(view[1].argmax(axis=1).astype(np.int64), view)  # each game's first legal move
    (_, _, seats, _), seen = table.observe_with_table()
    targets = hand_targets(seen, game_.layout, n)
    hand, width = game_.layout.slices["hand"], hand_width(game_.layout)
    assert targets.shape == (8, (n - 1) * width)
    for k in range(1, n):
        other = table.engine.observe((seats + k) % n)  # the seat k places after the mover, observed itself
        np.testing.assert_array_equal(targets[:, (k - 1) * width: k * width], other[:, hand])


def test_the_right_seat_share_is_a_blind_guess_at_zero_logits_and_one_when_read() -> None:
    targets = torch.zeros(6, 3 * 32)
    seat = torch.randint(0, 3, (6, 32))
    for k in range(3):
        targets[:, k * 32:(k + 1) * 32] = (seat == k).float() * (torch.rand(6, 32) < 0.4)
    assert right_seat_share(torch.zeros_like(targets), targets, 4) == pytest.approx(1 / 3)
    assert right_seat_share(40 * (2 * targets - 1), targets, 4) == pytest.approx(1.0)
    wrong = torch.roll(targets.reshape(6, 3, 32), 1, dims=1).reshape(6, -1)  # every card on another seat
    assert right_seat_share(40 * (2 * wrong - 1), targets, 4) < 1e-6


def test_a_run_with_the_head_trains_it_and_exports_the_actor_alone(tmp_path: pathlib.Path) -> None:
    cfg = tiny(num_players=3)
    cfg = dataclasses.replace(cfg, policy=dataclasses.replace(cfg.policy, read_hands=1.0))
    run_dir = train(cfg, runs_dir=tmp_path, progress=False)
    acc = EventAccumulator(str(next(run_dir.glob("events.out.tfevents.*"))))
    acc.Reload()
    losses = [e.value for e in acc.Scalars("losses/read_hands")]
    shares = [e.value for e in acc.Scalars("charts/hands_right_seat")]
    assert losses and all(0 < x < 1.5 for x in losses) and all(0 <= s <= 1 for s in shares)
    assert losses[-1] < losses[0]  # the head learns where cards are (own hand and table first of all)
    bot = load_bot(run_dir)  # the actor only: the bot file a plain run writes
    assert bot.metadata["network"]["layer_sizes"][0] == make_game("huit", {"num_players": 3}).layout.size
    assert bot.metadata["network"]["layer_sizes"][1:3] == [32, 32]
    checkpoint = list_checkpoints(run_dir)[-1]
    plain = dataclasses.replace(cfg, policy=dataclasses.replace(cfg.policy, read_hands=0.0))
    refusal = ("holds an actor with the hand head (policy.read_hands > 0), but the config asks for an actor "
               "without")
    with pytest.raises(ValueError, match=re.escape(refusal)):
        load_actor(checkpoint, run_dir, plain)
    actor, steps = load_actor(checkpoint, run_dir, cfg)
    assert steps >= 1500 and actor[0].in_features == bot.metadata["network"]["layer_sizes"][0]


def test_the_head_is_refused_with_maskable_ppo_and_out_of_bounds() -> None:
    data = config_to_dict(load_config(CONFIGS / "huit_quick.yaml"))
    data["policy"]["read_hands"] = 0.5
    refusal = ("policy.read_hands=0.5 is not accepted with trainer: maskable_ppo; accepted: 0, or trainer: "
               "lean")
    with pytest.raises(ValueError, match=re.escape(refusal)):
        config_from_dict(data)
    data = config_to_dict(load_config(CONFIGS / "huit_selfplay.yaml"))
    data["policy"]["read_hands"] = -1
    refusal = "policy.read_hands=-1.0 is out of range; accepted: a value >= 0 and <= 1,000"
    with pytest.raises(ValueError, match=re.escape(refusal)):
        config_from_dict(data)
