"""Rule options: each game's options declared once, with their meaning and range, and checked."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping
from typing import Any, ClassVar, NamedTuple, TypeVar

import numpy as np

from cardlab.envs.declared import KIND, RANGE, Declared, declarations, refusal, unknown

R = TypeVar("R", bound="RuleOptions")


COUNT_HIGH = 1_000_000
"""The upper bound of a whole-number option given no `high` (target scores, turns, streaks): the
batched engines keep counts in int32 arrays, and the observers divide by them as floats."""
TOTAL_HIGH = 1_000_000_000
"""The largest magnitude of a saved total (scores, hand points, hands played): int32 holds it with room
for many hands' points."""
RULE = "rule option"
"""the kind a rule option's refusal names (`cardlab.envs.declared.refusal`)"""
NOT_PLAY = "not a rule of play"
"""how the doc of an option that changes no play opens (`RuleOptions.of_play` leaves such options out; the web
app says them in words of their own)"""
MEMORY_DOC = (f"{NOT_PLAY} (play is unchanged): adds the observation field drew_on, a memory of "
              "the hand: the suits each other player drew on and has laid none of since")
"""The doc of each game's `memory` option, which the game's engine and observer implement."""


class OptionDoc(NamedTuple):
    """One rule option as the docs and `cardlab rules` show it."""

    name: str
    default: Any
    accepted: str
    doc: str


@dataclasses.dataclass(frozen=True)
class RuleOptions:
    """Base of each game's rule options: checked names, types and ranges."""

    GAME: ClassVar[str] = ""

    @classmethod
    def names(cls) -> list[str]:
        return [f.name for f in dataclasses.fields(cls)]

    @classmethod
    @functools.cache
    def declared(cls) -> Mapping[str, Declared]:
        """name -> declaration of every option (`cardlab.envs.declared.option`), a whole number given a low
        bound and no high one bounded by `COUNT_HIGH`, so no count is unbounded."""
        return {name: d if d.low is None or d.high is not None else dataclasses.replace(d, high=COUNT_HIGH)
                for name, d in declarations(cls).items()}

    @classmethod
    def of_play(cls) -> tuple[str, ...]:
        """The options that are rules of play: all but those whose doc opens with `NOT_PLAY` (`memory`, which
        only adds to the observation). What a file fitted from played hands depends on (a match equity)."""
        return tuple(name for name, d in cls.declared().items() if not d.doc.startswith(NOT_PLAY))

    @classmethod
    def describe(cls) -> list[OptionDoc]:
        """Name, default, accepted values and meaning of every option (from the `option` fields)."""
        out = []
        for d in cls.declared().values():
            accepted = d.words or _range_text(*cls.limits(d.name))
            if not accepted:
                accepted = "true or false" if d.default in (True, False) else "any"
            out.append(OptionDoc(d.name, d.default, accepted, d.doc))
        return out

    @classmethod
    def limits(cls, name: str) -> tuple[int | None, int | None]:
        """The (low, high) bounds of a whole-number option (None: unbounded, or checked in `validate`)."""
        d = cls.declared()[name]
        return (None if d.low is None else int(d.low)), (None if d.high is None else int(d.high))

    @classmethod
    def from_options(cls: type[R], options: Mapping[str, Any] | None = None) -> R:
        """Build from a mapping, refusing unknown names with the list of accepted ones."""
        if options is not None and not isinstance(options, Mapping):
            raise ValueError(f"rule options must be a mapping of name to value, got {type(options).__name__}")
        options = dict(options or {})
        names = [k for k in options if not isinstance(k, str) or k not in cls.names()]
        if names:
            raise unknown("rule option", names, ", ".join(cls.names()), f"for {cls.GAME}")
        return cls(**options)

    def __post_init__(self) -> None:
        limits = type(self).declared()
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            expected = f.type if isinstance(f.type, type) else {"bool": bool, "int": int}.get(str(f.type))
            if expected is bool and not isinstance(value, bool):
                raise ValueError(refusal(f.name, value, KIND, "true or false", RULE))
            if expected is int and (isinstance(value, bool) or not isinstance(value, int)):
                raise ValueError(refusal(f.name, value, KIND, "a whole number", RULE))
            low, high = type(self).limits(f.name) if f.name in limits else (None, None)
            if expected is int and low is not None:
                self.check_range(f.name, low, high)
        self.validate()

    def validate(self) -> None:
        """Checks of the concrete game beyond each option's own range."""

    def check_range(self, name: str, low: int, high: int | None = None) -> None:
        value = getattr(self, name)
        if value < low or (high is not None and value > high):
            raise ValueError(refusal(name, value, RANGE, _range_text(low, high), RULE))

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def completed(cls, saved: Mapping[str, Any]) -> dict[str, Any]:
        """Rule options saved in a file (bot, saved state), with the default of each option it lacks.

        An option added after the file was written (such as `memory`) defaults to the play it had, so
        older bots and states stay usable; the result compares with `to_dict()`.
        """
        return {**{o.name: o.default for o in cls.describe()}, **saved}


def param_slots(*names: str) -> dict[str, int]:
    """A game's kernel parameter slots: each name (a rule option, or a value the batch computes) gets
    its index in the order given, so a name is written once and no two share a slot."""
    if len(set(names)) != len(names):
        raise ValueError(f"kernel parameter names repeat: {', '.join(names)}")
    return {name: slot for slot, name in enumerate(names)}


def kernel_params(rules: RuleOptions, slots: Mapping[str, int], **computed: int | bool) -> np.ndarray:
    """The int64 parameter array of a game's numba kernels, filled by name from `slots` (`param_slots`).

    Each slot takes `computed[name]` when the batch gives one (a value it derives, such as
    hand_size 'all' resolved to a count, or the episode), else the rule option of that name; a name
    that is neither is refused, so a slot never keeps a silent zero.
    """
    out = np.zeros(len(slots), dtype=np.int64)
    unused = sorted(set(computed) - set(slots))
    if unused:
        raise ValueError(f"computed kernel parameter(s) {', '.join(unused)} have no slot; "
                         f"slots: {', '.join(slots)}")
    options = set(rules.names())
    for name, slot in slots.items():
        if name in computed:
            out[slot] = int(computed[name])
        elif name in options:
            out[slot] = int(getattr(rules, name))
        else:
            raise ValueError(f"kernel parameter {name} is neither a {rules.GAME} rule option nor computed "
                             f"by the batch; options: {', '.join(sorted(options))}")
    return out


def _range_text(low: int | None, high: int | None) -> str:
    if low is None:
        return ""
    return f"{low} to {high:,}" if high is not None else f"at least {low}"
