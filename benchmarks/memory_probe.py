"""Does a bot trained with the memory of the hand (`rules: {memory: true}`) use it?

The bot plays every seat of a batch of its own table (its game, players and
rules, from its metadata) over the batched engine. At each decision with more
than one legal move, its greedy move is computed twice: from the observation as
it is, and with the `drew_on` field blanked (all 0). The share of decisions
whose move changes says how much the network reads its memory; a win rate
says whether that helps (the training runs' evaluations do that).

    python benchmarks/memory_probe.py RUN/bot.json [--steps 3000] [--batch 1024]
"""

from __future__ import annotations

import argparse
import pathlib

import numpy as np
import torch

from cardlab.agents.bot import load_bot
from cardlab.envs import get_spec
from cardlab.envs.checked_json import read_json_file


def greedy(network: torch.nn.Module, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
    with torch.no_grad():
        logits = network(torch.as_tensor(observations)).numpy()
    return np.argmax(np.where(masks, logits, -np.inf), axis=1)


def probe(path: str, steps: int, batch_size: int, seed: int) -> tuple[int, int, int]:
    """(decisions with a choice, those with a non-empty memory, those whose greedy move the blank changes)."""
    meta = read_json_file(pathlib.Path(path))
    spec = get_spec(meta["game"])
    game = spec.make({**meta["rules"], "num_players": meta["num_players"]})
    if "drew_on" not in game.layout.slices:
        raise SystemExit(f"{path} was trained without the memory option (rules: memory: true): "
                         "nothing to probe")
    bot = load_bot(path, game, seed=seed)
    batch = spec.batched_engine()(game.rules, batch_size=batch_size, seed=seed)
    memory = game.layout.slices["drew_on"]
    decisions = remembered = changed = 0
    for _ in range(steps):
        masks = batch.legal_mask()
        observations = batch.observe(batch.current_player())
        blank = observations.copy()
        blank[:, memory] = 0
        moves = greedy(bot.network, observations, masks)
        choice = masks.sum(axis=1) > 1
        decisions += int(choice.sum())
        remembered += int((choice & observations[:, memory].any(axis=1)).sum())
        changed += int((choice & (moves != greedy(bot.network, blank, masks))).sum())
        _, done, truncated = batch.step(np.where(masks.any(axis=1), moves, 0))
        batch.reset(done | truncated)
    return decisions, remembered, changed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("bot", help="a bot file trained with rules: memory: true")
    parser.add_argument("--steps", type=int, default=3000, help="batch steps (default 3000)")
    parser.add_argument("--batch", type=int, default=1024, help="games played at once (default 1024)")
    parser.add_argument("--seed", type=int, default=5)
    args = parser.parse_args()
    torch.set_num_threads(1)
    decisions, remembered, changed = probe(args.bot, args.steps, args.batch, args.seed)
    print(f"{decisions:,} decisions with more than one legal move")
    print(f"memory not empty:                  {remembered / decisions:.3f} of them")
    print(f"greedy move changes when blanked:  {changed / decisions:.4f} of them "
          f"({changed / max(remembered, 1):.4f} of those with a memory)")


if __name__ == "__main__":
    main()
