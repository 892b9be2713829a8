"""The options of ``search:BASE``, each declared once: its parsing, checks, error text and docs table.

Why one declaration: an option written in several places (the module doc,
the accepted list of the error text, the docs table, the checks) drifts; here
each is one field of `SearchOptions` made by `cardlab.envs.declared.option`
(its default, meaning, accepted words or bounds), and `parse_spec`, `SearchOptions.__post_init__`,
`ACCEPTED` and `options_markdown` read the declarations (`DECLARED`).

To add an option: one field of `SearchOptions` with `option(...)` (a word:
``choices=``; a bounded number: ``low=``, ``high=``, ``whole=``; a text such as
a file's path: ``text=``), then read it in `cardlab.agents.search` (and
`python docs/update_tables.py` for the docs table); an option read only beside
certain values of another goes in `READ_WITH`, which refuses it elsewhere
(`check_read` refuses what only the options as given show). To
add a value of a word option: add it to its tuple (`BELIEFS`, `ROLLOUTS`, ...)
and say what it means in the option's doc.

Numbers are written in the ASCII digits 0-9 (``worlds=64``, ``z=0.5``): no
exponent, sign other than ``-``, underscore or other script's digits (Python's
`int` would take a full-width 64), so a spec reads the same to a person as to the
parser; every number is bounded.
"""

from __future__ import annotations

import dataclasses
import decimal
import re
from collections.abc import Mapping
from typing import Any

from cardlab.agents.hand_reading.reading import REPLAY_SHARE, WEIGHS
from cardlab.envs.checked_json import excerpt
from cardlab.envs.declared import CHOICE, KIND, RANGE, Declared, declarations, option, refusal, unknown

PREFIX = "search:"
SEARCH = "search option"
"""the kind a search option's refusal names (`cardlab.envs.declared.refusal`)"""
VALUES = ("win", "points", "match")
ROLLOUTS = ("base", "random", "greedy", "expert", "bot")
"""the rollout policies a spec may name (``greedy`` and ``expert`` where the game has them)"""
BELIEFS = ("uniform", "learned", "posterior", "expert", "greedy", "random", "bot", "base")
"""the beliefs a spec may name (`cardlab.agents.hand_reading.reader` for ``learned``,
`cardlab.agents.hand_reading.posterior` for ``posterior``, else `cardlab.agents.hand_reading.belief`)"""
READERS = ("learned", "posterior")
"""the beliefs that deal worlds from a hand reader (``posterior`` where it has no posterior worlds)"""
WEIGHING = tuple(belief for belief in BELIEFS if belief != "uniform" and belief not in READERS)
"""the beliefs that weigh their worlds (by how likely a model of the other seats made their recorded moves)"""
READ_WITH: dict[str, tuple[str, tuple[Any, ...]]] = {
    "points_weight": ("value", ("win",)), "equity": ("value", ("match",)), "reader": ("belief", READERS),
    "weigh": ("belief", WEIGHING), "ess": ("belief", WEIGHING), "belief": ("cheat", (0,))}
"""option -> (the option it is read beside, the values of that one it is read with): given (not its default)
beside another value, it would do nothing, so it is refused (a belief beside ``cheat=1``, which deals the
true hands: no belief's world is searched)"""
OPPONENTS = ("base", "recognise")
MOST_WORLDS = 16384
"""the most worlds a spec may ask for (each is a batch slot per candidate, played in waves)"""
MOST_MS = 600_000
"""the longest time cap a spec may ask for, in ms (ten minutes a decision)"""
MOST_Z = 10.0
"""the largest margin `z` a spec may ask for"""
MOST_POINTS_WEIGHT = 100.0
"""the largest `points_weight` a spec may ask for (at 100 a point in hand weighs as much as a hand's win)"""
MOST_TEXT = 256
"""the longest value a text option takes"""
SPLIT = ":"
"""what a spec's parts are split at (each then trimmed of spaces): a text option's value holds none, and no
space at either end, else the spec could not carry it"""
MOST_PLACES = 340
"""the most decimal places a spec's number may have: every float's shortest exact digits fit (324 places at
most, as 5e-324's), so a value `search_spec` writes reads back the same"""
LEVELS: dict[str, tuple[int, int]] = {"quick": (2048, 60), "strong": (MOST_WORLDS, 700)}
"""level -> (worlds, ms): ``quick`` the web app's default search, ``strong`` about ten times its time"""
LEVEL_BOUNDS_MS = {"quick": 100.0, "strong": 1000.0}
"""level -> the decision time its budget keeps within at the 99th percentile on one core (what
``benchmarks/decision_latency.py --levels`` checks)"""

_WHOLE = re.compile(r"-?[0-9]{1,15}")
_NUMBER = re.compile(rf"-?(?:[0-9]{{1,15}}(?:\.[0-9]{{0,{MOST_PLACES}}})?|\.[0-9]{{1,{MOST_PLACES}}})")
"""the numbers a spec may write: ASCII digits only (``[0-9]`` is not ``\\d``, which takes every script's)"""


class SearchOption(Declared):
    """One search option as declared by `option` (`cardlab.envs.declared`): its parsing, check and texts."""

    def accepted(self) -> str:
        """What the option accepts, as the error text and the docs say it."""
        if self.text:
            return (f"{self.text}: printable text of 1 to {MOST_TEXT} characters, without '{SPLIT}' or a "
                    "space at either end (a spec could not carry them)")
        if self.choices:
            return f"one of {', '.join(f'{self.name}={word}' for word in self.choices)}"
        if self.whole:
            return f"a whole number {self.low:g} to {self.high:g}"
        return f"a number from {self.low:g} to {self.high:g}"

    def brief(self) -> str:
        """The option in `ACCEPTED`'s one-line list."""
        if self.text:
            return f"{self.name}=TEXT"
        if self.choices:
            return f"{self.name}={'|'.join(self.choices)}"
        return f"{self.name}={self.low:g}..{self.high:g}"

    def parse(self, text: str) -> Any:
        """The value of ``name=text`` (a word or text as given, checked later; a number parsed), or a
        `ValueError`."""
        if self.choices or self.text:
            return text
        if not (_WHOLE if self.whole else _NUMBER).fullmatch(text):
            raise ValueError(refusal(self.name, text, KIND, f"{self.accepted()}, in the digits 0-9", SEARCH))
        return int(text) if self.whole else float(text)

    def check(self, value: Any) -> None:
        """A `ValueError` unless `value` is one the option accepts (a text option also takes its default)."""
        if self.text:
            right_kind, problem = isinstance(value, str), "not printable text of the accepted length"
            fits = (right_kind and 0 < len(value) <= MOST_TEXT and value.isprintable() and SPLIT not in value
                    and value == value.strip())
            ok = right_kind and (value == self.default or fits)
        elif self.choices:
            right_kind, problem = isinstance(value, str), CHOICE
            ok = right_kind and value in self.choices
        else:
            right_kind, problem = self.is_number(value), RANGE
            ok = right_kind and self.in_range(value)
        if not ok:
            raise ValueError(refusal(self.name, value, problem if right_kind else KIND, self.accepted(),
                                     SEARCH))

    @classmethod
    def of(cls, declared: Declared) -> SearchOption:
        """The search option of a declaration, its default as the docs show it filled in; a number must be
        bounded at both ends (every number of a spec is), else a `TypeError`."""
        if not (declared.choices or declared.text) and (declared.low is None or declared.high is None):
            raise TypeError(f"search option {declared.name} declares neither choices, text nor both bounds")
        default = declared.default
        shown = declared.shown or (f"{default:g}" if isinstance(default, float) else str(default))
        return cls(**{**vars(declared), "shown": shown})


@dataclasses.dataclass(frozen=True)
class SearchOptions:
    """The budget, the rollouts and the value of a search (`cardlab.agents.search`); `worlds` and `ms`
    left None take the `level`'s. Each field is one option, declared once (module doc)."""

    level: str = option(
        "quick", "the budget: " + ", ".join(
            f"`{name}`: {w} worlds, {ms} ms (p99 within {LEVEL_BOUNDS_MS[name]:g} ms on one core)"
            for name, (w, ms) in LEVELS.items()) + "; `worlds` or `ms` given beside it wins (not both: "
        "the level would set nothing)",
        choices=tuple(LEVELS))
    worlds: int | None = option(
        None, "worlds sampled per decision (0: play as BASE, beside no other option)", low=0,
        high=MOST_WORLDS, shown="the level's")
    ms: int | None = option(
        None, "wall-clock cap per decision in milliseconds, 0 for none, counted from the decision's start "
        "(BASE's move, a belief's replay and the rollouts all within it); a world the cap finds still in "
        "play is dropped, and with no world finished BASE's choice is played", low=0, high=MOST_MS,
        shown="the level's")
    rollout: str = option(
        "base", "the policy of the rollouts' moves in every seat (`bot`: the table's shipped bot; `greedy` "
        "and `expert` where the game has them)", choices=ROLLOUTS)
    value: str = option(
        "win", "`win`: the seat's hand win reward (+1 for a win, the loss shared out, 0 when C1 cuts the "
        "hand); `points`: minus the seat's score change / 100; `match`: the seat's chance to win the match "
        "once the hand's points are added to the running totals (the table's shipped match equity, or the "
        "fitted one `equity` names; a hand that ends the match: its result)", choices=VALUES)
    points_weight: float = option(
        0.0, "with `value=win`: this weight times `points`' value added to each play-out's win reward, so "
        "that the points still in hand break the ties of the worlds where the win is out of reach (there the "
        "win reward is the same for every move); a small weight keeps the hand win first and the points "
        "second, a large one tends to `value=points`", low=0, high=MOST_POINTS_WEIGHT, whole=False)
    z: float = option(
        1.0, "standard errors of the paired differences over the worlds by which a move must beat BASE's "
        "choice to be played instead (0: the best mean, ties to BASE)", low=0, high=MOST_Z, whole=False)
    belief: str = option(
        "uniform", "how the worlds are dealt and weighed: uniformly; `learned`, dealt by where the table's "
        "shipped hand reader reads each unseen card (`cardlab read-hands`), not weighed; `posterior` (Huit), "
        "drawn from the exact posterior assuming the expert in every other seat (worlds in which it makes "
        "every recorded move; where the record cannot be played back or none is kept, the worlds "
        "`belief=learned` deals from the same seed); "
        "or dealt uniformly "
        "and weighed by how likely that model of the other seats (`bot`: the table's shipped bot, `base`: "
        "BASE) was to make their recorded moves from each world's hands", choices=BELIEFS)
    weigh: str = option(
        "resample", "with a belief that weighs (" + ", ".join(f"`{b}`" for b in WEIGHING) + "): how its "
        "weights are used: `resample`, four times the worlds dealt and weighed "
        f"(under a cap, as many as fit in {REPLAY_SHARE:g} of it) and the worlds searched drawn from them by "
        "weight; `weights`, the worlds dealt once and each candidate's value its weighted mean over them "
        "(importance sampling; `z` in weighted standard errors)", choices=WEIGHS)
    opponents: str = option(
        "base", "who plays the other seats in the rollouts: the rollout policy, or each seat's likeliest "
        "model (random, the heuristics, the table's bot, BASE) by its moves this hand and match",
        choices=OPPONENTS)
    ess: float = option(
        0.01, "with a belief that weighs: the share of the worlds under which the belief's effective sample "
        "size makes it fall back to uniform worlds", low=0, high=1, whole=False)
    cheat: int = option(
        0, "1: every world holds the other seats' true hands (the face-down pile still dealt at random from "
        "its true cards): the measured upper bound of any inference of the hidden cards, for benchmarks "
        "only (it plays only where the play loop shows it the true state, as evaluation does); beside no "
        "`belief` (it would deal no world)", low=0, high=1)
    equity: str = option(
        "", "with `value=match`: the match equity that values the play-outs, an equity's NAME.json "
        "(`cardlab match-equity` writes runs/NAME__SEED__TIME/equity.json and prints its path), refused "
        "unless fitted for this table and its rules of play", text="an equity file",
        shown="the table's shipped equity")
    reader: str = option(
        "", "with `belief=learned` or `posterior`: the hand reader that deals the worlds, a reader's "
        "NAME.json (`cardlab read-hands` writes RUN/reader.json)", text="a hand reader file",
        shown="the table's shipped reader")

    def __post_init__(self) -> None:
        DECLARED["level"].check(self.level)
        worlds, ms = LEVELS[self.level]
        object.__setattr__(self, "worlds", worlds if self.worlds is None else self.worlds)
        object.__setattr__(self, "ms", ms if self.ms is None else self.ms)
        declared = DECLARED if type(self) is SearchOptions else declared_of(type(self))
        for checked in declared.values():
            checked.check(getattr(self, checked.name))
        for name, (other, values) in READ_WITH.items():
            given, beside = getattr(self, name), getattr(self, other)
            if given != declared[name].default and beside not in values:
                with_text = " or ".join(f"{other}={value}" for value in values)
                raise unread(name, given, with_text, f"{other}={beside}")

    def budget(self) -> tuple[int, int]:
        """(worlds, ms): the level's where not given (`__post_init__` filled them)."""
        assert self.worlds is not None and self.ms is not None
        return self.worlds, self.ms


def unread(name: str, value: Any, read_with: str, instead: str) -> ValueError:
    """The one refusal of an option given where it is not read: ``NAME=VALUE is read only with READ_WITH,
    not INSTEAD``."""
    return ValueError(refusal(name, value, f"read only with {read_with}, not {instead}",
                              f"{name} beside one of them, or none", SEARCH))


def check_read(given: Mapping[str, Any]) -> None:
    """A `ValueError` for an option of a spec's `given` ones that another given one leaves unread, which
    only the options as given show (`SearchOptions` fills in the level's budget): `level` beside both
    `worlds` and `ms`, and any option beside ``worlds=0`` (played as BASE)."""
    if {"level", "worlds", "ms"} <= given.keys():
        raise unread("level", given["level"], "worlds or ms left out", "both given")
    if given.get("worlds") == 0:
        for name, value in given.items():
            if name != "worlds":
                raise unread(name, value, "worlds of 1 or more", "worlds=0 (played as BASE)")


def declared_of(options: type[SearchOptions]) -> Mapping[str, SearchOption]:
    """name -> declaration of every option of `options` (`SearchOptions`, or a test's made-up subclass)."""
    return {name: SearchOption.of(declared) for name, declared in declarations(options).items()}


DECLARED = declared_of(SearchOptions)
"""name -> declaration of every search option, in `SearchOptions`' order"""
ACCEPTED = ", ".join(declared.brief() for declared in DECLARED.values())
"""the options in one line, as an error text lists them"""


def options_markdown(declared: Mapping[str, SearchOption] = DECLARED) -> str:
    """The options table of the docs (docs/update_tables.py writes it into docs/training.md)."""
    lines = ["| option | default | accepted | meaning |", "|---|---|---|---|"]
    for d in declared.values():
        accepted = d.text or ", ".join(f"`{word}`" for word in d.choices) or f"{d.low:g}..{d.high:g}"
        lines.append(f"| `{d.name}` | {d.shown} | {accepted} | {d.doc} |")
    return "\n".join(lines) + "\n"


def search_spec(base: str, **values: Any) -> str:
    """The spec ``search:NAME=VALUE:...:BASE`` of these option values, each checked by its declaration
    (`SearchOptions`), so that a caller with typed values (`cardlab exploit`'s responder) neither
    writes the spec text nor checks them a second way; `parse_spec` reads it back to the same options."""
    given = set(values) - DECLARED.keys()
    if given:
        raise unknown(SEARCH, given, ACCEPTED)
    SearchOptions(**values)
    check_read(values)
    return PREFIX + "".join(f"{name}={_spec_text(value)}:" for name, value in values.items()) + base


def _spec_text(value: Any) -> str:
    """A checked option value as a spec writes it: a float in plain digits, never an exponent, its shortest
    exact digits (Python's `repr`, at most `MOST_PLACES` places), so that `parse_spec` reads back the float
    itself (a fixed number of places wrote 1e-20 as 0)."""
    if not isinstance(value, float):
        return str(value)
    text = format(decimal.Decimal(repr(value)), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def parse_spec(spec: str) -> tuple[SearchOptions, str]:
    """(options, base spec) of ``search:[key=value:...]BASE``; a `ValueError` names what is wrong."""
    if not spec.startswith(PREFIX) and spec != PREFIX[:-1]:
        raise ValueError(f"a search spec starts with 'search:', got {excerpt(spec)}")
    parts = spec[len(PREFIX):].split(SPLIT) if spec != PREFIX[:-1] else []
    values: dict[str, Any] = {}
    while parts and ("=" in parts[0] or parts[0].strip() in DECLARED):
        key, sep, text = (p.strip() for p in parts.pop(0).partition("="))
        if key in DECLARED and not text:  # ``worlds`` or ``worlds=``: the option is known, its value missing
            raise ValueError(f"agent spec {excerpt(spec)}: {SEARCH} {key} needs a value ({key}=VALUE); "
                             f"accepted: {DECLARED[key].accepted()}")
        if key not in DECLARED:
            refused = unknown(SEARCH, [key + sep + text], f"{ACCEPTED}, then the base agent, e.g. "
                                                           "search:worlds=64:bot:huit-2p")
            raise ValueError(f"agent spec {excerpt(spec)}: {refused}")
        if key in values:
            raise ValueError(f"agent spec {excerpt(spec)}: search option {key} is given twice")
        try:
            values[key] = DECLARED[key].parse(text)
        except ValueError as err:
            raise ValueError(f"agent spec {excerpt(spec)}: {err}") from None
    base = SPLIT.join(parts).strip()
    last = list(values)[-1] if values else ""
    if last and DECLARED[last].text and any(sign in base.partition(SPLIT)[0] for sign in "/\\"):
        raise ValueError(f"agent spec {excerpt(spec)}: {SEARCH} {last}={excerpt(values[last])} is followed "
                         f"by {excerpt(base)}, which is no agent: a path with '{SPLIT}' cannot be given in a "
                         f"spec (its parts are split at '{SPLIT}'); give the file a path without one")
    if not base:
        raise ValueError(f"agent spec {excerpt(spec)} names no base agent: give one after the options, e.g. "
                         "search:bot:huit-2p or search:worlds=64:expert")
    if base.startswith(PREFIX) or base == PREFIX[:-1]:
        raise ValueError(f"agent spec {excerpt(spec)}: the base of a search cannot be another search")
    try:
        options = SearchOptions(**values)
        check_read(values)
        return options, base
    except ValueError as err:
        raise ValueError(f"agent spec {excerpt(spec)}: {err}") from None
