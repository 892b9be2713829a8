"""How much can a player gain over `expert`? Bounds for the strength goals of learned agents.

- `oracle` **cheats**: it plays as the expert does, except that it knows
  whether the next player can lay on what it leaves (it reads their real
  hand) instead of estimating the chance from the unknown cards. Its win rate
  bounds what better reading of the opponent's hand is worth to this expert.
- `voids` plays fair: it also uses what an attentive player learns when an
  opponent draws and then passes (they hold no card of the table's suit or
  rank and no 8, apart from cards drawn since), instead of treating the
  unknown cards as spread at random.

Neither is an agent spec of cardlab: `oracle` needs the true state, and both
need the move history, which the observation does not carry. Hands are played
through `evaluate` with seats rotated (duplicate style), 95% Wilson intervals.

- `rollouts` asks whether any move beats the expert's *in expectation* (one
  step of policy improvement), in Huit (2 players) and Switch (4 players):
  in hands of experts only, every legal move of every decision is played out
  by the experts on a copy of the true state. On those cards some move often
  does better than the expert's; a network that sees what the mover sees,
  trained on 80% of the decisions to predict each move's outcome relative to
  the others, shows on the other 20% how much of that is knowable in advance.

    python benchmarks/expert_headroom.py --hands 8000 --rollout-tables huit2:2000,switch4:300
"""

from __future__ import annotations

import argparse
import copy
import time
from typing import Any

import numpy as np
import torch

from cardlab.agents.agent_spec import make_agent
from cardlab.agents.base import register
from cardlab.agents.heuristics import huit as H
from cardlab.envs import cards as C
from cardlab.envs import make_env
from cardlab.envs.aec import live_turns
from cardlab.envs.huit import rules as R
from cardlab.envs.huit.heuristics import kernels as K
from cardlab.envs.huit.heuristics import tables as T
from cardlab.envs.match import win_rewards
from cardlab.evaluation import evaluate as evaluate_module
from cardlab.evaluation.episodes import derive_seed
from cardlab.evaluation.evaluate import evaluate
from cardlab.evaluation.request import EvalRequest


def hand_mask(state: R.HuitState, seat: int) -> int:
    return sum(T.BIT[int(c)] for c in state.hands[seat].nonzero()[0])


# The env of the evaluation in progress. Agents are built from a Game and cannot see the table; these
# variants measure what seeing it is worth, so they cheat on purpose, through this one door.
TABLE: dict[str, Any] = {}


def watch_tables() -> None:
    """Make `evaluate` publish each env it builds in `TABLE` (with a `VoidTracker` fed by every step)."""
    build = evaluate_module.make_env

    def watched(*args: Any, **kwargs: Any) -> Any:
        TABLE["env"] = track_voids(build(*args, **kwargs))
        return TABLE["env"]

    evaluate_module.make_env = watched


class Oracle(H.HuitExpert):
    """The expert, told whether the next player can follow (it reads the true state): every card a seat
    does not hold is a known void of it (`HuitExpert.act_reading`)."""

    def act(self, observation: dict[str, Any]) -> int:
        state = TABLE["env"].game_state
        voids = np.zeros((2, K.ALL_SEATS), dtype=np.int64)
        for k in range(1, state.n):
            voids[0, k] = (T.PLAIN | T.EIGHTS) & ~hand_mask(state, (state.current + k) % state.n)
        return self.act_reading(observation, voids)


class VoidTracker:
    """Per seat: cards shown not held (on a draw-then-pass, or a 2-card Ace penalty) and cards drawn since."""

    def __init__(self, n: int) -> None:
        self.excluded, self.drawn_since = [0] * n, [0] * n

    def before(self, state: R.HuitState, action: int) -> None:
        seat = state.current
        if action == R.PASS and state.table:  # drew, then could not (or would not) lay
            top = state.table[-1]
            self.excluded[seat] = T.EIGHTS | T.RANK_BITS[C.rank_of(top)] | T.SUIT_BITS[state.current_suit]
            self.drawn_since[seat] = 0
        elif action == R.DRAW and state.ace_penalty:  # no Ace and no 8 to answer, then 2 unknown cards
            self.excluded[seat], self.drawn_since[seat] = T.ACES | T.EIGHTS, 2
        elif action == R.DRAW:
            self.drawn_since[seat] += 1


class Voids(H.HuitExpert):
    """The expert, reckoning the next player's chance to follow from the voids they have shown."""

    def act(self, observation: dict[str, Any]) -> int:
        state = TABLE["env"].game_state
        tracker: VoidTracker = TABLE["env"].voids
        voids = np.zeros((2, K.ALL_SEATS), dtype=np.int64)
        for k in range(state.n):
            seat = (state.current + k) % state.n
            voids[:, k] = tracker.excluded[seat], tracker.drawn_since[seat]
        return self.act_reading(observation, voids)


def track_voids(env: Any) -> Any:
    """Give `env` a `VoidTracker` fed by every step (a fresh one at every reset)."""
    reset, step = env.reset, env.step

    def tracked_reset(*args: Any, **kwargs: Any) -> Any:
        out = reset(*args, **kwargs)
        env.voids = VoidTracker(env.rules.num_players)
        return out

    def tracked_step(action: Any) -> Any:
        if action is not None and not env.game_state.hand_over:
            env.voids.before(env.game_state, int(action))
        return step(action)

    env.reset, env.step = tracked_reset, tracked_step
    return env


def play_out(state: Any, env: Any, agents: list[Any], seat: int) -> float:
    """Play a copied state to the end of its hand with `agents`; `seat`'s win reward (0 if truncated)."""
    while not state.hand_over:
        mask = np.zeros(env.NUM_ACTIONS, dtype=np.int8)
        mask[state.legal_actions()] = 1
        mover = state.current
        observation = {"observation": env.observer.observe(state, mover), "action_mask": mask}
        state.apply(agents[mover].act(observation))
    return 0.0 if state.truncated else win_rewards(state.n, [state.winner])[seat]


def rollout_data(game: str, players: int, hands: int, seed: int) -> dict[str, np.ndarray]:
    """Every decision with a choice in expert-only hands: observation, mask, the expert's move, outcomes."""
    env = make_env(game, num_players=players)
    agents = [make_agent("expert", env.game, seed=derive_seed(seed, s)) for s in range(players)]
    rows: dict[str, list[Any]] = {"obs": [], "mask": [], "chosen": [], "values": []}

    for hand in range(hands):
        env.reset(seed=derive_seed(seed, 1, hand))
        for _, seat, obs in live_turns(env):
            legal = np.flatnonzero(obs["action_mask"])
            action = agents[seat].act(obs)
            if len(legal) > 1:
                values = np.zeros(env.NUM_ACTIONS, dtype=np.float32)
                for move in legal:
                    state = copy.deepcopy(env.game_state)
                    state.apply(int(move))
                    values[move] = play_out(state, env, agents, seat)
                rows["obs"].append(obs["observation"])
                rows["mask"].append(obs["action_mask"].astype(bool))
                rows["chosen"].append(action)
                rows["values"].append(values)
            env.step(action)
    return {key: np.array(value) for key, value in rows.items()}


def predictable_share(data: dict[str, np.ndarray], seed: int, epochs: int = 10) -> tuple[float, float]:
    """Held-out share of the variance of centred move outcomes a network predicts from the observation.

    Returns (best held-out share over the epochs, share at the last epoch).
    """
    obs, mask = torch.as_tensor(data["obs"]), torch.as_tensor(data["mask"]).float()
    values = torch.as_tensor(data["values"])
    count = mask.sum(dim=1, keepdim=True)
    target = (values - (values * mask).sum(dim=1, keepdim=True) / count) * mask
    order = torch.randperm(len(obs), generator=torch.Generator().manual_seed(seed))
    held, train = order[: len(obs) // 5], order[len(obs) // 5:]
    net = torch.nn.Sequential(torch.nn.Linear(obs.shape[1], 256), torch.nn.Tanh(),
                              torch.nn.Linear(256, 256), torch.nn.Tanh(), torch.nn.Linear(256, mask.shape[1]))
    optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)

    def loss(idx: torch.Tensor) -> torch.Tensor:
        q = net(obs[idx]) * mask[idx]
        centred = (q - q.sum(dim=1, keepdim=True) / count[idx]) * mask[idx]
        return (centred - target[idx]).pow(2).sum() / mask[idx].sum()

    baseline = (target[held].pow(2).sum() / mask[held].sum()).item()
    if baseline == 0:
        raise SystemExit(f"the {len(held)} held-out decisions all end alike whatever the move: "
                         "give the table more rollout hands (TABLE:HANDS)")
    shares = []
    for _ in range(epochs):
        for idx in torch.split(train[torch.randperm(len(train))], 256):
            optimizer.zero_grad()
            loss(idx).backward()
            optimizer.step()
        with torch.no_grad():
            shares.append(1 - loss(held).item() / baseline)
    return max(shares), shares[-1]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--hands", type=int, default=4000, help="hands per variant (default 4000)")
    parser.add_argument("--rollout-tables", default="huit2:2000,switch4:300",
                        help="TABLE:HANDS of the rollout measurement, comma-separated")
    parser.add_argument("--seed", type=int, default=5)
    args = parser.parse_args(argv)
    torch.manual_seed(args.seed)
    watch_tables()
    register("headroom_oracle", Oracle)
    register("headroom_voids", Voids)
    print(f"Huit, 2 players, {args.hands} hands per variant, seats rotated, 95% Wilson intervals\n")
    print(f"{'variant':<10}{'win rate vs expert':>20}  {'95% CI':<17}{'seconds':>8}")
    for name in ("oracle", "voids"):
        start = time.perf_counter()
        result = evaluate(EvalRequest("huit", [f"headroom_{name}", "expert"],
                                      hands=args.hands, seed=args.seed, rules={"num_players": 2}))
        stats = result.stats[0].hands
        low, high = stats.interval
        ci = f"[{low:.3f}, {high:.3f}]"
        print(f"{name:<10}{stats.rate:>20.3f}  {ci:<17}{time.perf_counter() - start:>8.1f}")
    for item in args.rollout_tables.split(","):
        table, hands = item.split(":")
        game, players = table.rstrip("0123456789"), int(table.lstrip("abcdefghijklmnopqrstuvwxyz"))
        start = time.perf_counter()
        data = rollout_data(game, players, int(hands), args.seed)
        chosen = data["values"][np.arange(len(data["chosen"])), data["chosen"]]
        best = np.where(data["mask"], data["values"], -np.inf).max(axis=1)
        best_share, last_share = predictable_share(data, args.seed)
        print(f"\nrollouts, {game} {players} players: {len(chosen):,} expert decisions with a choice in "
              f"{hands} hands ({time.perf_counter() - start:.0f} s)")
        print(f"  some move does better than the expert's on the true cards: {np.mean(chosen < best):.1%} of "
              f"decisions (mean gain of the best move in hindsight: {np.mean(best - chosen):.3f} reward)")
        print(f"  share of the moves' relative outcomes predictable from the observation (held out): "
              f"{best_share:.1%} at the best epoch, {last_share:.1%} at the last")


if __name__ == "__main__":
    main()
