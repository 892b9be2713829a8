"""Labelled positions for a hand reader: hands played by a field of agents, every hidden card's place known.

Why: the engines know every hand, so a reader's labels cost nothing but the
play. Each hand seats agents drawn from a weighted field (per seat and hand,
from the chunk's own generator); at every decision with a choice (where a
search reads) the seat to move's view is read into reading inputs
(`cardlab.envs.reading_inputs`: its observation, its `Determinization` and the
public record it was shown, never the state) and labelled with where each
unseen card of the deck truly is (`cardlab.envs.world_sampling.revealed`): per
deck kind, the copies in each other hand (seat order from the mover) and in
the face-down pile. `keep_share` of those positions are kept, so that the
labels come from more hands.

Positions are made in chunks, each from a seed of its own (`chunk_seed`):
chunk i holds the same positions whoever makes it, in one process or many
(`make_chunks`), so a run resumed after a stop makes only the chunks it lacks.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from cardlab.agents.agent_spec import make_agent
from cardlab.agents.hand_reading.reader import reader_layout
from cardlab.envs import make_env
from cardlab.envs.aec import live_turns
from cardlab.envs.game_spec import Game, make_game
from cardlab.envs.reading_inputs import reading_inputs
from cardlab.envs.world_sampling import revealed
from cardlab.envs.worlds_by_reading import places


@dataclasses.dataclass(frozen=True)
class Table:
    """What a chunk is made from: picklable, so worker processes can make chunks too."""

    game: str
    rules: dict[str, Any]
    field: tuple[tuple[str, float], ...]
    """(agent spec, weight) of the players drawn for each seat"""
    keep_share: float
    seed: int

    def make_game(self) -> Game:
        return make_game(self.game, self.rules)


def chunk_seed(seed: int, chunk: int) -> int:
    """The seed of chunk `chunk` of a run seeded `seed`."""
    return int(np.random.SeedSequence([seed, chunk]).generate_state(1)[0])


def label(known: Any, state: Any, kinds: np.ndarray, count: int) -> np.ndarray:
    """(kinds, places) uint8: the copies of each deck kind in each other hand and in the pile (with any
    card left out of the deal) of the true `state`, seen from the seat `known` was read for."""
    truth = revealed(known, state, state.current).truth
    assert truth is not None
    out = np.zeros((len(kinds), count), dtype=np.uint8)
    index = np.full(int(kinds.max()) + 1, -1, dtype=np.int64)
    index[kinds] = np.arange(len(kinds))
    spans, _pile = known.spans
    for place, (_seat, start, stop) in enumerate(spans):
        np.add.at(out[:, place], index[truth.hands[start:stop]], 1)
    np.add.at(out[:, count - 1], index[np.concatenate([truth.pile, truth.rest]).astype(np.int64)], 1)
    return out


def make_chunk(table: Table, chunk: int, positions: int,
               tick: Callable[[], None] | None = None) -> dict[str, np.ndarray]:
    """`positions` labelled positions from chunk `chunk`'s seed: inputs (N, D) float32, labels (N, kinds,
    places) uint8, room (N, places) int64 (each place's size), and the field index of each position's
    other seats (N, seats - 1) int8, for measures per style. `tick` is called after each hand (a log's
    heartbeat while a chunk of minutes is made)."""
    game = table.make_game()
    rng = np.random.default_rng(chunk_seed(table.seed, chunk))
    layout = reader_layout(game)
    kinds = np.asarray(layout.deck_kinds, dtype=np.int64)
    n = game.num_players
    specs = [spec for spec, _ in table.field]
    weights = np.array([w for _, w in table.field], dtype=np.float64)
    players = [[make_agent(spec, game, seed=int(rng.integers(2**31))) for spec in specs] for _ in range(n)]
    env = make_env(game.spec, **game.rules.to_dict())
    raw = env.unwrapped
    found: dict[str, list[np.ndarray]] = {"inputs": [], "labels": [], "room": [], "field": []}
    while len(found["inputs"]) < positions:
        seated = rng.choice(len(specs), size=n, p=weights / weights.sum())
        env.reset(seed=int(rng.integers(2**31)))
        for agent in (players[s][seated[s]] for s in range(n)):
            agent.reset()
        for name, seat, obs in live_turns(env):
            if np.count_nonzero(obs["action_mask"]) > 1 and len(found["inputs"]) < positions and \
                    rng.random() < table.keep_share:
                record = raw.public_record(name)
                known = game.determinization(obs, 0, record)
                found["inputs"].append(reading_inputs(layout, known, obs["observation"], record))
                found["labels"].append(label(known, raw.game_state, kinds, n))
                found["room"].append(places(known))
                found["field"].append(np.array([seated[(seat + r) % n] for r in range(1, n)], dtype=np.int8))
            agent = players[seat][seated[seat]]
            if agent.sees:
                agent.show(_shown(raw, name, agent.sees))
            env.step(agent.act(obs))
        if tick is not None:
            tick()
    return {key: np.stack(rows) for key, rows in found.items()}


def _shown(raw: Any, name: str, sees: frozenset[str]) -> dict[str, Any]:
    """The record an agent that `sees` it is shown (a search over a belief in the field)."""
    return {"record": raw.public_record(name)} if "record" in sees else {}


def _make_one(job: tuple[Table, int, int]) -> tuple[int, dict[str, np.ndarray]]:
    table, chunk, positions = job
    return chunk, make_chunk(table, chunk, positions)


def make_chunks(table: Table, chunks: Sequence[int], positions: int, workers: int,
                done: Callable[[int, dict[str, np.ndarray]], None], wait: Callable[[], None]) -> None:
    """Make each chunk of `chunks` (`positions` each) and hand it to `done` as it is made, in `workers`
    processes (1: this one); the chunks' contents do not depend on `workers`. `wait` is called at least
    every second or so while chunks are being made (a log's heartbeat)."""
    if workers <= 1:
        for chunk in chunks:
            done(chunk, make_chunk(table, chunk, positions, wait))
        return
    import multiprocessing

    with multiprocessing.get_context("spawn").Pool(workers) as pool:
        made = pool.imap_unordered(_make_one, [(table, chunk, positions) for chunk in chunks])
        for _ in chunks:
            while True:
                try:
                    chunk, data = made.next(timeout=1.0)
                    break
                except multiprocessing.TimeoutError:
                    wait()
            done(chunk, data)
