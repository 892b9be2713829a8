"""Named slices of one flat observation vector (the observers' shared tool)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cardlab.envs.cards import NUM_SUITS


@dataclass(frozen=True)
class Field:
    name: str
    size: int
    low: float
    high: float
    doc: str


class Layout:
    """Offsets, bounds and documentation of the fields of a flat float32 vector."""

    def __init__(self, fields: list[Field]) -> None:
        self.fields = fields
        self.slices: dict[str, slice] = {}
        start = 0
        for f in fields:
            self.slices[f.name] = slice(start, start + f.size)
            start += f.size
        self.size = start
        self.low = np.concatenate([np.full(f.size, f.low, np.float32) for f in fields])
        self.high = np.concatenate([np.full(f.size, f.high, np.float32) for f in fields])

    def span(self, first: str, last: str) -> slice:
        """One slice from the start of field `first` to the end of field `last` (fewer numpy writes)."""
        return slice(self.slices[first].start, self.slices[last].stop)

    def split(self, vector: np.ndarray) -> dict[str, np.ndarray]:
        """The named parts of an observation vector (views, not copies)."""
        return {name: vector[..., s] for name, s in self.slices.items()}

    def table(self) -> str:
        """A Markdown table of the layout, for the docs and `cardlab rules`."""
        rows = ["| slice | field | size | meaning |", "|---|---|---|---|"]
        for f in self.fields:
            s = self.slices[f.name]
            rows.append(f"| {s.start}:{s.stop} | `{f.name}` | {f.size} | {f.doc} |")
        return "\n".join(rows)


def rotated(values: list, seat: int) -> list:
    """`values` per seat, reordered so that `seat` comes first, then seat order."""
    return values[seat:] + values[:seat]


def clipped(values: list, scale: float, low: float, high: float) -> list[float]:
    """`values` times `scale`, clipped to a field's bounds (a plain loop: np.clip is slow on tiny lists)."""
    return [min(max(v * scale, low), high) for v in values]


MASK_BITS = np.array([[m >> s & 1 for s in range(NUM_SUITS)] for m in range(1 << NUM_SUITS)],
                     dtype=np.float32)
"""MASK_BITS[m]: the 4 bits of a suit mask m, in suit order S H D C (one `drew_on` entry)."""


def memory_fields(memory: bool, num_players: int, draw: str) -> list[Field]:
    """The `memory` option's field, last in every game's layout (none without the option).

    `draw` names the game's draw of one's own accord, the one that marks a suit.
    """
    if not memory:
        return []
    return [Field("drew_on", (num_players - 1) * NUM_SUITS, 0, 1,
                  "memory of the hand (option memory): seats me+1, me+2, ..., 4 each in suit order S H D C: "
                  f"1 where that suit was current when the seat drew of its own accord ({draw}) and it has "
                  "laid no card of it since the hand began")]


def memory_start(layout: Layout) -> int:
    """Where the `drew_on` field starts, -1 without it: the batched observe kernels' offset of the field."""
    where = layout.slices.get("drew_on")
    return -1 if where is None else where.start


def fill_memory(obs: np.ndarray, where: slice | None, drew_on: list[int], seat: int) -> None:
    """Write the other seats' `drew_on` masks into the field at `where` (None: no memory field)."""
    if where is not None:
        obs[where] = MASK_BITS[rotated(drew_on, seat)[1:]].ravel()


PEEK = 3
"""Cards of the face-down pile a hidden-information view shows, next first."""


def hidden_layout(num_players: int, kinds: int) -> Layout:
    """The hidden cards of a table, seen from one seat: other hands, then the next cards of the pile.

    Not an observation: the privileged input of a training critic (asymmetric
    actor-critic), which plays no part in what an agent may see or do.
    """
    return Layout([
        Field("other_hands", (num_players - 1) * kinds, 0, 1,
              f"cards of seats me+1, me+2, ... ({kinds} per seat, same scale as `hand`)"),
        Field("pile_next", PEEK * kinds, 0, 1,
              f"one-hot next {PEEK} cards of the face-down pile, next first"),
    ])


def fill_hidden(layout: Layout, hands: list[np.ndarray], seat: int, pile: list[int], index: np.ndarray,
                scale: np.ndarray) -> np.ndarray:
    """The hidden-information vector of `seat` (`hidden_layout`).

    `hands[s][card]` are copies held, `pile` the face-down pile with its next
    card last, `index[card]` a card's position in the per-kind order and
    `scale[card]` the factor the observation's `hand` field uses.
    """
    out = np.zeros(layout.size, dtype=np.float32)
    n = len(hands)
    kinds = layout.slices["other_hands"].stop // (n - 1)
    for k in range(1, n):
        held = hands[(seat + k) % n]
        cards = np.flatnonzero(held)
        out[(k - 1) * kinds + index[cards]] = held[cards] * scale[cards]
    base = layout.slices["pile_next"].start
    for i, card in enumerate(reversed(pile[-PEEK:])):
        out[base + i * kinds + index[card]] = 1.0
    return out


def state_layout(public: Layout, hidden: Layout, num_players: int, kinds: int) -> Layout:
    """The whole table as one vector (PettingZoo's `state()`), seen from seat 0.

    Seat 0's observation, then the hidden cards from seat 0 (so every hand),
    then the whole face-down pile: for centralised critics and analysis, never
    for an agent.
    """
    return Layout([
        Field("to_move", num_players, 0, 1, "one-hot seat to move (all zero once the hand is over)"),
        *public.fields,
        *hidden.fields,
        Field("pile", kinds, 0, 1, "the face-down pile: copies of each card, same scale as `hand`"),
    ])


def fill_state(layout: Layout, public: np.ndarray, hidden: np.ndarray, to_move: int | None, pile: list[int],
               index: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """The `state_layout` vector from seat 0's observation and hidden view, the mover and the pile."""
    out = np.zeros(layout.size, dtype=np.float32)
    if to_move is not None:
        out[to_move] = 1.0
    start = layout.slices["to_move"].stop
    out[start:start + public.size] = public
    out[start + public.size:start + public.size + hidden.size] = hidden
    if pile:
        cards = np.asarray(pile, dtype=np.int64)
        kinds, copies = np.unique(cards, return_counts=True)
        out[layout.slices["pile"].start + index[kinds]] = copies * scale[kinds]
    return out
