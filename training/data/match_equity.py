"""Fitting a table's match equity from a config: `cardlab match-equity CONFIG.yaml` (configs/equity/).

Why this way: a match is a sequence of hands whose points the players'
styles fix far more than the running totals do (the shipped players read
the totals little), so a table's hands are near enough independent draws
from one distribution of point vectors. The steps:

1. `hands` hands are played by `policy` in every seat in the game's batched
   engine (`hand_outcomes`): each hand's points and winner, by seat from the
   first to play; a second, separate set of `holdout_hands` is played the same
   way from another seed;
2. `matches` matches are played out from these draws (`play_matches`: the
   dealer moving on (A3/B3), B12's streak bonus, the match ending when a total
   reaches the target, A12/B13), and every hand's starting state (totals, the
   dealer, the streaks) is labelled with the match's final winners;
3. the model (`cardlab.agents.match_equity`: one MLP per seat, a softmax over the
   seats) is fitted by Adam to the cross-entropy of those labels;
4. its calibration is measured on `holdout_matches` played out from the
   held-out hands (`reliability`: predicted against observed, by decile of
   the prediction), and the run writes ``equity.json`` and ``run.json``.

A recursion over the totals would be exact for the same independence, but its
grid is the totals of every seat (151^n states at Huit); the matches sample
the states that are played.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from cardlab.agents.agent_spec import make_agent
from cardlab.agents.base import check_unshown
from cardlab.agents.match_equity import MatchEquity, equity_file, feature_count, features, win_shares
from cardlab.envs.game_spec import Game
from cardlab.evaluation.episodes import derive_seed
from cardlab.training.harness.config import parse_dataclass
from cardlab.training.harness.config_bounds import (
    ROLLOUT_HIGH,
    bounded,
    check_declared,
    rate,
)
from cardlab.training.harness.config_tables import RunHeader, check_header, header_default
from cardlab.training.harness.progress import Progress
from cardlab.training.harness.runs import new_run_dir
from cardlab.training.harness.yaml_files import load_config_file

HANDS, HOLDOUT, MATCHES, FIT = range(4)
"""the streams of a run's seed: the hands, the held-out hands, the matches played from them, the fit"""
BLOCK = 4096
"""hands played at once in the batched engine"""
DECILES = 10


@dataclasses.dataclass
class EquityConfig(RunHeader):
    """A match-equity run (`cardlab match-equity CONFIG.yaml`; the module doc has the steps)."""

    name: str = header_default("name", "equity")
    num_players: int = header_default("num_players", 4)
    policy: str = "expert"
    """the agent spec that plays every seat of the hands, in the batched engine (so one that plays from its
    observation)"""
    hands: int = bounded(20_000, 1, 10_000_000)
    """hands played to measure the points of a hand"""
    holdout_hands: int = bounded(5_000, 1, 10_000_000)
    """hands played apart, from which the held-out matches are drawn"""
    matches: int = bounded(50_000, 1, 10_000_000)
    """matches played out from the hands to fit the model"""
    holdout_matches: int = bounded(10_000, 1, 10_000_000)
    """matches played out from the held-out hands to measure its calibration"""
    hidden: list[int] = bounded([32, 32], 1, 256)
    """hidden layer widths of the per-seat MLP"""
    epochs: int = bounded(6, 1, 10_000)
    """passes over the fitted states"""
    batch_size: int = bounded(1024, 1, ROLLOUT_HIGH)
    """states per gradient step"""
    learning_rate: float = rate(3e-3)
    """Adam step size"""


def load_equity_config(path: str | Path) -> EquityConfig:
    """Read and validate a YAML equity config; a `ValueError` names the file and the key."""

    def build(data: Any) -> EquityConfig:
        cfg = parse_dataclass(EquityConfig, data)
        validate_equity(cfg)
        return cfg

    return load_config_file(path, build, "an equity config names at least its game, e.g. "
                                         "configs/equity/huit_4p.yaml")


def validate_equity(cfg: EquityConfig) -> Game:
    """Refuse a bad value with the key that holds it and what is accepted; returns the table's game."""
    game = check_header(cfg)
    check_declared(cfg)
    try:
        agent = make_agent(cfg.policy, game, seed=0)
    except ValueError as err:
        raise ValueError(f"policy: {err}") from None
    check_unshown("policy", cfg.policy, agent, "the batched engine that plays the hands")
    return game


def hand_outcomes(game: Game, policy: str, hands: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """((H, n) points, (H,) winner) of `hands` hands of `policy` in every seat, by seat from the first to play
    (the winner -1 and no points for a hand C1 cut); hand h is dealt from ``derive_seed(seed, h)``."""
    n = game.num_players
    agent = make_agent(policy, game, seed=derive_seed(seed, n))
    points = np.zeros((hands, n), dtype=np.int64)
    winners = np.full(hands, -1, dtype=np.int64)
    for start in range(0, hands, BLOCK):
        size = min(BLOCK, hands - start)
        engine = game.spec.batched_engine()(game.rules, size, seed=derive_seed(seed, start), episode="hand")
        for b in range(size):
            engine.load(b, game.new_state(np.random.default_rng(derive_seed(seed, start + b))))
        actions = np.zeros(size, dtype=np.int64)
        while not engine.over.all():
            rows = np.flatnonzero(~engine.over)
            seats = engine.current_player()
            actions[rows] = agent.act_batch(engine.observe(seats)[rows], engine.legal_mask()[rows])
            engine.step(actions)
        for b in range(size):
            state = engine.to_state(b)
            first = (state.match.dealer + 1) % n
            order = (first + np.arange(n)) % n
            if not state.truncated:
                points[start + b] = np.asarray(state.hand_points)[order]
                winners[start + b] = (state.winner - first) % n
    return points, winners


@dataclasses.dataclass
class Played:
    """The starting state of every hand of some matches, and each match's result (`play_matches`)."""

    scores: np.ndarray
    """(N, n) totals before the hand"""
    dealer: np.ndarray
    """(N,) the hand's dealer"""
    streaks: np.ndarray
    """(N, n) B12 streaks before the hand"""
    shares: np.ndarray
    """(N, n) the match's final result: its winners share 1"""


def play_matches(game: Game, points: np.ndarray, winners: np.ndarray, matches: int, rng: np.random.Generator
                 ) -> Played:
    """`matches` matches played out from hands drawn from (points, winners) (`hand_outcomes`' arrays), all
    at once: the rules' target, dealer rotation and B12 streak bonus (module doc).

    A hand C1 cut adds no points, so draws from hands that C1 cut every one of would never end a match:
    they are refused in one line instead of looping for ever."""
    rules = game.rules.to_dict()
    if not (np.asarray(winners) >= 0).any():
        raise ValueError(f"rules.max_turns={rules['max_turns']:,} cut every one of the {len(winners):,} "
                         "hands played before anyone went out (C1), so no match could reach the target; "
                         "accepted: a max_turns within which the policy's hands end (the default is "
                         f"{game.spec.rules.completed({})['max_turns']:,})")
    target, length, bonus = int(rules["target_score"]), int(rules.get("streak_length", 0)), int(
        rules.get("streak_bonus", 0))
    n = game.num_players
    scores = np.zeros((matches, n), dtype=np.int64)
    dealer = np.full(matches, n - 1, dtype=np.int64)
    streaks = np.zeros((matches, n), dtype=np.int64)
    seen: list[tuple[np.ndarray, ...]] = []
    final = np.zeros((matches, n), dtype=np.float64)
    live = np.arange(matches)
    while live.size:
        seen.append((live, scores[live].copy(), dealer[live].copy(), streaks[live].copy()))
        drawn = rng.integers(len(points), size=live.size)
        first = (dealer[live] + 1) % n
        seat_order = (np.arange(n)[None, :] - first[:, None]) % n  # seat s's place in the hand's order
        delta = np.take_along_axis(points[drawn], seat_order, axis=1)
        won = winners[drawn]
        winner = np.where(won >= 0, (won + first) % n, -1)
        if length:
            rows = np.flatnonzero(winner >= 0)
            run = np.zeros((live.size, n), dtype=np.int64)
            run[rows, winner[rows]] = streaks[live[rows], winner[rows]] + 1
            hit = run >= length
            delta -= hit * bonus
            streaks[live] = np.where(hit, 0, run)
        scores[live] += delta
        dealer[live] = (dealer[live] + 1) % n
        over = scores[live].max(axis=1) >= target
        final[live[over]] = win_shares(scores[live[over]])
        live = live[~over]
    index = np.concatenate([s[0] for s in seen])
    return Played(np.concatenate([s[1] for s in seen]), np.concatenate([s[2] for s in seen]),
                  np.concatenate([s[3] for s in seen]), final[index])


def network(inputs: int, hidden: list[int]) -> nn.Sequential:
    """The per-seat MLP (tanh between layers, one logit out), as `MatchEquity.logits` runs it."""
    sizes = [inputs, *hidden, 1]
    layers: list[nn.Module] = []
    for i in range(len(sizes) - 1):
        layers.append(nn.Linear(sizes[i], sizes[i + 1]))
        if i < len(sizes) - 2:
            layers.append(nn.Tanh())
    return nn.Sequential(*layers)


def fit(game: Game, cfg: EquityConfig, played: Played, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """The model's layers fitted to the cross-entropy of the matches' results (module doc, step 3)."""
    torch.manual_seed(seed)
    rules = game.rules.to_dict()
    x = torch.as_tensor(features(played.scores, played.dealer, played.streaks, int(rules["target_score"]),
                                 int(rules.get("streak_length", 0))), dtype=torch.float32)
    y = torch.as_tensor(played.shares, dtype=torch.float32)
    net = network(feature_count(game.num_players), cfg.hidden)
    optimiser = torch.optim.Adam(net.parameters(), lr=cfg.learning_rate)
    generator = torch.Generator().manual_seed(seed)
    for epoch in range(cfg.epochs):
        for g in optimiser.param_groups:  # halved at each of the last two epochs
            g["lr"] = cfg.learning_rate * 0.5 ** max(0, epoch - cfg.epochs + 3)
        order = torch.randperm(len(x), generator=generator)
        for start in range(0, len(x), cfg.batch_size):
            rows = order[start:start + cfg.batch_size]
            logits = net(x[rows]).squeeze(-1)
            loss = -(y[rows] * torch.log_softmax(logits, dim=1)).sum(dim=1).mean()
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
    linears = [m for m in net if isinstance(m, nn.Linear)]
    return [(m.weight.detach().double().numpy(), m.bias.detach().double().numpy()) for m in linears]


def reliability(predicted: np.ndarray, observed: np.ndarray) -> list[dict[str, float]]:
    """Per decile of the predicted probability (0-0.1, ..., 0.9-1): how many seat-states fall there, their
    mean prediction and their mean observed win share; the calibration's table."""
    p, o = predicted.ravel(), observed.ravel()
    bins = np.minimum((p * DECILES).astype(np.int64), DECILES - 1)
    rows = []
    for d in range(DECILES):
        inside = bins == d
        if inside.any():
            rows.append({"low": d / DECILES, "high": (d + 1) / DECILES, "count": int(inside.sum()),
                         "predicted": float(p[inside].mean()), "observed": float(o[inside].mean())})
    return rows


def log_loss(predicted: np.ndarray, observed: np.ndarray) -> float:
    """Mean cross-entropy of the results under the predictions (nats per state)."""
    return float(-(observed * np.log(np.clip(predicted, 1e-12, 1.0))).sum(axis=1).mean())


def play_out(game: Game, cfg: EquityConfig, say: Callable[[str], None]) -> tuple[Played, Played]:
    """Steps 1 and 2 of the module doc: the hands, then the matches to fit and those held out."""
    say(f"{game.id}, {game.num_players} players: {cfg.hands:,} + {cfg.holdout_hands:,} hands of {cfg.policy}")
    points, winners = hand_outcomes(game, cfg.policy, cfg.hands, derive_seed(cfg.seed, HANDS))
    held_points, held_winners = hand_outcomes(game, cfg.policy, cfg.holdout_hands,
                                              derive_seed(cfg.seed, HOLDOUT))
    rng = np.random.default_rng(derive_seed(cfg.seed, MATCHES))
    played = play_matches(game, points, winners, cfg.matches, rng)
    held = play_matches(game, held_points, held_winners, cfg.holdout_matches, rng)
    say(f"{cfg.matches:,} matches ({len(played.scores):,} hands) to fit, {cfg.holdout_matches:,} "
        f"({len(held.scores):,}) held out")
    return played, held


def match_equity(cfg: EquityConfig, runs_dir: Path = Path("runs"), progress: bool = True) -> Path:
    """Run the steps of the module doc; returns the run folder (``equity.json``, ``run.json``)."""
    game = validate_equity(cfg)
    say = Progress(progress).say
    started = time.monotonic()
    run_dir = new_run_dir(runs_dir, cfg)
    try:
        played, held = play_out(game, cfg, say)
    except BaseException:  # refused (hands C1 cut every one of) or stopped: nothing is written yet
        run_dir.rmdir()
        raise
    layers = fit(game, cfg, played, derive_seed(cfg.seed, FIT))
    model = MatchEquity(game, layers, {})
    predicted = model.equity(held.scores, held.dealer, held.streaks)
    table = reliability(predicted, held.shares)
    worst = max(abs(r["predicted"] - r["observed"]) for r in table)
    summary = {"policy": cfg.policy, "hands": cfg.hands, "matches": cfg.matches, "hands_per_match": round(
        len(played.scores) / cfg.matches, 3), "holdout_log_loss": round(log_loss(predicted, held.shares), 5),
        "uniform_log_loss": round(float(np.log(game.num_players)), 5), "calibration_worst": round(worst, 5),
        "reliability": [{k: round(v, 5) for k, v in r.items()} for r in table], "seed": cfg.seed}
    data = equity_file(game, layers, summary)
    (run_dir / "equity.json").write_text(json.dumps(data) + "\n", encoding="utf-8")
    (run_dir / "run.json").write_text(json.dumps({"config": dataclasses.asdict(cfg), "summary": summary,
                                                  "seconds": round(time.monotonic() - started, 1)}, indent=2)
                                      + "\n", encoding="utf-8")
    say(f"held-out log loss {summary['holdout_log_loss']:.4f} (uniform {summary['uniform_log_loss']:.4f}); "
        f"calibration, worst decile {worst:.4f}:")
    for r in table:
        say(f"  {r['low']:.1f}-{r['high']:.1f}: {r['count']:>8,} predicted {r['predicted']:.3f} observed "
            f"{r['observed']:.3f}")
    say(f"wrote {run_dir / 'equity.json'}")
    return run_dir

