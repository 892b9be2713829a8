"""Evaluation hands played many at once, in the game's batched engine (`evaluate(..., batched=True)`).

Why: `play_deals` plays one hand at a time through the AEC env, each move one
`Agent.act` call; here every seat rotation of a block of deals is a slot of
one batched engine, and at each move of the batch every slot's agent is asked
once (`Agent.act_batch`) for the moves of all the games where it is to move:
a bot's one forward pass, a compiled heuristic's one kernel call.

The same hands as `play_deals` (deal d is the rules engine's deal from
``derive_seed(seed, HAND, d)``, as the AEC env's ``reset(seed=...)`` deals it;
rotation r puts slot i in seat (i + r) mod n) and the same records. What
differs is the agents' generators: there each episode reseeds every agent
from (seed, deal, rotation, slot); here each slot's one agent is seeded once
from (seed, slot) and draws for all its games in row order. So deterministic
agents (a bot's masked argmax, a heuristic without ties) give the very same
records, and agents that draw (random, ties, sampling bots) equally
distributed ones; the same seed and hands give the same records (C2).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from cardlab.agents.agent_spec import make_agent
from cardlab.agents.base import Agent
from cardlab.envs import make_game
from cardlab.evaluation.episodes import AGENT, HAND, derive_seed
from cardlab.evaluation.results import EpisodeRecord

BLOCK_SLOTS = 2048
"""the most games (deals x rotations) in one batch: memory stays bounded however many hands are asked"""


def play_hands_batched(
    game: str,
    rules: dict[str, Any],
    slots: Sequence[str],
    deals: range,
    seed: int,
    agent_factory: Callable[[Any, Any, int], Agent] = make_agent,
    on_deal: Callable[[int], object] | None = None,
) -> list[EpisodeRecord]:
    """Every seat rotation of each deal in `deals`, hands only, in batches (module doc), in deal order.

    `agent_factory(slot_spec, game, seed)` builds each slot's agent;
    `on_deal(episodes)` follows each deal, when its block is played.
    """
    table = make_game(game, rules)
    n = table.num_players
    agents = [agent_factory(spec, table, derive_seed(seed, AGENT, HAND, slot))
              for slot, spec in enumerate(slots)]
    for spec, agent in zip(slots, agents, strict=True):
        if agent.sees:
            raise ValueError(f"agent {spec} sees {' and '.join(sorted(agent.sees))} beyond its observation, "
                             "which batched play cannot show it: play its hands one by one (without batched)")
    per_block = max(1, BLOCK_SLOTS // n)
    records: list[EpisodeRecord] = []
    for start in range(deals.start, deals.stop, per_block):
        block = range(start, min(start + per_block, deals.stop))
        records += _play_block(table, agents, block, seed)
        if on_deal is not None:
            for _ in block:
                on_deal(n)
    return records


def _play_block(table: Any, agents: Sequence[Agent], deals: range, seed: int) -> list[EpisodeRecord]:
    """The hands of `deals` x every rotation, slot b = (deal index) * n + rotation, played to their ends."""
    n = table.num_players
    size = len(deals) * n
    engine = table.spec.batched_engine()(table.rules, size, seed=0, episode="hand")
    for i, deal in enumerate(deals):
        state = table.new_state(np.random.default_rng(derive_seed(seed, HAND, deal)))
        for r in range(n):
            engine.load(i * n + r, state)  # copied in, its generator too
    rotations = np.tile(np.arange(n), len(deals))
    actions = np.zeros(size, dtype=np.int64)
    while True:
        live = ~engine.over
        if not live.any():
            break
        seats = engine.current_player()
        mask, obs = engine.legal_mask(), engine.observe(seats)
        mover = (seats - rotations) % n  # the slot whose agent sits in the seat to move
        for slot, agent in enumerate(agents):
            rows = np.flatnonzero(live & (mover == slot))
            if rows.size:
                actions[rows] = agent.act_batch(obs[rows], mask[rows])
        engine.step(actions)
    records = []
    for b in range(size):
        state, r = engine.to_state(b), int(rotations[b])
        seat_of = tuple((slot + r) % n for slot in range(n))
        winner_seats = [] if state.truncated else [state.winner]
        records.append(EpisodeRecord(
            deal=deals[b // n], rotation=r, seats=seat_of,
            winners=tuple(slot for slot in range(n) if seat_of[slot] in winner_seats),
            points=tuple(int(state.hand_points[seat_of[slot]]) for slot in range(n)),
            truncated=bool(state.truncated),
        ))
    return records
