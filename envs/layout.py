"""Named slices of one flat observation vector (the observers' shared tool)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


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
        """A Markdown table of the layout, for docs and `cardlab info`."""
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
